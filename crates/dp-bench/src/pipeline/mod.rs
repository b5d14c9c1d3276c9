//! The release pipeline: one private release from a [`ReleaseRequest`] — the arguments of
//! `dpqr release` as plain data — in stages that each run once, in this order:
//!
//! 1. **validate** ([`validate`]): every argument, from public inputs only — the catalogue
//!    entry looked up once, its privacy model choosing a central [`Plan`] or a
//!    [`LocalPlan`] ([`Validated`]), the budget's kind checked once against it, the
//!    relation, the settings and the post-processing checked, the workload parsed from the
//!    public domain and class-checked, the mechanism built once, what it reads asked once
//!    ([`dp_mechanisms::DataAccess`]: the workload's counts, its counting plan's tables, or
//!    the records; issue #25), the counting source chosen (records in memory, a streaming
//!    pass over a CSV or Parquet file, or an engine, which count the plan's tables instead
//!    of the workload for a mechanism with a plan), the output paths checked writable and
//!    distinct from the inputs;
//! 2. **ledger check** ([`Plan::open_ledger`]): with a ledger, it is locked and the spend
//!    checked against the dataset's remaining budget (the lock is held until the spend is
//!    recorded); a dry run stops here ([`Outcome::DryRun`]; its plan, typed and as the
//!    lines `dpqr` prints, is a [`DryRunReport`]);
//! 3. **count** ([`Plan::count`]): the private input read from the chosen source, then the
//!    checks that need the public n (δ against 1/n, the mechanism's
//!    [`dp_mechanisms::Mechanism::check_inputs`]) — all before anything is charged;
//! 4. **charge and run** ([`Plan::run`]): the spend recorded in the ledger, then the
//!    mechanism draws its noise (a failure from here on is charged:
//!    [`BenchError::ReleaseFailedAfterCharge`]);
//! 5. **write** ([`Plan::write`]): the answers, the report and the synthetic records, each
//!    to a temporary file first, renamed into place only when all are complete. Over a
//!    schema with labels or bins the answers are labelled, with counts beside the
//!    proportions ([`crate::io::answers`], "Labelled answers"; issue #26), and the report
//!    holds the schema and the total the counts were scaled by; the synthetic records hold
//!    values in the input's form, a bin's value drawn within it from the release's own
//!    generator ([`crate::io::synthetic::BinValues`]), as weighted records or — with
//!    `--rows N` — `N` plain rows.
//!
//! [`release`] runs them all. The local-model mechanisms take the same stages without the
//! ledger ([`LocalPlan`]). What the caller shows on the way (progress, warnings, the
//! ledger's record) and how outputs are created and committed (so that an interrupted
//! release can say what it wrote) go through [`ReleaseEvents`]; the `dpqr` program
//! implements it with its spinner and its signal handling, and prints the [`Outcome`].
//!
//! Under add/remove neighbours n is private: nothing the pipeline returns, writes or
//! reports through [`ReleaseEvents`] is the true n or derived from it.
//!
//! **Stopping.** A caller that may want to stop a release early (the Python package, on
//! Ctrl-C) gives a [`dp_core::StopRequest`] through [`ReleaseEvents::stop`]. It is looked at
//! between the stages — before the data is read, before the spend is charged, before the
//! mechanism runs, before the outputs are written — and between adaptive-projection's
//! rounds; once requested, the release ends with [`dp_core::CoreError::Stopped`] at the next
//! of those points and writes nothing. A spend already recorded in a ledger stays recorded
//! (no refund: the mechanism may have drawn noise with it). Other mechanisms finish their
//! run before the stop is seen.

mod dry_run;
mod engine;
mod local;
mod source;

pub use dry_run::{
    DryRunChecks, DryRunReport, MemoryEstimate, PerAnswer, PredictedError, ScheduledTableError,
    UniverseSize,
};
pub use engine::{Engine, EngineChoice};
pub use local::{LocalPlan, LocalReleased};
pub use source::{DataSpec, PrivateInput, refuse_weighted};

use crate::auto::{self, AutoChoice};
use crate::catalogue::{self, BuildOptions, CentralEntry, MechanismSpec, Model};
use crate::io::answers::{
    AnswersForm, CountScale, Labelling, write_answers, write_labelled_answers, write_query_answers,
};
use crate::io::ledger_file::{self, LockedLedger};
use crate::io::output::{self, AtomicFile};
use crate::io::synthetic::{
    BinValues, MAX_EXPANDED_ROWS, expand_counts, write_expanded, write_synthetic,
};
use crate::registry::{BudgetArgs, check_budget_is_meaningful, delta_too_large};
use crate::settings::Settings;
use crate::{BenchError, Result, io_error, quoted};
use dp_core::{Neighbouring, PrivacyLoss, ProgressSink, StopRequest, os_seeded_rng, seeded_rng};
use dp_mechanisms::{DataAccess, Mechanism, PostProcessing, Release};
use dp_queries::{AnyWorkload, Encoding, MarginalWorkload, Schema, Workload};
use rand::CryptoRng;
use rand_chacha::ChaCha20Rng;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// Bytes per counting query of a release: exact count (u64), noisy count (i64), answer
/// (f64), and one more answer-sized buffer for post-processing and output.
pub const BYTES_PER_QUERY: u64 = 32;

/// The files a release writes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReleaseOutputs {
    /// The answers CSV (`--out`).
    pub answers: PathBuf,
    /// The certificate and diagnostics as JSON (`--report`).
    pub report: Option<PathBuf>,
    /// The synthetic records CSV (`--synthetic-out`).
    pub synthetic: Option<PathBuf>,
    /// `--rows N`: write the synthetic data as `N` plain rows (largest-remainder expansion
    /// of the weights, `crate::io::synthetic::expand_counts`) instead of weighted records.
    pub synthetic_rows: Option<u64>,
    /// `--answers-form`: plain or labelled answers.
    pub answers_form: AnswersForm,
}

impl ReleaseOutputs {
    /// The outputs with their flags, in the order they are written.
    pub fn list(&self) -> Vec<(&'static str, &Path)> {
        let mut v = vec![("--out", self.answers.as_path())];
        if let Some(p) = &self.report {
            v.push(("--report", p.as_path()));
        }
        if let Some(p) = &self.synthetic {
            v.push(("--synthetic-out", p.as_path()));
        }
        v
    }
}

/// The budget ledger a release is charged to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LedgerTarget {
    /// The ledger file (`--ledger`).
    pub path: PathBuf,
    /// The ledger's dataset (`--ledger-dataset`); the ledger's only dataset when `None`.
    pub dataset: Option<String>,
    /// The key the ledger knows the data by, when its file is no stable key (a DataFrame
    /// copied to a new temporary file at every call from Python: `dataframe:NAME`);
    /// [`DataSpec::ledger_key`] when `None`.
    pub data_key: Option<String>,
}

