//! The JL-compressed synopsis of seed 000 §5.2 (Dwork, Nikolov and Talwar 2015, Lemmas 5.4
//! and 5.5), for [`super::BoostingForQueries`].
//!
//! A point of the relaxation `L` is the Gram matrix `(⟨u_σ, v_τ⟩)` of unit vectors; a
//! Frank–Wolfe iterate is a convex combination `Σ_i λ_i G_i` of oracle answers, each the Gram
//! matrix of the Grothendieck solver's vectors `u^{(i)}_σ, v^{(i)}_τ` (rank `r_i`). That
//! combination is itself the Gram matrix of the concatenated vectors
//! `ū_σ = (√λ_1 u^{(1)}_σ, …, √λ_m u^{(m)}_σ)` and `v̄_τ` likewise (norms ≤ 1), of dimension
//! `R = Σ r_i`. A Johnson–Lindenstrauss map `Π : R^R → R^D` keeps every inner product
//! `⟨Πū_σ, Πv̄_τ⟩` within `γ` of `⟨ū_σ, v̄_τ⟩` for all pairs with probability `1 − β` when
//! `D ≥ 2 ln(P(P−1)/β)/(γ²/2 − γ³/3)` over the `P` vectors and their differences (the
//! polarisation `4⟨a, b⟩ = ‖a + b‖² − ‖a − b‖²` with norms ≤ 2; seed 000 Lemma 5.4), so the
//! synopsis shrinks from `R` to `D` numbers per vector. The map is drawn from public
//! randomness: compressing is post-processing.
//!
//! [`VectorParityBody`] is [`super::ParityBody`] that also keeps the vectors of every answer
//! and names it as an atom, so that Frank–Wolfe returns the convex weights.

use std::sync::Mutex;

use dp_geometry::{
    GeometryError, GrothendieckSettings, GrothendieckSolution, JohnsonLindenstrauss, LinearOracle,
    OracleAnswer, Parallelism, ParityRelaxation,
};
use dp_queries::ParityQueries;
use rand::Rng;

use super::body::NONE;

/// [`super::ParityBody`] keeping the Grothendieck vectors of every answer (module docs).
pub struct VectorParityBody {
    relaxation: ParityRelaxation,
    entry_coordinate: Vec<usize>,
    replicas: Vec<usize>,
    solutions: Mutex<Vec<GrothendieckSolution>>,
}

/// A synopsis in compressed form: `D`-dimensional vectors per row and column set of the
/// relaxation; parity `T_j` is the average of `⟨a_σ, b_τ⟩` over its entries.
#[derive(Clone, Debug, PartialEq)]
pub struct CompressedSynopsis {
    /// `D`.
    pub dim: usize,
    /// Row vectors, row-major `rows × D`.
    pub rows: Vec<f64>,
    /// Column vectors, row-major `cols × D`.
    pub cols: Vec<f64>,
    /// Number of column sets.
    pub num_cols: usize,
}

impl VectorParityBody {
    /// As [`super::ParityBody::new`].
    pub fn new(
        parities: &ParityQueries,
        settings: GrothendieckSettings,
    ) -> Result<Self, GeometryError> {
        let (relaxation, entry_coordinate, replicas) = super::body::entry_map(parities, settings)?;
        Ok(Self {
            relaxation,
            entry_coordinate,
            replicas,
            solutions: Mutex::new(Vec::new()),
        })
    }

    /// Forget the stored answers (before a new projection).
    pub fn clear(&self) {
        if let Ok(mut s) = self.solutions.lock() {
            s.clear();
        }
    }

    /// Number of stored answers.
    pub fn stored(&self) -> usize {
        self.solutions.lock().map_or(0, |s| s.len())
    }

    /// Parity coordinates (coordinate 0: the empty parity) of the averaged Gram matrix of
    /// row vectors `a` and column vectors `b` (row-major, `dim` wide).
    fn read_back(&self, a: &[f64], b: &[f64], dim: usize) -> Vec<f64> {
        let cols = self.relaxation.col_sets().len();
        let mut point = vec![0.0; self.replicas.len()];
        for (e, &j) in self.entry_coordinate.iter().enumerate() {
            if j != NONE {
                let (r, c) = (e / cols, e % cols);
                let g: f64 = a[r * dim..(r + 1) * dim]
                    .iter()
                    .zip(&b[c * dim..(c + 1) * dim])
                    .map(|(x, y)| x * y)
                    .sum();
                point[j] += g;
            }
        }
        for (p, &r) in point.iter_mut().zip(&self.replicas) {
            *p /= r as f64;
        }
        point
    }

