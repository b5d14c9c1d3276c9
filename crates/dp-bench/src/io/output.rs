//! Writing output files safely. Every file `dpqr` writes — the answers, the report, the
//! synthetic records and the budget ledger — goes through [`AtomicFile`]:
//!
//! * the content is written to a fresh temporary file in the target's directory
//!   (`.NAME.PID.SEQ.tmp`, created exclusively, so it never overwrites anything), flushed
//!   and `fsync`ed;
//! * [`AtomicFile::commit`] renames it over the target (atomic on POSIX file systems) and
//!   `fsync`s the directory so the rename itself is durable; [`AtomicFile::commit_new`]
//!   links it in place instead and fails if the target exists;
//! * an `AtomicFile` dropped without a commit removes its temporary file.
//!
//! A reader of the target therefore sees the old file or the whole new one, never a
//! partial write; a crash can at worst leave a stray temporary file behind. Replacing a
//! file gives the new one default permissions, and a target that is a symbolic link is
//! replaced by the new file (the link's destination is left as it was).
//!
//! Before `dpqr release` reads any data, records a spend or draws noise it calls
//! [`check_outputs`]: every output's directory must exist and accept a new file (tested by
//! creating and removing a temporary file there), no output may be a directory, and no two
//! outputs — nor an output and an input — may name the same file.

use crate::{BenchError, Result, io_error};
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Distinguishes the temporary files of one process.
static SEQ: AtomicU64 = AtomicU64::new(0);

