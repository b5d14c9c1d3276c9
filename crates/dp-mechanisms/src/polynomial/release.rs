//! The polynomial release (seed 002 Thm 3.1 / 3.2, Thaler, Ullman and Vadhan 2012) for
//! disjunctions and conjunctions of one-hot literals, and for marginals.
//!
//! ## What is released
//!
//! A query `y` picks at most one *bit* per attribute. For disjunctions a bit is a literal
//! "attribute = code" ([`BitSense::Holds`]) and the answer on record `x` is
//! `OR(t)`, `t` = the number of the query's bits `x` holds. For conjunctions (and the cells
//! of marginal tables) the identity `∧_i ℓ_i = 1 − ∨_i ¬ℓ_i` turns the query into a
//! disjunction of the *negated* literals "attribute ≠ code" ([`BitSense::Fails`]) — the
//! expanded universe of seed 002 §4.1, which for binary attributes is `{x_i, ¬x_i}`.
//!
//! With `p` a univariate approximation of OR on `0..=k` (`k` the widest query;
//! [`crate::polynomial::approx`]), each record's answer function is approximated by the
//! multilinear polynomial `y ↦ p(Σ_{bits i of x} y_i) = Σ_{S} b_{|S|}·[x holds S]·y_S`.
//! Summed over the records, the coefficient of `y_S` is `b_{|S|}·C(S)`, with `C(S)` the
//! number of records holding every bit of `S`. So the release counts, for every set `S` of
//! bits from distinct attributes with `1 ≤ |S| ≤ D`, the records holding it — one pass over
//! the records, each visiting exactly the sets it holds: `O(n·#monomials per record)`
//! (rayon over contiguous row ranges; integer counts, so the result does not depend on the
//! thread count) — and releases the coefficients `b_{|S|}·(C(S) + Z_S)`.
//!
//! ## Data access: it needs more than the workload's counts
//!
//! The counts `C(S)` range over the bits of every set of at most `D` of the attributes the
//! queries touch, not only over the workload's queries: a workload of two 1-way tables
//! at degree 2 needs the 2-way counts across them, which its own counts do not determine.
//! So it does not release from the workload's counts ([`crate::Mechanism::counts_suffice`]
//! is false). Its counting plan ([`crate::Mechanism::counting_plan`], issue #25 item 1) is
//! the tables over every set of at most `D` of the touched attributes
//! ([`crate::CountingPlan::low_order_tables`], in the order of the coefficient blocks):
//! `C(S)` is a cell of the table over `S`'s attributes for [`BitSense::Holds`], and for
//! [`BitSense::Fails`] the sum of the cells differing from `S` on every attribute
//! (`monomial_counts`, checked against a direct count over the records). Every source
//! counts those tables; the release from records counts them on the records (in row
//! chunks, reporting "counting monomials") and runs the same code as the release from a
//! source's counts ([`crate::Mechanism::release_planned`]), so the two are the same, draw
//! for draw. Decision lists are counted from the records.
//!
//! ## Noise and privacy (replace-one neighbours, public `n`)
//!
//! The coefficient vector has sensitivity Δ
//! ([`crate::sensitivity::polynomial_coefficient_sensitivity`]). Seed 002 adds Laplace noise
//! of scale Δ₁/ε to every coefficient. The same noise, **exactly** and with integer
//! samplers: the count `C(S)` of a size-`s` set gets discrete Laplace noise of scale
//! `Δ₁/(ε|b_s|)` (discrete Gaussian of variance `Δ₂²/(2ρ b_s²)`), and the coefficient is
//! `b_s` times the noisy count. A neighbour moves each held count by at most 1, so the
//! privacy loss is at most `Σ_S |b_{|S|}|·ε/Δ₁ ≤ ε` (Laplace) and
//! `Σ_S b_{|S|}² ρ/Δ₂² ≤ ρ` (Gaussian: independent discrete Gaussians compose in zCDP), by
//! the definition of Δ over the held sets. Sizes with `b_s = 0` are not measured.
//! Add/remove neighbours are refused: the answers are normalised by the public `n`.
//!
//! ## Evaluation
//!
//! A query with bits `Q` is answered as `(b_0·n + Σ_{S ⊆ Q, 1 ≤ |S| ≤ D} coef(S))/n`
//! (conjunctions: one minus that), in `O(Σ_{s ≤ D} C(|Q|, s))` — the monomials in the
//! query's support — clamped to `[0, 1]`. With no noise the answer is within the certified
//! error of `p` of the exact answer (each record's term is within it).
//!
//! ## Memory
//!
//! The number of coefficients, `Σ_{|A| ≤ D} Π_{a∈A} size_a` over sets `A` of attributes, is
//! computed before anything is allocated ([`MonomialPlan`]); the release refuses when the
//! coefficient vector, the per-thread counts and the index would exceed the cap.

#[cfg(test)]
use std::sync::atomic::{AtomicUsize, Ordering};

use dp_core::{
    DiscreteGaussian, DiscreteLaplace, Neighbouring, PrivacyLoss, ProgressSink, StreamFamily,
    report_progress,
};
use dp_queries::{
    ConjunctionWorkload, Dataset, Domain, Literal, MarginalWorkload, QueryKind, ThresholdWorkload,
    Workload,
};
use rand::CryptoRng;
use rayon::prelude::*;

use super::approx::{SymmetricApprox, or_target, threshold_target};
use crate::sensitivity::{PolynomialSensitivity, polynomial_coefficient_sensitivity};
use crate::{
    CountingPlan, Diagnostics, Mechanism, MechanismError, PrivacyCertificate, Release, Result,
};

/// Which bits the monomials are over (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BitSense {
    /// Bit `(a, c)` is "attribute `a` = code `c`": disjunctions.
    Holds,
    /// Bit `(a, c)` is "attribute `a` ≠ code `c`": conjunctions, through `1 − OR(¬ℓ)`.
    Fails,
}

/// The size of a polynomial release, computed before anything is allocated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MonomialPlan {
    /// Sets of attributes of size `≤ D` (blocks of the coefficient vector).
    pub attribute_sets: u128,
    /// Coefficients (monomials): `Σ_{|A| ≤ D} Π_{a∈A} size_a`.
    pub coefficients: u128,
    /// Monomials one record holds (the per-record cost of the release).
    pub per_record: u128,
}

impl MonomialPlan {
    /// The plan for attributes of the given sizes at degree `degree` and bit sense.
    pub fn new(sizes: &[u32], degree: usize, sense: BitSense) -> Self {
        // elementary symmetric polynomials by dynamic programming, saturating
        let esym = |vals: &mut dyn Iterator<Item = u128>| {
            let mut e = vec![0u128; degree + 1];
            e[0] = 1;
            for v in vals {
                for s in (1..=degree).rev() {
                    e[s] = e[s].saturating_add(e[s - 1].saturating_mul(v));
                }
            }
            e
        };
        let sets = esym(&mut sizes.iter().map(|_| 1u128));
        let coeffs = esym(&mut sizes.iter().map(|&s| u128::from(s)));
        let held = esym(&mut sizes.iter().map(|&s| held_bits(s, sense)));
        let sum = |e: &[u128]| e.iter().fold(0u128, |a, &b| a.saturating_add(b));
        MonomialPlan {
            attribute_sets: sum(&sets),
            coefficients: sum(&coeffs),
            per_record: sum(&held),
        }
    }

    /// Bytes the release needs with `threads` counting threads: the coefficient vector
    /// (8 bytes each), one count vector per thread (8 bytes each) and the block index
    /// (8 bytes per attribute set).
    pub fn bytes(&self, threads: usize) -> u128 {
        let per = 8u128;
        self.coefficients
            .saturating_mul(per)
            .saturating_mul(threads as u128 + 1)
            .saturating_add(self.attribute_sets.saturating_mul(per))
    }
}

/// Bits of an attribute of size `s` one record holds.
fn held_bits(size: u32, sense: BitSense) -> u128 {
    match sense {
        BitSense::Holds => 1,
        BitSense::Fails => u128::from(size.saturating_sub(1)),
    }
}

/// Number of size-`s` sets of bits (distinct attributes) one record holds, `s = 0..=degree`,
/// as floats (exact up to 2⁵³): the `held` input of the sensitivity.
pub fn held_sets(sizes: &[u32], degree: usize, sense: BitSense) -> Vec<f64> {
    let mut e = vec![0u128; degree + 1];
    e[0] = 1;
    for &size in sizes {
        let v = held_bits(size, sense);
        for s in (1..=degree).rev() {
            e[s] = e[s].saturating_add(e[s - 1].saturating_mul(v));
        }
    }
    e.into_iter().map(|x| x as f64).collect()
}

/// The index of the coefficient vector: blocks per set of attributes (colex rank within a
/// size), mixed radix over the codes within a block.
#[derive(Clone, Debug)]
struct MonomialIndex {
    sizes: Vec<u32>,
    degree: usize,
    binom: Vec<Vec<usize>>,
    size_start: Vec<usize>,
    offsets: Vec<usize>,
    size_coord: Vec<usize>,
}

impl MonomialIndex {
    /// Builds the index; the caller has checked the [`MonomialPlan`] against the cap.
    fn new(sizes: &[u32], degree: usize) -> Self {
        let d = sizes.len();
        let mut binom = vec![vec![0usize; degree + 2]; d + 1];
        for (n, row) in binom.iter_mut().enumerate() {
            row[0] = 1;
            for k in 1..=(degree + 1).min(n) {
                // C(n, k) = C(n, k−1)·(n − k + 1)/k
                row[k] = row[k - 1] * (n - k + 1) / k;
            }
        }
        let mut size_start = vec![0usize; degree + 2];
        for s in 0..=degree {
            size_start[s + 1] = size_start[s] + binom[d][s];
        }
        let mut blocks: Vec<(usize, usize, usize)> = Vec::with_capacity(size_start[degree + 1]);
        let mut index = MonomialIndex {
            sizes: sizes.to_vec(),
            degree,
            binom,
            size_start,
            offsets: Vec::new(),
            size_coord: Vec::new(),
        };
        index.blocks(0, 0, 0, 1, &mut blocks);
        blocks.sort_unstable();
        let mut offsets = vec![0usize; index.size_start[degree + 1]];
        let mut size_coord = vec![0usize; degree + 2];
        let mut cursor = 0usize;
        for &(id, s, len) in &blocks {
            offsets[id] = cursor;
            cursor += len;
            size_coord[s + 1] = cursor;
        }
        for s in 1..size_coord.len() {
            size_coord[s] = size_coord[s].max(size_coord[s - 1]);
        }
        index.offsets = offsets;
        index.size_coord = size_coord;
        index
    }

