//! Best-response oracles for DualQuery (seed 003 §5, §6): the data player's non-private
//! optimization `argmax_x Σ_i q̂_i(x)` over sampled queries, a MAX-CSP.
//!
//! A [`BestResponseProblem`] is a list of weighted [`Clause`]s over a categorical domain.
//! Each clause is a sensible query over one-hot bits ([`Literal`] = "attribute `a` has code
//! `v`"): a conjunction (`All`), a negated conjunction (`NotAll`, i.e. the clause
//! `x̄_a ∨ x̄_b ∨ x̄_c` of §5), or a parity (`Odd` / `Even`, §6). A record assigns one code
//! to every attribute, so the **one-hot constraints** (exactly one bit per original
//! attribute) hold by construction: the oracles search records, never raw bit vectors.
//!
//! * [`ExhaustiveOracle`]: enumerates every assignment of the attributes that occur in some
//!   clause (exact; for up to ~2^22 assignments, i.e. `d ≤ ~22` binary attributes involved).
//! * [`MaxCspOracle`]: greedy + local search with restarts, then a depth-first
//!   branch-and-bound with a node limit that either proves the incumbent optimal or gives
//!   up; [`BestResponse::provably_optimal`] says which. The paper uses CPLEX with a 20 s
//!   timeout (§7 "Implementation details"); the integer-programming oracle here is
//!   [`super::ilp::IlpOracle`] (branch and bound over a pure-Rust LP relaxation).
//!
//! Attributes in no clause are *free* (§7 "Setting free attributes"): they are set by the
//! problem's [`FreeAttributes`] policy after solving.

use dp_core::seeded_rng;
use dp_queries::Literal;
use rand::RngExt;
use rayon::prelude::*;

use crate::{MechanismError, Result};

/// What a clause asks of its literals.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ClauseKind {
    /// Every literal holds (a conjunction `q`).
    All,
    /// Not every literal holds (a negated conjunction `q̄`).
    NotAll,
    /// An odd number of literals hold (a parity query).
    Odd,
    /// An even number of literals hold (a negated parity query).
    Even,
}

/// One weighted clause: `weight` copies of a sampled query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Clause {
    /// The literals, on distinct attributes.
    pub literals: Vec<Literal>,
    /// The function of the literals.
    pub kind: ClauseKind,
    /// Multiplicity (how many of the `s` samples were this query).
    pub weight: u64,
}

impl Clause {
    /// Whether `record` satisfies the clause.
    pub fn satisfied(&self, record: &[u32]) -> bool {
        let t = self
            .literals
            .iter()
            .filter(|l| record.get(l.attr as usize) == Some(&l.value))
            .count();
        Self::sat_from_count(self.kind, t, self.literals.len())
    }

    fn sat_from_count(kind: ClauseKind, t: usize, k: usize) -> bool {
        match kind {
            ClauseKind::All => t == k,
            ClauseKind::NotAll => t < k,
            ClauseKind::Odd => t % 2 == 1,
            ClauseKind::Even => t.is_multiple_of(2),
        }
    }
}

/// How attributes that occur in no clause are set (seed 003 §7 "Setting free attributes").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum FreeAttributes {
    /// Code 0 (the paper's choice for sparse real data).
    Zero,
    /// A uniformly random code (the paper's choice for the synthetic data).
    #[default]
    Random,
}

/// A best-response instance: domain sizes, weighted clauses, the free-attribute policy.
#[derive(Clone, Debug)]
pub struct BestResponseProblem {
    sizes: Vec<u32>,
    clauses: Vec<Clause>,
    free: FreeAttributes,
    /// For each attribute, its occurrences: (clause index, literal code).
    occurrences: Vec<Vec<(usize, u32)>>,
    /// Attributes occurring in some clause, by decreasing number of occurrences.
    involved: Vec<usize>,
    total_weight: u64,
}

