//! CSV / JSON loader: one test per error kind (variant, file, line, column), the real data
//! files, name matching, and a no-panic property test on random bytes.

use std::path::{Path, PathBuf};

use dp_queries::{Dataset, Domain, QueryError};
use proptest::prelude::*;

const F: &str = "test.csv";

fn dom() -> Domain {
    Domain::new(vec![("a".into(), 3), ("b".into(), 2), ("c".into(), 10)]).unwrap()
}

fn load(text: &[u8]) -> Result<Dataset, QueryError> {
    Dataset::from_csv_reader(text, F, dom())
}

fn tmp(name: &str, contents: &[u8]) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("dp-queries-loader");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, contents).unwrap();
    p
}

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data")
}

#[test]
fn good_file_with_crlf_trailing_newline_and_reordered_columns() {
    // Header order c,a,b differs from the domain order a,b,c.
    let d = load(b"c,a,b\r\n9,2,1\r\n0,0,0\r\n").unwrap();
    assert_eq!(d.n(), 2);
    assert_eq!(d.column(0), &[2, 0]);
    assert_eq!(d.column(1), &[1, 0]);
    assert_eq!(d.column(2), &[9, 0]);
    assert_eq!(d.record(0), vec![2, 1, 9]);
    // Without trailing newline, with a BOM, quoted field, leading zeros: same data.
    let d2 = load(b"\xEF\xBB\xBFc,a,b\n9,\"2\",01\n0,0,000").unwrap();
    assert_eq!(d2.columns(), d.columns());
}

