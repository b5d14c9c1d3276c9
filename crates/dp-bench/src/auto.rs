//! `dpqr release --mechanism auto` (issue #26, item 5): a mechanism chosen for the user from
//! **public inputs only** — the workload's query class, the kind of budget given — by the
//! evidence of docs/benchmarks.md. The rule and the evidence row of each branch are in
//! docs/auto.md; the branches here must stay the same as that table (and a test checks that
//! each chosen entry exists in the catalogue and accepts what its branch gives it).
//!
//! | workload class | budget | chosen | post-processing |
//! |---|---|---|---|
//! | marginals | `--rho`, or `--epsilon` with `--delta` | `adaptive-projection` | none (its answers are tables of proportions) |
//! | marginals | `--epsilon` alone | `laplace` | `--post simplex` |
//! | any other class | `--rho`, or `--epsilon` with `--delta` | `gaussian` | none (answers are not tables) |
//! | any other class | `--epsilon` alone | `laplace` | none |
//!
//! The relation and the domain size do not change the choice: each chosen mechanism is stated
//! for both relations and handles any domain size (it never enumerates the records), and the
//! evidence covers both relations and domains from titanic's to temporal-match2's
//! (≈ 10^33.5 records). No branch depends on the data: the choice is made before anything is
//! read, and a dry run shows it.

use crate::registry::BudgetArgs;
use crate::{BenchError, Result};
use dp_mechanisms::PostProcessing;
use dp_queries::QueryClass;

/// The name that asks for the choice.
pub const AUTO: &str = "auto";

/// What `--mechanism auto` chose, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AutoChoice {
    /// The catalogue name of the chosen mechanism.
    pub mechanism: &'static str,
    /// The post-processing that goes with it.
    pub post: PostProcessing,
    /// Why, in words, citing the evidence (docs/benchmarks.md) and the rule (docs/auto.md).
    pub reason: String,
}

impl AutoChoice {
    /// "mechanism auto chose X (with --post simplex) because Y", for the release's notes, its
    /// report and the dry run.
    pub fn sentence(&self) -> String {
        format!(
            "mechanism auto chose {}{} because {}",
            self.mechanism,
            if self.post == PostProcessing::SimplexProjection {
                " with --post simplex"
            } else {
                ""
            },
            self.reason
        )
    }
}

/// Whether the budget flags give a pure ε budget (`--epsilon` alone); the flags' other
/// combinations are checked against the chosen entry afterwards, as for any mechanism.
fn pure_epsilon(budget: &BudgetArgs) -> bool {
    budget.epsilon.is_some() && budget.delta.is_none() && budget.rho.is_none()
}

