//! Workload tables measured **beside the model**: tables the estimate's model cannot take
//! (adding their clique would exceed the model-size cap) may still be selected and
//! measured; their measurements do not enter the model, and their released answer is the
//! measurement shrunk toward the model's marginal.
//!
//! ## Why
//!
//! A graphical model answers a table it never measured from the tables it did; when the
//! workload's tables cannot all join the model (adult's all 2-way at ε = 10 needs a junction
//! tree far beyond 10⁶ cells), the tables left out keep the model's error however large the
//! budget, and the Gaussian baseline — every table measured directly — wins at large ε
//! (issue #24). Measuring such a table beside the model costs one ordinary round (the same
//! selection and measurement steps, the same privacy accounting) and lets the release use
//! the direct measurement where the model is wrong.
//!
//! ## The combination (positive-part James–Stein, within strata of the model's count)
//!
//! With `k` cells, the model's counts `μ = T̂·p̂` (public: post-processing of earlier
//! measurements) and the inverse-variance mean `ȳ` of the table's measurements, whose
//! independent noise has variance `v = σ²` per cell, the cells are split into **strata by the
//! model's count**: `S₀ = {i : μ_i < σ}` and `S_j = {i : 4^(j−1)·σ ≤ μ_i < 4^j·σ}` for
//! `j ≥ 1`, and consecutive strata are merged until each holds at least
//! [`MIN_STRATUM_CELLS`] cells (a small table is one stratum). Within each stratum `S` of
//! `k_S ≥ 3` cells the released counts are
//!
//! `x̂_S = μ_S + (1 − (k_S − 2)·v / ‖ȳ_S − μ_S‖²)₊ · (ȳ_S − μ_S)`,
//!
//! Baranchik's positive-part James–Stein estimator shrinking `ȳ_S` toward the fixed point
//! `μ_S`; a stratum of one or two cells keeps `ȳ_S`. For Gaussian noise each stratum's mean
//! squared error is below `k_S·v`, that of `ȳ_S` alone, for every true table (James and Stein
//! 1961; the positive part only lowers it, Baranchik 1964), so the sum over strata is below
//! `k·v`: the release is never worse in expectation than the direct measurement. The strata
//! depend on the model and `σ` only, both fixed before `ȳ` is drawn (the model never saw this
//! table's measurements), so the per-stratum argument holds as it stands — the construction is
//! Efron and Morris's (1973, JRSS B 35(3), "Combining possibly related estimation problems")
//! shrinkage within groups chosen in advance.
//!
//! **Why strata.** One shrinkage factor for the whole table (the estimator until 2026-11-28)
//! is set by the table's total disagreement: on a large sparse table the empty cells, where the
//! model is right and `ȳ` is pure noise, and the few full cells, where the model is off, get the
//! same factor — too little shrinkage for the first, too much for the second. Grouping the
//! cells by the model's count separates them (a cell the model puts near zero is usually near
//! zero): measured on every bundled table where tables are measured beside the model, avgL1
//! fell 4–14 % (temporal-match2 all 2-way at ε = 1: 0.0491 → 0.0422; adult all2 at ε = 10:
//! 0.0297 → 0.0256; docs/mechanisms/adaptive.md, "Tables beside the model").
//!
//! ## The lower-order residuals first (issue #24; `residual_release`, the default)
//!
//! A table's cells mix parts of different order: for a table on attributes `S` with `n_i`
//! values each, a table `x` splits into orthogonal components `x = Σ_{A⊆S} P_A x`,
//! `P_A = ⊗_{i∈A}(I − J/n_i) ⊗_{i∉A} J/n_i` ([`residual_component`]) — the residual basis of
//! ResidualPlanner (Xiao, He, Zhang, Kifer, NeurIPS 2023, §4): `P_∅ x` is the total spread
//! evenly, `P_{i} x` attribute `i`'s 1-way departure from it, `P_S x` the interaction no
//! sub-table holds, of rank `∏_{i∈S}(n_i − 1)` out of `k = ∏ n_i`. For `A ⊊ S` the model has
//! usually measured tables `C ⊇ A` itself (every 1-way table, at least), and each such
//! measurement's `A`-marginal is an independent unbiased estimate of the same component, with
//! noise variance `v_C = σ_C²·∏_{j∈C∖A} n_j` per cell, against `v_y = v·∏_{i∈S∖A} n_i` for the
//! table's own measurement. So each lower-order component is released as the
//! inverse-variance combination `c_A·P_A ȳ + (1 − c_A)·P_A z_A`, `z_A` the precision-weighted
//! average of those measurements' `A`-marginals and `c_A = v_m/(v_y + v_m)`, `v_m` its
//! variance ([`residual_weights`], [`measurement_marginal`], [`lifted`]) — the generalised-least-squares
//! reconstruction from residuals of ReM (Mullins, McKenna et al. 2024), restricted to the
//! table's sub-tables; the top component `P_S ȳ` is the table's own. Each combined component's
//! noise variance is `c_A` times the measurement's, so the result's is
//! `v* = v·Σ_A c_A·rank(P_A)/k` per cell ([`residual_combination`]), and the strata shrinkage
//! above is applied to it with `v*`. The other estimate is the measurements, not the model's
//! marginal: the model's lower orders are a fit that need not have converged, and taking them
//! as exact cost 1.5 % on temporal-match2 at ε = 10 (docs/mechanisms/adaptive.md, "The
//! lower-order residuals first"). On a table of binary attributes the top component is one of
//! a 2-way table's four dimensions, so three quarters of its noise sit in parts the model's
//! measurements know better. Uses the noisy measurements and their variances only:
//! post-processing.
//!
//! The discrete Gaussian's variance is at most `σ²` (Canonne–Kamath–Steinke 2020, Cor. 9), and
//! `v` uses `σ²`. The counts are then divided by `T̂` and projected onto the probability simplex
//! (post-processing).

