//! The extension module `dpqr._native` (PyO3): the functions the Python package
//! (`python/dpqr/__init__.py`) calls once it has put the data, schema and workload into
//! files, and the exception `dpqr.DpqrError`. Its typed signatures are in
//! `python/dpqr/_native.pyi`.

use crate::arguments::{Arguments, SettingArg, SyntheticChoice};
use crate::error::BindingError;
use crate::run;
use dp_core::StopRequest;
use pyo3::exceptions::PyKeyboardInterrupt;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyString};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

pyo3::create_exception!(
    dpqr,
    DpqrError,
    pyo3::exceptions::PyValueError,
    "An input dpqr refuses, or a release that failed: the message is the one `dpqr` prints \
     after `error: ` for the same input; `exit_status` is the status it would exit with (2, \
     or 3 for a spend a budget refused)."
);

/// `err` as a `DpqrError` carrying its message and exit status.
fn raise(py: Python<'_>, err: BindingError) -> PyErr {
    let e = DpqrError::new_err(err.to_string());
    // an attribute that cannot be set leaves the message, which is what matters
    e.value(py).setattr("exit_status", err.exit_status()).ok();
    e
}

/// A setting's value as the argument checks take it.
fn setting_arg(value: &Bound<'_, PyAny>) -> PyResult<SettingArg> {
    // bool is a subclass of int in Python: refused before the int test
    if value.is_instance_of::<PyBool>() {
    } else if value.is_instance_of::<PyInt>() {
        if let Ok(n) = value.extract::<i64>() {
            return Ok(SettingArg::Whole(n));
        }
    } else if value.is_instance_of::<PyFloat>() {
        return Ok(SettingArg::Real(value.extract::<f64>()?));
    } else if value.is_instance_of::<PyString>() {
        return Ok(SettingArg::Text(value.extract::<String>()?));
    }
    Ok(SettingArg::Other {
        type_name: value.get_type().name()?.to_string(),
        repr: value.repr()?.to_string(),
    })
}

/// A whole-number keyword argument (`seed`, `workload_seed`) of at most 64 bits.
fn unsigned(py: Python<'_>, key: &str, value: &Bound<'_, PyAny>) -> PyResult<u64> {
    if !value.is_instance_of::<PyBool>()
        && let Ok(n) = value.extract::<u64>()
    {
        return Ok(n);
    }
    Err(raise(
        py,
        BindingError::Argument(format!(
            "{key}={}: give a whole number from 0 to {}",
            value.repr()?,
            u64::MAX
        )),
    ))
}