impl BestResponseProblem {
    /// Validates the clauses against the sizes (attributes in range, distinct within a
    /// clause, codes in range, weight ≥ 1, at least one literal).
    pub fn new(sizes: Vec<u32>, clauses: Vec<Clause>, free: FreeAttributes) -> Result<Self> {
        let bad = |reason: String| MechanismError::InvalidParameter {
            name: "clauses",
            value: format!("{} clauses", clauses.len()),
            reason,
        };
        if sizes.is_empty() || sizes.contains(&0) {
            return Err(bad("every attribute needs a positive size".into()));
        }
        let mut occurrences = vec![Vec::new(); sizes.len()];
        let mut total_weight = 0u64;
        for (c, clause) in clauses.iter().enumerate() {
            if clause.literals.is_empty() || clause.weight == 0 {
                return Err(bad(format!("clause {c} is empty or has weight 0")));
            }
            for (i, l) in clause.literals.iter().enumerate() {
                let a = l.attr as usize;
                if a >= sizes.len() || l.value >= sizes[a] {
                    return Err(bad(format!("clause {c}: literal {l:?} outside the domain")));
                }
                if clause.literals[..i].iter().any(|m| m.attr == l.attr) {
                    return Err(bad(format!("clause {c} repeats attribute {a}")));
                }
                occurrences[a].push((c, l.value));
            }
            total_weight = total_weight.saturating_add(clause.weight);
        }
        let mut involved: Vec<usize> = (0..sizes.len())
            .filter(|&a| !occurrences[a].is_empty())
            .collect();
        involved.sort_by_key(|&a| std::cmp::Reverse(occurrences[a].len()));
        Ok(BestResponseProblem {
            sizes,
            clauses,
            free,
            occurrences,
            involved,
            total_weight,
        })
    }

    /// Domain sizes.
    pub fn sizes(&self) -> &[u32] {
        &self.sizes
    }

    /// The clauses.
    pub fn clauses(&self) -> &[Clause] {
        &self.clauses
    }

    /// Sum of the clause weights (an upper bound on any value).
    pub fn total_weight(&self) -> u64 {
        self.total_weight
    }

    /// Attributes that occur in some clause.
    pub fn involved(&self) -> &[usize] {
        &self.involved
    }

    /// Total weight of the clauses `record` satisfies.
    pub fn value(&self, record: &[u32]) -> u64 {
        self.clauses
            .iter()
            .filter(|c| c.satisfied(record))
            .map(|c| c.weight)
            .sum()
    }

    /// A full record: the involved attributes from `partial` (indexed like `sizes`), the
    /// free ones by the policy.
    pub(crate) fn fill_free(&self, record: &mut [u32], seed: u64) {
        let mut rng = seeded_rng(seed ^ 0x5eed_f2ee);
        for ((r, occ), &size) in record.iter_mut().zip(&self.occurrences).zip(&self.sizes) {
            if occ.is_empty() {
                *r = match self.free {
                    FreeAttributes::Zero => 0,
                    FreeAttributes::Random => rng.random_range(0..size),
                };
            }
        }
    }
}

/// An oracle's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BestResponse {
    /// The record (one code per attribute).
    pub record: Vec<u32>,
    /// Its value: total weight of satisfied clauses.
    pub value: u64,
    /// Whether the value is proven to be the maximum.
    pub provably_optimal: bool,
}

/// A (non-private) best-response solver. Randomized solvers derive their generator from
/// `seed` (the choice of record is post-processing of the private samples, so this
/// randomness needs no cryptographic quality; it is still reproducible).
pub trait BestResponseOracle: Send + Sync {
    /// Name for diagnostics.
    fn name(&self) -> &'static str;
    /// Solve `problem`.
    fn solve(&self, problem: &BestResponseProblem, seed: u64) -> Result<BestResponse>;
}

/// Exact enumeration over the assignments of the involved attributes, rayon in chunks.
#[derive(Clone, Copy, Debug)]
pub struct ExhaustiveOracle {
    /// Largest number of assignments enumerated (default 2^22); more is an error.
    pub max_assignments: u64,
}

impl Default for ExhaustiveOracle {
    fn default() -> Self {
        ExhaustiveOracle {
            max_assignments: 1 << 22,
        }
    }
}

