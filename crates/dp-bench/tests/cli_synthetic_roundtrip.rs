//! The synthetic round trip through the real `dpqr` binary (issue #23 §5): `dpqr release
//! --synthetic-out` → `dpqr synthetic expand` → `dpqr eval`, for a domain of integer codes
//! and for a schema with labels, bins (the closed last bin included) and `other` on raw
//! data. Whatever dpqr writes reads back through the same `--domain` file as the codes it
//! was written for: the test decodes every file itself (its own small reading of the schema,
//! below) and checks the codes, not only the exit status. A bin's value is drawn uniformly
//! within the bin (issue #26): the files are checked to hold numbers inside their bins, and
//! `synthetic expand` is seeded so that two expansions can be compared.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

mod common;
use common::{fresh_dir, largest_remainder, run, s, stderr, text};

/// How the test itself reads one attribute of a schema (independently of dp-queries).
enum Attr {
    Size(u32),
    Labels(Vec<String>, bool),
    Bins(Vec<f64>, bool),
}

impl Attr {
    fn size(&self) -> u32 {
        match self {
            Attr::Size(n) => *n,
            Attr::Labels(l, other) => l.len() as u32 + u32::from(*other),
            Attr::Bins(e, other) => e.len() as u32 - 1 + u32::from(*other),
        }
    }

    /// The code of raw `field`; panics on a value outside a schema without `other`.
    fn code(&self, field: &str) -> u32 {
        let other = |has: bool| {
            assert!(has, "{field:?} is outside the schema");
            self.size() - 1
        };
        match self {
            Attr::Size(n) => {
                let c: u32 = field.parse().unwrap();
                assert!(c < *n, "{field}");
                c
            }
            Attr::Labels(labels, has) => match labels.iter().position(|l| l == field) {
                Some(i) => i as u32,
                None => other(*has),
            },
            Attr::Bins(edges, has) => {
                let v: f64 = match field.trim().parse() {
                    Ok(v) => v,
                    Err(_) => return other(*has),
                };
                let last = edges.len() - 2;
                for i in 0..=last {
                    let upper_ok = if i == last {
                        v <= edges[i + 1]
                    } else {
                        v < edges[i + 1]
                    };
                    if v >= edges[i] && upper_ok {
                        return i as u32;
                    }
                }
                other(*has)
            }
        }
    }
}

/// The attributes of a schema or domain JSON object, by name.
fn parse_schema(json: &str) -> BTreeMap<String, Attr> {
    let v: Value = serde_json::from_str(json).unwrap();
    let mut out = BTreeMap::new();
    for (name, spec) in v.as_object().unwrap() {
        let attr = match spec {
            Value::Number(n) => Attr::Size(n.as_u64().unwrap() as u32),
            Value::Object(o) => {
                let other = o.get("other").and_then(Value::as_bool).unwrap_or(false);
                if let Some(l) = o.get("labels") {
                    let labels = l.as_array().unwrap();
                    Attr::Labels(
                        labels
                            .iter()
                            .map(|x| x.as_str().unwrap().to_string())
                            .collect(),
                        other,
                    )
                } else {
                    let edges = o["bins"].as_array().unwrap();
                    Attr::Bins(edges.iter().map(|x| x.as_f64().unwrap()).collect(), other)
                }
            }
            _ => panic!("{spec}"),
        };
        out.insert(name.clone(), attr);
    }
    out
}

/// A CSV file: its header and its records (fields as text).
fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut r = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_path(path)
        .unwrap();
    let header = r.headers().unwrap().iter().map(str::to_string).collect();
    let rows = r
        .records()
        .map(|rec| rec.unwrap().iter().map(str::to_string).collect())
        .collect();
    (header, rows)
}

/// The codes of `row` (columns named by `header`) for the attributes `names`, read through
/// `schema` by the test's own reading.
fn codes(
    schema: &BTreeMap<String, Attr>,
    names: &[String],
    header: &[String],
    row: &[String],
) -> Vec<u32> {
    names
        .iter()
        .map(|n| {
            let j = header.iter().position(|h| h == n).unwrap();
            schema[n].code(&row[j])
        })
        .collect()
}

