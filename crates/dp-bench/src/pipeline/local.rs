//! The release pipeline for the local-model entries of the catalogue (`local-projection`,
//! `local-coarse`, `local-chaining`: [`crate::catalogue::Model::Local`]): one simulated
//! client per record, each randomizing its own record (dp-local). [`super::release`] looks
//! the entry up once and comes here for a local one. The same stages as a central release —
//! validate, count (here: load the records), run, write — without a ledger: the guarantee
//! is local ε-DP, for any two inputs of one client (the certificate's
//! [`dp_mechanisms::PrivacyModel::Local`]), so the central options (`--delta`, `--rho`,
//! `--neighbouring`, `--ledger`) are refused rather than given a meaning they do not have
//! (docs/privacy.md, "The local model").

use super::{ReleaseEvents, ReleaseRequest};
use crate::catalogue::MechanismSpec;
use crate::io::answers::write_answers;
use crate::io::output;
use crate::registry::check_budget_is_meaningful;
use crate::{BenchError, Result};
use dp_core::{PrivacyLoss, StreamFamily, os_seeded_rng, seeded_rng};
use dp_local::{LocalMechanismKind, LocalProtocol, LocalRelease, LocalSettings};
use dp_mechanisms::PrivacyCertificate;
use dp_queries::{AnyWorkload, MarginalWorkload, Workload};
use std::path::Path;

/// A local release whose every argument has been checked.
pub struct LocalPlan<'r> {
    request: &'r ReleaseRequest,
    spec: &'static MechanismSpec,
    /// The ε of every client's messages together.
    epsilon: f64,
    /// The protocol at that ε.
    protocol: LocalProtocol,
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
    /// Check every argument of `request` for the local-model entry `spec`, whose protocol
    /// is `kind`.
    pub fn validate(
        request: &'r ReleaseRequest,
        spec: &'static MechanismSpec,
        kind: LocalMechanismKind,
    ) -> Result<Self> {
        let name = spec.name;
        let budget = &request.budget;
        // out-of-range values are reported as for every mechanism (ε = 0, negative, too
        // large)
        budget.check_values()?;
        if budget.delta.is_some() || budget.rho.is_some() {
            return Err(
                spec.local_refuses(&format!("--delta or --rho (give {})", spec.budget_flags()))
            );
        }
        let Some(epsilon) = budget.epsilon else {
            return Err(BenchError::Usage(format!(
                "{name} needs a budget: give {}",
                spec.budget_flags()
            )));
        };
        check_budget_is_meaningful(&PrivacyLoss::Pure { epsilon })?;
        if let Some(relation) = request.neighbouring {
            spec.check_relation(relation)?;
        }
        if request.ledger.is_some() {
            return Err(BenchError::LocalInLedger {
                mechanism: name.to_string(),
            });
        }
        if request.outputs.synthetic.is_some() {
            return Err(BenchError::Usage(format!(
                "{name} releases answers only, no synthetic data: drop --synthetic-out"
            )));
        }
        if request.post != dp_mechanisms::PostProcessing::None {
            return Err(spec.local_refuses("--post (its answers are already projected)"));
        }
        if request.outputs.answers_form == crate::io::answers::AnswersForm::Labelled {
            // the labelled form's counts need a total; the local protocols' answers are
            // estimates over clients, written as codes (issue #26 covers central releases)
            return Err(
                spec.local_refuses("--answers-form labelled (its answers are written as codes)")
            );
        }
        spec.check_settings(&request.settings)?;
        request.data.check_attributes()?;
        // the clients hold the records: no source that only counts can serve them
        super::check_counting(&request.counting, &request.data, false, name)?;
        let workload = AnyWorkload::parse_spec(
            &request.data.public_domain()?,
            &request.workload,
            request.workload_seed,
        )?;
        spec.check_class(workload.class())?;
        let Some(marginals) = workload.as_marginals() else {
            return Err(BenchError::Internal(format!(
                "{name} releases marginal workloads only, and the workload is of class {}",
                workload.class()
            )));
        };
        // the universe spans the attributes the workload touches, not the whole table
        let attributes = marginals.touched_attributes();
        let workload = marginals.on_attributes(&attributes)?;
        let inputs = request.inputs();
        let inputs: Vec<(&str, &Path)> = inputs.iter().map(|(f, p)| (*f, p.as_path())).collect();
        output::check_outputs(&request.outputs.list(), &inputs)?;
        let protocol = LocalProtocol::new(kind, epsilon, LocalSettings::default())?;
        Ok(LocalPlan {
            request,
            spec,
            epsilon,
            protocol,
            workload,
            attributes,
        })
    }

    /// The catalogue entry.
    pub fn spec(&self) -> &'static MechanismSpec {
        self.spec
    }

    /// The guarantee every release of the plan carries, stated before it runs: local ε-DP
    /// ([`dp_mechanisms::PrivacyModel::Local`]).
    pub fn certificate(&self) -> PrivacyCertificate {
        self.protocol.certificate()
    }

    /// The guarantee in words ([`PrivacyCertificate::statement`]), e.g.
    /// "local-projection: local ε-DP with ε = 2 (any two inputs of one client)".
    pub fn guarantee(&self) -> String {
        self.certificate().statement()
    }

    /// The workload over the attributes it touches.
    pub fn workload(&self) -> &MarginalWorkload {
        &self.workload
    }

    /// The number of attributes the workload touches.
    pub fn attributes(&self) -> usize {
        self.attributes.len()
    }

    /// The lines `dpqr release --dry-run` prints for the plan: the guarantee and the
    /// workload (nothing is read or written).
    pub fn dry_run_lines(&self) -> Vec<String> {
        vec![
            "dry run: nothing read, nothing written".to_string(),
            format!("privacy: {}", self.guarantee()),
            format!(
                "workload: {} marginals, {} counting queries over {} attributes; one \
                 simulated client per record",
                self.workload.len(),
                self.workload.num_queries(),
                self.attributes()
            ),
        ]
    }

    /// Load the records (restricted to the touched attributes), run the protocol with one
    /// simulated client per record, and write the answers and the report.
    pub fn run(&self, events: &dyn ReleaseEvents) -> Result<LocalReleased> {
        let request = self.request;
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
        let release = self.protocol.run(&data, &self.workload, &family)?;
        let report = match &request.outputs.report {
            None => None,
            Some(path) => Some((
                path,
                serde_json::to_string_pretty(&serde_json::json!({
                    "model": release.certificate.model.key(),
                    "certificate": release.certificate,
                    "statement": release.certificate.statement(),
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
