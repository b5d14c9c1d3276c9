//! `ledger_file::release_charged`, the charge-then-release sequence `dpqr release --ledger`
//! runs (issue #9 item 5: "a release that fails after noise was drawn must still be
//! charged"). A test-only mechanism draws noise and then always fails; it also reads the
//! ledger file from disk at the moment of its first draw, so the tests pin the order
//! itself (the spend is durable before any noise exists), not only the end state.
//!
//! Deterministic: no statistics, no timing.

use dp_bench::BenchError;
use dp_bench::io::ledger_file::{self, Charge, LedgerFile, LockedLedger, release_charged};
use dp_core::{Neighbouring, PrivacyLoss};
use dp_mechanisms::{Mechanism, MechanismError, PrivacyCertificate, Release};
use dp_queries::{Dataset, Domain, MarginalWorkload};
use rand::CryptoRng;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

const KEY: &str = "test";
const LABEL: &str = "noise-then-fail on all-2way";
const CHARGE: Charge<'static> = Charge {
    dataset: KEY,
    label: LABEL,
    data: None,
};

/// What the test mechanism saw: one entry per call of `release`, the number of spends in
/// the ledger file on disk for [`KEY`] just before it drew its noise.
struct NoiseThenFail {
    ledger_path: PathBuf,
    loss: PrivacyLoss,
    calls: Mutex<Vec<usize>>,
}

impl NoiseThenFail {
    fn new(ledger_path: &Path, epsilon: f64) -> Self {
        NoiseThenFail {
            ledger_path: ledger_path.to_path_buf(),
            loss: PrivacyLoss::pure(epsilon).unwrap(),
            calls: Mutex::new(Vec::new()),
        }
    }

    fn calls(&self) -> Vec<usize> {
        self.calls.lock().unwrap().clone()
    }
}

impl Mechanism for NoiseThenFail {
    fn name(&self) -> &'static str {
        "noise-then-fail"
    }

    fn certificate(&self) -> PrivacyCertificate {
        PrivacyCertificate {
            mechanism: self.name().to_string(),
            loss: self.loss,
            model: dp_mechanisms::PrivacyModel::Central {
                neighbouring: Neighbouring::ReplaceOne,
            },
            approx_equivalent: None,
        }
    }

    fn release(
        &self,
        _data: &Dataset,
        _workload: &MarginalWorkload,
        rng: &mut dyn CryptoRng,
    ) -> dp_mechanisms::Result<Release> {
        // the file as any other process would see it now (plain read: the caller holds the
        // lock, and taking it again here would block)
        let text = std::fs::read_to_string(&self.ledger_path).unwrap();
        let on_disk = LedgerFile::parse(&text, "t").unwrap();
        let spends = on_disk
            .datasets
            .get(KEY)
            .map_or(0, |a| a.ledger.spends().len());
        self.calls.lock().unwrap().push(spends);
        // draw noise, then fail: the case the ledger must still charge
        let noise = rng.next_u64();
        Err(MechanismError::Numerical {
            what: format!("deliberate failure after drawing noise {noise:#x}"),
        })
    }
}

fn setup(name: &str, budget_epsilon: f64) -> (PathBuf, Dataset, MarginalWorkload) {
    let d = std::env::temp_dir().join(format!("dpqr-charged-{name}-{}", std::process::id()));
    std::fs::remove_dir_all(&d).ok();
    std::fs::create_dir_all(&d).unwrap();
    let path = d.join("l.json");
    ledger_file::init(
        &path,
        PrivacyLoss::pure(budget_epsilon).unwrap(),
        Neighbouring::ReplaceOne,
        &[KEY.to_string()],
    )
    .unwrap();
    let domain = Domain::new(vec![("a".into(), 3), ("b".into(), 2)]).unwrap();
    let data = Dataset::from_columns(
        domain.clone(),
        vec![vec![0, 1, 2, 0, 1, 2], vec![0, 0, 0, 1, 1, 1]],
    )
    .unwrap();
    let workload = MarginalWorkload::parse_spec(&domain, "all-2way", 0).unwrap();
    (path, data, workload)
}

