//! The `dpqr` budget ledger on disk: named datasets, each with the same total budget for
//! one neighbouring relation and every spend recorded against it, surviving crashes and
//! serialising concurrent invocations.
//!
//! **Datasets are named by the curator, never keyed by a path.** `dpqr ledger init FILE
//! … --dataset NAME` (repeatable; without it one dataset named [`DEFAULT_DATASET`]) and
//! `dpqr ledger add-dataset FILE NAME` create the datasets; a release is charged to the
//! dataset `--ledger-dataset NAME` names, or to the ledger's only dataset, and is refused
//! (nothing read, nothing charged) when the ledger cannot place it: several datasets and
//! none named, or a name the ledger does not hold. A release never opens a dataset, so the
//! same data under another file name, compression or format is charged to the same budget
//! (issue #23 §6: a path-keyed ledger gave `passengers.csv.gz` a fresh budget after
//! `passengers.csv` was refused). Each dataset also lists the data its releases read
//! (`used_with`, `file:<canonical path>` or `bundled:NAME`), shown by `dpqr ledger show`,
//! and **data charged to one dataset is refused for every other** ([`LedgerFile::check_data`]):
//! the same file charged under two names would have two budgets. The refusal (a usage
//! error, status 2, before anything is read or charged) names both datasets; there is no
//! override: a dataset's data is read from its own files. What the ledger still cannot see
//! is the same records under another path (a copy), which the curator's names keep apart.
//!
//! The file is JSON: `{"format": "dpqr-ledger-3", "budget": <PrivacyLoss>,
//! "neighbouring": "ReplaceOne" | "AddRemove", "datasets": {"<name>": {"budget": …,
//! "neighbouring": …, "spends": [<dp_core::Spend>], "used_with": ["file:…"]}}}`. Every
//! dataset has its own [`dp_core::Ledger`] with the file's budget and relation, so the
//! budget is a per-dataset total and the accounting rules are dp-core's. Every spend
//! records the relation its guarantee is stated for and is charged in the ledger's
//! relation ([`dp_core::convert_neighbouring`]: an add/remove spend costs 2ε, 4ρ or
//! (2ε, (1 + e^ε)δ) in a replace-one ledger; a replace-one spend is refused by an
//! add/remove ledger).
//!
//! * **Older files** are read and keep working; the next write stores them as
//!   `dpqr-ledger-3`. Their datasets were keyed by the data (`file:<canonical path>`,
//!   `bundled:NAME`) and opened by the first release of a new key; now each existing key
//!   is simply the name of a dataset, charged by the same rules as any other (named with
//!   `--ledger-dataset 'file:…'` when the ledger holds several), and no release opens a new
//!   one. Such a key is also recorded as data the dataset was used with (a release of that
//!   data opened it), so that data is refused for the ledger's other datasets. (The format
//!   tag changes so that an older `dpqr`, which would open a fresh path-keyed dataset,
//!   refuses a new file instead of misreading it.)
//!   `dpqr-ledger-1` files (written before spends recorded their relation) are read as
//!   replace-one ledgers whose old spends have an unknown relation and are charged
//!   conservatively as add/remove spends (2ε, 4ρ, (2ε, (1 + e^ε)δ)): whatever relation
//!   they were released under, the charge is at least their replace-one cost.
//! * **Atomic writes** ([`crate::io::output::AtomicFile`], as every file `dpqr` writes): the
//!   new content is written to a fresh temporary file in the same directory, `fsync`ed,
//!   renamed over `FILE` (atomic on POSIX file systems), and the directory is
//!   `fsync`ed so the rename itself is durable. A crash at any point leaves either the old
//!   or the new ledger, never a partial one.
//! * **Locking**: every operation holds an exclusive lock (`std::fs::File::lock`) on the
//!   sidecar `FILE.lock` (never renamed, so the lock survives the rename). `dpqr release`
//!   holds it from the budget check through the recorded spend to the end of the
//!   mechanism's run, so two concurrent releases can
//!   never both pass a check that only one of them fits.
//! * **Charged before the noise**: `dpqr release --ledger` runs the mechanism only through
//!   [`release_charged`], which records the spend (budget check and atomic write, under the
//!   lock) and only then calls the mechanism. The data and workload are validated before,
//!   and so is everything the mechanism can check from public inputs
//!   ([`dp_mechanisms::Mechanism::check_inputs`]): a charged release never fails for a
//!   reason that could be checked first, and one that fails or crashes after its first noise
//!   draw has still been charged
//!   (no free retry), and a crash can lose budget (conservative) but never publish an
//!   unrecorded release.
//! * **Refusals** ([`BenchError::LedgerRefused`], `dpqr` status 3, nothing charged): a
//!   spend over the dataset's remaining budget ("over budget"), or one whose kind of
//!   guarantee this ledger cannot charge (a ρ-zCDP or (ε, δ) spend in a pure ε-DP ledger,
//!   an (ε, δ) spend in a ρ-zCDP ledger, a replace-one spend in an add/remove ledger).
//!   A ledger that cannot place the release (no dataset named, an unknown name) or does
//!   not exist is a usage error (status 2), also before any data is read.