/// How the workload is counted: natively (records in memory, or streamed) or on an engine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Counting {
    /// `--stream`: count in one streaming pass even where the records would be loaded (a
    /// bundled table). A `--data` file is streamed without it whenever the mechanism needs
    /// only the counts and no `--attributes` are given.
    pub stream: bool,
    /// Records per batch of a streaming pass.
    pub batch_rows: u64,
    /// The engine.
    pub engine: EngineChoice,
}

impl Default for Counting {
    fn default() -> Self {
        Counting {
            stream: false,
            batch_rows: 65_536,
            engine: EngineChoice::default(),
        }
    }
}

/// Everything a release is asked, as plain data: the arguments of `dpqr release`.
#[derive(Clone, Debug)]
pub struct ReleaseRequest {
    /// The data (and its public domain or schema).
    pub data: DataSpec,
    /// The workload: `all-Kway`, `random-Kway:M` or a JSON file.
    pub workload: String,
    /// The seed of a random workload (public; independent of [`Self::seed`]).
    pub workload_seed: u64,
    /// The catalogue name of the mechanism.
    pub mechanism: String,
    /// The mechanism's settings (`--rounds`, `--eta`, …).
    pub settings: Settings,
    /// The budget flags.
    pub budget: BudgetArgs,
    /// Accept a δ above 1/n (replace-one) or above 1e-6 (add/remove), with a warning.
    pub allow_large_delta: bool,
    /// The neighbouring relation; the entry's default when `None`.
    pub neighbouring: Option<Neighbouring>,
    /// Post-processing of the answers.
    pub post: PostProcessing,
    /// TESTING ONLY: the seed of the mechanism's randomness (the OS seeds it when `None`).
    pub seed: Option<u64>,
    /// The outputs.
    pub outputs: ReleaseOutputs,
    /// The ledger charged, if any.
    pub ledger: Option<LedgerTarget>,
    /// Refuse workloads whose release would need more memory than this (MiB).
    pub max_memory_mib: u64,
    /// Plan only: stop after the ledger check ([`Outcome::DryRun`]).
    pub dry_run: bool,
    /// With a dry run: the number of records to predict for.
    pub assume_n: Option<u64>,
    /// How the workload is counted.
    pub counting: Counting,
}

impl ReleaseRequest {
    /// The files the release reads (or, for the ledger and its lock, updates) with their
    /// flags: no output may name one of them.
    pub fn inputs(&self) -> Vec<(&'static str, PathBuf)> {
        let mut v = self.data.input_files();
        let spec = &self.workload;
        if !spec.starts_with("all-") && !spec.starts_with("random-") {
            v.push(("--workload", PathBuf::from(spec)));
        }
        if let Some(l) = &self.ledger {
            v.push(("--ledger", l.path.clone()));
            let mut lock = l.path.clone().into_os_string();
            lock.push(".lock");
            v.push(("--ledger (its lock file)", PathBuf::from(lock)));
        }
        v
    }

    /// The memory cap in bytes.
    fn memory_cap(&self) -> u64 {
        self.max_memory_mib.saturating_mul(1 << 20)
    }
}

/// Held while the spend is recorded ([`ReleaseEvents::charging`]).
pub trait ChargeGuard {
    /// The spend is on disk.
    fn recorded(self: Box<Self>);
}

/// A guard that notes nothing.
struct NoGuard;

impl ChargeGuard for NoGuard {
    fn recorded(self: Box<Self>) {}
}

/// A one-line summary of a round, for [`BuildOptions::round_progress`].
pub type RoundProgress = Arc<dyn Fn(String) + Send + Sync>;

/// What a caller sees of a release on the way, and how its outputs are created and put in
/// place. Every method has a default that shows nothing and writes plainly.
pub trait ReleaseEvents {
    /// A stage begins (e.g. "loading data", "writing outputs").
    fn stage(&self, _message: &str) {}
    /// Counting begins: a stage without a percentage (its share done would reveal n).
    fn counting(&self, _message: &str) {}
    /// A warning (a large δ accepted, a fixed seed).
    fn warning(&self, _message: &str) {}
    /// Where the mechanism's long stages report progress.
    fn progress(&self) -> Option<ProgressSink> {
        None
    }
    /// Where adaptive-projection reports each round.
    fn round_progress(&self) -> Option<RoundProgress> {
        None
    }
    /// The spend of dataset `key` (`loss` in words) is about to be recorded: the returned
    /// guard is held while it is, and told once it is on disk.
    fn charging(&self, _key: &str, _loss: String) -> Box<dyn ChargeGuard> {
        Box::new(NoGuard)
    }
    /// The spend is recorded in the ledger.
    fn recorded(&self, _record: &LedgerRecord) {}
    /// Start writing the output `path`.
    fn create_output(&self, path: &Path) -> Result<AtomicFile> {
        AtomicFile::create(path)
    }
    /// Rename every written output into place: the release is complete.
    fn commit_outputs(&self, files: Vec<AtomicFile>) -> Result<()> {
        files.into_iter().try_for_each(AtomicFile::commit)
    }
    /// A request the caller may make to stop the release early (module docs,
    /// "Stopping"); `None`, the default: the release always runs to its end.
    fn stop(&self) -> Option<StopRequest> {
        None
    }
}

/// [`dp_core::CoreError::Stopped`] if the caller of `events` asked the release to stop.
fn check_stop(events: &dyn ReleaseEvents) -> Result<()> {
    Ok(dp_core::check_stop(events.stop().as_ref())?)
}

/// The default [`ReleaseEvents`]: shows nothing.
pub struct Silent;

impl ReleaseEvents for Silent {}

/// A spend recorded in a ledger.
#[derive(Clone, Debug, PartialEq)]
pub struct LedgerRecord {
    /// The ledger file.
    pub ledger: PathBuf,
    /// The dataset's name in the ledger, quoted.
    pub dataset: String,
    /// The spend as the mechanism states it.
    pub spend: PrivacyLoss,
    /// The relation it is stated for.
    pub relation: Neighbouring,
    /// The spend converted to the ledger's relation, when that differs.
    pub charged: Option<(PrivacyLoss, Neighbouring)>,
}

impl std::fmt::Display for LedgerRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ledger {}: recorded {} under {} neighbours",
            self.ledger.display(),
            self.spend,
            self.relation
        )?;
        if let Some((c, r)) = &self.charged {
            write!(f, ", charged {c} under {r} neighbours")?;
        }
        write!(f, " for dataset {}", self.dataset)
    }
}

