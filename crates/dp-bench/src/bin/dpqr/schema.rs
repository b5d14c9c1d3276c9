//! `dpqr schema draft` and `dpqr schema check` (both NON-PRIVATE: they read the data and
//! print what they found in it).

use crate::data::{parse_delimiter, read_options};
use clap::Subcommand;
use dp_bench::{BenchError, Result, quoted};
use dp_queries::ReadOptions;
use dp_queries::io::{CheckSettings, ColumnCheck, DataCheck, Destination, Finding, check_csv};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[derive(Subcommand)]
pub(crate) enum SchemaCommand {
    /// NON-PRIVATE: draft a schema by reading the data (printed as JSON on stdout). The
    /// draft discloses the data (its labels, minima and maxima): review and coarsen it —
    /// public, data-independent labels and round bin edges — before releasing with it.
    Draft {
        /// CSV of raw values with a header row (gzip-compressed or not).
        #[arg(long)]
        data: PathBuf,
        /// Bin a numeric column with more distinct values than this; otherwise keep at
        /// most this many of its most frequent values as labels (plus an "other" bucket).
        #[arg(long, default_value_t = 20)]
        max_labels: usize,
        /// Number of equal-width bins of a binned column.
        #[arg(long, default_value_t = 10)]
        bins: usize,
        /// The character between fields: one ASCII character, e.g. ';', '|', or 'tab'
        /// (default ',').
        #[arg(long, value_parser = parse_delimiter)]
        delimiter: Option<ReadOptions>,
    },
    /// NON-PRIVATE: check a CSV against its schema before a release. Per schema column:
    /// cells in the schema, empty cells (and whether they go to the "missing" code, the
    /// "other" bucket or are refused), values outside the schema — near-misses first: a
    /// label with spaces around it or in another case, a number in a label column, a
    /// non-number or a number outside every bin in a binned column — with a few examples
    /// and their lines; and the columns the schema does not name. A report on stdout (JSON
    /// with --json); the exit status is 0 whenever the check ran, whatever it found.
    Check {
        /// CSV of raw values with a header row (gzip-compressed or not).
        #[arg(long)]
        data: PathBuf,
        /// The schema (or domain) JSON the data is to be released through.
        #[arg(long, alias = "schema")]
        domain: PathBuf,
        /// The character between fields: one ASCII character, e.g. ';', '|', or 'tab'
        /// (default ',').
        #[arg(long, value_parser = parse_delimiter)]
        delimiter: Option<ReadOptions>,
        /// Check as a release with --ignore-extra-columns reads the file: columns the
        /// schema does not name are listed but not counted as a refusal.
        #[arg(long)]
        ignore_extra_columns: bool,
        /// Print the report as JSON (module `dp_queries::io::check`: one object per column).
        #[arg(long)]
        json: bool,
        /// At most this many example values per column (distinct, in file order).
        #[arg(long, default_value_t = 3)]
        examples: usize,
    },
}

pub(crate) fn schema(cmd: &SchemaCommand) -> Result<()> {
    match cmd {
        SchemaCommand::Draft {
            data,
            max_labels,
            bins,
            delimiter,
        } => draft(data, *max_labels, *bins, read_options(*delimiter, false)),
        SchemaCommand::Check {
            data,
            domain,
            delimiter,
            ignore_extra_columns,
            json,
            examples,
        } => check(
            data,
            domain,
            read_options(*delimiter, *ignore_extra_columns),
            *json,
            *examples,
        ),
    }
}

