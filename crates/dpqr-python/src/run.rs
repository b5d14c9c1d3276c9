//! One release for Python: the [`Arguments`] turned into a request, the outputs chosen as
//! `dpqr release` would be told to write them, and [`dp_bench::pipeline::release`] run
//! once. Every check and every message is the pipeline's; what Python reads back are the
//! files it wrote, so a release from Python outputs exactly what the command line does.

use crate::arguments::{Arguments, SyntheticChoice};
use crate::error::{BindingError, Result};
use dp_bench::BenchError;
use dp_bench::catalogue::{self, BudgetKind, MECHANISMS, MechanismSpec, neighbouring_flag};
use dp_bench::io::answers::AnswersForm;
use dp_bench::io::answers::read_answers;
use dp_bench::io::synthetic::read_for_scoring;
use dp_bench::pipeline::DataSpec;
use dp_bench::pipeline::{
    self, ChargeGuard, DryRunChecks, DryRunReport, LedgerRecord, Outcome, PredictedError,
    ReleaseEvents, ReleaseRequest, RoundProgress, Silent,
};
use dp_bench::scoring::{MarginalEvaluation, weighted_answers};
use dp_core::{PrivacyLoss, Progress, ProgressSink, StopRequest};
use dp_mechanisms::PrivacyCertificate;
use dp_queries::{AnyWorkload, MarginalWorkload};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

/// A certificate as `dpqr.Certificate` holds it: plain fields in the command line's words.
#[derive(Clone, Debug, PartialEq)]
pub struct CertificateView {
    /// The mechanism that spent the budget.
    pub mechanism: String,
    /// `central` or `local`.
    pub model: &'static str,
    /// The relation of a central guarantee as `--neighbouring` names it (`add-remove`,
    /// `replace-one`); `None` in the local model.
    pub neighbouring: Option<&'static str>,
    /// The native accounting: `pure`, `approx` or `zcdp` ([`BudgetKind::key`]).
    pub guarantee: &'static str,
    /// ε of a pure or (ε, δ) guarantee.
    pub epsilon: Option<f64>,
    /// δ of an (ε, δ) guarantee.
    pub delta: Option<f64>,
    /// ρ of a zCDP guarantee.
    pub rho: Option<f64>,
    /// The (ε, δ) a zCDP guarantee implies at the δ asked.
    pub approx_equivalent: Option<(f64, f64)>,
    /// The line `dpqr release` prints after "privacy spent:".
    pub statement: String,
}

impl CertificateView {
    /// The fields as a JSON object, named as `dpqr.Certificate` names them.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "mechanism": self.mechanism,
            "model": self.model,
            "neighbouring": self.neighbouring,
            "guarantee": self.guarantee,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "rho": self.rho,
            "approx_equivalent": self.approx_equivalent,
            "statement": self.statement,
        })
    }

    /// The view of `c`.
    pub fn of(c: &PrivacyCertificate) -> Self {
        let (epsilon, delta, rho) = match c.loss {
            PrivacyLoss::Pure { epsilon } => (Some(epsilon), None, None),
            PrivacyLoss::Approx { epsilon, delta } => (Some(epsilon), Some(delta), None),
            PrivacyLoss::Zcdp { rho } => (None, None, Some(rho)),
        };
        let approx_equivalent = match c.approx_equivalent {
            Some(PrivacyLoss::Approx { epsilon, delta }) => Some((epsilon, delta)),
            Some(PrivacyLoss::Pure { epsilon }) => Some((epsilon, 0.0)),
            _ => None,
        };
        CertificateView {
            mechanism: c.mechanism.clone(),
            model: c.model.key(),
            neighbouring: c.neighbouring().map(neighbouring_flag),
            guarantee: BudgetKind::of(&c.loss).key(),
            epsilon,
            delta,
            rho,
            approx_equivalent,
            statement: c.statement(),
        }
    }
}

/// What a release from Python did, beside the files it wrote.
#[derive(Debug)]
pub struct Ran {
    /// The guarantee the release carries.
    pub certificate: CertificateView,
    /// Whether the answers were written labelled (`marginal,cell,answer,label,count`).
    pub labelled: bool,
    /// Whether synthetic records were written to [`Arguments::synthetic_out`].
    pub synthetic: bool,
    /// The warnings `dpqr release` prints on stderr (a fixed seed, a large δ accepted,
    /// noise that swamps the tables), in order.
    pub warnings: Vec<String>,
    /// With a ledger: the line `dpqr release` prints when the spend is recorded.
    pub ledger_record: Option<String>,
}

/// One progress event of a release, as a caller that shows progress receives it (the
/// Python package's bar). Like `dpqr`'s spinner and bar, no event holds a timing, and no
/// stage whose share done would reveal n has a percentage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProgressEvent {
    /// A stage begins, without a percentage ("loading data", "writing outputs").
    Stage(String),
    /// Counting the workload on the data begins: one pass over the records, without a
    /// percentage (its share done would reveal n, private under add/remove neighbours).
    Counting(String),
    /// A round of adaptive-projection, in one line (the table it measured, ρ spent).
    Round(String),
    /// `done` of `total` steps of `stage` are complete (`total` public, fixed before the
    /// stage); sent when the whole percentage changes, and at the end.
    Step {
        /// The stage's public name, e.g. "MWEM rounds".
        stage: String,
        /// Steps done.
        done: u64,
        /// Steps in all.
        total: u64,
    },
}

