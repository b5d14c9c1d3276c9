//! The baselines a local-DP researcher would run on the same marginal workloads (issue #14):
//!
//! | randomizer | client sends | source |
//! |---|---|---|
//! | [`PerAttributeRr`] | every attribute through k-ary randomized response at ε/d | Warner 1965; the k-ary form of Kairouz, Oh, Viswanath 2014 |
//! | [`SampledTableOracle`] with [`FrequencyOracle::Grr`] | one uniformly drawn table, its cell through k-ary randomized response at ε | Cormode, Kulkarni, Srivastava 2018 ("MARG" protocols) |
//! | … with [`FrequencyOracle::Olh`] | the cell hashed by a fresh random hash into `g = ⌊e^ε⌉ + 1` values, then `g`-ary randomized response | optimal local hashing, Wang, Blocki, Li, Jha 2017 |
//! | … with [`FrequencyOracle::Hadamard`] | one uniformly drawn row `r` of the Hadamard matrix and the entry `H[r, cell]` through binary randomized response | Hadamard randomized response as in Cormode, Kulkarni, Srivastava 2018 |
//! | [`FourierParity`] (binary attributes) | one uniformly drawn parity `χ_S(x)` among the Fourier coefficients the workload needs, through binary randomized response | Cormode, Kulkarni, Srivastava 2018 (their best: "INP_HT") |
//!
//! Every randomizer is ε-LDP with an exact sampler: the data-dependent draws are exact
//! Bernoulli(e^{−ε}) acceptances (dp-core), the rest (table, hash seed, Hadamard row,
//! parity) is drawn independently of the input. Each has [`ExactDistribution`]: its output
//! distribution on a finite message space, so the likelihood ratio is checked exactly in
//! the tests; the server's unbiased estimators are in `crate::server::baselines`.

use num_rational::BigRational;
use rand::{CryptoRng, RngExt};

use super::LocalRandomizer;
use super::point_release::exact_agree;
use crate::{LocalError, Result};
use dp_core::{exact_rational, sample_bernoulli_exp, sample_uniform_below};
use dp_queries::{Marginal, MarginalWorkload};

/// A randomizer whose output distribution on a finite message space can be listed.
pub trait ExactDistribution: LocalRandomizer {
    /// Every message with non-zero probability for `input`, with its probability.
    fn distribution(&self, input: &Self::Input) -> Result<Vec<(Self::Message, f64)>>;
}

fn check_epsilon(epsilon: f64) -> Result<BigRational> {
    if !(epsilon > 0.0 && epsilon.is_finite()) {
        return Err(LocalError::InvalidParameter {
            name: "epsilon",
            value: dp_core::Num(epsilon).to_string(),
            reason: "must be positive and finite".into(),
        });
    }
    Ok(exact_rational(epsilon)?)
}

/// Exactly k-ary randomized response: `value` with probability `e^ε/(e^ε + k − 1)`, each
/// other value with `1/(e^ε + k − 1)` (propose uniformly, accept the true value always and
/// another with an exact Bernoulli(e^{−ε})).
pub(crate) fn grr<R: rand::Rng + CryptoRng + ?Sized>(
    value: u32,
    k: u32,
    gamma: &BigRational,
    rng: &mut R,
) -> Result<u32> {
    loop {
        let y = sample_uniform_below(rng, u64::from(k))? as u32;
        if y == value || sample_bernoulli_exp(rng, gamma)? {
            return Ok(y);
        }
    }
}

/// The probabilities `(p, q)` of k-ary randomized response: keep, and each other value.
pub fn grr_probabilities(epsilon: f64, k: u32) -> (f64, f64) {
    let e = epsilon.exp();
    let d = e + f64::from(k) - 1.0;
    (e / d, 1.0 / d)
}

fn check_record(sizes: &[u32], record: &[u32]) -> Result<()> {
    if record.len() != sizes.len() || record.iter().zip(sizes).any(|(c, s)| c >= s) {
        return Err(LocalError::Input {
            reason: format!(
                "a record must have {} attributes, each code within its range",
                sizes.len()
            ),
        });
    }
    Ok(())
}

/// Per-attribute randomized response: each of the `d` attributes through k-ary
/// randomized response at ε/d rounded down (ε-LDP by basic composition).
#[derive(Clone, Debug)]
pub struct PerAttributeRr {
    epsilon: f64,
    gamma: BigRational,
    sizes: Vec<u32>,
}

