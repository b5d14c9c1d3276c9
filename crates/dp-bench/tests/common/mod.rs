//! Helpers shared by the command-line tests (`cli_*.rs`): run the real `dpqr` binary, read
//! its output, make a fresh temporary directory.
#![allow(dead_code)] // each test file uses a subset

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `dpqr` binary cargo built for these tests.
pub const DPQR: &str = env!("CARGO_BIN_EXE_dpqr");

/// Run `dpqr` with `args`.
pub fn run(args: &[&str]) -> Output {
    Command::new(DPQR).args(args).output().unwrap()
}

/// Run `dpqr` with `args` and the environment variable `key=value`.
pub fn run_with_env(args: &[&str], key: &str, value: &str) -> Output {
    Command::new(DPQR)
        .args(args)
        .env(key, value)
        .output()
        .unwrap()
}

/// Stdout and stderr of a run, for assertion messages.
pub fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Stdout of a run.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Stderr of a run.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A fresh, empty directory under the system temporary directory, unique to this process.
pub fn fresh_dir(prefix: &str, name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dpqr-{prefix}-{name}-{}", std::process::id()));
    std::fs::remove_dir_all(&d).ok();
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A path as `&str` (the test paths are UTF-8).
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Largest-remainder counts of `weights` summing to `total`, ties to the earlier record: the
/// tests' own statement of Hamilton's method, against which `dpqr synthetic expand` and
/// `dpqr release --rows` are checked.
pub fn largest_remainder(weights: &[f64], total: u64) -> Vec<u64> {
    let sum: f64 = weights.iter().sum();
    let quotas: Vec<f64> = weights.iter().map(|w| w / sum * total as f64).collect();
    let mut counts: Vec<u64> = quotas.iter().map(|q| q.floor() as u64).collect();
    let mut order: Vec<usize> = (0..weights.len()).filter(|&i| weights[i] > 0.0).collect();
    order.sort_by(|&a, &b| {
        (quotas[b] - quotas[b].floor()).total_cmp(&(quotas[a] - quotas[a].floor()))
    });
    let missing = total - counts.iter().sum::<u64>();
    for &i in order.iter().take(missing as usize) {
        counts[i] += 1;
    }
    counts
}
