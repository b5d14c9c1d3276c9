//! The mechanism catalogue: one [`MechanismSpec`] per mechanism that the `dpqr` program,
//! the benchmarks and the empirical audit can run, in one static table ([`MECHANISMS`]).
//!
//! An entry says, in plain words, what the mechanism does (citing authors and year), what
//! guarantee it gives and in which privacy model ([`Model`]: central, with the neighbouring
//! relations it accepts, or local), which budgets it accepts, whether it writes synthetic
//! records and how large a domain it handles; a central entry carries the builder and the
//! audit settings, a local one its dp-local protocol. Nothing outside this module matches on mechanism names: the command
//! line (`dpqr mechanisms`, `dpqr release`, `dpqr audit`), the bench and the audit all read
//! the table, so adding an entry adds the mechanism everywhere.

use std::sync::{Arc, OnceLock};

use crate::settings::{SettingKind, SettingValue, Settings};
use crate::{BenchError, Result, quoted};
use dp_core::{Neighbouring, PrivacyLoss, ProgressSink, StopRequest};
use dp_mechanisms::iterative::{DEFAULT_ETA, OracleChoice};
use dp_mechanisms::polynomial::{
    Approximation as PolynomialApproximation, PolynomialMechanism, PolynomialParams,
};
use dp_mechanisms::{
    AdaptiveProjectionParams, AdaptiveRound, BoostingParams, BoostingSettings, ChainingParams,
    ChainingWorstCaseParams, CoarseProjectionParams, DualQuery, DualQueryParams, ForQueryClasses,
    GaussianMechanism, GaussianParams, IcParams, LaplaceMechanism, LaplaceParams, Mechanism,
    MwemParams, OnWorkloadAttributes, OneHotEncoded, PostProcessed, PostProcessing, PrivacyModel,
    ProjectionParams, ProjectionSettings, RelaxedProjectionParams, RelaxedSettings,
};
use dp_queries::{AnyWorkload, QueryClass};

/// The three kinds of privacy budget the command line can express.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BudgetKind {
    /// Pure ε-differential privacy: `--epsilon` alone.
    Pure,
    /// (ε, δ)-differential privacy: `--epsilon` with `--delta`.
    Approx,
    /// ρ-zero-concentrated differential privacy: `--rho` alone.
    Zcdp,
}

impl BudgetKind {
    /// Every kind, in the order they are listed to users.
    pub const ALL: [BudgetKind; 3] = [BudgetKind::Pure, BudgetKind::Approx, BudgetKind::Zcdp];

    /// The kind of a privacy loss.
    pub fn of(loss: &PrivacyLoss) -> BudgetKind {
        match loss {
            PrivacyLoss::Pure { .. } => BudgetKind::Pure,
            PrivacyLoss::Approx { .. } => BudgetKind::Approx,
            PrivacyLoss::Zcdp { .. } => BudgetKind::Zcdp,
        }
    }

    /// The command-line flags that give a budget of this kind, in words.
    pub fn flags(self) -> &'static str {
        match self {
            BudgetKind::Pure => "--epsilon alone",
            BudgetKind::Approx => "--epsilon with --delta",
            BudgetKind::Zcdp => "--rho alone",
        }
    }

    /// The kind's name for people, e.g. "pure ε-DP".
    pub fn describe(self) -> &'static str {
        match self {
            BudgetKind::Pure => "pure ε-DP",
            BudgetKind::Approx => "(ε, δ)-DP",
            BudgetKind::Zcdp => "ρ-zCDP",
        }
    }

    /// A short machine-readable key: `pure`, `approx` or `zcdp`.
    pub fn key(self) -> &'static str {
        match self {
            BudgetKind::Pure => "pure",
            BudgetKind::Approx => "approx",
            BudgetKind::Zcdp => "zcdp",
        }
    }
}

/// The value of `--neighbouring` that selects `relation`.
pub fn neighbouring_flag(relation: Neighbouring) -> &'static str {
    match relation {
        Neighbouring::ReplaceOne => "replace-one",
        Neighbouring::AddRemove => "add-remove",
    }
}

/// What a caller may add to a mechanism beyond its budget, relation and post-processing;
/// mechanisms without rounds, a boundable state or solver settings ignore it.
#[derive(Clone, Default)]
pub struct BuildOptions {
    /// Called with a one-line summary after every round (adaptive-projection). Everything in
    /// it is public (selected table, noise, ρ spent: functions of the noisy outputs).
    pub round_progress: Option<Arc<dyn Fn(String) + Send + Sync>>,
    /// Memory the mechanism's own state may use (bytes), where it can be bounded
    /// (adaptive-projection: `AdaptiveProjectionParams::within_memory`; the polynomial
    /// release's and boosting's `max_memory_mib`).
    pub memory_bytes: Option<u64>,
    /// The attribute names of the data, in domain order, once it is loaded: the progress
    /// line names the measured attributes with them (their indices until it is set).
    pub attribute_names: Arc<OnceLock<Vec<String>>>,
    /// Universe and Frank–Wolfe settings for `projection`, `coarse-projection` and
    /// `chaining` (the projection bench caps the solver's iterations); their defaults
    /// when `None`. [`BuildOptions::settings`] given on the command line override them.
    pub projection_settings: Option<ProjectionSettings>,
    /// Where the long stages report how far they have got (rounds of the iterative
    /// mechanisms and of adaptive projection): public round counts only
    /// ([`dp_core::progress`]). Nothing is reported when `None`.
    pub progress: Option<ProgressSink>,
    /// A request to stop early, looked at between adaptive-projection's rounds
    /// (`AdaptiveProjectionParams::stop`); the other mechanisms run to their end.
    pub stop: Option<StopRequest>,
    /// The settings given on the command line (`--rounds`, `--eta`, …). Only those the
    /// entry lists ([`MechanismSpec::settings`]) pass [`MechanismSpec::build`].
    pub settings: Settings,
}

/// A setting a catalogue entry accepts: which, what it means for this mechanism, and its
/// default.
#[derive(Clone, Copy)]
pub struct SettingSpec {
    /// The setting.
    pub kind: SettingKind,
    /// What it means for this mechanism, in plain words.
    pub meaning: &'static str,
    /// The mechanism's default, read from its own parameters in `dp-mechanisms` (one
    /// source: never repeated as a literal here).
    pub default: fn() -> SettingValue,
    /// What a number counts, shown after it, e.g. " per workload attribute" (often empty).
    pub unit: &'static str,
}

/// One setting of a release: its kind, the value used and whether it was given (otherwise
/// the mechanism's default).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EffectiveSetting {
    /// The setting.
    pub kind: SettingKind,
    /// The value: the one given, or the default.
    pub value: SettingValue,
    /// Whether it was given on the command line.
    pub given: bool,
    /// What a number counts ([`SettingSpec::unit`]).
    pub unit: &'static str,
}

/// How the empirical privacy audit ([`crate::audit`]) builds a mechanism: every catalogue
/// entry carries one, so a mechanism added to [`MECHANISMS`] is audited without touching
/// the audit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AuditSettings {
    /// The budget the mechanism is built with for the black-box audit.
    pub budget: PrivacyLoss,
    /// The δ at which a ρ-zCDP guarantee is converted to the audited (ε, δ).
    pub delta: f64,
    /// Runs per neighbouring dataset in the CI black-box audit.
    pub ci_runs: usize,
    /// The white-box per-step audit ([`crate::audit::audit_steps`]) of a composed
    /// mechanism, `None` for the others. When present, the half-noise canary must be caught
    /// by the step audit (the black-box audit has no power against it: the end-to-end
    /// accounting of these mechanisms is far from tight); otherwise by the black-box audit.
    pub steps: Option<StepAuditSettings>,
    /// The marginals the black-box audit releases on its two binary attributes: `2` (the
    /// one 2-way table, the default) or `1` (the two 1-way tables: used where each answer of
    /// the 2-way table mixes several noisy values, so that an event on the answers has no
    /// power against the half-noise canary — the polynomial release, the relaxed projection).
    pub audit_kway: usize,
}

/// The per-step audit's build of a composed mechanism.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepAuditSettings {
    /// The total budget, chosen so that every audited step has a per-step ε of about 1 on
    /// the step audit's n = 20 records (the calibration code under test is
    /// budget-generic; a per-step ε far below 1 would leave the audit without power).
    pub budget: PrivacyLoss,
    /// Runs per neighbouring dataset and step in CI.
    pub ci_runs: usize,
    /// How the step audit's canary is miscalibrated.
    pub canary: StepCanary,
}

/// How the step-audit canary ([`crate::audit::step_canary`]) of a composed mechanism is
/// built from the honest one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepCanary {
    /// The mechanism built with its budget scaled so that its noise scale is multiplied by
    /// the canary factor.
    ScaledBudget,
    /// DualQuery derives its rounds, not its noise, from the budget: the canary samples at
    /// temperature η/f (f = 1/2: twice the step size, twice every per-sample ε) with the
    /// scaled budget, which leaves the number of rounds unchanged.
    DualQueryStepSize,
}

/// Builds a mechanism from a validated budget, a neighbouring relation, a post-processing
/// and [`BuildOptions`]. Called by [`MechanismSpec::build`] only after the budget kind and
/// the relation have been checked against the entry.
pub type Builder = fn(
    PrivacyLoss,
    Neighbouring,
    PostProcessing,
    &BuildOptions,
) -> std::result::Result<Box<dyn Mechanism>, BenchError>;

/// A builder of the mechanism for workloads of any query class chosen at run time.
pub type AnyBuilder = fn(
    PrivacyLoss,
    Neighbouring,
    PostProcessing,
    &BuildOptions,
) -> std::result::Result<Box<dyn Mechanism<AnyWorkload>>, BenchError>;

/// The query classes a mechanism releases.
#[derive(Clone, Copy)]
pub enum QueryClasses {
    /// Marginal workloads only (its fast paths are specialised to tables).
    MarginalsOnly,
    /// These classes (marginals among them), built by `build`.
    Several {
        /// The classes, in the order of [`QueryClass::ALL`].
        classes: &'static [QueryClass],
        /// The builder for run-time workloads.
        build: AnyBuilder,
    },
}

impl QueryClasses {
    /// The classes as a list.
    pub fn list(&self) -> &'static [QueryClass] {
        match self {
            QueryClasses::MarginalsOnly => &[QueryClass::Marginals],
            QueryClasses::Several { classes, .. } => classes,
        }
    }
}

/// What a catalogue entry reads of the data (issue #25; the catalogue's statement of each
/// built mechanism's [`dp_mechanisms::DataAccess`], pinned by a test).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reads {
    /// The workload's exact counts and n ([`dp_mechanisms::Mechanism::counts_suffice`]).
    WorkloadCounts,
    /// The exact counts of the tables of its counting plan and n
    /// ([`dp_mechanisms::Mechanism::counting_plan`]): which tables, in plain words.
    Tables(&'static str),
    /// The records, loaded in memory.
    Records,
}

