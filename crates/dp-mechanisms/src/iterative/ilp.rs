//! An integer-programming best-response oracle for DualQuery (seed 003 §5, §6; the paper
//! solves this integer program with CPLEX, §7 "Implementation details").
//!
//! [`IlpOracle`] maximises the total weight of satisfied clauses of a
//! [`BestResponseProblem`] by a depth-first **branch and bound over the LP relaxation**,
//! the LP solved by the pure-Rust simplex of the `microlp` crate (its own integer search
//! has no node or time limit and is not used).
//!
//! ## Formulation (seed 003 §5's integer program over one-hot bits)
//!
//! * One variable `x_{a,v} ∈ [0, 1]` (binary in the integer program) per involved attribute
//!   `a` and per code `v` that occurs in some literal. The one-hot ("sensible") constraint is
//!   `Σ_v x_{a,v} = 1` when every code of `a` occurs, else `Σ_v x_{a,v} ≤ 1` (the slack is
//!   the codes no clause mentions, which are interchangeable). A record sets `x_{a,v} = 1`
//!   exactly for its codes, so records and feasible 0/1 points correspond.
//! * Clauses with the same literal set are merged: a conjunction `q` of weight `w⁺` and its
//!   negation `q̄` (`NotAll`, the clause `x̄_a ∨ x̄_b ∨ x̄_c`) of weight `w⁻` contribute
//!   `w⁺·q(x) + w⁻·(1 − q(x)) = w⁻ + (w⁺ − w⁻)·q(x)`: a constant plus a net weight
//!   `w = w⁺ − w⁻` on the conjunction's indicator.
//! * A one-literal conjunction's indicator is the literal itself (a linear term). For
//!   `k ≥ 2` literals `ℓ_1 … ℓ_k` (each some `x_{a,v}`) a variable `z ∈ [0, 1]` with
//!   objective coefficient `w` linearises the indicator: for `w > 0` (maximised)
//!   `z ≤ ℓ_i` for every `i` (§5's `x_a + x_b + x_c ≥ 3c`, disaggregated, which is tighter);
//!   for `w < 0` (minimised) `z ≥ Σ_i ℓ_i − (k − 1)` (with `z ≥ 0`). At a 0/1 point the
//!   optimal `z` equals the indicator, so the integer program's optimum is the problem's
//!   [`BestResponseProblem::value`] maximum; the LP relaxation's optimum is an upper bound.
//! * Parity clauses (`Odd` / `Even`, §6, whose program needs extra integer variables
//!   `d_i ∈ {0, 1, 2}`) are **refused** with an error: use [`MaxCspOracle`] for them.
//!
//! ## Search
//!
//! The incumbent starts as the answer of the MAX-CSP greedy + local search
//! ([`IlpOracle::heuristic`], no branch and bound by default), so the oracle is never worse
//! than that heuristic. Each node solves the LP relaxation with some `x_{a,v}` fixed to 0 or
//! 1 (by default warm-started: `Solution::fix_var` on a copy of the parent's solution, a few
//! dual-simplex pivots); it is pruned when `⌊bound + 10⁻⁶·max(1, |bound|)⌋ ≤ incumbent`
//! (clause weights are integers, so the floor is valid; the slack absorbs LP round-off),
//! closed when its LP optimum is integral (the record it encodes is evaluated exactly), and
//! otherwise rounded to a record (per attribute the largest `x_{a,v}`) and split on the
//! most fractional record variable, the child nearer the LP value first.
//! [`BestResponse::provably_optimal`] is true when the search finished within
//! [`IlpOracle::node_limit`] LP solves, or when the incumbent already reaches the floored
//! root bound; an LP failure (or a panic inside the LP solver, caught) makes the answer
//! "not proven", never an error.

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};

use microlp::{ComparisonOp, Error as LpError, OptimizationDirection, Problem, Solution, Variable};

use super::oracle::{
    BestResponse, BestResponseOracle, BestResponseProblem, ClauseKind, MaxCspOracle,
};
use crate::{MechanismError, Result};