use super::estimator::MeasuredMarginal;
use crate::postprocess::project_onto_simplex;

/// The measurements of one workload table taken beside the model.
#[derive(Clone, Debug, Default)]
pub struct BesideTable {
    /// `Σ_j y_j / σ_j²` per cell.
    weighted_sum: Vec<f64>,
    /// `Σ_j 1 / σ_j²`.
    precision: f64,
}

impl BesideTable {
    /// Add one measurement `y` (noisy counts) with noise variance `sigma2` per cell.
    pub fn add(&mut self, y: &[i64], sigma2: f64) {
        if self.weighted_sum.len() != y.len() {
            self.weighted_sum = vec![0.0; y.len()];
            self.precision = 0.0;
        }
        for (s, &v) in self.weighted_sum.iter_mut().zip(y) {
            *s += v as f64 / sigma2;
        }
        self.precision += 1.0 / sigma2;
    }

    /// Add this table's measurements, as one combined measurement of every cell, to a
    /// table's evidence for its correction at release (`super::check`).
    pub(crate) fn add_to(&self, evidence: &mut super::check::CellEvidence) {
        if self.precision > 0.0 {
            let mean: Vec<f64> = self
                .weighted_sum
                .iter()
                .map(|s| s / self.precision)
                .collect();
            evidence.add(&mean, 1.0 / self.precision);
        }
    }

    /// The inverse-variance mean of the table's measurements and its noise variance per
    /// cell (`None` before any measurement).
    pub fn mean(&self) -> Option<(Vec<f64>, f64)> {
        (self.precision > 0.0).then(|| {
            (
                self.weighted_sum
                    .iter()
                    .map(|s| s / self.precision)
                    .collect(),
                1.0 / self.precision,
            )
        })
    }

    /// The table's released distribution: its measurements shrunk toward `model` (the
    /// model's marginal, a distribution over the same cells) with the total `total`, within
    /// strata of the model's count ([`shrink_toward_by_strata`]), divided by `total` and
    /// projected onto the simplex (module docs).
    pub fn estimate(&self, model: &[f64], total: f64) -> Vec<f64> {
        let mean: Vec<f64> = self
            .weighted_sum
            .iter()
            .map(|s| s / self.precision)
            .collect();
        shrunk_distribution(model, &mean, 1.0 / self.precision, total)
    }
}

/// The released distribution of a table measured apart from the model: `mean` (noisy
/// counts, noise variance `variance` per cell) shrunk toward the model's counts
/// `total · model` within strata ([`shrink_toward_by_strata`]), divided by `total` and
/// projected onto the simplex (module docs). Used for the tables beside the model and for
/// the checks (`super::check`).
pub fn shrunk_distribution(model: &[f64], mean: &[f64], variance: f64, total: f64) -> Vec<f64> {
    let mu: Vec<f64> = model.iter().map(|p| p * total).collect();
    let x = shrink_toward_by_strata(&mu, mean, variance);
    let mut v: Vec<f64> = x.iter().map(|c| c / total.max(1.0)).collect();
    project_onto_simplex(&mut v);
    v
}

/// The stratum of a cell whose target count is `target`, with noise standard deviation `sd`:
/// 0 below `sd`, `j ≥ 1` for `4^(j−1)·sd ≤ target < 4^j·sd` (module docs).
fn stratum(target: f64, sd: f64) -> usize {
    if sd <= 0.0 || target.is_nan() || target < sd {
        // below one σ, or no noise (then every cell is one stratum and the mean is kept)
        return 0;
    }
    1 + ((target / sd).log2() / 2.0).floor() as usize
}

/// The fewest cells a stratum may hold: consecutive strata (in the order of the target's
/// count) are merged until each holds at least this many, so a small table is one stratum (one
/// factor, as before strata). James–Stein's saving on `k` cells where the target is right is
/// `(k − 2)/k` of the measurement's risk, so a stratum of one or two cells saves nothing and
/// one of three a third: on acs all 2-way at ε = 1 (tables of 4 cells), strata of single
/// cells cost 4.7 % (docs/mechanisms/adaptive.md, "Strata").
pub const MIN_STRATUM_CELLS: usize = 10;

/// Positive-part James–Stein within strata of the target's count: the cells are grouped by
/// `target` in units of `σ = √variance` (below `σ`, then the factor-4 bands `[4^(j−1)σ, 4^jσ)`),
/// consecutive groups are merged until each holds at least [`MIN_STRATUM_CELLS`] cells (the
/// last one into its predecessor), and each group is shrunk toward its target by
/// [`shrink_toward`] (module docs, "The combination"; Efron–Morris 1973). The groups are a
/// function of `target` and `variance` only, so each group's mean squared error is below its
/// cells' `variance` sum, and so is the whole's.
pub fn shrink_toward_by_strata(target: &[f64], mean: &[f64], variance: f64) -> Vec<f64> {
    let sd = variance.max(0.0).sqrt();
    let mut strata: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
    for (i, &t) in target.iter().enumerate() {
        strata.entry(stratum(t, sd)).or_default().push(i);
    }
    // merge in order until every group holds MIN_STRATUM_CELLS cells
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    for cells in strata.into_values() {
        open.extend(cells);
        if open.len() >= MIN_STRATUM_CELLS {
            groups.push(std::mem::take(&mut open));
        }
    }
    match groups.last_mut() {
        Some(last) => last.extend(open),
        None => groups.push(open),
    }
    let mut x = mean.to_vec();
    for cells in &groups {
        let t: Vec<f64> = cells.iter().map(|&i| target[i]).collect();
        let y: Vec<f64> = cells.iter().map(|&i| mean[i]).collect();
        for (&i, v) in cells.iter().zip(shrink_toward(&t, &y, variance)) {
            x[i] = v;
        }
    }
    x
}

