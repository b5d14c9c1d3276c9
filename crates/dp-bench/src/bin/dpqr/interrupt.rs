//! What a `dpqr release` has done so far — charged or not, which outputs are in place — kept
//! in one process-global state, so that the way out can say it (issue #23 §4):
//!
//! * on SIGINT or SIGTERM ([`install`]: a signal-hook thread, not a signal handler, so it
//!   may lock, allocate and print) one stderr message says whether the budget was charged
//!   and in which ledger, and which outputs were and were not written; the temporary files
//!   of unwritten outputs are removed; the exit status is 130 (SIGINT) or 143 (SIGTERM), or
//!   0 if the release had already finished (charged and every output in place: nothing to
//!   retry);
//! * `main` prints the same account when stdout was closed under a finished release, and
//!   when a release fails after its spend was recorded (exit status 5).
//!
//! The state is behind one mutex. The two irreversible steps hold it while they happen —
//! recording the spend in the ledger ([`charging`] … `Charging::recorded`) and renaming
//! the outputs into place ([`commit_outputs`]) — and the signal thread takes it before it
//! looks and never gives it back (it exits holding it). So the account is never stale: a
//! signal arriving during either step is answered once the step is over, and no step can
//! happen after the account was read.

use dp_bench::Result;
use dp_bench::io::output::AtomicFile;
use indicatif::ProgressBar;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// One output of the release.
struct Output {
    /// Its flag (`--out`, `--report`, `--synthetic-out`).
    flag: &'static str,
    /// Its target path.
    path: PathBuf,
    /// Its temporary file while it is being written.
    temp: Option<PathBuf>,
    /// Renamed into place.
    written: bool,
}

/// The spend being (or having been) recorded.
struct Spend {
    /// The dataset's key in the ledger.
    key: String,
    /// The loss and its neighbouring relation, in words.
    loss: String,
}

/// What the release has done.
struct State {
    /// A release registered itself ([`begin_release`]).
    active: bool,
    /// `--ledger`, if given.
    ledger: Option<PathBuf>,
    /// The spend, once recording it has begun.
    spend: Option<Spend>,
    /// The spend is recorded in the ledger.
    charged: bool,
    /// The outputs in the order they are written.
    outputs: Vec<Output>,
    /// Every output is in place: the release is complete.
    finished: bool,
    /// The command's spinner, cleared before the message.
    progress: Option<ProgressBar>,
}

static STATE: Mutex<State> = Mutex::new(State {
    active: false,
    ledger: None,
    spend: None,
    charged: false,
    outputs: Vec::new(),
    finished: false,
    progress: None,
});

