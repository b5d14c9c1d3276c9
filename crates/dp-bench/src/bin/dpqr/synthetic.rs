//! `dpqr synthetic expand`: a weighted synthetic records file turned into plain integer rows
//! (largest-remainder rounding, `dp_bench::io::synthetic::expand_counts`).

use clap::{Args, Subcommand};
use dp_bench::Result;
use dp_bench::io::output::{self, AtomicFile};
use dp_bench::io::synthetic::{expand_counts, read_weighted, sniff_weighted, write_expanded};
use dp_queries::Domain;
use std::path::PathBuf;

#[derive(Subcommand)]
pub(crate) enum SyntheticCommand {
    /// Turn a weighted synthetic file into N plain rows: record i gets ⌊N·wᵢ/W⌋ rows and
    /// the rows still missing go to the largest remainders (largest-remainder rounding),
    /// so every count is within one of N·wᵢ/W and they sum to N.
    Expand(ExpandArgs),
}

#[derive(Args)]
pub(crate) struct ExpandArgs {
    /// The synthetic records CSV (`dpqr release --synthetic-out`).
    #[arg(long = "in")]
    pub(crate) input: PathBuf,
    /// The domain or schema JSON the records were released over.
    #[arg(long)]
    pub(crate) domain: PathBuf,
    /// Number of rows to write (1 to 10⁹).
    #[arg(long, allow_negative_numbers = true)]
    pub(crate) total: u64,
    /// Output CSV: the attribute names, then one row of codes per unit of count.
    #[arg(long)]
    pub(crate) out: PathBuf,
    /// Name of the weight column when it is not the one `dpqr release --synthetic-out`
    /// writes.
    #[arg(long)]
    pub(crate) weights_column: Option<String>,
}

pub(crate) fn synthetic(command: &SyntheticCommand) -> Result<()> {
    let SyntheticCommand::Expand(args) = command;
    output::check_outputs(
        &[("--out", args.out.as_path())],
        &[
            ("--in", args.input.as_path()),
            ("--domain", args.domain.as_path()),
        ],
    )?;
    let domain = Domain::from_json_file(&args.domain)?;
    let named = sniff_weighted(&args.input, &domain, args.weights_column.as_deref())?;
    let weighted = read_weighted(
        &args.input,
        &domain,
        named.as_deref().or(args.weights_column.as_deref()),
    )?;
    let counts = expand_counts(&weighted.weights, args.total)?;
    let mut file = AtomicFile::create(&args.out)?;
    output::write_maybe_compressed(&mut file, |w| write_expanded(w, &weighted.records, &counts))?;
    file.commit()?;
    let size = std::fs::metadata(&args.out).map_or(String::new(), |m| {
        format!(" ({})", output::human_size(m.len()))
    });
    outln!(
        "wrote {} rows from {} weighted records to {}{size} (largest-remainder rounding of \
         each weight's share of {})",
        args.total,
        weighted.weights.len(),
        args.out.display(),
        args.total
    );
    Ok(())
}