/// Positive-part James–Stein: `mean` (noise variance `variance` per coordinate) shrunk
/// toward the fixed point `target` (module docs). `mean` itself for fewer than 3
/// coordinates; `target` when the two agree exactly.
pub fn shrink_toward(target: &[f64], mean: &[f64], variance: f64) -> Vec<f64> {
    let k = mean.len();
    if k < 3 {
        return mean.to_vec();
    }
    let dist2: f64 = mean
        .iter()
        .zip(target)
        .map(|(m, t)| (m - t) * (m - t))
        .sum();
    let factor = if dist2 > 0.0 {
        (1.0 - (k as f64 - 2.0) * variance / dist2).max(0.0)
    } else {
        0.0
    };
    target
        .iter()
        .zip(mean)
        .map(|(t, m)| t + factor * (m - t))
        .collect()
}

/// Apply along `axis` of a row-major table of dimensions `dims` the centring `I − J/n`
/// (`centre`) or the averaging `J/n` to every line of `v` (`n = dims[axis]`).
fn along_axis(v: &mut [f64], dims: &[usize], axis: usize, centre: bool) {
    let n = dims[axis];
    let inner: usize = dims[axis + 1..].iter().product();
    for block in v.chunks_mut(n * inner) {
        for i in 0..inner {
            let mean = (0..n).map(|j| block[j * inner + i]).sum::<f64>() / n as f64;
            for j in 0..n {
                let c = &mut block[j * inner + i];
                *c = if centre { *c - mean } else { mean };
            }
        }
    }
}

/// The residual component `P_A d` of the table `d` (row-major, dimensions `dims`, the last
/// fastest) for the attribute set `A` given as a bit mask over the table's axes (bit `i`:
/// axis `i`): `P_A = ⊗_{i∈A}(I − J/n_i) ⊗_{i∉A} J/n_i`, the orthogonal projection onto the
/// interactions of exactly the attributes in `A` (ResidualPlanner's residual basis: Xiao,
/// He, Zhang, Kifer, NeurIPS 2023, §4). Over all `2^s` masks the projections are mutually
/// orthogonal, sum to the identity, and `P_A` has rank `∏_{i∈A}(n_i − 1)` (module docs).
pub fn residual_component(d: &[f64], dims: &[usize], mask: usize) -> Vec<f64> {
    let mut v = d.to_vec();
    for axis in 0..dims.len() {
        along_axis(&mut v, dims, axis, mask & (1 << axis) != 0);
    }
    v
}

/// The least share of the precision a measurement must carry to join the other estimate of
/// a table's lower-order residual ([`residual_weights`]): the measurements left out (large
/// tables, whose marginal on a few attributes is noisy) change the estimate by little and
/// would cost a pass over their cells each; leaving them out only understates its precision.
pub const RESIDUAL_MIN_SHARE: f64 = 0.01;

/// For every mask `A` over the table's axes (module docs, "The lower-order residuals
/// first"): the weight `c_A` on the table's own residual `P_A ȳ`, and the measurements of
/// `model` whose `A`-marginals, averaged with the given weights (summing to 1), are the other
/// estimate of it. For `A ⊊ S` those are the full-resolution measurements `C ⊇ A`, each of
/// `A`-marginal noise variance `v_C = σ_C²·∏_{j∈C∖A} n_j` per cell, weighted by `1/v_C` —
/// those carrying at least [`RESIDUAL_MIN_SHARE`] of the total precision — and
/// `c_A = v_m/(v_y + v_m)` with `v_m` their average's variance and `v_y =
/// variance·∏_{i∈S∖A} n_i` the table's own; `(1, [])` when none covers `A`, and for `A = S`.
/// `attrs` ascending, `sizes` the domain's sizes, `variance` the table's noise variance per
/// cell.
pub fn residual_weights(
    attrs: &[usize],
    sizes: &[u32],
    variance: f64,
    model: &[MeasuredMarginal],
) -> Vec<(f64, Vec<(usize, f64)>)> {
    let s = attrs.len();
    let full = (1usize << s) - 1;
    (0..=full)
        .map(|mask| {
            if mask == full {
                return (1.0, Vec::new());
            }
            let inside = |i: usize| mask & (1 << i) != 0;
            let a: Vec<usize> = (0..s).filter(|&i| inside(i)).map(|i| attrs[i]).collect();
            let v_y: f64 = variance
                * (0..s)
                    .filter(|&i| !inside(i))
                    .map(|i| f64::from(sizes[attrs[i]]))
                    .product::<f64>();
            let precisions: Vec<(usize, f64)> = model
                .iter()
                .enumerate()
                .filter(|(_, m)| m.groups.is_none() && a.iter().all(|x| m.attrs.contains(x)))
                .map(|(k, m)| {
                    let outside: f64 = m
                        .attrs
                        .iter()
                        .filter(|x| !a.contains(x))
                        .map(|&x| f64::from(sizes[x]))
                        .product();
                    (k, 1.0 / (m.sigma2 * outside))
                })
                .filter(|(_, p)| p.is_finite() && *p > 0.0)
                .collect();
            let all: f64 = precisions.iter().map(|(_, p)| p).sum();
            let kept: Vec<(usize, f64)> = precisions
                .into_iter()
                .filter(|(_, p)| *p >= RESIDUAL_MIN_SHARE * all)
                .collect();
            let precision: f64 = kept.iter().map(|(_, p)| p).sum();
            if precision <= 0.0 || v_y.is_nan() || v_y <= 0.0 {
                return (1.0, Vec::new());
            }
            let v_m = 1.0 / precision;
            (
                v_m / (v_y + v_m),
                kept.into_iter().map(|(k, p)| (k, p / precision)).collect(),
            )
        })
        .collect()
}

