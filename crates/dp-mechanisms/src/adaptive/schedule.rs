//! The noise schedule of an adaptive-projection release, from public inputs only (issue #26,
//! item 4: a plan before spending): the budget, the relation, the parameters and the
//! workload over its public domain. Nothing here reads data or draws noise.
//!
//! The schedule is computed from the same opening the run calibrates itself with
//! ([`AdaptiveProjection::schedule`] calls the run's own `opening`): the 1-way tables at
//! `ρ₁ = αρ/T` each (`T = rounds_per_attribute · d`), each selection round at `αρ/T` for its
//! measurement and `(1 − α)ρ/T` for its selection until a round anneals (both ×4: σ halves,
//! ε doubles), the cheap workload tables at `βρ/k` and the checks at `γρ/k`; and, when the
//! release finds the budget low, every 1-way table but the first and the rounds at the same
//! rates with `T = min(r_low, r)·d` ([`NoiseSchedule::low_budget`]) (module docs of
//! [`crate::adaptive`]; docs/mechanisms/adaptive.md, "The noise schedule"). σ² is
//! `Δ₂²/(2ρ)` rounded up ([`crate::calibration::gaussian_sigma2`]) with `Δ₂² = 1` under
//! add/remove and `2` under replace-one ([`crate::sensitivity::single_marginal_count_sensitivity`]).
//!
//! What the schedule cannot say before the data is read: whether the budget is low (decided
//! from the noisy total of the first 1-way table), which workload tables are cheap (and
//! so whether the tables the model cannot take are measured directly too) and whether the
//! checks are made (both are decided from the noisy total), and when a round
//! anneals (decided from the noisy measurements). So the number of rounds is given as a
//! range: at most [`NoiseSchedule::rounds_at_most`] (no direct measurements or checks, no
//! annealing), at least [`NoiseSchedule::rounds_if_every_round_anneals`] (the opening's largest
//! spend, then every round annealing).

use dp_core::Neighbouring;
use dp_queries::MarginalWorkload;

use super::round::{RoundCalibration, RoundScore};
use super::{AdaptiveProjection, candidates};
use crate::Result;

/// One measurement of a table in the schedule: its ρ and the σ² of the discrete Gaussian
/// noise on each of its counts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScheduledMeasurement {
    /// ρ of the measurement (`Δ₂²/(2σ²)` is at most this).
    pub measure_rho: f64,
    /// σ² of the noise on each count, in counts².
    pub sigma2: f64,
}

impl ScheduledMeasurement {
    /// σ, in counts.
    pub fn sigma(&self) -> f64 {
        self.sigma2.sqrt()
    }

    /// The expected ℓ1 norm of the noise on a table of `cells` cells, in counts:
    /// `√(2/π)·σ·cells` (the mean absolute value of a Gaussian of standard deviation σ, per
    /// cell; the discrete Gaussian's is within a few per cent of it for σ ≥ 1).
    pub fn expected_l1(&self, cells: f64) -> f64 {
        (2.0 / std::f64::consts::PI).sqrt() * self.sigma() * cells
    }
}

impl From<&RoundCalibration> for ScheduledMeasurement {
    fn from(c: &RoundCalibration) -> Self {
        ScheduledMeasurement {
            measure_rho: c.measure_rho,
            sigma2: c.sigma2,
        }
    }
}

/// A selection round of the schedule: its measurement, and the selection's ε and charge.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScheduledRound {
    /// The measurement of the selected table.
    pub measurement: ScheduledMeasurement,
    /// ε of the exponential mechanism's selection.
    pub select_epsilon: f64,
    /// ρ charged for the selection (`ε²/8`, rounded up).
    pub select_rho: f64,
}

impl ScheduledRound {
    /// The round's charge: measurement and selection.
    pub fn charge(&self) -> f64 {
        self.measurement.measure_rho + self.select_rho
    }

    fn of(c: &RoundCalibration) -> Self {
        ScheduledRound {
            measurement: c.into(),
            select_epsilon: c.selector.as_ref().map_or(0.0, |em| em.epsilon()),
            select_rho: c.select_charge(),
        }
    }
}

/// A per-table phase of the opening (the direct measurements of cheap workload tables, or the
/// checks): one measurement per table, `share·ρ/tables` each.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScheduledPhase {
    /// The workload tables of two or more attributes (`k`).
    pub tables: usize,
    /// The share of ρ that would measure all of them (`β` or `γ`).
    pub share: f64,
    /// One table's measurement.
    pub measurement: ScheduledMeasurement,
}

