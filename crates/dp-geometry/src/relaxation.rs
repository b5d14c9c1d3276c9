//! The Grothendieck relaxation of the k-wise parity body (seed 000 §4: Dwork, Nikolov and
//! Talwar 2014, "Efficient algorithms for privately releasing marginals via convex
//! relaxations").
//!
//! # The bodies
//! Records are `x ∈ {±1}^d` (bit `b_i` stands for `x_i = (−1)^{b_i}`), and for an index set
//! `σ ⊆ [d]`, `x_σ = ∏_{i∈σ} x_i` (`x_∅ = 1`). Rows range over the index sets of size
//! `≤ a` and columns over those of size `≤ b`, with
//!
//! ```text
//!     a = b = k/2                 (k even),
//!     a = (k+1)/2, b = (k−1)/2    (k odd).
//! ```
//!
//! A record's point is the `rows × cols` matrix `M(x)_στ = x_σ·x_τ`; as `x_i² = 1` this is the
//! parity `x_{σΔτ}` of the symmetric difference, of degree `≤ a + b = k`, and every parity of
//! degree `≤ k` appears (split its index set into a part of size `≤ a` and one of size
//! `≤ b`), usually several times ([`ParityRelaxation::entry_parity`] says which parity
//! an entry holds). `K = conv{±M(x)}` is the body of Lemma 4.1 and
//!
//! ```text
//!     L = { (⟨u_σ, v_τ⟩)_{σ,τ} : u_σ, v_τ unit vectors }  (convex: Lemma 4.2)
//! ```
//!
//! is its relaxation: `K ⊆ L` because `M(x)` is attained by the one-dimensional unit
//! vectors `u_σ = x_σ`, `v_τ = x_τ` ([`ParityRelaxation::record_vectors`]), and
//! `−M(x)` by `−u_σ`, `v_τ`. Linear optimization over `L` is the bipartite Grothendieck SDP
//! ([`crate::grothendieck`]), and by Grothendieck's inequality (Theorem 4.3, Lemma 4.4)
//! `max_L ⟨C, ·⟩ ≤ K_G · max_K ⟨C, ·⟩` — so the mean width of `L` is within a constant of
//! that of `K`, which is what the error bound of Theorem 4.5 needs.
//!
//! # Subsets instead of ordered tuples
//! Seed 000 indexes rows and columns by *ordered tuples* `σ ∈ [d]^{k/2}` (with all lower
//! degrees added and rows replicated). This module indexes them by **subsets** of size at
//! most `a` (resp. `b`), ordered by size and then lexicographically. A tuple with a repeated
//! index has the same parity as the subset of indices occurring an odd number of times, so
//! the tuple matrix of a record is the subset matrix with rows and columns duplicated; the
//! subset body is the same relaxation with duplicate constraints removed — smaller, and it
//! still contains `K` (tested in `tests/grothendieck.rs`). Seed 000's replication only
//! reweights parities, which a caller does through the cost `C`.

use crate::bodies::{LinearOracle, OracleAnswer};
use crate::error::{GeometryError, Result, check_dim, check_finite};
use crate::grothendieck::{GrothendieckSettings, GrothendieckSolution, solve_grothendieck};
use crate::parallel::Parallelism;

/// Largest number of entries `rows·cols` [`ParityRelaxation::new`] accepts (2²⁸).
pub const MAX_RELAXATION_ENTRIES: usize = 1 << 28;

