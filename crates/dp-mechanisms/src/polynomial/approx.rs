//! Univariate polynomial approximations of symmetric Boolean functions, with a uniform error
//! **certified in exact rational arithmetic** on the integer points that matter.
//!
//! A symmetric query on the bits a record satisfies is a function `f(t)` of their number
//! `t ∈ {0, …, ℓ}` (OR: `f(t) = [t ≥ 1]`; a k-of-ℓ threshold: `f(t) = [t ≥ k]`). Seed 002
//! (Thaler, Ullman and Vadhan 2012) replaces `f` by a low-degree univariate polynomial `p`
//! and releases the multilinear polynomial `y ↦ p(Σ_{i∈X} y_i)` of each record (§3–§4).
//!
//! ## Two bases
//!
//! * **Univariate monomials** `p(t) = Σ_j c_j t^j` (reported: [`SymmetricApprox::monomial`],
//!   with its norm `Σ_j |c_j|`, the quantity seed 002 Fact 4.2 / Lemma 4.3 bound).
//! * **Multilinear (Newton) coefficients** `p(t) = Σ_s b_s·C(t, s)`, where `b_s = Δ^s p(0)`
//!   is the `s`-th forward difference at 0 ([`SymmetricApprox::multilinear`]). On bits
//!   `y_i ∈ {0, 1}`, `p(Σ_{i∈X} y_i) = Σ_{S ⊆ X} b_{|S|} Π_{i∈S} y_i` (expand `C(Σ y_i, s)`:
//!   it counts the `s`-subsets of `X` all of whose bits are set). So the coefficient of the
//!   monomial `y_S` in a record's polynomial is `b_{|S|}·[S ⊆ X]`: it depends only on `|S|`
//!   and on whether the record has `S` — the structure the release uses. These are what the
//!   release needs; `b_s = Σ_j c_j·s!·S(j, s)` (Stirling numbers of the second kind), and
//!   the row norm `Σ_s |b_s|·C(w, s) ≤ Σ_j |c_j|·w^j` for a record with `w` bits set
//!   ([`SymmetricApprox::row_norm`], tested).
//!
//! ## Certification
//!
//! Every constructor ends in the same step: the `b_s` the release will use are rounded to
//! `f64`, read back as exact rationals, `p(t) = Σ_s b_s C(t, s)` is evaluated exactly at every
//! `t ∈ 0..=ℓ`, and the maximum of `|p(t) − f(t)|` (exact) is rounded **up** to `f64`
//! ([`SymmetricApprox::error`]). The error reported is therefore the error of the very
//! coefficients released, not of an idealised polynomial.
//!
//! ## Constructions
//!
//! * [`SymmetricApprox::chebyshev_or`] — seed 002 Fact 4.2 / Lemma 4.3 (after Klivans and
//!   Servedio 2004, Hardt, Rothblum and Servedio 2012): for `ℓ ≥ 2`,
//!   `p(t) = 1 − T_D((ℓ − t)/(ℓ − 1)) / T_D(ℓ/(ℓ − 1))` with `T_D` the Chebyshev polynomial
//!   of the first kind. `p(0) = 0` exactly; for `t ∈ 1..=ℓ` the argument lies in `[0, 1]`
//!   where `|T_D| ≤ 1`, so `|p(t) − 1| ≤ 1/T_D(1 + 1/(ℓ − 1))`. As
//!   `T_D(1 + δ) = cosh(D·arccosh(1 + δ)) ≥ e^{D·arccosh(1 + δ)}/2` and
//!   `arccosh(1 + 1/(ℓ − 1)) ≥ √(2/ℓ)`, the smallest `D` with `T_D(ℓ/(ℓ − 1)) ≥ 1/α` is at
//!   most `⌈√(ℓ/2)·ln(2/α)⌉`, i.e. `O(√ℓ log(1/α))`
//!   (tested against `⌈√(ℓ/2)·ln(2/α)⌉ + 1`).
//! * [`SymmetricApprox::lp`] — any target on `{0..ℓ}` at a fixed degree: minimise the maximum
//!   error by linear programming (clarabel), with `p` written in the Chebyshev basis of
//!   `[0, ℓ]` (`T_j(2t/ℓ − 1)`, entries bounded by 1: well conditioned), optionally pinning
//!   points (`p(0) = f(0)`) and bounding a weighted multilinear norm `Σ_s w_s |b_s| ≤ B` —
//!   with `w_s` the number of `s`-subsets a record holds, that norm is the coefficient
//!   vector's sensitivity, so the LP trades approximation error against noise directly.
//!   The route seed 002 names for k-of-ℓ (Lemma 4.5 / Appendix B) and decision lists
//!   (Lemma 4.9 / Appendix A).
//! * [`SymmetricApprox::exact`] — degree `ℓ` interpolation, error 0 (for OR:
//!   `b_s = (−1)^{s+1}`, inclusion–exclusion).

