//! The point release on one randomly chosen table: the randomizer every local mechanism of
//! this crate runs (seed 004 §5 with a cheaper, equivalent message).
//!
//! ## Why not the dense `W_x`
//!
//! Seed 004 Theorem 5.1 encodes a record as its answer vector `q(x) ∈ {0,1}^M` (`M` cells in
//! `m` tables, one 1 per table), scales it into the unit ball (`q(x)/√m`) and sends the dense
//! `W` of dimension `M`: for nltcs all 3-way marginals that is 4 480 Gaussians per client,
//! 4.5·10⁹ for 10⁶ clients. Here the client sends the point release of **one table** chosen
//! uniformly at random, and the server rescales it by `m`.
//!
//! ## The randomizer
//!
//! A public [`TableEncoding`] maps a client's record to a vector `v ∈ ℝ^M` split into
//! per-table blocks `v_1, …, v_m` (`v_j ∈ ℝ^{k_j}`), each of norm at most a public radius `R`
//! (`R = 1` for answer vectors, `√2` for the chaining increments). The client
//!
//! 1. draws `J` uniformly from the `m` tables (exactly, independently of its record);
//! 2. sends `(J, W)` with `W` the point release `W_{v_J/R}` of dimension `k_J` (Definition
//!    5.5 with the derived constants `b = tanh(ε/2)`, `c = √(π/2)/b`; see
//!    [`super::point_release`]).
//!
//! The server's estimate of `v` from one message is `V̂ = m·R·W` placed on table `J`'s
//! coordinates, zero elsewhere.
//!
//! **ε-LDP.** For records `x, y` and any set `E` of messages, with `E_j` its slice on table
//! `j`: `P[(J, W) ∈ E | x] = (1/m) Σ_j P[W_{v_j(x)/R} ∈ E_j] ≤ e^ε (1/m) Σ_j P[W_{v_j(y)/R}
//! ∈ E_j] = e^ε P[(J, W) ∈ E | y]`, because `J` does not depend on the record and every
//! point release is ε-LDP on the unit ball. The table draw is exact (`sample_uniform_below`),
//! the coin is exact; only `Z` and the side `U` use floating point, as in the point release.
//!
//! **Unbiased.** `E[V̂] = Σ_j (1/m)·m·R·E[W_{v_j/R}] = Σ_j v_j = v`.
//!
//! **Same second moment as the dense release.** Every coordinate of `W` has `E W_i² = c²`,
//! so a coordinate of table `j` has `E V̂_i² = (1/m)·m²R²c² = m R² c²`. The dense release
//! of `v/(R√m)`, rescaled by `R√m`, has `E = m R² c²` on every coordinate as well: the
//! per-coordinate variance of the server's average, `≈ m R² c²/n`, is the same, for `k_J`
//! instead of `M` Gaussians per client. (The per-client message is heavier-tailed — a
//! coordinate is 0 with probability `1 − 1/m` — so Claim 5.7's subgaussian constant holds
//! for the average of `n ≳ m` clients, where the sum is close to Gaussian, not per
//! message; the tests measure the variance.)
//!
//! [`super::encoding`] has the encodings of the three local mechanisms.

use num_rational::BigRational;
use rand::{CryptoRng, RngExt};

use super::LocalRandomizer;
use super::point_release::{PointRelease, exact_agree};
use crate::{LocalError, Result};
use dp_core::{Gaussian, exact_rational, sample_uniform_below};

/// A public map from a client's record to a vector split into per-table blocks, each of
/// ℓ2 norm at most [`TableEncoding::radius`] (module docs).
pub trait TableEncoding: Send + Sync {
    /// The number of cells `k_j` of every table.
    fn table_sizes(&self) -> &[usize];

    /// The public bound `R` on the ℓ2 norm of every block.
    fn radius(&self) -> f64;

    /// Checks that `record` is a valid input (length and codes), before any randomness.
    fn check(&self, record: &[u32]) -> Result<()>;

    /// The non-zero entries `(cell within the table, value)` of block `table` of the
    /// record's vector, written to `out` (cleared first).
    fn block(&self, record: &[u32], table: usize, out: &mut Vec<(usize, f64)>) -> Result<()>;
}