/// All subsets of `{0, …, d−1}` of size `≤ max_size`, each sorted, ordered by size and
/// then lexicographically (the empty set first).
///
/// Fails, before enumerating anything, when there would be more than `limit` of them.
pub fn index_sets(d: usize, max_size: usize, limit: usize) -> Result<Vec<Vec<usize>>> {
    let count = count_index_sets(d, max_size);
    if count > limit {
        return Err(GeometryError::InvalidParameter {
            name: "k",
            reason: format!(
                "the index sets of size at most {max_size} over {d} attributes are more than {limit}"
            ),
        });
    }
    let mut out: Vec<Vec<usize>> = Vec::with_capacity(count);
    out.push(Vec::new());
    let mut current: Vec<usize> = Vec::new();
    for size in 1..=max_size.min(d) {
        // Lexicographic enumeration of the size-`size` subsets.
        current.clear();
        current.extend(0..size);
        loop {
            out.push(current.clone());
            // Advance to the next combination: bump the rightmost index that can move.
            match (0..size).rev().find(|&i| current[i] < d - size + i) {
                None => break,
                Some(i) => {
                    current[i] += 1;
                    for j in i + 1..size {
                        current[j] = current[j - 1] + 1;
                    }
                }
            }
        }
    }
    Ok(out)
}

/// `Σ_{s ≤ max_size} C(d, s)`, saturating at `usize::MAX`.
fn count_index_sets(d: usize, max_size: usize) -> usize {
    let mut total: usize = 0;
    let mut binom: u128 = 1; // C(d, s)
    for s in 0..=max_size.min(d) {
        if s > 0 {
            // C(d, s) = C(d, s−1)·(d−s+1)/s, exact in integers.
            binom = binom.saturating_mul((d - s + 1) as u128) / s as u128;
        }
        let b = usize::try_from(binom).unwrap_or(usize::MAX);
        total = total.saturating_add(b);
    }
    total
}

/// The relaxation `L` of the k-wise parity body over `d` binary attributes (module docs),
/// as a [`LinearOracle`] on `R^{rows·cols}` (row-major matrices) whose oracle is the
/// Grothendieck SDP with its certified gap as the answer's slack.
#[derive(Clone, Debug, PartialEq)]
pub struct ParityRelaxation {
    d: usize,
    k: usize,
    row_sets: Vec<Vec<usize>>,
    col_sets: Vec<Vec<usize>>,
    settings: GrothendieckSettings,
}

impl ParityRelaxation {
    /// The relaxation for `d ≥ 1` attributes and parities of degree `≤ k`, `k ≥ 1`, solved
    /// with `settings`. Fails on `d = 0`, `k = 0`, invalid settings, or more than
    /// [`MAX_RELAXATION_ENTRIES`] matrix entries.
    pub fn new(d: usize, k: usize, settings: GrothendieckSettings) -> Result<Self> {
        if d == 0 {
            return Err(GeometryError::InvalidParameter {
                name: "d",
                reason: "the records need at least one attribute".into(),
            });
        }
        if k == 0 {
            return Err(GeometryError::InvalidParameter {
                name: "k",
                reason: "the parity degree k must be at least 1".into(),
            });
        }
        settings.check()?;
        let (a, b) = (k.div_ceil(2), k / 2);
        let row_sets = index_sets(d, a, MAX_RELAXATION_ENTRIES)?;
        let col_sets = index_sets(d, b, MAX_RELAXATION_ENTRIES)?;
        if row_sets.len().saturating_mul(col_sets.len()) > MAX_RELAXATION_ENTRIES {
            return Err(GeometryError::InvalidParameter {
                name: "k",
                reason: format!(
                    "the relaxation for degree {k} over {d} attributes would have {} × {} entries, more than {MAX_RELAXATION_ENTRIES}",
                    row_sets.len(),
                    col_sets.len()
                ),
            });
        }
        Ok(Self {
            d,
            k,
            row_sets,
            col_sets,
            settings,
        })
    }

    /// Number of attributes `d`.
    pub fn attributes(&self) -> usize {
        self.d
    }
    /// The parity degree `k`.
    pub fn degree(&self) -> usize {
        self.k
    }
    /// The row index sets (size `≤ ⌈k/2⌉`).
    pub fn row_sets(&self) -> &[Vec<usize>] {
        &self.row_sets
    }
    /// The column index sets (size `≤ ⌊k/2⌋`).
    pub fn col_sets(&self) -> &[Vec<usize>] {
        &self.col_sets
    }
    /// The solver settings of the oracle.
    pub fn settings(&self) -> &GrothendieckSettings {
        &self.settings
    }