fn state() -> MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Register a release: its outputs (flag, path) and its ledger, if any.
pub(crate) fn begin_release(outputs: &[(&'static str, &Path)], ledger: Option<&Path>) {
    let mut s = state();
    s.active = true;
    s.ledger = ledger.map(Path::to_path_buf);
    s.outputs = outputs
        .iter()
        .map(|&(flag, path)| Output {
            flag,
            path: path.to_path_buf(),
            temp: None,
            written: false,
        })
        .collect();
}

/// The spinner to clear before an interrupted release's message.
pub(crate) fn set_progress(pb: &ProgressBar) {
    state().progress = Some(pb.clone());
}

/// The spend of dataset `key` (`loss` in words) is about to be recorded: hold this while
/// it is, then call `Charging::recorded`. Dropped without that call (the ledger refused
/// or could not be written), the release stays uncharged.
pub(crate) fn charging(key: &str, loss: String) -> Charging {
    let mut s = state();
    s.spend = Some(Spend {
        key: key.to_string(),
        loss,
    });
    Charging { state: s }
}

/// The lock held while the spend is recorded ([`charging`]).
pub(crate) struct Charging {
    state: MutexGuard<'static, State>,
}

impl dp_bench::pipeline::ChargeGuard for Charging {
    /// The spend is on disk.
    fn recorded(mut self: Box<Self>) {
        self.state.charged = true;
    }
}

/// Whether the release's spend is recorded in a ledger.
pub(crate) fn charged() -> bool {
    state().charged
}

/// Whether the release finished: every output in place (and the spend recorded, with a
/// ledger).
pub(crate) fn finished() -> bool {
    state().finished
}

/// Start writing the output `path` ([`AtomicFile::create`]) and note its temporary file,
/// so that an interrupted release removes it.
pub(crate) fn create_output(path: &Path) -> Result<AtomicFile> {
    let mut s = state();
    let file = AtomicFile::create(path)?;
    let temp = file.temp_path().to_path_buf();
    match s.outputs.iter_mut().find(|o| o.path == path) {
        Some(o) => o.temp = Some(temp),
        None => s.outputs.push(Output {
            flag: "output",
            path: path.to_path_buf(),
            temp: Some(temp),
            written: false,
        }),
    }
    Ok(file)
}

/// Rename every written output into place ([`AtomicFile::commit`]), noting each, then the
/// release as finished.
pub(crate) fn commit_outputs(files: Vec<AtomicFile>) -> Result<()> {
    let mut s = state();
    for f in files {
        let path = f.path().to_path_buf();
        f.commit()?;
        if let Some(o) = s.outputs.iter_mut().find(|o| o.path == path) {
            o.written = true;
            o.temp = None;
        }
    }
    s.finished = true;
    Ok(())
}

/// The account of a release, one indented line each for the budget and the outputs.
fn account(s: &State) -> String {
    let budget = match (&s.ledger, s.charged, &s.spend) {
        (Some(l), true, Some(spend)) => format!(
            "budget:  CHARGED: ledger {} records {} for {} (a recorded spend is never \
             refunded: running the release again spends again)",
            l.display(),
            spend.loss,
            spend.key
        ),
        (Some(l), _, _) => format!(
            "budget:  NOT charged: nothing was recorded in ledger {}",
            l.display()
        ),
        (None, _, _) => {
            "budget:  NOT charged: no --ledger was given, so no spend was recorded anywhere"
                .to_string()
        }
    };
    let name = |o: &Output| format!("{} {}", o.flag, o.path.display());
    let written: Vec<String> = s.outputs.iter().filter(|o| o.written).map(name).collect();
    let missing: Vec<String> = s.outputs.iter().filter(|o| !o.written).map(name).collect();
    let outputs = match (written.is_empty(), missing.is_empty()) {
        (_, true) => format!("outputs: all written: {}", written.join(", ")),
        (true, false) => format!(
            "outputs: none written: {} (each left as it was, no partial file)",
            missing.join(", ")
        ),
        (false, false) => format!(
            "outputs: written: {}; NOT written (left as they were): {}",
            written.join(", "),
            missing.join(", ")
        ),
    };
    format!("  {budget}\n  {outputs}\n")
}

/// `header` and the release's account, for `main` (nothing if no release registered).
pub(crate) fn report(header: &str) -> Option<String> {
    let s = state();
    s.active.then(|| format!("{header}\n{}", account(&s)))
}

/// The signal thread's answer to `signal` (`name`): clear the spinner, remove the
/// temporary files of unwritten outputs, say what was done, exit. Never returns and never
/// releases the state.
#[cfg(unix)]
fn on_signal(signal: i32, name: &str) -> ! {
    use std::io::IsTerminal;
    let s = state();
    if let Some(pb) = &s.progress {
        pb.finish_and_clear();
    }
    for o in s.outputs.iter().filter(|o| !o.written) {
        if let Some(t) = &o.temp {
            let _ = std::fs::remove_file(t);
        }
    }
    // after a terminal's echoed ^C
    let lead = if std::io::stderr().is_terminal() {
        "\n"
    } else {
        ""
    };
    let code = if s.finished { 0 } else { 128 + signal };
    let header = if !s.active {
        format!("dpqr: interrupted by {name}")
    } else if s.finished {
        format!(
            "dpqr: {name} received after the release had finished: exit status 0, nothing \
             to retry"
        )
    } else {
        format!("dpqr: interrupted by {name} before the release finished (exit status {code}):")
    };
    let body = if s.active { account(&s) } else { String::new() };
    crate::out::write_stderr(format_args!("{lead}{header}\n{body}"));
    std::process::exit(code)
}

/// Answer SIGINT and SIGTERM from now on with [`on_signal`] (on a thread of its own). If
/// the handler cannot be installed the signals keep their default action.
#[cfg(unix)]
pub(crate) fn install() {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else {
        return;
    };
    let spawned = std::thread::Builder::new()
        .name("dpqr-signals".into())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                on_signal(
                    signal,
                    if signal == SIGINT {
                        "SIGINT"
                    } else {
                        "SIGTERM"
                    },
                );
            }
        });
    // without the thread the signals still stop the process (status 130 from a shell)
    drop(spawned);
}

/// Signals keep their default action where signal-hook's iterator is not available.
#[cfg(not(unix))]
pub(crate) fn install() {}