/// Where a release's [`ProgressEvent`]s go. Called from the release's threads.
pub type ProgressCallback = Arc<dyn Fn(ProgressEvent) + Send + Sync>;

/// The mechanisms' progress reports ([`Progress`]) passed on as [`ProgressEvent::Step`]s,
/// at most once per whole percentage of a stage (so that a caller that must take a lock
/// to show one, such as Python's interpreter lock, is called about 100 times a stage).
struct StepRelay {
    callback: ProgressCallback,
    /// The stage last sent and its percentage.
    last: Mutex<Option<(String, u64)>>,
}

impl Progress for StepRelay {
    fn report(&self, stage: &str, done: u64, total: u64) {
        let total = total.max(1);
        let done = done.min(total);
        let percent = done * 100 / total;
        {
            let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
            if last
                .as_ref()
                .is_some_and(|(s, p)| s == stage && *p == percent)
            {
                return;
            }
            *last = Some((stage.to_string(), percent));
        } // the lock is not held while the callback runs
        (self.callback)(ProgressEvent::Step {
            stage: stage.to_string(),
            done,
            total,
        });
    }
}

/// The spend a release charged to a ledger, or began to: for the account of a release
/// that did not finish ([`Account`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Charge {
    /// The ledger's dataset, quoted as the ledger's messages quote it (`dataset 'adult'`).
    pub dataset: String,
    /// The spend and its neighbouring relation, in words.
    pub spend: String,
    /// Whether the spend is on disk in the ledger (it is never taken back).
    pub recorded: bool,
}

/// What a release had done with the budget when it ended, finished or not: the account an
/// interrupted release from Python gives (as `dpqr release` gives one on SIGINT).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Account {
    /// The ledger the release was to be charged to, if any.
    pub ledger: Option<PathBuf>,
    /// The spend, once charging it began.
    pub charge: Option<Charge>,
}

impl Account {
    /// Whether a spend is recorded in the ledger.
    pub fn charged(&self) -> bool {
        self.charge.as_ref().is_some_and(|c| c.recorded)
    }

    /// The message of the exception an interrupted release raises: what happened to the
    /// release (`finished`: it had ended before it saw the interrupt, and its results are
    /// thrown away with the exception) and to the budget. A spend recorded in a ledger is
    /// never refunded — the mechanism may have drawn noise with it — and the message says
    /// so, as the command line's account does (`interrupt.rs` in dp-bench's `dpqr`).
    pub fn interrupted_message(&self, finished: bool) -> String {
        let what = if finished {
            "dpqr.release interrupted: the release had finished when the interrupt was seen; \
             its results are discarded"
        } else {
            "dpqr.release interrupted before the release finished: nothing was returned or \
             kept"
        };
        let budget = match (&self.ledger, &self.charge) {
            (Some(l), Some(c)) if c.recorded => format!(
                "the budget WAS CHARGED: ledger {} records {} for {} (a recorded spend is \
                 never refunded, even for an interrupted release: releasing again spends \
                 again)",
                l.display(),
                c.spend,
                c.dataset
            ),
            (Some(l), _) => format!(
                "the budget was NOT charged: nothing was recorded in ledger {}",
                l.display()
            ),
            (None, _) => "the budget was NOT charged: no ledger= was given, so no spend was \
                          recorded anywhere"
                .to_string(),
        };
        format!("{what}; {budget}")
    }
}

/// The [`ChargeGuard`] of a release from Python: notes in the shared [`Charge`] that the
/// spend is on disk.
struct NoteCharge(Arc<Mutex<Option<Charge>>>);

impl ChargeGuard for NoteCharge {
    fn recorded(self: Box<Self>) {
        let mut c = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(c) = c.as_mut() {
            c.recorded = true;
        }
    }
}

/// The [`ReleaseEvents`] of a release from Python: the warnings kept for the caller to
/// raise as Python warnings once the release is done; the stages and the mechanism's
/// progress sent to `progress`, if any; the spend charged to a ledger noted for the
/// account of an interrupted release; `stop` asked of the pipeline; nothing else is shown.
#[derive(Default)]
struct Collected {
    warnings: Mutex<Vec<String>>,
    progress: Option<ProgressCallback>,
    recorded: Mutex<Option<String>>,
    charge: Arc<Mutex<Option<Charge>>>,
    stop: Option<StopRequest>,
}

impl Collected {
    fn send(&self, event: ProgressEvent) {
        if let Some(f) = &self.progress {
            f(event);
        }
    }

    /// The warnings and the ledger's record, once the release is done.
    fn into_parts(self) -> (Vec<String>, Option<String>) {
        (
            self.warnings
                .into_inner()
                .unwrap_or_else(PoisonError::into_inner),
            self.recorded
                .into_inner()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }
}

impl ReleaseEvents for Collected {
    fn stage(&self, message: &str) {
        self.send(ProgressEvent::Stage(message.to_string()));
    }

    fn counting(&self, message: &str) {
        self.send(ProgressEvent::Counting(message.to_string()));
    }

