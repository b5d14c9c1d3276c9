//! DualQuery's exact sampler of the query distribution `Qᵗ` (issue #9 item 6; seed 003
//! Alg. 2, whose Thm 4.2/4.3 assume exact sampling).
//!
//! Calibration of the χ² tests: the statistic of `N` draws over `d + 1` cells is compared
//! with `d + 2√(d·x) + 2x`, `x = ln 10⁶`, the Laurent–Massart (Ann. Stat. 2000, Lemma 1)
//! bound `P(χ²_d ≥ d + 2√(dx) + 2x) ≤ e^{−x}`: false-failure probability ≤ 1e-6 per case
//! under the χ² approximation (every expected cell count ≥ 5; smaller cells are pooled).
//! Expected probabilities are computed here from the definition
//! `Qᵗ(q) ∝ exp(η·Σ_{i<t} (q(D) − q(xⁱ)))` in `f64` (relative error ~1e-15, far below what
//! 200 000 draws can resolve), independently of the sampler's integer bookkeeping.

use std::convert::Infallible;

use dp_core::seeded_rng;
use dp_mechanisms::iterative::*;
use dp_queries::{ConjunctionWorkload, Domain, QueryKind};
use rand::RngExt;

const N: usize = 200_000;

/// A random conjunction workload over `d` binary attributes: `k` queries of 1–3 literals.
fn workload(d: usize, k: usize, seed: u64) -> ConjunctionWorkload {
    let domain = Domain::new((0..d).map(|i| (format!("x{i}"), 2)).collect()).unwrap();
    let mut rng = seeded_rng(seed);
    let queries = (0..k)
        .map(|_| {
            let len = rng.random_range(1..=3usize.min(d));
            let mut attrs: Vec<u32> = (0..d as u32).collect();
            for i in 0..len {
                let j = rng.random_range(i..d);
                attrs.swap(i, j);
            }
            attrs[..len]
                .iter()
                .map(|&a| dp_queries::Literal {
                    attr: a,
                    value: rng.random_range(0..2u32),
                })
                .collect()
        })
        .collect();
    ConjunctionWorkload::new(&domain, QueryKind::Conjunction, queries).unwrap()
}

/// `Qᵗ` from its definition (module docs): action `j < k` is `q_j`, `k + j` its negation.
fn closed_form(
    work: &ConjunctionWorkload,
    counts: &[u64],
    n: u64,
    eta: f64,
    history: &[Vec<u32>],
) -> Vec<f64> {
    let k = work.len();
    let mut r = vec![0.0f64; 2 * k];
    for j in 0..k {
        let a = counts[j] as f64 / n as f64;
        let s: f64 = history
            .iter()
            .map(|x| a - f64::from(work.evaluate(j, x)))
            .sum();
        r[j] = s;
        r[k + j] = -s;
    }
    let max = r.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let w: Vec<f64> = r.iter().map(|&x| (eta * (x - max)).exp()).collect();
    let z: f64 = w.iter().sum();
    w.into_iter().map(|x| x / z).collect()
}

/// χ² of observed counts against probabilities, pooling cells with expectation < 5; returns
/// (statistic, degrees of freedom, pooled expectation, pooled observation) — the pooled
/// cell is in the statistic only if its expectation is ≥ 5.
fn chi_square(obs: &[u64], p: &[f64], draws: usize) -> (f64, usize, f64, u64) {
    let (mut stat, mut cells) = (0.0, 0usize);
    let (mut pool_e, mut pool_o) = (0.0f64, 0u64);
    for (&o, &pi) in obs.iter().zip(p) {
        let e = pi * draws as f64;
        if e < 5.0 {
            pool_e += e;
            pool_o += o;
        } else {
            stat += (o as f64 - e).powi(2) / e;
            cells += 1;
        }
    }
    if pool_e >= 5.0 {
        stat += (pool_o as f64 - pool_e).powi(2) / pool_e;
        cells += 1;
    }
    (stat, cells.saturating_sub(1), pool_e, pool_o)
}

fn laurent_massart(df: usize) -> f64 {
    let x = (1e6f64).ln();
    df as f64 + 2.0 * (df as f64 * x).sqrt() + 2.0 * x
}

