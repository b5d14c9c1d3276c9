//! Convex bodies behind a linear-optimization oracle ([`LinearOracle`]): the convex hull
//! of a point set ([`ConvexHull`]), its symmetric version ([`SymmetricHull`], the body
//! `K = A·B₁` of seed 000 §3) and the Euclidean ball ([`Ball`]).
//!
//! Bodies whose extreme points are a finite, indexed list of *atoms* also implement
//! [`AtomicBody`], which is what the away-step and pairwise Frank–Wolfe variants need.

use crate::error::{GeometryError, Result, check_dim, check_finite};
use crate::parallel::Parallelism;
use crate::points::{PointSet, dot};

/// The answer of a linear-optimization oracle for a direction `c`.
#[derive(Clone, Debug, PartialEq)]
pub struct OracleAnswer {
    /// A point `v` of the body (approximately) maximizing `⟨c, v⟩`.
    pub point: Vec<f64>,
    /// `⟨c, point⟩`.
    pub value: f64,
    /// The index of `point` among the body's atoms, when the body has atoms.
    pub atom: Option<usize>,
    /// Additive slack: `sup_{u ∈ K} ⟨c, u⟩ ≤ value + slack` (0 for an exact oracle).
    pub slack: f64,
}

/// A convex body `K ⊂ R^dim` known through `argmax_{v ∈ K} ⟨c, v⟩`, possibly approximate
/// with the additive slack reported in [`OracleAnswer::slack`].
pub trait LinearOracle: Sync {
    /// Dimension of the ambient space.
    fn dim(&self) -> usize;
    /// A maximizer of `⟨c, ·⟩` over the body. Fails on `c` of the wrong length or with
    /// non-finite entries.
    fn linear_max(&self, c: &[f64], par: Parallelism) -> Result<OracleAnswer>;
}

/// A polytope given as the convex hull of finitely many indexed atoms `a_0, …, a_{N−1}`.
///
/// As for [`PointSet`], the methods are kernels with preconditions (`atom < num_atoms()`,
/// buffers of the right length) that the solvers check before calling.
pub trait AtomicBody: LinearOracle {
    /// Number of atoms `N`.
    fn num_atoms(&self) -> usize;
    /// `out[a] = ⟨c, a_a⟩` for every atom (`out.len() == num_atoms()`).
    fn atom_scores(&self, c: &[f64], out: &mut [f64], par: Parallelism);
    /// `out += scale · a_atom`.
    fn add_atom_scaled(&self, atom: usize, scale: f64, out: &mut [f64]);
    /// `⟨c, a_atom⟩` for one atom (`c.len() == dim()`). The default writes the atom into a
    /// scratch vector (`O(dim)`, allocates); hulls of point sets override it with
    /// [`PointSet::inner`]. Used by the minimum-norm-point solver for Gram entries.
    fn atom_inner(&self, atom: usize, c: &[f64]) -> f64 {
        let mut a = vec![0.0; c.len()];
        self.add_atom_scaled(atom, 1.0, &mut a);
        dot(&a, c)
    }
    /// `out += Σ_a weights[a] · a_a` (`weights.len() == num_atoms()`), the adjoint of
    /// [`AtomicBody::atom_scores`]. The default adds the atoms of non-zero weight one by one.
    fn add_atoms_weighted(&self, weights: &[f64], out: &mut [f64], par: Parallelism) {
        let _ = par;
        for (a, &w) in weights.iter().enumerate() {
            if w != 0.0 {
                self.add_atom_scaled(a, w, out);
            }
        }
    }
}

/// The answer of an [`AtomOracle`]: the atom it chose for a direction `c`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AtomChoice {
    /// The atom's identifier (stable for the oracle's lifetime).
    pub atom: usize,
    /// `⟨c, a_atom⟩`.
    pub score: f64,
    /// Whether the choice is a certified maximiser of `⟨c, ·⟩` over all atoms. When it is
    /// not (a heuristic oracle), a Frank–Wolfe gap computed from it is only the gap towards
    /// the best atom found — a lower bound on the true gap, no certificate.
    pub exact: bool,
}

/// A polytope `conv{a_0, a_1, …}` whose atoms may be far too many to list: the solver asks
/// for the best atom of a direction, and the oracle hands out identifiers for the atoms it
/// has produced (e.g. the records of a universe of 10¹⁸ elements found by a MAX-CSP search,
/// the implicit universes of the projection family). Every [`AtomicBody`] is one through
/// [`EnumeratedAtoms`] (an exact oracle that scores every atom).
///
/// This is what Wolfe's minimum-norm-point method needs
/// ([`crate::min_norm_point_project_generated`]): one oracle call per major cycle, inner
/// products with the active atoms, and their coordinates.
pub trait AtomOracle {
    /// Dimension of the ambient space.
    fn dim(&self) -> usize;
    /// An atom (approximately, see [`AtomChoice::exact`]) maximising `⟨c, a⟩`
    /// (`c.len() == dim()`, finite).
    fn best_atom(&mut self, c: &[f64], par: Parallelism) -> Result<AtomChoice>;
    /// `⟨c, a_atom⟩` for an atom returned earlier.
    fn atom_inner(&self, atom: usize, c: &[f64]) -> f64;
    /// `out += scale · a_atom` for an atom returned earlier.
    fn add_atom_scaled(&self, atom: usize, scale: f64, out: &mut [f64]);
}

