//! The data flags every subcommand shares (`--data`/`--domain`, `--dataset`, `--attributes`).

use clap::Args;
use dp_bench::io::datasets;
use dp_bench::io::synthetic::{WeightedRecords, read_weighted, sniff_weighted};
use dp_bench::{BenchError, Result, io_error, quoted};
use dp_queries::{Dataset, Domain, QueryError, Schema};
use std::path::{Path, PathBuf};

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
}

impl DataArgs {
    /// The key of the dataset in a ledger: `bundled:NAME` or `file:<canonical CSV path>`.
    pub(crate) fn ledger_key(&self) -> Result<String> {
        match (&self.data, &self.dataset) {
            (Some(csv), None) => Ok(format!(
                "file:{}",
                std::fs::canonicalize(csv).map_err(io_error(csv))?.display()
            )),
            (None, Some(name)) => Ok(format!("bundled:{}", datasets::bundled(name)?.name)),
            _ => Err(BenchError::Usage(
                "give --data FILE.csv --domain FILE.json, or --dataset NAME".into(),
            )),
        }
    }

    /// `Ok` unless `--attributes` names an attribute twice (checked before any data is
    /// read).
    pub(crate) fn check_attributes(&self) -> Result<()> {
        let Some(names) = &self.attributes else {
            return Ok(());
        };
        for (i, name) in names.iter().enumerate() {
            if names[..i].iter().any(|n| n.trim() == name.trim()) {
                return Err(BenchError::Usage(format!(
                    "--attributes names the attribute {} twice; give each attribute once",
                    quoted(name.trim())
                )));
            }
        }
        Ok(())
    }

    /// The domain (from `--domain` or the bundled dataset, restricted to `--attributes`),
    /// read without the data: public.
    pub(crate) fn public_domain(&self) -> Result<Domain> {
        self.check_attributes()?;
        let domain = match (&self.data, &self.domain, &self.dataset) {
            (Some(_), Some(dom), None) => Domain::from_json_file(dom)?,
            (None, None, Some(name)) => {
                let b = datasets::bundled(name)?;
                Domain::from_json_str(b.domain_json, b.name)?
            }
            _ => {
                return Err(BenchError::Usage(
                    "give --data FILE.csv --domain FILE.json, or --dataset NAME".into(),
                ));
            }
        };
        match &self.attributes {
            None => Ok(domain),
            Some(names) => {
                let idx = names
                    .iter()
                    .map(|n| domain.index_of(n.trim()))
                    .collect::<std::result::Result<Vec<_>, _>>()?;
                Ok(domain.project(&idx)?)
            }
        }
    }

    /// The schema (from `--domain`, or the bundled dataset's domain: integer codes),
    /// restricted to `--attributes`, read without the data: public. Synthetic files are
    /// written and read through it (`io::synthetic`).
    pub(crate) fn public_schema(&self) -> Result<Schema> {
        self.check_attributes()?;
        let schema = match (&self.data, &self.domain, &self.dataset) {
            (Some(_), Some(dom), None) => Schema::from_json_file(dom)?,
            (None, None, Some(name)) => {
                let b = datasets::bundled(name)?;
                Schema::from_json_str(b.domain_json, b.name)?
            }
            _ => {
                return Err(BenchError::Usage(
                    "give --data FILE.csv --domain FILE.json, or --dataset NAME".into(),
                ));
            }
        };
        match &self.attributes {
            None => Ok(schema),
            Some(names) => {
                let names: Vec<&str> = names.iter().map(|n| n.trim()).collect();
                Ok(schema.select(&names)?)
            }
        }
    }

    /// The input files given (`--data`, `--domain`) with their flags.
    pub(crate) fn input_files(&self) -> Vec<(&'static str, PathBuf)> {
        let mut v = Vec::new();
        if let Some(p) = &self.data {
            v.push(("--data", p.clone()));
        }
        if let Some(p) = &self.domain {
            v.push(("--domain", p.clone()));
        }
        v
    }