/// The exact sampler's output distribution matches the closed-form `Qᵗ` on small
/// instances: a near-uniform one (η·gaps ≈ 1e-3), moderate ones, and ones with large
/// exponents (gaps up to tens, every envelope bucket including the last one used, so the
/// Bernoulli(exp(−·)) and Bernoulli(2/e) coins all act). False failure ≤ 1e-6 per case
/// (module docs) plus ≤ 2e-7 for the pooled-cell check (P(Poisson(5) ≥ 20) < 2e-7, and
/// the pooled expectation is < 5 when it is checked this way).
#[test]
fn exact_sampler_matches_closed_form() {
    // (attributes, queries, n, η, records of history, seed)
    let cases: [(usize, usize, u64, f64, usize, u64); 6] = [
        (3, 4, 10, 1e-3, 3, 1),
        (3, 4, 10, 0.4, 5, 2),
        (4, 6, 7, 2.0, 6, 3),
        (5, 16, 50, 0.7, 8, 4),
        (6, 32, 1000, 1.5, 12, 5),
        (4, 8, 3, 3.0, 10, 6),
    ];
    for (c, &(d, k, n, eta, t, seed)) in cases.iter().enumerate() {
        let work = workload(d, k, seed);
        let mut rng = seeded_rng(100 + seed);
        let counts: Vec<u64> = (0..k).map(|_| rng.random_range(0..=n)).collect();
        let history: Vec<Vec<u32>> = (0..t)
            .map(|_| (0..d).map(|_| rng.random_range(0..2u32)).collect())
            .collect();
        let mut w = ExactQueryWeights::new(counts.clone(), n, eta).unwrap();
        for x in &history {
            w.observe(&work, x).unwrap();
        }
        let sampler = w.sampler().unwrap();
        let p = closed_form(&work, &counts, n, eta, &history);
        let mut obs = vec![0u64; 2 * k];
        let mut draw_rng = seeded_rng(200 + seed);
        for _ in 0..N {
            let (a, _) = sampler.sample(&mut draw_rng).unwrap();
            obs[a] += 1;
        }
        let (stat, df, pool_e, pool_o) = chi_square(&obs, &p, N);
        let crit = laurent_massart(df);
        assert!(
            stat < crit,
            "case {c}: χ² = {stat} ≥ {crit} (df {df}); observed {obs:?}, p {p:?}"
        );
        if pool_e < 5.0 {
            assert!(
                pool_o < 20,
                "case {c}: pooled {pool_o} vs expected {pool_e}"
            );
        }
    }
}

/// The exact gaps `γ_a` the sampler uses equal `η·(max_b S_b − S_a)/n` computed here
/// from the counts and the history in exact integers (`S_j = (t−1)c_j − n·B_j`, the
/// negation `−S_j`), with η = 0.4 taken as its exact dyadic value 3602879701896397/2⁵³.
#[test]
fn exact_gaps_are_the_rational_scores() {
    let (d, k, n) = (5usize, 12usize, 37u64);
    let work = workload(d, k, 9);
    let mut rng = seeded_rng(9);
    let counts: Vec<u64> = (0..k).map(|_| rng.random_range(0..=n)).collect();
    let history: Vec<Vec<u32>> = (0..7)
        .map(|_| (0..d).map(|_| rng.random_range(0..2u32)).collect())
        .collect();
    let mut w = ExactQueryWeights::new(counts.clone(), n, 0.4).unwrap();
    for x in &history {
        w.observe(&work, x).unwrap();
    }
    let t1 = history.len() as i128;
    let mut s = vec![0i128; 2 * k];
    for j in 0..k {
        let b: i128 = history
            .iter()
            .map(|x| i128::from(work.evaluate(j, x)))
            .sum();
        s[j] = t1 * i128::from(counts[j]) - i128::from(n) * b;
        s[k + j] = -s[j];
    }
    let smax = *s.iter().max().unwrap();
    assert_eq!(0.4f64, 3602879701896397.0 / 9007199254740992.0);
    let sampler = w.sampler().unwrap();
    for (a, &sa) in s.iter().enumerate() {
        assert_eq!(w.score(a), Some(sa));
        let (num, den) = sampler.gap(a);
        // num/den == 3602879701896397·(smax − s_a) / (2⁵³·n), cross-multiplied exactly.
        let lhs = num * (1u128 << 53) * u128::from(n);
        let rhs = 3602879701896397u128 * (smax - sa) as u128 * den;
        assert_eq!(lhs, rhs, "action {a}");
    }
}

/// A random source that replays a fixed list of words (for the reachability test).
struct Script(Vec<u64>, usize);

impl rand::TryRng for Script {
    type Error = Infallible;
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        Ok(self.try_next_u64()? as u32)
    }
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        let x = *self.0.get(self.1).expect("the script ran out of words");
        self.1 += 1;
        Ok(x)
    }
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        for b in dst {
            *b = self.try_next_u64()? as u8;
        }
        Ok(())
    }
}

impl rand::TryCryptoRng for Script {}

