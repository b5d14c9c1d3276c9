//! `dpqr release --engine native|datafusion|ballista [--ballista-url df://HOST:PORT]`: where
//! the workload's exact counts are made (`dp_bench::pipeline::EngineChoice`, which checks
//! the flags and counts). The engines are cargo features of dp-bench (`datafusion`,
//! `ballista`), off by default; a dpqr built without one says which feature to enable.

use clap::{Args, ValueEnum};
use dp_bench::pipeline::{Engine, EngineChoice};

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
    /// The flags as the library's plain data.
    pub(crate) fn choice(&self) -> EngineChoice {
        EngineChoice {
            engine: match self.engine {
                EngineArg::Native => Engine::Native,
                EngineArg::Datafusion => Engine::Datafusion,
                EngineArg::Ballista => Engine::Ballista,
            },
            ballista_url: self.ballista_url.clone(),
        }
    }
}
