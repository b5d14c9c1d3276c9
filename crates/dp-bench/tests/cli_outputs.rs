//! The files `dpqr release` writes, through the real binary (issue #11 §2, "Safe outputs"):
//!
//! * every output (answers, `--report`, `--synthetic-out`) is replaced atomically — a
//!   reader polling the file while releases run sees the old file or a complete new one,
//!   never a partial write — and no temporary file is left behind;
//! * two outputs naming the same file (also through `..` or `./`), or an output naming an
//!   input, are refused up front;
//! * an output that cannot be written (missing directory, a file where a directory should
//!   be, a directory that refuses new files) is refused before the data is read, a spend is
//!   recorded in the ledger or noise is drawn, and no existing output is touched;
//! * attribute names holding `,`, `|`, `\` or quotes round-trip through the answers CSV
//!   (read back by `dpqr eval`) and the synthetic CSV, and an attribute called `weight`
//!   does not clash with the synthetic weight column.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
mod common;
use common::{run, s, text};

/// A fresh directory with `d.csv` (100 records over a: 3, b: 2) and its domain `d.json`.
fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dpqr-cli-out-{name}-{}", std::process::id()));
    std::fs::remove_dir_all(&d).ok();
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("d.json"), r#"{"a": 3, "b": 2}"#).unwrap();
    let mut csv = String::from("a,b\n");
    for i in 0..100 {
        csv.push_str(&format!("{},{}\n", i % 3, i % 2));
    }
    std::fs::write(d.join("d.csv"), csv).unwrap();
    d
}

/// `dpqr release` of all 2-way marginals of `csv` in `d` (domain `d.json`) with
/// `mechanism` at ε = 1, seeded, plus `extra`.
fn release(d: &Path, csv: &str, mechanism: &str, extra: &[&str]) -> Output {
    let (data, domain) = (d.join(csv), d.join("d.json"));
    let mut a = vec![
        "release",
        "--data",
        s(&data),
        "--domain",
        s(&domain),
        "--workload",
        "all-2way",
        "--mechanism",
        mechanism,
        "--epsilon",
        "1",
        "--seed",
        "1",
        "--quiet",
    ];
    a.extend_from_slice(extra);
    run(&a)
}

