//! Progress of long stages ([`Progress`]): mechanisms and solvers report how far a stage
//! has got, the caller (e.g. the `dpqr` program) shows it. Without a reporter nothing is
//! computed or called.
//!
//! **Only public quantities.** A progress report can be seen by whoever watches the
//! terminal or the process, so it must not depend on the private data beyond what the
//! release publishes anyway: report round or iteration indices against totals fixed
//! before the stage starts (from the parameters and public inputs), never a current error,
//! a count of records (under add/remove neighbours n is private) or anything else computed
//! from the data.
//!
//! **Stopping.** A [`StopRequest`] is the other direction: the caller asks a long
//! computation to stop, and the computation looks at the request between its steps (where
//! it would report progress) and returns [`CoreError::Stopped`] once it is made. Nothing is
//! interrupted in the middle of a step, so a stopped computation leaves no half-written
//! state behind; what it spent before it stopped stays spent (a privacy budget charged to a
//! ledger is never refunded). The Python package uses it for Ctrl-C (issue #27).

use crate::error::{CoreError, Result};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Receives the progress of long stages. Implementations must be cheap (they are called
/// once per round or iteration) and must not fail.
pub trait Progress: Send + Sync {
    /// `done` of `total` steps of `stage` (a short public name such as "MWEM rounds") are
    /// complete; `total` is fixed before the stage starts and public.
    fn report(&self, stage: &str, done: u64, total: u64);
}

/// A shared progress reporter, as mechanism parameters hold it (cheap to clone; its
/// `Debug` form names no internals).
#[derive(Clone)]
pub struct ProgressSink(pub Arc<dyn Progress>);

impl std::fmt::Debug for ProgressSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProgressSink")
    }
}

/// Two sinks are equal when they are the same reporter (so parameter types holding one can
/// still be compared).
impl PartialEq for ProgressSink {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// A reporter that puts a fixed prefix before every stage name (e.g. "level 2 of 5: ")
/// and passes the report on.
struct Prefixed {
    prefix: String,
    inner: Arc<dyn Progress>,
}

impl Progress for Prefixed {
    fn report(&self, stage: &str, done: u64, total: u64) {
        self.inner
            .report(&format!("{}{stage}", self.prefix), done, total);
    }
}

impl ProgressSink {
    /// This sink with `prefix` put before every stage name: a stage run several times
    /// (one solve per level) shows as distinct stages. The prefix must be public too.
    pub fn with_prefix(&self, prefix: impl Into<String>) -> ProgressSink {
        ProgressSink(Arc::new(Prefixed {
            prefix: prefix.into(),
            inner: Arc::clone(&self.0),
        }))
    }
}

/// A caller's request that a long computation stop at its next step. Cheap to clone: every
/// clone shares one flag, so the caller keeps one clone to [`StopRequest::request`] and
/// the computation checks another with [`StopRequest::check`] between its steps.
#[derive(Clone, Debug, Default)]
pub struct StopRequest(Arc<AtomicBool>);

impl StopRequest {
    /// A request not yet made.
    pub fn new() -> Self {
        StopRequest::default()
    }

    /// Ask the computation to stop at its next step. Cannot be withdrawn.
    pub fn request(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// Whether the stop was asked for.
    pub fn is_requested(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }

    /// [`CoreError::Stopped`] once the stop was asked for, `Ok` before.
    pub fn check(&self) -> Result<()> {
        if self.is_requested() {
            Err(CoreError::Stopped)
        } else {
            Ok(())
        }
    }
}

/// Two requests are equal when they share one flag (so parameter types holding one can
/// still be compared).
impl PartialEq for StopRequest {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// [`StopRequest::check`] of `stop`, if there is one (`Ok` otherwise).
pub fn check_stop(stop: Option<&StopRequest>) -> Result<()> {
    stop.map_or(Ok(()), StopRequest::check)
}

/// Report `done` of `total` of `stage` to `sink`, if there is one (a no-op otherwise).
pub fn report_progress(sink: Option<&ProgressSink>, stage: &str, done: usize, total: usize) {
    if let Some(p) = sink {
        p.0.report(stage, done as u64, total as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    struct Record(Mutex<Vec<(String, u64, u64)>>);

    impl Progress for Record {
        fn report(&self, stage: &str, done: u64, total: u64) {
            self.0
                .lock()
                .unwrap()
                .push((stage.to_string(), done, total));
        }
    }

    #[test]
    fn reports_reach_the_sink_and_none_is_a_no_op() {
        let r = Arc::new(Record(Mutex::new(Vec::new())));
        let sink = ProgressSink(r.clone());
        report_progress(Some(&sink), "rounds", 2, 5);
        report_progress(None, "rounds", 3, 5);
        assert_eq!(*r.0.lock().unwrap(), vec![("rounds".to_string(), 2, 5)]);
    }

    #[test]
    fn a_prefixed_sink_names_its_stages_and_sinks_compare_by_reporter() {
        let r = Arc::new(Record(Mutex::new(Vec::new())));
        let sink = ProgressSink(r.clone());
        let level = sink.with_prefix("level 2 of 5: ");
        report_progress(Some(&level), "solver", 1, 4);
        assert_eq!(
            *r.0.lock().unwrap(),
            vec![("level 2 of 5: solver".to_string(), 1, 4)]
        );
        assert_eq!(sink, sink.clone());
        assert_ne!(sink, level);
        assert_ne!(sink, ProgressSink(Arc::new(Record(Mutex::new(Vec::new())))));
    }

    #[test]
    fn a_stop_request_is_seen_by_every_clone_and_only_once_made() {
        let caller = StopRequest::new();
        let computation = caller.clone();
        assert!(computation.check().is_ok());
        assert!(check_stop(Some(&computation)).is_ok());
        assert!(check_stop(None).is_ok());
        caller.request();
        assert!(computation.is_requested());
        assert!(matches!(computation.check(), Err(CoreError::Stopped)));
        assert!(matches!(
            check_stop(Some(&computation)),
            Err(CoreError::Stopped)
        ));
        // another request is another flag
        assert!(!StopRequest::new().is_requested());
        assert_eq!(caller, computation);
        assert_ne!(caller, StopRequest::new());
    }
}
