//! The crate's one error type.

use dp_core::CoreError;
use dp_mechanisms::MechanismError;
use dp_queries::QueryError;

/// Everything the benchmark runner and the `dpqr` program can report.
///
/// Exit status of `dpqr` ([`BenchError::exit_status`]): 3 for a spend a budget refused,
/// nothing charged ([`BenchError::is_over_budget`]); 2 for every other error, usage errors
/// ([`BenchError::Usage`], like the argument parser's own: only for a flag, argument or
/// combination the user gave — docs/cli.md, "Errors: usage or typed"), bad input
/// ([`BenchError::InputFile`], [`BenchError::InvalidInput`],
/// [`BenchError::WeightedRecords`] and the other file variants), a ledger's datasets that
/// refuse a charge ([`BenchError::UnknownLedgerDataset`] and its neighbours), a release
/// over the memory cap ([`BenchError::OverMemoryCap`]), outputs that cannot be written
/// ([`BenchError::Output`]), audits that cannot run ([`BenchError::Audit`]), a library
/// caller's mistake ([`BenchError::NotCentral`], [`BenchError::ReplaceOneOnly`]) and
/// broken invariants ([`BenchError::Internal`]) alike. (`dpqr`
/// itself exits with 5 instead when a release fails after its spend was charged, 1 for a
/// failed audit and 4 when stdout cannot be written after success.)
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// From `dp-core`.
    #[error(transparent)]
    Core(#[from] CoreError),
    /// From `dp-queries` (data, domain and workload errors name file, line and column).
    #[error(transparent)]
    Query(#[from] QueryError),
    /// From `dp-mechanisms`.
    #[error(transparent)]
    Mechanism(#[from] MechanismError),
    /// From `dp-local` (the local-model mechanisms).
    #[error(transparent)]
    Local(#[from] dp_local::LocalError),
    /// Reading or writing a file.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// A command-line argument or combination of arguments that cannot be used, refused
    /// before anything is read, recorded or written; the message says what to give instead.
    /// Exit status 2.
    #[error("{0}")]
    Usage(String),
    /// An input file that was read but whose contents cannot be used: malformed (a bad line
    /// of a results file), or not matching the other inputs (an answers file with another
    /// number of answers than the workload has queries, a release report of another
    /// release). Exit status 2.
    #[error("{file}{}: {message}", line.map(|l| format!(", line {l}")).unwrap_or_default())]
    InputFile {
        /// The file.
        file: String,
        /// 1-based line, when the fault is on one line.
        line: Option<u64>,
        /// What is wrong.
        message: String,
    },
    /// Input values (read from files, or passed by a library caller) that cannot be used
    /// where no file is at hand to name: weights negative, not finite or summing to zero,
    /// records with codes outside their attributes, a noise description that is not
    /// positive, a schema over other attributes than the data, a label the CSV output cannot
    /// hold. Exit status 2.
    #[error("{0}")]
    InvalidInput(String),
    /// An output file that cannot be created when it is written: its path is a directory or
    /// ends in a directory part, or its directory does not accept a new file
    /// ([`crate::io::output::AtomicFile`]; [`BenchError::BadOutput`] is the same refusal made
    /// before anything is read). Exit status 2.
    #[error("{path}: {why}")]
    Output {
        /// The file, or the directory it cannot be created in.
        path: String,
        /// Why it cannot be created.
        why: String,
    },
    /// An audit that cannot run as asked: a pair of datasets it cannot build, a mechanism
    /// with no steps to audit, a neighbouring relation the step audit is not stated for.
    /// Exit status 2.
    #[error("{0}")]
    Audit(String),
    /// A broken invariant of this crate that should never occur (the vendored font or a
    /// bundled table unreadable, a file committed twice): a bug to report. Exit status 2.
    #[error("internal error: {0}")]
    Internal(String),
    /// A value that could not be encoded as JSON (a report, the ledger, a list).
    #[error("cannot encode {what}: {source}")]
    Encode {
        /// What was being encoded, e.g. `report`.
        what: &'static str,
        /// The cause.
        #[source]
        source: serde_json::Error,
    },
    /// A CSV output (answers, synthetic records, rows) that could not be written.
    #[error("cannot write {what}: {source}")]
    WriteCsv {
        /// What was being written, e.g. `the answers`.
        what: &'static str,
        /// The cause.
        #[source]
        source: csv::Error,
    },
    /// A file that is not a readable budget ledger, or whose contents contradict each other.
    #[error("{file}: {message}")]
    LedgerFormat {
        /// The ledger file.
        file: String,
        /// What is wrong.
        message: String,
    },
    /// A `--ledger` path where no ledger exists.
    #[error("no ledger at {0}; create one with `dpqr ledger init {0} --epsilon …`")]
    NoLedger(String),
    /// A ledger file that `dpqr ledger init` refuses to overwrite.
    #[error("{0}: a ledger already exists; refusing to overwrite it")]
    LedgerExists(String),
    /// A file that exists where a command refuses to overwrite one (`dpqr ledger init`, a
    /// no-clobber output).
    #[error("{0} already exists; refusing to overwrite it")]
    AlreadyExists(String),
    /// An output path that cannot be written, checked before anything is read
    /// ([`crate::io::output::check_outputs`]).
    #[error("{flag} {path}: {why}; nothing was read, recorded or written")]
    BadOutput {
        /// The output's flag, e.g. `--out`.
        flag: String,
        /// The path.
        path: String,
        /// Why it cannot be written.
        why: String,
    },
    /// A file given as the report of a release (`dpqr eval --report`) that is not one.
    #[error("{file}: not a release report of `dpqr release --report`: {why}")]
    ReportFile {
        /// The file.
        file: String,
        /// What is wrong.
        why: String,
    },
    /// A file holding more records than this machine's `usize` can count.
    #[error("more records than this machine can count")]
    TooManyRecords,
    /// Two values a caller passed that must agree and do not (lengths of answers and
    /// queries, records and weights): a broken invariant of the caller, not user input.
    #[error("{0}")]
    Mismatch(String),
    /// A numerical routine of the audit's statistics that failed or was given arguments
    /// outside its domain.
    #[error("{0}")]
    Statistics(String),
    /// A benchmark's own consistency check failed (e.g. two counting paths disagree).
    #[error("{0}")]
    BenchCheck(String),
    /// A mechanism that failed after its spend was recorded in the budget ledger
    /// ([`crate::io::ledger_file::release_charged`]): the spend stays charged, since noise may
    /// already have been drawn (a failed release gets no free retry).
    #[error(
        "the release failed after its spend was recorded in the ledger (the spend stays \
         charged: a failed release gets no free retry): {0}"
    )]
    ReleaseFailedAfterCharge(#[source] MechanismError),
    /// The budget ledger refused to charge a release's spend, before any data was read or
    /// noise drawn, and charged nothing: the spend does not fit the dataset's remaining
    /// budget, or its kind of guarantee cannot be charged in this ledger (a ρ-zCDP spend in
    /// a pure ε-DP ledger, a replace-one spend in an add/remove ledger). `dpqr` exits with
    /// status 3 for it ([`BenchError::is_over_budget`]).
    #[error(
        "ledger {ledger}: dataset {dataset}: refusing the release ({reason}; nothing charged): {source}"
    )]
    LedgerRefused {
        /// The ledger file.
        ledger: String,
        /// The dataset's name in the ledger, quoted.
        dataset: String,
        /// `over budget`, or `this kind of guarantee cannot be charged in this ledger`.
        reason: String,
        /// The ledger's refusal.
        #[source]
        source: Box<CoreError>,
    },
    /// A guarantee of the local model (a local-model mechanism's certificate,
    /// [`dp_mechanisms::PrivacyModel::Local`]) offered to a ledger of central spends, which
    /// cannot compose with it: nothing is charged or released.
    #[error(
        "{mechanism} gives a local ε-DP guarantee (any two inputs of one client), which a \
         ledger of central spends cannot compose with them: release without --ledger and \
         account the local ε per client (docs/privacy.md, \"The local model\")"
    )]
    LocalInLedger {
        /// The mechanism's name.
        mechanism: String,
    },
    /// An error of a release charged to a ledger, with the ledger and dataset it concerns
    /// (e.g. [`BenchError::ReleaseFailedAfterCharge`]).
    #[error("ledger {ledger}: dataset {dataset}: {source}")]
    InLedger {
        /// The ledger file.
        ledger: String,
        /// The dataset's name in the ledger, quoted.
        dataset: String,
        /// The error.
        #[source]
        source: Box<BenchError>,
    },
    /// A bad header or row in a weighted (synthetic) records CSV file
    /// ([`crate::io::synthetic::read_weighted`]).
    #[error("{file}, line {line}: {message}")]
    WeightedFile {
        /// The file.
        file: String,
        /// 1-based line (header = 1).
        line: u64,
        /// What is wrong.
        message: String,
    },
    /// A private input that is a weighted records file (a column of weights, as `dpqr
    /// release --synthetic-out` writes them), not one row per person: refused, since a
    /// release on weighted rows would not have the sensitivity the mechanisms are
    /// calibrated to. Exit status 2.
    #[error(
        "{file} is a weighted records file (its column {column} holds weights, as `dpqr release \
         --synthetic-out` writes them), not one row per person: a release on weighted rows \
         would not have the sensitivity the mechanisms are calibrated to, so it is refused. \
         To use the file as data, expand it to integer rows first with `dpqr synthetic \
         expand --in FILE --domain DOMAIN --total N --out ROWS.csv` (the guarantee then \
         protects those rows; see docs/privacy.md)"
    )]
    WeightedRecords {
        /// The file.
        file: String,
        /// Its weight column, quoted.
        column: String,
    },
    /// A release whose counts would need more memory than `--max-memory-mib` allows,
    /// refused before anything is allocated or read. Exit status 2.
    #[error(
        "{what}: the release would need about {need_mib:.1} MiB ({bytes_per} bytes per \
         {unit}), more than --max-memory-mib {cap_mib}; refusing before allocating"
    )]
    OverMemoryCap {
        /// What is counted, e.g. `workload 'all-3way' has 5000 counting queries`.
        what: String,
        /// The memory the counts need, in MiB.
        need_mib: f64,
        /// The bytes one count takes.
        bytes_per: u64,
        /// What one count is: `query` or `count`.
        unit: &'static str,
        /// The cap, `--max-memory-mib`.
        cap_mib: u64,
    },
    /// A local-model catalogue entry asked to build a central mechanism (a library
    /// caller's mistake: its protocol runs in [`crate::pipeline::LocalPlan`], which
    /// [`crate::pipeline::validate`] chooses from the entry). Exit status 2.
    #[error(
        "{mechanism} is a local-model mechanism: it is no central mechanism to build, and runs \
         through `dpqr release` (one simulated client per record)"
    )]
    NotCentral {
        /// The entry's name.
        mechanism: String,
    },
    /// A mechanism's builder called with a neighbouring relation it is not stated for,
    /// past the catalogue's check ([`crate::catalogue::MechanismSpec::check_relation`],
    /// which refuses the flag first). Exit status 2.
    #[error("{mechanism} is stated for replace-one neighbours only (n is public)")]
    ReplaceOneOnly {
        /// The mechanism's name.
        mechanism: &'static str,
    },
    /// A dataset name that a ledger already holds, given to `dpqr ledger init` twice or to
    /// `dpqr ledger add-dataset`; nothing written. Exit status 2.
    #[error("the ledger already holds a dataset {name}; give each dataset once")]
    DatasetExists {
        /// The name, quoted.
        name: String,
    },
    /// A release to be charged to a ledger that holds no dataset: nothing charged.
    /// Exit status 2.
    #[error(
        "ledger {ledger} holds no dataset; nothing charged. Add one with `dpqr ledger \
         add-dataset {ledger} NAME`, then release with --ledger-dataset NAME"
    )]
    LedgerEmpty {
        /// The ledger file.
        ledger: String,
    },
    /// A release to be charged, without `--ledger-dataset`, to a ledger of several
    /// datasets: nothing charged. Exit status 2.
    #[error(
        "ledger {ledger} holds several datasets ({datasets}); nothing charged. Name the one \
         this release reads with --ledger-dataset NAME"
    )]
    LedgerDatasetUnnamed {
        /// The ledger file.
        ledger: String,
        /// Its datasets, quoted and listed.
        datasets: String,
    },
    /// A release charged to a dataset the ledger does not hold: nothing charged.
    /// Exit status 2.
    #[error(
        "ledger {ledger}: no dataset {name} (the ledger's datasets: {datasets}); nothing \
         charged. A release is charged only to a dataset the ledger already holds: name one \
         of those with --ledger-dataset, or, for data that is in the ledger under no name, \
         add it first with `dpqr ledger add-dataset {ledger} NAME`"
    )]
    UnknownLedgerDataset {
        /// The ledger file.
        ledger: String,
        /// The name given, quoted.
        name: String,
        /// The ledger's datasets, quoted and listed, or `none`.
        datasets: String,
    },
    /// Data already charged to another dataset of the ledger, charged to a second one
    /// (the same records would have two budgets): nothing charged. Exit status 2.
    #[error(
        "the data {data} was already charged to dataset {charged_to} of this ledger; \
         charging it to dataset {dataset} as well would give the same records a second \
         budget, so the release is refused and nothing is charged. Charge releases of this \
         data to the dataset that holds it (--ledger-dataset {first}); a dataset added for \
         other data reads that data from its own files (`dpqr ledger show` lists the data \
         each dataset was used with)"
    )]
    DataInAnotherDataset {
        /// The data's ledger key (`file:…` or `bundled:…`).
        data: String,
        /// The datasets it was charged to, quoted, joined by `and`.
        charged_to: String,
        /// The dataset this charge names, quoted.
        dataset: String,
        /// The first of `charged_to`.
        first: String,
    },
    /// A bad row in an answers CSV file.
    #[error("{file}, line {line}: {message}")]
    AnswersFile {
        /// The file.
        file: String,
        /// 1-based line (header = 1).
        line: u64,
        /// What is wrong.
        message: String,
    },
}

