//! Multiplicative weights over an explicit universe for marginal-cell queries: the
//! database-update algorithm of the Iterative Construction and of MWEM (seed 001; Hardt and
//! Rothblum 2010; Hardt, Ligett and McSherry 2012).
//!
//! The distribution is kept in log space with a cached unnormalised copy and its total, and a cell query's support (the
//! universe elements in the cell) is enumerated once, so an update of one query costs
//! `O(|X| / #cells of its table)`, not `O(|X|)`.

use dp_queries::{MarginalPoints, MarginalWorkload, Parallelism, Universe};

use crate::{MechanismError, Result};

/// A distribution over a universe, kept in **log space** (issue #9 item 8).
///
/// The truth is the vector of log-weights `ℓ_x` (the distribution is `p_x ∝ e^{ℓ_x}`); a
/// cache `w_x = e^{ℓ_x − shift}` with `shift` the largest log-weight at the last refresh,
/// and its total, make a cell update cost `O(|support|)`. The cache is refreshed
/// (`shift = max ℓ`, `O(|X|)`) whenever an update would push a cached weight above `e^{600}`,
/// the total leaves `[1e-200, 1e200]`, or an update removes more than half the total (the
/// incremental total would lose precision to cancellation). Multiplicative factors as large
/// as MWEM's huge-noise updates at tiny `n·ε` (`e^{±10⁴}` and more) therefore never
/// overflow to ∞ or collapse every weight to 0: every weight and answer stays finite.
/// Weights more than `e^{−745}` below the largest are 0 in the cache (and so in the
/// released probabilities) but keep their exact log-weight, so later updates can revive
/// them.
#[derive(Clone, Debug)]
pub struct UniverseDistribution {
    log_w: Vec<f64>,
    w: Vec<f64>,
    shift: f64,
    total: f64,
}

/// Largest cached exponent `ℓ_x − shift` allowed before a refresh.
const MAX_CACHED_EXP: f64 = 600.0;

impl UniverseDistribution {
    /// The uniform distribution over `len >= 1` elements.
    pub fn uniform(len: usize) -> Result<Self> {
        if len == 0 {
            return Err(MechanismError::Data {
                reason: "empty universe".into(),
            });
        }
        Ok(UniverseDistribution {
            log_w: vec![0.0; len],
            w: vec![1.0; len],
            shift: 0.0,
            total: len as f64,
        })
    }

    /// A distribution proportional to non-negative finite `weights` with a positive sum.
    pub fn from_weights(weights: Vec<f64>) -> Result<Self> {
        let total: f64 = weights.iter().sum();
        if weights.iter().any(|w| !(w.is_finite() && *w >= 0.0))
            || !total.is_finite()
            || total <= 0.0
        {
            return Err(MechanismError::Numerical {
                what: "distribution weights must be finite, non-negative, with a positive sum"
                    .into(),
            });
        }
        let log_w = weights.iter().map(|w| w.ln()).collect();
        let mut d = UniverseDistribution {
            log_w,
            w: weights,
            shift: 0.0,
            total,
        };
        d.refresh();
        Ok(d)
    }

    /// Recompute the cache from the log-weights: `shift = max ℓ`, `w = e^{ℓ − shift}`.
    fn refresh(&mut self) {
        let max = self.log_w.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        // at least one log-weight is finite (uniform start, finite updates)
        self.shift = if max.is_finite() { max } else { 0.0 };
        let shift = self.shift;
        for (w, l) in self.w.iter_mut().zip(&self.log_w) {
            *w = (l - shift).exp();
        }
        self.total = self.w.iter().sum();
    }

    /// The normalised probabilities (finite, non-negative, summing to one up to rounding).
    pub fn probabilities(&self) -> Vec<f64> {
        let z = self.w.iter().sum::<f64>();
        self.w.iter().map(|x| x / z).collect()
    }

    /// Probability of a set of elements.
    pub fn mass(&self, support: &[usize]) -> f64 {
        support.iter().map(|&x| self.w[x]).sum::<f64>() / self.total
    }

    /// Multiply the weight of every element of `support` by `exp(log_factor)` (a non-finite
    /// factor is ignored: it cannot come from finite measurements, and applying it would
    /// destroy the state).
    pub fn multiply(&mut self, support: &[usize], log_factor: f64) {
        if !log_factor.is_finite() {
            return;
        }
        let mut max_exp = f64::NEG_INFINITY;
        for &x in support {
            self.log_w[x] += log_factor;
            max_exp = max_exp.max(self.log_w[x] - self.shift);
        }
        if max_exp > MAX_CACHED_EXP {
            self.refresh();
            return;
        }
        let mut added = 0.0;
        for &x in support {
            let new = (self.log_w[x] - self.shift).exp();
            added += new - self.w[x];
            self.w[x] = new;
        }
        let old = self.total;
        self.total += added;
        if added < -0.5 * old || !(self.total > 1e-200 && self.total < 1e200) {
            self.refresh();
        }
    }

