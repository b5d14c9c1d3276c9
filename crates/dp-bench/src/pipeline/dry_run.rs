//! The plan of a dry run (`dpqr release --dry-run`, `dpqr.plan` in Python): what a release
//! would do, from public inputs only — the domain or schema, the workload, the parameters —
//! as typed fields ([`DryRunReport`]) and as the lines `dpqr` prints
//! ([`DryRunReport::lines`]). Made after every argument and output check and the ledger's
//! check; no data is read, no spend recorded, no noise drawn, nothing written.

use super::{BYTES_PER_QUERY, Plan, describe_workload, expected_table_l1, swamped_warning};
use crate::io::ledger_file;
use crate::io::output;
use dp_core::{Neighbouring, Num};
use dp_mechanisms::noise_stats::CountNoise;
use dp_mechanisms::{
    ErrorBound, Mechanism, NoiseDistribution, NoiseSchedule, PostProcessing, PrivacyCertificate,
};
use dp_queries::{AnyWorkload, Workload};
use std::path::PathBuf;

/// The memory a release of the workload's answers needs, against `--max-memory-mib`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryEstimate {
    /// About this many bytes ([`BYTES_PER_QUERY`] per answer).
    pub need_bytes: u64,
    /// The cap, in MiB.
    pub cap_mib: u64,
}

impl MemoryEstimate {
    /// Whether the release would be refused for its memory.
    pub fn refused(&self) -> bool {
        self.need_bytes > self.cap_mib.saturating_mul(1 << 20)
    }
}

/// The universe a mechanism that enumerates records would enumerate.
#[derive(Clone, Debug, PartialEq)]
pub struct UniverseSize {
    /// log₁₀ of the number of records over the attributes the workload touches.
    pub log10: f64,
    /// The mechanism's limits, as its catalogue entry states them.
    pub limits: String,
}

/// The mechanism's own checks of public inputs ([`Mechanism::check_inputs`]), run as the
/// release runs them before anything is charged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DryRunChecks {
    /// They pass. `with_n`: those that need n ran too (`--assume-n` under replace-one);
    /// `needs_n`: some need n and run after the data is read (replace-one without it).
    Pass {
        /// The checks that need n ran, with `--assume-n` as n.
        with_n: bool,
        /// Checks that need n are left for the release (replace-one, no `--assume-n`).
        needs_n: bool,
    },
    /// The release would be refused, with this message.
    Refused(String),
}

/// The per-answer error of an answer-perturbation baseline for `--assume-n` records.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PerAnswer {
    /// The number of records predicted for.
    pub n: u64,
    /// The standard deviation of an answer: the count's divided by `n`.
    pub answer_std: f64,
    /// On a marginal workload, the expected ℓ1 error of a table from the noise alone (mean
    /// over the tables, before post-processing).
    pub table_l1: Option<f64>,
}

/// The error a measured table of a noise schedule carries.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScheduledTableError {
    /// The mean number of cells of the workload's tables.
    pub cells: f64,
    /// The expected ℓ1 noise, in counts, of a table measured in a round before annealing.
    pub before_annealing: f64,
    /// The same after annealing.
    pub after_annealing: f64,
}

/// What a dry run predicts of the error.
#[derive(Clone, Debug, PartialEq)]
pub enum PredictedError {
    /// Answer perturbation: every count gets independent noise of this description (exact).
    CountNoise {
        /// The noise on each count.
        noise: CountNoise,
        /// With `--assume-n`: the error of an answer and of a table.
        per_answer: Option<PerAnswer>,
    },
    /// A mechanism that plans its noise in phases and rounds (adaptive-projection).
    Schedule {
        /// The schedule, from public inputs (boxed: it is far larger than the other
        /// variants).
        schedule: Box<NoiseSchedule>,
        /// On a marginal workload with tables: the noise of a measured table.
        table: Option<ScheduledTableError>,
    },
    /// The error bound the mechanism's paper states, with `--assume-n`.
    StatedBound {
        /// The number of records the bound is for.
        n: u64,
        /// The bound (`None`: the mechanism states none for this workload and n).
        bound: Option<ErrorBound>,
    },
    /// The paper bounds the error in terms of n, and no `--assume-n` was given.
    BoundNeedsN,
    /// No a-priori figure for this mechanism.
    None,
}