/// An [`AtomicBody`] as an exact [`AtomOracle`]: every oracle call scores all atoms (into a
/// buffer kept between calls) and returns the first best one.
pub struct EnumeratedAtoms<'a, B: AtomicBody + ?Sized> {
    body: &'a B,
    scores: Vec<f64>,
}

impl<'a, B: AtomicBody + ?Sized> EnumeratedAtoms<'a, B> {
    /// The oracle of `body` (fails on a body without atoms).
    pub fn new(body: &'a B) -> Result<Self> {
        if body.num_atoms() == 0 {
            return Err(GeometryError::Empty("the body has no atoms"));
        }
        Ok(EnumeratedAtoms {
            body,
            scores: vec![0.0; body.num_atoms()],
        })
    }
}

impl<B: AtomicBody + ?Sized> AtomOracle for EnumeratedAtoms<'_, B> {
    fn dim(&self) -> usize {
        self.body.dim()
    }
    fn best_atom(&mut self, c: &[f64], par: Parallelism) -> Result<AtomChoice> {
        self.body.atom_scores(c, &mut self.scores, par);
        let atom = argmax(&self.scores).ok_or(GeometryError::Empty("the body has no atoms"))?;
        Ok(AtomChoice {
            atom,
            score: self.scores[atom],
            exact: true,
        })
    }
    fn atom_inner(&self, atom: usize, c: &[f64]) -> f64 {
        self.body.atom_inner(atom, c)
    }
    fn add_atom_scaled(&self, atom: usize, scale: f64, out: &mut [f64]) {
        self.body.add_atom_scaled(atom, scale, out)
    }
}

/// Index of the largest entry (the first one on ties); NaN entries are never chosen
/// unless all are NaN. `None` only for an empty slice.
pub(crate) fn argmax(v: &[f64]) -> Option<usize> {
    let mut best: Option<(usize, f64)> = None;
    for (i, &x) in v.iter().enumerate() {
        match best {
            None => best = Some((i, x)),
            Some((_, b)) if x > b || (b.is_nan() && !x.is_nan()) => best = Some((i, x)),
            _ => {}
        }
    }
    best.map(|(i, _)| i)
}

fn validate_points<P: PointSet>(points: &P) -> Result<()> {
    if points.is_empty() {
        return Err(GeometryError::Empty("a hull needs at least one point"));
    }
    if points.dim() == 0 {
        return Err(GeometryError::InvalidParameter {
            name: "points",
            reason: "points must have positive dimension".into(),
        });
    }
    Ok(())
}

fn validate_direction(dim: usize, c: &[f64]) -> Result<()> {
    check_dim("linear_max direction", dim, c.len())?;
    check_finite(c, "linear_max direction")
}

/// `conv{p_0, …, p_{n−1}}`; its atoms are the points, atom `i` being `p_i`.
#[derive(Clone, Debug)]
pub struct ConvexHull<P: PointSet> {
    points: P,
}

impl<P: PointSet> ConvexHull<P> {
    /// Fails on an empty set or a zero-dimensional one.
    pub fn new(points: P) -> Result<Self> {
        validate_points(&points)?;
        Ok(Self { points })
    }
    /// The underlying point set.
    pub fn points(&self) -> &P {
        &self.points
    }
    /// Gives the point set back.
    pub fn into_points(self) -> P {
        self.points
    }
}

impl<P: PointSet> LinearOracle for ConvexHull<P> {
    fn dim(&self) -> usize {
        self.points.dim()
    }
    fn linear_max(&self, c: &[f64], par: Parallelism) -> Result<OracleAnswer> {
        validate_direction(self.dim(), c)?;
        let mut scores = vec![0.0; self.points.len()];
        self.points.inner_all(c, &mut scores, par);
        let best = argmax(&scores).ok_or(GeometryError::Empty("hull"))?;
        let mut point = vec![0.0; self.dim()];
        self.points.add_scaled(best, 1.0, &mut point);
        Ok(OracleAnswer {
            value: dot(c, &point),
            point,
            atom: Some(best),
            slack: 0.0,
        })
    }
}

impl<P: PointSet> AtomicBody for ConvexHull<P> {
    fn num_atoms(&self) -> usize {
        self.points.len()
    }
    fn atom_scores(&self, c: &[f64], out: &mut [f64], par: Parallelism) {
        self.points.inner_all(c, out, par)
    }
    fn add_atom_scaled(&self, atom: usize, scale: f64, out: &mut [f64]) {
        self.points.add_scaled(atom, scale, out)
    }
    fn atom_inner(&self, atom: usize, c: &[f64]) -> f64 {
        self.points.inner(atom, c)
    }
    fn add_atoms_weighted(&self, weights: &[f64], out: &mut [f64], par: Parallelism) {
        self.points.add_weighted(weights, out, par)
    }
}

