//! The release pipeline for the local-model mechanisms (`local-projection`, `local-coarse`,
//! `local-chaining`; [`crate::catalogue::LOCAL_MECHANISMS`]): one simulated client per
//! record, each randomizing its own record (dp-local). The same stages as a central release
//! — validate, count (here: load the records), run, write — without a ledger: the guarantee
//! is local ε-DP, for any two inputs of one client, so the central options (`--delta`,
//! `--rho`, `--neighbouring`, `--ledger`) are refused rather than given a meaning they do not
//! have (docs/privacy.md, "The local model").

use super::{ReleaseEvents, ReleaseRequest};
use crate::catalogue::LocalMechanismSpec;
use crate::io::answers::write_answers;
use crate::io::output;
use crate::registry::check_budget_is_meaningful;
use crate::{BenchError, Result};
use dp_core::{PrivacyLoss, StreamFamily, os_seeded_rng, seeded_rng};
use dp_local::{LocalProtocol, LocalRelease, LocalSettings};
use dp_queries::{AnyWorkload, MarginalWorkload, Workload};
use std::path::Path;

fn refuse(name: &str, what: &str) -> BenchError {
    BenchError::Usage(format!(
        "{name} is a local-model mechanism (local ε-DP: any two inputs of one client) and \
         does not take {what}; see docs/privacy.md, \"The local model\""
    ))
}

/// A local release whose every argument has been checked.
pub struct LocalPlan<'r> {
    request: &'r ReleaseRequest,
    spec: &'static LocalMechanismSpec,
    epsilon: f64,
    /// The workload over the attributes it touches.
    workload: MarginalWorkload,
    /// The attributes it touches, in domain order.
    attributes: Vec<usize>,
}

/// A completed local release.
pub struct LocalReleased {
    /// What the protocol returned.
    pub release: LocalRelease,
    /// The number of clients (one per record).
    pub clients: usize,
}

impl<'r> LocalPlan<'r> {
    /// Check every argument of `request` for the local mechanism `spec`.
    pub fn validate(
        request: &'r ReleaseRequest,
        spec: &'static LocalMechanismSpec,
    ) -> Result<Self> {
        let name = spec.name;
        let budget = &request.budget;
        // out-of-range values are reported as for every mechanism (ε = 0, negative, too
        // large)
        budget.check_values()?;
        if budget.delta.is_some() || budget.rho.is_some() {
            return Err(refuse(name, "--delta or --rho (give --epsilon alone)"));
        }
        let Some(epsilon) = budget.epsilon else {
            return Err(BenchError::Usage(format!(
                "{name} needs a budget: give {}",
                LocalMechanismSpec::BUDGET_FLAGS
            )));
        };
        check_budget_is_meaningful(&PrivacyLoss::Pure { epsilon })?;
        if request.neighbouring.is_some() {
            return Err(refuse(
                name,
                "--neighbouring (its guarantee is for any two inputs of one client, not for \
                 neighbouring datasets): drop --neighbouring",
            ));
        }
        if request.ledger.is_some() {
            return Err(BenchError::Usage(format!(
                "{name} gives a local ε-DP guarantee (any two inputs of one client), which a \
                 ledger of central spends cannot compose with them: release without --ledger \
                 and account the local ε per client (docs/privacy.md, \"The local model\")"
            )));
        }
        if request.outputs.synthetic.is_some() {
            return Err(BenchError::Usage(format!(
                "{name} releases answers only, no synthetic data: drop --synthetic-out"
            )));
        }
        if request.post != dp_mechanisms::PostProcessing::None {
            return Err(refuse(name, "--post (its answers are already projected)"));
        }
        if request.outputs.answers_form == crate::io::answers::AnswersForm::Labelled {
            // the labelled form's counts need a total; the local protocols' answers are
            // estimates over clients, written as codes (issue #26 covers central releases)
            return Err(refuse(
                name,
                "--answers-form labelled (its answers are written as codes)",
            ));
        }
        let given = request.settings.given();
        if !given.is_empty() {
            return Err(refuse(
                name,
                &format!(
                    "{} (it has no settings)",
                    given
                        .iter()
                        .map(|k| k.flag())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        request.data.check_attributes()?;
        let workload = AnyWorkload::parse_spec(
            &request.data.public_domain()?,
            &request.workload,
            request.workload_seed,
        )?;
        let Some(marginals) = workload.as_marginals() else {
            return Err(BenchError::Usage(format!(
                "{name} releases marginal workloads only, and this workload is of class {}",
                workload.class()
            )));
        };
        // the universe spans the attributes the workload touches, not the whole table
        let attributes = marginals.touched_attributes();
        let workload = marginals.on_attributes(&attributes)?;
        let inputs = request.inputs();
        let inputs: Vec<(&str, &Path)> = inputs.iter().map(|(f, p)| (*f, p.as_path())).collect();
        output::check_outputs(&request.outputs.list(), &inputs)?;
        Ok(LocalPlan {
            request,
            spec,
            epsilon,
            workload,
            attributes,
        })
    }

    /// The guarantee in words, e.g. "local-projection: local ε-DP with ε = 2 (any two
    /// inputs of one client)".
    pub fn guarantee(&self) -> String {
        format!(
            "{}: local ε-DP with ε = {} (any two inputs of one client)",
            self.spec.name,
            dp_core::Num(self.epsilon)
        )
    }

    /// The workload over the attributes it touches.
    pub fn workload(&self) -> &MarginalWorkload {
        &self.workload
    }

    /// The number of attributes the workload touches.
    pub fn attributes(&self) -> usize {
        self.attributes.len()
    }

    /// Load the records (restricted to the touched attributes), run the protocol with one
    /// simulated client per record, and write the answers and the report.
    pub fn run(&self, events: &dyn ReleaseEvents) -> Result<LocalReleased> {
        let request = self.request;
        let protocol = LocalProtocol::new(self.spec.kind, self.epsilon, LocalSettings::default())?;
        let data = request.data.load(false)?;
        let names: Vec<&str> = self
            .attributes
            .iter()
            .map(|&a| data.domain().name(a))
            .collect();
        let data = data.select_attributes(&names)?;
        let mut rng = match request.seed {
            Some(s) => {
                events.warning(
                    "WARNING: --seed fixes the clients' randomness: anyone who knows the seed \
                     can undo it. Use it for tests and reproducible experiments only.",
                );
                seeded_rng(s)
            }
            None => os_seeded_rng()?,
        };
        let family = StreamFamily::fork(&mut rng);
        let release = protocol.run(&data, &self.workload, &family)?;
        let report = match &request.outputs.report {
            None => None,
            Some(path) => Some((
                path,
                serde_json::to_string_pretty(&serde_json::json!({
                    "model": "local",
                    "statement": self.guarantee(),
                    "mechanism": self.spec.name,
                    "epsilon": self.epsilon,
                    "messages_per_client": release.messages_per_client,
                    "workload": request.workload,
                    "marginals": self.workload.len(),
                    "queries": self.workload.num_queries(),
                    "clients": data.n(),
                    "notes": release.notes,
                }))
                .map_err(|source| BenchError::Encode {
                    what: "report",
                    source,
                })?,
            )),
        };
        let mut files = Vec::with_capacity(2);
        let mut answers = events.create_output(&request.outputs.answers)?;
        output::write_maybe_compressed(&mut answers, |w| {
            write_answers(w, &self.workload, &release.answers)
        })?;
        files.push(answers);
        if let Some((path, text)) = report {
            files.push(super::write_report(events, path, &text)?);
        }
        events.commit_outputs(files)?;
        Ok(LocalReleased {
            release,
            clients: data.n(),
        })
    }
}
