//! Mechanism settings and progress of `dpqr release`, through the real binary (issue #11
//! §2, "Mechanism settings on the command line" and "Progress"):
//!
//! * a setting changes the run (`--rounds` is MWEM's number of rounds in the report), and
//!   the settings used, given or default, are on the `settings:` line and in the report;
//! * `--help` and `dpqr mechanisms` show each mechanism's defaults, which are the
//!   mechanisms' own (`dp-mechanisms` parameters);
//! * a setting the mechanism does not take, and a value out of range, are refused (exit 2)
//!   before the ledger is charged or anything written;
//! * `--quiet` leaves stderr empty; without it the rounds are reported with a percentage
//!   and no timing (`DPQR_PROGRESS=plain`: plain lines, since stderr is not a terminal here).

use dp_core::Num;
use dp_mechanisms::iterative::DEFAULT_ETA;
use dp_mechanisms::{DualQueryParams, MwemParams, ProjectionSettings};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
mod common;
use common::{DPQR, s};

/// A directory with a small dataset (`d.csv` over the domain `d.json`, 3 × 2 values).
fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dpqr-cli-settings-{name}-{}", std::process::id()));
    std::fs::remove_dir_all(&d).ok();
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("d.json"), r#"{"a": 3, "b": 2}"#).unwrap();
    let mut csv = String::from("a,b\n");
    for i in 0..300 {
        csv.push_str(&format!("{},{}\n", i % 3, (i / 3) % 2));
    }
    std::fs::write(d.join("d.csv"), csv).unwrap();
    d
}

/// `dpqr release` on the dataset of `d` (all 2-way marginals) with `extra` arguments and
/// the environment variables `env`, writing `d/answers.csv` and `d/report.json`.
fn release(d: &Path, env: &[(&str, &str)], extra: &[&str]) -> Output {
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
    ];
    a.extend_from_slice(extra);
    let mut c = Command::new(DPQR);
    c.args(&a).env_remove("DPQR_PROGRESS");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn report(d: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(d.join("report.json")).unwrap()).unwrap()
}

/// Spends recorded in a ledger file.
fn recorded(l: &Path) -> usize {
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(l).unwrap()).unwrap();
    json["datasets"]
        .as_object()
        .unwrap()
        .values()
        .map(|d| d["spends"].as_array().unwrap().len())
        .sum()
}

