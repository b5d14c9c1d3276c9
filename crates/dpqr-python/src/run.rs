//! One release for Python: the [`Arguments`] turned into a request, the outputs chosen as
//! `dpqr release` would be told to write them, and [`dp_bench::pipeline::release`] run
//! once. Every check and every message is the pipeline's; what Python reads back are the
//! files it wrote, so a release from Python outputs exactly what the command line does.

use crate::arguments::{Arguments, SyntheticChoice};
use crate::error::Result;
use dp_bench::BenchError;
use dp_bench::catalogue::{self, BudgetKind, MECHANISMS, MechanismSpec, neighbouring_flag};
use dp_bench::io::answers::AnswersForm;
use dp_bench::pipeline::{self, Outcome, ReleaseEvents, ReleaseRequest, Silent};
use dp_core::PrivacyLoss;
use dp_mechanisms::PrivacyCertificate;
use dp_queries::AnyWorkload;
use std::sync::Mutex;

/// A certificate as `dpqr.Certificate` holds it: plain fields in the command line's words.
#[derive(Clone, Debug, PartialEq)]
pub struct CertificateView {
    /// The mechanism that spent the budget.
    pub mechanism: String,
    /// `central` or `local`.
    pub model: &'static str,
    /// The relation of a central guarantee as `--neighbouring` names it (`add-remove`,
    /// `replace-one`); `None` in the local model.
    pub neighbouring: Option<&'static str>,
    /// The native accounting: `pure`, `approx` or `zcdp` ([`BudgetKind::key`]).
    pub guarantee: &'static str,
    /// ε of a pure or (ε, δ) guarantee.
    pub epsilon: Option<f64>,
    /// δ of an (ε, δ) guarantee.
    pub delta: Option<f64>,
    /// ρ of a zCDP guarantee.
    pub rho: Option<f64>,
    /// The (ε, δ) a zCDP guarantee implies at the δ asked.
    pub approx_equivalent: Option<(f64, f64)>,
    /// The line `dpqr release` prints after "privacy spent:".
    pub statement: String,
}

impl CertificateView {
    /// The view of `c`.
    pub fn of(c: &PrivacyCertificate) -> Self {
        let (epsilon, delta, rho) = match c.loss {
            PrivacyLoss::Pure { epsilon } => (Some(epsilon), None, None),
            PrivacyLoss::Approx { epsilon, delta } => (Some(epsilon), Some(delta), None),
            PrivacyLoss::Zcdp { rho } => (None, None, Some(rho)),
        };
        let approx_equivalent = match c.approx_equivalent {
            Some(PrivacyLoss::Approx { epsilon, delta }) => Some((epsilon, delta)),
            Some(PrivacyLoss::Pure { epsilon }) => Some((epsilon, 0.0)),
            _ => None,
        };
        CertificateView {
            mechanism: c.mechanism.clone(),
            model: c.model.key(),
            neighbouring: c.neighbouring().map(neighbouring_flag),
            guarantee: BudgetKind::of(&c.loss).key(),
            epsilon,
            delta,
            rho,
            approx_equivalent,
            statement: c.statement(),
        }
    }
}

/// What a release from Python did, beside the files it wrote.
#[derive(Debug)]
pub struct Ran {
    /// The guarantee the release carries.
    pub certificate: CertificateView,
    /// Whether the answers were written labelled (`marginal,cell,answer,label,count`).
    pub labelled: bool,
    /// Whether synthetic records were written to [`Arguments::synthetic_out`].
    pub synthetic: bool,
    /// The warnings `dpqr release` prints on stderr (a fixed seed, a large δ accepted,
    /// noise that swamps the tables), in order.
    pub warnings: Vec<String>,
}

/// The [`ReleaseEvents`] of a release from Python: the warnings kept for the caller to
/// raise as Python warnings once the release is done (Python is not called while the
/// release runs without the interpreter lock); nothing else is shown.
#[derive(Default)]
struct Collected {
    warnings: Mutex<Vec<String>>,
}