use clarabel::algebra::CscMatrix;
use clarabel::solver::{
    DefaultSettingsBuilder, DefaultSolver, IPSolver, NonnegativeConeT, SolverStatus,
    SupportedConeT, ZeroConeT,
};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};

use crate::{MechanismError, Result};

/// The largest number of points `ℓ + 1` a target may have.
pub const MAX_POINTS: usize = 4097;

/// The largest degree any constructor builds (beyond it the multilinear coefficients, which
/// grow like `2^s`, lose all precision in `f64`).
pub const MAX_DEGREE: usize = 64;

/// How a [`SymmetricApprox`] was built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Construction {
    /// Interpolation of every point (error 0 up to rounding).
    Exact,
    /// The Chebyshev construction for OR (seed 002 Fact 4.2).
    Chebyshev,
    /// The minimax linear program.
    LinearProgram,
}

impl std::fmt::Display for Construction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Construction::Exact => "exact interpolation",
            Construction::Chebyshev => "Chebyshev construction",
            Construction::LinearProgram => "minimax linear program",
        })
    }
}

/// Options of the linear-programming constructor ([`SymmetricApprox::lp`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LpOptions {
    /// Points `t` where `p(t) = f(t)` is required exactly (up to the solver's tolerance; the
    /// certified error still covers them).
    pub pinned: Vec<usize>,
    /// `Some((B, w))`: require `Σ_s w_s·|b_s| ≤ B` (`w` has one entry per degree `0..=D`,
    /// non-negative; a shorter `w` is padded with zeros).
    pub norm_bound: Option<(f64, Vec<f64>)>,
}

/// A univariate polynomial approximating a symmetric target `f` on `{0, …, ℓ}`, with its
/// certified uniform error (module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct SymmetricApprox {
    target: Vec<f64>,
    multilinear: Vec<f64>,
    monomial: Vec<f64>,
    error: f64,
    construction: Construction,
}

/// The OR target on `{0, …, ℓ}`: `0, 1, 1, …, 1`.
pub fn or_target(ell: usize) -> Vec<f64> {
    (0..=ell).map(|t| if t == 0 { 0.0 } else { 1.0 }).collect()
}

/// The k-of-ℓ threshold target on `{0, …, ℓ}`: `[t ≥ k]`.
pub fn threshold_target(k: usize, ell: usize) -> Vec<f64> {
    (0..=ell).map(|t| if t >= k { 1.0 } else { 0.0 }).collect()
}

fn rat(x: f64) -> Result<BigRational> {
    BigRational::from_float(x).ok_or_else(|| MechanismError::Numerical {
        what: format!("a polynomial coefficient is not a finite number ({x})"),
    })
}

fn int(x: i64) -> BigRational {
    BigRational::from_integer(BigInt::from(x))
}

/// `f64` at or above the exact rational `r ≥ 0`.
fn up(r: &BigRational) -> f64 {
    let x = r.to_f64().unwrap_or(f64::INFINITY);
    if x.is_finite() && &rat_lossy(x) < r {
        x.next_up()
    } else {
        x
    }
}

fn rat_lossy(x: f64) -> BigRational {
    BigRational::from_float(x).unwrap_or_else(BigRational::zero)
}

/// `b_s = Δ^s v(0)` for `s = 0..values.len()`, exactly.
fn forward_differences(values: &[BigRational]) -> Vec<BigRational> {
    let mut row: Vec<BigRational> = values.to_vec();
    let mut out = Vec::with_capacity(values.len());
    while !row.is_empty() {
        out.push(row[0].clone());
        row = row.windows(2).map(|w| &w[1] - &w[0]).collect();
    }
    out
}

/// `Σ_s b_s·C(t, s)`, exactly.
fn newton_value(b: &[BigRational], t: usize) -> BigRational {
    let mut binom = BigInt::one();
    let mut sum = BigRational::zero();
    for (s, bs) in b.iter().enumerate() {
        if s > t {
            break;
        }
        sum += bs * BigRational::from_integer(binom.clone());
        // C(t, s+1) = C(t, s)·(t − s)/(s + 1)
        binom = binom * BigInt::from(t - s) / BigInt::from(s + 1);
    }
    sum
}

/// Chebyshev `T_0..=T_degree` at the rational `x`, exactly.
fn chebyshev_values(x: &BigRational, degree: usize) -> Vec<BigRational> {
    let mut out = vec![BigRational::one()];
    if degree >= 1 {
        out.push(x.clone());
    }
    let two_x = x * int(2);
    for j in 2..=degree {
        let next = &two_x * &out[j - 1] - &out[j - 2];
        out.push(next);
    }
    out
}