use crate::io::output::AtomicFile;
use crate::{BenchError, Result, io_error};
use dp_core::{CoreError, Ledger, Neighbouring, PrivacyLoss, Spend};
use dp_mechanisms::{Mechanism, Release};
use dp_queries::{Dataset, Workload};
use rand::CryptoRng;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The format tag written in every ledger file.
pub const FORMAT: &str = "dpqr-ledger-3";

/// The format tag of ledgers whose datasets were keyed by their data (`file:<path>`,
/// `bundled:NAME`) and opened by a release; read, their keys becoming dataset names.
pub const PATH_KEYED_FORMAT: &str = "dpqr-ledger-2";

/// The format tag of ledgers written before spends recorded their neighbouring relation.
pub const LEGACY_FORMAT: &str = "dpqr-ledger-1";

/// The name of the one dataset of a ledger created without `--dataset`.
pub const DEFAULT_DATASET: &str = "default";

/// The longest dataset name a curator may give, in characters.
pub const MAX_NAME_CHARS: usize = 200;

/// How many dataset names a message lists before pointing at `dpqr ledger show`.
const LISTED_NAMES: usize = 20;

/// One named dataset of a ledger: its odometer and the data its releases read.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Account {
    /// The dataset's budget, relation and spends.
    #[serde(flatten)]
    pub ledger: Ledger,
    /// The data releases charged here read (`file:<canonical path>` or `bundled:NAME`):
    /// shown by `dpqr ledger show`, never used to choose a dataset, and refused for every
    /// other dataset of the ledger ([`LedgerFile::check_data`]).
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub used_with: BTreeSet<String>,
}

/// The contents of a ledger file.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LedgerFile {
    /// Always [`FORMAT`] once read.
    pub format: String,
    /// The total budget of every dataset.
    pub budget: PrivacyLoss,
    /// The neighbouring relation the budget is stated for.
    pub neighbouring: Neighbouring,
    /// The datasets by name.
    pub datasets: BTreeMap<String, Account>,
}

/// A dataset's odometer in a [`LEGACY_FORMAT`] file.
#[derive(Deserialize)]
struct LegacyLedger {
    budget: PrivacyLoss,
    spends: Vec<LegacySpend>,
}

#[derive(Deserialize)]
struct LegacySpend {
    label: String,
    loss: PrivacyLoss,
}

#[derive(Deserialize)]
struct LegacyFile {
    budget: PrivacyLoss,
    datasets: BTreeMap<String, LegacyLedger>,
}

/// A dataset name for a message: in single quotes, control characters escaped, never cut
/// (the user may need to copy it into `--ledger-dataset`).
pub fn show_name(name: &str) -> String {
    let mut out = String::from("'");
    for c in name.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// `Ok` if `name` may name a new dataset: not empty, no surrounding spaces, no control
/// characters, at most [`MAX_NAME_CHARS`] characters.
pub fn check_dataset_name(name: &str) -> Result<()> {
    let bad = |why: &str| {
        Err(BenchError::Usage(format!(
            "dataset name {}: {why}",
            show_name(name)
        )))
    };
    if name.trim().is_empty() {
        return bad("a dataset name must not be empty");
    }
    if name.trim() != name {
        return bad("must not start or end with spaces");
    }
    if name.chars().any(char::is_control) {
        return bad("must not contain control characters");
    }
    if name.chars().count() > MAX_NAME_CHARS {
        return bad(&format!("longer than {MAX_NAME_CHARS} characters"));
    }
    Ok(())
}

/// What a release is charged as: the dataset it is charged to, the spend's label, and the
/// data it reads (recorded for `dpqr ledger show` only).
#[derive(Clone, Copy, Debug)]
pub struct Charge<'a> {
    /// The dataset's name in the ledger ([`LedgerFile::dataset_for`]).
    pub dataset: &'a str,
    /// What the spend is for (mechanism and workload), shown in reports and refusals.
    pub label: &'a str,
    /// The data read (`file:<canonical path>` or `bundled:NAME`), if known.
    pub data: Option<&'a str>,
}

impl LedgerFile {
    /// An empty ledger with a validated per-dataset total budget for `neighbouring` and one
    /// empty dataset per name in `datasets` (one named [`DEFAULT_DATASET`] if none is
    /// given); a bad or repeated name is refused.
    pub fn new(
        budget: PrivacyLoss,
        neighbouring: Neighbouring,
        datasets: &[String],
    ) -> Result<Self> {
        let mut l = LedgerFile {
            format: FORMAT.to_string(),
            budget: budget.validate()?,
            neighbouring,
            datasets: BTreeMap::new(),
        };
        if datasets.is_empty() {
            l.add_dataset(DEFAULT_DATASET)?;
        }
        for name in datasets {
            l.add_dataset(name)?;
        }
        Ok(l)
    }

    /// Add an empty dataset `name` with the ledger's budget; refused if the name is bad or
    /// already in the ledger.
    pub fn add_dataset(&mut self, name: &str) -> Result<()> {
        check_dataset_name(name)?;
        if self.datasets.contains_key(name) {
            return Err(BenchError::DatasetExists {
                name: show_name(name),
            });
        }
        self.datasets.insert(
            name.to_string(),
            Account {
                ledger: Ledger::with_neighbouring(self.budget, self.neighbouring),
                used_with: BTreeSet::new(),
            },
        );
        Ok(())
    }