/// One client's message: the table it reports on and the point release `W` of that
/// table's block (dimension `k_table`).
#[derive(Clone, Debug, PartialEq)]
pub struct TableMessage {
    /// The table `J`, drawn uniformly and independently of the record.
    pub table: usize,
    /// `W = c·S·Z`, `k_J` coordinates.
    pub w: Vec<f64>,
}

/// The table-sampled point release (module docs): ε-LDP for any two records of one client,
/// `m·R·W` on table `J` is an unbiased estimate of the record's vector.
#[derive(Clone, Debug)]
pub struct SampledTableRelease<E> {
    epsilon: f64,
    gamma: BigRational,
    scale: f64,
    encoding: E,
}

impl<E: TableEncoding> SampledTableRelease<E> {
    /// The randomizer at `epsilon > 0` (finite) for `encoding` (at least one table, every
    /// table at least one cell, a positive finite radius).
    pub fn new(epsilon: f64, encoding: E) -> Result<Self> {
        if !(epsilon > 0.0 && epsilon.is_finite()) {
            return Err(LocalError::InvalidParameter {
                name: "epsilon",
                value: dp_core::Num(epsilon).to_string(),
                reason: "must be positive and finite".into(),
            });
        }
        let sizes = encoding.table_sizes();
        if sizes.is_empty() || sizes.contains(&0) {
            return Err(LocalError::InvalidParameter {
                name: "tables",
                value: sizes.len().to_string(),
                reason: "need at least one table, each with at least one cell".into(),
            });
        }
        let r = encoding.radius();
        if !(r > 0.0 && r.is_finite()) {
            return Err(LocalError::InvalidParameter {
                name: "radius",
                value: dp_core::Num(r).to_string(),
                reason: "must be positive and finite".into(),
            });
        }
        Ok(SampledTableRelease {
            epsilon,
            gamma: exact_rational(epsilon)?,
            scale: PointRelease::scale_for(epsilon),
            encoding,
        })
    }

    /// The scale `c = √(π/2)/tanh(ε/2)` of `W`.
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// The public encoding.
    pub fn encoding(&self) -> &E {
        &self.encoding
    }

    /// The factor `m·R` by which the server multiplies a message to estimate the vector.
    pub fn unbias_factor(&self) -> f64 {
        self.encoding.table_sizes().len() as f64 * self.encoding.radius()
    }
}

impl<E: TableEncoding> LocalRandomizer for SampledTableRelease<E> {
    type Input = [u32];
    type Message = TableMessage;

    fn epsilon(&self) -> f64 {
        self.epsilon
    }

    fn randomize(&self, record: &[u32], rng: &mut dyn CryptoRng) -> Result<TableMessage> {
        self.encoding.check(record)?;
        let sizes = self.encoding.table_sizes();
        let table = sample_uniform_below(rng, sizes.len() as u64)? as usize;
        let k = sizes[table];
        let mut block = Vec::new();
        self.encoding.block(record, table, &mut block)?;
        let r = self.encoding.radius();
        let mut norm2 = 0.0;
        for &(cell, v) in &block {
            if cell >= k || !v.is_finite() {
                return Err(LocalError::Input {
                    reason: format!("the encoding gave an entry outside table {table}"),
                });
            }
            norm2 += v * v;
        }
        let norm = norm2.sqrt() / r;
        if norm > 1.0 + 1e-9 {
            return Err(LocalError::Input {
                reason: format!("a block of norm {:.6} exceeds the radius {r:.6}", norm * r),
            });
        }
        let norm = norm.min(1.0);
        // U = x/‖x‖ with probability (1 + ‖x‖)/2, x = block/R
        let u_positive = rng.random::<f64>() < (1.0 + norm) / 2.0;
        let gaussian = Gaussian::new(1.0)?;
        let z: Vec<f64> = (0..k).map(|_| gaussian.sample(rng)).collect();
        let dot = if norm > 0.0 {
            block.iter().map(|&(cell, v)| v * z[cell]).sum::<f64>()
        } else {
            1.0
        };
        let side = if u_positive { 1.0 } else { -1.0 };
        let sign = if dot * side >= 0.0 { 1.0 } else { -1.0 };
        let s = if exact_agree(&self.gamma, rng)? {
            sign
        } else {
            -sign
        };
        let w = z.into_iter().map(|v| self.scale * s * v).collect();
        Ok(TableMessage { table, w })
    }
}
