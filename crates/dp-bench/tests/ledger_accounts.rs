//! The ledger's datasets are named by the curator, not keyed by the data's path (issue #23
//! §6), through the real `dpqr` binary: after a refusal, the same data renamed, gzip
//! compressed or converted to Parquet is refused too (never a fresh budget); a ledger that
//! cannot place a release refuses it before reading anything; refusals by the ledger exit
//! with status 3 and say whether the spend is over budget or of a kind the ledger cannot
//! charge, stating total budget, spent and remaining, and naming the spend by its label; a
//! missing ledger says how to create one; old path-keyed ledgers keep working; a file
//! charged to one dataset is refused for every other (never a second budget under a second
//! name).

mod common;
use common::{fresh_dir, run, s, stderr, stdout, text};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Output;

const DOMAIN: &str = r#"{"a": 3, "b": 2}"#;

/// A directory holding `x.csv` (200 rows) and its domain `d.json`.
fn setup(name: &str) -> PathBuf {
    let d = fresh_dir("ledger-accounts", name);
    std::fs::write(d.join("d.json"), DOMAIN).unwrap();
    std::fs::write(d.join("x.csv"), csv_text()).unwrap();
    d
}

fn csv_text() -> String {
    let mut csv = String::from("a,b\n");
    for i in 0..200 {
        csv.push_str(&format!("{},{}\n", i % 3, i % 2));
    }
    csv
}

/// `x.csv` gzip-compressed as `name` (flate2, independent of `dpqr`).
fn write_gzip(d: &Path, name: &str) -> PathBuf {
    let p = d.join(name);
    let mut gz = flate2::write::GzEncoder::new(
        std::fs::File::create(&p).unwrap(),
        flate2::Compression::default(),
    );
    gz.write_all(csv_text().as_bytes()).unwrap();
    gz.finish().unwrap();
    p
}

/// `x.csv` converted to Parquet as `x.parquet`.
#[cfg(feature = "parquet")]
fn write_parquet(d: &Path) -> PathBuf {
    let p = d.join("x.parquet");
    let data = dp_queries::Dataset::load_csv(&d.join("x.csv"), &d.join("d.json")).unwrap();
    let f = std::fs::File::create(&p).unwrap();
    let mut w = dp_queries::ParquetCodesWriter::new(f, data.domain(), 64).unwrap();
    w.write(&data).unwrap();
    w.finish().unwrap();
    p
}

fn init(ledger: &Path, args: &[&str]) {
    let mut a = vec!["ledger", "init", s(ledger)];
    a.extend_from_slice(args);
    let o = run(&a);
    assert!(o.status.success(), "{}", text(&o));
}

/// `dpqr release` of all 2-way marginals of `data` with `extra` (budget, ledger flags).
fn release(d: &Path, data: &Path, out: &str, extra: &[&str]) -> Output {
    let (out, domain) = (d.join(out), d.join("d.json"));
    let mut a = vec![
        "release",
        "--data",
        s(data),
        "--domain",
        s(&domain),
        "--workload",
        "all-2way",
        "--quiet",
        "--seed",
        "1",
        "--out",
        s(&out),
    ];
    a.extend_from_slice(extra);
    run(&a)
}

/// Spends recorded per dataset (read as JSON, without the lock).
fn spends(ledger: &Path) -> Vec<(String, usize)> {
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(ledger).unwrap()).unwrap();
    json["datasets"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v["spends"].as_array().unwrap().len()))
        .collect()
}

fn show(ledger: &Path) -> String {
    let o = run(&["ledger", "show", s(ledger)]);
    assert!(o.status.success(), "{}", text(&o));
    stdout(&o)
}

/// A laplace release of ε = 0.6, its relation explicit (the ledgers here are replace-one).
const LAPLACE: [&str; 6] = [
    "--mechanism",
    "laplace",
    "--epsilon",
    "0.6",
    "--neighbouring",
    "replace-one",
];

