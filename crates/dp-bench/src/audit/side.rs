//! Everything a release emits besides its answers, as audit observations.
//!
//! A release publishes more than its answers: the notes and diagnostics printed by `dpqr
//! release` and written into `--report`, the synthetic records, the certificate. Each of
//! them is output, so each must be a function of the public inputs and of the mechanism's
//! privatized transcript (`dp_mechanisms::Diagnostics`), and the black-box audit tests them
//! as it tests the answers (issue #23: a DualQuery note reported how many proposals the
//! exact rejection sampler needed — a count that depends on the data — and no audit looked
//! at it).
//!
//! [`side_outputs`] turns a [`Release`] into named [`Feature`]s: every note as a whole
//! (text: an event is "this exact note") and every number inside it (an event is a
//! threshold on it), the numeric diagnostics, the noise description, the size and content
//! of the synthetic data and the certificate's statement. The audit's held-out event
//! selection then looks at all of them beside the answer statistics; post-processing cannot
//! increase ε, so each feature is a valid test.

use dp_mechanisms::Release;
use std::collections::BTreeMap;

/// One observed value of a run: a number (tested by thresholds) or a text (tested by
/// equality).
#[derive(Clone, Debug, PartialEq)]
pub enum Feature {
    /// A number: events `{x ≥ t}` and `{x ≤ t}`. NaN is never produced (see
    /// [`Feature::number`]).
    Number(f64),
    /// A text: events `{x = v}` and `{x ≠ v}`.
    Text(String),
}

impl Feature {
    /// A number, with NaN mapped to −∞ so that every event is well defined (a NaN that
    /// appears on one dataset and not the other is still seen: it falls in every `{x ≤ t}`).
    pub fn number(x: f64) -> Feature {
        Feature::Number(if x.is_nan() { f64::NEG_INFINITY } else { x })
    }
}

/// The observations of one run, by feature name.
pub type Observation = BTreeMap<String, Feature>;

/// Every side output of `release` (module docs), by name. Names are stable across runs of
/// one mechanism, so that the same feature of different runs is compared: notes are
/// numbered in order (`note 2`), numbers within a note by position (`note 2, number 1`).
pub fn side_outputs(release: &Release) -> Observation {
    let mut out = Observation::new();
    let d = &release.diagnostics;
    out.insert(
        "notes: how many".into(),
        Feature::number(d.notes.len() as f64),
    );
    for (i, note) in d.notes.iter().enumerate() {
        out.insert(format!("note {}", i + 1), Feature::Text(note.clone()));
        for (j, x) in numbers_in(note).into_iter().enumerate() {
            out.insert(
                format!("note {}, number {}", i + 1, j + 1),
                Feature::number(x),
            );
        }
    }
    let mut number = |name: &str, x: Option<f64>| {
        if let Some(x) = x {
            out.insert(name.into(), Feature::number(x));
        }
    };
    number("iterations", d.iterations.map(|x| x as f64));
    number("oracle calls", d.oracle_calls.map(|x| x as f64));
    number("Frank–Wolfe gap", d.frank_wolfe_gap);
    number("estimated total", d.estimated_total);
    if let Some(noise) = &d.noise {
        number("noise parameter", Some(noise.parameter));
        number("noise sensitivity", Some(noise.sensitivity));
        number("noise count std", Some(noise.count_std));
        number("noise answer std", Some(noise.answer_std));
        out.insert(
            "noise family".into(),
            Feature::Text(format!("{} / {:?}", noise.distribution, noise.normaliser)),
        );
    }
    out.insert(
        "certificate".into(),
        Feature::Text(release.certificate.statement()),
    );
    match &release.synthetic {
        None => {
            out.insert("synthetic".into(), Feature::Text("none".into()));
        }
        Some(s) => {
            out.insert(
                "synthetic records".into(),
                Feature::number(s.records.n() as f64),
            );
            // the whole synthetic file as one text: records (in order) and weights
            let mut text = format!("sampled={};", s.sampled_from_model);
            for (r, w) in s.weights.iter().enumerate() {
                let rec = s.records.record(r);
                text.push_str(&format!("{rec:?}:{w:.9e};"));
            }
            out.insert("synthetic".into(), Feature::Text(text));
        }
    }
    out
}

/// The decimal numbers written in `text` (`12`, `-0.5`, `1.0e-3`, `4.4e+16`), in order.
/// Digits inside a word (`x2`, `Thm 4.2` is a number) are numbers too: a note's numbers are
/// compared only with the same position in the same note of other runs.
pub fn numbers_in(text: &str) -> Vec<f64> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if !b[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = if i > 0 && b[i - 1] == b'-' { i - 1 } else { i };
        let mut j = i;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if j + 1 < b.len() && b[j] == b'.' && b[j + 1].is_ascii_digit() {
            j += 1;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
        }
        if j < b.len() && (b[j] == b'e' || b[j] == b'E') {
            let mut k = j + 1;
            if k < b.len() && (b[k] == b'-' || b[k] == b'+') {
                k += 1;
            }
            if k < b.len() && b[k].is_ascii_digit() {
                while k < b.len() && b[k].is_ascii_digit() {
                    k += 1;
                }
                j = k;
            }
        }
        if let Ok(x) = text[start..j].parse::<f64>() {
            out.push(x);
        }
        i = j;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_read_from_notes_in_order() {
        assert_eq!(
            numbers_in("rejection sampling, 1.4 proposals per sample"),
            vec![1.4]
        );
        assert_eq!(
            numbers_in("gap 1.5e-3, objective -2.25E+2, 17 atoms; Thm 4.2"),
            vec![1.5e-3, -225.0, 17.0, 4.2]
        );
        assert_eq!(numbers_in("no numbers here."), Vec::<f64>::new());
        // a trailing dot or a lone exponent marker is not part of the number
        assert_eq!(numbers_in("T = 3. e"), vec![3.0]);
        assert_eq!(numbers_in("10e"), vec![10.0]);
    }

    #[test]
    fn nan_is_an_orderable_number() {
        assert_eq!(
            Feature::number(f64::NAN),
            Feature::Number(f64::NEG_INFINITY)
        );
        assert_eq!(Feature::number(2.0), Feature::Number(2.0));
    }
}
