//! The `dpqr` budget ledger on disk: a per-dataset total budget for one neighbouring
//! relation and every spend recorded against it, surviving crashes and serialising
//! concurrent invocations.
//!
//! The file is JSON: `{"format": "dpqr-ledger-2", "budget": <PrivacyLoss>,
//! "neighbouring": "ReplaceOne" | "AddRemove", "datasets": {"<dataset key>":
//! <dp_core::Ledger>}}`. Every dataset (keyed by its bundled name or the canonical path of
//! its CSV) has its own [`dp_core::Ledger`] with the file's budget and relation, so the
//! budget is a per-dataset total and the accounting rules are dp-core's. Every spend
//! records the relation its guarantee is stated for and is charged in the ledger's
//! relation ([`dp_core::convert_neighbouring`]: an add/remove spend costs 2ε, 4ρ or
//! (2ε, (1 + e^ε)δ) in a replace-one ledger; a replace-one spend is refused by an
//! add/remove ledger).
//!
//! * **Old files** (`dpqr-ledger-1`, written before spends recorded their relation) are
//!   read as replace-one ledgers whose old spends have an unknown relation and are charged
//!   conservatively as add/remove spends (2ε, 4ρ, (2ε, (1 + e^ε)δ)): whatever relation they
//!   were released under, the charge is at least their replace-one cost. The next write
//!   stores the file in the current format, the old spends still marked unknown.
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
//!   so a release that fails or crashes after its first noise draw has still been charged
//!   (no free retry), and a crash can lose budget (conservative) but never publish an
//!   unrecorded release.

use crate::io::output::AtomicFile;
use crate::{BenchError, Result, io_error, quoted};
use dp_core::{Ledger, Neighbouring, PrivacyLoss, Spend};
use dp_mechanisms::{Mechanism, Release};
use dp_queries::{Dataset, Workload};
use rand::CryptoRng;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The format tag written in every ledger file.
pub const FORMAT: &str = "dpqr-ledger-2";

/// The format tag of ledgers written before spends recorded their neighbouring relation.
pub const LEGACY_FORMAT: &str = "dpqr-ledger-1";

/// The contents of a ledger file.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LedgerFile {
    /// Always [`FORMAT`].
    pub format: String,
    /// The total budget of every dataset.
    pub budget: PrivacyLoss,
    /// The neighbouring relation the budget is stated for.
    pub neighbouring: Neighbouring,
    /// One odometer per dataset key.
    pub datasets: BTreeMap<String, Ledger>,
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

impl LedgerFile {
    /// An empty ledger with a validated per-dataset total budget for `neighbouring`.
    pub fn new(budget: PrivacyLoss, neighbouring: Neighbouring) -> Result<Self> {
        Ok(LedgerFile {
            format: FORMAT.to_string(),
            budget: budget.validate()?,
            neighbouring,
            datasets: BTreeMap::new(),
        })
    }