    /// The concatenated vectors of the convex combination `atoms` (Frank–Wolfe's
    /// `(atom, weight)` pairs), uncompressed: `(rows, cols, R)`.
    pub fn concatenated(
        &self,
        atoms: &[(usize, f64)],
    ) -> Result<(Vec<f64>, Vec<f64>, usize), GeometryError> {
        let sols = self
            .solutions
            .lock()
            .map_err(|_| GeometryError::Oracle("the stored answers are unavailable".into()))?;
        let mut total = 0usize;
        for &(a, _) in atoms {
            let s = sols.get(a).ok_or_else(|| {
                GeometryError::Oracle(format!("atom {a} was not produced by this body"))
            })?;
            total += s.rank;
        }
        let rows = self.relaxation.row_sets().len();
        let cols = self.relaxation.col_sets().len();
        let mut u = vec![0.0; rows * total];
        let mut v = vec![0.0; cols * total];
        let mut offset = 0;
        for &(a, w) in atoms {
            let s = &sols[a];
            let scale = w.max(0.0).sqrt();
            for r in 0..rows {
                for (k, x) in s.row_vector(r).iter().enumerate() {
                    u[r * total + offset + k] = scale * x;
                }
            }
            for c in 0..cols {
                for (k, x) in s.col_vector(c).iter().enumerate() {
                    v[c * total + offset + k] = scale * x;
                }
            }
            offset += s.rank;
        }
        Ok((u, v, total))
    }

    /// The parity coordinates of the convex combination `atoms`, exactly (no compression).
    pub fn exact_point(&self, atoms: &[(usize, f64)]) -> Result<Vec<f64>, GeometryError> {
        let (u, v, total) = self.concatenated(atoms)?;
        Ok(self.read_back(&u, &v, total.max(1)))
    }

    /// Compress the convex combination `atoms` to `dim` dimensions with a Rademacher JL map
    /// drawn from `rng` (module docs). When `dim` is at least the concatenated dimension
    /// the vectors are kept as they are.
    pub fn compress<R: Rng + ?Sized>(
        &self,
        atoms: &[(usize, f64)],
        dim: usize,
        rng: &mut R,
    ) -> Result<CompressedSynopsis, GeometryError> {
        let (u, v, total) = self.concatenated(atoms)?;
        let num_cols = self.relaxation.col_sets().len();
        if total == 0 || dim >= total {
            return Ok(CompressedSynopsis {
                dim: total,
                rows: u,
                cols: v,
                num_cols,
            });
        }
        let map = JohnsonLindenstrauss::new(total, dim, rng)?;
        // One faer product per side (`rows × total` times `Πᵀ`), on the calling thread: at
        // adult one-hot 2-way's shape it measured 25 ms against 75 ms row by row and 60 ms over
        // rayon on the loaded 2-core machine (docs/benchmarks.md, "Linear algebra through faer").
        Ok(CompressedSynopsis {
            dim,
            rows: map.apply_rows(&u, Parallelism::None)?,
            cols: map.apply_rows(&v, Parallelism::None)?,
            num_cols,
        })
    }

    /// The parity answers of a compressed synopsis (coordinate 0 dropped: the empty parity).
    pub fn answers(&self, synopsis: &CompressedSynopsis) -> Vec<f64> {
        let mut p = self.read_back(&synopsis.rows, &synopsis.cols, synopsis.dim.max(1));
        p.remove(0);
        p
    }
}

impl LinearOracle for VectorParityBody {
    fn dim(&self) -> usize {
        self.replicas.len()
    }

    /// Warm-started from the previous answer of the same projection (as
    /// [`super::ParityBody`]'s oracle).
    fn linear_max(&self, c: &[f64], par: Parallelism) -> Result<OracleAnswer, GeometryError> {
        let cost = super::body::entry_cost(&self.entry_coordinate, &self.replicas, c)?;
        let mut sols = self
            .solutions
            .lock()
            .map_err(|_| GeometryError::Oracle("the stored answers are unavailable".into()))?;
        let sol = self.relaxation.solve_from(&cost, sols.last(), par)?;
        let point = self.read_back(&sol.u, &sol.v, sol.rank.max(1));
        let value: f64 = point.iter().zip(c).map(|(p, ci)| p * ci).sum();
        let slack = (sol.upper_bound - value).max(0.0);
        sols.push(sol);
        Ok(OracleAnswer {
            point,
            value,
            atom: Some(sols.len() - 1),
            slack,
        })
    }
}
