//! The baselines ([`crate::client::baselines`], [`crate::server::baselines`]) as simulated
//! protocols, one client per record, deterministic from a seed.

use super::{LocalRelease, simulate};
use crate::client::{FourierParity, FrequencyOracle, PerAttributeRr, SampledTableOracle};
use crate::server::{NoisyRecords, OracleAggregate, ParityAggregate};
use crate::{LocalError, Result};
use dp_core::StreamFamily;
use dp_mechanisms::PrivacyCertificate;
use dp_queries::{Dataset, MarginalWorkload};

/// Which baseline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BaselineKind {
    /// Every attribute through k-ary randomized response at ε/d.
    PerAttributeRr,
    /// One table per client, its cell through a frequency oracle.
    SampledTable(FrequencyOracle),
    /// One parity per client (Cormode, Kulkarni, Srivastava 2018), binary attributes.
    Fourier,
}

impl BaselineKind {
    /// A short name: `rr-per-attribute`, `table-grr`, `table-olh`, `table-hadamard`,
    /// `fourier`.
    pub fn name(self) -> &'static str {
        match self {
            BaselineKind::PerAttributeRr => "rr-per-attribute",
            BaselineKind::SampledTable(FrequencyOracle::Grr) => "table-grr",
            BaselineKind::SampledTable(FrequencyOracle::Olh) => "table-olh",
            BaselineKind::SampledTable(FrequencyOracle::Hadamard) => "table-hadamard",
            BaselineKind::Fourier => "fourier",
        }
    }

    /// Every baseline, in the order of the docs.
    pub fn all() -> [BaselineKind; 5] {
        [
            BaselineKind::PerAttributeRr,
            BaselineKind::SampledTable(FrequencyOracle::Grr),
            BaselineKind::SampledTable(FrequencyOracle::Olh),
            BaselineKind::SampledTable(FrequencyOracle::Hadamard),
            BaselineKind::Fourier,
        ]
    }
}

/// Simulates baseline `kind` at `epsilon` with one client per record of `data`; the
/// release's answers are the server's unbiased estimates (no projection).
pub fn run_baseline(
    kind: BaselineKind,
    epsilon: f64,
    data: &Dataset,
    workload: &MarginalWorkload,
    family: &StreamFamily,
) -> Result<LocalRelease> {
    if data.domain() != workload.domain() {
        return Err(LocalError::Input {
            reason: "the data and the workload have different domains".into(),
        });
    }
    if data.n() == 0 {
        return Err(LocalError::Input {
            reason: "there are no clients (the data has no records)".into(),
        });
    }
    let estimate = match kind {
        BaselineKind::PerAttributeRr => {
            let r = PerAttributeRr::new(epsilon, workload.domain().sizes())?;
            let d = r.sizes().len();
            simulate(&r, data, family, 0, || NoisyRecords::new(d))?
                .estimate(workload, r.per_attribute_epsilon())?
        }
        BaselineKind::SampledTable(oracle) => {
            let r = SampledTableOracle::new(epsilon, oracle, workload)?;
            let sizes = r.table_sizes();
            simulate(&r, data, family, 0, || {
                OracleAggregate::new(oracle, epsilon, &sizes)
            })?
            .estimate()
        }
        BaselineKind::Fourier => {
            let r = FourierParity::new(epsilon, workload)?;
            let p = r.parities().len();
            simulate(&r, data, family, 0, || ParityAggregate::new(p))?.estimate(
                workload,
                r.parities(),
                epsilon,
            )?
        }
    };
    Ok(LocalRelease {
        answers: estimate.clone(),
        estimate,
        certificate: PrivacyCertificate::local(kind.name(), epsilon),
        messages_per_client: 1,
        notes: vec![format!(
            "baseline {}: unbiased estimates, not post-processed",
            kind.name()
        )],
    })
}