#[test]
fn renamed_recompressed_or_converted_data_gets_no_fresh_budget() {
    let d = setup("rename");
    let l = d.join("ledger.json");
    init(&l, &["--epsilon", "1", "--dataset", "passengers"]);
    let with_ledger = |data: &Path, out: &str| {
        let mut a = LAPLACE.to_vec();
        a.extend(["--ledger", s(&l)]);
        release(&d, data, out, &a)
    };
    let o = with_ledger(&d.join("x.csv"), "a1.csv");
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        stdout(&o).contains("for dataset 'passengers'"),
        "{}",
        text(&o)
    );
    // 0.6 + 0.6 > 1: refused, whatever the file is called or how it is stored
    let renamed = d.join("renamed.csv");
    std::fs::copy(d.join("x.csv"), &renamed).unwrap();
    let gz = write_gzip(&d, "x.csv.gz");
    #[allow(unused_mut)] // without the parquet feature, no Parquet copy
    let mut copies = vec![d.join("x.csv"), gz, renamed];
    #[cfg(feature = "parquet")]
    copies.push(write_parquet(&d));
    for data in copies {
        let o = with_ledger(&data, "a2.csv");
        assert_eq!(o.status.code(), Some(3), "{}: {}", data.display(), text(&o));
        let err = stderr(&o);
        assert!(
            err.contains("dataset 'passengers'") && err.contains("over budget"),
            "{err}"
        );
        assert!(!d.join("a2.csv").exists());
    }
    assert_eq!(spends(&l), vec![("passengers".to_string(), 1)]);
}

#[test]
fn every_copy_of_the_data_is_charged_to_the_same_dataset() {
    let d = setup("same");
    let l = d.join("ledger.json");
    // no --dataset: one dataset, `default`, takes every release
    init(&l, &["--epsilon", "2"]);
    let gz = write_gzip(&d, "x.csv.gz");
    let renamed = d.join("copy.csv");
    std::fs::copy(d.join("x.csv"), &renamed).unwrap();
    for (i, data) in [d.join("x.csv"), gz.clone(), renamed.clone()]
        .iter()
        .enumerate()
    {
        let o = release(
            &d,
            data,
            &format!("a{i}.csv"),
            &[
                "--mechanism",
                "laplace",
                "--neighbouring",
                "replace-one",
                "--epsilon",
                "0.6",
                "--ledger",
                s(&l),
            ],
        );
        assert!(o.status.success(), "{}", text(&o));
    }
    // three spends of 0.6 in one dataset (1.8 of 2), not three fresh budgets
    assert_eq!(spends(&l), vec![("default".to_string(), 3)]);
    let text = show(&l);
    assert!(text.contains("total ε = 1.8 "), "{text}");
    // ledger show lists the files the dataset was used with and each spend's label
    for p in [d.join("x.csv"), gz, renamed] {
        let canonical = std::fs::canonicalize(p).unwrap();
        assert!(
            text.contains(&format!("file:{}", canonical.display())),
            "{text}"
        );
    }
    assert_eq!(
        text.matches("(laplace on all-2way (6 queries))").count(),
        3,
        "{text}"
    );
    assert!(!text.contains("unlabelled"), "{text}");
}

