//! The server side: aggregators of the clients' messages. Nothing here can reach a client's
//! raw input — only messages ([`crate::client::LocalRandomizer::Message`]) come in.

pub mod baselines;

pub use baselines::{NoisyRecords, OracleAggregate, ParityAggregate};

use crate::client::{PointReleaseMessage, TableMessage};

/// Server-side running sums of one kind of message, mergeable so that clients can be
/// summed in parallel.
pub trait Aggregate<M>: Sized + Send {
    /// Adds one message (refusing one that does not fit).
    fn add(&mut self, message: &M) -> Result<()>;
    /// Merges another aggregate of the same shape.
    fn merge(self, other: Self) -> Result<Self>;
}
use crate::{LocalError, Result};

/// The average `W̄ = (1/n) Σ W_{x_i}` of point-release messages (seed 004 Theorem 5.1, step
/// 2): an unbiased estimate of the clients' mean point, `c/√n`-subgaussian.
pub fn mean_point(messages: &[PointReleaseMessage]) -> Result<Vec<f64>> {
    let first = messages.first().ok_or_else(|| LocalError::Input {
        reason: "no messages to aggregate".into(),
    })?;
    let dim = first.0.len();
    let mut sum = vec![0.0; dim];
    for (i, m) in messages.iter().enumerate() {
        if m.0.len() != dim {
            return Err(LocalError::Input {
                reason: format!("message {i} has {} coordinates, expected {dim}", m.0.len()),
            });
        }
        for (s, v) in sum.iter_mut().zip(&m.0) {
            *s += v;
        }
    }
    let n = messages.len() as f64;
    Ok(sum.into_iter().map(|s| s / n).collect())
}

/// The server's running sums of table-sampled messages ([`TableMessage`]): per cell the sum
/// of the `W`s that reported on its table, and the number of messages. Aggregates merge, so
/// clients can be summed in parallel.
#[derive(Clone, Debug, PartialEq)]
pub struct TableAggregate {
    offsets: Vec<usize>,
    sums: Vec<f64>,
    messages: u64,
}

impl TableAggregate {
    /// An empty aggregate for tables of `sizes` cells (workload order).
    pub fn new(sizes: &[usize]) -> Self {
        let mut offsets = Vec::with_capacity(sizes.len() + 1);
        let mut total = 0;
        offsets.push(0);
        for &k in sizes {
            total += k;
            offsets.push(total);
        }
        TableAggregate {
            offsets,
            sums: vec![0.0; total],
            messages: 0,
        }
    }

    /// Adds one message; a message naming an unknown table or of the wrong length is
    /// refused.
    fn add_message(&mut self, message: &TableMessage) -> Result<()> {
        let t = message.table;
        if t + 1 >= self.offsets.len() {
            return Err(LocalError::Input {
                reason: format!(
                    "a message names table {t}, there are {}",
                    self.offsets.len() - 1
                ),
            });
        }
        let (lo, hi) = (self.offsets[t], self.offsets[t + 1]);
        if message.w.len() != hi - lo {
            return Err(LocalError::Input {
                reason: format!(
                    "a message for table {t} has {} coordinates, expected {}",
                    message.w.len(),
                    hi - lo
                ),
            });
        }
        for (s, v) in self.sums[lo..hi].iter_mut().zip(&message.w) {
            *s += v;
        }
        self.messages += 1;
        Ok(())
    }

    /// Merges another aggregate over the same tables.
    fn merge_with(mut self, other: TableAggregate) -> Result<Self> {
        if self.offsets != other.offsets {
            return Err(LocalError::Input {
                reason: "aggregates over different tables cannot be merged".into(),
            });
        }
        for (s, v) in self.sums.iter_mut().zip(&other.sums) {
            *s += v;
        }
        self.messages += other.messages;
        Ok(self)
    }

    /// The number of messages added.
    pub fn messages(&self) -> u64 {
        self.messages
    }

    /// The unbiased estimate of the clients' mean vector: `(factor/n)·Σ W` per cell, with
    /// `factor = m·R` ([`crate::client::SampledTableRelease::unbias_factor`]).
    pub fn estimate(&self, factor: f64) -> Result<Vec<f64>> {
        if self.messages == 0 {
            return Err(LocalError::Input {
                reason: "no messages to aggregate".into(),
            });
        }
        let scale = factor / self.messages as f64;
        Ok(self.sums.iter().map(|s| s * scale).collect())
    }
}

impl Aggregate<TableMessage> for TableAggregate {
    fn add(&mut self, message: &TableMessage) -> Result<()> {
        self.add_message(message)
    }
    fn merge(self, other: Self) -> Result<Self> {
        self.merge_with(other)
    }
}