impl BestResponseOracle for ExhaustiveOracle {
    fn name(&self) -> &'static str {
        "exhaustive"
    }

    fn solve(&self, problem: &BestResponseProblem, seed: u64) -> Result<BestResponse> {
        let inv = &problem.involved;
        let mut count: u64 = 1;
        for &a in inv {
            count = count.saturating_mul(u64::from(problem.sizes[a]));
        }
        if count > self.max_assignments {
            return Err(MechanismError::InvalidParameter {
                name: "oracle",
                value: format!("{count} assignments"),
                reason: format!(
                    "exhaustive best response is limited to {} assignments; use the MAX-CSP oracle",
                    self.max_assignments
                ),
            });
        }
        let d = problem.sizes.len();
        let decode = |mut idx: u64, rec: &mut [u32]| {
            for &a in inv.iter().rev() {
                let s = u64::from(problem.sizes[a]);
                rec[a] = (idx % s) as u32;
                idx /= s;
            }
        };
        const CHUNK: u64 = 1 << 12;
        let chunks = count.div_ceil(CHUNK);
        let (best_value, best_idx) = (0..chunks)
            .into_par_iter()
            .map(|ch| {
                let mut rec = vec![0u32; d];
                let mut best = (0u64, u64::MAX);
                for idx in ch * CHUNK..((ch + 1) * CHUNK).min(count) {
                    decode(idx, &mut rec);
                    let v = problem.value(&rec);
                    // Ties: the smallest index wins, so the result is deterministic.
                    if best.1 == u64::MAX || v > best.0 {
                        best = (v, idx);
                    }
                }
                best
            })
            .reduce(
                || (0, u64::MAX),
                |a, b| {
                    if a.1 == u64::MAX
                        || (b.1 != u64::MAX && (b.0 > a.0 || (b.0 == a.0 && b.1 < a.1)))
                    {
                        b
                    } else {
                        a
                    }
                },
            );
        let mut record = vec![0u32; d];
        decode(best_idx.min(count - 1), &mut record);
        problem.fill_free(&mut record, seed);
        Ok(BestResponse {
            record,
            value: best_value,
            provably_optimal: true,
        })
    }
}

/// MAX-CSP heuristic: greedy start + best-improvement local search with random restarts,
/// then branch and bound (bound: weight of the clauses not yet falsified) with a node
/// limit, which proves optimality when it finishes.
#[derive(Clone, Copy, Debug)]
pub struct MaxCspOracle {
    /// Random restarts of the local search after the greedy start.
    pub restarts: usize,
    /// Branch-and-bound node limit (0: no branch and bound).
    pub node_limit: u64,
}

impl Default for MaxCspOracle {
    fn default() -> Self {
        MaxCspOracle {
            restarts: 4,
            node_limit: 200_000,
        }
    }
}

/// Local-search state: an assignment and each clause's number of true literals.
struct Search<'p> {
    p: &'p BestResponseProblem,
    x: Vec<u32>,
    true_cnt: Vec<usize>,
    value: u64,
}

impl<'p> Search<'p> {
    fn new(p: &'p BestResponseProblem, x: Vec<u32>) -> Self {
        let true_cnt: Vec<usize> = p
            .clauses
            .iter()
            .map(|c| {
                c.literals
                    .iter()
                    .filter(|l| x[l.attr as usize] == l.value)
                    .count()
            })
            .collect();
        let value = p
            .clauses
            .iter()
            .zip(&true_cnt)
            .filter(|(c, t)| Clause::sat_from_count(c.kind, **t, c.literals.len()))
            .map(|(c, _)| c.weight)
            .sum();
        Search {
            p,
            x,
            true_cnt,
            value,
        }
    }