/// A keyword argument `rows` as a whole number (its range is the pipeline's to check).
fn rows(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<i64> {
    match setting_arg(value)? {
        SettingArg::Whole(n) => Ok(n),
        other => Err(raise(
            py,
            BindingError::Argument(format!(
                "rows={}: give a whole number of at least 1",
                match other {
                    SettingArg::Other { repr, .. } => repr,
                    _ => value.repr()?.to_string(),
                }
            )),
        )),
    }
}

/// The release's progress events passed to the Python callable `f` as `(kind, message,
/// done, total)`: `kind` is `"stage"`, `"counting"` or `"round"` (a line in `message`, `done`
/// and `total` `None`) or `"step"` (`done` of `total` steps of the stage `message`). The
/// release runs without the interpreter lock, on several threads: each call takes the lock
/// first. An exception the callable raises is reported as unraisable (printed on stderr)
/// and the release goes on.
fn progress_callback(f: Py<PyAny>) -> run::ProgressCallback {
    Arc::new(move |event: run::ProgressEvent| {
        let (kind, message, done, total) = match event {
            run::ProgressEvent::Stage(m) => ("stage", m, None, None),
            run::ProgressEvent::Counting(m) => ("counting", m, None, None),
            run::ProgressEvent::Round(m) => ("round", m, None, None),
            run::ProgressEvent::Step { stage, done, total } => {
                ("step", stage, Some(done), Some(total))
            }
        };
        Python::attach(|py| {
            if let Err(e) = f.call1(py, (kind, message, done, total)) {
                e.write_unraisable(py, None);
            }
        });
    })
}

/// How often a running release looks for Ctrl-C (and every other signal Python handles).
const SIGNAL_CHECK: Duration = Duration::from_millis(50);

/// Whether `worker` ends within `wait` (the caller is woken by its end: the worker
/// unparks it).
fn ends_within<T>(worker: &std::thread::ScopedJoinHandle<'_, T>, wait: Duration) -> bool {
    let until = Instant::now() + wait;
    while !worker.is_finished() {
        let now = Instant::now();
        if now >= until {
            return false;
        }
        std::thread::park_timeout(until - now);
    }
    true
}

/// `args` released on a thread of its own while this thread — Python's, the main thread
/// when the call came from it — waits without the interpreter lock and takes it every
/// [`SIGNAL_CHECK`] to run Python's signal handlers (`Python::check_signals`: the only
/// place a Ctrl-C can surface while native code runs). When a handler raises (Ctrl-C's
/// `KeyboardInterrupt`), the release is asked to stop ([`StopRequest`]: at its next
/// stopping point, `dp_bench::pipeline`, "Stopping"), waited for, and the handler's
/// exception returned as `Err` beside the release's result and account. A spend already
/// recorded in a ledger stays recorded.
fn release_interruptibly(
    py: Python<'_>,
    args: &Arguments,
    progress: Option<run::ProgressCallback>,
) -> (crate::Result<run::Ran>, run::Account, Option<PyErr>) {
    let stop = StopRequest::new();
    std::thread::scope(|scope| {
        let waiting = std::thread::current();
        let worker_stop = stop.clone();
        let worker = scope.spawn(move || {
            let ran = run::release_stoppable(args, progress, Some(worker_stop));
            waiting.unpark();
            ran
        });
        let mut interrupted: Option<PyErr> = None;
        while !py.detach(|| ends_within(&worker, SIGNAL_CHECK)) {
            // a second Ctrl-C while the release stops asks for the same: consumed here
            if let Err(e) = py.check_signals()
                && interrupted.is_none()
            {
                stop.request();
                interrupted = Some(e);
            }
        }
        let (ran, account) = match worker.join() {
            Ok(r) => r,
            // a panic of the release surfaces as it would have without the thread
            Err(panic) => std::panic::resume_unwind(panic),
        };
        (ran, account, interrupted)
    })
}

/// The exception an interrupted release raises: a `KeyboardInterrupt` whose message is
/// the release's account ([`run::Account::interrupted_message`]: whether the budget was
/// charged — a recorded spend is never refunded), caused by the handler's; any other
/// exception a signal handler raised, as it is, the account added as a note (Python 3.11
/// and later).
fn interrupted_error(
    py: Python<'_>,
    raised: PyErr,
    account: &run::Account,
    finished: bool,
) -> PyErr {
    let message = account.interrupted_message(finished);
    if raised.is_instance_of::<PyKeyboardInterrupt>(py) {
        let e = PyKeyboardInterrupt::new_err(message);
        e.set_cause(py, Some(raised));
        return e;
    }
    // add_note is missing before 3.11: the exception still says what interrupted
    raised.value(py).call_method1("add_note", (message,)).ok();
    raised
}

/// Run one release (the pipeline of `dpqr release`) with the interpreter lock released,
/// of `data` through `schema` (`--data`, `--domain`) or of the bundled `dataset`
/// (`--dataset`), kept to `attributes` (`--attributes`) if given, writing the answers to
/// `answers`, the report to `report` and, when made, the synthetic records to
/// `synthetic_out`. Returns a dict: `certificate` (a dict of the fields of
/// `dpqr.Certificate`), `labelled`, `synthetic` (whether written) and `warnings` (the lines
/// `dpqr release` prints on stderr). Raises `DpqrError` with the command line's message.
/// Ctrl-C stops the release at its next stopping point and raises `KeyboardInterrupt`
/// saying whether the budget was charged ([`release_interruptibly`]).
/// `progress`, a callable, receives the release's progress ([`progress_callback`]). With
/// `ledger` (and `ledger_dataset`: required when `data_is_a_frame`, the data a temporary
/// copy of a DataFrame) the release is charged to the ledger's dataset; `ledger_record` is
/// the line `dpqr release` prints when the spend is recorded.
///
/// With `dry_run=True` (`--dry-run`, with `assume_n` as `--assume-n`): every check made
/// before data is read, then the plan; nothing read but the data file's header, nothing
/// written. Returns a dict: `plan` (JSON text: the fields of `dpqr.Plan`, `lines` the lines
/// `dpqr release --dry-run` prints) and `warnings`.
#[pyfunction]
#[pyo3(signature = (
    *, workload, mechanism, answers, report, synthetic_out, data=None, schema=None,
    dataset=None, attributes=None, epsilon=None, delta=None, rho=None, neighbouring=None,
    post=None, seed=None, settings=None, synthetic=None, rows=None, workload_seed=None, allow_large_delta=false,
    delimiter=None, ignore_extra_columns=false, labelled=true, max_memory_mib=4096,
    dry_run=false, assume_n=None, progress=None, ledger=None, ledger_dataset=None,
    data_is_a_frame=false
))]
#[allow(clippy::too_many_arguments)]
fn release<'py>(
    py: Python<'py>,
    workload: String,
    mechanism: String,
    answers: PathBuf,
    report: PathBuf,
    synthetic_out: PathBuf,
    data: Option<PathBuf>,
    schema: Option<PathBuf>,
    dataset: Option<String>,
    attributes: Option<Vec<String>>,
    epsilon: Option<f64>,
    delta: Option<f64>,
    rho: Option<f64>,
    neighbouring: Option<String>,
    post: Option<String>,
    seed: Option<Bound<'py, PyAny>>,
    settings: Option<Bound<'py, PyDict>>,
    synthetic: Option<bool>,
    rows: Option<Bound<'py, PyAny>>,
    workload_seed: Option<Bound<'py, PyAny>>,
    allow_large_delta: bool,
    delimiter: Option<String>,
    ignore_extra_columns: bool,
    labelled: bool,
    max_memory_mib: u64,
    dry_run: bool,
    assume_n: Option<Bound<'py, PyAny>>,
    progress: Option<Bound<'py, PyAny>>,
    ledger: Option<PathBuf>,
    ledger_dataset: Option<String>,
    data_is_a_frame: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let mut pairs = Vec::new();
    if let Some(settings) = &settings {
        for (key, value) in settings.iter() {
            pairs.push((key.extract::<String>()?, setting_arg(&value)?));
        }
    }
    let args = Arguments {
        data: data.unwrap_or_default(),
        schema: schema.unwrap_or_default(),
        dataset,
        attributes,
        delimiter,
        ignore_extra_columns,
        workload,
        workload_seed: match &workload_seed {
            Some(v) => unsigned(py, "workload_seed", v)?,
            None => 0,
        },
        mechanism,
        epsilon,
        delta,
        rho,
        allow_large_delta,
        neighbouring,
        post,
        seed: seed.as_ref().map(|v| unsigned(py, "seed", v)).transpose()?,
        settings: pairs,
        labelled,
        answers,
        report,
        synthetic_out,
        synthetic: match synthetic {
            None => SyntheticChoice::IfMade,
            Some(true) => SyntheticChoice::Always,
            Some(false) => SyntheticChoice::Never,
        },
        rows: rows.as_ref().map(|v| self::rows(py, v)).transpose()?,
        max_memory_mib,
        dry_run,
        ledger,
        ledger_dataset,
        data_is_a_frame,
        assume_n: assume_n
            .as_ref()
            .map(|v| unsigned(py, "assume_n", v))
            .transpose()?,
    };
    if dry_run {
        // public inputs only, and quick: the plan is made with the lock held
        let planned = run::plan(&args).map_err(|e| raise(py, e))?;
        let out = PyDict::new(py);
        out.set_item("plan", planned.plan.to_string())?;
        out.set_item("warnings", planned.warnings)?;
        return Ok(out);
    }
    let progress = progress.map(|f| progress_callback(f.unbind()));
    // the release runs without the interpreter lock (other Python threads go on meanwhile),
    // and stops on Ctrl-C
    let (ran, account, interrupted) = release_interruptibly(py, &args, progress);
    if let Some(raised) = interrupted {
        return Err(interrupted_error(py, raised, &account, ran.is_ok()));
    }
    let ran = ran.map_err(|e| raise(py, e))?;
    let c = &ran.certificate;
    let certificate = PyDict::new(py);
    certificate.set_item("mechanism", &c.mechanism)?;
    certificate.set_item("model", c.model)?;
    certificate.set_item("neighbouring", c.neighbouring)?;
    certificate.set_item("guarantee", c.guarantee)?;
    certificate.set_item("epsilon", c.epsilon)?;
    certificate.set_item("delta", c.delta)?;
    certificate.set_item("rho", c.rho)?;
    certificate.set_item("approx_equivalent", c.approx_equivalent)?;
    certificate.set_item("statement", &c.statement)?;
    let out = PyDict::new(py);
    out.set_item("certificate", certificate)?;
    out.set_item("labelled", ran.labelled)?;
    out.set_item("synthetic", ran.synthetic)?;
    out.set_item("warnings", ran.warnings)?;
    out.set_item("ledger_record", ran.ledger_record)?;
    Ok(out)
}

