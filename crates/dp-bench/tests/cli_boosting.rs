//! `dpqr release --mechanism boosting` through the real binary (issue #12): it runs on the
//! bundled binary data (nltcs) with `--rounds`, reports its accounting in plain words with
//! short numbers, and refuses pure ε, zero rounds and categorical attributes (exit 2,
//! nothing written).

mod common;
use common::{fresh_dir, run, s, stderr, stdout, text};

#[test]
fn boosting_releases_nltcs_and_reports_its_accounting() {
    let d = fresh_dir("boosting", "ok");
    let (out, report) = (d.join("a.csv"), d.join("r.json"));
    let o = run(&[
        "release",
        "--dataset",
        "nltcs",
        "--workload",
        "all-2way",
        "--mechanism",
        "boosting",
        "--rho",
        "0.5",
        "--rounds",
        "3",
        "--out",
        s(&out),
        "--report",
        s(&report),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let answers = std::fs::read_to_string(&out).unwrap();
    // 120 tables of 4 cells and a header
    assert_eq!(answers.lines().count(), 481, "{answers}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(report["certificate"]["mechanism"], "boosting");
    let notes = report["diagnostics"]["notes"].to_string();
    assert!(notes.contains("Dwork, Rothblum, Vadhan 2010"), "{notes}");
    assert!(notes.contains("T = 3 rounds"), "{notes}");
    let out_text = stdout(&o);
    assert!(
        out_text.contains("ρ = 0.5 split into 0.15 for sampling"),
        "{out_text}"
    );
    assert!(
        !out_text.contains("Some(") && !out_text.contains("99999"),
        "{out_text}"
    );
}

#[test]
fn boosting_refusals_are_usage_errors_in_plain_words() {
    let d = fresh_dir("boosting", "refusals");
    let out = d.join("a.csv");
    let base = [
        "release",
        "--workload",
        "all-2way",
        "--mechanism",
        "boosting",
        "--out",
        s(&out),
    ];
    let cases: [(&[&str], &str); 3] = [
        (&["--dataset", "nltcs", "--epsilon", "1"], "pure ε"),
        (
            &["--dataset", "nltcs", "--rho", "1", "--rounds", "0"],
            "--rounds 0",
        ),
        (&["--dataset", "adult", "--rho", "1"], "one-hot encode"),
    ];
    for (extra, expected) in cases {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        let o = run(&args);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        let err = stderr(&o);
        assert!(err.contains(expected), "{extra:?}: {err}");
        assert!(!out.exists(), "{extra:?} wrote {}", out.display());
    }
}
