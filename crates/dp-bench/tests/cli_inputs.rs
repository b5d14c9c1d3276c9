//! Bad command-line parameters through the real `dpqr` binary: every one is refused with a
//! clear error (exit status 2, a message naming the problem) before any data is read or
//! noise drawn; `dpqr audit` ends with its one-line verdict; `dpqr eval` is loudly
//! non-private.

use std::path::PathBuf;
use std::process::{Command, Output};

const DPQR: &str = env!("CARGO_BIN_EXE_dpqr");

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dpqr-cli-{name}-{}", std::process::id()));
    std::fs::remove_dir_all(&d).ok();
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run(args: &[&str]) -> Output {
    Command::new(DPQR).args(args).output().unwrap()
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