    /// Parse and validate ledger text; `file` labels errors. A [`LEGACY_FORMAT`] ledger
    /// becomes a replace-one ledger whose spends have an unknown relation (see the module
    /// docs).
    pub fn parse(text: &str, file: &str) -> Result<Self> {
        let bad =
            |e: serde_json::Error| BenchError::Usage(format!("{file}: not a dpqr ledger: {e}"));
        #[derive(Deserialize)]
        struct Tag {
            format: String,
        }
        let tag: Tag = serde_json::from_str(text).map_err(bad)?;
        let l = match tag.format.as_str() {
            FORMAT => serde_json::from_str::<LedgerFile>(text).map_err(bad)?,
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
                        .map_err(|e| BenchError::Usage(format!("{file}: dataset {key}: {e}")))?;
                    datasets.insert(key, restored);
                }
                LedgerFile {
                    format: FORMAT.to_string(),
                    budget: old.budget,
                    neighbouring: Neighbouring::ReplaceOne,
                    datasets,
                }
            }
            other => {
                return Err(BenchError::Usage(format!(
                    "{file}: unknown ledger format {} (expected {FORMAT} or \
                     {LEGACY_FORMAT})",
                    quoted(other)
                )));
            }
        };
        l.budget.validate()?;
        for (key, ledger) in &l.datasets {
            if ledger.budget() != l.budget || ledger.neighbouring() != l.neighbouring {
                return Err(BenchError::Usage(format!(
                    "{file}: dataset {key} has budget {} for {} neighbours but the \
                     ledger's is {} for {} neighbours",
                    ledger.budget(),
                    ledger.neighbouring(),
                    l.budget,
                    l.neighbouring
                )));
            }
            ledger
                .spent()
                .map_err(|e| BenchError::Usage(format!("{file}: dataset {key}: {e}")))?;
        }
        Ok(l)
    }

    /// The odometer of `key` (a fresh one with the file's budget if the dataset is new).
    pub fn ledger(&self, key: &str) -> Ledger {
        self.datasets
            .get(key)
            .cloned()
            .unwrap_or_else(|| Ledger::with_neighbouring(self.budget, self.neighbouring))
    }

    /// `Ok` if `loss`, stated for `neighbouring`, fits in what is left of `key`'s budget
    /// once charged in the ledger's relation.
    pub fn can_spend(
        &self,
        key: &str,
        loss: &PrivacyLoss,
        neighbouring: Neighbouring,
    ) -> Result<()> {
        Ok(self.ledger(key).can_spend_under(loss, neighbouring)?)
    }

    /// Record `loss`, stated for `neighbouring`, against `key` under `label`, if it fits.
    pub fn spend(
        &mut self,
        key: &str,
        label: &str,
        loss: PrivacyLoss,
        neighbouring: Neighbouring,
    ) -> Result<()> {
        let mut l = self.ledger(key);
        l.spend_under(label, loss, neighbouring)?;
        self.datasets.insert(key.to_string(), l);
        Ok(())
    }

    /// Human-readable summary (`dpqr ledger show`).
    pub fn describe(&self) -> String {
        let mut s = format!(
            "per-dataset budget: {} under {} neighbours\n",
            self.budget, self.neighbouring
        );
        if self.datasets.is_empty() {
            s.push_str("no spends recorded\n");
        }
        for (key, l) in &self.datasets {
            s.push_str(&format!("dataset {key}\n"));
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
    let mut s = serde_json::to_string_pretty(l)
        .map_err(|e| BenchError::Usage(format!("cannot encode ledger: {e}")))?;
    s.push('\n');
    Ok(s)
}

/// Create a new ledger file with a per-dataset total `budget` for `neighbouring`; refuses
/// to overwrite.
pub fn init(path: &Path, budget: PrivacyLoss, neighbouring: Neighbouring) -> Result<()> {
    let contents = LedgerFile::new(budget, neighbouring)?;
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

    /// Record a spend of `loss`, stated for `neighbouring`, and write the ledger
    /// atomically; on error nothing is recorded.
    pub fn spend_and_save(
        &mut self,
        key: &str,
        label: &str,
        loss: PrivacyLoss,
        neighbouring: Neighbouring,
    ) -> Result<()> {
        let mut next = self.contents.clone();
        next.spend(key, label, loss, neighbouring)?;
        write_atomic(&self.path, &encode(&next)?, false)?;
        self.contents = next;
        Ok(())
    }
}

/// Run `mechanism` on `data` for `workload` as a release charged to dataset `key` of the
/// locked `ledger`, in the only order that never gives a free retry (issue #9 item 5): the
/// spend of the mechanism's certificate (its loss, stated for its neighbouring relation and
/// charged in the ledger's) is checked against the budget and written to disk
/// ([`LockedLedger::spend_and_save`]), and only then does the mechanism run and draw noise
/// from `rng`. The caller holds the lock throughout (it owns `ledger`), so no concurrent
/// release can pass a check in between.
///
/// Errors: a spend that does not fit (or cannot be written) is returned as is, nothing is
/// recorded and the mechanism never runs; a mechanism that fails afterwards — possibly
/// after drawing noise — gives [`BenchError::ReleaseFailedAfterCharge`], and its spend
/// stays recorded.
pub fn release_charged<W: Workload>(
    ledger: &mut LockedLedger,
    key: &str,
    label: &str,
    mechanism: &dyn Mechanism<W>,
    data: &Dataset,
    workload: &W,
    rng: &mut dyn CryptoRng,
) -> Result<Release> {
    release_charged_with(ledger, key, label, &mechanism.certificate(), || {
        mechanism.release(data, workload, rng)
    })
}

/// [`release_charged`] for any way of running the mechanism (`run`, e.g. a release from
/// streamed counts): the spend of `certificate` is checked and recorded first, then `run`
/// draws the noise; a failure after the charge is [`BenchError::ReleaseFailedAfterCharge`].
pub fn release_charged_with(
    ledger: &mut LockedLedger,
    key: &str,
    label: &str,
    certificate: &dp_mechanisms::PrivacyCertificate,
    run: impl FnOnce() -> dp_mechanisms::Result<Release>,
) -> Result<Release> {
    ledger.spend_and_save(key, label, certificate.loss, certificate.neighbouring)?;
    run().map_err(BenchError::ReleaseFailedAfterCharge)
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

    #[test]
    fn init_spend_reload() {
        let d = dir("basic");
        let p = d.join("l.json");
        init(&p, PrivacyLoss::pure(1.0).unwrap(), RO).unwrap();
        assert!(init(&p, PrivacyLoss::pure(5.0).unwrap(), RO).is_err());
        let mut l = LockedLedger::open(&p).unwrap();
        l.spend_and_save("adult", "r1", PrivacyLoss::pure(0.6).unwrap(), RO)
            .unwrap();
        // 0.6 + 0.6 > 1 for adult, but another dataset has its own total
        assert!(
            l.spend_and_save("adult", "r2", PrivacyLoss::pure(0.6).unwrap(), RO)
                .is_err()
        );
        l.spend_and_save("nltcs", "r3", PrivacyLoss::pure(0.6).unwrap(), RO)
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
        init(&p, PrivacyLoss::zcdp(1.0).unwrap(), RO).unwrap();
        std::fs::write(sidecar(&p, ".tmp"), "{ half a ledg").unwrap();
        let l = read(&p).unwrap();
        assert!(l.datasets.is_empty());
        let mut l = LockedLedger::open(&p).unwrap();
        l.spend_and_save("x", "a", PrivacyLoss::zcdp(0.5).unwrap(), RO)
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
            r#"{"format":"dpqr-ledger-2","budget":{"Pure":{"epsilon":1.0}},"datasets":{}}"#,
            r#"{"format":"dpqr-ledger-2","budget":{"Pure":{"epsilon":1.0}},"neighbouring":"Both","datasets":{}}"#,
        ] {
            assert!(LedgerFile::parse(text, "t").is_err(), "{text}");
        }
        let ok = r#"{"format":"dpqr-ledger-2","budget":{"Pure":{"epsilon":1.0}},"neighbouring":"AddRemove","datasets":{}}"#;
        assert_eq!(
            LedgerFile::parse(ok, "t").unwrap().neighbouring,
            Neighbouring::AddRemove
        );
        // an old file is a replace-one ledger
        let old = r#"{"format":"dpqr-ledger-1","budget":{"Pure":{"epsilon":1.0}},"datasets":{}}"#;
        assert_eq!(LedgerFile::parse(old, "t").unwrap().neighbouring, RO);
    }
}
