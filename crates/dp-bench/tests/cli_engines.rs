//! `dpqr release --engine native|datafusion|ballista [--ballista-url df://HOST:PORT]`
//! through the real binary: the flags' checks in every build; with the features, the
//! engines release the same answers as the native streaming count (same seed, same
//! counts, same bytes), and engine errors are fixed messages.

mod common;

use common::{fresh_dir, run, s, stderr, text};
use std::path::{Path, PathBuf};

fn data_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../data")
        .join(name)
}

/// `release` of nltcs's 2-way marginals with gaussian noise and a fixed seed, to `out`,
/// from `csv`, with `extra` flags.
fn release(csv: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    let domain = data_dir("nltcs").join("nltcs-domain.json");
    let mut args = vec![
        "release",
        "--data",
        s(csv),
        "--domain",
        s(&domain),
        "--quiet",
        "--workload",
        "all-2way",
        "--mechanism",
        "gaussian",
        "--rho",
        "1",
        "--seed",
        "4",
        "--out",
        s(out),
    ];
    args.extend_from_slice(extra);
    run(&args)
}

/// `release` of nltcs with `mechanism` on the workload file `workload`, ρ = 0.5 and a fixed
/// seed, to `out`, with `extra` flags (the engine under test).
#[cfg(feature = "datafusion")]
fn release_nltcs_workload(
    workload: &Path,
    mechanism: &str,
    out: &Path,
    extra: &[&str],
) -> std::process::Output {
    let csv = data_dir("nltcs").join("nltcs.csv");
    let domain = data_dir("nltcs").join("nltcs-domain.json");
    let mut args = vec![
        "release",
        "--data",
        s(&csv),
        "--domain",
        s(&domain),
        "--quiet",
        "--workload",
        s(workload),
        "--mechanism",
        mechanism,
        "--rho",
        "0.5",
        "--seed",
        "4",
        "--out",
        s(out),
    ];
    args.extend_from_slice(extra);
    run(&args)
}

