//! # dp-local
//!
//! Local differential privacy for query release (seed 004 §5). This crate will hold the
//! client-side randomizers (the point release `W_x` of seed 004 Definition 5.5, with the
//! scale corrected so that `E[W_x] = x`; randomized response) and the server-side
//! aggregators (local projection, local coarse projection, local chaining; seed 004
//! Theorems 5.1 and 1.6), with client and server code in separate modules so that server
//! code can never reach a client's raw record.
//!
//! Nothing is implemented yet: the crate exists to fix the workspace's layering.
#![forbid(unsafe_code)]