#[test]
fn a_setting_changes_the_run_and_the_report_shows_it() {
    let d = dir("rounds");
    let mwem = ["--mechanism", "mwem", "--epsilon", "1", "--quiet"];
    let o = release(&d, &[], &mwem);
    assert!(o.status.success(), "{}", stderr(&o));
    let default = MwemParams::DEFAULT_ROUNDS;
    assert!(
        stdout(&o).contains(&format!("settings: --rounds {default} (default)\n")),
        "{}",
        stdout(&o)
    );
    let r = report(&d);
    assert_eq!(r["diagnostics"]["iterations"], default);
    assert_eq!(r["settings"]["rounds"]["value"], default);
    assert_eq!(r["settings"]["rounds"]["source"], "default");

    let mut given = mwem.to_vec();
    given.extend(["--rounds", "3"]);
    let o = release(&d, &[], &given);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("settings: --rounds 3\n"),
        "{}",
        stdout(&o)
    );
    let r = report(&d);
    assert_eq!(r["diagnostics"]["iterations"], 3);
    assert_eq!(r["settings"]["rounds"]["value"], 3);
    assert_eq!(r["settings"]["rounds"]["source"], "given");

    // a mechanism without settings says so
    let o = release(
        &d,
        &[],
        &["--mechanism", "gaussian", "--rho", "1", "--quiet"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("settings: none (gaussian has no settings)"),
        "{}",
        stdout(&o)
    );
    assert_eq!(report(&d)["settings"], serde_json::json!({}));

    // the dry run shows the settings too
    let o = release(
        &d,
        &[],
        &[
            "--mechanism",
            "dualquery",
            "--epsilon",
            "1",
            "--eta",
            "0.25",
            "--dry-run",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let samples = DualQueryParams::DEFAULT_SAMPLES;
    assert!(
        stdout(&o).contains(&format!(
            "--eta 0.25, --samples {samples} per round (default), --oracle auto (default)"
        )),
        "{}",
        stdout(&o)
    );
}

#[test]
fn help_and_the_mechanism_list_show_the_mechanisms_own_defaults() {
    let o = Command::new(DPQR)
        .args(["release", "--help"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let help = stdout(&o);
    let fw = ProjectionSettings::default().frank_wolfe;
    for want in [
        format!("mwem {}", MwemParams::DEFAULT_ROUNDS),
        format!("dualquery {}", Num(DEFAULT_ETA)),
        format!("dualquery {} per round", DualQueryParams::DEFAULT_SAMPLES),
        format!("at most {}", DualQueryParams::DEFAULT_MAX_ROUNDS),
        format!("projection {}", Num(fw.relative_gap_tolerance)),
        format!("projection {}", fw.max_iterations),
        "dualquery auto".to_string(),
    ] {
        assert!(help.contains(&want), "--help lacks {want:?}:\n{help}");
    }
    for flag in [
        "--rounds",
        "--eta",
        "--samples",
        "--alpha",
        "--tolerance",
        "--max-iterations",
        "--oracle",
    ] {
        assert!(help.contains(flag), "--help lacks {flag}");
    }

    let o = Command::new(DPQR)
        .args(["mechanisms", "--json"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let list: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let by_name = |n: &str| {
        list.as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == n)
            .unwrap()
            .clone()
    };
    let mwem = by_name("mwem");
    assert_eq!(mwem["settings"][0]["flag"], "--rounds");
    assert_eq!(mwem["settings"][0]["default"], MwemParams::DEFAULT_ROUNDS);
    assert!(!mwem["settings"][0]["meaning"].as_str().unwrap().is_empty());
    assert_eq!(by_name("gaussian")["settings"], serde_json::json!([]));
    let dq: Vec<String> = by_name("dualquery")["settings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["flag"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(dq, ["--rounds", "--eta", "--samples", "--oracle"]);
    assert_eq!(by_name("dualquery")["settings"][1]["default"], DEFAULT_ETA);

    let o = Command::new(DPQR).arg("mechanisms").output().unwrap();
    let text = stdout(&o);
    assert!(
        text.contains("--rounds — rounds T, each a selection and a measurement")
            && text.contains(&format!("(default {})", MwemParams::DEFAULT_ROUNDS)),
        "{text}"
    );
    assert!(text.contains("  settings:       none"), "{text}");
}

#[test]
fn a_setting_the_mechanism_does_not_take_is_refused_before_anything() {
    let d = dir("refused");
    let ledger = d.join("ledger.json");
    let o = Command::new(DPQR)
        .args(["ledger", "init", s(&ledger), "--epsilon", "5"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let cases: [(&[&str], &str); 4] = [
        (
            &["--mechanism", "gaussian", "--rho", "0.5", "--rounds", "5"],
            "--rounds",
        ),
        (
            &["--mechanism", "mwem", "--epsilon", "1", "--eta", "0.3"],
            "--eta",
        ),
        (
            &[
                "--mechanism",
                "projection",
                "--rho",
                "0.5",
                "--oracle",
                "ilp",
            ],
            "--oracle",
        ),
        (
            &[
                "--mechanism",
                "dualquery",
                "--epsilon",
                "1",
                "--tolerance",
                "1e-3",
            ],
            "--tolerance",
        ),
    ];
    for (args, flag) in cases {
        for dry in [false, true] {
            let mut a = args.to_vec();
            a.extend(["--ledger", s(&ledger)]);
            if dry {
                a.push("--dry-run");
            }
            let o = release(&d, &[], &a);
            let e = stderr(&o);
            assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
            assert!(
                e.contains(&format!("{} does not take {flag}", args[1])) && e.contains("drop"),
                "{args:?}: {e}"
            );
            assert!(stdout(&o).is_empty(), "{args:?}: {}", stdout(&o));
            assert!(!d.join("answers.csv").exists(), "{args:?}: answers written");
            assert!(!d.join("report.json").exists(), "{args:?}: report written");
            assert_eq!(recorded(&ledger), 0, "{args:?}: a spend was recorded");
        }
    }
}

#[test]
fn invalid_values_are_refused_with_the_parameters_name() {
    let d = dir("invalid");
    let cases: [(&[&str], &str); 9] = [
        (
            &["--mechanism", "mwem", "--epsilon", "1", "--rounds", "0"],
            "--rounds 0",
        ),
        (
            &["--mechanism", "mwem", "--epsilon", "1", "--rounds", "-3"],
            "--rounds",
        ),
        (
            &["--mechanism", "dualquery", "--epsilon", "1", "--eta", "0"],
            "--eta 0",
        ),
        (
            &["--mechanism", "dualquery", "--epsilon", "1", "--eta", "-1"],
            "--eta -1",
        ),
        (
            &["--mechanism", "dualquery", "--epsilon", "1", "--eta", "nan"],
            "--eta NaN",
        ),
        (
            &[
                "--mechanism",
                "dualquery",
                "--epsilon",
                "1",
                "--samples",
                "0",
            ],
            "--samples 0",
        ),
        (
            &[
                "--mechanism",
                "projection",
                "--rho",
                "1",
                "--tolerance",
                "0",
            ],
            "--tolerance 0",
        ),
        (
            &[
                "--mechanism",
                "projection",
                "--rho",
                "1",
                "--max-iterations",
                "0",
            ],
            "--max-iterations 0",
        ),
        (
            &["--mechanism", "ic-mw", "--epsilon", "1", "--alpha", "1.5"],
            "--alpha 1.5",
        ),
    ];
    for (args, want) in cases {
        let o = release(&d, &[], args);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert!(e.contains(want), "{args:?}: {e}");
        assert!(
            !e.contains("Some(") && !e.contains("Usage("),
            "{args:?}: {e}"
        );
        assert!(!d.join("answers.csv").exists(), "{args:?}: answers written");
    }
}

#[test]
fn quiet_means_nothing_on_stderr_and_progress_is_shown_otherwise() {
    let d = dir("progress");
    let plain = [("DPQR_PROGRESS", "plain")];
    let mwem = ["--mechanism", "mwem", "--epsilon", "1", "--rounds", "10"];
    let mut quiet = mwem.to_vec();
    quiet.push("--quiet");
    let o = release(&d, &plain, &quiet);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o), "", "--quiet wrote to stderr");
    assert!(d.join("answers.csv").exists());

    let o = release(&d, &plain, &mwem);
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("MWEM rounds: 0 of 10 (0%)"), "{e}");
    assert!(e.contains("MWEM rounds: 5 of 10 (50%)\n"), "{e}");
    assert!(e.contains("MWEM rounds: 10 of 10 (100%)\n"), "{e}");
    assert!(!e.contains("ETA"), "progress shows no timing: {e}");
    // progress goes to stderr only: stdout stays the report of the release
    assert!(!stdout(&o).contains("MWEM rounds"), "{}", stdout(&o));

    let o = release(
        &d,
        &plain,
        &[
            "--mechanism",
            "dualquery",
            "--epsilon",
            "1",
            "--rounds",
            "4",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("DualQuery rounds: 4 of 4 (100%)"), "{e}");
    let o = release(
        &d,
        &plain,
        &[
            "--mechanism",
            "dualquery",
            "--epsilon",
            "1",
            "--rounds",
            "4",
            "--quiet",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o), "", "--quiet wrote to stderr");
}
