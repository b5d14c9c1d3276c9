//! # dp-queries
//!
//! Domains, datasets, loaders, query workloads and fast exact evaluation for `dpqr`.
//! This crate never adds noise: it defines *what* is released (counting queries over a
//! categorical domain) and computes the exact answers that mechanisms perturb.
//!
//! ## Contents
//!
//! Two parts: **the model** — what is released and how it is counted, in memory — and
//! **[`io`]** — reading records from files (and writing them). `io` depends on the model; the
//! model never imports `io` (a test of this file checks it).
//!
//! The model:
//!
//! | module | concept |
//! |---|---|
//! | [`error`] | [`QueryError`], the crate's single error type, and [`Result`] |
//! | [`domain`] | [`Domain`]: ordered named attributes with sizes; the `NAME-domain.json` format |
//! | [`schema`] | [`Schema`]: a public domain file with category labels or numeric bins per attribute, to encode raw values; the domain file's readers ([`Domain::from_json_file`]); [`draft_schema`], a NON-PRIVATE drafting helper |
//! | [`dataset`] | [`Dataset`]: `n` records as column-major integer codes, in memory |
//! | [`workload`] | [`Workload`]: the one abstraction for a workload of linear counting queries (counting, contributions, the bounds sensitivities are computed from, the touched attributes), each implementation beside its type: [`MarginalWorkload`] of [`Marginal`] tables, [`ConjunctionWorkload`] (conjunctions / disjunctions / parities of one-hot literals, seed 003 §5–§7), [`ThresholdWorkload`] and [`DecisionListWorkload`] (seed 002 §4.2, §4.3), [`ExplicitWorkload`] (integer query matrices); [`AnyWorkload`], a workload of any class chosen at run time, and its JSON forms (`workload/any.rs`) |
//! | [`onehot`] | [`BinaryDataset`]: one-hot, bit-packed rows; conjunction and parity counts; [`OneHotMarginals`]: a categorical marginal workload as binary bit tables |
//! | [`parity`] | [`SignRecords`] (binary records as packed signs), [`ParityQueries`], the exact marginal ↔ parity transform [`MarginalParityTransform`] (seed 000 §2.4) |
//! | [`metrics`] | [`ErrorReport`]: max / mean / RMS error and mean per-table ℓ1 |
//! | [`graphical`] | [`GraphicalModel`]: the Private-PGM estimator (McKenna et al. 2019) — a maximum-entropy graphical model fitted to noisy marginals by mirror descent with junction-tree inference; exact marginals and sampling |
//! | [`implicit`] | [`MarginalRecordOracle`]: the linear-optimisation oracle over the records of an implicit universe (exact elimination or coordinate ascent), an `AtomOracle` for projections |
//! | [`universe`] | [`Universe`]: explicit small universes; [`MarginalPoints`]: their answer vectors as an implicit point set |
//!
//! [`io`]:
//!
//! | module | concept |
//! |---|---|
//! | [`io::format`] | data files by path and the one format dispatch — CSV, gzip-compressed CSV or Parquet ([`is_parquet`], [`open_csv`], [`FileFormat`]) — with the loaders and counter that choose by it: [`Dataset::load_csv`], [`Dataset::load_file`], [`count_file_streaming`] |
//! | [`io::csv`] | the validating CSV readers ([`Dataset::from_csv_reader`], …) and their accepted format; [`Dataset::write_csv`] |
//! | [`io::options`] | [`ReadOptions`]: the CSV delimiter and whether columns outside the schema are ignored |
//! | [`io::check`] | **NON-PRIVATE** [`io::check_csv`]: the data check before a release (empty cells, values going to `other`, near-misses of labels and bins, per column) |
//! | [`io::stream`] | [`count_csv_streaming`]: a workload's exact counts over a CSV file in one pass, in bounded memory, batches decoded and counted in parallel, equal to the in-memory counts |
//! | `io::parquet` (cargo feature `parquet`, off by default) | Parquet input: `Dataset::from_parquet`, `count_parquet_streaming` (row groups in parallel), `ParquetCodesWriter` |
//! | `io::engine` (features `datafusion`, `ballista`) | a marginal workload's exact counts as one DataFusion query over CSV / Parquet, in process or on a Ballista cluster; engine errors mapped to fixed messages |
//!
//! ## Conventions
//!
//! * Codes of attribute `i` are `0..domain.size(i)`; every dataset has `n >= 1` records.
//! * A marginal's cells are numbered row-major, the **last** attribute varying fastest.
//! * A workload's queries are its tables' cells concatenated **in workload order**; answer
//!   vectors everywhere in dpqr use this order. Normalized answers are `count / n`.
//! * Randomized constructors take `rng: &mut R` with `R: Rng + ?Sized` (so `&mut dyn
//!   CryptoRng` works); there is no global RNG.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod dataset;
pub mod domain;
pub mod error;
pub mod graphical;
pub mod implicit;
pub mod io;
pub mod metrics;
pub mod onehot;
pub mod parity;
pub mod schema;
pub mod universe;
pub mod workload;

