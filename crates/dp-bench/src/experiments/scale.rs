//! The scale bench (issue #15, `cargo xtask bench --only scale`): how fast the exact counts of
//! a workload are made on tables far larger than the bundled ones, in memory and streamed.
//!
//! **Tables.** [`generate`] writes a CSV of `rows` records drawn **with replacement** from a
//! bundled table (ChaCha20 seeded by `seed`, row indices chosen uniformly), with the bundled
//! header: a documented stand-in for a large real table with the same marginal distribution.
//! With the `parquet` feature, [`generate_parquet`] writes **the same rows** (same seed, same
//! draws) as Parquet: one unsigned integer column of codes per attribute (the narrowest
//! width), Snappy, row groups of 2²⁰ rows (`dp_queries::ParquetCodesWriter`).
//!
//! **Measured per size and format** (one JSON line each, `format` = `csv` or `parquet`): the
//! time to read the file's bytes (the floor any counter pays), the native streaming count
//! (`dp_queries::count_csv_streaming` / `count_parquet_streaming`: batches of 65 536
//! records, decoded and counted in parallel across batches — CSV — or row groups — Parquet)
//! and the in-memory load + count, for all 2-way marginals and 64 random 3-way marginals;
//! rows/s, row×marginal updates/s and the peak resident memory of each (Linux `VmHWM`, reset
//! before each). On every size, from the CSV's streamed counts, also the release of
//! `adaptive-projection` (ε = 1, δ = 1e-9, add/remove: what `dpqr release --mechanism
//! adaptive-projection --data FILE` runs after the count; issue #25), for the two workloads
//! and, on adult, the peers' W64 (`data/workloads/adult_w64.json`); its memory does not grow
//! with n. Benchmarks measure; nothing here asserts (the counts' equality is a test in
//! `crates/dp-queries/tests/stream.rs` and `tests/parquet.rs`).

use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use dp_queries::{
    Dataset, MarginalWorkload, Schema, StreamSettings, Workload, count_csv_streaming,
};
use rand::{RngExt, SeedableRng};
use serde::{Deserialize, Serialize};

use super::real::{peak_mib, reset_peak};
use crate::io::datasets::bundled;
use crate::{Result, io_error};

/// Writes `rows` records resampled with replacement from the bundled table `dataset` to
/// `path` (module docs).
pub fn generate(dataset: &str, rows: u64, seed: u64, path: &Path) -> Result<()> {
    let b = bundled(dataset)?;
    let text = std::str::from_utf8(b.csv)
        .map_err(|_| crate::BenchError::Internal(format!("bundled table {dataset}: not UTF-8")))?;
    let mut lines = text.lines().filter(|l| !l.is_empty());
    let header = lines.next().unwrap_or_default();
    let records: Vec<&str> = lines.collect();
    if records.is_empty() {
        return Err(crate::BenchError::Internal(format!(
            "bundled table {dataset} has no records"
        )));
    }
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
    let f = std::fs::File::create(path).map_err(io_error(path))?;
    let mut w = BufWriter::with_capacity(1 << 20, f);
    writeln!(w, "{header}").map_err(io_error(path))?;
    for _ in 0..rows {
        let r = records[rng.random_range(0..records.len())];
        writeln!(w, "{r}").map_err(io_error(path))?;
    }
    w.flush().map_err(io_error(path))?;
    Ok(())
}

/// Writes to `path` the same `rows` records as [`generate`] with the same `seed`, as
/// Parquet (module docs), built `1 << 16` rows at a time (memory independent of `rows`).
#[cfg(feature = "parquet")]
pub fn generate_parquet(dataset: &str, rows: u64, seed: u64, path: &Path) -> Result<()> {
    let b = bundled(dataset)?;
    let data = b.load()?;
    let domain = data.domain().clone();
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
    let f = std::fs::File::create(path).map_err(io_error(path))?;
    let mut w = dp_queries::ParquetCodesWriter::new(BufWriter::new(f), &domain, 1 << 20)?;
    let mut left = rows;
    while left > 0 {
        let take = left.min(1 << 16) as usize;
        let picks: Vec<usize> = (0..take).map(|_| rng.random_range(0..data.n())).collect();
        let columns = (0..domain.len())
            .map(|a| picks.iter().map(|&r| data.column(a)[r]).collect())
            .collect();
        w.write(&Dataset::from_columns(domain.clone(), columns)?)?;
        left -= take as u64;
    }
    w.finish()?.flush().map_err(io_error(path))?;
    Ok(())
}