/// The plan of a central release's dry run.
#[derive(Clone, Debug)]
pub struct DryRunReport {
    /// What `--mechanism auto` chose and why, in words.
    pub auto_choice: Option<String>,
    /// The data file whose header was checked against the schema.
    pub data: Option<PathBuf>,
    /// The guarantee the release would carry (it depends on the parameters only).
    pub certificate: PrivacyCertificate,
    /// The settings line, e.g. "--rounds 20, --eta 0.4 (default)".
    pub settings: String,
    /// The workload in words ([`describe_workload`]).
    pub workload: String,
    /// The number of answers.
    pub queries: usize,
    /// The attributes the workload touches.
    pub touched_attributes: usize,
    /// The domain's attributes.
    pub domain_attributes: usize,
    /// The memory of the answers.
    pub memory: MemoryEstimate,
    /// The universe, for a mechanism that enumerates one.
    pub universe: Option<UniverseSize>,
    /// The mechanism's checks of public inputs.
    pub checks: DryRunChecks,
    /// The error predicted.
    pub prediction: PredictedError,
    /// The relation of the guarantee.
    pub relation: Neighbouring,
    /// Whether post-processing is asked (the swamped-tables warning is for answers without).
    pub post: PostProcessing,
    /// The outputs, checked writable.
    pub outputs: Vec<PathBuf>,
    /// With a ledger: the dataset whose remaining budget the spend fits.
    pub ledger_dataset: Option<String>,
    /// `--assume-n`: the number of records predicted for.
    pub assume_n: Option<u64>,
}

impl DryRunReport {
    /// The plan of the release `plan` (checked, its ledger checked: `ledger_dataset` is the
    /// dataset charged, with a ledger).
    pub fn of(plan: &Plan<'_>, ledger_dataset: Option<String>) -> Self {
        let request = plan.request();
        let workload = plan.workload();
        let mech = plan.mechanism();
        let domain = workload.domain();
        let certificate = mech.certificate();
        let touched = workload.touched_attributes();
        let universe = mech.works_over_a_universe().then(|| UniverseSize {
            log10: touched
                .iter()
                .map(|&a| f64::from(domain.size(a)).log10())
                .sum(),
            limits: plan.spec().universe.to_string(),
        });
        // the mechanism's own checks of public inputs, as the release runs them before the
        // spend is recorded (with --assume-n as n under replace-one neighbours)
        let replace_one = certificate.neighbouring() == Some(Neighbouring::ReplaceOne);
        let public_n = match (replace_one, request.assume_n) {
            (true, Some(n)) => Some(usize::try_from(n).unwrap_or(usize::MAX)),
            _ => None,
        };
        let checks = match mech.check_inputs(workload, public_n) {
            Ok(()) => DryRunChecks::Pass {
                with_n: public_n.is_some(),
                needs_n: public_n.is_none() && replace_one,
            },
            Err(e) => DryRunChecks::Refused(e.to_string()),
        };
        let prediction = match (mech.count_noise(workload), mech.noise_schedule(workload)) {
            // answer perturbation: the noise per count is fixed before running
            (Some(noise), _) => PredictedError::CountNoise {
                noise,
                per_answer: request.assume_n.map(|n| per_answer(workload, noise, n)),
            },
            (None, Some(schedule)) => {
                let table = scheduled_table_error(&schedule, workload);
                PredictedError::Schedule {
                    schedule: Box::new(schedule),
                    table,
                }
            }
            (None, None) => stated_bound(request.assume_n, workload, mech),
        };
        DryRunReport {
            auto_choice: plan.auto_choice().map(|c| c.sentence()),
            data: request.data.data.clone(),
            certificate,
            settings: plan.settings_line(),
            workload: describe_workload(workload),
            queries: workload.num_queries(),
            touched_attributes: touched.len(),
            domain_attributes: domain.len(),
            memory: MemoryEstimate {
                need_bytes: (workload.num_queries() as u64).saturating_mul(BYTES_PER_QUERY),
                cap_mib: request.max_memory_mib,
            },
            universe,
            checks,
            prediction,
            relation: plan.relation(),
            post: plan.post(),
            outputs: request
                .outputs
                .list()
                .iter()
                .map(|(_, p)| p.to_path_buf())
                .collect(),
            ledger_dataset,
            assume_n: request.assume_n,
        }
    }

