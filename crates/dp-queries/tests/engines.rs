//! The DataFusion and Ballista engines against the native streaming count: equal counts on
//! the bundled tables (CSV and Parquet, all 2-way and random 3-way workloads, both query
//! plans), and the privacy of the engine boundary (fixed messages, bad values refused by
//! column without the value).
//!
//! Run: `cargo test -p dp-queries --features ballista --test engines` (or `--features
//! datafusion` for the in-process tests only).
#![cfg(feature = "datafusion")]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use datafusion::arrow::array::{
    ArrayRef, BooleanArray, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray,
    UInt8Array, UInt16Array,
};
use datafusion::arrow::datatypes::{DataType, Field, Schema as ArrowSchema};
use datafusion::parquet::arrow::ArrowWriter;
use dp_queries::io::engine::{CountPlan, EngineSettings, count_datafusion};
use dp_queries::{
    Dataset, Domain, MarginalWorkload, QueryError, Schema, StreamSettings, StreamedCounts,
    count_csv_streaming,
};
use rand::SeedableRng;

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data")
}

/// The bundled table `name`: its CSV path and schema.
fn bundled(name: &str) -> (PathBuf, Schema) {
    let dir = data_dir().join(name);
    let schema = Schema::from_json_file(&dir.join(format!("{name}-domain.json"))).unwrap();
    (dir.join(format!("{name}.csv")), schema)
}