/// One measurement of the scale bench.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ScaleRecord {
    /// Bundled table resampled.
    pub dataset: String,
    /// Records in the file.
    pub rows: u64,
    /// `"csv"` or `"parquet"` (records written before Parquet was measured are CSV).
    #[serde(default = "csv_format")]
    pub format: String,
    /// File size in bytes.
    pub bytes: u64,
    /// `"all-2way"`, `"random-3way:64"` or (adult) `"W64"`.
    pub workload: String,
    /// Marginals in the workload.
    pub marginals: usize,
    /// `"read-bytes"`, `"streaming"`, `"release"` (the Gaussian release from the streamed
    /// counts: noise and simplex projection, [`release_from_counts`]), `"adaptive-release"`
    /// (adaptive-projection from the streamed counts, [`adaptive_from_counts`]), `"in-memory"`, and
    /// with the engine features
    /// `"datafusion"`, `"datafusion-per-table"`, `"ballista-loopback-2"`
    /// (the `scale_engines` module, behind the engine features).
    pub method: String,
    /// Wall seconds.
    pub seconds: f64,
    /// Records per second (0 for release, which does not read records).
    pub rows_per_second: f64,
    /// Record × marginal updates per second (0 for read-bytes and release).
    pub updates_per_second: f64,
    /// Peak resident memory of the measurement, MiB (Linux; `None` elsewhere).
    pub peak_mib: Option<f64>,
}

fn csv_format() -> String {
    "csv".into()
}

/// Runs the bench for each size in `rows` on `dataset`, writing the generated files and the
/// JSON lines under `out`; `each` sees every record as it is made.
pub fn run_scale(
    dataset: &str,
    rows: &[u64],
    out: &Path,
    mut each: impl FnMut(&ScaleRecord),
) -> Result<Vec<ScaleRecord>> {
    let b = bundled(dataset)?;
    let schema = Schema::from_json_str(b.domain_json, &format!("{}-domain.json", b.name))?;
    let domain = schema.domain().clone();
    let mut workloads = vec![
        (
            "all-2way".to_string(),
            MarginalWorkload::parse_spec(&domain, "all-2way", 0)?,
        ),
        (
            "random-3way:64".to_string(),
            MarginalWorkload::parse_spec(&domain, "random-3way:64", 0)?,
        ),
    ];
    if dataset == "adult" {
        let w64 = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/workloads/adult_w64.json");
        workloads.push((
            "W64".to_string(),
            MarginalWorkload::from_json_file(&domain, &w64)?,
        ));
    }
    let mut records = Vec::new();
    let mut formats = vec!["csv"];
    if cfg!(feature = "parquet") {
        formats.push("parquet");
    }
    #[cfg(feature = "datafusion")]
    let engines = super::scale_engines::EngineRunner::start()?;
    for &n in rows {
        for &format in &formats {
            let path: PathBuf = out.join(format!("scale-{dataset}-{n}.{format}"));
            if format == "csv" {
                generate(dataset, n, 17, &path)?;
            } else {
                #[cfg(feature = "parquet")]
                generate_parquet(dataset, n, 17, &path)?;
            }
            let bytes = std::fs::metadata(&path).map_err(io_error(&path))?.len();
            let mut push = |workload: &str, marginals: usize, method: &str, seconds: f64, peak| {
                let r = ScaleRecord {
                    dataset: dataset.into(),
                    rows: n,
                    format: format.into(),
                    bytes,
                    workload: workload.into(),
                    marginals,
                    method: method.into(),
                    seconds,
                    rows_per_second: if method == "release" || method == "adaptive-release" {
                        0.0
                    } else {
                        n as f64 / seconds.max(1e-9)
                    },
                    updates_per_second: if matches!(
                        method,
                        "read-bytes" | "release" | "adaptive-release"
                    ) {
                        0.0
                    } else {
                        (n as f64 * marginals as f64) / seconds.max(1e-9)
                    },
                    peak_mib: peak,
                };
                each(&r);
                records.push(r);
            };
            // the floor: reading the bytes
            reset_peak();
            let t = Instant::now();
            let mut f = std::fs::File::open(&path).map_err(io_error(&path))?;
            let mut buf = vec![0u8; 1 << 20];
            while f.read(&mut buf).map_err(io_error(&path))? > 0 {}
            push("-", 0, "read-bytes", t.elapsed().as_secs_f64(), peak_mib());
            for (name, w) in &workloads {
                reset_peak();
                let t = Instant::now();
                let streamed = stream(&path, format, &schema, w)?;
                let secs = t.elapsed().as_secs_f64();
                std::hint::black_box(&streamed.counts);
                push(name, w.len(), "streaming", secs, peak_mib());
                reset_peak();
                let t = Instant::now();
                release_from_counts(streamed.counts.clone(), n, w)?;
                push(
                    name,
                    w.len(),
                    "release",
                    t.elapsed().as_secs_f64(),
                    peak_mib(),
                );
                // on every size, from the CSV's counts (the Parquet file's are the same counts,
                // so the same release)
                if format == "csv" {
                    reset_peak();
                    let t = Instant::now();
                    adaptive_from_counts(streamed.counts.clone(), n, w)?;
                    push(
                        name,
                        w.len(),
                        "adaptive-release",
                        t.elapsed().as_secs_f64(),
                        peak_mib(),
                    );
                }
                #[cfg(feature = "datafusion")]
                engines.measure(&path, &schema, w, &streamed.counts, |method, secs, peak| {
                    push(name, w.len(), method, secs, peak)
                })?;
                reset_peak();
                let t = Instant::now();
                let data = if format == "csv" {
                    let f = std::fs::File::open(&path).map_err(io_error(&path))?;
                    Dataset::from_csv_reader(f, &path.display().to_string(), domain.clone())?
                } else {
                    Dataset::from_parquet(&path, &schema, false)?
                };
                let counts = Workload::count_all(w, &data)?;
                let secs = t.elapsed().as_secs_f64();
                std::hint::black_box(&counts);
                drop(data);
                push(name, w.len(), "in-memory", secs, peak_mib());
            }
            std::fs::remove_file(&path).ok();
        }
    }
    Ok(records)
}