/// The marginal of the measurement `m` on the attributes `a` (ascending, all in `m.attrs`),
/// row-major over `a`: `m`'s counts summed over its other attributes. One pass over `m`'s
/// cells, no allocation per cell.
pub fn measurement_marginal(m: &MeasuredMarginal, a: &[usize], sizes: &[u32]) -> Vec<f64> {
    // for each attribute of `a`: its stride in `m`'s table, its size, its stride in `a`'s
    let mut axes: Vec<(usize, usize, usize)> = Vec::with_capacity(a.len());
    let mut a_stride = 1usize;
    for &x in a.iter().rev() {
        let n = sizes[x] as usize;
        let m_stride: usize = m
            .attrs
            .iter()
            .skip_while(|&&y| y != x)
            .skip(1)
            .map(|&y| sizes[y] as usize)
            .product();
        axes.push((m_stride, n, a_stride));
        a_stride *= n;
    }
    let mut marginal = vec![0.0; a_stride];
    for (cell, &value) in m.values.iter().enumerate() {
        let index: usize = axes.iter().map(|&(ms, n, as_)| (cell / ms) % n * as_).sum();
        marginal[index] += value;
    }
    marginal
}

/// The table on `attrs` (ascending; row-major, the last fastest) that is constant along the
/// axes outside `mask` (bit `i`: axis `i`) and whose marginal on the axes in `mask` is
/// `marginal` (row-major over those attributes): each of its counts spread evenly over the
/// other axes' cells.
pub fn lifted(marginal: &[f64], attrs: &[usize], mask: usize, sizes: &[u32]) -> Vec<f64> {
    let dims: Vec<usize> = attrs.iter().map(|&x| sizes[x] as usize).collect();
    let mut axes: Vec<(usize, usize, usize)> = Vec::new();
    let (mut s_stride, mut a_stride, mut spread) = (1usize, 1usize, 1.0);
    for (i, &n) in dims.iter().enumerate().rev() {
        if mask & (1 << i) != 0 {
            axes.push((s_stride, n, a_stride));
            a_stride *= n;
        } else {
            spread *= n as f64;
        }
        s_stride *= n;
    }
    (0..s_stride)
        .map(|cell| {
            let index: usize = axes.iter().map(|&(ss, n, as_)| (cell / ss) % n * as_).sum();
            marginal[index] / spread
        })
        .collect()
}

/// The parts [`residual_combination`] takes for the table on `attrs` (noise `variance` per
/// cell): for every mask `A`, the weight `c_A` of [`residual_weights`] and, where it has
/// sources, their `A`-marginals averaged with its weights and spread over the table
/// ([`measurement_marginal`], [`lifted`]).
pub fn residual_parts(
    attrs: &[usize],
    sizes: &[u32],
    variance: f64,
    model: &[MeasuredMarginal],
) -> Vec<(f64, Option<Vec<f64>>)> {
    residual_weights(attrs, sizes, variance, model)
        .into_iter()
        .enumerate()
        .map(|(mask, (c, sources))| {
            let z = (!sources.is_empty()).then(|| {
                let a: Vec<usize> = (0..attrs.len())
                    .filter(|i| mask & (1 << i) != 0)
                    .map(|i| attrs[i])
                    .collect();
                let mut z: Vec<f64> = Vec::new();
                for (k, w) in sources {
                    let part = measurement_marginal(&model[k], &a, sizes);
                    z.resize(part.len(), 0.0);
                    for (x, p) in z.iter_mut().zip(part) {
                        *x += w * p;
                    }
                }
                lifted(&z, attrs, mask, sizes)
            });
            (c, z)
        })
        .collect()
}