/// `conv{±p_0, …, ±p_{n−1}}` (the image `A·B₁` of the ℓ₁ ball under the matrix with
/// columns `p_i`, seed 000 §3). Atoms `0..n` are `+p_i`, atoms `n..2n` are `−p_{i−n}`.
#[derive(Clone, Debug)]
pub struct SymmetricHull<P: PointSet> {
    points: P,
}

impl<P: PointSet> SymmetricHull<P> {
    /// Fails on an empty set or a zero-dimensional one.
    pub fn new(points: P) -> Result<Self> {
        validate_points(&points)?;
        Ok(Self { points })
    }
    /// The underlying point set.
    pub fn points(&self) -> &P {
        &self.points
    }
}

impl<P: PointSet> LinearOracle for SymmetricHull<P> {
    fn dim(&self) -> usize {
        self.points.dim()
    }
    fn linear_max(&self, c: &[f64], par: Parallelism) -> Result<OracleAnswer> {
        validate_direction(self.dim(), c)?;
        let n = self.points.len();
        let mut scores = vec![0.0; n];
        self.points.inner_all(c, &mut scores, par);
        let abs: Vec<f64> = scores.iter().map(|s| s.abs()).collect();
        let best = argmax(&abs).ok_or(GeometryError::Empty("hull"))?;
        let (sign, atom) = if scores[best] >= 0.0 {
            (1.0, best)
        } else {
            (-1.0, best + n)
        };
        let mut point = vec![0.0; self.dim()];
        self.points.add_scaled(best, sign, &mut point);
        Ok(OracleAnswer {
            value: dot(c, &point),
            point,
            atom: Some(atom),
            slack: 0.0,
        })
    }
}

impl<P: PointSet> AtomicBody for SymmetricHull<P> {
    fn num_atoms(&self) -> usize {
        2 * self.points.len()
    }
    fn atom_scores(&self, c: &[f64], out: &mut [f64], par: Parallelism) {
        let n = self.points.len();
        let (plus, minus) = out.split_at_mut(n);
        self.points.inner_all(c, plus, par);
        for (m, p) in minus.iter_mut().zip(plus.iter()) {
            *m = -p;
        }
    }
    fn add_atom_scaled(&self, atom: usize, scale: f64, out: &mut [f64]) {
        let n = self.points.len();
        if atom < n {
            self.points.add_scaled(atom, scale, out)
        } else {
            self.points.add_scaled(atom - n, -scale, out)
        }
    }
    fn atom_inner(&self, atom: usize, c: &[f64]) -> f64 {
        let n = self.points.len();
        if atom < n {
            self.points.inner(atom, c)
        } else {
            -self.points.inner(atom - n, c)
        }
    }
}

/// The Euclidean ball `{v : ‖v − center‖₂ ≤ radius}`; its oracle is closed form:
/// `argmax ⟨c, v⟩ = center + radius · c/‖c‖₂` with value `⟨c, center⟩ + radius‖c‖₂`.
#[derive(Clone, Debug, PartialEq)]
pub struct Ball {
    center: Vec<f64>,
    radius: f64,
}

impl Ball {
    /// Fails on an empty or non-finite center or a negative/non-finite radius.
    pub fn new(center: Vec<f64>, radius: f64) -> Result<Self> {
        if center.is_empty() {
            return Err(GeometryError::InvalidParameter {
                name: "center",
                reason: "a ball needs positive dimension".into(),
            });
        }
        check_finite(&center, "ball center")?;
        if !(radius.is_finite() && radius >= 0.0) {
            return Err(GeometryError::InvalidParameter {
                name: "radius",
                reason: format!("{radius} is not a finite non-negative number"),
            });
        }
        Ok(Self { center, radius })
    }
    /// The unit ball `B₂^dim` around the origin.
    pub fn unit(dim: usize) -> Result<Self> {
        Self::new(vec![0.0; dim], 1.0)
    }
    /// The center.
    pub fn center(&self) -> &[f64] {
        &self.center
    }
    /// The radius.
    pub fn radius(&self) -> f64 {
        self.radius
    }
}

impl LinearOracle for Ball {
    fn dim(&self) -> usize {
        self.center.len()
    }
    fn linear_max(&self, c: &[f64], _par: Parallelism) -> Result<OracleAnswer> {
        validate_direction(self.dim(), c)?;
        let norm = dot(c, c).sqrt();
        let mut point = self.center.clone();
        if norm > 0.0 {
            let s = self.radius / norm;
            for (p, ci) in point.iter_mut().zip(c) {
                *p += s * ci;
            }
        }
        Ok(OracleAnswer {
            value: dot(c, &self.center) + self.radius * norm,
            point,
            atom: None,
            slack: 0.0,
        })
    }
}
