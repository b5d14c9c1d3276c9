//! The iterative family: multiplicative weights, the Iterative Construction, MWEM and
//! DualQuery (seed 001; seed 003; Hardt–Ligett–McSherry 2012).
//!
//! | module | what |
//! |---|---|
//! | [`mw`] | [`MultiplicativeWeights`] in log space, its regret bound (seed 003 Alg. 1) |
//! | [`oracle`] | DualQuery's best-response MAX-CSP: [`BestResponseOracle`], exact [`ExhaustiveOracle`], heuristic [`MaxCspOracle`] (local search + branch and bound) |
//! | [`ilp`] | [`IlpOracle`]: the best response as seed 003 §5's integer program, branch and bound over `microlp`'s LP relaxation with a node limit |
//! | [`universe_mw`] | MW over an explicit universe for marginal cells (the DUA of IC and MWEM) |
//! | [`ic`] | the Iterative Construction (seed 001 Alg. 1): [`DatabaseUpdate`], [`Distinguisher`], [`MwDua`], [`EmDistinguisher`], Thm 4/5 formulas, the `ic-mw` mechanism |
//! | [`mwem`] | MWEM (Hardt–Ligett–McSherry 2012), pure ε or zCDP accounting, the `mwem` mechanism |
//! | [`chaining_worst_case`] | the Chaining Mechanism for worst-case error (seed 004 §4.3, Thm 1.5): ℓ∞ Lemma 4.2 decomposition + MWEM-style PMW per level, the `chaining-worst-case` mechanism |
//! | [`query_sampler`] | [`ExactQueryWeights`]: DualQuery's query distribution `Qᵗ` in exact integers and its exact rejection sampler (dyadic envelope, exact Bernoulli(exp(−γ)) and Bernoulli(2/e) coins) |
//! | [`dualquery`] | DualQuery (seed 003 Alg. 2), Thm 4.2 / 4.3 privacy, Remark 4.7 parameters, the `dualquery` mechanism |
//!
//! Every mechanism here is stated for **replace-one** neighbours: `n` is public and the
//! answers are normalised by it (docs/privacy.md).

pub mod chaining_worst_case;
pub mod dualquery;
pub mod ic;
pub mod ilp;
pub mod mw;
pub mod mwem;
pub mod oracle;
pub mod query_sampler;
pub mod universe_mw;

pub use chaining_worst_case::{
    ChainingWorstCase, ChainingWorstCaseParams, WorstCasePlan, level_sensitivity,
    linf_marginal_decomposition,
};
pub use dualquery::{
    DEFAULT_ETA, DualQuery, DualQueryConfig, DualQueryCost, DualQueryOutput, DualQueryParams,
    OracleChoice, TheoryParameters, dual_query, dual_query_counts, dualquery_approx_epsilon,
    dualquery_loss, dualquery_pure_epsilon, dualquery_sample_epsilon, max_rounds,
};
pub use ic::{
    DatabaseUpdate, Distinguisher, EmDistinguisher, IcParams, IcPlan, IcTrace,
    IterativeConstruction, MwDua, ic_accuracy_requirement, ic_epsilon0, ic_epsilon0_thm4,
    iterative_construction, mw_dua_bound,
};
pub use ilp::IlpOracle;
pub use mw::{MultiplicativeWeights, regret_bound};
pub use mwem::{Mwem, MwemMeasurement, MwemOutput, MwemParams, MwemPlan, MwemTrace};
pub use oracle::{
    BestResponse, BestResponseOracle, BestResponseProblem, Clause, ClauseKind, ExhaustiveOracle,
    FreeAttributes, MaxCspOracle,
};
pub use query_sampler::{ExactQueryWeights, RoundSampler, expected_proposals_bound};