/// Where the private input is counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceKind {
    /// The records, loaded in memory.
    Records,
    /// One streaming pass over a CSV (or gzip CSV) or Parquet file, or a bundled table.
    Stream,
    /// A query engine.
    Engine,
}

/// A release whose every argument has been checked: the first stage of the pipeline.
pub struct Plan<'r> {
    request: &'r ReleaseRequest,
    spec: &'static MechanismSpec,
    post: PostProcessing,
    auto: Option<AutoChoice>,
    relation: Neighbouring,
    workload: AnyWorkload,
    mechanism: Box<dyn Mechanism<AnyWorkload>>,
    schema: Schema,
    labelled: bool,
    source: SourceKind,
    /// What the mechanism reads of the data for the workload (its counting plan, if any).
    access: DataAccess,
    attribute_names: Arc<OnceLock<Vec<String>>>,
}

/// The ledger, locked, with the spend checked against it ([`Plan::open_ledger`]).
pub struct OpenLedger {
    path: PathBuf,
    ledger: LockedLedger,
    dataset: String,
    data_key: String,
}

impl OpenLedger {
    /// The ledger's name of the dataset charged.
    pub fn dataset(&self) -> &str {
        &self.dataset
    }
}

/// What a release did.
pub enum Outcome<'r> {
    /// A dry run: every check passed, nothing was read, drawn, recorded or written.
    DryRun {
        /// The checked release.
        plan: Box<Plan<'r>>,
        /// The ledger's dataset the spend fits, with a ledger.
        ledger_dataset: Option<String>,
    },
    /// A release: charged (with a ledger), run and written.
    Released(Box<Released<'r>>),
    /// A dry run of a local-model mechanism: nothing read or written.
    LocalDryRun(Box<LocalPlan<'r>>),
    /// A release of a local-model mechanism: run and written (never charged to a ledger).
    LocalReleased {
        /// The checked release.
        plan: Box<LocalPlan<'r>>,
        /// What it released.
        released: Box<LocalReleased>,
    },
}

/// A completed release.
pub struct Released<'r> {
    /// The checked release it ran.
    pub plan: Plan<'r>,
    /// What the mechanism returned.
    pub release: Release,
    /// What is said of n: its value under replace-one, that it is private under add/remove.
    pub n_note: String,
    /// What the counts of labelled answers were scaled by (`None`: plain answers).
    pub count_scale: Option<CountScale>,
}

/// A release whose every argument has been checked ([`validate`]), in the privacy model of
/// its catalogue entry.
pub enum Validated<'r> {
    /// A central-model mechanism: the stages of [`Plan`].
    Central(Box<Plan<'r>>),
    /// A local-model mechanism: one simulated client per record, no ledger.
    Local(Box<LocalPlan<'r>>),
}

impl Validated<'_> {
    /// Whether the release makes synthetic records: the central mechanism built says so; a
    /// local-model release makes none.
    pub fn produces_synthetic(&self) -> bool {
        match self {
            Validated::Central(plan) => plan.mechanism().produces_synthetic(),
            Validated::Local(_) => false,
        }
    }
}

/// Stage 1: check every argument of `request` from public inputs — the catalogue entry looked
/// up once, its privacy model choosing the checks ([`Plan`] for a central entry, with the
/// mechanism built and the source chosen; [`LocalPlan`] for a local one). Reads no data and
/// no ledger.
pub fn validate<'r>(
    request: &'r ReleaseRequest,
    events: &dyn ReleaseEvents,
) -> Result<Validated<'r>> {
    let (spec, auto) = choose_entry(request)?;
    Ok(match &spec.model {
        Model::Central(central) => Validated::Central(Box::new(Plan::validate_entry(
            request, spec, central, auto, events,
        )?)),
        Model::Local(kind) => {
            Validated::Local(Box::new(LocalPlan::validate(request, spec, *kind)?))
        }
    })
}

/// Run every stage of the release `request` (see the module documentation).
pub fn release<'r>(request: &'r ReleaseRequest, events: &dyn ReleaseEvents) -> Result<Outcome<'r>> {
    let plan = match validate(request, events)? {
        Validated::Central(plan) => *plan,
        Validated::Local(plan) => {
            if request.dry_run {
                return Ok(Outcome::LocalDryRun(plan));
            }
            check_stop(events)?;
            let released = plan.run(events)?;
            return Ok(Outcome::LocalReleased {
                plan,
                released: Box::new(released),
            });
        }
    };
    let mut ledger = plan.open_ledger(events)?;
    if request.dry_run {
        let ledger_dataset = ledger.map(|l| l.dataset);
        return Ok(Outcome::DryRun {
            plan: Box::new(plan),
            ledger_dataset,
        });
    }
    check_stop(events)?;
    let input = plan.count(events)?;
    let n = input.n();
    // the release's one generator: its noise, then the values drawn within bins of its
    // synthetic records (post-processing)
    let mut rng = plan.rng(events)?;
    let mut release = plan.run(ledger.as_mut(), input, &mut rng, events)?;
    drop(ledger); // release the lock
    check_stop(events)?;
    if let Some(choice) = &plan.auto {
        release.diagnostics.notes.insert(0, choice.sentence());
    }
    let warning = plan
        .noise_swamps_tables(&release)
        .or_else(|| plan.answers_far_from_tables(&release));
    if let Some(warning) = warning {
        events.warning(&warning);
        release.diagnostics.notes.push(warning);
    }
    plan.write(&release, n, &mut rng, events)?;
    let n_note = plan.n_note(n);
    let count_scale = plan
        .labelled
        .then(|| plan.count_scale(&release, plan.public_n(n)));
    Ok(Outcome::Released(Box::new(Released {
        plan,
        release,
        n_note,
        count_scale,
    })))
}

/// The catalogue entry `request` asks for — by name, or, for `--mechanism auto`, the one
/// [`auto::choose`] picks from the workload's class and the budget's kind (public) — with
/// the automatic choice when there was one. The one lookup of a release.
fn choose_entry(request: &ReleaseRequest) -> Result<(&'static MechanismSpec, Option<AutoChoice>)> {
    if request.mechanism != auto::AUTO {
        return Ok((catalogue::spec(&request.mechanism)?, None));
    }
    let workload = AnyWorkload::parse_spec(
        &request.data.public_domain()?,
        &request.workload,
        request.workload_seed,
    )?;
    let choice = auto::choose(workload.class(), &request.budget, request.post)?;
    Ok((catalogue::spec(choice.mechanism)?, Some(choice)))
}

