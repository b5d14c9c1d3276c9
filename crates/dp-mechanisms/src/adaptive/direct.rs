//! The workload's **cheap tables, measured directly** after the 1-ways (issue #24).
//!
//! AIM's rounds (McKenna et al., VLDB 2022, Alg. 2) spend `T = 16d` small budgets on the
//! tables the model fits worst; a table they never reach keeps the model's error however large
//! the budget. The Gaussian baseline (seed 001's Gaussian mechanism on every workload table,
//! each at `ρ/k` for `k` tables) wins wherever a workload table is *cheap*: few enough cells
//! that measuring it directly adds little noise. On the bundled binary tables (nltcs, acs)
//! every workload table is cheap, and the baseline beat AIM's rule by up to 2× at ε = 10
//! (docs/mechanisms/adaptive.md, "Cheap tables first").
//!
//! The rule, on public inputs only (the workload, the domain, ρ, the two parameters) and the
//! noisy total `T̂` of the 1-way measurements (post-processing):
//!
//! * every distinct workload table of two or more attributes gets the **same** budget
//!   `ρ_t = βρ/k` (`β = direct_share`, `k` the number of such tables), i.e. noise
//!   `σ_β² = Δ₂²/(2ρ_t)` — the baseline's noise at a `β` share of the budget;
//! * a table is **cheap** when that measurement's expected ℓ1 noise, normalised by the total,
//!   is at most `τ = direct_noise_l1`: `√(2/π)·σ_β·n_t / T̂ ≤ τ` (`n_t` its cells;
//!   `E|Z| = √(2/π)σ` for a Gaussian, and `T̂` the total the release normalises by);
//! * **only when most tables are cheap** — more than half of the `k` — are the cheap tables
//!   measured; otherwise none is. Where only some tables are cheap, the rounds are still what
//!   the other tables need, and the budget the cheap ones would take comes out of those rounds:
//!   on adult's W64 at ε = 10 (32 of 64 cheap) measuring them cost 12 % in average error, on
//!   temporal-match2 (62 of 64) it cut the error 3.4× (docs/mechanisms/adaptive.md, "Cheap
//!   tables first"). "More than half" is the natural line, not a tuned one;
//! * the cheap tables are measured once each, before any selection round, and join the model
//!   (or, if a table's clique would take the model beyond its full size cap, are measured
//!   beside it, [`super::beside`]); the selection rounds then spend what is left;
//! * when the phase runs, each other workload table whose clique the model cannot take even at
//!   its full size cap (after the cheap tables joined; a function of the domain and of the
//!   cheap tables, so public) is measured directly too, at the same `βρ/k`, beside the model
//!   (`direct_unjoinable`, opt-in, not yet a default): AIM's rounds admit a clique only within
//!   the cap, so under AIM's rule no round could ever measure it; with the default
//!   `measure_beside_model` an ℓ1 round may measure it beside the model
//!   (docs/mechanisms/adaptive.md, "Tables the model cannot take", "Tables beside the model").
//!
//! Only the tables measured are charged, so `βρ·(measured)/k ≤ βρ` leaves the rounds at least
//! `(1 − β)ρ`. The privacy of each measurement is that of a selection round's measurement
//! (`ρ_t`-zCDP, `Δ₂² = 1` add/remove or 2 replace-one,
//! [`crate::sensitivity::single_marginal_count_sensitivity`]); which tables are measured is a
//! function of public inputs and of earlier noisy outputs, so the zCDP filter's adaptive
//! composition covers it exactly as it covers the rounds.

use super::Candidate;

/// The workload tables of two or more attributes among the candidates (each is its own
/// parent: the smallest workload table containing it), in candidate order.
pub(crate) fn workload_tables(cands: &[Candidate]) -> Vec<usize> {
    cands
        .iter()
        .enumerate()
        .filter(|(_, c)| c.attrs.len() >= 2 && c.attrs == c.parent)
        .map(|(i, _)| i)
        .collect()
}