/// A fresh scratch file path with extension `ext`.
fn scratch(ext: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!("dpqr-engines-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(format!("t{}.{ext}", NEXT.fetch_add(1, Ordering::Relaxed)))
}

fn native(path: &Path, schema: &Schema, w: &MarginalWorkload) -> StreamedCounts {
    let f = std::io::BufReader::new(std::fs::File::open(path).unwrap());
    count_csv_streaming(
        f,
        "t.csv",
        schema,
        &dp_queries::ReadOptions::default(),
        w,
        &StreamSettings::default(),
    )
    .unwrap()
}

/// Writes the records of the CSV at `csv` to a Parquet file with narrow unsigned integer
/// columns (u8 where the codes fit, u16 otherwise), in reversed column order, in row groups
/// of 5 000 rows.
fn write_parquet(csv: &Path, schema: &Schema) -> PathBuf {
    let domain = schema.domain().clone();
    let f = std::fs::File::open(csv).unwrap();
    let data = Dataset::from_csv_reader(f, "t.csv", domain.clone()).unwrap();
    let mut fields = Vec::new();
    let mut columns: Vec<ArrayRef> = Vec::new();
    for i in (0..domain.len()).rev() {
        let codes = data.column(i);
        if domain.size(i) <= 256 {
            fields.push(Field::new(domain.name(i), DataType::UInt8, false));
            columns.push(Arc::new(UInt8Array::from_iter_values(
                codes.iter().map(|&c| c as u8),
            )));
        } else {
            fields.push(Field::new(domain.name(i), DataType::UInt16, false));
            columns.push(Arc::new(UInt16Array::from_iter_values(
                codes.iter().map(|&c| c as u16),
            )));
        }
    }
    let arrow = Arc::new(ArrowSchema::new(fields));
    let batch = RecordBatch::try_new(arrow.clone(), columns).unwrap();
    let path = scratch("parquet");
    let file = std::fs::File::create(&path).unwrap();
    let props = datafusion::parquet::file::properties::WriterProperties::builder()
        .set_max_row_group_row_count(Some(5_000))
        .build();
    let mut w = ArrowWriter::try_new(file, arrow, Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    path
}

fn workloads(domain: &Domain, seed: u64) -> Vec<(String, MarginalWorkload)> {
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
    vec![
        (
            "all 2-way".into(),
            MarginalWorkload::all_kway(domain, 2).unwrap(),
        ),
        (
            "16 random 3-way".into(),
            MarginalWorkload::random_kway(domain, 3, 16, None, &mut rng).unwrap(),
        ),
        (
            "5 random 3-way".into(),
            MarginalWorkload::random_kway(domain, 3, 5, None, &mut rng).unwrap(),
        ),
    ]
}

fn settings(plan: CountPlan) -> EngineSettings {
    EngineSettings {
        plan,
        target_partitions: Some(2),
    }
}

fn assert_equal_to_native(name: &str, seed: u64) {
    let (csv, schema) = bundled(name);
    let parquet = write_parquet(&csv, &schema);
    for (label, w) in workloads(schema.domain(), seed) {
        let expected = native(&csv, &schema, &w);
        assert!(expected.rows > 0);
        for plan in [
            CountPlan::GroupingSets,
            CountPlan::PerTable,
            CountPlan::Auto,
        ] {
            for file in [&csv, &parquet] {
                let got = count_datafusion(file, &schema, &w, &settings(plan)).unwrap();
                assert_eq!(
                    got.counts, expected.counts,
                    "{name} {label} {plan:?} {file:?}"
                );
                assert_eq!(got.rows, expected.rows, "{name} {label} {plan:?} {file:?}");
            }
        }
    }
    std::fs::remove_file(parquet).ok();
}

/// The default plan is the one measured faster (docs/benchmarks.md): in process, grouping
/// sets for CSV and one query per table for Parquet; on a cluster, grouping sets always;
/// explicit plans are kept.
#[test]
fn the_automatic_plan_is_chosen_by_engine_and_file_format() {
    use dp_queries::io::engine::FileFormat;
    assert_eq!(EngineSettings::default().plan, CountPlan::Auto);
    let auto = |format, distributed| CountPlan::Auto.resolve(format, distributed);
    assert_eq!(auto(FileFormat::Csv, false), CountPlan::GroupingSets);
    assert_eq!(auto(FileFormat::Parquet, false), CountPlan::PerTable);
    assert_eq!(auto(FileFormat::Csv, true), CountPlan::GroupingSets);
    assert_eq!(auto(FileFormat::Parquet, true), CountPlan::GroupingSets);
    for format in [FileFormat::Csv, FileFormat::Parquet] {
        for plan in [CountPlan::GroupingSets, CountPlan::PerTable] {
            for distributed in [false, true] {
                assert_eq!(plan.resolve(format, distributed), plan);
            }
        }
    }
}

#[test]
fn datafusion_counts_equal_native_counts_on_nltcs() {
    assert_equal_to_native("nltcs", 1);
}

#[test]
fn datafusion_counts_equal_native_counts_on_adult() {
    assert_equal_to_native("adult", 2);
}

/// A small domain and CSV for the error cases.
fn small() -> Schema {
    Schema::codes(
        Domain::new(vec![
            ("a".to_string(), 3),
            ("b".to_string(), 2),
            ("c".to_string(), 4),
        ])
        .unwrap(),
    )
}

fn write(text: &str) -> PathBuf {
    let p = scratch("csv");
    std::fs::write(&p, text).unwrap();
    p
}

fn count_small(path: &Path) -> Result<StreamedCounts, QueryError> {
    let schema = small();
    let w = MarginalWorkload::all_kway(schema.domain(), 2).unwrap();
    count_datafusion(path, &schema, &w, &settings(CountPlan::GroupingSets))
}

#[test]
fn a_good_small_file_counts_in_any_column_order() {
    let p = write("c,a,b\n3,2,1\n0,0,0\n3,2,1\n");
    let got = count_small(&p).unwrap();
    let schema = small();
    let w = MarginalWorkload::all_kway(schema.domain(), 2).unwrap();
    assert_eq!(got.counts, native(&p, &schema, &w).counts);
    assert_eq!(got.rows, 3);
}

/// The per-table plan over many tables (all 2-way marginals of 30 attributes: 435 `GROUP BY`s
/// under one `UNION ALL`) counts on a thread with 2 MiB of stack. Built as a chain of
/// two-input unions, the plan was one level deeper per table and DataFusion's analyzer
/// recursed through all of them: a stack overflow (an abort) with 120 tables on nltcs in an
/// unoptimised build without DataFusion's `recursive_protection` (Ballista turns it on).
#[test]
fn the_per_table_plan_of_many_tables_runs_on_a_small_stack() {
    let d = 30;
    let domain = Domain::new((0..d).map(|i| (format!("x{i}"), 2)).collect()).unwrap();
    let schema = Schema::codes(domain.clone());
    let mut text = (0..d)
        .map(|i| format!("x{i}"))
        .collect::<Vec<_>>()
        .join(",");
    text.push('\n');
    for r in 0..64u32 {
        let row: Vec<String> = (0..d).map(|i| ((r >> (i % 6)) & 1).to_string()).collect();
        text.push_str(&row.join(","));
        text.push('\n');
    }
    let p = write(&text);
    let w = MarginalWorkload::all_kway(&domain, 2).unwrap();
    assert_eq!(w.marginals().len(), 435);
    let expected = native(&p, &schema, &w);
    let got = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || count_datafusion(&p, &schema, &w, &settings(CountPlan::PerTable)))
        .unwrap()
        .join()
        .unwrap()
        .unwrap();
    assert_eq!(got.counts, expected.counts);
    assert_eq!(got.rows, 64);
}

#[test]
fn an_out_of_range_code_is_refused_by_column_without_the_value() {
    // 9731 is outside 0..2 of column b; the message names b and not the value or the line
    for (text, column) in [
        ("a,b,c\n0,0,0\n1,9731,2\n", "b"),
        ("a,b,c\n0,0,0\n2,1,4\n", "c"),
        ("a,b,c\n-5,0,0\n", "a"),
    ] {
        let e = count_small(&write(text)).unwrap_err();
        assert!(
            matches!(&e, QueryError::EngineRefused { column: c, .. } if c == column),
            "{e:?}"
        );
        let msg = e.to_string();
        assert_eq!(
            msg,
            format!(
                "DataFusion: column '{column}' has a value outside its codes 0..{}; nothing \
                 was counted",
                small()
                    .domain()
                    .size(small().domain().index_of(column).unwrap())
            )
        );
        assert!(!msg.contains("9731") && !msg.contains("-5") && !msg.contains("line"));
    }
}

#[test]
fn an_empty_field_is_refused_by_column() {
    let e = count_small(&write("a,b,c\n0,0,0\n1,,2\n")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "DataFusion: column 'b' has an empty field (a missing value); nothing was counted"
    );
}

#[test]
fn a_non_integer_field_gives_a_fixed_message_without_the_text() {
    let e = count_small(&write("a,b,c\n0,0,0\n1,secret-value-77,2\n")).unwrap_err();
    assert!(
        matches!(&e, QueryError::EngineFailed { stage, .. } if stage == "reading the file and counting"),
        "{e:?}"
    );
    let msg = e.to_string();
    assert!(!msg.contains("secret") && !msg.contains("77"), "{msg}");
    assert!(msg.starts_with("DataFusion: reading the file and counting failed."));
}

#[test]
fn header_problems_give_the_loaders_errors() {
    let e = count_small(&write("a,b\n0,0\n")).unwrap_err();
    assert!(
        matches!(&e, QueryError::MissingColumn { column, .. } if column == "c"),
        "{e:?}"
    );
    let e = count_small(&write("a,b,c,zip\n0,0,0,1\n")).unwrap_err();
    assert!(
        matches!(&e, QueryError::ExtraColumn { column, .. } if column == "zip"),
        "{e:?}"
    );
    let e = count_small(&write("a,b,a,c\n0,0,0,1\n")).unwrap_err();
    assert!(
        matches!(&e, QueryError::DuplicateHeader { column, .. } if column == "a"),
        "{e:?}"
    );
    let e = count_small(&write("")).unwrap_err();
    assert!(matches!(&e, QueryError::EmptyFile { .. }), "{e:?}");
}

#[test]
fn parquet_nulls_and_missing_columns_are_refused() {
    let schema = small();
    let w = MarginalWorkload::all_kway(schema.domain(), 1).unwrap();
    let fields = vec![
        Field::new("a", DataType::Int64, true),
        Field::new("b", DataType::Int64, true),
        Field::new("c", DataType::Int64, true),
    ];
    let write_batch = |columns: Vec<ArrayRef>, fields: Vec<Field>| {
        let arrow = Arc::new(ArrowSchema::new(fields));
        let batch = RecordBatch::try_new(arrow.clone(), columns).unwrap();
        let path = scratch("parquet");
        let mut wr =
            ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), arrow, None).unwrap();
        wr.write(&batch).unwrap();
        wr.close().unwrap();
        path
    };
    let with_null = write_batch(
        vec![
            Arc::new(Int64Array::from(vec![Some(0), Some(1)])),
            Arc::new(Int64Array::from(vec![Some(1), Some(0)])),
            Arc::new(Int64Array::from(vec![Some(3), None])),
        ],
        fields.clone(),
    );
    let e = count_datafusion(&with_null, &schema, &w, &EngineSettings::default()).unwrap_err();
    assert!(
        matches!(&e, QueryError::EngineRefused { column, .. } if column == "c"),
        "{e:?}"
    );
    let no_c = write_batch(
        vec![
            Arc::new(Int64Array::from(vec![0, 1])),
            Arc::new(Int64Array::from(vec![1, 0])),
        ],
        fields[..2].to_vec(),
    );
    let e = count_datafusion(&no_c, &schema, &w, &EngineSettings::default()).unwrap_err();
    assert!(
        matches!(&e, QueryError::MissingColumn { column, .. } if column == "c"),
        "{e:?}"
    );
}

