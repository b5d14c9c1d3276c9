//! The polynomial release for databases of decision lists queried by points (seed 002 §4.3,
//! Lemma 4.9 / Appendix A, after Klivans and Servedio 2004).
//!
//! ## The polynomial of one list
//!
//! A record is a list "if `ℓ₁` then `o₁` … else if `ℓ_L` then `o_L` else `o_{L+1}`" (empty
//! tests dropped; `dp_queries::workload::threshold` for the data format). With `N_i(y)` the
//! number of true literals among `ℓ₁..ℓ_i` at the point `y`, telescoping gives
//! `DL(y) = o₁ + Σ_{i=1..L} c_i·[N_i(y) = 0]` with `c_i = o_{i+1} − o_i ∈ {−1, 0, 1}`.
//! Replace the indicator by a univariate `q(t) = Σ_s β_s C(t, s)` approximating `[t = 0]` on
//! `0..=L` within `e`: since `C(N_i, s) = e_s(ℓ₁, …, ℓ_i)` (the elementary symmetric
//! polynomial of the 0/1 literals),
//!
//! `P_x(y) = o₁ + Σ_s β_s Σ_S K_x(s, S)·y_S`, `K_x(s, ·) = Σ_i c_i·e_s(ℓ₁..ℓ_i)`,
//!
//! with `y_S = Π_{v∈S} y_v` after multilinear reduction (`y_v² = y_v`, `y_v(1 − y_v) = 0`) —
//! **integer** coefficients `K_x(s, S)`, monomials of size `|S| ≤ s ≤ D`. Each list switches
//! its output at most `L` times, so `|P_x(y) − DL(y)| ≤ L·e`; `q` is built within `α/L`.
//!
//! ## Release
//!
//! The integer counts `A = Σ_x o₁(x)` and `M(s, S) = Σ_x K_x(s, S)` (`s = 0..=D`, `|S| ≤ s`,
//! variables `≤ 64`) in one pass over the records, then exact discrete noise per block:
//! `A` with weight 1, block `s` with weight `|β_s|` (unmeasured when `β_s = 0`). A point `y`
//! is answered by `(A + Σ_s β_s Σ_{S ⊆ ones(y)} M(s, S))/n`, clamped to `[0, 1]`.
//!
//! ## Sensitivity (replace-one; bounds, not attained in general)
//!
//! `e_s(ℓ₁..ℓ_i)` is a sum of `C(i, s)` products of `s` literals, each expanding into at most
//! `2^s` monomials with coefficients `±1`; so `‖K_x(s)‖₁ ≤ U₁(s) = 2^s·C(L + 1, s + 1)` and
//! `‖K_x(s)‖_∞ ≤ U_∞(s) = C(L + 1, s + 1)` (`Σ_{i≤L} C(i, s) = C(L+1, s+1)`); for `s = 0`,
//! `K_x(0) = o_{L+1} − o₁`. Replacing a record moves `A` by at most 1 and block `s` by at
//! most `2U₁(s)` in ℓ₁ and `4U_∞(s)U₁(s)` in squared ℓ₂ (`‖v‖₂² ≤ ‖v‖_∞‖v‖₁`); for `s = 0`
//! by 2 and 4. Hence `Δ₁ = 1 + Σ_s |β_s|·2U₁(s)` and `Δ₂² = 1 + Σ_s β_s²·4U_∞(s)U₁(s)`,
//! and with block noise of scale `Δ₁/(ε|β_s|)` (discrete Gaussian `Δ₂²/(2ρβ_s²)`) the privacy
//! loss is at most `ε` (`ρ`), as for the other classes.

use std::collections::HashMap;

use dp_core::{StreamFamily, report_progress};
use dp_queries::{Dataset, DecisionListShape, DecisionListWorkload, Domain, Workload};
use rand::CryptoRng;
use rayon::prelude::*;