    /// Value change of every code of attribute `a` (index = code), O(deg(a) + size(a)).
    fn deltas(&self, a: usize, out: &mut Vec<i64>) {
        let size = self.p.sizes[a] as usize;
        out.clear();
        out.resize(size, 0);
        let u = self.x[a];
        // `common`: change for every v ≠ u from clauses whose literal is currently true;
        // specific: extra change for v = w from clauses whose literal (a, w) is false now.
        let mut common = 0i64;
        for &(c, w) in &self.p.occurrences[a] {
            let cl = &self.p.clauses[c];
            let k = cl.literals.len();
            let t = self.true_cnt[c];
            let before = Clause::sat_from_count(cl.kind, t, k) as i64;
            let wt = cl.weight as i64;
            if w == u {
                let after = Clause::sat_from_count(cl.kind, t - 1, k) as i64;
                common += wt * (after - before);
            } else {
                let after = Clause::sat_from_count(cl.kind, t + 1, k) as i64;
                out[w as usize] += wt * (after - before);
            }
        }
        for (v, o) in out.iter_mut().enumerate() {
            if v as u32 == u {
                *o = 0;
            } else {
                *o += common;
            }
        }
    }

    fn set(&mut self, a: usize, v: u32, delta: i64) {
        let u = self.x[a];
        for &(c, w) in &self.p.occurrences[a] {
            if w == u {
                self.true_cnt[c] -= 1;
            } else if w == v {
                self.true_cnt[c] += 1;
            }
        }
        self.x[a] = v;
        self.value = (self.value as i64 + delta) as u64;
    }

    /// Best-improvement passes until a local optimum.
    fn climb(&mut self) {
        let mut buf = Vec::new();
        loop {
            let mut improved = false;
            for i in 0..self.p.involved.len() {
                let a = self.p.involved[i];
                self.deltas(a, &mut buf);
                if let Some((v, &d)) = buf.iter().enumerate().max_by_key(|(_, d)| **d)
                    && d > 0
                {
                    self.set(a, v as u32, d);
                    improved = true;
                }
            }
            if !improved {
                break;
            }
        }
    }
}

/// Branch and bound over the involved attributes.
struct Bnb<'p> {
    p: &'p BestResponseProblem,
    x: Vec<u32>,
    assigned: Vec<usize>,
    true_cnt: Vec<usize>,
    /// Weight of clauses already decided unsatisfiable.
    dead: u64,
    best: u64,
    best_x: Vec<u32>,
    nodes: u64,
    limit: u64,
    aborted: bool,
}

impl Bnb<'_> {
    fn dead_after_assign(cl: &Clause, assigned: usize, t: usize, lit_true: bool) -> bool {
        let k = cl.literals.len();
        match cl.kind {
            // Dead the moment its first literal is false.
            ClauseKind::All => !lit_true && assigned - t == 1,
            ClauseKind::NotAll => assigned == k && t == k,
            ClauseKind::Odd | ClauseKind::Even => {
                assigned == k && !Clause::sat_from_count(cl.kind, t, k)
            }
        }
    }

    fn assign(&mut self, a: usize, v: u32) -> u64 {
        let mut added = 0;
        self.x[a] = v;
        for &(c, w) in &self.p.occurrences[a] {
            self.assigned[c] += 1;
            let lit = w == v;
            if lit {
                self.true_cnt[c] += 1;
            }
            let cl = &self.p.clauses[c];
            if Self::dead_after_assign(cl, self.assigned[c], self.true_cnt[c], lit) {
                added += cl.weight;
            }
        }
        self.dead += added;
        added
    }

    fn unassign(&mut self, a: usize, v: u32, added: u64) {
        for &(c, w) in &self.p.occurrences[a] {
            self.assigned[c] -= 1;
            if w == v {
                self.true_cnt[c] -= 1;
            }
        }
        self.dead -= added;
    }

    fn dfs(&mut self, depth: usize) {
        if self.aborted {
            return;
        }
        self.nodes += 1;
        if self.nodes > self.limit {
            self.aborted = true;
            return;
        }
        let bound = self.p.total_weight - self.dead;
        if bound <= self.best {
            return;
        }
        if depth == self.p.involved.len() {
            // Every clause is decided: the bound is the value.
            self.best = bound;
            self.best_x.clone_from(&self.x);
            return;
        }
        let a = self.p.involved[depth];
        let first = self.best_x[a];
        let size = self.p.sizes[a];
        for v in std::iter::once(first).chain((0..size).filter(|&v| v != first)) {
            let added = self.assign(a, v);
            self.dfs(depth + 1);
            self.unassign(a, v, added);
            if self.aborted {
                return;
            }
        }
    }
}