    fn warning(&self, message: &str) {
        // a poisoned lock means a panic elsewhere, which the caller sees; keep the rest
        let mut w = self.warnings.lock().unwrap_or_else(PoisonError::into_inner);
        w.push(message.to_string());
    }

    fn progress(&self) -> Option<ProgressSink> {
        let callback = Arc::clone(self.progress.as_ref()?);
        Some(ProgressSink(Arc::new(StepRelay {
            callback,
            last: Mutex::new(None),
        })))
    }

    fn recorded(&self, record: &LedgerRecord) {
        let mut r = self.recorded.lock().unwrap_or_else(PoisonError::into_inner);
        *r = Some(record.to_string());
    }

    fn charging(&self, key: &str, loss: String) -> Box<dyn ChargeGuard> {
        let mut c = self.charge.lock().unwrap_or_else(PoisonError::into_inner);
        *c = Some(Charge {
            dataset: key.to_string(),
            spend: loss,
            recorded: false,
        });
        Box::new(NoteCharge(Arc::clone(&self.charge)))
    }

    fn stop(&self) -> Option<StopRequest> {
        self.stop.clone()
    }

    fn round_progress(&self) -> Option<RoundProgress> {
        let callback = Arc::clone(self.progress.as_ref()?);
        Some(Arc::new(move |line: String| {
            callback(ProgressEvent::Round(line));
        }))
    }
}

/// Whether the catalogue entry called `name` is a local-model one (unknown names are not:
/// the pipeline refuses them).
fn is_local(name: &str) -> bool {
    catalogue::find(name).is_some_and(|s| s.central().is_none())
}

/// The answers' form for `request` when labelled answers are asked: labelled for a
/// central release of marginal tables, and otherwise the schema's choice (the pipeline
/// refuses the labelled form for other classes and for the local model). An argument
/// that cannot be checked here is left for the pipeline to refuse, in its order and with
/// its message.
fn answers_form(request: &ReleaseRequest) -> AnswersForm {
    if is_local(&request.mechanism) {
        return AnswersForm::Auto;
    }
    let marginals = request.data.public_domain().and_then(|domain| {
        AnyWorkload::parse_spec(&domain, &request.workload, request.workload_seed)
            .map_err(BenchError::from)
    });
    match marginals {
        Ok(w) if w.as_marginals().is_none() => AnswersForm::Auto,
        _ => AnswersForm::Labelled,
    }
}

/// Whether the release of `request` makes synthetic records, from public inputs: the
/// mechanism the pipeline would build (the one `auto` would choose) says so; a local-model
/// release makes none. `false` when the request does not validate — the release itself
/// then reports why.
fn makes_synthetic(request: &ReleaseRequest) -> bool {
    pipeline::validate(request, &Silent).is_ok_and(|plan| plan.produces_synthetic())
}

/// The request of `args` with the outputs `dpqr release` would be told to write: labelled
/// answers where they can be, synthetic records as [`Arguments::synthetic`] decides.
fn request(args: &Arguments) -> Result<ReleaseRequest> {
    let mut request = args.request()?;
    if args.labelled {
        request.outputs.answers_form = answers_form(&request);
    }
    let synthetic = match args.synthetic {
        SyntheticChoice::Never => false,
        SyntheticChoice::Always => true,
        SyntheticChoice::IfMade => args.rows.is_some() || makes_synthetic(&request),
    };
    if synthetic {
        request.outputs.synthetic = Some(args.synthetic_out.clone());
    }
    Ok(request)
}

/// Run the release `args` ask for, writing its answers, report and (when made) synthetic
/// records to the paths they give.
pub fn release(args: &Arguments) -> Result<Ran> {
    release_with_progress(args, None)
}

/// [`release`], its stages and the mechanism's progress sent to `progress`.
pub fn release_with_progress(args: &Arguments, progress: Option<ProgressCallback>) -> Result<Ran> {
    release_stoppable(args, progress, None).0
}

/// [`release_with_progress`] that stops early once `stop` is requested (at the pipeline's
/// next stopping point: `dp_bench::pipeline`, "Stopping"), with an error
/// (`CoreError::Stopped`), writing no output. Returns the release's result and, either
/// way, its [`Account`]: what it charged to the ledger, if anything.
pub fn release_stoppable(
    args: &Arguments,
    progress: Option<ProgressCallback>,
    stop: Option<StopRequest>,
) -> (Result<Ran>, Account) {
    let events = Collected {
        progress,
        stop,
        ..Collected::default()
    };
    let charge = Arc::clone(&events.charge);
    let ran = run_release(args, events);
    let charge = charge
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    let account = Account {
        ledger: args.ledger.clone(),
        charge,
    };
    (ran, account)
}

/// The release `args` ask for, shown to and stopped by `events`.
fn run_release(args: &Arguments, events: Collected) -> Result<Ran> {
    let request = request(args)?;
    let synthetic = request.outputs.synthetic.is_some();
    let outcome = pipeline::release(&request, &events)?;
    let (certificate, labelled) = match outcome {
        Outcome::Released(r) => (r.release.certificate.clone(), r.plan.labelled()),
        Outcome::LocalReleased { released, .. } => (released.release.certificate.clone(), false),
        Outcome::DryRun { .. } | Outcome::LocalDryRun(_) => {
            return Err(
                BenchError::Internal("a release from Python ran as a dry run".into()).into(),
            );
        }
    };
    let (warnings, ledger_record) = events.into_parts();
    Ok(Ran {
        certificate: CertificateView::of(&certificate),
        labelled,
        synthetic,
        warnings,
        ledger_record,
    })
}

/// What a dry run from Python found: the plan as JSON (the fields of `dpqr.Plan`) and the
/// warnings `dpqr release --dry-run` prints on stderr.
#[derive(Debug)]
pub struct Planned {
    /// The plan: `certificate` ([`CertificateView::to_json`]), the typed fields of the
    /// [`DryRunReport`] and `lines`, the lines `dpqr release --dry-run` prints.
    pub plan: serde_json::Value,
    /// The warnings, in order.
    pub warnings: Vec<String>,
}

/// The dry run of the release `args` ask for (with [`Arguments::dry_run`] set here): every
/// check the release makes before it reads data, and its plan. Reads no data (only the
/// data file's header), spends nothing, writes nothing.
pub fn plan(args: &Arguments) -> Result<Planned> {
    if args.assume_n == Some(0) {
        // the flag's range, as `--assume-n 0` is refused
        return Err(BindingError::Argument(
            "assume_n=0: give a whole number of at least 1".into(),
        ));
    }
    let request = request(&Arguments {
        dry_run: true,
        ..args.clone()
    })?;
    let events = Collected::default();
    let plan = match pipeline::release(&request, &events)? {
        Outcome::DryRun {
            plan,
            ledger_dataset,
        } => {
            let report = DryRunReport::of(&plan, ledger_dataset);
            central_plan_json(&report, plan.mechanism().produces_synthetic())
        }
        Outcome::LocalDryRun(plan) => serde_json::json!({
            "certificate": CertificateView::of(&plan.certificate()).to_json(),
            "workload": pipeline::describe_workload(&dp_queries::AnyWorkload::Marginals(
                plan.workload().clone(),
            )),
            "queries": dp_queries::Workload::num_queries(plan.workload()),
            "touched_attributes": plan.attributes(),
            "synthetic": false,
            "lines": plan.dry_run_lines(),
        }),
        Outcome::Released(_) | Outcome::LocalReleased { .. } => {
            return Err(
                BenchError::Internal("a dry run from Python ran as a release".into()).into(),
            );
        }
    };
    let (warnings, _) = events.into_parts();
    Ok(Planned { plan, warnings })
}

/// The fields of `dpqr.Plan` for the central dry run `r` (`synthetic`: whether the
/// mechanism makes synthetic records).
fn central_plan_json(r: &DryRunReport, synthetic: bool) -> serde_json::Value {
    let (checks_pass, checks_refusal) = match &r.checks {
        DryRunChecks::Pass { .. } => (true, None),
        DryRunChecks::Refused(why) => (false, Some(why.clone())),
    };
    let prediction = match &r.prediction {
        PredictedError::CountNoise { noise, per_answer } => serde_json::json!({
            "kind": "count-noise",
            "count_std": noise.variance().sqrt(),
            "assume_n": per_answer.map(|p| p.n),
            "answer_std": per_answer.map(|p| p.answer_std),
            "table_l1": per_answer.and_then(|p| p.table_l1),
        }),
        PredictedError::Schedule { schedule: s, table } => {
            let measurement = |m: &dp_mechanisms::adaptive::ScheduledMeasurement| serde_json::json!({ "rho": m.measure_rho, "sigma": m.sigma() });
            let phase = |p: &dp_mechanisms::adaptive::ScheduledPhase| {
                serde_json::json!({
                    "tables": p.tables,
                    "share": p.share,
                    "rho": p.measurement.measure_rho,
                    "sigma": p.measurement.sigma(),
                })
            };
            let round = |r: &dp_mechanisms::adaptive::ScheduledRound| {
                serde_json::json!({
                    "measurement": measurement(&r.measurement),
                    "select_epsilon": r.select_epsilon,
                    "select_rho": r.select_rho,
                })
            };
            serde_json::json!({
                "kind": "schedule",
                "count_std": s.round.measurement.sigma(),
                "rho": s.rho,
                "attributes": s.attributes,
                "one_way": measurement(&s.one_way),
                "round": round(&s.round),
                "annealed_round": round(&s.annealed_round),
                "direct": s.direct.as_ref().map(phase),
                "check": s.check.as_ref().map(phase),
                "low_budget": s.low_budget.as_ref().map(|l| serde_json::json!({
                    "nominal_rounds": l.nominal_rounds,
                    "one_way": measurement(&l.one_way),
                    "round": round(&l.round),
                    "annealed_round": round(&l.annealed_round),
                })),
                "nominal_rounds": s.nominal_rounds,
                "rounds_at_most": s.rounds_at_most,
                "rounds_after_full_opening": s.rounds_after_full_opening,
                "rounds_if_every_round_anneals": s.rounds_if_every_round_anneals,
                "table_cells": table.map(|t| t.cells),
                "table_l1_before_annealing": table.map(|t| t.before_annealing),
                "table_l1_after_annealing": table.map(|t| t.after_annealing),
            })
        }
        PredictedError::StatedBound { n, bound } => serde_json::json!({
            "kind": "stated-bound",
            "assume_n": n,
            "bound": bound.as_ref().map(|b| serde_json::json!({
                "statement": b.statement,
                "value": b.value,
                "confidence": b.confidence,
                "citation": b.citation,
            })),
        }),
        PredictedError::BoundNeedsN => serde_json::json!({ "kind": "stated-bound-needs-n" }),
        PredictedError::None => serde_json::json!({ "kind": "none" }),
    };
    serde_json::json!({
        "certificate": CertificateView::of(&r.certificate).to_json(),
        "auto_choice": r.auto_choice,
        "settings": r.settings,
        "workload": r.workload,
        "queries": r.queries,
        "touched_attributes": r.touched_attributes,
        "memory_bytes": r.memory.need_bytes,
        "memory_refused": r.memory.refused(),
        "universe_log10": r.universe.as_ref().map(|u| u.log10),
        "checks_pass": checks_pass,
        "checks_refusal": checks_refusal,
        "count_std": r.count_std(),
        "prediction": prediction,
        "synthetic": synthetic,
        "lines": r.lines(),
    })
}

/// The catalogue as `dpqr mechanisms --json` prints it: one object per mechanism
/// ([`MechanismSpec::to_json`]).
pub fn mechanisms_json() -> Result<String> {
    let list: Vec<serde_json::Value> = MECHANISMS.iter().map(MechanismSpec::to_json).collect();
    serde_json::to_string(&list).map_err(|source| {
        BenchError::Encode {
            what: "the list of mechanisms",
            source,
        }
        .into()
    })
}

/// **NON-PRIVATE.** What to score against the true data, as `dpqr eval` is told it.
#[derive(Clone, Debug, Default)]
pub struct EvalArguments {
    /// The true data (`--data`): CSV, gzip CSV or Parquet.
    pub data: PathBuf,
    /// Its schema (`--domain`).
    pub schema: PathBuf,
    /// The answers file of a release (`--answers`), plain or labelled.
    pub answers: Option<PathBuf>,
    /// Or a synthetic records file (`--synthetic`), weighted or plain rows.
    pub synthetic: Option<PathBuf>,
    /// The workload the synthetic records are scored on (`--workload`).
    pub workload: Option<String>,
    /// Its seed (`--workload-seed`).
    pub workload_seed: u64,
    /// Skip the data's columns the schema does not name (`--ignore-extra-columns`).
    pub ignore_extra_columns: bool,
}

/// **NON-PRIVATE.** Released answers, or a synthetic records file's answers to a marginal
/// workload, scored against the true data beside the uniform and all-zeros baselines:
/// [`MarginalEvaluation`], the scoring `dpqr eval` does, as the JSON `dpqr eval --json`
/// prints (no prediction). Returns it and the notes `dpqr eval` prints on stderr (how a
/// synthetic file was read). The figures disclose the data: never publish them.
pub fn evaluate_nonprivate(args: &EvalArguments) -> Result<(serde_json::Value, Vec<String>)> {
    let source = DataSpec {
        data: Some(args.data.clone()),
        domain: Some(args.schema.clone()),
        read: dp_queries::ReadOptions::default().ignoring_extra_columns(args.ignore_extra_columns),
        ..DataSpec::default()
    };
    let data = source.load(false)?;
    let domain = data.domain();
    let mut notes = Vec::new();
    let (workload, answers, what) = match (&args.answers, &args.synthetic, &args.workload) {
        (Some(path), None, None) => {
            let (workload, answers) = read_answers(path, domain)?;
            (workload, answers, "released")
        }
        (None, Some(path), Some(spec)) => {
            let workload = MarginalWorkload::parse_spec(domain, spec, args.workload_seed)?;
            let schema = source.public_schema()?;
            let (synthetic, note) = read_for_scoring(path, &schema, None, false)?;
            notes.extend(note);
            let answers = weighted_answers(&workload, &synthetic.records, &synthetic.weights)?;
            (workload, answers, "synthetic")
        }
        _ => {
            return Err(BindingError::Argument(
                "give the released answers, or synthetic records with a workload of marginal \
                 tables"
                    .into(),
            ));
        }
    };
    let truth = workload.answers(&data)?;
    let evaluation = MarginalEvaluation::new(&workload, &answers, &truth, what)?;
    Ok((evaluation.to_json(), notes))
}

/// **NON-PRIVATE.** A schema drafted from the CSV text `csv` (with a header row) by
/// [`dp_queries::draft_schema`], as `dpqr schema draft --max-labels M --bins B` drafts
/// it: the draft discloses the data (its labels, minima and maxima) and must be reviewed
/// and coarsened before any release uses it. `file` names the data in errors.
pub fn draft_schema_nonprivate(
    csv: &[u8],
    file: &str,
    max_labels: usize,
    bins: usize,
) -> Result<String> {
    if max_labels == 0 || bins == 0 {
        return Err(BenchError::Usage("--max-labels and --bins must be at least 1".into()).into());
    }
    let settings = dp_queries::DraftSettings {
        max_labels,
        bins,
        delimiter: b',',
    };
    Ok(dp_queries::draft_schema(csv, file, settings)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arguments::SettingArg;
    use dp_core::Neighbouring;
    use dp_mechanisms::PrivacyModel;
    use std::path::{Path, PathBuf};

    /// A fresh directory under the system's temporary directory, removed on drop.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new(tag: &str) -> TempDir {
            let dir = std::env::temp_dir().join(format!(
                "dpqr-python-{tag}-{}-{:?}",
                std::process::id(),
                std::thread::current().id()
            ));
            std::fs::create_dir_all(&dir).unwrap();
            TempDir(dir)
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            std::fs::remove_dir_all(&self.0).ok();
        }
    }