impl BenchError {
    /// Whether this is (or wraps) a spend refused by a budget, nothing charged: over the
    /// budget ([`CoreError::BudgetExceeded`]) or, from a ledger file
    /// ([`BenchError::LedgerRefused`]), a guarantee the ledger cannot charge. `dpqr` exits
    /// with status 3 for it, 2 for other errors.
    pub fn is_over_budget(&self) -> bool {
        match self {
            BenchError::Core(CoreError::BudgetExceeded { .. }) => true,
            BenchError::LedgerRefused { .. } => true,
            BenchError::InLedger { source, .. } => source.is_over_budget(),
            _ => false,
        }
    }
}

impl BenchError {
    /// The exit status `dpqr` gives for this error: 3 for a spend a budget refused, nothing
    /// charged ([`BenchError::is_over_budget`]), 2 for every other error (see the type's
    /// docs).
    pub fn exit_status(&self) -> u8 {
        if self.is_over_budget() { 3 } else { 2 }
    }
}

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, BenchError>;

/// Wrap an I/O error with the path it concerns.
pub fn io_error(path: impl AsRef<std::path::Path>) -> impl FnOnce(std::io::Error) -> BenchError {
    let path = path.as_ref().display().to_string();
    move |source| BenchError::Io { path, source }
}

/// Longest user-supplied text [`quoted`] shows in a message, in characters.
const QUOTED_MAX: usize = 60;

