//! The engine rows of the scale bench (features `datafusion`, `ballista`) and the Ballista
//! loopback check of `cargo xtask ballista-loopback`.
//!
//! With `datafusion`, each generated table is also counted by DataFusion in this process,
//! as one `GROUP BY GROUPING SETS` query (`"datafusion"`) and as one `GROUP BY` per table
//! combined by `UNION ALL` (`"datafusion-per-table"`); with `ballista`, by the default plan
//! (`CountPlan::Auto`: grouping sets on a cluster) on a loopback cluster of
//! a scheduler and 2 executors started in this process (`"ballista-loopback-2"`). The counts are compared with the native streaming counts of
//! the same table (a difference is an error: the bench measures only equal counts).

use std::path::Path;
use std::time::Instant;

use dp_queries::io::engine::{CountPlan, EngineSettings, count_datafusion};
use dp_queries::{MarginalWorkload, Schema};

use super::real::{peak_mib, reset_peak};
use crate::{BenchError, Result};

/// The engines' counts of one table (module docs).
pub struct EngineRunner {
    #[cfg(feature = "ballista")]
    cluster: dp_queries::io::engine::ballista::LoopbackCluster,
}

impl EngineRunner {
    /// Starts what the engines need (with `ballista`, the loopback cluster of 2 executors).
    pub fn start() -> Result<Self> {
        Ok(EngineRunner {
            #[cfg(feature = "ballista")]
            cluster: dp_queries::io::engine::ballista::LoopbackCluster::start(2, 1)?,
        })
    }

    /// Counts `workload` over `path` with each engine; calls `push(method, seconds, peak
    /// resident MiB)` after each, and refuses counts that differ from `expected`.
    pub fn measure(
        &self,
        path: &Path,
        schema: &Schema,
        workload: &MarginalWorkload,
        expected: &[i64],
        mut push: impl FnMut(&str, f64, Option<f64>),
    ) -> Result<()> {
        let check = |method: &str, counts: &[i64]| {
            if counts == expected {
                Ok(())
            } else {
                Err(BenchError::BenchCheck(format!(
                    "the scale bench: {method} counted differently from the native pass"
                )))
            }
        };
        for (method, plan) in [
            ("datafusion", CountPlan::GroupingSets),
            ("datafusion-per-table", CountPlan::PerTable),
        ] {
            let settings = EngineSettings {
                plan,
                target_partitions: None,
            };
            reset_peak();
            let t = Instant::now();
            let got = count_datafusion(path, schema, workload, &settings)?;
            let secs = t.elapsed().as_secs_f64();
            check(method, &got.counts)?;
            push(method, secs, peak_mib());
        }
        #[cfg(feature = "ballista")]
        {
            reset_peak();
            let t = Instant::now();
            let got = self
                .cluster
                .count(path, schema, workload, &EngineSettings::default())?;
            let secs = t.elapsed().as_secs_f64();
            check("ballista-loopback-2", &got.counts)?;
            push("ballista-loopback-2", secs, peak_mib());
        }
        Ok(())
    }
}

/// `cargo xtask ballista-loopback`: starts a scheduler and `executors` executors on
/// 127.0.0.1 in this process, counts all 2-way marginals of the bundled table `dataset`
/// (its CSV at `csv`) on it, and compares them with the native streaming count. Returns the
/// scheduler's address and a one-line summary.
#[cfg(feature = "ballista")]
pub fn ballista_loopback(
    dataset: &str,
    csv: &Path,
    executors: usize,
) -> Result<(dp_queries::io::engine::ballista::LoopbackCluster, String)> {
    use dp_queries::{StreamSettings, count_csv_streaming};
    let b = crate::io::datasets::bundled(dataset)?;
    let schema = Schema::from_json_str(b.domain_json, &format!("{}-domain.json", b.name))?;
    let workload = MarginalWorkload::all_kway(schema.domain(), 2)?;
    let cluster = dp_queries::io::engine::ballista::LoopbackCluster::start(executors, 1)?;
    let t = Instant::now();
    let got = cluster.count(csv, &schema, &workload, &EngineSettings::default())?;
    let secs = t.elapsed().as_secs_f64();
    let native = count_csv_streaming(
        b.csv,
        dataset,
        &schema,
        &dp_queries::ReadOptions::default(),
        &workload,
        &StreamSettings::default(),
    )?;
    if got.counts != native.counts {
        return Err(BenchError::BenchCheck(format!(
            "Ballista counted {dataset} differently from the native pass"
        )));
    }
    let summary = format!(
        "{} executors at {}: {} counts of {} 2-way marginals of {dataset} in {secs:.2} s, equal \
         to the native counts",
        cluster.executors(),
        cluster.url(),
        got.counts.len(),
        workload.len()
    );
    Ok((cluster, summary))
}
