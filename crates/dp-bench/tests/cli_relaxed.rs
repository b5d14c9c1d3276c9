//! `dpqr release --mechanism relaxed-projection|boosting` on the bundled adult table, whose
//! attributes are categorical: both run through the one-hot encoding and answer the source
//! workload's cells (issue #12's "done when").

mod common;
use common::{fresh_dir, run, s, text};
use dp_bench::io::datasets::bundled;
use dp_queries::MarginalWorkload;

/// Two tables over adult: (sex, race) — one binary and one 5-valued attribute, 5 bit tables
/// — and (income>50K, sex), binary only.
const TABLES: &str = r#"[["sex", "race"], ["income>50K", "sex"]]"#;

fn answers(path: &std::path::Path) -> Vec<(String, String, f64)> {
    let body = std::fs::read_to_string(path).unwrap();
    let mut lines = body.lines();
    assert_eq!(lines.next(), Some("marginal,cell,answer"));
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[0].to_string(), f[1].to_string(), f[2].parse().unwrap())
        })
        .collect()
}

#[test]
fn relaxed_projection_answers_adult_through_the_one_hot_encoding() {
    let dir = fresh_dir("dpqr-cli-relaxed", "relaxed");
    let wl = dir.join("tables.json");
    std::fs::write(&wl, TABLES).unwrap();
    let out = dir.join("answers.csv");
    let o = run(&[
        "release",
        "--dataset",
        "adult",
        "--workload",
        s(&wl),
        "--mechanism",
        "relaxed-projection",
        "--rho",
        "50",
        "--seed",
        "3",
        "--out",
        s(&out),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("relaxed-projection: ρ = 50 (ρ-zCDP)"), "{t}");
    assert!(t.contains("replace-one"), "{t}");
    // 1 + 5 + 1 bits: sex, race=0..4, income>50K
    assert!(t.contains("one-hot encoding of the 3 attributes"), "{t}");
    assert!(t.contains("7 bits, 6 bit tables"), "{t}");
    let got = answers(&out);
    let data = bundled("adult").unwrap().load().unwrap();
    let lists: Vec<Vec<String>> = serde_json::from_str(TABLES).unwrap();
    let w = MarginalWorkload::from_attribute_lists(data.domain(), &lists).unwrap();
    let truth = w.answers(&data).unwrap();
    assert_eq!(got.len(), truth.len(), "2·5 + 2·2 cells");
    // Error bound, from the release's own certified Frank–Wolfe gap g (reported in its notes):
    // the 13 parities get discrete Gaussian noise σ² = 13/(2·50) = 0.13 on counts, so each
    // noisy parity is within 6σ·2/n < 1e-4 of the truth except with probability < 1e-8; the
    // projection p* onto the relaxation (which contains the truth) is no farther from the
    // truth than the noisy point in the ω-norm, and the returned v has ‖v − p*‖²_ω ≤ g (the
    // objective is 1-strongly convex in that norm). Every bit table has at most 2 bits, so
    // ω_T ≥ 1/4 and |e_T| ≤ 2‖e‖_ω; a cell is 1/4 of a ±-sum of its 3 parities' errors:
    // |cell error| ≤ (3/4)·2·(√g + ‖noise‖_ω) ≤ 1.5·(√g + 13·1e-4).
    let gap: f64 = t
        .split("with certified gap ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|g| g.parse().ok())
        .unwrap_or_else(|| panic!("no certified gap in the notes: {t}"));
    let bound = 1.5 * (gap.sqrt() + 13.0 * 1e-4);
    assert!(bound < 0.2, "the solver's gap {gap} leaves no test");
    for ((m, c, a), t) in got.iter().zip(&truth) {
        assert!(
            (a - t).abs() <= bound,
            "{m} {c}: {a} vs {t} (bound {bound})"
        );
    }
}

#[test]
fn boosting_runs_on_adult_and_states_its_guarantee() {
    let dir = fresh_dir("dpqr-cli-relaxed", "boosting");
    let wl = dir.join("tables.json");
    std::fs::write(&wl, TABLES).unwrap();
    let out = dir.join("answers.csv");
    let o = run(&[
        "release",
        "--dataset",
        "adult",
        "--workload",
        s(&wl),
        "--mechanism",
        "boosting",
        "--epsilon",
        "1",
        "--delta",
        "1e-9",
        "--rounds",
        "3",
        "--max-iterations",
        "5",
        "--seed",
        "3",
        "--out",
        s(&out),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("boosting: ρ = "), "{t}");
    assert!(t.contains("implies (ε, δ) = (1, 1e-9)"), "{t}");
    assert!(t.contains("T = 3 rounds"), "{t}");
    assert!(t.contains("one-hot encoding"), "{t}");
    let got = answers(&out);
    assert_eq!(got.len(), 14);
    assert!(got.iter().all(|(_, _, a)| a.is_finite()));
    // add/remove is refused before any data is read
    let o = run(&[
        "release",
        "--dataset",
        "adult",
        "--workload",
        s(&wl),
        "--mechanism",
        "boosting",
        "--rho",
        "1",
        "--neighbouring",
        "add-remove",
        "--out",
        s(&dir.join("no.csv")),
    ]);
    assert!(!o.status.success());
    assert!(!dir.join("no.csv").exists());
}
