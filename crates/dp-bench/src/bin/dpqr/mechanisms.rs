//! `dpqr mechanisms`: the catalogue in plain words or JSON.

use dp_bench::catalogue::{BudgetKind, MECHANISMS, MechanismSpec, Model, Reads, neighbouring_flag};
use dp_bench::{BenchError, Result};

/// `dpqr mechanisms`: every catalogue entry in plain words, or as JSON.
pub(crate) fn mechanisms(json: bool) -> Result<()> {
    if json {
        let list: Vec<serde_json::Value> = MECHANISMS.iter().map(MechanismSpec::to_json).collect();
        let text = serde_json::to_string_pretty(&list).map_err(|source| BenchError::Encode {
            what: "the list",
            source,
        })?;
        outln!("{text}");
        return Ok(());
    }
    for (i, spec) in MECHANISMS.iter().enumerate() {
        if i > 0 {
            outln!();
        }
        outln!("{}", spec.name);
        outln!("  what:           {}", spec.description);
        outln!("  guarantee:      {}", spec.guarantee);
        outln!(
            "  model:          {}",
            match spec.model {
                Model::Central(_) =>
                    "central: a trusted curator holds the records and runs the mechanism on them",
                Model::Local(_) =>
                    "local: every client randomizes its own record (one \
                    simulated client per record of the data)",
            }
        );
        outln!("  budget flags:   {}", spec.budget_flags());
        let relations = match (spec.relations(), spec.default_relation()) {
            ([], _) | (_, None) => format!("none — {}", spec.relations_note()),
            ([only], _) => format!(
                "{} only (--neighbouring {}): {}",
                spec.relation_list(),
                neighbouring_flag(*only),
                spec.relations_note()
            ),
            (all, Some(default)) => format!(
                "{} (--neighbouring {}; default {}: {})",
                spec.relation_list(),
                all.iter()
                    .map(|r| neighbouring_flag(*r))
                    .collect::<Vec<_>>()
                    .join(" or "),
                neighbouring_flag(default),
                spec.relations_note()
            ),
        };
        outln!("  neighbours:     {relations}");
        outln!(
            "  synthetic data: {}",
            if spec.synthetic {
                "yes, weighted synthetic records (--synthetic-out)"
            } else {
                "no, answers only"
            }
        );
        outln!(
            "  reads:          {}",
            match spec.reads {
                Reads::WorkloadCounts => "the workload's exact counts only: a --data file is \
                    streamed in bounded memory; --stream and --engine are accepted"
                    .to_string(),
                Reads::Tables(tables) => format!(
                    "the exact counts of its counting plan: {tables}; a --data file is \
                     streamed in bounded memory; --stream and --engine are accepted"
                ),
                Reads::Records => "the records (loaded in memory)".to_string(),
            }
        );
        outln!("  domain:         {}", spec.universe);
        outln!("  wrong choice when: {}", spec.wrong_choice);
        if spec.post_processing {
            outln!(
                "  post:           --post simplex projects each table of its answers onto \
                 the proportions (they need not be tables of proportions)"
            );
        }
        if spec.settings.is_empty() {
            outln!("  settings:       none");
        }
        for (i, s) in spec.settings.iter().enumerate() {
            outln!(
                "  {:<16}{} — {} (default {}{})",
                if i == 0 { "settings:" } else { "" },
                s.kind.flag(),
                s.meaning,
                (s.default)(),
                s.unit
            );
        }
    }
    let kinds: Vec<String> = BudgetKind::ALL
        .iter()
        .map(|k| format!("{} is {}", k.flags(), k.describe()))
        .collect();
    outln!();
    outln!("Budget flags: {}.", kinds.join("; "));
    outln!();
    outln!(
        "Not sure? `dpqr release --mechanism auto` chooses from the workload's class and the \
         budget's kind alone (public inputs): adaptive-projection for marginal tables under \
         --rho or --epsilon with --delta, laplace with --post simplex for marginal tables \
         under --epsilon alone, gaussian (or laplace under --epsilon alone) for the other \
         classes, and says why (the rule and its evidence: docs/auto.md)."
    );
    Ok(())
}
