//! # dp-geometry
//!
//! Convex geometry for private query release. This crate knows nothing about privacy or
//! data: it is pure geometry, used by the projection-style mechanisms of `dp-mechanisms`.
//!
//! | module | contents | source |
//! |---|---|---|
//! | [`points`] | [`PointSet`]: finite point sets known through inner products; [`DensePoints`], [`SubsetPoints`], [`BlockOneHotPoints`] | — |
//! | [`bodies`] | [`LinearOracle`] / [`AtomicBody`]: convex bodies behind a linear-optimization oracle; [`ConvexHull`], [`SymmetricHull`], [`Ball`] | seed 000 §3 |
//! | [`accelerated`] | accelerated projected gradient on the convex weights (FISTA, restarts), same gap certificate | Beck–Teboulle 2009 |
//! | [`min_norm_point`] | Wolfe's minimum-norm-point algorithm (fully corrective; incremental Cholesky of the active set's Gram matrix), same settings and gap certificate | Wolfe 1976 |
//! | [`frank_wolfe`] | Frank–Wolfe projection (classic, away-step, pairwise) with duality-gap certificates | seed 000 §3, seed 004 Lemma 2.2 |
//! | [`gaussian`] | Box–Muller normals; [`gaussian_mean_width`] | seed 004 §2.2 |
//! | [`grothendieck`] | bipartite Grothendieck SDP by the mixing method, with a certified dual upper bound and hyperplane rounding | seed 000 Thm 4.3, Lemma 4.2; Wang–Chang–Kolter 2017 |
//! | [`relaxation`] | [`ParityRelaxation`]: the relaxation `L ⊇ K` of the k-wise parity body (subset-indexed), a [`LinearOracle`] through the Grothendieck SDP | seed 000 §4, Lemmas 4.1, 4.2, 4.4 |
//! | [`covers`] | [`Metric`], [`maximal_separated_subset`], [`nearest_point_map`] | seed 004 §2.4, Lemma 2.7 |
//! | [`multiscale`] | [`MultiscaleDecomposition`] (chaining) | seed 004 Lemma 4.2 |
//! | [`jl`] | [`JohnsonLindenstrauss`] random projections | seed 000 §5 |
//!
//! Parallelism is always an explicit [`Parallelism`] argument, never global state; every
//! randomized function takes `rng: &mut R` with `R: Rng + ?Sized` (so `&mut dyn CryptoRng`
//! works too).
#![forbid(unsafe_code)]

pub mod accelerated;
pub mod bodies;
pub mod covers;
pub mod error;
pub mod frank_wolfe;
pub mod gaussian;
pub mod grothendieck;
pub mod jl;
pub mod min_norm_point;
pub mod multiscale;
pub mod parallel;
pub mod points;
pub mod relaxation;

pub use bodies::{
    AtomChoice, AtomOracle, AtomicBody, Ball, ConvexHull, EnumeratedAtoms, LinearOracle,
    OracleAnswer, SymmetricHull,
};
pub use covers::{Metric, extend_separated_subset, maximal_separated_subset, nearest_point_map};
pub use error::{GeometryError, Result};
pub use frank_wolfe::{
    FrankWolfeResult, FrankWolfeSettings, FrankWolfeSettingsBuilder, FrankWolfeVariant,
    SolveStatus, frank_wolfe_project, frank_wolfe_project_atoms, frank_wolfe_project_hull,
};
pub use gaussian::{fill_standard_normal, gaussian_mean_width};
pub use grothendieck::{
    CertificateMethod, GrothendieckSettings, GrothendieckSolution, GrothendieckStatus,
    SignAssignment, bilinear_value, round_to_signs, solve_grothendieck, solve_grothendieck_from,
};
pub use jl::{JlEntries, JohnsonLindenstrauss};
pub use min_norm_point::min_norm_point_project_generated;
pub use multiscale::{Chain, Increment, MultiscaleDecomposition, MultiscaleLevel};
pub use parallel::Parallelism;
pub use points::{BlockOneHotPoints, DensePoints, PointSet, SubsetPoints};
pub use relaxation::{MAX_RELAXATION_ENTRIES, ParityRelaxation, index_sets};
