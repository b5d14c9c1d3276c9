//! `dpqr synthetic expand`: a weighted synthetic records file turned into plain rows
//! (largest-remainder rounding, `dp_bench::io::synthetic::expand_counts`), written in the
//! form of the data its `--domain` schema reads (`dp_bench::io::synthetic`, "Values in the
//! input's own form"): a binned attribute's value drawn uniformly within its bin, afresh
//! for every row, from the operating system's entropy or `--seed` (issue #26).

use clap::{Args, Subcommand};
use dp_bench::Result;
use dp_bench::io::output::{self, AtomicFile};
use dp_bench::io::synthetic::{
    BinValues, expand_counts, read_weighted, sniff_weighted, write_expanded,
};
use dp_queries::Schema;
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
    /// The domain or schema JSON the records were released over — the same `--domain` file
    /// as the release's: the rows are written in the form of its data (labels, a value of
    /// each bin, `other`) and read back through it as the same codes.
    #[arg(long)]
    pub(crate) domain: PathBuf,
    /// Number of rows to write (1 to 10⁹).
    #[arg(long, allow_negative_numbers = true)]
    pub(crate) total: u64,
    /// Output CSV: the attribute names, then one row per unit of count, in the form of the
    /// data the schema reads (integer codes for attributes given by a size alone).
    #[arg(long)]
    pub(crate) out: PathBuf,
    /// Name of the weight column when it is not the one `dpqr release --synthetic-out`
    /// writes.
    #[arg(long)]
    pub(crate) weights_column: Option<String>,
    /// Seed of the values drawn within bins (ChaCha20), for reproducible files; without it
    /// the operating system seeds the generator. The values are drawn from the released
    /// records alone (post-processing): the seed reveals nothing about the data.
    #[arg(long, allow_negative_numbers = true)]
    pub(crate) seed: Option<u64>,
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
    let schema = Schema::from_json_file(&args.domain)?;
    let named = sniff_weighted(&args.input, schema.domain(), args.weights_column.as_deref())?;
    let weighted = read_weighted(
        &args.input,
        &schema,
        named.as_deref().or(args.weights_column.as_deref()),
    )?;
    if let Some(note) = weighted.form_note(&args.input) {
        errln!("{note}");
    }
    let counts = expand_counts(&weighted.weights, args.total)?;
    let mut rng = match args.seed {
        Some(seed) => dp_core::seeded_rng(seed),
        None => dp_core::os_seeded_rng()?,
    };
    let mut file = AtomicFile::create(&args.out)?;
    output::write_maybe_compressed(&mut file, |w| {
        write_expanded(
            w,
            &weighted.records,
            &counts,
            &schema,
            &mut BinValues::Uniform(&mut rng),
        )
    })?;
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
