//! The practitioner's outputs through the real `dpqr` binary (issue #26 §1–2): answers
//! labelled through the schema with counts beside the proportions (the counts scaled by
//! the public n under replace-one and by the release's own published total under
//! add/remove), the schema in the report, `dpqr eval` reading labelled and plain answers
//! alike, and synthetic data in the input's form — a bin's value drawn within the bin —
//! as weighted records or as exactly `--rows N` plain rows, read back through the schema
//! as the codes that were released.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

mod common;
use common::{fresh_dir, largest_remainder, run, s, stdout, text};

/// A schema like the Titanic table's, over raw values: labels, bins (the last closed),
/// `other` buckets, an attribute of integer codes, and awkward characters in a label.
const SCHEMA: &str = r#"{
  "class":  {"labels": ["1st", "2nd", "3rd"]},
  "sex":    {"labels": ["female", "male"]},
  "age":    {"bins": [0, 18, 30, 65, 120], "other": true},
  "port":   {"labels": ["Cherbourg", "Queens|town=Cobh", "South,ampton"], "other": true},
  "fare":   {"bins": [0, 10.5, 50, 600]},
  "alone":  2
}"#;

/// 240 raw records, in another column order than the schema, with empty fields, values on
/// the edges, the last edge (closed) and values outside the bins.
fn raw_data() -> String {
    let classes = ["1st", "2nd", "3rd", "3rd"];
    let ages = [
        "0", "17.5", "18", "29", "30", "64.9", "65", "120", "", "44", "130",
    ];
    let ports = [
        "Cherbourg",
        "\"Queens|town=Cobh\"",
        "\"South,ampton\"",
        "\"South,ampton\"",
        "Belfast",
    ];
    let fares = ["0", "7.25", "10.5", "49.99", "50", "512.3", "600", "8.05"];
    let mut csv = String::from("fare,alone,port,age,sex,class\n");
    for i in 0..240 {
        csv.push_str(&format!(
            "{},{},{},{},{},{}\n",
            fares[(i * 3) % fares.len()],
            i % 2,
            ports[(i * 7 / 3) % ports.len()],
            ages[(i * 5) % ages.len()],
            if i % 3 == 0 { "male" } else { "female" },
            classes[(i / 2) % classes.len()]
        ));
    }
    csv
}

const N: usize = 240;

/// The schema, the raw data and the output directory of one test.
struct Files {
    dir: PathBuf,
    schema: PathBuf,
    data: PathBuf,
}

fn files(name: &str) -> Files {
    let dir = fresh_dir("labelled", name);
    let schema = dir.join("schema.json");
    let data = dir.join("raw.csv");
    std::fs::write(&schema, SCHEMA).unwrap();
    std::fs::write(&data, raw_data()).unwrap();
    Files { dir, schema, data }
}

/// `dpqr release` on the raw data through the schema, seeded, with `extra` flags.
fn release(f: &Files, mechanism: &str, budget: &[&str], extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "release",
        "--data",
        s(&f.data),
        "--domain",
        s(&f.schema),
        "--workload",
        "all-2way",
        "--mechanism",
        mechanism,
        "--seed",
        "17",
        "--quiet",
    ];
    args.extend_from_slice(budget);
    args.extend_from_slice(extra);
    run(&args)
}

/// The header and records of a CSV file.
fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut r = csv::Reader::from_path(path).unwrap();
    let header = r.headers().unwrap().iter().map(str::to_string).collect();
    let rows = r
        .records()
        .map(|rec| rec.unwrap().iter().map(str::to_string).collect())
        .collect();
    (header, rows)
}

/// The test's own reading of one attribute of [`SCHEMA`].
enum Attr {
    Labels(Vec<&'static str>, bool),
    Bins(Vec<f64>, bool),
    Codes(u32),
}

fn schema() -> BTreeMap<&'static str, Attr> {
    BTreeMap::from([
        ("class", Attr::Labels(vec!["1st", "2nd", "3rd"], false)),
        ("sex", Attr::Labels(vec!["female", "male"], false)),
        ("age", Attr::Bins(vec![0.0, 18.0, 30.0, 65.0, 120.0], true)),
        (
            "port",
            Attr::Labels(vec!["Cherbourg", "Queens|town=Cobh", "South,ampton"], true),
        ),
        ("fare", Attr::Bins(vec![0.0, 10.5, 50.0, 600.0], false)),
        ("alone", Attr::Codes(2)),
    ])
}