impl PerAttributeRr {
    /// For records with attribute sizes `sizes` (at least one attribute, each ≥ 2 values).
    pub fn new(epsilon: f64, sizes: &[u32]) -> Result<Self> {
        check_epsilon(epsilon)?;
        if sizes.is_empty() || sizes.iter().any(|&s| s < 2) {
            return Err(LocalError::InvalidParameter {
                name: "sizes",
                value: sizes.len().to_string(),
                reason: "need at least one attribute, each with at least two values".into(),
            });
        }
        let per = dp_core::rounding::split_down(epsilon, sizes.len() as u64);
        Ok(PerAttributeRr {
            epsilon,
            gamma: exact_rational(per)?,
            sizes: sizes.to_vec(),
        })
    }

    /// The ε of each attribute, ε/d **rounded down** ([`dp_core::rounding::split_down`],
    /// issue #23 §2): the `d` per-attribute ε's compose (added in `f64`, or rounded up as
    /// dp-core composes) to at most ε.
    pub fn per_attribute_epsilon(&self) -> f64 {
        dp_core::rounding::split_down(self.epsilon, self.sizes.len() as u64)
    }

    /// The attribute sizes.
    pub fn sizes(&self) -> &[u32] {
        &self.sizes
    }
}

impl LocalRandomizer for PerAttributeRr {
    type Input = [u32];
    type Message = Vec<u32>;

    fn epsilon(&self) -> f64 {
        self.epsilon
    }

    fn randomize(&self, record: &[u32], rng: &mut dyn CryptoRng) -> Result<Vec<u32>> {
        check_record(&self.sizes, record)?;
        record
            .iter()
            .zip(&self.sizes)
            .map(|(&c, &k)| grr(c, k, &self.gamma, rng))
            .collect()
    }
}

impl ExactDistribution for PerAttributeRr {
    fn distribution(&self, record: &[u32]) -> Result<Vec<(Vec<u32>, f64)>> {
        check_record(&self.sizes, record)?;
        let mut out = vec![(Vec::new(), 1.0)];
        for (&c, &k) in record.iter().zip(&self.sizes) {
            let (p, q) = grr_probabilities(self.per_attribute_epsilon(), k);
            out = out
                .into_iter()
                .flat_map(|(m, pr)| {
                    (0..k).map(move |y| {
                        let mut m2 = m.clone();
                        m2.push(y);
                        (m2, pr * if y == c { p } else { q })
                    })
                })
                .collect();
        }
        Ok(out)
    }
}

/// The frequency oracle a [`SampledTableOracle`] runs on the chosen table's cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrequencyOracle {
    /// k-ary randomized response.
    Grr,
    /// Optimal local hashing (Wang, Blocki, Li, Jha 2017).
    Olh,
    /// Hadamard randomized response.
    Hadamard,
}

impl FrequencyOracle {
    /// A short name (`grr`, `olh`, `hadamard`).
    pub fn name(self) -> &'static str {
        match self {
            FrequencyOracle::Grr => "grr",
            FrequencyOracle::Olh => "olh",
            FrequencyOracle::Hadamard => "hadamard",
        }
    }
}

/// What a frequency oracle sends about one value.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum OracleReport {
    /// The randomized value.
    Grr(u32),
    /// The hash seed and the randomized hash value.
    Olh {
        /// Seed of the hash function (drawn independently of the input).
        seed: u64,
        /// The hashed value after `g`-ary randomized response.
        value: u32,
    },
    /// The Hadamard row and the randomized sign of `H[row, value]` (`true` = +1).
    Hadamard {
        /// The row, drawn uniformly and independently of the input.
        row: u32,
        /// The randomized sign.
        plus: bool,
    },
}

/// The OLH hash range `g = ⌊e^ε⌉ + 1` (Wang et al. 2017: `g = e^ε + 1` minimises the
/// variance), at least 2.
pub fn olh_range(epsilon: f64) -> u32 {
    (epsilon.exp().round() + 1.0).clamp(2.0, 1e6) as u32
}

/// The OLH hash `h_seed(value) ∈ [g]` (a SplitMix64 finaliser of seed and value; public).
pub fn olh_hash(seed: u64, value: u32, g: u32) -> u32 {
    let mut z = seed ^ (u64::from(value).wrapping_add(1)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z % u64::from(g)) as u32
}

/// `H[row, col] = (−1)^{popcount(row & col)}` as `true` for +1.
pub fn hadamard_plus(row: u32, col: u32) -> bool {
    (row & col).count_ones().is_multiple_of(2)
}

/// The order `K` of the Hadamard matrix for `k` values: the least power of two `≥ k`.
pub fn hadamard_order(k: usize) -> u32 {
    k.next_power_of_two() as u32
}