/// The catalogue as JSON text: a list with one object per mechanism, as `dpqr mechanisms
/// --json` prints it.
#[pyfunction]
fn mechanisms(py: Python<'_>) -> PyResult<String> {
    run::mechanisms_json().map_err(|e| raise(py, e))
}

/// NON-PRIVATE: a schema (JSON text) drafted by reading the CSV text `csv` (a header row,
/// then the records), as `dpqr schema draft` drafts it. `name` names the data in errors.
#[pyfunction]
#[pyo3(signature = (csv, *, name, max_labels=20, bins=10))]
fn draft_schema_nonprivate(
    py: Python<'_>,
    csv: &[u8],
    name: &str,
    max_labels: usize,
    bins: usize,
) -> PyResult<String> {
    run::draft_schema_nonprivate(csv, name, max_labels, bins).map_err(|e| raise(py, e))
}

/// NON-PRIVATE: released answers (`answers`, an answers file) or synthetic records
/// (`synthetic`, with the marginal `workload` they are scored on) scored against the true
/// `data` (read through `schema`) beside the uniform and all-zeros baselines, as `dpqr eval
/// --json` prints it. Runs without the interpreter lock. Returns the JSON text and the
/// notes `dpqr eval` prints on stderr.
#[pyfunction]
#[pyo3(signature = (
    *, data, schema, answers=None, synthetic=None, workload=None, workload_seed=None,
    ignore_extra_columns=false
))]
#[allow(clippy::too_many_arguments)]
fn evaluate_nonprivate<'py>(
    py: Python<'py>,
    data: PathBuf,
    schema: PathBuf,
    answers: Option<PathBuf>,
    synthetic: Option<PathBuf>,
    workload: Option<String>,
    workload_seed: Option<Bound<'py, PyAny>>,
    ignore_extra_columns: bool,
) -> PyResult<(String, Vec<String>)> {
    let args = run::EvalArguments {
        data,
        schema,
        answers,
        synthetic,
        workload,
        workload_seed: match &workload_seed {
            Some(v) => unsigned(py, "workload_seed", v)?,
            None => 0,
        },
        ignore_extra_columns,
    };
    let (json, notes) = py
        .detach(|| run::evaluate_nonprivate(&args))
        .map_err(|e| raise(py, e))?;
    Ok((json.to_string(), notes))
}

/// The Rust half of the Python package `dpqr`: the release pipeline of the `dpqr` command
/// line. Use the package's functions (`dpqr.release`, `dpqr.mechanisms`), not these.
#[pymodule]
#[pyo3(name = "_native")]
fn native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("DpqrError", m.py().get_type::<DpqrError>())?;
    m.add_function(wrap_pyfunction!(release, m)?)?;
    m.add_function(wrap_pyfunction!(mechanisms, m)?)?;
    m.add_function(wrap_pyfunction!(draft_schema_nonprivate, m)?)?;
    m.add_function(wrap_pyfunction!(evaluate_nonprivate, m)?)?;
    Ok(())
}
