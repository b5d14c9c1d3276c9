//! k-of-ℓ threshold workloads and decision-list databases through the real `dpqr` binary
//! (issue #13): the polynomial release answers thresholds (and reports its counting
//! progress), and both the baselines and the polynomial release answer decision-list point
//! queries.

mod common;
use common::{fresh_dir, run, s, stdout, text};
use std::path::{Path, PathBuf};
use std::process::Command;

/// `d.csv`: 3000 records over a: 3, b: 2, c: 2, e: 2, and a threshold workload.
fn fixture(name: &str) -> PathBuf {
    let d = fresh_dir("thresholds", name);
    std::fs::write(d.join("d.json"), r#"{"a": 3, "b": 2, "c": 2, "e": 2}"#).unwrap();
    let mut csv = String::from("a,b,c,e\n");
    for i in 0..3000 {
        csv.push_str(&format!(
            "{},{},{},{}\n",
            i % 3,
            (i / 3) % 2,
            (i / 7) % 2,
            (i / 11) % 2
        ));
    }
    std::fs::write(d.join("d.csv"), csv).unwrap();
    std::fs::write(
        d.join("t.json"),
        r#"{"class": "thresholds", "queries": [
            {"k": 2, "literals": {"a": 0, "b": 1, "c": 1, "e": 0}},
            {"k": 3, "literals": {"a": 2, "b": 0, "c": 1, "e": 1}},
            {"k": 1, "literals": {"b": 1, "c": 0}}]}"#,
    )
    .unwrap();
    d
}

fn truth(pred: impl Fn([u32; 4]) -> bool) -> f64 {
    (0..3000u32)
        .filter(|&i| pred([i % 3, (i / 3) % 2, (i / 7) % 2, (i / 11) % 2]))
        .count() as f64
        / 3000.0
}

fn answers(path: &Path) -> Vec<f64> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .skip(1)
        .map(|r| r.rsplit(',').next().unwrap().parse().unwrap())
        .collect()
}

