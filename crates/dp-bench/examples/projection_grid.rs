//! One dataset (or one named experiment) of the full projection grid (`cargo xtask bench`
//! runs all), or `quick`:
//! `cargo run --release -p dp-bench --example projection_grid -- nltcs|projection-nltcs-mixed|… [out-dir]`
fn main() -> dp_bench::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let dataset = args.get(1).map_or("nltcs", String::as_str);
    let out = std::path::PathBuf::from(args.get(2).map_or("target/dpqr-bench", String::as_str));
    std::fs::create_dir_all(&out).map_err(dp_bench::io_error(&out))?;
    use dp_bench::experiments::projection::ProjectionExperiment;
    let exps: Vec<_> = if dataset == "quick" {
        ProjectionExperiment::quick()
    } else {
        ProjectionExperiment::full()
            .into_iter()
            .filter(|e| e.dataset == dataset || e.name == dataset)
            .collect()
    };
    dp_bench::experiments::projection::run_and_report_experiments(&exps, &out)
}
