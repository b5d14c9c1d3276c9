//! Counting a workload over a file in one streaming pass, in bounded memory, with batches
//! counted in parallel.
//!
//! Every mechanism touches the private rows only to count them; the answer-perturbation
//! baselines need nothing else. [`count_csv_streaming`] (and, with the cargo feature
//! `parquet`, `io::parquet::count_parquet_streaming`) runs one pass:
//!
//! * **one reader** (the calling thread) cuts the input into *units* in file order — for CSV
//!   a block of `batch_rows` records as raw bytes (only line ends are looked for here), for
//!   Parquet one row group — and hands them to
//! * **workers** (as many as rayon's thread count under [`Parallelism::Rayon`], one under
//!   [`Parallelism::None`]), each of which decodes a unit with exactly the loader's rules and
//!   errors ([`super::csv`]: same header checks, same line numbers, same messages) into
//!   its own reused code columns and adds the exact counts of each batch of at most
//!   `batch_rows` records to its own running totals ([`Workload::add_counts_with`]: marginal
//!   tables are counted in place, with no table allocated, zeroed or added per batch). Inside
//!   a batch the count is serial — the parallelism is across batches — except when a Parquet
//!   file has fewer row groups than there are workers, where each batch is counted with
//!   rayon. Decoded codes are not validated a second time.
//!
//! **Equal to the in-memory counts, bit for bit, whatever the batch size and thread
//! count**: counts are integers, accumulated exactly (128-bit per worker, summed at the end
//! and checked to fit 64 bits) and integer addition does not depend on the order (tested
//! against [`Workload::count_all`] on the whole file for several batch sizes and thread
//! counts).
//!
//! **Errors are deterministic too**: when units fail, the error reported is the one of the
//! earliest unit in file order (after a failure only later units are skipped; every earlier
//! one has been handed out and still runs to its end), and inside a unit the first bad
//! record — the loader's error.
//!
//! **Memory**: at most `2 × workers + 1` units in flight (a bounded queue of `workers`
//! units, one per worker, one being read), one batch of codes per worker (`batch_rows × d`
//! u32) and the workers' count vectors — independent of the number of rows.

use std::io::BufRead;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, mpsc};

use super::csv::CsvDecoder;
use super::options::ReadOptions;
use crate::dataset::Dataset;
use crate::domain::Domain;
use crate::error::{QueryError, Result};
use crate::schema::Schema;
use crate::workload::Parallelism;
use crate::workload::Workload;

/// Settings of the streaming counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamSettings {
    /// Records per batch (≥ 1). Default 65 536.
    pub batch_rows: usize,
    /// [`Parallelism::Rayon`] (the default): as many workers as rayon's current thread count
    /// (`RAYON_NUM_THREADS`, or the pool the call runs in); [`Parallelism::None`]: one.
    pub parallelism: Parallelism,
}

impl Default for StreamSettings {
    fn default() -> Self {
        StreamSettings {
            batch_rows: 1 << 16,
            parallelism: Parallelism::Rayon,
        }
    }
}

/// The result of a streaming count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamedCounts {
    /// Exact counts of every query, in workload order.
    pub counts: Vec<i64>,
    /// Number of records read (private under add/remove neighbours: never output it).
    pub rows: u64,
    /// Number of batches counted.
    pub batches: u64,
}