/// The schedule's budgets when the budget is low
/// ([`super::AdaptiveProjectionParams::low_budget_rounds_per_attribute`]): decided by the
/// release from the noisy total of its first 1-way table.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LowBudgetSchedule {
    /// `T = r_low · d`.
    pub nominal_rounds: usize,
    /// Each 1-way table's measurement after the first (`αρ/T`).
    pub one_way: ScheduledMeasurement,
    /// A selection round before any annealing.
    pub round: ScheduledRound,
    /// A round after one annealing.
    pub annealed_round: ScheduledRound,
}

/// The noise schedule of a release (module docs), from public inputs only.
#[derive(Clone, Debug, PartialEq)]
pub struct NoiseSchedule {
    /// ρ of the whole release.
    pub rho: f64,
    /// The relation the noise is calibrated for.
    pub neighbouring: Neighbouring,
    /// The attributes the workload touches (`d`): one 1-way table each.
    pub attributes: usize,
    /// The nominal number of rounds `T = rounds_per_attribute · d` that sets a round's
    /// budget.
    pub nominal_rounds: usize,
    /// Each 1-way table's measurement (`αρ/T`): the first one's always, the others' unless the
    /// budget is low ([`Self::low_budget`]).
    pub one_way: ScheduledMeasurement,
    /// A selection round before any annealing (measurement `αρ/T`, selection `(1 − α)ρ/T`);
    /// its measurement has the 1-way tables' σ.
    pub round: ScheduledRound,
    /// A round after one annealing (both budgets ×4: σ halved, ε doubled).
    pub annealed_round: ScheduledRound,
    /// The direct measurement of a cheap workload table at the equal split (`βρ/k`; the
    /// cheapness test's σ), if the phase is on and the workload has tables of two or more
    /// attributes. With [`super::AdaptiveProjectionParams::direct_l1_split`] the `m` measured
    /// tables share `m·βρ/k` by their effective cells (decided by the release from the noisy
    /// 1-way tables, `adaptive/direct.rs`, "The split").
    pub direct: Option<ScheduledPhase>,
    /// The check of a workload table (`γρ/k`), likewise.
    pub check: Option<ScheduledPhase>,
    /// The budgets if the release finds the budget low (the first 1-way table and the
    /// phases above are as scheduled either way), when the rule can fire: the direct phase
    /// on and `r_low < r`.
    pub low_budget: Option<LowBudgetSchedule>,
    /// The most rounds the budget allows: after the 1-way tables, with no direct measurement
    /// or check made and no round annealing (the last round takes what is left when less
    /// than two rounds' budget remains, as the run does); at a low budget or not, whichever
    /// allows more.
    pub rounds_at_most: usize,
    /// The rounds without annealing after the opening's largest spend (the 1-way tables and
    /// `max(β, γ)·ρ` for the direct measurements and checks); at a low budget or not,
    /// whichever allows more.
    pub rounds_after_full_opening: usize,
    /// The fewest rounds: after the opening's largest spend, every round annealing; at a low
    /// budget or not, whichever allows fewer.
    pub rounds_if_every_round_anneals: usize,
}

impl NoiseSchedule {
    /// The ρ the 1-way tables take together: `d·αρ/T`, or at a low budget `αρ/T` for the
    /// first and the low budget's for the others.
    pub fn one_way_total(&self, low_budget: bool) -> f64 {
        match (&self.low_budget, low_budget) {
            (Some(low), true) => {
                self.one_way.measure_rho
                    + self.attributes.saturating_sub(1) as f64 * low.one_way.measure_rho
            }
            _ => self.attributes as f64 * self.one_way.measure_rho,
        }
    }
}