    /// Parse and validate ledger text; `file` labels errors. Older formats are read (see
    /// the module docs): a [`PATH_KEYED_FORMAT`] file's keys become dataset names, and a
    /// [`LEGACY_FORMAT`] ledger becomes a replace-one ledger whose spends have an unknown
    /// relation.
    pub fn parse(text: &str, file: &str) -> Result<Self> {
        let format_error = |message: String| BenchError::LedgerFormat {
            file: file.to_string(),
            message,
        };
        let bad = |e: serde_json::Error| format_error(format!("not a dpqr ledger: {e}"));
        #[derive(Deserialize)]
        struct Tag {
            format: String,
        }
        let tag: Tag = serde_json::from_str(text).map_err(bad)?;
        let mut l = match tag.format.as_str() {
            FORMAT | PATH_KEYED_FORMAT => serde_json::from_str::<LedgerFile>(text).map_err(bad)?,
            LEGACY_FORMAT => {
                let old: LegacyFile = serde_json::from_str(text).map_err(bad)?;
                let mut datasets = BTreeMap::new();
                for (key, ledger) in old.datasets {
                    let spends = ledger
                        .spends
                        .into_iter()
                        .map(|s| Spend {
                            label: s.label,
                            loss: s.loss,
                            neighbouring: None,
                        })
                        .collect();
                    let restored = Ledger::restore(ledger.budget, Neighbouring::ReplaceOne, spends)
                        .map_err(|e| format_error(format!("dataset {}: {e}", show_name(&key))))?;
                    datasets.insert(
                        key,
                        Account {
                            ledger: restored,
                            used_with: BTreeSet::new(),
                        },
                    );
                }
                LedgerFile {
                    format: FORMAT.to_string(),
                    budget: old.budget,
                    neighbouring: Neighbouring::ReplaceOne,
                    datasets,
                }
            }
            other => {
                return Err(format_error(format!(
                    "unknown ledger format {} (expected {FORMAT}, {PATH_KEYED_FORMAT} or \
                     {LEGACY_FORMAT})",
                    show_name(other)
                )));
            }
        };
        if tag.format != FORMAT {
            // a path-keyed dataset was opened by a release of the data its key names
            for (key, account) in &mut l.datasets {
                if key.starts_with("file:") || key.starts_with("bundled:") {
                    account.used_with.insert(key.clone());
                }
            }
        }
        l.format = FORMAT.to_string();
        l.budget.validate()?;
        for (key, account) in &l.datasets {
            let ledger = &account.ledger;
            if ledger.budget() != l.budget || ledger.neighbouring() != l.neighbouring {
                return Err(format_error(format!(
                    "dataset {} has budget {} for {} neighbours but the ledger's is {} for {} \
                     neighbours",
                    show_name(key),
                    ledger.budget(),
                    ledger.neighbouring(),
                    l.budget,
                    l.neighbouring
                )));
            }
            ledger
                .spent()
                .map_err(|e| format_error(format!("dataset {}: {e}", show_name(key))))?;
        }
        Ok(l)
    }

    /// The names of the datasets, quoted, for a message (the first few, then a count).
    fn listed_names(&self) -> String {
        let mut names: Vec<String> = self
            .datasets
            .keys()
            .take(LISTED_NAMES)
            .map(|k| show_name(k))
            .collect();
        if self.datasets.len() > LISTED_NAMES {
            names.push(format!(
                "and {} more (`dpqr ledger show`)",
                self.datasets.len() - LISTED_NAMES
            ));
        }
        names.join(", ")
    }

    /// The dataset a release is charged to: `named` if the ledger holds it, else — no name
    /// given — the ledger's only dataset. Refused (a usage error listing the datasets) when
    /// the ledger cannot place the release: a name it does not hold, no name with several
    /// datasets, or no dataset at all. `file` is the ledger's path, for the messages.
    pub fn dataset_for(&self, named: Option<&str>, file: &str) -> Result<String> {
        match named {
            Some(name) if self.datasets.contains_key(name) => Ok(name.to_string()),
            Some(name) => Err(self.unknown_dataset(name, file)),
            None => {
                let mut names = self.datasets.keys();
                match (names.next(), names.next()) {
                    (Some(only), None) => Ok(only.clone()),
                    (None, _) => Err(BenchError::LedgerEmpty {
                        ledger: file.to_string(),
                    }),
                    (Some(_), Some(_)) => Err(BenchError::LedgerDatasetUnnamed {
                        ledger: file.to_string(),
                        datasets: self.listed_names(),
                    }),
                }
            }
        }
    }

    /// The refusal of a dataset name the ledger does not hold.
    fn unknown_dataset(&self, name: &str, file: &str) -> BenchError {
        BenchError::UnknownLedgerDataset {
            ledger: file.to_string(),
            name: show_name(name),
            datasets: if self.datasets.is_empty() {
                "none".to_string()
            } else {
                self.listed_names()
            },
        }
    }

    /// The account of `dataset`, or the refusal of an unknown name.
    fn account(&self, dataset: &str) -> Result<&Account> {
        self.datasets
            .get(dataset)
            .ok_or_else(|| self.unknown_dataset(dataset, "FILE"))
    }