use super::approx::{LpOptions, SymmetricApprox, or_target};
use super::release::{Approximation, CountSampler, NoiseKind, PolynomialMechanism, check_records};
use crate::{Diagnostics, MechanismError, Release, Result};

/// What a decision-list release fixes before it reads a record
/// ([`PolynomialMechanism::lists_plan`]).
pub(crate) struct ListsPlan {
    shape: DecisionListShape,
    approx: SymmetricApprox,
    /// The degree `D` of `q`.
    degree: usize,
    /// The sampler of the count `A` (weight 1).
    first_sampler: CountSampler,
    /// Per block `s = 0..=D`: the sampler of its counts (weight `|β_s|`), `None` when
    /// `β_s = 0`.
    samplers: Vec<Option<CountSampler>>,
}

/// The progress stage of the counting pass over decision lists.
pub const LIST_COUNT_STAGE: &str = "expanding decision lists";

/// Rows per progress step.
const CHUNK: usize = 1 << 12;

/// `[t = 0]` on `0..=ℓ`.
pub fn zero_target(ell: usize) -> Vec<f64> {
    or_target(ell).into_iter().map(|v| 1.0 - v).collect()
}

/// The sensitivity of the released decision-list counts (module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ListSensitivity {
    /// `Δ₁ = 1 + Σ_s |β_s|·2U₁(s)`.
    pub l1: f64,
    /// `Δ₂² = 1 + Σ_s β_s²·4U_∞(s)U₁(s)`.
    pub l2_squared: f64,
}

fn binomial(n: usize, k: usize) -> f64 {
    if k > n {
        return 0.0;
    }
    (0..k).fold(1.0, |c, i| c * (n - i) as f64 / (i + 1) as f64)
}

/// The bounds `(U₁(s), U_∞(s))` on one list's block `s` (module docs).
pub fn list_block_bounds(length: usize, s: usize) -> (f64, f64) {
    if s == 0 {
        return (1.0, 1.0);
    }
    let c = binomial(length + 1, s + 1);
    (2f64.powi(s as i32) * c, c)
}

/// The sensitivity for lists of length `length` and weights `beta` (module docs).
pub fn list_sensitivity(length: usize, beta: &[f64]) -> ListSensitivity {
    let mut l1 = 1.0;
    let mut l2 = 1.0;
    for (s, &b) in beta.iter().enumerate() {
        let (u1, uinf) = list_block_bounds(length, s);
        l1 += b.abs() * 2.0 * u1;
        l2 += b * b * 4.0 * uinf * u1;
    }
    ListSensitivity { l1, l2_squared: l2 }
}

/// The monomials over `m` variables of size `≤ degree`, numbered.
#[derive(Clone, Debug)]
struct Monomials {
    coord: HashMap<u64, usize>,
}

impl Monomials {
    fn new(m: usize, degree: usize) -> Self {
        let mut coord = HashMap::new();
        let mut stack: Vec<(u64, usize, usize)> = vec![(0, 0, 0)];
        while let Some((mask, from, size)) = stack.pop() {
            let next = coord.len();
            coord.insert(mask, next);
            if size < degree {
                for v in from..m {
                    stack.push((mask | 1 << v, v + 1, size + 1));
                }
            }
        }
        Monomials { coord }
    }

    fn len(&self) -> usize {
        self.coord.len()
    }
}

