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
//! **The rounds' measurements** of a workload table join its own (since 2026-11-29): the
//! table's direct measurement or check and every measurement a round made of the table — or of
//! its coarsening ([`super::coarse`]), for the cells alone in their coarsened cell — are
//! combined cell by cell by inverse variance ([`CellEvidence`]), and a cell is tested at its
//! combination's σ. A table the model was fitted to is then corrected where the fit lags its
//! own measurements: on temporal-match2 all 2-way at ε = 10 the one table over the departure
//! and arrival zones (9 409 cells), measured coarsened once by a round, stayed off by 0.0009
//! of the records in one cell after the last fit (the model's fit to a large clique converges
//! slowly); combined with its check it is corrected, and the release's largest error falls by
//! a third (docs/mechanisms/adaptive.md, "The rounds' measurements at release"). Where the
//! model is right the combination's noise alone crosses the threshold as rarely as a check's
//! (the union bound is over the same cells); where the model was fitted to the measurement it
//! departs from it less than the truth would, so less often still. Post-processing only.
//!
//! **Limited translation** (since 2026-11-29). A cell the model has wrong by `e` below the
//! threshold `λ` is left with the model, so its error can reach `λ` — and on tables where
//! nearly every table is measured (temporal-match2 all 2-way at ε = 10: 592 of 595 directly)
//! the release's largest error sat just under `λ/T̂`, 0.00063 against the Gaussian
//! baseline's 0.00044, though its noise was within 6 % of the baseline's. Efron and Morris's
//! limited translation (JASA 66 (1971) 807–815; 67 (1972) 130–139) keeps every component of a
//! shrinkage estimate within `d` standard deviations of its own unbiased estimate: here every
//! cell kept from the model (or its shrunk combination) is moved to within `d·σ_i` of the
//! combination `y_i` of the table's own measurements, `x̃_i = y_i + clamp(x_i − y_i, ±d·σ_i)`
//! ([`AdaptiveProjectionParams::limited_translation`](super::AdaptiveProjectionParams::limited_translation)).
//! A cell the model has wrong is then released at most `d·σ_i + |Z_i|` from its count
//! (`Z_i` its noise, typically one σ) instead of up to `λ ≈ 5σ_i`. Where the model is right
//! (`x_i = c_i`) the error becomes the noise soft-thresholded at `d`, of expected size
//! `2σ_i(φ(d) − d(1 − Φ(d)))` per cell: 0.017σ at `d = 2`, 0.0040σ at 2.5, 0.00076σ at 3 —
//! small per cell, but a workload of large sparse tables has many cells (adult W64 at ε = 10:
//! avgL1 +23 % at `d = 2`, +0.8 % at 3, seed 1), hence `d = 3` (docs/mechanisms/adaptive.md,
//! "Limited translation at release"). Post-processing of the released measurements and the model.
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

/// The checks' resolution: `(m/k)·σ√(2 ln 2n)/T̂` with `m = unchecked`, `k = tables`,
/// `n = cells` (module docs, "When"); `None` when no table is left unchecked. A function of
/// public inputs and the noisy total only, so the release's note may state it.
pub(crate) fn resolution(
    sigma: f64,
    cells: usize,
    total: f64,
    unchecked: usize,
    tables: usize,
) -> Option<f64> {
    if unchecked == 0 || tables == 0 {
        return None;
    }
    let share = unchecked as f64 / tables as f64;
    Some(share * threshold(sigma, cells) / total.max(1.0))
}

/// Whether the checks are made: their [`resolution`] is at most `κ` (module docs, "When").
/// No checks when no table is left unchecked (`None`).
pub(crate) fn resolves(resolution: Option<f64>, kappa: f64) -> bool {
    resolution.is_some_and(|r| r <= kappa)
}

/// What a table's own measurements say about each of its cells: the inverse-variance
/// combination, cell by cell, of its direct measurement or check and of every measurement the
/// rounds made of it — of the table itself (every cell) or of its coarsening (the cells alone
/// in their coarsened cell, [`dp_queries::CellGroups`]: the coarsened cell's count is then
/// that cell's). Independent Gaussian measurements of one count `c_i` with variances `v_j`
/// combine to `Σ (y_j/v_j) / Σ (1/v_j)`, of variance `1/Σ (1/v_j)`; a cell no measurement
/// reads has no evidence and is never corrected.
#[derive(Clone, Debug)]
pub(crate) struct CellEvidence {
    /// `Σ_j y_{ij}/v_j` per cell.
    weighted: Vec<f64>,
    /// `Σ_j 1/v_j` per cell (0: no measurement reads the cell).
    precision: Vec<f64>,
}

impl CellEvidence {
    /// No evidence yet on a table of `cells` cells.
    pub(crate) fn new(cells: usize) -> Self {
        CellEvidence {
            weighted: vec![0.0; cells],
            precision: vec![0.0; cells],
        }
    }