/// Counts `workload` over the CSV records of `reader` (module docs): the file's header is
/// matched to `schema`'s domain by name and every record decoded as the loaders do, with
/// the delimiter and extra columns as `options` say; `file` labels errors. A file with a header and no records gives zero counts and `rows = 0` (the
/// caller decides whether that is an error).
///
/// Errors: the loaders' errors (with the same file, line and column), the workload over
/// another domain ([`QueryError::DomainMismatch`]), `batch_rows = 0`, an I/O error.
pub fn count_csv_streaming<R: BufRead, W: Workload + ?Sized>(
    mut reader: R,
    file: &str,
    schema: &Schema,
    options: &ReadOptions,
    workload: &W,
    settings: &StreamSettings,
) -> Result<StreamedCounts> {
    check_settings(schema.domain(), workload, settings)?;
    let io = |source| QueryError::Io {
        path: file.into(),
        source,
    };
    let mut buf: Vec<u8> = Vec::new();
    let mut line_no: u64 = 0;
    // the header: the first non-blank line (a UTF-8 byte-order mark before it is ignored)
    let mut first = true;
    let decoder = loop {
        buf.clear();
        if reader.read_until(b'\n', &mut buf).map_err(io)? == 0 {
            return Err(QueryError::EmptyFile { file: file.into() });
        }
        line_no += 1;
        let mut text: &[u8] = &buf;
        if first {
            text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
            first = false;
        }
        let text = trim_line_end(text);
        if !text.is_empty() {
            break CsvDecoder::new(text, line_no, file, schema, options)?;
        }
    };
    // a unit: the 1-based line of its first byte and whole lines holding `batch_rows` records
    // (or fewer at the end of the file)
    let batch_rows = settings.batch_rows;
    let produce = || -> Result<Option<(u64, Vec<u8>)>> {
        let start = line_no + 1;
        let mut bytes = Vec::new();
        let mut records = 0usize;
        while records < batch_rows {
            let before = bytes.len();
            if reader.read_until(b'\n', &mut bytes).map_err(io)? == 0 {
                break;
            }
            line_no += 1;
            if !trim_line_end(&bytes[before..]).is_empty() {
                records += 1;
            }
        }
        Ok((records > 0).then_some((start, bytes)))
    };
    let process = |(start, bytes): (u64, Vec<u8>), counter: &mut BatchCounter<'_, W>| {
        let mut fields = Vec::with_capacity(counter.columns.len());
        for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
            let text = trim_line_end(line);
            if text.is_empty() {
                continue;
            }
            decoder.push_record(start + i as u64, text, &mut fields, &mut counter.columns)?;
        }
        counter.count_batch()
    };
    run_pipeline(
        schema.domain(),
        workload,
        settings,
        Parallelism::None,
        produce,
        process,
    )
}

/// The number of workers of a pass under `settings` (module docs).
pub(crate) fn worker_count(settings: &StreamSettings) -> usize {
    match settings.parallelism {
        Parallelism::None => 1,
        Parallelism::Rayon => rayon::current_num_threads().max(1),
    }
}

/// The checks every streaming counter makes before reading: the workload is over the
/// data's domain and `batch_rows ≥ 1`.
pub(crate) fn check_settings<W: Workload + ?Sized>(
    domain: &Domain,
    workload: &W,
    settings: &StreamSettings,
) -> Result<()> {
    if workload.domain() != domain {
        return Err(QueryError::DomainMismatch {
            reason: "the workload is over another domain than the file's schema".into(),
        });
    }
    if settings.batch_rows == 0 {
        return Err(QueryError::BadWorkload {
            reason: "batch_rows must be at least 1".into(),
        });
    }
    Ok(())
}

/// A worker's state: reused code columns (one per domain attribute) and exact totals.
pub(crate) struct BatchCounter<'w, W: ?Sized> {
    workload: &'w W,
    domain: Domain,
    /// The codes of the batch being decoded, in domain order, already validated by the
    /// decoder that filled them.
    pub(crate) columns: Vec<Vec<u32>>,
    totals: Vec<i128>,
    /// The parallelism inside one batch's count.
    inner: Parallelism,
    rows: u64,
    batches: u64,
}

impl<W: Workload + ?Sized> BatchCounter<'_, W> {
    /// Counts the batch in `columns` (if it is not empty), adds it to the totals and empties
    /// the columns, keeping their memory.
    pub(crate) fn count_batch(&mut self) -> Result<()> {
        let n = self.columns.first().map_or(0, Vec::len);
        if n == 0 {
            return Ok(());
        }
        let columns = std::mem::take(&mut self.columns);
        let batch = Dataset::from_validated_columns(self.domain.clone(), columns);
        let added = self
            .workload
            .add_counts_with(&batch, &mut self.totals, self.inner);
        self.columns = batch.into_columns();
        for c in &mut self.columns {
            c.clear();
        }
        added?;
        self.rows += n as u64;
        self.batches += 1;
        Ok(())
    }
}

