//! The `dpqr` budget ledger on disk: a per-dataset total budget and every spend recorded
//! against it, surviving crashes and serialising concurrent invocations.
//!
//! The file is JSON: `{"format": "dpqr-ledger-1", "budget": <PrivacyLoss>, "datasets":
//! {"<dataset key>": <dp_core::Ledger>}}`. Every dataset (keyed by its bundled name or the
//! canonical path of its CSV) has its own [`dp_core::Ledger`] with the file's budget, so
//! the budget is a per-dataset total and the accounting rules are dp-core's.
//!
//! * **Atomic writes**: the new content is written to `FILE.tmp` in the same directory,
//!   `fsync`ed, renamed over `FILE` (atomic on POSIX file systems), and the directory is
//!   `fsync`ed so the rename itself is durable. A crash at any point leaves either the old
//!   or the new ledger, never a partial one.
//! * **Locking**: every operation holds an exclusive lock (`std::fs::File::lock`) on the
//!   sidecar `FILE.lock` (never renamed, so the lock survives the rename). `dpqr release`
//!   holds it from the budget check to the recorded spend, so two concurrent releases can
//!   never both pass a check that only one of them fits.
//! * **Write-ahead of the output**: `dpqr release` records the spend *before* it writes the
//!   answers, so a crash can lose budget (conservative) but never publish an unrecorded
//!   release.

use crate::{BenchError, Result, io_error};
use dp_core::{Ledger, PrivacyLoss};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The format tag written in every ledger file.
pub const FORMAT: &str = "dpqr-ledger-1";

/// The contents of a ledger file.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LedgerFile {
    /// Always [`FORMAT`].
    pub format: String,
    /// The total budget of every dataset.
    pub budget: PrivacyLoss,
    /// One odometer per dataset key.
    pub datasets: BTreeMap<String, Ledger>,
}

impl LedgerFile {
    /// An empty ledger with a validated per-dataset total budget.
    pub fn new(budget: PrivacyLoss) -> Result<Self> {
        Ok(LedgerFile {
            format: FORMAT.to_string(),
            budget: budget.validate()?,
            datasets: BTreeMap::new(),
        })
    }

    /// Parse and validate ledger text; `file` labels errors.
    pub fn parse(text: &str, file: &str) -> Result<Self> {
        let l: LedgerFile = serde_json::from_str(text)
            .map_err(|e| BenchError::Usage(format!("{file}: not a dpqr ledger: {e}")))?;
        if l.format != FORMAT {
            return Err(BenchError::Usage(format!(
                "{file}: unknown ledger format {:?} (expected {FORMAT})",
                l.format
            )));
        }
        l.budget.validate()?;
        for (key, ledger) in &l.datasets {
            if ledger.budget() != l.budget {
                return Err(BenchError::Usage(format!(
                    "{file}: dataset {key:?} has budget {} but the ledger's is {}",
                    ledger.budget(),
                    l.budget
                )));
            }
            ledger
                .spent()
                .map_err(|e| BenchError::Usage(format!("{file}: dataset {key:?}: {e}")))?;
        }
        Ok(l)
    }

    /// The odometer of `key` (a fresh one with the file's budget if the dataset is new).
    pub fn ledger(&self, key: &str) -> Ledger {
        self.datasets
            .get(key)
            .cloned()
            .unwrap_or_else(|| Ledger::new(self.budget))
    }

    /// `Ok` if `loss` fits in what is left of `key`'s budget.
    pub fn can_spend(&self, key: &str, loss: &PrivacyLoss) -> Result<()> {
        Ok(self.ledger(key).can_spend(loss)?)
    }

    /// Record `loss` against `key` under `label`, if it fits.
    pub fn spend(&mut self, key: &str, label: &str, loss: PrivacyLoss) -> Result<()> {
        let mut l = self.ledger(key);
        l.spend(label, loss)?;
        self.datasets.insert(key.to_string(), l);
        Ok(())
    }