    /// `Ok` unless `charge.data` was already charged to another dataset of the ledger (it
    /// is among that dataset's `used_with`): the same data charged under two names would
    /// have two budgets. The refusal is a usage error naming the data, the datasets it was
    /// charged to and the one this charge names, and saying where to charge it; there is
    /// no override (a dataset's data is read from its own files). A charge with no data,
    /// or to the one dataset that already lists it, passes.
    pub fn check_data(&self, charge: &Charge<'_>) -> Result<()> {
        let Some(data) = charge.data else {
            return Ok(());
        };
        let others: Vec<String> = self
            .datasets
            .iter()
            .filter(|(name, account)| {
                name.as_str() != charge.dataset && account.used_with.contains(data)
            })
            .map(|(name, _)| show_name(name))
            .collect();
        let Some(first) = others.first() else {
            return Ok(());
        };
        Err(BenchError::DataInAnotherDataset {
            data: data.to_string(),
            charged_to: others.join(" and "),
            dataset: show_name(charge.dataset),
            first: first.clone(),
        })
    }

    /// `Ok` if `loss`, stated for `neighbouring`, fits in what is left of the budget of
    /// `charge.dataset` once charged in the ledger's relation; otherwise the dataset's
    /// refusal ([`BenchError::Core`]), or a usage error for a dataset not in the ledger or
    /// for data already charged to another dataset ([`Self::check_data`]).
    pub fn can_spend(
        &self,
        charge: &Charge<'_>,
        loss: &PrivacyLoss,
        neighbouring: Neighbouring,
    ) -> Result<()> {
        let account = self.account(charge.dataset)?;
        self.check_data(charge)?;
        Ok(account
            .ledger
            .check_spend(charge.label, loss, neighbouring)?)
    }

    /// Record `loss`, stated for `neighbouring`, against `charge.dataset` under
    /// `charge.label` (and note `charge.data` among the data it was used with), if it fits;
    /// the errors of [`Self::can_spend`], recording nothing.
    pub fn spend(
        &mut self,
        charge: &Charge<'_>,
        loss: PrivacyLoss,
        neighbouring: Neighbouring,
    ) -> Result<()> {
        let mut account = self.account(charge.dataset)?.clone();
        self.check_data(charge)?;
        account
            .ledger
            .spend_under(charge.label, loss, neighbouring)?;
        if let Some(data) = charge.data {
            account.used_with.insert(data.to_string());
        }
        self.datasets.insert(charge.dataset.to_string(), account);
        Ok(())
    }

    /// Human-readable summary (`dpqr ledger show`).
    pub fn describe(&self) -> String {
        let mut s = format!(
            "per-dataset budget: {} under {} neighbours\n",
            self.budget, self.neighbouring
        );
        if self.datasets.is_empty() {
            s.push_str(
                "no datasets: add one with `dpqr ledger add-dataset FILE NAME` before a \
                 release\n",
            );
        }
        for (key, account) in &self.datasets {
            let l = &account.ledger;
            s.push_str(&format!("dataset {}\n", show_name(key)));
            if !account.used_with.is_empty() {
                let used: Vec<&str> = account.used_with.iter().map(String::as_str).collect();
                s.push_str(&format!("  used with {}\n", used.join(", ")));
            }
            if l.spends().is_empty() {
                s.push_str("  no spends recorded\n");
            }
            for sp in l.spends() {
                let relation = match sp.neighbouring {
                    Some(r) => format!("{r} neighbours"),
                    None => {
                        "unknown relation (old ledger format; charged as add/remove)".to_string()
                    }
                };
                let charged = match l.charged(sp) {
                    Ok(_) if sp.neighbouring == Some(self.neighbouring) => String::new(),
                    Ok(c) => format!(", charged {c}"),
                    Err(e) => format!(", not chargeable: {e}"),
                };
                s.push_str(&format!(
                    "  spent {} under {relation}{charged}  ({})\n",
                    sp.loss, sp.label
                ));
            }
            match l.spent() {
                Ok(t) => s.push_str(&format!("  total {t} of {}\n", self.budget)),
                Err(e) => s.push_str(&format!("  total: {e}\n")),
            }
        }
        s
    }
}

/// An open, exclusively locked ledger file. Dropping it releases the lock.
pub struct LockedLedger {
    path: PathBuf,
    _lock: File,
    /// The current contents.
    pub contents: LedgerFile,
}

fn sidecar(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(suffix);
    path.with_file_name(name)
}

fn lock(path: &Path) -> Result<File> {
    let lock_path = sidecar(path, ".lock");
    let f = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(io_error(&lock_path))?;
    f.lock().map_err(io_error(&lock_path))?;
    Ok(f)
}

/// The error for a `--ledger` path where no ledger exists.
fn no_ledger(path: &Path) -> BenchError {
    BenchError::NoLedger(path.display().to_string())
}

/// Write `text` to `path` atomically ([`crate::io::output::AtomicFile`]: temporary file in the
/// same directory, fsync, rename, fsync of the directory). With `no_clobber`, fail if
/// `path` exists (hard link instead of rename).
fn write_atomic(path: &Path, text: &str, no_clobber: bool) -> Result<()> {
    let mut f = AtomicFile::create(path)?;
    f.write_all(text.as_bytes()).map_err(io_error(path))?;
    if no_clobber {
        f.commit_new()
    } else {
        f.commit()
    }
}