impl ReleaseEvents for Collected {
    fn warning(&self, message: &str) {
        // a poisoned lock means a panic elsewhere, which the caller sees; keep the rest
        let mut w = self
            .warnings
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        w.push(message.to_string());
    }
}

/// Whether the catalogue entry called `name` is a local-model one (unknown names are not:
/// the pipeline refuses them).
fn is_local(name: &str) -> bool {
    catalogue::find(name).is_some_and(|s| s.central().is_none())
}

/// The answers' form for `request` when labelled answers are asked: labelled for a
/// central release of marginal tables, and otherwise the schema's choice (the pipeline
/// refuses the labelled form for other classes and for the local model). An argument
/// that cannot be checked here is left for the pipeline to refuse, in its order and with
/// its message.
fn answers_form(request: &ReleaseRequest) -> AnswersForm {
    if is_local(&request.mechanism) {
        return AnswersForm::Auto;
    }
    let marginals = request.data.public_domain().and_then(|domain| {
        AnyWorkload::parse_spec(&domain, &request.workload, request.workload_seed)
            .map_err(BenchError::from)
    });
    match marginals {
        Ok(w) if w.as_marginals().is_none() => AnswersForm::Auto,
        _ => AnswersForm::Labelled,
    }
}

/// Whether the release of `request` makes synthetic records, from public inputs: the
/// mechanism the pipeline would build (the one `auto` would choose) says so; a local-model
/// release makes none. `false` when the request does not validate — the release itself
/// then reports why.
fn makes_synthetic(request: &ReleaseRequest) -> bool {
    pipeline::validate(request, &Silent).is_ok_and(|plan| plan.produces_synthetic())
}

/// Run the release `args` ask for, writing its answers, report and (when made) synthetic
/// records to the paths they give.
pub fn release(args: &Arguments) -> Result<Ran> {
    let mut request = args.request()?;
    if args.labelled {
        request.outputs.answers_form = answers_form(&request);
    }
    let synthetic = match args.synthetic {
        SyntheticChoice::Never => false,
        SyntheticChoice::Always => true,
        SyntheticChoice::IfMade => args.rows.is_some() || makes_synthetic(&request),
    };
    if synthetic {
        request.outputs.synthetic = Some(args.synthetic_out.clone());
    }
    let events = Collected::default();
    let outcome = pipeline::release(&request, &events)?;
    let (certificate, labelled) = match outcome {
        Outcome::Released(r) => (r.release.certificate.clone(), r.plan.labelled()),
        Outcome::LocalReleased { released, .. } => (released.release.certificate.clone(), false),
        Outcome::DryRun { .. } | Outcome::LocalDryRun(_) => {
            return Err(
                BenchError::Internal("a release from Python ran as a dry run".into()).into(),
            );
        }
    };
    let warnings = events
        .warnings
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    Ok(Ran {
        certificate: CertificateView::of(&certificate),
        labelled,
        synthetic,
        warnings,
    })
}

/// The catalogue as `dpqr mechanisms --json` prints it: one object per mechanism
/// ([`MechanismSpec::to_json`]).
pub fn mechanisms_json() -> Result<String> {
    let list: Vec<serde_json::Value> = MECHANISMS.iter().map(MechanismSpec::to_json).collect();
    serde_json::to_string(&list).map_err(|source| {
        BenchError::Encode {
            what: "the list of mechanisms",
            source,
        }
        .into()
    })
}