/// One record's integer coefficients: `(o₁, K(s, ·) for s = 0..=degree)`, or `None` for a
/// record outside the shape.
fn expand_list(
    shape: &DecisionListShape,
    record: &[u32],
    degree: usize,
) -> Option<(i64, Vec<HashMap<u64, i64>>)> {
    let none = 2 * shape.variables as u32;
    let mut tests = Vec::new();
    let mut outs = Vec::new();
    for i in 0..shape.length {
        let t = *record.get(2 * i)?;
        if t > none {
            return None;
        }
        if t < none {
            tests.push(t);
            outs.push(i64::from(*record.get(2 * i + 1)?));
        }
    }
    outs.push(i64::from(*record.get(2 * shape.length)?));
    let mut e: Vec<HashMap<u64, i64>> = vec![HashMap::new(); degree + 1];
    e[0].insert(0, 1);
    let mut k: Vec<HashMap<u64, i64>> = vec![HashMap::new(); degree + 1];
    for (i, &t) in tests.iter().enumerate() {
        let bit = 1u64 << (t / 2);
        let positive = t.is_multiple_of(2);
        for s in (1..=degree.min(i + 1)).rev() {
            let (lo, hi) = e.split_at_mut(s);
            let prev = &lo[s - 1];
            let cur = &mut hi[0];
            for (&mask, &c) in prev {
                if positive {
                    *cur.entry(mask | bit).or_insert(0) += c;
                } else {
                    // (1 − y_v)·y_mask = y_mask − y_{mask ∪ v}
                    *cur.entry(mask).or_insert(0) += c;
                    *cur.entry(mask | bit).or_insert(0) -= c;
                }
            }
            cur.retain(|_, c| *c != 0);
        }
        let c = outs[i + 1] - outs[i];
        if c != 0 {
            for (ks, es) in k.iter_mut().zip(&e) {
                for (&mask, &v) in es {
                    *ks.entry(mask).or_insert(0) += c * v;
                }
            }
        }
    }
    Some((outs[0], k))
}

/// A released (or, in tests, exact) decision-list polynomial.
#[derive(Clone, Debug)]
pub struct ListPolynomial {
    shape: DecisionListShape,
    approx: SymmetricApprox,
    monomials: Monomials,
    first: f64,
    counts: Vec<f64>,
    n: usize,
}

impl ListPolynomial {
    /// The approximation `q` of `[t = 0]` on `0..=L`.
    pub fn approximation(&self) -> &SymmetricApprox {
        &self.approx
    }

    /// The certified error of every answer before noise: `L·error(q)`.
    pub fn certified_error(&self) -> f64 {
        self.shape.length as f64 * self.approx.error()
    }

    /// Number of counts released (`1 + (D + 1)·#monomials`).
    pub fn num_counts(&self) -> usize {
        1 + self.counts.len()
    }

    fn raw_answer(&self, y: &[bool]) -> f64 {
        let beta = self.approx.multilinear();
        let degree = beta.len() - 1;
        let ones: Vec<usize> = (0..y.len()).filter(|&v| y[v]).collect();
        let mut sum = self.first;
        // every subset S of ones(y) of size ≤ D
        let mut stack: Vec<(u64, usize, usize)> = vec![(0, 0, 0)];
        let width = self.monomials.len();
        while let Some((mask, from, size)) = stack.pop() {
            if let Some(&c) = self.monomials.coord.get(&mask) {
                for (s, &b) in beta.iter().enumerate().skip(size) {
                    if b != 0.0 {
                        sum += b * self.counts[s * width + c];
                    }
                }
            }
            if size < degree {
                for (j, &v) in ones.iter().enumerate().skip(from) {
                    stack.push((mask | 1 << v, j + 1, size + 1));
                }
            }
        }
        sum / self.n as f64
    }

    /// The answer at point `y`, clamped to `[0, 1]`.
    ///
    /// Errors: `y` of the wrong length.
    pub fn answer(&self, y: &[bool]) -> Result<f64> {
        if y.len() != self.shape.variables {
            return Err(MechanismError::Data {
                reason: format!(
                    "a point has {} bits; the lists are over {} variables",
                    y.len(),
                    self.shape.variables
                ),
            });
        }
        Ok(self.raw_answer(y).clamp(0.0, 1.0))
    }
}

