//! The release pipeline as a library (`dp_bench::pipeline`): a release from a
//! `ReleaseRequest` is the one `dpqr release` makes from the same arguments and seed, byte for
//! byte; a bad argument is refused in the validate stage, before the ledger is charged or any
//! output written; a dry run reads no data and records nothing.

mod common;
use common::{fresh_dir, run, s, text};
use dp_bench::BenchError;
use dp_bench::io::ledger_file;
use dp_bench::pipeline::{
    self, Counting, DataSpec, LedgerTarget, Outcome, ReleaseOutputs, ReleaseRequest, Silent,
    SourceKind, Validated,
};
use dp_bench::registry::BudgetArgs;
use dp_bench::settings::Settings;
use dp_core::{Neighbouring, PrivacyLoss};
use dp_mechanisms::PostProcessing;
use dp_queries::Workload;
use std::path::Path;

/// A seeded release of `mechanism` on the bundled nltcs table, writing to `dir`.
fn request(dir: &Path, mechanism: &str, budget: BudgetArgs) -> ReleaseRequest {
    ReleaseRequest {
        data: DataSpec {
            dataset: Some("nltcs".into()),
            ..DataSpec::default()
        },
        workload: "random-2way:6".into(),
        workload_seed: 3,
        mechanism: mechanism.into(),
        settings: Settings::default(),
        budget,
        allow_large_delta: false,
        neighbouring: None,
        post: PostProcessing::None,
        seed: Some(11),
        outputs: ReleaseOutputs {
            answers: dir.join("lib.csv"),
            report: Some(dir.join("lib.json")),
            synthetic: None,
            ..ReleaseOutputs::default()
        },
        ledger: None,
        max_memory_mib: 4096,
        dry_run: false,
        assume_n: None,
        counting: Counting::default(),
    }
}

fn rho(r: f64) -> BudgetArgs {
    BudgetArgs {
        rho: Some(r),
        ..BudgetArgs::default()
    }
}