/// The frequency oracle `oracle` at ε on one value of `[k]`.
fn oracle_report<R: rand::Rng + CryptoRng + ?Sized>(
    oracle: FrequencyOracle,
    value: u32,
    k: u32,
    epsilon: f64,
    gamma: &BigRational,
    rng: &mut R,
) -> Result<OracleReport> {
    Ok(match oracle {
        FrequencyOracle::Grr => OracleReport::Grr(grr(value, k, gamma, rng)?),
        FrequencyOracle::Olh => {
            let g = olh_range(epsilon);
            let seed = rng.random::<u64>();
            let v = grr(olh_hash(seed, value, g), g, gamma, rng)?;
            OracleReport::Olh { seed, value: v }
        }
        FrequencyOracle::Hadamard => {
            let order = hadamard_order(k as usize);
            let row = sample_uniform_below(rng, u64::from(order))? as u32;
            let truth = hadamard_plus(row, value);
            let plus = if exact_agree(gamma, rng)? {
                truth
            } else {
                !truth
            };
            OracleReport::Hadamard { row, plus }
        }
    })
}

/// One client's message of a [`SampledTableOracle`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct OracleMessage {
    /// The table, drawn uniformly and independently of the record.
    pub table: usize,
    /// The frequency oracle's report on the record's cell of that table.
    pub report: OracleReport,
}

/// One uniformly drawn table, its cell through a frequency oracle at ε (ε-LDP: the table
/// does not depend on the record; every oracle is ε-LDP).
#[derive(Clone, Debug)]
pub struct SampledTableOracle {
    epsilon: f64,
    gamma: BigRational,
    oracle: FrequencyOracle,
    domain_sizes: Vec<u32>,
    tables: Vec<Marginal>,
}

impl SampledTableOracle {
    /// The randomizer for `workload` at `epsilon`.
    pub fn new(epsilon: f64, oracle: FrequencyOracle, workload: &MarginalWorkload) -> Result<Self> {
        let gamma = check_epsilon(epsilon)?;
        if workload.is_empty() || workload.marginals().iter().any(|t| t.num_cells() > 1 << 30) {
            return Err(LocalError::InvalidParameter {
                name: "workload",
                value: workload.len().to_string(),
                reason: "need at least one table, each of at most 2³⁰ cells".into(),
            });
        }
        Ok(SampledTableOracle {
            epsilon,
            gamma,
            oracle,
            domain_sizes: workload.domain().sizes().to_vec(),
            tables: workload.marginals().to_vec(),
        })
    }

    /// The frequency oracle.
    pub fn oracle(&self) -> FrequencyOracle {
        self.oracle
    }

    /// The number of cells of every table.
    pub fn table_sizes(&self) -> Vec<usize> {
        self.tables.iter().map(|t| t.num_cells()).collect()
    }

    fn cell(&self, record: &[u32], table: usize) -> Result<u32> {
        self.tables[table]
            .cell_of(record)
            .map(|c| c as u32)
            .ok_or_else(|| LocalError::Input {
                reason: "a code is outside its attribute's range".into(),
            })
    }
}

impl LocalRandomizer for SampledTableOracle {
    type Input = [u32];
    type Message = OracleMessage;

    fn epsilon(&self) -> f64 {
        self.epsilon
    }

    fn randomize(&self, record: &[u32], rng: &mut dyn CryptoRng) -> Result<OracleMessage> {
        check_record(&self.domain_sizes, record)?;
        let table = sample_uniform_below(rng, self.tables.len() as u64)? as usize;
        let k = self.tables[table].num_cells() as u32;
        let cell = self.cell(record, table)?;
        let report = oracle_report(self.oracle, cell, k, self.epsilon, &self.gamma, rng)?;
        Ok(OracleMessage { table, report })
    }
}

impl ExactDistribution for SampledTableOracle {
    /// For [`FrequencyOracle::Olh`] the distribution is listed for the hash seeds
    /// `0..OLH_SEEDS_LISTED` only, conditioned on the seed being one of them (the seed is
    /// independent of the input, so the ratio of two inputs' probabilities is the same
    /// conditioned on any seed).
    fn distribution(&self, record: &[u32]) -> Result<Vec<(OracleMessage, f64)>> {
        check_record(&self.domain_sizes, record)?;
        let m = self.tables.len() as f64;
        let mut out = Vec::new();
        for table in 0..self.tables.len() {
            let k = self.tables[table].num_cells() as u32;
            let cell = self.cell(record, table)?;
            let mut push = |report, p: f64| out.push((OracleMessage { table, report }, p / m));
            match self.oracle {
                FrequencyOracle::Grr => {
                    let (p, q) = grr_probabilities(self.epsilon, k);
                    for y in 0..k {
                        push(OracleReport::Grr(y), if y == cell { p } else { q });
                    }
                }
                FrequencyOracle::Olh => {
                    let g = olh_range(self.epsilon);
                    let (p, q) = grr_probabilities(self.epsilon, g);
                    let seeds = OLH_SEEDS_LISTED;
                    for seed in 0..seeds {
                        let h = olh_hash(seed, cell, g);
                        for value in 0..g {
                            let pr = if value == h { p } else { q };
                            push(OracleReport::Olh { seed, value }, pr / seeds as f64);
                        }
                    }
                }
                FrequencyOracle::Hadamard => {
                    let order = hadamard_order(k as usize);
                    let agree = 1.0 / (1.0 + (-self.epsilon).exp());
                    for row in 0..order {
                        let truth = hadamard_plus(row, cell);
                        for plus in [true, false] {
                            let pr = if plus == truth { agree } else { 1.0 - agree };
                            push(OracleReport::Hadamard { row, plus }, pr / f64::from(order));
                        }
                    }
                }
            }
        }
        Ok(out)
    }
}