    /// Rescale the cache relative to the largest weight and recompute the total exactly.
    pub fn renormalize(&mut self) {
        self.refresh();
    }
}

/// The universe elements inside each queried cell, computed on first use.
#[derive(Debug)]
pub struct CellSupports<'a> {
    universe: &'a Universe,
    workload: &'a MarginalWorkload,
    /// Stride of each attribute in the universe's mixed radix.
    strides: Vec<usize>,
    cache: std::collections::HashMap<usize, Vec<usize>>,
}

impl<'a> CellSupports<'a> {
    /// Supports for `workload`'s queries over `universe` (same domain).
    pub fn new(universe: &'a Universe, workload: &'a MarginalWorkload) -> Result<Self> {
        if universe.domain() != workload.domain() {
            return Err(MechanismError::Data {
                reason: "the universe's domain is not the workload's".into(),
            });
        }
        let sizes = universe.domain().sizes();
        let mut strides = vec![1usize; sizes.len()];
        for a in (0..sizes.len().saturating_sub(1)).rev() {
            strides[a] = strides[a + 1] * sizes[a + 1] as usize;
        }
        Ok(CellSupports {
            universe,
            workload,
            strides,
            cache: Default::default(),
        })
    }

    /// The universe elements in query `q` (workload order).
    pub fn support(&mut self, q: usize) -> &[usize] {
        let (universe, workload, strides) = (self.universe, self.workload, &self.strides);
        self.cache.entry(q).or_insert_with(|| {
            let (j, cell) = workload.query_location(q);
            let m = &workload.marginals()[j];
            let codes = m.cell_codes(cell);
            let sizes = universe.domain().sizes();
            (0..universe.len())
                .filter(|&x| {
                    m.attrs()
                        .iter()
                        .zip(&codes)
                        .all(|(&a, &c)| ((x / strides[a]) % sizes[a] as usize) as u32 == c)
                })
                .collect()
        })
    }
}

/// Workload answers of a distribution (normalised weights) over the universe.
pub fn answers_of(
    universe: &Universe,
    workload: &MarginalWorkload,
    dist: &UniverseDistribution,
) -> Result<Vec<f64>> {
    let points = MarginalPoints::new(universe, workload)?;
    Ok(points.answers_of_weights(&dist.probabilities(), Parallelism::Rayon)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Factors far beyond f64's range (e^{±10⁵}) keep every probability finite, and the
    /// log-weights stay exact: raise {0, 1} by 10⁵ (they carry all the mass, ½ each), then
    /// lower {0} by ln 3 (1/3 of element 1's weight: 1/4 vs 3/4), then raise {2} by 10⁵
    /// (element 2 revived from relative weight e^{−10⁵}, cached as 0, to element 1's weight:
    /// (1/3 : 1 : 1)/(7/3); elements 3, 4 ≈ 0).
    #[test]
    fn huge_factors_stay_finite_and_exact() {
        let mut d = UniverseDistribution::uniform(5).unwrap();
        d.multiply(&[0, 1], 1e5);
        let p = d.probabilities();
        assert!((p[0] - 0.5).abs() < 1e-12 && (p[1] - 0.5).abs() < 1e-12 && p[2] == 0.0);
        d.multiply(&[0], -3f64.ln());
        let p = d.probabilities();
        assert!(
            (p[0] - 0.25).abs() < 1e-12 && (p[1] - 0.75).abs() < 1e-12,
            "{p:?}"
        );
        assert!((d.mass(&[1]) - 0.75).abs() < 1e-12);
        d.multiply(&[2], 1e5);
        d.renormalize();
        let p = d.probabilities();
        let want = [1.0 / 7.0, 3.0 / 7.0, 3.0 / 7.0, 0.0, 0.0];
        for (a, b) in p.iter().zip(want) {
            assert!(a.is_finite() && (a - b).abs() < 1e-9, "{p:?}");
        }
        // a non-finite factor is ignored
        d.multiply(&[3], f64::NAN);
        assert!(d.probabilities().iter().all(|x| x.is_finite()));
    }
}
