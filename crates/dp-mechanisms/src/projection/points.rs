//! Point sets built from a universe's answer vectors: subsets (the hull of a cover, seed 004
//! §4.1) and increments `q(z) − q(π(z))` (the sets `𝒳^(j)` of seed 004 Lemma 4.2), with a
//! batch kernel that scores the whole universe once with [`MarginalPoints::inner_all`]
//! (`O(|X|·#tables)`) and gathers.

use dp_geometry::{Parallelism, PointSet};
use dp_queries::MarginalPoints;

/// Points `q(plus_k) − q(minus_k)` (a missing index stands for the zero vector), for
/// universe indices `plus_k`, `minus_k`.
#[derive(Clone, Debug)]
pub struct GatheredPoints<'a> {
    base: &'a MarginalPoints<'a>,
    plus: Vec<Option<usize>>,
    minus: Vec<Option<usize>>,
}

impl<'a> GatheredPoints<'a> {
    /// Points `q(plus_k) − q(minus_k)`; indices must be `< base.len()` (checked).
    pub fn new(
        base: &'a MarginalPoints<'a>,
        plus: Vec<Option<usize>>,
        minus: Vec<Option<usize>>,
    ) -> crate::Result<Self> {
        let n = base.len();
        if plus.len() != minus.len() || plus.iter().chain(&minus).flatten().any(|&i| i >= n) {
            return Err(crate::MechanismError::InvalidParameter {
                name: "points",
                value: format!("{} plus / {} minus indices", plus.len(), minus.len()),
                reason: format!("lengths must agree and indices be below {n}"),
            });
        }
        Ok(GatheredPoints { base, plus, minus })
    }

    /// The subset `{q(x) : x ∈ indices}`.
    pub fn subset(base: &'a MarginalPoints<'a>, indices: &[usize]) -> crate::Result<Self> {
        Self::new(
            base,
            indices.iter().map(|&i| Some(i)).collect(),
            vec![None; indices.len()],
        )
    }
}

impl PointSet for GatheredPoints<'_> {
    fn len(&self) -> usize {
        self.plus.len()
    }
    fn dim(&self) -> usize {
        self.base.dim()
    }
    fn inner(&self, i: usize, c: &[f64]) -> f64 {
        self.plus[i].map_or(0.0, |p| self.base.inner(p, c))
            - self.minus[i].map_or(0.0, |m| self.base.inner(m, c))
    }
    fn add_scaled(&self, i: usize, scale: f64, out: &mut [f64]) {
        if let Some(p) = self.plus[i] {
            self.base.add_scaled(p, scale, out);
        }
        if let Some(m) = self.minus[i] {
            self.base.add_scaled(m, -scale, out);
        }
    }
    fn inner_all(&self, c: &[f64], out: &mut [f64], par: Parallelism) {
        let mut all = vec![0.0; self.base.len()];
        self.base.inner_all(c, &mut all, par);
        for ((o, p), m) in out.iter_mut().zip(&self.plus).zip(&self.minus) {
            *o = p.map_or(0.0, |p| all[p]) - m.map_or(0.0, |m| all[m]);
        }
    }
}
