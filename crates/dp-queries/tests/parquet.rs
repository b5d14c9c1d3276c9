//! Parquet input (cargo feature `parquet`): the loader and the streaming counter against the
//! CSV loader on the bundled tables, the schema's labels and bins for text, dictionary and
//! numeric columns, and every refusal (null, out-of-range code, missing or extra column,
//! wrong type) located by file, row group, row and column.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{
    ArrayRef, DictionaryArray, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray,
    UInt8Array, types::Int16Type,
};
use arrow_schema::{DataType, Field, Schema as ArrowSchema};
use dp_queries::{
    ConjunctionWorkload, Dataset, Domain, MarginalWorkload, Parallelism, ParquetCodesWriter,
    QueryError, QueryKind, ReadOptions, Schema, StreamSettings, Workload, count_csv_streaming,
    count_parquet_streaming, is_parquet,
};
use rand::SeedableRng;

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data")
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dpqr-parquet-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The bundled table `name`, its schema, and the same rows written as Parquet in row groups
/// of `group` rows.
fn bundled_as_parquet(name: &str, group: usize, dir: &Path) -> (Dataset, Schema, PathBuf) {
    let csv = data_dir().join(format!("{name}/{name}.csv"));
    let dom = data_dir().join(format!("{name}/{name}-domain.json"));
    let data = Dataset::load_csv(&csv, &dom).unwrap();
    let schema = Schema::from_json_file(&dom).unwrap();
    let path = dir.join(format!("{name}.parquet"));
    let f = std::fs::File::create(&path).unwrap();
    let mut w = ParquetCodesWriter::new(f, data.domain(), group).unwrap();
    // written in two pieces, so the row groups do not follow the write calls
    let half = data.n() / 2;
    let first = Dataset::from_columns(
        data.domain().clone(),
        data.columns().iter().map(|c| c[..half].to_vec()).collect(),
    )
    .unwrap();
    let second = Dataset::from_columns(
        data.domain().clone(),
        data.columns().iter().map(|c| c[half..].to_vec()).collect(),
    )
    .unwrap();
    w.write(&first).unwrap();
    w.write(&second).unwrap();
    w.finish().unwrap();
    (data, schema, path)
}

fn settings(batch_rows: usize, parallelism: Parallelism) -> StreamSettings {
    StreamSettings {
        batch_rows,
        parallelism,
    }
}

