//! The data flags every subcommand shares (`--data`/`--domain`, `--dataset`, `--attributes`,
//! `--delimiter`, `--ignore-extra-columns`).

use clap::Args;
use dp_bench::Result;
use dp_bench::io::synthetic::{WeightedRecords, read_weighted, sniff_weighted};
use dp_bench::pipeline::DataSpec;
use dp_queries::{Dataset, ReadOptions, Schema};
use std::path::PathBuf;

#[derive(Args)]
pub(crate) struct DataArgs {
    /// CSV with a header row, or Parquet (a `.parquet` name or the `PAR1` magic bytes; columns
    /// matched by name): integer codes, or raw values for attributes whose schema gives
    /// labels or bins.
    #[arg(long, requires = "domain", conflicts_with = "dataset")]
    pub(crate) data: Option<PathBuf>,
    /// Domain or schema JSON (public): {"attr": size, ...}, where an entry may instead be
    /// {"labels": [...]} or {"bins": [e0, ..., ek]}, optionally with "other": true.
    #[arg(long, requires = "data")]
    pub(crate) domain: Option<PathBuf>,
    /// A bundled dataset instead of --data/--domain (see `dpqr datasets`).
    #[arg(long)]
    pub(crate) dataset: Option<String>,
    /// Keep only these attributes (comma-separated names, in this order) before the
    /// workload is built, e.g. the adult7 subset of the projection bench.
    #[arg(long, value_delimiter = ',')]
    pub(crate) attributes: Option<Vec<String>>,
    /// The character between the fields of the --data CSV: one ASCII character, e.g. ';',
    /// '|', or 'tab' (default ',').
    #[arg(long, requires = "data", value_parser = parse_delimiter)]
    pub(crate) delimiter: Option<ReadOptions>,
    /// Skip the columns of --data that the schema does not name (a column `name`, say)
    /// instead of refusing the file. They are not read at all.
    #[arg(long, requires = "data")]
    pub(crate) ignore_extra_columns: bool,
}

/// `--delimiter`: one ASCII character (`tab` or `\\t` for a tab), as
/// `dp_queries::ReadOptions` accepts it; the options it gives refuse extra columns (see
/// [`read_options`]).
pub(crate) fn parse_delimiter(text: &str) -> std::result::Result<ReadOptions, String> {
    let c = match text {
        "tab" | "\\t" => '\t',
        _ => {
            let mut chars = text.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => c,
                _ => {
                    return Err(format!(
                        "{} is not one character (give e.g. ';', '|' or 'tab')",
                        dp_bench::quoted(text)
                    ));
                }
            }
        }
    };
    ReadOptions::new(c, false).map_err(|e| e.to_string())
}

/// The reading options of `--delimiter` (parsed by [`parse_delimiter`]; default a comma)
/// and `--ignore-extra-columns`.
pub(crate) fn read_options(
    delimiter: Option<ReadOptions>,
    ignore_extra_columns: bool,
) -> ReadOptions {
    delimiter
        .unwrap_or_default()
        .ignoring_extra_columns(ignore_extra_columns)
}

impl DataArgs {
    /// The flags as the library's plain data.
    pub(crate) fn spec(&self) -> DataSpec {
        DataSpec {
            data: self.data.clone(),
            domain: self.domain.clone(),
            dataset: self.dataset.clone(),
            attributes: self.attributes.clone(),
            read: read_options(self.delimiter, self.ignore_extra_columns),
        }
    }

    /// Load the data for a NON-PRIVATE evaluation: plain records (weights `None`), or a
    /// weighted records file — one whose header holds the domain's attributes and the
    /// column `weights_column` (when given) or the synthetic weight column (automatic rule,
    /// `io::synthetic::weighted_header`) — with its weights, read through the `--domain`
    /// schema (`io::synthetic`, "Reading it back"; a file of integer codes, as older dpqr
    /// wrote them, is read as codes with a note on stderr).
    pub(crate) fn load_for_eval(&self, weights_column: Option<&str>) -> Result<WeightedData> {
        let spec = self.spec();
        spec.check_attributes()?;
        let weighted = match (&self.data, &self.domain, &self.dataset) {
            // weighted records files are CSV (`dpqr release --synthetic-out`)
            (Some(csv), Some(dom), None) if !dp_queries::is_parquet(csv) => {
                let schema = Schema::from_json_file(dom)?;
                let read = match sniff_weighted(csv, schema.domain(), weights_column)? {
                    Some(weight) => Some(read_weighted(csv, &schema, Some(&weight))?),
                    None if weights_column.is_some() => {
                        // not weighted with that column: the reader says what is wrong
                        Some(read_weighted(csv, &schema, weights_column)?)
                    }
                    None => None,
                };
                if let Some(note) = read.as_ref().and_then(|w| w.form_note(csv)) {
                    errln!("{note}");
                }
                read
            }
            _ => None,
        };
        let Some(weighted) = weighted else {
            return Ok(WeightedData::Plain(spec.load(false)?));
        };
        Ok(WeightedData::Weighted(match &self.attributes {
            None => weighted,
            Some(names) => {
                let names: Vec<&str> = names.iter().map(|n| n.trim()).collect();
                weighted.select_attributes(&names)?
            }
        }))
    }
}

/// Data read by [`DataArgs::load_for_eval`].
pub(crate) enum WeightedData {
    /// One record per row.
    Plain(Dataset),
    /// Records with weights (a synthetic file).
    Weighted(WeightedRecords),
}

impl WeightedData {
    /// The records (without their weights).
    pub(crate) fn records(&self) -> &Dataset {
        match self {
            WeightedData::Plain(d) => d,
            WeightedData::Weighted(w) => &w.records,
        }
    }
}