/// The δ of the request checked against [`delta_too_large`]: under replace-one neighbours
/// with the public `n` (`public_n`, after the data is read), under add/remove with the
/// fixed bound (`public_n = None`, before it is read). Refused unless `allow_large_delta`,
/// which turns the refusal into a warning.
fn check_delta(
    request: &ReleaseRequest,
    public_n: Option<usize>,
    events: &dyn ReleaseEvents,
) -> Result<()> {
    let Some(delta) = request.budget.delta else {
        return Ok(());
    };
    match delta_too_large(delta, public_n) {
        None => Ok(()),
        Some(why) if request.allow_large_delta => {
            events.warning(&format!(
                "WARNING: {why}; accepted because of --allow-large-delta"
            ));
            Ok(())
        }
        Some(why) => Err(BenchError::Usage(format!(
            "{why}. Refusing: choose a smaller --delta (1e-9 is common) or pass \
             --allow-large-delta if you mean it"
        ))),
    }
}

/// A refusal of a source that counts for the mechanism `name`, which needs the records.
fn needs_records(what: &str, alternative: &str, name: &str) -> BenchError {
    BenchError::Usage(format!(
        "{what} releases from exact counts (of the workload or of a mechanism's counting \
         plan), and {name} needs the records: {alternative}, or choose a mechanism that \
         releases from counts ({})",
        catalogue::counts_only_names().join(", ")
    ))
}

/// `Ok` if `counting` suits a release that reads what `from_counts` says — exact counts
/// (`true`) or the records (`false`, where `--stream` and an engine are refused, naming the
/// mechanism `name`).
fn check_counting(
    counting: &Counting,
    data: &DataSpec,
    from_counts: bool,
    name: &str,
) -> Result<()> {
    if counting.stream && !from_counts {
        return Err(needs_records("--stream", "drop --stream", name));
    }
    counting.engine.check(data)?;
    if counting.engine.is_engine() && !from_counts {
        return Err(needs_records("an engine", "use --engine native", name));
    }
    Ok(())
}

impl<'r> Plan<'r> {
    /// [`validate`] for the central entry `spec` (with what it adds, `central`), chosen by
    /// `--mechanism` or, with `auto`, by `--mechanism auto`: check every argument, build the
    /// mechanism and choose the source.
    fn validate_entry(
        request: &'r ReleaseRequest,
        spec: &'static MechanismSpec,
        central: &CentralEntry,
        auto: Option<AutoChoice>,
        events: &dyn ReleaseEvents,
    ) -> Result<Self> {
        let post = auto.as_ref().map_or(request.post, |a| a.post);
        let settings = &request.settings;
        spec.check_settings(settings)?;
        request.data.check_attributes()?;
        let budget = request.budget.loss_for(spec)?;
        let relation = request
            .neighbouring
            .unwrap_or_else(|| central.default_relation());
        spec.check_relation(relation)?;
        spec.check_post(post)?;
        check_budget_is_meaningful(&budget)?;
        if relation == Neighbouring::AddRemove {
            // n is private: the fixed public bound, before the data is read
            check_delta(request, None, events)?;
        }
        // the workload is public (the domain and the spec): parsed, class-checked and
        // sized before any data is read
        let workload = AnyWorkload::parse_spec(
            &request.data.public_domain()?,
            &request.workload,
            request.workload_seed,
        )?;
        spec.check_class(workload.class())?;
        let need = (workload.num_queries() as u64).saturating_mul(BYTES_PER_QUERY);
        if need > request.memory_cap() && !request.dry_run {
            return Err(BenchError::OverMemoryCap {
                what: format!(
                    "workload {} has {} counting queries",
                    quoted(&request.workload),
                    workload.num_queries()
                ),
                need_mib: need as f64 / (1u64 << 20) as f64,
                bytes_per: BYTES_PER_QUERY,
                unit: "query",
                cap_mib: request.max_memory_mib,
            });
        }
        let attribute_names = Arc::new(OnceLock::new());
        let options = BuildOptions {
            round_progress: events.round_progress(),
            memory_bytes: Some(request.memory_cap()),
            attribute_names: Arc::clone(&attribute_names),
            projection_settings: None,
            settings: *settings,
            progress: events.progress(),
            stop: events.stop(),
        };
        // a marginal mechanism that enumerates a universe runs over the attributes the
        // workload touches (dp_mechanisms::OnWorkloadAttributes; the guarantee is unchanged)
        let mechanism = spec.assemble_any(budget, relation, post, &options)?;
        if request.outputs.synthetic.is_some() && !mechanism.produces_synthetic() {
            return Err(BenchError::Usage(format!(
                "{} releases answers only, no synthetic data: drop --synthetic-out or choose \
                 a mechanism that makes synthetic records",
                mechanism.name()
            )));
        }
        // the answers are labelled and the synthetic records written through the schema,
        // read (public) before the data
        let schema = request.data.public_schema()?;
        let outputs = &request.outputs;
        let labelled = match &workload {
            AnyWorkload::Marginals(_) => outputs.answers_form.labelled(&schema),
            _ if outputs.answers_form == AnswersForm::Labelled => {
                return Err(BenchError::Usage(format!(
                    "--answers-form labelled names the cells of marginal tables; the workload \
                     is of class {}: drop --answers-form",
                    workload.class()
                )));
            }
            _ => false,
        };
        if let Some(rows) = outputs.synthetic_rows {
            if outputs.synthetic.is_none() {
                return Err(BenchError::Usage(
                    "--rows N writes the synthetic data as N plain rows: give --synthetic-out \
                     FILE too"
                        .into(),
                ));
            }
            if rows == 0 || rows > MAX_EXPANDED_ROWS {
                return Err(BenchError::Usage(format!(
                    "--rows must be from 1 to {MAX_EXPANDED_ROWS}, not {rows}"
                )));
            }
        }
        let counting = &request.counting;
        // what the mechanism reads, from public inputs: the workload's counts, its counting
        // plan's tables (issue #25; counted by every source as a marginal workload), or the
        // records
        let access = DataAccess::of(mechanism.as_ref(), &workload)?;
        if let DataAccess::Plan(plan) = &access {
            let cells = plan.tables().num_queries() as u64;
            let need = (workload.num_queries() as u64)
                .saturating_add(cells)
                .saturating_mul(BYTES_PER_QUERY);
            if need > request.memory_cap() && !request.dry_run {
                return Err(BenchError::OverMemoryCap {
                    what: format!(
                        "{} counts {cells} table cells for workload {} (its counting plan)",
                        mechanism.name(),
                        quoted(&request.workload)
                    ),
                    need_mib: need as f64 / (1u64 << 20) as f64,
                    bytes_per: BYTES_PER_QUERY,
                    unit: "count",
                    cap_mib: request.max_memory_mib,
                });
            }
        }
        let counts_suffice = access.from_counts();
        check_counting(counting, &request.data, counts_suffice, mechanism.name())?;
        if counting.stream && request.data.attributes.is_some() {
            return Err(BenchError::Usage(
                "--stream reads files holding exactly the domain's columns: drop --attributes"
                    .into(),
            ));
        }
        // a --data file (CSV, gzip CSV or Parquet) is streamed whenever the mechanism needs
        // only the counts (memory for the tables, not for the rows; the same counts, so the
        // same answers); --stream asks for it with a bundled table too
        let source = if counting.engine.is_engine() {
            SourceKind::Engine
        } else if counting.stream
            || (request.data.data.is_some() && counts_suffice && request.data.attributes.is_none())
        {
            SourceKind::Stream
        } else {
            SourceKind::Records
        };
        // every output can be written and names its own file, checked before the ledger is
        // read, the data is read or any noise is drawn
        let inputs = request.inputs();
        let inputs: Vec<(&str, &Path)> = inputs.iter().map(|(f, p)| (*f, p.as_path())).collect();
        output::check_outputs(&request.outputs.list(), &inputs)?;
        if request.dry_run {
            // the data file exists and its header fits the schema: names only, no value read
            request.data.check_header()?;
        }
        Ok(Plan {
            request,
            spec,
            post,
            auto,
            relation,
            workload,
            mechanism,
            schema,
            labelled,
            source,
            access,
            attribute_names,
        })
    }

