//! Where a release's private input comes from: the data flags as plain data ([`DataSpec`]:
//! a `--data` file with its `--domain`, or a bundled table, optionally restricted to
//! `--attributes`), the public domain and schema read from them, and the three ways of
//! counting — records loaded in memory, one streaming pass over a CSV or Parquet file, or
//! a query engine ([`super::engine`]).

use crate::io::datasets;
use crate::io::synthetic::{sniff_weighted, weighted_header};
use crate::{BenchError, Result, io_error, quoted};
use dp_queries::{AnyWorkload, Dataset, Domain, QueryError, ReadOptions, Schema, StreamSettings};
use std::path::{Path, PathBuf};

/// The data of a release or an evaluation, as the flags give it: `data` with `domain` (a
/// file and its public domain or schema), or `dataset` (a bundled table), and optionally
/// the `attributes` to keep. Which combination is given is checked where it is first
/// needed, so a bad budget or mechanism is reported first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DataSpec {
    /// `--data`: a CSV (or gzip CSV) with a header row, or a Parquet file.
    pub data: Option<PathBuf>,
    /// `--domain`: the domain or schema JSON of `data` (public).
    pub domain: Option<PathBuf>,
    /// `--dataset`: a bundled table instead of `data` and `domain`.
    pub dataset: Option<String>,
    /// `--attributes`: keep only these attributes, in this order.
    pub attributes: Option<Vec<String>>,
    /// `--delimiter`, `--ignore-extra-columns`: how `data` is read (the default: commas,
    /// every column an attribute of the schema).
    pub read: ReadOptions,
}

/// The error for data flags that name no data.
fn no_data() -> BenchError {
    BenchError::Usage("give --data FILE.csv --domain FILE.json, or --dataset NAME".into())
}

impl DataSpec {
    /// The key of the dataset in a ledger: `bundled:NAME` or `file:<canonical path>`.
    pub fn ledger_key(&self) -> Result<String> {
        match (&self.data, &self.dataset) {
            (Some(csv), None) => Ok(format!(
                "file:{}",
                std::fs::canonicalize(csv).map_err(io_error(csv))?.display()
            )),
            (None, Some(name)) => Ok(format!("bundled:{}", datasets::bundled(name)?.name)),
            _ => Err(no_data()),
        }
    }

