//! Every registered mechanism keeps its `produces_synthetic()` promise, and its synthetic
//! data (when it has some) reproduces its released answers.

use dp_bench::registry::{BudgetArgs, MECHANISMS, build_mechanism};
use dp_core::{Neighbouring, seeded_rng};
use dp_mechanisms::PostProcessing;
use dp_queries::{Dataset, Domain, MarginalWorkload};

#[test]
fn produces_synthetic_matches_every_release() {
    let domain = Domain::new(vec![("a".into(), 2), ("b".into(), 3), ("c".into(), 2)]).unwrap();
    let cols = vec![
        (0..60).map(|i| (i % 2) as u32).collect(),
        (0..60).map(|i| (i % 3) as u32).collect(),
        (0..60).map(|i| ((i / 7) % 2) as u32).collect(),
    ];
    let data = Dataset::from_columns(domain.clone(), cols).unwrap();
    let workload = MarginalWorkload::all_kway(&domain, 2).unwrap();
    // the central-model entries, which build a `Mechanism`; the local entries write answers
    // only (the catalogue's own tests check that they say so)
    for name in MECHANISMS
        .iter()
        .filter(|s| s.central().is_some())
        .map(|s| s.name)
    {
        let budget = [
            BudgetArgs {
                epsilon: Some(2.0),
                delta: Some(1e-6),
                rho: None,
            },
            BudgetArgs {
                epsilon: Some(2.0),
                delta: None,
                rho: None,
            },
        ]
        .iter()
        .find_map(|b| b.to_loss(name).ok())
        .unwrap_or_else(|| panic!("{name}: no budget accepted"));
        let mech = build_mechanism(name, budget, Neighbouring::ReplaceOne, PostProcessing::None)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        // a mechanism for binary attributes only (relaxed-projection) runs on the binary
        // attributes a and c
        let (data, workload) = match mech.release(&data, &workload, &mut seeded_rng(1)) {
            Err(e) if e.to_string().contains("binary attributes") => {
                let binary = data.select_attributes(&["a", "c"]).unwrap();
                let w = MarginalWorkload::all_kway(binary.domain(), 2).unwrap();
                (binary, w)
            }
            _ => (data.clone(), workload.clone()),
        };
        let release = mech
            .release(&data, &workload, &mut seeded_rng(1))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            mech.produces_synthetic(),
            release.synthetic.is_some(),
            "{name}: produces_synthetic() disagrees with its release"
        );
        if let Some(s) = &release.synthetic {
            let total: f64 = s.weights.iter().sum();
            assert!((total - 1.0).abs() < 1e-9, "{name}: weights sum to {total}");
            // weighted answers of the synthetic records
            let counts: Vec<Vec<u64>> = (0..s.records.n())
                .map(|r| {
                    let one = Dataset::from_columns(
                        domain.clone(),
                        (0..3).map(|a| vec![s.records.column(a)[r]]).collect(),
                    )
                    .unwrap();
                    workload.count_all(&one).unwrap()
                })
                .collect();
            // exact reproduction, or — for records sampled from a released model — agreement
            // within sampling error: each cell frequency of m i.i.d. records has standard
            // deviation ≤ 0.5/√m; 6 of them bound a false failure by 2e-9 per cell (normal
            // tail; 16 cells)
            let tol = if s.sampled_from_model {
                6.0 * 0.5 / (s.records.n() as f64).sqrt()
            } else {
                1e-6
            };
            for q in 0..workload.num_queries() {
                let a: f64 = counts
                    .iter()
                    .zip(&s.weights)
                    .map(|(c, w)| c[q] as f64 * w)
                    .sum();
                assert!(
                    (a - release.answers[q]).abs() < tol,
                    "{name}: query {q}: synthetic {a} vs released {}",
                    release.answers[q]
                );
            }
        }
    }
}
