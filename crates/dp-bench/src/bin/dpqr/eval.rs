//! `dpqr eval` (NON-PRIVATE): errors of a released answers file against the true data.

use clap::Args;
use dp_bench::io::answers::read_answers;
use dp_bench::{BenchError, Result};
use dp_queries::{Domain, ErrorReport};
use std::path::PathBuf;

use crate::data::DataArgs;

#[derive(Args)]
pub(crate) struct EvalArgs {
    #[command(flatten)]
    pub(crate) data: DataArgs,
    /// Answers CSV written by `dpqr release`.
    #[arg(long)]
    pub(crate) answers: PathBuf,
    /// Print the report as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

pub(crate) fn eval(args: &EvalArgs) -> Result<()> {
    let data = args.data.load(false)?;
    let domain: &Domain = data.domain();
    let (workload, answers) = read_answers(&args.answers, domain)?;
    let truth = workload.answers(&data)?;
    let report = ErrorReport::compute(&workload, &answers, &truth)?;
    eprintln!(
        "WARNING: NON-PRIVATE EVALUATION. These error figures are computed from the true data \
         and are not differentially private; use them for benchmarking only, never publish them \
         as part of a release."
    );
    if args.json {
        let text = serde_json::to_string(&report)
            .map_err(|e| BenchError::Usage(format!("cannot encode report: {e}")))?;
        println!("{text}");
    } else {
        println!(
            "marginals: {}  queries: {}",
            workload.len(),
            workload.num_queries()
        );
        println!("max_abs_error:       {:.6e}", report.max_abs);
        println!("mean_abs_error:      {:.6e}", report.mean_abs);
        println!("rmse:                {:.6e}", report.rmse);
        println!("mean_marginal_l1:    {:.6e}", report.mean_marginal_l1);
    }
    Ok(())
}