/// Integrality tolerance of an LP value.
const INT_TOL: f64 = 1e-6;

/// Relative slack added to an LP bound before flooring it.
const BOUND_TOL: f64 = 1e-6;

/// Integer-programming best response (module docs): branch and bound over `microlp`'s LP
/// relaxation with a node limit, started from the MAX-CSP heuristic's record.
#[derive(Clone, Copy, Debug)]
pub struct IlpOracle {
    /// Largest number of LP relaxations solved (default 2 000); 0 returns the heuristic's
    /// answer without solving any LP.
    pub node_limit: u64,
    /// The incumbent's source (default: `MaxCspOracle { restarts: 4, node_limit: 0 }`,
    /// greedy + local search only).
    pub heuristic: MaxCspOracle,
    /// Children by `Solution::fix_var` on a copy of the parent's LP solution (`true`,
    /// default) or by building and solving the node's LP from scratch (`false`).
    pub warm_start: bool,
}

impl Default for IlpOracle {
    fn default() -> Self {
        IlpOracle {
            node_limit: 2_000,
            heuristic: MaxCspOracle {
                restarts: 4,
                node_limit: 0,
            },
            warm_start: true,
        }
    }
}

/// One involved attribute's record variables.
#[derive(Clone, Debug)]
struct Group {
    attr: usize,
    /// Indices into [`Formulation::codes`] (the mentioned codes, increasing).
    vars: Vec<usize>,
    /// The smallest code no clause mentions (`None`: every code is mentioned, so the
    /// one-hot constraint is an equality).
    other: Option<u32>,
}

/// A merged clause on `k ≥ 2` literals with a non-zero net weight.
#[derive(Clone, Debug)]
struct Term {
    vars: Vec<usize>,
    weight: i64,
}

/// The linearised best-response program of a [`BestResponseProblem`] (module docs).
#[derive(Clone, Debug)]
struct Formulation {
    /// Record variable `i` is "attribute `codes[i].0` has code `codes[i].1`".
    codes: Vec<(usize, u32)>,
    groups: Vec<Group>,
    /// Objective coefficient of each record variable (one-literal clauses).
    linear: Vec<i64>,
    terms: Vec<Term>,
    constant: i64,
}

impl Formulation {
    fn new(problem: &BestResponseProblem) -> Result<Self> {
        // Weights must be exact in f64 and their signed sums must fit in i64.
        if problem.total_weight() > 1 << 53 {
            return Err(MechanismError::InvalidParameter {
                name: "oracle",
                value: format!("total weight {}", problem.total_weight()),
                reason: "the ILP oracle needs a total clause weight of at most 2^53".into(),
            });
        }
        let mut merged: BTreeMap<Vec<(usize, u32)>, (i64, i64)> = BTreeMap::new();
        for (c, clause) in problem.clauses().iter().enumerate() {
            let mut lits: Vec<(usize, u32)> = clause
                .literals
                .iter()
                .map(|l| (l.attr as usize, l.value))
                .collect();
            lits.sort_unstable();
            if !IlpOracle::solves(clause.kind) {
                return Err(MechanismError::InvalidParameter {
                    name: "oracle",
                    value: "ilp".into(),
                    reason: format!(
                        "clause {c} is a parity; the ILP oracle handles conjunctions and \
                         negated conjunctions only (use the MAX-CSP oracle for parities)"
                    ),
                });
            }
            let e = merged.entry(lits).or_insert((0, 0));
            let w = clause.weight as i64;
            match clause.kind {
                ClauseKind::All => e.0 += w,
                // parities were refused above
                ClauseKind::NotAll | ClauseKind::Odd | ClauseKind::Even => e.1 += w,
            }
        }
        // Record variables: the mentioned codes per attribute.
        let mut mentioned: BTreeMap<(usize, u32), usize> = BTreeMap::new();
        for lits in merged.keys() {
            for &l in lits {
                mentioned.insert(l, 0);
            }
        }
        let mut codes = Vec::with_capacity(mentioned.len());
        for (i, (l, idx)) in mentioned.iter_mut().enumerate() {
            *idx = i;
            codes.push(*l);
        }
        let sizes = problem.sizes();
        let mut groups: Vec<Group> = Vec::new();
        for (i, &(a, _)) in codes.iter().enumerate() {
            if groups.last().is_none_or(|g| g.attr != a) {
                groups.push(Group {
                    attr: a,
                    vars: Vec::new(),
                    other: None,
                });
            }
            if let Some(g) = groups.last_mut() {
                g.vars.push(i);
            }
        }
        for g in &mut groups {
            let used: Vec<u32> = g.vars.iter().map(|&i| codes[i].1).collect();
            g.other = (0..sizes[g.attr]).find(|v| used.binary_search(v).is_err());
        }
        let mut linear = vec![0i64; codes.len()];
        let mut terms = Vec::new();
        let mut constant = 0i64;
        for (lits, (pos, neg)) in merged {
            constant += neg;
            let weight = pos - neg;
            if weight == 0 {
                continue;
            }
            let vars: Vec<usize> = lits.iter().map(|l| mentioned[l]).collect();
            if let [i] = vars[..] {
                linear[i] += weight;
            } else {
                terms.push(Term { vars, weight });
            }
        }
        Ok(Formulation {
            codes,
            groups,
            linear,
            terms,
            constant,
        })
    }

