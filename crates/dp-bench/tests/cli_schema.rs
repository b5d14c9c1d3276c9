//! Raw CSV values released through a public schema (category labels, numeric bins, an
//! `other` bucket), and the NON-PRIVATE `dpqr schema draft` helper, through the real `dpqr`
//! binary.

use std::path::{Path, PathBuf};
use std::process::Output;
mod common;
use common::run;

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dpqr-cli-schema-{name}-{}", std::process::id()));
    std::fs::remove_dir_all(&d).ok();
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(d: &Path, name: &str, text: &str) -> String {
    let p = d.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

const SCHEMA: &str = r#"{
  "sex": {"labels": ["female", "male"]},
  "age": {"bins": [0, 18, 30, 65, 120]},
  "region": {"labels": ["north", "south"], "other": true}
}"#;

/// Raw records and, by hand, their codes under [`SCHEMA`] (the last age edge, 120, is in
/// the last bin; 18 starts the second; "east" and the empty region go to "other").
const RAW: &str = "region,sex,age\nnorth,female,34\nsouth,male,17\neast,male,120\nnorth,\"female\",18\n,male,65\nsouth,female,0\n";
const CODES: &str = "region,sex,age\n0,0,2\n1,1,0\n2,1,3\n0,0,1\n2,1,3\n1,0,0\n";
const DOMAIN: &str = r#"{"sex": 2, "age": 4, "region": 3}"#;

fn release(data: &str, domain: &str, out: &str) -> Output {
    run(&[
        "release",
        "--data",
        data,
        "--domain",
        domain,
        "--workload",
        "all-2way",
        "--mechanism",
        "laplace",
        "--epsilon",
        "1",
        "--seed",
        "5",
        "--quiet",
        "--out",
        out,
    ])
}

#[test]
fn a_raw_string_csv_is_released_through_a_schema() {
    let d = dir("release");
    let raw = write(&d, "raw.csv", RAW);
    let schema = write(&d, "schema.json", SCHEMA);
    let codes = write(&d, "codes.csv", CODES);
    let domain = write(&d, "domain.json", DOMAIN);
    let (a, b) = (d.join("raw-answers.csv"), d.join("code-answers.csv"));
    let o = release(&raw, &schema, a.to_str().unwrap());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = release(&codes, &domain, b.to_str().unwrap());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // same seed, same codes: the same answers, byte for byte in the columns of codes
    // (marginal,cell,answer); the schema's file is labelled, with label,count after them
    // (issue #26), the plain domain's is not
    let (a, b) = (
        std::fs::read_to_string(&a).unwrap(),
        std::fs::read_to_string(&b).unwrap(),
    );
    assert!(!a.is_empty());
    assert!(a.starts_with("marginal,cell,answer,label,count\n"), "{a}");
    assert!(b.starts_with("marginal,cell,answer\n"), "{b}");
    let first_three = |text: &str| -> Vec<Vec<String>> {
        csv::Reader::from_reader(text.as_bytes())
            .records()
            .map(|r| r.unwrap().iter().take(3).map(str::to_string).collect())
            .collect()
    };
    assert_eq!(first_three(&a), first_three(&b));
    // the non-private evaluation reads the raw file through the schema too
    let answers = d.join("raw-answers.csv");
    let o = run(&[
        "eval",
        "--data",
        &raw,
        "--domain",
        &schema,
        "--answers",
        answers.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn a_value_outside_the_schema_names_file_line_and_column() {
    let d = dir("outside");
    let schema = write(&d, "schema.json", SCHEMA);
    let cases = [
        (
            "region,sex,age\nnorth,female,34\n\nnorth,Male,3\n",
            "line 4",
            "'sex'",
            "'Male'",
        ),
        (
            "region,sex,age\nnorth,female,120.5\n",
            "line 2",
            "'age'",
            "outside the bins",
        ),
        (
            "region,sex,age\nnorth,female,NaN\n",
            "line 2",
            "'age'",
            "not a finite number",
        ),
        (
            "region,sex,age\nnorth,female,\n",
            "line 2",
            "'age'",
            "empty",
        ),
    ];
    for (i, (body, line, column, what)) in cases.iter().enumerate() {
        let raw = write(&d, &format!("bad{i}.csv"), body);
        let out = d.join(format!("out{i}.csv"));
        let o = release(&raw, &schema, out.to_str().unwrap());
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        for want in [raw.as_str(), line, column, what, "outside the schema"] {
            assert!(err.contains(want), "case {i}: {want} not in {err}");
        }
        assert!(!out.exists(), "case {i}: an output was written");
    }
    // a bad schema is refused with the attribute named
    let bad = write(&d, "bad.json", r#"{"sex": {"labels": ["a", "a"]}}"#);
    let raw = write(&d, "ok.csv", "sex\na\n");
    let o = release(&raw, &bad, d.join("x.csv").to_str().unwrap());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("'sex'") && err.contains("twice"), "{err}");
}

#[test]
fn schema_draft_warns_that_it_reads_the_data_and_loads_back() {
    let d = dir("draft");
    let raw = write(&d, "raw.csv", RAW);
    let o = run(&[
        "schema",
        "draft",
        "--data",
        &raw,
        "--max-labels",
        "3",
        "--bins",
        "2",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("NON-PRIVATE") && err.contains("review"),
        "{err}"
    );
    let draft = String::from_utf8(o.stdout).unwrap();
    assert!(
        draft.contains(r#""sex": {"labels": ["female", "male"]}"#),
        "{draft}"
    );
    assert!(
        draft.contains(r#""age": {"bins": [0.0, 60.0, 120.0]}"#),
        "{draft}"
    );
    // the empty region fields get a missing code of their own (not "other")
    assert!(
        draft.contains(r#""region": {"labels": ["east", "north", "south"], "missing": true}"#),
        "{draft}"
    );
    let schema = write(&d, "draft.json", &draft);
    let out = d.join("a.csv");
    let o = release(&raw, &schema, out.to_str().unwrap());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // a missing file is an error naming it
    let o = run(&["schema", "draft", "--data", "/nonexistent/x.csv"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nonexistent/x.csv"));
}