#[test]
fn the_polynomial_release_answers_threshold_workloads() {
    let d = fixture("poly");
    let out = d.join("a.csv");
    let o = run(&[
        "release",
        "--data",
        s(&d.join("d.csv")),
        "--domain",
        s(&d.join("d.json")),
        "--workload",
        s(&d.join("t.json")),
        "--mechanism",
        "polynomial",
        "--rho",
        "400",
        "--alpha",
        "0.02",
        "--seed",
        "5",
        "--out",
        s(&out),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(stdout(&o).contains("3 thresholds queries"), "{}", text(&o));
    let rows = std::fs::read_to_string(&out).unwrap();
    assert!(
        rows.lines()
            .nth(1)
            .unwrap()
            .starts_with("0,thresholds,\"at least 2 of (a=0, b=1, c=1, e=0)\","),
        "{rows}"
    );
    let count =
        |x: [u32; 4], lits: [(usize, u32); 4]| lits.iter().filter(|(a, v)| x[*a] == *v).count();
    let wants = [
        truth(|x| count(x, [(0, 0), (1, 1), (2, 1), (3, 0)]) >= 2),
        truth(|x| count(x, [(0, 2), (1, 0), (2, 1), (3, 1)]) >= 3),
        truth(|x| x[1] == 1 || x[2] == 0),
    ];
    let got = answers(&out);
    assert_eq!(got.len(), 3);
    // α = 0.02 certified, and little noise at ρ = 400 on 3000 records
    for (g, w) in got.iter().zip(wants) {
        assert!((g - w).abs() <= 0.025, "{g} vs {w}");
    }
}

/// Loaded in memory (`--attributes` naming every column keeps the records path), the
/// polynomial release counts its plan's tables on the records and reports "counting
/// monomials" from 0 % to 100 %; the same file streamed (the default for a `--data` file:
/// the plan's tables counted in one pass, issue #25) gives the same answers for the same
/// seed.
#[test]
fn the_polynomial_release_reports_its_counting_progress() {
    let d = fixture("progress");
    let (csv, domain, workload) = (d.join("d.csv"), d.join("d.json"), d.join("t.json"));
    let go = |out: &Path, extra: &[&str]| {
        let mut args = vec![
            "release",
            "--data",
            s(&csv),
            "--domain",
            s(&domain),
            "--workload",
            s(&workload),
            "--mechanism",
            "polynomial",
            "--epsilon",
            "1",
            "--seed",
            "3",
            "--out",
            s(out),
        ];
        args.extend_from_slice(extra);
        let o = Command::new(env!("CARGO_BIN_EXE_dpqr"))
            .args(&args)
            .env("DPQR_PROGRESS", "plain")
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        o
    };
    let (memory, streamed) = (d.join("memory.csv"), d.join("streamed.csv"));
    let o = go(&memory, &["--attributes", "a,b,c,e"]);
    let err = String::from_utf8_lossy(&o.stderr);
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("counting monomials"))
        .collect();
    assert!(
        lines
            .first()
            .is_some_and(|l| l.contains("0 %") || l.contains("0%")),
        "{err}"
    );
    assert!(lines.last().is_some_and(|l| l.contains("100")), "{err}");
    go(&streamed, &[]);
    assert_eq!(
        std::fs::read(&memory).unwrap(),
        std::fs::read(&streamed).unwrap()
    );
}

/// A decision-list database over 3 variables, lists of length 2: `test` codes 0..6 are
/// literals, 6 is "no test".
fn decision_lists(name: &str) -> PathBuf {
    let d = fresh_dir("thresholds", name);
    std::fs::write(
        d.join("d.json"),
        r#"{"test1": 7, "output1": 2, "test2": 7, "output2": 2, "default": 2}"#,
    )
    .unwrap();
    let mut csv = String::from("test1,output1,test2,output2,default\n");
    for i in 0..400 {
        csv.push_str(&format!(
            "{},{},{},{},{}\n",
            i % 7,
            (i / 7) % 2,
            (i / 3) % 7,
            (i / 5) % 2,
            (i / 2) % 2
        ));
    }
    std::fs::write(d.join("d.csv"), csv).unwrap();
    std::fs::write(
        d.join("p.json"),
        r#"{"class": "decision-lists", "points": ["000", "101", "111"]}"#,
    )
    .unwrap();
    d
}

#[test]
fn decision_list_points_are_released_by_the_baseline_and_the_polynomial() {
    let d = decision_lists("dl");
    let out = d.join("a.csv");
    let args = |mech: &'static str| {
        vec![
            "release".to_string(),
            "--data".into(),
            s(&d.join("d.csv")).into(),
            "--domain".into(),
            s(&d.join("d.json")).into(),
            "--workload".into(),
            s(&d.join("p.json")).into(),
            "--mechanism".into(),
            mech.into(),
            "--epsilon".into(),
            "25".into(),
            "--out".into(),
            s(&out).into(),
            "--quiet".into(),
        ]
    };
    let a = args("laplace");
    let o = run(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(o.status.success(), "{}", text(&o));
    // the truth by a first-match scan written here
    let eval = |i: u32, y: [bool; 3]| {
        let rec = [i % 7, (i / 7) % 2, (i / 3) % 7, (i / 5) % 2, (i / 2) % 2];
        for p in 0..2 {
            let t = rec[2 * p];
            if t < 6 && y[(t / 2) as usize] == t.is_multiple_of(2) {
                return rec[2 * p + 1] == 1;
            }
        }
        rec[4] == 1
    };
    let got = answers(&out);
    for (g, y) in got.iter().zip([[false; 3], [true, false, true], [true; 3]]) {
        let want = (0..400).filter(|&i| eval(i, y)).count() as f64 / 400.0;
        assert!((g - want).abs() < 0.02, "{g} vs {want}");
    }
    std::fs::remove_file(&out).unwrap();
    // the polynomial release answers them too (exact q at this length: only noise)
    let a = args("polynomial");
    let o = run(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        stdout(&o).contains("3 decision-lists queries"),
        "{}",
        text(&o)
    );
    let got = answers(&out);
    assert_eq!(got.len(), 3);
    for (g, y) in got.iter().zip([[false; 3], [true, false, true], [true; 3]]) {
        let want = (0..400).filter(|&i| eval(i, y)).count() as f64 / 400.0;
        assert!((g - want).abs() < 0.25, "{g} vs {want}");
    }
    // decision-list points read the records: a source that counts is refused up front
    let mut a = args("polynomial");
    a.push("--stream".into());
    std::fs::remove_file(&out).unwrap();
    let o = run(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("needs the records"),
        "{}",
        text(&o)
    );
    assert!(!out.exists());
    // parities are still refused by name
    std::fs::write(
        d.join("par.json"),
        r#"{"class": "parities", "queries": [{"output1": 1}]}"#,
    )
    .unwrap();
    let mut a = args("polynomial");
    a[6] = s(&d.join("par.json")).into();
    let o = run(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("parities"));
    assert!(!out.exists());
}