fn check_target(target: &[f64]) -> Result<()> {
    if target.len() < 2 || target.len() > MAX_POINTS {
        return Err(MechanismError::InvalidParameter {
            name: "target",
            value: format!("{} points", target.len()),
            reason: format!("a symmetric target needs between 2 and {MAX_POINTS} points 0..=ℓ"),
        });
    }
    if let Some(v) = target.iter().find(|v| !v.is_finite()) {
        return Err(MechanismError::InvalidParameter {
            name: "target",
            value: v.to_string(),
            reason: "every target value must be a finite number".into(),
        });
    }
    Ok(())
}

impl SymmetricApprox {
    /// Finishes a construction: rounds the exact multilinear coefficients `b` to `f64`,
    /// certifies the error of the rounded ones exactly on every point of `target`, and
    /// derives the univariate monomial coefficients.
    fn certify(
        target: &[f64],
        b_exact: &[BigRational],
        construction: Construction,
    ) -> Result<Self> {
        let mut multilinear: Vec<f64> = b_exact
            .iter()
            .map(|b| b.to_f64().unwrap_or(f64::NAN))
            .collect();
        if multilinear.iter().any(|b| !b.is_finite()) {
            return Err(MechanismError::Numerical {
                what: "a polynomial coefficient overflows a 64-bit float".into(),
            });
        }
        while multilinear.len() > 1 && multilinear.last() == Some(&0.0) {
            multilinear.pop();
        }
        let b: Vec<BigRational> = multilinear.iter().map(|&x| rat(x)).collect::<Result<_>>()?;
        let mut worst = BigRational::zero();
        for (t, &f) in target.iter().enumerate() {
            let e = (newton_value(&b, t) - rat(f)?).abs();
            if e > worst {
                worst = e;
            }
        }
        // monomial coefficients: Σ_s b_s·(t)_s/s!, (t)_s the falling factorial
        let mut monomial = vec![BigRational::zero(); b.len()];
        let mut falling = vec![BigRational::one()]; // (t)_s / s! as a polynomial in t
        for (s, bs) in b.iter().enumerate() {
            for (j, c) in falling.iter().enumerate() {
                monomial[j] += bs * c;
            }
            // multiply by (t − s)/(s + 1)
            let mut next = vec![BigRational::zero(); falling.len() + 1];
            let denom = int(s as i64 + 1);
            for (j, c) in falling.iter().enumerate() {
                next[j + 1] += c / &denom;
                next[j] -= c * int(s as i64) / &denom;
            }
            falling = next;
        }
        Ok(SymmetricApprox {
            target: target.to_vec(),
            multilinear,
            monomial: monomial
                .iter()
                .map(|c| c.to_f64().unwrap_or(f64::INFINITY))
                .collect(),
            error: up(&worst),
            construction,
        })
    }

    /// Exact interpolation of `target` (values at `0..=ℓ`): degree at most `ℓ`, error 0.
    ///
    /// Errors: fewer than 2 or more than [`MAX_POINTS`] values, a non-finite value, or a
    /// degree above [`MAX_DEGREE`].
    pub fn exact(target: &[f64]) -> Result<Self> {
        check_target(target)?;
        let values: Vec<BigRational> = target.iter().map(|&f| rat(f)).collect::<Result<_>>()?;
        let mut b = forward_differences(&values);
        while b.len() > 1 && b.last().is_some_and(|x| x.is_zero()) {
            b.pop();
        }
        if b.len() - 1 > MAX_DEGREE {
            return Err(MechanismError::InvalidParameter {
                name: "degree",
                value: (b.len() - 1).to_string(),
                reason: format!("exact interpolation would need a degree above {MAX_DEGREE}"),
            });
        }
        Self::certify(target, &b, Construction::Exact)
    }

    /// The smallest degree `D < ℓ` of the Chebyshev construction whose bound
    /// `1/T_D(ℓ/(ℓ − 1))` is at most `alpha` (computed in floating point; the constructor
    /// certifies the result), or `None` when exact interpolation (degree `ℓ`) is needed.
    pub fn chebyshev_or_degree(ell: usize, alpha: f64) -> Option<usize> {
        if ell < 2 {
            return None;
        }
        let x = ell as f64 / (ell as f64 - 1.0);
        let a = x.acosh();
        (1..ell.min(MAX_DEGREE + 1)).find(|&d| 1.0 / (d as f64 * a).cosh() <= alpha)
    }