    /// The 0/1 record variables of `record`.
    #[cfg(test)]
    fn indicator(&self, record: &[u32]) -> Vec<f64> {
        self.codes
            .iter()
            .map(|&(a, v)| f64::from(u8::from(record.get(a) == Some(&v))))
            .collect()
    }

    /// The program's objective at `record`'s 0/1 point with every `z` at its best value
    /// given the constraints (`min ℓ_i` for `w > 0`, `max(0, Σ ℓ_i − (k − 1))` for `w < 0`).
    #[cfg(test)]
    fn objective_at(&self, record: &[u32]) -> i64 {
        let x = self.indicator(record);
        let bit = |i: usize| x[i] as i64;
        let mut total = self.constant;
        for (i, &c) in self.linear.iter().enumerate() {
            total += c * bit(i);
        }
        for t in &self.terms {
            let z = if t.weight > 0 {
                t.vars.iter().map(|&i| bit(i)).min().unwrap_or(0)
            } else {
                let k = t.vars.len() as i64;
                (t.vars.iter().map(|&i| bit(i)).sum::<i64>() - (k - 1)).max(0)
            };
            total += t.weight * z;
        }
        total
    }

    /// The LP relaxation with the record variables in `fixed` fixed; returns the problem
    /// and the record variables' handles.
    fn build(&self, fixed: &[(usize, f64)]) -> (Problem, Vec<Variable>) {
        let mut p = Problem::new(OptimizationDirection::Maximize);
        let mut bounds = vec![(0.0, 1.0); self.codes.len()];
        for &(i, v) in fixed {
            bounds[i] = (v, v);
        }
        let xs: Vec<Variable> = self
            .linear
            .iter()
            .zip(&bounds)
            .map(|(&c, &b)| p.add_var(c as f64, b))
            .collect();
        for g in &self.groups {
            if g.vars.len() == 1 && g.other.is_some() {
                continue; // x ≤ 1 is a bound already.
            }
            let op = if g.other.is_some() {
                ComparisonOp::Le
            } else {
                ComparisonOp::Eq
            };
            p.add_constraint(g.vars.iter().map(|&i| (xs[i], 1.0)), op, 1.0);
        }
        for t in &self.terms {
            let z = p.add_var(t.weight as f64, (0.0, 1.0));
            if t.weight > 0 {
                for &i in &t.vars {
                    p.add_constraint([(z, 1.0), (xs[i], -1.0)], ComparisonOp::Le, 0.0);
                }
            } else {
                let k = t.vars.len() as f64;
                let expr: Vec<(Variable, f64)> = std::iter::once((z, 1.0))
                    .chain(t.vars.iter().map(|&i| (xs[i], -1.0)))
                    .collect();
                p.add_constraint(expr, ComparisonOp::Ge, -(k - 1.0));
            }
        }
        (p, xs)
    }