    /// Every attribute set from position `from` on: `(id, size, block length)`.
    fn blocks(
        &self,
        from: usize,
        s: usize,
        rank: usize,
        len: usize,
        out: &mut Vec<(usize, usize, usize)>,
    ) {
        out.push((self.size_start[s] + rank, s, len));
        if s == self.degree {
            return;
        }
        for p in from..self.sizes.len() {
            self.blocks(
                p + 1,
                s + 1,
                rank + self.binom[p][s + 1],
                len * self.sizes[p] as usize,
                out,
            );
        }
    }

    /// Number of coefficients.
    fn len(&self) -> usize {
        self.size_coord[self.degree + 1]
    }

    /// The coordinates of size-`s` monomials.
    fn size_range(&self, s: usize) -> std::ops::Range<usize> {
        self.size_coord[s]..self.size_coord[s + 1]
    }

    /// Calls `visit(coordinate, size)` for every set of 1..=D bits, at most one per
    /// position, chosen from `bits[p]` (the codes at position `p`), positions ascending,
    /// extending the set `node` describes.
    fn for_each_subset(&self, bits: &[&[u32]], node: Node, visit: &mut dyn FnMut(usize, usize)) {
        let Node {
            from,
            size,
            rank,
            inner,
            mult,
        } = node;
        if size > 0 {
            visit(self.offsets[self.size_start[size] + rank] + inner, size);
        }
        if size == self.degree {
            return;
        }
        for p in from..bits.len() {
            for &c in bits[p] {
                let next = Node {
                    from: p + 1,
                    size: size + 1,
                    rank: rank + self.binom[p][size + 1],
                    inner: inner + c as usize * mult,
                    mult: mult * self.sizes[p] as usize,
                };
                self.for_each_subset(bits, next, visit);
            }
        }
    }
}

/// A partial set of bits in the enumeration: next position, size, colex rank of its
/// attributes, mixed-radix index of its codes and the radix of the next code.
#[derive(Clone, Copy, Debug)]
struct Node {
    from: usize,
    size: usize,
    rank: usize,
    inner: usize,
    mult: usize,
}

impl Node {
    const EMPTY: Node = Node {
        from: 0,
        size: 0,
        rank: 0,
        inner: 0,
        mult: 1,
    };
}

/// A released (or, in tests, exact) polynomial over the attributes it was built on: the
/// noisy monomial counts `C(S) + Z_S` and one or more approximations (targets) that turn
/// them into coefficients `b_{|S|}·(C(S) + Z_S)` (module docs).
#[derive(Clone, Debug)]
pub struct NoisyPolynomial {
    attrs: Vec<usize>,
    sense: BitSense,
    approxes: Vec<SymmetricApprox>,
    index: MonomialIndex,
    counts: Vec<f64>,
    n: usize,
}

impl NoisyPolynomial {
    /// The attributes (domain indices, ascending) the polynomial ranges over.
    pub fn attributes(&self) -> &[usize] {
        &self.attrs
    }

    /// The (first) approximation used.
    pub fn approximation(&self) -> &SymmetricApprox {
        &self.approxes[0]
    }

    /// Every approximation (target) the released counts serve, in the order given.
    pub fn approximations(&self) -> &[SymmetricApprox] {
        &self.approxes
    }

    /// The number of coefficients released.
    pub fn num_coefficients(&self) -> usize {
        self.counts.len()
    }

    /// Answers one query through approximation `target` (an index into
    /// [`Self::approximations`]): `p_target(number of the query's bits the record holds)`
    /// averaged over the records, clamped to `[0, 1]`; for [`BitSense::Fails`], one minus
    /// that. With a threshold target and [`BitSense::Holds`] this is a k-of-ℓ query.
    ///
    /// Errors: as [`Self::answer`], or no such target.
    pub fn answer_with(&self, target: usize, literals: &[Literal]) -> Result<f64> {
        Ok(self.raw_answer_with(target, literals)?.clamp(0.0, 1.0))
    }

    /// Answers one query: a disjunction of `literals` when the bits are
    /// [`BitSense::Holds`], a conjunction when [`BitSense::Fails`] (module docs), clamped to
    /// `[0, 1]`.
    ///
    /// Errors: no literals, more literals than the approximation's width, a literal on an
    /// attribute outside [`Self::attributes`] or with a code outside its domain, or two
    /// literals on one attribute.
    pub fn answer(&self, literals: &[Literal]) -> Result<f64> {
        self.answer_with(0, literals)
    }

    /// The coefficients `b_{|S|}·counts[S]` of approximation `target` (size 0 left at
    /// zero: its term is `b_0·n`).
    #[cfg(test)]
    fn coefficients_of(&self, target: usize) -> Vec<f64> {
        let b = self.approxes[target].multilinear();
        let mut out = vec![0.0; self.counts.len()];
        for (s, &bs) in b.iter().enumerate().skip(1) {
            for i in self.index.size_range(s) {
                out[i] = bs * self.counts[i];
            }
        }
        out
    }

    #[cfg(test)]
    fn raw_answer(&self, literals: &[Literal]) -> Result<f64> {
        self.raw_answer_with(0, literals)
    }

    fn raw_answer_with(&self, target: usize, literals: &[Literal]) -> Result<f64> {
        let bad = |reason: String| MechanismError::Data { reason };
        let approx = self.approxes.get(target).ok_or_else(|| {
            bad(format!(
                "this release serves {} approximations, not {}",
                self.approxes.len(),
                target + 1
            ))
        })?;
        if literals.is_empty() || literals.len() > approx.ell() {
            return Err(bad(format!(
                "a query needs between 1 and {} literals for this release, found {}",
                approx.ell(),
                literals.len()
            )));
        }
        let mut at: Vec<(usize, u32)> = Vec::with_capacity(literals.len());
        for l in literals {
            let p = self
                .attrs
                .binary_search(&(l.attr as usize))
                .map_err(|_| bad("a query reads an attribute the release does not cover".into()))?;
            if l.value >= self.index.sizes[p] {
                return Err(bad(format!(
                    "a query's code {} is outside its attribute's {} codes",
                    l.value, self.index.sizes[p]
                )));
            }
            at.push((p, l.value));
        }
        at.sort_unstable();
        if at.windows(2).any(|w| w[0].0 == w[1].0) {
            return Err(bad("a query names one attribute twice".into()));
        }
        // one code per position of the query, other positions empty
        let mut codes: Vec<Vec<u32>> = vec![Vec::new(); self.attrs.len()];
        for &(p, c) in &at {
            codes[p].push(c);
        }
        let bits: Vec<&[u32]> = codes.iter().map(|v| v.as_slice()).collect();
        let b = approx.multilinear();
        let mut sum = b[0] * self.n as f64;
        self.index
            .for_each_subset(&bits, Node::EMPTY, &mut |coord, size| {
                if let Some(bs) = b.get(size) {
                    sum += bs * self.counts[coord];
                }
            });
        let or = sum / self.n as f64;
        Ok(match self.sense {
            BitSense::Holds => or,
            BitSense::Fails => 1.0 - or,
        })
    }
}

/// Rows per progress step of the counting pass.
const COUNT_CHUNK: usize = 1 << 12;

/// The monomial counts `C(S)` (the coefficient vector's layout, size 0 left at zero) from the
/// exact counts of the tables of [`CountingPlan::low_order_tables`] over the same
/// attributes and degree: the tables come in the coefficient blocks' order (by size, then
/// colex), so table `j` fills block `j + 1`. A table's cells have the last attribute
/// fastest, a block's monomials the first, so each cell is moved to its monomial. For
/// [`BitSense::Holds`] `C(S)` is the cell of `S`'s codes; for [`BitSense::Fails`] it counts
/// the records differing from `S` on every attribute of the table, `Σ_{x: x_a ≠ c_a ∀a}
/// T[x]`, computed axis by axis (`T ↦ Σ_axis T − T` along each attribute).
///
/// Errors: counts that are not the tables' cells (another length).
fn monomial_counts(index: &MonomialIndex, sense: BitSense, tables: &[u64]) -> Result<Vec<i64>> {
    let mut out = vec![0i64; index.len()];
    let mut cursor = 0usize;
    let mut at = index.size_range(1).start;
    let bad = |what: String| MechanismError::Data { reason: what };
    for s in 1..=index.degree.min(index.sizes.len()) {
        for set in crate::plan::colex_subsets_of_size(index.sizes.len(), s) {
            let sizes: Vec<usize> = set.iter().map(|&p| index.sizes[p] as usize).collect();
            let cells: usize = sizes.iter().product();
            let table = tables
                .get(cursor..cursor + cells)
                .ok_or_else(|| bad(format!("{} table counts for the monomials", tables.len())))?;
            let mut t: Vec<i64> = table
                .iter()
                .map(|&c| i64::try_from(c).map_err(|_| bad(format!("a count {c} beyond i64"))))
                .collect::<Result<_>>()?;
            if sense == BitSense::Fails {
                let mut stride = 1usize;
                for &size in sizes.iter().rev() {
                    for base in (0..cells).filter(|b| (b / stride).is_multiple_of(size)) {
                        let sum: i64 = (0..size).map(|c| t[base + c * stride]).sum();
                        for c in 0..size {
                            t[base + c * stride] = sum - t[base + c * stride];
                        }
                    }
                    stride *= size;
                }
            }
            // cell (last attribute fastest) → monomial (first attribute fastest)
            let mut codes = vec![0usize; sizes.len()];
            for &v in &t {
                let mut inner = 0usize;
                let mut mult = 1usize;
                for (&c, &size) in codes.iter().zip(&sizes) {
                    inner += c * mult;
                    mult *= size;
                }
                out[at + inner] = v;
                for i in (0..codes.len()).rev() {
                    codes[i] += 1;
                    if codes[i] < sizes[i] {
                        break;
                    }
                    codes[i] = 0;
                }
            }
            cursor += cells;
            at += cells;
        }
    }
    if cursor != tables.len() || at != index.len() {
        return Err(bad(format!(
            "{} table counts for {} monomials",
            tables.len(),
            index.len()
        )));
    }
    Ok(out)
}

