//! Mechanism settings given on the command line (`dpqr release --rounds 20 --eta 0.3 …`):
//! the settings a user may tune ([`SettingKind`]), the values given ([`Settings`], checked
//! by [`Settings::check_values`]) and a setting's value with its source ([`SettingValue`]).
//!
//! Which mechanism takes which setting, what it means there and its default (read from the
//! mechanism's own parameters in `dp-mechanisms`, never repeated here) is said by the
//! mechanism's catalogue entry ([`crate::catalogue::MechanismSpec::settings`]); the
//! catalogue refuses a setting the mechanism does not take before anything is built.

use crate::{BenchError, Result};
use dp_core::Num;
use dp_mechanisms::iterative::OracleChoice;

/// A setting the command line can give to a mechanism.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SettingKind {
    /// Rounds or iterations of an iterative mechanism (`--rounds`).
    Rounds,
    /// DualQuery's step size η (`--eta`).
    Eta,
    /// DualQuery's query samples per round s (`--samples`).
    Samples,
    /// A target error α (`--alpha`).
    Alpha,
    /// The projection solver's relative gap tolerance (`--tolerance`).
    Tolerance,
    /// The projection solver's iteration cap (`--max-iterations`).
    MaxIterations,
    /// DualQuery's best-response oracle (`--oracle`).
    Oracle,
}

impl SettingKind {
    /// Every setting, in the order they are listed to users.
    pub const ALL: [SettingKind; 7] = [
        SettingKind::Rounds,
        SettingKind::Eta,
        SettingKind::Samples,
        SettingKind::Alpha,
        SettingKind::Tolerance,
        SettingKind::MaxIterations,
        SettingKind::Oracle,
    ];

    /// The command-line flag, e.g. `--rounds`.
    pub fn flag(self) -> &'static str {
        match self {
            SettingKind::Rounds => "--rounds",
            SettingKind::Eta => "--eta",
            SettingKind::Samples => "--samples",
            SettingKind::Alpha => "--alpha",
            SettingKind::Tolerance => "--tolerance",
            SettingKind::MaxIterations => "--max-iterations",
            SettingKind::Oracle => "--oracle",
        }
    }

    /// The key in JSON output, e.g. `max_iterations`.
    pub fn key(self) -> &'static str {
        match self {
            SettingKind::Rounds => "rounds",
            SettingKind::Eta => "eta",
            SettingKind::Samples => "samples",
            SettingKind::Alpha => "alpha",
            SettingKind::Tolerance => "tolerance",
            SettingKind::MaxIterations => "max_iterations",
            SettingKind::Oracle => "oracle",
        }
    }

    /// What the setting is, in general words (each mechanism's entry says what it means
    /// there).
    pub fn describe(self) -> &'static str {
        match self {
            SettingKind::Rounds => "rounds (iterations) of an iterative mechanism",
            SettingKind::Eta => "DualQuery's step size η (> 0)",
            SettingKind::Samples => "DualQuery's query samples per round s (at least 1)",
            SettingKind::Alpha => "target error α, in (0, 1]",
            SettingKind::Tolerance => {
                "the projection solver's relative duality-gap tolerance (> 0): it stops once \
                 the gap is below it"
            }
            SettingKind::MaxIterations => {
                "the projection solver's cap on Frank–Wolfe (minimum-norm-point) iterations \
                 (at least 1); hitting it is reported, with the gap reached"
            }
            SettingKind::Oracle => {
                "DualQuery's best-response oracle: auto (exhaustive on small instances, the \
                 MAX-CSP heuristic otherwise), exhaustive, maxcsp or ilp"
            }
        }
    }
}

/// The command-line word for an oracle choice (`--oracle auto`).
pub fn oracle_name(oracle: OracleChoice) -> &'static str {
    match oracle {
        OracleChoice::Auto => "auto",
        OracleChoice::Exhaustive => "exhaustive",
        OracleChoice::MaxCsp => "maxcsp",
        OracleChoice::Ilp => "ilp",
    }
}

/// A setting's value: given or a mechanism's default.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SettingValue {
    /// A whole number (rounds, samples, iterations).
    Count(usize),
    /// A real number (η, α, a tolerance).
    Real(f64),
    /// An oracle.
    Oracle(OracleChoice),
    /// A default the mechanism derives when it runs, in words (e.g. "the largest within the
    /// budget").
    Derived(&'static str),
}

impl std::fmt::Display for SettingValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SettingValue::Count(n) => write!(f, "{n}"),
            SettingValue::Real(x) => write!(f, "{}", Num(*x)),
            SettingValue::Oracle(o) => f.write_str(oracle_name(*o)),
            SettingValue::Derived(words) => f.write_str(words),
        }
    }
}