#[test]
fn a_ledger_that_cannot_place_the_release_refuses_it_before_reading() {
    let d = setup("place");
    let l = d.join("ledger.json");
    init(
        &l,
        &[
            "--epsilon",
            "5",
            "--dataset",
            "adult",
            "--dataset",
            "passengers",
        ],
    );
    // the data file is malformed: if it were read first, the error would be about it
    std::fs::write(d.join("bad.csv"), "a,b\n9,9\n").unwrap();
    let bad = d.join("bad.csv");
    let ledger_args = |extra: &[&'static str]| {
        let mut a = LAPLACE.to_vec();
        a.extend(["--ledger", s(&l)]);
        a.extend_from_slice(extra);
        a
    };
    // several datasets, none named
    let o = release(&d, &bad, "o.csv", &ledger_args(&[]));
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = stderr(&o);
    assert!(
        err.contains("several datasets ('adult', 'passengers')")
            && err.contains("--ledger-dataset"),
        "{err}"
    );
    // a name the ledger does not hold is refused with the list, never opened
    let o = release(
        &d,
        &bad,
        "o.csv",
        &ledger_args(&["--ledger-dataset", "bad.csv"]),
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = stderr(&o);
    assert!(
        err.contains("no dataset 'bad.csv'")
            && err.contains("'adult', 'passengers'")
            && err.contains("dpqr ledger add-dataset"),
        "{err}"
    );
    assert!(!d.join("o.csv").exists());
    assert_eq!(
        spends(&l),
        vec![("adult".to_string(), 0), ("passengers".to_string(), 0)]
    );
    // named: charged to that dataset only
    let o = release(
        &d,
        &d.join("x.csv"),
        "o.csv",
        &ledger_args(&["--ledger-dataset", "passengers"]),
    );
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        spends(&l),
        vec![("adult".to_string(), 0), ("passengers".to_string(), 1)]
    );
    // --ledger-dataset needs --ledger
    let o = release(
        &d,
        &d.join("x.csv"),
        "p.csv",
        &[
            "--mechanism",
            "laplace",
            "--neighbouring",
            "replace-one",
            "--epsilon",
            "1",
            "--ledger-dataset",
            "adult",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(!d.join("p.csv").exists());
}

#[test]
fn a_file_charged_to_one_dataset_is_refused_for_another() {
    let d = setup("two-names");
    let l = d.join("ledger.json");
    init(
        &l,
        &[
            "--epsilon",
            "1",
            "--dataset",
            "passengers",
            "--dataset",
            "crew",
        ],
    );
    let to = |dataset: &'static str, out: &str| {
        let mut a = LAPLACE.to_vec();
        a.extend(["--ledger", s(&l), "--ledger-dataset", dataset]);
        release(&d, &d.join("x.csv"), out, &a)
    };
    let o = to("passengers", "a1.csv");
    assert!(o.status.success(), "{}", text(&o));
    // the same file under the other name would have a second budget: refused, status 2,
    // naming the file and both datasets, nothing charged or written
    let o = to("crew", "a2.csv");
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = stderr(&o);
    let file = format!(
        "file:{}",
        std::fs::canonicalize(d.join("x.csv")).unwrap().display()
    );
    for want in [
        file.as_str(),
        "already charged to dataset 'passengers'",
        "to dataset 'crew' as well",
        "nothing is charged",
        "--ledger-dataset 'passengers'",
    ] {
        assert!(err.contains(want), "{want}: {err}");
    }
    assert!(!d.join("a2.csv").exists());
    assert_eq!(
        spends(&l),
        vec![("crew".to_string(), 0), ("passengers".to_string(), 1)]
    );
    // a dry run says so too, before anything is read
    let mut a = LAPLACE.to_vec();
    a.extend(["--ledger", s(&l), "--ledger-dataset", "crew", "--dry-run"]);
    let o = release(&d, &d.join("x.csv"), "a3.csv", &a);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(stderr(&o).contains("already charged to dataset 'passengers'"));
    // other data is charged to the other dataset
    let crew = d.join("crew.csv");
    std::fs::write(&crew, "a,b\n0,1\n1,0\n2,1\n").unwrap();
    let mut a = LAPLACE.to_vec();
    a.extend(["--ledger", s(&l), "--ledger-dataset", "crew"]);
    let o = release(&d, &crew, "a4.csv", &a);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        spends(&l),
        vec![("crew".to_string(), 1), ("passengers".to_string(), 1)]
    );
}

