//! Printing that never panics (issue #23 §4). `println!` and `eprintln!` panic when their
//! stream cannot be written — `dpqr release … | head -1` closes stdout while the summary is
//! being printed, after the ledger was charged and the outputs were written — so `dpqr`
//! prints through `outln!`, `out!` and `errln!` instead:
//!
//! * stdout: the first failed write is recorded ([`stdout_status`]) and every later one is
//!   skipped; the command goes on, and `main` picks the exit status from what the command
//!   did (a closed pipe is the reader's choice and never an error; see `main.rs`);
//! * stderr: a failed write is ignored (there is nowhere left to say anything).

use std::fmt;
use std::io::{ErrorKind, Write};
use std::sync::Mutex;

/// What became of stdout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum StdoutStatus {
    /// Every write succeeded (so far).
    Complete,
    /// The reader closed the pipe (EPIPE): the rest of the output was not wanted.
    Closed,
    /// A write failed for another reason (a full disk, an I/O error): the message.
    Failed(String),
}

/// The first failure on stdout, if any.
static STDOUT: Mutex<StdoutStatus> = Mutex::new(StdoutStatus::Complete);

fn status_lock() -> std::sync::MutexGuard<'static, StdoutStatus> {
    STDOUT
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Record a failed write on stdout (the first failure is kept).
fn record(e: &std::io::Error) {
    let mut s = status_lock();
    if *s == StdoutStatus::Complete {
        *s = if e.kind() == ErrorKind::BrokenPipe {
            StdoutStatus::Closed
        } else {
            StdoutStatus::Failed(e.to_string())
        };
    }
}

/// Write `args` to stdout unless an earlier write failed; a failure is recorded, never a
/// panic. Used by `out!` and `outln!`.
pub(crate) fn write_stdout(args: fmt::Arguments<'_>) {
    if *status_lock() != StdoutStatus::Complete {
        return;
    }
    let result = std::io::stdout().lock().write_fmt(args);
    if let Err(e) = result {
        record(&e);
    }
}

/// Write `args` to stderr, ignoring a failure. Used by `errln!`.
pub(crate) fn write_stderr(args: fmt::Arguments<'_>) {
    let _ = std::io::stderr().lock().write_fmt(args);
}

/// Flush stdout (its buffer holds at most an unfinished line), recording a failure.
pub(crate) fn flush_stdout() {
    if *status_lock() != StdoutStatus::Complete {
        return;
    }
    let result = std::io::stdout().lock().flush();
    if let Err(e) = result {
        record(&e);
    }
}

/// What became of stdout so far.
pub(crate) fn stdout_status() -> StdoutStatus {
    status_lock().clone()
}

/// `print!` to stdout that never panics ([`write_stdout`]).
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::out::write_stdout(format_args!($($arg)*))
    };
}

/// `println!` to stdout that never panics ([`write_stdout`]).
macro_rules! outln {
    () => {
        $crate::out::write_stdout(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::out::write_stdout(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `eprintln!` that never panics ([`write_stderr`]).
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::out::write_stderr(format_args!("{}\n", format_args!($($arg)*)))
    };
}
