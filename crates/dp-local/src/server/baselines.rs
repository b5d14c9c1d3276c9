//! The server side of the baselines ([`crate::client::baselines`]): unbiased estimators
//! of the workload's marginal tables from the messages alone.
//!
//! * **Per-attribute randomized response.** The reports' joint distribution is the true
//!   one pushed through the Kronecker product of the per-attribute k-ary channels, so a
//!   table of the reports, with the inverse channel `y ↦ (y − q·Σy)/(p − q)` applied along
//!   every axis, is unbiased for the table of the data.
//! * **Sampled table + frequency oracle.** Per table, from the `n_J` clients that reported
//!   on it: k-ary randomized response `(C_c/n_J − q)/(p − q)`; OLH `(C_c/n_J − 1/g)/(p −
//!   1/g)` with `C_c` the reports whose hash of `c` matches (Wang et al. 2017); Hadamard
//!   `f_c = (1/n_J)·((e^ε+1)/(e^ε−1))·Σ_i s_i H[r_i, c]`. A table nobody reported on is
//!   estimated uniform (`1/k`). Given `n_J > 0`, each is unbiased.
//! * **Fourier.** `θ̂_S = (|T|/n)·((e^ε+1)/(e^ε−1))·Σ_{i: S_i = S} s_i` is unbiased for
//!   `E χ_S(x)`; a table over attributes `A` is `f(c) = 2^{−|A|} Σ_{S ⊆ A} θ_S χ_S(c)`,
//!   `θ_∅ = 1`.
//!
//! The estimates are released as they are (they may be negative, and do not sum to 1
//! exactly): the baselines as their authors define them, without post-processing.

use super::Aggregate;
use crate::client::baselines::{
    FrequencyOracle, OracleMessage, OracleReport, ParityMessage, grr_probabilities, hadamard_order,
    hadamard_plus, olh_hash, olh_range,
};
use crate::{LocalError, Result};
use dp_queries::{Dataset, MarginalWorkload};

fn rr_gain(epsilon: f64) -> f64 {
    let e = epsilon.exp();
    (e + 1.0) / (e - 1.0)
}

/// The reports of per-attribute randomized response, kept as a dataset of noisy records.
#[derive(Clone, Debug, PartialEq)]
pub struct NoisyRecords {
    columns: Vec<Vec<u32>>,
}

impl NoisyRecords {
    /// No reports yet, for `d` attributes.
    pub fn new(d: usize) -> Self {
        NoisyRecords {
            columns: vec![Vec::new(); d],
        }
    }

    /// The unbiased table estimates (workload order) for reports made at `per_epsilon` per
    /// attribute.
    pub fn estimate(self, workload: &MarginalWorkload, per_epsilon: f64) -> Result<Vec<f64>> {
        let noisy = Dataset::from_columns(workload.domain().clone(), self.columns)
            .map_err(dp_mechanisms::MechanismError::from)?;
        let mut y = workload
            .answers(&noisy)
            .map_err(dp_mechanisms::MechanismError::from)?;
        for (j, t) in workload.marginals().iter().enumerate() {
            let lo = workload.offset(j);
            let block = &mut y[lo..lo + t.num_cells()];
            for (&size, &stride) in t.sizes().iter().zip(t.strides()) {
                let (p, q) = grr_probabilities(per_epsilon, size);
                invert_axis(block, size as usize, stride, p, q);
            }
        }
        Ok(y)
    }
}

/// Applies `y ↦ (y − q·Σ_fibre y)/(p − q)` along one axis (`size` values, `stride`).
fn invert_axis(block: &mut [f64], size: usize, stride: usize, p: f64, q: f64) {
    let span = size * stride;
    for base in (0..block.len()).step_by(span) {
        for off in 0..stride {
            let start = base + off;
            let s: f64 = (0..size).map(|v| block[start + v * stride]).sum();
            for v in 0..size {
                let i = start + v * stride;
                block[i] = (block[i] - q * s) / (p - q);
            }
        }
    }
}

