//! The same count on a Ballista cluster (feature `ballista`): the query of [`super`] is
//! planned here and run by a Ballista scheduler and its executors.
//!
//! * [`count_ballista`] sends the query to a running scheduler, `df://HOST:PORT` (every
//!   executor must read the file at the same absolute path: a shared file system or the same
//!   machine).
//! * [`LoopbackCluster`] starts a scheduler and `executors` executors **in this process**, on
//!   the loopback interface with ports the system picks, for tests, the scale bench and
//!   `cargo xtask ballista-loopback`. The cluster stops when the value is dropped.
//!
//! Privacy at the boundary is [`super`]'s: every error is a fixed message naming the stage,
//! out-of-domain codes and empty fields are refused by column, the query runs once.

use std::path::Path;
use std::time::Duration;

use ballista::prelude::SessionContextExt;
use ballista_core::serde::BallistaCodec;
use ballista_core::serde::protobuf::scheduler_grpc_client::SchedulerGrpcClient;
use datafusion::prelude::SessionContext;

use super::{EngineSettings, count_with_context, failed, runtime};
use crate::error::{QueryError, Result};
use crate::io::stream::StreamedCounts;
use crate::schema::Schema;
use crate::workload::MarginalWorkload;

/// The engine's name in messages.
const BALLISTA: &str = "Ballista";

/// Checks that `url` has the form `df://HOST:PORT` (a port is required: the scheduler has no
/// port dpqr could guess).
fn check_url(url: &str) -> Result<()> {
    let bad = || QueryError::EngineUnsupported {
        engine: BALLISTA.into(),
        reason: format!(
            "the scheduler address '{url}' is not of the form df://HOST:PORT (for example \
             df://127.0.0.1:50050)"
        ),
    };
    let rest = url.strip_prefix("df://").ok_or_else(bad)?;
    let (host, port) = rest.rsplit_once(':').ok_or_else(bad)?;
    if host.is_empty() || port.parse::<u16>().is_err() {
        return Err(bad());
    }
    Ok(())
}

/// Counts `workload` over the file at `path` on the Ballista scheduler at `url`
/// (`df://HOST:PORT`); the result and its errors are [`super::count_datafusion`]'s, with the
/// engine named "Ballista" (an unreachable scheduler fails the stage "reading the file and
/// counting": the connection is made when the query runs).
pub fn count_ballista(
    url: &str,
    path: &Path,
    schema: &Schema,
    workload: &MarginalWorkload,
    settings: &EngineSettings,
) -> Result<StreamedCounts> {
    check_url(url)?;
    let rt = runtime(BALLISTA)?;
    rt.block_on(remote_count(url, path, schema, workload, settings))
}

async fn remote_count(
    url: &str,
    path: &Path,
    schema: &Schema,
    workload: &MarginalWorkload,
    settings: &EngineSettings,
) -> Result<StreamedCounts> {
    let ctx = SessionContext::remote(url)
        .await
        .map_err(failed(BALLISTA, "connecting to the scheduler"))?;
    count_with_context(&ctx, BALLISTA, true, path, schema, workload, settings).await
}

/// A Ballista scheduler and executors running in this process on the loopback interface
/// (module docs). Dropping it stops them.
pub struct LoopbackCluster {
    runtime: tokio::runtime::Runtime,
    url: String,
    executors: usize,
}

impl LoopbackCluster {
    /// Starts a scheduler and `executors` executors (at least 1), each offering
    /// `cores_per_executor` task slots (at least 1), on ports the system picks.
    pub fn start(executors: usize, cores_per_executor: usize) -> Result<Self> {
        let runtime = runtime(BALLISTA)?;
        let url = runtime.block_on(async {
            let addr = ballista_scheduler::standalone::new_standalone_scheduler()
                .await
                .map_err(failed(BALLISTA, "starting the loopback scheduler"))?;
            let grpc = format!("http://{}:{}", addr.ip(), addr.port());
            for _ in 0..executors.max(1) {
                // the scheduler's server is spawned: wait until it accepts connections
                let mut attempts = 0;
                let client = loop {
                    match SchedulerGrpcClient::connect(grpc.clone()).await {
                        Ok(c) => break c,
                        Err(_) if attempts < 100 => {
                            attempts += 1;
                            tokio::time::sleep(Duration::from_millis(50)).await;
                        }
                        Err(e) => {
                            return Err(failed(BALLISTA, "connecting to the loopback scheduler")(
                                e,
                            ));
                        }
                    }
                };
                ballista_executor::new_standalone_executor(
                    client,
                    cores_per_executor.max(1),
                    BallistaCodec::default(),
                )
                .await
                .map_err(failed(BALLISTA, "starting a loopback executor"))?;
            }
            Ok::<String, QueryError>(format!("df://{}:{}", addr.ip(), addr.port()))
        })?;
        Ok(LoopbackCluster {
            runtime,
            url,
            executors: executors.max(1),
        })
    }

    /// The scheduler's address, `df://127.0.0.1:PORT`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The number of executors started.
    pub fn executors(&self) -> usize {
        self.executors
    }

    /// Counts on this cluster (as [`count_ballista`] with [`LoopbackCluster::url`]).
    pub fn count(
        &self,
        path: &Path,
        schema: &Schema,
        workload: &MarginalWorkload,
        settings: &EngineSettings,
    ) -> Result<StreamedCounts> {
        self.runtime
            .block_on(remote_count(&self.url, path, schema, workload, settings))
    }
}
