//! Johnson–Lindenstrauss random projections (used by seed 000 §5 to compress the
//! synopsis of Boosting for Queries).

use rand::Rng;

use crate::error::{GeometryError, Result, check_dim, check_finite};
use crate::gaussian::fill_standard_normal;
use crate::parallel::Parallelism;
use crate::points::dot;

/// The distribution of the entries of a [`JohnsonLindenstrauss`] map.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum JlEntries {
    /// Independent `±1/√k`, each sign with probability 1/2 (Achlioptas 2003).
    Rademacher,
    /// Independent `N(0, 1/k)`.
    Gaussian,
}

/// A random linear map `Π : R^d → R^k` with `E‖Πx‖₂² = ‖x‖₂²` for every `x`.
///
/// For `0 < ε < 1` and both entry distributions (Achlioptas 2003, Theorem 1.1 and its
/// proof), each tail `P(‖Πx‖² ≥ (1+ε)‖x‖²)`, `P(‖Πx‖² ≤ (1−ε)‖x‖²)` is at most
/// `exp(−k(ε²/2 − ε³/3)/2)`; see [`JohnsonLindenstrauss::dimension_for`].
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct JohnsonLindenstrauss {
    input_dim: usize,
    output_dim: usize,
    entries: JlEntries,
    /// Row-major `k × d`.
    matrix: Vec<f64>,
}

impl JohnsonLindenstrauss {
    /// A map with `±1/√k` entries. Fails on a zero dimension.
    pub fn new<R: Rng + ?Sized>(input_dim: usize, output_dim: usize, rng: &mut R) -> Result<Self> {
        Self::with_entries(input_dim, output_dim, JlEntries::Rademacher, rng)
    }

    /// A map with the given entry distribution. Fails on a zero dimension or a matrix of
    /// more than 2³¹ entries.
    pub fn with_entries<R: Rng + ?Sized>(
        input_dim: usize,
        output_dim: usize,
        entries: JlEntries,
        rng: &mut R,
    ) -> Result<Self> {
        if input_dim == 0 || output_dim == 0 {
            return Err(GeometryError::InvalidParameter {
                name: "dim",
                reason: "input and output dimensions must be positive".into(),
            });
        }
        let size = input_dim
            .checked_mul(output_dim)
            .filter(|&s| s <= 1 << 31)
            .ok_or_else(|| GeometryError::InvalidParameter {
                name: "dim",
                reason: format!("a {output_dim} × {input_dim} matrix is too large"),
            })?;
        let scale = 1.0 / (output_dim as f64).sqrt();
        let mut matrix = vec![0.0; size];
        match entries {
            JlEntries::Rademacher => {
                for chunk in matrix.chunks_mut(64) {
                    let bits = rng.next_u64();
                    for (b, m) in chunk.iter_mut().enumerate() {
                        *m = if (bits >> b) & 1 == 1 { scale } else { -scale };
                    }
                }
            }
            JlEntries::Gaussian => {
                fill_standard_normal(rng, &mut matrix);
                for m in &mut matrix {
                    *m *= scale;
                }
            }
        }
        Ok(Self {
            input_dim,
            output_dim,
            entries,
            matrix,
        })
    }

    /// The smallest `k` for which, by the union bound over the `N(N−1)/2` pairs of `N`
    /// points and the two tails of each, all pairwise squared distances are preserved within
    /// factors `1 ± ε` with probability at least `1 − β`:
    /// `k ≥ 2 ln(N(N−1)/β) / (ε²/2 − ε³/3)`, for `0 < ε < 1`, `0 < β < 1`, `N ≥ 2`.
    pub fn dimension_for(num_points: usize, epsilon: f64, failure: f64) -> Result<usize> {
        if !(epsilon > 0.0 && epsilon < 1.0) {
            return Err(GeometryError::InvalidParameter {
                name: "epsilon",
                reason: format!("{epsilon} is not in (0, 1)"),
            });
        }
        if !(failure > 0.0 && failure < 1.0) {
            return Err(GeometryError::InvalidParameter {
                name: "failure",
                reason: format!("{failure} is not in (0, 1)"),
            });
        }
        if num_points < 2 {
            return Ok(1);
        }
        let n = num_points as f64;
        let rate = epsilon * epsilon / 2.0 - epsilon.powi(3) / 3.0;
        Ok((2.0 * (n * (n - 1.0) / failure).ln() / rate).ceil() as usize)
    }

    /// `d`.
    pub fn input_dim(&self) -> usize {
        self.input_dim
    }
    /// `k`.
    pub fn output_dim(&self) -> usize {
        self.output_dim
    }
    /// The entry distribution.
    pub fn entries(&self) -> JlEntries {
        self.entries
    }

    /// `Πx`. Fails on a wrong length or non-finite input.
    pub fn apply(&self, x: &[f64]) -> Result<Vec<f64>> {
        let mut out = vec![0.0; self.output_dim];
        self.apply_into(x, &mut out)?;
        Ok(out)
    }

    /// `out = Πx` without allocating.
    pub fn apply_into(&self, x: &[f64], out: &mut [f64]) -> Result<()> {
        check_dim("JohnsonLindenstrauss input", self.input_dim, x.len())?;
        check_dim("JohnsonLindenstrauss output", self.output_dim, out.len())?;
        check_finite(x, "JohnsonLindenstrauss input")?;
        for (o, row) in out.iter_mut().zip(self.matrix.chunks_exact(self.input_dim)) {
            *o = dot(row, x);
        }
        Ok(())
    }

    /// `Π` applied to each row of the row-major `rows × d` matrix `m`: the row-major
    /// `rows × k` matrix `M·Πᵀ`, as one dense matrix product (faer's blocked gemm, on the rayon
    /// pool under [`Parallelism::Rayon`]). Each output entry is the same inner product as
    /// [`Self::apply`]'s, summed in faer's order (equal to it up to rounding). Fails when
    /// `m.len()` is not a multiple of `d` or `m` is not finite.
    pub fn apply_rows(&self, m: &[f64], par: Parallelism) -> Result<Vec<f64>> {
        let d = self.input_dim;
        if !m.len().is_multiple_of(d) {
            return Err(GeometryError::DimensionMismatch {
                what: "JohnsonLindenstrauss input rows",
                expected: m.len().div_ceil(d) * d,
                found: m.len(),
            });
        }
        check_finite(m, "JohnsonLindenstrauss input")?;
        let rows = m.len() / d;
        let k = self.output_dim;
        let mut out = vec![0.0; rows * k];
        // Row-major `rows × k` is column-major `k × rows`: out = Π·Mᵀ, with the row-major
        // `k × d` map and `Mᵀ` the column-major reading of the row-major `m`.
        faer::linalg::matmul::matmul(
            faer::MatMut::from_column_major_slice_mut(&mut out, k, rows),
            faer::Accum::Replace,
            faer::MatRef::from_row_major_slice(&self.matrix, k, d),
            faer::MatRef::from_column_major_slice(m, d, rows),
            1.0,
            par.faer(),
        );
        Ok(out)
    }
}
