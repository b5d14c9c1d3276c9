//! # dp-geometry
//!
//! Convex geometry for private query release. This crate knows nothing about privacy or
//! data; it will hold (see `docs/architecture.md` and issue 3):
//!
//! - convex bodies behind a linear-optimization-oracle trait (`LinearOracle`): convex hulls
//!   of implicit point sets, symmetric hulls, balls;
//! - Frank–Wolfe projection (classic and away-step/pairwise) with duality-gap certificates
//!   (seed 000 §3, seed 004 Lemma 2.2);
//! - the Grothendieck/elliptope SDP relaxation oracle (seed 000 §4);
//! - Gaussian mean width estimates, maximal separated sets, covers and the multi-scale
//!   (Dudley/chaining) decomposition (seed 004 Lemmas 2.7 and 4.2);
//! - Johnson–Lindenstrauss maps (seed 000 §5).
//!
//! Nothing is implemented yet: the crate exists so that the layering of the workspace
//! (`dp-core < dp-geometry < dp-queries < dp-mechanisms < dp-local < dp-bench`) is fixed.
#![forbid(unsafe_code)]