    /// The exact counts of `workload` over the data in one streaming pass, in bounded memory,
    /// and the number of records: `--data` (CSV, gzip-compressed CSV or Parquet, told apart by
    /// `dp_queries::count_file_streaming`) or a bundled dataset. `--attributes` is refused (the
    /// streamed file must hold exactly the domain's columns). Without `allow_empty`, a file
    /// with no records is an error.
    pub(crate) fn stream_counts(
        &self,
        workload: &dp_queries::AnyWorkload,
        settings: &dp_queries::StreamSettings,
        allow_empty: bool,
    ) -> Result<(Vec<i64>, usize)> {
        if self.attributes.is_some() {
            return Err(BenchError::Usage(
                "--stream reads files holding exactly the domain's columns: drop --attributes \
                 (or write the selected columns to a file first)"
                    .into(),
            ));
        }
        let (streamed, label) = match (&self.data, &self.domain, &self.dataset) {
            (Some(path), Some(dom), None) => {
                let schema = dp_queries::Schema::from_json_file(dom)?;
                let label = path.display().to_string();
                match dp_queries::count_file_streaming(path, &schema, workload, settings) {
                    Ok(counted) => (counted, label),
                    // weighted records files are CSV (`dpqr release --synthetic-out`)
                    Err(e @ QueryError::ExtraColumn { .. }) if !dp_queries::is_parquet(path) => {
                        return Err(explain_extra_column(e, path, schema.domain()));
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            (None, None, Some(name)) => {
                let b = datasets::bundled(name)?;
                let schema = dp_queries::Schema::from_json_str(
                    b.domain_json,
                    &format!("{}-domain.json", b.name),
                )?;
                let label = format!("{}.csv (bundled)", b.name);
                (
                    dp_queries::count_csv_streaming(b.csv, &label, &schema, workload, settings)?,
                    label,
                )
            }
            _ => {
                return Err(BenchError::Usage(
                    "give --data FILE.csv --domain FILE.json, or --dataset NAME".into(),
                ));
            }
        };
        if streamed.rows == 0 && !allow_empty {
            return Err(dp_queries::QueryError::NoRecords { file: label }.into());
        }
        let rows = usize::try_from(streamed.rows)
            .map_err(|_| BenchError::Usage("more records than this machine can count".into()))?;
        Ok((streamed.counts, rows))
    }

    /// Load the data. With `allow_empty` (add/remove neighbours, where the empty dataset
    /// must be releasable like any other) a CSV with a header and no records is the empty
    /// dataset rather than an error.
    ///
    /// A weighted records file (a synthetic file of `dpqr release --synthetic-out`, by the
    /// rule of `io::synthetic::weighted_header`) is refused with an error that says why and
    /// points to `dpqr synthetic expand`: its rows are not one per person, so a release on
    /// them would not have the sensitivity the mechanisms are calibrated to
    /// (docs/privacy.md, "Synthetic files as input").
    pub(crate) fn load(&self, allow_empty: bool) -> Result<Dataset> {
        self.check_attributes()?;
        let data = match (&self.data, &self.domain, &self.dataset) {
            (Some(csv), Some(dom), None) => {
                let loaded = if allow_empty {
                    Dataset::load_file_allowing_empty(csv, dom)
                } else {
                    Dataset::load_file(csv, dom)
                };
                match loaded {
                    Ok(data) => data,
                    Err(e @ QueryError::ExtraColumn { .. }) => {
                        let domain = Domain::from_json_file(dom)?;
                        return Err(explain_extra_column(e, csv, &domain));
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            (None, None, Some(name)) => datasets::bundled(name)?.load()?,
            _ => {
                return Err(BenchError::Usage(
                    "give --data FILE.csv --domain FILE.json, or --dataset NAME".into(),
                ));
            }
        };
        match &self.attributes {
            None => Ok(data),
            Some(names) => {
                let names: Vec<&str> = names.iter().map(|n| n.trim()).collect();
                Ok(data.select_attributes(&names)?)
            }
        }
    }

    /// Load the data for a NON-PRIVATE evaluation: plain records (weights `None`), or a
    /// weighted records file — one whose header holds the domain's attributes and the
    /// column `weights_column` (when given) or the synthetic weight column (automatic rule,
    /// `io::synthetic::weighted_header`) — with its weights, read through the `--domain`
    /// schema (`io::synthetic`, "Reading it back"; a file of integer codes, as older dpqr
    /// wrote them, is read as codes with a note on stderr).
    pub(crate) fn load_for_eval(&self, weights_column: Option<&str>) -> Result<WeightedData> {
        self.check_attributes()?;
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
            return Ok(WeightedData::Plain(self.load(false)?));
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

/// An extra column in a release's input: when the file is a weighted records file (a
/// synthetic file, `io::synthetic::weighted_header`), the refusal that says why and points to
/// `dpqr synthetic expand` ([`DataArgs::load`]); otherwise the loader's error `e` as it is.
/// The loaders and the streaming pass give the same answer for the same file.
fn explain_extra_column(e: QueryError, csv: &Path, domain: &Domain) -> BenchError {
    match sniff_weighted(csv, domain, None) {
        Ok(Some(weight)) => refuse_weighted(csv, &weight),
        Ok(None) => e.into(),
        Err(other) => other,
    }
}

/// The refusal of a weighted records file as the private input of a release.
pub(crate) fn refuse_weighted(csv: &std::path::Path, weight: &str) -> BenchError {
    BenchError::Usage(format!(
        "{} is a weighted records file (its column {} holds weights, as `dpqr release \
         --synthetic-out` writes them), not one row per person: a release on weighted rows \
         would not have the sensitivity the mechanisms are calibrated to, so it is refused. \
         To use the file as data, expand it to integer rows first with `dpqr synthetic \
         expand --in FILE --domain DOMAIN --total N --out ROWS.csv` (the guarantee then \
         protects those rows; see docs/privacy.md)",
        csv.display(),
        quoted(weight)
    ))
}
