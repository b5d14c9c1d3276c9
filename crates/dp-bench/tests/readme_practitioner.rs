//! The README's practitioner section ("From a raw CSV to a publishable release", issue #26)
//! run as written through the real `dpqr`: its one ```sh block is read from README.md, each
//! command run in a fresh directory (paths under `data/` made absolute, `> FILE` taken as
//! stdout into FILE), and the outcomes checked against facts of the committed example
//! (data/examples/survey.csv and its reviewed schema), not against dpqr's own output.

mod common;

use common::{DPQR, s, text};
use std::path::{Path, PathBuf};
use std::process::Command;

const HEADING: &str = "## From a raw CSV to a publishable release";

/// The commands of the section's first ```sh block: continuation lines joined, each split
/// into words (the block uses no quotes).
fn practitioner_commands(readme: &str) -> Vec<Vec<String>> {
    let section = readme
        .split_once(HEADING)
        .expect("README has the practitioner section")
        .1;
    let block = section
        .split_once("```sh\n")
        .expect("the section has a sh block")
        .1
        .split_once("```")
        .unwrap()
        .0;
    let joined = block.replace("\\\n", " ");
    joined
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect()
}

struct Step {
    args: Vec<String>,
    stdout_to: Option<PathBuf>,
}

fn step(words: &[String], root: &Path, dir: &Path) -> Step {
    assert_eq!(words[0], "dpqr", "every command runs dpqr: {words:?}");
    let mut args = Vec::new();
    let mut stdout_to = None;
    let mut it = words[1..].iter();
    while let Some(w) = it.next() {
        if w == ">" {
            stdout_to = Some(dir.join(it.next().expect("a file after >")));
        } else if w.starts_with("data/") {
            args.push(s(&root.join(w)).to_string());
        } else {
            args.push(w.clone());
        }
    }
    Step { args, stdout_to }
}

/// The CSV's header and rows.
fn csv_rows(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let header = reader
        .headers()
        .unwrap()
        .iter()
        .map(str::to_string)
        .collect();
    let rows = reader
        .records()
        .map(|r| r.unwrap().iter().map(str::to_string).collect())
        .collect();
    (header, rows)
}

