//! Workloads of every query class through `dpqr release` (issue #11 §1): a JSON workload
//! with a `"class"` is parsed from the public domain before any data is read, released by
//! the mechanisms that support its class, and refused — by name, with the mechanisms that
//! do support it — by the others, before anything is read, recorded or written.

mod common;
use common::{fresh_dir, run, s, stdout, text};
use std::path::PathBuf;

/// `d.csv` (200 records over a: 3, b: 2, c: 2), its domain and the workload files.
fn fixture(name: &str) -> PathBuf {
    let d = fresh_dir("workloads", name);
    std::fs::write(d.join("d.json"), r#"{"a": 3, "b": 2, "c": 2}"#).unwrap();
    let mut csv = String::from("a,b,c\n");
    for i in 0..200 {
        csv.push_str(&format!("{},{},{}\n", i % 3, (i / 3) % 2, (i / 7) % 2));
    }
    std::fs::write(d.join("d.csv"), csv).unwrap();
    std::fs::write(
        d.join("conj.json"),
        r#"{"class": "conjunctions", "queries": [{"a": 0, "b": 1}, {"c": 1}, {"a": 2, "b": 0, "c": 0}]}"#,
    )
    .unwrap();
    std::fs::write(
        d.join("disj.json"),
        r#"{"class": "disjunctions", "queries": [{"a": 0, "b": 1}]}"#,
    )
    .unwrap();
    std::fs::write(
        d.join("linear.json"),
        r#"{"class": "linear", "attributes": ["b", "c"], "queries": [[1, 0, 0, 1], [0, 2, 2, 0]]}"#,
    )
    .unwrap();
    d
}

fn release(d: &std::path::Path, extra: &[&str]) -> std::process::Output {
    let data = d.join("d.csv");
    let domain = d.join("d.json");
    let mut args = vec![
        "release",
        "--data",
        s(&data),
        "--domain",
        s(&domain),
        "--quiet",
    ];
    args.extend_from_slice(extra);
    run(&args)
}

/// The true fraction of records satisfying `pred` in the fixture.
fn truth(pred: impl Fn(u32, u32, u32) -> bool) -> f64 {
    (0..200u32)
        .filter(|&i| pred(i % 3, (i / 3) % 2, (i / 7) % 2))
        .count() as f64
        / 200.0
}

#[test]
fn conjunctions_are_released_by_the_baselines_with_one_row_per_query() {
    let d = fixture("conj");
    let out = d.join("a.csv");
    let report = d.join("r.json");
    let o = release(
        &d,
        &[
            "--workload",
            s(&d.join("conj.json")),
            "--mechanism",
            "laplace",
            "--epsilon",
            "25",
            // replace-one: no extra total query (add/remove, the default, measures one)
            "--neighbouring",
            "replace-one",
            "--seed",
            "3",
            "--out",
            s(&out),
            "--report",
            s(&report),
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        stdout(&o).contains("3 conjunctions queries"),
        "{}",
        text(&o)
    );
    let answers = std::fs::read_to_string(&out).unwrap();
    let rows: Vec<&str> = answers.lines().collect();
    assert_eq!(rows[0], "query,class,description,answer");
    assert_eq!(rows.len(), 4, "{answers}");
    assert!(
        rows[1].starts_with("0,conjunctions,a=0 & b=1,"),
        "{answers}"
    );
    // ε = 25 on 3 queries (Δ₁ = 3 under replace-one): scale 3/25, so each count is within a
    // few units of the truth with overwhelming probability; the fixture's n is 200
    let wants = [
        truth(|a, b, _| a == 0 && b == 1),
        truth(|_, _, c| c == 1),
        truth(|a, b, c| a == 2 && b == 0 && c == 0),
    ];
    for (row, want) in rows[1..].iter().zip(wants) {
        let got: f64 = row.rsplit(',').next().unwrap().parse().unwrap();
        assert!((got - want).abs() <= 5.0 / 200.0, "{row} vs {want}");
    }
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(r["class"], "conjunctions");
    assert_eq!(r["queries"], 3);
    // the noise the release reports is calibrated to Δ₁ = 3 (three 0/1 queries)
    assert_eq!(r["diagnostics"]["noise"]["sensitivity"], 3.0);
}

#[test]
fn a_linear_workload_under_add_remove_measures_the_total() {
    let d = fixture("linear");
    let out = d.join("a.csv");
    let o = release(
        &d,
        &[
            "--workload",
            s(&d.join("linear.json")),
            "--mechanism",
            "gaussian",
            "--rho",
            "2",
            "--neighbouring",
            "add-remove",
            "--out",
            s(&out),
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        stdout(&o).contains("total count was measured"),
        "{}",
        text(&o)
    );
    // sensitivity: columns (1,0), (0,2), (0,2), (1,0) → ‖w(x)‖₂² ≤ 4, plus 1 for the total
    assert!(stdout(&o).contains("sensitivity 2.2361"), "{}", text(&o));
    assert_eq!(std::fs::read_to_string(&out).unwrap().lines().count(), 3);
}

#[test]
fn a_class_a_mechanism_does_not_release_is_refused_before_anything() {
    let d = fixture("refused");
    let out = d.join("a.csv");
    let ledger = d.join("ledger.json");
    let o = run(&["ledger", "init", s(&ledger), "--epsilon", "5"]);
    assert!(o.status.success(), "{}", text(&o));
    let before = std::fs::read_to_string(&ledger).unwrap();
    for (workload, mechanism, budget, class) in [
        ("conj.json", "mwem", ["--epsilon", "1"], "conjunctions"),
        ("disj.json", "dualquery", ["--epsilon", "1"], "disjunctions"),
        ("linear.json", "dualquery", ["--epsilon", "1"], "linear"),
    ] {
        let o = release(
            &d,
            &[
                "--workload",
                s(&d.join(workload)),
                "--mechanism",
                mechanism,
                budget[0],
                budget[1],
                "--ledger",
                s(&ledger),
                "--out",
                s(&out),
            ],
        );
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(&format!("this workload is of class {class}"))
                && err.contains(&format!(
                    "mechanisms that release {class} workloads: gaussian, laplace"
                )),
            "{err}"
        );
        assert!(!out.exists());
        assert_eq!(std::fs::read_to_string(&ledger).unwrap(), before);
    }
}

#[test]
fn bad_workload_files_are_refused_before_the_data_is_read() {
    let d = fixture("bad");
    std::fs::write(
        d.join("bad.json"),
        r#"{"class": "conjunctions", "queries": [{"zz": 1}]}"#,
    )
    .unwrap();
    // the data file does not exist: the workload error comes first
    let o = run(&[
        "release",
        "--data",
        s(&d.join("missing.csv")),
        "--domain",
        s(&d.join("d.json")),
        "--workload",
        s(&d.join("bad.json")),
        "--mechanism",
        "laplace",
        "--epsilon",
        "1",
        "--out",
        s(&d.join("a.csv")),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("zz"),
        "{}",
        text(&o)
    );
}

#[test]
fn eval_scores_answers_of_another_class_beside_the_baselines() {
    let d = fixture("eval");
    let out = d.join("a.csv");
    let conj = d.join("conj.json");
    let o = release(
        &d,
        &[
            "--workload",
            s(&conj),
            "--mechanism",
            "laplace",
            "--epsilon",
            "20",
            "--seed",
            "1",
            "--out",
            s(&out),
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    let o = run(&[
        "eval",
        "--data",
        s(&d.join("d.csv")),
        "--domain",
        s(&d.join("d.json")),
        "--answers",
        s(&out),
        "--workload",
        s(&conj),
        "--json",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v["class"], "conjunctions");
    // the released answers, read back, against the truth computed here
    let released: Vec<f64> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.rsplit(',').next().unwrap().parse().unwrap())
        .collect();
    let truths = [
        truth(|a, b, _| a == 0 && b == 1),
        truth(|_, _, c| c == 1),
        truth(|a, b, c| a == 2 && b == 0 && c == 0),
    ];
    let mean = |e: &[f64]| e.iter().sum::<f64>() / e.len() as f64;
    let mae: Vec<f64> = released
        .iter()
        .zip(truths)
        .map(|(r, t)| (r - t).abs())
        .collect();
    assert!(
        (v["mean_abs"].as_f64().unwrap() - mean(&mae)).abs() < 1e-12,
        "{v}"
    );
    // baselines by hand: all zeros errs by the truth; the uniform distribution over the
    // touched attributes (a: 3, b: 2, c: 2) answers 1/6, 1/2, 1/12
    let zeros = v["baselines"]["all_zeros"]["mean_abs"].as_f64().unwrap();
    assert!((zeros - mean(&truths)).abs() < 1e-12, "{v}");
    let uniform = [1.0 / 6.0, 0.5, 1.0 / 12.0];
    let u: Vec<f64> = uniform
        .iter()
        .zip(truths)
        .map(|(u, t)| (u - t).abs())
        .collect();
    let got = v["baselines"]["uniform"]["mean_abs"].as_f64().unwrap();
    assert!((got - mean(&u)).abs() < 1e-12, "{got} vs {}", mean(&u));
    // an answers file of another workload is refused
    let o = run(&[
        "eval",
        "--data",
        s(&d.join("d.csv")),
        "--domain",
        s(&d.join("d.json")),
        "--answers",
        s(&out),
        "--workload",
        s(&d.join("disj.json")),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

#[test]
fn stream_releases_the_same_answers_from_counts_in_bounded_memory() {
    let d = fixture("stream");
    let gz = d.join("d.csv.gz");
    {
        use std::io::Write;
        let mut e = flate2::write::GzEncoder::new(
            std::fs::File::create(&gz).unwrap(),
            flate2::Compression::default(),
        );
        e.write_all(&std::fs::read(d.join("d.csv")).unwrap())
            .unwrap();
        e.finish().unwrap();
    }
    let base = |out: &std::path::Path| {
        vec![
            "--workload".to_string(),
            "all-2way".into(),
            "--mechanism".into(),
            "gaussian".into(),
            "--rho".into(),
            "1".into(),
            "--seed".into(),
            "4".into(),
            "--out".into(),
            s(out).into(),
        ]
    };
    let (a, b, c) = (d.join("a.csv"), d.join("b.csv"), d.join("c.csv"));
    let run_with = |extra: Vec<String>| {
        let v: Vec<&str> = extra.iter().map(String::as_str).collect();
        release(&d, &v)
    };
    let o = run_with(base(&a));
    assert!(o.status.success(), "{}", text(&o));
    let mut streamed = base(&b);
    streamed.extend(["--stream".into(), "--batch-rows".into(), "7".into()]);
    let o = run_with(streamed);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    // a gzip file streams the same
    let mut gz_args = vec![
        "release".to_string(),
        "--data".into(),
        s(&gz).into(),
        "--domain".into(),
        s(&d.join("d.json")).into(),
        "--quiet".into(),
        "--stream".into(),
    ];
    gz_args.extend(base(&c));
    let v: Vec<&str> = gz_args.iter().map(String::as_str).collect();
    let o = run(&v);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&c).unwrap());
    // a `--data` file streams even without `--stream` for counts-only mechanisms; a bundled
    // table is loaded in memory unless `--stream` is given: the two paths give the same
    // answers for the same seed
    let bundled = |out: &std::path::Path, extra: &[&str]| {
        let mut v = vec![
            "release",
            "--dataset",
            "nltcs",
            "--quiet",
            "--workload",
            "random-3way:5",
            "--mechanism",
            "gaussian",
            "--rho",
            "1",
            "--seed",
            "9",
            "--out",
            s(out),
        ];
        v.extend_from_slice(extra);
        run(&v)
    };
    let (in_memory, streamed) = (d.join("nltcs-memory.csv"), d.join("nltcs-stream.csv"));
    let o = bundled(&in_memory, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let o = bundled(&streamed, &["--stream", "--batch-rows", "1000"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        std::fs::read(&in_memory).unwrap(),
        std::fs::read(&streamed).unwrap()
    );
    // and so does the same gzip file under a name without `.gz` (found by its magic bytes,
    // as the in-memory loader finds it)
    let unnamed = d.join("gzip-without-suffix.csv");
    std::fs::copy(&gz, &unnamed).unwrap();
    let c2 = d.join("c2.csv");
    let mut v = v.clone();
    let (data_at, out_at) = (
        v.iter().position(|a| *a == s(&gz)).unwrap(),
        v.iter().position(|a| *a == s(&c)).unwrap(),
    );
    v[data_at] = s(&unnamed);
    v[out_at] = s(&c2);
    let o = run(&v);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&c2).unwrap());
    // (a mechanism that needs the records is refused before anything is read or written:
    // polynomial on decision-list points, `cli_thresholds.rs`)
}

/// adaptive-projection reads only the workload's counts (issue #25): a bundled table loaded in
/// memory and the same table streamed (`--stream`, small batches) give the same answers and
/// the same synthetic records for the same seed, and the counts-only refusal no longer
/// applies to it.
#[test]
fn adaptive_projection_streams_the_same_release() {
    let d = fresh_dir("dpqr-adaptive-stream", "x");
    let go = |tag: &str, extra: &[&str]| {
        let (out, syn) = (
            d.join(format!("{tag}.csv")),
            d.join(format!("{tag}-syn.csv")),
        );
        let mut v = vec![
            "release",
            "--dataset",
            "nltcs",
            "--quiet",
            "--workload",
            "random-3way:6",
            "--mechanism",
            "adaptive-projection",
            "--rho",
            "0.5",
            "--seed",
            "5",
            "--out",
            s(&out),
            "--synthetic-out",
            s(&syn),
        ];
        v.extend_from_slice(extra);
        let o = run(&v);
        assert!(o.status.success(), "{tag}: {}", text(&o));
        (std::fs::read(&out).unwrap(), std::fs::read(&syn).unwrap())
    };
    let memory = go("memory", &[]);
    let streamed = go("stream", &["--stream", "--batch-rows", "777"]);
    assert_eq!(memory.0, streamed.0, "answers");
    assert_eq!(memory.1, streamed.1, "synthetic records");
    std::fs::remove_dir_all(&d).ok();
}

/// MWEM reads only the workload's counts (issue #25): over a few attributes of nltcs (run
/// over the 5 attributes the workload touches, a universe of 32 records), the table loaded
/// in memory, the same table streamed (`--stream`, small batches) and the same rows as a
/// `--data` file (streamed automatically) give the same answers and the same synthetic
/// records for the same seed.
#[test]
fn mwem_streams_the_same_release() {
    let d = fresh_dir("dpqr-mwem-stream", "x");
    let workload = d.join("w.json");
    std::fs::write(
        &workload,
        r#"{"class": "marginals", "marginals": [["bathing", "cooking"], ["traveling", "dressing", "cooking"], ["eating"]]}"#,
    )
    .unwrap();
    let nltcs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/nltcs");
    let (csv, domain) = (nltcs.join("nltcs.csv"), nltcs.join("nltcs-domain.json"));
    let go = |tag: &str, source: &[&str], extra: &[&str]| {
        let (out, syn) = (
            d.join(format!("{tag}.csv")),
            d.join(format!("{tag}-syn.csv")),
        );
        let mut v = vec!["release"];
        v.extend_from_slice(source);
        v.extend_from_slice(&[
            "--quiet",
            "--workload",
            s(&workload),
            "--mechanism",
            "mwem",
            "--epsilon",
            "1",
            "--rounds",
            "8",
            "--seed",
            "5",
            "--out",
            s(&out),
            "--synthetic-out",
            s(&syn),
        ]);
        v.extend_from_slice(extra);
        let o = run(&v);
        assert!(o.status.success(), "{tag}: {}", text(&o));
        (std::fs::read(&out).unwrap(), std::fs::read(&syn).unwrap())
    };
    let memory = go("memory", &["--dataset", "nltcs"], &[]);
    let streamed = go(
        "stream",
        &["--dataset", "nltcs"],
        &["--stream", "--batch-rows", "777"],
    );
    let file = go("file", &["--data", s(&csv), "--domain", s(&domain)], &[]);
    assert_eq!(memory.0, streamed.0, "answers");
    assert_eq!(memory.1, streamed.1, "synthetic records");
    assert_eq!(memory.0, file.0, "answers, --data file");
    assert_eq!(memory.1, file.1, "synthetic records, --data file");
    std::fs::remove_dir_all(&d).ok();
}

/// The cover-based mechanisms read the data only through their counting plan, the histogram
/// over the universe (issue #25 item 1): over the 5 attributes of nltcs a workload touches
/// (the plan's one table over them, lifted to the full domain and counted there), the table
/// loaded in memory, the same table streamed (`--stream`, small batches) and the same rows
/// as a `--data` file (streamed automatically) give the same answers — and for
/// coarse-projection the same synthetic records — for the same seed.
#[test]
fn cover_mechanisms_stream_their_counting_plan_with_the_same_release() {
    let d = fresh_dir("dpqr-cover-stream", "x");
    let workload = d.join("w.json");
    std::fs::write(
        &workload,
        r#"{"class": "marginals", "marginals": [["bathing", "cooking"], ["traveling", "dressing", "cooking"], ["eating"]]}"#,
    )
    .unwrap();
    let nltcs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/nltcs");
    let (csv, domain) = (nltcs.join("nltcs.csv"), nltcs.join("nltcs-domain.json"));
    for (mechanism, synthetic) in [("coarse-projection", true), ("chaining", false)] {
        let go = |tag: &str, source: &[&str], extra: &[&str]| {
            let (out, syn) = (
                d.join(format!("{mechanism}-{tag}.csv")),
                d.join(format!("{mechanism}-{tag}-syn.csv")),
            );
            let mut v = vec!["release"];
            v.extend_from_slice(source);
            v.extend_from_slice(&[
                "--quiet",
                "--workload",
                s(&workload),
                "--mechanism",
                mechanism,
                "--rho",
                "0.5",
                "--seed",
                "11",
                "--out",
                s(&out),
            ]);
            if synthetic {
                v.extend_from_slice(&["--synthetic-out", s(&syn)]);
            }
            v.extend_from_slice(extra);
            let o = run(&v);
            assert!(o.status.success(), "{mechanism} {tag}: {}", text(&o));
            (
                std::fs::read(&out).unwrap(),
                synthetic.then(|| std::fs::read(&syn).unwrap()),
            )
        };
        let memory = go("memory", &["--dataset", "nltcs"], &[]);
        let streamed = go(
            "stream",
            &["--dataset", "nltcs"],
            &["--stream", "--batch-rows", "777"],
        );
        let file = go("file", &["--data", s(&csv), "--domain", s(&domain)], &[]);
        assert!(!memory.0.is_empty());
        assert_eq!(memory, streamed, "{mechanism}: memory vs --stream");
        assert_eq!(memory, file, "{mechanism}: memory vs a --data file");
    }
    std::fs::remove_dir_all(&d).ok();
}

/// The records of the bundled nltcs table (`data/nltcs/nltcs.csv`), each as a map from the
/// attribute's name to its code: the brute-force side of the test below.
fn nltcs_records() -> Vec<std::collections::HashMap<String, u32>> {
    let csv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/nltcs/nltcs.csv");
    let text = std::fs::read_to_string(csv).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    lines
        .map(|line| {
            header
                .iter()
                .zip(line.split(','))
                .map(|(name, code)| (name.to_string(), code.parse().unwrap()))
                .collect()
        })
        .collect()
}

/// The workloads of every class but marginals over nltcs's attributes — conjunctions,
/// disjunctions and parities of the same literals, k-of-ℓ thresholds and explicit linear
/// queries with weights other than 0/1 — read through the binary from a bundled table in
/// memory, the same table streamed (`--stream`, small batches) and the same rows as a
/// `--data` file (streamed because the mechanism reads the workload's counts): the three
/// releases are the same bytes for the same seed, for every mechanism that releases the
/// class from its counts; and the baselines' answers are within their noise of a
/// brute-force count over the CSV's records, so the counts the stream hands them are the
/// workload's answers.
#[test]
fn every_query_class_streams_its_workload_counts_equal_to_a_brute_force_count() {
    use std::collections::HashMap;
    type Record = HashMap<String, u32>;
    let d = fresh_dir("dpqr-class-stream", "x");
    let nltcs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/nltcs");
    let (csv, domain) = (nltcs.join("nltcs.csv"), nltcs.join("nltcs-domain.json"));
    let records = nltcs_records();
    let n = records.len() as f64;
    let literals: [&[(&str, u32)]; 3] = [
        &[("bathing", 1), ("cooking", 0)],
        &[("eating", 1)],
        &[("traveling", 0), ("laundry", 1), ("telephoning", 1)],
    ];
    let holds = |r: &Record, q: &[(&str, u32)]| q.iter().filter(|(a, v)| r[*a] == *v).count();
    let as_json = |q: &[(&str, u32)]| {
        serde_json::Value::Object(
            q.iter()
                .map(|(a, v)| (a.to_string(), serde_json::json!(v)))
                .collect(),
        )
    };
    let literal_workload = |class: &str| {
        serde_json::json!({"class": class, "queries": literals.map(as_json)}).to_string()
    };
    // (class, workload JSON, the mechanisms that release it from counts, brute-force answers)
    let mut cases: Vec<(&str, String, Vec<&str>, Vec<f64>)> = Vec::new();
    let count = |f: &dyn Fn(&Record) -> f64| records.iter().map(f).sum::<f64>() / n;
    cases.push((
        "conjunctions",
        literal_workload("conjunctions"),
        vec!["gaussian", "laplace", "dualquery"],
        literals
            .iter()
            .map(|q| count(&|r| (holds(r, q) == q.len()) as u8 as f64))
            .collect(),
    ));
    cases.push((
        "disjunctions",
        literal_workload("disjunctions"),
        vec!["gaussian", "laplace"],
        literals
            .iter()
            .map(|q| count(&|r| (holds(r, q) >= 1) as u8 as f64))
            .collect(),
    ));
    cases.push((
        "parities",
        literal_workload("parities"),
        vec!["gaussian", "laplace", "dualquery"],
        literals
            .iter()
            .map(|q| count(&|r| (holds(r, q) % 2) as f64))
            .collect(),
    ));
    let thresholds: [(usize, &[(&str, u32)]); 2] = [
        (2, &[("bathing", 1), ("cooking", 1), ("eating", 0)]),
        (1, &[("laundry", 1), ("traveling", 1)]),
    ];
    cases.push((
        "thresholds",
        serde_json::json!({"class": "thresholds", "queries": thresholds
            .map(|(k, q)| serde_json::json!({"k": k, "literals": as_json(q)}))})
        .to_string(),
        vec!["gaussian", "laplace"],
        thresholds
            .iter()
            .map(|(k, q)| count(&|r| (holds(r, q) >= *k) as u8 as f64))
            .collect(),
    ));
    // explicit weights on the cells of the (bathing, cooking) table, cooking fastest
    let weights: [[i64; 4]; 3] = [[1, 0, 0, 1], [0, 2, -1, 0], [3, 1, 1, 0]];
    cases.push((
        "linear",
        serde_json::json!({"class": "linear", "attributes": ["bathing", "cooking"],
            "queries": weights})
        .to_string(),
        vec!["gaussian", "laplace"],
        weights
            .iter()
            .map(|w| count(&|r| w[(r["bathing"] * 2 + r["cooking"]) as usize] as f64))
            .collect(),
    ));
    for (class, json, mechanisms, truth) in &cases {
        let workload = d.join(format!("{class}.json"));
        std::fs::write(&workload, json).unwrap();
        for mechanism in mechanisms {
            let go = |tag: &str, source: &[&str], extra: &[&str]| {
                let out = d.join(format!("{class}-{mechanism}-{tag}.csv"));
                let mut v = source.to_vec();
                v.extend_from_slice(&[
                    "--quiet",
                    "--workload",
                    s(&workload),
                    "--mechanism",
                    mechanism,
                    "--seed",
                    "21",
                    "--out",
                    s(&out),
                ]);
                // the baselines under replace-one (n public, no total measured) with a
                // large budget; DualQuery with its own relation and a small one
                v.extend_from_slice(match *mechanism {
                    "gaussian" => &["--rho", "200", "--neighbouring", "replace-one"][..],
                    "laplace" => &["--epsilon", "25", "--neighbouring", "replace-one"][..],
                    _ => &["--epsilon", "1", "--rounds", "20"][..],
                });
                v.extend_from_slice(extra);
                let mut args = vec!["release"];
                args.extend(v);
                let o = run(&args);
                assert!(
                    o.status.success(),
                    "{class} {mechanism} {tag}: {}",
                    text(&o)
                );
                std::fs::read_to_string(&out).unwrap()
            };
            let memory = go("memory", &["--dataset", "nltcs"], &[]);
            let streamed = go(
                "stream",
                &["--dataset", "nltcs"],
                &["--stream", "--batch-rows", "1000"],
            );
            let file = go("file", &["--data", s(&csv), "--domain", s(&domain)], &[]);
            assert_eq!(memory, streamed, "{class} {mechanism}: memory vs --stream");
            assert_eq!(memory, file, "{class} {mechanism}: memory vs a --data file");
            let answers: Vec<f64> = memory
                .lines()
                .skip(1)
                .map(|row| row.rsplit(',').next().unwrap().parse().unwrap())
                .collect();
            assert_eq!(answers.len(), truth.len(), "{class} {mechanism}: {memory}");
            if *mechanism == "dualquery" {
                continue; // its answers come from synthetic records, not from noisy counts
            }
            // noise of a fraction of a count: under replace-one Δ₁ ≤ 5 and Δ₂ ≤ 3 here
            // (the linear queries' cells 0 and 1 differ by 1, 2 and 2), so the Laplace scale
            // is at most 5/25 and the Gaussian σ = Δ₂/√(2ρ) at most 3/20; 10 records is
            // more than 50 scales
            for (q, (got, want)) in answers.iter().zip(truth).enumerate() {
                assert!(
                    (got - want).abs() <= 10.0 / n,
                    "{class} {mechanism} query {q}: released {got}, brute force {want}"
                );
            }
        }
    }
    std::fs::remove_dir_all(&d).ok();
}