/// A piece of user-supplied text for a message: in single quotes, control characters
/// written as `\n`, `\t` or `\u{…}` (so a message stays on its line and never drives the
/// terminal), and cut to its first 60 characters with `…` after longer text.
pub fn quoted(s: &str) -> String {
    let mut out = String::from("'");
    for (i, ch) in s.chars().enumerate() {
        if i == QUOTED_MAX {
            out.push('…');
            break;
        }
        match ch {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_text_is_one_short_line() {
        assert_eq!(quoted("sex"), "'sex'");
        assert_eq!(quoted("a\nb\u{1b}[2J"), "'a\\nb\\u{1b}[2J'");
        let long = "x".repeat(100);
        assert_eq!(quoted(&long), format!("'{}…'", "x".repeat(60)));
    }

    /// Usage errors, bad input, a ledger's refusal of a dataset, the memory cap, unwritable
    /// outputs, audits that cannot run and internal errors all exit with 2; a budget's
    /// refusal with 3.
    #[test]
    fn exit_status_of_each_kind() {
        let typed = [
            BenchError::Usage("give --data".into()),
            BenchError::InputFile {
                file: "a.jsonl".into(),
                line: Some(3),
                message: "not JSON".into(),
            },
            BenchError::InvalidInput("the weights sum to zero".into()),
            BenchError::Output {
                path: "out".into(),
                why: "is a directory, not a file".into(),
            },
            BenchError::Audit("no step to audit".into()),
            BenchError::Internal("already committed".into()),
            BenchError::WeightedRecords {
                file: "syn.csv".into(),
                column: "'weight'".into(),
            },
            BenchError::OverMemoryCap {
                what: "workload 'all-3way' has 5000 counting queries".into(),
                need_mib: 2.5,
                bytes_per: 64,
                unit: "query",
                cap_mib: 1,
            },
            BenchError::NotCentral {
                mechanism: "local-projection".into(),
            },
            BenchError::UnknownLedgerDataset {
                ledger: "l.json".into(),
                name: "'b'".into(),
                datasets: "'a'".into(),
            },
            BenchError::DataInAnotherDataset {
                data: "bundled:nltcs".into(),
                charged_to: "'a'".into(),
                dataset: "'b'".into(),
                first: "'a'".into(),
            },
        ];
        for e in &typed {
            assert_eq!(e.exit_status(), 2, "{e}");
        }
        let refused = BenchError::Core(CoreError::BudgetExceeded {
            label: "release".into(),
            requested: "ε = 2".into(),
            budget: "total budget ε = 1".into(),
        });
        assert_eq!(refused.exit_status(), 3);
        let wrapped = BenchError::InLedger {
            ledger: "l.json".into(),
            dataset: "'d'".into(),
            source: Box::new(BenchError::Internal("x".into())),
        };
        assert_eq!(wrapped.exit_status(), 2);
    }

    #[test]
    fn input_file_names_the_line_when_there_is_one() {
        let e = BenchError::InputFile {
            file: "r.jsonl".into(),
            line: Some(4),
            message: "expected value".into(),
        };
        assert_eq!(e.to_string(), "r.jsonl, line 4: expected value");
        let e = BenchError::InputFile {
            file: "a.csv".into(),
            line: None,
            message: "3 answers, but the workload has 4 queries".into(),
        };
        assert_eq!(
            e.to_string(),
            "a.csv: 3 answers, but the workload has 4 queries"
        );
    }
}