    /// What the mechanism reads of the data for the workload: the source counts the
    /// workload, or the tables of this counting plan, or loads the records.
    pub fn access(&self) -> &DataAccess {
        &self.access
    }

    /// The request.
    pub fn request(&self) -> &'r ReleaseRequest {
        self.request
    }

    /// The catalogue entry.
    pub fn spec(&self) -> &'static MechanismSpec {
        self.spec
    }

    /// The post-processing applied: `--post`, or the one `--mechanism auto` chose.
    pub fn post(&self) -> PostProcessing {
        self.post
    }

    /// What `--mechanism auto` chose and why (`None`: the mechanism was named).
    pub fn auto_choice(&self) -> Option<&AutoChoice> {
        self.auto.as_ref()
    }

    /// The neighbouring relation of the guarantee.
    pub fn relation(&self) -> Neighbouring {
        self.relation
    }

    /// The workload.
    pub fn workload(&self) -> &AnyWorkload {
        &self.workload
    }

    /// The mechanism, built once.
    pub fn mechanism(&self) -> &dyn Mechanism<AnyWorkload> {
        self.mechanism.as_ref()
    }

    /// Where the private input will be counted.
    pub fn source(&self) -> SourceKind {
        self.source
    }

    /// The public schema the answers are labelled and the synthetic records written
    /// through (`--domain`, or the bundled table's domain of integer codes).
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// Whether the answers are written in the labelled form (`crate::io::answers`).
    pub fn labelled(&self) -> bool {
        self.labelled
    }

    /// The release's generator: ChaCha20 seeded by the operating system's entropy, or by
    /// `--seed` (testing only, with a warning). Its noise and the values drawn within bins
    /// of its synthetic records come from it.
    pub fn rng(&self, events: &dyn ReleaseEvents) -> Result<ChaCha20Rng> {
        Ok(match self.request.seed {
            Some(s) => {
                events.warning(
                    "WARNING: --seed fixes the noise: anyone who knows or guesses the seed can \
                     regenerate the noise and recover the exact counts. Use it for tests and \
                     reproducible experiments only, never for a release you publish. The seed \
                     is not written to any output.",
                );
                seeded_rng(s)
            }
            None => os_seeded_rng()?,
        })
    }

    /// What the counts of the labelled answers are scaled by (`crate::io::answers`,
    /// "Labelled answers"): the public `n` under replace-one neighbours; under add/remove
    /// the release's own estimate of the total from its noisy measurements
    /// (`Diagnostics::estimated_total`), never the private `n`, which this function is not
    /// given under add/remove.
    pub fn count_scale(&self, release: &Release, public_n: Option<usize>) -> CountScale {
        match (self.relation, public_n) {
            (Neighbouring::ReplaceOne, Some(n)) => CountScale {
                total: Some(n as f64),
                source: format!(
                    "counts = answer × n = {n}, the number of records (public under \
                     replace-one neighbours)"
                ),
            },
            _ => match release.diagnostics.estimated_total {
                Some(t) => CountScale {
                    total: Some(t),
                    source: format!(
                        "counts = answer × {}, the release's own estimate of the total from \
                         its noisy measurements (post-processing; add/remove neighbours: the \
                         private n is not used)",
                        dp_core::Num(t)
                    ),
                },
                None => CountScale {
                    total: None,
                    source: format!(
                        "no counts: under add/remove neighbours n is private and {} states no \
                         estimate of the total",
                        self.mechanism.name()
                    ),
                },
            },
        }
    }

    /// A warning when the noise alone puts a released marginal table farther from the truth,
    /// in expected ℓ1, than 2 — the largest ℓ1 distance between two tables of proportions,
    /// so that *any* table of proportions, the uniform one included, would be closer (issue
    /// #26, item 5: plain `gaussian` on adult's 3-way tables has mean table ℓ1 28.7). Only
    /// for answers without post-processing from a mechanism that describes its noise
    /// ([`dp_mechanisms::NoiseDescription`]). The estimate is `c·E|Z|` averaged over the
    /// tables, `c` a table's cells and `E|Z|` the expected absolute noise of one normalised
    /// answer: `√(2/π)·sd` for Gaussian noise, `sd/√2` for Laplace noise (the continuous
    /// distributions' ratios; close for the discrete ones at the scales where this fires).
    /// A function of the public workload, the noise's public parameters and the total the
    /// release published (its own noisy total under add/remove): no private input.
    pub fn noise_swamps_tables(&self, release: &Release) -> Option<String> {
        if self.post != PostProcessing::None {
            return None;
        }
        let AnyWorkload::Marginals(m) = &self.workload else {
            return None;
        };
        let noise = release.diagnostics.noise.as_ref()?;
        let l1 = expected_table_l1(m, noise.answer_std, noise.distribution)?;
        (l1 > 2.0).then(|| swamped_warning(l1))
    }

    /// A warning when the released tables are, on average, farther in ℓ1 than 2 from
    /// *every* table of proportions — hence from the truth by more than any table of
    /// proportions, the uniform one included, could be (issue #26, item 5: `relaxed-projection`
    /// on adult all 2-way has mean table ℓ1 21.2, the uniform table 1.53). For any mechanism
    /// whose answers need not be tables of proportions, without post-processing. A table's
    /// ℓ1 distance to the proportions is exactly `Σ max(−a, 0) + |Σ max(a, 0) − 1|` over its
    /// answers `a` ([`distance_to_proportions`]), a lower bound on its ℓ1 error. A function
    /// of the released answers and the public workload only.
    pub fn answers_far_from_tables(&self, release: &Release) -> Option<String> {
        if self.post != PostProcessing::None {
            return None;
        }
        let AnyWorkload::Marginals(m) = &self.workload else {
            return None;
        };
        if m.is_empty() || release.answers.len() != m.num_queries() {
            return None;
        }
        let distance = (0..m.len())
            .map(|j| distance_to_proportions(&release.answers[m.offset(j)..m.offset(j + 1)]))
            .sum::<f64>()
            / m.len() as f64;
        (distance > 2.0).then(|| {
            format!(
                "WARNING: the released tables are on average {distance:.1} in ℓ1 from the \
                 nearest table of proportions, so at least that far from the truth: more \
                 than 2, the largest ℓ1 distance between two tables of proportions, so any \
                 table of proportions, the uniform one included, would be closer. {}",
                if self.spec.post_processing {
                    "--post simplex projects each released table onto the proportions \
                     (post-processing, no extra budget); `dpqr mechanisms` says where each \
                     mechanism is the wrong choice."
                } else {
                    "This mechanism does not offer --post simplex: see `dpqr mechanisms` \
                     for where each mechanism is the wrong choice, or --mechanism auto."
                }
            )
        })
    }

    /// The settings line of the release, e.g. "--rounds 20, --eta 0.4 (default)".
    pub fn settings_line(&self) -> String {
        self.spec.settings_line(&self.request.settings)
    }

    /// What the ledger records the spend as.
    fn label(&self) -> String {
        format!(
            "{} on {} ({} queries)",
            self.mechanism.name(),
            self.request.workload,
            self.workload.num_queries()
        )
    }

    /// Stage 2: with a ledger, lock it and check that the spend fits the dataset's
    /// remaining budget (the lock is held until the spend is recorded); a release the
    /// ledger cannot place is refused here, before any data is read.
    pub fn open_ledger(&self, events: &dyn ReleaseEvents) -> Result<Option<OpenLedger>> {
        let Some(target) = &self.request.ledger else {
            return Ok(None);
        };
        let certificate = self.mechanism.certificate();
        events.stage("waiting for the ledger lock");
        let ledger = LockedLedger::open(&target.path)?;
        // the curator's name for the data, never its path
        let dataset = ledger.contents.dataset_for(
            target.dataset.as_deref(),
            &target.path.display().to_string(),
        )?;
        let data_key = match &target.data_key {
            Some(key) => key.clone(),
            None => self.request.data.ledger_key()?,
        };
        let label = self.label();
        let charge = ledger_file::Charge {
            dataset: &dataset,
            label: &label,
            data: Some(&data_key),
        };
        let relation = ledger_file::central_relation(&certificate)?;
        ledger.check_spend(&charge, &certificate.loss, relation)?;
        Ok(Some(OpenLedger {
            path: target.path.clone(),
            ledger,
            dataset,
            data_key,
        }))
    }

    /// Stage 3: read the private input from the chosen source, then run every check that
    /// needs the public n — δ against 1/n and the mechanism's own checks of public inputs
    /// (with n under replace-one only) — before anything is charged: a charged release must
    /// not fail for a reason that could be checked before (docs/privacy.md, "Budget
    /// ledger").
    pub fn count(&self, events: &dyn ReleaseEvents) -> Result<PrivateInput> {
        events.stage("loading data");
        // From here on, under add/remove neighbours n is private: nothing printed or
        // written (stdout, stderr, report, answers, ledger) may be the true n or derived
        // from it.
        let allow_empty = self.relation == Neighbouring::AddRemove;
        let data = &self.request.data;
        // what the source counts: the counting plan's tables, or the workload itself
        let planned = match &self.access {
            DataAccess::Plan(plan) => Some(AnyWorkload::Marginals(plan.tables().clone())),
            _ => None,
        };
        let counted = planned.as_ref().unwrap_or(&self.workload);
        let counts_input = |counts, rows| match planned {
            Some(_) => PrivateInput::Planned { counts, rows },
            None => PrivateInput::Counts { counts, rows },
        };
        let input = match self.source {
            SourceKind::Engine => {
                let (counts, rows) =
                    self.request
                        .counting
                        .engine
                        .counts(data, counted, allow_empty)?;
                counts_input(counts, rows)
            }
            SourceKind::Stream => {
                let settings = dp_queries::StreamSettings {
                    batch_rows: usize::try_from(self.request.counting.batch_rows)
                        .unwrap_or(usize::MAX),
                    parallelism: dp_queries::Parallelism::Rayon,
                };
                let (counts, rows) = data.stream_counts(counted, &settings, allow_empty)?;
                counts_input(counts, rows)
            }
            SourceKind::Records => PrivateInput::Records(data.load(allow_empty)?),
        };
        let public_n = (self.relation == Neighbouring::ReplaceOne).then(|| input.n());
        if public_n.is_some() {
            // n is public under replace-one: δ is compared with 1/n
            check_delta(self.request, public_n, events)?;
        }
        self.mechanism.check_inputs(&self.workload, public_n)?;
        self.attribute_names
            .set(self.workload.domain().names().map(str::to_string).collect())
            .ok();
        Ok(input)
    }

    /// Stage 4: record the spend in the ledger (if any), then run the mechanism on `input`.
    /// A failure after the spend is recorded is
    /// [`BenchError::ReleaseFailedAfterCharge`], placed in its ledger and dataset.
    pub fn run(
        &self,
        ledger: Option<&mut OpenLedger>,
        input: PrivateInput,
        rng: &mut dyn CryptoRng,
        events: &dyn ReleaseEvents,
    ) -> Result<Release> {
        let mech = self.mechanism.as_ref();
        // the last point to stop at before the spend is charged
        check_stop(events)?;
        // counting runs inside the mechanism, in one pass over the records: a stage without
        // a percentage; the mechanism's own stages (rounds, solver iterations, levels)
        // follow with percentages
        events.counting(&format!(
            "releasing {} with {}: counting the queries on the data (no percentage for this \
             stage), then the mechanism's stages",
            describe_workload(&self.workload),
            mech.name()
        ));
        let Some(open) = ledger else {
            return Ok(input.release(mech, &self.workload, rng)?);
        };
        let certificate = mech.certificate();
        let (spend, relation) = (
            certificate.loss,
            ledger_file::central_relation(&certificate)?,
        );
        // charged now, after every check that draws no noise and before the first noise is
        // drawn (`release_charged_with` records the spend, then runs the mechanism): a
        // release that fails or crashes from here on has been charged (no free retry), and
        // nothing unrecorded is ever published
        let key = ledger_file::show_name(&open.dataset);
        // held while the spend is written: a signal meanwhile is answered once it is
        let charging = events.charging(
            &format!("dataset {key}"),
            format!("{spend} under {relation} neighbours"),
        );
        let label = self.label();
        let charge = ledger_file::Charge {
            dataset: &open.dataset,
            label: &label,
            data: Some(&open.data_key),
        };
        let release =
            ledger_file::release_charged_with(&mut open.ledger, &charge, &certificate, || {
                charging.recorded();
                input.release(mech, &self.workload, rng)
            })
            .map_err(|e| match e {
                // the refusals come typed from the ledger (status 3); a failure after the
                // charge says which ledger and dataset hold its spend
                BenchError::ReleaseFailedAfterCharge(_) => BenchError::InLedger {
                    ledger: open.path.display().to_string(),
                    dataset: key.clone(),
                    source: Box::new(e),
                },
                e => e,
            })?;
        let ledger_relation = open.ledger.contents.neighbouring;
        let charged = if ledger_relation == relation {
            None
        } else {
            dp_core::convert_neighbouring(spend, relation, ledger_relation)
                .ok()
                .map(|c| (c, ledger_relation))
        };
        events.recorded(&LedgerRecord {
            ledger: open.path.clone(),
            dataset: key,
            spend,
            relation,
            charged,
        });
        Ok(release)
    }

    /// What is said of n in the report and the summary: its value under replace-one
    /// neighbours (public), that it is private under add/remove.
    fn n_note(&self, n: usize) -> String {
        match self.relation {
            Neighbouring::ReplaceOne => format!(
                "n = {n} records, treated as public under replace-one neighbours (the \
                 guarantee protects which records are in the data, not how many)"
            ),
            Neighbouring::AddRemove => "n is private under add/remove neighbours: it is not \
                 reported, and the answers are normalised by the release's own estimate of \
                 the total from its noisy measurements"
                .to_string(),
        }
    }

    /// `n` if it is public (replace-one neighbours), `None` under add/remove.
    fn public_n(&self, n: usize) -> Option<usize> {
        (self.relation == Neighbouring::ReplaceOne).then_some(n)
    }

    /// How the synthetic output holds its values, for the report and the summary; `None`
    /// without `--synthetic-out`.
    pub fn synthetic_note(&self) -> Option<String> {
        let outputs = &self.request.outputs;
        outputs.synthetic.as_ref()?;
        let form = match outputs.synthetic_rows {
            Some(rows) => {
                format!("{rows} plain rows (largest-remainder expansion of the released weights)")
            }
            None => "weighted records (last column: the weight)".to_string(),
        };
        let bins = (0..self.schema.domain().len()).any(|a| {
            matches!(
                self.schema.attribute(a).map(|s| s.encoding()),
                Some(Encoding::Bins(_))
            )
        });
        Some(if bins {
            format!(
                "{form}, values in the input's form: labels, `other` for an other bucket, and \
                 for a binned attribute a number drawn uniformly within its bin from the \
                 release's own generator ({}), a fresh draw per {}",
                if self.request.seed.is_some() {
                    "seeded by --seed"
                } else {
                    "operating-system entropy"
                },
                if outputs.synthetic_rows.is_some() {
                    "row"
                } else {
                    "record"
                }
            )
        } else {
            format!("{form}, values in the input's form (labels, `other`, integer codes)")
        })
    }

    /// The report's JSON text. `n` is written only under replace-one neighbours.
    fn report(&self, release: &Release, n: usize) -> Result<String> {
        // no timings: a release's diagnostics are functions of public inputs and of its
        // privatized transcript only (dp_mechanisms::Diagnostics)
        let diagnostics =
            serde_json::to_value(&release.diagnostics).map_err(|source| BenchError::Encode {
                what: "report",
                source,
            })?;
        let mut report = serde_json::json!({
            "certificate": release.certificate,
            "statement": release.certificate.statement(),
            "diagnostics": diagnostics,
            "workload": self.request.workload,
            "class": self.workload.class().key(),
            "marginals": self.workload.as_marginals().map(MarginalWorkload::len),
            "queries": self.workload.num_queries(),
            "n_note": self.n_note(n),
            // never the seed itself: with it and the answers anyone recovers the exact
            // counts
            "settings": self.spec.settings_json(&self.request.settings),
            "randomness": if self.request.seed.is_some() {
                "seeded by the caller (--seed, testing only; the seed is not recorded)"
            } else {
                "operating-system entropy"
            },
        });
        if let Some(r) = report.as_object_mut() {
            if self.relation == Neighbouring::ReplaceOne {
                r.insert("n".into(), n.into());
            }
            // what the labels and the synthetic values mean, and what the counts are
            // (issue #26)
            r.insert(
                "schema".into(),
                crate::io::answers::schema_json(&self.schema),
            );
            r.insert(
                "answers_form".into(),
                if self.labelled {
                    "labelled: marginal,cell,answer,label,count"
                } else {
                    "codes: marginal,cell,answer"
                }
                .into(),
            );
            if self.labelled {
                let scale = self.count_scale(release, self.public_n(n));
                r.insert(
                    "counts".into(),
                    serde_json::to_value(&scale).map_err(|source| BenchError::Encode {
                        what: "report",
                        source,
                    })?,
                );
            }
            if let Some(note) = self.synthetic_note() {
                r.insert("synthetic_values".into(), note.into());
            }
            if let Some(choice) = &self.auto {
                // the rule's choice and its reason (public inputs only: docs/auto.md)
                r.insert("mechanism_auto".into(), choice.sentence().into());
            }
        }
        serde_json::to_string_pretty(&report).map_err(|source| BenchError::Encode {
            what: "report",
            source,
        })
    }

    /// Stage 5: write the outputs of `release` (made from `n` records). Every output is
    /// written to a temporary file beside its target first and renamed into place only
    /// when all of them are complete: a failure leaves no output changed.
    ///
    /// `rng` is the release's generator: the values drawn within bins of the synthetic
    /// records come from it (post-processing of the released records).
    pub fn write(
        &self,
        release: &Release,
        n: usize,
        rng: &mut dyn CryptoRng,
        events: &dyn ReleaseEvents,
    ) -> Result<()> {
        let outputs = &self.request.outputs;
        let synthetic = match (&outputs.synthetic, &release.synthetic) {
            (None, _) => None,
            (Some(path), Some(synthetic)) => Some((path, synthetic)),
            (Some(_), _) => {
                return Err(BenchError::Mismatch(format!(
                    "{} returned no synthetic data; nothing was written",
                    self.mechanism.name()
                )));
            }
        };
        let report = match &outputs.report {
            Some(path) => Some((path, self.report(release, n)?)),
            None => None,
        };
        events.stage("writing outputs");
        let mut files = Vec::with_capacity(3);
        let scale = self.count_scale(release, self.public_n(n));
        let mut answers = events.create_output(&outputs.answers)?;
        output::write_maybe_compressed(&mut answers, |w| match &self.workload {
            AnyWorkload::Marginals(m) if self.labelled => write_labelled_answers(
                w,
                m,
                &release.answers,
                Labelling {
                    schema: &self.schema,
                    scale: &scale,
                },
            ),
            AnyWorkload::Marginals(m) => write_answers(w, m, &release.answers),
            other => write_query_answers(w, other, &release.answers),
        })?;
        files.push(answers);
        if let Some((path, text)) = report {
            files.push(write_report(events, path, &text)?);
        }
        if let Some((path, synthetic)) = synthetic {
            let mut f = events.create_output(path)?;
            let mut values = BinValues::Uniform(rng);
            let schema = &self.schema;
            output::write_maybe_compressed(&mut f, |w| match outputs.synthetic_rows {
                Some(rows) => {
                    let counts = expand_counts(&synthetic.weights, rows)?;
                    write_expanded(w, &synthetic.records, &counts, schema, &mut values)
                }
                None => write_synthetic(w, synthetic, schema, &mut values),
            })?;
            files.push(f);
        }
        // renamed into place: from here the release is complete
        events.commit_outputs(files)
    }
}

