//! Fuzz the command-line budget path: arbitrary (ε, δ, ρ) flag combinations (any f64 bit
//! pattern: NaN, ±∞, subnormals, negatives) through `BudgetArgs::to_loss`, the budget cap,
//! `build_mechanism` for every registered mechanism, and a ledger spend.
#![no_main]

use dp_bench::registry::{BudgetArgs, MECHANISMS, build_mechanism, check_budget_is_meaningful};
use dp_core::{Ledger, Neighbouring, PrivacyLoss};
use dp_mechanisms::PostProcessing;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() < 25 {
        return;
    }
    let f = |i: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&data[i..i + 8]);
        f64::from_le_bytes(b)
    };
    let flags = data[24];
    let args = BudgetArgs {
        epsilon: (flags & 1 != 0).then(|| f(0)),
        delta: (flags & 2 != 0).then(|| f(8)),
        rho: (flags & 4 != 0).then(|| f(16)),
    };
    for name in MECHANISMS.iter().map(|s| s.name) {
        let Ok(loss) = args.to_loss(name) else {
            continue;
        };
        if check_budget_is_meaningful(&loss).is_err() {
            continue;
        }
        let neighbouring = if flags & 8 != 0 {
            Neighbouring::AddRemove
        } else {
            Neighbouring::ReplaceOne
        };
        if let Ok(m) = build_mechanism(name, loss, neighbouring, PostProcessing::None) {
            let cert = m.certificate();
            if let Ok(budget) = PrivacyLoss::approx(1.0, 1e-6) {
                let mut ledger = Ledger::new(budget);
                let _ = ledger.spend(name, cert.loss);
            }
        }
    }
});
