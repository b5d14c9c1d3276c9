//! `dpqr audit`: the empirical privacy audit of a mechanism.

use clap::Args;
use dp_bench::Result;
use dp_bench::audit::{AuditConfig, audit_steps, audit_with};
use dp_bench::registry::audit_settings;
use dp_core::Neighbouring;

use crate::NeighbouringArg;

#[derive(Args)]
pub(crate) struct AuditArgs {
    /// Mechanism (see `dpqr mechanisms`).
    #[arg(long)]
    pub(crate) mechanism: String,
    /// Runs on each of the two neighbouring datasets (default: the registry's CI count).
    #[arg(long, allow_negative_numbers = true)]
    pub(crate) runs: Option<usize>,
    /// Seed of the runs.
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    pub(crate) seed: u64,
    /// Audit the deliberately miscalibrated canary (half the noise scale, same claim).
    #[arg(long)]
    pub(crate) canary: bool,
    /// Canary with this factor times the noise scale instead of 1/2 (implies --canary).
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) noise_factor: Option<f64>,
    /// Failure probability of the audit (a correct mechanism fails with at most this).
    #[arg(long, default_value_t = dp_bench::audit::DEFAULT_ALPHA, allow_hyphen_values = true)]
    pub(crate) alpha: f64,
    /// Neighbouring relation audited.
    #[arg(long, value_enum, default_value = "replace-one")]
    pub(crate) neighbouring: NeighbouringArg,
}

pub(crate) fn audit(args: &AuditArgs) -> Result<bool> {
    let settings = audit_settings(&args.mechanism)?;
    let noise_factor = match (args.canary, args.noise_factor) {
        (_, Some(f)) => Some(f),
        (true, None) => Some(0.5),
        (false, None) => None,
    };
    let neighbouring = match args.neighbouring {
        NeighbouringArg::ReplaceOne => Neighbouring::ReplaceOne,
        NeighbouringArg::AddRemove => Neighbouring::AddRemove,
    };
    // composed mechanisms: black-box and step audit, α/2 each (union bound)
    let steps = settings
        .steps
        .filter(|_| neighbouring == Neighbouring::ReplaceOne);
    let alpha = if steps.is_some() {
        args.alpha / 2.0
    } else {
        args.alpha
    };
    let config = AuditConfig {
        runs: args.runs.unwrap_or(settings.ci_runs),
        seed: args.seed,
        alpha,
        neighbouring,
        noise_factor,
        ..AuditConfig::new(0, 0)
    };
    let r = audit_with(&args.mechanism, &settings, &config)?;
    if let Some(f) = noise_factor {
        outln!(
            "CANARY: {} run with {f} times its noise scale, claiming the original guarantee",
            args.mechanism
        );
    }
    if steps.is_some() {
        outln!("== black-box audit (α = {alpha:e}) ==");
    }
    outln!("claimed: {}", r.certificate.statement());
    outln!(
        "audited at δ = {:e}: claimed ε = {:.4}; {} runs per dataset (half select the event)",
        r.delta,
        r.claimed_epsilon,
        r.runs
    );
    outln!("event: {}", r.event);
    outln!(
        "in event: {}/{} runs on the favoured dataset, {}/{} on the other",
        r.favoured.0,
        r.favoured.1,
        r.other.0,
        r.other.1
    );
    outln!(
        "ε lower bound {:.4} at confidence {}",
        r.epsilon_lower,
        r.confidence
    );
    let ratio = |lower: f64, claimed: f64| lower / claimed.max(f64::MIN_POSITIVE);
    let mut worst = (r.epsilon_lower, r.claimed_epsilon);
    let mut passed = r.passed;
    if let Some(st) = steps {
        let step_config = AuditConfig {
            runs: args.runs.unwrap_or(st.ci_runs),
            ..config.clone()
        };
        let s = audit_steps(&args.mechanism, &settings, &step_config)?;
        outln!(
            "== step audit (α = {alpha:e} over {} steps, {} runs per dataset and step) ==",
            s.steps.len(),
            s.runs
        );
        outln!("claimed: {}", s.certificate.statement());
        outln!(
            "composition of the per-step losses: {} (mechanism's accounting {}): {}",
            s.composed,
            s.accounting,
            if s.composition_ok {
                "within the certificate"
            } else {
                "FAIL (exceeds the certificate or differs from the accounting)"
            }
        );
        for line in s.step_lines() {
            outln!("{line}");
        }
        for u in &s.unmatched {
            outln!("canary step without an honest counterpart (not audited): {u}");
        }
        // the part with the largest ε_lower / claimed (a failing step has ratio > 1)
        if let Some(w) = s.worst()
            && ratio(w.epsilon_lower, w.claimed_epsilon) > ratio(worst.0, worst.1)
        {
            worst = (w.epsilon_lower, w.claimed_epsilon);
        }
        passed &= s.passed;
    }
    outln!(
        "epsilon_lower={:.4} claimed={:.4} verdict={}",
        worst.0,
        worst.1,
        if passed { "pass" } else { "FAIL" }
    );
    Ok(passed)
}
