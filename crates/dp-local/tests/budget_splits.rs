//! Issue #23 §2: every budget split of dp-local is rounded down, so the composed total never
//! exceeds the client's ε in floating point. Deterministic (no sampling).
//!
//! The splits: per-attribute randomized response at ε/d (`PerAttributeRr`) and
//! `local-chaining`'s ε/L per non-trivial level (`protocol::level_epsilon`). For each of
//! 300 values of ε (1e-3 to 50, including 0.1, 0.3 and 2/3, whose nearest quotients are
//! not exact) and every d, L in 1..=40, the share added d times in `f64` — and with dp-core's
//! upward-rounded composition (`compose_all`) — is at most ε.

use dp_core::{PrivacyLoss, compose_all};
use dp_local::client::PerAttributeRr;
use dp_local::protocol::level_epsilon;

fn epsilons() -> Vec<f64> {
    (0..300)
        .map(|i| 1e-3 * 10f64.powf(i as f64 / 63.0) * (1.0 + 0.011 * (i % 5) as f64))
        .chain([0.1, 0.3, 2.0 / 3.0, 1.0, 7.0])
        .collect()
}

fn within(total: f64, share: f64, parts: usize) -> bool {
    let plain = (0..parts).fold(0.0f64, |a, _| a + share);
    let composed = compose_all(&vec![PrivacyLoss::Pure { epsilon: share }; parts]).unwrap();
    let PrivacyLoss::Pure { epsilon } = composed else {
        unreachable!()
    };
    plain <= total && epsilon <= total
}

#[test]
fn per_attribute_and_per_level_shares_compose_within_epsilon() {
    let mut nearest_fails = 0usize;
    for eps in epsilons() {
        for parts in 1..=40usize {
            let sizes = vec![2u32; parts];
            let rr = PerAttributeRr::new(eps, &sizes).unwrap();
            let share = rr.per_attribute_epsilon();
            assert!(within(eps, share, parts), "ε = {eps}, d = {parts}: {share}");
            assert!(share > 0.0 && share <= eps / parts as f64);
            let share = level_epsilon(eps, parts);
            assert!(within(eps, share, parts), "ε = {eps}, L = {parts}: {share}");
            // the deliberately wrong split (round to nearest, the code before issue #23)
            if !within(eps, eps / parts as f64, parts) {
                nearest_fails += 1;
            }
        }
    }
    // the check has teeth: the nearest quotient overshoots for many of these pairs
    assert!(
        nearest_fails > 100,
        "only {nearest_fails} overshoots of ε/d"
    );
    assert_eq!(level_epsilon(0.5, 0), 0.5);
}