/// The exact counts `(A, M)` (module docs), rayon over row ranges, progress in chunks.
fn count_lists(
    data: &Dataset,
    shape: &DecisionListShape,
    monomials: &Monomials,
    degree: usize,
    progress: Option<&dp_core::ProgressSink>,
) -> (i64, Vec<i64>) {
    let n = data.n();
    let width = monomials.len();
    let total_chunks = n.div_ceil(CHUNK);
    report_progress(progress, LIST_COUNT_STAGE, 0, total_chunks);
    let done = std::sync::atomic::AtomicUsize::new(0);
    let chunks: Vec<std::ops::Range<usize>> = (0..n)
        .step_by(CHUNK)
        .map(|s| s..(s + CHUNK).min(n))
        .collect();
    let partials: Vec<(i64, Vec<i64>)> = chunks
        .into_par_iter()
        .map(|rows| {
            let mut first = 0i64;
            let mut counts = vec![0i64; (degree + 1) * width];
            for r in rows {
                let record = data.record(r);
                if let Some((o1, k)) = expand_list(shape, &record, degree) {
                    first += o1;
                    for (s, ks) in k.iter().enumerate() {
                        for (mask, &v) in ks {
                            if let Some(&c) = monomials.coord.get(mask) {
                                counts[s * width + c] += v;
                            }
                        }
                    }
                }
            }
            let d = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            report_progress(progress, LIST_COUNT_STAGE, d, total_chunks);
            (first, counts)
        })
        .collect();
    let mut first = 0i64;
    let mut total = vec![0i64; (degree + 1) * width];
    for (f, p) in partials {
        first += f;
        for (t, c) in total.iter_mut().zip(p) {
            *t += c;
        }
    }
    (first, total)
}

impl PolynomialMechanism {
    /// The approximation `q` of `[t = 0]` on `0..=length`: within `alpha/length` at the
    /// lowest degree the linear program reaches (Chebyshev setting), at the fixed degree, or
    /// exact.
    pub fn list_approximation(&self, length: usize) -> Result<SymmetricApprox> {
        let target = zero_target(length);
        match self.approximation_setting() {
            Approximation::Chebyshev { alpha } => {
                SymmetricApprox::lp_for_error(&target, alpha / length as f64, &LpOptions::default())
            }
            Approximation::Degree(d) if d < length => {
                SymmetricApprox::lp(&target, d, &LpOptions::default())
            }
            Approximation::Degree(_) | Approximation::Exact => SymmetricApprox::exact(&target),
        }
    }

    /// Releases the noisy decision-list polynomial of `data` (module docs).
    ///
    /// Errors: the data is not a decision-list database of at most 64 variables, has no
    /// records, the memory cap, or a noise parameter out of range — before any noise.
    pub fn release_lists(&self, data: &Dataset, rng: &mut dyn CryptoRng) -> Result<ListPolynomial> {
        let plan = self.lists_plan(data.domain())?;
        check_records(data.n())?;
        let ListsPlan {
            shape,
            approx,
            degree,
            first_sampler,
            samplers,
        } = plan;
        let monomials = Monomials::new(shape.variables, degree);
        let (first, mut counts) =
            count_lists(data, &shape, &monomials, degree, self.progress_sink());
        let family = StreamFamily::fork(rng);
        let mut first = [first];
        first_sampler.add_noise(&mut first, &mut family.stream(0))?;
        let width = monomials.len();
        for (s, sampler) in samplers.iter().enumerate() {
            let block = &mut counts[s * width..(s + 1) * width];
            match sampler {
                None => block.iter_mut().for_each(|c| *c = 0),
                Some(sampler) => sampler.add_noise(block, &mut family.stream(1 + s as u64))?,
            }
        }
        Ok(ListPolynomial {
            shape,
            approx,
            monomials,
            first: first[0] as f64,
            counts: counts.into_iter().map(|c| c as f64).collect(),
            n: data.n(),
        })
    }