    /// [`arguments`] for adaptive-projection at ε = 1, δ = 1e-7 and 10 rounds (a release that
    /// makes synthetic records and reports rounds).
    fn adaptive_arguments(dir: &Path) -> Arguments {
        Arguments {
            mechanism: "adaptive-projection".into(),
            epsilon: Some(1.0),
            delta: Some(1e-7),
            rho: None,
            settings: vec![("rounds".into(), SettingArg::Whole(10))],
            ..arguments(dir)
        }
    }

    /// A small table of labels and bins, its schema, and release arguments over it.
    fn arguments(dir: &Path) -> Arguments {
        let data = dir.join("data.csv");
        let mut csv = String::from("colour,size\n");
        for i in 0..300 {
            let colour = ["red", "green", "blue"][i % 3];
            csv.push_str(&format!("{colour},{}\n", (i * 7) % 10));
        }
        std::fs::write(&data, csv).unwrap();
        let schema = dir.join("schema.json");
        std::fs::write(
            &schema,
            r#"{"colour": {"labels": ["red", "green", "blue"]}, "size": {"bins": [0, 5, 10]}}"#,
        )
        .unwrap();
        Arguments {
            data,
            schema,
            workload: "all-2way".into(),
            mechanism: "gaussian".into(),
            rho: Some(1.0),
            seed: Some(3),
            labelled: true,
            answers: dir.join("answers.csv"),
            report: dir.join("report.json"),
            synthetic_out: dir.join("synthetic.csv"),
            max_memory_mib: 64,
            ..Arguments::default()
        }
    }