    /// A measurement of every cell (`y` row-major in the table's order) at noise variance
    /// `sigma2`.
    pub(crate) fn add(&mut self, y: &[f64], sigma2: f64) {
        for ((w, p), &v) in self.weighted.iter_mut().zip(&mut self.precision).zip(y) {
            *w += v / sigma2;
            *p += 1.0 / sigma2;
        }
    }

    /// A measurement of the table's coarsening (`y` one value per coarsened cell) at noise
    /// variance `sigma2`, `cell_map` each cell's coarsened cell
    /// ([`dp_queries::CellGroups::cell_map`]): only the cells alone in their coarsened cell
    /// are read.
    pub(crate) fn add_coarsened(&mut self, y: &[f64], sigma2: f64, cell_map: &[u32]) {
        let mut members = vec![0u32; y.len()];
        cell_map.iter().for_each(|&g| members[g as usize] += 1);
        for (i, &g) in cell_map.iter().enumerate() {
            if members[g as usize] == 1 {
                self.weighted[i] += y[g as usize] / sigma2;
                self.precision[i] += 1.0 / sigma2;
            }
        }
    }

    /// Whether any cell is read.
    pub(crate) fn is_empty(&self) -> bool {
        self.precision.iter().all(|&p| p == 0.0)
    }

    /// Each cell's combined value and its noise's standard deviation (infinite where no
    /// measurement reads the cell; the value is then 0 and unused).
    pub(crate) fn combined(&self) -> (Vec<f64>, Vec<f64>) {
        self.weighted
            .iter()
            .zip(&self.precision)
            .map(|(&w, &p)| {
                if p > 0.0 {
                    (w / p, p.recip().sqrt())
                } else {
                    (0.0, f64::INFINITY)
                }
            })
            .unzip()
    }
}

/// What [`corrected`] did to a table's cells.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Correction {
    /// Cells that took their measurements' combination (beyond the threshold).
    pub(crate) replaced: usize,
    /// Cells kept from the model but moved to within `d·sd_i` of the combination (limited
    /// translation).
    pub(crate) limited: usize,
}