/// The table's measurement `mean` (counts, noise variance `variance` per cell, dimensions
/// `dims`) with each residual component `P_A ȳ` combined with another estimate's,
/// `c_A·P_A ȳ + (1 − c_A)·P_A z_A` (`parts[A] = (c_A, Some(z_A))`, `z_A` a table whose
/// `A`-residual estimates the same; `(c_A, None)` keeps the measurement's), and the result's
/// noise variance per cell, `variance·Σ_A c_A·rank(P_A)/k` — each combined component's
/// variance is `c_A` times the measurement's when `c_A` is the inverse-variance weight (module
/// docs). Every part `(1, None)` returns `mean` and `variance`.
pub fn residual_combination(
    mean: &[f64],
    variance: f64,
    dims: &[usize],
    parts: &[(f64, Option<Vec<f64>>)],
) -> (Vec<f64>, f64) {
    let mut out = mean.to_vec();
    let mut energy = 0.0;
    for (mask, (c, other)) in parts.iter().enumerate() {
        let rank: f64 = (0..dims.len())
            .filter(|i| mask & (1 << i) != 0)
            .map(|i| (dims[i] - 1) as f64)
            .product();
        match other {
            Some(z) => {
                energy += c * rank;
                let d: Vec<f64> = mean.iter().zip(z).map(|(y, z)| y - z).collect();
                for (o, q) in out.iter_mut().zip(residual_component(&d, dims, mask)) {
                    *o -= (1.0 - c) * q;
                }
            }
            None => energy += rank,
        }
    }
    (out, variance * energy / mean.len().max(1) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// The mean squared errors, over `draws` draws of `y = truth + noise`, of `estimate(y)`
    /// and of `y` itself.
    fn mean_risks(
        truth: &[f64],
        noise: &dp_core::DiscreteGaussian,
        rng: &mut rand_chacha::ChaCha20Rng,
        draws: usize,
        estimate: impl Fn(&[f64]) -> Vec<f64>,
    ) -> (f64, f64) {
        let sq = |x: &[f64]| -> f64 { x.iter().zip(truth).map(|(a, b)| (a - b).powi(2)).sum() };
        let (mut risk, mut risk_y) = (0.0, 0.0);
        for _ in 0..draws {
            let y: Vec<f64> = truth.iter().map(|t| t + noise.sample(rng) as f64).collect();
            risk += sq(&estimate(&y));
            risk_y += sq(&y);
        }
        (risk / draws as f64, risk_y / draws as f64)
    }

    #[test]
    fn shrinkage_by_hand() {
        // k = 4, ‖ȳ − μ‖² = 4·1 = 4, v = 1: factor 1 − 2·1/4 = 1/2
        let x = shrink_toward(&[0.0; 4], &[1.0, -1.0, 1.0, -1.0], 1.0);
        assert_eq!(x, vec![0.5, -0.5, 0.5, -0.5]);
        // the noise explains the whole distance: the target
        assert_eq!(
            shrink_toward(&[1.0; 4], &[1.5, 0.5, 1.5, 0.5], 1.0),
            vec![1.0; 4]
        );
        // no noise: the mean; equal: the target; two cells: the mean
        assert_eq!(
            shrink_toward(&[0.0; 3], &[3.0, 2.0, 1.0], 0.0),
            vec![3.0, 2.0, 1.0]
        );
        assert_eq!(shrink_toward(&[2.0; 3], &[2.0; 3], 5.0), vec![2.0; 3]);
        assert_eq!(shrink_toward(&[0.0; 2], &[3.0, 2.0], 9.0), vec![3.0, 2.0]);
    }

    /// The James–Stein dominance the release relies on, with the release's own noise (the
    /// exact discrete Gaussian, `v = σ²`): the shrunk estimate's mean squared error is below
    /// the measurement's `k·v`, for a target off the truth and for one at it. 4 000 draws of
    /// k = 20 cells; the estimated risks' standard errors are below 1 % of `k·v` (the sum of
    /// 20 squared noises has relative sd √(2/20) ≈ 0.32, over 4 000 draws 0.5 %), the margins
    /// tested are 4 % (off by 3 per cell: the risk is about 0.75·k·v) and 60 % (at the truth: about
    /// 2v/(k·v) = 10 % of k·v): a false failure needs a > 4-sigma deviation (< 1e-4).
    #[test]
    fn shrinkage_never_costs_more_than_the_measurement_in_expectation() {
        let k = 20;
        let v = 4.0;
        let noise = dp_core::DiscreteGaussian::new(v).unwrap();
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(11);
        let truth: Vec<f64> = (0..k).map(|i| 100.0 + 7.0 * i as f64).collect();
        for (offset, bound) in [(3.0, 0.96), (0.0, 0.4)] {
            let target: Vec<f64> = truth.iter().map(|t| t + offset).collect();
            let (risk_js, risk_y) = mean_risks(&truth, &noise, &mut rng, 4000, |y| {
                shrink_toward(&target, y, v)
            });
            assert!(
                risk_js < bound * k as f64 * v,
                "offset {offset}: {risk_js} vs {risk_y}"
            );
        }
    }

    #[test]
    fn strata_by_hand() {
        // σ = 1: below 1, then the bands [1, 4), [4, 16), [16, 64) …
        assert_eq!(stratum(0.5, 1.0), 0);
        assert_eq!(stratum(1.0, 1.0), 1);
        assert_eq!(stratum(3.99, 1.0), 1);
        assert_eq!(stratum(4.0, 1.0), 2);
        assert_eq!(stratum(16.0, 1.0), 3);
        assert_eq!(stratum(100.0, 1.0), 4);
        assert_eq!(stratum(8.0, 2.0), 2);
        // no noise, or no number: one stratum
        assert_eq!(stratum(100.0, 0.0), 0);
        assert_eq!(stratum(f64::NAN, 1.0), 0);
        // ten empty-model cells (stratum 0, a group of its own): ‖ȳ − μ‖² = 10, v = 1,
        // factor 1 − 8/10; two cells at 20 (stratum 3) are too few and join the ten at 100
        // (stratum 4): residuals 5, −9 and ±10, ‖·‖² = 106 + 1000, factor 1 − 10/1106
        let mut target = vec![0.0; 10];
        target.extend([20.0, 20.0]);
        target.extend([100.0; 10]);
        let mut mean: Vec<f64> = (0..10)
            .map(|i| if i % 2 == 0 { 1.0 } else { -1.0 })
            .collect();
        mean.extend([25.0, 11.0]);
        mean.extend((0..10).map(|i| if i % 2 == 0 { 110.0 } else { 90.0 }));
        let x = shrink_toward_by_strata(&target, &mean, 1.0);
        let (f0, f1) = (1.0 - 8.0 / 10.0, 1.0 - 10.0 / 1106.0);
        for i in 0..10 {
            assert!((x[i] - f0 * mean[i]).abs() < 1e-12, "{x:?}");
        }
        for i in 10..22 {
            let want = target[i] + f1 * (mean[i] - target[i]);
            assert!((x[i] - want).abs() < 1e-12, "{x:?}");
        }
        // a small table is one stratum: one factor, as without strata; and a last group of
        // fewer than ten cells joins its predecessor
        let (t4, m4) = ([0.0, 2.0, 50.0, 300.0], [1.0, 5.0, 40.0, 310.0]);
        assert_eq!(
            shrink_toward_by_strata(&t4, &m4, 1.0),
            shrink_toward(&t4, &m4, 1.0)
        );
        let mut t13 = vec![0.0; 10];
        t13.extend([100.0; 3]);
        let m13: Vec<f64> = (0..13)
            .map(|i| t13[i] + if i % 2 == 0 { 2.0 } else { -1.0 })
            .collect();
        assert_eq!(
            shrink_toward_by_strata(&t13, &m13, 1.0),
            shrink_toward(&t13, &m13, 1.0)
        );
    }

    /// The risk the stratified release rests on, with the release's own noise (the exact
    /// discrete Gaussian, `v = σ² = 4`), on a sparse table of `k = 200` cells: 190 empty cells
    /// the model puts at 0 and 10 cells of 500 records the model puts at 400. One factor for the
    /// whole table barely shrinks (the 10 far-off cells dominate `‖ȳ − μ‖²`), so its risk is
    /// about `k·v = 800`; within strata the empty cells are shrunk almost to 0 (risk about
    /// `2v`) and the full ones kept (about `10·v`), so the risk is about 48. Tested: below
    /// 160 (a fifth of `k·v`) and below half the single factor's. And where the strata mislead
    /// (the model puts 400 on 10 cells that are empty and 0 on ten cells of 500) the risk
    /// stays at `k·v` — the James–Stein guarantee per stratum (both strata are far off, so
    /// nothing is shrunk and the risk is `k·v` less a negligible amount): tested below
    /// `1.02·k·v`; its estimate over 500 draws has a standard error of about 0.45 % of `k·v`
    /// (the sum of 200 squared noises has relative sd √(2/200) = 0.1), so 1.02 is more than
    /// 4 standard errors above, a false failure below 1e-4; the other two margins are far
    /// wider.
    #[test]
    fn strata_shrink_the_empty_cells_and_keep_the_full_ones() {
        let v = 4.0;
        let noise = dp_core::DiscreteGaussian::new(v).unwrap();
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(12);
        let mut truth = vec![0.0; 200];
        let mut target = vec![0.0; 200];
        for i in 0..10 {
            truth[i] = 500.0;
            target[i] = 400.0;
        }
        let mut misleading = vec![0.0; 200];
        misleading[10..20].fill(400.0);
        let draws = 500;
        let (mut strata, mut whole, mut mislead) = (0.0, 0.0, 0.0);
        let loss = |x: &[f64]| -> f64 { x.iter().zip(&truth).map(|(a, b)| (a - b).powi(2)).sum() };
        for _ in 0..draws {
            let y: Vec<f64> = truth
                .iter()
                .map(|t| t + noise.sample(&mut rng) as f64)
                .collect();
            strata += loss(&shrink_toward_by_strata(&target, &y, v));
            whole += loss(&shrink_toward(&target, &y, v));
            mislead += loss(&shrink_toward_by_strata(&misleading, &y, v));
        }
        let kv = 200.0 * v;
        let (strata, whole, mislead) = (
            strata / draws as f64,
            whole / draws as f64,
            mislead / draws as f64,
        );
        assert!(strata < 0.2 * kv, "{strata} (k·v = {kv})");
        assert!(
            strata < 0.5 * whole,
            "{strata} against one factor's {whole}"
        );
        assert!(mislead < 1.02 * kv, "{mislead} (k·v = {kv})");
    }

    #[test]
    fn the_estimate_is_a_distribution_between_model_and_measurements() {
        let mut b = BesideTable::default();
        b.add(&[60, 20, 20, 0], 1e-6);
        let e = b.estimate(&[0.25; 4], 100.0);
        // tiny noise: the measurement, normalised
        for (a, w) in e.iter().zip([0.6, 0.2, 0.2, 0.0]) {
            assert!((a - w).abs() < 1e-6, "{e:?}");
        }
        let mut b = BesideTable::default();
        b.add(&[30, 20, 30, 20], 1e4);
        b.add(&[20, 30, 20, 30], 1e4);
        // huge noise: the model
        let e = b.estimate(&[0.1, 0.2, 0.3, 0.4], 100.0);
        for (a, w) in e.iter().zip([0.1, 0.2, 0.3, 0.4]) {
            assert!((a - w).abs() < 1e-9, "{e:?}");
        }
        assert!((e.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }

    /// A table's measurements beside the model join its evidence for the release's correction
    /// as one measurement: by hand, (10, 20) at variance 4 and (16, 8) at variance 2 are
    /// (10/4 + 16/2, 20/4 + 8/2)/(1/4 + 1/2) = (14, 12) at variance 4/3; no measurement adds
    /// nothing.
    #[test]
    fn measurements_beside_join_the_evidence_as_their_combination() {
        let mut b = BesideTable::default();
        b.add(&[10, 20], 4.0);
        b.add(&[16, 8], 2.0);
        let mut e = super::super::check::CellEvidence::new(2);
        b.add_to(&mut e);
        let (y, sd) = e.combined();
        for (a, w) in y.iter().zip([14.0, 12.0]) {
            assert!((a - w).abs() < 1e-12, "{y:?}");
        }
        for s in sd {
            assert!((s - (4.0f64 / 3.0).sqrt()).abs() < 1e-12);
        }
        let mut e = super::super::check::CellEvidence::new(2);
        BesideTable::default().add_to(&mut e);
        assert!(e.is_empty());
    }

    /// The explicit projection matrix `⊗_i (I − J/n_i or J/n_i)` (row-major, axis 0 slowest).
    fn kronecker_projection(dims: &[usize], mask: usize) -> Vec<Vec<f64>> {
        let mut m = vec![vec![1.0]];
        for (axis, &n) in dims.iter().enumerate() {
            let centre = mask & (1 << axis) != 0;
            let f = |i: usize, j: usize| {
                f64::from(u8::from(centre && i == j)) + if centre { -1.0 } else { 1.0 } / n as f64
            };
            let rows = m.len();
            let mut next = vec![vec![0.0; rows * n]; rows * n];
            for (a, row) in m.iter().enumerate() {
                for (b, &x) in row.iter().enumerate() {
                    for i in 0..n {
                        for j in 0..n {
                            next[a * n + i][b * n + j] = x * f(i, j);
                        }
                    }
                }
            }
            m = next;
        }
        m
    }

    /// `residual_component` against the explicit Kronecker product on a 2 × 3 × 4 table, and
    /// the properties the combination rests on: the eight projections sum to the identity,
    /// are idempotent and mutually orthogonal, and `P_A` has rank (trace) `∏_{i∈A}(n_i − 1)`.
    #[test]
    fn residual_components_are_the_kronecker_projections() {
        let dims = [2usize, 3, 4];
        let k = 24;
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(5);
        let d: Vec<f64> = (0..k)
            .map(|_| rand::RngExt::random_range(&mut rng, -9.0..9.0))
            .collect();
        let mut sum = vec![0.0; k];
        for mask in 0..8usize {
            let p = kronecker_projection(&dims, mask);
            let want: Vec<f64> = p
                .iter()
                .map(|r| r.iter().zip(&d).map(|(a, b)| a * b).sum())
                .collect();
            let got = residual_component(&d, &dims, mask);
            for (g, w) in got.iter().zip(&want) {
                assert!((g - w).abs() < 1e-9, "mask {mask}: {g} vs {w}");
            }
            let trace: f64 = (0..k).map(|i| p[i][i]).sum();
            let rank: usize = (0..3)
                .filter(|i| mask & (1 << i) != 0)
                .map(|i| dims[i] - 1)
                .product();
            assert!(
                (trace - rank as f64).abs() < 1e-9,
                "mask {mask}: trace {trace}"
            );
            let twice = residual_component(&got, &dims, mask);
            assert!(twice.iter().zip(&got).all(|(a, b)| (a - b).abs() < 1e-9));
            for other in (0..8usize).filter(|&o| o != mask) {
                let cross = residual_component(&got, &dims, other);
                assert!(cross.iter().all(|c| c.abs() < 1e-9), "{mask} then {other}");
            }
            for (s, g) in sum.iter_mut().zip(&got) {
                *s += g;
            }
        }
        assert!(sum.iter().zip(&d).all(|(a, b)| (a - b).abs() < 1e-9));
    }

    /// The weights by hand, on both sides of the model's precision: a table on attributes
    /// [0, 1] (2 × 3 values) of variance 4; the model measured attribute 0 at σ² = 1,
    /// attribute 1 at σ² = 100, and the table itself only coarsened (which does not count).
    #[test]
    fn residual_weights_by_hand() {
        let sizes = [2u32, 3, 5];
        let coarse = dp_queries::CellGroups::new(vec![vec![0, 0], vec![0, 1, 1]]).unwrap();
        let mut model = vec![
            MeasuredMarginal::from_counts(vec![0], &[0, 0], 1.0),
            MeasuredMarginal::from_counts(vec![1], &[0, 0, 0], 100.0),
            MeasuredMarginal {
                groups: Some(coarse),
                ..MeasuredMarginal::from_counts(vec![0, 1], &[0; 4], 1e-3)
            },
        ];
        let c = residual_weights(&[0, 1], &sizes, 4.0, &model);
        // ∅: v_y = 4·6 = 24; attribute 0's table gives the total at v = 1·2, attribute 1's at
        // 100·3 = 300, 0.66 % of the precision (below the 1 % share: left out), so v_m = 2;
        // {0}: v_y = 4·3 = 12, v_m = 1 (far more precise: weight below ½); {1}: v_y = 4·2 = 8,
        // v_m = 100 (less precise: above ½); {0, 1}: the table's own
        let want = [
            (2.0 / 26.0, vec![(0, 1.0)]),
            (1.0 / 13.0, vec![(0, 1.0)]),
            (100.0 / 108.0, vec![(1, 1.0)]),
            (1.0, vec![]),
        ];
        for (g, w) in c.iter().zip(&want) {
            assert!((g.0 - w.0).abs() < 1e-12 && g.1 == w.1, "{c:?}");
        }
        // a second measurement of attribute 0 at σ² = 1: the two averaged, v_m = ½
        model.push(MeasuredMarginal::from_counts(vec![0], &[0, 0], 1.0));
        let c = residual_weights(&[0, 1], &sizes, 4.0, &model);
        assert!((c[1].0 - 0.5 / 12.5).abs() < 1e-12);
        assert_eq!(c[1].1, vec![(0, 0.5), (3, 0.5)]);
        // no full-resolution measurement covering attribute 1: its residual is the table's
        let c = residual_weights(&[0, 1], &sizes, 4.0, &[model[0].clone(), model[2].clone()]);
        assert_eq!(c[2], (1.0, vec![]));
        assert!(c[1].0 < 0.5);
    }

    /// A measurement's marginal lifted onto a table: attribute 1 of a [1, 2] measurement
    /// (3 × 5 values) spread over a [0, 1] table (2 × 3), by hand; and a marginal on two of
    /// three attributes against the sum by coordinates.
    #[test]
    fn measurement_marginals_and_lifts_by_hand() {
        let sizes = [2u32, 3, 5];
        let m = MeasuredMarginal {
            values: (0..15).map(f64::from).collect(),
            ..MeasuredMarginal::from_counts(vec![1, 2], &[0; 15], 1.0)
        };
        // attribute 1's marginal: rows of five, 0+…+4 = 10, 35, 60; spread over attribute 0's
        // two values
        let one = measurement_marginal(&m, &[1], &sizes);
        assert_eq!(one, vec![10.0, 35.0, 60.0]);
        assert_eq!(
            lifted(&one, &[0, 1], 0b10, &sizes),
            vec![5.0, 17.5, 30.0, 5.0, 17.5, 30.0]
        );
        // the empty set: the total, 105, over six cells
        let total = measurement_marginal(&m, &[], &sizes);
        assert_eq!(lifted(&total, &[0, 1], 0, &sizes), vec![17.5; 6]);
        // a [0, 1, 2] measurement (value = its cell index) onto [0, 2]: Σ over attribute 1
        let m = MeasuredMarginal {
            values: (0..30).map(f64::from).collect(),
            ..MeasuredMarginal::from_counts(vec![0, 1, 2], &[0; 30], 1.0)
        };
        let got = measurement_marginal(&m, &[0, 2], &sizes);
        let want: Vec<f64> = (0..2)
            .flat_map(|i| (0..5).map(move |k| (0..3).map(|j| (15 * i + 5 * j + k) as f64).sum()))
            .collect();
        assert_eq!(got, want);
        // lifted onto [0, 1, 2] along attribute 1: each value a third of the sum, per cell
        let up = lifted(&got, &[0, 1, 2], 0b101, &sizes);
        for (cell, u) in up.iter().enumerate() {
            let (i, k) = (cell / 15, cell % 5);
            assert!((u - want[i * 5 + k] / 3.0).abs() < 1e-12);
        }
    }

    /// The combination keeps the measurement with every part `(1, None)`; with the lower
    /// orders taken wholly from another table `z` (weights 0), its every 1-way marginal (and
    /// total) is `z`'s and its top interaction is the measurement's, of per-cell variance
    /// `v·rank/k`.
    #[test]
    fn residual_combination_takes_the_lower_orders_by_weight() {
        let dims = [2usize, 3];
        let z = vec![10.0, 20.0, 30.0, 40.0, 50.0, 60.0];
        let mean = [13.0, 17.0, 35.0, 38.0, 52.0, 66.0];
        let (same, v) = residual_combination(&mean, 4.0, &dims, &vec![(1.0, None); 4]);
        assert_eq!((same.as_slice(), v), (mean.as_slice(), 4.0));
        let parts = vec![
            (0.0, Some(z.clone())),
            (0.0, Some(z.clone())),
            (0.0, Some(z.clone())),
            (1.0, None),
        ];
        let (y, v) = residual_combination(&mean, 4.0, &dims, &parts);
        assert!((v - 4.0 * 2.0 / 6.0).abs() < 1e-12);
        for r in 0..2 {
            let a: f64 = (0..3).map(|j| y[r * 3 + j] - z[r * 3 + j]).sum();
            assert!(a.abs() < 1e-9, "row {r}");
        }
        for j in 0..3 {
            assert!(
                (y[j] + y[3 + j] - z[j] - z[3 + j]).abs() < 1e-9,
                "column {j}"
            );
        }
        let top = residual_component(&mean, &dims, 3);
        let top_y = residual_component(&y, &dims, 3);
        assert!(top.iter().zip(&top_y).all(|(a, b)| (a - b).abs() < 1e-9));
        // half weights: each lower component halfway, the variance (2 + 3·½·…) by its ranks
        let half = vec![
            (0.5, Some(z.clone())),
            (0.5, Some(z.clone())),
            (0.5, Some(z.clone())),
            (1.0, None),
        ];
        let (_, v) = residual_combination(&mean, 4.0, &dims, &half);
        // ranks: ∅ 1, {0} 1, {1} 2, {0,1} 2
        assert!((v - 4.0 * (0.5 * (1.0 + 1.0 + 2.0) + 2.0) / 6.0).abs() < 1e-12);
    }

    /// Where another estimate knows the lower orders exactly, the combination's risk is the
    /// top interaction's share of the measurement's: on a 2 × 2 table (rank 1 of 4),
    /// `E‖ŷ − x‖² = v·1` against `v·4` for the measurement. 4 000 draws at v = 4: the mean of
    /// `v·χ²₁` has standard deviation `v·√2/√4000 ≈ 0.022v`, that of `v·χ²₄` `0.045v`, so the
    /// bounds 1.2v and 3.5v sit 9 and 11 standard deviations out (false failure far below
    /// 10⁻⁹); a wrong projection or weight lands at 2v or more.
    #[test]
    fn residual_combination_lowers_the_risk_where_the_lower_orders_are_known() {
        let dims = [2usize, 2];
        let v = 4.0;
        let truth = [120.0, 80.0, 60.0, 140.0];
        // right in every lower order, off by 15 in the interaction (+, −, −, +)
        let z: Vec<f64> = truth
            .iter()
            .zip([1.0, -1.0, -1.0, 1.0])
            .map(|(t, s)| t + 15.0 * s)
            .collect();
        let parts = vec![
            (0.0, Some(z.clone())),
            (0.0, Some(z.clone())),
            (0.0, Some(z)),
            (1.0, None),
        ];
        let noise = dp_core::DiscreteGaussian::new(v).unwrap();
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(23);
        let (risk, risk_y) = mean_risks(&truth, &noise, &mut rng, 4000, |y| {
            residual_combination(y, v, &dims, &parts).0
        });
        assert!(risk < 1.2 * v, "{risk}");
        assert!(risk_y > 3.5 * v, "{risk_y}");
    }
}