/// The exact counts `C(S)` of every monomial by a direct pass over the records (the
/// reference the tests check [`monomial_counts`] against): rayon over `threads` contiguous row ranges,
/// each counting its rows in chunks of [`COUNT_CHUNK`] and reporting the chunks done to
/// `progress` (stage "counting monomials"; the total is `⌈n / COUNT_CHUNK⌉`, public under
/// replace-one neighbours, the only relation this release accepts).
#[cfg(test)]
fn count_monomials(
    data: &Dataset,
    attrs: &[usize],
    index: &MonomialIndex,
    sense: BitSense,
    threads: usize,
    progress: Option<&ProgressSink>,
) -> Vec<i64> {
    let n = data.n();
    let len = index.len();
    let parts = threads.max(1).min(n.max(1));
    let ranges: Vec<std::ops::Range<usize>> = (0..parts)
        .map(|i| (i * n / parts)..((i + 1) * n / parts))
        .collect();
    let total_chunks = n.div_ceil(COUNT_CHUNK);
    let done = AtomicUsize::new(0);
    report_progress(progress, COUNT_STAGE, 0, total_chunks);
    let count_range = |rows: std::ops::Range<usize>| {
        let mut counts = vec![0i64; len];
        let mut codes: Vec<Vec<u32>> = vec![Vec::new(); attrs.len()];
        let start = rows.start;
        for r in rows {
            for (p, &a) in attrs.iter().enumerate() {
                let x = data.column(a)[r];
                let v = &mut codes[p];
                v.clear();
                match sense {
                    BitSense::Holds => v.push(x),
                    BitSense::Fails => v.extend((0..index.sizes[p]).filter(|&c| c != x)),
                }
            }
            let bits: Vec<&[u32]> = codes.iter().map(|v| v.as_slice()).collect();
            index.for_each_subset(&bits, Node::EMPTY, &mut |coord, _| counts[coord] += 1);
            if progress.is_some() && (r + 1 - start).is_multiple_of(COUNT_CHUNK) {
                let d = done.fetch_add(1, Ordering::Relaxed) + 1;
                report_progress(progress, COUNT_STAGE, d.min(total_chunks), total_chunks);
            }
        }
        counts
    };
    let partials: Vec<Vec<i64>> = ranges.into_par_iter().map(count_range).collect();
    let mut total = vec![0i64; len];
    for p in partials {
        for (t, c) in total.iter_mut().zip(p) {
            *t += c;
        }
    }
    report_progress(progress, COUNT_STAGE, total_chunks, total_chunks);
    total
}

/// The progress stage of the counting pass.
pub const COUNT_STAGE: &str = "counting monomials";

/// How the univariate approximation of OR is chosen.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Approximation {
    /// The Chebyshev construction with certified error at most `alpha` (seed 002 Fact 4.2).
    Chebyshev {
        /// Target approximation error, in `(0, 1)`.
        alpha: f64,
    },
    /// The minimax polynomial of this degree (linear program, `p(0) = 0` pinned).
    Degree(usize),
    /// Exact (degree = the widest query): noisy counts of every conjunction up to that width.
    Exact,
}

/// Parameters of the polynomial release, before validation; [`Self::check`] gives a
/// [`PolynomialMechanism`].
#[derive(Clone, Debug, PartialEq)]
pub struct PolynomialParams {
    /// `Pure { epsilon }`: discrete Laplace noise (Thm 3.1); `Zcdp { rho }`: discrete
    /// Gaussian noise; `Approx { epsilon, delta }`: converted to the largest ρ within it.
    pub budget: PrivacyLoss,
    /// Neighbouring relation: replace-one only (answers are normalised by the public `n`).
    pub neighbouring: Neighbouring,
    /// The approximation of OR (default Chebyshev with `alpha = 0.05`).
    pub approximation: Approximation,
    /// Refuse a release whose coefficient vector and counting buffers need more than this
    /// many MiB (default 1024).
    pub max_memory_mib: u64,
    /// Where the counting pass reports its progress (rows in chunks; default none).
    pub progress: Option<ProgressSink>,
}

impl PolynomialParams {
    /// Defaults for the given budget.
    pub fn new(budget: PrivacyLoss) -> Self {
        PolynomialParams {
            budget,
            neighbouring: Neighbouring::ReplaceOne,
            approximation: Approximation::Chebyshev { alpha: 0.05 },
            max_memory_mib: 1024,
            progress: None,
        }
    }