#[test]
fn empty_file() {
    for text in [&b""[..], b"\n\n", b"\r\n"] {
        match load(text) {
            Err(QueryError::EmptyFile { file }) => assert_eq!(file, F),
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn header_only() {
    for text in [&b"a,b,c"[..], b"a,b,c\n", b"a,b,c\r\n\r\n"] {
        match load(text) {
            Err(QueryError::NoRecords { file }) => assert_eq!(file, F),
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn header_only_is_the_empty_dataset_when_allowed() {
    // for add/remove releases, where the empty dataset must be releasable
    let csv = tmp("header-only.csv", b"a,b,c\n");
    let domain = tmp("header-only.json", br#"{"a": 3, "b": 2, "c": 10}"#);
    let d = Dataset::load_csv_allowing_empty(&csv, &domain).unwrap();
    assert_eq!(d.n(), 0);
    assert_eq!(d.domain(), &dom());
    assert!(matches!(
        Dataset::load_csv(&csv, &domain),
        Err(QueryError::NoRecords { .. })
    ));
    // the other errors are unchanged
    let bad = tmp("header-only-bad.csv", b"a,b,c\n1,2\n");
    assert!(matches!(
        Dataset::load_csv_allowing_empty(&bad, &domain),
        Err(QueryError::RaggedRow { .. })
    ));
    // there are no normalised answers of the empty dataset
    let w = dp_queries::MarginalWorkload::all_kway(&dom(), 1).unwrap();
    assert_eq!(w.count_all(&d).unwrap(), vec![0; 15]);
    assert!(matches!(w.answers(&d), Err(QueryError::EmptyDataset)));
}

#[test]
fn duplicate_header() {
    match load(b"a,b,c,b\n0,0,0,0\n") {
        Err(QueryError::DuplicateHeader { file, column }) => {
            assert_eq!((file.as_str(), column.as_str()), (F, "b"))
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn missing_column() {
    match load(b"c,a\n0,0\n") {
        Err(QueryError::MissingColumn { file, column }) => {
            assert_eq!((file.as_str(), column.as_str()), (F, "b"))
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn extra_column() {
    match load(b"a,b,zz,c\n0,0,0,0\n") {
        Err(QueryError::ExtraColumn { file, column }) => {
            assert_eq!((file.as_str(), column.as_str()), (F, "zz"))
        }
        other => panic!("{other:?}"),
    }
    // Header names are matched exactly: " a" is not "a".
    match load(b" a,b,c\n0,0,0\n") {
        Err(QueryError::ExtraColumn { column, .. }) => assert_eq!(column, " a"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn ragged_row() {
    match load(b"a,b,c\n0,0,0\n1,1\n") {
        Err(QueryError::RaggedRow {
            file,
            line,
            expected,
            found,
        }) => assert_eq!((file.as_str(), line, expected, found), (F, 3, 3, 2)),
        other => panic!("{other:?}"),
    }
    match load(b"a,b,c\r\n0,0,0\r\n\r\n1,1,1,1\r\n") {
        // A blank line is skipped but still counted: the long record is on line 4.
        Err(QueryError::RaggedRow { line, found, .. }) => assert_eq!((line, found), (4, 4)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn not_integer() {
    for bad in ["1.5", "-1", "+1", "abc", " 3", "3 ", "", "1e2", "0x1"] {
        let text = format!("a,b,c\n0,0,0\n1,1,1\n2,0,{bad}\n");
        match load(text.as_bytes()) {
            Err(QueryError::NotInteger {
                file,
                line,
                column,
                value,
            }) => {
                assert_eq!(
                    (file.as_str(), line, column.as_str()),
                    (F, 4, "c"),
                    "{bad:?}"
                );
                assert_eq!(value, bad);
            }
            other => panic!("{bad:?}: {other:?}"),
        }
    }
}

#[test]
fn out_of_domain() {
    // Column order in the file: b,a,c; the bad code is in column a (size 3) on line 3.
    match load(b"b,a,c\n1,2,9\n0,3,0\n") {
        Err(QueryError::OutOfDomain {
            file,
            line,
            column,
            value,
            size,
        }) => assert_eq!(
            (file.as_str(), line, column.as_str(), value.as_str(), size),
            (F, 3, "a", "3", 3)
        ),
        other => panic!("{other:?}"),
    }
    // A code too large for u64 is still out of domain, not "not an integer".
    match load(b"a,b,c\n0,0,99999999999999999999999\n") {
        Err(QueryError::OutOfDomain {
            line, column, size, ..
        }) => {
            assert_eq!((line, column.as_str(), size), (2, "c", 10))
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn non_utf8() {
    match load(b"a,b,c\n0,0,0\n0,\xff,0\n") {
        Err(QueryError::NonUtf8 { file, line }) => assert_eq!((file.as_str(), line), (F, 3)),
        other => panic!("{other:?}"),
    }
    match load(b"a,b\xc3,c\n0,0,0\n") {
        Err(QueryError::NonUtf8 { line, .. }) => assert_eq!(line, 1),
        other => panic!("{other:?}"),
    }
}

#[test]
fn io_error_names_the_path() {
    let missing = Path::new(env!("CARGO_TARGET_TMPDIR")).join("no-such-file.csv");
    let domain = tmp("io-domain.json", br#"{"a": 3, "b": 2, "c": 10}"#);
    match Dataset::load_csv(&missing, &domain) {
        Err(QueryError::Io { path, .. }) => assert_eq!(path, missing),
        other => panic!("{other:?}"),
    }
    match Dataset::load_csv(&domain, &missing) {
        Err(QueryError::Io { path, .. }) => assert_eq!(path, missing),
        other => panic!("{other:?}"),
    }
}

#[test]
fn load_csv_from_files_reports_the_path() {
    let domain = tmp("d.json", br#"{"c": 10, "b": 2, "a": 3}"#);
    let csv = tmp("ok.csv", b"a,b,c\n2,1,9\n");
    let d = Dataset::load_csv(&csv, &domain).unwrap();
    assert_eq!(d.domain().names().collect::<Vec<_>>(), vec!["c", "b", "a"]);
    assert_eq!(d.record(0), vec![9, 1, 2]);
    let bad = tmp("bad.csv", b"a,b,c\n2,1,10\n");
    match Dataset::load_csv(&bad, &domain) {
        Err(QueryError::OutOfDomain {
            file, line, column, ..
        }) => {
            assert_eq!(file, bad.display().to_string());
            assert_eq!((line, column.as_str()), (2, "c"));
        }
        other => panic!("{other:?}"),
    }
    let bad_json = tmp("bad.json", br#"{"a": 3,"#);
    match Dataset::load_csv(&csv, &bad_json) {
        Err(QueryError::BadJson { file, .. }) => assert_eq!(file, bad_json.display().to_string()),
        other => panic!("{other:?}"),
    }
}

#[test]
fn in_memory_columns_are_validated() {
    assert!(matches!(
        Dataset::from_columns(dom(), vec![vec![0], vec![0]]),
        Err(QueryError::LengthMismatch {
            expected: 3,
            found: 2
        })
    ));
    assert!(matches!(
        Dataset::from_columns(dom(), vec![vec![0, 1], vec![0], vec![0, 0]]),
        Err(QueryError::LengthMismatch {
            expected: 2,
            found: 1
        })
    ));
    assert!(matches!(
        Dataset::from_columns(dom(), vec![vec![], vec![], vec![]]),
        Err(QueryError::EmptyDataset)
    ));
    match Dataset::from_columns(dom(), vec![vec![0, 1], vec![0, 2], vec![0, 0]]) {
        Err(QueryError::CodeOutOfRange {
            attribute,
            row,
            value,
            size,
        }) => assert_eq!((attribute.as_str(), row, value, size), ("b", 1, 2, 2)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn adult_loads() {
    let dir = data_dir().join("adult");
    let d = Dataset::load_csv(&dir.join("adult.csv"), &dir.join("adult-domain.json")).unwrap();
    assert_eq!(d.n(), 48_842);
    assert_eq!(d.domain().len(), 14);
    // From the data README: age uses only codes 0..74 of its 85, capital-loss only 0..87.
    let age = d.domain().index_of("age").unwrap();
    assert_eq!(d.domain().size(age), 85);
    assert_eq!(d.column(age).iter().max(), Some(&74));
    let cl = d.domain().index_of("capital-loss").unwrap();
    assert_eq!(d.column(cl).iter().max(), Some(&87));
    // log10 |X| = 17.8 per the README.
    assert!((d.domain().log10_universe_size() - 17.8).abs() < 0.05);
}

#[test]
fn nltcs_loads_with_json_order_different_from_csv_order() {
    let dir = data_dir().join("nltcs");
    let d = Dataset::load_csv(&dir.join("nltcs.csv"), &dir.join("nltcs-domain.json")).unwrap();
    assert_eq!(d.n(), 21_574);
    assert_eq!(d.domain().len(), 16);
    // The JSON lists "bathing" first, the CSV "eating": the domain keeps the JSON order.
    assert_eq!(d.domain().name(0), "bathing");
    // Check record 1 (CSV line 3, "0,1,1,1,1,1,1,1,1,1,1,1,1,0,0,0") by name.
    let header = "eating,getting in/out of bed,getting around inside,dressing,bathing,using toilet,heavy house work,light house work,laundry,cooking,grocery shopping,getting about outside,traveling,managing money,taking medicine,telephoning";
    let line3 = [0u32, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0];
    let rec = d.record(1);
    for (name, want) in header.split(',').zip(line3) {
        let i = d.domain().index_of(name).unwrap();
        assert_eq!(rec[i], want, "{name}");
    }
}

#[test]
fn write_csv_round_trips() {
    let d = load(b"c,a,b\n9,2,1\n0,0,0\n5,1,1\n").unwrap();
    let mut buf = Vec::new();
    d.write_csv(&mut buf).unwrap();
    assert_eq!(
        String::from_utf8(buf.clone()).unwrap(),
        "a,b,c\n2,1,9\n0,0,0\n1,1,5\n"
    );
    let back = Dataset::from_csv_reader(&buf[..], "rt", dom()).unwrap();
    assert_eq!(back.columns(), d.columns());
}

#[test]
fn select_and_subsample() {
    use rand::SeedableRng;
    let d = load(b"a,b,c\n0,0,0\n1,1,1\n2,0,2\n0,1,3\n1,0,4\n").unwrap();
    let s = d.select_attributes(&["c", "a"]).unwrap();
    assert_eq!(s.domain().names().collect::<Vec<_>>(), vec!["c", "a"]);
    assert_eq!(s.column(0), &[0, 1, 2, 3, 4]);
    assert!(matches!(
        d.select_attributes(&["q"]),
        Err(QueryError::UnknownAttribute { .. })
    ));
    assert!(matches!(
        d.select_attributes(&["a", "a"]),
        Err(QueryError::BadDomain { .. })
    ));
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(7);
    let sub = d.subsample(3, &mut rng).unwrap();
    assert_eq!(sub.n(), 3);
    // c is a unique row id here: the sample is 3 distinct original records, in order.
    let ids = sub.column(2);
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    for (r, &id) in ids.iter().enumerate() {
        assert_eq!(sub.record(r), d.record(id as usize));
    }
    assert!(matches!(
        d.subsample(6, &mut rng),
        Err(QueryError::BadSample { .. })
    ));
    assert!(matches!(
        d.subsample(0, &mut rng),
        Err(QueryError::BadSample { .. })
    ));
    let dyn_rng: &mut dyn rand::CryptoRng = &mut rng;
    assert_eq!(d.subsample(5, dyn_rng).unwrap().columns(), d.columns());
}

#[test]
fn subsample_is_uniform_over_records() {
    use rand::SeedableRng;
    // Each record is included with probability k/n = 1/2. Over T = 4000 draws the count of
    // record r is Binomial(4000, 1/2): sd = 31.6; |dev| > 200 (6.3 sd) has probability
    // < 3e-10 per record, < 2e-9 for all 6 records.
    let d = load(b"a,b,c\n0,0,0\n0,0,1\n0,0,2\n0,0,3\n0,0,4\n0,0,5\n").unwrap();
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(11);
    let mut hits = [0i64; 6];
    for _ in 0..4000 {
        for &id in d.subsample(3, &mut rng).unwrap().column(2) {
            hits[id as usize] += 1;
        }
    }
    for h in hits {
        assert!((h - 2000).abs() < 200, "{hits:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// No byte string panics the loader.
    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = load(&bytes);
    }

    /// Random bytes built from CSV-ish pieces (more likely to reach the deeper checks).
    #[test]
    fn csvish_bytes_never_panic(pieces in proptest::collection::vec(
        prop_oneof![
            Just(&b"a"[..]), Just(&b"b"[..]), Just(&b"c"[..]), Just(&b","[..]), Just(&b"\n"[..]),
            Just(&b"\r\n"[..]), Just(&b"\""[..]), Just(&b"0"[..]), Just(&b"9"[..]), Just(&b"\xff"[..]),
            Just(&b"-"[..]), Just(&b"99999999999999999999"[..]), Just(&b"a,b,c\n"[..]),
        ], 0..60)) {
        let bytes: Vec<u8> = pieces.concat();
        if let Ok(d) = load(&bytes) {
            prop_assert!(d.n() >= 1);
            for i in 0..3 {
                prop_assert!(d.column(i).iter().all(|&c| c < d.domain().size(i)));
            }
        }
    }

    /// Random valid datasets survive write_csv → from_csv_reader.
    #[test]
    fn write_read_round_trip(rows in proptest::collection::vec((0u32..3, 0u32..2, 0u32..10), 1..30)) {
        let cols = vec![
            rows.iter().map(|r| r.0).collect(),
            rows.iter().map(|r| r.1).collect(),
            rows.iter().map(|r| r.2).collect(),
        ];
        let d = Dataset::from_columns(dom(), cols).unwrap();
        let mut buf = Vec::new();
        d.write_csv(&mut buf).unwrap();
        let back = load(&buf).unwrap();
        prop_assert_eq!(back.columns(), d.columns());
    }
}

#[test]
fn line_numbers_count_blank_lines_and_quotes_work() {
    // Header on line 3 after two blank lines; bad code on line 6 (line 5 is blank).
    match load(b"\n\r\na,b,c\r\n0,0,0\r\n\r\n0,0,x\r\n") {
        Err(QueryError::NotInteger { line, column, .. }) => {
            assert_eq!((line, column.as_str()), (6, "c"))
        }
        other => panic!("{other:?}"),
    }
    // Quoted header names with a comma and an escaped quote.
    let d = Domain::new(vec![("x,y".into(), 2), ("say \"hi\"".into(), 3)]).unwrap();
    let data =
        Dataset::from_csv_reader(&b"\"say \"\"hi\"\"\",\"x,y\"\n2,1\n"[..], F, d.clone()).unwrap();
    assert_eq!(data.record(0), vec![1, 2]);
    let mut buf = Vec::new();
    data.write_csv(&mut buf).unwrap();
    let back = Dataset::from_csv_reader(&buf[..], F, d).unwrap();
    assert_eq!(back.columns(), data.columns());
}

/// gzip-compressed CSV loads like the plain file (by the `.gz` name and, under another
/// name, by the gzip magic bytes), and a damaged gzip stream is an error, not a panic or a
/// truncated table.
#[test]
fn gzip_csv_loads_like_the_plain_file() {
    use std::io::Write;
    let csv = b"c,a,b\n3,0,1\n9,2,0\n0,1,1\n";
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(csv).unwrap();
    let gz = gz.finish().unwrap();
    let domain = tmp("gz-domain.json", br#"{"a": 3, "b": 2, "c": 10}"#);
    let plain = Dataset::load_csv(&tmp("plain.csv", csv), &domain).unwrap();
    for name in ["data.csv.gz", "data-without-suffix.csv"] {
        let got = Dataset::load_file(&tmp(name, &gz), &domain).unwrap();
        assert_eq!(got, plain, "{name}");
    }
    let mut damaged = gz.clone();
    let mid = damaged.len() / 2;
    damaged.truncate(mid);
    assert!(Dataset::load_file(&tmp("damaged.csv.gz", &damaged), &domain).is_err());
}