    #[test]
    fn a_release_writes_labelled_answers_and_warns_of_its_seed() {
        let dir = TempDir::new("release");
        let args = arguments(&dir.0);
        let ran = release(&args).unwrap();
        assert!(ran.labelled);
        // gaussian makes no synthetic records: none asked, none written
        assert!(!ran.synthetic);
        assert!(!args.synthetic_out.exists());
        // gaussian under ρ, with its default relation, add/remove
        assert_eq!(
            ran.certificate,
            CertificateView {
                mechanism: "gaussian".into(),
                model: "central",
                neighbouring: Some("add-remove"),
                guarantee: "zcdp",
                epsilon: None,
                delta: None,
                rho: Some(1.0),
                approx_equivalent: None,
                statement: "gaussian: ρ = 1 (ρ-zCDP), add/remove neighbours".into(),
            }
        );
        assert!(
            ran.warnings
                .iter()
                .any(|w| w.contains("--seed fixes the noise")),
            "{:?}",
            ran.warnings
        );
        let answers = std::fs::read_to_string(&args.answers).unwrap();
        let mut lines = answers.lines();
        assert_eq!(lines.next(), Some("marginal,cell,answer,label,count"));
        // one table of 3 × 2 cells
        assert_eq!(lines.count(), 6);
        assert!(answers.contains("colour=red|size=[0,5)"), "{answers}");
        assert!(args.report.exists());
    }

