//! Issue #23 §4 through the real `dpqr` binary: a closed stdout never panics and never turns
//! a finished release into a failure (`dpqr release … | head -1`), a stdout that cannot be
//! written is status 4 only for the commands whose result is what they print, and SIGINT /
//! SIGTERM during a release exit 130 / 143 with one stderr account of what was charged (in
//! which ledger) and written. A release that fails after its spend was recorded exits 5.

mod common;

use common::{DPQR, fresh_dir, s};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A small table (200 records over two attributes) and its domain in `d`.
fn small_data(d: &Path) {
    std::fs::write(d.join("d.json"), r#"{"a": 3, "b": 2}"#).unwrap();
    let mut csv = String::from("a,b\n");
    for i in 0..200 {
        csv.push_str(&format!("{},{}\n", i % 3, i % 2));
    }
    std::fs::write(d.join("d.csv"), csv).unwrap();
}

/// `dpqr ledger init LEDGER --epsilon 20 --delta 1e-6` (takes pure ε and zCDP spends).
fn init_ledger(ledger: &Path) {
    let o = Command::new(DPQR)
        .args([
            "ledger",
            "init",
            s(ledger),
            "--epsilon",
            "20",
            "--delta",
            "1e-6",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
}

/// The spends recorded in `ledger`, read as the file is on disk (no lock): the lengths of
/// the datasets' `spends` lists.
fn spends(ledger: &Path) -> usize {
    let text = std::fs::read_to_string(ledger).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["datasets"].as_object().map_or(0, |m| {
        m.values()
            .map(|d| d["spends"].as_array().map_or(0, Vec::len))
            .sum()
    })
}

/// A fast Laplace release of the small table, charged to `ledger`, writing `out` and
/// `out.json` (the report).
fn fast_release(d: &Path, ledger: &Path, out: &str) -> Command {
    let mut c = Command::new(DPQR);
    c.args([
        "release",
        "--workload",
        "all-2way",
        "--mechanism",
        "laplace",
    ])
    .args(["--epsilon", "0.1", "--quiet", "--seed", "1"])
    .args([
        "--data",
        s(&d.join("d.csv")),
        "--domain",
        s(&d.join("d.json")),
    ])
    .args(["--out", s(&d.join(out))])
    .args(["--report", s(&d.join(format!("{out}.json")))])
    .args(["--ledger", s(ledger)]);
    c
}

/// A release of the bundled adult table that runs for a while after its spend is recorded:
/// adaptive projection on every 2-way marginal, `rounds` rounds per attribute (with this
/// seed, 256: tens of seconds with the test profile; 128: one to two seconds).
fn slow_release(out: &Path, ledger: Option<&Path>, rounds: &str) -> Command {
    let mut c = Command::new(DPQR);
    c.args(["release", "--dataset", "adult", "--workload", "all-2way"])
        .args(["--mechanism", "adaptive-projection", "--rounds", rounds])
        .args([
            "--epsilon",
            "0.5",
            "--delta",
            "1e-9",
            "--quiet",
            "--seed",
            "3",
        ])
        .args(["--out", s(out)]);
    if let Some(l) = ledger {
        c.args(["--ledger", s(l)]);
    }
    c.stdout(Stdio::null()).stderr(Stdio::piped());
    c
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Run `cmd` with its stdout a pipe whose reading end is closed before the program writes
/// anything: its every write to stdout fails with EPIPE.
fn run_with_stdout_closed(cmd: &mut Command) -> Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    child.wait_with_output().unwrap()
}

/// The files in `d` whose names mark them as temporary (`.NAME.PID.SEQ.tmp`).
fn temporaries(d: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".tmp"))
        .collect()
}

/// Send `signal` (`INT`, `TERM`) to `child` with the `kill` command.
fn send(child: &Child, signal: &str) {
    let st = Command::new("kill")
        .args([format!("-{signal}"), child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
}

/// Wait until `child` has a second thread (dpqr's signal thread, started before anything
/// else), plus a moment; where /proc is missing, a fixed wait.
fn wait_for_signal_thread(child: &Child) {
    let status = format!("/proc/{}/status", child.id());
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(20) {
        let Ok(st) = std::fs::read_to_string(&status) else {
            break;
        };
        let threads = st
            .lines()
            .find_map(|l| l.strip_prefix("Threads:"))
            .and_then(|n| n.trim().parse::<u32>().ok())
            .unwrap_or(0);
        if threads >= 2 {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(300));
}

/// Poll `ledger` until it holds `n` spends (the release has been charged and is running).
fn wait_for_spends(ledger: &Path, n: usize, child: &mut Child) {
    let t0 = Instant::now();
    while spends(ledger) < n {
        if child.try_wait().unwrap().is_some() {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                std::io::Read::read_to_string(&mut e, &mut err).ok();
            }
            panic!("the release ended before its spend was seen: {err}");
        }
        assert!(t0.elapsed() < Duration::from_secs(120), "no spend recorded");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_release_whose_stdout_is_closed_is_complete_and_exits_0() {
    let d = fresh_dir("signals", "closed-release");
    small_data(&d);
    let ledger = d.join("ledger.json");
    init_ledger(&ledger);
    for i in 0..3 {
        let out = format!("a{i}.csv");
        let o = run_with_stdout_closed(&mut fast_release(&d, &ledger, &out));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "run {i}: {}", text(&o));
        assert!(!err.contains("panicked"), "run {i}: {err}");
        // the account on stderr, since the summary on stdout was lost
        assert!(err.contains("the release is complete"), "run {i}: {err}");
        assert!(err.contains("CHARGED"), "run {i}: {err}");
        assert!(err.contains(s(&ledger)), "run {i}: {err}");
        assert!(err.contains("outputs: all written"), "run {i}: {err}");
        assert!(d.join(&out).exists() && d.join(format!("{out}.json")).exists());
        assert_eq!(spends(&ledger), i + 1, "run {i}: one spend per release");
    }
    assert!(temporaries(&d).is_empty(), "{:?}", temporaries(&d));
}

#[test]
fn release_piped_into_head_1_exits_0_with_outputs_and_spend() {
    // `dpqr release … | head -1`: read the first line, then close the pipe (racy by
    // nature, so a few times)
    let d = fresh_dir("signals", "head");
    small_data(&d);
    let ledger = d.join("ledger.json");
    init_ledger(&ledger);
    for i in 0..5 {
        let out = format!("h{i}.csv");
        let mut child = fast_release(&d, &ledger, &out)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        assert!(!first.is_empty(), "run {i}: no first line");
        let o = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "run {i}: {}", text(&o));
        assert!(!err.contains("panicked"), "run {i}: {err}");
        assert!(d.join(&out).exists(), "run {i}");
        assert_eq!(spends(&ledger), i + 1, "run {i}");
    }
}

#[test]
fn printing_commands_with_stdout_closed_exit_0_without_panicking() {
    let d = fresh_dir("signals", "print");
    small_data(&d);
    let ledger = d.join("ledger.json");
    init_ledger(&ledger);
    // answers to score, written with stdout intact
    let o = fast_release(&d, &ledger, "a.csv").output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let (csv, dom) = (d.join("d.csv"), d.join("d.json"));
    let (answers, never) = (d.join("a.csv"), d.join("never.csv"));
    let commands: Vec<Vec<&str>> = vec![
        vec!["mechanisms"],
        vec!["mechanisms", "--json"],
        vec!["datasets"],
        vec![
            "eval",
            "--data",
            s(&csv),
            "--domain",
            s(&dom),
            "--answers",
            s(&answers),
        ],
        vec!["ledger", "show", s(&ledger)],
        vec!["schema", "draft", "--data", s(&csv)],
        vec!["audit", "--mechanism", "laplace", "--runs", "200"],
        vec![
            "release",
            "--dry-run",
            "--data",
            s(&csv),
            "--domain",
            s(&dom),
            "--workload",
            "all-2way",
            "--mechanism",
            "laplace",
            "--epsilon",
            "1",
            "--out",
            s(&never),
        ],
    ];
    for args in &commands {
        let o = run_with_stdout_closed(Command::new(DPQR).args(args));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", text(&o));
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    assert!(!never.exists());
}

#[test]
fn an_unwritable_stdout_is_status_4_for_printing_commands_and_0_after_a_release() {
    let full = Path::new("/dev/full");
    if !full.exists() {
        eprintln!("no /dev/full here: skipped");
        return;
    }
    let d = fresh_dir("signals", "full");
    small_data(&d);
    let ledger = d.join("ledger.json");
    init_ledger(&ledger);
    let devfull = || Stdio::from(std::fs::OpenOptions::new().write(true).open(full).unwrap());
    for args in [vec!["mechanisms"], vec!["datasets"]] {
        let o = Command::new(DPQR)
            .args(&args)
            .stdout(devfull())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(4), "{args:?}: {}", text(&o));
        assert!(err.contains("cannot write to stdout"), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    // a release that was charged and wrote its outputs does not invite a retry
    let o = fast_release(&d, &ledger, "a.csv")
        .stdout(devfull())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(err.contains("cannot write to stdout"), "{err}");
    assert!(
        err.contains("CHARGED") && err.contains("outputs: all written"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert!(d.join("a.csv").exists());
    assert_eq!(spends(&ledger), 1);
}

#[test]
fn sigint_after_the_charge_says_charged_and_nothing_written() {
    let d = fresh_dir("signals", "int-charged");
    let ledger = d.join("ledger.json");
    init_ledger(&ledger);
    let out = d.join("answers.csv");
    let mut child = slow_release(&out, Some(&ledger), "256").spawn().unwrap();
    wait_for_spends(&ledger, 1, &mut child);
    send(&child, "INT");
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{}", text(&o));
    assert!(err.contains("interrupted by SIGINT"), "{err}");
    assert!(err.contains("budget:  CHARGED"), "{err}");
    assert!(err.contains(&format!("ledger {}", s(&ledger))), "{err}");
    assert!(err.contains("outputs: none written"), "{err}");
    assert!(err.contains(s(&out)), "{err}");
    assert!(!out.exists());
    assert!(temporaries(&d).is_empty(), "{:?}", temporaries(&d));
    assert_eq!(spends(&ledger), 1, "the spend stays recorded");
}

#[test]
fn sigint_before_the_charge_says_not_charged() {
    let d = fresh_dir("signals", "int-before");
    let ledger = d.join("ledger.json");
    init_ledger(&ledger);
    let out = d.join("answers.csv");
    // hold the ledger's lock: the release waits for it, before charging anything
    let lock = std::fs::OpenOptions::new()
        .write(true)
        .open(d.join("ledger.json.lock"))
        .unwrap();
    lock.lock().unwrap();
    let mut child = slow_release(&out, Some(&ledger), "256").spawn().unwrap();
    wait_for_signal_thread(&child);
    assert!(
        child.try_wait().unwrap().is_none(),
        "the release did not wait"
    );
    send(&child, "INT");
    let o = child.wait_with_output().unwrap();
    drop(lock);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{}", text(&o));
    assert!(err.contains("interrupted by SIGINT"), "{err}");
    assert!(
        err.contains(&format!(
            "budget:  NOT charged: nothing was recorded in ledger {}",
            s(&ledger)
        )),
        "{err}"
    );
    assert!(err.contains("outputs: none written"), "{err}");
    assert!(!out.exists());
    assert_eq!(spends(&ledger), 0);
}

#[test]
fn sigterm_without_a_ledger_says_no_ledger_was_used() {
    let d = fresh_dir("signals", "term");
    let out = d.join("answers.csv");
    let mut child = slow_release(&out, None, "256").spawn().unwrap();
    wait_for_signal_thread(&child);
    assert!(
        child.try_wait().unwrap().is_none(),
        "the release ended early"
    );
    send(&child, "TERM");
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(143), "{}", text(&o));
    assert!(err.contains("interrupted by SIGTERM"), "{err}");
    assert!(err.contains("NOT charged: no --ledger was given"), "{err}");
    assert!(!out.exists());
}

#[test]
fn a_release_failing_after_its_charge_exits_5_and_says_so() {
    // the output's directory disappears while the charged release runs: writing fails
    // after the spend was recorded
    let d = fresh_dir("signals", "fail-after");
    let ledger = d.join("ledger.json");
    init_ledger(&ledger);
    let sub = d.join("outputs");
    std::fs::create_dir(&sub).unwrap();
    let out = sub.join("answers.csv");
    let mut child = slow_release(&out, Some(&ledger), "128").spawn().unwrap();
    wait_for_spends(&ledger, 1, &mut child);
    std::fs::remove_dir_all(&sub).unwrap();
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(5), "{}", text(&o));
    assert!(
        err.contains("the release failed after its spend was recorded"),
        "{err}"
    );
    assert!(err.contains("budget:  CHARGED"), "{err}");
    assert!(err.contains("outputs: none written"), "{err}");
    assert_eq!(spends(&ledger), 1);
}

#[test]
fn help_documents_the_exit_statuses() {
    let o = Command::new(DPQR).arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&o.stdout);
    for code in ["  0 ", "  1 ", "  2 ", "  3 ", "  4 ", "  5 ", "  130 "] {
        assert!(help.contains(code), "{code:?} missing from --help:\n{help}");
    }
    assert!(help.contains("Exit status"), "{help}");
}