/// What a release costs beside the count: the Gaussian mechanism of `dpqr release
/// --mechanism gaussian --epsilon 1 --delta 1e-9 --post simplex` from the exact
/// `counts` of `n` records (discrete Gaussian noise on every cell, then each table projected
/// onto the simplex; seed 1). The answers are dropped: the bench times them, and they are
/// never compared with the data.
pub fn release_from_counts(counts: Vec<i64>, n: u64, workload: &MarginalWorkload) -> Result<()> {
    use dp_mechanisms::{GaussianParams, Mechanism, PostProcessing};
    let mechanism = GaussianParams::new(dp_core::PrivacyLoss::Approx {
        epsilon: 1.0,
        delta: 1e-9,
    })
    .post_processing(PostProcessing::SimplexProjection)
    .check()?;
    let n = usize::try_from(n).map_err(|_| crate::BenchError::TooManyRecords)?;
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(1);
    let release = mechanism.release_counts(counts, n, workload, &mut rng)?;
    std::hint::black_box(&release);
    Ok(())
}

/// `adaptive-projection` with its defaults (ε = 1, δ = 1e-9, add/remove, seed 1) from the
/// exact `counts` of `n` records: the release `dpqr release --mechanism adaptive-projection
/// --data FILE` makes after streaming the count. Timed by the bench; the answers are dropped.
pub fn adaptive_from_counts(counts: Vec<i64>, n: u64, workload: &MarginalWorkload) -> Result<()> {
    use dp_mechanisms::Mechanism;
    use dp_mechanisms::adaptive::AdaptiveProjectionParams;
    let mechanism = AdaptiveProjectionParams::new(dp_core::PrivacyLoss::Approx {
        epsilon: 1.0,
        delta: 1e-9,
    })
    .check()?;
    let n = usize::try_from(n).map_err(|_| crate::BenchError::TooManyRecords)?;
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(1);
    let release = mechanism.release_counts(counts, n, workload, &mut rng)?;
    std::hint::black_box(&release);
    Ok(())
}

