//! What a mechanism returns: answers, an optional synthetic dataset, the privacy certificate
//! and diagnostics.

use dp_core::{Neighbouring, PrivacyLoss};
use dp_queries::Dataset;
use serde::{Deserialize, Serialize};

/// The model a privacy guarantee is stated in: who holds the records, and which pairs of
/// inputs the loss is a bound for.
///
/// In JSON the model is a `model` field beside the certificate's other fields, `"central"`
/// with the relation in a `neighbouring` field, or `"local"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "model", rename_all = "kebab-case")]
pub enum PrivacyModel {
    /// The central model: a curator holds every record and runs the mechanism on them; the
    /// loss bounds what a release reveals about any two datasets that are neighbours under
    /// `neighbouring`.
    Central {
        /// The neighbouring relation the guarantee is stated for.
        neighbouring: Neighbouring,
    },
    /// The local model (seed 004 §5): every client randomizes its own record, and only the
    /// randomized messages leave it. The loss, pure ε, bounds for **any two inputs of one
    /// client** the distributions of all that client's messages together (ε-LDP), so it
    /// holds against the server and against whoever reads the release, whatever the other
    /// clients' records are. It is not a central guarantee under a neighbouring relation,
    /// and never composes with one in a ledger.
    Local,
}

impl PrivacyModel {
    /// The key of the central model, as in the JSON `model` field: `central`.
    pub const CENTRAL_KEY: &'static str = "central";
    /// The key of the local model, as in the JSON `model` field: `local`.
    pub const LOCAL_KEY: &'static str = "local";

    /// The neighbouring relation of a central guarantee; `None` in the local model.
    pub fn neighbouring(&self) -> Option<Neighbouring> {
        match self {
            PrivacyModel::Central { neighbouring } => Some(*neighbouring),
            PrivacyModel::Local => None,
        }
    }

    /// `central` or `local`, as in the JSON `model` field.
    pub fn key(&self) -> &'static str {
        match self {
            PrivacyModel::Central { .. } => Self::CENTRAL_KEY,
            PrivacyModel::Local => Self::LOCAL_KEY,
        }
    }
}

/// The privacy guarantee a release carries: stated before the mechanism runs (it depends only
/// on the parameters, never on the data) and copied into every [`Release`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PrivacyCertificate {
    /// Name of the mechanism that spent the budget.
    pub mechanism: String,
    /// The guarantee in the mechanism's native accounting (pure ε, (ε, δ) or ρ-zCDP).
    pub loss: PrivacyLoss,
    /// The model the guarantee is stated in: central with its neighbouring relation, or
    /// local.
    #[serde(flatten)]
    pub model: PrivacyModel,
    /// The same guarantee converted to (ε, δ) at the δ the user asked for, when the native
    /// accounting is zCDP (tight Canonne–Kamath–Steinke conversion, rounded up).
    pub approx_equivalent: Option<PrivacyLoss>,
}

impl PrivacyCertificate {
    /// The certificate of a local-model mechanism called `mechanism` whose every client's
    /// messages together are `epsilon`-LDP ([`PrivacyModel::Local`]).
    pub fn local(mechanism: &str, epsilon: f64) -> Self {
        PrivacyCertificate {
            mechanism: mechanism.to_string(),
            loss: PrivacyLoss::Pure { epsilon },
            model: PrivacyModel::Local,
            approx_equivalent: None,
        }
    }

    /// The neighbouring relation of a central guarantee; `None` in the local model.
    pub fn neighbouring(&self) -> Option<Neighbouring> {
        self.model.neighbouring()
    }

    /// A one-line human statement, e.g.
    /// `gaussian: ρ = 0.012 (ρ-zCDP), implies (ε, δ) = (1, 1e-9), replace-one neighbours`,
    /// or in the local model
    /// `local-projection: local ε-DP with ε = 2 (any two inputs of one client)`.
    pub fn statement(&self) -> String {
        let neighbouring = match self.model {
            PrivacyModel::Central { neighbouring } => neighbouring,
            PrivacyModel::Local => {
                let loss = match self.loss {
                    PrivacyLoss::Pure { epsilon } => {
                        format!("local ε-DP with ε = {}", dp_core::Num(epsilon))
                    }
                    other => format!("local {other}"),
                };
                return format!("{}: {loss} (any two inputs of one client)", self.mechanism);
            }
        };
        let mut s = format!("{}: {}", self.mechanism, self.loss);
        if let Some(a) = &self.approx_equivalent {
            s.push_str(&format!(", implies {a}"));
        }
        s.push_str(&format!(", {neighbouring} neighbours"));
        s
    }
}

/// Weighted synthetic records over the workload's domain, for mechanisms whose output is a
/// (weighted) dataset. Answers computed from it equal the release's answers, unless
/// [`Self::sampled_from_model`] is set.
#[derive(Clone, Debug)]
pub struct SyntheticData {
    /// `true` when the records are a random sample of a released model (adaptive
    /// projection): their answers then differ from the release's answers (the model's
    /// exact marginals) by sampling error. `false`: they reproduce the answers exactly.
    pub sampled_from_model: bool,
    /// The distinct records.
    pub records: Dataset,
    /// Non-negative weights summing to one, one per record.
    pub weights: Vec<f64>,
}

