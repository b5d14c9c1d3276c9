//! Progress of every long stage of `dpqr release`, through the real binary (issue #11 §2,
//! "Progress with a percentage and ETA on every long stage"; issue #23 took the ETA out:
//! a stage's duration grows with n and with data-dependent work, so progress shows no
//! timing):
//!
//! * with `DPQR_PROGRESS=plain` (stderr is not a terminal here, so the bar would hide
//!   itself) IC-MW's rounds, chaining-worst-case's decomposition scan and per-level rounds,
//!   chaining's decomposition levels and per-level solves, and the projection solver's
//!   iterations each print lines with a percentage and no timing, from 0 % to 100 %, against
//!   totals fixed before the stage (B(α/2), the universe size, T, the iteration cap);
//! * counting is announced as a stage without a percentage;
//! * `--quiet` leaves stderr empty;
//! * under add/remove neighbours no progress line contains the number of records.

use dp_mechanisms::ProjectionSettings;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const DPQR: &str = env!("CARGO_BIN_EXE_dpqr");

/// A directory with `rows` records (`d.csv` over the domain `d.json`, 3 × 2 × 2 values).
fn dir(name: &str, rows: usize) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dpqr-cli-progress-{name}-{}", std::process::id()));
    std::fs::remove_dir_all(&d).ok();
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("d.json"), r#"{"a": 3, "b": 2, "c": 2}"#).unwrap();
    let mut csv = String::from("a,b,c\n");
    for i in 0..rows {
        csv.push_str(&format!("{},{},{}\n", i % 3, (i / 3) % 2, (i / 7) % 2));
    }
    std::fs::write(d.join("d.csv"), csv).unwrap();
    d
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `dpqr release` of all 2-way marginals of `d`'s data with `extra` arguments; `plain`:
/// with `DPQR_PROGRESS=plain`.
fn release(d: &Path, plain: bool, extra: &[&str]) -> Output {
    let (data, domain) = (d.join("d.csv"), d.join("d.json"));
    let (out, report) = (d.join("answers.csv"), d.join("report.json"));
    let mut a = vec![
        "release",
        "--data",
        s(&data),
        "--domain",
        s(&domain),
        "--workload",
        "all-2way",
        "--out",
        s(&out),
        "--report",
        s(&report),
        "--seed",
        "7",
    ];
    a.extend_from_slice(extra);
    let mut c = Command::new(DPQR);
    c.args(&a).env_remove("DPQR_PROGRESS");
    if plain {
        c.env("DPQR_PROGRESS", "plain");
    }
    c.output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The progress lines of `stage` on stderr (the seed warning and other lines left out).
fn lines<'a>(err: &'a str, stage: &str) -> Vec<&'a str> {
    err.lines()
        .filter(|l| l.starts_with(&format!("{stage}: ")))
        .collect()
}

/// `stage` went from 0 to `total` with percentages and nothing else (no ETA, no elapsed
/// time: every line is exactly `stage: done of total (p%)`).
fn assert_stage(err: &str, stage: &str, total: usize) {
    let l = lines(err, stage);
    assert_eq!(
        l.first().copied(),
        Some(format!("{stage}: 0 of {total} (0%)").as_str()),
        "{err}"
    );
    assert_eq!(
        l.last().copied(),
        Some(format!("{stage}: {total} of {total} (100%)").as_str()),
        "{err}"
    );
    assert!(
        l.iter().all(|f| f.ends_with("%)") && !f.contains("ETA")),
        "{stage}: {err}"
    );
}

/// The number in a report note after `prefix` (e.g. "B(α/2) = ").
fn note_number(d: &Path, prefix: &str) -> usize {
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("report.json")).unwrap()).unwrap();
    let notes = r["diagnostics"]["notes"].as_array().unwrap();
    let note = notes
        .iter()
        .filter_map(|n| n.as_str())
        .find_map(|n| n.split_once(prefix).map(|(_, rest)| rest.to_string()))
        .unwrap_or_else(|| panic!("no note with {prefix}: {notes:?}"));
    note.chars()
        .take_while(|c| c.is_ascii_digit())
        .collect::<String>()
        .parse()
        .unwrap()
}

const COUNTING: &str = "counting the queries on the data (no percentage for this stage)";