/// The number of rounds the run's loop makes from `remaining` budget (of `rho`) starting at
/// the round budgets `(rho_m, rho_s)`, annealing every round or never: the loop of
/// `AdaptiveProjection::run_counted` without the data (each round charges its calibration's
/// `charge()`; the last round takes all that is left when less than two rounds' budget
/// remains).
fn rounds_from(
    neighbouring: Neighbouring,
    rho: f64,
    mut remaining: f64,
    (mut rho_m, mut rho_s): (f64, f64),
    score: RoundScore,
    anneal: bool,
) -> Result<usize> {
    let mut rounds = 0usize;
    // a cap far above any real run (T is at most rounds_per_attribute · d, and every round
    // spends at least ρ/T or all that is left)
    while remaining > rho * 1e-9 && rounds < 10_000_000 {
        rounds += 1;
        let charge = RoundCalibration::new(neighbouring, rho_m, rho_s, score)?.charge();
        if remaining < 2.0 * charge {
            break;
        }
        remaining -= charge;
        if anneal {
            rho_m *= 4.0;
            rho_s *= 4.0;
        }
    }
    Ok(rounds)
}

impl AdaptiveProjection {
    /// The noise schedule of a release on `workload` (module docs of
    /// `adaptive/schedule.rs`), from public inputs only, computed from the same opening the
    /// run calibrates itself with: the run's 1-way tables' σ², its first round's σ² and ε
    /// before any annealing (at a low budget: [`NoiseSchedule::low_budget`]'s), and its
    /// direct and check measurements' σ² are the schedule's.
    ///
    /// Errors: as [`crate::Mechanism::check_inputs`] (a workload whose calibration fails).
    pub fn schedule(&self, workload: &MarginalWorkload) -> Result<NoiseSchedule> {
        let p = &self.params;
        let rel = p.neighbouring;
        let cands = candidates(workload);
        let opening = self.opening(&cands)?;
        let d = cands.iter().filter(|c| c.attrs.len() == 1).count();
        let round = RoundCalibration::new(
            rel,
            opening.usual.rho_measure,
            opening.usual.rho_select,
            opening.fit_score,
        )?;
        let annealed = RoundCalibration::new(
            rel,
            4.0 * opening.usual.rho_measure,
            4.0 * opening.usual.rho_select,
            opening.fit_score,
        )?;
        let phase = |o: &Option<super::DirectOpening>, share: f64| {
            o.as_ref().map(|o| ScheduledPhase {
                tables: o.tables,
                share,
                measurement: (&o.calibration).into(),
            })
        };
        let opening_share = opening.opening_share;
        let score = opening.fit_score;
        // the rounds after a 1-way spend, at the given round budgets: (most, after the full
        // opening, fewest)
        let range = |one_way_total: f64, budgets: (f64, f64)| -> Result<[usize; 3]> {
            let after_one_ways = (self.rho - one_way_total).max(0.0);
            let after_opening = (after_one_ways - opening_share * self.rho).max(0.0);
            Ok([
                rounds_from(rel, self.rho, after_one_ways, budgets, score, false)?,
                rounds_from(rel, self.rho, after_opening, budgets, score, false)?,
                rounds_from(rel, self.rho, after_opening, budgets, score, true)?,
            ])
        };
        let one_way_rho = opening.usual.one_way.measure_rho;
        let mut counts = range(
            d as f64 * one_way_rho,
            (opening.usual.rho_measure, opening.usual.rho_select),
        )?;
        let low_budget = match &opening.low_budget {
            Some(low) => {
                let low_counts = range(
                    one_way_rho + (d.saturating_sub(1)) as f64 * low.one_way.measure_rho,
                    (low.rho_measure, low.rho_select),
                )?;
                counts = [
                    counts[0].max(low_counts[0]),
                    counts[1].max(low_counts[1]),
                    counts[2].min(low_counts[2]),
                ];
                let round = |m: f64| -> Result<ScheduledRound> {
                    Ok(ScheduledRound::of(&RoundCalibration::new(
                        rel,
                        m * low.rho_measure,
                        m * low.rho_select,
                        score,
                    )?))
                };
                Some(LowBudgetSchedule {
                    nominal_rounds: low.rounds,
                    one_way: (&low.one_way).into(),
                    round: round(1.0)?,
                    annealed_round: round(4.0)?,
                })
            }
            None => None,
        };
        Ok(NoiseSchedule {
            rho: self.rho,
            neighbouring: rel,
            attributes: d,
            nominal_rounds: opening.usual.rounds,
            one_way: (&opening.usual.one_way).into(),
            round: ScheduledRound::of(&round),
            annealed_round: ScheduledRound::of(&annealed),
            direct: phase(&opening.direct, p.direct_share),
            check: phase(&opening.check, p.check_share),
            low_budget,
            rounds_at_most: counts[0],
            rounds_after_full_opening: counts[1],
            rounds_if_every_round_anneals: counts[2],
        })
    }
}