/// What a round trip produced, for further checks.
struct Trip {
    synthetic: std::path::PathBuf,
    rows: std::path::PathBuf,
    /// The synthetic file's columns of attributes (by name) and records.
    header: Vec<String>,
    records: Vec<Vec<String>>,
    schema: BTreeMap<String, Attr>,
}

const TOTAL: u64 = 997;

/// release (MWEM, which writes synthetic data) → `--synthetic-out` → `synthetic expand` →
/// `eval`, checking at each step that the codes are those the synthetic weights say.
fn round_trip(name: &str, schema_json: &str, data: &str, workload: &str) -> Trip {
    let d = fresh_dir("synthetic-roundtrip", name);
    let schema_path = d.join("schema.json");
    let data_path = d.join("data.csv");
    std::fs::write(&schema_path, schema_json).unwrap();
    std::fs::write(&data_path, data).unwrap();
    let (answers, synthetic, rows) = (d.join("a.csv"), d.join("s.csv"), d.join("rows.csv"));
    let o = run(&[
        "release",
        "--data",
        s(&data_path),
        "--domain",
        s(&schema_path),
        "--workload",
        workload,
        "--mechanism",
        "mwem",
        "--epsilon",
        "2",
        "--seed",
        "11",
        "--quiet",
        "--out",
        s(&answers),
        "--synthetic-out",
        s(&synthetic),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let schema = parse_schema(schema_json);
    let (header, records) = read_csv(&synthetic);
    let names: Vec<String> = header[..header.len() - 1].to_vec();
    assert_eq!(header.last().map(String::as_str), Some("weight"));
    assert_eq!(names.len(), schema.len(), "every attribute is in the file");
    let weights: Vec<f64> = records
        .iter()
        .map(|r| r.last().unwrap().parse().unwrap())
        .collect();

    // the synthetic file as data: its weighted answers are the released answers
    let o = run(&[
        "eval",
        "--json",
        "--data",
        s(&synthetic),
        "--domain",
        s(&schema_path),
        "--answers",
        s(&answers),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(!stderr(&o).contains("read as codes"), "{}", text(&o));
    let scored: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(scored["max_abs"].as_f64().unwrap() < 1e-12, "{scored}");

    // expand: the rows per cell are the largest-remainder counts of the weights
    let o = run(&[
        "synthetic",
        "expand",
        "--in",
        s(&synthetic),
        "--domain",
        s(&schema_path),
        "--total",
        &TOTAL.to_string(),
        "--out",
        s(&rows),
        "--seed",
        "4",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let mut want: BTreeMap<Vec<u32>, u64> = BTreeMap::new();
    for (record, count) in records
        .iter()
        .zip(largest_remainder(&weights, TOTAL))
        .filter(|(_, c)| *c > 0)
    {
        *want
            .entry(codes(&schema, &names, &header, record))
            .or_default() += count;
    }
    let (row_header, row_records) = read_csv(&rows);
    assert_eq!(row_header, names);
    assert_eq!(row_records.len() as u64, TOTAL);
    let mut got: BTreeMap<Vec<u32>, u64> = BTreeMap::new();
    for row in &row_records {
        *got.entry(codes(&schema, &names, &row_header, row))
            .or_default() += 1;
    }
    assert_eq!(got, want, "expanded rows per cell");

    // and dpqr reads the expansion back as those codes: its answers are the synthetic
    // file's, up to the rounding of each record's count (at most one row per record)
    let o = run(&[
        "eval",
        "--json",
        "--data",
        s(&rows),
        "--domain",
        s(&schema_path),
        "--synthetic",
        s(&synthetic),
        "--workload",
        workload,
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let scored: Value = serde_json::from_slice(&o.stdout).unwrap();
    let bound = records.len() as f64 / TOTAL as f64;
    assert!(
        scored["max_abs"].as_f64().unwrap() <= bound,
        "{scored} > {bound}"
    );
    Trip {
        synthetic,
        rows,
        header,
        records,
        schema,
    }
}

/// 120 records of integer codes over `a: 3, b: 2, c: 4`.
fn code_data() -> String {
    let mut csv = String::from("a,b,c\n");
    for i in 0..120 {
        csv.push_str(&format!("{},{},{}\n", i % 3, (i / 3) % 2, (i * 7 / 5) % 4));
    }
    csv
}

#[test]
fn the_round_trip_holds_for_a_domain_of_codes() {
    let trip = round_trip(
        "codes",
        r#"{"a": 3, "b": 2, "c": 4}"#,
        &code_data(),
        "all-3way",
    );
    // codes stay codes
    for r in &trip.records {
        assert!(r[..3].iter().all(|f| f.parse::<u32>().is_ok()), "{r:?}");
    }
}

const SCHEMA: &str = r#"{
  "city":   {"labels": ["paris", "lyon"], "other": true},
  "age":    {"bins": [0, 18, 30, 65, 120]},
  "sex":    {"labels": ["female", "male"]},
  "income": {"bins": [-1e6, 0, 2.5e4, 1e300], "other": true},
  "flag":   2
}"#;

/// Raw records with strings, numbers (on edges, the last edge 120 in the closed last bin,
/// negative, scientific notation) and empty fields, in another column order than the schema.
fn raw_data() -> String {
    let cities = ["paris", "lyon", "nice", "", "paris", "\"lyon\""];
    let ages = [
        "0", "17.5", "18", "29", "30", "64.9", "65", "120", "1.2e2", "44",
    ];
    let incomes = [
        "-5", "0", "24999.5", "25000", "1e9", "", "n/a", "-2e6", "12000",
    ];
    let mut csv = String::from("sex,income,flag,age,city\n");
    for i in 0..150 {
        let sex = if i % 3 == 0 { "male" } else { "female" };
        csv.push_str(&format!(
            "{sex},{},{},{},{}\n",
            incomes[i % incomes.len()],
            i % 2,
            ages[(i * 7) % ages.len()],
            cities[(i * 5 / 3) % cities.len()]
        ));
    }
    csv
}

#[test]
fn the_round_trip_holds_through_labels_bins_and_other() {
    let trip = round_trip("schema", SCHEMA, &raw_data(), "all-2way");
    let col = |name: &str| trip.header.iter().position(|h| h == name).unwrap();
    // the files hold values, not codes: labels, a number inside each bin (a decimal point
    // or an exponent: never a bare integer), `other`
    let in_bin = |field: &str| field.contains(['.', 'e']) && field.parse::<f64>().is_ok();
    for (file, rows) in [
        (&trip.synthetic, trip.records.clone()),
        (&trip.rows, read_csv(&trip.rows).1),
    ] {
        let (h, _) = read_csv(file);
        let at = |name: &str| h.iter().position(|x| x == name).unwrap();
        for r in &rows {
            let age = &r[at("age")];
            assert!(in_bin(age), "{}: {r:?}", file.display());
            let v: f64 = age.parse().unwrap();
            assert!((0.0..=120.0).contains(&v), "{r:?}");
            assert!(["female", "male"].contains(&r[at("sex")].as_str()), "{r:?}");
            assert!(
                ["paris", "lyon", "other"].contains(&r[at("city")].as_str()),
                "{r:?}"
            );
            let income = &r[at("income")];
            assert!(income == "other" || in_bin(income), "{r:?}");
            assert!(["0", "1"].contains(&r[at("flag")].as_str()), "{r:?}");
        }
    }
    // the closed last bin and both other buckets occur (MWEM's records cover the universe)
    let has = |name: &str, code: u32| {
        trip.records
            .iter()
            .any(|r| trip.schema[name].code(&r[col(name)]) == code)
    };
    assert!(has("age", 3) && has("city", 2) && has("income", 3));
    assert_eq!(trip.schema["age"].code("120.0"), 3);
    // drawn, not the lower edge: many distinct ages among the expanded rows
    let (rh, rows) = read_csv(&trip.rows);
    let at = rh.iter().position(|x| x == "age").unwrap();
    let ages: std::collections::BTreeSet<&str> = rows.iter().map(|r| r[at].as_str()).collect();
    assert!(ages.len() > 50, "{}", ages.len());
}

#[test]
fn digit_labels_are_labels_in_every_file() {
    // labels that are digits, not in the order of their codes: "2" is code 0
    let schema = r#"{"d": {"labels": ["2", "0", "1"]}, "b": {"bins": [0, 1, 2, 3]}}"#;
    let mut data = String::from("d,b\n");
    for i in 0..90 {
        let d = ["2", "2", "2", "0", "1"][i % 5];
        data.push_str(&format!("{d},{}\n", i % 3));
    }
    let trip = round_trip("digits", schema, &data, "all-2way");
    // the labels are written as themselves, the bins as numbers within them
    for r in trip.records.iter().chain(&read_csv(&trip.rows).1) {
        assert!(["2", "0", "1"].contains(&r[0].as_str()), "{r:?}");
        let v: f64 = r[1].parse().unwrap();
        assert!(
            r[1].contains(['.', 'e']) && (0.0..=3.0).contains(&v),
            "{r:?}"
        );
    }
}

#[test]
fn an_older_file_of_codes_is_read_as_codes() {
    let trip = round_trip("old", SCHEMA, &raw_data(), "all-2way");
    let d = trip.synthetic.parent().unwrap().to_path_buf();
    // the same records as integer codes, as dpqr wrote synthetic files before
    let names: Vec<String> = trip.header[..trip.header.len() - 1].to_vec();
    let mut old = trip.header.join(",");
    old.push('\n');
    for r in &trip.records {
        let c = codes(&trip.schema, &names, &trip.header, r);
        let fields: Vec<String> = c.iter().map(u32::to_string).collect();
        old.push_str(&format!("{},{}\n", fields.join(","), r.last().unwrap()));
    }
    let old_path = d.join("old.csv");
    std::fs::write(&old_path, old).unwrap();
    let schema_path = d.join("schema.json");
    let again = d.join("again.csv");
    let o = run(&[
        "synthetic",
        "expand",
        "--in",
        s(&old_path),
        "--domain",
        s(&schema_path),
        "--total",
        &TOTAL.to_string(),
        "--out",
        s(&again),
        "--seed",
        "4",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(stderr(&o).contains("read as codes"), "{}", text(&o));
    // read as codes, expanded to the very same values (the same seed draws the same
    // values within the bins)
    assert_eq!(
        std::fs::read_to_string(&again).unwrap(),
        std::fs::read_to_string(&trip.rows).unwrap()
    );
    // and scored as the same weighted data
    let o = run(&[
        "eval",
        "--json",
        "--data",
        s(&old_path),
        "--domain",
        s(&schema_path),
        "--answers",
        s(&d.join("a.csv")),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let scored: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(scored["max_abs"].as_f64().unwrap() < 1e-12, "{scored}");
    // a field that is no code of a file read as codes is named with the reason
    let bad = std::fs::read_to_string(&old_path)
        .unwrap()
        .replacen("\n0,", "\nparis,", 1);
    let bad_path = d.join("bad.csv");
    std::fs::write(&bad_path, bad).unwrap();
    let o = run(&[
        "synthetic",
        "expand",
        "--in",
        s(&bad_path),
        "--domain",
        s(&schema_path),
        "--total",
        "10",
        "--out",
        s(&d.join("bad-rows.csv")),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let msg = stderr(&o);
    assert!(
        msg.contains("'paris' is not a code") && msg.contains("read as integer codes"),
        "{msg}"
    );
    assert!(!d.join("bad-rows.csv").exists());
}
