//! Cost of the chaining decomposition (seed 004 Lemma 4.2) on a br2000-like shape: 14
//! attributes of mixed sizes (7 binary, sizes up to 6; |𝒳| = 2 211 840), for several
//! workloads: the time of `ChainingMechanism::plan` (covers and nearest-point maps of every
//! level; no data, no noise) and the level sizes.
//!
//! `cargo run --release -p dp-mechanisms --example chaining_cost -- [workload ...]`
//! with workloads `all-Kway`, `random-Kway:M` or `mixed` (default: all three shapes).

use std::time::Instant;

use dp_core::PrivacyLoss;
use dp_mechanisms::ChainingParams;
use dp_mechanisms::projection::chaining::ChainDecomposition;
use dp_mechanisms::projection::metric::MarginalMetric;
use dp_queries::{Domain, MarginalWorkload, Universe};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let sizes = [2u32, 2, 2, 2, 2, 2, 2, 3, 3, 4, 4, 5, 6, 4];
    let domain = Domain::new(
        sizes
            .iter()
            .enumerate()
            .map(|(i, &s)| (format!("a{i}"), s))
            .collect(),
    )?;
    let universe = Universe::new(&domain, 1 << 22)?;
    let mut specs: Vec<String> = std::env::args().skip(1).collect();
    if specs.is_empty() {
        specs = vec!["all-2way".into(), "random-3way:64".into(), "mixed".into()];
    }
    // ε = 1, δ = 1e-9 on n = 38 000 (br2000's size); α from the projection bound.
    let mech = ChainingParams::new(PrivacyLoss::Approx {
        epsilon: 1.0,
        delta: 1e-9,
    })
    .check()?;
    for spec in specs {
        let workload = if spec == "mixed" {
            let l = |v: &[usize]| v.iter().map(|a| format!("a{a}")).collect::<Vec<_>>();
            let lists = vec![
                l(&[0]),
                l(&[1, 2]),
                l(&[3, 4, 5]),
                l(&[6, 7, 8, 9]),
                l(&[10, 11]),
                l(&[12]),
                l(&[13, 0, 5]),
                l(&[2, 9, 11]),
                l(&[4, 12]),
                l(&[7, 10, 13]),
            ];
            MarginalWorkload::from_attribute_lists(&domain, &lists)?
        } else {
            MarginalWorkload::parse_spec(&domain, &spec, 0)?
        };
        let metric = MarginalMetric::new(&universe, &workload)?;
        let exact = ChainDecomposition::exact_levels(&metric);
        let t = Instant::now();
        let plan = mech.plan(&universe, &workload, 38_000)?;
        let secs = t.elapsed().as_secs_f64();
        let sizes: Vec<usize> = plan
            .decomposition
            .levels
            .iter()
            .map(|l| l.centers.len())
            .collect();
        println!(
            "{spec}: {} tables, m = {}, |X| = {}, {} answer vectors, exact after {exact} level(s), \
             |S_j| = {sizes:?}, plan {secs:.2} s",
            workload.len(),
            workload.num_queries(),
            universe.len(),
            metric.num_answer_vectors(),
        );
    }
    Ok(())
}