    /// The Chebyshev construction for OR on `{0, …, ℓ}` with error at most `alpha` (seed 002
    /// Fact 4.2 / Lemma 4.3; module docs): `p(0) = 0` and `|p(t) − 1| ≤ alpha` on `1..=ℓ`,
    /// degree `O(√ℓ log(1/alpha))`. When no degree below `ℓ` reaches `alpha`, the exact
    /// interpolation (degree `ℓ`, inclusion–exclusion) is returned.
    ///
    /// Errors: `ell = 0` or above `MAX_POINTS − 1`, `alpha ∉ (0, 1)`.
    pub fn chebyshev_or(ell: usize, alpha: f64) -> Result<Self> {
        if !(alpha > 0.0 && alpha < 1.0) {
            return Err(MechanismError::InvalidParameter {
                name: "alpha",
                value: alpha.to_string(),
                reason: "the approximation error must lie strictly between 0 and 1".into(),
            });
        }
        check_target(&or_target(ell))?;
        let degree = match Self::chebyshev_or_degree(ell, alpha) {
            Some(d) => d,
            None => return Self::exact(&or_target(ell)),
        };
        // the floating-point choice may sit on the boundary: two more degrees at most
        for d in degree..(degree + 3).min(ell) {
            let p = Self::chebyshev_or_at_degree(ell, d)?;
            if p.error <= alpha {
                return Ok(p);
            }
        }
        Err(MechanismError::InvalidParameter {
            name: "alpha",
            value: alpha.to_string(),
            reason: format!(
                "on 0..={ell} this error needs degree {degree}, where the 64-bit coefficients \
                 no longer certify it (rounding grows like C(ℓ, s)); use a larger α or \
                 narrower queries"
            ),
        })
    }

    /// The Chebyshev construction for OR on `{0, …, ℓ}` at a given degree `1 ≤ D < ℓ`
    /// (module docs), whatever its error.
    ///
    /// Errors: `ell < 2`, `degree` outside `1..ℓ` or above [`MAX_DEGREE`].
    pub fn chebyshev_or_at_degree(ell: usize, degree: usize) -> Result<Self> {
        let target = or_target(ell);
        check_target(&target)?;
        if ell < 2 || degree == 0 || degree >= ell || degree > MAX_DEGREE {
            return Err(MechanismError::InvalidParameter {
                name: "degree",
                value: degree.to_string(),
                reason: format!(
                    "the Chebyshev construction on 0..={ell} needs 1 <= degree < {ell} and \
                     degree <= {MAX_DEGREE}"
                ),
            });
        }
        let l = ell as i64;
        let denom = chebyshev_values(&BigRational::new(l.into(), (l - 1).into()), degree)
            .pop()
            .unwrap_or_else(BigRational::one);
        // p has degree D: its values at 0..=D determine b_0..b_D
        let values: Vec<BigRational> = (0..=degree as i64)
            .map(|t| {
                let x = BigRational::new((l - t).into(), (l - 1).into());
                let td = chebyshev_values(&x, degree)
                    .pop()
                    .unwrap_or_else(BigRational::one);
                BigRational::one() - td / &denom
            })
            .collect();
        let b = forward_differences(&values);
        Self::certify(&target, &b, Construction::Chebyshev)
    }

    /// The lowest-degree minimax polynomial for `target` whose certified error is at most
    /// `alpha`: the linear program ([`Self::lp`]) at degrees `1, 2, …` below `ℓ`, the first
    /// that certifies `alpha`; exact interpolation (degree `ℓ`) when none does. This is the
    /// constructor seed 002 names for k-of-ℓ thresholds (Lemma 4.5 / Appendix B, after
    /// Sherstov 2009: "e.g. using linear programming") and for the prefix indicators of
    /// decision lists (Lemma 4.9 / Appendix A, after Klivans and Servedio 2004): instead of
    /// the explicit polynomials of those proofs, the best polynomial of each degree.
    ///
    /// Errors: a bad target, `alpha ∉ (0, 1)`, or the solver failing.
    pub fn lp_for_error(target: &[f64], alpha: f64, options: &LpOptions) -> Result<Self> {
        if !(alpha > 0.0 && alpha < 1.0) {
            return Err(MechanismError::InvalidParameter {
                name: "alpha",
                value: alpha.to_string(),
                reason: "the approximation error must lie strictly between 0 and 1".into(),
            });
        }
        check_target(target)?;
        let ell = target.len() - 1;
        for d in 1..ell.min(MAX_DEGREE + 1) {
            let p = Self::lp(target, d, options)?;
            if p.error <= alpha {
                return Ok(p);
            }
        }
        Self::exact(target)
    }

    /// The k-of-ℓ threshold `[t ≥ k]` on `{0, …, ℓ}` within certified error `alpha`, at the
    /// lowest degree the linear program reaches it ([`Self::lp_for_error`]); for `k = 1`
    /// this is OR.
    ///
    /// Errors: `k ∉ 1..=ℓ`, and those of [`Self::lp_for_error`].
    pub fn threshold(k: usize, ell: usize, alpha: f64) -> Result<Self> {
        if k == 0 || k > ell {
            return Err(MechanismError::InvalidParameter {
                name: "k",
                value: k.to_string(),
                reason: format!("a threshold on 0..={ell} needs 1 <= k <= {ell}"),
            });
        }
        Self::lp_for_error(&threshold_target(k, ell), alpha, &LpOptions::default())
    }