fn epsilon(e: f64) -> BudgetArgs {
    BudgetArgs {
        epsilon: Some(e),
        ..BudgetArgs::default()
    }
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

#[test]
fn a_library_release_equals_the_cli_release() {
    // answer perturbation (add/remove by default) and a synthetic-data mechanism
    // (replace-one) with a setting
    for (mechanism, budget, flags, settings) in [
        (
            "gaussian",
            rho(0.5),
            vec!["--rho", "0.5"],
            Settings::default(),
        ),
        (
            "mwem",
            epsilon(1.0),
            vec!["--epsilon", "1", "--rounds", "4"],
            Settings {
                rounds: Some(4),
                ..Settings::default()
            },
        ),
    ] {
        let d = fresh_dir("pipeline", mechanism);
        let mut req = request(&d, mechanism, budget);
        req.settings = settings;
        let released = match pipeline::release(&req, &Silent).unwrap() {
            Outcome::Released(r) => r,
            _ => panic!("{mechanism}: not a central release"),
        };
        assert_eq!(released.plan.source(), SourceKind::Records);
        let (out, report) = (d.join("cli.csv"), d.join("cli.json"));
        let mut args = vec![
            "release",
            "--dataset",
            "nltcs",
            "--workload",
            "random-2way:6",
            "--workload-seed",
            "3",
            "--mechanism",
            mechanism,
            "--seed",
            "11",
            "--quiet",
            "--out",
            s(&out),
            "--report",
            s(&report),
        ];
        args.extend_from_slice(&flags);
        let o = run(&args);
        assert!(o.status.success(), "{mechanism}: {}", text(&o));
        assert_eq!(read(&d.join("lib.csv")), read(&out), "{mechanism}: answers");
        assert_eq!(
            read(&d.join("lib.json")),
            read(&report),
            "{mechanism}: report"
        );
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(
            stdout.contains(&format!(
                "privacy spent: {}",
                released.release.certificate.statement()
            )),
            "{mechanism}: {stdout}"
        );
    }
}

#[test]
fn a_bad_argument_is_refused_before_the_ledger_is_charged() {
    let d = fresh_dir("pipeline", "refused");
    let ledger = d.join("L.json");
    ledger_file::init(
        &ledger,
        PrivacyLoss::Pure { epsilon: 2.0 },
        Neighbouring::ReplaceOne,
        &[],
    )
    .unwrap();
    let before = read(&ledger);
    let charged = |mut req: ReleaseRequest| {
        req.ledger = Some(LedgerTarget {
            path: ledger.clone(),
            dataset: None,
            data_key: None,
        });
        req
    };
    let cases: Vec<(&str, ReleaseRequest)> = vec![
        // a budget kind the entry does not take
        ("does not accept", charged(request(&d, "laplace", rho(0.5)))),
        // a relation the entry is not stated for
        ("stated for", {
            let mut r = charged(request(&d, "mwem", epsilon(1.0)));
            r.neighbouring = Some(Neighbouring::AddRemove);
            r
        }),
        // a setting the entry does not take
        ("does not take --rounds", {
            let mut r = charged(request(&d, "laplace", epsilon(1.0)));
            r.settings.rounds = Some(3);
            r
        }),
        // a synthetic output of a mechanism that makes none
        ("no synthetic data", {
            let mut r = charged(request(&d, "laplace", epsilon(1.0)));
            r.outputs.synthetic = Some(d.join("syn.csv"));
            r
        }),
        // an output naming an input
        ("--out", {
            let mut r = charged(request(&d, "laplace", epsilon(1.0)));
            r.outputs.answers = ledger.clone();
            r
        }),
        // --stream with --attributes (a mechanism with a counting plan takes --stream; the
        // refusal for the records-only decision lists: tests/cli_thresholds.rs)
        ("drop --attributes", {
            let mut r = charged(request(&d, "coarse-projection", rho(0.5)));
            r.counting.stream = true;
            r.data.attributes = Some(
                ["bathing", "cooking", "dressing", "eating"]
                    .map(String::from)
                    .to_vec(),
            );
            r
        }),
    ];
    for (message, req) in cases {
        let e = match pipeline::validate(&req, &Silent) {
            Ok(_) => panic!("{message}: accepted"),
            Err(e) => e,
        };
        assert!(
            matches!(e, BenchError::Usage(_) | BenchError::BadOutput { .. }),
            "{message}: {e}"
        );
        assert!(e.to_string().contains(message), "{message}: {e}");
        // the whole pipeline refuses it the same way, with the ledger untouched
        let whole = pipeline::release(&req, &Silent).err().unwrap();
        assert_eq!(whole.to_string(), e.to_string());
        assert_eq!(read(&ledger), before, "{message}: the ledger changed");
        assert!(
            !d.join("lib.csv").exists(),
            "{message}: an output was written"
        );
    }
    // the same request with a good budget is charged once
    let ok = charged(request(&d, "laplace", epsilon(1.0)));
    assert!(matches!(
        pipeline::release(&ok, &Silent).unwrap(),
        Outcome::Released(_)
    ));
    assert_ne!(read(&ledger), before, "the ledger recorded nothing");
}

#[test]
fn a_dry_run_reads_no_data_and_records_nothing() {
    let d = fresh_dir("pipeline", "dry-run");
    let ledger = d.join("L.json");
    ledger_file::init(
        &ledger,
        PrivacyLoss::Pure { epsilon: 2.0 },
        Neighbouring::ReplaceOne,
        &[],
    )
    .unwrap();
    let before = read(&ledger);
    let mut req = request(&d, "laplace", epsilon(1.0));
    // a file whose rows the loader would refuse: a dry run reads its header only (issue #26:
    // the names must fit the schema) and never a value (the ledger names the file by its
    // canonical path only)
    std::fs::write(d.join("bad.csv"), "b,a\nnot,codes\n").unwrap();
    req.data = DataSpec {
        data: Some(d.join("bad.csv")),
        domain: Some(d.join("domain.json")),
        ..DataSpec::default()
    };
    std::fs::write(d.join("domain.json"), r#"{"a": 2, "b": 3}"#).unwrap();
    req.workload = "all-2way".into();
    req.dry_run = true;
    req.ledger = Some(LedgerTarget {
        path: ledger.clone(),
        dataset: None,
        data_key: None,
    });
    match pipeline::release(&req, &Silent).unwrap() {
        Outcome::DryRun {
            plan,
            ledger_dataset,
        } => {
            assert_eq!(plan.source(), SourceKind::Stream);
            assert_eq!(plan.access(), &dp_mechanisms::DataAccess::WorkloadCounts);
            assert_eq!(plan.workload().num_queries(), 6);
            assert!(ledger_dataset.is_some());
        }
        _ => panic!("not a central dry run"),
    }
    assert_eq!(read(&ledger), before);
    assert!(!d.join("lib.csv").exists());
    // a header that does not fit the schema is refused by the dry run, nothing recorded
    std::fs::write(d.join("bad.csv"), "x,y\n0,1\n").unwrap();
    let e = match pipeline::release(&req, &Silent) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("a header without the schema's columns passed the dry run"),
    };
    assert!(e.contains("bad.csv"), "{e}");
    assert_eq!(read(&ledger), before);
    // a mechanism with a counting plan (issue #25) streams a `--data` file too: the source
    // counts the plan's table, the full table over the attributes the workload touches
    std::fs::write(d.join("bad.csv"), "a,b\n0,1\n").unwrap();
    req.mechanism = "coarse-projection".into();
    req.budget = rho(0.5);
    req.ledger = None;
    req.workload = "all-1way".into();
    match pipeline::release(&req, &Silent).unwrap() {
        Outcome::DryRun { plan, .. } => {
            assert_eq!(plan.source(), SourceKind::Stream);
            let dp_mechanisms::DataAccess::Plan(counting) = plan.access() else {
                panic!("no counting plan: {:?}", plan.access());
            };
            assert_eq!(counting.tables().len(), 1);
            assert_eq!(counting.tables().marginals()[0].attrs(), &[0, 1]);
            assert_eq!(counting.tables().num_queries(), 6);
        }
        _ => panic!("not a central dry run"),
    }
    assert_eq!(read(&ledger), before);
}

#[test]
fn a_local_release_takes_the_same_pipeline_and_equals_the_cli() {
    let d = fresh_dir("pipeline", "local");
    let mut req = request(&d, "local-projection", epsilon(2.0));
    req.outputs.report = None;
    // one validation for both models: the entry's model chooses the plan, and a local
    // release makes no synthetic records
    match pipeline::validate(&req, &Silent).unwrap() {
        Validated::Local(plan) => assert!(plan.guarantee().starts_with("local-projection")),
        Validated::Central(_) => panic!("local-projection validated as a central release"),
    }
    let central = request(&d, "mwem", epsilon(1.0));
    match pipeline::validate(&central, &Silent).unwrap() {
        Validated::Central(plan) => assert_eq!(plan.mechanism().name(), "mwem"),
        Validated::Local(_) => panic!("mwem validated as a local release"),
    }
    assert!(
        pipeline::validate(&central, &Silent)
            .unwrap()
            .produces_synthetic()
    );
    assert!(
        !pipeline::validate(&req, &Silent)
            .unwrap()
            .produces_synthetic()
    );
    let released = match pipeline::release(&req, &Silent).unwrap() {
        Outcome::LocalReleased { plan, released } => {
            assert_eq!(
                plan.guarantee(),
                "local-projection: local ε-DP with ε = 2 (any two inputs of one client)"
            );
            released
        }
        _ => panic!("not a local release"),
    };
    assert!(released.clients > 0);
    let out = d.join("cli.csv");
    let o = run(&[
        "release",
        "--dataset",
        "nltcs",
        "--workload",
        "random-2way:6",
        "--workload-seed",
        "3",
        "--mechanism",
        "local-projection",
        "--epsilon",
        "2",
        "--seed",
        "11",
        "--quiet",
        "--out",
        s(&out),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(read(&d.join("lib.csv")), read(&out));
    // the central options are refused before anything is read
    let mut charged = request(&d, "local-projection", epsilon(2.0));
    charged.ledger = Some(LedgerTarget {
        path: d.join("L.json"),
        dataset: None,
        data_key: None,
    });
    let e = pipeline::release(&charged, &Silent)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("without --ledger"), "{e}");
}

/// Every catalogue entry, looked up once by `pipeline::release`, states its privacy model in
/// its certificate before anything is read: a central entry the relation it runs under (each
/// relation it lists, given with `--neighbouring`), a local entry the local model with its ε
/// (dry runs: no data read, nothing written).
#[test]
fn every_entry_states_its_model_in_its_certificate() {
    let d = fresh_dir("pipeline", "models");
    let budgets = [
        epsilon(1.0),
        BudgetArgs {
            epsilon: Some(1.0),
            delta: Some(1e-9),
            rho: None,
        },
        rho(0.5),
    ];
    let mut locals = 0;
    for spec in dp_bench::catalogue::MECHANISMS {
        let name = spec.name;
        let budget = *budgets
            .iter()
            .find(|b| b.loss_for(spec).is_ok())
            .unwrap_or_else(|| panic!("{name}: no budget"));
        let mut req = request(&d, name, budget);
        req.dry_run = true;
        if spec.relations().is_empty() {
            let certificate = match pipeline::release(&req, &Silent).unwrap() {
                Outcome::LocalDryRun(plan) => plan.certificate(),
                _ => panic!("{name}: not a local dry run"),
            };
            assert_eq!(
                certificate.model,
                dp_mechanisms::PrivacyModel::Local,
                "{name}"
            );
            assert_eq!(
                certificate.loss,
                PrivacyLoss::Pure { epsilon: 1.0 },
                "{name}"
            );
            assert_eq!(certificate.mechanism, name);
            locals += 1;
            continue;
        }
        for &relation in spec.relations() {
            req.neighbouring = Some(relation);
            let certificate = match pipeline::release(&req, &Silent) {
                Ok(Outcome::DryRun { plan, .. }) => plan.mechanism().certificate(),
                Ok(_) => panic!("{name}: not a central dry run"),
                Err(e) => panic!("{name} under {relation}: {e}"),
            };
            assert_eq!(
                certificate.model,
                dp_mechanisms::PrivacyModel::Central {
                    neighbouring: relation
                },
                "{name}"
            );
            assert_eq!(certificate.mechanism, name);
            assert!(
                certificate
                    .statement()
                    .ends_with(&format!("{relation} neighbours")),
                "{name}: {}",
                certificate.statement()
            );
        }
    }
    assert_eq!(locals, 3);
    assert!(!d.join("lib.csv").exists(), "a dry run wrote the answers");
}