fn spends_on_disk(path: &Path) -> Vec<(String, PrivacyLoss)> {
    ledger_file::read(path)
        .unwrap()
        .datasets
        .get(KEY)
        .map(|a| {
            a.ledger
                .spends()
                .iter()
                .map(|s| (s.label.clone(), s.loss))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_release_that_fails_after_drawing_noise_is_still_charged() {
    let (path, data, workload) = setup("fail", 1.0);
    let mech = NoiseThenFail::new(&path, 0.4);
    let mut rng = dp_core::seeded_rng(7);
    let mut ledger = LockedLedger::open(&path).unwrap();
    let r = release_charged(&mut ledger, &CHARGE, &mech, &data, &workload, &mut rng);
    assert!(
        matches!(
            r,
            Err(BenchError::ReleaseFailedAfterCharge(
                MechanismError::Numerical { .. }
            ))
        ),
        "{:?}",
        r.map(|_| ())
    );
    // the mechanism ran once, and its spend was already on disk when it drew its noise
    assert_eq!(mech.calls(), vec![1]);
    drop(ledger);
    // after the failure the ledger holds the spend, as stated by the certificate
    assert_eq!(
        spends_on_disk(&path),
        vec![(LABEL.to_string(), PrivacyLoss::pure(0.4).unwrap())]
    );
    // and a retry is charged again: 0.4 + 0.4 fits in 1, the third 0.4 does not
    let mut ledger = LockedLedger::open(&path).unwrap();
    let again = release_charged(&mut ledger, &CHARGE, &mech, &data, &workload, &mut rng);
    assert!(matches!(
        again,
        Err(BenchError::ReleaseFailedAfterCharge(_))
    ));
    let third = release_charged(&mut ledger, &CHARGE, &mech, &data, &workload, &mut rng);
    // refused by the budget: the mechanism is not called a third time
    assert!(
        matches!(third, Err(BenchError::LedgerRefused { .. })),
        "{:?}",
        third.map(|_| ())
    );
    assert_eq!(mech.calls(), vec![1, 2]);
    drop(ledger);
    assert_eq!(spends_on_disk(&path).len(), 2);
}

#[test]
fn a_refused_spend_draws_no_noise_and_records_nothing() {
    let (path, data, workload) = setup("refused", 0.3);
    let mech = NoiseThenFail::new(&path, 0.4);
    let mut rng = dp_core::seeded_rng(7);
    let mut ledger = LockedLedger::open(&path).unwrap();
    let r = release_charged(&mut ledger, &CHARGE, &mech, &data, &workload, &mut rng);
    assert!(r.is_err());
    assert!(!matches!(r, Err(BenchError::ReleaseFailedAfterCharge(_))));
    assert!(
        mech.calls().is_empty(),
        "the mechanism ran on a refused spend"
    );
    drop(ledger);
    assert!(spends_on_disk(&path).is_empty());
}

#[test]
fn a_successful_release_is_charged_its_certificate() {
    // a real mechanism through the registry, as `dpqr release --mechanism laplace` builds it
    let (path, data, workload) = setup("ok", 1.0);
    let mech = dp_bench::registry::build_mechanism(
        "laplace",
        PrivacyLoss::pure(0.25).unwrap(),
        Neighbouring::ReplaceOne,
        dp_mechanisms::PostProcessing::None,
    )
    .unwrap();
    let mut rng = dp_core::seeded_rng(7);
    let mut ledger = LockedLedger::open(&path).unwrap();
    let release = release_charged(
        &mut ledger,
        &Charge {
            label: "laplace",
            ..CHARGE
        },
        mech.as_ref(),
        &data,
        &workload,
        &mut rng,
    )
    .unwrap();
    drop(ledger);
    assert_eq!(release.answers.len(), workload.num_queries());
    assert_eq!(
        spends_on_disk(&path),
        vec![("laplace".to_string(), release.certificate.loss)]
    );
    assert_eq!(release.certificate.loss, PrivacyLoss::pure(0.25).unwrap());
}
