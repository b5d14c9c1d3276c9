//! How `dpqr` shows the progress of long stages ([`dp_core::Progress`]): an indicatif bar
//! on stderr with the percentage when stderr is a terminal; with the environment variable
//! `DPQR_PROGRESS=plain`, one line on stderr at every tenth of a stage instead (for logs and
//! tests, where stderr is not a terminal and the bar hides itself). `--quiet` installs no
//! reporter: nothing is drawn or printed.
//!
//! **No timing is shown**: no elapsed time, no ETA. Progress is output of the release
//! (docs/privacy.md, "What `dpqr release` outputs"), and a stage's duration grows with `n`
//! and with data-dependent work, so only stage names and public counts (rounds done of a
//! total fixed before the run) are reported.

use dp_core::Progress;
use indicatif::{ProgressBar, ProgressStyle};
use std::sync::Mutex;

/// The environment variable that selects line-based progress (`plain`).
pub(crate) const PROGRESS_ENV: &str = "DPQR_PROGRESS";

/// The stage being shown.
struct Stage {
    name: String,
    /// The last tenth of the stage printed (plain lines).
    printed_tenth: Option<u64>,
}

/// The `dpqr` progress reporter: drives the command's bar, or prints plain lines.
pub(crate) struct CliProgress {
    bar: ProgressBar,
    plain: bool,
    stage: Mutex<Option<Stage>>,
}

impl CliProgress {
    /// A reporter drawing on `bar` (the command's spinner), or printing plain lines when
    /// `DPQR_PROGRESS=plain`.
    pub(crate) fn new(bar: ProgressBar) -> Self {
        let plain = std::env::var(PROGRESS_ENV).is_ok_and(|v| v == "plain");
        CliProgress {
            bar,
            plain,
            stage: Mutex::new(None),
        }
    }
}

/// Show a stage without a percentage on the command's spinner (`bar`), or as one plain
/// line with `DPQR_PROGRESS=plain`; nothing when `quiet`. For stages whose length is not
/// public or not known in advance: counting the workload on the data is one pass over the
/// records, and its share done would reveal n, which is private under add/remove
/// neighbours.
pub(crate) fn announce_stage(bar: &ProgressBar, quiet: bool, message: &str) {
    if quiet {
        return;
    }
    if std::env::var(PROGRESS_ENV).is_ok_and(|v| v == "plain") {
        errln!("{message}");
    } else {
        bar.set_message(message.to_string());
    }
}

impl Progress for CliProgress {
    fn report(&self, stage: &str, done: u64, total: u64) {
        let total = total.max(1);
        let done = done.min(total);
        let mut guard = self.stage.lock().unwrap_or_else(|p| p.into_inner());
        if guard.as_ref().is_none_or(|s| s.name != stage) {
            *guard = Some(Stage {
                name: stage.to_string(),
                printed_tenth: None,
            });
            if !self.plain {
                self.bar.set_style(
                    ProgressStyle::with_template("{msg} [{bar:30}] {percent}%")
                        .unwrap_or_else(|_| ProgressStyle::default_bar()),
                );
                self.bar.set_message(stage.to_string());
                self.bar.set_length(total);
            }
        }
        let Some(s) = guard.as_mut() else { return };
        if !self.plain {
            self.bar.set_length(total);
            self.bar.set_position(done);
            if done == total {
                self.bar.set_style(crate::spinner_style());
            }
            return;
        }
        let tenth = done * 10 / total;
        if s.printed_tenth.is_some_and(|t| t >= tenth) {
            return;
        }
        s.printed_tenth = Some(tenth);
        errln!("{stage}: {done} of {total} ({}%)", done * 100 / total);
    }
}