    /// Validates the parameters.
    pub fn check(&self) -> Result<PolynomialMechanism> {
        if self.neighbouring != Neighbouring::ReplaceOne {
            return Err(MechanismError::InvalidParameter {
                name: "neighbouring",
                value: self.neighbouring.to_string(),
                reason: "the polynomial release divides by the public number of records: use \
                         replace-one neighbours"
                    .into(),
            });
        }
        let noise = match self.budget {
            PrivacyLoss::Pure { epsilon } if epsilon > 0.0 && epsilon.is_finite() => {
                NoiseKind::Laplace { epsilon }
            }
            PrivacyLoss::Zcdp { rho } if rho > 0.0 && rho.is_finite() => {
                NoiseKind::Gaussian { rho, delta: None }
            }
            PrivacyLoss::Approx { epsilon, delta }
                if epsilon > 0.0 && delta > 0.0 && epsilon.is_finite() =>
            {
                NoiseKind::Gaussian {
                    rho: dp_core::rho_for_epsilon_delta(epsilon, delta)?,
                    delta: Some(delta),
                }
            }
            _ => {
                return Err(MechanismError::InvalidParameter {
                    name: "budget",
                    value: self.budget.to_string(),
                    reason: "give a finite ε > 0 (Laplace noise), or ρ > 0 or ε, δ > 0 \
                             (Gaussian noise)"
                        .into(),
                });
            }
        };
        match self.approximation {
            Approximation::Chebyshev { alpha } if !(alpha > 0.0 && alpha < 1.0) => {
                return Err(MechanismError::InvalidParameter {
                    name: "alpha",
                    value: alpha.to_string(),
                    reason: "the approximation error must lie strictly between 0 and 1".into(),
                });
            }
            Approximation::Degree(0) => {
                return Err(MechanismError::InvalidParameter {
                    name: "degree",
                    value: "0".into(),
                    reason: "the degree must be at least 1".into(),
                });
            }
            _ => {}
        }
        if self.max_memory_mib == 0 {
            return Err(MechanismError::InvalidParameter {
                name: "max_memory_mib",
                value: "0".into(),
                reason: "must be positive".into(),
            });
        }
        Ok(PolynomialMechanism {
            noise,
            approximation: self.approximation,
            max_memory_mib: self.max_memory_mib,
            progress: self.progress.clone(),
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum NoiseKind {
    Laplace { epsilon: f64 },
    Gaussian { rho: f64, delta: Option<f64> },
}

/// The polynomial release: pure ε-DP (Laplace) or ρ-zCDP (Gaussian) under replace-one
/// neighbours (module docs). Build it with [`PolynomialParams::check`].
#[derive(Clone, Debug, PartialEq)]
pub struct PolynomialMechanism {
    noise: NoiseKind,
    approximation: Approximation,
    max_memory_mib: u64,
    progress: Option<ProgressSink>,
}

/// The noise of a release's size-`s` counts, per size (a public function of the parameters,
/// the domain and the widest query).
#[derive(Clone, Debug, PartialEq)]
pub struct PolynomialNoise {
    /// The sensitivity of the coefficient vector.
    pub sensitivity: PolynomialSensitivity,
    /// Per size `s = 0..=D`: `None` when not measured (`s = 0`, or `b_s = 0`), else the
    /// discrete Laplace scale (pure ε) or discrete Gaussian σ² (zCDP) of the size-`s` counts.
    pub count_parameter: Vec<Option<f64>>,
    /// The noise parameter every coefficient carries: Laplace scale Δ₁/ε, or Gaussian
    /// σ² = Δ₂²/(2ρ), in coefficient units.
    pub coefficient_parameter: f64,
}

impl PolynomialMechanism {
    pub(crate) fn noise_kind(&self) -> NoiseKind {
        self.noise
    }

    pub(crate) fn approximation_setting(&self) -> Approximation {
        self.approximation
    }

    pub(crate) fn max_memory_mib(&self) -> u64 {
        self.max_memory_mib
    }

    pub(crate) fn progress_sink(&self) -> Option<&ProgressSink> {
        self.progress.as_ref()
    }

    /// The guarantee of every release.
    pub fn certificate(&self) -> PrivacyCertificate {
        let (loss, approx_equivalent) = match self.noise {
            NoiseKind::Laplace { epsilon } => (PrivacyLoss::Pure { epsilon }, None),
            NoiseKind::Gaussian { rho, delta } => {
                let loss = PrivacyLoss::Zcdp { rho };
                (loss, delta.and_then(|d| loss.to_approx(d).ok()))
            }
        };
        PrivacyCertificate {
            mechanism: "polynomial".to_string(),
            loss,
            model: crate::PrivacyModel::Central {
                neighbouring: Neighbouring::ReplaceOne,
            },
            approx_equivalent,
        }
    }

    /// The approximation of OR on `0..=width` this mechanism uses.
    pub fn approximation_for(&self, width: usize) -> Result<SymmetricApprox> {
        if width == 0 {
            return Err(MechanismError::InvalidParameter {
                name: "width",
                value: "0".into(),
                reason: "queries need at least one literal".into(),
            });
        }
        if width == 1 {
            return SymmetricApprox::exact(&or_target(1));
        }
        match self.approximation {
            Approximation::Chebyshev { alpha } => SymmetricApprox::chebyshev_or(width, alpha),
            Approximation::Degree(d) if d < width => SymmetricApprox::lp(
                &or_target(width),
                d,
                &super::approx::LpOptions {
                    pinned: vec![0],
                    norm_bound: None,
                },
            ),
            Approximation::Degree(_) | Approximation::Exact => {
                SymmetricApprox::exact(&or_target(width))
            }
        }
    }

    /// The noise of a release over attributes of the given sizes with approximation
    /// `approx` and bit sense `sense` (module docs).
    pub fn noise_for(
        &self,
        sizes: &[u32],
        approx: &SymmetricApprox,
        sense: BitSense,
    ) -> Result<PolynomialNoise> {
        self.noise_for_weights(sizes, approx.multilinear(), sense)
    }

    /// [`Self::noise_for`] with the size weights `b` given directly: for a release serving
    /// several approximations, their envelope `b̄_s = max |b_s|` ([`envelope`]), so that
    /// every approximation's coefficient `b_s·(C(S) + Z_S)` carries noise of at most the
    /// envelope's parameter.
    pub fn noise_for_weights(
        &self,
        sizes: &[u32],
        b: &[f64],
        sense: BitSense,
    ) -> Result<PolynomialNoise> {
        let held = held_sets(sizes, b.len().saturating_sub(1), sense);
        let sensitivity = polynomial_coefficient_sensitivity(b, &held, Neighbouring::ReplaceOne);
        let (coefficient_parameter, per): (f64, fn(f64, f64) -> f64) = match self.noise {
            NoiseKind::Laplace { epsilon } => {
                let t = crate::calibration::laplace_scale(sensitivity.l1, epsilon);
                (t, |bs: f64, t: f64| (t / bs.abs()).next_up())
            }
            NoiseKind::Gaussian { rho, .. } => {
                let s2 = crate::calibration::gaussian_sigma2(sensitivity.l2_squared, rho);
                (s2, |bs: f64, s2: f64| (s2 / (bs * bs)).next_up())
            }
        };
        if !coefficient_parameter.is_finite() {
            return Err(MechanismError::Numerical {
                what: "the coefficient vector's sensitivity is too large to calibrate".into(),
            });
        }
        let count_parameter = b
            .iter()
            .enumerate()
            .map(|(s, &bs)| (s > 0 && bs != 0.0).then(|| per(bs, coefficient_parameter)))
            .collect();
        Ok(PolynomialNoise {
            sensitivity,
            count_parameter,
            coefficient_parameter,
        })
    }

    /// Releases the noisy polynomial over `attrs` (domain indices) answering every
    /// disjunction (`Holds`) or conjunction (`Fails`) of up to `width` literals on them.
    ///
    /// Errors: bad attributes, the data's domain or size (no records), the memory cap, or a
    /// noise parameter out of the samplers' range — all before any noise is drawn.
    pub fn release_polynomial(
        &self,
        data: &Dataset,
        attrs: &[usize],
        sense: BitSense,
        width: usize,
        rng: &mut dyn CryptoRng,
    ) -> Result<NoisyPolynomial> {
        let approx = self.approximation_for(width)?;
        self.release_counts(data, attrs, sense, vec![approx], rng)
    }

    /// The public plan of a release of conjunctions or disjunctions (marginal cells are
    /// conjunctions): the bit sense of the class (parities are refused), the widest query,
    /// the approximation of OR on that width and the counts' plan over the attributes the
    /// queries touch ([`Self::counts_plan`]).
    fn literal_plan(&self, workload: &ConjunctionWorkload) -> Result<ReleasePlan> {
        let sense = match workload.kind() {
            QueryKind::Disjunction => BitSense::Holds,
            QueryKind::Conjunction => BitSense::Fails,
            QueryKind::Parity => {
                return Err(MechanismError::UnsupportedQueryClass {
                    mechanism: "polynomial",
                    class: Workload::class(workload),
                    supported: POLYNOMIAL_CLASSES.into(),
                });
            }
        };
        let width = (0..workload.len())
            .map(|q| workload.query(q).len())
            .max()
            .unwrap_or(1);
        let approxes = vec![self.approximation_for(width)?];
        let attrs = Workload::touched_attributes(workload);
        let counts = self.counts_plan(workload.domain(), &attrs, sense, &approxes)?;
        Ok(ReleasePlan {
            width,
            ks: Vec::new(),
            approxes,
            counts,
        })
    }

    /// The public plan of a k-of-ℓ threshold release: one approximation per distinct `k`
    /// on `0..=ℓ_max` ([`Self::threshold_approximation`]) and the counts' plan over the
    /// attributes the queries touch ([`BitSense::Holds`]).
    fn threshold_plan(&self, workload: &ThresholdWorkload) -> Result<ReleasePlan> {
        let width = workload
            .queries()
            .iter()
            .map(|q| q.literals.len())
            .max()
            .unwrap_or(1);
        let mut ks: Vec<usize> = workload.queries().iter().map(|q| q.k as usize).collect();
        ks.sort_unstable();
        ks.dedup();
        let approxes = ks
            .iter()
            .map(|&k| self.threshold_approximation(k, width))
            .collect::<Result<Vec<_>>>()?;
        let attrs = Workload::touched_attributes(workload);
        let counts = self.counts_plan(workload.domain(), &attrs, BitSense::Holds, &approxes)?;
        Ok(ReleasePlan {
            width,
            ks,
            approxes,
            counts,
        })
    }

    /// Releases the noisy monomial counts over `attrs` once for several approximations
    /// (e.g. one k-of-ℓ target per threshold `k`): the counts of size `s` carry noise
    /// calibrated to the envelope `b̄_s = max over the approximations of |b_s|`
    /// ([`Self::noise_for_weights`]), so the privacy argument of the module docs holds
    /// with `b̄` in place of `b`, and each approximation's coefficients carry at most the
    /// noise of a release for it alone at the envelope's sensitivity.
    ///
    /// Errors: as [`Self::release_polynomial`], or no approximation.
    pub fn release_counts(
        &self,
        data: &Dataset,
        attrs: &[usize],
        sense: BitSense,
        approxes: Vec<SymmetricApprox>,
        rng: &mut dyn CryptoRng,
    ) -> Result<NoisyPolynomial> {
        let plan = self.counts_plan(data.domain(), attrs, sense, &approxes)?;
        check_records(data.n())?;
        let tables = self.count_tables(data, &plan)?;
        self.draw_counts(&tables, data.n(), &plan, approxes, rng)
    }

    /// The counting plan of a release with the public `plan` ([`Mechanism::counting_plan`]):
    /// every table over a set of at most `D` of its attributes
    /// ([`CountingPlan::low_order_tables`]), in the order of the coefficient blocks.
    fn tables_plan(&self, domain: &Domain, plan: &CountsPlan) -> Result<CountingPlan> {
        CountingPlan::low_order_tables(domain, &plan.attrs, plan.degree)
    }

    /// The records path's counts: the tables of [`Self::tables_plan`] counted on `data`
    /// (in chunks of [`COUNT_CHUNK`] rows reporting "counting monomials" when a progress
    /// sink is set; the total is `⌈n / COUNT_CHUNK⌉`, public under replace-one neighbours,
    /// the only relation this release accepts) and checked as a source's counts are.
    fn count_tables(&self, data: &Dataset, plan: &CountsPlan) -> Result<Vec<u64>> {
        let tables = self.tables_plan(data.domain(), plan)?;
        let n = data.n();
        let progress = self.progress.as_ref();
        let total_chunks = n.div_ceil(COUNT_CHUNK);
        report_progress(progress, COUNT_STAGE, 0, total_chunks);
        let counts = if progress.is_none() {
            tables.count_records(data)?
        } else {
            let workload = tables.tables();
            let mut totals = vec![0i128; workload.num_queries()];
            for (i, start) in (0..n).step_by(COUNT_CHUNK).enumerate() {
                let end = (start + COUNT_CHUNK).min(n);
                let columns = data.columns().iter().map(|c| c[start..end].to_vec());
                let chunk = Dataset::from_columns(data.domain().clone(), columns.collect())?;
                workload.add_counts_into(&chunk, &mut totals, dp_queries::Parallelism::Rayon)?;
                report_progress(progress, COUNT_STAGE, i + 1, total_chunks);
            }
            totals
                .into_iter()
                .map(|t| {
                    u64::try_from(t).map_err(|_| MechanismError::Numerical {
                        what: format!("a table count {t} beyond 64 bits"),
                    })
                })
                .collect::<Result<Vec<u64>>>()?
        };
        report_progress(progress, COUNT_STAGE, total_chunks, total_chunks);
        tables.check_counts(&counts, n)?;
        Ok(counts)
    }

    /// Everything a release of the noisy monomial counts over `attrs` for `approxes` fixes
    /// from public inputs (the domain, the attributes, the approximations and the budget),
    /// before it reads a record: the attributes, the memory of the counts within the cap, the
    /// noise per size and its samplers within their range. [`Self::release_counts`] and the
    /// public checks ([`Mechanism::check_inputs`]) run this same code.
    fn counts_plan(
        &self,
        domain: &Domain,
        attrs: &[usize],
        sense: BitSense,
        approxes: &[SymmetricApprox],
    ) -> Result<CountsPlan> {
        let b = envelope(approxes).ok_or_else(|| MechanismError::InvalidParameter {
            name: "approximations",
            value: "none".into(),
            reason: "the release needs at least one approximation".into(),
        })?;
        let (attrs, sizes) = checked_attributes(domain, attrs)?;
        let degree = b.len() - 1;
        let plan = MonomialPlan::new(&sizes, degree, sense);
        let threads = rayon::current_num_threads();
        let need = plan.bytes(threads);
        let cap = u128::from(self.max_memory_mib) << 20;
        if need > cap {
            return Err(MechanismError::InvalidParameter {
                name: "max_memory_mib",
                value: self.max_memory_mib.to_string(),
                reason: format!(
                    "the polynomial of degree {degree} over {} attributes has {} coefficients \
                     and needs about {} MiB with {threads} counting threads; lower the degree \
                     (a larger α), restrict the workload to fewer attributes, or raise the cap",
                    attrs.len(),
                    plan.coefficients,
                    need.div_ceil(1 << 20)
                ),
            });
        }
        let noise = self.noise_for_weights(&sizes, &b, sense)?;
        let samplers = noise
            .count_parameter
            .iter()
            .map(|p| p.map(|p| CountSampler::new(self.noise, p)).transpose())
            .collect::<Result<_>>()?;
        Ok(CountsPlan {
            attrs,
            sizes,
            sense,
            degree,
            noise,
            samplers,
        })
    }

    /// The data part of [`Self::release_counts`] for a public `plan`, from the exact counts
    /// of its tables ([`Self::tables_plan`], checked): the monomial counts derived from them
    /// ([`monomial_counts`]), then the noise, size by size — the one path of the releases
    /// from records and from a source's counts.
    fn draw_counts(
        &self,
        tables: &[u64],
        n: usize,
        plan: &CountsPlan,
        approxes: Vec<SymmetricApprox>,
        rng: &mut dyn CryptoRng,
    ) -> Result<NoisyPolynomial> {
        let index = MonomialIndex::new(&plan.sizes, plan.degree);
        let mut counts = monomial_counts(&index, plan.sense, tables)?;
        // all checks done: draw the noise, size by size, chunks on numbered streams
        let family = StreamFamily::fork(rng);
        const CHUNK: usize = 1 << 16;
        let mut stream = 0u64;
        for (s, sampler) in plan.samplers.iter().enumerate() {
            let range = index.size_range(s);
            let Some(sampler) = sampler else {
                counts[range].iter_mut().for_each(|c| *c = 0);
                continue;
            };
            let first = stream;
            let chunks = range.len().div_ceil(CHUNK) as u64;
            stream += chunks;
            counts[range]
                .par_chunks_mut(CHUNK)
                .enumerate()
                .try_for_each(|(i, chunk)| {
                    sampler.add_noise(chunk, &mut family.stream(first + i as u64))
                })?;
        }
        Ok(NoisyPolynomial {
            attrs: plan.attrs.clone(),
            sense: plan.sense,
            approxes,
            index,
            counts: counts.into_iter().map(|c| c as f64).collect(),
            n,
        })
    }

    /// The approximation of the k-of-ℓ threshold `[t ≥ k]` on `0..=width` this mechanism
    /// uses: OR's ([`Self::approximation_for`]) for `k = 1`; otherwise the lowest-degree
    /// linear program within `alpha` ([`SymmetricApprox::threshold`]), the linear program at
    /// the fixed degree, or exact interpolation.
    ///
    /// Errors: `k ∉ 1..=width`, or the constructor's.
    pub fn threshold_approximation(&self, k: usize, width: usize) -> Result<SymmetricApprox> {
        if k == 0 || k > width {
            return Err(MechanismError::InvalidParameter {
                name: "k",
                value: k.to_string(),
                reason: format!("a threshold of a {width}-literal query needs 1 <= k <= {width}"),
            });
        }
        if k == 1 {
            return self.approximation_for(width);
        }
        let target = threshold_target(k, width);
        match self.approximation {
            Approximation::Chebyshev { alpha } => SymmetricApprox::threshold(k, width, alpha),
            Approximation::Degree(d) if d < width => {
                SymmetricApprox::lp(&target, d, &super::approx::LpOptions::default())
            }
            Approximation::Degree(_) | Approximation::Exact => SymmetricApprox::exact(&target),
        }
    }

    /// The release for k-of-ℓ thresholds: one set of noisy counts over the touched
    /// attributes ([`BitSense::Holds`]), one approximation per distinct `k` on
    /// `0..=ℓ_max` (a query with fewer literals only meets `t ≤ ℓ`, where the target is the
    /// same), noise calibrated to their envelope ([`Self::release_counts`]).
    fn release_thresholds(
        &self,
        data: &Dataset,
        workload: &ThresholdWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<Release> {
        let release_plan = self.threshold_plan(workload)?;
        check_domain(data, workload.domain())?;
        check_records(data.n())?;
        let tables = self.count_tables(data, &release_plan.counts)?;
        self.release_thresholds_from(release_plan, &tables, data.n(), workload, rng)
    }

    /// [`Self::release_thresholds`] from the exact counts of the plan's tables (checked) of
    /// a dataset of the public `n` records: the one path from records and from counts.
    fn release_thresholds_from(
        &self,
        release_plan: ReleasePlan,
        tables: &[u64],
        n: usize,
        workload: &ThresholdWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<Release> {
        let ReleasePlan {
            width,
            ks,
            approxes,
            counts: plan,
        } = release_plan;
        let poly = self.draw_counts(tables, n, &plan, approxes, rng)?;
        let answers = workload
            .queries()
            .iter()
            .map(|q| {
                let target = ks.binary_search(&(q.k as usize)).unwrap_or(0);
                poly.answer_with(target, &q.literals)
            })
            .collect::<Result<Vec<f64>>>()?;
        let (attrs, noise, degree) = (&plan.attrs, &plan.noise, plan.degree);
        let per_k: Vec<String> = ks
            .iter()
            .zip(poly.approximations())
            .map(|(k, a)| {
                format!(
                    "k = {k}: degree {} ({}), certified error {:.3e}",
                    a.degree(),
                    a.construction(),
                    a.error()
                )
            })
            .collect();
        let notes = vec![
            format!(
                "thresholds on 0..={width}: {}; {} coefficients over {} attributes",
                per_k.join("; "),
                poly.num_coefficients(),
                attrs.len()
            ),
            self.noise_note(noise),
            format!(
                "noise standard deviation of a {width}-literal answer (before clamping to \
                 [0, 1]): at most about {:.3e}",
                self.answer_noise_sd(noise, width, degree, n)
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

    /// The note on the coefficient sensitivity and noise parameter.
    fn noise_note(&self, noise: &PolynomialNoise) -> String {
        format!(
            "coefficient sensitivity: Δ₁ = {:.4e}, Δ₂ = {:.4e}; noise per coefficient: {} \
             {:.4e}",
            noise.sensitivity.l1,
            noise.sensitivity.l2_squared.sqrt(),
            match self.noise {
                NoiseKind::Laplace { .. } => "Laplace scale",
                NoiseKind::Gaussian { .. } => "Gaussian σ²",
            },
            noise.coefficient_parameter
        )
    }

    /// Standard deviation of the noise of one `width`-literal answer: at most
    /// `√(Σ_{s=1..D} C(width, s)·Var(coefficient))/n`.
    fn answer_noise_sd(
        &self,
        noise: &PolynomialNoise,
        width: usize,
        degree: usize,
        n: usize,
    ) -> f64 {
        let support: f64 = (1..=degree).map(|s| binomial(width, s)).sum::<f64>();
        let per_coef_var = match self.noise {
            NoiseKind::Laplace { .. } => 2.0 * noise.coefficient_parameter.powi(2),
            NoiseKind::Gaussian { .. } => noise.coefficient_parameter,
        };
        (support * per_coef_var).sqrt() / n as f64
    }

    fn release_literals(
        &self,
        data: &Dataset,
        workload: &ConjunctionWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<Release> {
        let release_plan = self.literal_plan(workload)?;
        check_domain(data, workload.domain())?;
        check_records(data.n())?;
        let tables = self.count_tables(data, &release_plan.counts)?;
        self.release_literals_from(release_plan, &tables, data.n(), workload, rng)
    }

    /// [`Self::release_literals`] from the exact counts of the plan's tables (checked) of a
    /// dataset of the public `n` records: the one path from records and from counts.
    fn release_literals_from(
        &self,
        release_plan: ReleasePlan,
        tables: &[u64],
        n: usize,
        workload: &ConjunctionWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<Release> {
        let ReleasePlan {
            width,
            approxes,
            counts: plan,
            ..
        } = release_plan;
        let poly = self.draw_counts(tables, n, &plan, approxes, rng)?;
        let answers = (0..workload.len())
            .map(|q| poly.answer(workload.query(q)))
            .collect::<Result<Vec<f64>>>()?;
        let approx = poly.approximation();
        let notes = vec![
            format!(
                "polynomial of degree {} ({}) approximating OR on 0..={width} with certified \
                 error {:.3e}; {} coefficients over {} attributes",
                approx.degree(),
                approx.construction(),
                approx.error(),
                poly.num_coefficients(),
                plan.attrs.len()
            ),
            self.noise_note(&plan.noise),
            format!(
                "noise standard deviation of a {width}-literal answer (before clamping to \
                 [0, 1]): about {:.3e}",
                self.answer_noise_sd(&plan.noise, width, approx.degree(), n)
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

/// The envelope `b̄_s = max_j |b^{(j)}_s|` of several approximations' multilinear
/// coefficients, up to the largest degree; `None` for no approximation.
pub fn envelope(approxes: &[SymmetricApprox]) -> Option<Vec<f64>> {
    let degree = approxes.iter().map(|a| a.degree()).max()?;
    let mut b = vec![0.0f64; degree + 1];
    for a in approxes {
        for (e, &bs) in b.iter_mut().zip(a.multilinear()) {
            *e = e.max(bs.abs());
        }
    }
    Some(b)
}

fn binomial(n: usize, k: usize) -> f64 {
    (0..k).fold(1.0, |c, i| c * (n - i) as f64 / (i + 1) as f64)
}

/// The public plan of a release ([`PolynomialMechanism::literal_plan`],
/// [`PolynomialMechanism::threshold_plan`]): the widest query, the distinct thresholds `k`
/// (empty for conjunctions and disjunctions), the approximations (one per `k`, or the one
/// of OR) and the counts' plan.
struct ReleasePlan {
    width: usize,
    ks: Vec<usize>,
    approxes: Vec<SymmetricApprox>,
    counts: CountsPlan,
}

/// What a release of noisy monomial counts fixes from public inputs before it reads a
/// record ([`PolynomialMechanism::counts_plan`]).
struct CountsPlan {
    /// Sorted, deduplicated attributes, and their sizes.
    attrs: Vec<usize>,
    sizes: Vec<u32>,
    sense: BitSense,
    /// The largest monomial size `D`.
    degree: usize,
    noise: PolynomialNoise,
    /// Per size `s = 0..=D`: the sampler of its counts, `None` when not measured.
    samplers: Vec<Option<CountSampler>>,
}

/// A sampler of the release's count noise: discrete Laplace (pure ε) or discrete Gaussian
/// (ρ-zCDP), at a calibrated parameter.
pub(crate) enum CountSampler {
    /// Discrete Laplace of this scale.
    Laplace(DiscreteLaplace),
    /// Discrete Gaussian of this σ².
    Gaussian(DiscreteGaussian),
}

impl CountSampler {
    /// The sampler of `kind`'s noise at `parameter` (the Laplace scale or the Gaussian σ²);
    /// refused when the parameter is beyond the sampler's range (a tiny budget).
    pub(crate) fn new(kind: NoiseKind, parameter: f64) -> Result<Self> {
        Ok(match kind {
            NoiseKind::Laplace { .. } => CountSampler::Laplace(DiscreteLaplace::new(parameter)?),
            NoiseKind::Gaussian { .. } => CountSampler::Gaussian(DiscreteGaussian::new(parameter)?),
        })
    }

    /// Add the noise to every count of `counts`.
    pub(crate) fn add_noise<R: rand::Rng + CryptoRng + ?Sized>(
        &self,
        counts: &mut [i64],
        rng: &mut R,
    ) -> Result<()> {
        match self {
            CountSampler::Laplace(l) => l.add_noise(counts, rng)?,
            CountSampler::Gaussian(g) => g.add_noise(counts, rng)?,
        }
        Ok(())
    }
}

/// Refuses data over another domain than the workload's (before anything is counted).
fn check_domain(data: &Dataset, domain: &Domain) -> Result<()> {
    if data.domain() != domain {
        return Err(MechanismError::Data {
            reason: "the dataset's domain is not the workload's domain".into(),
        });
    }
    Ok(())
}

/// Refuses a dataset of no records (the answers divide by n); public under replace-one,
/// so the public checks run it with the public n.
pub(crate) fn check_records(n: usize) -> Result<()> {
    if n == 0 {
        return Err(MechanismError::Data {
            reason: "the dataset has no records".into(),
        });
    }
    Ok(())
}

/// Sorted, deduplicated attributes of `domain`, with their sizes.
fn checked_attributes(domain: &Domain, attrs: &[usize]) -> Result<(Vec<usize>, Vec<u32>)> {
    let mut a = attrs.to_vec();
    a.sort_unstable();
    a.dedup();
    if a.is_empty() {
        return Err(MechanismError::InvalidParameter {
            name: "attributes",
            value: "none".into(),
            reason: "the polynomial needs at least one attribute".into(),
        });
    }
    if let Some(&bad) = a.iter().find(|&&x| x >= domain.len()) {
        return Err(MechanismError::InvalidParameter {
            name: "attributes",
            value: bad.to_string(),
            reason: format!("the data has {} attributes", domain.len()),
        });
    }
    let sizes = a.iter().map(|&x| domain.size(x)).collect();
    Ok((a, sizes))
}

impl Mechanism<ConjunctionWorkload> for PolynomialMechanism {
    fn name(&self) -> &'static str {
        "polynomial"
    }

    fn certificate(&self) -> PrivacyCertificate {
        PolynomialMechanism::certificate(self)
    }

    /// The public plan the release builds before it reads a record: the query class, the
    /// approximation of OR, the memory of the counts within the cap and the noise within
    /// the samplers' range; and, with a public n, that there are records.
    fn check_inputs(&self, workload: &ConjunctionWorkload, public_n: Option<usize>) -> Result<()> {
        self.literal_plan(workload)?;
        public_n.map_or(Ok(()), check_records)
    }

    /// Every table over at most `D` of the attributes the queries touch, and n (module
    /// docs, "Data access").
    fn counting_plan(&self, workload: &ConjunctionWorkload) -> Result<Option<CountingPlan>> {
        let plan = self.literal_plan(workload)?;
        self.tables_plan(workload.domain(), &plan.counts).map(Some)
    }

    /// The release from the exact counts of [`Mechanism::counting_plan`]'s tables: the
    /// monomial counts are functions of them, so this is [`Mechanism::release`] on any
    /// dataset with those tables, draw for draw.
    fn release_planned(
        &self,
        counts: Vec<i64>,
        n: usize,
        workload: &ConjunctionWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<Release> {
        let plan = self.literal_plan(workload)?;
        let tables = self
            .tables_plan(workload.domain(), &plan.counts)?
            .checked_counts(counts, n)?;
        self.release_literals_from(plan, &tables, n, workload, rng)
    }

    fn release(
        &self,
        data: &Dataset,
        workload: &ConjunctionWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<Release> {
        self.release_literals(data, workload, rng)
    }
}

impl Mechanism<MarginalWorkload> for PolynomialMechanism {
    fn name(&self) -> &'static str {
        "polynomial"
    }

    fn certificate(&self) -> PrivacyCertificate {
        PolynomialMechanism::certificate(self)
    }

    /// The checks of the conjunctions of the cells (as the release runs them).
    fn check_inputs(&self, workload: &MarginalWorkload, public_n: Option<usize>) -> Result<()> {
        let cells = ConjunctionWorkload::from_marginals(workload)?;
        Mechanism::<ConjunctionWorkload>::check_inputs(self, &cells, public_n)
    }

    /// The plan of the conjunctions of the cells.
    fn counting_plan(&self, workload: &MarginalWorkload) -> Result<Option<CountingPlan>> {
        let cells = ConjunctionWorkload::from_marginals(workload)?;
        Mechanism::<ConjunctionWorkload>::counting_plan(self, &cells)
    }

    fn release_planned(
        &self,
        counts: Vec<i64>,
        n: usize,
        workload: &MarginalWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<Release> {
        let cells = ConjunctionWorkload::from_marginals(workload)?;
        Mechanism::<ConjunctionWorkload>::release_planned(self, counts, n, &cells, rng)
    }

    /// Every cell of every table as a conjunction (seed 002 §4.1), in workload order.
    fn release(
        &self,
        data: &Dataset,
        workload: &MarginalWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<Release> {
        let cells = ConjunctionWorkload::from_marginals(workload)?;
        self.release_literals(data, &cells, rng)
    }
}

impl Mechanism<ThresholdWorkload> for PolynomialMechanism {
    fn name(&self) -> &'static str {
        "polynomial"
    }

    fn certificate(&self) -> PrivacyCertificate {
        PolynomialMechanism::certificate(self)
    }

    /// The public plan the release builds before it reads a record: the approximation of
    /// every threshold, the memory of the counts within the cap and the noise within the
    /// samplers' range; and, with a public n, that there are records.
    fn check_inputs(&self, workload: &ThresholdWorkload, public_n: Option<usize>) -> Result<()> {
        self.threshold_plan(workload)?;
        public_n.map_or(Ok(()), check_records)
    }

    /// Every table over at most `D` of the attributes the queries touch (`D` the largest
    /// degree of the thresholds' approximations), and n.
    fn counting_plan(&self, workload: &ThresholdWorkload) -> Result<Option<CountingPlan>> {
        let plan = self.threshold_plan(workload)?;
        self.tables_plan(workload.domain(), &plan.counts).map(Some)
    }

    /// The release from the exact counts of [`Mechanism::counting_plan`]'s tables, draw for
    /// draw the release from records.
    fn release_planned(
        &self,
        counts: Vec<i64>,
        n: usize,
        workload: &ThresholdWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<Release> {
        let plan = self.threshold_plan(workload)?;
        let tables = self
            .tables_plan(workload.domain(), &plan.counts)?
            .checked_counts(counts, n)?;
        self.release_thresholds_from(plan, &tables, n, workload, rng)
    }

    /// k-of-ℓ thresholds (seed 002 §4.2): one noisy polynomial per distinct `k` from one
    /// set of noisy counts.
    fn release(
        &self,
        data: &Dataset,
        workload: &ThresholdWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<Release> {
        self.release_thresholds(data, workload, rng)
    }
}

/// The classes the polynomial release answers, for messages.
pub const POLYNOMIAL_CLASSES: &str =
    "marginals, conjunctions, disjunctions, thresholds, decision-lists";

/// The polynomial release on a workload chosen at run time: marginals, conjunctions,
/// disjunctions, k-of-ℓ thresholds and decision-list points ([`super::lists`]); parities
/// and explicit matrices are refused by name.
impl Mechanism<dp_queries::AnyWorkload> for PolynomialMechanism {
    fn name(&self) -> &'static str {
        "polynomial"
    }

    /// No: it counts every set of at most `D` bits over the attributes the queries touch,
    /// more than the workload's counts determine (module docs, "Data access"); those are
    /// its counting plan ([`Mechanism::counting_plan`]), except for decision lists.
    fn counts_suffice(&self) -> bool {
        false
    }

    /// The class's plan: the `≤ D`-way tables for marginals, conjunctions, disjunctions and
    /// thresholds; none for decision lists (they read the records); other classes refused
    /// as the release refuses them.
    fn counting_plan(&self, workload: &dp_queries::AnyWorkload) -> Result<Option<CountingPlan>> {
        use dp_queries::AnyWorkload;
        match workload {
            AnyWorkload::Marginals(w) => Mechanism::<MarginalWorkload>::counting_plan(self, w),
            AnyWorkload::Literals(w) if w.kind() != QueryKind::Parity => {
                Mechanism::<ConjunctionWorkload>::counting_plan(self, w)
            }
            AnyWorkload::Thresholds(w) => Mechanism::<ThresholdWorkload>::counting_plan(self, w),
            AnyWorkload::DecisionLists(_) => Ok(None),
            other => Err(MechanismError::UnsupportedQueryClass {
                mechanism: "polynomial",
                class: other.class(),
                supported: POLYNOMIAL_CLASSES.into(),
            }),
        }
    }

    fn release_planned(
        &self,
        counts: Vec<i64>,
        n: usize,
        workload: &dp_queries::AnyWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<Release> {
        use dp_queries::AnyWorkload;
        match workload {
            AnyWorkload::Marginals(w) => {
                Mechanism::<MarginalWorkload>::release_planned(self, counts, n, w, rng)
            }
            AnyWorkload::Literals(w) if w.kind() != QueryKind::Parity => {
                Mechanism::<ConjunctionWorkload>::release_planned(self, counts, n, w, rng)
            }
            AnyWorkload::Thresholds(w) => {
                Mechanism::<ThresholdWorkload>::release_planned(self, counts, n, w, rng)
            }
            AnyWorkload::DecisionLists(_) => Err(MechanismError::InvalidParameter {
                name: "counts",
                value: "polynomial".into(),
                reason: "decision-list points are released from the records".into(),
            }),
            other => Err(MechanismError::UnsupportedQueryClass {
                mechanism: "polynomial",
                class: other.class(),
                supported: POLYNOMIAL_CLASSES.into(),
            }),
        }
    }

    fn certificate(&self) -> PrivacyCertificate {
        PolynomialMechanism::certificate(self)
    }

    /// The checks of the workload's class, as the release dispatches it (decision lists:
    /// `PolynomialMechanism::lists_plan` over the domain).
    fn check_inputs(
        &self,
        workload: &dp_queries::AnyWorkload,
        public_n: Option<usize>,
    ) -> Result<()> {
        use dp_queries::AnyWorkload;
        match workload {
            AnyWorkload::Marginals(w) => {
                Mechanism::<MarginalWorkload>::check_inputs(self, w, public_n)
            }
            AnyWorkload::Literals(w) if w.kind() != QueryKind::Parity => {
                Mechanism::<ConjunctionWorkload>::check_inputs(self, w, public_n)
            }
            AnyWorkload::Thresholds(w) => {
                Mechanism::<ThresholdWorkload>::check_inputs(self, w, public_n)
            }
            AnyWorkload::DecisionLists(w) => {
                self.lists_plan(w.domain())?;
                public_n.map_or(Ok(()), check_records)
            }
            other => Err(MechanismError::UnsupportedQueryClass {
                mechanism: "polynomial",
                class: other.class(),
                supported: POLYNOMIAL_CLASSES.into(),
            }),
        }
    }

    fn release(
        &self,
        data: &Dataset,
        workload: &dp_queries::AnyWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<Release> {
        use dp_queries::AnyWorkload;
        match workload {
            AnyWorkload::Marginals(w) => Mechanism::<MarginalWorkload>::release(self, data, w, rng),
            AnyWorkload::Literals(w) if w.kind() != QueryKind::Parity => {
                Mechanism::<ConjunctionWorkload>::release(self, data, w, rng)
            }
            AnyWorkload::Thresholds(w) => self.release_thresholds(data, w, rng),
            AnyWorkload::DecisionLists(w) => self.release_list_workload(data, w, rng),
            other => Err(MechanismError::UnsupportedQueryClass {
                mechanism: "polynomial",
                class: other.class(),
                supported: POLYNOMIAL_CLASSES.into(),
            }),
        }
    }
}

/// The **noiseless** polynomial (exact counts, no privacy): for tests of the evaluator and
/// for measuring the approximation error alone. Never part of a release.
#[cfg(test)]
pub(crate) fn noiseless_polynomial(
    data: &Dataset,
    attrs: &[usize],
    sense: BitSense,
    approx: SymmetricApprox,
) -> Result<NoisyPolynomial> {
    noiseless_polynomial_for(data, attrs, sense, vec![approx])
}

/// [`noiseless_polynomial`] serving several approximations.
#[cfg(test)]
pub(crate) fn noiseless_polynomial_for(
    data: &Dataset,
    attrs: &[usize],
    sense: BitSense,
    approxes: Vec<SymmetricApprox>,
) -> Result<NoisyPolynomial> {
    let (attrs, sizes) = checked_attributes(data.domain(), attrs)?;
    let degree = approxes.iter().map(|a| a.degree()).max().unwrap_or(0);
    let index = MonomialIndex::new(&sizes, degree);
    let counts = count_monomials(data, &attrs, &index, sense, 3, None);
    Ok(NoisyPolynomial {
        attrs,
        sense,
        approxes,
        index,
        counts: counts.into_iter().map(|c| c as f64).collect(),
        n: data.n(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::polynomial::approx::or_target;
    use dp_queries::{Domain, ThresholdQuery};
    use rand::RngExt;
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    fn domain(sizes: &[u32]) -> Domain {
        Domain::new(
            sizes
                .iter()
                .enumerate()
                .map(|(i, &s)| (format!("a{i}"), s))
                .collect(),
        )
        .unwrap()
    }

    fn random_data(sizes: &[u32], n: usize, seed: u64) -> Dataset {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let columns = sizes
            .iter()
            .map(|&s| (0..n).map(|_| rng.random_range(0..s)).collect())
            .collect();
        Dataset::from_columns(domain(sizes), columns).unwrap()
    }

    /// Every sensible query of 1..=width literals over the domain.
    fn all_queries(sizes: &[u32], width: usize) -> Vec<Vec<Literal>> {
        let mut out = Vec::new();
        fn rec(
            sizes: &[u32],
            from: usize,
            width: usize,
            cur: &mut Vec<Literal>,
            out: &mut Vec<Vec<Literal>>,
        ) {
            if !cur.is_empty() {
                out.push(cur.clone());
            }
            if cur.len() == width {
                return;
            }
            for a in from..sizes.len() {
                for c in 0..sizes[a] {
                    cur.push(Literal {
                        attr: a as u32,
                        value: c,
                    });
                    rec(sizes, a + 1, width, cur, out);
                    cur.pop();
                }
            }
        }
        rec(sizes, 0, width, &mut Vec::new(), &mut out);
        out
    }

    #[test]
    fn noiseless_evaluator_is_within_the_certified_error() {
        let sizes = [2u32, 3, 2, 4, 2];
        let data = random_data(&sizes, 400, 11);
        let attrs: Vec<usize> = (0..sizes.len()).collect();
        let width = 4;
        let queries = all_queries(&sizes, width);
        for (kind, sense) in [
            (QueryKind::Disjunction, BitSense::Holds),
            (QueryKind::Conjunction, BitSense::Fails),
        ] {
            let w = ConjunctionWorkload::new(data.domain(), kind, queries.clone()).unwrap();
            let exact_counts = Workload::count_all(&w, &data).unwrap();
            for approx in [
                SymmetricApprox::exact(&or_target(width)).unwrap(),
                SymmetricApprox::chebyshev_or_at_degree(width, 2).unwrap(),
                SymmetricApprox::lp(&or_target(width), 3, &Default::default()).unwrap(),
            ] {
                let err = approx.error();
                let poly = noiseless_polynomial(&data, &attrs, sense, approx).unwrap();
                let mut worst = 0.0f64;
                for (q, lits) in queries.iter().enumerate() {
                    let exact = exact_counts[q] as f64 / data.n() as f64;
                    let got = poly.raw_answer(lits).unwrap();
                    worst = worst.max((got - exact).abs());
                }
                assert!(worst <= err + 1e-9, "{kind:?}: {worst} > {err}");
                if err == 0.0 {
                    assert!(worst < 1e-9);
                } else {
                    // the error is really there (the approximation is not exact)
                    assert!(worst > 1e-6);
                }
            }
        }
    }

    /// The coefficient vector of a single record, by brute force over all monomials.
    fn record_vector(
        sizes: &[u32],
        record: &[u32],
        approx: &SymmetricApprox,
        sense: BitSense,
    ) -> Vec<f64> {
        let cols = record.iter().map(|&c| vec![c]).collect();
        let data = Dataset::from_columns(domain(sizes), cols).unwrap();
        let attrs: Vec<usize> = (0..sizes.len()).collect();
        let mut v = noiseless_polynomial(&data, &attrs, sense, approx.clone())
            .unwrap()
            .coefficients_of(0);
        // add/remove also moves the constant monomial by b_0
        v.push(approx.multilinear()[0]);
        v
    }

    #[test]
    fn coefficient_sensitivity_is_attained_by_brute_force() {
        let sizes = [2u32, 3, 2];
        let records: Vec<Vec<u32>> = (0..2)
            .flat_map(|a| (0..3).flat_map(move |b| (0..2).map(move |c| vec![a, b, c])))
            .collect();
        for approx in [
            SymmetricApprox::exact(&or_target(3)).unwrap(),
            SymmetricApprox::lp(&or_target(3), 2, &Default::default()).unwrap(),
        ] {
            for sense in [BitSense::Holds, BitSense::Fails] {
                let vecs: Vec<Vec<f64>> = records
                    .iter()
                    .map(|r| record_vector(&sizes, r, &approx, sense))
                    .collect();
                let (mut c1, mut c2, mut a1, mut a2) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
                for u in &vecs {
                    a1 = a1.max(u.iter().map(|x| x.abs()).sum());
                    a2 = a2.max(u.iter().map(|x| x * x).sum());
                    for v in &vecs {
                        c1 = c1.max(u.iter().zip(v).map(|(x, y)| (x - y).abs()).sum());
                        c2 = c2.max(u.iter().zip(v).map(|(x, y)| (x - y) * (x - y)).sum());
                    }
                }
                let held = held_sets(&sizes, approx.degree(), sense);
                let b = approx.multilinear();
                let ro = polynomial_coefficient_sensitivity(b, &held, Neighbouring::ReplaceOne);
                let ar = polynomial_coefficient_sensitivity(b, &held, Neighbouring::AddRemove);
                let close = |x: f64, y: f64| (x - y).abs() <= 1e-9 * (1.0 + y);
                assert!(c1 <= ro.l1 && c2 <= ro.l2_squared, "{sense:?}");
                assert!(a1 <= ar.l1 && a2 <= ar.l2_squared, "{sense:?}");
                // attained: every record holds the same number of sets
                assert!(close(a1, ar.l1) && close(a2, ar.l2_squared), "{sense:?}");
                if sense == BitSense::Holds {
                    assert!(close(c1, ro.l1) && close(c2, ro.l2_squared));
                }
            }
        }
    }

    /// Every k-of-ℓ query of a small domain, for several k, answered by the noiseless
    /// polynomial within each approximation's certified error, and that error is really
    /// there.
    #[test]
    fn noiseless_thresholds_are_within_the_certified_error() {
        let sizes = [2u32, 3, 2, 2, 3, 2, 2];
        let data = random_data(&sizes, 500, 21);
        let attrs: Vec<usize> = (0..sizes.len()).collect();
        let width = 6;
        let queries: Vec<Vec<Literal>> = all_queries(&sizes, width)
            .into_iter()
            .filter(|q| q.len() >= 3)
            .collect();
        let ks = [1usize, 2, 3];
        let approxes: Vec<SymmetricApprox> = ks
            .iter()
            .map(|&k| SymmetricApprox::threshold(k, width, 0.1).unwrap())
            .collect();
        for a in &approxes {
            assert!(a.error() <= 0.1, "{a:?}");
        }
        // k = 1, 2 gain a degree below the width; k = 3 (the middle) needs all of it
        assert!(approxes[0].degree() < width && approxes[1].degree() < width);
        let poly =
            noiseless_polynomial_for(&data, &attrs, BitSense::Holds, approxes.clone()).unwrap();
        for (t, &k) in ks.iter().enumerate() {
            let tq: Vec<ThresholdQuery> = queries
                .iter()
                .map(|l| ThresholdQuery {
                    k: k as u32,
                    literals: l.clone(),
                })
                .collect();
            let w = ThresholdWorkload::new(data.domain(), tq).unwrap();
            let exact = Workload::count_all(&w, &data).unwrap();
            let mut worst = 0.0f64;
            for (q, lits) in queries.iter().enumerate() {
                let got = poly.raw_answer_with(t, lits).unwrap();
                worst = worst.max((got - exact[q] as f64 / data.n() as f64).abs());
            }
            let err = approxes[t].error();
            assert!(worst <= err + 1e-9, "k = {k}: {worst} > {err}");
            if err == 0.0 {
                assert!(worst < 1e-9, "k = {k}: {worst}");
            } else {
                assert!(worst > 1e-4, "k = {k}: the error is really there ({worst})");
            }
        }
    }

    #[test]
    fn threshold_release_is_close_without_noise_and_noise_follows_the_envelope() {
        let sizes = [2u32, 2, 3, 2, 2];
        let data = random_data(&sizes, 3000, 8);
        let queries: Vec<ThresholdQuery> = all_queries(&sizes, 4)
            .into_iter()
            .filter(|q| q.len() >= 2)
            .flat_map(|l| {
                (1..=l.len()).map(move |k| ThresholdQuery {
                    k: k as u32,
                    literals: l.clone(),
                })
            })
            .collect();
        let w = ThresholdWorkload::new(data.domain(), queries).unwrap();
        let mech = PolynomialParams::new(PrivacyLoss::Zcdp { rho: 1e7 })
            .check()
            .unwrap();
        let mut rng = ChaCha20Rng::seed_from_u64(2);
        let r = Mechanism::<ThresholdWorkload>::release(&mech, &data, &w, &mut rng).unwrap();
        let exact = Workload::count_all(&w, &data).unwrap();
        let alpha = 0.05;
        let mut worst = 0.0f64;
        for (a, c) in r.answers.iter().zip(&exact) {
            worst = worst.max((a - *c as f64 / 3000.0).abs());
        }
        assert!(worst < alpha + 0.005, "{worst}");
        // the exact approximation answers exactly (up to the tiny noise)
        let exact_mech = PolynomialParams {
            approximation: Approximation::Exact,
            ..PolynomialParams::new(PrivacyLoss::Zcdp { rho: 1e9 })
        }
        .check()
        .unwrap();
        let r = Mechanism::<ThresholdWorkload>::release(&exact_mech, &data, &w, &mut rng).unwrap();
        for (a, c) in r.answers.iter().zip(&exact) {
            assert!((a - *c as f64 / 3000.0).abs() < 2e-3);
        }
        // the envelope is the coordinate-wise maximum of |b_s|
        let a1 = SymmetricApprox::exact(&threshold_target(1, 4)).unwrap();
        let a3 = SymmetricApprox::exact(&threshold_target(3, 4)).unwrap();
        let e = envelope(&[a1.clone(), a3.clone()]).unwrap();
        for (s, es) in e.iter().enumerate() {
            let m = a1.multilinear().get(s).map_or(0.0, |x| x.abs());
            let n = a3.multilinear().get(s).map_or(0.0, |x| x.abs());
            assert_eq!(*es, m.max(n));
        }
        assert!(envelope(&[]).is_none());
        // thresholds refused when k exceeds the width
        assert!(mech.threshold_approximation(5, 4).is_err());
    }

    /// The monomial counts derived from the counting plan's tables equal the direct count
    /// over the records, for both bit senses, all attributes or a subset, several degrees.
    #[test]
    fn monomial_counts_from_the_plans_tables_are_the_direct_count() {
        let cases: [(&[u32], &[usize], usize); 4] = [
            (&[2, 3, 2], &[0, 1, 2], 2),
            (&[3, 2, 4, 2], &[0, 1, 2, 3], 3),
            (&[3, 2, 4, 2], &[0, 2, 3], 2),
            (&[2, 2], &[0, 1], 2),
        ];
        for (sizes, attrs, degree) in cases {
            let data = random_data(sizes, 200, 7);
            let attr_sizes: Vec<u32> = attrs.iter().map(|&a| sizes[a]).collect();
            let index = MonomialIndex::new(&attr_sizes, degree);
            let plan = CountingPlan::low_order_tables(data.domain(), attrs, degree).unwrap();
            let tables = plan.count_records(&data).unwrap();
            for sense in [BitSense::Holds, BitSense::Fails] {
                let direct = count_monomials(&data, attrs, &index, sense, 2, None);
                assert_eq!(
                    monomial_counts(&index, sense, &tables).unwrap(),
                    direct,
                    "{sizes:?} over {attrs:?}, degree {degree}, {sense:?}"
                );
            }
            assert!(monomial_counts(&index, BitSense::Holds, &tables[1..]).is_err());
            let mut longer = tables.clone();
            longer.push(0);
            assert!(monomial_counts(&index, BitSense::Holds, &longer).is_err());
        }
    }

    #[test]
    fn counting_reports_progress_in_row_chunks() {
        use std::sync::{Arc, Mutex};
        struct Log(Mutex<Vec<(String, u64, u64)>>);
        impl dp_core::Progress for Log {
            fn report(&self, stage: &str, done: u64, total: u64) {
                self.0.lock().unwrap().push((stage.into(), done, total));
            }
        }
        let log = Arc::new(Log(Mutex::new(Vec::new())));
        let n = 3 * COUNT_CHUNK + 5;
        let data = random_data(&[2, 2, 2], n, 4);
        let w = ConjunctionWorkload::new(
            data.domain(),
            QueryKind::Disjunction,
            vec![vec![
                Literal { attr: 0, value: 1 },
                Literal { attr: 2, value: 0 },
            ]],
        )
        .unwrap();
        let mech = PolynomialParams {
            progress: Some(ProgressSink(log.clone())),
            ..PolynomialParams::new(PrivacyLoss::Pure { epsilon: 1.0 })
        }
        .check()
        .unwrap();
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        Mechanism::<ConjunctionWorkload>::release(&mech, &data, &w, &mut rng).unwrap();
        let reports = log.0.lock().unwrap().clone();
        assert!(reports.iter().all(|(s, _, t)| s == COUNT_STAGE && *t == 4));
        assert_eq!(reports.first().map(|r| r.1), Some(0));
        assert_eq!(reports.last().map(|r| r.1), Some(4));
        assert!(reports.windows(2).all(|w| w[0].1 <= w[1].1));
        assert!(reports.len() >= 3, "{reports:?}");
    }

    #[test]
    fn noise_scales_by_hand() {
        // 3 binary attributes, exact OR of width 2: b = (0, 1, −1), held = (1, 3, 3).
        // replace-one: Δ₁ = 2(3 + 3) = 12, Δ₂² = 12.
        let sizes = [2u32, 2, 2];
        let approx = SymmetricApprox::exact(&or_target(2)).unwrap();
        assert_eq!(approx.multilinear(), &[0.0, 1.0, -1.0]);
        let lap = PolynomialParams::new(PrivacyLoss::Pure { epsilon: 0.5 })
            .check()
            .unwrap();
        let n = lap.noise_for(&sizes, &approx, BitSense::Holds).unwrap();
        assert!((n.sensitivity.l1 - 12.0).abs() < 1e-9);
        assert!((n.coefficient_parameter - 24.0).abs() < 1e-9);
        assert_eq!(n.count_parameter[0], None);
        assert!((n.count_parameter[1].unwrap() - 24.0).abs() < 1e-9);
        assert!((n.count_parameter[2].unwrap() - 24.0).abs() < 1e-9);
        let gau = PolynomialParams::new(PrivacyLoss::Zcdp { rho: 0.25 })
            .check()
            .unwrap();
        let g = gau.noise_for(&sizes, &approx, BitSense::Holds).unwrap();
        assert!((g.sensitivity.l2_squared - 12.0).abs() < 1e-9);
        // σ² = 12 / (2·0.25) = 24
        assert!((g.coefficient_parameter - 24.0).abs() < 1e-9);
        // an approximation with |b_2| = 1/2 halves that size's weight: its counts get
        // scale Δ₁/(ε·|b_2|)
        let half = SymmetricApprox::lp(&[0.0, 1.0, 0.5], 2, &Default::default()).unwrap();
        let b = half.multilinear().to_vec();
        let h = lap.noise_for(&sizes, &half, BitSense::Holds).unwrap();
        let d1 = 2.0 * (b[1].abs() * 3.0 + b[2].abs() * 3.0);
        assert!((h.sensitivity.l1 - d1).abs() < 1e-9);
        assert!((h.count_parameter[2].unwrap() - d1 / 0.5 / b[2].abs()).abs() < 1e-6);
    }

    #[test]
    fn release_answers_and_refusals() {
        let sizes = [2u32, 2, 3, 2];
        let data = random_data(&sizes, 2000, 5);
        let queries = all_queries(&sizes, 3);
        let w = ConjunctionWorkload::new(data.domain(), QueryKind::Conjunction, queries).unwrap();
        let mech = PolynomialParams::new(PrivacyLoss::Zcdp { rho: 1e6 })
            .check()
            .unwrap();
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        let r = Mechanism::<ConjunctionWorkload>::release(&mech, &data, &w, &mut rng).unwrap();
        let exact = Workload::count_all(&w, &data).unwrap();
        let alpha = 0.05;
        for (a, c) in r.answers.iter().zip(&exact) {
            assert!((a - *c as f64 / 2000.0).abs() < alpha + 0.01);
        }
        // same seed, same answers
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        let again = Mechanism::<ConjunctionWorkload>::release(&mech, &data, &w, &mut rng).unwrap();
        assert_eq!(r.answers, again.answers);
        // parities refused by name
        let p = ConjunctionWorkload::new(
            data.domain(),
            QueryKind::Parity,
            vec![vec![Literal { attr: 0, value: 1 }]],
        )
        .unwrap();
        let e = Mechanism::<ConjunctionWorkload>::release(&mech, &data, &p, &mut rng).unwrap_err();
        assert!(e.to_string().contains("parities"), "{e}");
        // memory cap
        let tiny = PolynomialParams {
            max_memory_mib: 1,
            approximation: Approximation::Exact,
            ..PolynomialParams::new(PrivacyLoss::Pure { epsilon: 1.0 })
        }
        .check()
        .unwrap();
        let wide = random_data(&[40; 12], 10, 3);
        let q = vec![(0..12).map(|a| Literal { attr: a, value: 0 }).collect()];
        let w = ConjunctionWorkload::new(wide.domain(), QueryKind::Disjunction, q).unwrap();
        let e = Mechanism::<ConjunctionWorkload>::release(&tiny, &wide, &w, &mut rng).unwrap_err();
        assert!(e.to_string().contains("MiB"), "{e}");
        // add/remove refused
        let mut ar = PolynomialParams::new(PrivacyLoss::Pure { epsilon: 1.0 });
        ar.neighbouring = Neighbouring::AddRemove;
        assert!(ar.check().is_err());
    }
}