impl Attr {
    /// The name of `code` in a `label` field, escaped (`\`, `|`, `=` by a backslash).
    fn label(&self, code: usize) -> String {
        let name = match self {
            Attr::Labels(l, _) if code < l.len() => l[code].to_string(),
            Attr::Bins(e, _) if code + 1 < e.len() => format!(
                "[{},{}{}",
                e[code],
                e[code + 1],
                if code + 2 == e.len() { ']' } else { ')' }
            ),
            Attr::Codes(_) => code.to_string(),
            _ => "other".to_string(),
        };
        escape(&name)
    }

    /// The code of a raw field (panics outside a schema without `other`).
    fn code(&self, field: &str) -> u32 {
        match self {
            Attr::Codes(n) => {
                let c: u32 = field.parse().unwrap();
                assert!(c < *n);
                c
            }
            Attr::Labels(l, other) => match l.iter().position(|x| *x == field) {
                Some(i) => i as u32,
                None => {
                    assert!(*other, "{field}");
                    l.len() as u32
                }
            },
            Attr::Bins(e, other) => {
                let k = e.len() - 1;
                let bin = field.trim().parse::<f64>().ok().and_then(|v| {
                    (0..k).find(|&i| v >= e[i] && (v < e[i + 1] || (i + 1 == k && v == e[k])))
                });
                match bin {
                    Some(i) => i as u32,
                    None => {
                        assert!(*other, "{field}");
                        k as u32
                    }
                }
            }
        }
    }
}

fn escape(text: &str) -> String {
    let mut out = String::new();
    for ch in text.chars() {
        if matches!(ch, '\\' | '|' | '=') {
            out.push('\\');
        }
        out.push(ch);
    }
    out
}

