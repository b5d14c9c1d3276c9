//! A charged release must not fail for a reason that could be checked before charging
//! (issue #23), through the real `dpqr` binary: the mechanisms' checks of public inputs
//! (`Mechanism::check_inputs`: universe size limits, DualQuery's rounds on the public n, the
//! exact sampler's step range, the noise samplers' parameter ranges — of every level of
//! both chaining mechanisms, of the polynomial's counts, of boosting's largest sample —, …)
//! run after the data is read and before the ledger records the spend. Each release below
//! used to be charged and then fail (exit status 5), or to abort (boosting's `--rounds
//! 1000000000` on an allocation failure while the mechanism was built); it is now refused
//! with status 2 and the ledger records nothing. A genuine failure after the charge (an
//! output directory removed mid-release) still exits 5: `cli_signals.rs`.

mod common;
use common::{fresh_dir, run, s, stderr, stdout, text};
use std::path::Path;

/// A ledger at `path` with the budget flags `budget` (replace-one neighbours).
fn init_ledger(path: &Path, budget: &[&str]) {
    let mut args = vec!["ledger", "init", s(path)];
    args.extend_from_slice(budget);
    let o = run(&args);
    assert!(o.status.success(), "{}", text(&o));
}

/// The number of spends the ledger at `path` records, over all its datasets.
fn spends(path: &Path) -> usize {
    let text = std::fs::read_to_string(path).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["datasets"].as_object().map_or(0, |m| {
        m.values()
            .map(|d| d["spends"].as_array().map_or(0, Vec::len))
            .sum()
    })
}

/// `dpqr release ARGS --ledger LEDGER --out DIR/a.csv --quiet`.
fn release(dir: &Path, ledger: &Path, args: &[&str]) -> std::process::Output {
    let out = dir.join("a.csv");
    let mut a = vec!["release"];
    a.extend_from_slice(args);
    a.extend_from_slice(&["--ledger", s(ledger), "--out", s(&out), "--quiet"]);
    run(&a)
}

/// The release is refused with status 2 before the spend is recorded: nothing in the
/// ledger, no output, no "charged" wording, and `message` in the error.
fn refused_uncharged(name: &str, budget: &[&str], args: &[&str], message: &str) {
    let d = fresh_dir("charge-after-checks", name);
    let ledger = d.join("L.json");
    init_ledger(&ledger, budget);
    let o = release(&d, &ledger, args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{name}: {}", text(&o));
    assert!(err.contains(message), "{name}: {err}");
    assert!(!err.contains("CHARGED"), "{name}: {err}");
    assert!(
        !err.contains("after its spend was recorded"),
        "{name}: {err}"
    );
    assert_eq!(spends(&ledger), 0, "{name}: the ledger recorded a spend");
    assert!(!d.join("a.csv").exists(), "{name}: an output was written");
}

#[test]
fn mwem_over_a_universe_above_its_cap_is_refused_uncharged() {
    refused_uncharged(
        "mwem-adult",
        &["--epsilon", "10"],
        &[
            "--dataset",
            "adult",
            "--workload",
            "all-2way",
            "--mechanism",
            "mwem",
            "--epsilon",
            "1",
        ],
        "explicit universe is too large",
    );
}

#[test]
fn dualquery_rounds_over_budget_on_the_public_n_are_refused_uncharged() {
    refused_uncharged(
        "dualquery-rounds",
        &["--epsilon", "10"],
        &[
            "--dataset",
            "nltcs",
            "--workload",
            "all-2way",
            "--mechanism",
            "dualquery",
            "--epsilon",
            "1",
            "--rounds",
            "200",
        ],
        "invalid parameter rounds = 200",
    );
}

/// A refused release: name, ledger budget, dataset, mechanism, further flags, expected
/// error (on all-2way).
type Case<'a> = (
    &'a str,
    &'a [&'a str],
    &'a str,
    &'a str,
    &'a [&'a str],
    &'a str,
);

