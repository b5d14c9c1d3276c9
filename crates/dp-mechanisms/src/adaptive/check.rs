//! The workload's tables **checked** against one direct measurement each (issue #24).
//!
//! A graphical model answers a workload table it never measured from the tables it did. Where
//! the data has a dependence the measured tables do not show, a few cells of such a table can
//! be far off — on adult, on temporal-match2 with its large attributes (PUMA, DEPARTS,
//! ARRIVES) and on tables nobody tuned on, the largest cell error was 4–30× the Gaussian
//! baseline's, and it *grew* with ε, because larger budgets anneal the rounds sooner and the
//! rounds then measure fewer tables (docs/mechanisms/adaptive.md, "Checked tables"). The
//! baseline's largest error is small because every cell is measured.
//!
//! **The check.** Every workload table of two or more attributes that the direct phase
//! ([`super::direct`]) did not measure is measured once, directly, at `ρ_c = γρ/k`
//! (`γ = check_share`, `k` workload tables: the baseline's noise at a `γ` share of the budget),
//! before the selection rounds. The measurement does not enter the model. At release the
//! measurement is first shrunk toward the model's counts `T̂·p̂` by James–Stein within strata of
//! the model's count, exactly as a table measured beside the model ([`super::beside`]; the
//! model never saw the check, so the shrinkage dominates the measurement in mean squared
//! error; since 2026-11-28: adult W64 at ε = 10 avgL1 −6 % and largest error −44 %,
//! docs/mechanisms/adaptive.md, "Strata"). Then each cell of the table is that combination
//! `x_i` unless the measurement departs from it by more than the noise's universal bound,
//!
//! `|y_i − x_i| > λ = σ_c·√(2 ln 2n)`   (`n` below),
//!
//! in which case it is the measurement `y_i` (hard thresholding of the residual at the
//! universal threshold, Donoho and Johnstone 1994, Biometrika 81(3), §1 and Thm. 1); the
//! table is then divided by `T̂` and projected onto the probability simplex. `n` is the number
//! of cells of **all** the workload's tables of two or more attributes, not of the one table:
//! a union bound over every cell that could be corrected, so that a release replaces a cell
//! the model had right only rarely (for Gaussian noise the expected number of cells whose
//! noise alone exceeds `σ√(2 ln 2n)` is at most `1/(√(2π)·√(2 ln 2n))`, below 0.2 for
//! n ≥ 2). With the table's own cell count instead, each table had a chance of about
//! `0.4/√(2 ln 2n_t)` of one such false replacement, and on nltcs (64 tables, every one
//! measured directly) one false replacement raised the largest error from 0.0038 to 0.0056.
//!
//! **Tables measured directly** by the direct phase are corrected by the same rule with their
//! direct measurement (at its σ): a cell where the model — or, beside the model, the
//! James–Stein combination ([`super::beside`]), which shrinks all cells alike and so leaves
//! a single far-off cell far off — departs from the table's own measurement by more than
//! `λ` takes the measurement. This costs nothing (post-processing).
//!
//! **When.** A check is worth its budget only where it can see an error that matters, and its
//! budget is `γρ·m/k` for the `m` of the `k` workload tables the direct phase left unmeasured:
//! the checks are made only when their threshold, as a share of the noisy total, weighted by
//! the share of the tables they must cover, is at most `κ = check_resolution`:
//! `(m/k)·σ_c√(2 ln 2n)/T̂ ≤ κ`. Where every table must be checked (`m = k`: adult at ε = 1,
//! titanic) this is `σ_c√(2 ln 2n)/T̂ ≤ κ`; where the direct phase measured most of them, the
//! few checks cost little and are made at a coarser resolution: on temporal-match2 all 2-way
//! at ε = 1 (532 of 595 measured directly, `λ/T̂` = 0.013) two tables over the departure and
//! arrival zones, which no round could add to the model, were off by 0.19 in one cell; the 63
//! checks (1 % of ρ) brought the largest error to 0.017 (docs/mechanisms/adaptive.md,
//! "Checked tables"). Where the rule fails nothing is charged and the release is the one
//! without checks (same draws).
//!
//! **Why this shape.** For `n` independent Gaussians `E max_i |Z_i| ≤ σ√(2 ln 2n)`, the bound
//! the max-error rounds use (`super::round`): where the model is right, a cell is replaced only
//! when its noise alone exceeds the bound — rarely, and then by a cell with error just above
//! `λ` — so the table keeps the model's accuracy; where the model is off by `e > λ` in a cell,
//! that cell's error drops from `e` to the noise `|Z_i|`. A cell's error after the check is
//! thus at most about `max(λ, |Z_i|)` wherever the model's error exceeds `λ`, and the model's
//! own error below it: the largest error is bounded by the check's noise level instead of by
//! what the model could not see. The cost is the budget `γρ·|checked|/k`, taken from the
//! rounds.
//!
//! **Privacy.** Each check is a discrete-Gaussian table measurement at `ρ_c`, with the
//! rounds' `Δ₂²` (1 add/remove, 2 replace-one;
//! [`crate::sensitivity::single_marginal_count_sensitivity`]), charged to the zCDP filter
//! before its noise is drawn. Which tables are checked is a function of public inputs and of
//! the direct phase's public decision, so the filter's adaptive composition covers it; the
//! correction at release is post-processing of the checks and of the model.