    #[test]
    fn synthetic_records_when_the_mechanism_makes_them_unless_refused() {
        let dir = TempDir::new("synthetic");
        let args = adaptive_arguments(&dir.0);
        let ran = release(&args).unwrap();
        assert!(ran.synthetic);
        let synthetic = std::fs::read_to_string(&args.synthetic_out).unwrap();
        assert!(synthetic.starts_with("colour,size,weight\n"), "{synthetic}");
        std::fs::remove_file(&args.synthetic_out).unwrap();
        let never = Arguments {
            synthetic: SyntheticChoice::Never,
            ..args.clone()
        };
        assert!(!release(&never).unwrap().synthetic);
        assert!(!args.synthetic_out.exists());
        // asked of a mechanism that makes none: the pipeline's refusal
        let always = Arguments {
            synthetic: SyntheticChoice::Always,
            mechanism: "gaussian".into(),
            settings: Vec::new(),
            ..args
        };
        let err = release(&always).unwrap_err().to_string();
        assert!(
            err.contains("releases answers only, no synthetic data"),
            "{err}"
        );
    }

    #[test]
    fn errors_are_the_pipelines_in_its_order() {
        let dir = TempDir::new("errors");
        let args = arguments(&dir.0);
        let unknown = Arguments {
            mechanism: "gausian".into(),
            epsilon: Some(-1.0),
            ..args.clone()
        };
        // the mechanism is looked up before the budget is checked
        assert_eq!(
            release(&unknown).unwrap_err().to_string(),
            catalogue::unknown_mechanism("gausian").to_string()
        );
        let bad_epsilon = Arguments {
            epsilon: Some(0.0),
            delta: Some(1e-9),
            rho: None,
            ..args.clone()
        };
        let e = release(&bad_epsilon).unwrap_err();
        assert_eq!(e.exit_status(), 2);
        assert!(
            e.to_string().starts_with("--epsilon 0 is out of range"),
            "{e}"
        );
        let column = Arguments {
            workload: dir.0.join("w.json").display().to_string(),
            ..args
        };
        std::fs::write(dir.0.join("w.json"), r#"[["colour", "shape"]]"#).unwrap();
        let e = release(&column).unwrap_err().to_string();
        assert!(e.contains("shape"), "{e}");
        assert!(!column.answers.exists());
    }

    #[test]
    fn a_plan_reads_no_value_writes_nothing_and_its_fields_agree_with_its_lines() {
        let dir = TempDir::new("plan");
        let args = Arguments {
            assume_n: Some(300),
            ..arguments(&dir.0)
        };
        // a value the schema refuses: a dry run never reads it
        std::fs::write(&args.data, "colour,size\npurple,99\n").unwrap();
        let planned = plan(&args).unwrap();
        let p = &planned.plan;
        assert!(!args.answers.exists() && !args.report.exists());
        let sd = p["count_std"].as_f64().unwrap();
        assert_eq!(p["prediction"]["kind"], "count-noise");
        assert_eq!(p["prediction"]["answer_std"].as_f64(), Some(sd / 300.0));
        let lines: Vec<&str> = p["lines"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap())
            .collect();
        assert!(
            lines
                .iter()
                .any(|l| l.contains(&format!("standard deviation {sd:.4} (exact)"))),
            "{lines:?}"
        );
        assert_eq!(p["certificate"]["statement"], lines[2]["privacy: ".len()..]);
        assert_eq!(p["synthetic"], false);
        assert!(
            planned
                .warnings
                .iter()
                .all(|w| !w.contains("--seed fixes the noise")),
            "a dry run draws no noise: {:?}",
            planned.warnings
        );
        // the release of the same arguments reads the value and refuses it
        assert!(release(&args).is_err());
        let zero = Arguments {
            assume_n: Some(0),
            ..args
        };
        assert_eq!(
            plan(&zero).unwrap_err().to_string(),
            "assume_n=0: give a whole number of at least 1"
        );
    }

    #[test]
    fn an_evaluation_scores_answers_and_synthetic_records_beside_the_baselines() {
        let dir = TempDir::new("evaluate");
        let args = adaptive_arguments(&dir.0);
        release(&args).unwrap();
        let scored = |answers, synthetic, workload: Option<&str>| {
            evaluate_nonprivate(&EvalArguments {
                data: args.data.clone(),
                schema: args.schema.clone(),
                answers,
                synthetic,
                workload: workload.map(str::to_string),
                ..EvalArguments::default()
            })
        };
        let (e, notes) = scored(Some(args.answers.clone()), None, None).unwrap();
        assert!(notes.is_empty());
        assert_eq!(
            (e["scored"].as_str(), e["marginals"].as_u64()),
            (Some("released"), Some(1))
        );
        // every true table sums to 1: the all-zeros baseline is 1 from each in ℓ1
        let zeros = &e["baselines"]["all_zeros"]["per_marginal"][0];
        assert!((zeros["l1"].as_f64().unwrap() - 1.0).abs() < 1e-12, "{e}");
        assert_eq!(
            e["per_marginal"][0]["attributes"],
            serde_json::json!(["colour", "size"])
        );
        let (e, _) = scored(None, Some(args.synthetic_out.clone()), Some("all-2way")).unwrap();
        assert_eq!(e["scored"], "synthetic");
        assert!(e["mean_marginal_l1"].as_f64().unwrap() <= 2.0, "{e}");
        // synthetic records without a workload: refused
        let err = scored(None, Some(args.synthetic_out.clone()), None).unwrap_err();
        assert!(err.to_string().contains("a workload of marginal"), "{err}");
    }

    #[test]
    fn steps_are_relayed_once_per_percentage_and_a_release_sends_its_stages() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        let callback: ProgressCallback = Arc::new(move |e| sink.lock().unwrap().push(e));
        let relay = StepRelay {
            callback: Arc::clone(&callback),
            last: Mutex::new(None),
        };
        for done in 0..=1000 {
            relay.report("a", done, 1000);
        }
        relay.report("b", 5, 10);
        relay.report("b", 5, 10);
        let steps: Vec<(String, u64)> = seen
            .lock()
            .unwrap()
            .drain(..)
            .map(|e| match e {
                ProgressEvent::Step { stage, done, .. } => (stage, done),
                other => panic!("{other:?}"),
            })
            .collect();
        // 0 %, 1 %, …, 100 % of a, then b's one report
        assert_eq!(steps.len(), 102);
        assert_eq!(steps[100], ("a".to_string(), 1000));
        assert_eq!(steps[101], ("b".to_string(), 5));
        let dir = TempDir::new("progress");
        let args = adaptive_arguments(&dir.0);
        release_with_progress(&args, Some(callback)).unwrap();
        let events = seen.lock().unwrap();
        assert_eq!(events[0], ProgressEvent::Stage("loading data".into()));
        assert!(
            matches!(events[1], ProgressEvent::Counting(_)),
            "{events:?}"
        );
        assert!(
            events.iter().any(|e| matches!(
                e,
                ProgressEvent::Step {
                    done: 1000,
                    total: 1000,
                    ..
                }
            )),
            "{events:?}"
        );
        assert!(events.iter().any(|e| matches!(e, ProgressEvent::Round(_))));
        assert_eq!(
            events.last(),
            Some(&ProgressEvent::Stage("writing outputs".into()))
        );
    }