impl Reads {
    /// Whether the release runs from exact counts, so that a stream or an engine serves it.
    pub fn from_counts(self) -> bool {
        !matches!(self, Reads::Records)
    }

    /// The key in `dpqr mechanisms --json`: `workload-counts`, `tables` or `records`.
    pub fn key(self) -> &'static str {
        match self {
            Reads::WorkloadCounts => "workload-counts",
            Reads::Tables(_) => "tables",
            Reads::Records => "records",
        }
    }

    /// The tables of the counting plan, in plain words (`None` unless [`Reads::Tables`]).
    pub fn tables(self) -> Option<&'static str> {
        match self {
            Reads::Tables(t) => Some(t),
            _ => None,
        }
    }

    /// Whether `access` (a built mechanism's, for some workload) is what this says.
    pub fn matches(self, access: &dp_mechanisms::DataAccess) -> bool {
        use dp_mechanisms::DataAccess;
        matches!(
            (self, access),
            (Reads::WorkloadCounts, DataAccess::WorkloadCounts)
                | (Reads::Tables(_), DataAccess::Plan(_))
                | (Reads::Records, DataAccess::Records)
        )
    }
}

/// The counting plan of the polynomial release, in plain words.
const POLYNOMIAL_TABLES: &str = "the tables over every set of at most D of the attributes the \
    queries touch (D the degree of its approximation), and n; for decision-list points, the \
    records";

/// The counting plan of the cover-based mechanisms, in plain words.
const UNIVERSE_HISTOGRAM: &str = "the full table over the attributes the workload touches (the \
    data's histogram over the universe the covers are built on), and n";

/// One mechanism of the catalogue.
pub struct MechanismSpec {
    /// The name on the command line and in results, e.g. `gaussian`.
    pub name: &'static str,
    /// What it does, in plain words, citing papers by authors and year.
    pub description: &'static str,
    /// The guarantee its certificate states, in plain words.
    pub guarantee: &'static str,
    /// The budget kinds it accepts (others are refused with an error naming these).
    pub budgets: &'static [BudgetKind],
    /// The privacy model its guarantee is stated in, with what that model needs: a central
    /// entry's neighbouring relations, builder and audit, or a local entry's protocol.
    pub model: Model,
    /// Whether every release carries weighted synthetic records (`--synthetic-out`).
    pub synthetic: bool,
    /// What it reads of the data (issue #25): the workload's exact counts, the exact counts
    /// of the tables of its counting plan, or the records. Pinned against each built
    /// mechanism's [`dp_mechanisms::DataAccess`]. Unless it reads the records, a `--data`
    /// file is streamed in bounded memory, and `--stream` and `--engine` are accepted.
    pub reads: Reads,
    /// Whether the mechanism applies `--post` post-processing (the answer-perturbation
    /// baselines, and the relaxed projection, whose answers need not be tables of
    /// proportions either: issue #26 item 5); the others refuse it rather than ignore it
    /// silently.
    pub post_processing: bool,
    /// How large a domain (universe of possible records) it handles, in plain words.
    pub universe: &'static str,
    /// Where it is the wrong choice, in plain words citing the evidence
    /// (docs/benchmarks.md): shown by `dpqr mechanisms` after "wrong choice when" (issue
    /// #26, item 5).
    pub wrong_choice: &'static str,
    /// The query classes it releases (see [`MechanismSpec::build_any`]).
    pub query_classes: QueryClasses,
    /// The settings it accepts (`--rounds`, `--eta`, …), each with its meaning and
    /// default; any other setting is refused by [`MechanismSpec::build`].
    pub settings: &'static [SettingSpec],
}

/// The privacy model of a catalogue entry ([`dp_mechanisms::PrivacyModel`], the model its
/// certificate states), with what running it in that model takes.
pub enum Model {
    /// A curator holds the records and runs a [`Mechanism`] on them; the guarantee is
    /// stated for a neighbouring relation and charged to a ledger of central spends.
    Central(CentralEntry),
    /// Every client randomizes its own record (one simulated client per record of the
    /// data) in the dp-local protocol given; the guarantee is local ε-DP, for any two
    /// inputs of one client. It has no neighbouring relation and is never composed with
    /// central spends: `dpqr release` refuses `--neighbouring` and `--ledger` for it
    /// (docs/privacy.md, "The local model"), and runs it through the records path of
    /// [`crate::pipeline::LocalPlan`].
    Local(dp_local::LocalMechanismKind),
}

/// What a central-model entry adds: its relations, its builder and its audit.
pub struct CentralEntry {
    /// The neighbouring relations it is stated for.
    pub relations: &'static [Neighbouring],
    /// Why the relations are what they are, in plain words (shown when another is asked).
    pub relations_note: &'static str,
    /// The builder (see [`MechanismSpec::build`]).
    pub builder: Builder,
    /// How the empirical audit builds it.
    pub audit: AuditSettings,
}

impl CentralEntry {
    /// The relation `dpqr release` uses when `--neighbouring` is not given: add/remove
    /// where the entry supports it — under it `n` is private and never printed, so a
    /// practitioner who does not know the relations gets the one that publishes less —
    /// and otherwise the only one it supports, replace-one (`n` public).
    pub fn default_relation(&self) -> Neighbouring {
        if self.relations.contains(&Neighbouring::AddRemove) {
            Neighbouring::AddRemove
        } else {
            Neighbouring::ReplaceOne
        }
    }
}

/// What a local-model entry says instead of a neighbouring relation, in plain words.
const LOCAL_RELATIONS_NOTE: &str = "local model: its guarantee is for any two inputs of one \
    client (one simulated client per record), not for neighbouring datasets, and is never \
    composed with central spends, so --neighbouring and --ledger are refused";

impl MechanismSpec {
    /// Whether the entry accepts budgets of `kind`.
    pub fn accepts(&self, kind: BudgetKind) -> bool {
        self.budgets.contains(&kind)
    }