    /// The minimax polynomial of degree `degree ≤ ℓ` for `target` (values at `0..=ℓ`), by
    /// linear programming (module docs), with optional pinned points and norm bound.
    ///
    /// Errors: a bad target, `degree > min(ℓ, MAX_DEGREE)`, a pinned point outside `0..=ℓ`, a
    /// bound that is not positive and finite or negative weights, an infeasible bound, or
    /// the solver failing ([`MechanismError::Numerical`]).
    pub fn lp(target: &[f64], degree: usize, options: &LpOptions) -> Result<Self> {
        check_target(target)?;
        let ell = target.len() - 1;
        if degree > ell || degree > MAX_DEGREE {
            return Err(MechanismError::InvalidParameter {
                name: "degree",
                value: degree.to_string(),
                reason: format!(
                    "at most ℓ = {ell} (degree ℓ interpolates exactly) and at most {MAX_DEGREE}"
                ),
            });
        }
        if let Some(&t) = options.pinned.iter().find(|&&t| t > ell) {
            return Err(MechanismError::InvalidParameter {
                name: "pinned",
                value: t.to_string(),
                reason: format!("pinned points must lie in 0..={ell}"),
            });
        }
        let weights = match &options.norm_bound {
            Some((bound, w)) => {
                if !(*bound > 0.0 && bound.is_finite()) {
                    return Err(MechanismError::InvalidParameter {
                        name: "norm bound",
                        value: bound.to_string(),
                        reason: "must be positive and finite".into(),
                    });
                }
                if w.iter().any(|x| !(*x >= 0.0 && x.is_finite())) {
                    return Err(MechanismError::InvalidParameter {
                        name: "norm weights",
                        value: format!("{} weights", w.len()),
                        reason: "every weight must be a non-negative finite number".into(),
                    });
                }
                let mut w = w.clone();
                w.resize(degree + 1, 0.0);
                Some((*bound, w))
            }
            None => None,
        };
        let nd = degree + 1;
        // Chebyshev basis of [0, ℓ] at the points: |V[t][j]| ≤ 1
        let x_of = |t: usize| 2.0 * t as f64 / ell as f64 - 1.0;
        let basis = |x: f64| {
            let mut v = vec![1.0; nd];
            if nd > 1 {
                v[1] = x;
            }
            for j in 2..nd {
                v[j] = 2.0 * x * v[j - 1] - v[j - 2];
            }
            v
        };
        let v: Vec<Vec<f64>> = (0..=ell).map(|t| basis(x_of(t))).collect();
        // b_s = Σ_{i ≤ s} (−1)^{s−i} C(s, i) p(i) = M[s]·a
        let m: Vec<Vec<f64>> = (0..nd)
            .map(|s| {
                let mut row = vec![0.0; nd];
                let mut c = 1.0f64;
                for (i, vi) in v.iter().enumerate().take(s + 1) {
                    let sign = if (s - i) % 2 == 0 { 1.0 } else { -1.0 };
                    for (r, x) in row.iter_mut().zip(vi) {
                        *r += sign * c * x;
                    }
                    c = c * (s - i) as f64 / (i + 1) as f64;
                }
                row
            })
            .collect();
        let with_norm = weights.is_some();
        let nvar = nd + 1 + if with_norm { nd } else { 0 };
        let e = nd;
        let mut rows: Vec<Vec<f64>> = Vec::new();
        let mut rhs: Vec<f64> = Vec::new();
        let mut pinned = options.pinned.clone();
        pinned.sort_unstable();
        pinned.dedup();
        for &t in &pinned {
            let mut r = vec![0.0; nvar];
            r[..nd].copy_from_slice(&v[t]);
            rows.push(r);
            rhs.push(target[t]);
        }
        let zeros = rows.len();
        for (t, &f) in target.iter().enumerate() {
            let mut r = vec![0.0; nvar];
            r[..nd].copy_from_slice(&v[t]);
            r[e] = -1.0;
            rows.push(r.clone());
            rhs.push(f);
            for x in r[..nd].iter_mut() {
                *x = -*x;
            }
            rows.push(r);
            rhs.push(-f);
        }
        if let Some((bound, w)) = &weights {
            for s in 0..nd {
                let mut r = vec![0.0; nvar];
                r[..nd].copy_from_slice(&m[s]);
                r[nd + 1 + s] = -1.0;
                rows.push(r.clone());
                rhs.push(0.0);
                for x in r[..nd].iter_mut() {
                    *x = -*x;
                }
                rows.push(r);
                rhs.push(0.0);
            }
            let mut r = vec![0.0; nvar];
            r[nd + 1..].copy_from_slice(w);
            rows.push(r);
            rhs.push(*bound);
        }
        let mut cones: Vec<SupportedConeT<f64>> = Vec::new();
        if zeros > 0 {
            cones.push(ZeroConeT(zeros));
        }
        cones.push(NonnegativeConeT(rows.len() - zeros));
        let mut q = vec![0.0; nvar];
        q[e] = 1.0;
        let settings = DefaultSettingsBuilder::default()
            .verbose(false)
            .tol_gap_abs(1e-12)
            .tol_gap_rel(1e-12)
            .tol_feas(1e-12)
            .max_iter(400)
            .build()
            .map_err(|e| MechanismError::Numerical {
                what: format!("the linear-program settings were refused ({e})"),
            })?;
        let p = CscMatrix::<f64>::zeros((nvar, nvar));
        let a = CscMatrix::from(&rows);
        let mut solver = DefaultSolver::new(&p, &q, &a, &rhs, &cones, settings).map_err(|e| {
            MechanismError::Numerical {
                what: format!("the linear program could not be set up ({e})"),
            }
        })?;
        solver.solve();
        match solver.solution.status {
            SolverStatus::Solved | SolverStatus::AlmostSolved => {}
            SolverStatus::PrimalInfeasible | SolverStatus::AlmostPrimalInfeasible => {
                return Err(MechanismError::InvalidParameter {
                    name: "norm bound",
                    value: weights.map(|(b, _)| b.to_string()).unwrap_or_default(),
                    reason: format!(
                        "no polynomial of degree {degree} meets the pinned points and the \
                         coefficient-norm bound"
                    ),
                });
            }
            other => {
                return Err(MechanismError::Numerical {
                    what: format!("the minimax linear program did not converge ({other:?})"),
                });
            }
        }
        let coeffs = &solver.solution.x[..nd];
        // exact values of the solved polynomial at 0..=D, then exact differences
        let values: Vec<BigRational> = (0..=degree)
            .map(|t| -> Result<BigRational> {
                let x = BigRational::new(
                    BigInt::from(2 * t as i64 - ell as i64),
                    BigInt::from(ell as i64),
                );
                let tv = chebyshev_values(&x, degree);
                let mut sum = BigRational::zero();
                for (c, tj) in coeffs.iter().zip(&tv) {
                    sum += rat(*c)? * tj;
                }
                Ok(sum)
            })
            .collect::<Result<_>>()?;
        let b = forward_differences(&values);
        Self::certify(target, &b, Construction::LinearProgram)
    }

