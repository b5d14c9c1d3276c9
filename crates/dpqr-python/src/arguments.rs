//! The keyword arguments of `dpqr.release()` as plain data ([`Arguments`]), checked and
//! turned into the pipeline's [`ReleaseRequest`] — the same request `dpqr release` builds
//! from its flags, so that every later check, and its message, is the command line's.
//!
//! What only Python can have is refused here with a message naming the keyword: a setting
//! no flag exists for, a value of a type no flag takes. Everything a flag would refuse is
//! left to the pipeline, so that its message is the same.

use crate::error::{BindingError, Result};
use dp_bench::catalogue::neighbouring_flag;
use dp_bench::io::answers::AnswersForm;
use dp_bench::pipeline::{Counting, DataSpec, LedgerTarget, ReleaseOutputs, ReleaseRequest};
use dp_bench::registry::BudgetArgs;
use dp_bench::settings::{SettingKind, Settings, oracle_name};
use dp_core::Neighbouring;
use dp_mechanisms::PostProcessing;
use dp_mechanisms::iterative::OracleChoice;
use dp_queries::ReadOptions;
use std::path::PathBuf;

/// A mechanism setting's value as Python passed it (`rounds=20`, `eta=0.4`,
/// `oracle="ilp"`).
#[derive(Clone, Debug, PartialEq)]
pub enum SettingArg {
    /// A Python `int` that fits 64 bits.
    Whole(i64),
    /// A Python `float`.
    Real(f64),
    /// A Python `str`.
    Text(String),
    /// Any other value: its Python type's name and its `repr`.
    Other {
        /// The type's name, e.g. `bool`.
        type_name: String,
        /// The value's `repr`.
        repr: String,
    },
}

impl SettingArg {
    /// The value as a message shows it: Python's notation.
    fn show(&self) -> String {
        match self {
            SettingArg::Whole(n) => n.to_string(),
            SettingArg::Real(x) => format!("{x:?}"),
            SettingArg::Text(s) => format!("{s:?}"),
            SettingArg::Other { type_name, repr } => format!("{repr} (a {type_name})"),
        }
    }
}

/// Whether a release writes synthetic records.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SyntheticChoice {
    /// When the mechanism makes synthetic records (`synthetic=None`, the default).
    #[default]
    IfMade,
    /// Always (`synthetic=True`, or `rows=N`): a mechanism that makes none is refused
    /// before anything is read, as `dpqr release --synthetic-out` refuses it.
    Always,
    /// Never (`synthetic=False`).
    Never,
}

/// The keyword arguments of `dpqr.release()`, once the Python side has put the data (a
/// DataFrame is written as a Parquet file), the schema (a dict is written as JSON) and a
/// workload given as a list of tables (written as JSON) into files.
#[derive(Clone, Debug, Default)]
pub struct Arguments {
    /// The data file: CSV, gzip-compressed CSV or Parquet (`--data`); not read when
    /// [`Self::dataset`] is given.
    pub data: PathBuf,
    /// The public schema or domain JSON (`--domain`); not read when [`Self::dataset`] is
    /// given.
    pub schema: PathBuf,
    /// A bundled dataset instead of the data and schema (`--dataset`: `dpqr datasets`).
    pub dataset: Option<String>,
    /// Keep only these attributes, in this order (`--attributes`).
    pub attributes: Option<Vec<String>>,
    /// The CSV field separator, one character (`--delimiter`); a comma when `None`.
    pub delimiter: Option<String>,
    /// Skip the data's columns the schema does not name (`--ignore-extra-columns`).
    pub ignore_extra_columns: bool,
    /// `all-Kway`, `random-Kway:M` or a workload JSON file (`--workload`).
    pub workload: String,
    /// The seed of a random workload (`--workload-seed`; public).
    pub workload_seed: u64,
    /// A catalogue name or `auto` (`--mechanism`).
    pub mechanism: String,
    /// ε (`--epsilon`).
    pub epsilon: Option<f64>,
    /// δ (`--delta`).
    pub delta: Option<f64>,
    /// ρ (`--rho`).
    pub rho: Option<f64>,
    /// `--allow-large-delta`.
    pub allow_large_delta: bool,
    /// `"add-remove"` or `"replace-one"` (`--neighbouring`); the entry's default when
    /// `None`.
    pub neighbouring: Option<String>,
    /// `"none"` or `"simplex"` (`--post`); none when `None`.
    pub post: Option<String>,
    /// TESTING ONLY: the seed of the mechanism's randomness (`--seed`).
    pub seed: Option<u64>,
    /// The mechanism's settings by their keyword (`rounds`, `eta`, …: the flags without
    /// `--`, with `_` for `-`).
    pub settings: Vec<(String, SettingArg)>,
    /// Write the answers of a marginal workload labelled (`--answers-form labelled`) rather
    /// than as the schema decides (`auto`).
    pub labelled: bool,
    /// Where the answers CSV is written (`--out`).
    pub answers: PathBuf,
    /// Where the report JSON is written (`--report`).
    pub report: PathBuf,
    /// Where the synthetic records are written when they are (`--synthetic-out`).
    pub synthetic_out: PathBuf,
    /// Whether they are.
    pub synthetic: SyntheticChoice,
    /// Plain rows instead of weighted records (`--rows`), as Python gave it.
    pub rows: Option<i64>,
    /// `--max-memory-mib`.
    pub max_memory_mib: u64,
    /// `--dry-run`: plan only ([`crate::run::plan`]).
    pub dry_run: bool,
    /// The budget ledger the release is charged to (`--ledger`).
    pub ledger: Option<PathBuf>,
    /// Its dataset (`--ledger-dataset`); required when [`Self::data_is_a_frame`].
    pub ledger_dataset: Option<String>,
    /// Whether [`Self::data`] is a temporary copy of a DataFrame: a new file at every call,
    /// so the ledger knows the data by the dataset's name instead of the file's path.
    pub data_is_a_frame: bool,
    /// `--assume-n`: with a dry run, predict for a table of this many records.
    pub assume_n: Option<u64>,
}

