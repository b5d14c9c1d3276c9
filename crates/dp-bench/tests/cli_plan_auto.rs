//! Issue #26, items 4 and 5, through the real binary: the dry run of adaptive-projection
//! prints its noise schedule (σ values checked here against the documented formulas,
//! computed independently from the public parameters), checks that `--data` exists and that
//! its header fits the schema (names only: invalid values in the rows do not matter), and
//! spends nothing; the baselines' per-answer error with `--assume-n`; `--mechanism auto`
//! chooses from public inputs and says why; `dpqr mechanisms` says where each mechanism is
//! the wrong choice; `relaxed-projection` takes `--post simplex`.

mod common;
use common::{fresh_dir, run, s, stdout, text};
use std::path::{Path, PathBuf};

/// `d.csv` (300 records over a: 2, b: 3, c: 4), its domain, a conjunction workload.
fn fixture(name: &str) -> PathBuf {
    let d = fresh_dir("plan-auto", name);
    std::fs::write(d.join("d.json"), r#"{"a": 2, "b": 3, "c": 4}"#).unwrap();
    let mut csv = String::from("a,b,c\n");
    for i in 0..300 {
        csv.push_str(&format!("{},{},{}\n", i % 2, (i / 2) % 3, (i / 5) % 4));
    }
    std::fs::write(d.join("d.csv"), csv).unwrap();
    std::fs::write(
        d.join("conj.json"),
        r#"{"class": "conjunctions", "queries": [{"a": 0, "b": 1}, {"c": 1}]}"#,
    )
    .unwrap();
    d
}

/// `dpqr release --data DATA --domain d.json --workload all-2way` with `extra`.
fn release(d: &Path, data: &Path, extra: &[&str]) -> std::process::Output {
    let domain = d.join("d.json");
    let out = d.join("a.csv");
    let mut args = vec![
        "release",
        "--data",
        s(data),
        "--domain",
        s(&domain),
        "--quiet",
        "--out",
        s(&out),
    ];
    if !extra.contains(&"--workload") {
        args.extend_from_slice(&["--workload", "all-2way"]);
    }
    args.extend_from_slice(extra);
    run(&args)
}

/// σ of the discrete Gaussian on one count of a marginal table measured at `rho`, from the
/// documented calibration σ² = Δ₂²/(2ρ) with Δ₂² = 1 under add/remove and 2 under
/// replace-one (docs/mechanisms/adaptive.md; Bun–Steinke 2016 Prop. 1.6).
fn sigma(replace_one: bool, rho: f64) -> f64 {
    let delta2 = if replace_one { 2.0 } else { 1.0 };
    (delta2 / (2.0 * rho)).sqrt()
}

/// The number after `key` on the line of `text` starting (after spaces) with `line`.
fn number_after(text: &str, line: &str, key: &str) -> f64 {
    let l = text
        .lines()
        .find(|l| l.trim_start().starts_with(line))
        .unwrap_or_else(|| panic!("no line {line:?} in:\n{text}"));
    let rest = l
        .split(key)
        .nth(1)
        .unwrap_or_else(|| panic!("no {key:?} in {l:?}"));
    rest.trim_start()
        .split(|c: char| !(c.is_ascii_digit() || c == '.' || c == 'e' || c == '-'))
        .next()
        .unwrap()
        .parse()
        .unwrap_or_else(|e| panic!("{l:?}: {e}"))
}

/// Equal to the 6 decimals printed.
fn close(got: f64, want: f64) -> bool {
    (got - want).abs() <= 1e-6 + 1e-9 * want
}

#[test]
fn dry_run_of_adaptive_projection_prints_the_documented_schedule_and_spends_nothing() {
    let d = fixture("schedule");
    let ledger = d.join("ledger.json");
    let o = run(&["ledger", "init", s(&ledger), "--rho", "2"]);
    assert!(o.status.success(), "{}", text(&o));
    let before = std::fs::read(&ledger).unwrap();
    for (relation, replace_one) in [("add-remove", false), ("replace-one", true)] {
        let rho = 0.5;
        let o = release(
            &d,
            &d.join("d.csv"),
            &[
                "--mechanism",
                "adaptive-projection",
                "--rho",
                "0.5",
                "--neighbouring",
                relation,
                "--ledger",
                s(&ledger),
                "--dry-run",
            ],
        );
        let out = stdout(&o);
        assert!(o.status.success(), "{}", text(&o));
        // d = 3 attributes, T = 16·3 = 48, α = 0.9: each 1-way table and each round before
        // annealing at αρ/T; after annealing 4×; 3 workload tables of two attributes: the
        // cheap ones at βρ/3 (β = 0.9), the checks at γρ/3 (γ = 0.4)
        let rho_1 = 0.9 * rho / 48.0;
        let cases = [
            ("1-way tables", "σ =", sigma(replace_one, rho_1)),
            ("a round before annealing", "σ =", sigma(replace_one, rho_1)),
            (
                "a round after annealing",
                "σ =",
                sigma(replace_one, 4.0 * rho_1),
            ),
            (
                "cheap workload tables",
                "σ =",
                sigma(replace_one, 0.9 * rho / 3.0),
            ),
            (
                "checks of the other",
                "σ =",
                sigma(replace_one, 0.4 * rho / 3.0),
            ),
            ("1-way tables", "ρ =", rho_1),
        ];
        for (line, key, want) in cases {
            let got = number_after(&out, line, key);
            assert!(
                close(got, want),
                "{relation} {line}: {got} vs {want}\n{out}"
            );
        }
        // the selection: the largest ε with ε²/8 ≤ (1 − α)ρ/T
        let eps = (8.0 * 0.1 * rho / 48.0_f64).sqrt();
        let got = number_after(&out, "a round before annealing", "selection ε =");
        assert!(close(got, eps), "{got} vs {eps}");
        // the rounds the budget allows: without annealing, what the 1-ways leave over one
        // round's charge αρ/T + (1 − α)ρ/T = ρ/T (the last round takes the rest: one fewer
        // when the remainder is less than a round)
        let left = rho - 3.0 * rho_1;
        let most = number_after(&out, "rounds:", "at most") as usize;
        let want = (left / (rho / 48.0)).floor() as usize;
        assert!(most == want || most + 1 == want, "{most} vs {want}\n{out}");
        // the error of a measured table: the mean table has (2·3 + 2·4 + 3·4)/3 cells
        let cells = (6.0 + 8.0 + 12.0) / 3.0;
        let l1 = (2.0 / std::f64::consts::PI).sqrt() * sigma(replace_one, rho_1) * cells;
        let got = number_after(&out, "error of a measured table", "expected ℓ1 noise about");
        assert!((got - l1).abs() < 0.01, "{got} vs {l1}\n{out}");
        assert!(out.contains("give --assume-n N"), "{out}");
        assert!(out.contains("header fits the schema"), "{out}");
        assert!(out.contains("the spend fits the remaining budget"), "{out}");
    }
    // with --assume-n: the table's noise as a share of N records
    let o = release(
        &d,
        &d.join("d.csv"),
        &[
            "--mechanism",
            "adaptive-projection",
            "--rho",
            "0.5",
            "--dry-run",
            "--assume-n",
            "1000",
        ],
    );
    let out = stdout(&o);
    let l1 = (2.0 / std::f64::consts::PI).sqrt() * sigma(false, 0.9 * 0.5 / 48.0) * 26.0 / 3.0;
    let got = number_after(&out, "as a share of 1000 records", "(--assume-n):");
    assert!((got - l1 / 1000.0).abs() < 1e-4, "{got}\n{out}");
    // nothing recorded, nothing written
    assert_eq!(std::fs::read(&ledger).unwrap(), before);
    assert!(!d.join("a.csv").exists());
}

#[test]
fn dry_run_checks_the_data_file_and_its_header_by_names_only() {
    let d = fixture("header");
    let ledger = d.join("ledger.json");
    let o = run(&["ledger", "init", s(&ledger), "--rho", "2"]);
    assert!(o.status.success(), "{}", text(&o));
    let before = std::fs::read(&ledger).unwrap();
    let plan = |data: &Path| {
        release(
            &d,
            data,
            &[
                "--mechanism",
                "adaptive-projection",
                "--rho",
                "0.5",
                "--ledger",
                s(&ledger),
                "--dry-run",
            ],
        )
    };
    // a missing file: refused, named
    let missing = d.join("no-such.csv");
    let o = plan(&missing);
    assert!(!o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("no-such.csv"), "{}", text(&o));
    // a header without the schema's column c: refused, the column named
    let short = d.join("short.csv");
    std::fs::write(&short, "a,b\n0,1\n").unwrap();
    let o = plan(&short);
    assert!(!o.status.success(), "{}", text(&o));
    let t = text(&o);
    assert!(
        t.contains("short.csv") && t.contains("no column 'c'"),
        "{t}"
    );
    // the right header over rows no release would accept: the dry run reads no value, so it
    // passes; the release itself refuses the rows
    let bad_rows = d.join("bad-rows.csv");
    std::fs::write(&bad_rows, "c,a,b\n9,7,x\n").unwrap();
    let o = plan(&bad_rows);
    assert!(o.status.success(), "{}", text(&o));
    assert!(stdout(&o).contains("header fits the schema (column names only"));
    let o = release(
        &d,
        &bad_rows,
        &[
            "--mechanism",
            "adaptive-projection",
            "--rho",
            "0.5",
            "--ledger",
            s(&ledger),
        ],
    );
    assert!(!o.status.success(), "{}", text(&o));
    // nothing was charged by any of them
    assert_eq!(std::fs::read(&ledger).unwrap(), before);
}

#[test]
fn baselines_give_per_answer_error_with_assume_n() {
    let d = fixture("baseline");
    // gaussian at ρ = 0.5, replace-one: Δ₂² = 2·3 tables, σ² = 6/(2·0.5) = 6
    let o = release(
        &d,
        &d.join("d.csv"),
        &[
            "--mechanism",
            "gaussian",
            "--rho",
            "0.5",
            "--neighbouring",
            "replace-one",
            "--dry-run",
            "--assume-n",
            "50",
        ],
    );
    let out = stdout(&o);
    assert!(o.status.success(), "{}", text(&o));
    // the discrete Gaussian's standard deviation is at most σ (√6 ≈ 2.449), within 1e-3 at
    // this σ; per answer divided by 50
    let sd = number_after(&out, "per answer, for 50 records", "standard deviation");
    assert!((sd - 6f64.sqrt() / 50.0).abs() < 1e-4, "{sd}\n{out}");
    // expected table ℓ1: √(2/π)·sd·cells averaged over the tables (26/3 cells)
    let l1 = number_after(&out, "per table", "about");
    let want = (2.0 / std::f64::consts::PI).sqrt() * 6f64.sqrt() / 50.0 * 26.0 / 3.0;
    assert!((l1 - want).abs() < 2e-3, "{l1} vs {want}\n{out}");
    assert!(!out.contains("WARNING"), "{out}");
    // with only 5 records the noise swamps the tables: the plan warns
    let o = release(
        &d,
        &d.join("d.csv"),
        &[
            "--mechanism",
            "gaussian",
            "--rho",
            "0.5",
            "--dry-run",
            "--assume-n",
            "5",
        ],
    );
    assert!(
        stdout(&o).contains("WARNING: the noise alone"),
        "{}",
        text(&o)
    );
    assert!(stdout(&o).contains("--post simplex"), "{}", text(&o));
}

#[test]
fn auto_chooses_from_public_inputs_and_says_why() {
    let d = fixture("auto");
    let data = d.join("d.csv");
    // marginal tables under ρ: adaptive-projection, in the plan
    let o = release(
        &d,
        &data,
        &["--mechanism", "auto", "--rho", "0.5", "--dry-run"],
    );
    let out = stdout(&o);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        out.contains("mechanism auto chose adaptive-projection because the workload is marginal"),
        "{out}"
    );
    assert!(out.contains("privacy: adaptive-projection"), "{out}");
    assert!(out.contains("noise schedule"), "{out}");
    // and in a release: the summary's notes and the report
    let report = d.join("r.json");
    let o = release(
        &d,
        &data,
        &[
            "--mechanism",
            "auto",
            "--rho",
            "2",
            "--seed",
            "1",
            "--report",
            s(&report),
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        stdout(&o).contains("note: mechanism auto chose adaptive-projection because"),
        "{}",
        text(&o)
    );
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(r["certificate"]["mechanism"], "adaptive-projection");
    assert!(
        r["mechanism_auto"]
            .as_str()
            .unwrap()
            .starts_with("mechanism auto chose adaptive-projection because")
    );
    // marginal tables under pure ε: laplace with the simplex post-processing
    let o = release(
        &d,
        &data,
        &["--mechanism", "auto", "--epsilon", "1", "--dry-run"],
    );
    let out = stdout(&o);
    assert!(
        out.contains("mechanism auto chose laplace with --post simplex because"),
        "{out}"
    );
    // conjunctions under (ε, δ): the Gaussian baseline, no post-processing
    let conj = d.join("conj.json");
    let o = release(
        &d,
        &data,
        &[
            "--workload",
            s(&conj),
            "--mechanism",
            "auto",
            "--epsilon",
            "1",
            "--delta",
            "1e-9",
            "--dry-run",
        ],
    );
    let out = stdout(&o);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        out.contains("mechanism auto chose gaussian because the workload is of class conjunctions"),
        "{out}"
    );
    // auto chooses the post-processing itself
    let o = release(
        &d,
        &data,
        &[
            "--mechanism",
            "auto",
            "--rho",
            "1",
            "--post",
            "simplex",
            "--dry-run",
        ],
    );
    assert!(!o.status.success());
    assert!(text(&o).contains("--mechanism auto chooses the post-processing"));
}