fn encode(l: &LedgerFile) -> Result<String> {
    let mut s = serde_json::to_string_pretty(l).map_err(|source| BenchError::Encode {
        what: "ledger",
        source,
    })?;
    s.push('\n');
    Ok(s)
}

/// Create a new ledger file with a per-dataset total `budget` for `neighbouring` and the
/// named `datasets` (one named [`DEFAULT_DATASET`] if none); refuses to overwrite.
pub fn init(
    path: &Path,
    budget: PrivacyLoss,
    neighbouring: Neighbouring,
    datasets: &[String],
) -> Result<LedgerFile> {
    let contents = LedgerFile::new(budget, neighbouring, datasets)?;
    let _lock = lock(path)?;
    if path.exists() {
        return Err(BenchError::LedgerExists(path.display().to_string()));
    }
    write_atomic(path, &encode(&contents)?, true)?;
    Ok(contents)
}

/// Add the empty dataset `name`, with the ledger's budget, to the ledger at `path`
/// ([`LedgerFile::add_dataset`]: refused for a bad name or one already there).
pub fn add_dataset(path: &Path, name: &str) -> Result<()> {
    let mut l = LockedLedger::open(path)?;
    let mut next = l.contents.clone();
    next.add_dataset(name)?;
    write_atomic(&l.path, &encode(&next)?, false)?;
    l.contents = next;
    Ok(())
}

impl LockedLedger {
    /// Lock and read the ledger at `path` (blocks while another process holds it). A path
    /// with no ledger is an error that says how to create one (and creates no lock file).
    pub fn open(path: &Path) -> Result<Self> {
        if matches!(std::fs::metadata(path), Err(e) if e.kind() == std::io::ErrorKind::NotFound) {
            return Err(no_ledger(path));
        }
        let lock_file = lock(path)?;
        let text = std::fs::read_to_string(path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                no_ledger(path)
            } else {
                io_error(path)(e)
            }
        })?;
        let contents = LedgerFile::parse(&text, &path.display().to_string())?;
        Ok(LockedLedger {
            path: path.to_path_buf(),
            _lock: lock_file,
            contents,
        })
    }

    /// The ledger's refusal of a spend for `dataset`, typed for the caller
    /// ([`BenchError::LedgerRefused`]); other errors unchanged.
    fn refusal(&self, dataset: &str, e: BenchError) -> BenchError {
        match e {
            BenchError::Core(source) => BenchError::LedgerRefused {
                ledger: self.path.display().to_string(),
                dataset: show_name(dataset),
                reason: match source {
                    CoreError::BudgetExceeded { .. } => "over budget",
                    _ => "this kind of guarantee cannot be charged in this ledger",
                }
                .to_string(),
                source: Box::new(source),
            },
            e => e,
        }
    }

    /// [`LedgerFile::check_data`], its refusal placed in this ledger file and dataset
    /// ([`BenchError::InLedger`]).
    fn check_data(&self, charge: &Charge<'_>) -> Result<()> {
        self.contents
            .check_data(charge)
            .map_err(|e| BenchError::InLedger {
                ledger: self.path.display().to_string(),
                dataset: show_name(charge.dataset),
                source: Box::new(e),
            })
    }

    /// `Ok` if the spend of `loss`, stated for `neighbouring`, fits `charge.dataset`'s
    /// remaining budget; otherwise [`BenchError::LedgerRefused`] ("over budget", or "this
    /// kind of guarantee cannot be charged in this ledger"), or a usage error for a dataset
    /// the ledger does not hold or for data already charged to another of its datasets
    /// ([`LedgerFile::check_data`]). Records nothing.
    pub fn check_spend(
        &self,
        charge: &Charge<'_>,
        loss: &PrivacyLoss,
        neighbouring: Neighbouring,
    ) -> Result<()> {
        self.check_data(charge)?;
        self.contents
            .can_spend(charge, loss, neighbouring)
            .map_err(|e| self.refusal(charge.dataset, e))
    }

    /// Record a spend of `loss`, stated for `neighbouring`, as `charge` and write the
    /// ledger atomically; on error (the refusals of [`Self::check_spend`], or a failed
    /// write) nothing is recorded.
    pub fn spend_and_save(
        &mut self,
        charge: &Charge<'_>,
        loss: PrivacyLoss,
        neighbouring: Neighbouring,
    ) -> Result<()> {
        self.check_data(charge)?;
        let mut next = self.contents.clone();
        next.spend(charge, loss, neighbouring)
            .map_err(|e| self.refusal(charge.dataset, e))?;
        write_atomic(&self.path, &encode(&next)?, false)?;
        self.contents = next;
        Ok(())
    }
}