impl SettingValue {
    /// The value for JSON output: a number, or a string for an oracle or a derived default.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            SettingValue::Count(n) => (*n).into(),
            SettingValue::Real(x) => serde_json::Number::from_f64(*x)
                .map_or_else(|| Num(*x).to_string().into(), serde_json::Value::Number),
            SettingValue::Oracle(o) => oracle_name(*o).into(),
            SettingValue::Derived(words) => (*words).into(),
        }
    }
}

/// The settings given on the command line; `None` leaves the mechanism's default.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Settings {
    /// `--rounds`.
    pub rounds: Option<usize>,
    /// `--eta`.
    pub eta: Option<f64>,
    /// `--samples`.
    pub samples: Option<usize>,
    /// `--alpha`.
    pub alpha: Option<f64>,
    /// `--tolerance`.
    pub tolerance: Option<f64>,
    /// `--max-iterations`.
    pub max_iterations: Option<usize>,
    /// `--oracle`.
    pub oracle: Option<OracleChoice>,
}

impl Settings {
    /// The value given for `kind`, if any.
    pub fn get(&self, kind: SettingKind) -> Option<SettingValue> {
        match kind {
            SettingKind::Rounds => self.rounds.map(SettingValue::Count),
            SettingKind::Eta => self.eta.map(SettingValue::Real),
            SettingKind::Samples => self.samples.map(SettingValue::Count),
            SettingKind::Alpha => self.alpha.map(SettingValue::Real),
            SettingKind::Tolerance => self.tolerance.map(SettingValue::Real),
            SettingKind::MaxIterations => self.max_iterations.map(SettingValue::Count),
            SettingKind::Oracle => self.oracle.map(SettingValue::Oracle),
        }
    }

    /// The settings given, in [`SettingKind::ALL`] order.
    pub fn given(&self) -> Vec<SettingKind> {
        SettingKind::ALL
            .into_iter()
            .filter(|k| self.get(*k).is_some())
            .collect()
    }

    /// `Ok` if every value given is in range: whole numbers at least 1, η and the
    /// tolerance finite and above zero, α in (0, 1]. The error names the flag and its
    /// value and says what to give.
    pub fn check_values(&self) -> Result<()> {
        for (kind, value) in [
            (SettingKind::Rounds, self.rounds),
            (SettingKind::Samples, self.samples),
            (SettingKind::MaxIterations, self.max_iterations),
        ] {
            if value == Some(0) {
                return Err(BenchError::Usage(format!(
                    "{} 0 is out of range: give a whole number of at least 1",
                    kind.flag()
                )));
            }
        }
        for (kind, value, symbol) in [
            (SettingKind::Eta, self.eta, "η"),
            (SettingKind::Tolerance, self.tolerance, "tolerance"),
        ] {
            if let Some(v) = value
                && !(v.is_finite() && v > 0.0)
            {
                return Err(BenchError::Usage(format!(
                    "{} {} is out of range: give a finite {symbol} > 0",
                    kind.flag(),
                    Num(v)
                )));
            }
        }
        if let Some(a) = self.alpha
            && !(a > 0.0 && a <= 1.0)
        {
            return Err(BenchError::Usage(format!(
                "{} {} is out of range: give α > 0 and α ≤ 1 (a target error, as a fraction \
                 of the records)",
                SettingKind::Alpha.flag(),
                Num(a)
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_out_of_range_are_refused_with_the_flag() {
        assert!(Settings::default().check_values().is_ok());
        let ok = Settings {
            rounds: Some(3),
            eta: Some(0.5),
            samples: Some(1),
            alpha: Some(1.0),
            tolerance: Some(1e-9),
            max_iterations: Some(10),
            oracle: Some(OracleChoice::Ilp),
        };
        assert!(ok.check_values().is_ok());
        assert_eq!(ok.given(), SettingKind::ALL.to_vec());
        let bad = [
            (
                Settings {
                    rounds: Some(0),
                    ..ok
                },
                "--rounds 0",
            ),
            (
                Settings {
                    samples: Some(0),
                    ..ok
                },
                "--samples 0",
            ),
            (
                Settings {
                    max_iterations: Some(0),
                    ..ok
                },
                "--max-iterations 0",
            ),
            (
                Settings {
                    eta: Some(0.0),
                    ..ok
                },
                "--eta 0",
            ),
            (
                Settings {
                    eta: Some(f64::NAN),
                    ..ok
                },
                "--eta NaN",
            ),
            (
                Settings {
                    tolerance: Some(-1.0),
                    ..ok
                },
                "--tolerance -1",
            ),
            (
                Settings {
                    tolerance: Some(f64::INFINITY),
                    ..ok
                },
                "--tolerance",
            ),
            (
                Settings {
                    alpha: Some(1.5),
                    ..ok
                },
                "--alpha 1.5",
            ),
            (
                Settings {
                    alpha: Some(f64::NAN),
                    ..ok
                },
                "--alpha NaN",
            ),
        ];
        for (settings, flag) in bad {
            let e = settings.check_values().err().unwrap().to_string();
            assert!(e.starts_with(flag) && e.contains("out of range"), "{e}");
        }
    }
}