/// The choice for a workload of `class` under the budget flags `budget` (module docs; the
/// rule of docs/auto.md). `post` is the `--post` given: the rule chooses the
/// post-processing, so any other than none is refused rather than silently replaced.
pub fn choose(class: QueryClass, budget: &BudgetArgs, post: PostProcessing) -> Result<AutoChoice> {
    if post != PostProcessing::None {
        return Err(BenchError::Usage(
            "--mechanism auto chooses the post-processing with the mechanism (docs/auto.md): \
             drop --post, or name the mechanism yourself"
                .into(),
        ));
    }
    let pure = pure_epsilon(budget);
    let choice = match (class, pure) {
        (QueryClass::Marginals, false) => AutoChoice {
            mechanism: "adaptive-projection",
            post: PostProcessing::None,
            reason: "the workload is marginal tables and the budget is zCDP or (ε, δ): on \
                     every marginal workload of the real-tables grid (adult, titanic, nltcs, \
                     acs, temporal-match2; all-2way and random 3-way; ε from 0.1 to 10; both \
                     relations) adaptive-projection has the lower mean table ℓ1 error than \
                     the Gaussian baseline with simplex post-processing, on every seed of 29 \
                     of 30 rows and level on the last (acs random 3-way at ε = 10); it \
                     handles any domain size (docs/benchmarks.md, \"Real tables\"; rule: \
                     docs/auto.md)"
                .into(),
        },
        (QueryClass::Marginals, true) => AutoChoice {
            mechanism: "laplace",
            post: PostProcessing::SimplexProjection,
            reason: "the workload is marginal tables and the budget is pure ε (--epsilon \
                     alone), which adaptive-projection and the Gaussian baseline do not take \
                     (they need --rho or --epsilon with --delta, and are more accurate: \
                     Laplace's error is 3–6× the Gaussian's on adult); among the pure-ε \
                     mechanisms the Laplace baseline, each table projected onto the \
                     proportions, is ahead of MWEM and DualQuery (docs/benchmarks.md, \
                     \"Baselines on adult\" and \"Iterative family\"; rule: docs/auto.md)"
                .into(),
        },
        (other, false) => AutoChoice {
            mechanism: "gaussian",
            post: PostProcessing::None,
            reason: format!(
                "the workload is of class {other}, not marginal tables, and the budget is \
                 zCDP or (ε, δ): the Gaussian baseline is ahead of the polynomial release on \
                 every conjunction, threshold and decision-list workload measured, and of \
                 MWEM and DualQuery on adult's dense workload (docs/benchmarks.md, \
                 \"Polynomial release\" and \"Iterative family\"; rule: docs/auto.md); no \
                 post-processing, since the answers are not tables of proportions"
            ),
        },
        (other, true) => AutoChoice {
            mechanism: "laplace",
            post: PostProcessing::None,
            reason: format!(
                "the workload is of class {other}, not marginal tables, and the budget is \
                 pure ε (--epsilon alone): the Laplace baseline is the pure-ε counterpart of \
                 the Gaussian baseline, which is ahead of the polynomial release, MWEM and \
                 DualQuery on the workloads measured (docs/benchmarks.md, \"Polynomial \
                 release\" and \"Iterative family\"; rule: docs/auto.md)"
            ),
        },
    };
    Ok(choice)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::{self, BudgetKind};

    /// Every branch chooses a catalogue entry that releases the class, takes the budget
    /// kind of the branch and both relations, and applies the post-processing chosen.
    #[test]
    fn every_branch_is_a_catalogue_entry_that_takes_its_inputs() {
        let budgets = [
            (
                BudgetArgs {
                    rho: Some(0.5),
                    ..Default::default()
                },
                BudgetKind::Zcdp,
            ),
            (
                BudgetArgs {
                    epsilon: Some(1.0),
                    delta: Some(1e-9),
                    ..Default::default()
                },
                BudgetKind::Approx,
            ),
            (
                BudgetArgs {
                    epsilon: Some(1.0),
                    ..Default::default()
                },
                BudgetKind::Pure,
            ),
        ];
        for class in QueryClass::ALL {
            for (budget, kind) in &budgets {
                let c = choose(class, budget, PostProcessing::None).unwrap();
                let spec = catalogue::spec(c.mechanism).unwrap();
                assert!(spec.releases(class), "{class}: {}", c.mechanism);
                assert!(spec.accepts(*kind), "{kind:?}: {}", c.mechanism);
                assert_eq!(spec.relations().len(), 2, "{}", c.mechanism);
                assert!(spec.check_post(c.post).is_ok(), "{}", c.mechanism);
                assert!(
                    c.sentence()
                        .starts_with(&format!("mechanism auto chose {} ", c.mechanism))
                );
                // simplex only on tables
                assert_eq!(
                    c.post == PostProcessing::SimplexProjection,
                    class == QueryClass::Marginals && *kind == BudgetKind::Pure
                );
            }
        }
        let c = choose(QueryClass::Marginals, &budgets[0].0, PostProcessing::None).unwrap();
        assert_eq!(c.mechanism, "adaptive-projection");
        let c = choose(
            QueryClass::Conjunctions,
            &budgets[1].0,
            PostProcessing::None,
        )
        .unwrap();
        assert_eq!(c.mechanism, "gaussian");
        assert!(
            choose(
                QueryClass::Marginals,
                &budgets[0].0,
                PostProcessing::SimplexProjection
            )
            .is_err()
        );
    }
}