/// The settings `pairs` (keyword, value) as the pipeline's [`Settings`]. A keyword is a
/// setting's JSON key ([`SettingKind::key`]: `rounds`, `max_iterations`, …); a value must
/// have the type its flag parses — a whole number, a number, or an oracle's name. Ranges
/// (`rounds=0`, `eta=-1`) are left to [`Settings::check_values`], which the pipeline runs.
pub fn settings_from(pairs: &[(String, SettingArg)]) -> Result<Settings> {
    let mut settings = Settings::default();
    for (key, value) in pairs {
        let kind = SettingKind::ALL
            .into_iter()
            .find(|k| k.key() == key)
            .ok_or_else(|| unknown_setting(key))?;
        match kind {
            SettingKind::Rounds => settings.rounds = Some(whole(key, value)?),
            SettingKind::Samples => settings.samples = Some(whole(key, value)?),
            SettingKind::MaxIterations => settings.max_iterations = Some(whole(key, value)?),
            SettingKind::Eta => settings.eta = Some(real(key, value)?),
            SettingKind::Alpha => settings.alpha = Some(real(key, value)?),
            SettingKind::Tolerance => settings.tolerance = Some(real(key, value)?),
            SettingKind::Oracle => settings.oracle = Some(oracle(key, value)?),
        }
    }
    Ok(settings)
}

/// The error for a keyword that is no setting, listing the settings.
fn unknown_setting(key: &str) -> BindingError {
    let keys: Vec<&str> = SettingKind::ALL.iter().map(|k| k.key()).collect();
    BindingError::Argument(format!(
        "unknown keyword argument {key:?}: the mechanism settings are {} (dpqr.mechanisms() \
         lists which mechanism takes which)",
        keys.join(", ")
    ))
}

/// A count setting's value: a whole number; 0 passes, for the pipeline to refuse with the
/// flag's message.
fn whole(key: &str, value: &SettingArg) -> Result<usize> {
    match value {
        SettingArg::Whole(n) => usize::try_from(*n).ok(),
        _ => None,
    }
    .ok_or_else(|| {
        BindingError::Argument(format!(
            "{key}={}: give a whole number of at least 1",
            value.show()
        ))
    })
}

/// A real setting's value: a number (a whole one too).
fn real(key: &str, value: &SettingArg) -> Result<f64> {
    match value {
        SettingArg::Whole(n) => Ok(*n as f64),
        SettingArg::Real(x) => Ok(*x),
        _ => Err(BindingError::Argument(format!(
            "{key}={}: give a number",
            value.show()
        ))),
    }
}