/// A Parquet file of `columns` (name, values), in one row group.
fn parquet_of(columns: Vec<(&str, ArrayRef)>) -> PathBuf {
    let fields: Vec<Field> = columns
        .iter()
        .map(|(name, a)| Field::new(*name, a.data_type().clone(), true))
        .collect();
    let arrow = Arc::new(ArrowSchema::new(fields));
    let batch =
        RecordBatch::try_new(arrow.clone(), columns.into_iter().map(|(_, a)| a).collect()).unwrap();
    let path = scratch("parquet");
    let mut w = ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), arrow, None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    path
}

/// A code column must hold integers, as for the native Parquet loader: the engine would
/// otherwise cast 2.7 to code 2, the text "3" to code 3 and `true` to code 1 and count them.
/// Refused before the query runs, naming the column and its type (public), never a value.
#[test]
fn parquet_columns_that_are_not_integers_are_refused_by_column() {
    let schema = small();
    let w = MarginalWorkload::all_kway(schema.domain(), 2).unwrap();
    let a: ArrayRef = Arc::new(Int64Array::from(vec![0, 1]));
    let b: ArrayRef = Arc::new(UInt8Array::from(vec![1, 0]));
    for (c, found) in [
        (
            Arc::new(Float64Array::from(vec![0.0, 2.7])) as ArrayRef,
            "floating-point numbers",
        ),
        (
            Arc::new(StringArray::from(vec!["1", "3"])) as ArrayRef,
            "text",
        ),
        (
            Arc::new(BooleanArray::from(vec![true, false])) as ArrayRef,
            "true/false values",
        ),
    ] {
        let p = parquet_of(vec![("a", a.clone()), ("b", b.clone()), ("c", c)]);
        for plan in [CountPlan::GroupingSets, CountPlan::PerTable] {
            let e = count_datafusion(&p, &schema, &w, &settings(plan)).unwrap_err();
            assert!(matches!(&e, QueryError::EngineUnsupported { .. }), "{e:?}");
            let msg = e.to_string();
            assert!(
                msg.contains(&format!("column 'c' holds {found}")),
                "{found}: {msg}"
            );
            assert!(!msg.contains("2.7") && !msg.contains("\"3\""), "{msg}");
        }
    }
    // integer columns of any width, signed or not, are read
    let c: ArrayRef = Arc::new(Int32Array::from(vec![3, 0]));
    let p = parquet_of(vec![("a", a), ("b", b), ("c", c)]);
    let got = count_datafusion(&p, &schema, &w, &EngineSettings::default()).unwrap();
    assert_eq!(got.rows, 2);
}

