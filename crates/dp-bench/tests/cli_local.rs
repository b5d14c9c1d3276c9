//! `dpqr release --mechanism local-projection|local-coarse|local-chaining` and `dpqr
//! mechanisms`, through the real binary: the local mechanisms run on bundled data (one
//! simulated client per record), say that their guarantee is local ε-DP (any two inputs of
//! one client), and refuse the central options — a ledger of central spends, --delta /
//! --rho, --neighbouring add-remove — rather than compose a local ε with central ones.

use std::path::PathBuf;
mod common;
use common::{run, stdout, text};

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dpqr-cli-local-{name}-{}", std::process::id()));
    std::fs::remove_dir_all(&d).ok();
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn release(out: &std::path::Path, mechanism: &str, extra: &[&str]) -> std::process::Output {
    let mut a = vec![
        "release",
        "--dataset",
        "nltcs",
        "--workload",
        "all-2way",
        "--mechanism",
        mechanism,
        "--quiet",
        "--seed",
        "7",
        "--out",
        out.to_str().unwrap(),
    ];
    a.extend_from_slice(extra);
    run(&a)
}

#[test]
fn every_local_mechanism_releases_nltcs_and_says_local() {
    let d = dir("run");
    for m in ["local-projection", "local-coarse", "local-chaining"] {
        let out = d.join(format!("{m}.csv"));
        let report = d.join(format!("{m}.json"));
        let o = release(
            &out,
            m,
            &["--epsilon", "2", "--report", report.to_str().unwrap()],
        );
        assert!(o.status.success(), "{m}: {}", text(&o));
        let s = stdout(&o);
        assert!(
            s.contains(&format!(
                "privacy spent: {m}: local ε-DP with ε = 2 (any two inputs of one client)"
            )),
            "{m}: {s}"
        );
        assert!(!s.contains("replace-one"), "{m}: a central relation in {s}");
        let answers = std::fs::read_to_string(&out).unwrap();
        // 120 tables of 4 cells, a header
        assert_eq!(answers.lines().count(), 1 + 120 * 4, "{m}");
        let r: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
        assert_eq!(r["model"], "local", "{m}");
        // the certificate, as central releases write it, in the local model
        assert_eq!(r["certificate"]["model"], "local", "{m}");
        assert_eq!(r["certificate"]["mechanism"], m, "{m}");
        assert_eq!(r["certificate"]["loss"]["Pure"]["epsilon"], 2.0, "{m}");
        assert!(r["certificate"].get("neighbouring").is_none(), "{m}");
        assert_eq!(r["clients"], 21574, "{m}");
    }
}

#[test]
fn the_central_options_are_refused_before_anything_is_written() {
    let d = dir("refuse");
    let out = d.join("a.csv");
    let ledger = d.join("ledger.json");
    let o = run(&["ledger", "init", ledger.to_str().unwrap(), "--epsilon", "5"]);
    assert!(o.status.success(), "{}", text(&o));
    let before = std::fs::read_to_string(&ledger).unwrap();
    for (extra, want) in [
        (
            vec!["--epsilon", "1", "--ledger", ledger.to_str().unwrap()],
            "cannot compose",
        ),
        (
            vec!["--epsilon", "1", "--delta", "1e-9"],
            "does not take --delta",
        ),
        (vec!["--rho", "0.5"], "does not take --delta or --rho"),
        (
            vec!["--epsilon", "1", "--neighbouring", "add-remove"],
            "any two inputs of one client",
        ),
        (
            vec!["--epsilon", "1", "--neighbouring", "replace-one"],
            "drop --neighbouring",
        ),
        (vec!["--epsilon", "0"], "ε"),
        // the clients hold the records: nothing that only counts them can serve a release
        (
            vec!["--epsilon", "1", "--stream"],
            "local-projection needs the records",
        ),
    ] {
        let o = release(&out, "local-projection", &extra);
        assert!(!o.status.success(), "{extra:?}: {}", text(&o));
        let t = text(&o);
        assert!(t.contains(want), "{extra:?}: {t}");
        assert!(!t.contains("Local("), "Debug output: {t}");
        assert!(!out.exists(), "{extra:?} wrote the answers");
    }
    assert_eq!(std::fs::read_to_string(&ledger).unwrap(), before);
}

#[test]
fn dpqr_mechanisms_lists_the_local_model() {
    let o = run(&["mechanisms"]);
    assert!(o.status.success(), "{}", text(&o));
    let s = stdout(&o);
    for m in ["local-projection", "local-coarse", "local-chaining"] {
        let block = s
            .split(&format!("\n{m}\n"))
            .nth(1)
            .unwrap_or_else(|| panic!("{m}: {s}"));
        assert!(block.contains("guarantee:      local ε-DP (any two inputs of one client)"));
    }
    let j = run(&["mechanisms", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&j.stdout).unwrap();
    let locals: Vec<&serde_json::Value> = v
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["model"] == "local")
        .collect();
    assert_eq!(locals.len(), 3);
    assert!(
        locals
            .iter()
            .all(|e| e["neighbouring"] == serde_json::json!([])
                && e["neighbouring_default"].is_null())
    );
}

#[test]
fn a_seeded_local_release_is_reproducible() {
    let d = dir("seed");
    let (a, b) = (d.join("a.csv"), d.join("b.csv"));
    assert!(
        release(&a, "local-projection", &["--epsilon", "1"])
            .status
            .success()
    );
    assert!(
        release(&b, "local-projection", &["--epsilon", "1"])
            .status
            .success()
    );
    assert_eq!(
        std::fs::read_to_string(&a).unwrap(),
        std::fs::read_to_string(&b).unwrap()
    );
}