#[test]
fn bundled_tables_load_and_stream_equal_to_csv() {
    let dir = temp_dir("bundled");
    for name in ["nltcs", "adult"] {
        let (csv_data, schema, path) = bundled_as_parquet(name, 5000, &dir);
        assert!(is_parquet(&path));
        let dom = data_dir().join(format!("{name}/{name}-domain.json"));
        let loaded = Dataset::load_file(&path, &dom).unwrap();
        assert_eq!(
            loaded, csv_data,
            "{name}: the Parquet dataset equals the CSV one"
        );
        let domain = schema.domain().clone();
        let two = MarginalWorkload::all_kway(&domain, 2).unwrap();
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(5);
        let three = MarginalWorkload::random_kway(&domain, 3, 16, None, &mut rng).unwrap();
        let conj =
            ConjunctionWorkload::random_kway(&domain, QueryKind::Conjunction, 2, 20, &mut rng)
                .unwrap();
        let expected_two = Workload::count_all(&two, &csv_data).unwrap();
        let expected_three = Workload::count_all(&three, &csv_data).unwrap();
        let expected_conj = conj.count_all(&csv_data).unwrap();
        for batch in [777, 5000, 1 << 16] {
            for threads in [1, 2, 3] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                pool.install(|| {
                    for par in [Parallelism::None, Parallelism::Rayon] {
                        let s = settings(batch, par);
                        let got = count_parquet_streaming(
                            &path,
                            &schema,
                            &ReadOptions::default(),
                            &two,
                            &s,
                        )
                        .unwrap();
                        assert_eq!(got.counts, expected_two, "{name} batch {batch} {threads}");
                        assert_eq!(got.rows, csv_data.n() as u64);
                        let got = count_parquet_streaming(
                            &path,
                            &schema,
                            &ReadOptions::default(),
                            &three,
                            &s,
                        )
                        .unwrap();
                        assert_eq!(got.counts, expected_three);
                        let got = count_parquet_streaming(
                            &path,
                            &schema,
                            &ReadOptions::default(),
                            &conj,
                            &s,
                        )
                        .unwrap();
                        assert_eq!(got.counts, expected_conj);
                    }
                });
            }
        }
        // a batch never spans two row groups: 5000-row groups in batches of 777
        let got = count_parquet_streaming(
            &path,
            &schema,
            &ReadOptions::default(),
            &two,
            &settings(777, Parallelism::Rayon),
        )
        .unwrap();
        let batches: usize = (0..csv_data.n())
            .step_by(5000)
            .map(|start| (csv_data.n() - start).min(5000).div_ceil(777))
            .sum();
        assert_eq!(got.batches, batches as u64);
        // one row group, fewer than the workers: its batches are counted with rayon inside
        let (_, _, single) = bundled_as_parquet(name, 1 << 20, &dir);
        for threads in [2, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let got = pool
                .install(|| {
                    count_parquet_streaming(
                        &single,
                        &schema,
                        &ReadOptions::default(),
                        &three,
                        &settings(4096, Parallelism::Rayon),
                    )
                })
                .unwrap();
            assert_eq!(got.counts, expected_three);
            assert_eq!(got.batches, csv_data.n().div_ceil(4096) as u64);
        }
        // the CSV streaming counter agrees too
        let csv = std::fs::read(data_dir().join(format!("{name}/{name}.csv"))).unwrap();
        let got = count_csv_streaming(
            csv.as_slice(),
            "t.csv",
            &schema,
            &ReadOptions::default(),
            &two,
            &settings(999, Parallelism::Rayon),
        )
        .unwrap();
        assert_eq!(got.counts, expected_two);
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Writes `batches` (one schema) as Parquet in row groups of `group` rows.
fn write_batches(path: &Path, batches: &[RecordBatch], group: usize) {
    let f = std::fs::File::create(path).unwrap();
    let props = parquet::file::properties::WriterProperties::builder()
        .set_max_row_group_row_count(Some(group))
        .build();
    let mut w = parquet::arrow::ArrowWriter::try_new(f, batches[0].schema(), Some(props)).unwrap();
    for b in batches {
        w.write(b).unwrap();
    }
    w.close().unwrap();
}

fn batch(columns: Vec<(&str, ArrayRef)>) -> RecordBatch {
    let fields: Vec<Field> = columns
        .iter()
        .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
        .collect();
    RecordBatch::try_new(
        Arc::new(ArrowSchema::new(fields)),
        columns.into_iter().map(|(_, a)| a).collect(),
    )
    .unwrap()
}

fn codes_schema() -> Schema {
    Schema::codes(Domain::new(vec![("a".to_string(), 3), ("b".to_string(), 4)]).unwrap())
}

/// `a` (Int32, 0..3) and `b` (Int64, 0..4) over 25 rows, with `edit` applied to the
/// vectors first; written in row groups of 10.
fn small_file(
    dir: &Path,
    name: &str,
    edit: impl FnOnce(&mut Vec<Option<i32>>, &mut Vec<Option<i64>>),
) -> PathBuf {
    let mut a: Vec<Option<i32>> = (0..25).map(|i| Some(i % 3)).collect();
    let mut b: Vec<Option<i64>> = (0..25).map(|i| Some(i64::from(i % 4))).collect();
    edit(&mut a, &mut b);
    let path = dir.join(name);
    let full = batch(vec![
        ("b", Arc::new(Int64Array::from(b)) as ArrayRef),
        ("a", Arc::new(Int32Array::from(a)) as ArrayRef),
    ]);
    write_batches(&path, &[full], 10);
    path
}

/// The loader's error, checked to be also the streaming counter's for several batch sizes
/// and thread counts.
fn load_error(path: &Path, schema: &Schema) -> QueryError {
    let e = Dataset::from_parquet(path, schema, false).unwrap_err();
    let w = MarginalWorkload::all_kway(schema.domain(), 1).unwrap();
    for batch in [1, 3, 100] {
        for threads in [1, 2, 4] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let s = pool
                .install(|| {
                    count_parquet_streaming(
                        path,
                        schema,
                        &ReadOptions::default(),
                        &w,
                        &settings(batch, Parallelism::Rayon),
                    )
                })
                .unwrap_err();
            assert_eq!(
                s.to_string(),
                e.to_string(),
                "batch {batch}, {threads} threads"
            );
        }
    }
    e
}