/// The family of additive count noise a mechanism used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NoiseDistribution {
    /// Discrete Gaussian N_Z(0, σ²); the parameter is σ².
    DiscreteGaussian,
    /// Discrete Laplace with scale t; the parameter is t.
    DiscreteLaplace,
}

impl NoiseDistribution {
    /// Name of the distribution's parameter: `σ²` or `scale`.
    pub fn parameter_name(&self) -> &'static str {
        match self {
            NoiseDistribution::DiscreteGaussian => "σ²",
            NoiseDistribution::DiscreteLaplace => "scale",
        }
    }
}

impl std::fmt::Display for NoiseDistribution {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            NoiseDistribution::DiscreteGaussian => "discrete Gaussian",
            NoiseDistribution::DiscreteLaplace => "discrete Laplace",
        })
    }
}

/// What the normalised answers of an additive-noise release were divided by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Normaliser {
    /// The dataset size `n`, public under replace-one neighbours (seed 004 §1.2).
    PublicN,
    /// A total estimated from the release's own noisy counts (post-processing), used under
    /// add/remove neighbours, where `n` is private.
    NoisyTotal,
}

/// The calibrated noise of an additive-noise mechanism, in count units, with the spread it
/// implies on the normalised answers.
///
/// Nothing in it is derived from a private quantity: under add/remove neighbours the
/// per-answer spread is relative to the noisy total the answers were divided by, never to
/// the true `n` (which would let a reader recover `n` as `count_std / answer_std`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct NoiseDescription {
    /// The noise family.
    pub distribution: NoiseDistribution,
    /// σ² for the discrete Gaussian, t for the discrete Laplace, in count units.
    pub parameter: f64,
    /// The sensitivity the noise was calibrated to (Δ₂ for Gaussian, Δ₁ for Laplace), in
    /// count units.
    pub sensitivity: f64,
    /// Exact standard deviation of the noise on one count (from the exact variance of the
    /// distribution, [`crate::noise_stats::CountNoise::variance`]); depends only on the
    /// parameters.
    pub count_std: f64,
    /// What the answers were divided by.
    pub normaliser: Normaliser,
    /// Standard deviation of the noise on one normalised answer: `count_std / n` under
    /// [`Normaliser::PublicN`] (exact); `count_std / T̂` with `T̂` the noisy total the
    /// answers were divided by under [`Normaliser::NoisyTotal`] (the spread given the
    /// released denominator; it ignores the denominator's own noise).
    pub answer_std: f64,
}

impl NoiseDescription {
    /// Describe `distribution` with `parameter` calibrated to `sensitivity`, on answers
    /// normalised by the public `n` (replace-one neighbours only).
    pub fn new(
        distribution: NoiseDistribution,
        parameter: f64,
        sensitivity: f64,
        n: usize,
    ) -> Self {
        Self::build(
            distribution,
            parameter,
            sensitivity,
            Normaliser::PublicN,
            n as f64,
        )
    }

    /// Describe `distribution` with `parameter` calibrated to `sensitivity`, on answers
    /// divided by `noisy_total`, a total computed from the release's own noisy counts
    /// (add/remove neighbours: nothing here depends on the private `n`).
    pub fn on_noisy_total(
        distribution: NoiseDistribution,
        parameter: f64,
        sensitivity: f64,
        noisy_total: f64,
    ) -> Self {
        Self::build(
            distribution,
            parameter,
            sensitivity,
            Normaliser::NoisyTotal,
            noisy_total,
        )
    }

    fn build(
        distribution: NoiseDistribution,
        parameter: f64,
        sensitivity: f64,
        normaliser: Normaliser,
        denominator: f64,
    ) -> Self {
        let mut d = NoiseDescription {
            distribution,
            parameter,
            sensitivity,
            count_std: 0.0,
            normaliser,
            answer_std: 0.0,
        };
        d.count_std = d.model().variance().sqrt();
        d.answer_std = d.count_std / denominator;
        d
    }

    /// The noise model, for exact moments and predicted error quantiles.
    pub fn model(&self) -> crate::noise_stats::CountNoise {
        use crate::noise_stats::CountNoise;
        match self.distribution {
            NoiseDistribution::DiscreteGaussian => CountNoise::DiscreteGaussian {
                sigma2: self.parameter,
            },
            NoiseDistribution::DiscreteLaplace => CountNoise::DiscreteLaplace {
                scale: self.parameter,
            },
        }
    }
}

