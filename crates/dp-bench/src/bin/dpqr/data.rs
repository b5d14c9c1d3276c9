//! The data flags every subcommand shares (`--data`/`--domain`, `--dataset`, `--attributes`).

use clap::Args;
use dp_bench::io::datasets;
use dp_bench::{BenchError, Result, io_error, quoted};
use dp_queries::{Dataset, Domain};
use std::path::PathBuf;

#[derive(Args)]
pub(crate) struct DataArgs {
    /// CSV with a header row: integer codes, or raw values for attributes whose schema
    /// gives labels or bins.
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

    /// Load the data. With `allow_empty` (add/remove neighbours, where the empty dataset
    /// must be releasable like any other) a CSV with a header and no records is the empty
    /// dataset rather than an error.
    pub(crate) fn load(&self, allow_empty: bool) -> Result<Dataset> {
        self.check_attributes()?;
        let data = match (&self.data, &self.domain, &self.dataset) {
            (Some(csv), Some(dom), None) if allow_empty => {
                Dataset::load_csv_allowing_empty(csv, dom)?
            }
            (Some(csv), Some(dom), None) => Dataset::load_csv(csv, dom)?,
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
}