/// Run `mechanism` on `data` for `workload` as a release charged as `charge` to the locked
/// `ledger`, in the only order that never gives a free retry (issue #9 item 5): the
/// spend of the mechanism's certificate (its loss, stated for its neighbouring relation and
/// charged in the ledger's) is checked against the budget and written to disk
/// ([`LockedLedger::spend_and_save`]), and only then does the mechanism run and draw noise
/// from `rng`. The caller holds the lock throughout (it owns `ledger`), so no concurrent
/// release can pass a check in between.
///
/// Before the spend, the mechanism's checks of public inputs run
/// ([`Mechanism::check_inputs`], with `data`'s n only where the certificate's relation makes
/// it public, replace-one): a release that could be refused from its parameters, budget,
/// domain, workload or public n is refused uncharged, never charged and then failed.
///
/// Errors: a check that fails, or a spend that does not fit (or cannot be written), is
/// returned as is, nothing is recorded and the mechanism never runs; a mechanism that fails
/// afterwards — possibly after drawing noise — gives [`BenchError::ReleaseFailedAfterCharge`],
/// and its spend stays recorded.
pub fn release_charged<W: Workload>(
    ledger: &mut LockedLedger,
    charge: &Charge<'_>,
    mechanism: &dyn Mechanism<W>,
    data: &Dataset,
    workload: &W,
    rng: &mut dyn CryptoRng,
) -> Result<Release> {
    let certificate = mechanism.certificate();
    let public_n = (central_relation(&certificate)? == Neighbouring::ReplaceOne).then(|| data.n());
    mechanism.check_inputs(workload, public_n)?;
    release_charged_with(ledger, charge, &certificate, || {
        mechanism.release(data, workload, rng)
    })
}

/// [`release_charged`] for any way of running the mechanism (`run`, e.g. a release from
/// streamed counts): the spend of `certificate` is checked and recorded first, then `run`
/// draws the noise; a failure after the charge is [`BenchError::ReleaseFailedAfterCharge`].
/// The caller runs the mechanism's [`Mechanism::check_inputs`] before, as
/// [`release_charged`] does, so that `run` fails only for reasons no public check could
/// see.
pub fn release_charged_with(
    ledger: &mut LockedLedger,
    charge: &Charge<'_>,
    certificate: &dp_mechanisms::PrivacyCertificate,
    run: impl FnOnce() -> dp_mechanisms::Result<Release>,
) -> Result<Release> {
    ledger.spend_and_save(charge, certificate.loss, central_relation(certificate)?)?;
    run().map_err(BenchError::ReleaseFailedAfterCharge)
}

/// The neighbouring relation of a central guarantee, the only kind a ledger records; a
/// local-model certificate is refused ([`BenchError::LocalInLedger`]).
pub fn central_relation(certificate: &dp_mechanisms::PrivacyCertificate) -> Result<Neighbouring> {
    certificate
        .neighbouring()
        .ok_or_else(|| BenchError::LocalInLedger {
            mechanism: certificate.mechanism.clone(),
        })
}

/// Read a ledger (under the lock, so never a half-written state of a concurrent writer).
pub fn read(path: &Path) -> Result<LedgerFile> {
    Ok(LockedLedger::open(path)?.contents)
}

#[cfg(test)]
mod tests {
    use super::*;