    /// The record (involved attributes only; `base` gives the others) that rounds the
    /// record variables `x`: per attribute the largest `x_{a,v}`, or an unmentioned code
    /// when the slack `1 − Σ_v x_{a,v}` is larger.
    fn round(&self, x: &[f64], base: &[u32]) -> Vec<u32> {
        let mut record = base.to_vec();
        for g in &self.groups {
            let mut best = (f64::NEG_INFINITY, 0u32);
            let mut sum = 0.0;
            for &i in &g.vars {
                sum += x[i];
                if x[i] > best.0 {
                    best = (x[i], self.codes[i].1);
                }
            }
            if let Some(o) = g.other
                && 1.0 - sum > best.0
            {
                best = (1.0 - sum, o);
            }
            record[g.attr] = best.1;
        }
        record
    }
}

/// `⌊bound + slack⌋`: the largest integer value the LP bound `bound` allows.
fn floor_bound(bound: f64) -> f64 {
    (bound + BOUND_TOL * bound.abs().max(1.0)).floor()
}

/// Runs `f`, turning a panic inside the LP solver into an internal error.
fn guarded<T>(
    f: impl FnOnce() -> std::result::Result<T, LpError>,
) -> std::result::Result<T, LpError> {
    catch_unwind(AssertUnwindSafe(f))
        .unwrap_or_else(|_| Err(LpError::InternalError("panic in the LP solver".into())))
}

/// A pending node: its fixings (the last one is the branching decision) and, when warm
/// starting, the parent's LP solution.
struct Node {
    fixed: Vec<(usize, f64)>,
    parent: Option<Solution>,
}

/// What the branch and bound found.
struct Outcome {
    best: i64,
    record: Option<Vec<u32>>,
    proven: bool,
}

impl IlpOracle {
    /// Whether the oracle solves clauses of `kind`: conjunctions and negated conjunctions,
    /// not parities. The solver refuses any other clause, and DualQuery checks its
    /// workload's kinds with this before a release.
    pub(crate) fn solves(kind: ClauseKind) -> bool {
        matches!(kind, ClauseKind::All | ClauseKind::NotAll)
    }

    fn branch_and_bound(
        &self,
        problem: &BestResponseProblem,
        f: &Formulation,
        base: &[u32],
        incumbent: i64,
    ) -> Outcome {
        let mut out = Outcome {
            best: incumbent,
            record: None,
            proven: false,
        };
        let consider = |record: Vec<u32>, out: &mut Outcome| {
            let v = problem.value(&record) as i64;
            if v > out.best {
                out.best = v;
                out.record = Some(record);
            }
        };
        let mut stack = vec![Node {
            fixed: Vec::new(),
            parent: None,
        }];
        let mut nodes = 0u64;
        let mut root_bound = None;
        let (mut aborted, mut failed) = (false, false);
        let root_xs = f.build(&[]).1;
        while let Some(node) = stack.pop() {
            if nodes >= self.node_limit {
                aborted = true;
                break;
            }
            nodes += 1;
            let solved = match (node.parent, node.fixed.last()) {
                (Some(parent), Some(&(i, v))) => guarded(|| parent.fix_var(root_xs[i], v)),
                _ => guarded(|| f.build(&node.fixed).0.solve()),
            };
            let sol = match solved {
                Ok(s) => s,
                Err(LpError::Infeasible) => continue,
                Err(_) => {
                    failed = true;
                    continue;
                }
            };
            let bound = sol.objective() + f.constant as f64;
            if !bound.is_finite() {
                failed = true;
                continue;
            }
            let cap = floor_bound(bound);
            root_bound.get_or_insert(cap);
            if cap <= out.best as f64 {
                continue;
            }
            let x: Vec<f64> = root_xs.iter().map(|&v| sol[v]).collect();
            consider(f.round(&x, base), &mut out);
            let frac = x
                .iter()
                .enumerate()
                .map(|(i, &v)| (i, v, (v - 0.5).abs()))
                .filter(|&(_, v, _)| v.min(1.0 - v) > INT_TOL)
                .min_by(|a, b| a.2.total_cmp(&b.2));
            // Integral LP optimum: the rounded record is it, and the node is closed.
            let Some((i, v, _)) = frac else { continue };
            if cap <= out.best as f64 {
                continue;
            }
            let (first, second) = if v >= 0.5 { (1.0, 0.0) } else { (0.0, 1.0) };
            let child = |val: f64| {
                let mut fixed = node.fixed.clone();
                fixed.push((i, val));
                fixed
            };
            if self.warm_start {
                stack.push(Node {
                    fixed: child(second),
                    parent: Some(sol.clone()),
                });
                stack.push(Node {
                    fixed: child(first),
                    parent: Some(sol),
                });
            } else {
                stack.push(Node {
                    fixed: child(second),
                    parent: None,
                });
                stack.push(Node {
                    fixed: child(first),
                    parent: None,
                });
            }
        }
        out.proven = (!aborted && !failed) || root_bound.is_some_and(|r| out.best as f64 >= r);
        out
    }
}

