//! Counting on a query engine (`--engine datafusion|ballista`): the engines are cargo
//! features of dp-bench (`datafusion`, `ballista`), off by default; a build without one
//! says which feature to enable.

use super::source::DataSpec;
use crate::{BenchError, Result};
use dp_queries::AnyWorkload;

/// Where the workload's exact counts are made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Engine {
    /// This process's own loader and counters (in memory, or streamed).
    #[default]
    Native,
    /// One DataFusion query over a .csv or .parquet file, in this process.
    Datafusion,
    /// The same query on a Ballista cluster ([`EngineChoice::ballista_url`]).
    Ballista,
}

/// The engine of a release and, for Ballista, its scheduler, as the flags give them
/// (`--engine`, `--ballista-url`); checked against each other by [`EngineChoice::check`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EngineChoice {
    /// The engine.
    pub engine: Engine,
    /// The Ballista scheduler, `df://HOST:PORT`.
    pub ballista_url: Option<String>,
}

impl EngineChoice {
    /// Whether the counts come from an engine rather than the native loader.
    pub fn is_engine(&self) -> bool {
        self.engine != Engine::Native
    }

    /// Checks the choice against itself, the data flags and the features this build has,
    /// before anything is read.
    pub fn check(&self, data: &DataSpec) -> Result<()> {
        match (self.engine, &self.ballista_url) {
            (Engine::Ballista, None) => {
                return Err(BenchError::Usage(
                    "--engine ballista needs the scheduler's address: --ballista-url \
                     df://HOST:PORT"
                        .into(),
                ));
            }
            (Engine::Native | Engine::Datafusion, Some(_)) => {
                return Err(BenchError::Usage(
                    "--ballista-url is the scheduler of --engine ballista: add --engine \
                     ballista or drop --ballista-url"
                        .into(),
                ));
            }
            _ => {}
        }
        if !self.is_engine() {
            return Ok(());
        }
        let (feature, built) = match self.engine {
            Engine::Ballista => ("ballista", cfg!(feature = "ballista")),
            _ => ("datafusion", cfg!(feature = "datafusion")),
        };
        if !built {
            return Err(BenchError::Usage(format!(
                "this dpqr was built without the {feature} engine: rebuild it with the cargo \
                 feature `{feature}` (cargo build -p dp-bench --features {feature}), or use \
                 --engine native"
            )));
        }
        if !data.read.is_default() {
            return Err(BenchError::Usage(
                "an engine reads comma-separated files holding exactly the domain's columns: \
                 drop --delimiter and --ignore-extra-columns, or use --engine native"
                    .into(),
            ));
        }
        if data.attributes.is_some() {
            return Err(BenchError::Usage(
                "an engine reads files holding exactly the domain's columns: drop --attributes"
                    .into(),
            ));
        }
        if data.data.is_none() {
            return Err(BenchError::Usage(
                "an engine reads a file: give --data FILE.csv|FILE.parquet --domain FILE.json \
                 (the bundled tables are data/NAME/NAME.csv in the repository)"
                    .into(),
            ));
        }
        Ok(())
    }

    /// The exact counts of `workload` from the engine and the number of records (private
    /// under add/remove neighbours: the caller reads it only where n is public). Without
    /// `allow_empty`, a file with no records is an error. Called after [`Self::check`].
    #[cfg(feature = "datafusion")]
    pub fn counts(
        &self,
        data: &DataSpec,
        workload: &AnyWorkload,
        allow_empty: bool,
    ) -> Result<(Vec<i64>, usize)> {
        use dp_queries::io::engine::EngineSettings;
        let (Some(path), Some(domain)) = (&data.data, &data.domain) else {
            return Err(BenchError::Internal(
                "an engine counts a --data file read through its --domain; \
                 EngineChoice::check refuses a request without them before counting"
                    .into(),
            ));
        };
        let Some(marginals) = workload.as_marginals() else {
            return Err(BenchError::Usage(
                "the engines count marginal workloads only: use --engine native for this \
                 workload"
                    .into(),
            ));
        };
        let schema = dp_queries::Schema::from_json_file(domain)?;
        let settings = EngineSettings::default();
        let counted = match self.engine {
            #[cfg(feature = "ballista")]
            Engine::Ballista => {
                let url = self.ballista_url.as_deref().unwrap_or_default();
                dp_queries::io::engine::ballista::count_ballista(
                    url, path, &schema, marginals, &settings,
                )?
            }
            _ => dp_queries::io::engine::count_datafusion(path, &schema, marginals, &settings)?,
        };
        if counted.rows == 0 && !allow_empty {
            return Err(dp_queries::QueryError::NoRecords {
                file: path.display().to_string(),
            }
            .into());
        }
        Ok((counted.counts, super::source::row_count(counted.rows)?))
    }

    /// Without the engines, [`Self::check`] has already refused every engine.
    #[cfg(not(feature = "datafusion"))]
    pub fn counts(
        &self,
        _data: &DataSpec,
        _workload: &AnyWorkload,
        _allow_empty: bool,
    ) -> Result<(Vec<i64>, usize)> {
        Err(BenchError::Internal(
            "this dpqr was built without the engines, and EngineChoice::check refuses every \
             engine before counting"
                .into(),
        ))
    }
}