impl super::AdaptiveProjectionParams {
    /// [`AdaptiveProjection::schedule`] of these parameters (validated by [`Self::check`]
    /// first).
    pub fn schedule(&self, workload: &MarginalWorkload) -> Result<NoiseSchedule> {
        self.check()?.schedule(workload)
    }
}

#[cfg(test)]
mod tests {
    use super::super::AdaptiveProjectionParams;
    use super::*;
    use dp_core::{PrivacyLoss, seeded_rng};
    use dp_queries::{Dataset, Domain};

    fn data(n: usize) -> (Dataset, MarginalWorkload) {
        let domain = Domain::new(vec![
            ("a".into(), 2),
            ("b".into(), 3),
            ("c".into(), 4),
            ("d".into(), 2),
        ])
        .unwrap();
        let cols = (0..4)
            .map(|j| {
                (0..n)
                    .map(|i| ((i * (j + 2) + i / 7) % domain.size(j) as usize) as u32)
                    .collect()
            })
            .collect();
        let data = Dataset::from_columns(domain.clone(), cols).unwrap();
        let w = MarginalWorkload::all_kway(&domain, 2).unwrap();
        (data, w)
    }

    /// σ² from the documented formula, derived here: `Δ₂²/(2ρ)` with `Δ₂² = 1` (add/remove)
    /// or `2` (replace-one), rounded up by one ulp.
    fn sigma2(relation: Neighbouring, rho: f64) -> f64 {
        let delta2 = match relation {
            Neighbouring::AddRemove => 1.0,
            Neighbouring::ReplaceOne => 2.0,
        };
        (delta2 / (2.0 * rho)).next_up()
    }

    #[test]
    fn the_schedule_follows_the_documented_formulas() {
        let (_, w) = data(10);
        for relation in [Neighbouring::AddRemove, Neighbouring::ReplaceOne] {
            let rho = 0.5;
            let s = AdaptiveProjectionParams::new(PrivacyLoss::Zcdp { rho })
                .neighbouring(relation)
                .schedule(&w)
                .unwrap();
            // d = 4 attributes, T = 16·4 = 64 nominal rounds, α = 0.9
            assert_eq!((s.attributes, s.nominal_rounds), (4, 64));
            let rho_1 = 0.9 * rho / 64.0;
            assert_eq!(s.one_way.measure_rho, rho_1);
            assert_eq!(s.one_way.sigma2, sigma2(relation, rho_1));
            assert_eq!(s.round.measurement, s.one_way);
            assert_eq!(s.annealed_round.measurement.measure_rho, 4.0 * rho_1);
            assert_eq!(
                s.annealed_round.measurement.sigma2,
                sigma2(relation, 4.0 * rho_1)
            );
            // ε²/8 ≤ (1 − α)ρ/T, the largest such ε (within a few ulps)
            let eps = (8.0 * 0.1 * rho / 64.0).sqrt();
            assert!((s.round.select_epsilon - eps).abs() < 1e-12 * eps);
            assert!(s.round.select_rho <= 0.1 * rho / 64.0);
            // 6 workload tables of two attributes: β = 0.9, γ = 0.4
            let direct = s.direct.unwrap();
            assert_eq!(direct.tables, 6);
            assert_eq!(direct.measurement.sigma2, sigma2(relation, 0.9 * rho / 6.0));
            let check = s.check.unwrap();
            assert_eq!(check.measurement.sigma2, sigma2(relation, 0.4 * rho / 6.0));
            // at a low budget T = 12·4 = 48 for the 1-way tables after the first and the
            // rounds
            let low = s.low_budget.unwrap();
            let rho_low = 0.9 * rho / 48.0;
            assert_eq!(low.nominal_rounds, 48);
            assert_eq!(low.one_way.measure_rho, rho_low);
            assert_eq!(low.one_way.sigma2, sigma2(relation, rho_low));
            assert_eq!(low.round.measurement, low.one_way);
            assert_eq!(
                low.annealed_round.measurement.sigma2,
                sigma2(relation, 4.0 * rho_low)
            );
            let eps_low = (8.0 * 0.1 * rho / 48.0).sqrt();
            assert!((low.round.select_epsilon - eps_low).abs() < 1e-12 * eps_low);
            // the rounds: without annealing, what is left after the 1-ways over a round's
            // charge (the last round takes the rest); fewer after the opening; fewer again
            // when every round anneals
            let left = rho - 4.0 * rho_1;
            let per_round = s.round.charge();
            let most = (left / per_round).floor() as usize;
            assert!(
                s.rounds_at_most == most || s.rounds_at_most + 1 == most,
                "{} vs {most}",
                s.rounds_at_most
            );
            assert!(s.rounds_after_full_opening < s.rounds_at_most);
            assert!(s.rounds_if_every_round_anneals <= s.rounds_after_full_opening);
            assert!(s.rounds_if_every_round_anneals >= 1);
        }
    }