    /// Everything a decision-list release fixes from the public domain and the budget
    /// before it reads a record: the lists' shape (at most 64 variables), the approximation
    /// `q`, the memory of the counts within the cap, and the noise of `A` and of every block
    /// with its sampler within range. [`Self::release_lists`] and the public checks
    /// ([`crate::Mechanism::check_inputs`]) run this same code.
    pub(crate) fn lists_plan(&self, domain: &Domain) -> Result<ListsPlan> {
        let shape = DecisionListShape::of(domain)?;
        if shape.variables > 64 {
            return Err(MechanismError::InvalidParameter {
                name: "variables",
                value: shape.variables.to_string(),
                reason: "the polynomial release handles decision lists over at most 64 variables"
                    .into(),
            });
        }
        let approx = self.list_approximation(shape.length)?;
        let beta = approx.multilinear().to_vec();
        let degree = beta.len() - 1;
        let monos: f64 = (0..=degree).map(|r| binomial(shape.variables, r)).sum();
        let threads = rayon::current_num_threads() as f64;
        let need = monos * (degree + 1) as f64 * 8.0 * (threads + 2.0) + monos * 24.0;
        let cap = (self.max_memory_mib() as f64) * (1u64 << 20) as f64;
        if need > cap {
            return Err(MechanismError::InvalidParameter {
                name: "max_memory_mib",
                value: self.max_memory_mib().to_string(),
                reason: format!(
                    "the decision-list polynomial of degree {degree} over {} variables needs \
                     about {:.0} MiB; use a larger α or raise the cap",
                    shape.variables,
                    need / (1u64 << 20) as f64
                ),
            });
        }
        let sens = list_sensitivity(shape.length, &beta);
        let (base, per): (f64, fn(f64, f64) -> f64) = match self.noise_kind() {
            NoiseKind::Laplace { epsilon } => (
                crate::calibration::laplace_scale(sens.l1, epsilon),
                |b: f64, t: f64| (t / b.abs()).next_up(),
            ),
            NoiseKind::Gaussian { rho, .. } => (
                crate::calibration::gaussian_sigma2(sens.l2_squared, rho),
                |b: f64, s2: f64| (s2 / (b * b)).next_up(),
            ),
        };
        if !base.is_finite() {
            return Err(MechanismError::Numerical {
                what: "the decision-list counts' sensitivity is too large to calibrate".into(),
            });
        }
        let kind = self.noise_kind();
        let first_sampler = CountSampler::new(kind, base)?;
        let samplers = beta
            .iter()
            .map(|&b| {
                (b != 0.0)
                    .then(|| CountSampler::new(kind, per(b, base)))
                    .transpose()
            })
            .collect::<Result<_>>()?;
        Ok(ListsPlan {
            shape,
            approx,
            degree,
            first_sampler,
            samplers,
        })
    }