    /// The target values `f(0..=ℓ)`.
    pub fn target(&self) -> &[f64] {
        &self.target
    }

    /// `ℓ`: the largest point approximated.
    pub fn ell(&self) -> usize {
        self.target.len() - 1
    }

    /// The degree (trailing zero coefficients dropped).
    pub fn degree(&self) -> usize {
        self.multilinear.len() - 1
    }

    /// The multilinear coefficients `b_0..=b_D` the release uses (module docs).
    pub fn multilinear(&self) -> &[f64] {
        &self.multilinear
    }

    /// The univariate monomial coefficients `c_0..=c_D` of the same polynomial (rounded
    /// from exact values).
    pub fn monomial(&self) -> &[f64] {
        &self.monomial
    }

    /// `Σ_j |c_j|`, the coefficient norm of seed 002 Fact 4.2.
    pub fn monomial_norm(&self) -> f64 {
        self.monomial.iter().map(|c| c.abs()).sum()
    }

    /// `Σ_s |b_s|·C(w, s)`: the ℓ1 norm of the multilinear polynomial of a record with `w`
    /// bits set (every `s`-subset of them is a monomial with coefficient `b_s`).
    pub fn row_norm(&self, w: usize) -> f64 {
        let mut binom = 1.0f64;
        let mut sum = 0.0;
        for (s, b) in self.multilinear.iter().enumerate() {
            if s > w {
                break;
            }
            sum += b.abs() * binom;
            binom = binom * (w - s) as f64 / (s + 1) as f64;
        }
        sum
    }

    /// The certified `max_{t ∈ 0..=ℓ} |p(t) − f(t)|` of the coefficients
    /// [`Self::multilinear`] (exact, rounded up).
    pub fn error(&self) -> f64 {
        self.error
    }

    /// How it was built.
    pub fn construction(&self) -> Construction {
        self.construction
    }

    /// `p(t) = Σ_s b_s·C(t, s)` in floating point (for reports and checks).
    pub fn value_at(&self, t: usize) -> f64 {
        let mut binom = 1.0f64;
        let mut sum = 0.0;
        for (s, b) in self.multilinear.iter().enumerate() {
            if s > t {
                break;
            }
            sum += b * binom;
            binom = binom * (t - s) as f64 / (s + 1) as f64;
        }
        sum
    }