    /// Human-readable summary (`dpqr ledger show`).
    pub fn describe(&self) -> String {
        let mut s = format!("per-dataset budget: {}\n", self.budget);
        if self.datasets.is_empty() {
            s.push_str("no spends recorded\n");
        }
        for (key, l) in &self.datasets {
            s.push_str(&format!("dataset {key}\n"));
            for sp in l.spends() {
                s.push_str(&format!("  spent {}  ({})\n", sp.loss, sp.label));
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

/// Write `text` to `path` atomically: temp file in the same directory, fsync, rename,
/// fsync the directory. With `no_clobber`, fail if `path` exists (hard link instead of
/// rename). The caller holds the lock, so the temp name is not contended.
fn write_atomic(path: &Path, text: &str, no_clobber: bool) -> Result<()> {
    let tmp = sidecar(path, ".tmp");
    {
        let mut f = File::create(&tmp).map_err(io_error(&tmp))?;
        f.write_all(text.as_bytes()).map_err(io_error(&tmp))?;
        f.sync_all().map_err(io_error(&tmp))?;
    }
    if no_clobber {
        std::fs::hard_link(&tmp, path).map_err(io_error(path))?;
        std::fs::remove_file(&tmp).map_err(io_error(&tmp))?;
    } else {
        std::fs::rename(&tmp, path).map_err(io_error(path))?;
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    File::open(&dir)
        .and_then(|d| d.sync_all())
        .map_err(io_error(&dir))?;
    Ok(())
}

fn encode(l: &LedgerFile) -> Result<String> {
    let mut s = serde_json::to_string_pretty(l)
        .map_err(|e| BenchError::Usage(format!("cannot encode ledger: {e}")))?;
    s.push('\n');
    Ok(s)
}

/// Create a new ledger file with a per-dataset total `budget`; refuses to overwrite.
pub fn init(path: &Path, budget: PrivacyLoss) -> Result<()> {
    let contents = LedgerFile::new(budget)?;
    let _lock = lock(path)?;
    if path.exists() {
        return Err(BenchError::Usage(format!(
            "{}: a ledger already exists; refusing to overwrite it",
            path.display()
        )));
    }
    write_atomic(path, &encode(&contents)?, true)
}

impl LockedLedger {
    /// Lock and read the ledger at `path` (blocks while another process holds it).
    pub fn open(path: &Path) -> Result<Self> {
        let lock_file = lock(path)?;
        let text = std::fs::read_to_string(path).map_err(io_error(path))?;
        let contents = LedgerFile::parse(&text, &path.display().to_string())?;
        Ok(LockedLedger {
            path: path.to_path_buf(),
            _lock: lock_file,
            contents,
        })
    }

    /// Record a spend and write the ledger atomically; on error nothing is recorded.
    pub fn spend_and_save(&mut self, key: &str, label: &str, loss: PrivacyLoss) -> Result<()> {
        let mut next = self.contents.clone();
        next.spend(key, label, loss)?;
        write_atomic(&self.path, &encode(&next)?, false)?;
        self.contents = next;
        Ok(())
    }
}

/// Read a ledger (under the lock, so never a half-written state of a concurrent writer).
pub fn read(path: &Path) -> Result<LedgerFile> {
    Ok(LockedLedger::open(path)?.contents)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("dpqr-ledger-{name}-{}", std::process::id()));
        std::fs::remove_dir_all(&d).ok();
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn init_spend_reload() {
        let d = dir("basic");
        let p = d.join("l.json");
        init(&p, PrivacyLoss::pure(1.0).unwrap()).unwrap();
        assert!(init(&p, PrivacyLoss::pure(5.0).unwrap()).is_err());
        let mut l = LockedLedger::open(&p).unwrap();
        l.spend_and_save("adult", "r1", PrivacyLoss::pure(0.6).unwrap())
            .unwrap();
        // 0.6 + 0.6 > 1 for adult, but another dataset has its own total
        assert!(
            l.spend_and_save("adult", "r2", PrivacyLoss::pure(0.6).unwrap())
                .is_err()
        );
        l.spend_and_save("nltcs", "r3", PrivacyLoss::pure(0.6).unwrap())
            .unwrap();
        drop(l);
        let back = read(&p).unwrap();
        assert_eq!(back.datasets["adult"].spends().len(), 1);
        assert_eq!(back.datasets["nltcs"].spends().len(), 1);
        assert!(!sidecar(&p, ".tmp").exists());
        std::fs::remove_dir_all(&d).ok();
    }

    #[test]
    fn a_stale_temp_file_does_not_matter() {
        // a crash after writing the temp file but before the rename leaves the old ledger
        let d = dir("stale");
        let p = d.join("l.json");
        init(&p, PrivacyLoss::zcdp(1.0).unwrap()).unwrap();
        std::fs::write(sidecar(&p, ".tmp"), "{ half a ledg").unwrap();
        let l = read(&p).unwrap();
        assert!(l.datasets.is_empty());
        let mut l = LockedLedger::open(&p).unwrap();
        l.spend_and_save("x", "a", PrivacyLoss::zcdp(0.5).unwrap())
            .unwrap();
        drop(l);
        assert_eq!(read(&p).unwrap().datasets["x"].spends().len(), 1);
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
        ] {
            assert!(LedgerFile::parse(text, "t").is_err(), "{text}");
        }
        let ok = r#"{"format":"dpqr-ledger-1","budget":{"Pure":{"epsilon":1.0}},"datasets":{}}"#;
        assert!(LedgerFile::parse(ok, "t").is_ok());
    }
}