/// Runs one pass (module docs): `produce` (on the calling thread) yields units in file order
/// until `None`; `process` decodes and counts one unit with a worker's [`BatchCounter`]
/// (calling [`BatchCounter::count_batch`] at least once at its end), each batch counted
/// with `inner` parallelism (serial when there are enough units to keep every worker busy;
/// rayon inside the batch when there are fewer units than workers, e.g. a Parquet file of
/// one row group). The error of the earliest failing unit wins.
pub(crate) fn run_pipeline<U, W, P, C>(
    domain: &Domain,
    workload: &W,
    settings: &StreamSettings,
    inner: Parallelism,
    mut produce: P,
    process: C,
) -> Result<StreamedCounts>
where
    U: Send,
    W: Workload + ?Sized,
    P: FnMut() -> Result<Option<U>>,
    C: Fn(U, &mut BatchCounter<'_, W>) -> Result<()> + Sync,
{
    let new_counter = || BatchCounter {
        workload,
        domain: domain.clone(),
        columns: vec![Vec::with_capacity(settings.batch_rows); domain.len()],
        totals: vec![0i128; workload.num_queries()],
        inner,
        rows: 0,
        batches: 0,
    };
    let workers = worker_count(settings);
    let counters = if workers == 1 {
        let mut counter = new_counter();
        while let Some(unit) = produce()? {
            process(unit, &mut counter)?;
        }
        vec![counter]
    } else {
        let (tx, rx) = mpsc::sync_channel::<(u64, U)>(workers);
        let rx = Mutex::new(rx);
        // the index of the earliest unit known to fail (u64::MAX: none); later units are
        // skipped, earlier ones still run (their error would come first)
        let first_failed = AtomicU64::new(u64::MAX);
        // (unit index, error) of every failure; the earliest is reported
        let errors: Mutex<Vec<(u64, QueryError)>> = Mutex::new(Vec::new());
        let counters = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..workers)
                .map(|_| {
                    scope.spawn(|| {
                        let mut counter = new_counter();
                        loop {
                            // the lock is held only while waiting for the next unit
                            let next = rx
                                .lock()
                                .map_err(|_| ())
                                .and_then(|r| r.recv().map_err(|_| ()));
                            let Ok((index, unit)) = next else { break };
                            if index > first_failed.load(Ordering::SeqCst) {
                                continue; // drain: an error here could never be the first
                            }
                            if let Err(e) = process(unit, &mut counter) {
                                first_failed.fetch_min(index, Ordering::SeqCst);
                                if let Ok(mut list) = errors.lock() {
                                    list.push((index, e));
                                }
                            }
                        }
                        counter
                    })
                })
                .collect();
            let mut index = 0u64;
            while first_failed.load(Ordering::SeqCst) == u64::MAX {
                match produce() {
                    Ok(Some(unit)) => {
                        if tx.send((index, unit)).is_err() {
                            break;
                        }
                        index += 1;
                    }
                    Ok(None) => break,
                    Err(e) => {
                        first_failed.fetch_min(index, Ordering::SeqCst);
                        if let Ok(mut list) = errors.lock() {
                            list.push((index, e));
                        }
                        break;
                    }
                }
            }
            drop(tx);
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect::<Vec<_>>()
        });
        let mut errors = errors.into_inner().unwrap_or_default();
        if let Some(pos) = (0..errors.len()).min_by_key(|&i| errors[i].0) {
            return Err(errors.swap_remove(pos).1);
        }
        counters
    };
    let mut totals = vec![0i128; workload.num_queries()];
    let (mut rows, mut batches) = (0u64, 0u64);
    for c in counters {
        for (t, x) in totals.iter_mut().zip(&c.totals) {
            *t += x;
        }
        rows += c.rows;
        batches += c.batches;
    }
    let counts = totals
        .into_iter()
        .map(|t| {
            i64::try_from(t).map_err(|_| QueryError::TooLarge {
                what: "a count".into(),
                estimate: "beyond 2^63".into(),
            })
        })
        .collect::<Result<Vec<i64>>>()?;
    Ok(StreamedCounts {
        counts,
        rows,
        batches,
    })
}

/// The line without its `\n` and one `\r` before it (the loaders' line ends; also the data
/// check's, `io/check.rs`).
pub(crate) fn trim_line_end(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::MarginalWorkload;

    /// Units 0..40 of one record each; units from 10 on fail, and unit 10 fails last (it is
    /// slow): the reported error is still unit 10's, whatever the thread count.
    #[test]
    fn the_earliest_failing_unit_is_reported_even_when_it_fails_last() {
        let domain = Domain::new(vec![("a".to_string(), 2)]).unwrap();
        let w = MarginalWorkload::all_kway(&domain, 1).unwrap();
        for threads in [1, 2, 4] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let mut next = 0u64..40;
            let produce = || Ok(next.next());
            let process = |unit: u64, counter: &mut BatchCounter<'_, MarginalWorkload>| {
                if unit >= 10 {
                    if unit == 10 {
                        std::thread::sleep(std::time::Duration::from_millis(150));
                    }
                    return Err(QueryError::BadWorkload {
                        reason: format!("unit {unit}"),
                    });
                }
                counter.columns[0].push((unit % 2) as u32);
                counter.count_batch()
            };
            let settings = StreamSettings {
                batch_rows: 1,
                parallelism: Parallelism::Rayon,
            };
            let e = pool
                .install(|| {
                    run_pipeline(&domain, &w, &settings, Parallelism::None, produce, process)
                })
                .unwrap_err();
            assert_eq!(
                e.to_string(),
                "invalid workload: unit 10",
                "{threads} threads"
            );
        }
    }
}
