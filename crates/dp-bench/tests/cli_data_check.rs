//! The data check before a release through the real `dpqr` binary (issue #26 §3): `dpqr
//! schema check` on a raw CSV (strings, numbers, a label with spaces, `abc` in a binned
//! column, empty cells, an extra column `name`) reports each problem and is NON-PRIVATE;
//! a `"missing": true` code round-trips through a release, its labelled answers and its
//! synthetic file; `--delimiter`, gzip input to `schema draft`, and `--ignore-extra-columns`
//! (refused without it, ignored with it, a weighted file still refused).

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::Value;

mod common;
use common::{fresh_dir, run, s, stderr, stdout, text};

const SCHEMA: &str = r#"{
  "city": {"labels": ["London", "Paris", "Rome"], "missing": true, "other": true},
  "age":  {"bins": [0, 18, 65, 120], "other": true},
  "sex":  {"labels": ["f", "m"]}
}"#;

/// The raw file of the issue: every problem once or more, on known lines.
const RAW: &str = "\
name,city,age,sex
ann,London,30,f
bob, London ,abc,m
cy,london,17,f
dee,,200,f
eve,42,,m
fay,Berlin,64,m
gus,Paris,45,f
";

fn write(dir: &Path, name: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    p
}

/// `bytes` gzip-compressed into `dir/name`.
fn write_gz(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    let mut gz = flate2::write::GzEncoder::new(
        std::fs::File::create(&p).unwrap(),
        flate2::Compression::default(),
    );
    gz.write_all(bytes).unwrap();
    gz.finish().unwrap();
    p
}

fn json(o: &std::process::Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}\n{}", text(o)))
}

