//! The streaming counter against the in-memory loader: equal counts for any batch size and
//! thread setting, the same errors (file, line, column) for bad input.

use dp_queries::{
    ConjunctionWorkload, Dataset, Domain, MarginalWorkload, Parallelism, QueryKind, Schema,
    StreamSettings, Workload, count_csv_streaming,
};
use rand::{RngExt, SeedableRng};

fn domain() -> Domain {
    Domain::new(vec![
        ("a".to_string(), 3),
        ("b".to_string(), 2),
        ("c".to_string(), 5),
    ])
    .unwrap()
}

/// A CSV with the columns in another order than the domain, a BOM, CRLF line ends and
/// blank lines.
fn csv(n: usize, seed: u64) -> String {
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
    let mut s = String::from("\u{feff}c,a,b\r\n");
    for i in 0..n {
        let (a, b, c) = (
            rng.random_range(0..3u32),
            rng.random_range(0..2u32),
            rng.random_range(0..5u32),
        );
        s.push_str(&format!("{c},{a},{b}\r\n"));
        if i % 17 == 0 {
            s.push('\n');
        }
    }
    s
}

fn stream<W: Workload>(
    text: &str,
    w: &W,
    batch: usize,
    par: Parallelism,
) -> dp_queries::Result<dp_queries::StreamedCounts> {
    count_csv_streaming(
        text.as_bytes(),
        "t.csv",
        &Schema::codes(domain()),
        &dp_queries::ReadOptions::default(),
        w,
        &StreamSettings {
            batch_rows: batch,
            parallelism: par,
        },
    )
}

#[test]
fn streamed_counts_equal_the_in_memory_counts() {
    let text = csv(1000, 1);
    let data = Dataset::from_csv_reader(text.as_bytes(), "t.csv", domain()).unwrap();
    let marginals = MarginalWorkload::all_kway(&domain(), 2).unwrap();
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(2);
    let conj = ConjunctionWorkload::random_kway(&domain(), QueryKind::Disjunction, 2, 15, &mut rng)
        .unwrap();
    for batch in [1, 7, 999, 1000, 4096] {
        for par in [Parallelism::None, Parallelism::Rayon] {
            let s = stream(&text, &marginals, batch, par).unwrap();
            assert_eq!(s.counts, Workload::count_all(&marginals, &data).unwrap());
            assert_eq!(s.rows, 1000);
            assert_eq!(s.batches, 1000u64.div_ceil(batch as u64));
            let s = stream(&text, &conj, batch, par).unwrap();
            assert_eq!(s.counts, conj.count_all(&data).unwrap());
        }
    }
}

#[test]
fn bad_input_gives_the_loaders_error_whatever_the_batch() {
    let good = csv(50, 3);
    let w = MarginalWorkload::all_kway(&domain(), 1).unwrap();
    let mut bad_inputs = vec![
        String::new(),
        "a,b\n0,1\n".to_string(),
        "a,b,c,d\n".to_string(),
        "a,a,b,c\n".to_string(),
    ];
    // a bad record deep in the file: out of range, not an integer, ragged
    for bad in ["9,0,0", "x,0,0", "1,0"] {
        let mut lines: Vec<&str> = good.split('\n').collect();
        lines.insert(40, bad);
        bad_inputs.push(lines.join("\n"));
    }
    // every record from line 20 on is bad: the first one is reported, however many workers
    // fail at once
    let mut lines: Vec<String> = good.split('\n').map(str::to_string).collect();
    for (i, line) in lines.iter_mut().enumerate().skip(19) {
        if !line.is_empty() {
            *line = format!("{},0,0", 3 + i);
        }
    }
    bad_inputs.push(lines.join("\n"));
    for text in &bad_inputs {
        let loader = Dataset::from_csv_reader(text.as_bytes(), "t.csv", domain())
            .unwrap_err()
            .to_string();
        for threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            for batch in [1, 5, 100] {
                let e = pool
                    .install(|| stream(text, &w, batch, Parallelism::Rayon))
                    .unwrap_err()
                    .to_string();
                assert_eq!(e, loader, "batch {batch}, {threads} threads");
            }
        }
    }
}

#[test]
fn streamed_counts_do_not_depend_on_the_thread_count() {
    let text = csv(3000, 9);
    let data = Dataset::from_csv_reader(text.as_bytes(), "t.csv", domain()).unwrap();
    let w = MarginalWorkload::all_kway(&domain(), 3).unwrap();
    let expected = Workload::count_all(&w, &data).unwrap();
    for threads in [1, 2, 3, 5] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        for batch in [1, 64, 1000, 5000] {
            let s = pool
                .install(|| stream(&text, &w, batch, Parallelism::Rayon))
                .unwrap();
            assert_eq!(s.counts, expected, "batch {batch}, {threads} threads");
            assert_eq!(s.rows, 3000);
            assert_eq!(s.batches, 3000u64.div_ceil(batch as u64));
        }
    }
}

#[test]
fn a_header_without_records_gives_zero_counts() {
    let w = MarginalWorkload::all_kway(&domain(), 1).unwrap();
    let s = stream("a,b,c\n\n", &w, 10, Parallelism::None).unwrap();
    assert_eq!(s.rows, 0);
    assert!(s.counts.iter().all(|&c| c == 0));
    assert!(stream("a,b,c\n", &w, 0, Parallelism::None).is_err());
}
