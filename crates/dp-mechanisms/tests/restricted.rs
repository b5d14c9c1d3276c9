//! `OnWorkloadAttributes` (issue #11 §1): a workload over a few attributes of a wide table is
//! released by the projection family over those attributes; the release is exactly the inner
//! mechanism's on the data restricted by hand (same seed), with the same certificate.

use dp_core::{PrivacyLoss, seeded_rng};
use dp_mechanisms::projection::{ProjectionSettings, UniverseChoice};
use dp_mechanisms::{Mechanism, OnWorkloadAttributes, ProjectionParams};
use dp_queries::{Dataset, Domain, MarginalWorkload};

fn lists() -> Vec<Vec<String>> {
    vec![
        vec!["a3".into(), "a17".into()],
        vec!["a17".into(), "a5".into()],
    ]
}

#[test]
fn a_narrow_workload_of_a_wide_table_is_released_over_its_attributes() {
    // 30 binary attributes: the universe (2^30 records) is above the explicit cap
    let domain = Domain::new((0..30).map(|i| (format!("a{i}"), 2)).collect()).unwrap();
    let n = 200usize;
    let cols: Vec<Vec<u32>> = (0..30)
        .map(|j| (0..n).map(|i| ((i * (j + 1) + i / 7) % 2) as u32).collect())
        .collect();
    let data = Dataset::from_columns(domain.clone(), cols).unwrap();
    let w = MarginalWorkload::from_attribute_lists(&domain, &lists()).unwrap();
    let explicit = || {
        ProjectionParams::new(PrivacyLoss::zcdp(1.0).unwrap())
            .settings(ProjectionSettings {
                universe: UniverseChoice::Explicit,
                ..ProjectionSettings::default()
            })
            .check()
            .unwrap()
    };
    assert!(explicit().works_over_a_universe());
    // the whole domain is refused
    assert!(explicit().release(&data, &w, &mut seeded_rng(1)).is_err());
    let wrapped = OnWorkloadAttributes::new(Box::new(explicit()));
    assert_eq!(wrapped.certificate(), explicit().certificate());
    let r = wrapped.release(&data, &w, &mut seeded_rng(1)).unwrap();
    assert_eq!(r.answers.len(), w.num_queries());
    // exactly the inner mechanism on the data restricted by hand
    let sub = data.select_attributes(&["a3", "a5", "a17"]).unwrap();
    let sw = MarginalWorkload::from_attribute_lists(sub.domain(), &lists()).unwrap();
    let by_hand = explicit().release(&sub, &sw, &mut seeded_rng(1)).unwrap();
    assert_eq!(r.answers, by_hand.answers);
    assert!(
        r.diagnostics
            .notes
            .iter()
            .any(|n| n.contains("3 of 30 attributes") && n.contains("a3, a5, a17")),
        "{:?}",
        r.diagnostics.notes
    );
    let synthetic = r.synthetic.expect("projection writes synthetic records");
    let names: Vec<&str> = synthetic.records.domain().names().collect();
    assert_eq!(names, ["a3", "a5", "a17"]);
    // a workload on every attribute: the inner mechanism unchanged
    let small = Domain::new(vec![("x".into(), 2), ("y".into(), 3)]).unwrap();
    let d2 = Dataset::from_columns(small.clone(), vec![vec![0, 1, 1], vec![2, 0, 1]]).unwrap();
    let w2 = MarginalWorkload::all_kway(&small, 2).unwrap();
    let a = wrapped.release(&d2, &w2, &mut seeded_rng(4)).unwrap();
    let b = explicit().release(&d2, &w2, &mut seeded_rng(4)).unwrap();
    assert_eq!(a.answers, b.answers);
    // (notes carry timings: compare their number, and no restriction note)
    assert_eq!(a.diagnostics.notes.len(), b.diagnostics.notes.len());
    assert!(
        !a.diagnostics
            .notes
            .iter()
            .any(|n| n.contains("workload touches"))
    );
}
