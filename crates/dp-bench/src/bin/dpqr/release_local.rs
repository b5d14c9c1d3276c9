//! `dpqr release` for the local-model mechanisms (`local-projection`, `local-coarse`,
//! `local-chaining`): one simulated client per record, each randomizing its own record
//! (dp-local). The guarantee is local ε-DP — for any two inputs of one client — so the
//! central options (`--delta`, `--rho`, `--neighbouring add-remove`, `--ledger`) are
//! refused rather than given a meaning they do not have (docs/privacy.md, "The local
//! model").

use dp_bench::catalogue::LocalMechanismSpec;
use dp_bench::io::answers::write_answers;
use dp_bench::io::output;
use dp_bench::registry::{BudgetArgs, check_budget_is_meaningful};
use dp_bench::{BenchError, Result, io_error, quoted};
use dp_core::{PrivacyLoss, StreamFamily, os_seeded_rng, seeded_rng};
use dp_local::{LocalProtocol, LocalSettings};
use dp_queries::{AnyWorkload, Workload};
use std::path::Path;

use crate::release::{PostArg, ReleaseArgs};

fn refuse(name: &str, what: &str) -> BenchError {
    BenchError::Usage(format!(
        "{name} is a local-model mechanism (local ε-DP: any two inputs of one client) and \
         does not take {what}; see docs/privacy.md, \"The local model\""
    ))
}

/// `dpqr release --mechanism local-…`.
pub(crate) fn release_local(args: &ReleaseArgs, spec: &LocalMechanismSpec) -> Result<()> {
    let name = spec.name;
    // out-of-range values are reported as for every mechanism (ε = 0, negative, too large)
    BudgetArgs {
        epsilon: args.epsilon,
        delta: args.delta,
        rho: args.rho,
    }
    .check_values()?;
    if args.delta.is_some() || args.rho.is_some() {
        return Err(refuse(name, "--delta or --rho (give --epsilon alone)"));
    }
    let Some(epsilon) = args.epsilon else {
        return Err(BenchError::Usage(format!(
            "{name} needs a budget: give {}",
            LocalMechanismSpec::BUDGET_FLAGS
        )));
    };
    check_budget_is_meaningful(&PrivacyLoss::Pure { epsilon })?;
    if args.neighbouring.is_some() {
        return Err(refuse(
            name,
            "--neighbouring (its guarantee is for any two inputs of one client, not for \
             neighbouring datasets): drop --neighbouring",
        ));
    }
    if args.ledger.is_some() {
        return Err(BenchError::Usage(format!(
            "{name} gives a local ε-DP guarantee (any two inputs of one client), which a \
             ledger of central spends cannot compose with them: release without --ledger and \
             account the local ε per client (docs/privacy.md, \"The local model\")"
        )));
    }
    if args.synthetic_out.is_some() {
        return Err(BenchError::Usage(format!(
            "{name} releases answers only, no synthetic data: drop --synthetic-out"
        )));
    }
    if !matches!(args.post, PostArg::None) {
        return Err(refuse(name, "--post (its answers are already projected)"));
    }
    let given = args.settings.settings().given();
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
    let request = args.request();
    request.data.check_attributes()?;
    let workload = AnyWorkload::parse_spec(
        &request.data.public_domain()?,
        &args.workload,
        args.workload_seed,
    )?;
    let Some(marginals) = workload.as_marginals() else {
        return Err(BenchError::Usage(format!(
            "{name} releases marginal workloads only, and this workload is of class {}",
            workload.class()
        )));
    };
    // the universe spans the attributes the workload touches, not the whole table
    let attrs = marginals.touched_attributes();
    let sub = marginals.on_attributes(&attrs)?;
    let outputs = request.outputs.list();
    let inputs = request.inputs();
    let inputs: Vec<(&str, &Path)> = inputs.iter().map(|(f, p)| (*f, p.as_path())).collect();
    output::check_outputs(&outputs, &inputs)?;
    let guarantee = format!(
        "{name}: local ε-DP with ε = {} (any two inputs of one client)",
        dp_core::Num(epsilon)
    );
    if args.dry_run {
        outln!("dry run: nothing read, nothing written");
        outln!("privacy: {guarantee}");
        outln!(
            "workload: {} marginals, {} counting queries over {} attributes; one simulated \
             client per record",
            sub.len(),
            sub.num_queries(),
            attrs.len()
        );
        return Ok(());
    }
    let protocol = LocalProtocol::new(spec.kind, epsilon, LocalSettings::default())?;
    let data = request.data.load(false)?;
    let names: Vec<&str> = attrs.iter().map(|&a| data.domain().name(a)).collect();
    let data = data.select_attributes(&names)?;
    let mut rng = match args.seed {
        Some(s) => {
            errln!(
                "WARNING: --seed fixes the clients' randomness: anyone who knows the seed can \
                 undo it. Use it for tests and reproducible experiments only."
            );
            seeded_rng(s)
        }
        None => os_seeded_rng()?,
    };
    let family = StreamFamily::fork(&mut rng);
    let release = protocol.run(&data, &sub, &family)?;
    let report_text = match &args.report {
        None => None,
        Some(_) => Some(
            serde_json::to_string_pretty(&serde_json::json!({
                "model": "local",
                "statement": guarantee,
                "mechanism": name,
                "epsilon": epsilon,
                "messages_per_client": release.guarantee.messages_per_client,
                "workload": args.workload,
                "marginals": sub.len(),
                "queries": sub.num_queries(),
                "clients": data.n(),
                "notes": release.notes,
            }))
            .map_err(|e| BenchError::Usage(format!("cannot encode report: {e}")))?,
        ),
    };
    let mut files = Vec::with_capacity(2);
    let mut answers_file = crate::interrupt::create_output(&args.out)?;
    output::write_maybe_compressed(&mut answers_file, |w| {
        write_answers(w, &sub, &release.answers)
    })?;
    files.push(answers_file);
    if let (Some(path), Some(text)) = (&args.report, &report_text) {
        let mut f = crate::interrupt::create_output(path)?;
        output::write_maybe_compressed(&mut f, |w| {
            w.write_all(text.as_bytes()).map_err(io_error(path))
        })?;
        files.push(f);
    }
    crate::interrupt::commit_outputs(files)?;
    outln!("privacy spent: {guarantee}");
    outln!(
        "{} clients (one per record), {} message(s) per client; not recorded in any ledger \
         (a local ε is accounted per client)",
        data.n(),
        release.guarantee.messages_per_client
    );
    outln!("wrote {}", quoted(&args.out.display().to_string()));
    Ok(())
}