    const RO: Neighbouring = Neighbouring::ReplaceOne;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("dpqr-ledger-{name}-{}", std::process::id()));
        std::fs::remove_dir_all(&d).ok();
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn to(dataset: &str) -> Charge<'_> {
        Charge {
            dataset,
            label: "laplace on all-2way",
            data: None,
        }
    }

    #[test]
    fn init_spend_reload() {
        let d = dir("basic");
        let p = d.join("l.json");
        let names = ["adult".to_string(), "nltcs".to_string()];
        init(&p, PrivacyLoss::pure(1.0).unwrap(), RO, &names).unwrap();
        assert!(init(&p, PrivacyLoss::pure(5.0).unwrap(), RO, &[]).is_err());
        let mut l = LockedLedger::open(&p).unwrap();
        let adult = Charge {
            data: Some("file:/data/adult.csv"),
            ..to("adult")
        };
        l.spend_and_save(&adult, PrivacyLoss::pure(0.6).unwrap(), RO)
            .unwrap();
        // 0.6 + 0.6 > 1 for adult, but another dataset has its own total
        let e = l
            .spend_and_save(&to("adult"), PrivacyLoss::pure(0.6).unwrap(), RO)
            .unwrap_err();
        assert!(matches!(e, BenchError::LedgerRefused { .. }), "{e}");
        assert!(e.is_over_budget());
        l.spend_and_save(&to("nltcs"), PrivacyLoss::pure(0.6).unwrap(), RO)
            .unwrap();
        // a name the ledger does not hold is refused, never opened
        let e = l
            .spend_and_save(&to("adult.csv.gz"), PrivacyLoss::pure(0.1).unwrap(), RO)
            .unwrap_err();
        assert!(matches!(e, BenchError::UnknownLedgerDataset { .. }), "{e}");
        drop(l);
        let back = read(&p).unwrap();
        assert_eq!(back.datasets.len(), 2);
        assert_eq!(back.datasets["adult"].ledger.spends().len(), 1);
        assert_eq!(back.datasets["nltcs"].ledger.spends().len(), 1);
        assert!(
            back.datasets["adult"]
                .used_with
                .contains("file:/data/adult.csv")
        );
        assert!(back.describe().contains("used with file:/data/adult.csv"));
        assert!(!sidecar(&p, ".tmp").exists());
        std::fs::remove_dir_all(&d).ok();
    }

    #[test]
    fn data_charged_to_one_dataset_is_refused_for_another() {
        let d = dir("data-twice");
        let p = d.join("l.json");
        let names = ["adult".to_string(), "census".to_string()];
        init(&p, PrivacyLoss::pure(1.0).unwrap(), RO, &names).unwrap();
        let mut l = LockedLedger::open(&p).unwrap();
        let file = "file:/data/adult.csv";
        let on = |dataset| Charge {
            data: Some(file),
            ..to(dataset)
        };
        let eps = PrivacyLoss::pure(0.25).unwrap();
        l.spend_and_save(&on("adult"), eps, RO).unwrap();
        // the same file under the other name: refused before the check and at the spend,
        // naming the data and both datasets; nothing recorded
        let check = l.check_spend(&on("census"), &eps, RO).unwrap_err();
        let spend = l.spend_and_save(&on("census"), eps, RO).unwrap_err();
        for e in [check, spend] {
            assert!(!e.is_over_budget(), "{e}");
            let e = e.to_string();
            for want in [
                "dataset 'census'",
                "already charged to dataset 'adult'",
                file,
                "nothing is charged",
                "--ledger-dataset 'adult'",
            ] {
                assert!(e.contains(want), "{want}: {e}");
            }
            assert!(e.contains(&p.display().to_string()), "{e}");
        }
        // the dataset that holds it takes it again, other data goes to the other dataset,
        // and a charge that names no data is not checked
        l.spend_and_save(&on("adult"), eps, RO).unwrap();
        let other = Charge {
            data: Some("file:/data/census.csv"),
            ..to("census")
        };
        l.spend_and_save(&other, eps, RO).unwrap();
        l.spend_and_save(&to("census"), eps, RO).unwrap();
        drop(l);
        let back = read(&p).unwrap();
        assert_eq!(back.datasets["adult"].ledger.spends().len(), 2);
        assert_eq!(back.datasets["census"].ledger.spends().len(), 2);
        // a bundled table is data too
        let mut f = back.clone();
        let bundled = |dataset| Charge {
            data: Some("bundled:nltcs"),
            ..to(dataset)
        };
        f.spend(&bundled("adult"), eps, RO).unwrap();
        let e = f.can_spend(&bundled("census"), &eps, RO).unwrap_err();
        assert!(e.to_string().contains("bundled:nltcs"), "{e}");
        std::fs::remove_dir_all(&d).ok();
    }

    #[test]
    fn a_path_keyed_dataset_holds_the_data_of_its_key() {
        // dpqr-ledger-2 opened `file:/d/x.csv` for a release of /d/x.csv: that file is
        // refused for a dataset added later
        let v2 = r#"{"format":"dpqr-ledger-2","budget":{"Pure":{"epsilon":1.0}},
            "neighbouring":"ReplaceOne","datasets":{"file:/d/x.csv":{"budget":{"Pure":
            {"epsilon":1.0}},"neighbouring":"ReplaceOne","spends":[]}}}"#;
        let mut l = LedgerFile::parse(v2, "t").unwrap();
        assert!(
            l.datasets["file:/d/x.csv"]
                .used_with
                .contains("file:/d/x.csv")
        );
        l.add_dataset("new").unwrap();
        let eps = PrivacyLoss::pure(0.1).unwrap();
        let x = |dataset| Charge {
            data: Some("file:/d/x.csv"),
            ..to(dataset)
        };
        let e = l.spend(&x("new"), eps, RO).unwrap_err().to_string();
        assert!(
            e.contains("already charged to dataset 'file:/d/x.csv'") && e.contains("'new'"),
            "{e}"
        );
        l.spend(&x("file:/d/x.csv"), eps, RO).unwrap();
        // in the current format a dataset's name is only a name
        let v3 = v2
            .replace("dpqr-ledger-2", FORMAT)
            .replace("file:/d/x.csv", "file:/d/z.csv");
        let v3 = LedgerFile::parse(&v3, "t").unwrap();
        assert!(v3.datasets["file:/d/z.csv"].used_with.is_empty());
    }

    #[test]
    fn a_release_is_placed_only_in_a_dataset_the_ledger_holds() {
        let b = PrivacyLoss::pure(1.0).unwrap();
        let one = LedgerFile::new(b, RO, &[]).unwrap();
        assert_eq!(one.dataset_for(None, "l").unwrap(), DEFAULT_DATASET);
        let e = one.dataset_for(Some("other"), "l").unwrap_err().to_string();
        assert!(
            e.contains("no dataset 'other'") && e.contains("'default'"),
            "{e}"
        );
        let two = LedgerFile::new(b, RO, &["a".into(), "b c".into()]).unwrap();
        assert_eq!(two.dataset_for(Some("b c"), "l").unwrap(), "b c");
        let e = two.dataset_for(None, "l").unwrap_err().to_string();
        assert!(
            e.contains("several datasets ('a', 'b c')") && e.contains("--ledger-dataset"),
            "{e}"
        );
        let mut none = one.clone();
        none.datasets.clear();
        let e = none.dataset_for(None, "l").unwrap_err().to_string();
        assert!(
            e.contains("holds no dataset") && e.contains("add-dataset"),
            "{e}"
        );
        // bad and repeated names
        for bad in [
            vec![String::new()],
            vec!["  ".into()],
            vec![" x".into()],
            vec!["a\nb".into()],
            vec!["x".repeat(MAX_NAME_CHARS + 1)],
            vec!["a".into(), "a".into()],
        ] {
            assert!(LedgerFile::new(b, RO, &bad).is_err(), "{bad:?}");
        }
        let mut l = two.clone();
        assert!(l.add_dataset("a").is_err());
        l.add_dataset("c").unwrap();
        assert_eq!(l.datasets.len(), 3);
    }

    #[test]
    fn a_stale_temp_file_does_not_matter() {
        // a crash after writing the temp file but before the rename leaves the old ledger
        let d = dir("stale");
        let p = d.join("l.json");
        init(&p, PrivacyLoss::zcdp(1.0).unwrap(), RO, &["x".into()]).unwrap();
        std::fs::write(sidecar(&p, ".tmp"), "{ half a ledg").unwrap();
        let l = read(&p).unwrap();
        assert!(l.datasets["x"].ledger.spends().is_empty());
        let mut l = LockedLedger::open(&p).unwrap();
        l.spend_and_save(&to("x"), PrivacyLoss::zcdp(0.5).unwrap(), RO)
            .unwrap();
        drop(l);
        assert_eq!(read(&p).unwrap().datasets["x"].ledger.spends().len(), 1);
        std::fs::remove_dir_all(&d).ok();
    }

    #[test]
    fn a_missing_ledger_says_how_to_create_one_and_leaves_no_lock_file() {
        let d = dir("missing");
        let p = d.join("nope.json");
        for e in [
            read(&p).err().unwrap(),
            LockedLedger::open(&p).err().unwrap(),
            add_dataset(&p, "x").unwrap_err(),
        ] {
            let e = e.to_string();
            assert!(
                e.contains(&format!("no ledger at {}", p.display()))
                    && e.contains(&format!("dpqr ledger init {} --epsilon", p.display())),
                "{e}"
            );
        }
        assert!(!sidecar(&p, ".lock").exists());
        std::fs::remove_dir_all(&d).ok();
    }

    #[test]
    fn malformed_files_are_errors() {
        for text in [
            "",
            "{}",
            "[1,2]",
            r#"{"format":"other","budget":{"Pure":{"epsilon":1.0}},"datasets":{}}"#,
            r#"{"format":"dpqr-ledger-1","budget":{"Pure":{"epsilon":-1.0}},"datasets":{}}"#,
            r#"{"format":"dpqr-ledger-2","budget":{"Pure":{"epsilon":1.0}},"datasets":{}}"#,
            r#"{"format":"dpqr-ledger-3","budget":{"Pure":{"epsilon":1.0}},"neighbouring":"Both","datasets":{}}"#,
            r#"{"format":"dpqr-ledger-3","budget":{"Pure":{"epsilon":1.0}},"neighbouring":"ReplaceOne","datasets":{"a":{"budget":{"Pure":{"epsilon":2.0}},"neighbouring":"ReplaceOne","spends":[]}}}"#,
            r#"{"format":"dpqr-ledger-3","budget":{"Pure":{"epsilon":1.0}},"neighbouring":"ReplaceOne","datasets":{"a":{"budget":{"Pure":{"epsilon":1.0}},"neighbouring":"ReplaceOne","spends":[],"used_with":7}}}"#,
        ] {
            assert!(LedgerFile::parse(text, "t").is_err(), "{text}");
        }
        let ok = r#"{"format":"dpqr-ledger-3","budget":{"Pure":{"epsilon":1.0}},"neighbouring":"AddRemove","datasets":{}}"#;
        assert_eq!(
            LedgerFile::parse(ok, "t").unwrap().neighbouring,
            Neighbouring::AddRemove
        );
        // an old file is a replace-one ledger
        let old = r#"{"format":"dpqr-ledger-1","budget":{"Pure":{"epsilon":1.0}},"datasets":{}}"#;
        assert_eq!(LedgerFile::parse(old, "t").unwrap().neighbouring, RO);
    }

    #[test]
    fn a_path_keyed_ledger_keeps_its_datasets_as_names() {
        let v2 = r#"{"format":"dpqr-ledger-2","budget":{"Pure":{"epsilon":1.0}},
            "neighbouring":"ReplaceOne","datasets":{"file:/d/x.csv":{"budget":{"Pure":
            {"epsilon":1.0}},"neighbouring":"ReplaceOne","spends":[{"label":"old","loss":
            {"Pure":{"epsilon":0.75}},"neighbouring":"ReplaceOne"}]}}}"#;
        let l = LedgerFile::parse(v2, "t").unwrap();
        assert_eq!(l.format, FORMAT);
        // its only dataset takes every release, whatever file it reads
        let name = l.dataset_for(None, "t").unwrap();
        assert_eq!(name, "file:/d/x.csv");
        let e = l
            .can_spend(&to(&name), &PrivacyLoss::pure(0.5).unwrap(), RO)
            .unwrap_err();
        assert!(matches!(
            e,
            BenchError::Core(CoreError::BudgetExceeded { .. })
        ));
        // written back in the current format, and read again the same
        let again = LedgerFile::parse(&encode(&l).unwrap(), "t").unwrap();
        assert_eq!(again.datasets[&name].ledger.spends().len(), 1);
        assert!(encode(&l).unwrap().contains(FORMAT));
    }
}
