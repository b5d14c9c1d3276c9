//! The on-disk budget ledger through the real `dpqr` binary: kill -9 at random moments in a
//! loop (the ledger must always parse and never lose a recorded spend), concurrent
//! releases (serialised by the lock: exactly as many succeed as the budget allows), and the
//! refusal happening before the data is read.

use dp_bench::io::ledger_file::LedgerFile;
use rand::{RngExt, SeedableRng};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const DPQR: &str = env!("CARGO_BIN_EXE_dpqr");

fn workdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dpqr-ledger-it-{name}-{}", std::process::id()));
    std::fs::remove_dir_all(&d).ok();
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("d.json"), r#"{"a": 3, "b": 2}"#).unwrap();
    let mut csv = String::from("a,b\n");
    for i in 0..200 {
        csv.push_str(&format!("{},{}\n", i % 3, i % 2));
    }
    std::fs::write(d.join("d.csv"), csv).unwrap();
    d
}

fn release_cmd(d: &Path, ledger: &Path, out: &str) -> Command {
    let mut c = Command::new(DPQR);
    c.args([
        "release",
        "--workload",
        "all-2way",
        "--mechanism",
        "laplace",
    ])
    .args(["--epsilon", "0.01", "--neighbouring", "replace-one"])
    .args(["--quiet", "--seed", "1"])
    .arg("--data")
    .arg(d.join("d.csv"))
    .arg("--domain")
    .arg(d.join("d.json"))
    .arg("--out")
    .arg(d.join(out))
    .arg("--ledger")
    .arg(ledger)
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    c
}

fn init(ledger: &Path, epsilon: &str) {
    let o = Command::new(DPQR)
        .args(["ledger", "init"])
        .arg(ledger)
        .args(["--epsilon", epsilon])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// Parse the ledger file as it is on disk, without taking the lock (what a crash leaves).
fn spends(ledger: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(ledger).unwrap();
    let l = LedgerFile::parse(&text, "ledger").unwrap_or_else(|e| panic!("corrupt: {e}\n{text}"));
    l.datasets
        .values()
        .flat_map(|x| {
            x.ledger
                .spends()
                .iter()
                .map(|s| format!("{} {}", s.label, s.loss))
        })
        .collect()
}

#[test]
fn kill_9_in_a_loop_never_corrupts_or_loses_a_spend() {
    let d = workdir("kill");
    let ledger = d.join("ledger.json");
    init(&ledger, "30");
    // how long one release takes here (only to spread the kill times over it)
    let t0 = Instant::now();
    let o = release_cmd(&d, &ledger, "first.csv").output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let typical = t0.elapsed().max(Duration::from_millis(2));
    assert_eq!(spends(&ledger).len(), 1);
    // a reader hammering the file meanwhile must always see a complete ledger
    let stop = Arc::new(AtomicBool::new(false));
    let reader = {
        let stop = stop.clone();
        let ledger = ledger.clone();
        std::thread::spawn(move || {
            let mut reads = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let n = spends(&ledger).len();
                assert!(n >= 1);
                reads += 1;
            }
            reads
        })
    };
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(99);
    let (mut killed, mut completed) = (0, 0);
    for i in 0..60 {
        let before = spends(&ledger);
        let mut child = release_cmd(&d, &ledger, &format!("a{i}.csv"))
            .spawn()
            .unwrap();
        let frac: f64 = rng.random_range(0.0..1.3);
        std::thread::sleep(typical.mul_f64(frac));
        let finished_ok = matches!(child.try_wait(), Ok(Some(s)) if s.success());
        let _ = child.kill(); // SIGKILL
        let status = child.wait().unwrap();
        let after = spends(&ledger);
        assert!(
            after.len() == before.len() || after.len() == before.len() + 1,
            "iteration {i}: {} spends before, {} after",
            before.len(),
            after.len()
        );
        assert_eq!(
            &after[..before.len()],
            &before[..],
            "iteration {i}: a spend changed"
        );
        if finished_ok || status.success() {
            completed += 1;
            assert_eq!(after.len(), before.len() + 1, "iteration {i}: lost a spend");
        } else {
            killed += 1;
            // a killed release may have recorded its spend (conservative) or not, but if
            // its answers file exists the spend must be recorded (write-ahead)
            if d.join(format!("a{i}.csv")).exists() {
                assert_eq!(
                    after.len(),
                    before.len() + 1,
                    "iteration {i}: unrecorded output"
                );
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    let reads = reader.join().unwrap();
    eprintln!("{killed} killed, {completed} completed, {reads} concurrent reads");
    // the ledger still works after all the kills
    let o = release_cmd(&d, &ledger, "last.csv").output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn concurrent_releases_are_serialised_by_the_lock() {
    let d = workdir("conc");
    let ledger = d.join("ledger.json");
    // room for exactly 5 releases of ε = 0.01 (0.05 is not exactly representable, so
    // give a little slack below the 6th)
    init(&ledger, "0.0505");
    let children: Vec<_> = (0..8)
        .map(|i| {
            release_cmd(&d, &ledger, &format!("c{i}.csv"))
                .spawn()
                .unwrap()
        })
        .collect();
    let outputs: Vec<_> = children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect();
    let ok = outputs.iter().filter(|o| o.status.success()).count();
    assert_eq!(ok, 5, "exactly the budget's worth of releases succeed");
    for o in outputs.iter().filter(|o| !o.status.success()) {
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("refusing the release"), "{err}");
        assert_eq!(o.status.code(), Some(3), "{err}");
    }
    assert_eq!(spends(&ledger).len(), 5);
    let show = Command::new(DPQR)
        .args(["ledger", "show"])
        .arg(&ledger)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&show.stdout);
    assert_eq!(text.matches("spent ε = 0.01").count(), 5, "{text}");
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn an_overspending_release_is_refused_before_the_data_is_read() {
    let d = workdir("refuse");
    let ledger = d.join("ledger.json");
    init(&ledger, "0.005");
    // the data file is malformed: if it were read first, the error would be about it
    std::fs::write(d.join("d.csv"), "a,b\n9,9\n").unwrap();
    let o = release_cmd(&d, &ledger, "x.csv").output().unwrap();
    // exit status 3: over budget (typed up to the CLI, told apart from other errors)
    assert_eq!(o.status.code(), Some(3));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("refusing the release"), "{err}");
    assert!(!d.join("x.csv").exists());
    assert_eq!(spends(&ledger).len(), 0);
    // init refuses to overwrite and refuses bad budgets
    for args in [
        vec!["--epsilon", "1"],
        vec!["--epsilon", "NaN"],
        vec!["--epsilon", "1", "--delta", "1"],
        vec!["--rho", "-1"],
    ] {
        let o = Command::new(DPQR)
            .args(["ledger", "init"])
            .arg(if args[1] == "1" && args.len() == 2 {
                ledger.clone()
            } else {
                d.join("new.json")
            })
            .args(&args)
            .output()
            .unwrap();
        assert!(!o.status.success(), "{args:?}");
        assert!(!d.join("new.json").exists());
    }
    std::fs::remove_dir_all(&d).ok();
}
