//! `dpqr eval` and the synthetic file as input, through the real binary (issue #11 §2,
//! "`dpqr eval`" and "the synthetic CSV can be read back by `--data`"):
//!
//! * a synthetic file written by a release is read back by `--data` (weights counted) and
//!   scored by `--synthetic … --workload …`; for a mechanism whose answers are its synthetic
//!   data's answers (MWEM) both agree with the released answers;
//! * per-marginal errors and the uniform / all-zeros baselines equal hand-computed values;
//! * the predicted error from a release's `--report` (Laplace baseline) equals the exact
//!   formula, and a mechanism without answer noise gets "no prediction";
//! * a weighted file is refused as the private input of a release, and `dpqr synthetic
//!   expand` turns it into plain rows (largest remainder) that a release accepts.

use serde_json::Value;
use std::path::PathBuf;
mod common;
use common::{run, s, text};

/// A fresh directory with `t.csv` (60 records over a: 3, b: 2, c: 2), its domain `t.json`,
/// and the tiny `d.csv` (a: 2, b: 3; rows 0,0 / 0,2 / 1,2 / 1,2) with `d.json`.
fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dpqr-cli-eval-{name}-{}", std::process::id()));
    std::fs::remove_dir_all(&d).ok();
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("t.json"), r#"{"a": 3, "b": 2, "c": 2}"#).unwrap();
    let mut csv = String::from("a,b,c\n");
    for i in 0..60 {
        csv.push_str(&format!("{},{},{}\n", i % 3, (i / 3) % 2, (i * 7 / 5) % 2));
    }
    std::fs::write(d.join("t.csv"), csv).unwrap();
    std::fs::write(d.join("d.json"), r#"{"a": 2, "b": 3}"#).unwrap();
    std::fs::write(d.join("d.csv"), "a,b\n0,0\n0,2\n1,2\n1,2\n").unwrap();
    d
}