/// The directory `path` is in (`.` for a bare file name).
fn directory_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Create a new, empty temporary file beside `path`; returns it and its path.
fn create_temp(path: &Path) -> Result<(File, PathBuf)> {
    let name = path.file_name().ok_or_else(|| not_a_file_name(path))?;
    let dir = directory_of(path);
    loop {
        let mut tmp_name = std::ffi::OsString::from(".");
        tmp_name.push(name);
        tmp_name.push(format!(
            ".{}.{}.tmp",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        let tmp = dir.join(tmp_name);
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(f) => return Ok((f, tmp)),
            // left over by an earlier process with the same id: take the next number
            Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(cannot_write_in(&dir, e)),
        }
    }
}

fn not_a_file_name(path: &Path) -> BenchError {
    BenchError::Output {
        path: path.display().to_string(),
        why: "does not name a file (it ends in a directory part)".into(),
    }
}

fn cannot_write_in(dir: &Path, e: std::io::Error) -> BenchError {
    let why = match e.kind() {
        ErrorKind::NotFound => "the directory does not exist".to_string(),
        ErrorKind::PermissionDenied => "permission denied".to_string(),
        _ => e.to_string(),
    };
    BenchError::Output {
        path: dir.display().to_string(),
        why: format!("cannot create a file in this directory: {why}"),
    }
}

/// A file being written atomically (see the module docs). Write to it with
/// [`std::io::Write`], then [`AtomicFile::commit`]; dropped without a commit, it removes its
/// temporary file and leaves the target untouched.
pub struct AtomicFile {
    path: PathBuf,
    tmp: PathBuf,
    out: Option<BufWriter<File>>,
}

impl AtomicFile {
    /// Start writing `path`: a fresh temporary file in its directory. Refuses a `path` that
    /// is an existing directory or ends in a directory part.
    pub fn create(path: &Path) -> Result<Self> {
        if path.is_dir() {
            return Err(BenchError::Output {
                path: path.display().to_string(),
                why: "is a directory, not a file".into(),
            });
        }
        let (f, tmp) = create_temp(path)?;
        Ok(AtomicFile {
            path: path.to_path_buf(),
            tmp,
            out: Some(BufWriter::new(f)),
        })
    }

    /// The target path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The temporary file being written (removed on drop, renamed by a commit).
    pub fn temp_path(&self) -> &Path {
        &self.tmp
    }

    /// Flush and sync the temporary file; returns it closed.
    fn finish(&mut self) -> Result<()> {
        let out = self.out.take().ok_or_else(|| {
            BenchError::Internal(format!("{}: already committed", self.path.display()))
        })?;
        let f = out
            .into_inner()
            .map_err(|e| io_error(&self.tmp)(e.into_error()))?;
        f.sync_all().map_err(io_error(&self.tmp))?;
        Ok(())
    }

    /// Replace the target with what was written (rename), durably.
    pub fn commit(mut self) -> Result<()> {
        self.finish()?;
        std::fs::rename(&self.tmp, &self.path).map_err(io_error(&self.path))?;
        sync_directory(&self.path)
    }

    /// Like [`AtomicFile::commit`], but fail if the target exists (it is never
    /// overwritten: the temporary file is hard-linked as the target, then removed).
    pub fn commit_new(mut self) -> Result<()> {
        self.finish()?;
        std::fs::hard_link(&self.tmp, &self.path).map_err(|e| {
            if e.kind() == ErrorKind::AlreadyExists {
                BenchError::AlreadyExists(self.path.display().to_string())
            } else {
                io_error(&self.path)(e)
            }
        })?;
        std::fs::remove_file(&self.tmp).map_err(io_error(&self.tmp))?;
        sync_directory(&self.path)
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match &mut self.out {
            Some(w) => w.write(buf),
            None => Err(std::io::Error::other("write after commit")),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.out {
            Some(w) => w.flush(),
            None => Ok(()),
        }
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        // after a commit the temporary name is gone (renamed or removed); otherwise this
        // discards the unfinished write
        if self.tmp.exists() {
            std::fs::remove_file(&self.tmp).ok();
        }
    }
}

fn sync_directory(path: &Path) -> Result<()> {
    let dir = directory_of(path);
    File::open(&dir)
        .and_then(|d| d.sync_all())
        .map_err(io_error(&dir))
}

/// Whether `path` names a gzip file (its extension is `gz`, any case): `dpqr` compresses
/// what it writes there and decompresses what it reads from there.
pub fn is_gzip(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gz"))
}

/// Write into `file` with `write`, gzip-compressed (RFC 1952, default level) when its target
/// path ends in `.gz` ([`is_gzip`]), as is otherwise.
pub fn write_maybe_compressed(
    file: &mut AtomicFile,
    write: impl FnOnce(&mut dyn Write) -> Result<()>,
) -> Result<()> {
    if !is_gzip(file.path()) {
        return write(file);
    }
    let path = file.path().to_path_buf();
    let mut gz = flate2::write::GzEncoder::new(file, flate2::Compression::default());
    write(&mut gz)?;
    gz.finish().map_err(io_error(&path))?;
    Ok(())
}

/// The bytes of `path`, decompressed when it ends in `.gz` ([`is_gzip`]); a corrupt gzip
/// stream is an I/O error naming the file.
pub fn read_maybe_compressed(path: &Path) -> Result<Vec<u8>> {
    let bytes = std::fs::read(path).map_err(io_error(path))?;
    if !is_gzip(path) {
        return Ok(bytes);
    }
    let mut out = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(&bytes[..]), &mut out)
        .map_err(io_error(path))?;
    Ok(out)
}

/// A file size for messages: bytes below 1 KiB, else KiB / MiB / GiB with one decimal.
pub fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 3] = ["KiB", "MiB", "GiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut v = bytes as f64 / 1024.0;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.1} {}", UNITS[u])
}

/// Write `path` atomically with `write` (see the module docs): on any error the target is
/// left as it was and the temporary file is removed.
pub fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> Result<()>,
) -> Result<()> {
    let mut f = AtomicFile::create(path)?;
    write(&mut f)?;
    f.commit()
}

/// The file a path refers to for comparisons between paths: the canonical form of its
/// directory joined with its file name (so `x.csv`, `./x.csv` and `sub/../x.csv` agree).
/// The file itself need not exist; a path whose directory cannot be resolved is returned
/// as given.
pub fn normalise(path: &Path) -> PathBuf {
    match (std::fs::canonicalize(directory_of(path)), path.file_name()) {
        (Ok(dir), Some(name)) => dir.join(name),
        _ => path.to_path_buf(),
    }
}