/// **NON-PRIVATE.** A schema drafted from the CSV text `csv` (with a header row) by
/// [`dp_queries::draft_schema`], as `dpqr schema draft --max-labels M --bins B` drafts
/// it: the draft discloses the data (its labels, minima and maxima) and must be reviewed
/// and coarsened before any release uses it. `file` names the data in errors.
pub fn draft_schema_nonprivate(
    csv: &[u8],
    file: &str,
    max_labels: usize,
    bins: usize,
) -> Result<String> {
    if max_labels == 0 || bins == 0 {
        return Err(BenchError::Usage("--max-labels and --bins must be at least 1".into()).into());
    }
    let settings = dp_queries::DraftSettings {
        max_labels,
        bins,
        delimiter: b',',
    };
    Ok(dp_queries::draft_schema(csv, file, settings)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arguments::SettingArg;
    use dp_core::Neighbouring;
    use dp_mechanisms::PrivacyModel;
    use std::path::{Path, PathBuf};

    /// A fresh directory under the system's temporary directory, removed on drop.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new(tag: &str) -> TempDir {
            let dir = std::env::temp_dir().join(format!(
                "dpqr-python-{tag}-{}-{:?}",
                std::process::id(),
                std::thread::current().id()
            ));
            std::fs::create_dir_all(&dir).unwrap();
            TempDir(dir)
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            std::fs::remove_dir_all(&self.0).ok();
        }
    }

    /// A small table of labels and bins, its schema, and release arguments over it.
    fn arguments(dir: &Path) -> Arguments {
        let data = dir.join("data.csv");
        let mut csv = String::from("colour,size\n");
        for i in 0..300 {
            let colour = ["red", "green", "blue"][i % 3];
            csv.push_str(&format!("{colour},{}\n", (i * 7) % 10));
        }
        std::fs::write(&data, csv).unwrap();
        let schema = dir.join("schema.json");
        std::fs::write(
            &schema,
            r#"{"colour": {"labels": ["red", "green", "blue"]}, "size": {"bins": [0, 5, 10]}}"#,
        )
        .unwrap();
        Arguments {
            data,
            schema,
            workload: "all-2way".into(),
            mechanism: "gaussian".into(),
            rho: Some(1.0),
            seed: Some(3),
            labelled: true,
            answers: dir.join("answers.csv"),
            report: dir.join("report.json"),
            synthetic_out: dir.join("synthetic.csv"),
            max_memory_mib: 64,
            ..Arguments::default()
        }
    }

    #[test]
    fn a_release_writes_labelled_answers_and_warns_of_its_seed() {
        let dir = TempDir::new("release");
        let args = arguments(&dir.0);
        let ran = release(&args).unwrap();
        assert!(ran.labelled);
        // gaussian makes no synthetic records: none asked, none written
        assert!(!ran.synthetic);
        assert!(!args.synthetic_out.exists());
        // gaussian under ρ, with its default relation, add/remove
        assert_eq!(
            ran.certificate,
            CertificateView {
                mechanism: "gaussian".into(),
                model: "central",
                neighbouring: Some("add-remove"),
                guarantee: "zcdp",
                epsilon: None,
                delta: None,
                rho: Some(1.0),
                approx_equivalent: None,
                statement: "gaussian: ρ = 1 (ρ-zCDP), add/remove neighbours".into(),
            }
        );
        assert!(
            ran.warnings
                .iter()
                .any(|w| w.contains("--seed fixes the noise")),
            "{:?}",
            ran.warnings
        );
        let answers = std::fs::read_to_string(&args.answers).unwrap();
        let mut lines = answers.lines();
        assert_eq!(lines.next(), Some("marginal,cell,answer,label,count"));
        // one table of 3 × 2 cells
        assert_eq!(lines.count(), 6);
        assert!(answers.contains("colour=red|size=[0,5)"), "{answers}");
        assert!(args.report.exists());
    }

    #[test]
    fn synthetic_records_when_the_mechanism_makes_them_unless_refused() {
        let dir = TempDir::new("synthetic");
        let args = Arguments {
            mechanism: "adaptive-projection".into(),
            epsilon: Some(1.0),
            delta: Some(1e-7),
            rho: None,
            settings: vec![("rounds".into(), SettingArg::Whole(10))],
            ..arguments(&dir.0)
        };
        let ran = release(&args).unwrap();
        assert!(ran.synthetic);
        let synthetic = std::fs::read_to_string(&args.synthetic_out).unwrap();
        assert!(synthetic.starts_with("colour,size,weight\n"), "{synthetic}");
        std::fs::remove_file(&args.synthetic_out).unwrap();
        let never = Arguments {
            synthetic: SyntheticChoice::Never,
            ..args.clone()
        };
        assert!(!release(&never).unwrap().synthetic);
        assert!(!args.synthetic_out.exists());
        // asked of a mechanism that makes none: the pipeline's refusal
        let always = Arguments {
            synthetic: SyntheticChoice::Always,
            mechanism: "gaussian".into(),
            settings: Vec::new(),
            ..args
        };
        let err = release(&always).unwrap_err().to_string();
        assert!(
            err.contains("releases answers only, no synthetic data"),
            "{err}"
        );
    }

    #[test]
    fn errors_are_the_pipelines_in_its_order() {
        let dir = TempDir::new("errors");
        let args = arguments(&dir.0);
        let unknown = Arguments {
            mechanism: "gausian".into(),
            epsilon: Some(-1.0),
            ..args.clone()
        };
        // the mechanism is looked up before the budget is checked
        assert_eq!(
            release(&unknown).unwrap_err().to_string(),
            catalogue::unknown_mechanism("gausian").to_string()
        );
        let bad_epsilon = Arguments {
            epsilon: Some(0.0),
            delta: Some(1e-9),
            rho: None,
            ..args.clone()
        };
        let e = release(&bad_epsilon).unwrap_err();
        assert_eq!(e.exit_status(), 2);
        assert!(
            e.to_string().starts_with("--epsilon 0 is out of range"),
            "{e}"
        );
        let column = Arguments {
            workload: dir.0.join("w.json").display().to_string(),
            ..args
        };
        std::fs::write(dir.0.join("w.json"), r#"[["colour", "shape"]]"#).unwrap();
        let e = release(&column).unwrap_err().to_string();
        assert!(e.contains("shape"), "{e}");
        assert!(!column.answers.exists());
    }

    #[test]
    fn certificate_views_in_the_command_lines_words() {
        let c = PrivacyCertificate {
            mechanism: "m".into(),
            loss: PrivacyLoss::Zcdp { rho: 0.5 },
            model: PrivacyModel::Central {
                neighbouring: Neighbouring::AddRemove,
            },
            approx_equivalent: Some(PrivacyLoss::Approx {
                epsilon: 3.0,
                delta: 1e-6,
            }),
        };
        let v = CertificateView::of(&c);
        assert_eq!(v.neighbouring, Some("add-remove"));
        assert_eq!((v.guarantee, v.rho, v.epsilon), ("zcdp", Some(0.5), None));
        assert_eq!(v.approx_equivalent, Some((3.0, 1e-6)));
        assert_eq!(v.statement, c.statement());
        let local = CertificateView::of(&PrivacyCertificate::local("l", 2.0));
        assert_eq!(local.model, "local");
        assert_eq!(local.neighbouring, None);
        assert_eq!((local.guarantee, local.epsilon), ("pure", Some(2.0)));
        let approx = CertificateView::of(&PrivacyCertificate {
            loss: PrivacyLoss::Approx {
                epsilon: 1.0,
                delta: 1e-9,
            },
            approx_equivalent: None,
            ..c
        });
        assert_eq!(
            (approx.guarantee, approx.epsilon, approx.delta),
            ("approx", Some(1.0), Some(1e-9))
        );
    }

    #[test]
    fn the_catalogue_lists_every_mechanism() {
        let list: Vec<serde_json::Value> =
            serde_json::from_str(&mechanisms_json().unwrap()).unwrap();
        assert_eq!(list.len(), MECHANISMS.len());
        assert!(
            list.iter()
                .any(|m| m["name"] == "adaptive-projection" && m["synthetic_data"] == true)
        );
    }

    #[test]
    fn the_draft_reads_the_csv_text() {
        let draft = draft_schema_nonprivate(b"a,b\nx,1\ny,\n", "the frame", 20, 10).unwrap();
        let v: serde_json::Value = serde_json::from_str(&draft).unwrap();
        assert!(v["a"]["labels"].is_array(), "{draft}");
        assert!(draft_schema_nonprivate(b"a\n1\n", "f", 0, 10).is_err());
    }
}