    /// The standard deviation of the noise on each count, where it is fixed before the
    /// run: the answer-perturbation baselines' (exact), or the σ of a round's measurement
    /// before annealing in a noise schedule.
    pub fn count_std(&self) -> Option<f64> {
        match &self.prediction {
            PredictedError::CountNoise { noise, .. } => Some(noise.variance().sqrt()),
            PredictedError::Schedule { schedule, .. } => Some(schedule.round.measurement.sigma()),
            _ => None,
        }
    }

    /// The lines `dpqr release --dry-run` prints, in order.
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![
            "dry run: no data read, no budget recorded, no noise drawn, nothing written"
                .to_string(),
        ];
        out.extend(self.auto_choice.clone());
        if let Some(path) = &self.data {
            out.push(format!(
                "data: {} exists and its header fits the schema (column names only; no value \
                 read)",
                path.display()
            ));
        }
        out.push(format!("privacy: {}", self.certificate.statement()));
        out.push(format!("settings: {}", self.settings));
        out.push(format!(
            "workload: {}, {} answers, over {} of the domain's {} attributes",
            self.workload, self.queries, self.touched_attributes, self.domain_attributes
        ));
        out.push(format!(
            "memory: about {} for the answers ({BYTES_PER_QUERY} bytes per answer): {} \
             --max-memory-mib {}",
            output::human_size(self.memory.need_bytes),
            if self.memory.refused() {
                "the release would be REFUSED by"
            } else {
                "within"
            },
            self.memory.cap_mib
        ));
        if let Some(u) = &self.universe {
            out.push(format!(
                "universe: the mechanism enumerates the records over the touched attributes, \
                 10^{:.1} of them; its limits: {}",
                u.log10, u.limits
            ));
        }
        out.push(match &self.checks {
            DryRunChecks::Pass { with_n: true, .. } => {
                "checks: the mechanism's checks of the parameters, workload and n pass".into()
            }
            DryRunChecks::Pass { needs_n, .. } => format!(
                "checks: the mechanism's checks of the parameters and workload pass{}",
                if *needs_n {
                    "; those that need n run after the data is read, before anything is \
                     charged (give --assume-n N to run them now)"
                } else {
                    ""
                }
            ),
            DryRunChecks::Refused(e) => {
                format!("checks: the release would be REFUSED before anything is charged: {e}")
            }
        });
        self.prediction_lines(&mut out);
        let outs: Vec<String> = self
            .outputs
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        out.push(format!("outputs: {} (checked writable)", outs.join(", ")));
        if let Some(dataset) = &self.ledger_dataset {
            out.push(format!(
                "ledger: the spend fits the remaining budget of dataset {} (nothing recorded \
                 by a dry run)",
                ledger_file::show_name(dataset)
            ));
        }
        out
    }

    /// The lines of the prediction, appended to `out`.
    fn prediction_lines(&self, out: &mut Vec<String>) {
        match &self.prediction {
            PredictedError::CountNoise { noise, per_answer } => {
                out.push(format!(
                    "predicted error: every count gets independent noise of standard \
                     deviation {:.4} (exact); an answer's is that divided by n (replace-one) \
                     or by the noisy total (add/remove)",
                    noise.variance().sqrt()
                ));
                self.per_answer_lines(per_answer.as_ref(), out);
            }
            PredictedError::Schedule { schedule, table } => {
                schedule_lines(schedule, table.as_ref(), self.assume_n, out);
            }
            PredictedError::StatedBound { n, bound: Some(b) } => out.push(format!(
                "stated bound: {} at most {:.4} {} for a table of {n} records ({})",
                b.statement,
                b.value,
                match b.confidence {
                    Some(c) => format!("with probability at least {}", Num(c)),
                    None => "in expectation".to_string(),
                },
                b.citation
            )),
            PredictedError::StatedBound { n, bound: None } => out.push(format!(
                "stated bound: none for this mechanism and workload with {n} records; see its \
                 guarantee above and the measured errors in docs/benchmarks.md"
            )),
            PredictedError::BoundNeedsN => out.push(
                "stated bound: this mechanism's paper bounds its error in terms of the number \
                 of records n, which a dry run does not read; give --assume-n N for the bound \
                 for a table of N records"
                    .into(),
            ),
            PredictedError::None => out.push(
                "predicted error: no a-priori per-answer figure for this mechanism; see its \
                 guarantee above and the measured errors in docs/benchmarks.md"
                    .into(),
            ),
        }
    }

    /// The per-answer lines of an answer-perturbation baseline (issue #26 item 4).
    fn per_answer_lines(&self, per_answer: Option<&PerAnswer>, out: &mut Vec<String>) {
        let Some(p) = per_answer else {
            out.push(
                "per answer: give --assume-n N for the error of an answer and of a table for \
                 N records"
                    .into(),
            );
            return;
        };
        out.push(format!(
            "per answer, for {} records (--assume-n): standard deviation {:.4e}{}",
            p.n,
            p.answer_std,
            if self.relation == Neighbouring::AddRemove {
                " (answers are divided by the noisy total, about n)"
            } else {
                ""
            }
        ));
        if let Some(l1) = p.table_l1 {
            out.push(format!(
                "per table: expected ℓ1 error about {l1:.4} from the noise alone (mean over \
                 the workload's tables, before post-processing)"
            ));
            if l1 > 2.0 && self.post == PostProcessing::None {
                out.push(swamped_warning(l1));
            }
        }
    }
}

