//! Separated sets and covers of finite point sets (seed 004 §2.4, Lemma 2.7): a maximal
//! `t`-separated subset is a `t`-cover, so `N(S, t) ≤ P(S, t)`.

use rayon::prelude::*;

use crate::error::{GeometryError, Result, check_dim};
use crate::parallel::{PAR_CHUNK, Parallelism};
use crate::points::PointSet;

/// The two metrics of seed 004 §2.4.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Metric {
    /// `d(x, y) = ‖x − y‖₂ / √dim`, the metric of the average error `err²`.
    ScaledL2,
    /// `d(x, y) = ‖x − y‖_∞`, the metric of the worst-case error `err^∞`.
    LInf,
}

impl Metric {
    /// `d(a, b)` (over the common prefix if the lengths differ; callers pass equal lengths).
    pub fn distance(self, a: &[f64], b: &[f64]) -> f64 {
        match self {
            Metric::ScaledL2 => {
                let s: f64 = a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum();
                (s / a.len().max(1) as f64).sqrt()
            }
            Metric::LInf => a
                .iter()
                .zip(b)
                .map(|(x, y)| (x - y).abs())
                .fold(0.0, f64::max),
        }
    }

    /// `d(a, 0)`, the norm the metric comes from.
    pub fn norm(self, a: &[f64]) -> f64 {
        match self {
            Metric::ScaledL2 => {
                let s: f64 = a.iter().map(|x| x * x).sum();
                (s / a.len().max(1) as f64).sqrt()
            }
            Metric::LInf => a.iter().map(|x| x.abs()).fold(0.0, f64::max),
        }
    }

    /// Whether `d(a, b) ≤ t`, stopping early for `LInf`.
    fn within(self, a: &[f64], b: &[f64], t: f64) -> bool {
        match self {
            Metric::ScaledL2 => self.distance(a, b) <= t,
            Metric::LInf => a.iter().zip(b).all(|(x, y)| (x - y).abs() <= t),
        }
    }
}

fn check_radius(t: f64) -> Result<()> {
    if t.is_finite() && t >= 0.0 {
        Ok(())
    } else {
        Err(GeometryError::InvalidParameter {
            name: "t",
            reason: format!("{t} is not a finite non-negative number"),
        })
    }
}

/// Greedy inclusion-maximal `t`-separated subset (seed 004 Lemma 2.7): scan the points in
/// index order, keep a point iff it is at distance `> t` from every point kept so far.
///
/// The result `T` (indices, increasing) satisfies: distinct kept points are `> t` apart,
/// and every point is within `≤ t` of a kept one (a point was skipped exactly because
/// such a kept point existed), so `T` is a `t`-cover. Cost `O(len · |T| · dim)`.
pub fn maximal_separated_subset<P: PointSet + ?Sized>(
    points: &P,
    t: f64,
    metric: Metric,
) -> Result<Vec<usize>> {
    extend_separated_subset(points, t, metric, Vec::new())
}

/// Like [`maximal_separated_subset`] but starting from `initial`, which must already be
/// `t`-separated (checked) and is kept: the result is a maximal `t`-separated superset.
pub fn extend_separated_subset<P: PointSet + ?Sized>(
    points: &P,
    t: f64,
    metric: Metric,
    initial: Vec<usize>,
) -> Result<Vec<usize>> {
    check_radius(t)?;
    let (n, dim) = (points.len(), points.dim());
    if dim == 0 {
        return Err(GeometryError::InvalidParameter {
            name: "points",
            reason: "points must have positive dimension".into(),
        });
    }
    let mut chosen: Vec<usize> = Vec::with_capacity(initial.len());
    let mut is_chosen = vec![false; n];
    let mut flat: Vec<f64> = Vec::new();
    let mut buf = vec![0.0; dim];
    let far_from_all =
        |flat: &[f64], buf: &[f64]| flat.chunks_exact(dim).all(|c| !metric.within(c, buf, t));
    for &i in &initial {
        if i >= n {
            return Err(GeometryError::IndexOutOfRange { index: i, len: n });
        }
        points.write_point(i, &mut buf);
        if is_chosen[i] || !far_from_all(&flat, &buf) {
            return Err(GeometryError::InvalidParameter {
                name: "initial",
                reason: format!("point {i} is within {t} of another initial point"),
            });
        }
        is_chosen[i] = true;
        chosen.push(i);
        flat.extend_from_slice(&buf);
    }
    for (i, taken) in is_chosen.iter_mut().enumerate() {
        if *taken {
            continue;
        }
        points.write_point(i, &mut buf);
        if far_from_all(&flat, &buf) {
            *taken = true;
            chosen.push(i);
            flat.extend_from_slice(&buf);
        }
    }
    chosen.sort_unstable();
    Ok(chosen)
}

/// For every point `x` of `points`, the index (into `centers`) of a nearest center in
/// `metric` (the smallest index on ties). Fails on empty `centers` or a dimension mismatch.
pub fn nearest_point_map<P: PointSet + ?Sized, C: PointSet + ?Sized>(
    points: &P,
    centers: &C,
    metric: Metric,
    par: Parallelism,
) -> Result<Vec<usize>> {
    check_dim("nearest_point_map centers", points.dim(), centers.dim())?;
    if centers.is_empty() {
        return Err(GeometryError::Empty("nearest_point_map needs a center"));
    }
    let dim = points.dim();
    let mut flat = vec![0.0; centers.len() * dim];
    if dim > 0 {
        for (k, row) in flat.chunks_exact_mut(dim).enumerate() {
            centers.write_point(k, row);
        }
    }
    let nearest = |buf: &mut Vec<f64>, i: usize| -> usize {
        points.write_point(i, buf);
        let mut best = (0, f64::INFINITY);
        for k in 0..centers.len() {
            let dist = metric.distance(&flat[k * dim..(k + 1) * dim], buf);
            if dist < best.1 {
                best = (k, dist);
            }
        }
        best.0
    };
    let mut out = vec![0usize; points.len()];
    match par {
        Parallelism::None => {
            let mut buf = vec![0.0; dim];
            for (i, o) in out.iter_mut().enumerate() {
                *o = nearest(&mut buf, i);
            }
        }
        Parallelism::Rayon => {
            out.par_chunks_mut(PAR_CHUNK / 8)
                .enumerate()
                .for_each(|(chunk, block)| {
                    let mut buf = vec![0.0; dim];
                    for (k, o) in block.iter_mut().enumerate() {
                        *o = nearest(&mut buf, chunk * (PAR_CHUNK / 8) + k);
                    }
                });
        }
    }
    Ok(out)
}