#[test]
fn integer_columns_of_any_width_and_order_load() {
    let dir = temp_dir("ints");
    let path = small_file(&dir, "ok.parquet", |_, _| {});
    let d = Dataset::from_parquet(&path, &codes_schema(), false).unwrap();
    assert_eq!(d.n(), 25);
    assert_eq!(d.column(0)[..4], [0, 1, 2, 0]);
    assert_eq!(d.column(1)[..5], [0, 1, 2, 3, 0]);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_null_is_refused_with_its_row_group_row_and_column() {
    let dir = temp_dir("null");
    // row 13 of the file = row group 1, row 3
    let path = small_file(&dir, "null.parquet", |a, _| a[13] = None);
    let e = load_error(&path, &codes_schema());
    let QueryError::ParquetValue {
        row_group,
        row,
        column,
        ..
    } = &e
    else {
        panic!("{e}")
    };
    assert_eq!((*row_group, *row, column.as_str()), (1, 3, "a"));
    let text = e.to_string();
    assert!(text.contains("null.parquet: row group 1, row 3"), "{text}");
    assert!(text.contains("missing (null)"), "{text}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn out_of_range_codes_are_refused_first_row_then_leftmost_column() {
    let dir = temp_dir("range");
    // b (the file's first column) is bad at row 22, a at rows 21 and 22: row 21 is first
    let path = small_file(&dir, "range.parquet", |a, b| {
        a[21] = Some(3);
        a[22] = Some(-1);
        b[22] = Some(9);
    });
    let e = load_error(&path, &codes_schema()).to_string();
    assert!(
        e.contains("row group 2, row 1 (both counted from 0): column 'a': code 3 is outside 0..3"),
        "{e}"
    );
    let path = small_file(&dir, "range2.parquet", |a, b| {
        a[4] = Some(-1);
        b[4] = Some(4);
    });
    let e = load_error(&path, &codes_schema()).to_string();
    assert!(
        e.contains("row group 0, row 4 (both counted from 0): column 'b': code 4 is outside 0..4"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn missing_extra_and_mistyped_columns_are_refused_by_name() {
    let dir = temp_dir("columns");
    let schema = codes_schema();
    let ints = |v: Vec<i32>| Arc::new(Int32Array::from(v)) as ArrayRef;
    let cases: Vec<(Vec<(&str, ArrayRef)>, &str)> = vec![
        (
            vec![("a", ints(vec![0, 1]))],
            "column 'b': the file has no column of this name",
        ),
        (
            vec![
                ("a", ints(vec![0])),
                ("b", ints(vec![0])),
                ("c", ints(vec![0])),
            ],
            "column 'c': not an attribute of the domain",
        ),
        (
            vec![
                ("a", ints(vec![0])),
                ("b", Arc::new(Float64Array::from(vec![1.0]))),
            ],
            "column 'b': the column holds floating-point numbers, and the domain gives this \
             attribute integer codes 0..4: store them as an integer column",
        ),
        (
            vec![
                ("a", Arc::new(StringArray::from(vec!["x"]))),
                ("b", ints(vec![0])),
            ],
            "column 'a': the column holds text, and the domain gives this attribute integer \
             codes 0..3: store the codes as an integer column, or give the attribute its labels",
        ),
    ];
    for (i, (columns, expected)) in cases.into_iter().enumerate() {
        let path = dir.join(format!("c{i}.parquet"));
        write_batches(&path, &[batch(columns)], 10);
        let e = load_error(&path, &schema);
        assert!(matches!(e, QueryError::ParquetColumn { .. }), "{e}");
        assert!(e.to_string().contains(expected), "{e}");
    }
    // not Parquet at all, though named so
    let path = dir.join("text.parquet");
    std::fs::write(&path, "a,b\n0,0\n").unwrap();
    let e = Dataset::from_parquet(&path, &schema, false).unwrap_err();
    assert!(matches!(e, QueryError::ParquetRead { .. }), "{e}");
    let text = e.to_string();
    assert!(
        text.starts_with(&format!(
            "{}: cannot read it as a Parquet file: damaged or not Parquet (",
            path.display()
        )),
        "{text}"
    );
    assert!(
        !text.contains("Parquet error:"),
        "no internal labels: {text}"
    );
    // no rows: refused unless allowed
    let path = dir.join("empty.parquet");
    write_batches(
        &path,
        &[batch(vec![("a", ints(vec![])), ("b", ints(vec![]))])],
        10,
    );
    assert!(matches!(
        Dataset::from_parquet(&path, &schema, false),
        Err(QueryError::NoRecords { .. })
    ));
    assert_eq!(Dataset::from_parquet(&path, &schema, true).unwrap().n(), 0);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn text_dictionary_and_numbers_go_through_the_schema_as_csv_does() {
    let dir = temp_dir("schema");
    let json = r#"{"sex": {"labels": ["female", "male"]},
                   "region": {"labels": ["north", "south"], "other": true},
                   "age": {"bins": [0, 18, 65, 120]},
                   "flag": 2}"#;
    let schema = Schema::from_json_str(json, "s.json").unwrap();
    let sex = ["male", "female", "female", "male", "male", "female"];
    let region = [
        Some("south"),
        Some("east"),
        None,
        Some("north"),
        Some("north"),
        Some(""),
    ];
    let age = [3.5, 18.0, 64.9, 65.0, 120.0, 0.0];
    let flag: [u8; 6] = [0, 1, 1, 0, 1, 0];
    let keys = vec![1i16, 0, 0, 1, 1, 0];
    let sex_dict = DictionaryArray::<Int16Type>::try_new(
        keys.into(),
        Arc::new(StringArray::from(vec!["female", "male", "unused"])),
    )
    .unwrap();
    let b = batch(vec![
        (
            "flag",
            Arc::new(UInt8Array::from(flag.to_vec())) as ArrayRef,
        ),
        ("age", Arc::new(Float64Array::from(age.to_vec()))),
        ("region", Arc::new(StringArray::from(region.to_vec()))),
        ("sex", Arc::new(sex_dict)),
    ]);
    assert!(matches!(b.column(3).data_type(), DataType::Dictionary(..)));
    let path = dir.join("people.parquet");
    write_batches(&path, &[b], 4);
    let from_parquet = Dataset::from_parquet(&path, &schema, false).unwrap();
    let mut csv = String::from("flag,age,region,sex\n");
    for i in 0..6 {
        csv.push_str(&format!(
            "{},{},{},{}\n",
            flag[i],
            age[i],
            region[i].unwrap_or(""),
            sex[i]
        ));
    }
    let from_csv = Dataset::from_csv_reader_with_schema(csv.as_bytes(), "p.csv", &schema).unwrap();
    assert_eq!(from_parquet, from_csv);
    // domain order sex, region, age, flag; region: east, null and '' go to other (2)
    assert_eq!(from_parquet.column(1), [1, 2, 2, 0, 0, 2]);
    assert_eq!(
        from_parquet.column(2),
        [0, 1, 1, 2, 2, 0],
        "age bins, the last closed"
    );
    // without an other bucket an unknown label names its row group, row and column
    let b = batch(vec![
        ("flag", Arc::new(UInt8Array::from(vec![0u8; 6])) as ArrayRef),
        ("age", Arc::new(Float64Array::from(age.to_vec()))),
        ("region", Arc::new(StringArray::from(vec!["north"; 6]))),
        (
            "sex",
            Arc::new(StringArray::from(vec![
                "male", "male", "male", "male", "Male", "x",
            ])),
        ),
    ]);
    let path = dir.join("bad.parquet");
    write_batches(&path, &[b], 4);
    let e = load_error(&path, &schema).to_string();
    assert!(
        e.contains(
            "row group 1, row 0 (both counted from 0): column 'sex': 'Male' is outside the schema"
        ),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_parquet_file_is_recognised_by_its_magic_bytes() {
    let dir = temp_dir("magic");
    let path = small_file(&dir, "data.bin", |_, _| {});
    assert!(is_parquet(&path));
    let dom = dir.join("d.json");
    std::fs::write(&dom, r#"{"a": 3, "b": 4}"#).unwrap();
    assert_eq!(Dataset::load_file(&path, &dom).unwrap().n(), 25);
    let csv = dir.join("data.csv");
    std::fs::write(&csv, "a,b\n1,2\n").unwrap();
    assert!(!is_parquet(&csv));
    assert_eq!(Dataset::load_file(&csv, &dom).unwrap().n(), 1);
    std::fs::remove_dir_all(&dir).ok();
}

/// A null is an empty cell: with `"missing": true` it goes to the missing code (as an empty
/// CSV field does), separate from `other`; an extra column — of any type, nulls included —
/// is refused unless the options ignore it, and then the file reads as the CSV does.
#[test]
fn nulls_go_to_the_missing_code_and_extra_columns_are_ignored_when_told() {
    let dir = temp_dir("missing");
    let json = r#"{"region": {"labels": ["north", "south"], "missing": true, "other": true},
                   "age": {"bins": [0, 18, 120], "missing": true}}"#;
    let schema = Schema::from_json_str(json, "s.json").unwrap();
    let region = [Some("south"), None, Some("east"), Some(""), Some("north")];
    let age = [Some(3.0), Some(40.0), None, Some(18.0), None];
    let b = batch(vec![
        (
            "name",
            Arc::new(StringArray::from(vec![
                None,
                Some("a"),
                None,
                Some("b"),
                None,
            ])) as ArrayRef,
        ),
        ("age", Arc::new(Float64Array::from(age.to_vec()))),
        ("region", Arc::new(StringArray::from(region.to_vec()))),
    ]);
    let path = dir.join("people.parquet");
    write_batches(&path, &[b], 2);
    let ignore = ReadOptions::new(',', true).unwrap();
    let from_parquet = Dataset::load_file_with(&path, &schema, &ignore, false).unwrap();
    // region: north 0, south 1, missing 2, other 3; age: two bins, missing 2
    assert_eq!(from_parquet.column(0), [1, 2, 3, 2, 0]);
    assert_eq!(from_parquet.column(1), [0, 1, 2, 1, 2]);
    let mut csv = String::from("name,age,region\n");
    for i in 0..5 {
        let a = age[i].map(|v| v.to_string()).unwrap_or_default();
        csv.push_str(&format!("n,{a},{}\n", region[i].unwrap_or("")));
    }
    let from_csv =
        Dataset::from_csv_reader_with_options(csv.as_bytes(), "p.csv", &schema, &ignore).unwrap();
    assert_eq!(from_parquet, from_csv);
    let w = MarginalWorkload::all_kway(schema.domain(), 2).unwrap();
    let streamed = count_parquet_streaming(
        &path,
        &schema,
        &ignore,
        &w,
        &settings(1, Parallelism::Rayon),
    )
    .unwrap();
    let exact: Vec<i64> = w
        .count_all(&from_parquet)
        .unwrap()
        .into_iter()
        .map(|c| c as i64)
        .collect();
    assert_eq!(streamed.counts, exact);
    // without the option: refused by name
    let e = load_error(&path, &schema).to_string();
    assert!(
        e.contains("column 'name': not an attribute of the domain"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