#[test]
fn ic_mw_reports_its_rounds_of_b_alpha_over_2() {
    let d = dir("ic", 300);
    let o = release(&d, true, &["--mechanism", "ic-mw", "--epsilon", "1"]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    let rounds = note_number(&d, "B(α/2) = ");
    assert!(rounds > 1, "{rounds}");
    assert_stage(&err, "IC-MW rounds", rounds);
    assert!(err.contains(COUNTING), "{err}");
}

#[test]
fn chaining_worst_case_reports_its_decomposition_and_every_levels_rounds() {
    let d = dir("cwc", 300);
    let o = release(
        &d,
        true,
        &[
            "--mechanism",
            "chaining-worst-case",
            "--rho",
            "1",
            "--rounds",
            "6",
        ],
    );
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    // the universe of the three attributes: 3 × 2 × 2 records
    assert_stage(
        &err,
        "chaining (worst case): decomposition, universe records scanned",
        12,
    );
    let levels = err
        .lines()
        .find_map(|l| l.strip_prefix("chaining level 1 of "))
        .and_then(|l| l.split(':').next())
        .map(|k| k.parse::<usize>().unwrap())
        .unwrap_or_else(|| panic!("no level lines: {err}"));
    // ℓ∞ chains of marginals: only level 1 is non-trivial (module docs), T = --rounds
    assert_stage(
        &err,
        &format!("chaining level 1 of {levels}: PMW rounds"),
        6,
    );
}

#[test]
fn chaining_reports_its_decomposition_levels_and_each_levels_solver() {
    let d = dir("chaining", 300);
    let o = release(
        &d,
        true,
        &[
            "--mechanism",
            "chaining",
            "--rho",
            "1",
            "--max-iterations",
            "40",
        ],
    );
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    let k = lines(&err, "chaining: decomposition levels")
        .last()
        .and_then(|l| l.split(" of ").nth(1))
        .and_then(|l| l.split(' ').next())
        .map(|k| k.parse::<usize>().unwrap())
        .unwrap_or_else(|| panic!("no decomposition lines: {err}"));
    assert_stage(&err, "chaining: decomposition levels", k);
    let solver = "projection solver (minimum-norm-point cycles, at most the cap; ends early \
                  when converged)";
    assert_stage(&err, &format!("chaining level 1 of {k}: {solver}"), 40);
}

#[test]
fn projection_reports_its_solver_iterations_against_the_cap() {
    let d = dir("projection", 300);
    let solver = "projection solver (minimum-norm-point cycles, at most the cap; ends early \
                  when converged)";
    let o = release(&d, true, &["--mechanism", "projection", "--rho", "1"]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    let cap = ProjectionSettings::default().frank_wolfe.max_iterations;
    assert_stage(&err, solver, cap);
    // the total is the cap given on the command line
    let o = release(
        &d,
        true,
        &[
            "--mechanism",
            "projection",
            "--rho",
            "1",
            "--max-iterations",
            "9",
        ],
    );
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert_stage(&err, solver, 9);
}

#[test]
fn quiet_leaves_stderr_empty_for_every_long_stage() {
    let d = dir("quiet", 300);
    let cases: [&[&str]; 4] = [
        &["--mechanism", "ic-mw", "--epsilon", "1"],
        &["--mechanism", "chaining-worst-case", "--rho", "1"],
        &["--mechanism", "chaining", "--rho", "1"],
        &["--mechanism", "projection", "--rho", "1"],
    ];
    for args in cases {
        let mut a = args.to_vec();
        // --seed warns on stderr; the quiet run draws its noise from the OS instead
        a.push("--quiet");
        let (data, domain) = (d.join("d.csv"), d.join("d.json"));
        let (out, report) = (d.join("answers.csv"), d.join("report.json"));
        let mut full = vec![
            "release",
            "--data",
            s(&data),
            "--domain",
            s(&domain),
            "--workload",
            "all-2way",
            "--out",
            s(&out),
            "--report",
            s(&report),
        ];
        full.extend(a);
        for plain in [false, true] {
            let mut c = Command::new(DPQR);
            c.args(&full).env_remove("DPQR_PROGRESS");
            if plain {
                c.env("DPQR_PROGRESS", "plain");
            }
            let o = c.output().unwrap();
            assert!(o.status.success(), "{args:?}: {}", stderr(&o));
            assert!(o.stderr.is_empty(), "{args:?}: {}", stderr(&o));
        }
    }
}

#[test]
fn no_progress_line_under_add_remove_contains_the_number_of_records() {
    // a distinctive n (a prime), so that any line giving it away is caught
    let d = dir("addremove", 7919);
    let cases: [&[&str]; 3] = [
        &["--mechanism", "gaussian", "--rho", "1"],
        &["--mechanism", "laplace", "--epsilon", "1"],
        &["--mechanism", "adaptive-projection", "--rho", "1"],
    ];
    for args in cases {
        let mut a = args.to_vec();
        a.extend(["--neighbouring", "add-remove"]);
        let o = release(&d, true, &a);
        let err = stderr(&o);
        assert!(o.status.success(), "{args:?}: {err}");
        assert!(err.contains(COUNTING), "{args:?}: {err}");
        assert!(!err.contains("7919"), "{args:?}: {err}");
    }
}

/// `dpqr release --dry-run` of all 2-way marginals of `d`'s domain with `extra` arguments.
fn dry_run(d: &Path, extra: &[&str]) -> Output {
    let mut a = vec!["--dry-run"];
    a.extend_from_slice(extra);
    release(d, false, &a)
}

#[test]
fn a_dry_run_prints_the_projection_bound_for_the_assumed_n() {
    let d = dir("bound", 30);
    let o = dry_run(
        &d,
        &[
            "--mechanism",
            "projection",
            "--rho",
            "0.5",
            "--assume-n",
            "5000",
        ],
    );
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{}", stderr(&o));
    // derived by hand for all 2-way marginals of a: 3, b: 2, c: 2 (m = 3 tables, C = 16
    // cells, |X| = 12 records), replace-one Δ₂² = 2m = 6, ρ = 0.5, n = 5000:
    // σ = √(6/(2·0.5))/5000, E‖ŷ − x̄‖² ≤ 2σ·√m·√(2 ln 12), err₂ = (that / C)^{1/2}
    let sigma = (6.0f64 / 1.0).sqrt() / 5000.0;
    let bound = (2.0 * sigma * 3f64.sqrt() * (2.0 * 12f64.ln()).sqrt() / 16.0).sqrt();
    let line = format!(
        "stated bound: root-mean-squared error of the answers at most {bound:.4} in \
         expectation for a table of 5000 records (the projection mechanism's analysis \
         (Nikolov, Talwar, Zhang 2016) with Massart's lemma, derived for this calibration in \
         dp_mechanisms::projection)\n"
    );
    assert!(out.contains(&line), "{line}\n{out}");
    // nothing read or written
    assert!(!d.join("answers.csv").exists());

    // without --assume-n: what the bound needs
    let o = dry_run(&d, &["--mechanism", "projection", "--rho", "0.5"]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        out.contains("number of records n, which a dry run does not read; give --assume-n N"),
        "{out}"
    );
    assert!(!out.contains("stated bound: root-mean-squared"), "{out}");
}

#[test]
fn a_dry_run_prints_ic_mws_bound_and_assume_n_needs_a_dry_run() {
    let d = dir("icbound", 30);
    let o = dry_run(
        &d,
        &[
            "--mechanism",
            "ic-mw",
            "--epsilon",
            "1",
            "--assume-n",
            "1000000",
        ],
    );
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        out.contains("stated bound: largest error over the answers at most ")
            && out.contains(
                "with probability at least 0.95 for a table of 1000000 records (Roth 2011, Thm 5)"
            ),
        "{out}"
    );
    // a mechanism with neither fixed noise nor a stated bound says so
    let o = dry_run(
        &d,
        &[
            "--mechanism",
            "mwem",
            "--epsilon",
            "1",
            "--assume-n",
            "1000",
        ],
    );
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        out.contains("stated bound: none for this mechanism"),
        "{out}"
    );
    // --assume-n is for plans only, and at least 1
    for bad in [
        &["--assume-n", "1000"][..],
        &["--dry-run", "--assume-n", "0"][..],
    ] {
        let mut a = vec!["--mechanism", "projection", "--rho", "0.5"];
        a.extend_from_slice(bad);
        let o = release(&d, false, &a);
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("--assume-n"), "{bad:?}: {}", stderr(&o));
        assert!(!d.join("answers.csv").exists());
    }
}
