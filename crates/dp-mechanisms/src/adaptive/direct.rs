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
//! **The split** (`direct_l1_split`, the default since 2026-11-30): the `m` measured cheap
//! tables share the pool `m·βρ/k` they would take at the same budget, each in proportion to
//! `c_t^{2/3}`, `c_t` its **effective cells** `Σ_i min(1, T̂·p̂_i/σ_β)` under the model fitted
//! to the 1-way tables (`p̂`; post-processing) — the cells whose expected count is above the
//! equal split's noise. The split minimises the expected ℓ1 noise of the phase: a cell whose
//! count `x` the simplex would clip to zero costs about `x` whatever the noise, one above it
//! about `√(2/π)·σ_t`, so a table's expected ℓ1 noise is `≈ √(2/π)·c_t·σ_t` with
//! `σ_t² = Δ₂²/(2ρ_t)`; minimising `Σ_t c_t ρ_t^{-1/2}` subject to `Σ_t ρ_t = m·βρ/k` gives, by
//! a Lagrange multiplier, `c_t ρ_t^{-3/2} = 2λ` for every `t`, i.e. `ρ_t ∝ c_t^{2/3}` — SWIFT's
//! `ρ_i ∝ (w_i s_i)^{2/3}` (google/dpsynth) with the simplex's support in place of the table's
//! size. With every `c_t` equal (a binary table's pairs, all cells above the noise) it is the
//! equal split, and a table whose share is the equal one within 10⁻⁹ takes the equal split's
//! calibration exactly (a draw of the discrete Gaussian depends on every bit of σ², and a
//! rounding-level change of σ² alone moved nltcs all 2-way at ε = 1 by up to 18 % on one seed:
//! the spread of the noise, not of the rule). The split alone takes budget from the small tables until their largest error exceeds the equal split's
//! over the whole workload (temporal-match2 all 2-way at ε = 10: σ 3.8× on its 4-cell tables,
//! the release's max error 3× the equal split's), so each table keeps a **floor**
//! `ρ_t ≥ (βρ/k)·ln(2n_t)/ln(2N)` (`n_t` its cells, `N` the workload's): its largest noise,
//! `σ_t√(2 ln 2n_t)` by the universal bound, is then at most the equal split's over all `N`
//! cells, `σ_β√(2 ln 2N)`. The floors sum to at most the pool, and the split is the ℓ1 optimum
//! under them, `ρ_t = max(f_t, λ·c_t^{2/3})` ([`l1_split`]; docs/mechanisms/adaptive.md,
//! "The direct split").
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

/// The **effective cells** of a table (module docs, "The split"): `Σ_i min(1, T̂·p̂_i/σ)`, the
/// cells of the estimate's normalised marginal `estimate` whose expected count `T̂·p̂_i` is
/// above the noise `σ` (each counted at most once, a smaller one by its share of σ). At least
/// a small positive floor, so that every measured table keeps a positive budget.
pub(crate) fn effective_cells(estimate: &[f64], total: f64, sigma: f64) -> f64 {
    let c: f64 = estimate
        .iter()
        .map(|&p| (total * p.max(0.0) / sigma).min(1.0))
        .sum();
    c.max(1e-3)
}

/// The floor of a table's budget under the split (module docs, "The split"): the equal
/// split's `equal` scaled by `ln(2c)/ln(2N)`, `c` the table's cells and `N` the cells of all
/// the workload's tables, so that the table's largest noise `σ_t·√(2 ln 2c)` is at most the
/// equal split's over the whole workload, `σ_β·√(2 ln 2N)` (the universal bound). At most
/// `equal` when `c ≤ N`.
pub(crate) fn split_floor(equal: f64, cells: f64, workload_cells: f64) -> f64 {
    equal * (2.0 * cells).ln() / (2.0 * workload_cells).ln()
}

/// The split of the direct phase's `pool` over tables of effective cells `cells` with
/// floors `floors` (module docs, "The split"): the minimiser of `Σ_t c_t ρ_t^{-1/2}` subject
/// to `Σ_t ρ_t = pool` and `ρ_t ≥ f_t`, which is `ρ_t = max(f_t, λ·c_t^{2/3})` with `λ` such
/// that the budgets sum to the pool (the Karush–Kuhn–Tucker conditions: on an unfloored table
/// `c_t ρ_t^{-3/2}/2` is the common multiplier). Found by growing the set of floored tables
/// from none: each pass's `λ` is below the last, so a table once floored stays floored, and at
/// most one pass per table. Without binding floors, `ρ_t = pool·c_t^{2/3}/Σ_u c_u^{2/3}`.
/// Requires `Σ_t f_t ≤ pool`; empty for no tables.
pub(crate) fn l1_split(pool: f64, cells: &[f64], floors: &[f64]) -> Vec<f64> {
    let w: Vec<f64> = cells.iter().map(|&c| c.powf(2.0 / 3.0)).collect();
    let mut floored = vec![false; w.len()];
    loop {
        let free: f64 = (0..w.len()).filter(|&t| !floored[t]).map(|t| w[t]).sum();
        let fixed: f64 = (0..w.len())
            .filter(|&t| floored[t])
            .map(|t| floors[t])
            .sum();
        let lambda = if free > 0.0 {
            (pool - fixed).max(0.0) / free
        } else {
            0.0
        };
        let mut grew = false;
        for t in 0..w.len() {
            if !floored[t] && lambda * w[t] < floors[t] {
                floored[t] = true;
                grew = true;
            }
        }
        if !grew {
            return (0..w.len())
                .map(|t| if floored[t] { floors[t] } else { lambda * w[t] })
                .collect();
        }
    }
}