/// The oracle named by `value`.
fn oracle(key: &str, value: &SettingArg) -> Result<OracleChoice> {
    let all = [
        OracleChoice::Auto,
        OracleChoice::Exhaustive,
        OracleChoice::MaxCsp,
        OracleChoice::Ilp,
    ];
    if let SettingArg::Text(name) = value
        && let Some(o) = all.into_iter().find(|o| oracle_name(*o) == name)
    {
        return Ok(o);
    }
    let names: Vec<&str> = all.into_iter().map(oracle_name).collect();
    Err(BindingError::Argument(format!(
        "{key}={}: give one of {}",
        value.show(),
        names.join(", ")
    )))
}

/// The relation named `name` (`"add-remove"`, `"replace-one"`: the flag's values).
pub fn neighbouring_from(name: &str) -> Result<Neighbouring> {
    let all = [Neighbouring::AddRemove, Neighbouring::ReplaceOne];
    all.into_iter()
        .find(|r| neighbouring_flag(*r) == name)
        .ok_or_else(|| {
            BindingError::Argument(format!(
                "neighbouring={name:?}: give {:?} or {:?}",
                neighbouring_flag(all[0]),
                neighbouring_flag(all[1])
            ))
        })
}

/// The post-processing named `name` (`"none"`, `"simplex"`: the flag's values).
pub fn post_from(name: &str) -> Result<PostProcessing> {
    match name {
        "none" => Ok(PostProcessing::None),
        "simplex" => Ok(PostProcessing::SimplexProjection),
        _ => Err(BindingError::Argument(format!(
            "post={name:?}: give \"none\" or \"simplex\" (a projection of each table onto the \
             proportions)"
        ))),
    }
}

/// The reading options of `delimiter` (one character) and `ignore_extra_columns`, checked
/// by [`ReadOptions::new`] as the command line's `--delimiter` is.
fn read_options(delimiter: Option<&str>, ignore_extra_columns: bool) -> Result<ReadOptions> {
    let Some(text) = delimiter else {
        return Ok(ReadOptions::default().ignoring_extra_columns(ignore_extra_columns));
    };
    let mut chars = text.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) => Ok(ReadOptions::new(c, ignore_extra_columns)?),
        _ => Err(BindingError::Argument(format!(
            "delimiter={text:?}: give one character, e.g. ';', '|' or '\\t'"
        ))),
    }
}

impl Arguments {
    /// The ledger charged: the file and its dataset, and for a DataFrame the key the ledger
    /// records it under, `dataframe:NAME` — a frame is copied into a new temporary file at
    /// every call, so its path is no stable key, and the name the caller gives is required.
    fn ledger_target(&self) -> Result<Option<LedgerTarget>> {
        let Some(path) = &self.ledger else {
            if self.ledger_dataset.is_some() {
                return Err(BindingError::Argument(
                    "ledger_dataset names a dataset of a budget ledger: give ledger= too".into(),
                ));
            }
            return Ok(None);
        };
        let data_key = match (&self.ledger_dataset, self.data_is_a_frame) {
            (Some(name), true) => Some(format!("dataframe:{name}")),
            (None, true) => {
                return Err(BindingError::Argument(
                    "ledger: a DataFrame has no file the ledger can know it by; name the \
                     ledger's dataset it is charged to with ledger_dataset=\"NAME\" (always \
                     the same name for the same data: the ledger cannot tell that two frames \
                     hold the same records)"
                        .into(),
                ));
            }
            (_, false) => None,
        };
        Ok(Some(LedgerTarget {
            path: path.clone(),
            dataset: self.ledger_dataset.clone(),
            data_key,
        }))
    }

    /// The rows of `rows`: a whole number; the pipeline refuses 0 and too many with the
    /// flag's message.
    fn rows(&self) -> Result<Option<u64>> {
        self.rows
            .map(|n| {
                u64::try_from(n).map_err(|_| {
                    BindingError::Argument(format!("rows={n}: give a whole number of at least 1"))
                })
            })
            .transpose()
    }

