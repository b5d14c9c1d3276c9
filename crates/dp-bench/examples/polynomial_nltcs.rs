//! The polynomial release (Thaler, Ullman and Vadhan 2012) against the Gaussian baseline on
//! nltcs, all k-way marginals (every cell a conjunction), k = 2..=4.
//!
//! `cargo run -p dp-bench --example polynomial_nltcs -- [dataset] [epsilon] [seed]`
//!
//! Both spend the same zCDP budget (ρ from (ε, δ = 1e-9)) under replace-one neighbours. For
//! the polynomial: every degree from 1 to k (degree < k: the minimax polynomial for OR on
//! 0..=k, p(0) = 0; degree k: exact), with its certified approximation error, the number of
//! coefficients, the coefficient vector's Δ₂, and the measured mean and maximum absolute
//! error over all cells. Numbers quoted in docs/mechanisms/polynomial.md.
use dp_bench::experiments::projection::load_dataset;
use dp_core::{PrivacyLoss, seeded_rng};
use dp_mechanisms::polynomial::{Approximation, BitSense, PolynomialParams};
use dp_mechanisms::{GaussianParams, Mechanism};
use dp_queries::{MarginalWorkload, Workload};
use std::time::Instant;

fn errors(answers: &[f64], exact: &[i64], n: usize) -> (f64, f64) {
    let mut sum = 0.0;
    let mut max = 0.0f64;
    for (a, c) in answers.iter().zip(exact) {
        let e = (a - *c as f64 / n as f64).abs();
        sum += e;
        max = max.max(e);
    }
    (sum / answers.len() as f64, max)
}

fn main() -> dp_bench::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let dataset = args.get(1).map_or("nltcs", String::as_str);
    let eps: f64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1.0);
    let seed: u64 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(1);
    let data = load_dataset(dataset)?;
    let budget = PrivacyLoss::approx(eps, 1e-9)?;
    println!(
        "{dataset}: n = {}, d = {}, (ε, δ) = ({eps}, 1e-9), replace-one",
        data.n(),
        data.domain().len()
    );
    println!(
        "{:>2} {:<12} {:>6} {:>9} {:>10} {:>10} {:>10} {:>10} {:>8}",
        "k", "mechanism", "degree", "coeffs", "approx", "Δ₂", "mean err", "max err", "seconds"
    );
    for k in 2..=4usize {
        let workload = MarginalWorkload::parse_spec(data.domain(), &format!("all-{k}way"), 0)?;
        let exact = Workload::count_all(&workload, &data)?;
        let gauss = GaussianParams::new(budget).check()?;
        let t = Instant::now();
        let r = Mechanism::<MarginalWorkload>::release(
            &gauss,
            &data,
            &workload,
            &mut seeded_rng(seed),
        )?;
        let (mean, max) = errors(&r.answers, &exact, data.n());
        println!(
            "{k:>2} {:<12} {:>6} {:>9} {:>10} {:>10} {mean:>10.5} {max:>10.5} {:>8.2}",
            "gaussian",
            "-",
            exact.len(),
            "0",
            format!("{:.1}", (2.0 * workload.len() as f64).sqrt()),
            t.elapsed().as_secs_f64()
        );
        for degree in 1..=k {
            let mut params = PolynomialParams::new(budget);
            params.approximation = if degree == k {
                Approximation::Exact
            } else {
                Approximation::Degree(degree)
            };
            let mech = params.check()?;
            let approx = mech.approximation_for(k)?;
            let sizes = data.domain().sizes().to_vec();
            let noise = mech.noise_for(&sizes, &approx, BitSense::Fails)?;
            let t = Instant::now();
            let r = Mechanism::<MarginalWorkload>::release(
                &mech,
                &data,
                &workload,
                &mut seeded_rng(seed),
            )?;
            let secs = t.elapsed().as_secs_f64();
            let (mean, max) = errors(&r.answers, &exact, data.n());
            let coeffs = r
                .diagnostics
                .notes
                .first()
                .and_then(|n| n.split("; ").nth(1))
                .and_then(|s| s.split(' ').next())
                .unwrap_or("?")
                .to_string();
            println!(
                "{k:>2} {:<12} {:>6} {:>9} {:>10.4} {:>10.1} {mean:>10.5} {max:>10.5} {secs:>8.2}",
                "polynomial",
                approx.degree(),
                coeffs,
                approx.error(),
                noise.sensitivity.l2_squared.sqrt(),
            );
        }
    }
    Ok(())
}