impl BestResponseOracle for MaxCspOracle {
    fn name(&self) -> &'static str {
        "max-csp"
    }

    fn solve(&self, problem: &BestResponseProblem, seed: u64) -> Result<BestResponse> {
        let d = problem.sizes.len();
        let mut rng = seeded_rng(seed);
        // Greedy start: each involved attribute takes the code with the most weight of
        // `All`/`Odd` clauses asking for it (0 if none).
        let mut x0 = vec![0u32; d];
        for &a in &problem.involved {
            let mut score = vec![0u64; problem.sizes[a] as usize];
            for &(c, w) in &problem.occurrences[a] {
                let cl = &problem.clauses[c];
                if matches!(cl.kind, ClauseKind::All | ClauseKind::Odd) {
                    score[w as usize] += cl.weight;
                }
            }
            x0[a] = score
                .iter()
                .enumerate()
                .max_by_key(|(v, s)| (**s, std::cmp::Reverse(*v)))
                .map_or(0, |(v, _)| v as u32);
        }
        let mut search = Search::new(problem, x0);
        search.climb();
        let mut best_x = search.x.clone();
        let mut best = search.value;
        for _ in 0..self.restarts {
            if best == problem.total_weight {
                break;
            }
            let mut x = best_x.clone();
            for &a in &problem.involved {
                if rng.random_bool(0.5) {
                    x[a] = rng.random_range(0..problem.sizes[a]);
                }
            }
            let mut s = Search::new(problem, x);
            s.climb();
            if s.value > best {
                best = s.value;
                best_x = s.x;
            }
        }
        let mut provably_optimal = best == problem.total_weight;
        if !provably_optimal && self.node_limit > 0 {
            let mut bnb = Bnb {
                p: problem,
                x: best_x.clone(),
                assigned: vec![0; problem.clauses.len()],
                true_cnt: vec![0; problem.clauses.len()],
                dead: 0,
                best,
                best_x: best_x.clone(),
                nodes: 0,
                limit: self.node_limit,
                aborted: false,
            };
            bnb.dfs(0);
            if bnb.best > best {
                best_x = bnb.best_x;
            }
            provably_optimal = !bnb.aborted;
        }
        problem.fill_free(&mut best_x, seed);
        Ok(BestResponse {
            value: problem.value(&best_x),
            record: best_x,
            provably_optimal,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngExt;

    fn lit(attr: u32, value: u32) -> Literal {
        Literal { attr, value }
    }

    /// Brute force over the full universe (independent of the oracles' code paths).
    fn brute(p: &BestResponseProblem) -> u64 {
        let sizes = p.sizes();
        let total: usize = sizes.iter().map(|&s| s as usize).product();
        let mut best = 0;
        let mut rec = vec![0u32; sizes.len()];
        for mut i in 0..total {
            for a in (0..sizes.len()).rev() {
                rec[a] = (i % sizes[a] as usize) as u32;
                i /= sizes[a] as usize;
            }
            let v: u64 = p
                .clauses()
                .iter()
                .filter(|c| {
                    let t = c
                        .literals
                        .iter()
                        .filter(|l| rec[l.attr as usize] == l.value)
                        .count();
                    match c.kind {
                        ClauseKind::All => t == c.literals.len(),
                        ClauseKind::NotAll => t != c.literals.len(),
                        ClauseKind::Odd => t % 2 == 1,
                        ClauseKind::Even => t % 2 == 0,
                    }
                })
                .map(|c| c.weight)
                .sum();
            best = best.max(v);
        }
        best
    }

    fn random_problem(
        seed: u64,
        sizes: &[u32],
        m: usize,
        kinds: &[ClauseKind],
    ) -> BestResponseProblem {
        let mut rng = seeded_rng(seed);
        let d = sizes.len();
        let clauses = (0..m)
            .map(|_| {
                let k = rng.random_range(1..=3.min(d));
                let attrs = rand::seq::index::sample(&mut rng, d, k).into_vec();
                Clause {
                    literals: attrs
                        .into_iter()
                        .map(|a| lit(a as u32, rng.random_range(0..sizes[a])))
                        .collect(),
                    kind: kinds[rng.random_range(0..kinds.len())],
                    weight: rng.random_range(1..4),
                }
            })
            .collect();
        BestResponseProblem::new(sizes.to_vec(), clauses, FreeAttributes::Zero).unwrap()
    }

    /// Every oracle against brute force on 200 small random instances of conjunctions,
    /// negated conjunctions and parities over mixed-size (one-hot) attributes. The exhaustive
    /// oracle must be exact; the MAX-CSP oracle must be exact whenever it claims to be, and
    /// (with its branch and bound finishing on instances this small) always.
    #[test]
    fn oracles_match_brute_force() {
        let all = [
            ClauseKind::All,
            ClauseKind::NotAll,
            ClauseKind::Odd,
            ClauseKind::Even,
        ];
        let conj = [ClauseKind::All, ClauseKind::NotAll];
        let mut proven = 0;
        for seed in 0..200u64 {
            let sizes: &[u32] = if seed % 2 == 0 {
                &[2, 3, 2, 4, 2, 2]
            } else {
                &[2; 9]
            };
            let kinds: &[ClauseKind] = if seed % 3 == 0 { &all } else { &conj };
            let p = random_problem(seed, sizes, 4 + (seed as usize % 20), kinds);
            let truth = brute(&p);
            let ex = ExhaustiveOracle::default().solve(&p, seed).unwrap();
            assert_eq!(ex.value, truth, "exhaustive, seed {seed}");
            assert_eq!(p.value(&ex.record), ex.value);
            let mc = MaxCspOracle::default().solve(&p, seed).unwrap();
            assert_eq!(p.value(&mc.record), mc.value);
            assert!(mc.value <= truth);
            if mc.provably_optimal {
                proven += 1;
                assert_eq!(mc.value, truth, "max-csp claims optimal, seed {seed}");
            }
            // Local search alone must still return a valid record.
            let ls = MaxCspOracle {
                restarts: 0,
                node_limit: 0,
            }
            .solve(&p, seed)
            .unwrap();
            assert!(ls.value <= truth && p.value(&ls.record) == ls.value);
        }
        assert_eq!(
            proven, 200,
            "branch and bound should finish on tiny instances"
        );
    }

    /// Hand example: clauses x0∧x1 (w 2), ¬(x0∧x1) (w 1), x1∧x2 (w 1) over bits: x = 111
    /// satisfies 2 + 1 = 3 of 4; no record satisfies both the conjunction and its negation.
    #[test]
    fn hand_example() {
        let p = BestResponseProblem::new(
            vec![2, 2, 2, 2],
            vec![
                Clause {
                    literals: vec![lit(0, 1), lit(1, 1)],
                    kind: ClauseKind::All,
                    weight: 2,
                },
                Clause {
                    literals: vec![lit(0, 1), lit(1, 1)],
                    kind: ClauseKind::NotAll,
                    weight: 1,
                },
                Clause {
                    literals: vec![lit(1, 1), lit(2, 1)],
                    kind: ClauseKind::All,
                    weight: 1,
                },
            ],
            FreeAttributes::Zero,
        )
        .unwrap();
        for o in [
            &ExhaustiveOracle::default() as &dyn BestResponseOracle,
            &MaxCspOracle::default(),
        ] {
            let r = o.solve(&p, 1).unwrap();
            assert_eq!(r.value, 3, "{}", o.name());
            assert_eq!(&r.record[..3], &[1, 1, 1]);
            assert_eq!(r.record[3], 0, "free attribute set to zero");
            assert!(r.provably_optimal);
        }
        assert!(
            BestResponseProblem::new(
                vec![2],
                vec![Clause {
                    literals: vec![lit(0, 2)],
                    kind: ClauseKind::All,
                    weight: 1
                }],
                FreeAttributes::Zero
            )
            .is_err()
        );
        assert!(
            BestResponseProblem::new(
                vec![2, 2],
                vec![Clause {
                    literals: vec![lit(0, 1), lit(0, 0)],
                    kind: ClauseKind::All,
                    weight: 1
                }],
                FreeAttributes::Zero
            )
            .is_err()
        );
    }
}
