//! Counting a workload over a CSV file in one streaming pass, in bounded memory.
//!
//! Every mechanism touches the private rows only to count them; the answer-perturbation
//! baselines need nothing else. [`count_csv_streaming`] reads the file line by line,
//! decodes each record with exactly the loader's rules and errors ([`crate::dataset`]: same
//! header checks, same line numbers, same messages), collects `batch_rows` records, counts
//! the batch with the workload's own exact counter ([`Workload::count_all_with`], parallel
//! within the batch under [`Parallelism::Rayon`]) and adds the integer counts to the totals.
//!
//! **Equal to the in-memory counts, bit for bit**: counts are integers and addition of
//! integers does not depend on the batch boundaries or the thread count (tested against
//! [`Workload::count_all`] on the whole file for several batch sizes).
//!
//! **Memory**: one batch of codes (`batch_rows × d` u32), the workload's count vector and,
//! inside the counter, its per-batch buffers — independent of the number of rows.

use std::borrow::Cow;
use std::io::BufRead;

use crate::dataset::{CsvDecoder, Dataset};
use crate::error::{QueryError, Result};
use crate::linear::Workload;
use crate::schema::Schema;
use crate::workload::Parallelism;

/// Settings of [`count_csv_streaming`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamSettings {
    /// Records per batch (≥ 1). Default 65 536.
    pub batch_rows: usize,
    /// Parallelism of each batch's count. Default [`Parallelism::Rayon`].
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
/// matched to `schema`'s domain by name and every record decoded as the loaders do; `file`
/// labels errors. A file with a header and no records gives zero counts and `rows = 0` (the
/// caller decides whether that is an error).
///
/// Errors: the loaders' errors (with the same file, line and column), the workload over
/// another domain ([`QueryError::DomainMismatch`]), `batch_rows = 0`, an I/O error.
pub fn count_csv_streaming<R: BufRead, W: Workload + ?Sized>(
    mut reader: R,
    file: &str,
    schema: &Schema,
    workload: &W,
    settings: &StreamSettings,
) -> Result<StreamedCounts> {
    if workload.domain() != schema.domain() {
        return Err(QueryError::DomainMismatch {
            reason: "the workload is over another domain than the file's schema".into(),
        });
    }
    if settings.batch_rows == 0 {
        return Err(QueryError::BadWorkload {
            reason: "batch_rows must be at least 1".into(),
        });
    }
    let io = |source| QueryError::Io {
        path: file.into(),
        source,
    };
    let domain = schema.domain().clone();
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
            break CsvDecoder::new(text, line_no, file, schema)?;
        }
    };
    let mut totals = vec![0i64; workload.num_queries()];
    let mut columns: Vec<Vec<u32>> = vec![Vec::with_capacity(settings.batch_rows); domain.len()];
    let (mut rows, mut batches) = (0u64, 0u64);
    let mut flush = |columns: &mut Vec<Vec<u32>>, totals: &mut [i64]| -> Result<()> {
        if columns.first().is_none_or(Vec::is_empty) {
            return Ok(());
        }
        let batch = Dataset::from_columns(
            domain.clone(),
            std::mem::replace(
                columns,
                vec![Vec::with_capacity(settings.batch_rows); domain.len()],
            ),
        )?;
        let counts = workload.count_all_with(&batch, settings.parallelism)?;
        for (t, c) in totals.iter_mut().zip(counts) {
            *t = t.checked_add(c).ok_or_else(|| QueryError::TooLarge {
                what: "a count".into(),
                estimate: "beyond 2^63".into(),
            })?;
        }
        batches += 1;
        Ok(())
    };
    loop {
        buf.clear();
        if reader.read_until(b'\n', &mut buf).map_err(io)? == 0 {
            break;
        }
        line_no += 1;
        let text = trim_line_end(&buf);
        if text.is_empty() {
            continue;
        }
        // the fields borrow this line's buffer only while the record is decoded
        let mut fields: Vec<Cow<'_, [u8]>> = Vec::with_capacity(domain.len());
        decoder.push_record(line_no, text, &mut fields, &mut columns)?;
        rows += 1;
        if columns.first().map_or(0, Vec::len) >= settings.batch_rows {
            flush(&mut columns, &mut totals)?;
        }
    }
    flush(&mut columns, &mut totals)?;
    Ok(StreamedCounts {
        counts: totals,
        rows,
        batches,
    })
}

/// The line without its `\n` and one `\r` before it (the loaders' line ends).
fn trim_line_end(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}