/// `dpqr eval … --json`, checked to succeed and warn; its JSON.
fn eval_json(args: &[&str]) -> Value {
    let mut a = vec!["eval", "--json"];
    a.extend_from_slice(args);
    let o = run(&a);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("NON-PRIVATE"),
        "{}",
        text(&o)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

fn num(v: &Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or_else(|| panic!("{key} in {v}"))
}

#[test]
fn a_synthetic_file_reads_back_and_scores_as_the_release() {
    let d = dir("roundtrip");
    let (data, domain) = (d.join("t.csv"), d.join("t.json"));
    let (answers, synthetic) = (d.join("m.csv"), d.join("s.csv"));
    let o = run(&[
        "release",
        "--data",
        s(&data),
        "--domain",
        s(&domain),
        "--workload",
        "all-2way",
        "--mechanism",
        "mwem",
        "--epsilon",
        "1",
        "--seed",
        "5",
        "--quiet",
        "--out",
        s(&answers),
        "--synthetic-out",
        s(&synthetic),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    // the synthetic file as --data: its weighted answers are the released answers
    let back = eval_json(&[
        "--data",
        s(&synthetic),
        "--domain",
        s(&domain),
        "--answers",
        s(&answers),
    ]);
    assert!(num(&back, "max_abs") < 1e-12, "{back}");
    // it is weighted: scored against itself unweighted, the answers would differ
    let w = d.join("w.csv");
    let body = std::fs::read_to_string(&synthetic).unwrap();
    std::fs::write(&w, body.replace("weight", "w")).unwrap();
    let named = eval_json(&[
        "--data",
        s(&w),
        "--domain",
        s(&domain),
        "--weights-column",
        "w",
        "--answers",
        s(&answers),
    ]);
    assert!(num(&named, "max_abs") < 1e-12, "{named}");
    let o = run(&[
        "eval",
        "--data",
        s(&w),
        "--domain",
        s(&domain),
        "--answers",
        s(&answers),
    ]);
    assert!(
        !o.status.success(),
        "a column w is no weight column unless named"
    );
    // --synthetic on the same workload scores exactly as the released answers
    let released = eval_json(&[
        "--data",
        s(&data),
        "--domain",
        s(&domain),
        "--answers",
        s(&answers),
    ]);
    let scored = eval_json(&[
        "--data",
        s(&data),
        "--domain",
        s(&domain),
        "--synthetic",
        s(&synthetic),
        "--workload",
        "all-2way",
    ]);
    assert_eq!(scored["scored"], "synthetic");
    for key in ["max_abs", "mean_abs", "rmse", "mean_marginal_l1"] {
        assert!(
            (num(&released, key) - num(&scored, key)).abs() < 1e-12,
            "{key}"
        );
    }
    assert!(num(&released, "max_abs") > 0.0);
    // ... and on any other workload
    let other = eval_json(&[
        "--data",
        s(&data),
        "--domain",
        s(&domain),
        "--synthetic",
        s(&synthetic),
        "--workload",
        "all-3way",
    ]);
    assert_eq!(other["queries"], 12);
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn per_marginal_errors_and_baselines_match_hand_computation() {
    let d = dir("baselines");
    // truth: a = (1/2, 1/2), b = (1/4, 0, 3/4); released: a exact, b = (0, 0, 1)
    let answers = d.join("a.csv");
    std::fs::write(
        &answers,
        "marginal,cell,answer\na,0,0.5\na,1,0.5\nb,0,0\nb,1,0\nb,2,1\n",
    )
    .unwrap();
    let (data, domain) = (d.join("d.csv"), d.join("d.json"));
    let v = eval_json(&[
        "--data",
        s(&data),
        "--domain",
        s(&domain),
        "--answers",
        s(&answers),
    ]);
    let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
    assert!(
        close(num(&v, "max_abs"), 0.25) && close(num(&v, "mean_abs"), 0.1),
        "{v}"
    );
    let per = v["per_marginal"].as_array().unwrap();
    assert_eq!(per[0]["attributes"], serde_json::json!(["a"]));
    assert!(close(num(&per[0], "l1"), 0.0) && close(num(&per[1], "l1"), 0.5));
    assert!(close(num(&per[1], "max_abs"), 0.25));
    // uniform: a exact; b off by 1/12, 1/3, 5/12 → ℓ1 10/12, mean abs (10/12)/5
    let u = &v["baselines"]["uniform"];
    assert!(close(num(u, "mean_abs"), 1.0 / 6.0), "{u}");
    assert!(close(num(u, "max_abs"), 5.0 / 12.0));
    assert!(close(num(&u["per_marginal"][1], "l1"), 10.0 / 12.0));
    assert!(close(num(u, "mean_marginal_l1"), 5.0 / 12.0));
    // all zeros: every table's ℓ1 is 1, mean abs 2/5, max 3/4
    let z = &v["baselines"]["all_zeros"];
    assert!(
        close(num(z, "mean_abs"), 0.4) && close(num(z, "max_abs"), 0.75),
        "{z}"
    );
    assert!(close(num(z, "mean_marginal_l1"), 1.0));
    // the text form shows the three columns and one row per marginal
    let o = run(&[
        "eval",
        "--data",
        s(&data),
        "--domain",
        s(&domain),
        "--answers",
        s(&answers),
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("uniform") && out.contains("all-zeros"),
        "{out}"
    );
    assert!(out.contains("per marginal"), "{out}");
    assert!(
        out.lines()
            .any(|l| l.trim_start().starts_with("b ") && l.contains("5.000e-1"))
    );
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn the_report_gives_a_predicted_range_where_the_mechanism_has_one() {
    let d = dir("predict");
    let (data, domain) = (d.join("t.csv"), d.join("t.json"));
    let (answers, report) = (d.join("a.csv"), d.join("r.json"));
    let o = run(&[
        "release",
        "--data",
        s(&data),
        "--domain",
        s(&domain),
        "--workload",
        "all-2way",
        "--mechanism",
        "laplace",
        "--epsilon",
        "1",
        // replace-one: answers are counts / n, as the prediction below assumes
        "--neighbouring",
        "replace-one",
        "--seed",
        "9",
        "--quiet",
        "--out",
        s(&answers),
        "--report",
        s(&report),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let v = eval_json(&[
        "--data",
        s(&data),
        "--domain",
        s(&domain),
        "--answers",
        s(&answers),
        "--report",
        s(&report),
    ]);
    // discrete Laplace with scale t: E|X| = 2q/(1 − q²), q = e^{−1/t}; answers are counts/60
    let r: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let t = num(&r["diagnostics"]["noise"], "parameter");
    let q = (-1.0 / t).exp();
    let want = 2.0 * q / (1.0 - q * q) / 60.0;
    let p = &v["prediction"];
    assert!(
        (num(p, "expected_mean_abs") - want).abs() < 1e-9 * want,
        "{p}"
    );
    assert!(num(p, "mean_abs_low") < want && want < num(p, "mean_abs_high"));
    let o = run(&[
        "eval",
        "--data",
        s(&data),
        "--domain",
        s(&domain),
        "--answers",
        s(&answers),
        "--report",
        s(&report),
    ]);
    assert!(
        text(&o).contains("expected mean abs error ≈ σ/√2"),
        "{}",
        text(&o)
    );
    // a mechanism that adds no noise to the answers: no prediction
    let o = run(&[
        "release",
        "--data",
        s(&data),
        "--domain",
        s(&domain),
        "--workload",
        "all-2way",
        "--mechanism",
        "mwem",
        "--epsilon",
        "1",
        "--seed",
        "9",
        "--quiet",
        "--out",
        s(&answers),
        "--report",
        s(&report),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let o = run(&[
        "eval",
        "--data",
        s(&data),
        "--domain",
        s(&domain),
        "--answers",
        s(&answers),
        "--report",
        s(&report),
    ]);
    assert!(
        text(&o).contains("no prediction for this mechanism"),
        "{}",
        text(&o)
    );
    // a report of another release (another number of answers) is refused
    let one = d.join("one.csv");
    std::fs::write(&one, "marginal,cell,answer\nb,0,0.5\nb,1,0.5\n").unwrap();
    let o = run(&[
        "eval",
        "--data",
        s(&data),
        "--domain",
        s(&domain),
        "--answers",
        s(&one),
        "--report",
        s(&report),
    ]);
    assert!(
        !o.status.success() && text(&o).contains("same release"),
        "{}",
        text(&o)
    );
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn a_weighted_file_is_refused_as_release_input_and_expands_to_rows() {
    let d = dir("refuse");
    let domain = d.join("d.json");
    let syn = d.join("s.csv");
    // weights 0.25, 0.35, 0.4 of 10 rows: 2.5, 3.5, 4 → 3, 3, 4 (tie to the first)
    std::fs::write(&syn, "a,b,weight\n0,0,0.25\n1,2,0.35\n0,1,0.4\n").unwrap();
    let out = d.join("x.csv");
    let o = run(&[
        "release",
        "--data",
        s(&syn),
        "--domain",
        s(&domain),
        "--workload",
        "all-1way",
        "--mechanism",
        "laplace",
        "--epsilon",
        "1",
        "--out",
        s(&out),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let msg = text(&o);
    assert!(
        msg.contains("weighted records file") && msg.contains("synthetic expand"),
        "{msg}"
    );
    assert!(!out.exists());
    let rows = d.join("rows.csv");
    let o = run(&[
        "synthetic",
        "expand",
        "--in",
        s(&syn),
        "--domain",
        s(&domain),
        "--total",
        "10",
        "--out",
        s(&rows),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let mut want = String::from("a,b\n");
    for (row, n) in [("0,0", 3), ("1,2", 3), ("0,1", 4)] {
        want.push_str(&format!("{row}\n").repeat(n));
    }
    assert_eq!(std::fs::read_to_string(&rows).unwrap(), want);
    // the expansion is plain data: a release takes it
    let o = run(&[
        "release",
        "--data",
        s(&rows),
        "--domain",
        s(&domain),
        "--workload",
        "all-1way",
        "--mechanism",
        "laplace",
        "--epsilon",
        "1",
        "--quiet",
        "--out",
        s(&out),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    // bad totals and an output naming the input are refused, nothing written
    for total in ["0", "-3", "1000000001"] {
        let o = run(&[
            "synthetic",
            "expand",
            "--in",
            s(&syn),
            "--domain",
            s(&domain),
            "--total",
            total,
            "--out",
            s(&d.join("bad.csv")),
        ]);
        assert_eq!(o.status.code(), Some(2), "{total}: {}", text(&o));
        assert!(!d.join("bad.csv").exists());
    }
    let o = run(&[
        "synthetic",
        "expand",
        "--in",
        s(&syn),
        "--domain",
        s(&domain),
        "--total",
        "3",
        "--out",
        s(&syn),
    ]);
    assert!(!o.status.success());
    assert!(std::fs::read_to_string(&syn).unwrap().contains("weight"));
    std::fs::remove_dir_all(&d).ok();
}

/// A synthetic file without a weight column (`release --rows N`, `synthetic expand`) is scored
/// as plain rows of weight 1: exactly as the weighted file of the same records, each distinct
/// record weighted by its share of the rows (3 of 6, 2 of 6, 1 of 6), and eval says how it
/// read it.
#[test]
fn plain_rows_score_as_the_weighted_file_of_the_same_records() {
    let d = dir("plain-rows");
    let (data, domain) = (d.join("t.csv"), d.join("t.json"));
    let (plain, weighted) = (d.join("plain.csv"), d.join("weighted.csv"));
    std::fs::write(&plain, "a,b,c\n0,1,0\n2,0,1\n0,1,0\n1,1,1\n2,0,1\n0,1,0\n").unwrap();
    std::fs::write(
        &weighted,
        format!(
            "a,b,c,weight\n0,1,0,{}\n2,0,1,{}\n1,1,1,{}\n",
            3.0 / 6.0,
            2.0 / 6.0,
            1.0 / 6.0
        ),
    )
    .unwrap();
    let score = |file: &PathBuf| {
        let mut a = vec!["eval", "--json", "--data", s(&data), "--domain", s(&domain)];
        a.extend_from_slice(&["--synthetic", s(file), "--workload", "all-2way"]);
        let o = run(&a);
        assert!(o.status.success(), "{}", text(&o));
        (
            serde_json::from_slice::<Value>(&o.stdout).unwrap(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let ((p, p_err), (w, w_err)) = (score(&plain), score(&weighted));
    assert!(
        p_err.contains("no weight column") && p_err.contains("6 plain rows"),
        "{p_err}"
    );
    assert!(!w_err.contains("no weight column"), "{w_err}");
    for key in ["max_abs", "mean_abs", "rmse", "mean_marginal_l1"] {
        assert!(
            (num(&p, key) - num(&w, key)).abs() < 1e-12,
            "{key}: {p} vs {w}"
        );
    }
    // the three records are far from the 60-row table: the scores are not trivially zero
    assert!(num(&p, "max_abs") > 0.05, "{p}");
    std::fs::remove_dir_all(&d).ok();
}