#[test]
fn other_public_failures_found_by_extreme_settings_are_refused_uncharged() {
    let eps = ["--epsilon", "30"];
    let rho = ["--rho", "450"];
    let cases: [Case; 18] = [
        (
            "coarse-titanic",
            &rho,
            "titanic",
            "coarse-projection",
            &["--rho", "1"],
            "explicit universe is too large",
        ),
        (
            "chaining-worst-case-titanic",
            &rho,
            "titanic",
            "chaining-worst-case",
            &["--rho", "1"],
            "explicit universe is too large",
        ),
        (
            "ic-mw-alpha",
            &eps,
            "nltcs",
            "ic-mw",
            &["--epsilon", "1", "--alpha", "1e-9"],
            "B(α) exceeds",
        ),
        (
            "dualquery-eta",
            &eps,
            "nltcs",
            "dualquery",
            &["--epsilon", "1", "--eta", "1e-30"],
            "exact query sampler",
        ),
        (
            "dualquery-exhaustive",
            &eps,
            "adult",
            "dualquery",
            &["--epsilon", "1", "--oracle", "exhaustive", "--rounds", "3"],
            "exhaustive oracle's limit",
        ),
        (
            "gaussian-tiny-rho",
            &rho,
            "nltcs",
            "gaussian",
            &["--rho", "1e-300"],
            "sigma2",
        ),
        (
            "laplace-tiny-epsilon",
            &eps,
            "nltcs",
            "laplace",
            &["--epsilon", "1e-300"],
            "scale",
        ),
        (
            "projection-tiny-rho",
            &rho,
            "nltcs",
            "projection",
            &["--rho", "1e-300"],
            "sigma2",
        ),
        (
            "adaptive-projection-tiny-rho",
            &rho,
            "nltcs",
            "adaptive-projection",
            &["--rho", "1e-300"],
            "sigma2",
        ),
        (
            "mwem-tiny-epsilon",
            &eps,
            "nltcs",
            "mwem",
            &["--epsilon", "1e-300"],
            "scale",
        ),
        // every level's σ², from the same plan as the release (trivial levels aside)
        (
            "chaining-tiny-rho",
            &rho,
            "nltcs",
            "chaining",
            &["--rho", "1e-300"],
            "sigma2",
        ),
        (
            "chaining-worst-case-tiny-rho",
            &rho,
            "nltcs",
            "chaining-worst-case",
            &["--rho", "1e-300"],
            "sigma2",
        ),
        // the noise of the polynomial's counts, Gaussian and Laplace
        (
            "polynomial-tiny-rho",
            &rho,
            "nltcs",
            "polynomial",
            &["--rho", "1e-300"],
            "sigma2",
        ),
        (
            "polynomial-tiny-epsilon",
            &eps,
            "nltcs",
            "polynomial",
            &["--epsilon", "1e-300"],
            "scale",
        ),
        // the base generator's noise for the most queries a round can sample
        (
            "boosting-tiny-rho",
            &rho,
            "nltcs",
            "boosting",
            &["--rho", "1e-300"],
            "sigma2",
        ),
        // rounds beyond boosting's limit: a parameter error, not an allocation failure
        (
            "boosting-rounds",
            &rho,
            "nltcs",
            "boosting",
            &["--rho", "1", "--rounds", "1000000000"],
            "invalid parameter rounds = 1000000000: boosting runs at most 65536 rounds",
        ),
        // adaptive-projection's opening (1-ways, direct measurements, checks) would take all
        // of ρ with 2 rounds per attribute: it used to overrun the budget part-way through
        (
            "adaptive-few-rounds",
            &rho,
            "nltcs",
            "adaptive-projection",
            &["--rho", "1", "--rounds", "2"],
            "invalid parameter rounds_per_attribute = 2: must be at least 10",
        ),
        // rounds within the limit whose synopses exceed --max-memory-mib
        (
            "boosting-memory",
            &rho,
            "nltcs",
            "boosting",
            &["--rho", "1", "--rounds", "65536", "--max-memory-mib", "1"],
            "invalid parameter max_memory_mib = 1: boosting keeps every round's synopsis",
        ),
    ];
    for (name, budget, dataset, mechanism, flags, message) in cases {
        let mut args = vec![
            "--dataset",
            dataset,
            "--workload",
            "all-2way",
            "--mechanism",
            mechanism,
        ];
        args.extend_from_slice(flags);
        refused_uncharged(name, budget, &args, message);
    }
}

#[test]
fn a_refused_release_leaves_the_ledger_usable_and_a_valid_one_is_charged_once() {
    let d = fresh_dir("charge-after-checks", "then-valid");
    let ledger = d.join("L.json");
    init_ledger(&ledger, &["--epsilon", "10"]);
    let refused = release(
        &d,
        &ledger,
        &[
            "--dataset",
            "nltcs",
            "--workload",
            "all-2way",
            "--mechanism",
            "dualquery",
            "--epsilon",
            "1",
            "--rounds",
            "200",
        ],
    );
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    let ok = release(
        &d,
        &ledger,
        &[
            "--dataset",
            "nltcs",
            "--workload",
            "all-2way",
            "--mechanism",
            "dualquery",
            "--epsilon",
            "1",
            "--rounds",
            "2",
        ],
    );
    assert_eq!(ok.status.code(), Some(0), "{}", text(&ok));
    assert_eq!(spends(&ledger), 1);
    assert!(d.join("a.csv").exists());
}

#[test]
fn a_dry_run_reports_the_refusal_of_the_public_checks() {
    let d = fresh_dir("charge-after-checks", "dry-run");
    let out = d.join("a.csv");
    let o = run(&[
        "release",
        "--dataset",
        "adult",
        "--workload",
        "all-2way",
        "--mechanism",
        "mwem",
        "--epsilon",
        "1",
        "--out",
        s(&out),
        "--dry-run",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let text_out = stdout(&o);
    assert!(
        text_out.contains("checks: the release would be REFUSED before anything is charged")
            && text_out.contains("explicit universe is too large"),
        "{text_out}"
    );
    // with --assume-n the checks that need n run too (replace-one: n is public)
    let o = run(&[
        "release",
        "--dataset",
        "nltcs",
        "--workload",
        "all-2way",
        "--mechanism",
        "dualquery",
        "--epsilon",
        "1",
        "--rounds",
        "200",
        "--out",
        s(&out),
        "--dry-run",
        "--assume-n",
        "21574",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        stdout(&o).contains("REFUSED") && stdout(&o).contains("rounds = 200"),
        "{}",
        text(&o)
    );
    assert!(!out.exists());
}
