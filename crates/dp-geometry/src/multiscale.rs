//! The multi-scale (chaining) decomposition of seed 004 Lemma 4.2, the heart of the
//! Chaining Mechanism (seed 004 §4.2–4.3).
//!
//! # The lemma, as implemented
//! Let `‖·‖` be a norm with unit ball `B` and `𝒳 ⊂ ΔB` finite. For `j = 1..k` let `S_j ⊆ 𝒳`
//! be a maximal `2^{−j}Δ`-separated subset (in `‖·‖`; equivalently `2^{−j}`-separated in
//! `d(x, y) = ‖x − y‖/Δ`) and `π_j : 𝒳 → S_j` a nearest-point map, so (Lemma 2.7, eq. 12)
//! `‖π_j(x) − x‖ ≤ 2^{−j}Δ`. Put `𝒳^(1) = S_1` and `𝒳^(j) = {z − π_{j−1}(z) : z ∈ S_j}`.
//! For `x ∈ 𝒳` define the chain `x_k = π_k(x)`, `x_j = π_j(x_{j+1})` (`j < k`). Then
//!
//! ```text
//!     x = x_1 + Σ_{j=1}^{k−1} (x_{j+1} − x_j) + (x − x_k),
//!     x_1 ∈ 𝒳^(1) ⊂ ΔB,   x_{j+1} − x_j ∈ 𝒳^(j+1) ⊂ 2^{−j}ΔB,   x − x_k ∈ 2^{−k}ΔB,
//! ```
//!
//! so `𝒳 ⊂ 𝒳^(1) + … + 𝒳^(k) + 2^{−k}ΔB`, and with `k = ⌈log₂(2/α)⌉`
//! ([`MultiscaleDecomposition::levels_for_alpha`]) the remainder lies in `(α/2)ΔB`.
//!
//! Notes on the text:
//! - The chain is *not* `π_0(x) + Σ_j (π_j(x) − π_{j−1}(x))` with independent nearest
//!   points: such differences need not lie in `𝒳^(j)` (which is built from `π_{j−1}(z)`
//!   for `z ∈ S_j`) and are only bounded by `3·2^{−j}Δ`. The lemma's chain applies `π_j` to
//!   `x_{j+1} ∈ S_{j+1}`, which is what this module does.
//! - The lemma states that `𝒳^(j)` is `2^{−j}`-separated. What holds is that `S_j` is, and
//!   `|𝒳^(j)| ≤ |S_j| ≤ 𝒫(𝒳, 2^{−j})` — the only property the proof of Theorem 1.3 uses.
//!   The difference vectors themselves can coincide or be close.
//! - "log" in `k = ⌈log(2/α)⌉` must be base 2 for `2^{−k} ≤ α/2`.
//! - Here the sets are built *nested*, `S_1 ⊆ S_2 ⊆ …`: `S_j` is the greedy extension of
//!   `S_{j−1}` (which is `2^{−j+1}Δ`-, hence `2^{−j}Δ`-separated), still maximal. Then
//!   `z − π_{j−1}(z) = 0` for `z ∈ S_{j−1}`, so the nonzero part of `𝒳^(j)` has at most
//!   `|S_j| − |S_{j−1}|` elements.
//! - The norm is given as a [`Metric`]: with [`Metric::ScaledL2`] (`‖v‖₂/√m`) a set in
//!   `[0,1]^m` has `Δ = 1`, the paper's `‖·‖₂` with `Δ = √m`; with [`Metric::LInf`], `Δ = 1`
//!   as in §4.3.

use crate::covers::{Metric, extend_separated_subset, maximal_separated_subset, nearest_point_map};
use crate::error::{GeometryError, Result};
use crate::parallel::Parallelism;
use crate::points::{PointSet, SubsetPoints};

/// One scale `j` of the decomposition.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MultiscaleLevel {
    /// `2^{−j}Δ`: the separation of `S_j` and its covering radius.
    pub scale: f64,
    /// `S_j`: indices (increasing) of a maximal `scale`-separated subset of the points.
    pub centers: Vec<usize>,
    /// `π_j`: for every point index, the index of a nearest point of `S_j`.
    pub map: Vec<usize>,
}