use crate::postprocess::project_onto_simplex;

/// The universal threshold `σ·√(2 ln 2n)` over `cells` cells (module docs: all the workload's
/// tables' cells).
pub(crate) fn threshold(sigma: f64, cells: usize) -> f64 {
    sigma * (2.0 * (2.0 * cells.max(1) as f64).ln()).sqrt()
}

/// Whether checks at noise `sigma` of `unchecked` of the workload's `tables` tables are made:
/// `(m/k)·σ√(2 ln 2n)/T̂ ≤ κ` with `m = unchecked`, `k = tables`, `n = cells` (module docs,
/// "When"). No checks when no table is left unchecked.
pub(crate) fn resolves(
    sigma: f64,
    cells: usize,
    total: f64,
    kappa: f64,
    unchecked: usize,
    tables: usize,
) -> bool {
    if unchecked == 0 || tables == 0 {
        return false;
    }
    let share = unchecked as f64 / tables as f64;
    share * threshold(sigma, cells) / total.max(1.0) <= kappa
}

/// The released distribution of a checked table: the model's counts `total·model_i` where the
/// check `y` (noisy counts, noise `sigma`) agrees with them within [`threshold`], `y_i` where
/// it departs by more (the threshold over `cells` cells: all the workload's tables'); divided
/// by `total` and projected onto the simplex (module docs). Returns the distribution and the
/// number of cells replaced by the check.
pub(crate) fn corrected(
    model: &[f64],
    y: &[i64],
    sigma: f64,
    total: f64,
    cells: usize,
) -> (Vec<f64>, usize) {
    let lambda = threshold(sigma, cells);
    let t = total.max(1.0);
    let mut replaced = 0usize;
    let mut v: Vec<f64> = model
        .iter()
        .zip(y)
        .map(|(&p, &yi)| {
            let mu = p * total;
            if (yi as f64 - mu).abs() > lambda {
                replaced += 1;
                yi as f64 / t
            } else {
                mu / t
            }
        })
        .collect();
    project_onto_simplex(&mut v);
    (v, replaced)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The threshold against the formula, by hand: σ = 2, n = 8: 2·√(2 ln 16) = 4.7096…
    #[test]
    fn threshold_by_hand() {
        let want = 2.0 * (2.0 * 16f64.ln()).sqrt();
        assert!((threshold(2.0, 8) - want).abs() < 1e-12);
        assert!((want - 4.709_640).abs() < 1e-6);
    }

    /// Both sides of the resolution rule, by hand: σ = 2, 8 cells, λ = 4.7096; with total 1000
    /// the threshold's share is 0.0047096: with every table unchecked (m = k = 10) resolved at
    /// κ = 0.0048, not at κ = 0.0046; with 1 of 10 unchecked the weighted share is
    /// 0.00047096, resolved at κ = 0.00048, not at 0.00046; nothing left to check: no checks.
    #[test]
    fn resolves_on_both_sides() {
        assert!(resolves(2.0, 8, 1000.0, 0.0048, 10, 10));
        assert!(!resolves(2.0, 8, 1000.0, 0.0046, 10, 10));
        assert!(resolves(2.0, 8, 1000.0, 0.00048, 1, 10));
        assert!(!resolves(2.0, 8, 1000.0, 0.00046, 1, 10));
        assert!(!resolves(2.0, 8, 1000.0, 1.0, 0, 10));
    }

    /// Both sides of the threshold, cell by cell: total 100, σ = 1, four cells (λ = √(2 ln 8)
    /// = 2.039…). The model says (0.25, 0.25, 0.25, 0.25) = 25 each; the check reads 27 (off
    /// by 2, kept), 20 (off by 5, replaced), 25, 28 (off by 3, replaced). Counts
    /// (25, 20, 25, 28) / 100 sum to 0.98; the simplex projection adds 0.005 to each.
    #[test]
    fn cells_beyond_the_threshold_take_the_check() {
        let model = [0.25; 4];
        let (v, replaced) = corrected(&model, &[27, 20, 25, 28], 1.0, 100.0, 4);
        assert_eq!(replaced, 2);
        let want = [0.255, 0.205, 0.255, 0.285];
        for (a, b) in v.iter().zip(want) {
            assert!((a - b).abs() < 1e-12, "{v:?}");
        }
        // over 1000 cells (λ = √(2 ln 2000) = 3.899) the cell off by 3 is kept, the one off
        // by 5 still replaced
        let (_, replaced) = corrected(&model, &[27, 20, 25, 28], 1.0, 100.0, 1000);
        assert_eq!(replaced, 1);
        // a check within the noise everywhere leaves the model's table
        let (v, replaced) = corrected(&model, &[26, 24, 27, 23], 1.0, 100.0, 4);
        assert_eq!(replaced, 0);
        assert_eq!(v, model.to_vec());
    }
}