#[test]
fn mechanisms_say_where_each_is_the_wrong_choice() {
    let o = run(&["mechanisms"]);
    assert!(o.status.success());
    let out = stdout(&o);
    let o = run(&["mechanisms", "--json"]);
    let list: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let list = list.as_array().unwrap();
    for m in list {
        let name = m["name"].as_str().unwrap();
        let wrong = m["wrong_choice"].as_str().unwrap();
        assert!(!wrong.is_empty(), "{name}");
        let line = format!("  wrong choice when: {wrong}");
        assert!(out.contains(&line), "{name}: {line}");
    }
    // every mechanism that takes --post is listed with it
    let takes: Vec<&str> = list
        .iter()
        .filter(|m| m["post_processing"] == true)
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(takes, ["gaussian", "laplace", "relaxed-projection"]);
    assert!(out.contains("--mechanism auto"), "{out}");
}

#[test]
fn relaxed_projection_takes_the_simplex_post_processing() {
    let d = fresh_dir("plan-auto", "relaxed");
    std::fs::write(d.join("d.json"), r#"{"a": 2, "b": 2, "c": 2}"#).unwrap();
    let mut csv = String::from("a,b,c\n");
    for i in 0..200 {
        csv.push_str(&format!("{},{},{}\n", i % 2, (i / 3) % 2, (i / 7) % 2));
    }
    std::fs::write(d.join("d.csv"), &csv).unwrap();
    let o = release(
        &d,
        &d.join("d.csv"),
        &[
            "--mechanism",
            "relaxed-projection",
            "--epsilon",
            "1",
            "--delta",
            "1e-9",
            "--post",
            "simplex",
            "--seed",
            "2",
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    // every table of the answers is a table of proportions
    let answers = std::fs::read_to_string(d.join("a.csv")).unwrap();
    let mut sums = std::collections::BTreeMap::<String, f64>::new();
    for row in answers.lines().skip(1) {
        let f: Vec<&str> = row.split(',').collect();
        let v: f64 = f[2].parse().unwrap();
        assert!((0.0..=1.0 + 1e-12).contains(&v), "{row}");
        *sums.entry(f[0].to_string()).or_default() += v;
    }
    assert_eq!(sums.len(), 3);
    for (t, sum) in sums {
        assert!((sum - 1.0).abs() < 1e-9, "{t}: {sum}");
    }
    // a mechanism that does not take it still refuses, naming those that do
    let o = release(
        &d,
        &d.join("d.csv"),
        &["--mechanism", "mwem", "--epsilon", "1", "--post", "simplex"],
    );
    assert!(!o.status.success());
    assert!(
        text(&o).contains("gaussian, laplace, relaxed-projection"),
        "{}",
        text(&o)
    );
}
