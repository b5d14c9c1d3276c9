//! `dpqr schema draft` (NON-PRIVATE).

use clap::Subcommand;
use dp_bench::{BenchError, Result, io_error};
use std::path::PathBuf;

#[derive(Subcommand)]
pub(crate) enum SchemaCommand {
    /// NON-PRIVATE: draft a schema by reading the data (printed as JSON on stdout). The
    /// draft discloses the data (its labels, minima and maxima): review and coarsen it —
    /// public, data-independent labels and round bin edges — before releasing with it.
    Draft {
        /// CSV of raw values with a header row.
        #[arg(long)]
        data: PathBuf,
        /// Bin a numeric column with more distinct values than this; otherwise keep at
        /// most this many of its most frequent values as labels (plus an "other" bucket).
        #[arg(long, default_value_t = 20)]
        max_labels: usize,
        /// Number of equal-width bins of a binned column.
        #[arg(long, default_value_t = 10)]
        bins: usize,
    },
}

pub(crate) fn schema(cmd: &SchemaCommand) -> Result<()> {
    let SchemaCommand::Draft {
        data,
        max_labels,
        bins,
    } = cmd;
    if *max_labels == 0 || *bins == 0 {
        return Err(BenchError::Usage(
            "--max-labels and --bins must be at least 1".into(),
        ));
    }
    let file = std::fs::File::open(data).map_err(io_error(data))?;
    let settings = dp_queries::DraftSettings {
        max_labels: *max_labels,
        bins: *bins,
    };
    let draft = dp_queries::draft_schema(
        std::io::BufReader::new(file),
        &data.display().to_string(),
        settings,
    )?;
    errln!(
        "WARNING: NON-PRIVATE. This draft was made by reading {}: its labels, minima and \
         maxima come from the private records and can disclose them. A schema must be public \
         and fixed without looking at the data: review and coarsen the draft (public category \
         lists, round bin edges chosen without the data, rare labels merged into \"other\") \
         before any release uses it, and never publish the draft itself.",
        data.display()
    );
    out!("{draft}");
    Ok(())
}