    /// The privacy model's key, as in certificates ([`PrivacyModel::key`]): `central` or
    /// `local`.
    pub fn model_key(&self) -> &'static str {
        match self.model {
            Model::Central(_) => PrivacyModel::CENTRAL_KEY,
            Model::Local(_) => PrivacyModel::LOCAL_KEY,
        }
    }

    /// What the central-model entry adds (relations, builder, audit); `None` for a local
    /// entry.
    pub fn central(&self) -> Option<&CentralEntry> {
        match &self.model {
            Model::Central(c) => Some(c),
            Model::Local(_) => None,
        }
    }

    /// The neighbouring relations it is stated for: none for a local entry.
    pub fn relations(&self) -> &'static [Neighbouring] {
        match &self.model {
            Model::Central(c) => c.relations,
            Model::Local(_) => &[],
        }
    }

    /// Why the relations are what they are, in plain words (shown when another is asked);
    /// for a local entry, why it has none.
    pub fn relations_note(&self) -> &'static str {
        match &self.model {
            Model::Central(c) => c.relations_note,
            Model::Local(_) => LOCAL_RELATIONS_NOTE,
        }
    }

    /// How the empirical audit builds it: `None` for a local entry (the audit tests
    /// central guarantees on neighbouring datasets).
    pub fn audit(&self) -> Option<AuditSettings> {
        self.central().map(|c| c.audit)
    }

    /// Whether the entry is stated for `relation` (never, for a local entry).
    pub fn supports(&self, relation: Neighbouring) -> bool {
        self.relations().contains(&relation)
    }

    /// The budget flags it accepts, e.g. "--rho alone, or --epsilon with --delta".
    pub fn budget_flags(&self) -> String {
        let flags: Vec<&str> = self.budgets.iter().map(|k| k.flags()).collect();
        match flags.as_slice() {
            [] => String::new(),
            [one] => one.to_string(),
            [init @ .., last] => format!("{}, or {last}", init.join(", ")),
        }
    }

    /// The relation `dpqr release` uses when `--neighbouring` is not given
    /// ([`CentralEntry::default_relation`]); `None` for a local entry, which has no
    /// relation.
    pub fn default_relation(&self) -> Option<Neighbouring> {
        self.central().map(CentralEntry::default_relation)
    }

    /// The relations it is stated for, in words, e.g. "replace-one or add/remove" (empty
    /// for a local entry).
    pub fn relation_list(&self) -> String {
        let names: Vec<String> = self.relations().iter().map(|r| r.to_string()).collect();
        names.join(" or ")
    }

    /// The error for a budget of `kind` the entry does not accept, or (`None`) for budget
    /// flags that give no budget at all (e.g. `--delta` alone): it says what to give.
    pub fn budget_refused(&self, kind: Option<BudgetKind>) -> BenchError {
        let what = match kind {
            Some(k) => format!("does not accept {} budgets ({})", k.describe(), k.flags()),
            None => "needs exactly one budget".to_string(),
        };
        let kinds: Vec<&str> = self.budgets.iter().map(|k| k.describe()).collect();
        BenchError::Usage(format!(
            "{} {what}: give {} ({})",
            self.name,
            self.budget_flags(),
            kinds.join(" or ")
        ))
    }

    /// The entry's setting of kind `kind`, if it accepts it.
    pub fn setting(&self, kind: SettingKind) -> Option<&'static SettingSpec> {
        self.settings.iter().find(|s| s.kind == kind)
    }

    /// The flags of the settings it accepts, e.g. "--rounds, --eta", or "none".
    pub fn setting_flags(&self) -> String {
        if self.settings.is_empty() {
            return "none".to_string();
        }
        let flags: Vec<&str> = self.settings.iter().map(|s| s.kind.flag()).collect();
        flags.join(", ")
    }

    /// `Ok` if every value in `settings` is in range ([`Settings::check_values`]) and
    /// every setting given is one the entry accepts; otherwise an error naming the flag
    /// (a setting is never silently ignored).
    pub fn check_settings(&self, settings: &Settings) -> Result<()> {
        settings.check_values()?;
        let refused: Vec<&str> = settings
            .given()
            .into_iter()
            .filter(|k| self.setting(*k).is_none())
            .map(|k| k.flag())
            .collect();
        if refused.is_empty() {
            return Ok(());
        }
        let takes = if self.settings.is_empty() {
            "it has no settings".to_string()
        } else {
            format!("its settings are {}", self.setting_flags())
        };
        Err(BenchError::Usage(format!(
            "{} does not take {} ({takes}; see `dpqr mechanisms`): drop {} rather than \
             expect {} to take effect",
            self.name,
            refused.join(", "),
            if refused.len() == 1 { "it" } else { "them" },
            if refused.len() == 1 { "it" } else { "them" },
        )))
    }

    /// Every setting the entry accepts with the value a release uses: the one given in
    /// `settings` or the default.
    pub fn effective_settings(&self, settings: &Settings) -> Vec<EffectiveSetting> {
        self.settings
            .iter()
            .map(|s| match settings.get(s.kind) {
                Some(value) => EffectiveSetting {
                    kind: s.kind,
                    value,
                    given: true,
                    unit: s.unit,
                },
                None => EffectiveSetting {
                    kind: s.kind,
                    value: (s.default)(),
                    given: false,
                    unit: s.unit,
                },
            })
            .collect()
    }

    /// The settings a release uses, for the `settings:` line of `dpqr release`, e.g.
    /// "--rounds 20, --eta 0.4 (default)", or "none (gaussian has no settings)".
    pub fn settings_line(&self, settings: &Settings) -> String {
        let all = self.effective_settings(settings);
        if all.is_empty() {
            return format!("none ({} has no settings)", self.name);
        }
        all.iter()
            .map(|e| {
                format!(
                    "{} {}{}{}",
                    e.kind.flag(),
                    e.value,
                    e.unit,
                    if e.given { "" } else { " (default)" }
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The settings a release uses as a JSON object: per setting (its JSON key) the value
    /// and whether it was `given` or the `default`.
    pub fn settings_json(&self, settings: &Settings) -> serde_json::Value {
        let mut map = serde_json::Map::new();
        for e in self.effective_settings(settings) {
            map.insert(
                e.kind.key().to_string(),
                serde_json::json!({
                    "value": e.value.to_json(),
                    "source": if e.given { "given" } else { "default" },
                }),
            );
        }
        serde_json::Value::Object(map)
    }

    /// The entry as JSON, as `dpqr mechanisms --json` lists it (and `dpqr.mechanisms()` in
    /// Python): its name, model, description, guarantee, budget kinds and flags, relations
    /// with the default, whether it makes synthetic data, what it reads, its domain limits,
    /// where it is the wrong choice, post-processing, and each setting with its default.
    pub fn to_json(&self) -> serde_json::Value {
        let flags: Vec<&str> = self.budgets.iter().map(|k| k.flags()).collect();
        let kinds: Vec<&str> = self.budgets.iter().map(|k| k.key()).collect();
        let relations: Vec<&str> = self
            .relations()
            .iter()
            .map(|r| neighbouring_flag(*r))
            .collect();
        serde_json::json!({
            "name": self.name,
            "model": self.model_key(),
            "description": self.description,
            "guarantee": self.guarantee,
            "budget_kinds": kinds,
            "budget_flags": flags,
            "neighbouring": relations,
            "neighbouring_default": self.default_relation().map(neighbouring_flag),
            "neighbouring_note": self.relations_note(),
            "synthetic_data": self.synthetic,
            "counts_suffice": self.reads == Reads::WorkloadCounts,
            "reads": self.reads.key(),
            "counting_plan": self.reads.tables(),
            "streams": self.reads.from_counts(),
            "universe": self.universe,
            "wrong_choice": self.wrong_choice,
            "post_processing": self.post_processing,
            "settings": self.settings.iter().map(|s| serde_json::json!({
                "flag": s.kind.flag(),
                "name": s.kind.key(),
                "meaning": s.meaning,
                "default": (s.default)().to_json(),
                "default_text": format!("{}{}", (s.default)(), s.unit),
            })).collect::<Vec<_>>(),
        })
    }

    /// `Ok` if the entry is stated for `relation`; otherwise an error naming the relations
    /// it is stated for and the flag that selects them.
    pub fn check_relation(&self, relation: Neighbouring) -> Result<()> {
        if self.supports(relation) {
            return Ok(());
        }
        if let Model::Local(_) = self.model {
            return Err(self.local_refuses(
                "--neighbouring (its guarantee is for any two inputs of one client, not for \
                 neighbouring datasets): drop --neighbouring",
            ));
        }
        Err(BenchError::Usage(format!(
            "{} is stated for {} neighbours only ({}): give --neighbouring {}",
            self.name,
            self.relation_list(),
            self.relations_note(),
            self.relations()
                .iter()
                .map(|r| neighbouring_flag(*r))
                .collect::<Vec<_>>()
                .join(" or ")
        )))
    }

    /// The refusal of `what` (a flag and why) by a local-model entry.
    pub fn local_refuses(&self, what: &str) -> BenchError {
        BenchError::Usage(format!(
            "{} is a local-model mechanism (local ε-DP: any two inputs of one client) and \
             does not take {what}; see docs/privacy.md, \"The local model\"",
            self.name
        ))
    }

    /// `Ok` if the entry applies `post` (no post-processing is always accepted).
    pub fn check_post(&self, post: PostProcessing) -> Result<()> {
        if post == PostProcessing::None || self.post_processing {
            return Ok(());
        }
        let takes: Vec<&str> = MECHANISMS
            .iter()
            .filter(|s| s.post_processing)
            .map(|s| s.name)
            .collect();
        Err(BenchError::Usage(format!(
            "{} does not apply --post (only {} do, whose answers need not be tables of \
             proportions): drop --post rather than expect it to take effect",
            self.name,
            takes.join(", ")
        )))
    }

    /// Every check of [`Self::build`] before its builder runs.
    fn check_build(
        &self,
        budget: PrivacyLoss,
        relation: Neighbouring,
        post: PostProcessing,
        options: &BuildOptions,
    ) -> Result<&CentralEntry> {
        let central = self.central_builder()?;
        let kind = BudgetKind::of(&budget);
        if !self.accepts(kind) {
            return Err(self.budget_refused(Some(kind)));
        }
        self.check_relation(relation)?;
        self.check_settings(&options.settings)?;
        self.check_post(post)?;
        Ok(central)
    }

    /// What the central entry adds, or, for a local entry, the error that it builds no
    /// central [`Mechanism`] (its protocol runs in [`crate::pipeline::LocalPlan`]).
    fn central_builder(&self) -> Result<&CentralEntry> {
        self.central().ok_or_else(|| BenchError::NotCentral {
            mechanism: self.name.to_string(),
        })
    }

    /// Build the mechanism. Refuses, before the builder runs, a budget of a kind the entry
    /// does not list, a relation it is not stated for, a setting it does not take
    /// ([`Self::check_settings`]) and a post-processing it does not apply, with errors that
    /// say what to give instead.
    pub fn build(
        &self,
        budget: PrivacyLoss,
        relation: Neighbouring,
        post: PostProcessing,
        options: &BuildOptions,
    ) -> Result<Box<dyn Mechanism>> {
        let central = self.check_build(budget, relation, post, options)?;
        (central.builder)(budget, relation, post, options)
    }

    /// Whether the entry releases workloads of `class`.
    pub fn releases(&self, class: QueryClass) -> bool {
        self.query_classes.list().contains(&class)
    }

    /// `Ok` if the entry releases `class`; otherwise a usage error naming the classes it
    /// does release and the mechanisms that release `class` (checked before any data is
    /// read).
    pub fn check_class(&self, class: QueryClass) -> Result<()> {
        if self.releases(class) {
            return Ok(());
        }
        let mine: Vec<&str> = self.query_classes.list().iter().map(|c| c.key()).collect();
        let others: Vec<&str> = MECHANISMS
            .iter()
            .filter(|s| s.releases(class))
            .map(|s| s.name)
            .collect();
        Err(BenchError::Usage(format!(
            "{} releases {} workloads only, and this workload is of class {class}; mechanisms \
             that release {class} workloads: {}",
            self.name,
            mine.join(", "),
            others.join(", ")
        )))
    }

    /// The mechanism for a workload chosen at run time: the same checks as
    /// [`Self::build`], then `Self::assemble_any`.
    pub fn build_any(
        &self,
        budget: PrivacyLoss,
        relation: Neighbouring,
        post: PostProcessing,
        options: &BuildOptions,
    ) -> Result<Box<dyn Mechanism<AnyWorkload>>> {
        self.check_build(budget, relation, post, options)?;
        self.assemble_any(budget, relation, post, options)
    }

    /// The mechanism for a workload chosen at run time, built once, for a caller that has
    /// made [`Self::build`]'s checks (the release pipeline makes each once, in its own
    /// order): a multi-class entry's own builder; a marginal-only mechanism wrapped so that
    /// it runs over the attributes the workload touches when it enumerates a universe
    /// ([`dp_mechanisms::OnWorkloadAttributes`]) and refuses other classes
    /// ([`dp_mechanisms::ForQueryClasses`]). Crate-private: every caller outside the
    /// pipeline goes through [`Self::build_any`].
    pub(crate) fn assemble_any(
        &self,
        budget: PrivacyLoss,
        relation: Neighbouring,
        post: PostProcessing,
        options: &BuildOptions,
    ) -> Result<Box<dyn Mechanism<AnyWorkload>>> {
        let central = self.central_builder()?;
        match self.query_classes {
            QueryClasses::Several { build, .. } => build(budget, relation, post, options),
            QueryClasses::MarginalsOnly => {
                let marginal = (central.builder)(budget, relation, post, options)?;
                let inner: Box<dyn Mechanism> = if marginal.works_over_a_universe() {
                    Box::new(OnWorkloadAttributes::new(marginal))
                } else {
                    marginal
                };
                Ok(Box::new(ForQueryClasses::marginals_only(inner)))
            }
        }
    }
}

/// The names of the entries that release from exact counts — of the workload's queries or
/// of their counting plan's tables ([`MechanismSpec::reads`]) — e.g. for a refusal of
/// `--stream` that says which mechanisms take it.
pub fn counts_only_names() -> Vec<&'static str> {
    MECHANISMS
        .iter()
        .filter(|s| s.reads.from_counts())
        .map(|s| s.name)
        .collect()
}

/// The catalogue entry called `name`, if any.
pub fn find(name: &str) -> Option<&'static MechanismSpec> {
    MECHANISMS.iter().find(|s| s.name == name)
}

/// The catalogue entry called `name`, or an error listing the names.
pub fn spec(name: &str) -> Result<&'static MechanismSpec> {
    find(name).ok_or_else(|| unknown_mechanism(name))
}

/// The error for a mechanism name that is not in [`MECHANISMS`], listing the names.
pub fn unknown_mechanism(name: &str) -> BenchError {
    let names: Vec<&str> = MECHANISMS.iter().map(|s| s.name).collect();
    BenchError::Usage(format!(
        "unknown mechanism {}; available: {}",
        quoted(name),
        names.join(", ")
    ))
}

/// The `--help` text of a setting: what it is and, for every mechanism that takes it, its
/// default there (from the catalogue, so from the mechanisms' own parameters).
pub fn setting_help(kind: SettingKind) -> String {
    let defaults: Vec<String> = MECHANISMS
        .iter()
        .filter_map(|m| {
            m.setting(kind)
                .map(|s| format!("{} {}{}", m.name, (s.default)(), s.unit))
        })
        .collect();
    format!(
        "Setting: {}. Defaults: {}. Refused by the other mechanisms (see `dpqr mechanisms`).",
        kind.describe(),
        defaults.join("; ")
    )
}

