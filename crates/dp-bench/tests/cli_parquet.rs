//! `dpqr release --data FILE.parquet` through the real binary (issue #15): the same answers
//! as from the CSV of the same rows (streamed automatically when the mechanism needs only
//! counts, loaded when it needs the records), refusals located by row group and column, and
//! a streamed release whose peak memory does not grow with the rows.
#![cfg(feature = "parquet")]

mod common;
use common::{fresh_dir, run, s, stderr, text};
use dp_queries::{Dataset, Domain, ParquetCodesWriter};
use std::path::{Path, PathBuf};

/// The bundled adult table's CSV and domain files.
fn adult() -> (PathBuf, PathBuf) {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/adult");
    (data.join("adult.csv"), data.join("adult-domain.json"))
}

/// Writes `data` as Parquet at `path` in row groups of `group` rows.
fn write_parquet(data: &Dataset, path: &Path, group: usize) {
    let f = std::fs::File::create(path).unwrap();
    let mut w = ParquetCodesWriter::new(f, data.domain(), group).unwrap();
    w.write(data).unwrap();
    w.finish().unwrap();
}

fn release(data: &Path, domain: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "release",
        "--data",
        s(data),
        "--domain",
        s(domain),
        "--quiet",
        "--seed",
        "7",
        "--out",
        s(out),
    ];
    args.extend_from_slice(extra);
    run(&args)
}

#[test]
fn a_parquet_file_releases_the_same_answers_as_its_csv() {
    let d = fresh_dir("parquet", "same");
    let (csv, dom) = adult();
    let data = Dataset::load_csv(&csv, &dom).unwrap();
    let pq = d.join("adult.parquet");
    write_parquet(&data, &pq, 10_000);
    // a counts-only mechanism: the Parquet file is streamed (row groups in parallel)
    let gaussian = [
        "--workload",
        "random-3way:8",
        "--mechanism",
        "gaussian",
        "--rho",
        "1",
    ];
    let (a, b, c) = (d.join("a.csv"), d.join("b.csv"), d.join("c.csv"));
    let o = release(&csv, &dom, &a, &gaussian);
    assert!(o.status.success(), "{}", text(&o));
    let o = release(&pq, &dom, &b, &gaussian);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    let mut streamed = gaussian.to_vec();
    streamed.extend(["--stream", "--batch-rows", "999"]);
    let o = release(&pq, &dom, &c, &streamed);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&c).unwrap());
    // with --attributes (which streaming does not take) the Parquet file is loaded in memory
    let mwem = [
        "--workload",
        "all-1way",
        "--attributes",
        "sex,race,income>50K",
        "--mechanism",
        "mwem",
        "--epsilon",
        "1",
    ];
    let (e, f) = (d.join("e.csv"), d.join("f.csv"));
    let o = release(&csv, &dom, &e, &mwem);
    assert!(o.status.success(), "{}", text(&o));
    let o = release(&pq, &dom, &f, &mwem);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(std::fs::read(&e).unwrap(), std::fs::read(&f).unwrap());
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn a_bad_parquet_file_is_refused_naming_the_row_group_and_column() {
    let d = fresh_dir("parquet", "bad");
    // codes of a: 0..5 written, the domain file says a: 3
    let wide = Domain::new(vec![("a".into(), 5), ("b".into(), 2)]).unwrap();
    let rows: Vec<u32> = (0..30).map(|i| if i == 23 { 4 } else { i % 3 }).collect();
    let data = Dataset::from_columns(wide, vec![rows, vec![1; 30]]).unwrap();
    let pq = d.join("bad.parquet");
    write_parquet(&data, &pq, 10);
    let dom = d.join("d.json");
    std::fs::write(&dom, r#"{"a": 3, "b": 2}"#).unwrap();
    for extra in [&[][..], &["--stream"][..]] {
        let mut args = vec![
            "--workload",
            "all-1way",
            "--mechanism",
            "gaussian",
            "--rho",
            "1",
        ];
        args.extend_from_slice(extra);
        let out = d.join("out.csv");
        let o = release(&pq, &dom, &out, &args);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        let err = stderr(&o);
        assert!(
            err.contains("bad.parquet: row group 2, row 3 (both counted from 0): column 'a': code 4 is outside 0..3"),
            "{err}"
        );
        assert!(!out.exists());
    }
    // a missing column, in words
    std::fs::write(&dom, r#"{"a": 5, "b": 2, "c": 2}"#).unwrap();
    let o = release(
        &pq,
        &dom,
        &d.join("out.csv"),
        &[
            "--workload",
            "all-1way",
            "--mechanism",
            "gaussian",
            "--rho",
            "1",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        stderr(&o).contains("column 'c': the file has no column of this name"),
        "{}",
        text(&o)
    );
    std::fs::remove_dir_all(&d).ok();
}

/// The peak resident memory (kB) of `dpqr` run with `args`, read from `/proc` while it runs
/// (the high-water mark only grows, so the last reading before the exit is the peak up to
/// then); `None` where `/proc` has no `VmHWM`.
fn peak_kb(args: &[&str]) -> Option<u64> {
    let mut child = std::process::Command::new(common::DPQR)
        .args(args)
        .spawn()
        .unwrap();
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak = None;
    loop {
        if let Ok(status) = std::fs::read_to_string(&status_file)
            && let Some(kb) = status
                .lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<u64>().ok())
        {
            peak = Some(kb);
        }
        if let Some(st) = child.try_wait().unwrap() {
            assert!(st.success(), "dpqr {args:?} failed");
            return peak;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

#[test]
fn a_streamed_parquet_release_needs_memory_for_the_tables_not_the_rows() {
    let d = fresh_dir("parquet", "memory");
    let (csv, dom) = adult();
    let data = Dataset::load_csv(&csv, &dom).unwrap();
    // 40 copies of adult: 1 953 680 rows, 109 MB of codes in memory
    let pq = d.join("big.parquet");
    let f = std::fs::File::create(&pq).unwrap();
    let mut w = ParquetCodesWriter::new(f, data.domain(), 1 << 18).unwrap();
    for _ in 0..40 {
        w.write(&data).unwrap();
    }
    w.finish().unwrap();
    let names = data.domain().names().collect::<Vec<_>>().join(",");
    let base = [
        "release",
        "--data",
        s(&pq),
        "--domain",
        s(&dom),
        "--quiet",
        "--workload",
        "all-2way",
        "--mechanism",
        "gaussian",
        "--rho",
        "1",
        "--seed",
        "1",
    ];
    let out = d.join("a.csv");
    let mut streamed = base.to_vec();
    streamed.extend(["--out", s(&out)]);
    let out_b = d.join("b.csv");
    // --attributes (all of them, same order) makes dpqr load the rows in memory
    let mut loaded = base.to_vec();
    loaded.extend(["--out", s(&out_b), "--attributes", &names]);
    let (Some(stream_kb), Some(load_kb)) = (peak_kb(&streamed), peak_kb(&loaded)) else {
        return; // no /proc: nothing to measure here
    };
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&out_b).unwrap());
    assert!(
        stream_kb + 60_000 < load_kb,
        "streamed peak {stream_kb} kB, in-memory peak {load_kb} kB"
    );
    std::fs::remove_dir_all(&d).ok();
}