    /// `p(t) = Σ_j c_j t^j` from the univariate monomial coefficients (Horner, floating
    /// point).
    pub fn monomial_value_at(&self, t: f64) -> f64 {
        self.monomial.iter().rev().fold(0.0, |acc, c| acc * t + c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Exact max error of the released coefficients, recomputed here independently (from
    /// the f64 multilinear coefficients, point by point).
    fn exact_error(p: &SymmetricApprox) -> BigRational {
        let b: Vec<BigRational> = p.multilinear().iter().map(|&x| rat(x).unwrap()).collect();
        let mut worst = BigRational::zero();
        for (t, &f) in p.target().iter().enumerate() {
            let mut v = BigRational::zero();
            // C(t, s) by the multiplicative formula, computed afresh
            for (s, bs) in b.iter().enumerate() {
                if s > t {
                    break;
                }
                let mut c = BigInt::one();
                for i in 0..s {
                    c = c * BigInt::from(t - i) / BigInt::from(i + 1);
                }
                v += bs * BigRational::from_integer(c);
            }
            let e = (v - rat(f).unwrap()).abs();
            if e > worst {
                worst = e;
            }
        }
        worst
    }

    fn assert_certified(p: &SymmetricApprox) {
        let e = exact_error(p);
        assert!(
            rat(p.error()).unwrap() >= e,
            "reported error below the exact error"
        );
        assert!(p.error() <= e.to_f64().unwrap().next_up().next_up());
        for (t, &f) in p.target().iter().enumerate() {
            assert!((p.value_at(t) - f).abs() <= p.error() + 1e-9);
        }
    }

    #[test]
    fn chebyshev_or_meets_fact_4_2() {
        for ell in [2usize, 3, 5, 8, 16, 40] {
            for alpha in [0.3, 0.1, 0.01, 0.001] {
                let p = SymmetricApprox::chebyshev_or(ell, alpha).unwrap();
                assert_certified(&p);
                assert!(p.error() <= alpha, "ℓ={ell} α={alpha}: {}", p.error());
                // p(0) = 0 exactly
                assert_eq!(p.multilinear()[0], 0.0);
                // degree O(√ℓ log(1/α)), explicitly
                let bound = ((ell as f64 / 2.0).sqrt() * (2.0 / alpha).ln()).ceil() as usize + 1;
                assert!(
                    p.degree() <= bound.min(ell),
                    "ℓ={ell} α={alpha}: degree {} above {bound}",
                    p.degree()
                );
                // row norm of the multilinear expansion ≤ Σ_j |c_j| w^j
                for w in [1usize, 3, 10, 30] {
                    let lhs = p.row_norm(w);
                    let rhs: f64 = p
                        .monomial()
                        .iter()
                        .enumerate()
                        .map(|(j, c)| c.abs() * (w as f64).powi(j as i32))
                        .sum();
                    assert!(lhs <= rhs * (1.0 + 1e-9) + 1e-12, "w={w}: {lhs} > {rhs}");
                }
                // the two bases describe the same polynomial
                for t in 0..=ell.min(12) {
                    let a = p.value_at(t);
                    let b = p.monomial_value_at(t as f64);
                    assert!(
                        (a - b).abs() <= 1e-6 * (1.0 + p.monomial_norm()),
                        "{a} vs {b}"
                    );
                }
            }
        }
        // a large ℓ is much cheaper than exact
        let p = SymmetricApprox::chebyshev_or(100, 0.1).unwrap();
        assert_certified(&p);
        assert!(p.degree() < 25, "degree {}", p.degree());
        // where f64 coefficients cannot certify the error, a clear refusal
        let e = SymmetricApprox::chebyshev_or(100, 0.001).unwrap_err();
        assert!(e.to_string().contains("larger α"), "{e}");
    }

    #[test]
    fn chebyshev_error_matches_the_closed_form() {
        // at degree D the worst error is 1/T_D(ℓ/(ℓ−1)), attained at t = 1 (argument 1)
        let (ell, d) = (10usize, 3usize);
        let p = SymmetricApprox::chebyshev_or_at_degree(ell, d).unwrap();
        let x = ell as f64 / (ell as f64 - 1.0);
        let closed = 1.0 / (d as f64 * x.acosh()).cosh();
        assert!(
            (p.error() - closed).abs() < 1e-12,
            "{} vs {closed}",
            p.error()
        );
        assert!(((p.value_at(1) - 1.0).abs() - closed).abs() < 1e-12);
    }

    #[test]
    fn exact_or_is_inclusion_exclusion() {
        let p = SymmetricApprox::exact(&or_target(6)).unwrap();
        assert_eq!(p.degree(), 6);
        assert_eq!(p.error(), 0.0);
        for (s, b) in p.multilinear().iter().enumerate().skip(1) {
            assert_eq!(*b, if s % 2 == 1 { 1.0 } else { -1.0 });
        }
        assert_eq!(SymmetricApprox::chebyshev_or(1, 0.1).unwrap().degree(), 1);
    }

    #[test]
    fn threshold_lp_certifies_alpha_at_the_lowest_degree() {
        for (k, ell) in [(2usize, 8usize), (3, 10), (5, 12), (1, 9)] {
            let alpha = 0.05;
            let p = SymmetricApprox::threshold(k, ell, alpha).unwrap();
            let f = threshold_target(k, ell);
            assert!(p.error() <= alpha);
            // the certified error is achieved on every point (up to float evaluation)
            let worst = (0..=ell)
                .map(|t| (p.value_at(t) - f[t]).abs())
                .fold(0.0f64, f64::max);
            assert!(worst <= p.error() + 1e-9 && worst >= p.error() - 1e-9);
            if k == 5 {
                // a threshold in the middle of a short range needs every degree
                assert_eq!(p.degree(), ell);
                assert_eq!(p.construction(), Construction::Exact);
                continue;
            }
            assert!(
                p.degree() < ell,
                "k = {k}, ℓ = {ell}: degree {}",
                p.degree()
            );
            // one degree lower does not reach alpha
            let lower = SymmetricApprox::lp(&f, p.degree() - 1, &LpOptions::default());
            assert!(lower.is_ok_and(|q| q.error() > alpha), "k = {k}, ℓ = {ell}");
        }
        assert!(SymmetricApprox::threshold(0, 4, 0.1).is_err());
        assert!(SymmetricApprox::threshold(5, 4, 0.1).is_err());
        assert!(SymmetricApprox::threshold(2, 4, 1.5).is_err());
    }

    #[test]
    fn lp_is_never_worse_than_chebyshev() {
        for ell in [4usize, 9, 20] {
            for d in 1..ell.min(8) {
                let c = SymmetricApprox::chebyshev_or_at_degree(ell, d).unwrap();
                let free = SymmetricApprox::lp(&or_target(ell), d, &LpOptions::default()).unwrap();
                let pinned = SymmetricApprox::lp(
                    &or_target(ell),
                    d,
                    &LpOptions {
                        pinned: vec![0],
                        norm_bound: None,
                    },
                )
                .unwrap();
                assert_certified(&free);
                assert_certified(&pinned);
                assert!(free.error() <= c.error() + 1e-7, "ℓ={ell} D={d}");
                assert!(pinned.error() <= c.error() + 1e-7, "ℓ={ell} D={d}");
                assert!(pinned.value_at(0).abs() < 1e-7);
            }
        }
    }

    #[test]
    fn lp_threshold_and_norm_bound() {
        let target = threshold_target(3, 10);
        let exact = SymmetricApprox::lp(&target, 10, &LpOptions::default()).unwrap();
        assert!(exact.error() < 1e-6, "{}", exact.error());
        let low = SymmetricApprox::lp(&target, 4, &LpOptions::default()).unwrap();
        assert_certified(&low);
        assert!(low.error() > 1e-3 && low.error() < 0.5);
        // bounding the weighted norm costs error, and is honoured
        let w: Vec<f64> = (0..=4)
            .map(|s| [1.0, 10.0, 45.0, 120.0, 210.0][s])
            .collect();
        let free_norm: f64 = low
            .multilinear()
            .iter()
            .zip(&w)
            .map(|(b, w)| b.abs() * w)
            .sum();
        let bound = free_norm / 4.0;
        let tight = SymmetricApprox::lp(
            &target,
            4,
            &LpOptions {
                pinned: vec![],
                norm_bound: Some((bound, w.clone())),
            },
        )
        .unwrap();
        let norm: f64 = tight
            .multilinear()
            .iter()
            .zip(&w)
            .map(|(b, w)| b.abs() * w)
            .sum();
        assert!(norm <= bound * (1.0 + 1e-6), "{norm} > {bound}");
        assert!(tight.error() >= low.error() - 1e-7);
    }

    #[test]
    fn bad_inputs_are_refused() {
        assert!(SymmetricApprox::chebyshev_or(0, 0.1).is_err());
        assert!(SymmetricApprox::chebyshev_or(5, 0.0).is_err());
        assert!(SymmetricApprox::chebyshev_or(5, 1.0).is_err());
        assert!(SymmetricApprox::chebyshev_or(5, f64::NAN).is_err());
        assert!(SymmetricApprox::chebyshev_or_at_degree(5, 5).is_err());
        assert!(SymmetricApprox::lp(&[0.0], 0, &LpOptions::default()).is_err());
        assert!(SymmetricApprox::lp(&[0.0, f64::INFINITY], 1, &LpOptions::default()).is_err());
        assert!(SymmetricApprox::lp(&or_target(3), 4, &LpOptions::default()).is_err());
        let pin = LpOptions {
            pinned: vec![7],
            norm_bound: None,
        };
        assert!(SymmetricApprox::lp(&or_target(3), 2, &pin).is_err());
        let infeasible = LpOptions {
            pinned: vec![1, 2],
            norm_bound: Some((1e-6, vec![1.0; 3])),
        };
        assert!(SymmetricApprox::lp(&or_target(3), 2, &infeasible).is_err());
    }
}