    #[test]
    fn a_stopped_release_writes_nothing_and_its_account_keeps_the_charge() {
        use dp_bench::io::ledger_file;
        let dir = TempDir::new("stop");
        let ledger = dir.0.join("ledger.json");
        ledger_file::init(
            &ledger,
            PrivacyLoss::zcdp(10.0).unwrap(),
            Neighbouring::AddRemove,
            &["t".to_string()],
        )
        .unwrap();
        let args = Arguments {
            ledger: Some(ledger.clone()),
            ledger_dataset: Some("t".into()),
            ..adaptive_arguments(&dir.0)
        };
        // asked before the release: it stops before reading the data, nothing charged
        let early = StopRequest::new();
        early.request();
        let (ran, account) = release_stoppable(&args, None, Some(early));
        let err = ran.unwrap_err();
        assert!(
            matches!(
                err,
                BindingError::Bench(BenchError::Core(dp_core::CoreError::Stopped))
            ),
            "{err:?}"
        );
        assert!(!account.charged());
        assert_eq!(account.charge, None);
        let before = std::fs::read_to_string(&ledger).unwrap();
        assert!(!before.contains("adaptive-projection"), "{before}");
        assert!(
            account.interrupted_message(false).ends_with(&format!(
                "NOT charged: nothing was recorded in ledger {}",
                ledger.display()
            )),
            "{}",
            account.interrupted_message(false)
        );
        // asked during the rounds (from the progress callback, at the first round's line):
        // the spend was recorded before any noise and stays recorded
        let stop = StopRequest::new();
        let caller = stop.clone();
        let progress: ProgressCallback = Arc::new(move |e| {
            if matches!(e, ProgressEvent::Round(_)) {
                caller.request();
            }
        });
        let (ran, account) = release_stoppable(&args, Some(progress), Some(stop));
        assert!(ran.is_err());
        assert!(account.charged(), "{account:?}");
        let charge = account.charge.clone().unwrap();
        assert_eq!(charge.dataset, "dataset 't'");
        let after = std::fs::read_to_string(&ledger).unwrap();
        assert!(after.contains("adaptive-projection"), "{after}");
        let message = account.interrupted_message(false);
        assert!(message.contains("WAS CHARGED"), "{message}");
        assert!(message.contains("never refunded"), "{message}");
        assert!(message.contains(&charge.spend), "{message}");
        assert!(!args.answers.exists() && !args.synthetic_out.exists());
        // no request: the same release finishes and charges again
        let (ran, account) = release_stoppable(&args, None, Some(StopRequest::new()));
        assert!(ran.unwrap().ledger_record.is_some());
        assert!(account.charged());
        assert!(args.answers.exists());
    }