impl Aggregate<Vec<u32>> for NoisyRecords {
    fn add(&mut self, message: &Vec<u32>) -> Result<()> {
        if message.len() != self.columns.len() {
            return Err(LocalError::Input {
                reason: format!(
                    "a report of {} attributes, expected {}",
                    message.len(),
                    self.columns.len()
                ),
            });
        }
        for (c, &v) in self.columns.iter_mut().zip(message) {
            c.push(v);
        }
        Ok(())
    }
    fn merge(mut self, other: Self) -> Result<Self> {
        for (c, o) in self.columns.iter_mut().zip(other.columns) {
            c.extend(o);
        }
        Ok(self)
    }
}

/// Running sums of [`OracleMessage`]s: per table the number of reports and, per cell, the
/// support count (k-ary RR, OLH) or the signed Hadamard sum.
#[derive(Clone, Debug, PartialEq)]
pub struct OracleAggregate {
    oracle: FrequencyOracle,
    epsilon: f64,
    sizes: Vec<usize>,
    reports: Vec<u64>,
    sums: Vec<Vec<f64>>,
}

impl OracleAggregate {
    /// Empty sums for tables of `sizes` cells.
    pub fn new(oracle: FrequencyOracle, epsilon: f64, sizes: &[usize]) -> Self {
        OracleAggregate {
            oracle,
            epsilon,
            sizes: sizes.to_vec(),
            reports: vec![0; sizes.len()],
            sums: sizes.iter().map(|&k| vec![0.0; k]).collect(),
        }
    }

    /// The unbiased table estimates, in workload order.
    pub fn estimate(&self) -> Vec<f64> {
        let mut out = Vec::with_capacity(self.sizes.iter().sum());
        for (j, &k) in self.sizes.iter().enumerate() {
            let n = self.reports[j] as f64;
            if n == 0.0 {
                out.extend(std::iter::repeat_n(1.0 / k as f64, k));
                continue;
            }
            let s = &self.sums[j];
            match self.oracle {
                FrequencyOracle::Grr => {
                    let (p, q) = grr_probabilities(self.epsilon, k as u32);
                    out.extend(s.iter().map(|c| (c / n - q) / (p - q)));
                }
                FrequencyOracle::Olh => {
                    let g = olh_range(self.epsilon);
                    let (p, _) = grr_probabilities(self.epsilon, g);
                    let q = 1.0 / f64::from(g);
                    out.extend(s.iter().map(|c| (c / n - q) / (p - q)));
                }
                FrequencyOracle::Hadamard => {
                    let gain = rr_gain(self.epsilon);
                    out.extend(s.iter().map(|c| c * gain / n));
                }
            }
        }
        out
    }
}

impl Aggregate<OracleMessage> for OracleAggregate {
    fn add(&mut self, m: &OracleMessage) -> Result<()> {
        let k = *self.sizes.get(m.table).ok_or_else(|| LocalError::Input {
            reason: format!("a message names table {}", m.table),
        })?;
        let sums = &mut self.sums[m.table];
        match (&m.report, self.oracle) {
            (OracleReport::Grr(v), FrequencyOracle::Grr) if (*v as usize) < k => {
                sums[*v as usize] += 1.0;
            }
            (OracleReport::Olh { seed, value }, FrequencyOracle::Olh) => {
                let g = olh_range(self.epsilon);
                for (c, s) in sums.iter_mut().enumerate() {
                    if olh_hash(*seed, c as u32, g) == *value {
                        *s += 1.0;
                    }
                }
            }
            (OracleReport::Hadamard { row, plus }, FrequencyOracle::Hadamard)
                if *row < hadamard_order(k) =>
            {
                for (c, s) in sums.iter_mut().enumerate() {
                    let agree = hadamard_plus(*row, c as u32) == *plus;
                    *s += if agree { 1.0 } else { -1.0 };
                }
            }
            _ => {
                return Err(LocalError::Input {
                    reason: "a report of the wrong kind or out of range".into(),
                });
            }
        }
        self.reports[m.table] += 1;
        Ok(())
    }
    fn merge(mut self, other: Self) -> Result<Self> {
        if self.sizes != other.sizes || self.oracle != other.oracle {
            return Err(LocalError::Input {
                reason: "aggregates of different oracles or tables cannot be merged".into(),
            });
        }
        for (a, b) in self.reports.iter_mut().zip(&other.reports) {
            *a += b;
        }
        for (a, b) in self.sums.iter_mut().zip(&other.sums) {
            for (x, y) in a.iter_mut().zip(b) {
                *x += y;
            }
        }
        Ok(self)
    }
}