#[test]
fn readme_practitioner_path_runs_as_written() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let commands = practitioner_commands(&readme);
    let kinds: Vec<String> = commands
        .iter()
        .map(|c| {
            let dry = c.iter().any(|w| w == "--dry-run");
            format!("{}{}", c[1..3].join(" "), if dry { " dry" } else { "" })
        })
        .collect();
    // the issue's sequence: draft → check → (ledger) → dry run → release → eval of both
    assert_eq!(
        kinds,
        [
            "schema draft",
            "schema check",
            "ledger init",
            "release --dry-run dry",
            "release --data",
            "eval --data",
            "eval --data",
        ],
        "{commands:?}"
    );
    let dir = common::fresh_dir("readme", "practitioner");
    let mut outputs = Vec::new();
    for words in &commands {
        let st = step(words, &root, &dir);
        let out = Command::new(DPQR)
            .args(&st.args)
            .current_dir(&dir)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{words:?}\n{}", text(&out));
        if let Some(file) = &st.stdout_to {
            std::fs::write(file, &out.stdout).unwrap();
        }
        outputs.push(out);
    }
    let stdout = |i: usize| String::from_utf8_lossy(&outputs[i].stdout).into_owned();
    let stderr = |i: usize| String::from_utf8_lossy(&outputs[i].stderr).into_owned();

    // draft: NON-PRIVATE, and the raw labels of the file are in it, near-misses included
    let draft = std::fs::read_to_string(dir.join("draft.json")).unwrap();
    assert!(stderr(0).contains("NON-PRIVATE"), "{}", stderr(0));
    for label in ["\" south\"", "\"North\"", "\"islands\"", "\"name\""] {
        assert!(draft.contains(label), "{label} in {draft}");
    }

    // check: counted here from the file itself
    let (header, rows) = csv_rows(&root.join("data/examples/survey.csv"));
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let count =
        |name: &str, f: &dyn Fn(&str) -> bool| rows.iter().filter(|r| f(&r[col(name)])).count();
    let empty_age = count("age", &|v| v.is_empty());
    let spaced = count("region", &|v| v != v.trim());
    let cased = count("region", &|v| v == "North");
    assert!(empty_age > 0 && spaced > 0 && cased > 0);
    let check = stdout(1);
    assert!(stderr(1).contains("NON-PRIVATE"), "{}", stderr(1));
    assert!(
        check.contains(&format!("{empty_age} empty → missing")),
        "{check}"
    );
    assert!(
        check.contains(&format!("a label with spaces around it: {spaced}"))
            && check.contains(&format!("a label in another case: {cased}")),
        "{check}"
    );
    assert!(check.contains("'name' — ignored"), "{check}");
    assert!(
        check.contains(&format!("{} records", rows.len())),
        "{check}"
    );

    // dry run: auto chose adaptive-projection and printed its noise schedule (σ)
    let dry = stdout(3);
    assert!(dry.contains("auto chose adaptive-projection"), "{dry}");
    assert!(
        dry.contains("noise schedule") && dry.contains("σ = "),
        "{dry}"
    );

    // release: the report names adaptive-projection; the answers are labelled with counts
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    assert!(
        report.to_string().contains("adaptive-projection"),
        "{report}"
    );
    let (aheader, arows) = csv_rows(&dir.join("answers.csv"));
    assert_eq!(aheader, ["marginal", "cell", "answer", "label", "count"]);
    // all 2-way tables of region (4 + other), sex (2), age (4 + missing), employment
    // (4 + missing + other), income (5 + missing + other): the schema's sizes 5, 2, 5, 6, 7
    let sizes = [5usize, 2, 5, 6, 7];
    let cells: usize = (0..5)
        .flat_map(|i| (i + 1..5).map(move |j| (i, j)))
        .map(|(i, j)| sizes[i] * sizes[j])
        .sum();
    assert_eq!(arows.len(), cells);
    assert!(arows.iter().any(|r| r[3] == "region=north|sex=female"));
    assert!(arows.iter().any(|r| r[3] == "age=[25,45)|income=missing"));
    for r in &arows {
        let (p, c): (f64, f64) = (r[2].parse().unwrap(), r[4].parse().unwrap());
        assert!(p.is_finite() && c.is_finite(), "{r:?}");
    }

    // synthetic: 400 rows, the input's columns but name, labels and numbers
    let (sheader, srows) = csv_rows(&dir.join("synthetic.csv"));
    assert_eq!(sheader, ["region", "sex", "age", "employment", "income"]);
    assert_eq!(srows.len(), 400);
    for r in &srows {
        assert!(
            ["north", "south", "east", "west", "other"].contains(&r[0].as_str()),
            "{r:?}"
        );
        assert!(["female", "male"].contains(&r[1].as_str()), "{r:?}");
        assert!(
            r[2].is_empty() || (15.0..=100.0).contains(&r[2].parse::<f64>().unwrap()),
            "{r:?}"
        );
        assert!(
            ["employed", "unemployed", "student", "retired", "other", ""].contains(&r[3].as_str()),
            "{r:?}"
        );
        assert!(
            r[4].is_empty()
                || r[4] == "other"
                || (0.0..=1e6).contains(&r[4].parse::<f64>().unwrap()),
            "{r:?}"
        );
    }
    assert!(
        srows.iter().any(|r| r[2].contains('.')),
        "ages drawn within bins"
    );

    // eval: both scored, beside the uniform baseline
    for (i, what) in [(5, "released"), (6, "synthetic")] {
        let e = stdout(i);
        assert!(e.contains(&format!("(scored: {what} answers)")), "{e}");
        assert!(
            e.contains("mean_marginal_l1") && e.contains("uniform"),
            "{e}"
        );
        assert!(stderr(i).contains("NON-PRIVATE"), "{}", stderr(i));
    }
    std::fs::remove_dir_all(&dir).ok();
}