/// A workload in words: "12 marginals (360 cells)" or "30 conjunctions queries".
pub fn describe_workload(workload: &AnyWorkload) -> String {
    match workload {
        AnyWorkload::Marginals(m) => format!("{} marginals ({} cells)", m.len(), m.num_queries()),
        other => format!("{} {} queries", other.num_queries(), other.class()),
    }
}

/// The release report's JSON `text` written (compressed by `path`'s name) to a new output file
/// of `events`, not yet committed; shared by the central and local pipelines.
pub(crate) fn write_report(
    events: &dyn ReleaseEvents,
    path: &Path,
    text: &str,
) -> Result<AtomicFile> {
    let mut f = events.create_output(path)?;
    output::write_maybe_compressed(&mut f, |w| {
        w.write_all(text.as_bytes()).map_err(io_error(path))
    })?;
    Ok(f)
}

/// The expected ℓ1 norm of the noise on a table of the marginal workload `m`, averaged over
/// its tables: `c·E|Z|`, `c` a table's cells and `E|Z|` the expected absolute noise of one
/// answer of standard deviation `answer_std` — `√(2/π)·sd` for Gaussian noise, `sd/√2` for
/// Laplace noise (the continuous distributions' ratios; close for the discrete ones at the
/// scales where the warning fires). `None` for an empty workload or a non-positive or
/// non-finite `answer_std`. Public: the workload and the noise's public parameters.
pub fn expected_table_l1(
    m: &MarginalWorkload,
    answer_std: f64,
    distribution: dp_mechanisms::NoiseDistribution,
) -> Option<f64> {
    let ratio = match distribution {
        dp_mechanisms::NoiseDistribution::DiscreteGaussian => (2.0 / std::f64::consts::PI).sqrt(),
        dp_mechanisms::NoiseDistribution::DiscreteLaplace => std::f64::consts::FRAC_1_SQRT_2,
    };
    let tables = m.marginals();
    if tables.is_empty() || !(answer_std.is_finite() && answer_std > 0.0) {
        return None;
    }
    Some(
        tables
            .iter()
            .map(|t| t.num_cells() as f64 * ratio * answer_std)
            .sum::<f64>()
            / tables.len() as f64,
    )
}