#[test]
fn ballista_url_needs_the_ballista_engine_and_the_reverse() {
    let d = fresh_dir("engines", "flags");
    let csv = data_dir("nltcs").join("nltcs.csv");
    let o = release(
        &csv,
        &d.join("a.csv"),
        &["--ballista-url", "df://127.0.0.1:50050"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(stderr(&o).contains("--ballista-url is the scheduler of --engine ballista"));
    let o = release(&csv, &d.join("a.csv"), &["--engine", "ballista"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(stderr(&o).contains("--engine ballista needs the scheduler's address"));
    let o = release(
        &csv,
        &d.join("a.csv"),
        &["--engine", "datafusion", "--stream"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(!d.join("a.csv").exists());
}

/// Only decision-list points still need the records (the polynomial release reads them;
/// every other central release reads exact counts, of the workload or of its counting
/// plan): an engine is refused for them before anything is read or written.
#[test]
fn an_engine_is_refused_for_mechanisms_that_need_the_records() {
    let d = fresh_dir("engines", "records");
    std::fs::write(
        d.join("d.json"),
        r#"{"test1": 7, "output1": 2, "test2": 7, "output2": 2, "default": 2}"#,
    )
    .unwrap();
    let mut csv = String::from("test1,output1,test2,output2,default\n");
    for i in 0..40 {
        csv.push_str(&format!(
            "{},{},{},{},{}\n",
            i % 7,
            (i / 7) % 2,
            (i / 3) % 7,
            (i / 5) % 2,
            (i / 2) % 2
        ));
    }
    std::fs::write(d.join("d.csv"), csv).unwrap();
    std::fs::write(
        d.join("p.json"),
        r#"{"class": "decision-lists", "points": ["000", "101"]}"#,
    )
    .unwrap();
    let o = run(&[
        "release",
        "--data",
        s(&d.join("d.csv")),
        "--domain",
        s(&d.join("d.json")),
        "--quiet",
        "--workload",
        s(&d.join("p.json")),
        "--mechanism",
        "polynomial",
        "--epsilon",
        "1",
        "--out",
        s(&d.join("p.csv")),
        "--engine",
        "datafusion",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = stderr(&o);
    if cfg!(feature = "datafusion") {
        assert!(err.contains("needs the records"), "{err}");
    } else {
        assert!(err.contains("cargo feature `datafusion`"), "{err}");
    }
    assert!(!d.join("p.csv").exists());
}

#[cfg(not(feature = "datafusion"))]
#[test]
fn without_the_features_the_engines_name_the_feature_to_enable() {
    let d = fresh_dir("engines", "nofeature");
    let csv = data_dir("nltcs").join("nltcs.csv");
    for (engine, feature, extra) in [
        ("datafusion", "datafusion", vec![]),
        (
            "ballista",
            "ballista",
            vec!["--ballista-url", "df://127.0.0.1:50050"],
        ),
    ] {
        let mut args = vec!["--engine", engine];
        args.extend(extra);
        let o = release(&csv, &d.join("a.csv"), &args);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        let err = stderr(&o);
        assert!(
            err.contains(&format!("built without the {feature} engine"))
                && err.contains(&format!("--features {feature}")),
            "{err}"
        );
        assert!(!d.join("a.csv").exists());
    }
}

#[cfg(feature = "datafusion")]
#[test]
fn datafusion_releases_the_same_answers_as_the_native_stream() {
    let d = fresh_dir("engines", "datafusion");
    let csv = data_dir("nltcs").join("nltcs.csv");
    let o = release(&csv, &d.join("native.csv"), &["--stream"]);
    assert!(o.status.success(), "{}", text(&o));
    let o = release(&csv, &d.join("df.csv"), &["--engine", "datafusion"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        std::fs::read(d.join("native.csv")).unwrap(),
        std::fs::read(d.join("df.csv")).unwrap()
    );
    // a bad field: a fixed message, no value, nothing written
    let bad = d.join("bad.csv");
    let mut text_in = std::fs::read_to_string(&csv).unwrap();
    text_in.push_str("1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,private-text-31\n");
    std::fs::write(&bad, text_in).unwrap();
    let o = release(&bad, &d.join("bad-out.csv"), &["--engine", "datafusion"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = stderr(&o);
    assert!(
        err.contains("DataFusion: reading the file and counting failed"),
        "{err}"
    );
    assert!(!err.contains("private-text"), "{err}");
    assert!(!d.join("bad-out.csv").exists());
}

/// The mechanisms with a counting plan take an engine too (issue #25 item 1): chaining's
/// plan — the full table over the attributes the workload touches — counted by DataFusion
/// gives the native stream's answers for the same seed.
#[cfg(feature = "datafusion")]
#[test]
fn datafusion_counts_a_counting_plan_with_the_same_answers() {
    let d = fresh_dir("engines", "plan");
    let workload = d.join("w.json");
    std::fs::write(
        &workload,
        r#"{"class": "marginals", "marginals": [["bathing", "cooking"], ["eating"]]}"#,
    )
    .unwrap();
    let go = |out: &Path, extra: &[&str]| release_nltcs_workload(&workload, "chaining", out, extra);
    let (native, df) = (d.join("native.csv"), d.join("df.csv"));
    let o = go(&native, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let o = go(&df, &["--engine", "datafusion"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(std::fs::read(&native).unwrap(), std::fs::read(&df).unwrap());
}

#[cfg(feature = "ballista")]
#[test]
fn ballista_on_a_loopback_cluster_releases_the_same_answers() {
    let cluster = dp_queries::io::engine::ballista::LoopbackCluster::start(2, 1).unwrap();
    let d = fresh_dir("engines", "ballista");
    let csv = data_dir("nltcs").join("nltcs.csv");
    let o = release(&csv, &d.join("native.csv"), &["--stream"]);
    assert!(o.status.success(), "{}", text(&o));
    let o = release(
        &csv,
        &d.join("ballista.csv"),
        &["--engine", "ballista", "--ballista-url", cluster.url()],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        std::fs::read(d.join("native.csv")).unwrap(),
        std::fs::read(d.join("ballista.csv")).unwrap()
    );
}

/// adaptive-projection, the README's mechanism for real tables, reads only the workload's
/// counts (issue #25): counted by DataFusion (and, with the `ballista` feature, by a
/// loopback cluster) it releases the same bytes as from the native streaming count, for the
/// same seed. A small workload over three attributes keeps the unoptimised CI build fast.
#[cfg(feature = "datafusion")]
#[test]
fn adaptive_projection_releases_the_same_answers_on_every_engine() {
    let d = fresh_dir("engines", "adaptive");
    let workload = d.join("w.json");
    std::fs::write(
        &workload,
        r#"{"class": "marginals", "marginals": [["bathing", "cooking"], ["cooking", "eating"]]}"#,
    )
    .unwrap();
    let go = |out: &Path, extra: &[&str]| {
        release_nltcs_workload(&workload, "adaptive-projection", out, extra)
    };
    let native = d.join("native.csv");
    let o = go(&native, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let df = d.join("df.csv");
    let o = go(&df, &["--engine", "datafusion"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(std::fs::read(&native).unwrap(), std::fs::read(&df).unwrap());
    #[cfg(feature = "ballista")]
    {
        let cluster = dp_queries::io::engine::ballista::LoopbackCluster::start(2, 1).unwrap();
        let b = d.join("ballista.csv");
        let o = go(
            &b,
            &["--engine", "ballista", "--ballista-url", cluster.url()],
        );
        assert!(o.status.success(), "{}", text(&o));
        assert_eq!(std::fs::read(&native).unwrap(), std::fs::read(&b).unwrap());
    }
}