#[test]
fn labelled_schemas_and_other_formats_are_refused_with_a_reason() {
    let labelled =
        Schema::from_json_str(r#"{"a": {"labels": ["x", "y"]}, "b": 2}"#, "s.json").unwrap();
    let w = MarginalWorkload::all_kway(labelled.domain(), 1).unwrap();
    let p = write("a,b\nx,0\n");
    let e = count_datafusion(&p, &labelled, &w, &EngineSettings::default()).unwrap_err();
    assert!(
        e.to_string().contains("column 'a' has labels or bins"),
        "{e}"
    );
    let gz = scratch("csv.gz");
    std::fs::write(&gz, b"").unwrap();
    let schema = small();
    let w = MarginalWorkload::all_kway(schema.domain(), 1).unwrap();
    let e = count_datafusion(&gz, &schema, &w, &EngineSettings::default()).unwrap_err();
    assert!(
        e.to_string().contains("is not a .csv or .parquet file"),
        "{e}"
    );
}

#[cfg(feature = "ballista")]
mod ballista {
    use super::*;
    use dp_queries::io::engine::ballista::{LoopbackCluster, count_ballista};

    /// A scheduler and 2 executors on 127.0.0.1 in this process; the counts of all 2-way and
    /// 8 random 3-way marginals of nltcs (CSV) and adult (Parquet) equal the native counts
    /// (the 3-way ones also with the per-table plan, one `UNION ALL` sent to the cluster), and
    /// a bad value is refused as in process.
    #[test]
    fn ballista_loopback_counts_equal_native_counts() {
        let cluster = LoopbackCluster::start(2, 1).unwrap();
        assert!(cluster.url().starts_with("df://"));
        assert_eq!(cluster.executors(), 2);
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(9);
        for (name, parquet) in [("nltcs", false), ("adult", true)] {
            let (csv, schema) = bundled(name);
            let file = if parquet {
                write_parquet(&csv, &schema)
            } else {
                csv.clone()
            };
            let domain = schema.domain();
            let all2 = MarginalWorkload::all_kway(domain, 2).unwrap();
            let random3 = MarginalWorkload::random_kway(domain, 3, 8, None, &mut rng).unwrap();
            for (w, plan) in [
                (&all2, CountPlan::Auto),
                (&random3, CountPlan::Auto),
                (&random3, CountPlan::PerTable),
            ] {
                let expected = native(&csv, &schema, w);
                let settings = EngineSettings {
                    plan,
                    ..EngineSettings::default()
                };
                let got = cluster.count(&file, &schema, w, &settings).unwrap();
                assert_eq!(got.counts, expected.counts, "{name} {plan:?}");
                assert_eq!(got.rows, expected.rows, "{name} {plan:?}");
            }
        }
        let e = cluster
            .count(
                &write("a,b,c\n0,0,0\n1,1,5\n"),
                &small(),
                &MarginalWorkload::all_kway(small().domain(), 2).unwrap(),
                &EngineSettings::default(),
            )
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "Ballista: column 'c' has a value outside its codes 0..4; nothing was counted"
        );
    }

    /// The scheduler's address must be `df://HOST:PORT`; checked before anything is read or
    /// connected (the data file here does not exist).
    #[test]
    fn scheduler_urls_are_checked_first() {
        let schema = small();
        let w = MarginalWorkload::all_kway(schema.domain(), 1).unwrap();
        let missing = scratch("csv");
        let count = |url: &str| {
            count_ballista(url, &missing, &schema, &w, &EngineSettings::default()).unwrap_err()
        };
        for bad in [
            "127.0.0.1:50050",
            "df://127.0.0.1",
            "df://:50050",
            "df://host:port",
            "df://host:65536",
            "http://host:1",
        ] {
            let e = count(bad);
            assert!(
                matches!(&e, QueryError::EngineUnsupported { .. }),
                "{bad}: {e:?}"
            );
            assert!(e.to_string().contains("df://HOST:PORT"), "{bad}: {e}");
        }
        // a well-formed address passes the check (nothing connects before the query runs):
        // the missing file is the error
        for good in ["df://127.0.0.1:50050", "df://cluster.example:1"] {
            let e = count(good);
            assert!(matches!(&e, QueryError::Io { .. }), "{good}: {e:?}");
        }
    }

    #[test]
    fn an_unreachable_scheduler_is_a_fixed_message() {
        // port 9 (discard) on loopback: nothing listens there in the test environment
        let schema = small();
        let w = MarginalWorkload::all_kway(schema.domain(), 1).unwrap();
        let p = write("a,b,c\n0,0,0\n");
        let e = count_ballista(
            "df://127.0.0.1:9",
            &p,
            &schema,
            &w,
            &EngineSettings::default(),
        )
        .unwrap_err();
        assert!(matches!(&e, QueryError::EngineFailed { .. }), "{e:?}");
        assert!(e.to_string().starts_with("Ballista: "), "{e}");
    }
}