/// Running signed sums of [`ParityMessage`]s, one per parity.
#[derive(Clone, Debug, PartialEq)]
pub struct ParityAggregate {
    sums: Vec<f64>,
    messages: u64,
}

impl ParityAggregate {
    /// Empty sums for `parities` parities.
    pub fn new(parities: usize) -> Self {
        ParityAggregate {
            sums: vec![0.0; parities],
            messages: 0,
        }
    }

    /// The unbiased table estimates (workload order) for parities `parities` (bit masks,
    /// as [`crate::client::FourierParity::parities`]) reported at `epsilon`.
    pub fn estimate(
        &self,
        workload: &MarginalWorkload,
        parities: &[u64],
        epsilon: f64,
    ) -> Result<Vec<f64>> {
        if self.messages == 0 {
            return Err(LocalError::Input {
                reason: "no messages to aggregate".into(),
            });
        }
        let scale = parities.len() as f64 * rr_gain(epsilon) / self.messages as f64;
        let theta = |s: u64| -> f64 {
            if s == 0 {
                return 1.0;
            }
            parities
                .binary_search(&s)
                .map_or(0.0, |i| self.sums[i] * scale)
        };
        let mut out = Vec::with_capacity(workload.num_queries());
        for t in workload.marginals() {
            let attrs = t.attrs();
            let k = attrs.len();
            let thetas: Vec<(u64, f64)> = (0u64..(1 << k))
                .map(|mask| {
                    let s = attrs
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| mask >> i & 1 == 1)
                        .fold(0u64, |acc, (_, &a)| acc | 1 << a);
                    (mask, theta(s))
                })
                .collect();
            for cell in 0..t.num_cells() {
                let codes = t.cell_codes(cell);
                // local bit i = code of the table's i-th attribute
                let bits = codes
                    .iter()
                    .enumerate()
                    .fold(0u64, |acc, (i, &c)| acc | (u64::from(c) << i));
                let f: f64 = thetas
                    .iter()
                    .map(|&(mask, th)| {
                        if (mask & bits).count_ones().is_multiple_of(2) {
                            th
                        } else {
                            -th
                        }
                    })
                    .sum();
                out.push(f / (1u64 << k) as f64);
            }
        }
        Ok(out)
    }
}

impl Aggregate<ParityMessage> for ParityAggregate {
    fn add(&mut self, m: &ParityMessage) -> Result<()> {
        let s = self
            .sums
            .get_mut(m.parity)
            .ok_or_else(|| LocalError::Input {
                reason: format!("a message names parity {}", m.parity),
            })?;
        *s += if m.plus { 1.0 } else { -1.0 };
        self.messages += 1;
        Ok(())
    }
    fn merge(mut self, other: Self) -> Result<Self> {
        if self.sums.len() != other.sums.len() {
            return Err(LocalError::Input {
                reason: "aggregates over different parities cannot be merged".into(),
            });
        }
        for (a, b) in self.sums.iter_mut().zip(&other.sums) {
            *a += b;
        }
        self.messages += other.messages;
        Ok(self)
    }
}