pub use dataset::Dataset;
pub use domain::Domain;
pub use error::{QueryError, Result};
pub use graphical::{
    CellGroups, FitReport, GraphicalModel, GraphicalModelSettings, JunctionTree, NoisyMarginal,
    WarmStart,
};
pub use implicit::{MarginalRecordOracle, OracleStrategy, RecordOracleSettings};
pub use io::{
    FileFormat, IN_MEMORY, ReadOptions, StreamSettings, StreamedCounts, check_file_header,
    count_csv_streaming, count_file_streaming, is_parquet, open_csv,
};
#[cfg(feature = "parquet")]
pub use io::{ParquetCodesWriter, count_parquet_streaming};
pub use metrics::ErrorReport;
pub use onehot::{BinaryDataset, MAX_BIT_TABLES, OneHotMarginals};
pub use parity::{MarginalParityTransform, ParityQueries, SignRecords};
pub use schema::{AttributeSchema, DraftSettings, Encoding, Schema, draft_schema};
pub use universe::{MAX_UNIVERSE, MarginalPoints, Universe};
pub use workload::{
    AnswerLayout, AnyWorkload, BitColumns, ConjunctionWorkload, ContributionBounds,
    DecisionListShape, DecisionListWorkload, ExplicitWorkload, Literal, MAX_QUERIES, Marginal,
    MarginalWorkload, Parallelism, QueryClass, QueryKind, ThresholdQuery, ThresholdWorkload,
    Workload,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_types_are_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<Domain>();
        check::<Dataset>();
        check::<Marginal>();
        check::<MarginalWorkload>();
        check::<BinaryDataset>();
        check::<ErrorReport>();
        check::<QueryError>();
        check::<GraphicalModel>();
        check::<JunctionTree>();
    }

    /// The model never imports `io` (crate docs): no code line outside `io/` (and the crate
    /// root's re-exports) names `crate::io` or `super::io`. Doc links may.
    #[test]
    fn the_model_never_imports_io() {
        fn files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    files(&path, out);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    out.push(path);
                }
            }
        }
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut all = Vec::new();
        files(&src, &mut all);
        let model: Vec<_> = all
            .iter()
            .filter(|p| !p.starts_with(src.join("io")) && **p != src.join("lib.rs"))
            .collect();
        assert!(model.len() > 10, "{model:?}");
        for path in model {
            let text = std::fs::read_to_string(path).unwrap();
            for (i, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or("");
                assert!(
                    !code.contains("crate::io") && !code.contains("super::io"),
                    "{}:{}: the model imports io: {line}",
                    path.display(),
                    i + 1
                );
            }
        }
    }

    #[test]
    fn dyn_crypto_rng_is_accepted() {
        use rand::SeedableRng;
        let domain = Domain::new((0..6).map(|i| (format!("a{i}"), 2)).collect()).unwrap();
        let mut chacha = rand_chacha::ChaCha20Rng::seed_from_u64(4);
        let rng: &mut dyn rand::CryptoRng = &mut chacha;
        let w = MarginalWorkload::random_kway(&domain, 2, 3, None, rng).unwrap();
        assert_eq!(w.len(), 3);
    }
}
