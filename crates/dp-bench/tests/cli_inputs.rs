//! Bad command-line parameters through the real `dpqr` binary: every one is refused with a
//! clear error (exit status 2, a message naming the problem) before any data is read or
//! noise drawn; `dpqr audit` ends with its one-line verdict; `dpqr eval` is loudly
//! non-private.

use std::path::PathBuf;
use std::process::{Command, Output};
mod common;
use common::{DPQR, run};

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dpqr-cli-{name}-{}", std::process::id()));
    std::fs::remove_dir_all(&d).ok();
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn release(mech: &str, budget: &[&str], out: &str) -> Output {
    let mut a = vec![
        "release",
        "--dataset",
        "nltcs",
        "--workload",
        "all-1way",
        "--mechanism",
        mech,
        "--quiet",
        "--out",
        out,
    ];
    a.extend_from_slice(budget);
    run(&a)
}

#[test]
fn bad_budgets_are_clear_errors() {
    let d = dir("budget");
    let out = d.join("a.csv");
    let out = out.to_str().unwrap();
    let cases: &[(&str, &[&str], &str)] = &[
        ("laplace", &["--epsilon", "NaN"], "epsilon"),
        ("laplace", &["--epsilon", "inf"], "epsilon"),
        ("laplace", &["--epsilon=-1"], "epsilon"),
        ("laplace", &["--epsilon", "0"], "ε > 0"),
        ("laplace", &["--epsilon", "1", "--delta", "1e-9"], "pure"),
        ("gaussian", &["--epsilon", "1", "--delta", "1"], "delta"),
        ("gaussian", &["--epsilon", "1", "--delta", "1.5"], "delta"),
        ("gaussian", &["--epsilon", "1", "--delta", "0"], "δ > 0"),
        ("gaussian", &["--epsilon", "1", "--delta", "NaN"], "delta"),
        ("gaussian", &["--rho", "0"], "rho"),
        ("gaussian", &["--rho=-0.5"], "rho"),
        ("gaussian", &["--rho", "inf"], "rho"),
        ("gaussian", &["--epsilon", "1"], "--delta"),
        // so large that the noise would be zero: refused (MAX_EPSILON = 30, MAX_RHO = 450)
        ("laplace", &["--epsilon", "1e300"], "true answers"),
        ("laplace", &["--epsilon", "31"], "true answers"),
        ("gaussian", &["--rho", "1e6"], "true answers"),
        (
            "gaussian",
            &["--epsilon", "100", "--delta", "1e-9"],
            "true answers",
        ),
        ("nope", &["--epsilon", "1"], "unknown mechanism"),
    ];
    for (mech, budget, want) in cases {
        let o = release(mech, budget, out);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{mech} {budget:?}: {err}");
        assert!(
            err.contains(want),
            "{mech} {budget:?}: {err:?} lacks {want:?}"
        );
        assert!(
            !std::path::Path::new(out).exists(),
            "{mech} {budget:?} wrote answers"
        );
    }
    // clap rejects what is not a number at all
    let o = release("laplace", &["--epsilon", "one"], out);
    assert_eq!(o.status.code(), Some(2));
    // the edge that is allowed still works
    let o = release("laplace", &["--epsilon", "30", "--seed", "1"], out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn huge_workloads_are_refused_with_an_estimate_before_allocating() {
    let d = dir("mem");
    std::fs::write(
        d.join("d.json"),
        r#"{"a": 4000000000, "b": 4000000000, "c": 2}"#,
    )
    .unwrap();
    std::fs::write(d.join("d.csv"), "a,b,c\n1,2,1\n").unwrap();
    let base = |w: &str, extra: &[&str]| {
        let mut c = Command::new(DPQR);
        c.args([
            "release",
            "--workload",
            w,
            "--mechanism",
            "laplace",
            "--quiet",
        ])
        .args(["--epsilon", "1", "--seed", "1", "--data"])
        .arg(d.join("d.csv"))
        .arg("--domain")
        .arg(d.join("d.json"))
        .arg("--out")
        .arg(d.join("out.csv"))
        .args(extra);
        c.output().unwrap()
    };
    // (4e9)² + 2·(4e9·2) = 16000000016000000000 cells, by hand: refused by the workload
    // builder with its count
    let o = base("all-2way", &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("16000000016000000000 counting queries"),
        "{err}"
    );
    // 8e9 cells for [a, c]: also beyond MAX_QUERIES
    std::fs::write(d.join("w.json"), r#"[["a","c"]]"#).unwrap();
    let o = base(d.join("w.json").to_str().unwrap(), &[]);
    assert_eq!(o.status.code(), Some(2));
    // within MAX_QUERIES but over the memory limit: refused with the estimate
    std::fs::write(d.join("d.json"), r#"{"a": 3000000, "b": 2, "c": 2}"#).unwrap();
    std::fs::write(d.join("d.csv"), "a,b,c\n1,1,1\n").unwrap();
    let o = base("all-1way", &["--max-memory-mib", "16"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    // 3000004 queries × 32 bytes = 91.6 MiB, by hand
    assert!(
        err.contains("3000004 counting queries") && err.contains("91.6 MiB"),
        "{err}"
    );
    assert!(!d.join("out.csv").exists());
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn audit_ends_with_the_verdict_line() {
    let o = run(&[
        "audit",
        "--mechanism",
        "laplace",
        "--runs",
        "4000",
        "--seed",
        "5",
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    let last = text.lines().last().unwrap_or("");
    assert!(o.status.success(), "{text}");
    let fields: Vec<&str> = last.split(' ').collect();
    assert_eq!(fields.len(), 3, "{last}");
    assert!(
        fields[0]
            .strip_prefix("epsilon_lower=")
            .unwrap()
            .parse::<f64>()
            .is_ok()
    );
    assert_eq!(fields[1], "claimed=1.0000");
    assert_eq!(fields[2], "verdict=pass");
    // the canary at the CI run count fails, with a non-zero exit status
    let o = run(&["audit", "--mechanism", "laplace", "--canary", "--seed", "5"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(
        text.lines().last().unwrap_or("").ends_with("verdict=FAIL"),
        "{text}"
    );
    // bad audit parameters are errors, not verdicts
    for bad in [
        &["audit", "--mechanism", "laplace", "--runs", "3"][..],
        &["audit", "--mechanism", "laplace", "--alpha", "0"][..],
        &["audit", "--mechanism", "laplace", "--noise-factor", "-1"][..],
        &["audit", "--mechanism", "nope"][..],
    ] {
        assert_eq!(run(bad).status.code(), Some(2), "{bad:?}");
    }
}

#[test]
fn eval_says_it_is_not_private() {
    let d = dir("eval");
    let out = d.join("a.csv");
    let o = release(
        "laplace",
        &["--epsilon", "1", "--seed", "2"],
        out.to_str().unwrap(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = run(&[
        "eval",
        "--dataset",
        "nltcs",
        "--answers",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("NON-PRIVATE"), "{err}");
    std::fs::remove_dir_all(&d).ok();
}

/// `--attributes` restricts the data before the workload: all 1-way marginals of three
/// adult attributes are exactly three tables, over those names only; an unknown name is a
/// clear error.
#[test]
fn attributes_select_a_subset_before_the_workload() {
    let d = dir("attributes");
    let out = d.join("a.csv");
    let o = run(&[
        "release",
        "--dataset",
        "adult",
        "--attributes",
        "sex,race,income>50K",
        "--workload",
        "all-1way",
        "--mechanism",
        "gaussian",
        "--epsilon",
        "1",
        "--delta",
        "1e-9",
        "--seed",
        "1",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&out).unwrap();
    let mut tables: Vec<String> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap().to_string())
        .collect();
    tables.dedup();
    // sex has 2 codes, race 5, income>50K 2 (data/adult/adult-domain.json): 9 cells
    assert_eq!(text.lines().count() - 1, 9, "{text}");
    assert_eq!(tables.len(), 3, "{tables:?}");
    for t in &tables {
        assert!(
            ["sex", "race", "income>50K"].iter().any(|n| t.contains(n)),
            "unexpected table {t}"
        );
    }
    let bad = run(&[
        "release",
        "--dataset",
        "adult",
        "--attributes",
        "sex,no-such-attribute",
        "--workload",
        "all-1way",
        "--mechanism",
        "gaussian",
        "--epsilon",
        "1",
        "--delta",
        "1e-9",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("no-such-attribute"));
}

/// Every mechanism `dpqr mechanisms --json` lists, by name.
fn mechanism_names() -> Vec<String> {
    let o = run(&["mechanisms", "--json"]);
    assert!(o.status.success());
    let list: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let names: Vec<String> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap().to_string())
        .collect();
    assert!(names.len() >= 10, "too few mechanisms listed: {names:?}");
    names
}

/// A directory with `d.csv`: 100 records over a: 3, b: 2 (so 1/n = 0.01), and `d.json`.
fn data_dir(name: &str) -> PathBuf {
    let d = dir(name);
    std::fs::write(d.join("d.json"), r#"{"a": 3, "b": 2}"#).unwrap();
    let mut csv = String::from("a,b\n");
    for i in 0..100 {
        csv.push_str(&format!("{},{}\n", i % 3, i % 2));
    }
    std::fs::write(d.join("d.csv"), csv).unwrap();
    d
}

/// `dpqr release` of `d.csv` in `d` (all 1-way marginals) with `args`.
fn release_in(d: &std::path::Path, args: &[&str]) -> Output {
    let (data, domain, out) = (d.join("d.csv"), d.join("d.json"), d.join("a.csv"));
    let mut a = vec![
        "release",
        "--data",
        data.to_str().unwrap(),
        "--domain",
        domain.to_str().unwrap(),
        "--workload",
        "all-1way",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ];
    a.extend_from_slice(args);
    run(&a)
}

/// ε = 0 and ρ = 0 are refused by every mechanism, whichever budget flags it takes, with a
/// message saying the value is out of range (DualQuery used to release at ε = 0).
#[test]
fn a_zero_budget_is_refused_by_every_mechanism() {
    let d = dir("zero");
    let out = d.join("a.csv");
    let out = out.to_str().unwrap();
    let names = mechanism_names();
    assert!(names.len() >= 10, "{names:?}");
    for mech in &names {
        for budget in [
            &["--epsilon", "0"][..],
            &["--epsilon", "0", "--delta", "1e-9"][..],
            &["--rho", "0"][..],
            &["--epsilon", "-0"][..],
        ] {
            let o = release(mech, budget, out);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{mech} {budget:?}: {err}");
            assert!(
                err.contains("is out of range") && err.contains("> 0"),
                "{mech} {budget:?}: {err}"
            );
            assert!(!std::path::Path::new(out).exists(), "{mech} {budget:?}");
        }
    }
    // a zero ledger budget too
    let o = run(&[
        "ledger",
        "init",
        d.join("l.json").to_str().unwrap(),
        "--epsilon",
        "0",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("out of range"));
    assert!(!d.join("l.json").exists());
}

/// δ above 1/n is refused under replace-one (n public, here 100) and above 1e-6 under
/// add/remove (n private: the message must not depend on n), unless --allow-large-delta,
/// which warns. A refused release records nothing in the ledger.
#[test]
fn a_large_delta_needs_allow_large_delta() {
    let d = data_dir("delta");
    let ledger = d.join("l.json");
    let o = run(&[
        "ledger",
        "init",
        ledger.to_str().unwrap(),
        "--epsilon",
        "10",
        "--delta",
        "0.5",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let l = ledger.to_str().unwrap();
    let g = |delta: &'static str, extra: &[&'static str]| {
        let mut a = vec![
            "--mechanism",
            "gaussian",
            "--epsilon",
            "1",
            "--delta",
            delta,
            "--seed",
            "1",
            "--ledger",
            l,
        ];
        a.extend_from_slice(extra);
        release_in(&d, &a)
    };
    let spends = || {
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&ledger).unwrap()).unwrap();
        json["datasets"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v["spends"].as_array().unwrap().len())
            .sum::<usize>()
    };
    // replace-one (named: gaussian defaults to add/remove): 1/n = 0.01
    let ro = ["--neighbouring", "replace-one"];
    let o = g("0.02", &ro);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("1/n = 1/100") && err.contains("--allow-large-delta"),
        "{err}"
    );
    assert_eq!(spends(), 0);
    assert!(!d.join("a.csv").exists());
    let o = g("0.01", &ro);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = g(
        "0.02",
        &["--neighbouring", "replace-one", "--allow-large-delta"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("WARNING"));
    assert_eq!(spends(), 2);
    // add/remove: the fixed bound 1e-6, whatever n is
    let ar = ["--neighbouring", "add-remove"];
    let o = g("2e-6", &ar);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("1e-6") && !err.contains("100"), "{err}");
    assert_eq!(spends(), 2);
    let o = g("1e-6", &ar);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = g(
        "0.02",
        &["--neighbouring", "add-remove", "--allow-large-delta"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(spends(), 4);
    // without --neighbouring gaussian runs under add/remove (its default): the fixed bound
    let o = g("2e-6", &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("1e-6") && err.contains("add/remove"), "{err}");
    assert_eq!(spends(), 4);
}

/// Numbers in messages are short: never hundreds of digits, even for a tiny ε whose noise
/// scale is huge (the releases that run and the refusals alike).
#[test]
fn numbers_in_messages_are_short() {
    let d = data_dir("numbers");
    let long_number = |s: &str| {
        s.as_bytes()
            .windows(20)
            .any(|w| w.iter().all(u8::is_ascii_digit))
    };
    for args in [
        &["--mechanism", "laplace", "--epsilon", "1e-300"][..],
        &["--mechanism", "gaussian", "--rho", "1e-300"][..],
        &[
            "--mechanism",
            "gaussian",
            "--epsilon",
            "1e-300",
            "--delta",
            "1e-9",
        ][..],
        &[
            "--mechanism",
            "dualquery",
            "--epsilon",
            "1e-300",
            "--seed",
            "1",
        ][..],
        &["--mechanism", "ic-mw", "--epsilon", "1e-300", "--seed", "1"][..],
    ] {
        let o = release_in(&d, args);
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(
            !all.trim().is_empty() && !long_number(&all),
            "{args:?}: {all}"
        );
    }
}

/// A negative number is a value that is out of range, not an unknown flag.
#[test]
fn negative_numbers_are_out_of_range_not_unknown_flags() {
    let d = data_dir("negative");
    for (args, want) in [
        (
            &["--mechanism", "laplace", "--epsilon", "-1"][..],
            "--epsilon -1 is out of range",
        ),
        (
            &["--mechanism", "gaussian", "--rho", "-0.5"][..],
            "--rho -0.5 is out of range",
        ),
        (
            &["--mechanism", "laplace", "--epsilon", "-inf"][..],
            "--epsilon -inf is out of range",
        ),
        (
            &[
                "--mechanism",
                "gaussian",
                "--epsilon",
                "1",
                "--delta",
                "-1e-9",
            ][..],
            "--delta -1e-9 is out of range",
        ),
        (
            &["--mechanism", "laplace", "--epsilon", "1", "--seed", "-1"][..],
            "invalid value '-1'",
        ),
        (
            &[
                "--mechanism",
                "laplace",
                "--epsilon",
                "1",
                "--max-memory-mib",
                "-5",
            ][..],
            "invalid value '-5'",
        ),
    ] {
        let o = release_in(&d, args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(!err.contains("unexpected argument"), "{args:?}: {err}");
    }
    let o = run(&[
        "ledger",
        "init",
        d.join("l.json").to_str().unwrap(),
        "--epsilon",
        "-1",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--epsilon -1 is out of range"), "{err}");
    let o = run(&["audit", "--mechanism", "laplace", "--alpha", "-0.1"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(!err.contains("unexpected argument"), "{err}");
}

/// An attribute named twice — in the domain, the CSV header, a workload table,
/// `--attributes` — is reported as a repeat, and the same table twice names both
/// marginals.
#[test]
fn repeated_attribute_names_are_reported_as_such() {
    let d = data_dir("repeats");
    let p = |name: &str| d.join(name).to_str().unwrap().to_string();
    std::fs::write(d.join("dup.json"), r#"{"a": 3, "a": 2}"#).unwrap();
    std::fs::write(d.join("dup.csv"), "a,b,a\n0,0,0\n").unwrap();
    std::fs::write(d.join("w1.json"), r#"[["a", "b", "a"]]"#).unwrap();
    std::fs::write(d.join("w2.json"), r#"[["a"], ["a", "b"], ["b", "a"]]"#).unwrap();
    let base = |data: &str, domain: &str, workload: &str, extra: &[&str]| {
        let mut a = vec![
            "release".to_string(),
            "--data".into(),
            p(data),
            "--domain".into(),
            p(domain),
            "--workload".into(),
            workload.into(),
            "--mechanism".into(),
            "laplace".into(),
            "--epsilon".into(),
            "1".into(),
            "--quiet".into(),
            "--out".into(),
            p("out.csv"),
        ];
        a.extend(extra.iter().map(|s| s.to_string()));
        Command::new(DPQR).args(&a).output().unwrap()
    };
    let cases = [
        (
            base("d.csv", "dup.json", "all-1way", &[]),
            "attribute 'a' is declared twice",
        ),
        (
            base("dup.csv", "d.json", "all-1way", &[]),
            "column 'a' appears twice in the header",
        ),
        (
            base("d.csv", "d.json", &p("w1.json"), &[]),
            "marginal 1 ('a', 'b', 'a') names the attribute 'a' twice",
        ),
        (
            base("d.csv", "d.json", &p("w2.json"), &[]),
            "marginal 3 ('b', 'a') is the same table as marginal 2 ('a', 'b')",
        ),
        (
            base("d.csv", "d.json", "all-1way", &["--attributes", "a,b,a"]),
            "--attributes names the attribute 'a' twice",
        ),
    ];
    for (o, want) in cases {
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{want}: {err}");
        assert!(err.contains(want), "{want}: {err}");
        // no Rust Debug output: user text in single quotes, no ["…"] lists
        assert!(!err.contains('"') && !err.contains("[\""), "{err}");
    }
    assert!(!d.join("out.csv").exists());
}

/// Errors and notes speak plain words: no Rust Debug output (double-quoted escaped strings,
/// `Name { field: … }` structs, `[…]` lists) in what the program prints.
#[test]
fn messages_carry_no_debug_output() {
    let d = data_dir("debug");
    std::fs::write(d.join("bad-answers.csv"), "m,c,a\n").unwrap();
    std::fs::write(d.join("l.json"), r#"{"format": "dpqr-ledger-9"}"#).unwrap();
    let outputs = [
        release(
            "nope",
            &["--epsilon", "1"],
            d.join("a.csv").to_str().unwrap(),
        ),
        run(&[
            "release",
            "--dataset",
            "no-such-data",
            "--workload",
            "all-1way",
            "--mechanism",
            "laplace",
            "--epsilon",
            "1",
            "--out",
            d.join("a.csv").to_str().unwrap(),
        ]),
        run(&[
            "eval",
            "--data",
            d.join("d.csv").to_str().unwrap(),
            "--domain",
            d.join("d.json").to_str().unwrap(),
            "--answers",
            d.join("bad-answers.csv").to_str().unwrap(),
        ]),
        run(&["ledger", "show", d.join("l.json").to_str().unwrap()]),
        // MWEM's note describes its measurement noise; the simplex note its post-processing
        release_in(
            &d,
            &["--mechanism", "mwem", "--epsilon", "1", "--seed", "1"],
        ),
        release_in(
            &d,
            &[
                "--mechanism",
                "laplace",
                "--epsilon",
                "1",
                "--seed",
                "1",
                "--post",
                "simplex",
            ],
        ),
    ];
    for o in &outputs {
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        for debug in ["\"", " { ", "[\"", "Some(", "SimplexProjection"] {
            assert!(!all.contains(debug), "{debug:?} in: {all}");
        }
    }
}

/// A JSON workload over four attributes of adult (14 attributes, |X| ≈ 10^17.8) is released
/// by MWEM — which enumerates its universe — over those four attributes (2·5·6·9 = 540
/// records): answers for every cell, synthetic records with only the four columns, and the
/// note in the report. Before, the release was refused (universe of all 14 attributes).
#[test]
fn a_narrow_json_workload_of_a_wide_table_is_released_by_a_universe_mechanism() {
    let d = dir("narrow");
    let wl = d.join("narrow.json");
    std::fs::write(
        &wl,
        r#"[["sex", "race"], ["relationship", "workclass"], ["race", "workclass"]]"#,
    )
    .unwrap();
    let (out, syn, rep) = (d.join("a.csv"), d.join("s.csv"), d.join("r.json"));
    let o = run(&[
        "release",
        "--dataset",
        "adult",
        "--workload",
        wl.to_str().unwrap(),
        "--mechanism",
        "mwem",
        "--epsilon",
        "1",
        "--seed",
        "1",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
        "--synthetic-out",
        syn.to_str().unwrap(),
        "--report",
        rep.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // header + 2·5 + 6·9 + 5·9 cells
    let answers = std::fs::read_to_string(&out).unwrap();
    assert_eq!(answers.lines().count(), 1 + 10 + 54 + 45);
    let synthetic = std::fs::read_to_string(&syn).unwrap();
    let header = synthetic.lines().next().unwrap();
    let mut cols: Vec<&str> = header.split(',').collect();
    let weight = cols.pop().unwrap();
    assert!(weight.starts_with("weight"), "{header}");
    assert_eq!(cols, ["workclass", "relationship", "race", "sex"]);
    let report = std::fs::read_to_string(&rep).unwrap();
    assert!(report.contains("4 of 14 attributes"), "{report}");
}

/// `dpqr release --dry-run` plans without spending: it writes nothing, records nothing in a
/// ledger, reads no data (a malformed data file is not noticed), and its predicted noise per
/// count equals the one the real release then reports.
#[test]
fn dry_run_plans_without_reading_spending_or_writing() {
    let d = dir("dry");
    // malformed data: reading it would fail
    std::fs::write(d.join("d.csv"), "a,b\n9,9\n").unwrap();
    std::fs::write(d.join("d.json"), r#"{"a": 3, "b": 2}"#).unwrap();
    let (out, ledger) = (d.join("a.csv"), d.join("ledger.json"));
    let o = run(&[
        "ledger",
        "init",
        ledger.to_str().unwrap(),
        "--epsilon",
        "2",
        "--delta",
        "1e-6",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let ledger_before = std::fs::read_to_string(&ledger).unwrap();
    let args = |data: &str, dry: bool| {
        let mut a = vec![
            "release".to_string(),
            "--data".into(),
            d.join(data).to_str().unwrap().into(),
            "--domain".into(),
            d.join("d.json").to_str().unwrap().into(),
            "--workload".into(),
            "all-2way".into(),
            "--mechanism".into(),
            "gaussian".into(),
            "--epsilon".into(),
            "1".into(),
            "--delta".into(),
            "1e-9".into(),
            "--quiet".into(),
            "--out".into(),
            out.to_str().unwrap().into(),
        ];
        if dry {
            a.extend(["--dry-run".into(), "--ledger".into()]);
            a.push(ledger.to_str().unwrap().into());
        }
        a
    };
    let a = args("d.csv", true);
    let o = run(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let stdout = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(stdout.contains("dry run"), "{stdout}");
    assert!(
        stdout.contains("1 marginals (6 cells), 6 answers"),
        "{stdout}"
    );
    assert!(!out.exists());
    assert_eq!(std::fs::read_to_string(&ledger).unwrap(), ledger_before);
    let predicted = stdout
        .split("standard deviation ")
        .nth(1)
        .and_then(|t| t.split_whitespace().next())
        .expect("a predicted standard deviation")
        .to_string();
    // the real release on good data reports the same noise per count
    let mut csv = String::from("a,b\n");
    for i in 0..50 {
        csv.push_str(&format!("{},{}\n", i % 3, i % 2));
    }
    std::fs::write(d.join("good.csv"), csv).unwrap();
    let a = args("good.csv", false);
    let o = run(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let stdout = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        stdout.contains(&format!("standard deviation {predicted} per count")),
        "dry run said {predicted}: {stdout}"
    );
}

/// `--post simplex` is refused, before any data is read, by every mechanism that would
/// silently ignore it (all but the answer-perturbation baselines and the relaxed
/// projection), and nothing is written.
#[test]
fn post_processing_is_refused_where_it_would_be_ignored() {
    let d = dir("post");
    let out = d.join("a.csv");
    for (mech, budget) in [
        ("projection", ["--rho", "1"]),
        ("mwem", ["--epsilon", "1"]),
        ("adaptive-projection", ["--rho", "1"]),
    ] {
        let mut a = vec![
            "release",
            "--dataset",
            "nltcs",
            "--workload",
            "all-1way",
            "--mechanism",
            mech,
            "--post",
            "simplex",
            "--quiet",
            "--out",
            out.to_str().unwrap(),
        ];
        a.extend_from_slice(&budget);
        let o = run(&a);
        assert_eq!(o.status.code(), Some(2), "{mech}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("does not apply --post"), "{mech}: {err}");
        assert!(!out.exists());
    }
    // the baselines apply it
    let o = release(
        "gaussian",
        &["--rho", "1", "--post", "simplex"],
        out.to_str().unwrap(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}
