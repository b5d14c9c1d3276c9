//! Empirical audit of every local randomizer under the local relation (any two inputs of
//! one client): for a pair of inputs and an event chosen with knowledge of the randomizer,
//! `N` draws per input give a Clopper–Pearson lower bound on ε
//! ([`dp_bench::audit::epsilon_lower`], one-sided at 1e-4 per bound). The honest randomizer
//! must not exceed its claimed ε; the **half-noise canary** — the same randomizer run at 2ε
//! (its randomization halved in log-odds) while claiming ε — must be caught (lower bound
//! above ε). Each pair and event is one where the randomizer's exact ratio is e^ε (or,
//! for OLH, the largest available for a fresh hash), so the audit has power.

use dp_bench::audit::epsilon_lower;
use dp_local::LocalRandomizer;
use dp_local::client::baselines::{olh_hash, olh_range};
use dp_local::client::{
    FourierParity, FrequencyOracle, IncrementEncoding, OracleReport, PerAttributeRr,
    SampledTableOracle, SampledTableRelease,
};
use dp_queries::{Domain, MarginalWorkload, Universe};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

const N: u64 = 200_000;
const A: f64 = 1e-4;
const EPS: f64 = 1.0;

fn lower<R: LocalRandomizer<Input = [u32]>>(
    r: &R,
    x: &[u32],
    y: &[u32],
    event: impl Fn(&R::Message) -> bool,
) -> f64 {
    let mut rng = ChaCha20Rng::seed_from_u64(2024);
    let mut hits = |input: &[u32]| {
        (0..N)
            .filter(|_| event(&r.randomize(input, &mut rng).unwrap()))
            .count() as u64
    };
    let (kx, ky) = (hits(x), hits(y));
    epsilon_lower(kx, N, ky, N, 0.0, A).unwrap()
}

fn one_attribute(k: u32) -> (Domain, MarginalWorkload) {
    let d = Domain::new(vec![("v".into(), k)]).unwrap();
    let w = MarginalWorkload::all_kway(&d, 1).unwrap();
    (d, w)
}

/// (honest lower bound, canary lower bound) for a randomizer built at a given ε.
fn audit_pair<R: LocalRandomizer<Input = [u32]>>(
    build: impl Fn(f64) -> R,
    x: &[u32],
    y: &[u32],
    event: impl Fn(&R::Message) -> bool + Copy,
) -> (f64, f64) {
    (
        lower(&build(EPS), x, y, event),
        lower(&build(2.0 * EPS), x, y, event),
    )
}

fn check(name: &str, (honest, canary): (f64, f64)) {
    assert!(
        honest <= EPS,
        "{name}: the honest randomizer shows ε ≥ {honest} > {EPS}"
    );
    assert!(
        canary > EPS,
        "{name}: the half-noise canary was not caught ({canary} ≤ {EPS})"
    );
}

#[test]
fn the_table_sampled_point_release_passes_and_its_canary_is_caught() {
    // opposite increments e_0 − e_1 and e_1 − e_0: the event W_0 − W_1 > 0 has
    // probabilities 1/(1 + e^{∓ε})
    let (d, w) = one_attribute(2);
    let u = Universe::new(&d, 4).unwrap();
    let maps = vec![vec![1, 0], vec![0, 1]];
    let build = |eps| {
        SampledTableRelease::new(
            eps,
            IncrementEncoding::new(&w, &u, maps.clone(), 1).unwrap(),
        )
        .unwrap()
    };
    check(
        "point release",
        audit_pair(build, &[0], &[1], |m| m.w[0] - m.w[1] > 0.0),
    );
}

#[test]
fn per_attribute_rr_passes_and_its_canary_is_caught() {
    let build = |eps| PerAttributeRr::new(eps, &[3]).unwrap();
    check(
        "rr",
        audit_pair(build, &[0], &[1], |m: &Vec<u32>| m[0] == 0),
    );
}

#[test]
fn the_frequency_oracles_pass_and_their_canaries_are_caught() {
    let (_, w3) = one_attribute(3);
    let grr = |eps| SampledTableOracle::new(eps, FrequencyOracle::Grr, &w3).unwrap();
    check(
        "grr",
        audit_pair(grr, &[0], &[1], |m| m.report == OracleReport::Grr(0)),
    );
    let (_, w2) = one_attribute(2);
    let had = |eps| SampledTableOracle::new(eps, FrequencyOracle::Hadamard, &w2).unwrap();
    check(
        "hadamard",
        audit_pair(had, &[0], &[1], |m| {
            m.report == OracleReport::Hadamard { row: 1, plus: true }
        }),
    );
    // OLH: "the report is the hash of value 0" (g depends on the ε the randomizer runs at)
    let (_, w5) = one_attribute(5);
    for (eps, want_caught) in [(EPS, false), (2.0 * EPS, true)] {
        let r = SampledTableOracle::new(eps, FrequencyOracle::Olh, &w5).unwrap();
        let g = olh_range(eps);
        let l = lower(&r, &[0], &[1], |m| match m.report {
            OracleReport::Olh { seed, value } => olh_hash(seed, 0, g) == value,
            _ => false,
        });
        assert_eq!(l > EPS, want_caught, "olh at {eps}: lower bound {l}");
    }
}

#[test]
fn the_fourier_randomizer_passes_and_its_canary_is_caught() {
    let d = Domain::new(vec![("a".into(), 2)]).unwrap();
    let w = MarginalWorkload::all_kway(&d, 1).unwrap();
    let build = |eps| FourierParity::new(eps, &w).unwrap();
    check("fourier", audit_pair(build, &[0], &[1], |m| m.plus));
}