/// Names of the files in `d`, sorted.
fn listing(d: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Spends recorded in a ledger file (read as JSON, without the lock).
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
fn outputs_are_replaced_whole_and_leave_no_temporary_file() {
    let d = dir("atomic");
    // a: 1000, b: 300 — all 2-way marginals are 300 000 cells (several MB of answers), so
    // a non-atomic write is visible half-done to a reader polling the file
    std::fs::write(d.join("big.json"), r#"{"a": 1000, "b": 300}"#).unwrap();
    std::fs::write(d.join("big.csv"), "a,b\n1,2\n3,4\n5,6\n").unwrap();
    let out = d.join("answers.csv");
    std::fs::write(&out, "old\n").unwrap();
    let rows = 1000 * 300 + 1;
    let stop = Arc::new(AtomicBool::new(false));
    let seen = Arc::new(Mutex::new((0usize, 0usize, Vec::<String>::new())));
    let reader = {
        let (stop, seen, out) = (Arc::clone(&stop), Arc::clone(&seen), out.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let Ok(text) = std::fs::read_to_string(&out) else {
                    continue;
                };
                let mut g = seen.lock().unwrap();
                if text == "old\n" {
                    g.0 += 1;
                } else if text.lines().count() == rows
                    && text.ends_with('\n')
                    && text
                        .lines()
                        .last()
                        .is_some_and(|l| l.starts_with("a|b,999|299,"))
                {
                    g.1 += 1;
                } else if g.2.len() < 3 {
                    // a partial file: its size and last line
                    g.2.push(format!(
                        "{} bytes, {} lines, last {:?}",
                        text.len(),
                        text.lines().count(),
                        text.lines().last()
                    ));
                }
            }
        })
    };
    for seed in ["1", "2", "3"] {
        let o = run(&[
            "release",
            "--data",
            s(&d.join("big.csv")),
            "--domain",
            s(&d.join("big.json")),
            "--workload",
            "all-2way",
            "--mechanism",
            "laplace",
            "--epsilon",
            "1",
            "--seed",
            seed,
            "--quiet",
            "--out",
            s(&out),
            "--report",
            s(&d.join("r.json")),
        ]);
        assert!(o.status.success(), "{}", text(&o));
    }
    stop.store(true, Ordering::Relaxed);
    reader.join().unwrap();
    let (old, new, partial) = seen.lock().unwrap().clone();
    assert!(
        partial.is_empty(),
        "a reader saw partial answers: {partial:?}"
    );
    assert!(old + new > 0, "the reader never read the file");
    // nothing but the inputs and the two outputs: no temporary file left behind
    assert_eq!(
        listing(&d),
        [
            "answers.csv",
            "big.csv",
            "big.json",
            "d.csv",
            "d.json",
            "r.json"
        ]
    );
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn outputs_naming_one_file_are_refused_up_front() {
    let d = dir("same");
    let ledger = d.join("ledger.json");
    let o = run(&["ledger", "init", s(&ledger), "--epsilon", "5"]);
    assert!(o.status.success(), "{}", text(&o));
    let out = d.join("answers.csv");
    std::fs::write(&out, "old\n").unwrap();
    std::fs::create_dir_all(d.join("sub")).unwrap();
    let dotted = d.join("sub").join("..").join("answers.csv");
    let data = d.join("d.csv");
    let l = s(&ledger);
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--out", s(&out), "--report", s(&out)], "--report"),
        (vec!["--out", s(&out), "--report", s(&dotted)], "--report"),
        (
            vec!["--out", s(&out), "--synthetic-out", s(&dotted)],
            "--synthetic-out",
        ),
        (vec!["--out", s(&data)], "the input --data"),
        (vec!["--out", l], "the input --ledger"),
    ];
    for (extra, want) in cases {
        let mut args = extra.clone();
        args.extend_from_slice(&["--ledger", l]);
        // synthetic output needs a mechanism that makes synthetic data
        let mechanism = if extra.contains(&"--synthetic-out") {
            "mwem"
        } else {
            "laplace"
        };
        let o = release(&d, "d.csv", mechanism, &args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", text(&o));
        assert!(
            err.contains(want) && err.contains("same file"),
            "{extra:?}: {err}"
        );
        assert_eq!(recorded(&ledger), 0, "{extra:?}: a spend was recorded");
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "old\n", "{extra:?}");
    }
    // the data is intact
    assert!(
        std::fs::read_to_string(&data)
            .unwrap()
            .starts_with("a,b\n0,0\n")
    );
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn unwritable_outputs_are_refused_before_data_ledger_or_noise() {
    let d = dir("unwritable");
    let ledger = d.join("ledger.json");
    let o = run(&["ledger", "init", s(&ledger), "--epsilon", "5"]);
    assert!(o.status.success(), "{}", text(&o));
    // data that fails to load: an output error must come first, so the data is not read
    std::fs::write(d.join("bad.csv"), "a,b\n0,0\n7,1\n").unwrap();
    let out = d.join("answers.csv");
    std::fs::write(&out, "old\n").unwrap();
    let a_file = d.join("a-file");
    std::fs::write(&a_file, "").unwrap();
    let missing = d.join("missing").join("r.json");
    let under_file = a_file.join("r.json");
    let mut cases: Vec<(PathBuf, &str)> = vec![
        (missing, "does not exist"),
        (under_file, "not a directory"),
        (d.join("sub-dir"), "is a directory"),
    ];
    std::fs::create_dir_all(d.join("sub-dir")).unwrap();
    // a directory that refuses new files (sysfs is read-only, even for root); the case is
    // skipped where it accepts them
    if std::fs::write("/sys/dpqr-write-probe", "").is_err() {
        cases.push((
            PathBuf::from("/sys/dpqr-report.json"),
            "cannot create a file",
        ));
    }
    for (report, want) in &cases {
        let o = release(
            &d,
            "bad.csv",
            "laplace",
            &[
                "--out",
                s(&out),
                "--report",
                s(report),
                "--ledger",
                s(&ledger),
            ],
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{report:?}: {}", text(&o));
        assert!(
            err.contains("--report") && err.contains(want) && err.contains("nothing was read"),
            "{report:?}: {err}"
        );
        assert!(
            !err.contains("bad.csv"),
            "{report:?}: the data was read: {err}"
        );
        assert_eq!(recorded(&ledger), 0, "{report:?}: a spend was recorded");
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "old\n");
    }
    // with good outputs the same data is read, and refused for its bad code: the loader
    // names the file
    let o = release(&d, "bad.csv", "laplace", &["--out", s(&out)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("bad.csv"), "{}", text(&o));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "old\n");
    std::fs::remove_dir_all(&d).ok();
}

/// Attribute names with the CSV and label separators survive a release: the answers file
/// reads back through `dpqr eval` (which matches every table to the domain by name), the
/// synthetic header is the names plus a weight column that is not called `weight` when an
/// attribute is.
#[test]
fn awkward_attribute_names_round_trip() {
    let d = dir("names");
    let names = ["a,b", "c|d", "say \"hi\"", "back\\slash", "weight"];
    // in this order (the domain file's order is the domain order)
    let entries: Vec<String> = names
        .iter()
        .map(|n| format!("{}: 2", serde_json::Value::from(*n)))
        .collect();
    std::fs::write(d.join("odd.json"), format!("{{{}}}", entries.join(", "))).unwrap();
    let mut w = csv::Writer::from_path(d.join("odd.csv")).unwrap();
    w.write_record(names).unwrap();
    for i in 0..40u32 {
        let row: Vec<String> = (0..5).map(|j| ((i >> j) & 1).to_string()).collect();
        w.write_record(&row).unwrap();
    }
    w.flush().unwrap();
    drop(w);
    let (answers, synthetic) = (d.join("answers.csv"), d.join("synthetic.csv"));
    let o = run(&[
        "release",
        "--data",
        s(&d.join("odd.csv")),
        "--domain",
        s(&d.join("odd.json")),
        "--workload",
        "all-2way",
        "--mechanism",
        "mwem",
        "--epsilon",
        "1",
        "--seed",
        "4",
        "--quiet",
        "--out",
        s(&answers),
        "--synthetic-out",
        s(&synthetic),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("weight column is called weight_1"), "{out}");
    // the answers: 10 tables of 4 cells, each label decoding to two of the names
    let mut r = csv::Reader::from_path(&answers).unwrap();
    let mut labels: Vec<String> = Vec::new();
    let mut rows = 0;
    for rec in r.records() {
        let rec = rec.unwrap();
        assert_eq!(rec.len(), 3, "{rec:?}");
        if labels.last().map(String::as_str) != Some(&rec[0]) {
            labels.push(rec[0].to_string());
        }
        rows += 1;
    }
    assert_eq!(rows, 40);
    assert_eq!(labels.len(), 10, "{labels:?}");
    for l in &labels {
        let parts = dp_bench::io::answers::parse_table_label(l).unwrap();
        assert_eq!(parts.len(), 2, "{l}");
        assert!(parts.iter().all(|p| names.contains(&p.as_str())), "{l}");
    }
    // by hand: the table of "a,b" and "c|d" is written "a,b|c\|d", CSV-quoted for its comma
    let text_answers = std::fs::read_to_string(&answers).unwrap();
    assert!(
        text_answers.contains("\n\"a,b|c\\|d\",0|0,"),
        "{text_answers}"
    );
    // every number is short and exact (dp_core::Num): positional only from 1e-4 up, so at
    // most three zeros after the point (≤ 3 + 17 significant digits), scientific below —
    // never the 160 zeros of 1.4e-160 written out — and every answer reads back exactly
    for line in text_answers.lines().skip(1) {
        let answer = line.rsplit(',').next().unwrap();
        assert!(
            !answer.contains("0.0000"),
            "a long number in the answers: {line}"
        );
        let x: f64 = answer.parse().unwrap();
        assert_eq!(dp_core::Num(x).to_string(), answer, "{line}");
    }
    let o = run(&[
        "eval",
        "--data",
        s(&d.join("odd.csv")),
        "--domain",
        s(&d.join("odd.json")),
        "--answers",
        s(&answers),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("queries: 40"), "{}", text(&o));
    // the synthetic file: the names in domain order, then weight_1; weights sum to one
    let mut r = csv::Reader::from_path(&synthetic).unwrap();
    let header: Vec<String> = r.headers().unwrap().iter().map(str::to_string).collect();
    let mut want: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    want.push("weight_1".into());
    assert_eq!(header, want);
    let total: f64 = r
        .records()
        .map(|rec| rec.unwrap()[5].parse::<f64>().unwrap())
        .sum();
    assert!((total - 1.0).abs() < 1e-9, "{total}");
    std::fs::remove_dir_all(&d).ok();
}

/// Decompress a gzip file with flate2 (independent of `dpqr`'s reader).
fn gunzip(p: &Path) -> String {
    let bytes = std::fs::read(p).unwrap();
    assert_eq!(&bytes[..2], &[0x1f, 0x8b], "{} is not gzip", p.display());
    let mut out = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut out).unwrap();
    out
}

/// Outputs named `*.gz` are gzip files holding exactly what the plain release writes (same
/// seed), their sizes are announced, and `dpqr eval` reads compressed answers.
#[test]
fn gz_outputs_are_compressed_announced_and_read_back() {
    let d = dir("gz");
    let plain = [d.join("a.csv"), d.join("r.json"), d.join("s.csv")];
    let gz = [d.join("a.csv.gz"), d.join("r.json.gz"), d.join("s.csv.gz")];
    for files in [&plain, &gz] {
        let o = release(
            &d,
            "d.csv",
            "projection",
            &[
                "--delta",
                "1e-9",
                "--out",
                s(&files[0]),
                "--report",
                s(&files[1]),
                "--synthetic-out",
                s(&files[2]),
            ],
        );
        assert!(o.status.success(), "{}", text(&o));
        let size = std::fs::metadata(&files[0]).unwrap().len();
        let announced = if size < 1024 {
            format!("({size} B)")
        } else {
            format!("({:.1} KiB)", size as f64 / 1024.0)
        };
        assert!(text(&o).contains(&announced), "{announced}: {}", text(&o));
    }
    // answers and synthetic records: byte for byte; the report carries timings, so its
    // guarantee is compared
    for i in [0, 2] {
        let want = std::fs::read_to_string(&plain[i]).unwrap();
        assert_eq!(gunzip(&gz[i]), want, "{}", gz[i].display());
    }
    let report =
        |t: &str| serde_json::from_str::<serde_json::Value>(t).unwrap()["statement"].clone();
    assert_eq!(
        report(&gunzip(&gz[1])),
        report(&std::fs::read_to_string(&plain[1]).unwrap())
    );
    let o = run(&[
        "eval",
        "--data",
        s(&d.join("d.csv")),
        "--domain",
        s(&d.join("d.json")),
        "--answers",
        s(&gz[0]),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("max_abs_error"), "{}", text(&o));
    // a corrupt gzip file is an error naming it, not a panic
    std::fs::write(d.join("bad.csv.gz"), [0x1f, 0x8b, 0, 1, 2]).unwrap();
    let o = run(&[
        "eval",
        "--data",
        s(&d.join("d.csv")),
        "--domain",
        s(&d.join("d.json")),
        "--answers",
        s(&d.join("bad.csv.gz")),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("bad.csv.gz"), "{}", text(&o));
    std::fs::remove_dir_all(&d).ok();
}