/// The released distribution of a table with measurements of its own: the model's counts
/// `μ_i = total·model_i` where the measurements' combination `y_i` (noise standard deviation
/// `sd_i`; [`CellEvidence`]) agrees with them within `limit·sd_i`; `y_i ± limit·sd_i` (the
/// side of `μ_i`) where it departs by more but within the cell's threshold `sd_i·√(2 ln 2n)`
/// ([`threshold`], `n = cells`: all the workload's tables' cells); `y_i` where it departs by
/// more than the threshold; divided by `total` and projected onto the simplex (module docs,
/// "Limited translation"; `limit = ∞`: no limit). A cell with no measurement (`sd_i`
/// infinite) keeps the model's count.
pub(crate) fn corrected(
    model: &[f64],
    y: &[f64],
    sd: &[f64],
    total: f64,
    cells: usize,
    limit: f64,
) -> (Vec<f64>, Correction) {
    let t = total.max(1.0);
    // the threshold per unit of σ, the same for every cell
    let unit = threshold(1.0, cells);
    let mut done = Correction::default();
    let mut v: Vec<f64> = model
        .iter()
        .zip(y)
        .zip(sd)
        .map(|((&p, &yi), &s)| {
            let mu = p * total;
            if !s.is_finite() {
                return mu / t;
            }
            let gap = mu - yi;
            let off = gap.abs();
            if off > s * unit {
                done.replaced += 1;
                yi / t
            } else if off > limit * s {
                done.limited += 1;
                (yi + limit * s * gap.signum()) / t
            } else {
                mu / t
            }
        })
        .collect();
    project_onto_simplex(&mut v);
    (v, done)
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
        let made = |unchecked, kappa| resolves(resolution(2.0, 8, 1000.0, unchecked, 10), kappa);
        assert!(made(10, 0.0048));
        assert!(!made(10, 0.0046));
        assert!(made(1, 0.00048));
        assert!(!made(1, 0.00046));
        assert!(!made(0, 1.0));
        assert_eq!(resolution(2.0, 8, 1000.0, 0, 10), None);
    }

    /// Both sides of the threshold, cell by cell: total 100, σ = 1, four cells (λ = √(2 ln 8)
    /// = 2.039…). The model says (0.25, 0.25, 0.25, 0.25) = 25 each; the check reads 27 (off
    /// by 2, kept), 20 (off by 5, replaced), 25, 28 (off by 3, replaced). Counts
    /// (25, 20, 25, 28) / 100 sum to 0.98; the simplex projection adds 0.005 to each.
    #[test]
    fn cells_beyond_the_threshold_take_the_check() {
        let model = [0.25; 4];
        let unlimited = |y: &[f64], sd: &[f64], cells| {
            let (v, done) = corrected(&model, y, sd, 100.0, cells, f64::INFINITY);
            (v, done.replaced)
        };
        let sd = [1.0; 4];
        let (v, replaced) = unlimited(&[27.0, 20.0, 25.0, 28.0], &sd, 4);
        assert_eq!(replaced, 2);
        let want = [0.255, 0.205, 0.255, 0.285];
        for (a, b) in v.iter().zip(want) {
            assert!((a - b).abs() < 1e-12, "{v:?}");
        }
        // over 1000 cells (λ = √(2 ln 2000) = 3.899) the cell off by 3 is kept, the one off
        // by 5 still replaced
        assert_eq!(unlimited(&[27.0, 20.0, 25.0, 28.0], &sd, 1000).1, 1);
        // a check within the noise everywhere leaves the model's table
        let (v, replaced) = unlimited(&[26.0, 24.0, 27.0, 23.0], &sd, 4);
        assert_eq!(replaced, 0);
        assert_eq!(v, model.to_vec());
        // each cell at its own noise: the cell off by 5 at sd 3 (threshold 6.12) is kept, the
        // one off by 3 at sd 1 replaced, a cell nothing reads (sd infinite) never replaced
        let sd = [1.0, 3.0, f64::INFINITY, 1.0];
        assert_eq!(unlimited(&[27.0, 20.0, 0.0, 28.0], &sd, 4).1, 1);
    }

    /// Limited translation on both sides of `d` and of the threshold, by hand: μ = 25 in every
    /// cell, sd 1, 1000 cells (λ = √(2 ln 2000) = 3.899), d = 2. Gaps μ − y of −0.5 and −1.5
    /// keep μ; a gap of 3 (between d and λ) moves the cell to y + 2 = 24; a gap of −5 (beyond
    /// λ) takes y = 30. The table sums to 104, so the projection takes 0.01 from each share.
    /// At d = 3 the gap of 3 is not beyond d and keeps μ; at d = ∞ nothing is limited.
    #[test]
    fn limited_translation_by_hand() {
        let model = [0.25; 4];
        let sd = [1.0; 4];
        let y = [25.5, 22.0, 30.0, 26.5];
        let cases = [
            (2.0, 1, [0.24, 0.23, 0.29, 0.24]),
            (3.0, 0, [0.2375, 0.2375, 0.2875, 0.2375]),
            (f64::INFINITY, 0, [0.2375, 0.2375, 0.2875, 0.2375]),
        ];
        for (d, limited, want) in cases {
            let (v, done) = corrected(&model, &y, &sd, 100.0, 1000, d);
            assert_eq!(
                done,
                Correction {
                    replaced: 1,
                    limited
                },
                "d = {d}"
            );
            for (a, b) in v.iter().zip(want) {
                assert!((a - b).abs() < 1e-12, "d = {d}: {v:?}");
            }
        }
        // the limit is in units of each cell's own σ: at sd 2 the gap of 3 is within d = 2
        let (_, done) = corrected(&model, &y, &[1.0, 2.0, 1.0, 1.0], 100.0, 1000, 2.0);
        assert_eq!(done.limited, 0);
    }

    /// The combination by hand: a table of four cells measured once at variance 4 (every
    /// cell) and once coarsened at variance 1, cells 0 and 1 summed into one coarsened cell,
    /// cells 2 and 3 alone: cells 0 and 1 keep the first measurement (sd 2); cells 2 and 3
    /// combine (y/4 + y'/1)/(1/4 + 1) at sd √(1/1.25).
    #[test]
    fn evidence_combines_by_inverse_variance() {
        let mut e = CellEvidence::new(4);
        assert!(e.is_empty());
        e.add(&[10.0, 20.0, 30.0, 40.0], 4.0);
        e.add_coarsened(&[100.0, 35.0, 45.0], 1.0, &[0, 0, 1, 2]);
        assert!(!e.is_empty());
        let (y, sd) = e.combined();
        let want_y = [
            10.0,
            20.0,
            (30.0 / 4.0 + 35.0) / 1.25,
            (40.0 / 4.0 + 45.0) / 1.25,
        ];
        let want_sd = [2.0, 2.0, 0.8f64.sqrt(), 0.8f64.sqrt()];
        for i in 0..4 {
            assert!((y[i] - want_y[i]).abs() < 1e-12, "{y:?}");
            assert!((sd[i] - want_sd[i]).abs() < 1e-12, "{sd:?}");
        }
        // a coarsened measurement alone reads only the cells alone in their group
        let mut e = CellEvidence::new(4);
        e.add_coarsened(&[100.0, 35.0, 45.0], 1.0, &[0, 0, 1, 2]);
        let (y, sd) = e.combined();
        assert!(sd[0].is_infinite() && sd[1].is_infinite());
        assert_eq!((y[2], y[3], sd[2], sd[3]), (35.0, 45.0, 1.0, 1.0));
    }
}
