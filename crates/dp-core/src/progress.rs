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

use std::sync::Arc;

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
}