    /// The release for a decision-list workload: the polynomial, then every point.
    pub(crate) fn release_list_workload(
        &self,
        data: &Dataset,
        workload: &DecisionListWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<Release> {
        if data.domain() != workload.domain() {
            return Err(MechanismError::Data {
                reason: "the dataset's domain is not the workload's domain".into(),
            });
        }
        let poly = self.release_lists(data, rng)?;
        let answers = workload
            .points()
            .iter()
            .map(|y| poly.answer(y))
            .collect::<Result<Vec<f64>>>()?;
        let beta = poly.approximation().multilinear();
        let sens = list_sensitivity(poly.shape.length, beta);
        let notes = vec![
            format!(
                "decision lists of length {} over {} variables: q of degree {} ({}) \
                 approximating [t = 0] within {:.3e}, so every answer within {:.3e} before \
                 noise; {} counts",
                poly.shape.length,
                poly.shape.variables,
                poly.approximation().degree(),
                poly.approximation().construction(),
                poly.approximation().error(),
                poly.certified_error(),
                poly.num_counts()
            ),
            format!(
                "count sensitivity (bound): Δ₁ = {:.4e}, Δ₂ = {:.4e}",
                sens.l1,
                sens.l2_squared.sqrt()
            ),
        ];
        Ok(Release {
            answers,
            synthetic: None,
            certificate: self.certificate(),
            diagnostics: Diagnostics {
                notes,
                ..Diagnostics::default()
            },
        })
    }
}

/// The noiseless list polynomial (tests only).
#[cfg(test)]
pub(crate) fn noiseless_lists(data: &Dataset, approx: SymmetricApprox) -> ListPolynomial {
    let shape = DecisionListShape::of(data.domain()).unwrap();
    let degree = approx.degree();
    let monomials = Monomials::new(shape.variables, degree);
    let (first, counts) = count_lists(data, &shape, &monomials, degree, None);
    ListPolynomial {
        shape,
        approx,
        monomials,
        first: first as f64,
        counts: counts.into_iter().map(|c| c as f64).collect(),
        n: data.n(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Mechanism;
    use dp_core::PrivacyLoss;
    use dp_queries::AnyWorkload;
    use rand::SeedableRng;

    fn every_list(m: usize, len: usize) -> Dataset {
        let domain = DecisionListWorkload::domain_for(m, len).unwrap();
        let mut recs: Vec<Vec<u32>> = vec![vec![]];
        for a in 0..domain.len() {
            recs = recs
                .into_iter()
                .flat_map(|r| {
                    (0..domain.size(a)).map(move |v| {
                        let mut r = r.clone();
                        r.push(v);
                        r
                    })
                })
                .collect();
        }
        let cols = (0..domain.len())
            .map(|a| recs.iter().map(|r| r[a]).collect())
            .collect();
        Dataset::from_columns(domain, cols).unwrap()
    }

    fn points(m: usize) -> Vec<Vec<bool>> {
        (0..1u32 << m)
            .map(|b| (0..m).map(|v| b >> v & 1 == 1).collect())
            .collect()
    }

    #[test]
    fn noiseless_lists_are_exact_with_exact_q_and_within_l_times_the_error_otherwise() {
        let (m, len) = (3, 3);
        // every 11th list: the whole set is symmetric and its errors cancel
        let all = every_list(m, len);
        let cols = all
            .columns()
            .iter()
            .map(|c| c.iter().step_by(11).copied().collect())
            .collect();
        let data = Dataset::from_columns(all.domain().clone(), cols).unwrap();
        let w = DecisionListWorkload::new(data.domain(), points(m)).unwrap();
        let exact = Workload::count_all(&w, &data).unwrap();
        let q_exact = SymmetricApprox::exact(&zero_target(len)).unwrap();
        let q_low = SymmetricApprox::lp(&zero_target(len), 2, &LpOptions::default()).unwrap();
        assert!(q_low.error() > 0.01);
        for q in [q_exact, q_low] {
            let poly = noiseless_lists(&data, q);
            let bound = poly.certified_error();
            let mut worst = 0.0f64;
            // single records too: each list is within L·e at every point
            for (i, y) in w.points().iter().enumerate() {
                let got = poly.raw_answer(y);
                worst = worst.max((got - exact[i] as f64 / data.n() as f64).abs());
            }
            assert!(worst <= bound + 1e-9, "{worst} > {bound}");
            if bound == 0.0 {
                assert!(worst < 1e-9, "{worst}");
            } else {
                assert!(worst > 1e-6);
            }
        }
    }

    #[test]
    fn the_sensitivity_bounds_dominate_every_pair_of_lists() {
        let (m, len) = (2, 2);
        let data = every_list(m, len);
        let shape = DecisionListShape::of(data.domain()).unwrap();
        for q in [
            SymmetricApprox::exact(&zero_target(len)).unwrap(),
            SymmetricApprox::lp(&zero_target(len), 1, &LpOptions::default()).unwrap(),
        ] {
            let beta = q.multilinear().to_vec();
            let degree = beta.len() - 1;
            let monos = Monomials::new(m, degree);
            let width = monos.len();
            let vecs: Vec<Vec<f64>> = (0..data.n())
                .map(|r| {
                    let (o1, k) = expand_list(&shape, &data.record(r), degree).unwrap();
                    let mut v = vec![0.0; 1 + (degree + 1) * width];
                    v[0] = o1 as f64;
                    for (s, ks) in k.iter().enumerate() {
                        for (mask, &c) in ks {
                            v[1 + s * width + monos.coord[mask]] = beta[s].abs() * c as f64;
                        }
                    }
                    v
                })
                .collect();
            let (mut d1, mut d2) = (0.0f64, 0.0f64);
            for u in &vecs {
                for v in &vecs {
                    d1 = d1.max(u.iter().zip(v).map(|(a, b)| (a - b).abs()).sum());
                    d2 = d2.max(u.iter().zip(v).map(|(a, b)| (a - b) * (a - b)).sum());
                }
            }
            let sens = list_sensitivity(len, &beta);
            assert!(d1 <= sens.l1 + 1e-9, "{d1} > {}", sens.l1);
            assert!(d2 <= sens.l2_squared + 1e-9, "{d2} > {}", sens.l2_squared);
            assert!(d1 > 0.0);
        }
    }

    /// The public checks of a decision-list workload run the release's own plan: a noise
    /// parameter beyond the samplers' range (a tiny budget) is refused by both with the same
    /// error, and no records under a public n too.
    #[test]
    fn decision_list_checks_run_the_releases_plan() {
        let (m, len) = (3, 2);
        let data = every_list(m, len);
        let w = AnyWorkload::DecisionLists(
            DecisionListWorkload::new(data.domain(), points(m)).unwrap(),
        );
        for budget in [
            PrivacyLoss::Zcdp { rho: 1e-300 },
            PrivacyLoss::Pure { epsilon: 1e-300 },
        ] {
            let mech = crate::polynomial::PolynomialParams::new(budget)
                .check()
                .unwrap();
            let checked = Mechanism::<AnyWorkload>::check_inputs(&mech, &w, Some(data.n()))
                .unwrap_err()
                .to_string();
            let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(1);
            let released = Mechanism::<AnyWorkload>::release(&mech, &data, &w, &mut rng)
                .unwrap_err()
                .to_string();
            assert_eq!(checked, released);
            assert!(checked.contains("must be <="), "{checked}");
        }
        let fine = crate::polynomial::PolynomialParams::new(PrivacyLoss::Zcdp { rho: 1.0 })
            .check()
            .unwrap();
        assert!(Mechanism::<AnyWorkload>::check_inputs(&fine, &w, Some(data.n())).is_ok());
        let e = Mechanism::<AnyWorkload>::check_inputs(&fine, &w, Some(0)).unwrap_err();
        assert!(e.to_string().contains("no records"), "{e}");
    }

    #[test]
    fn the_mechanism_answers_decision_list_workloads() {
        let (m, len) = (3, 2);
        let data = every_list(m, len);
        let w = DecisionListWorkload::new(data.domain(), points(m)).unwrap();
        let exact = Workload::count_all(&w, &data).unwrap();
        let mech = crate::polynomial::PolynomialParams {
            approximation: Approximation::Exact,
            ..crate::polynomial::PolynomialParams::new(PrivacyLoss::Zcdp { rho: 400.0 })
        }
        .check()
        .unwrap();
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(3);
        let r = Mechanism::<AnyWorkload>::release(
            &mech,
            &data,
            &AnyWorkload::DecisionLists(w.clone()),
            &mut rng,
        )
        .unwrap();
        let n = data.n() as f64;
        for (a, c) in r.answers.iter().zip(&exact) {
            assert!((a - *c as f64 / n).abs() < 0.02, "{a} vs {}", *c as f64 / n);
        }
        // a point of the wrong length is refused by the evaluator
        let poly = mech.release_lists(&data, &mut rng).unwrap();
        assert!(poly.answer(&[true]).is_err());
    }
}