/// Hash seeds listed by [`ExactDistribution::distribution`] for OLH.
pub const OLH_SEEDS_LISTED: u64 = 64;

/// The Fourier (parity) approach of Cormode, Kulkarni, Srivastava 2018 for marginals of
/// binary attributes: the client draws one parity `S` uniformly from the non-empty subsets
/// of the workload's tables (the Fourier coefficients its marginals need) and sends
/// `χ_S(x) = (−1)^{Σ_{a∈S} x_a}` through binary randomized response at ε.
#[derive(Clone, Debug)]
pub struct FourierParity {
    epsilon: f64,
    gamma: BigRational,
    d: usize,
    parities: Vec<u64>,
}

/// One client's message of [`FourierParity`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ParityMessage {
    /// Index of the parity in [`FourierParity::parities`].
    pub parity: usize,
    /// The randomized sign (`true` = +1).
    pub plus: bool,
}

impl FourierParity {
    /// The randomizer for `workload`, whose domain must be binary with at most 64
    /// attributes.
    pub fn new(epsilon: f64, workload: &MarginalWorkload) -> Result<Self> {
        let gamma = check_epsilon(epsilon)?;
        let sizes = workload.domain().sizes();
        if sizes.iter().any(|&s| s != 2) || sizes.len() > 64 {
            return Err(LocalError::InvalidParameter {
                name: "domain",
                value: sizes.len().to_string(),
                reason: "the Fourier approach needs binary attributes (at most 64)".into(),
            });
        }
        let mut parities = std::collections::BTreeSet::new();
        for t in workload.marginals() {
            let attrs = t.attrs();
            for mask in 1u64..(1 << attrs.len()) {
                let s = attrs
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| mask >> i & 1 == 1)
                    .fold(0u64, |acc, (_, &a)| acc | 1 << a);
                parities.insert(s);
            }
        }
        if parities.is_empty() {
            return Err(LocalError::InvalidParameter {
                name: "workload",
                value: "0".into(),
                reason: "the workload needs at least one table over an attribute".into(),
            });
        }
        Ok(FourierParity {
            epsilon,
            gamma,
            d: sizes.len(),
            parities: parities.into_iter().collect(),
        })
    }

    /// The parities (bit masks over attributes), in increasing order.
    pub fn parities(&self) -> &[u64] {
        &self.parities
    }

    fn chi(&self, record: &[u32], s: u64) -> bool {
        let ones = record
            .iter()
            .enumerate()
            .filter(|&(a, &c)| s >> a & 1 == 1 && c == 1)
            .count();
        ones.is_multiple_of(2)
    }
}

impl LocalRandomizer for FourierParity {
    type Input = [u32];
    type Message = ParityMessage;

    fn epsilon(&self) -> f64 {
        self.epsilon
    }

    fn randomize(&self, record: &[u32], rng: &mut dyn CryptoRng) -> Result<ParityMessage> {
        check_record(&vec![2; self.d], record)?;
        let parity = sample_uniform_below(rng, self.parities.len() as u64)? as usize;
        let truth = self.chi(record, self.parities[parity]);
        let plus = if exact_agree(&self.gamma, rng)? {
            truth
        } else {
            !truth
        };
        Ok(ParityMessage { parity, plus })
    }
}

impl ExactDistribution for FourierParity {
    fn distribution(&self, record: &[u32]) -> Result<Vec<(ParityMessage, f64)>> {
        check_record(&vec![2; self.d], record)?;
        let agree = 1.0 / (1.0 + (-self.epsilon).exp());
        let m = self.parities.len() as f64;
        let mut out = Vec::new();
        for (parity, &s) in self.parities.iter().enumerate() {
            let truth = self.chi(record, s);
            for plus in [true, false] {
                let p = if plus == truth { agree } else { 1.0 - agree };
                out.push((ParityMessage { parity, plus }, p / m));
            }
        }
        Ok(out)
    }
}