#[test]
fn schema_check_reports_each_problem_and_says_it_is_non_private() {
    let dir = fresh_dir("check", "report");
    let schema = write(&dir, "schema.json", SCHEMA);
    let data = write(&dir, "raw.csv", RAW);
    let o = run(&[
        "schema",
        "check",
        "--data",
        s(&data),
        "--schema",
        s(&schema),
        "--json",
    ]);
    // the check ran: exit 0, although a release would refuse this file
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(stderr(&o).contains("NON-PRIVATE"), "{}", text(&o));
    let r = json(&o);
    assert_eq!(r["rows"], 7);
    assert_eq!(r["extra_columns"], serde_json::json!(["name"]));
    assert_eq!(r["extra_columns_ignored"], false);
    let col = |name: &str| -> Value {
        r["columns"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .cloned()
            .unwrap()
    };
    // city: London, Paris in the schema; ' London ' (spaces), 'london' (case), '42' (a
    // number), 'Berlin' (unknown) to other; one empty cell to missing
    let city = col("city");
    assert_eq!(city["in_schema"], 2);
    assert_eq!(city["empty"], 1);
    assert_eq!(city["empty_goes_to"], "missing");
    assert_eq!(city["to_missing"], 1);
    assert_eq!(city["to_other"], 4);
    assert_eq!(city["near_misses"], 3);
    assert_eq!(
        city["kinds"],
        serde_json::json!({"empty": 1, "whitespace": 1, "case": 1, "number_in_labels": 1,
                           "unknown_label": 1})
    );
    let first = &city["examples"][0];
    assert_eq!(first["line"], 3);
    assert_eq!(first["value"], " London ");
    assert_eq!(first["kind"], "whitespace");
    assert_eq!(first["nearest"], "London");
    assert_eq!(first["goes_to"], "other");
    // age: 'abc' (not a number), 200 (outside the bins), and the empty cell (no missing
    // code here) go to other
    let age = col("age");
    assert_eq!(age["in_schema"], 4);
    assert_eq!(age["empty_goes_to"], "other");
    assert_eq!(age["to_other"], 3);
    assert_eq!(
        age["kinds"],
        serde_json::json!({"empty": 1, "not_a_number": 1, "outside_bins": 1})
    );
    assert_eq!(age["examples"][0]["value"], "abc");
    assert_eq!(age["examples"][0]["line"], 3);
    let sex = col("sex");
    assert_eq!(
        (sex["in_schema"].clone(), sex["refused"].clone()),
        (7.into(), 0.into())
    );
    assert!(r["first_refused"].is_null());

    // the text report says the same, for a person
    let o = run(&[
        "schema",
        "check",
        "--data",
        s(&data),
        "--domain",
        s(&schema),
        "--examples",
        "5",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = stdout(&o);
    for want in [
        "7 records",
        "column 'city' (labels, missing, other): 2 in the schema, 1 empty → missing, 4 outside \
         the schema → other (3 near-misses)",
        "line 3: ' London ' — a label with spaces around it (meant 'London'?) → other",
        "line 4: 'london' — a label in another case (meant 'London'?) → other",
        "line 5: '' — empty cell → missing",
        "empty cell: 1; a label with spaces around it: 1; a label in another case: 1; a \
         number in a column of word labels: 1; not a label: 1",
        "line 6: '42' — a number in a column of word labels → other",
        "line 3: 'abc' — not a number (the column is binned) → other",
        "columns outside the schema: 'name' — a release refuses the file unless given \
         --ignore-extra-columns",
        "result: a release through this schema refuses the file for its extra columns",
    ] {
        assert!(out.contains(want), "{want}\n{}", text(&o));
    }
    assert!(stderr(&o).contains("NON-PRIVATE"), "{}", text(&o));

    // with --ignore-extra-columns a release reads every record
    let o = run(&[
        "schema",
        "check",
        "--data",
        s(&data),
        "--domain",
        s(&schema),
        "--ignore-extra-columns",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        stdout(&o).contains("result: a release through this schema reads every record"),
        "{}",
        text(&o)
    );

    // a cell a release would refuse is named with its line and column
    let strict = write(
        &dir,
        "strict.json",
        r#"{"city": {"labels": ["London", "Paris"]}, "age": {"bins": [0, 120]}, "sex": 2}"#,
    );
    let o = run(&[
        "schema",
        "check",
        "--data",
        s(&data),
        "--domain",
        s(&strict),
        "--ignore-extra-columns",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let r = json(&o);
    // (the loader's order: line 2, where sex holds 'f' and the schema gives it codes)
    assert_eq!(r["first_refused"][0], "sex");
    assert_eq!(r["first_refused"][1]["line"], 2);
    assert_eq!(r["first_refused"][1]["value"], "f");
    assert_eq!(r["columns"][0]["refused"], 5);
    assert_eq!(r["columns"][0]["empty_goes_to"], "refused");
    // sex holds codes: 'f' and 'm' are not codes
    assert_eq!(r["columns"][2]["kinds"]["not_a_code"], 7);

    // real errors: exit 2 with the reason
    let no_age = write(&dir, "no-age.csv", "city,sex\nLondon,f\n");
    for (args, want) in [
        (
            vec!["--data", s(&no_age), "--domain", s(&schema)],
            "no column 'age'",
        ),
        (
            vec!["--data", s(&dir.join("nope.csv")), "--domain", s(&schema)],
            "nope.csv",
        ),
        (
            vec!["--data", s(&data), "--domain", s(&dir.join("nope.json"))],
            "nope.json",
        ),
        (
            vec![
                "--data",
                s(&data),
                "--domain",
                s(&schema),
                "--delimiter",
                ";;",
            ],
            "not one character",
        ),
        (
            vec![
                "--data",
                s(&data),
                "--domain",
                s(&schema),
                "--delimiter",
                "\"",
            ],
            "quoted field",
        ),
    ] {
        let mut all = vec!["schema", "check"];
        all.extend(args);
        let o = run(&all);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(stderr(&o).contains(want), "{want}\n{}", text(&o));
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// The answers file's rows as (marginal, label, answer).
fn labelled_rows(path: &Path) -> Vec<(String, String, f64)> {
    let mut r = csv::Reader::from_path(path).unwrap();
    assert_eq!(
        r.headers().unwrap(),
        vec!["marginal", "cell", "answer", "label", "count"]
    );
    r.records()
        .map(|rec| {
            let rec = rec.unwrap();
            (
                rec[0].to_string(),
                rec[3].to_string(),
                rec[2].parse().unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_missing_code_round_trips_through_release_labelled_answers_and_synthetic_data() {
    let dir = fresh_dir("check", "missing");
    let schema = write(&dir, "schema.json", SCHEMA);
    // 60 records: a quarter of the cities empty, the rest in the schema or other
    let mut raw = String::from("name,city,age,sex\n");
    let cities = ["London", "", "Paris", "Rome", "", "Oslo", "London", ""];
    for i in 0..60 {
        let age = if i % 7 == 3 {
            String::new()
        } else {
            (i * 2).to_string()
        };
        let sex = if i % 3 == 0 { "m" } else { "f" };
        raw.push_str(&format!("p{i},{},{age},{sex}\n", cities[i % cities.len()]));
    }
    let data = write(&dir, "raw.csv", &raw);

    // an extra column is refused without the option, naming it and the way out
    let answers = dir.join("answers.csv");
    let base = [
        "release",
        "--data",
        s(&data),
        "--domain",
        s(&schema),
        "--workload",
        "all-1way",
        "--seed",
        "5",
        "--quiet",
    ];
    let mut refused = base.to_vec();
    refused.extend([
        "--mechanism",
        "gaussian",
        "--epsilon",
        "1",
        "--delta",
        "1e-9",
        "--out",
        s(&answers),
    ]);
    let o = run(&refused);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        stderr(&o).contains("column 'name' is not an attribute")
            && stderr(&o).contains("--ignore-extra-columns"),
        "{}",
        text(&o)
    );
    assert!(!answers.exists());

    // gaussian with the simplex post-processing: the missing code is a labelled cell
    let mut gaussian = refused.clone();
    gaussian.extend(["--ignore-extra-columns", "--post", "simplex"]);
    let o = run(&gaussian);
    assert!(o.status.success(), "{}", text(&o));
    let rows = labelled_rows(&answers);
    let city: Vec<&str> = rows
        .iter()
        .filter(|r| r.0 == "city")
        .map(|r| r.1.as_str())
        .collect();
    assert_eq!(
        city,
        [
            "city=London",
            "city=Paris",
            "city=Rome",
            "city=missing",
            "city=other"
        ]
    );
    let ages: Vec<&str> = rows
        .iter()
        .filter(|r| r.0 == "age")
        .map(|r| r.1.as_str())
        .collect();
    assert_eq!(
        ages,
        ["age=[0,18)", "age=[18,65)", "age=[65,120]", "age=other"]
    );
    // dpqr eval reads them against the data (extra column ignored again)
    let o = run(&[
        "eval",
        "--json",
        "--data",
        s(&data),
        "--domain",
        s(&schema),
        "--ignore-extra-columns",
        "--answers",
        s(&answers),
    ]);
    assert!(o.status.success(), "{}", text(&o));

    // mwem's synthetic records are its answers: the weight of the rows written with an
    // empty city is the released answer of city=missing, so the missing code went out as
    // an empty field and reads back as missing
    let (mwem_answers, synthetic) = (dir.join("mwem.csv"), dir.join("syn.csv"));
    let mut mwem = base.to_vec();
    mwem.extend([
        "--ignore-extra-columns",
        "--mechanism",
        "mwem",
        "--epsilon",
        "2",
        "--out",
        s(&mwem_answers),
        "--synthetic-out",
        s(&synthetic),
    ]);
    let o = run(&mwem);
    assert!(o.status.success(), "{}", text(&o));
    let released = labelled_rows(&mwem_answers)
        .into_iter()
        .find(|r| r.1 == "city=missing")
        .unwrap()
        .2;
    let mut r = csv::Reader::from_path(&synthetic).unwrap();
    assert_eq!(r.headers().unwrap(), vec!["city", "age", "sex", "weight"]);
    let (mut empty_weight, mut total) = (0.0, 0.0);
    for rec in r.records() {
        let rec = rec.unwrap();
        assert_ne!(
            &rec[0], "missing",
            "the missing code is written as an empty field"
        );
        let w: f64 = rec[3].parse().unwrap();
        total += w;
        if rec[0].is_empty() {
            empty_weight += w;
        }
    }
    assert!(released > 0.0);
    assert!(
        (empty_weight / total - released).abs() < 1e-9,
        "{empty_weight} / {total} vs {released}"
    );
    // and dpqr eval scores the synthetic file exactly as the answers
    let score = |extra: [&str; 2]| {
        let mut args = vec![
            "eval",
            "--json",
            "--data",
            s(&data),
            "--domain",
            s(&schema),
            "--ignore-extra-columns",
        ];
        args.extend(extra);
        if extra[0] == "--synthetic" {
            args.extend(["--workload", "all-1way"]);
        }
        let o = run(&args);
        assert!(o.status.success(), "{}", text(&o));
        json(&o)["max_abs"].as_f64().unwrap()
    };
    let (a, b) = (
        score(["--answers", s(&mwem_answers)]),
        score(["--synthetic", s(&synthetic)]),
    );
    assert!((a - b).abs() < 1e-9, "{a} vs {b}");

    // a weighted file is still refused as a release's input when extra columns are ignored
    let w_out = dir.join("w.csv");
    let mut weighted = base.to_vec();
    weighted[2] = s(&synthetic);
    weighted.extend([
        "--ignore-extra-columns",
        "--mechanism",
        "gaussian",
        "--epsilon",
        "1",
        "--delta",
        "1e-9",
        "--out",
        s(&w_out),
    ]);
    let o = run(&weighted);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(stderr(&o).contains("weighted records file"), "{}", text(&o));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_semicolon_gzip_file_is_drafted_checked_and_released() {
    let dir = fresh_dir("check", "delimiter");
    let mut raw = String::from("city;score;note\n");
    for i in 0..40 {
        let city = ["\"Rome;IT\"", "Paris", "", "London"][i % 4];
        raw.push_str(&format!("{city};{};n{}\n", i * 3, i % 2));
    }
    let gz = write_gz(&dir, "raw.csv.gz", raw.as_bytes());
    // draft reads gzip and the delimiter; empty cells get a missing code
    let o = run(&[
        "schema",
        "draft",
        "--data",
        s(&gz),
        "--delimiter",
        ";",
        "--max-labels",
        "5",
        "--bins",
        "4",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(stderr(&o).contains("NON-PRIVATE"), "{}", text(&o));
    let draft: Value = json(&o);
    assert_eq!(
        draft["city"],
        serde_json::json!({"labels": ["London", "Paris", "Rome;IT"], "missing": true})
    );
    assert_eq!(draft["score"]["bins"][0], 0.0);
    assert_eq!(draft["note"], serde_json::json!({"labels": ["n0", "n1"]}));
    let schema = write(&dir, "schema.json", &stdout(&o));
    // without the delimiter the header is one column
    let o = run(&["schema", "check", "--data", s(&gz), "--domain", s(&schema)]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(stderr(&o).contains("no column"), "{}", text(&o));
    // with it the check finds nothing outside the schema
    let o = run(&[
        "schema",
        "check",
        "--data",
        s(&gz),
        "--domain",
        s(&schema),
        "--delimiter",
        ";",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let r = json(&o);
    assert_eq!(r["rows"], 40);
    assert_eq!(r["columns"][0]["to_missing"], 10);
    assert_eq!(r["columns"][0]["in_schema"], 30);
    for c in r["columns"].as_array().unwrap() {
        assert_eq!(c["outside"], 0, "{c}");
        assert_eq!(c["refused"], 0, "{c}");
    }
    // a release (in memory and streamed) reads the gzip ;-file through the draft
    for extra in [&[][..], &["--stream"][..]] {
        let out = dir.join("a.csv");
        let mut args = vec![
            "release",
            "--data",
            s(&gz),
            "--domain",
            s(&schema),
            "--delimiter",
            ";",
            "--workload",
            "all-1way",
            "--mechanism",
            "gaussian",
            "--epsilon",
            "1",
            "--delta",
            "1e-9",
            "--post",
            "simplex",
            "--seed",
            "3",
            "--quiet",
            "--out",
            s(&out),
        ];
        args.extend(extra);
        let o = run(&args);
        assert!(o.status.success(), "{}", text(&o));
        let labels: Vec<String> = labelled_rows(&out)
            .into_iter()
            .filter(|r| r.0 == "city")
            .map(|r| r.1)
            .collect();
        assert_eq!(
            labels,
            ["city=London", "city=Paris", "city=Rome;IT", "city=missing"]
        );
    }
    // --delimiter needs --data
    let o = run(&[
        "release",
        "--dataset",
        "nltcs",
        "--delimiter",
        ";",
        "--workload",
        "all-1way",
        "--mechanism",
        "laplace",
        "--epsilon",
        "1",
        "--out",
        s(&dir.join("x.csv")),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(stderr(&o).contains("--data"), "{}", text(&o));
    std::fs::remove_dir_all(&dir).ok();
}