/// What happened during a release: for reproducibility and for judging accuracy.
///
/// **Everything here is published with the answers**, so every field and every note is a
/// function of the public inputs (parameters, domain, workload, and `n` where the
/// neighbouring relation makes it public) and of the mechanism's privatized transcript —
/// the noisy measurements and private selections its privacy proof covers, of which
/// everything else is post-processing (Dwork–Roth 2014, Prop. 2.1). Nothing is measured
/// from the data directly: no count of rejection-sampling proposals, no timing (wall time
/// grows with `n` and with the data-dependent work of a sampler; callers that benchmark
/// time the call themselves), no statistic of the records. Where a cost is worth stating,
/// a note gives its data-independent bound instead. The black-box audit
/// (`dp_bench::audit`) treats these diagnostics as part of the output and tests them with
/// the answers.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Diagnostics {
    /// Iterations of the mechanism's main loop, where it has one.
    pub iterations: Option<usize>,
    /// Calls to a linear-optimization oracle, where used.
    pub oracle_calls: Option<usize>,
    /// Final Frank–Wolfe duality gap, where the mechanism projects.
    pub frank_wolfe_gap: Option<f64>,
    /// The noise that was added, where the mechanism adds noise to answers.
    pub noise: Option<NoiseDescription>,
    /// Free-form notes (post-processing applied, statuses such as an iteration cap hit).
    pub notes: Vec<String>,
    /// Under add/remove neighbours, where `n` is private: the total number of records as the
    /// release itself estimates it from its own noisy measurements (post-processing), the
    /// total its answers are fractions of — the mean noisy table total of the baselines,
    /// the estimate from the noisy 1-way tables of adaptive-projection. Published with the
    /// answers, so that proportions can be turned into counts without the private `n`
    /// (issue #26). `None` under replace-one neighbours (the public `n` is the total) and
    /// for mechanisms that estimate no total.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimated_total: Option<f64>,
}

/// The result of running a mechanism on a dataset and workload.
#[derive(Clone, Debug)]
pub struct Release {
    /// Private answers in workload order (normalised: fractions of the dataset).
    pub answers: Vec<f64>,
    /// Synthetic data, where the mechanism produces it.
    pub synthetic: Option<SyntheticData>,
    /// The privacy guarantee spent.
    pub certificate: PrivacyCertificate,
    /// Diagnostics of the run.
    pub diagnostics: Diagnostics,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn central(neighbouring: Neighbouring) -> PrivacyCertificate {
        PrivacyCertificate {
            mechanism: "gaussian".into(),
            loss: PrivacyLoss::Zcdp { rho: 0.5 },
            model: PrivacyModel::Central { neighbouring },
            approx_equivalent: Some(PrivacyLoss::Approx {
                epsilon: 4.5,
                delta: 1e-9,
            }),
        }
    }

    #[test]
    fn the_statement_names_the_model() {
        assert_eq!(
            central(Neighbouring::ReplaceOne).statement(),
            "gaussian: ρ = 0.5 (ρ-zCDP), implies (ε, δ) = (4.5, 1e-9), replace-one neighbours"
        );
        assert_eq!(
            central(Neighbouring::AddRemove).statement(),
            "gaussian: ρ = 0.5 (ρ-zCDP), implies (ε, δ) = (4.5, 1e-9), add/remove neighbours"
        );
        let local = PrivacyCertificate::local("local-projection", 2.0);
        assert_eq!(
            local.statement(),
            "local-projection: local ε-DP with ε = 2 (any two inputs of one client)"
        );
        assert!(!local.statement().contains("neighbours"));
        assert_eq!(local.neighbouring(), None);
        assert_eq!(
            central(Neighbouring::AddRemove).neighbouring(),
            Some(Neighbouring::AddRemove)
        );
    }

    /// A central certificate keeps its top-level `neighbouring` field (what readers of the
    /// reports written before the model existed look up) and gains `model`; a local one has
    /// `model` and no relation. Both read back as written.
    #[test]
    fn the_json_has_a_model_field_and_keeps_the_relation_top_level() {
        let c = serde_json::to_value(central(Neighbouring::ReplaceOne)).unwrap();
        assert_eq!(c["model"], "central");
        assert_eq!(c["neighbouring"], "ReplaceOne");
        assert_eq!(c["mechanism"], "gaussian");
        assert!(c["loss"]["Zcdp"].is_object(), "{c}");
        let l = serde_json::to_value(PrivacyCertificate::local("local-coarse", 1.0)).unwrap();
        assert_eq!(l["model"], "local");
        // serde's tag is the model's key, the one spelling the catalogue uses too
        assert_eq!(c["model"], PrivacyModel::CENTRAL_KEY);
        assert_eq!(l["model"], PrivacyModel::LOCAL_KEY);
        assert!(l.get("neighbouring").is_none(), "{l}");
        assert_eq!(l["loss"]["Pure"]["epsilon"], 1.0);
        for cert in [
            central(Neighbouring::AddRemove),
            PrivacyCertificate::local("local-chaining", 0.5),
        ] {
            let text = serde_json::to_string(&cert).unwrap();
            let back: PrivacyCertificate = serde_json::from_str(&text).unwrap();
            assert_eq!(back, cert);
            assert_eq!(back.model.key(), cert.model.key());
        }
    }
}
