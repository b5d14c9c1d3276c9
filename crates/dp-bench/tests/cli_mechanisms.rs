//! `dpqr mechanisms` through the real binary: every mechanism with its guarantee, budget
//! flags, neighbouring relations, synthetic data and domain limits in plain words, the
//! same as JSON with `--json`, and `dpqr release` refusing exactly what the list says a
//! mechanism does not take.

use std::process::Output;
mod common;
use common::run;

/// The `--json` list.
fn listing() -> Vec<serde_json::Value> {
    let o = run(&["mechanisms", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v.as_array().unwrap().clone()
}

fn strings(v: &serde_json::Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn mechanisms_are_listed_in_plain_words() {
    let o = run(&["mechanisms"]);
    assert!(o.status.success());
    let text = String::from_utf8(o.stdout).unwrap();
    let list = listing();
    assert!(list.len() >= 10);
    for m in &list {
        let name = m["name"].as_str().unwrap();
        // the block of this mechanism: from its name line to the next blank line
        let start = text
            .lines()
            .position(|l| l == name)
            .unwrap_or_else(|| panic!("{name} is not listed:\n{text}"));
        let block: Vec<&str> = text
            .lines()
            .skip(start + 1)
            .take_while(|l| !l.is_empty())
            .collect();
        let field = |label: &str| -> String {
            block
                .iter()
                .find_map(|l| l.trim_start().strip_prefix(label))
                .unwrap_or_else(|| panic!("{name}: no {label} line in {block:?}"))
                .trim()
                .to_string()
        };
        assert_eq!(field("what:"), m["description"].as_str().unwrap());
        assert_eq!(field("guarantee:"), m["guarantee"].as_str().unwrap());
        let flags = field("budget flags:");
        for f in strings(&m["budget_flags"]) {
            assert!(flags.contains(&f), "{name}: {flags} lacks {f}");
        }
        let neighbours = field("neighbours:");
        for r in strings(&m["neighbouring"]) {
            assert!(neighbours.contains(&r), "{name}: {neighbours} lacks {r}");
        }
        let synthetic = field("synthetic data:");
        let writes = m["synthetic_data"].as_bool().unwrap();
        assert_eq!(synthetic.starts_with("yes"), writes, "{name}: {synthetic}");
        assert_eq!(synthetic.starts_with("no"), !writes, "{name}: {synthetic}");
        assert_eq!(field("domain:"), m["universe"].as_str().unwrap());
    }
    // plain words: papers by authors and year, no internal labels or Rust Debug output
    assert!(!text.contains("seed 0"), "{text}");
    for debug in ["Zcdp", "ReplaceOne", "AddRemove", "Some(", "{ "] {
        assert!(!text.contains(debug), "{debug} in:\n{text}");
    }
    assert!(text.contains("Błasiok, Bun, Nikolov, Steinke 2019"));
    assert!(text.contains("Hardt, Ligett, McSherry 2012"));
    // what the list says about a few mechanisms, as the JSON gives it
    let by_name = |n: &str| list.iter().find(|m| m["name"] == n).unwrap().clone();
    assert_eq!(
        strings(&by_name("laplace")["budget_flags"]),
        ["--epsilon alone"]
    );
    assert_eq!(
        strings(&by_name("projection")["neighbouring"]),
        ["replace-one"]
    );
    assert_eq!(
        strings(&by_name("adaptive-projection")["neighbouring"]),
        ["replace-one", "add-remove"]
    );
    assert_eq!(by_name("gaussian")["synthetic_data"], false);
    assert_eq!(by_name("dualquery")["synthetic_data"], true);
    // the default relation (issue #23 §3): add/remove wherever it is supported (n stays
    // private), else the one relation listed; by hand for three entries
    for m in list.iter().filter(|m| m["model"] == "central") {
        let relations = strings(&m["neighbouring"]);
        let want = if relations.iter().any(|r| r == "add-remove") {
            "add-remove"
        } else {
            "replace-one"
        };
        assert_eq!(m["neighbouring_default"], want, "{m}");
    }
    assert_eq!(by_name("gaussian")["neighbouring_default"], "add-remove");
    assert_eq!(
        by_name("adaptive-projection")["neighbouring_default"],
        "add-remove"
    );
    assert_eq!(by_name("mwem")["neighbouring_default"], "replace-one");
}

/// `dpqr release` of `mech` on a bundled table with `extra` flags.
fn release(mech: &str, extra: &[&str]) -> Output {
    let d = std::env::temp_dir().join(format!("dpqr-cli-mechanisms-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let out = d.join(format!("{mech}.csv"));
    let mut a = vec![
        "release",
        "--dataset",
        "nltcs",
        "--workload",
        "all-1way",
        "--mechanism",
        mech,
        "--quiet",
        "--seed",
        "1",
        "--out",
        out.to_str().unwrap(),
    ];
    a.extend_from_slice(extra);
    let o = run(&a);
    assert!(
        !out.exists(),
        "{mech} {extra:?}: an answers file was written"
    );
    o
}

#[test]
fn release_refuses_what_the_list_says_a_mechanism_does_not_take() {
    let budgets: [(&str, &[&str]); 3] = [
        ("pure", &["--epsilon", "1"]),
        ("approx", &["--epsilon", "1", "--delta", "1e-9"]),
        ("zcdp", &["--rho", "0.5"]),
    ];
    let mut refusals = 0;
    for m in listing() {
        let name = m["name"].as_str().unwrap();
        let kinds = strings(&m["budget_kinds"]);
        let flags = strings(&m["budget_flags"]);
        let relations = strings(&m["neighbouring"]);
        let accepted: &[&str] = budgets
            .iter()
            .find(|(k, _)| kinds.iter().any(|x| x == k))
            .map(|(_, f)| *f)
            .unwrap();
        for (kind, args) in budgets {
            if kinds.iter().any(|k| k == kind) {
                continue;
            }
            let o = release(name, args);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{name} {kind}: {err}");
            for f in &flags {
                assert!(err.contains(f.as_str()), "{name} {kind}: {err} lacks {f}");
            }
            refusals += 1;
        }
        // a local-model entry lists no relation: --neighbouring is refused whatever its
        // value (tests/cli_local.rs), not pointed to another relation
        for relation in ["replace-one", "add-remove"] {
            if m["model"] == "local" || relations.iter().any(|r| r == relation) {
                continue;
            }
            let mut a = accepted.to_vec();
            a.extend_from_slice(&["--neighbouring", relation]);
            let o = release(name, &a);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{name} {relation}: {err}");
            assert!(
                err.contains(&format!("--neighbouring {}", relations[0])),
                "{name} {relation}: {err}"
            );
            refusals += 1;
        }
        if m["synthetic_data"] == false {
            let mut a = accepted.to_vec();
            a.extend_from_slice(&["--synthetic-out", "/nonexistent-dir/s.csv"]);
            let o = release(name, &a);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{name} synthetic: {err}");
            assert!(err.contains("no synthetic data"), "{name}: {err}");
            refusals += 1;
        }
    }
    assert!(refusals >= 10, "only {refusals} refusals checked");
}

/// One catalogue, one listing: every entry — central or local — has the same keys in
/// `--json`, says its privacy model, and the model decides what it says of neighbours
/// (central: the relations `--neighbouring` takes and the default; local: none).
#[test]
fn local_entries_are_listed_with_the_same_keys_as_central_ones() {
    let list = listing();
    let keys = |m: &serde_json::Value| -> Vec<String> {
        let mut k: Vec<String> = m.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    let first = keys(&list[0]);
    assert!(first.iter().any(|k| k == "model"), "{first:?}");
    let mut models = std::collections::BTreeMap::new();
    for m in &list {
        let name = m["name"].as_str().unwrap();
        assert_eq!(
            keys(m),
            first,
            "{name}: other keys than {}",
            list[0]["name"]
        );
        let model = m["model"].as_str().unwrap();
        *models.entry(model.to_string()).or_insert(0) += 1;
        let relations = strings(&m["neighbouring"]);
        match model {
            "central" => {
                assert!(!relations.is_empty(), "{name}: no relation");
                assert!(m["neighbouring_default"].is_string(), "{name}");
            }
            "local" => {
                assert!(relations.is_empty(), "{name}: {relations:?}");
                assert!(m["neighbouring_default"].is_null(), "{name}");
                assert_eq!(strings(&m["budget_kinds"]), ["pure"], "{name}");
                assert_eq!(m["reads"], "records", "{name}");
            }
            other => panic!("{name}: model {other}"),
        }
    }
    assert_eq!(models.get("local"), Some(&3), "{models:?}");
    assert!(
        models.get("central").is_some_and(|&c| c >= 10),
        "{models:?}"
    );
}