    /// The pipeline's request: every flag `dpqr release` would be given for these
    /// arguments, the synthetic output left out ([`crate::run`] adds it when it is made).
    pub fn request(&self) -> Result<ReleaseRequest> {
        Ok(ReleaseRequest {
            data: DataSpec {
                // a bundled dataset comes with its domain (the Python side refuses data or
                // a schema beside it, as the command line refuses --data or --domain)
                data: self.dataset.is_none().then(|| self.data.clone()),
                domain: self.dataset.is_none().then(|| self.schema.clone()),
                dataset: self.dataset.clone(),
                attributes: self.attributes.clone(),
                read: read_options(self.delimiter.as_deref(), self.ignore_extra_columns)?,
            },
            workload: self.workload.clone(),
            workload_seed: self.workload_seed,
            mechanism: self.mechanism.clone(),
            settings: settings_from(&self.settings)?,
            budget: BudgetArgs {
                epsilon: self.epsilon,
                delta: self.delta,
                rho: self.rho,
            },
            allow_large_delta: self.allow_large_delta,
            neighbouring: self
                .neighbouring
                .as_deref()
                .map(neighbouring_from)
                .transpose()?,
            post: self
                .post
                .as_deref()
                .map(post_from)
                .transpose()?
                .unwrap_or(PostProcessing::None),
            seed: self.seed,
            outputs: ReleaseOutputs {
                answers: self.answers.clone(),
                report: Some(self.report.clone()),
                synthetic: None,
                synthetic_rows: self.rows()?,
                answers_form: if self.labelled {
                    AnswersForm::Labelled
                } else {
                    AnswersForm::Auto
                },
            },
            ledger: self.ledger_target()?,
            max_memory_mib: self.max_memory_mib,
            dry_run: self.dry_run,
            assume_n: self.assume_n,
            counting: Counting::default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(v: &[(&str, SettingArg)]) -> Vec<(String, SettingArg)> {
        v.iter().map(|(k, a)| (k.to_string(), a.clone())).collect()
    }

    #[test]
    fn a_frame_is_known_to_the_ledger_by_the_name_given() {
        let args = Arguments {
            ledger: Some(PathBuf::from("ledger.json")),
            data_is_a_frame: true,
            ..Arguments::default()
        };
        let e = args.request().unwrap_err().to_string();
        assert!(e.contains("ledger_dataset=\"NAME\""), "{e}");
        let named = Arguments {
            ledger_dataset: Some("adult".into()),
            ..args.clone()
        };
        let target = named.request().unwrap().ledger.unwrap();
        assert_eq!(target.data_key.as_deref(), Some("dataframe:adult"));
        assert_eq!(target.dataset.as_deref(), Some("adult"));
        // a file: the pipeline's key, its canonical path
        let file = Arguments {
            data_is_a_frame: false,
            ..named.clone()
        };
        assert_eq!(file.request().unwrap().ledger.unwrap().data_key, None);
        let no_ledger = Arguments {
            ledger: None,
            ..named
        };
        assert!(
            no_ledger
                .request()
                .unwrap_err()
                .to_string()
                .contains("give ledger= too")
        );
    }

    #[test]
    fn settings_take_the_types_their_flags_parse() {
        let s = settings_from(&pairs(&[
            ("rounds", SettingArg::Whole(20)),
            ("eta", SettingArg::Whole(2)),
            ("alpha", SettingArg::Real(0.25)),
            ("max_iterations", SettingArg::Whole(7)),
            ("oracle", SettingArg::Text("maxcsp".into())),
        ]))
        .unwrap();
        assert_eq!(s.rounds, Some(20));
        assert_eq!(s.eta, Some(2.0));
        assert_eq!(s.alpha, Some(0.25));
        assert_eq!(s.max_iterations, Some(7));
        assert_eq!(s.oracle, Some(OracleChoice::MaxCsp));
        assert_eq!(s.samples, None);
        assert_eq!(s.tolerance, None);
        // zero passes here: the pipeline refuses it with the flag's message
        assert_eq!(
            settings_from(&pairs(&[("rounds", SettingArg::Whole(0))]))
                .unwrap()
                .rounds,
            Some(0)
        );
    }

    #[test]
    fn settings_of_the_wrong_type_or_name_are_refused_by_keyword() {
        let err = |v: &[(&str, SettingArg)]| settings_from(&pairs(v)).unwrap_err().to_string();
        assert_eq!(
            err(&[("rounds", SettingArg::Whole(-3))]),
            "rounds=-3: give a whole number of at least 1"
        );
        assert_eq!(
            err(&[("rounds", SettingArg::Real(2.5))]),
            "rounds=2.5: give a whole number of at least 1"
        );
        assert_eq!(
            err(&[(
                "samples",
                SettingArg::Other {
                    type_name: "bool".into(),
                    repr: "True".into()
                }
            )]),
            "samples=True (a bool): give a whole number of at least 1"
        );
        assert_eq!(
            err(&[("eta", SettingArg::Text("big".into()))]),
            "eta=\"big\": give a number"
        );
        assert_eq!(
            err(&[("oracle", SettingArg::Text("fast".into()))]),
            "oracle=\"fast\": give one of auto, exhaustive, maxcsp, ilp"
        );
        let unknown = err(&[("round", SettingArg::Whole(3))]);
        assert!(
            unknown.starts_with("unknown keyword argument \"round\""),
            "{unknown}"
        );
        assert!(unknown.contains("rounds, eta, samples"), "{unknown}");
        // the hyphenated flag spelling is not a keyword
        assert!(err(&[("max-iterations", SettingArg::Whole(3))]).starts_with("unknown"));
    }

    #[test]
    fn relations_and_post_processing_by_the_flags_values() {
        assert_eq!(
            neighbouring_from("add-remove").unwrap(),
            Neighbouring::AddRemove
        );
        assert_eq!(
            neighbouring_from("replace-one").unwrap(),
            Neighbouring::ReplaceOne
        );
        assert_eq!(
            neighbouring_from("add/remove").unwrap_err().to_string(),
            "neighbouring=\"add/remove\": give \"add-remove\" or \"replace-one\""
        );
        assert_eq!(post_from("none").unwrap(), PostProcessing::None);
        assert_eq!(
            post_from("simplex").unwrap(),
            PostProcessing::SimplexProjection
        );
        assert!(post_from("clip").is_err());
    }

    #[test]
    fn the_request_carries_every_argument() {
        let args = Arguments {
            data: "d.parquet".into(),
            schema: "s.json".into(),
            delimiter: Some(";".into()),
            ignore_extra_columns: true,
            workload: "all-2way".into(),
            workload_seed: 4,
            mechanism: "gaussian".into(),
            epsilon: Some(1.0),
            delta: Some(1e-9),
            neighbouring: Some("replace-one".into()),
            post: Some("simplex".into()),
            seed: Some(9),
            settings: pairs(&[("rounds", SettingArg::Whole(3))]),
            labelled: true,
            answers: "a.csv".into(),
            report: "r.json".into(),
            synthetic_out: "s.csv".into(),
            rows: Some(100),
            max_memory_mib: 64,
            ..Arguments::default()
        };
        let r = args.request().unwrap();
        assert_eq!(r.data.data, Some(PathBuf::from("d.parquet")));
        assert_eq!(r.data.domain, Some(PathBuf::from("s.json")));
        assert_eq!(r.data.read.delimiter(), b';');
        assert!(r.data.read.ignores_extra_columns());
        assert_eq!(r.workload, "all-2way");
        assert_eq!(r.workload_seed, 4);
        assert_eq!(r.mechanism, "gaussian");
        assert_eq!(
            r.budget,
            BudgetArgs {
                epsilon: Some(1.0),
                delta: Some(1e-9),
                rho: None
            }
        );
        assert_eq!(r.neighbouring, Some(Neighbouring::ReplaceOne));
        assert_eq!(r.post, PostProcessing::SimplexProjection);
        assert_eq!(r.seed, Some(9));
        assert_eq!(r.settings.rounds, Some(3));
        assert_eq!(r.outputs.answers, PathBuf::from("a.csv"));
        assert_eq!(r.outputs.report, Some(PathBuf::from("r.json")));
        assert_eq!(r.outputs.synthetic, None);
        assert_eq!(r.outputs.synthetic_rows, Some(100));
        assert_eq!(r.outputs.answers_form, AnswersForm::Labelled);
        assert_eq!(r.max_memory_mib, 64);
        assert!(!r.dry_run && r.ledger.is_none());
    }

    #[test]
    fn bad_delimiters_and_rows_are_refused() {
        let base = Arguments::default();
        let with = |delimiter: &str| Arguments {
            delimiter: Some(delimiter.into()),
            ..base.clone()
        };
        assert!(
            with(";;")
                .request()
                .unwrap_err()
                .to_string()
                .starts_with("delimiter=\";;\": give one character")
        );
        // the loader's own check: a quote cannot separate fields
        assert!(with("\"").request().is_err());
        assert_eq!(with("\t").request().unwrap().data.read.delimiter(), b'\t');
        let rows = Arguments {
            rows: Some(-1),
            ..base
        };
        assert_eq!(
            rows.request().unwrap_err().to_string(),
            "rows=-1: give a whole number of at least 1"
        );
    }
}
