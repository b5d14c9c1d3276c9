//! Speed of the projection on nltcs all-3way: one `inner_all` per kernel, then the solvers.
//! `cargo run --release -p dp-bench --example projection_speed -- [dataset] [eps] [pairwise-cap] [accelerated-cap]`
fn main() -> dp_bench::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let dataset = args.get(1).map_or("nltcs", String::as_str);
    let eps: f64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1.0);
    let pw: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(300);
    let acc: usize = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(5000);
    for (name, ms) in dp_bench::experiments_projection::kernel_timings(dataset, 9)? {
        println!("inner_all {name:<28} {ms:9.3} ms");
    }
    let mut solvers = vec![];
    if pw > 0 {
        solvers.push(("pairwise", pw));
    }
    if acc > 0 {
        solvers.push(("accelerated", acc));
    }
    let recs = dp_bench::experiments_projection::solver_speed(dataset, eps, &solvers, 1)?;
    print!(
        "{}",
        dp_bench::experiments_projection::format_speed_table(&recs)
    );
    Ok(())
}