impl BestResponseOracle for IlpOracle {
    fn name(&self) -> &'static str {
        "ilp"
    }

    fn solve(&self, problem: &BestResponseProblem, seed: u64) -> Result<BestResponse> {
        let f = Formulation::new(problem)?;
        let start = self.heuristic.solve(problem, seed)?;
        if start.value >= problem.total_weight() || self.node_limit == 0 {
            return Ok(start);
        }
        let out = self.branch_and_bound(problem, &f, &start.record, start.value as i64);
        let record = out.record.unwrap_or(start.record);
        Ok(BestResponse {
            value: problem.value(&record),
            record,
            provably_optimal: out.proven || start.provably_optimal,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::iterative::oracle::{Clause, ExhaustiveOracle, FreeAttributes};
    use dp_core::seeded_rng;
    use dp_queries::Literal;
    use proptest::prelude::*;
    use rand::RngExt;

    /// Random conjunctions and negated conjunctions (k = 1..3) over `sizes`, weights 1..4;
    /// some clauses are repeated with the other kind so merging is exercised.
    fn random_problem(seed: u64, sizes: &[u32], m: usize) -> BestResponseProblem {
        let mut rng = seeded_rng(seed);
        let d = sizes.len();
        let mut clauses: Vec<Clause> = Vec::new();
        for _ in 0..m {
            if !clauses.is_empty() && rng.random_bool(0.2) {
                let c = clauses[rng.random_range(0..clauses.len())].clone();
                clauses.push(Clause {
                    kind: if c.kind == ClauseKind::All {
                        ClauseKind::NotAll
                    } else {
                        ClauseKind::All
                    },
                    weight: rng.random_range(1..4),
                    ..c
                });
                continue;
            }
            let k = rng.random_range(1..=3.min(d));
            let attrs = rand::seq::index::sample(&mut rng, d, k).into_vec();
            clauses.push(Clause {
                literals: attrs
                    .into_iter()
                    .map(|a| Literal {
                        attr: a as u32,
                        value: rng.random_range(0..sizes[a]),
                    })
                    .collect(),
                kind: if rng.random_bool(0.5) {
                    ClauseKind::All
                } else {
                    ClauseKind::NotAll
                },
                weight: rng.random_range(1..4),
            });
        }
        BestResponseProblem::new(sizes.to_vec(), clauses, FreeAttributes::Zero).unwrap()
    }

    fn sizes_for(seed: u64) -> &'static [u32] {
        match seed % 3 {
            0 => &[2, 3, 2, 4, 2, 2],
            1 => &[2; 9],
            _ => &[5, 1, 3, 2, 4],
        }
    }

    /// Whether `record` assigns exactly one in-range code per attribute.
    fn feasible(p: &BestResponseProblem, record: &[u32]) -> bool {
        record.len() == p.sizes().len() && record.iter().zip(p.sizes()).all(|(&v, &s)| v < s)
    }

    /// 240 random instances (one-hot groups of sizes 1–5, negated conjunctions, merged
    /// opposite clauses): with a node limit the search always finishes within, the answer is
    /// proven and equals brute force ([`ExhaustiveOracle`]); the reported value is the
    /// record's value.
    #[test]
    fn matches_brute_force_when_finished() {
        let oracle = IlpOracle {
            node_limit: 1_000_000,
            ..IlpOracle::default()
        };
        let cold = IlpOracle {
            warm_start: false,
            ..oracle
        };
        for seed in 0..240u64 {
            let p = random_problem(seed, sizes_for(seed), 3 + (seed as usize % 25));
            let truth = ExhaustiveOracle::default().solve(&p, seed).unwrap().value;
            for o in [&oracle, &cold] {
                let r = o.solve(&p, seed).unwrap();
                assert!(feasible(&p, &r.record), "seed {seed}");
                assert_eq!(r.value, p.value(&r.record), "seed {seed}");
                assert!(r.provably_optimal, "seed {seed}: search must finish");
                assert_eq!(r.value, truth, "seed {seed} (warm {})", o.warm_start);
            }
        }
    }

    /// The branch and bound itself (incumbent 0 instead of the heuristic's) reaches the
    /// brute-force optimum: the LP bounds and branching, not the heuristic, find it.
    #[test]
    fn branch_and_bound_alone_is_exact() {
        let oracle = IlpOracle {
            node_limit: 1_000_000,
            ..IlpOracle::default()
        };
        let mut improved = 0;
        for seed in 0..120u64 {
            let p = random_problem(1000 + seed, sizes_for(seed), 4 + (seed as usize % 20));
            let truth = ExhaustiveOracle::default().solve(&p, seed).unwrap().value;
            let f = Formulation::new(&p).unwrap();
            let base = vec![0u32; p.sizes().len()];
            let out = oracle.branch_and_bound(&p, &f, &base, -1);
            assert!(out.proven, "seed {seed}");
            let rec = out.record.expect("incumbent -1 is always improved");
            assert!(feasible(&p, &rec));
            assert_eq!(p.value(&rec), truth, "seed {seed}");
            assert_eq!(out.best, truth as i64);
            improved += usize::from(truth > 0);
        }
        assert!(improved > 100);
    }

    /// The program's objective at a record equals the problem's own score, for every record
    /// of small random instances; and the LP with every record variable fixed to the
    /// record's 0/1 point attains that same value (the z-constraints are right).
    #[test]
    fn objective_equals_score() {
        for seed in 0..60u64 {
            let sizes = sizes_for(seed);
            let p = random_problem(500 + seed, sizes, 2 + (seed as usize % 15));
            let f = Formulation::new(&p).unwrap();
            let mut rng = seeded_rng(seed);
            for _ in 0..20 {
                let rec: Vec<u32> = sizes.iter().map(|&s| rng.random_range(0..s)).collect();
                assert_eq!(f.objective_at(&rec), p.value(&rec) as i64, "seed {seed}");
                let x = f.indicator(&rec);
                let fixed: Vec<(usize, f64)> = x.iter().copied().enumerate().collect();
                let lp = f.build(&fixed).0.solve().unwrap();
                let v = lp.objective() + f.constant as f64;
                assert!((v - p.value(&rec) as f64).abs() < 1e-7, "seed {seed}: {v}");
            }
            let r = IlpOracle::default().solve(&p, seed).unwrap();
            assert_eq!(f.objective_at(&r.record), r.value as i64);
        }
    }

    /// With node limit 0 or 1 the answer is still a feasible record, at least as good as the
    /// MAX-CSP heuristic's (the incumbent), and "proven" only when it is optimal.
    #[test]
    fn tiny_node_limits_never_worse_than_heuristic() {
        for seed in 0..200u64 {
            let p = random_problem(2000 + seed, sizes_for(seed), 5 + (seed as usize % 30));
            let truth = ExhaustiveOracle::default().solve(&p, seed).unwrap().value;
            let heur = MaxCspOracle {
                restarts: 4,
                node_limit: 0,
            }
            .solve(&p, seed)
            .unwrap();
            for limit in [0, 1] {
                let r = IlpOracle {
                    node_limit: limit,
                    ..IlpOracle::default()
                }
                .solve(&p, seed)
                .unwrap();
                assert!(feasible(&p, &r.record));
                assert_eq!(r.value, p.value(&r.record));
                assert!(r.value >= heur.value, "seed {seed}, limit {limit}");
                assert!(r.value <= truth);
                if r.provably_optimal {
                    assert_eq!(r.value, truth, "seed {seed}, limit {limit}");
                }
            }
        }
    }

    /// Hand example: `x0 ∧ x1` (w 2), `¬(x0 ∧ x1)` (w 1), `x1 ∧ x2` (w 1): merged to
    /// constant 1 + net 1·[x0 ∧ x1] + 1·[x1 ∧ x2]; the optimum 111 scores 3 of 4. A
    /// parity clause is refused.
    #[test]
    fn hand_example_and_parity_refused() {
        let lit = |attr, value| Literal { attr, value };
        let clauses = vec![
            Clause {
                literals: vec![lit(0, 1), lit(1, 1)],
                kind: ClauseKind::All,
                weight: 2,
            },
            Clause {
                literals: vec![lit(1, 1), lit(0, 1)],
                kind: ClauseKind::NotAll,
                weight: 1,
            },
            Clause {
                literals: vec![lit(1, 1), lit(2, 1)],
                kind: ClauseKind::All,
                weight: 1,
            },
        ];
        let p =
            BestResponseProblem::new(vec![2; 4], clauses.clone(), FreeAttributes::Zero).unwrap();
        let f = Formulation::new(&p).unwrap();
        assert_eq!(f.constant, 1);
        assert_eq!(f.terms.len(), 2);
        assert!(f.terms.iter().all(|t| t.weight == 1));
        let r = IlpOracle::default().solve(&p, 1).unwrap();
        assert_eq!((r.value, &r.record[..]), (3, &[1, 1, 1, 0][..]));
        assert!(r.provably_optimal);
        let mut par = clauses;
        par[2].kind = ClauseKind::Odd;
        let p = BestResponseProblem::new(vec![2; 4], par, FreeAttributes::Zero).unwrap();
        assert!(IlpOracle::default().solve(&p, 1).is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Never panics; on success the record is feasible and its value is reported.
        #[test]
        fn never_panics(seed in any::<u64>(), d in 1usize..7, m in 0usize..30, limit in 0u64..50) {
            let mut rng = seeded_rng(seed);
            let sizes: Vec<u32> = (0..d).map(|_| rng.random_range(1..5)).collect();
            let clauses = (0..m).map(|_| {
                let k = rng.random_range(1..=d.min(4));
                let attrs = rand::seq::index::sample(&mut rng, d, k).into_vec();
                Clause {
                    literals: attrs.into_iter().map(|a| Literal {
                        attr: a as u32,
                        value: rng.random_range(0..sizes[a]),
                    }).collect(),
                    kind: if rng.random_bool(0.5) { ClauseKind::All } else { ClauseKind::NotAll },
                    weight: rng.random_range(1..1000),
                }
            }).collect();
            let p = BestResponseProblem::new(sizes, clauses, FreeAttributes::Random).unwrap();
            let o = IlpOracle { node_limit: limit, warm_start: seed % 2 == 0, ..IlpOracle::default() };
            let r = o.solve(&p, seed).unwrap();
            prop_assert!(feasible(&p, &r.record));
            prop_assert_eq!(r.value, p.value(&r.record));
        }
    }
}