/// Check, before anything is read or written, that the outputs of a command can be
/// written and do not collide. `outputs` and `inputs` are `(flag, path)` pairs; the flags
/// name the paths in messages.
///
/// Refused, each with a message naming the flag: an output that is a directory or ends in
/// a directory part; an output whose directory does not exist, is not a directory, or
/// does not accept a new file (a temporary file is created there and removed); two outputs
/// naming the same file; an output naming an input file (or a symbolic link to one).
pub fn check_outputs(outputs: &[(&str, &Path)], inputs: &[(&str, &Path)]) -> Result<()> {
    let mut seen: Vec<(&str, PathBuf)> = Vec::with_capacity(outputs.len());
    for &(flag, path) in outputs {
        let fail = |why: String| {
            Err(BenchError::BadOutput {
                flag: flag.to_string(),
                path: path.display().to_string(),
                why,
            })
        };
        if path.file_name().is_none() {
            return fail("does not name a file".into());
        }
        if path.is_dir() {
            return fail("is a directory, not a file".into());
        }
        let dir = directory_of(path);
        match std::fs::metadata(&dir) {
            Err(_) => return fail(format!("directory {} does not exist", dir.display())),
            Ok(m) if !m.is_dir() => {
                return fail(format!("{} is not a directory", dir.display()));
            }
            Ok(_) => {}
        }
        match create_temp(path) {
            Ok((f, tmp)) => {
                drop(f);
                std::fs::remove_file(&tmp).map_err(io_error(&tmp))?;
            }
            Err(e) => return fail(e.to_string()),
        }
        let normalised = normalise(path);
        if let Some((other, _)) = seen.iter().find(|(_, p)| *p == normalised) {
            return fail(format!(
                "the same file as {other}; give each output its own file"
            ));
        }
        for &(input, input_path) in inputs {
            let same = normalise(input_path) == normalised
                || std::fs::canonicalize(input_path).is_ok_and(|c| c == normalised);
            if same {
                return fail(format!(
                    "the same file as the input {input}; an output must not replace an input"
                ));
            }
        }
        seen.push((flag, normalised));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("dpqr-output-{name}-{}", std::process::id()));
        std::fs::remove_dir_all(&d).ok();
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn entries(d: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_temporary() {
        let d = dir("fail");
        let p = d.join("a.csv");
        std::fs::write(&p, "old\n").unwrap();
        let e = write_atomically(&p, |w| {
            w.write_all(b"half of the new").map_err(io_error("t"))?;
            Err(BenchError::Internal("stopped half-way".into()))
        });
        assert!(e.is_err());
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "old\n");
        assert_eq!(entries(&d), ["a.csv"]);
        write_atomically(&p, |w| w.write_all(b"new\n").map_err(io_error("t"))).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new\n");
        assert_eq!(entries(&d), ["a.csv"]);
        std::fs::remove_dir_all(&d).ok();
    }

    #[test]
    fn commit_new_never_overwrites() {
        let d = dir("new");
        let p = d.join("l.json");
        let mut f = AtomicFile::create(&p).unwrap();
        f.write_all(b"1").unwrap();
        f.commit_new().unwrap();
        let mut f = AtomicFile::create(&p).unwrap();
        f.write_all(b"2").unwrap();
        assert!(f.commit_new().is_err());
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "1");
        assert_eq!(entries(&d), ["l.json"]);
        std::fs::remove_dir_all(&d).ok();
    }

    #[test]
    fn outputs_are_checked_up_front() {
        let d = dir("check");
        let a = d.join("a.csv");
        let sub = d.join("sub");
        std::fs::create_dir_all(&sub).unwrap();
        let dotted = sub.join("..").join("a.csv");
        let ok = check_outputs(&[("--out", &a), ("--report", &d.join("r.json"))], &[]);
        assert!(ok.is_ok(), "{ok:?}");
        // nothing is left behind by the probe
        assert_eq!(entries(&d), ["sub"]);
        let msg =
            |o: &[(&str, &Path)], i: &[(&str, &Path)]| check_outputs(o, i).unwrap_err().to_string();
        let e = msg(&[("--out", &a), ("--report", &dotted)], &[]);
        assert!(
            e.contains("--report") && e.contains("same file as --out"),
            "{e}"
        );
        let e = msg(&[("--out", &a)], &[("--data", &dotted)]);
        assert!(e.contains("input --data"), "{e}");
        let e = msg(&[("--out", &d.join("missing").join("a.csv"))], &[]);
        assert!(e.contains("does not exist"), "{e}");
        let e = msg(&[("--out", &sub)], &[]);
        assert!(e.contains("is a directory"), "{e}");
        std::fs::write(&a, "x").unwrap();
        let e = msg(&[("--out", &a.join("b.csv"))], &[]);
        assert!(e.contains("not a directory"), "{e}");
        std::fs::remove_dir_all(&d).ok();
    }
}