/// A query whose probability is below 2⁻⁵³ is still sampled with positive probability.
///
/// One query, n = 1, count 1, η = 20, one history record that does not satisfy it:
/// scores `r(q) = 1`, `r(q̄) = −1`, so `Q(q̄) = e^{−40}/(1 + e^{−40}) ≈ 4.2e-18`. The f64
/// inverse-CDF sampler used before issue #9 (weights `exp(±20)` normalised, cdf
/// `[1/(1 + e^{−40}), …]` which rounds to `[1.0, 1.0]`, uniform `u ∈ [0, 1)`) returns `q`
/// for *every* random stream: `q̄` had probability exactly 0, a support that depends on the
/// data (a neighbour with a smaller gap makes `q̄` reachable), which no finite ε covers.
///
/// The exact sampler must output `q̄` on the stream that takes the rejection sampler's
/// rare path. Its words, by dp-core's documented stream consumption (Lemire's
/// `uniform_below`, CKS Algorithm 1, module docs of `query_sampler`): `m = 2` actions,
/// `C = 1`, buckets `q → 0`, `q̄ → min(40, 1) = 1`, envelope weights `(2, 1)`;
/// * `u64::MAX`: `uniform_below(3) = 2` → bucket 1, the only member `q̄` (no draw);
/// * 39 × `(0, u64::MAX)`: each Bernoulli(e^{−1}) succeeds (`K = 1` free, `K = 2`
///   `uniform_below(2) = 0 < 1`, `K = 3` `uniform_below(3) = 2 ≥ 1` stops at odd K), then
///   Bernoulli(e^{−0}) is free — together Bernoulli(exp(−(40 − 1)));
/// * `0`: one Bernoulli(2/e): `K = 1`, Bernoulli(1/1) free, Bernoulli(ln 2) succeeds
///   (`uniform_below(2) = 0` ⇒ `K′ = 1`, Bernoulli(1/1)), so the γ/K coin fails at odd K.
#[test]
fn query_below_f64_resolution_is_reachable() {
    let domain = Domain::new(vec![("x0".into(), 2)]).unwrap();
    let work = ConjunctionWorkload::new(
        &domain,
        QueryKind::Conjunction,
        vec![vec![dp_queries::Literal { attr: 0, value: 1 }]],
    )
    .unwrap();
    let mut w = ExactQueryWeights::new(vec![1], 1, 20.0).unwrap();
    w.observe(&work, &[0]).unwrap();
    let sampler = w.sampler().unwrap();
    assert_eq!(sampler.gap(1), (40, 1));
    let mut words = vec![u64::MAX];
    for _ in 0..39 {
        words.extend([0, u64::MAX]);
    }
    words.push(0);
    let len = words.len();
    let mut script = Script(words, 0);
    let (a, proposals) = sampler.sample(&mut script).unwrap();
    assert_eq!((a, proposals), (1, 1), "the negation must be sampled");
    assert_eq!(script.1, len, "every scripted word is consumed");
}

/// The expected number of proposals per sample respects the bound of the module docs,
/// `e·(e/2)^{C−1} + m·2^{−C}`, on instances from flat to very peaked.
#[test]
fn expected_proposals_within_bound() {
    for (seed, eta, t) in [
        (1u64, 0.01, 2usize),
        (2, 0.5, 10),
        (3, 5.0, 30),
        (4, 60.0, 40),
    ] {
        let (d, k, n) = (6usize, 40usize, 100u64);
        let work = workload(d, k, seed);
        let mut rng = seeded_rng(seed);
        let counts: Vec<u64> = (0..k).map(|_| rng.random_range(0..=n)).collect();
        let mut w = ExactQueryWeights::new(counts, n, eta).unwrap();
        for _ in 0..t {
            let x: Vec<u32> = (0..d).map(|_| rng.random_range(0..2u32)).collect();
            w.observe(&work, &x).unwrap();
        }
        let s = w.sampler().unwrap();
        let (m, c) = (2.0 * k as f64, s.cap() as i32);
        let e = std::f64::consts::E;
        let bound = e * (e / 2.0).powi(c - 1) + m * 0.5f64.powi(c);
        let got = s.expected_proposals();
        assert!(
            (1.0..=bound).contains(&got),
            "η {eta}: {got} proposals vs bound {bound}"
        );
    }
}

/// DualQuery end to end: the same seed gives the same records, answers that are not
/// counts / n are refused, and the exact path reports its proposals (≥ one per sample).
#[test]
fn dual_query_seeded_and_checks_answers() {
    let work = workload(5, 20, 11);
    let n = 40usize;
    let mut rng = seeded_rng(12);
    let truth: Vec<f64> = (0..20)
        .map(|_| rng.random_range(0..=n) as f64 / n as f64)
        .collect();
    let config = DualQueryConfig {
        eta: 0.8,
        samples: 30,
        rounds: 12,
        free: FreeAttributes::Random,
    };
    let run = |seed| {
        dual_query(
            &work,
            &truth,
            n,
            &config,
            &ExhaustiveOracle::default(),
            &mut seeded_rng(seed),
        )
        .unwrap()
    };
    let (a, b) = (run(5), run(5));
    assert_eq!(a.records, b.records);
    assert_eq!(a.cost.proposals, b.cost.proposals);
    assert!(a.cost.proposals >= 12 * 30);
    let mut bad = truth.clone();
    bad[3] = 0.123456789; // not a multiple of 1/40
    assert!(
        dual_query(
            &work,
            &bad,
            n,
            &config,
            &ExhaustiveOracle::default(),
            &mut seeded_rng(5)
        )
        .is_err()
    );
}
