//! Multiplicative weights over an explicit universe for marginal-cell queries: the
//! database-update algorithm of the Iterative Construction and of MWEM (seed 001; Hardt and
//! Rothblum 2010; Hardt, Ligett and McSherry 2012).
//!
//! The distribution is kept unnormalised with its total, and a cell query's support (the
//! universe elements in the cell) is enumerated once, so an update of one query costs
//! `O(|X| / #cells of its table)`, not `O(|X|)`.

use dp_queries::{MarginalPoints, MarginalWorkload, Parallelism, Universe};

use crate::{MechanismError, Result};

/// A distribution over a universe, with lazily computed supports of workload queries.
#[derive(Clone, Debug)]
pub struct UniverseDistribution {
    w: Vec<f64>,
    total: f64,
}

impl UniverseDistribution {
    /// The uniform distribution over `len >= 1` elements.
    pub fn uniform(len: usize) -> Result<Self> {
        if len == 0 {
            return Err(MechanismError::Data {
                reason: "empty universe".into(),
            });
        }
        Ok(UniverseDistribution {
            w: vec![1.0; len],
            total: len as f64,
        })
    }

    /// A distribution proportional to non-negative finite `weights` with a positive sum.
    pub fn from_weights(weights: Vec<f64>) -> Result<Self> {
        let total: f64 = weights.iter().sum();
        if weights.iter().any(|w| !(w.is_finite() && *w >= 0.0)) || total.is_nan() || total <= 0.0 {
            return Err(MechanismError::Numerical {
                what: "distribution weights must be finite, non-negative, with a positive sum"
                    .into(),
            });
        }
        Ok(UniverseDistribution { w: weights, total })
    }

    /// The normalised probabilities.
    pub fn probabilities(&self) -> Vec<f64> {
        let z = self.w.iter().sum::<f64>();
        self.w.iter().map(|x| x / z).collect()
    }

    /// Probability of a set of elements.
    pub fn mass(&self, support: &[usize]) -> f64 {
        support.iter().map(|&x| self.w[x]).sum::<f64>() / self.total
    }

    /// Multiply the weight of every element of `support` by `exp(log_factor)`.
    pub fn multiply(&mut self, support: &[usize], log_factor: f64) {
        let f = log_factor.exp();
        let mut added = 0.0;
        for &x in support {
            added += self.w[x] * (f - 1.0);
            self.w[x] *= f;
        }
        self.total += added;
        if !(self.total > 1e-200 && self.total < 1e200) {
            self.renormalize();
        }
    }

    /// Rescale to total one (recomputing the total exactly).
    pub fn renormalize(&mut self) {
        let z: f64 = self.w.iter().sum();
        for x in &mut self.w {
            *x /= z;
        }
        self.total = 1.0;
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