/// The streaming count of the file `path` in `format` with the default settings.
fn stream(
    path: &Path,
    format: &str,
    schema: &Schema,
    w: &MarginalWorkload,
) -> Result<dp_queries::StreamedCounts> {
    if format == "parquet" {
        #[cfg(feature = "parquet")]
        return Ok(dp_queries::count_parquet_streaming(
            path,
            schema,
            &dp_queries::ReadOptions::default(),
            w,
            &StreamSettings::default(),
        )?);
    }
    let f = std::fs::File::open(path).map_err(io_error(path))?;
    Ok(count_csv_streaming(
        std::io::BufReader::with_capacity(1 << 20, f),
        &path.display().to_string(),
        schema,
        &dp_queries::ReadOptions::default(),
        w,
        &StreamSettings::default(),
    )?)
}

/// A text table of scale records.
pub fn format_scale_table(records: &[ScaleRecord]) -> String {
    let mut s = format!(
        "{:<8} {:>11} {:<8} {:>9} {:<15} {:<16} {:>8} {:>12} {:>14} {:>9}\n",
        "dataset",
        "rows",
        "format",
        "MiB",
        "workload",
        "method",
        "seconds",
        "rows/s",
        "updates/s",
        "peak MiB"
    );
    for r in records {
        s.push_str(&format!(
            "{:<8} {:>11} {:<8} {:>9.1} {:<15} {:<11} {:>8.2} {:>12.3e} {:>14.3e} {:>9}\n",
            r.dataset,
            r.rows,
            r.format,
            r.bytes as f64 / (1u64 << 20) as f64,
            r.workload,
            r.method,
            r.seconds,
            r.rows_per_second,
            r.updates_per_second,
            r.peak_mib.map_or("-".to_string(), |p| format!("{p:.0}"))
        ));
    }
    s
}

#[cfg(all(test, feature = "parquet"))]
mod tests {
    use super::*;

    #[test]
    fn the_parquet_table_holds_the_same_rows_as_the_csv_table() {
        let dir = std::env::temp_dir().join(format!("dpqr-scale-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (csv, pq) = (dir.join("t.csv"), dir.join("t.parquet"));
        // more than one 65 536-row piece of the Parquet writer
        generate("adult", 70_000, 3, &csv).unwrap();
        generate_parquet("adult", 70_000, 3, &pq).unwrap();
        let b = bundled("adult").unwrap();
        let schema = Schema::from_json_str(b.domain_json, "adult-domain.json").unwrap();
        let from_csv = Dataset::from_csv_reader(
            std::fs::File::open(&csv).unwrap(),
            "t.csv",
            schema.domain().clone(),
        )
        .unwrap();
        let from_parquet = Dataset::from_parquet(&pq, &schema, false).unwrap();
        assert_eq!(from_csv.n(), 70_000);
        assert_eq!(from_csv, from_parquet);
        // another seed draws other rows
        generate_parquet("adult", 70_000, 4, &pq).unwrap();
        assert_ne!(
            Dataset::from_parquet(&pq, &schema, false).unwrap(),
            from_csv
        );
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn a_small_scale_run_measures_csv_and_parquet_side_by_side() {
        let dir = std::env::temp_dir().join(format!("dpqr-scale-run-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let records = run_scale("adult", &[3000], &dir, |_| {}).unwrap();
        // per format: read-bytes, then streaming, release and in-memory for each workload (and
        // from the CSV's counts, the adaptive-projection release)
        for format in ["csv", "parquet"] {
            let methods: Vec<(&str, &str)> = records
                .iter()
                .filter(|r| r.format == format)
                .map(|r| (r.workload.as_str(), r.method.as_str()))
                .collect();
            let mut want = vec![("-", "read-bytes")];
            for w in ["all-2way", "random-3way:64", "W64"] {
                want.push((w, "streaming"));
                want.push((w, "release"));
                if format == "csv" {
                    want.push((w, "adaptive-release"));
                }
                want.push((w, "in-memory"));
            }
            assert_eq!(methods, want, "{format}");
        }
        assert!(records.iter().all(|r| r.rows == 3000 && r.bytes > 0));
        assert!(format_scale_table(&records).contains("parquet"));
        // the generated tables are removed
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        std::fs::remove_dir_all(&dir).ok();
    }
}
