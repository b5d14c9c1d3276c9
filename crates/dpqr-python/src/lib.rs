//! # dpqr-python
//!
//! The Rust half of the Python package `dpqr` (`python/`, built by maturin): a release from
//! Python is one run of [`dp_bench::pipeline::release`], the pipeline `dpqr release`
//! runs, with the keyword arguments of `dpqr.release()` turned into the same
//! [`dp_bench::pipeline::ReleaseRequest`] the command line builds from its flags. There is
//! no mechanism logic here and none in Python: the Python side only writes a DataFrame (as
//! Parquet), a schema dict and a workload list to files, and reads the answers, report and
//! synthetic records the pipeline writes back into DataFrames (docs/python.md).
//!
//! | module | what |
//! |---|---|
//! | [`arguments`] | the keyword arguments as plain data, their types checked, → the pipeline's request |
//! | [`run`] | the release (outputs chosen as the command line would be told), the catalogue as JSON, the NON-PRIVATE schema draft |
//! | [`error`] | the crate's one error type; Python raises every error as `dpqr.DpqrError` |
//! | `module` | (feature `python`) the PyO3 extension module `dpqr._native` |
//!
//! Without the feature `python` the crate builds and tests without PyO3 or a Python to
//! link, so `cargo test --workspace` covers the arguments' checks; `python/ci.sh` builds
//! the extension and runs the Python tests.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod arguments;
pub mod error;
#[cfg(feature = "python")]
mod module;
pub mod run;

pub use error::{BindingError, Result};