/// The budgets of `m` measured cheap tables under the split (module docs, "The split"): their
/// pool `m·equal` by [`l1_split`] over effective cells `cells` above `floors`, a share within
/// 10⁻⁹ of the equal split's `equal` taken as exactly `equal`, so that a table whose split is
/// the equal one but for rounding keeps the equal split's calibration (and noise) bit for bit.
pub(crate) fn split_budgets(equal: f64, cells: &[f64], floors: &[f64]) -> Vec<f64> {
    l1_split(equal * cells.len() as f64, cells, floors)
        .into_iter()
        .map(|r| {
            if (r - equal).abs() <= 1e-9 * equal {
                equal
            } else {
                r
            }
        })
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

    /// The effective cells by hand: total 1000, σ = 10, cells 0.5, 0.3, 0.195, 0.005 →
    /// min(1, 50) + min(1, 30) + min(1, 19.5) + min(1, 0.5) = 3.5; a negative entry counts 0,
    /// and an all-zero table the floor.
    #[test]
    fn effective_cells_by_hand() {
        let e = effective_cells(&[0.5, 0.3, 0.195, 0.005], 1000.0, 10.0);
        assert!((e - 3.5).abs() < 1e-12, "{e}");
        let e = effective_cells(&[0.5, -0.1, 0.6], 1000.0, 10.0);
        assert!((e - 2.0).abs() < 1e-12, "{e}");
        assert_eq!(effective_cells(&[0.0, 0.0], 1000.0, 10.0), 1e-3);
    }

    /// The floor by hand: a 4-cell table among 10⁶ workload cells keeps ln 8 / ln(2·10⁶) =
    /// 0.1433 of the equal split; a table of all the workload's cells keeps all of it.
    #[test]
    fn split_floor_by_hand() {
        let f = split_floor(1.0, 4.0, 1e6);
        assert!((f - 8f64.ln() / 2e6f64.ln()).abs() < 1e-15 && (f - 0.1433).abs() < 1e-4);
        assert!((split_floor(0.3, 1e6, 1e6) - 0.3).abs() < 1e-15);
    }

    /// The split by hand and against brute force. Without floors: cells 1 and 8 have weights 1
    /// and 4, so ρ = 0.2 and 0.8 of a pool of 1; equal cells give the equal split. With a
    /// binding floor: cells 1, 8, 27 (weights 1, 4, 9) and floors (0.2, 0, 0) of a pool of 1.4 —
    /// unfloored the first would take 0.1, so it takes its floor 0.2 and the others share 1.2
    /// as 4 : 9. Then, on three tables of cells 2, 50 and 700, with no floors and with a floor
    /// of 0.1 on the first (binding: unfloored it takes 0.017), no other split of the pool on
    /// a fine grid that respects the floors has a smaller `Σ c_t ρ_t^{-1/2}` (the objective the
    /// module docs derive the split from), and the budgets sum to the pool.
    #[test]
    fn l1_split_by_hand_and_against_brute_force() {
        let r = l1_split(1.0, &[1.0, 8.0], &[0.0, 0.0]);
        assert!(
            (r[0] - 0.2).abs() < 1e-12 && (r[1] - 0.8).abs() < 1e-12,
            "{r:?}"
        );
        let r = l1_split(0.3, &[5.0, 5.0, 5.0], &[0.0; 3]);
        assert!(r.iter().all(|&x| (x - 0.1).abs() < 1e-15), "{r:?}");
        assert!(l1_split(1.0, &[], &[]).is_empty());
        let r = l1_split(1.4, &[1.0, 8.0, 27.0], &[0.2, 0.0, 0.0]);
        let want = [0.2, 1.2 * 4.0 / 13.0, 1.2 * 9.0 / 13.0];
        assert!(
            r.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-12),
            "{r:?}"
        );
        let cells = [2.0, 50.0, 700.0];
        let cost = |r: &[f64]| -> f64 { cells.iter().zip(r).map(|(c, x)| c / x.sqrt()).sum() };
        for floor in [0.0, 0.1] {
            let r = l1_split(1.0, &cells, &[floor, 0.0, 0.0]);
            assert!((r.iter().sum::<f64>() - 1.0).abs() < 1e-12);
            assert!(r[0] >= floor);
            let best = cost(&r);
            let steps = 400;
            for a in 1..steps {
                for b in 1..steps - a {
                    let (x, y) = (a as f64 / steps as f64, b as f64 / steps as f64);
                    if x < floor {
                        continue;
                    }
                    let other = [x, y, 1.0 - x - y];
                    assert!(
                        cost(&other) >= best - 1e-9,
                        "{other:?}: {} < {best}",
                        cost(&other)
                    );
                }
            }
            // and strictly better than the equal split here
            assert!(best < cost(&[1.0 / 3.0; 3]) * 0.9);
        }
        assert!(l1_split(1.0, &cells, &[0.0; 3])[0] < 0.03);
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