/// Expected ℓ1 norm of `cells` Gaussian noises of standard deviation `sigma`, normalised by
/// `total`: `√(2/π)·σ·cells / total`.
pub(crate) fn expected_noise_l1(sigma: f64, cells: f64, total: f64) -> f64 {
    (2.0 / std::f64::consts::PI).sqrt() * sigma * cells / total
}

/// The tables measured directly: the cheap ones if they are **more than half** of the `k`
/// workload tables, none otherwise (module docs, "only when most tables are cheap").
pub(crate) fn measured_directly(cheap: Vec<usize>, k: usize) -> Vec<usize> {
    if 2 * cheap.len() > k {
        cheap
    } else {
        Vec::new()
    }
}

/// The cheap workload tables (module docs): candidates of [`workload_tables`] whose direct
/// measurement at noise `sigma` has expected normalised ℓ1 noise at most `max_noise_l1`, given
/// the public total `total` and each table's cell count `cells(i)`. Candidate order.
pub(crate) fn cheap_tables(
    cands: &[Candidate],
    cells: impl Fn(&[usize]) -> f64,
    sigma: f64,
    total: f64,
    max_noise_l1: f64,
) -> Vec<usize> {
    workload_tables(cands)
        .into_iter()
        .filter(|&i| expected_noise_l1(sigma, cells(&cands[i].attrs), total) <= max_noise_l1)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(attrs: &[usize], parent: &[usize]) -> Candidate {
        Candidate {
            attrs: attrs.to_vec(),
            weight: 1.0,
            parent: parent.to_vec(),
            groups: None,
        }
    }

    /// The rule on both sides of its threshold, by hand: sizes a=2, b=3, c=50; σ = 10,
    /// T̂ = 1000. ab (6 cells): √(2/π)·10·6/1000 = 0.0479; bc (150 cells): 1.197. At τ = 0.05
    /// only ab is cheap; at τ = 0.04 none; at τ = 1.2 both. Sub-tables (a, b) and 1-ways are
    /// never workload tables here.
    #[test]
    fn cheap_tables_on_both_sides_of_the_threshold() {
        let sizes = [2.0, 3.0, 50.0];
        let cells = |a: &[usize]| a.iter().map(|&i| sizes[i]).product::<f64>();
        let cands = vec![
            cand(&[0], &[0, 1]),
            cand(&[1], &[0, 1]),
            cand(&[2], &[1, 2]),
            cand(&[0, 1], &[0, 1]),
            cand(&[1, 2], &[1, 2]),
        ];
        assert_eq!(workload_tables(&cands), vec![3, 4]);
        let e = expected_noise_l1(10.0, 6.0, 1000.0);
        assert!((e - 0.047873).abs() < 1e-6, "{e}");
        assert_eq!(cheap_tables(&cands, cells, 10.0, 1000.0, 0.05), vec![3]);
        assert_eq!(
            cheap_tables(&cands, cells, 10.0, 1000.0, 0.04),
            Vec::<usize>::new()
        );
        assert_eq!(cheap_tables(&cands, cells, 10.0, 1000.0, 1.2), vec![3, 4]);
        // a larger total makes the same noise cheaper
        assert_eq!(cheap_tables(&cands, cells, 10.0, 10_000.0, 0.5), vec![3, 4]);
    }

    /// More than half of the workload tables cheap: all the cheap ones are measured; half
    /// or fewer: none.
    #[test]
    fn measured_only_when_most_tables_are_cheap() {
        assert_eq!(measured_directly(vec![1, 2], 3), vec![1, 2]);
        assert_eq!(measured_directly(vec![1, 2], 4), Vec::<usize>::new());
        assert_eq!(measured_directly(vec![1], 3), Vec::<usize>::new());
        assert_eq!(measured_directly(vec![], 0), Vec::<usize>::new());
        assert_eq!(measured_directly(vec![5], 1), vec![5]);
    }
}