/// The vector `p_plus − p_minus` (or `p_plus` when `minus` is `None`), named by point
/// indices.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Increment {
    /// Index of the point added.
    pub plus: usize,
    /// Index of the point subtracted, if any.
    pub minus: Option<usize>,
}

impl Increment {
    /// Writes the vector into `out` (length `points.dim()`).
    pub fn write<P: PointSet + ?Sized>(&self, points: &P, out: &mut [f64]) -> Result<()> {
        crate::error::check_dim("Increment::write output", points.dim(), out.len())?;
        for idx in std::iter::once(self.plus).chain(self.minus) {
            if idx >= points.len() {
                return Err(GeometryError::IndexOutOfRange {
                    index: idx,
                    len: points.len(),
                });
            }
        }
        points.write_point(self.plus, out);
        if let Some(m) = self.minus {
            points.add_scaled(m, -1.0, out);
        }
        Ok(())
    }
}

/// The chain of one point `x`: `terms[0] = x_1 ∈ 𝒳^(1)`,
/// `terms[j] = x_{j+1} − x_j ∈ 𝒳^(j+1)`, and `remainder = x − x_k`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Chain {
    /// `x_1, …, x_k` as point indices.
    pub links: Vec<usize>,
    /// The `k` terms, `terms[j−1] ∈ 𝒳^(j)`.
    pub terms: Vec<Increment>,
    /// `x − x_k`, of norm `≤ 2^{−k}Δ`.
    pub remainder: Increment,
}

/// The multi-scale decomposition of seed 004 Lemma 4.2 of a finite point set (module docs).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MultiscaleDecomposition {
    metric: Metric,
    radius: f64,
    len: usize,
    levels: Vec<MultiscaleLevel>,
}

impl MultiscaleDecomposition {
    /// Decomposition with `levels = k ≥ 1` scales and `Δ` the largest norm of a point
    /// (the smallest `Δ` with `𝒳 ⊂ ΔB`).
    pub fn new<P: PointSet + ?Sized>(
        points: &P,
        levels: usize,
        metric: Metric,
        par: Parallelism,
    ) -> Result<Self> {
        let radius = max_norm(points, metric)?;
        Self::build(points, radius, levels, metric, par)
    }

    /// Decomposition with a given `Δ ≥ 0`; fails unless every point has norm `≤ Δ`
    /// (up to a relative 1e-12 round-off allowance).
    pub fn with_radius<P: PointSet + ?Sized>(
        points: &P,
        radius: f64,
        levels: usize,
        metric: Metric,
        par: Parallelism,
    ) -> Result<Self> {
        if !(radius.is_finite() && radius >= 0.0) {
            return Err(GeometryError::InvalidParameter {
                name: "radius",
                reason: format!("{radius} is not a finite non-negative number"),
            });
        }
        let actual = max_norm(points, metric)?;
        if actual > radius * (1.0 + 1e-12) {
            return Err(GeometryError::InvalidParameter {
                name: "radius",
                reason: format!("a point has norm {actual} > Δ = {radius}"),
            });
        }
        Self::build(points, radius, levels, metric, par)
    }

    /// `k = ⌈log₂(2/α)⌉` for `0 < α < 1`: the number of levels for which the remainder
    /// `2^{−k}Δ ≤ (α/2)Δ` (seed 004 Lemma 4.2).
    pub fn levels_for_alpha(alpha: f64) -> Result<usize> {
        if !(alpha > 0.0 && alpha < 1.0) {
            return Err(GeometryError::InvalidParameter {
                name: "alpha",
                reason: format!("{alpha} is not in (0, 1)"),
            });
        }
        let mut k = (2.0 / alpha).log2().ceil().max(1.0) as usize;
        // Guard the ceiling against round-off in log2.
        while 0.5f64.powi(k as i32) > alpha / 2.0 {
            k += 1;
        }
        Ok(k)
    }