/// The per-answer error of an answer-perturbation baseline for `n` records: the standard
/// deviation of an answer, `sd/n` (under add/remove the answers are divided by the noisy
/// total, about n), and on a marginal workload the expected ℓ1 error of a table from the
/// noise alone ([`expected_table_l1`]).
fn per_answer(workload: &AnyWorkload, noise: CountNoise, n: u64) -> PerAnswer {
    let answer_std = noise.variance().sqrt() / n as f64;
    let distribution = match noise {
        CountNoise::DiscreteGaussian { .. } => NoiseDistribution::DiscreteGaussian,
        CountNoise::DiscreteLaplace { .. } => NoiseDistribution::DiscreteLaplace,
    };
    PerAnswer {
        n,
        answer_std,
        table_l1: workload
            .as_marginals()
            .and_then(|m| expected_table_l1(m, answer_std, distribution)),
    }
}

/// The noise of a workload table of the mean size measured in a round of `s`: `None` when
/// the workload is not of marginal tables or has none.
fn scheduled_table_error(s: &NoiseSchedule, workload: &AnyWorkload) -> Option<ScheduledTableError> {
    let tables = workload.as_marginals()?.marginals();
    if tables.is_empty() {
        return None;
    }
    let cells = tables.iter().map(|t| t.num_cells() as f64).sum::<f64>() / tables.len() as f64;
    Some(ScheduledTableError {
        cells,
        before_annealing: s.round.measurement.expected_l1(cells),
        after_annealing: s.annealed_round.measurement.expected_l1(cells),
    })
}

/// The prediction of a mechanism without fixed count noise: the error bound its paper
/// states for `assume_n` records, or what the bound needs.
fn stated_bound(
    assume_n: Option<u64>,
    workload: &AnyWorkload,
    mech: &dyn Mechanism<AnyWorkload>,
) -> PredictedError {
    match assume_n {
        Some(n) => PredictedError::StatedBound {
            n,
            bound: mech.stated_error_bound(workload, usize::try_from(n).unwrap_or(usize::MAX)),
        },
        // probe with a large table: whether the mechanism states a bound at all
        None if mech.stated_error_bound(workload, usize::MAX >> 8).is_some() => {
            PredictedError::BoundNeedsN
        }
        None => PredictedError::None,
    }
}