    /// The run's own σ² and ε are the schedule's: round 0 (the 1-way tables), the first
    /// selection round (before any annealing), every direct and check measurement; and its
    /// number of rounds lies in the schedule's range.
    #[test]
    fn the_schedule_equals_what_the_run_spends() {
        // n = 400: every table cheap, the budget not low; n = 5: none cheap (σ_β ≈ 1.3 counts
        // against 4-cell tables of 5 records), the budget low under replace-one (public n)
        for (n, relation) in [
            (400, Neighbouring::AddRemove),
            (400, Neighbouring::ReplaceOne),
            (5, Neighbouring::AddRemove),
            (5, Neighbouring::ReplaceOne),
        ] {
            let (data, w) = data(n);
            let params = AdaptiveProjectionParams::new(PrivacyLoss::Zcdp { rho: 2.0 })
                .neighbouring(relation)
                .estimator(crate::EstimatorChoice::Independent);
            let mech = params.check().unwrap();
            let s = mech.schedule(&w).unwrap();
            let run = mech.run(&data, &w, &mut seeded_rng(3)).unwrap();
            if relation == Neighbouring::ReplaceOne {
                assert_eq!(run.low_budget, n == 5);
            }
            // the first 1-way table at the schedule's; the others, the rounds and the
            // annealed rounds at the low budget's when the run found the budget low
            let first_one_way = &run.one_ways[0];
            assert_eq!(first_one_way.sigma2, s.one_way.sigma2);
            assert_eq!(first_one_way.measure_rho, s.one_way.measure_rho);
            let (one_way, round, annealed_round) = match (&s.low_budget, run.low_budget) {
                (Some(low), true) => (low.one_way, low.round, low.annealed_round),
                (None, true) => panic!("a low budget the schedule does not list"),
                _ => (s.one_way, s.round, s.annealed_round),
            };
            for r in &run.one_ways[1..] {
                assert_eq!(
                    (r.sigma2, r.measure_rho),
                    (one_way.sigma2, one_way.measure_rho)
                );
            }
            let first = &run.rounds[1];
            assert_eq!(first.sigma2, round.measurement.sigma2);
            assert_eq!(first.select_epsilon, round.select_epsilon);
            assert_eq!(first.select_rho, round.select_rho);
            // the direct measurements share the pool the schedule's equal split would take
            // (direct.rs, "The split"), each at σ² = Δ₂²/(2ρ_t) of its own ρ_t
            let pool = s.direct.unwrap().measurement.measure_rho * run.direct.len() as f64;
            let spent: f64 = run.direct.iter().map(|r| r.measure_rho).sum();
            assert!((spent - pool).abs() <= 1e-12 * pool, "{spent} vs {pool}");
            for r in &run.direct {
                assert_eq!(r.sigma2, sigma2(relation, r.measure_rho));
            }
            for r in &run.checks {
                assert_eq!(r.sigma2, s.check.unwrap().measurement.sigma2);
            }
            // the round after the first annealing (unless it is the last, which takes what
            // is left) has the annealed σ²
            let last = run.rounds.len() - 1;
            if let Some(j) = (1..last).find(|&j| run.rounds[j].annealed)
                && j + 1 < last
            {
                assert_eq!(run.rounds[j + 1].sigma2, annealed_round.measurement.sigma2);
            }
            let rounds = run.rounds.len() - 1;
            assert!(
                (s.rounds_if_every_round_anneals..=s.rounds_at_most).contains(&rounds),
                "{rounds} rounds outside [{}, {}]",
                s.rounds_if_every_round_anneals,
                s.rounds_at_most
            );
        }
    }
}