    /// `Ok` unless `--attributes` names an attribute twice (checked before any data is
    /// read).
    pub fn check_attributes(&self) -> Result<()> {
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

    /// The names of `--attributes`, trimmed.
    fn attribute_names(&self) -> Option<Vec<&str>> {
        self.attributes
            .as_ref()
            .map(|names| names.iter().map(|n| n.trim()).collect())
    }

    /// The domain (from `--domain` or the bundled dataset, restricted to `--attributes`),
    /// read without the data: public.
    pub fn public_domain(&self) -> Result<Domain> {
        self.check_attributes()?;
        let domain = match (&self.data, &self.domain, &self.dataset) {
            (Some(_), Some(dom), None) => Domain::from_json_file(dom)?,
            (None, None, Some(name)) => {
                let b = datasets::bundled(name)?;
                Domain::from_json_str(b.domain_json, b.name)?
            }
            _ => return Err(no_data()),
        };
        match self.attribute_names() {
            None => Ok(domain),
            Some(names) => {
                let idx = names
                    .iter()
                    .map(|n| domain.index_of(n))
                    .collect::<std::result::Result<Vec<_>, _>>()?;
                Ok(domain.project(&idx)?)
            }
        }
    }

    /// The schema (from `--domain`, or the bundled dataset's domain: integer codes),
    /// restricted to `--attributes`, read without the data: public. Synthetic files are
    /// written and read through it (`io::synthetic`).
    pub fn public_schema(&self) -> Result<Schema> {
        self.check_attributes()?;
        let schema = self.full_schema()?;
        match self.attribute_names() {
            None => Ok(schema),
            Some(names) => Ok(schema.select(&names)?),
        }
    }

    /// The schema of the whole file or bundled table (`--attributes` not applied).
    fn full_schema(&self) -> Result<Schema> {
        match (&self.data, &self.domain, &self.dataset) {
            (Some(_), Some(dom), None) => Ok(Schema::from_json_file(dom)?),
            (None, None, Some(name)) => {
                let b = datasets::bundled(name)?;
                Ok(Schema::from_json_str(b.domain_json, b.name)?)
            }
            _ => Err(no_data()),
        }
    }

    /// The input files given (`--data`, `--domain`) with their flags.
    pub fn input_files(&self) -> Vec<(&'static str, PathBuf)> {
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
    /// `dp_queries::count_file_streaming`) or a bundled dataset. The streamed
    /// file holds exactly the domain's columns (a release refuses `--attributes` with a
    /// stream before anything is read). Without `allow_empty`, a file with no records is an
    /// error.
    pub fn stream_counts(
        &self,
        workload: &AnyWorkload,
        settings: &StreamSettings,
        allow_empty: bool,
    ) -> Result<(Vec<i64>, usize)> {
        let (streamed, label) = match (&self.data, &self.domain, &self.dataset) {
            (Some(path), Some(dom), None) => {
                let schema = Schema::from_json_file(dom)?;
                let label = path.display().to_string();
                self.refuse_weighted_when_ignoring(path, schema.domain())?;
                match dp_queries::count_file_streaming(
                    path, &schema, &self.read, workload, settings,
                ) {
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
                let schema =
                    Schema::from_json_str(b.domain_json, &format!("{}-domain.json", b.name))?;
                let label = format!("{}.csv (bundled)", b.name);
                (
                    dp_queries::count_csv_streaming(
                        b.csv,
                        &label,
                        &schema,
                        &ReadOptions::default(),
                        workload,
                        settings,
                    )?,
                    label,
                )
            }
            _ => return Err(no_data()),
        };
        if streamed.rows == 0 && !allow_empty {
            return Err(QueryError::NoRecords { file: label }.into());
        }
        Ok((streamed.counts, row_count(streamed.rows)?))
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
    pub fn load(&self, allow_empty: bool) -> Result<Dataset> {
        self.check_attributes()?;
        let data = match (&self.data, &self.domain, &self.dataset) {
            (Some(csv), Some(dom), None) => {
                let schema = Schema::from_json_file(dom)?;
                self.refuse_weighted_when_ignoring(csv, schema.domain())?;
                match Dataset::load_file_with(csv, &schema, &self.read, allow_empty) {
                    Ok(data) => data,
                    Err(e @ QueryError::ExtraColumn { .. }) => {
                        return Err(explain_extra_column(e, csv, schema.domain()));
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            (None, None, Some(name)) => datasets::bundled(name)?.load()?,
            _ => return Err(no_data()),
        };
        match self.attribute_names() {
            None => Ok(data),
            Some(names) => Ok(data.select_attributes(&names)?),
        }
    }
}

impl DataSpec {
    /// With `--ignore-extra-columns`, the refusal of a weighted records file (its weight
    /// column would otherwise be ignored as an extra column, and its weighted rows read as
    /// one per person): the same refusal as without the option ([`refuse_weighted`]).
    fn refuse_weighted_when_ignoring(&self, path: &Path, domain: &Domain) -> Result<()> {
        if !self.read.ignores_extra_columns() || dp_queries::is_parquet(path) {
            return Ok(());
        }
        // the header only (the file may be large and is read again by the release)
        match self
            .csv_header(path)?
            .and_then(|h| weighted_header(&h, domain, None))
        {
            Some(weight) => Err(refuse_weighted(path, &weight)),
            None => Ok(()),
        }
    }

    /// The column names of the CSV `path` (its first non-blank line, split by the
    /// `--delimiter`), `None` when it has none; nothing past the header is read.
    fn csv_header(&self, path: &Path) -> Result<Option<Vec<String>>> {
        use std::io::BufRead;
        let mut reader = dp_queries::open_csv(path)?;
        let mut line = Vec::new();
        while line.iter().all(u8::is_ascii_whitespace) {
            line.clear();
            if reader
                .read_until(b'\n', &mut line)
                .map_err(io_error(path))?
                == 0
            {
                return Ok(None); // no header: the loader says so
            }
        }
        let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&line);
        Ok(csv::ReaderBuilder::new()
            .has_headers(false)
            .delimiter(self.read.delimiter())
            .from_reader(line)
            .records()
            .next()
            .and_then(|r| r.ok())
            .map(|r| r.iter().map(str::to_string).collect::<Vec<_>>()))
    }

    /// The dry run's check of `--data` (issue #26 item 4): the file exists and its header
    /// fits the `--domain` schema as the release's loader would check it (names, and for
    /// Parquet the column types, from the footer) — **names only, no data value is read**
    /// ([`dp_queries::check_file_header`]). A weighted records file is refused as the
    /// release refuses it (by its header). A bundled table needs no check.
    pub fn check_header(&self) -> Result<()> {
        let Some(path) = &self.data else {
            return Ok(());
        };
        let schema = self.full_schema()?;
        self.refuse_weighted_when_ignoring(path, schema.domain())?;
        match dp_queries::check_file_header(path, &schema, &self.read) {
            Ok(()) => Ok(()),
            Err(e @ QueryError::ExtraColumn { .. }) => {
                match self
                    .csv_header(path)?
                    .and_then(|h| weighted_header(&h, schema.domain(), None))
                {
                    Some(weight) => Err(refuse_weighted(path, &weight)),
                    None => Err(e.into()),
                }
            }
            Err(e) => Err(e.into()),
        }
    }
}

/// A count of records from a file as a `usize`.
pub(crate) fn row_count(rows: u64) -> Result<usize> {
    usize::try_from(rows).map_err(|_| BenchError::TooManyRecords)
}

/// An extra column in a release's input: when the file is a weighted records file (a
/// synthetic file, `io::synthetic::weighted_header`), the refusal that says why and points to
/// `dpqr synthetic expand` ([`DataSpec::load`]); otherwise the loader's error `e` as it is.
/// The loaders and the streaming pass give the same answer for the same file.
fn explain_extra_column(e: QueryError, csv: &Path, domain: &Domain) -> BenchError {
    match sniff_weighted(csv, domain, None) {
        Ok(Some(weight)) => refuse_weighted(csv, &weight),
        Ok(None) => e.into(),
        Err(other) => other,
    }
}

/// The refusal of a weighted records file as the private input of a release.
pub fn refuse_weighted(csv: &Path, weight: &str) -> BenchError {
    BenchError::WeightedRecords {
        file: csv.display().to_string(),
        column: quoted(weight),
    }
}

/// The private input of a release as counted: the records, or exact counts — the
/// workload's, or those of the mechanism's counting plan — and the number of records
/// (streamed, or from an engine).
pub enum PrivateInput {
    /// The records, loaded in memory.
    Records(Dataset),
    /// The workload's exact counts, in query order, and the number of records.
    Counts {
        /// One exact count per query of the workload.
        counts: Vec<i64>,
        /// The number of records.
        rows: usize,
    },
    /// The exact counts of the tables of the mechanism's counting plan
    /// ([`dp_mechanisms::Mechanism::counting_plan`]), in their query order, and the number
    /// of records.
    Planned {
        /// One exact count per cell of the plan's tables.
        counts: Vec<i64>,
        /// The number of records.
        rows: usize,
    },
}

impl PrivateInput {
    /// The number of records (private under add/remove neighbours: never output it then).
    pub fn n(&self) -> usize {
        match self {
            PrivateInput::Records(d) => d.n(),
            PrivateInput::Counts { rows, .. } | PrivateInput::Planned { rows, .. } => *rows,
        }
    }

    /// Run `mech` on this input (consumed: the counts move into the mechanism).
    pub fn release(
        self,
        mech: &dyn dp_mechanisms::Mechanism<AnyWorkload>,
        workload: &AnyWorkload,
        rng: &mut dyn rand::CryptoRng,
    ) -> dp_mechanisms::Result<dp_mechanisms::Release> {
        match self {
            PrivateInput::Records(d) => mech.release(&d, workload, rng),
            PrivateInput::Counts { counts, rows } => {
                mech.release_counts(counts, rows, workload, rng)
            }
            PrivateInput::Planned { counts, rows } => {
                mech.release_planned(counts, rows, workload, rng)
            }
        }
    }
}