/// The lines of a noise schedule (adaptive-projection: `dp_mechanisms::NoiseSchedule`,
/// computed by the mechanism from the same opening its run uses; issue #26 item 4) and of
/// the error it implies for a measured table: in counts, and as a share of the total with
/// `--assume-n N` only (under add/remove the total is private, and estimated by the release
/// from its noisy 1-way tables).
fn schedule_lines(
    s: &NoiseSchedule,
    table: Option<&ScheduledTableError>,
    assume_n: Option<u64>,
    out: &mut Vec<String>,
) {
    out.push(format!(
        "noise schedule (from public inputs; docs/mechanisms/adaptive.md, \"The noise \
         schedule\"): discrete Gaussian noise, σ per count, calibrated for {} neighbours; \
         ρ = {:.6} in all",
        s.neighbouring, s.rho
    ));
    out.push(format!(
        "  1-way tables: {} measurements (one per attribute the workload touches, fewest cells \
         first), ρ = {:.6} each (at a low budget: the first), σ = {:.6}",
        s.attributes,
        s.one_way.measure_rho,
        s.one_way.sigma()
    ));
    out.push(format!(
        "  a round before annealing: measurement ρ = {:.6}, σ = {:.6}; selection ε = {:.6} \
         (ρ {:.6})",
        s.round.measurement.measure_rho,
        s.round.measurement.sigma(),
        s.round.select_epsilon,
        s.round.select_rho
    ));
    out.push(format!(
        "  a round after annealing (budgets ×4 when a measurement barely moved the estimate): \
         measurement ρ = {:.6}, σ = {:.6}; selection ε = {:.6}",
        s.annealed_round.measurement.measure_rho,
        s.annealed_round.measurement.sigma(),
        s.annealed_round.select_epsilon
    ));
    if let Some(d) = &s.direct {
        out.push(format!(
            "  cheap workload tables, measured once each after the 1-way tables (those whose \
             noise is small against the noisy total; decided by the release): ρ = {:.6} each \
             at the equal split ({} of ρ over the {} tables of two or more attributes), \
             σ = {:.6}; the measured ones share that pool by their effective cells unless the \
             split is off (decided by the release from the noisy 1-way tables)",
            d.measurement.measure_rho,
            d.share,
            d.tables,
            d.measurement.sigma()
        ));
    }
    if let Some(c) = &s.check {
        out.push(format!(
            "  checks of the other workload tables (made when they resolve the cells; decided \
             by the release): ρ = {:.6} each, σ = {:.6}",
            c.measurement.measure_rho,
            c.measurement.sigma()
        ));
    }
    if let Some(low) = &s.low_budget {
        out.push(format!(
            "  at a low budget (decided by the release: at the noisy total of its first 1-way \
             table at most half of the workload tables are cheap): T = {} nominal, the other \
             1-way tables ρ = {:.6} each, σ = {:.6}; a round before annealing: measurement \
             ρ = {:.6}, σ = {:.6}; selection ε = {:.6}; after annealing σ = {:.6}",
            low.nominal_rounds,
            low.one_way.measure_rho,
            low.one_way.sigma(),
            low.round.measurement.measure_rho,
            low.round.measurement.sigma(),
            low.round.select_epsilon,
            low.annealed_round.measurement.sigma()
        ));
    }
    out.push(format!(
        "  rounds: T = {} nominal (--rounds per attribute × {} attributes); the budget allows \
         at most {} rounds (no cheap table or check measured, no annealing), {} after the \
         opening's largest spend, as few as {} if every round anneals",
        s.nominal_rounds,
        s.attributes,
        s.rounds_at_most,
        s.rounds_after_full_opening,
        s.rounds_if_every_round_anneals
    ));
    let Some(t) = table else {
        return;
    };
    out.push(format!(
        "error of a measured table: a workload table of {:.1} cells (the mean) measured in a \
         round has expected ℓ1 noise about {:.2} counts before annealing, {:.2} after \
         (√(2/π)·σ·cells); the release's tables are fitted to all measurements, so this is \
         the noise of one measurement, not a bound on the answers",
        t.cells, t.before_annealing, t.after_annealing
    ));
    out.push(match assume_n {
        Some(n) => format!(
            "  as a share of {n} records (--assume-n): {:.4} before annealing, {:.4} after",
            t.before_annealing / n as f64,
            t.after_annealing / n as f64
        ),
        None => format!(
            "  as a share of the total: give --assume-n N (the answers are proportions; {})",
            if s.neighbouring == Neighbouring::AddRemove {
                "under add/remove n is private and the release divides by its own noisy total"
            } else {
                "n is public under replace-one but a dry run does not read the data"
            }
        ),
    });
}
