//! `dpqr release --engine native|datafusion|ballista [--ballista-url df://HOST:PORT]`: where
//! the workload's exact counts are made. The engines are cargo features of dp-bench
//! (`datafusion`, `ballista`), off by default; a dpqr built without one says which feature
//! to enable.

use clap::{Args, ValueEnum};
use dp_bench::{BenchError, Result};
use dp_queries::AnyWorkload;

use crate::data::DataArgs;

/// The counting engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum EngineArg {
    /// This process's own loader and counters (in memory, or streamed with --stream).
    Native,
    /// One DataFusion query over a .csv or .parquet file, in this process.
    Datafusion,
    /// The same query on a Ballista cluster (--ballista-url).
    Ballista,
}

#[derive(Args)]
pub(crate) struct EngineArgs {
    /// Where the workload is counted: native (the default), datafusion (one DataFusion query
    /// over the --data file, .csv or .parquet, in this process) or ballista (the same query
    /// on the Ballista cluster of --ballista-url). With an engine the release is made from
    /// the counts, as with --stream (gaussian, laplace); engine errors are reported by stage
    /// only, without the engine's own text, which may quote the data.
    #[arg(long, value_enum, default_value_t = EngineArg::Native, conflicts_with = "stream")]
    pub(crate) engine: EngineArg,
    /// The Ballista scheduler of --engine ballista, df://HOST:PORT (every executor must read
    /// the --data file at the same absolute path).
    #[arg(long, value_name = "df://HOST:PORT")]
    pub(crate) ballista_url: Option<String>,
}

impl EngineArgs {
    /// Whether the counts come from an engine rather than the native loader.
    pub(crate) fn is_engine(&self) -> bool {
        self.engine != EngineArg::Native
    }

    /// Checks the flags against each other and against the features this dpqr was built
    /// with, before anything is read.
    pub(crate) fn check(&self, data: &DataArgs) -> Result<()> {
        match (self.engine, &self.ballista_url) {
            (EngineArg::Ballista, None) => {
                return Err(BenchError::Usage(
                    "--engine ballista needs the scheduler's address: --ballista-url \
                     df://HOST:PORT"
                        .into(),
                ));
            }
            (EngineArg::Native | EngineArg::Datafusion, Some(_)) => {
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
        let feature = match self.engine {
            EngineArg::Ballista => "ballista",
            _ => "datafusion",
        };
        let built = match self.engine {
            EngineArg::Ballista => cfg!(feature = "ballista"),
            _ => cfg!(feature = "datafusion"),
        };
        if !built {
            return Err(BenchError::Usage(format!(
                "this dpqr was built without the {feature} engine: rebuild it with the cargo \
                 feature `{feature}` (cargo build -p dp-bench --features {feature}), or use \
                 --engine native"
            )));
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
    /// `allow_empty`, a file with no records is an error.
    #[cfg(feature = "datafusion")]
    pub(crate) fn counts(
        &self,
        data: &DataArgs,
        workload: &AnyWorkload,
        allow_empty: bool,
    ) -> Result<(Vec<i64>, usize)> {
        use dp_queries::io::engine::EngineSettings;
        self.check(data)?;
        let (Some(path), Some(domain)) = (&data.data, &data.domain) else {
            return Err(BenchError::Usage(
                "give --data FILE.csv|FILE.parquet --domain FILE.json".into(),
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
            EngineArg::Ballista => {
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
        let rows = usize::try_from(counted.rows)
            .map_err(|_| BenchError::Usage("more records than this machine can count".into()))?;
        Ok((counted.counts, rows))
    }

    /// Without the engines, `check` has already refused every engine.
    #[cfg(not(feature = "datafusion"))]
    pub(crate) fn counts(
        &self,
        data: &DataArgs,
        _workload: &AnyWorkload,
        _allow_empty: bool,
    ) -> Result<(Vec<i64>, usize)> {
        self.check(data)?;
        Err(BenchError::Usage(
            "this dpqr was built without the engines: use --engine native".into(),
        ))
    }
}