    #[test]
    fn certificate_views_in_the_command_lines_words() {
        let c = PrivacyCertificate {
            mechanism: "m".into(),
            loss: PrivacyLoss::Zcdp { rho: 0.5 },
            model: PrivacyModel::Central {
                neighbouring: Neighbouring::AddRemove,
            },
            approx_equivalent: Some(PrivacyLoss::Approx {
                epsilon: 3.0,
                delta: 1e-6,
            }),
        };
        let v = CertificateView::of(&c);
        assert_eq!(v.neighbouring, Some("add-remove"));
        assert_eq!((v.guarantee, v.rho, v.epsilon), ("zcdp", Some(0.5), None));
        assert_eq!(v.approx_equivalent, Some((3.0, 1e-6)));
        assert_eq!(v.statement, c.statement());
        let local = CertificateView::of(&PrivacyCertificate::local("l", 2.0));
        assert_eq!(local.model, "local");
        assert_eq!(local.neighbouring, None);
        assert_eq!((local.guarantee, local.epsilon), ("pure", Some(2.0)));
        let approx = CertificateView::of(&PrivacyCertificate {
            loss: PrivacyLoss::Approx {
                epsilon: 1.0,
                delta: 1e-9,
            },
            approx_equivalent: None,
            ..c
        });
        assert_eq!(
            (approx.guarantee, approx.epsilon, approx.delta),
            ("approx", Some(1.0), Some(1e-9))
        );
    }

    #[test]
    fn the_catalogue_lists_every_mechanism() {
        let list: Vec<serde_json::Value> =
            serde_json::from_str(&mechanisms_json().unwrap()).unwrap();
        assert_eq!(list.len(), MECHANISMS.len());
        assert!(
            list.iter()
                .any(|m| m["name"] == "adaptive-projection" && m["synthetic_data"] == true)
        );
    }

    #[test]
    fn the_draft_reads_the_csv_text() {
        let draft = draft_schema_nonprivate(b"a,b\nx,1\ny,\n", "the frame", 20, 10).unwrap();
        let v: serde_json::Value = serde_json::from_str(&draft).unwrap();
        assert!(v["a"]["labels"].is_array(), "{draft}");
        assert!(draft_schema_nonprivate(b"a\n1\n", "f", 0, 10).is_err());
    }
}
