//! The README's library example, compiled and run as written (paths made absolute), so the
//! README cannot drift from the API.

use dp_core::{PrivacyLoss, seeded_rng};
use dp_mechanisms::{GaussianParams, Mechanism};
use dp_queries::{Dataset, MarginalWorkload};
use std::path::Path;

#[test]
fn readme_library_example_runs() -> Result<(), Box<dyn std::error::Error>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let data = Dataset::load_csv(
        &root.join("data/adult/adult.csv"),
        &root.join("data/adult/adult-domain.json"),
    )?;
    let workload = MarginalWorkload::all_kway(data.domain(), 2)?;
    let mech = GaussianParams::new(PrivacyLoss::approx(1.0, 1e-9)?).check()?;
    let release = mech.release(&data, &workload, &mut seeded_rng(7))?;
    let statement = release.certificate.statement();
    let first_table = &release.answers[..workload.marginals()[0].num_cells()];
    // the statement names the zCDP guarantee, its (ε, δ) and the neighbouring relation
    assert!(
        statement.contains("zCDP") && statement.contains("replace-one"),
        "{statement}"
    );
    assert_eq!(first_table.len(), 85 * 9); // age × workclass
    Ok(())
}