#[test]
fn add_dataset_adds_a_named_budget_and_refuses_bad_names() {
    let d = setup("add");
    let l = d.join("ledger.json");
    init(&l, &["--rho", "1", "--dataset", "a"]);
    let o = run(&["ledger", "add-dataset", s(&l), "b"]);
    assert!(o.status.success(), "{}", text(&o));
    for bad in ["a", "", " b", "x\ny"] {
        let o = run(&["ledger", "add-dataset", s(&l), bad]);
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {}", text(&o));
    }
    // a repeated name at init is refused too, and nothing is created
    let o = run(&[
        "ledger",
        "init",
        s(&d.join("l2.json")),
        "--rho",
        "1",
        "--dataset",
        "a",
        "--dataset",
        "a",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(!d.join("l2.json").exists());
    let text = show(&l);
    assert!(
        text.contains("dataset 'a'") && text.contains("dataset 'b'"),
        "{text}"
    );
    assert_eq!(spends(&l), vec![("a".to_string(), 0), ("b".to_string(), 0)]);
}

#[test]
fn a_refusal_is_status_3_and_says_why_in_plain_words() {
    let d = setup("why");
    let l = d.join("ledger.json");
    init(&l, &["--epsilon", "1"]);
    let o = release(
        &d,
        &d.join("x.csv"),
        "a.csv",
        &[
            "--mechanism",
            "laplace",
            "--neighbouring",
            "replace-one",
            "--epsilon",
            "0.75",
            "--ledger",
            s(&l),
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    // over budget: total, spent and remaining stated as such; the spend named by its label
    let o = release(
        &d,
        &d.join("x.csv"),
        "b.csv",
        &[
            "--mechanism",
            "laplace",
            "--neighbouring",
            "replace-one",
            "--epsilon",
            "0.5",
            "--ledger",
            s(&l),
        ],
    );
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let err = stderr(&o);
    for want in [
        "over budget",
        "nothing charged",
        "'laplace on all-2way (6 queries)'",
        "total budget ε = 1 ",
        "spent ε = 0.75 ",
        "remaining ε = 0.25 ",
    ] {
        assert!(err.contains(want), "{want}: {err}");
    }
    assert!(!err.contains("unlabelled"), "{err}");
    // a pure ε-DP ledger cannot charge a ρ-zCDP spend: also 3 (refused by the ledger,
    // nothing charged), told apart from over budget
    let o = release(
        &d,
        &d.join("x.csv"),
        "c.csv",
        &[
            "--mechanism",
            "gaussian",
            "--rho",
            "0.01",
            "--ledger",
            s(&l),
        ],
    );
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let err = stderr(&o);
    assert!(
        err.contains("this kind of guarantee cannot be charged in this ledger")
            && err.contains("a pure ε-DP budget cannot account for a ρ-zCDP spend")
            && !err.contains("over budget"),
        "{err}"
    );
    assert_eq!(spends(&l), vec![("default".to_string(), 1)]);
    assert!(!d.join("b.csv").exists() && !d.join("c.csv").exists());
}

#[test]
fn a_missing_ledger_says_how_to_create_one() {
    let d = setup("missing");
    let l = d.join("nope.json");
    let o = release(
        &d,
        &d.join("x.csv"),
        "a.csv",
        &[
            "--mechanism",
            "laplace",
            "--neighbouring",
            "replace-one",
            "--epsilon",
            "0.5",
            "--ledger",
            s(&l),
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let want = format!(
        "no ledger at {0}; create one with `dpqr ledger init {0} --epsilon",
        l.display()
    );
    assert!(stderr(&o).contains(&want), "{}", text(&o));
    let o = run(&["ledger", "show", s(&l)]);
    assert!(stderr(&o).contains(&want), "{}", text(&o));
    // nothing created, not even the lock file
    assert!(!l.exists() && !d.join("nope.json.lock").exists());
    assert!(!d.join("a.csv").exists());
}

#[test]
fn a_path_keyed_ledger_keeps_working_with_its_keys_as_names() {
    let d = setup("v2");
    let l = d.join("ledger.json");
    let key = format!(
        "file:{}",
        std::fs::canonicalize(d.join("x.csv")).unwrap().display()
    );
    let account = |eps: f64| {
        serde_json::json!({
            "budget": {"Pure": {"epsilon": 1.0}},
            "neighbouring": "ReplaceOne",
            "spends": [{"label": "old", "loss": {"Pure": {"epsilon": eps}},
                        "neighbouring": "ReplaceOne"}]
        })
    };
    let v2 = serde_json::json!({
        "format": "dpqr-ledger-2",
        "budget": {"Pure": {"epsilon": 1.0}},
        "neighbouring": "ReplaceOne",
        "datasets": {key.clone(): account(0.75)}
    });
    std::fs::write(&l, v2.to_string()).unwrap();
    // its one dataset takes the release of a gzip copy: 0.75 + 0.5 > 1, refused
    let gz = write_gzip(&d, "x.csv.gz");
    let spend = [
        "--mechanism",
        "laplace",
        "--neighbouring",
        "replace-one",
        "--epsilon",
        "0.5",
        "--ledger",
        s(&l),
    ];
    let o = release(&d, &gz, "a.csv", &spend);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert_eq!(spends(&l), vec![(key.clone(), 1)]);
    // two old datasets: a release names one by its old key
    let v2 = serde_json::json!({
        "format": "dpqr-ledger-2",
        "budget": {"Pure": {"epsilon": 1.0}},
        "neighbouring": "ReplaceOne",
        "datasets": {key.clone(): account(0.25), "bundled:adult": account(0.25)}
    });
    std::fs::write(&l, v2.to_string()).unwrap();
    let o = release(&d, &gz, "a.csv", &spend);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(stderr(&o).contains(&format!("'{key}'")), "{}", text(&o));
    let mut named = spend.to_vec();
    named.extend(["--ledger-dataset", &key]);
    let o = release(&d, &gz, "a.csv", &named);
    assert!(o.status.success(), "{}", text(&o));
    // written back in the current format
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&l).unwrap()).unwrap();
    assert_eq!(json["format"], "dpqr-ledger-3");
    assert_eq!(spends(&l), vec![("bundled:adult".to_string(), 1), (key, 2)]);
}