    /// The parity held by entry `(row, col)`: the sorted symmetric difference of the two
    /// index sets. Fails on an index out of range.
    pub fn entry_parity(&self, row: usize, col: usize) -> Result<Vec<usize>> {
        let s = self
            .row_sets
            .get(row)
            .ok_or(GeometryError::IndexOutOfRange {
                index: row,
                len: self.row_sets.len(),
            })?;
        let t = self
            .col_sets
            .get(col)
            .ok_or(GeometryError::IndexOutOfRange {
                index: col,
                len: self.col_sets.len(),
            })?;
        let mut out: Vec<usize> = s.iter().filter(|i| !t.contains(i)).copied().collect();
        out.extend(t.iter().filter(|i| !s.contains(i)));
        out.sort_unstable();
        Ok(out)
    }

    fn signs(&self, bits: &[bool]) -> Result<Vec<f64>> {
        check_dim("record (one bit per attribute)", self.d, bits.len())?;
        Ok(bits.iter().map(|&b| if b { -1.0 } else { 1.0 }).collect())
    }

    /// The one-dimensional unit vectors `(u_σ, v_τ) = (x_σ, x_τ)` of a record given by its
    /// bits (`x_i = (−1)^{b_i}`): they attain [`Self::record_point`], which shows the point
    /// lies in `L`. Fails on a record of the wrong length.
    pub fn record_vectors(&self, bits: &[bool]) -> Result<(Vec<f64>, Vec<f64>)> {
        let x = self.signs(bits)?;
        let parity = |set: &Vec<usize>| set.iter().map(|&i| x[i]).product::<f64>();
        Ok((
            self.row_sets.iter().map(parity).collect(),
            self.col_sets.iter().map(parity).collect(),
        ))
    }

    /// The point `M(x)` of `K` of a record (row-major, entries `x_σ·x_τ`). Fails on a record
    /// of the wrong length.
    pub fn record_point(&self, bits: &[bool]) -> Result<Vec<f64>> {
        let (u, v) = self.record_vectors(bits)?;
        Ok(u.iter()
            .flat_map(|us| v.iter().map(move |vt| us * vt))
            .collect())
    }

    /// Solves the Grothendieck SDP for the direction `c` (row-major `rows × cols`).
    pub fn solve(&self, c: &[f64]) -> Result<GrothendieckSolution> {
        check_dim("relaxation direction", self.dim(), c.len())?;
        check_finite(c, "relaxation direction")?;
        solve_grothendieck(c, self.row_sets.len(), self.col_sets.len(), &self.settings)
    }

    /// [`Self::solve`] warm-started from `start` (a solution for a nearby direction, e.g. the
    /// previous Frank–Wolfe step's) with the fields split over the rayon pool under
    /// [`Parallelism::Rayon`] ([`crate::solve_grothendieck_from`]).
    pub fn solve_from(
        &self,
        c: &[f64],
        start: Option<&GrothendieckSolution>,
        par: Parallelism,
    ) -> Result<GrothendieckSolution> {
        check_dim("relaxation direction", self.dim(), c.len())?;
        check_finite(c, "relaxation direction")?;
        crate::grothendieck::solve_grothendieck_from(
            c,
            self.row_sets.len(),
            self.col_sets.len(),
            &self.settings,
            start,
            par,
        )
    }
}

impl LinearOracle for ParityRelaxation {
    fn dim(&self) -> usize {
        self.row_sets.len() * self.col_sets.len()
    }

    /// The Gram matrix of the mixing method's vectors; `slack` is the certified gap, so
    /// `sup_L ⟨c, ·⟩ ≤ value + slack`.
    fn linear_max(&self, c: &[f64], _par: Parallelism) -> Result<OracleAnswer> {
        let sol = self.solve(c)?;
        let point = sol.gram_matrix();
        let value: f64 = point.iter().zip(c).map(|(p, ci)| p * ci).sum();
        let slack = (sol.upper_bound - value).max(0.0);
        Ok(OracleAnswer {
            point,
            value,
            atom: None,
            slack,
        })
    }
}