/// `dpqr schema draft`.
fn draft(data: &Path, max_labels: usize, bins: usize, options: ReadOptions) -> Result<()> {
    if max_labels == 0 || bins == 0 {
        return Err(BenchError::Usage(
            "--max-labels and --bins must be at least 1".into(),
        ));
    }
    refuse_parquet(data, "draft")?;
    let settings = dp_queries::DraftSettings {
        max_labels,
        bins,
        delimiter: options.delimiter(),
    };
    let draft = dp_queries::draft_schema(
        dp_queries::open_csv(data)?,
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

/// The two data commands read CSV (plain or gzip) only.
fn refuse_parquet(data: &Path, command: &str) -> Result<()> {
    if dp_queries::is_parquet(data) {
        return Err(BenchError::Usage(format!(
            "`dpqr schema {command}` reads CSV files (plain or gzip-compressed); {} is \
             Parquet: export it as CSV for the check",
            data.display()
        )));
    }
    Ok(())
}

/// `dpqr schema check`.
fn check(
    data: &Path,
    domain: &Path,
    options: ReadOptions,
    json: bool,
    examples: usize,
) -> Result<()> {
    let schema = dp_queries::Schema::from_json_file(domain)?;
    refuse_parquet(data, "check")?;
    let reader = dp_queries::open_csv(data)?;
    let report = check_csv(
        reader,
        &data.display().to_string(),
        &schema,
        &options,
        &CheckSettings { examples },
    )?;
    errln!(
        "WARNING: NON-PRIVATE. This check was made by reading {}: its counts and example \
         values come from the private records and can disclose them. Use it to fix the data \
         or the schema; never publish it, and keep the schema public and data-independent \
         (do not add labels or move bin edges to fit individual records).",
        data.display()
    );
    if json {
        let text = serde_json::to_string_pretty(&report).map_err(|source| BenchError::Encode {
            what: "the report",
            source,
        })?;
        outln!("{text}");
    } else {
        out!("{}", render(&report, domain));
    }
    Ok(())
}

/// Where a cell goes, in words.
fn destination(d: Destination) -> &'static str {
    match d {
        Destination::Missing => "missing",
        Destination::Other => "other",
        Destination::Refused => "REFUSED",
    }
}

/// One example line of a column.
fn example(f: &Finding) -> String {
    let nearest = match &f.nearest {
        Some(label) => format!(" (meant {}?)", quoted(label)),
        None => String::new(),
    };
    format!(
        "    line {}: {} — {}{nearest} → {}",
        f.line,
        quoted(&f.value),
        f.kind.describe(),
        destination(f.goes_to)
    )
}

/// The report of one column.
fn render_column(out: &mut String, c: &ColumnCheck) {
    let mut codes = vec![c.encoding];
    if c.has_missing {
        codes.push("missing");
    }
    if c.has_other {
        codes.push("other");
    }
    let _ = write!(
        out,
        "column {} ({}): {} in the schema",
        quoted(&c.name),
        codes.join(", "),
        c.in_schema
    );
    if c.empty > 0 {
        let _ = write!(
            out,
            ", {} empty → {}",
            c.empty,
            destination(c.empty_goes_to)
        );
    }
    if c.outside > 0 {
        let to = if c.has_other { "other" } else { "REFUSED" };
        let _ = write!(
            out,
            ", {} outside the schema → {to} ({} near-misses)",
            c.outside, c.near_misses
        );
    }
    out.push('\n');
    if !c.kinds.is_empty() {
        let kinds: Vec<String> = c
            .kinds
            .iter()
            .map(|(k, n)| format!("{}: {n}", k.describe()))
            .collect();
        let _ = writeln!(out, "    {}", kinds.join("; "));
    }
    for f in &c.examples {
        let _ = writeln!(out, "{}", example(f));
    }
}

/// The human-readable report (stdout without --json).
fn render(r: &DataCheck, domain: &Path) -> String {
    let mut out = format!(
        "NON-PRIVATE data check of {} through {}: {} records\n",
        r.file,
        domain.display(),
        r.rows
    );
    for c in &r.columns {
        render_column(&mut out, c);
    }
    if !r.extra_columns.is_empty() {
        let names: Vec<String> = r.extra_columns.iter().map(|n| quoted(n)).collect();
        let how = if r.extra_columns_ignored {
            "ignored (--ignore-extra-columns)"
        } else {
            "a release refuses the file unless given --ignore-extra-columns"
        };
        let _ = writeln!(
            out,
            "columns outside the schema: {} — {how}",
            names.join(", ")
        );
    }
    match &r.first_refused {
        Some((column, f)) => {
            let _ = writeln!(
                out,
                "result: a release through this schema refuses the file: first at line {}, \
                 column {}: {} ({}); declare \"other\": true (or \"missing\": true for empty \
                 cells) for that column, or fix the data",
                f.line,
                quoted(column),
                quoted(&f.value),
                f.kind.describe()
            );
        }
        None if !r.release_reads_all() => {
            let _ = writeln!(
                out,
                "result: a release through this schema refuses the file for its extra columns"
            );
        }
        None => {
            let _ = writeln!(
                out,
                "result: a release through this schema reads every record (check the counts \
                 going to \"other\" above)"
            );
        }
    }
    out
}