/// The report JSON.
fn report(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Check every row of a labelled answers file: the label names the cell's codes through
/// the schema, and the count is exactly `answer × total` (as written: shortest round-trip
/// decimals).
fn check_labelled(path: &Path, total: f64) {
    let (header, rows) = read_csv(path);
    assert_eq!(header, ["marginal", "cell", "answer", "label", "count"]);
    let schema = schema();
    assert!(!rows.is_empty());
    for r in &rows {
        let names: Vec<&str> = r[0].split('|').collect();
        let codes: Vec<usize> = r[1].split('|').map(|c| c.parse().unwrap()).collect();
        let want: Vec<String> = names
            .iter()
            .zip(&codes)
            .map(|(n, &c)| format!("{}={}", escape(n), schema[n].label(c)))
            .collect();
        assert_eq!(r[3], want.join("|"), "{r:?}");
        let answer: f64 = r[2].parse().unwrap();
        let count: f64 = r[4].parse().unwrap();
        assert_eq!(count, answer * total, "{r:?}");
    }
    // the awkward label is escaped, and the comma left to CSV quoting
    assert!(
        rows.iter()
            .any(|r| r[3] == "class=1st|port=Queens\\|town\\=Cobh"),
        "{rows:?}"
    );
    let raw = std::fs::read_to_string(path).unwrap();
    assert!(raw.contains("\"class=3rd|port=South,ampton\""), "{raw}");
}

#[test]
fn labelled_answers_with_counts_under_replace_one_and_eval_reads_both_forms() {
    let f = files("replace-one");
    let (labelled, plain, rep) = (
        f.dir.join("labelled.csv"),
        f.dir.join("plain.csv"),
        f.dir.join("report.json"),
    );
    let budget = ["--epsilon", "1"];
    let o = release(
        &f,
        "mwem",
        &budget,
        &["--out", s(&labelled), "--report", s(&rep)],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        stdout(&o).contains(&format!("counts = answer × n = {N}")),
        "{}",
        text(&o)
    );
    let r = report(&rep);
    assert_eq!(r["n"], N);
    assert_eq!(r["counts"]["total"], N as f64);
    assert!(r["counts"]["source"].as_str().unwrap().contains("public"));
    // the schema in the report: names, encodings, labels, bins, other buckets
    let attrs = r["schema"].as_array().unwrap();
    let names: Vec<&str> = attrs.iter().map(|a| a["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["class", "sex", "age", "port", "fare", "alone"]);
    assert_eq!(attrs[2]["encoding"], "bins");
    assert_eq!(
        attrs[2]["bins"],
        serde_json::json!([0.0, 18.0, 30.0, 65.0, 120.0])
    );
    assert_eq!(attrs[2]["other"], "other");
    assert_eq!(attrs[3]["labels"][1], "Queens|town=Cobh");
    assert_eq!(attrs[5]["encoding"], "codes");
    assert_eq!(attrs[5]["size"], 2);
    check_labelled(&labelled, N as f64);

    // the same release (same seed) in the plain form: the same three first columns
    let o = release(
        &f,
        "mwem",
        &budget,
        &["--out", s(&plain), "--answers-form", "codes"],
    );
    assert!(o.status.success(), "{}", text(&o));
    let (ph, prows) = read_csv(&plain);
    assert_eq!(ph, ["marginal", "cell", "answer"]);
    let (_, lrows) = read_csv(&labelled);
    assert_eq!(
        prows,
        lrows.iter().map(|r| r[..3].to_vec()).collect::<Vec<_>>()
    );

    // dpqr eval reads both forms and scores them alike
    let eval = |answers: &Path| {
        let o = run(&[
            "eval",
            "--json",
            "--data",
            s(&f.data),
            "--domain",
            s(&f.schema),
            "--answers",
            s(answers),
        ]);
        assert!(o.status.success(), "{}", text(&o));
        serde_json::from_slice::<Value>(&o.stdout).unwrap()
    };
    let (a, b) = (eval(&labelled), eval(&plain));
    assert!(a["max_abs"].as_f64().unwrap() > 0.0, "{a}");
    assert_eq!(a, b);

    // a labelled file whose label names other attributes is refused, naming the line
    let bad = std::fs::read_to_string(&labelled).unwrap().replacen(
        "class=1st|sex=female",
        "sex=female|class=1st",
        1,
    );
    let bad_path = f.dir.join("bad.csv");
    std::fs::write(&bad_path, bad).unwrap();
    let o = run(&[
        "eval",
        "--data",
        s(&f.data),
        "--domain",
        s(&f.schema),
        "--answers",
        s(&bad_path),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        common::stderr(&o).contains("line 2") && common::stderr(&o).contains("in order"),
        "{}",
        text(&o)
    );
}

#[test]
fn under_add_remove_counts_are_the_release_s_own_total_never_n() {
    for (mechanism, budget) in [
        ("gaussian", ["--rho", "0.5"]),
        ("adaptive-projection", ["--rho", "2"]),
    ] {
        let f = files(mechanism);
        let (answers, rep) = (f.dir.join("a.csv"), f.dir.join("r.json"));
        let o = release(
            &f,
            mechanism,
            &budget,
            &[
                "--neighbouring",
                "add-remove",
                "--out",
                s(&answers),
                "--report",
                s(&rep),
            ],
        );
        assert!(o.status.success(), "{mechanism}: {}", text(&o));
        let r = report(&rep);
        // n is private: not in the report; the total is the release's own estimate, as
        // published in its diagnostics
        assert!(r.get("n").is_none(), "{r}");
        let total = r["counts"]["total"].as_f64().unwrap();
        assert_eq!(
            r["diagnostics"]["estimated_total"].as_f64(),
            Some(total),
            "{mechanism}: {r}"
        );
        assert_ne!(
            total, N as f64,
            "{mechanism}: the total is a noisy estimate"
        );
        assert!(
            r["counts"]["source"]
                .as_str()
                .unwrap()
                .contains("private n is not used"),
            "{r}"
        );
        assert!(
            stdout(&o).contains("own estimate of the total"),
            "{}",
            text(&o)
        );
        // every count is exactly the published answer times the published total: a
        // function of what the release publishes, nothing more
        check_labelled(&answers, total);
    }
}

/// The rows of a synthetic file as codes through the test's own reading of the schema,
/// counted per record.
fn codes_of(header: &[String], rows: &[Vec<String>]) -> BTreeMap<Vec<u32>, u64> {
    let schema = schema();
    let mut out = BTreeMap::new();
    for r in rows {
        let codes: Vec<u32> = schema
            .iter()
            .map(|(name, attr)| {
                let j = header.iter().position(|h| h == name).unwrap();
                attr.code(&r[j])
            })
            .collect();
        *out.entry(codes).or_default() += 1;
    }
    out
}

/// Every field of a synthetic file is in the input's form: a label (or `other`), a number
/// inside its bin written with a decimal point or an exponent, a code.
fn check_values(header: &[String], rows: &[Vec<String>]) {
    let schema = schema();
    for r in rows {
        for (name, attr) in &schema {
            let field = &r[header.iter().position(|h| h == name).unwrap()];
            match attr {
                Attr::Labels(l, _) => {
                    assert!(l.contains(&field.as_str()) || field == "other", "{field}")
                }
                Attr::Bins(..) if field == "other" => {}
                Attr::Bins(..) => {
                    assert!(field.contains(['.', 'e']), "{name}: {field}");
                    field.parse::<f64>().unwrap();
                }
                Attr::Codes(_) => assert!(field == "0" || field == "1", "{field}"),
            }
        }
    }
}

#[test]
fn synthetic_rows_in_the_input_s_form_read_back_as_the_released_codes() {
    let f = files("rows");
    let (weighted, rows) = (f.dir.join("weighted.csv"), f.dir.join("rows.csv"));
    let budget = ["--epsilon", "2"];
    let o = release(
        &f,
        "mwem",
        &budget,
        &[
            "--out",
            s(&f.dir.join("a1.csv")),
            "--synthetic-out",
            s(&weighted),
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        stdout(&o).contains("drawn uniformly within its bin"),
        "{}",
        text(&o)
    );
    const ROWS: u64 = 1001;
    let o = release(
        &f,
        "mwem",
        &budget,
        &[
            "--out",
            s(&f.dir.join("a2.csv")),
            "--synthetic-out",
            s(&rows),
            "--rows",
            &ROWS.to_string(),
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        stdout(&o).contains(&format!("wrote {ROWS} synthetic rows")),
        "{}",
        text(&o)
    );
    // exactly N rows, the schema's columns and no weight column
    let (wh, wrows) = read_csv(&weighted);
    let (rh, rrows) = read_csv(&rows);
    assert_eq!(rrows.len() as u64, ROWS);
    assert_eq!(rh, ["class", "sex", "age", "port", "fare", "alone"]);
    assert_eq!(wh.last().map(String::as_str), Some("weight"));
    check_values(&wh, &wrows);
    check_values(&rh, &rrows);
    // values drawn within bins, not one per bin
    let ages: std::collections::BTreeSet<&str> = rrows.iter().map(|r| r[2].as_str()).collect();
    assert!(ages.len() > 20, "{ages:?}");
    // the rows per cell are the largest-remainder expansion of the released weights (the
    // same seed releases the same records)
    let weights: Vec<f64> = wrows
        .iter()
        .map(|r| r.last().unwrap().parse().unwrap())
        .collect();
    let mut want: BTreeMap<Vec<u32>, u64> = BTreeMap::new();
    for (record, count) in wrows.iter().zip(largest_remainder(&weights, ROWS)) {
        if count > 0 {
            let one = codes_of(&wh, std::slice::from_ref(record));
            for k in one.into_keys() {
                *want.entry(k).or_default() += count;
            }
        }
    }
    assert_eq!(codes_of(&rh, &rrows), want);

    // dpqr reads both files back through the schema as those codes: the weighted file's
    // answers are the release's; the rows' are within one row per record of them
    let o = run(&[
        "eval",
        "--json",
        "--data",
        s(&weighted),
        "--domain",
        s(&f.schema),
        "--answers",
        s(&f.dir.join("a1.csv")),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let scored: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(scored["max_abs"].as_f64().unwrap() < 1e-12, "{scored}");
    let o = run(&[
        "eval",
        "--json",
        "--data",
        s(&rows),
        "--domain",
        s(&f.schema),
        "--synthetic",
        s(&weighted),
        "--workload",
        "all-2way",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let scored: Value = serde_json::from_slice(&o.stdout).unwrap();
    let bound = wrows.len() as f64 / ROWS as f64;
    assert!(scored["max_abs"].as_f64().unwrap() <= bound, "{scored}");
}

#[test]
fn bad_rows_and_forms_are_clear_errors() {
    let f = files("bad");
    let out = f.dir.join("a.csv");
    let syn = f.dir.join("s.csv");
    for (extra, want) in [
        (vec!["--rows", "10"], "--synthetic-out"),
        (vec!["--rows", "0", "--synthetic-out", s(&syn)], "--rows"),
        (vec!["--rows", "-3", "--synthetic-out", s(&syn)], "--rows"),
        (vec!["--answers-form", "fancy"], "--answers-form"),
    ] {
        let mut args = vec!["--out", s(&out)];
        args.extend(extra.iter().copied());
        let o = release(&f, "mwem", &["--epsilon", "1"], &args);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", text(&o));
        assert!(common::stderr(&o).contains(want), "{extra:?}: {}", text(&o));
        assert!(!out.exists() && !syn.exists());
    }
    // a mechanism without synthetic data refuses --rows with --synthetic-out up front
    let o = release(
        &f,
        "gaussian",
        &["--rho", "1"],
        &["--out", s(&out), "--synthetic-out", s(&syn), "--rows", "5"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        common::stderr(&o).contains("no synthetic data"),
        "{}",
        text(&o)
    );
    // the local-model mechanisms write codes: asking them for labels is refused by name
    let o = release(
        &f,
        "local-projection",
        &["--epsilon", "1"],
        &["--out", s(&out), "--answers-form", "labelled"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        common::stderr(&o).contains("--answers-form labelled"),
        "{}",
        text(&o)
    );
    assert!(!out.exists());
    // labelled answers of a workload of another query class are refused by name
    let wl = f.dir.join("conj.json");
    std::fs::write(
        &wl,
        r#"{"class": "conjunctions", "queries": [{"sex": 1}, {"class": 2}]}"#,
    )
    .unwrap();
    let mut args = vec![
        "release",
        "--data",
        s(&f.data),
        "--domain",
        s(&f.schema),
        "--workload",
        s(&wl),
        "--mechanism",
        "gaussian",
        "--rho",
        "1",
        "--answers-form",
        "labelled",
        "--out",
        s(&out),
    ];
    args.push("--quiet");
    let o = run(&args);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        common::stderr(&o).contains("--answers-form labelled names the cells of marginal"),
        "{}",
        text(&o)
    );
    assert!(!out.exists());
}

#[test]
fn a_bundled_table_of_codes_is_labelled_on_request() {
    // the bundled tables have domains of integer codes: plain answers by default, labelled
    // with --answers-form labelled (each value its code), counts by the public n
    let d = fresh_dir("labelled", "bundled");
    let (plain, labelled, rep) = (d.join("p.csv"), d.join("l.csv"), d.join("r.json"));
    let go = |out: &Path, extra: &[&str]| {
        let mut args = vec![
            "release",
            "--dataset",
            "titanic",
            "--workload",
            "random-2way:3",
            "--mechanism",
            "gaussian",
            "--rho",
            "1",
            "--neighbouring",
            "replace-one",
            "--seed",
            "2",
            "--quiet",
            "--out",
            s(out),
        ];
        args.extend_from_slice(extra);
        let o = run(&args);
        assert!(o.status.success(), "{}", text(&o));
    };
    go(&plain, &[]);
    go(
        &labelled,
        &["--answers-form", "labelled", "--report", s(&rep)],
    );
    let (ph, prows) = read_csv(&plain);
    assert_eq!(ph, ["marginal", "cell", "answer"]);
    let (lh, lrows) = read_csv(&labelled);
    assert_eq!(lh, ["marginal", "cell", "answer", "label", "count"]);
    let n = report(&rep)["n"].as_f64().unwrap();
    assert_eq!(n, 1304.0);
    for (p, l) in prows.iter().zip(&lrows) {
        assert_eq!(p[..], l[..3]);
        let want: Vec<String> = l[0]
            .split('|')
            .zip(l[1].split('|'))
            .map(|(name, code)| format!("{name}={code}"))
            .collect();
        assert_eq!(l[3], want.join("|"));
        assert_eq!(
            l[4].parse::<f64>().unwrap(),
            l[2].parse::<f64>().unwrap() * n
        );
    }
}