/// The warning of a release (or a plan) whose noise alone puts each table about `l1` from
/// the truth in ℓ1, more than 2 ([`Plan::noise_swamps_tables`]).
pub fn swamped_warning(l1: f64) -> String {
    format!(
        "WARNING: the noise alone puts each released table about {l1:.1} from the truth in \
         ℓ1 on average, more than 2, the largest ℓ1 distance between two tables of \
         proportions: any table of proportions, the uniform one included, would be \
         closer. --post simplex projects each noisy table onto the proportions \
         (post-processing, no extra budget)."
    )
}

/// The ℓ1 distance from the answers `a` of one table to the nearest table of proportions
/// (cells ≥ 0 summing to 1): `N + |P − 1|`, `N` the sum of the negative parts and `P` of
/// the positive ones. It is at most that (raise the negative cells to 0, then scale the
/// positive ones to sum to 1, or set one cell to 1 when none is positive), and at least
/// that: for any table of proportions `u`, `‖a − u‖₁ ≥ N + U + |P − (1 − U)| ≥ N + |P − 1|`
/// with `U` the mass `u` puts on the negative cells.
pub fn distance_to_proportions(a: &[f64]) -> f64 {
    let negative: f64 = a.iter().map(|&x| (-x).max(0.0)).sum();
    let positive: f64 = a.iter().map(|&x| x.max(0.0)).sum();
    negative + (positive - 1.0).abs()
}

#[cfg(test)]
mod tests {
    use super::distance_to_proportions;

    /// Hand values of the ℓ1 distance to the nearest table of proportions, each checked
    /// against a table of proportions at that distance (the bound is attained).
    #[test]
    fn distance_to_proportions_by_hand() {
        let l1 = |a: &[f64], u: &[f64]| a.iter().zip(u).map(|(x, y)| (x - y).abs()).sum::<f64>();
        // already a table of proportions
        assert_eq!(distance_to_proportions(&[0.25, 0.75]), 0.0);
        // negatives raised to 0 (0.5), then the positives 1.5 scaled to 1 (0.5 more)
        let a = [-0.5, 1.0, 0.5];
        assert_eq!(distance_to_proportions(&a), 1.0);
        assert_eq!(l1(&a, &[0.0, 2.0 / 3.0, 1.0 / 3.0]), 1.0);
        // nothing positive: one cell set to 1
        let a = [-3.0, 0.0];
        assert_eq!(distance_to_proportions(&a), 4.0);
        assert_eq!(l1(&a, &[0.0, 1.0]), 4.0);
        // far above: the relaxed projection's case, many times the largest distance 2
        assert!(distance_to_proportions(&[5.0, -4.0, 3.0]) > 2.0);
    }
}