    fn build<P: PointSet + ?Sized>(
        points: &P,
        radius: f64,
        levels: usize,
        metric: Metric,
        par: Parallelism,
    ) -> Result<Self> {
        if levels == 0 || levels > 1000 {
            return Err(GeometryError::InvalidParameter {
                name: "levels",
                reason: format!("{levels} is not in 1..=1000"),
            });
        }
        let mut out: Vec<MultiscaleLevel> = Vec::with_capacity(levels);
        let mut scale = radius;
        for _ in 0..levels {
            scale *= 0.5;
            let centers = match out.last() {
                None => maximal_separated_subset(points, scale, metric)?,
                Some(prev) => extend_separated_subset(points, scale, metric, prev.centers.clone())?,
            };
            let view = SubsetPoints::new(points, centers.clone())?;
            let map = nearest_point_map(points, &view, metric, par)?
                .into_iter()
                .map(|k| centers[k])
                .collect();
            out.push(MultiscaleLevel {
                scale,
                centers,
                map,
            });
        }
        Ok(Self {
            metric,
            radius,
            len: points.len(),
            levels: out,
        })
    }

    /// The metric (norm) used.
    pub fn metric(&self) -> Metric {
        self.metric
    }
    /// `Δ`.
    pub fn radius(&self) -> f64 {
        self.radius
    }
    /// Number of points decomposed.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether there were no points.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The levels `j = 1..=k` (`levels()[j−1]`).
    pub fn levels(&self) -> &[MultiscaleLevel] {
        &self.levels
    }
    /// `k`.
    pub fn num_levels(&self) -> usize {
        self.levels.len()
    }

    /// The set `𝒳^(j)` for `1 ≤ j ≤ k`, one increment per `z ∈ S_j` (`z`, or
    /// `z − π_{j−1}(z)` for `j > 1`). Its vectors have norm `≤ 2^{−j+1}Δ`.
    pub fn increment_set(&self, j: usize) -> Result<Vec<Increment>> {
        if j == 0 || j > self.levels.len() {
            return Err(GeometryError::InvalidParameter {
                name: "j",
                reason: format!("level {j} is not in 1..={}", self.levels.len()),
            });
        }
        let level = &self.levels[j - 1];
        Ok(level
            .centers
            .iter()
            .map(|&z| Increment {
                plus: z,
                minus: (j > 1).then(|| self.levels[j - 2].map[z]),
            })
            .collect())
    }

    /// The chain of point `i` (module docs): `x_k = π_k(x)`, `x_j = π_j(x_{j+1})`.
    pub fn chain(&self, i: usize) -> Result<Chain> {
        if i >= self.len {
            return Err(GeometryError::IndexOutOfRange {
                index: i,
                len: self.len,
            });
        }
        let k = self.levels.len();
        let mut links = vec![0usize; k];
        let mut current = i;
        for j in (0..k).rev() {
            current = self.levels[j].map[current];
            links[j] = current;
        }
        let mut terms = Vec::with_capacity(k);
        terms.push(Increment {
            plus: links[0],
            minus: None,
        });
        for j in 1..k {
            terms.push(Increment {
                plus: links[j],
                minus: Some(links[j - 1]),
            });
        }
        Ok(Chain {
            remainder: Increment {
                plus: i,
                minus: Some(links[k - 1]),
            },
            links,
            terms,
        })
    }
}

fn max_norm<P: PointSet + ?Sized>(points: &P, metric: Metric) -> Result<f64> {
    if points.dim() == 0 {
        return Err(GeometryError::InvalidParameter {
            name: "points",
            reason: "points must have positive dimension".into(),
        });
    }
    let mut buf = vec![0.0; points.dim()];
    let mut best = 0.0f64;
    for i in 0..points.len() {
        points.write_point(i, &mut buf);
        let n = metric.norm(&buf);
        if !n.is_finite() {
            return Err(GeometryError::NonFinite("point coordinates"));
        }
        best = best.max(n);
    }
    Ok(best)
}