/// The attributes `attrs` (indices in domain order) for a message: their names from
/// `names` joined by `, `, or `#i` for an index without a name.
fn attribute_list(attrs: &[usize], names: Option<&Vec<String>>) -> String {
    attrs
        .iter()
        .map(|&a| match names.and_then(|n| n.get(a)) {
            Some(name) => name.clone(),
            None => format!("#{a}"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// δ at which the audit converts ρ-zCDP guarantees.
const AUDIT_DELTA: f64 = 1e-3;

/// The black-box audit of a mechanism whose noise is one Gaussian draw per count (then
/// post-processing): ρ = 1/8, 100 000 runs (the half-noise canary of the projection
/// family is caught with a wide margin at 100 000 runs, only narrowly at 20 000;
/// measured, docs/privacy.md "Empirical audit").
const AUDIT_GAUSSIAN: AuditSettings = AuditSettings {
    budget: PrivacyLoss::Zcdp { rho: 0.125 },
    delta: AUDIT_DELTA,
    ci_runs: 100_000,
    steps: None,
    audit_kway: 2,
};

/// The audit of a composed mechanism: black-box at `budget` with 20 000 runs, and the
/// per-step audit `steps`.
const fn audit_composed(budget: PrivacyLoss, steps: StepAuditSettings) -> AuditSettings {
    AuditSettings {
        budget,
        delta: AUDIT_DELTA,
        ci_runs: 20_000,
        steps: Some(steps),
        audit_kway: 2,
    }
}

/// A per-step audit at `budget` with 100 000 runs per step.
const fn step_audit(budget: PrivacyLoss, canary: StepCanary) -> StepAuditSettings {
    StepAuditSettings {
        budget,
        ci_runs: 100_000,
        canary,
    }
}

const REPLACE_ONE: &[Neighbouring] = &[Neighbouring::ReplaceOne];
const BOTH_RELATIONS: &[Neighbouring] = &[Neighbouring::ReplaceOne, Neighbouring::AddRemove];
const ZCDP_BUDGETS: &[BudgetKind] = &[BudgetKind::Zcdp, BudgetKind::Approx];
const ZCDP_GUARANTEE: &str = "ρ-zCDP (zero-concentrated differential privacy, Bun and Steinke \
    2016); given --epsilon and --delta it spends the largest ρ whose (ε, δ) conversion fits \
    them (Canonne, Kamath, Steinke 2020) and states both";
const PROJECTION_RELATIONS: &str = "the projection family releases the mean point with the \
    public number of records n (Błasiok, Bun, Nikolov, Steinke 2019, §1.2)";
const ITERATIVE_RELATIONS: &str = "its analysis treats the number of records n as public";
const COVER_UNIVERSE: &str = "domains of at most 2^22 (about 4.2 million) possible records, \
    which it enumerates to build its cover; larger domains are refused before any noise is \
    drawn (use --attributes to keep fewer attributes)";

fn gaussian(
    budget: PrivacyLoss,
    relation: Neighbouring,
    post: PostProcessing,
) -> Result<GaussianMechanism> {
    Ok(GaussianParams::new(budget)
        .neighbouring(relation)
        .post_processing(post)
        .check()?)
}

fn laplace(
    budget: PrivacyLoss,
    relation: Neighbouring,
    post: PostProcessing,
) -> Result<LaplaceMechanism> {
    Ok(LaplaceParams::new(budget)
        .neighbouring(relation)
        .post_processing(post)
        .check()?)
}

fn build_gaussian(
    budget: PrivacyLoss,
    relation: Neighbouring,
    post: PostProcessing,
    _: &BuildOptions,
) -> Result<Box<dyn Mechanism>> {
    Ok(Box::new(gaussian(budget, relation, post)?))
}

fn build_gaussian_any(
    budget: PrivacyLoss,
    relation: Neighbouring,
    post: PostProcessing,
    _: &BuildOptions,
) -> Result<Box<dyn Mechanism<AnyWorkload>>> {
    Ok(Box::new(gaussian(budget, relation, post)?))
}

fn build_laplace(
    budget: PrivacyLoss,
    relation: Neighbouring,
    post: PostProcessing,
    _: &BuildOptions,
) -> Result<Box<dyn Mechanism>> {
    Ok(Box::new(laplace(budget, relation, post)?))
}

fn build_laplace_any(
    budget: PrivacyLoss,
    relation: Neighbouring,
    post: PostProcessing,
    _: &BuildOptions,
) -> Result<Box<dyn Mechanism<AnyWorkload>>> {
    Ok(Box::new(laplace(budget, relation, post)?))
}

/// The projection family's solver and universe settings: the bench's
/// [`BuildOptions::projection_settings`] (or the defaults), with `--tolerance` and
/// `--max-iterations` applied, and [`BuildOptions::progress`] as the solver's reporter (its
/// iterations against the cap; the chaining mechanisms' levels too).
fn projection_settings(options: &BuildOptions) -> ProjectionSettings {
    let mut p = options.projection_settings.clone().unwrap_or_default();
    p.frank_wolfe.progress = options.progress.clone();
    if let Some(t) = options.settings.tolerance {
        p.frank_wolfe.relative_gap_tolerance = t;
    }
    if let Some(m) = options.settings.max_iterations {
        p.frank_wolfe.max_iterations = m;
    }
    p
}

fn build_projection(
    budget: PrivacyLoss,
    relation: Neighbouring,
    _: PostProcessing,
    options: &BuildOptions,
) -> Result<Box<dyn Mechanism>> {
    Ok(Box::new(
        ProjectionParams::new(budget)
            .neighbouring(relation)
            .settings(projection_settings(options))
            .check()?,
    ))
}

/// A builder for a cover-based mechanism of the projection family: its params with the
/// relation, the solver settings and `--alpha` (the two differ only in their params type).
macro_rules! cover_builder {
    ($name:ident, $params:ty) => {
        fn $name(
            budget: PrivacyLoss,
            relation: Neighbouring,
            _: PostProcessing,
            options: &BuildOptions,
        ) -> Result<Box<dyn Mechanism>> {
            let mut p = <$params>::new(budget)
                .neighbouring(relation)
                .settings(projection_settings(options));
            if let Some(a) = options.settings.alpha {
                p = p.alpha(a);
            }
            Ok(Box::new(p.check()?))
        }
    };
}

cover_builder!(build_coarse_projection, CoarseProjectionParams);
cover_builder!(build_chaining, ChainingParams);

fn build_chaining_worst_case(
    budget: PrivacyLoss,
    relation: Neighbouring,
    _: PostProcessing,
    options: &BuildOptions,
) -> Result<Box<dyn Mechanism>> {
    let mut p = ChainingWorstCaseParams::new(budget).neighbouring(relation);
    if let Some(t) = options.settings.rounds {
        p = p.rounds(t);
    }
    if let Some(a) = options.settings.alpha {
        p = p.alpha(a);
    }
    // the decomposition and every level's rounds report here (public counts only)
    p.settings.frank_wolfe.progress = options.progress.clone();
    Ok(Box::new(p.check()?))
}

fn build_adaptive_projection(
    budget: PrivacyLoss,
    relation: Neighbouring,
    _: PostProcessing,
    options: &BuildOptions,
) -> Result<Box<dyn Mechanism>> {
    let mut p = AdaptiveProjectionParams::new(budget).neighbouring(relation);
    if let Some(t) = options.settings.rounds {
        // a T the user fixes is fixed: at a low budget too
        p.rounds_per_attribute = t;
        p.low_budget_rounds_per_attribute = t;
    }
    if let Some(bytes) = options.memory_bytes {
        p = p.within_memory(bytes);
    }
    if let Some(stop) = &options.stop {
        p = p.stop_on(stop.clone());
    }
    if options.round_progress.is_some() || options.progress.is_some() {
        let (line, rho) = (options.round_progress.clone(), p.check()?.rho());
        let (sink, names) = (
            options.progress.clone(),
            Arc::clone(&options.attribute_names),
        );
        p = p.progress(Arc::new(move |r: &AdaptiveRound| {
            // the rounds end when the budget is spent: the share of ρ spent (public, a
            // function of the plan and of released noisy measurements) is the progress
            if let Some(s) = &sink {
                let permille = (1000.0 * r.rho_spent / rho).round().clamp(0.0, 1000.0);
                s.0.report(
                    "adaptive-projection: budget spent (‰)",
                    permille as u64,
                    1000,
                );
            }
            let Some(f) = &line else { return };
            f(format!(
                "round {}: measured {} (σ = {:.1}), ρ spent {:.4} of {:.4}{}",
                r.round,
                attribute_list(&r.selected, names.get()),
                r.sigma2.sqrt(),
                r.rho_spent,
                rho,
                if r.annealed { ", annealed" } else { "" }
            ))
        }));
    }
    Ok(Box::new(p.check()?))
}

/// The iterative mechanisms take no relation: the catalogue admits replace-one only, and
/// this refuses anything else in case a builder is called directly.
fn replace_one_only(name: &'static str, relation: Neighbouring) -> Result<()> {
    if relation == Neighbouring::ReplaceOne {
        return Ok(());
    }
    Err(BenchError::ReplaceOneOnly { mechanism: name })
}

fn build_mwem(
    budget: PrivacyLoss,
    relation: Neighbouring,
    _: PostProcessing,
    options: &BuildOptions,
) -> Result<Box<dyn Mechanism>> {
    replace_one_only("mwem", relation)?;
    let mut p = MwemParams::new(budget);
    if let Some(t) = options.settings.rounds {
        p = p.rounds(t);
    }
    if let Some(sink) = &options.progress {
        p = p.progress(sink.clone());
    }
    Ok(Box::new(p.check()?))
}

fn build_ic_mw(
    budget: PrivacyLoss,
    relation: Neighbouring,
    _: PostProcessing,
    options: &BuildOptions,
) -> Result<Box<dyn Mechanism>> {
    replace_one_only("ic-mw", relation)?;
    let mut p = IcParams::new(budget);
    if let Some(a) = options.settings.alpha {
        p = p.alpha(a);
    }
    if let Some(sink) = &options.progress {
        p = p.progress(sink.clone());
    }
    Ok(Box::new(p.check()?))
}

fn build_dualquery(
    budget: PrivacyLoss,
    relation: Neighbouring,
    _: PostProcessing,
    options: &BuildOptions,
) -> Result<Box<dyn Mechanism>> {
    Ok(Box::new(dualquery(budget, relation, options)?))
}

/// DualQuery with the command line's settings and progress.
fn dualquery(
    budget: PrivacyLoss,
    relation: Neighbouring,
    options: &BuildOptions,
) -> Result<DualQuery> {
    replace_one_only("dualquery", relation)?;
    let s = &options.settings;
    let mut p = DualQueryParams::new(budget);
    if let Some(t) = s.rounds {
        p = p.rounds(t);
    }
    if let Some(eta) = s.eta {
        p = p.eta(eta);
    }
    if let Some(samples) = s.samples {
        p = p.samples(samples);
    }
    if let Some(o) = s.oracle {
        p = p.oracle(o);
    }
    if let Some(sink) = &options.progress {
        p = p.progress(sink.clone());
    }
    Ok(p.check()?)
}

fn build_dualquery_any(
    budget: PrivacyLoss,
    relation: Neighbouring,
    _: PostProcessing,
    options: &BuildOptions,
) -> Result<Box<dyn Mechanism<AnyWorkload>>> {
    Ok(Box::new(dualquery(budget, relation, options)?))
}

/// A budget for reading the mechanisms' default parameters (the defaults do not depend on
/// it; nothing is built with it).
const ANY_BUDGET: PrivacyLoss = PrivacyLoss::Zcdp { rho: 1.0 };

/// The Frank–Wolfe settings every entry of the projection family accepts.
const SOLVER_SETTINGS: [SettingSpec; 2] = [
    SettingSpec {
        kind: SettingKind::Tolerance,
        meaning: "relative duality-gap tolerance of the projection (Frank–Wolfe, Wolfe's \
            minimum-norm-point algorithm): it stops once the gap is below this fraction of \
            the starting distance",
        default: || {
            SettingValue::Real(
                ProjectionSettings::default()
                    .frank_wolfe
                    .relative_gap_tolerance,
            )
        },
        unit: "",
    },
    SettingSpec {
        kind: SettingKind::MaxIterations,
        meaning: "cap on the projection's major cycles (one atom added each); hitting it is \
            reported in the notes with the gap reached, not an error",
        default: || SettingValue::Count(ProjectionSettings::default().frank_wolfe.max_iterations),
        unit: "",
    },
];

/// DualQuery's default rounds, in words, with its cap `DualQueryParams::DEFAULT_MAX_ROUNDS`.
fn dualquery_rounds() -> SettingValue {
    static WORDS: OnceLock<String> = OnceLock::new();
    SettingValue::Derived(WORDS.get_or_init(|| {
        format!(
            "the largest T within the budget for the data's n, at most {}",
            DualQueryParams::DEFAULT_MAX_ROUNDS
        )
    }))
}

/// `--alpha` of the cover-based mechanisms.
const COVER_ALPHA: SettingSpec = SettingSpec {
    kind: SettingKind::Alpha,
    meaning: "target error α of the cover (records rounded to points at most α/2 apart); a \
        smaller α is a finer cover, slower to build",
    default: || {
        SettingValue::Derived(
            "the projection mechanism's error bound for the universe, n and ρ (Błasiok, Bun, \
             Nikolov, Steinke 2019, Lemma 2.2)",
        )
    },
    unit: "",
};

fn build_relaxed_projection(
    budget: PrivacyLoss,
    relation: Neighbouring,
    post: PostProcessing,
    options: &BuildOptions,
) -> Result<Box<dyn Mechanism>> {
    replace_one_only("relaxed-projection", relation)?;
    let mut settings = RelaxedSettings::default();
    if let Some(m) = options.settings.max_iterations {
        settings.max_iterations = m;
    }
    let inner = Box::new(OneHotEncoded::new(
        RelaxedProjectionParams::new(budget)
            .settings(settings)
            .check()?,
    ));
    // its answers need not be tables of proportions (issue #26 item 5): --post simplex
    // projects each table onto them
    Ok(match post {
        PostProcessing::None => inner,
        post => Box::new(PostProcessed::new(inner, post)),
    })
}

fn build_boosting(
    budget: PrivacyLoss,
    relation: Neighbouring,
    _: PostProcessing,
    options: &BuildOptions,
) -> Result<Box<dyn Mechanism>> {
    replace_one_only("boosting", relation)?;
    let mut settings = BoostingSettings::default();
    if let Some(t) = options.settings.rounds {
        settings.rounds = t;
    }
    if let Some(m) = options.settings.max_iterations {
        settings.projection.max_iterations = m;
    }
    if let Some(bytes) = options.memory_bytes {
        settings.max_memory_mib = (bytes >> 20).max(1);
    }
    Ok(Box::new(OneHotEncoded::new(
        BoostingParams::new(budget).settings(settings).check()?,
    )))
}

fn polynomial(
    budget: PrivacyLoss,
    relation: Neighbouring,
    options: &BuildOptions,
) -> Result<PolynomialMechanism> {
    replace_one_only("polynomial", relation)?;
    let mut p = PolynomialParams::new(budget);
    if let Some(a) = options.settings.alpha {
        p.approximation = PolynomialApproximation::Chebyshev { alpha: a };
    }
    if let Some(bytes) = options.memory_bytes {
        p.max_memory_mib = (bytes >> 20).max(1);
    }
    p.progress = options.progress.clone();
    Ok(p.check()?)
}

fn build_polynomial(
    budget: PrivacyLoss,
    relation: Neighbouring,
    _: PostProcessing,
    options: &BuildOptions,
) -> Result<Box<dyn Mechanism>> {
    Ok(Box::new(polynomial(budget, relation, options)?))
}

fn build_polynomial_any(
    budget: PrivacyLoss,
    relation: Neighbouring,
    _: PostProcessing,
    options: &BuildOptions,
) -> Result<Box<dyn Mechanism<AnyWorkload>>> {
    Ok(Box::new(polynomial(budget, relation, options)?))
}

/// The guarantee of every local-model entry, in plain words.
const LOCAL_GUARANTEE: &str = "local ε-DP (any two inputs of one client): all of a client's \
    messages together are ε-differentially private in its own record, whatever the server and \
    the other clients do";

/// Where every local-model entry is the wrong choice.
const LOCAL_WRONG_CHOICE: &str = "each client need not randomize its own record: with a trusted curator the central mechanisms are far more accurate at the same ε (docs/benchmarks.md, \"Local model\")";

/// Every mechanism the `dpqr` program, the bench and the audit can run: the central-model
/// entries, then the local-model ones ([`Model::Local`]; the audit runs the central ones).
///
/// Step-audit budgets (per-step ε ≈ 1 at n = 20, see docs/privacy.md "Empirical audit"):
/// MWEM pure ε = 30 (T = 15 rounds of ε/(2T) = 1 per selection and per measurement);
/// chaining-worst-case ρ = 3.75 (T = 15, one non-trivial level: selection ε₁ = 2√(ρ/T) = 1,
/// measurement ρ/(2T) = 0.125, the Gaussian baseline's audited ρ); IC-MW pure ε = 46
/// (α = 1, B(α/2) = 23 rounds of two ε₀ = 1 steps); DualQuery pure ε = 651 (η = 0.4,
/// s = 50: T = 26 rounds, the last round's per-sample ε = 2η(T − 1)/n = 1);
/// adaptive-projection ρ = 4.5 (d = 2 attributes, T = 32: the first measurement
/// ρ = 0.9·4.5/32 ≈ 0.127, the Gaussian baseline's audited ρ, σ² ≈ 7.9 on a replace-one
/// table, and the first selection ε = √(8·0.1·4.5/32) ≈ 0.34).
pub static MECHANISMS: &[MechanismSpec] = &[
    MechanismSpec {
        name: "gaussian",
        description: "Gaussian answer perturbation: exact discrete Gaussian noise on every \
            count of every marginal (sampler of Canonne, Kamath, Steinke 2020), answers \
            divided by n",
        guarantee: ZCDP_GUARANTEE,
        budgets: ZCDP_BUDGETS,
        model: Model::Central(CentralEntry {
            relations: BOTH_RELATIONS,
            relations_note: "under add/remove the answers are divided by the noisy total",
            builder: build_gaussian,
            audit: AUDIT_GAUSSIAN,
        }),
        synthetic: false,
        reads: Reads::WorkloadCounts,
        post_processing: true,
        universe: "any domain: noise goes on the cells of the asked marginals only; the \
            number of cells is bounded by --max-memory-mib",
        wrong_choice: "the workload is marginal tables and the budget is zCDP or (ε, δ): \
            adaptive-projection has the lower mean table ℓ1 on 29 of 30 real-table rows \
            (docs/benchmarks.md); marginal tables without --post simplex, where the noise can \
            put a table farther from the truth than the uniform table (adult 3-way: mean table \
            ℓ1 28.7; a warning says so); a pure ε budget (use laplace)",
        query_classes: QueryClasses::Several {
            classes: &QueryClass::ALL,
            build: build_gaussian_any,
        },
        settings: &[],
    },
    MechanismSpec {
        name: "laplace",
        description: "Laplace answer perturbation: exact discrete Laplace noise on every \
            count of every marginal (the geometric mechanism of Ghosh, Roughgarden, \
            Sundararajan 2009), answers divided by n",
        guarantee: "pure ε-differential privacy (Dwork, McSherry, Nissim, Smith 2006)",
        budgets: &[BudgetKind::Pure],
        model: Model::Central(CentralEntry {
            relations: BOTH_RELATIONS,
            relations_note: "under add/remove the answers are divided by the noisy total",
            builder: build_laplace,
            audit: AuditSettings {
                budget: PrivacyLoss::Pure { epsilon: 1.0 },
                ..AUDIT_GAUSSIAN
            },
        }),
        synthetic: false,
        reads: Reads::WorkloadCounts,
        post_processing: true,
        universe: "any domain: noise goes on the cells of the asked marginals only; the \
            number of cells is bounded by --max-memory-mib",
        wrong_choice: "the budget can have a δ or be zCDP: the Gaussian baseline's error is 3–6× \
            smaller on adult (its ℓ2 sensitivity grows as √(2m), Laplace's ℓ1 sensitivity as \
            2m); marginal tables without --post simplex",
        query_classes: QueryClasses::Several {
            classes: &QueryClass::ALL,
            build: build_laplace_any,
        },
        settings: &[],
    },
    MechanismSpec {
        name: "projection",
        description: "projection mechanism (Błasiok, Bun, Nikolov, Steinke 2019, Lemma 2.2): \
            discrete Gaussian noise on all answers, then a Frank–Wolfe projection onto the \
            answers that some weighted set of records could have",
        guarantee: ZCDP_GUARANTEE,
        budgets: ZCDP_BUDGETS,
        model: Model::Central(CentralEntry {
            relations: REPLACE_ONE,
            relations_note: PROJECTION_RELATIONS,
            builder: build_projection,
            audit: AUDIT_GAUSSIAN,
        }),
        synthetic: true,
        reads: Reads::WorkloadCounts,
        post_processing: false,
        universe: "any domain: it enumerates the possible records when there are at most \
            2^22 (about 4.2 million); above that it searches over records with an oracle \
            that is exact on a few attributes and a heuristic on wide tables (the notes say \
            which)",
        wrong_choice: "the domain is wide or the budget large: beyond 2^22 possible records it \
            searches heuristically, and a release takes minutes on adult; on adult all 2-way and \
            W64 at ε = 1 adaptive-projection is more accurate (mean table ℓ1 0.095 and 0.222 \
            against 0.138 and 0.346); the relation must be add/remove",
        query_classes: QueryClasses::MarginalsOnly,
        settings: &SOLVER_SETTINGS,
    },
    MechanismSpec {
        name: "coarse-projection",
        description: "coarse projection (Błasiok, Bun, Nikolov, Steinke 2019, §4.1): records \
            rounded to a coarse cover of the answer space, Gaussian noise, projection onto \
            the cover's hull",
        guarantee: ZCDP_GUARANTEE,
        budgets: ZCDP_BUDGETS,
        model: Model::Central(CentralEntry {
            relations: REPLACE_ONE,
            relations_note: PROJECTION_RELATIONS,
            builder: build_coarse_projection,
            audit: AUDIT_GAUSSIAN,
        }),
        synthetic: true,
        reads: Reads::Tables(UNIVERSE_HISTOGRAM),
        post_processing: false,
        universe: COVER_UNIVERSE,
        wrong_choice: "the domain is not small: it builds a cover of all possible records and \
            counts the full table over them; on real tables adaptive-projection is the practical \
            choice; the relation must be add/remove",
        query_classes: QueryClasses::MarginalsOnly,
        settings: &[COVER_ALPHA, SOLVER_SETTINGS[0], SOLVER_SETTINGS[1]],
    },
    MechanismSpec {
        name: "chaining",
        description: "chaining for average error (Błasiok, Bun, Nikolov, Steinke 2019, \
            §4.2): the answer space split into levels of finer and finer covers, Gaussian \
            noise on each level's increments, the budget shared by the levels that need it",
        guarantee: ZCDP_GUARANTEE,
        budgets: ZCDP_BUDGETS,
        model: Model::Central(CentralEntry {
            relations: REPLACE_ONE,
            relations_note: PROJECTION_RELATIONS,
            builder: build_chaining,
            audit: AUDIT_GAUSSIAN,
        }),
        synthetic: false,
        reads: Reads::Tables(UNIVERSE_HISTOGRAM),
        post_processing: false,
        universe: COVER_UNIVERSE,
        wrong_choice: "the domain is not small (covers of all possible records); synthetic data \
            is wanted; on real tables adaptive-projection is the practical choice; the relation must be \
            add/remove",
        query_classes: QueryClasses::MarginalsOnly,
        settings: &[
            SettingSpec {
                kind: SettingKind::Alpha,
                meaning: "target error α: k = ⌈log₂(2/α)⌉ levels of covers (never more than \
                    the exact decomposition needs), accepting a bias of at most 2^(−k) from \
                    the remainder",
                default: || {
                    SettingValue::Derived(
                        "the exact decomposition: as many levels as separate every answer \
                         vector, no remainder",
                    )
                },
                unit: "",
            },
            SOLVER_SETTINGS[0],
            SOLVER_SETTINGS[1],
        ],
    },
    MechanismSpec {
        name: "chaining-worst-case",
        description: "chaining for worst-case error (Błasiok, Bun, Nikolov, Steinke 2019, \
            §4.3, Thm 1.5): levels of covers in the largest-error distance, private \
            multiplicative weights (MWEM-style rounds) on each level that needs it",
        guarantee: ZCDP_GUARANTEE,
        budgets: ZCDP_BUDGETS,
        model: Model::Central(CentralEntry {
            relations: REPLACE_ONE,
            relations_note: PROJECTION_RELATIONS,
            builder: build_chaining_worst_case,
            audit: audit_composed(
                PrivacyLoss::Zcdp { rho: 0.125 },
                step_audit(PrivacyLoss::Zcdp { rho: 3.75 }, StepCanary::ScaledBudget),
            ),
        }),
        synthetic: false,
        reads: Reads::WorkloadCounts,
        post_processing: false,
        universe: COVER_UNIVERSE,
        wrong_choice: "the average error matters more than the largest (it targets worst-case \
            error); the domain is not small (covers of all possible records); synthetic data is \
            wanted; the relation must be add/remove",
        query_classes: QueryClasses::MarginalsOnly,
        settings: &[
            SettingSpec {
                kind: SettingKind::Rounds,
                meaning: "rounds of private multiplicative weights on each level that needs \
                    them (each level's budget is shared by its rounds)",
                default: || SettingValue::Count(ChainingWorstCaseParams::new(ANY_BUDGET).rounds),
                unit: " per level",
            },
            SettingSpec {
                kind: SettingKind::Alpha,
                meaning: "target error α: sets the number of levels k = ⌈log₂(2/α)⌉",
                default: || {
                    SettingValue::Derived(
                        "the projection mechanism's error bound for the universe, n and ρ",
                    )
                },
                unit: "",
            },
        ],
    },
    MechanismSpec {
        name: "adaptive-projection",
        description: "adaptive projection: rounds that pick the worst-fitted marginal with \
            the exponential mechanism (McSherry, Talwar 2007), measure it with discrete \
            Gaussian noise and re-fit a graphical model to all measurements (Roth 2011's \
            iterative construction with the estimation of McKenna, Sheldon, Miklau 2019, in \
            rounds like AIM, McKenna et al. 2022)",
        guarantee: ZCDP_GUARANTEE,
        budgets: ZCDP_BUDGETS,
        model: Model::Central(CentralEntry {
            relations: BOTH_RELATIONS,
            relations_note: "under add/remove the number of records is private and is not \
                released",
            builder: build_adaptive_projection,
            audit: audit_composed(
                PrivacyLoss::Zcdp { rho: 0.125 },
                step_audit(PrivacyLoss::Zcdp { rho: 4.5 }, StepCanary::ScaledBudget),
            ),
        }),
        synthetic: true,
        reads: Reads::WorkloadCounts,
        post_processing: false,
        universe: "any domain size: it never enumerates the records; the graphical model \
            it fits is bounded by --max-memory-mib",
        wrong_choice: "the budget is pure ε (it needs Gaussian noise: give --rho, or --epsilon \
            with --delta); the workload is not marginal tables; the largest cell error matters \
            most (its max error is above the Gaussian baseline's on 21 of 30 real-table rows, \
            docs/benchmarks.md); the release must take seconds (minutes on adult at ε ≥ 1, \
            against under a second for the baseline)",
        query_classes: QueryClasses::MarginalsOnly,
        settings: &[SettingSpec {
            kind: SettingKind::Rounds,
            meaning: "rounds per workload attribute: the planned number of rounds is this \
                times the number of attributes the workload touches, which sets each round's \
                share of the budget (rounds end early when the budget is spent); at least 10, \
                so that the 1-way tables, the direct measurements and the checks leave budget \
                for the rounds. Unset, it is 16, and 12 when the release finds the budget low \
                (docs/mechanisms/adaptive.md, \"A low budget\"); set, it holds at any budget",
            default: || {
                SettingValue::Count(AdaptiveProjectionParams::new(ANY_BUDGET).rounds_per_attribute)
            },
            unit: " per workload attribute",
        }],
    },
    MechanismSpec {
        name: "mwem",
        description: "MWEM (Hardt, Ligett, McSherry 2012): rounds that pick a badly answered \
            query with the exponential mechanism, measure it with noise and update a \
            distribution over all possible records by multiplicative weights",
        guarantee: "pure ε-DP with --epsilon alone (Laplace measurements); ρ-zCDP with \
            --rho, or with --epsilon and --delta converted to the largest ρ that fits them \
            (Gaussian measurements)",
        budgets: &[BudgetKind::Pure, BudgetKind::Approx, BudgetKind::Zcdp],
        model: Model::Central(CentralEntry {
            relations: REPLACE_ONE,
            relations_note: ITERATIVE_RELATIONS,
            builder: build_mwem,
            audit: audit_composed(
                PrivacyLoss::Pure { epsilon: 1.0 },
                step_audit(
                    PrivacyLoss::Pure { epsilon: 30.0 },
                    StepCanary::ScaledBudget,
                ),
            ),
        }),
        synthetic: true,
        reads: Reads::WorkloadCounts,
        post_processing: false,
        universe: "domains of at most 2^22 (about 4.2 million) possible records: it keeps a \
            weight for each; larger domains are refused before any noise is drawn (use \
            --attributes to keep fewer attributes)",
        wrong_choice: "the domain has more than 2^22 possible records (refused), and most real \
            workloads: on an 8-attribute adult subset its max error is about 0.08 at every ε, \
            against 0.0023–0.0005 for the Gaussian baseline; the relation must be add/remove",
        query_classes: QueryClasses::MarginalsOnly,
        settings: &[SettingSpec {
            kind: SettingKind::Rounds,
            meaning: "rounds T, each a selection and a measurement of ε/(2T) (or ρ/(2T)); more \
                rounds measure more queries with more noise each",
            default: || SettingValue::Count(MwemParams::DEFAULT_ROUNDS),
            unit: "",
        }],
    },
    MechanismSpec {
        name: "ic-mw",
        description: "Iterative Construction (Roth 2011): multiplicative weights over all \
            possible records, corrected where the exponential mechanism finds a query it \
            answers badly",
        guarantee: "pure ε-DP with --epsilon alone (basic composition); (ε, δ)-DP with \
            --epsilon and --delta (advanced composition)",
        budgets: &[BudgetKind::Pure, BudgetKind::Approx],
        model: Model::Central(CentralEntry {
            relations: REPLACE_ONE,
            relations_note: ITERATIVE_RELATIONS,
            builder: build_ic_mw,
            audit: audit_composed(
                PrivacyLoss::Pure { epsilon: 1.0 },
                step_audit(
                    PrivacyLoss::Pure { epsilon: 46.0 },
                    StepCanary::ScaledBudget,
                ),
            ),
        }),
        synthetic: true,
        reads: Reads::WorkloadCounts,
        post_processing: false,
        universe: "domains of at most 2^22 (about 4.2 million) possible records: it keeps a \
            weight for each; larger domains are refused before any noise is drawn (use \
            --attributes to keep fewer attributes)",
        wrong_choice: "the domain has more than 2^22 possible records (refused); accuracy in \
            practice matters (it is a construction for the theory's worst-case bound; the \
            Gaussian baseline or adaptive-projection do better on real tables); the relation must be \
            add/remove",
        query_classes: QueryClasses::MarginalsOnly,
        settings: &[SettingSpec {
            kind: SettingKind::Alpha,
            meaning: "target error α: it runs B(α/2) rounds of multiplicative weights (Roth \
                2011), so a smaller α means more rounds, each with less budget",
            default: || {
                SettingValue::Derived(
                    "the smallest α whose accuracy statement holds for the budget (Roth 2011, \
                     Thm 5)",
                )
            },
            unit: "",
        }],
    },
    MechanismSpec {
        name: "dualquery",
        description: "DualQuery (Gaboardi, Gallego Arias, Hsu, Roth, Wu 2014): a game between \
            a query player, who samples queries by multiplicative weights, and a record \
            player, who answers with its best record; the records are the synthetic data",
        guarantee: "pure ε-DP with --epsilon alone (Gaboardi et al. 2014, Thm 4.2); (ε, δ)-DP \
            with --epsilon and --delta (Thm 4.3, advanced composition)",
        budgets: &[BudgetKind::Pure, BudgetKind::Approx],
        model: Model::Central(CentralEntry {
            relations: REPLACE_ONE,
            relations_note: ITERATIVE_RELATIONS,
            builder: build_dualquery,
            audit: audit_composed(
                PrivacyLoss::Pure { epsilon: 1.0 },
                step_audit(
                    PrivacyLoss::Pure { epsilon: 651.0 },
                    StepCanary::DualQueryStepSize,
                ),
            ),
        }),
        synthetic: true,
        reads: Reads::WorkloadCounts,
        post_processing: false,
        universe: "any domain size: each round's best record is searched over the \
            attributes the sampled queries mention (exhaustively up to 2^22 combinations, \
            otherwise with a heuristic solver)",
        wrong_choice: "the workload is small or dense: the Gaussian baseline beats it on a 10 \
            428-query adult subset, and on random one-hot conjunctions its mean error is no \
            better than answering 0; the relation must be add/remove",
        query_classes: QueryClasses::Several {
            classes: &[
                QueryClass::Marginals,
                QueryClass::Conjunctions,
                QueryClass::Parities,
            ],
            build: build_dualquery_any,
        },
        settings: &[
            SettingSpec {
                kind: SettingKind::Rounds,
                meaning: "rounds T; a fixed T that would spend more than the budget on the \
                    data's n records is refused",
                default: dualquery_rounds,
                unit: "",
            },
            SettingSpec {
                kind: SettingKind::Eta,
                meaning: "step size η of the query player's multiplicative weights; each \
                    query sample of round t costs ε = 2η(t − 1)/n",
                default: || SettingValue::Real(DEFAULT_ETA),
                unit: "",
            },
            SettingSpec {
                kind: SettingKind::Samples,
                meaning: "query samples s per round: the record player answers their sum",
                default: || SettingValue::Count(DualQueryParams::DEFAULT_SAMPLES),
                unit: " per round",
            },
            SettingSpec {
                kind: SettingKind::Oracle,
                meaning: "the record player's best-response solver: auto (exhaustive when the \
                    sampled queries' attributes have at most 2^22 combinations, the MAX-CSP \
                    heuristic otherwise), exhaustive, maxcsp, or ilp (integer programming, \
                    exact on conjunctions)",
                default: || SettingValue::Oracle(OracleChoice::default()),
                unit: "",
            },
        ],
    },
    MechanismSpec {
        name: "polynomial",
        description: "polynomial release (Thaler, Ullman, Vadhan 2012): each record's answers \
    to every conjunction, disjunction or k-of-ℓ threshold are a low-degree polynomial (a \
    Chebyshev approximation of OR, or a minimax polynomial of the threshold), and so is a \
    decision list's output at every point (a database of decision lists); the summed \
    coefficients get exact discrete Laplace or \
    Gaussian noise, and any query of the class is answered from them",
        guarantee: "pure ε-differential privacy with --epsilon alone (Laplace noise), or \
    ρ-zCDP with --rho or --epsilon and --delta (Gaussian noise)",
        budgets: &[BudgetKind::Pure, BudgetKind::Zcdp, BudgetKind::Approx],
        model: Model::Central(CentralEntry {
            relations: REPLACE_ONE,
            relations_note: "the answers are divided by the public number of records n",
            builder: build_polynomial,
            audit: AuditSettings {
                budget: PrivacyLoss::Pure { epsilon: 1.0 },
                audit_kway: 1,
                ..AUDIT_GAUSSIAN
            },
        }),
        synthetic: false,
        reads: Reads::Tables(POLYNOMIAL_TABLES),
        post_processing: false,
        universe: "any domain: it never enumerates records; the coefficient vector (sets of \
    up to the degree of one-hot literals) is bounded by --max-memory-mib, stated \
    before it is allocated",
        wrong_choice: "almost always: on every workload measured (docs/benchmarks.md, \"Polynomial release\"): \
            the Gaussian baseline is 2–5× more accurate on marginals and far more on thresholds; \
            its advantage needs wider queries and more attributes than the bundled tables have; \
            the relation must be add/remove",
        query_classes: QueryClasses::Several {
            classes: &[
                QueryClass::Marginals,
                QueryClass::Conjunctions,
                QueryClass::Disjunctions,
                QueryClass::Thresholds,
                QueryClass::DecisionLists,
            ],
            build: build_polynomial_any,
        },
        settings: &[SettingSpec {
            kind: SettingKind::Alpha,
            meaning: "the certified error α of the approximation of OR (or of each k-of-ℓ \
        threshold, or of every decision list's output): a smaller α needs a higher degree (for OR about √(width/2)·ln(2/α)), \
        so more coefficients, each with more noise",
            default: || match PolynomialParams::new(ANY_BUDGET).approximation {
                PolynomialApproximation::Chebyshev { alpha } => SettingValue::Real(alpha),
                _ => SettingValue::Derived("exact (degree = the widest query)"),
            },
            unit: "",
        }],
    },
    MechanismSpec {
        name: "relaxed-projection",
        description: "relaxed projection (Dwork, Nikolov, Talwar 2015): the parities a binary \
            marginal workload needs are measured once with discrete Gaussian noise, projected \
            by Frank–Wolfe onto a Grothendieck (semidefinite) relaxation of the records' \
            parity vectors, and read back as marginals",
        guarantee: ZCDP_GUARANTEE,
        budgets: ZCDP_BUDGETS,
        model: Model::Central(CentralEntry {
            relations: REPLACE_ONE,
            relations_note: "its analysis treats the number of records n as public",
            builder: build_relaxed_projection,
            audit: AuditSettings {
                ci_runs: 20_000,
                audit_kway: 1,
                ..AUDIT_GAUSSIAN
            },
        }),
        synthetic: false,
        reads: Reads::WorkloadCounts,
        post_processing: true,
        universe: "binary attributes; categorical ones are one-hot encoded (each table \
            becomes one bit table per combination of its non-binary attributes' values, at \
            most 2^20 of them; on such tables it is far less accurate than the Gaussian \
            baseline, see docs/mechanisms/relaxed-projection.md); it never enumerates records, \
            its cost grows with the number of parities of degree at most the workload's width",
        wrong_choice: "the attributes are not binary: through the one-hot encoding its answers \
            are far from tables of proportions (adult all 2-way at ε = 1: mean table ℓ1 19.1, \
            against 0.23 for the Gaussian baseline with simplex and 1.53 for the uniform table); \
            use it on binary tables with few attributes (nltcs), always with --post simplex \
            otherwise, or choose adaptive-projection; the relation must be add/remove",
        query_classes: QueryClasses::MarginalsOnly,
        settings: &[SettingSpec {
            kind: SettingKind::MaxIterations,
            meaning: "cap on the Frank–Wolfe steps onto the relaxation (each one Grothendieck \
                solve); the certified gap reached is reported in the notes",
            default: || SettingValue::Count(RelaxedSettings::default().max_iterations),
            unit: "",
        }],
    },
    MechanismSpec {
        name: "boosting",
        description: "boosting for queries (Dwork, Rothblum, Vadhan 2010) over the relaxed \
            projection, for worst-case error (Dwork, Nikolov, Talwar 2015, section 5): each \
            round privately samples parities from a distribution that favours the badly \
            answered ones, measures the sample with discrete Gaussian noise and projects it \
            onto the Grothendieck relaxation; each answer is the median over the rounds",
        guarantee: ZCDP_GUARANTEE,
        budgets: ZCDP_BUDGETS,
        model: Model::Central(CentralEntry {
            relations: REPLACE_ONE,
            relations_note: "its analysis treats the number of records n as public",
            builder: build_boosting,
            audit: AuditSettings {
                audit_kway: 1,
                ..audit_composed(
                    PrivacyLoss::Zcdp { rho: 0.125 },
                    step_audit(
                        PrivacyLoss::Zcdp {
                            rho: 0.125 * 9.0 / 0.7,
                        },
                        StepCanary::ScaledBudget,
                    ),
                )
            },
        }),
        synthetic: false,
        reads: Reads::WorkloadCounts,
        post_processing: false,
        universe: "binary attributes; categorical ones are one-hot encoded as for the \
            relaxed projection; it never enumerates records, its cost grows with the number of \
            parities of degree at most the workload's width times the rounds",
        wrong_choice: "almost always: on every table measured it loses to the Gaussian baseline by 2–20× in \
            max error on binary tables, and its error hardly falls with ε (docs/benchmarks.md, \
            \"Relaxed projection and boosting\"); minutes per release on adult; the relation must be \
            add/remove",
        query_classes: QueryClasses::MarginalsOnly,
        settings: &[
            SettingSpec {
                kind: SettingKind::Rounds,
                meaning: "boosting rounds T: each samples queries and runs the base generator \
                    on them with its share (1 − 0.3)·ρ/T of the budget",
                default: || SettingValue::Count(BoostingSettings::default().rounds),
                unit: "",
            },
            SettingSpec {
                kind: SettingKind::MaxIterations,
                meaning: "cap on the Frank–Wolfe steps of the base generator in each round",
                default: || {
                    SettingValue::Count(BoostingSettings::default().projection.max_iterations)
                },
                unit: " per round",
            },
        ],
    },
    MechanismSpec {
        name: "local-projection",
        description: "Local projection (Błasiok, Bun, Nikolov, Steinke 2019, Theorem 5.1): every \
                      client sends one randomly chosen table of its record's answer vector through \
                      the local point release of Duchi, Jordan, Wainwright 2018 (constants derived \
                      for every ε); the server averages and projects onto the hull of all records' \
                      answer vectors.",
        guarantee: LOCAL_GUARANTEE,
        budgets: &[BudgetKind::Pure],
        model: Model::Local(dp_local::LocalMechanismKind::Projection),
        synthetic: false,
        reads: Reads::Records,
        post_processing: false,
        universe: "the attributes the workload touches must span at most 2^22 records (the projection enumerates them)",
        wrong_choice: LOCAL_WRONG_CHOICE,
        query_classes: QueryClasses::MarginalsOnly,
        settings: &[],
    },
    MechanismSpec {
        name: "local-coarse",
        description: "Local coarse projection (Błasiok, Bun, Nikolov, Steinke 2019, Theorem 1.6): as \
                      local projection, but every client first rounds its record to the nearest point \
                      of a public cover of the universe; the server projects onto the cover's hull.",
        guarantee: LOCAL_GUARANTEE,
        budgets: &[BudgetKind::Pure],
        model: Model::Local(dp_local::LocalMechanismKind::Coarse),
        synthetic: false,
        reads: Reads::Records,
        post_processing: false,
        universe: "the attributes the workload touches must span at most 2^22 records (the cover enumerates them)",
        wrong_choice: LOCAL_WRONG_CHOICE,
        query_classes: QueryClasses::MarginalsOnly,
        settings: &[],
    },
    MechanismSpec {
        name: "local-chaining",
        description: "Local chaining (Błasiok, Bun, Nikolov, Steinke 2019, Theorem 1.6): every client \
                      sends one message per level of a public multi-scale decomposition of the \
                      universe (the level's increment, at ε divided by the number of levels); the \
                      server projects every level onto its hull and adds the levels.",
        guarantee: LOCAL_GUARANTEE,
        budgets: &[BudgetKind::Pure],
        model: Model::Local(dp_local::LocalMechanismKind::Chaining),
        synthetic: false,
        reads: Reads::Records,
        post_processing: false,
        universe: "the attributes the workload touches must span at most 2^22 records (the decomposition enumerates them)",
        wrong_choice: LOCAL_WRONG_CHOICE,
        query_classes: QueryClasses::MarginalsOnly,
        settings: &[],
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::BudgetArgs;

    const RELATIONS: [Neighbouring; 2] = [Neighbouring::ReplaceOne, Neighbouring::AddRemove];

    /// A valid budget of `kind`.
    fn example(kind: BudgetKind) -> PrivacyLoss {
        match kind {
            BudgetKind::Pure => PrivacyLoss::Pure { epsilon: 1.0 },
            BudgetKind::Approx => PrivacyLoss::Approx {
                epsilon: 1.0,
                delta: 1e-6,
            },
            BudgetKind::Zcdp => PrivacyLoss::Zcdp { rho: 0.5 },
        }
    }

    /// Whether `text` names a year 1900–2099 (a citation by authors and year).
    fn cites_a_year(text: &str) -> bool {
        let chars: Vec<char> = text.chars().collect();
        chars.windows(4).any(|w| {
            (w[0] == '1' && w[1] == '9' || w[0] == '2' && w[1] == '0')
                && w[2].is_ascii_digit()
                && w[3].is_ascii_digit()
        })
    }

    #[test]
    fn every_entry_is_complete_and_names_are_unique() {
        assert!(MECHANISMS.len() >= 10);
        for (i, spec) in MECHANISMS.iter().enumerate() {
            let name = spec.name;
            assert!(
                !name.is_empty() && name.chars().all(|c| c.is_ascii_lowercase() || c == '-'),
                "{name}: a name is lower-case words joined by hyphens"
            );
            assert!(
                MECHANISMS[..i].iter().all(|other| other.name != name),
                "{name} is listed twice"
            );
            assert_eq!(find(name).map(|s| s.name), Some(name));
            for (field, text) in [
                ("description", spec.description),
                ("guarantee", spec.guarantee),
                ("relations_note", spec.relations_note()),
                ("universe", spec.universe),
                ("wrong_choice", spec.wrong_choice),
            ] {
                assert!(!text.trim().is_empty(), "{name}: empty {field}");
                // plain words: no internal labels, no line breaks
                assert!(
                    !text.contains("seed 0"),
                    "{name}: {field} uses a seed label"
                );
                assert!(!text.contains('\n'), "{name}: {field} spans lines");
            }
            assert!(
                cites_a_year(spec.description),
                "{name}: the description cites no paper by year"
            );
            assert!(!spec.budgets.is_empty(), "{name}: no budget kind");
            for (j, k) in spec.budgets.iter().enumerate() {
                assert!(!spec.budgets[..j].contains(k), "{name}: {k:?} listed twice");
            }
            let central = match &spec.model {
                Model::Central(central) => central,
                Model::Local(kind) => {
                    // what the local model allows, and nothing a central entry would add
                    assert_eq!(kind.name(), name, "{name}: the protocol's own name");
                    assert_eq!(spec.budgets, [BudgetKind::Pure], "{name}: ε alone");
                    assert_eq!(spec.reads, Reads::Records, "{name}: clients hold records");
                    assert!(!spec.synthetic && !spec.post_processing, "{name}");
                    assert!(spec.settings.is_empty(), "{name}: settings");
                    assert!(spec.relations().is_empty() && spec.default_relation().is_none());
                    assert!(spec.audit().is_none(), "{name}: audit");
                    continue;
                }
            };
            assert!(
                !central.relations.is_empty(),
                "{name}: no neighbouring relation"
            );
            for (j, r) in central.relations.iter().enumerate() {
                assert!(
                    !central.relations[..j].contains(r),
                    "{name}: {r} listed twice"
                );
            }
            assert_eq!(spec.relations(), central.relations);
            assert_eq!(spec.default_relation(), Some(central.default_relation()));
            // the audit budgets are valid budgets the entry accepts
            let audit = central.audit;
            assert!(audit.budget.validate().is_ok(), "{name}: audit budget");
            assert!(
                spec.accepts(BudgetKind::of(&audit.budget)),
                "{name}: audit budget"
            );
            assert!(audit.delta > 0.0 && audit.delta < 1.0, "{name}: audit δ");
            assert!(audit.ci_runs >= 20, "{name}: audit runs");
            if let Some(steps) = audit.steps {
                assert!(steps.budget.validate().is_ok(), "{name}: step budget");
                assert!(
                    spec.accepts(BudgetKind::of(&steps.budget)),
                    "{name}: step budget"
                );
                assert!(steps.ci_runs >= 20, "{name}: step runs");
            }
        }
        // the local model's three protocols are entries
        for kind in [
            dp_local::LocalMechanismKind::Projection,
            dp_local::LocalMechanismKind::Coarse,
            dp_local::LocalMechanismKind::Chaining,
        ] {
            let entry = find(kind.name()).expect("a local protocol without an entry");
            assert!(matches!(entry.model, Model::Local(k) if k == kind));
        }
        assert!(find("no-such-mechanism").is_none());
        let e = spec("no-such-mechanism").err().unwrap().to_string();
        assert!(
            e.contains("no-such-mechanism") && e.contains("gaussian") && e.contains("local-coarse"),
            "{e}"
        );
    }

    /// Two 1-way tables over the first two of three binary attributes.
    fn small_marginals() -> AnyWorkload {
        let domain =
            dp_queries::Domain::new((0..3).map(|i| (format!("a{i}"), 2)).collect()).unwrap();
        AnyWorkload::Marginals(
            dp_queries::MarginalWorkload::from_attribute_lists(
                &domain,
                &[vec!["a0".into()], vec!["a1".into()]],
            )
            .unwrap(),
        )
    }

    #[test]
    fn builders_accept_exactly_the_listed_budgets_and_relations() {
        let options = BuildOptions::default();
        for spec in MECHANISMS {
            let name = spec.name;
            let Some(central) = spec.central() else {
                // a local entry builds no central mechanism, whatever it is given
                for kind in BudgetKind::ALL {
                    for relation in RELATIONS {
                        let budget = example(kind);
                        for e in [
                            spec.build(budget, relation, PostProcessing::None, &options)
                                .err(),
                            spec.build_any(budget, relation, PostProcessing::None, &options)
                                .err(),
                        ] {
                            let e = e.unwrap_or_else(|| panic!("{name} built")).to_string();
                            assert!(e.starts_with(name), "{name}: {e}");
                        }
                    }
                }
                continue;
            };
            for kind in BudgetKind::ALL {
                for relation in RELATIONS {
                    let budget = example(kind);
                    let built = spec.build(budget, relation, PostProcessing::None, &options);
                    let raw = (central.builder)(budget, relation, PostProcessing::None, &options);
                    if spec.accepts(kind) && spec.supports(relation) {
                        let m = built.unwrap_or_else(|e| {
                            panic!("{name} refuses listed {kind:?} under {relation}: {e}")
                        });
                        let c = m.certificate();
                        assert_eq!(m.name(), name, "{name}: the mechanism's own name");
                        assert_eq!(c.mechanism, name, "{name}: the certificate's name");
                        assert_eq!(
                            c.neighbouring(),
                            Some(relation),
                            "{name}: certificate relation"
                        );
                        assert_eq!(
                            m.produces_synthetic(),
                            spec.synthetic,
                            "{name}: produces_synthetic() disagrees with the catalogue"
                        );
                        let any = spec
                            .build_any(budget, relation, PostProcessing::None, &options)
                            .unwrap();
                        let reads_counts = spec.reads == Reads::WorkloadCounts;
                        assert_eq!(
                            (m.counts_suffice(), any.counts_suffice()),
                            (reads_counts, reads_counts),
                            "{name}: counts_suffice() disagrees with the catalogue"
                        );
                        // what the mechanism as a release assembles it reads, on a small
                        // marginal workload touching two of three attributes
                        let assembled = spec
                            .assemble_any(budget, relation, PostProcessing::None, &options)
                            .unwrap();
                        let access =
                            dp_mechanisms::DataAccess::of(assembled.as_ref(), &small_marginals())
                                .unwrap();
                        assert!(
                            spec.reads.matches(&access),
                            "{name}: reads {:?} in the catalogue, {access:?} built",
                            spec.reads
                        );
                        assert_eq!(
                            m.step_audited().is_some(),
                            central.audit.steps.is_some(),
                            "{name}: a step audit exactly for the composed mechanisms"
                        );
                        assert!(raw.is_ok(), "{name}: the builder refuses a listed case");
                        continue;
                    }
                    let e = match built {
                        Ok(_) => panic!("{name} accepts unlisted {kind:?} under {relation}"),
                        Err(e) => e.to_string(),
                    };
                    assert!(e.starts_with(name), "{name}: {e}");
                    if !spec.accepts(kind) {
                        assert!(e.contains(kind.flags()), "{name}: {e}");
                        assert!(e.contains(&spec.budget_flags()), "{name}: {e}");
                        if spec.supports(relation) {
                            assert!(raw.is_err(), "{name}: its builder accepts {kind:?}");
                        }
                    } else {
                        assert!(e.contains("--neighbouring replace-one"), "{name}: {e}");
                        // the relation is a property of the mechanism, not only of the table
                        assert!(raw.is_err(), "{name}: its builder accepts {relation}");
                    }
                    assert!(
                        !e.contains("Zcdp") && !e.contains("Approx {"),
                        "{name}: {e}"
                    );
                }
            }
        }
    }

    #[test]
    fn budget_flags_follow_the_catalogue() {
        let flags = [
            (Some(1.0), None, None, Some(BudgetKind::Pure)),
            (Some(1.0), Some(1e-9), None, Some(BudgetKind::Approx)),
            (None, None, Some(0.5), Some(BudgetKind::Zcdp)),
            (None, Some(1e-9), None, None),
            (Some(1.0), None, Some(0.5), None),
        ];
        for spec in MECHANISMS {
            for (epsilon, delta, rho, kind) in flags {
                let args = BudgetArgs {
                    epsilon,
                    delta,
                    rho,
                };
                match (args.to_loss(spec.name), kind) {
                    (Ok(loss), Some(k)) => {
                        assert!(spec.accepts(k), "{}: accepts unlisted {k:?}", spec.name);
                        assert_eq!(BudgetKind::of(&loss), k);
                    }
                    (Ok(loss), None) => panic!("{}: {loss} from no budget", spec.name),
                    (Err(e), k) => {
                        assert!(
                            k.is_none_or(|k| !spec.accepts(k)),
                            "{}: refuses a listed budget: {e}",
                            spec.name
                        );
                        let e = e.to_string();
                        assert!(e.contains(&spec.budget_flags()), "{}: {e}", spec.name);
                    }
                }
            }
        }
        let e = BudgetArgs {
            epsilon: Some(1.0),
            ..Default::default()
        }
        .to_loss("nope")
        .err()
        .unwrap()
        .to_string();
        assert!(e.contains("unknown mechanism 'nope'"), "{e}");
    }
}
