//! Building a target: run its `build` commands with `sh -c` in its folder,
//! output in `targets/.build/<name>.log`, and record a stamp of the inputs so
//! an unchanged target is "up to date" in milliseconds. Before running
//! anything, a build cache keyed by the inputs' content (build_cache.rs)
//! may restore what an identical build made elsewhere, in another clone or
//! an earlier one. A missing toolchain is an outcome (skipped), not an
//! error; a failing command is an error that carries the log's tail. Also
//! measures the footprint of a built target.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, UNIX_EPOCH};

use crate::build_cache::{self, BuildCache};
use crate::inputs::{tree_size, walk_files, InputFile};
use crate::manifest::Target;
use crate::tail::log_tail;

/// Log lines shown when a build fails.
const TAIL_LINES: usize = 20;

/// What `build` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BuildOutcome {
    /// The commands ran and succeeded; `cache` says what the build cache
    /// did with the result.
    Built { took: Duration, cache: CacheNote },
    /// The build cache held this exact build: its artefacts were restored
    /// and no command ran.
    Restored { took: Duration, key: String },
    /// The stamp matched and the footprint exists: nothing ran.
    UpToDate,
    /// The toolchain is not on PATH, so nothing was attempted.
    Skipped { reason: String },
}

/// What the build cache did with a build that ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CacheNote {
    /// No cache was given (`--no-cache`).
    Off,
    /// The artefacts were stored under this key.
    Stored { key: String },
    /// This kind of target is never cached, for this reason.
    NotCacheable { reason: &'static str },
    /// The cache could not be read or written (the build still ran).
    Failed { reason: String },
}

impl std::fmt::Display for CacheNote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CacheNote::Off => f.write_str("build cache off"),
            CacheNote::Stored { key } => write!(f, "stored in the build cache as {key}"),
            CacheNote::NotCacheable { reason } => write!(f, "not cached: {reason}"),
            CacheNote::Failed { reason } => write!(f, "build cache not used: {reason}"),
        }
    }
}

/// A build command failed (or could not be started).
#[derive(Debug, thiserror::Error)]
#[error("building {target} failed: {what}; log: {}\n{tail}", log.display())]
pub struct BuildError {
    pub target: String,
    pub what: String,
    pub log: PathBuf,
    /// The last lines of the log.
    pub tail: String,
}

/// Builds `target` unless its stamp says it is up to date or `cache` holds
/// the same build (then restores it). `None` builds without a cache.
pub fn build(target: &Target, cache: Option<&BuildCache>) -> Result<BuildOutcome, BuildError> {
    if let Some(binary) = target.toolchain.missing() {
        let reason = format!(
            "{binary} not found on PATH ({} toolchain)",
            target.toolchain
        );
        return Ok(BuildOutcome::Skipped { reason });
    }
    let fingerprint = fingerprint(target);
    if is_current(target, &fingerprint) {
        return Ok(BuildOutcome::UpToDate);
    }
    // The cache's key, or why there is none; computed before the build so
    // that what is stored is what these inputs made.
    let keyed = match (cache, build_cache::uncacheable(target)) {
        (None, _) => Err(CacheNote::Off),
        (Some(_), Some(reason)) => Err(CacheNote::NotCacheable { reason }),
        (Some(c), None) => {
            build_cache::key(target)
                .map(|k| (c, k))
                .map_err(|e| CacheNote::Failed {
                    reason: e.to_string(),
                })
        }
    };
    let mut note = None;
    if let Ok((cache, key)) = &keyed {
        match cache.restore(target, key) {
            Ok(Some(took)) if missing_footprint(target).is_empty() => {
                write_stamp(target, &fingerprint);
                let key = key.short().to_string();
                return Ok(BuildOutcome::Restored { took, key });
            }
            Ok(_) => {}
            Err(e) => {
                note = Some(CacheNote::Failed {
                    reason: e.to_string(),
                })
            }
        }
    }
    let start = Instant::now();
    run_commands(target)?;
    let took = start.elapsed();
    let missing = missing_footprint(target);
    if !missing.is_empty() {
        return Err(failure(
            target,
            format!(
                "footprint path(s) missing after build: {}",
                missing.join(", ")
            ),
        ));
    }
    let cache = match (note, keyed) {
        (Some(note), _) => note,
        (None, Err(note)) => note,
        (None, Ok((cache, key))) => match cache.store(target, &key) {
            Ok(()) => CacheNote::Stored {
                key: key.short().to_string(),
            },
            Err(e) => CacheNote::Failed {
                reason: e.to_string(),
            },
        },
    };
    write_stamp(target, &fingerprint);
    Ok(BuildOutcome::Built { took, cache })
}

/// A stamp that cannot be written only costs a rebuild next time.
fn write_stamp(target: &Target, fingerprint: &str) {
    let _ = std::fs::create_dir_all(target.build_dir());
    let _ = std::fs::write(target.stamp_path(), fingerprint);
}

/// Builds `target` from its sources, whatever its stamp says and with no
/// cache (`--no-cache`): the stamp is forgotten first, so the commands run.
pub fn build_from_source(target: &Target) -> Result<BuildOutcome, BuildError> {
    // A stamp that is already gone is what this wants.
    let _ = std::fs::remove_file(target.stamp_path());
    build(target, None)
}

/// [`build`] through `cache`, or [`build_from_source`] without one: what
/// `--no-cache` means wherever a target is built.
pub fn build_or_rebuild(
    target: &Target,
    cache: Option<&BuildCache>,
) -> Result<BuildOutcome, BuildError> {
    match cache {
        Some(c) => build(target, Some(c)),
        None => build_from_source(target),
    }
}

/// True when the stamp matches the current inputs and the footprint exists.
pub fn is_built(target: &Target) -> bool {
    is_current(target, &fingerprint(target))
}

fn is_current(target: &Target, fingerprint: &str) -> bool {
    std::fs::read_to_string(target.stamp_path()).is_ok_and(|s| s == fingerprint)
        && missing_footprint(target).is_empty()
}

fn missing_footprint(target: &Target) -> Vec<String> {
    target
        .footprint
        .iter()
        .filter(|p| !target.dir.join(p).exists())
        .cloned()
        .collect()
}

fn failure(target: &Target, what: String) -> BuildError {
    let log = target.build_log();
    BuildError {
        target: target.name.clone(),
        what,
        tail: log_tail(&log, TAIL_LINES),
        log,
    }
}

fn run_commands(target: &Target) -> Result<(), BuildError> {
    let log_path = target.build_log();
    let open = || -> std::io::Result<File> {
        std::fs::create_dir_all(target.build_dir())?;
        OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(&log_path)
    };
    let mut log = open().map_err(|e| failure(target, format!("cannot write the log: {e}")))?;
    for cmd in &target.build {
        let _ = writeln!(log, "$ {cmd}");
        let status = log
            .try_clone()
            .and_then(|out| Ok((out, log.try_clone()?)))
            .and_then(|(out, err)| {
                Command::new("sh")
                    .arg("-c")
                    .arg(cmd)
                    .current_dir(&target.dir)
                    .stdin(Stdio::null())
                    .stdout(out)
                    .stderr(err)
                    .status()
            })
            .map_err(|e| failure(target, format!("cannot run `{cmd}`: {e}")))?;
        if !status.success() {
            return Err(failure(target, format!("`{cmd}` exited with {status}")));
        }
    }
    Ok(())
}

/// A stable digest of the build commands, the toolchain's version and every
/// input file's path, size
/// and modification time. Missing inputs are recorded as such, so creating
/// one changes the fingerprint. Paths are taken relative to the target's
/// folder, so the same checkout reached by another path (`targets/` found
/// from the working directory, or `crates/servers/../../targets` in a test)
/// has the same fingerprint and is built once.
pub fn fingerprint(target: &Target) -> String {
    let mut text = String::new();
    for cmd in &target.build {
        text.push_str(&format!("cmd {cmd}\n"));
    }
    // Another toolchain is another build, in this checkout as in the cache.
    match build_cache::toolchain_version(target.toolchain) {
        Ok(v) => text.push_str(&format!("version {v}\n")),
        Err(e) => text.push_str(&format!("version unknown: {e}\n")),
    }
    for input in &target.inputs {
        for file in walk_files(&target.dir, &target.dir.join(input)) {
            match file {
                InputFile::Missing(rel) => text.push_str(&format!("missing {rel}\n")),
                InputFile::Link { rel, .. } | InputFile::File { rel, .. } => {
                    let path = target.dir.join(&rel);
                    let Ok(meta) = std::fs::symlink_metadata(&path) else {
                        continue;
                    };
                    let mtime = meta
                        .modified()
                        .ok()
                        .and_then(|t| t.duration_since(UNIX_EPOCH).ok());
                    let nanos = mtime.map_or(0, |d| d.as_nanos());
                    text.push_str(&format!("{rel} {} {nanos}\n", meta.len()));
                }
            }
        }
    }
    format!("fnv1a64 {:016x}\n", fnv1a64(text.as_bytes()))
}

/// FNV-1a: tiny, and stable across Rust releases (unlike DefaultHasher), so
/// stamps survive a toolchain update.
fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Total size in bytes of the footprint paths (directories recursively;
/// symlinks counted as themselves, never followed).
pub fn footprint_bytes(target: &Target) -> u64 {
    target
        .footprint
        .iter()
        .map(|p| tree_size(&target.dir.join(p)))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tempdir;
    use crate::toolchain::Toolchain;
    use std::path::Path;

    fn target(root: &Path, build: &[&str]) -> Target {
        let dir = root.join("demo");
        std::fs::create_dir_all(dir.join("src/__pycache__")).unwrap();
        std::fs::write(dir.join("src/main.sh"), "echo hi").unwrap();
        Target {
            // sh is everywhere, but Toolchain has no variant for it.
            toolchain: Toolchain::Cargo,
            build: build.iter().map(|s| s.to_string()).collect(),
            footprint: vec!["out".into()],
            inputs: vec!["src".into()],
            root: root.to_path_buf(),
            ..Target::command("demo", &dir, "true")
        }
    }

    #[test]
    fn builds_once_then_up_to_date_then_rebuilds_on_change() {
        let root = tempdir::Dir::new();
        let t = target(root.path(), &["mkdir -p out && echo built >> out/count"]);
        assert!(!is_built(&t));
        assert!(matches!(
            build(&t, None).unwrap(),
            BuildOutcome::Built { .. }
        ));
        assert!(is_built(&t));
        assert_eq!(build(&t, None).unwrap(), BuildOutcome::UpToDate);
        // Caches under skipped folders do not count as input changes.
        std::fs::write(t.dir.join("src/__pycache__/x.pyc"), "junk").unwrap();
        assert_eq!(build(&t, None).unwrap(), BuildOutcome::UpToDate);
        std::fs::write(t.dir.join("src/main.sh"), "echo changed size").unwrap();
        assert!(!is_built(&t));
        assert!(matches!(
            build(&t, None).unwrap(),
            BuildOutcome::Built { .. }
        ));
        assert_eq!(footprint_bytes(&t), "built\nbuilt\n".len() as u64);
        // From source: the commands run although the stamp is current.
        assert!(is_built(&t));
        assert!(matches!(
            build_from_source(&t).unwrap(),
            BuildOutcome::Built { .. }
        ));
        assert_eq!(footprint_bytes(&t), "built\nbuilt\nbuilt\n".len() as u64);
        // A deleted footprint means "not built" even with a matching stamp.
        std::fs::remove_dir_all(t.dir.join("out")).unwrap();
        assert!(!is_built(&t));
    }

    #[test]
    fn failure_carries_log_tail() {
        let root = tempdir::Dir::new();
        let t = target(
            root.path(),
            &[
                "echo compiling",
                "echo 'error: oh no' >&2; exit 7",
                "echo never",
            ],
        );
        let e = build(&t, None).unwrap_err();
        assert!(e.tail.contains("error: oh no"), "{e}");
        assert!(!e.tail.contains("never"), "{e}");
        assert!(e.what.contains("exit status: 7"), "{e}");
        assert!(!is_built(&t));
    }

    #[test]
    fn missing_footprint_after_build_is_a_failure() {
        let root = tempdir::Dir::new();
        let t = target(root.path(), &["true"]);
        let e = build(&t, None).unwrap_err();
        assert!(e.what.contains("out"), "{e}");
    }

    #[test]
    fn fingerprint_changes_with_commands() {
        let root = tempdir::Dir::new();
        let a = target(root.path(), &["true"]);
        let b = target(root.path(), &["false"]);
        assert_ne!(fingerprint(&a), fingerprint(&b));
        assert_eq!(fingerprint(&a), fingerprint(&a));
    }

    /// `shootout build` finds `targets/` from the working directory, a test
    /// as `crates/servers/../../targets`: one checkout, one fingerprint, so
    /// what CI built once is not built again by the tests.
    #[test]
    fn fingerprint_is_the_same_through_another_path() {
        let root = tempdir::Dir::new();
        let a = target(root.path(), &["true"]);
        std::fs::create_dir_all(root.path().join("crates/servers")).unwrap();
        let mut b = target(root.path(), &["true"]);
        b.dir = root.path().join("crates/servers/../../demo");
        let before = fingerprint(&a);
        assert_eq!(before, fingerprint(&b));
        // Still a fingerprint of the inputs: a changed file changes both.
        std::fs::write(a.dir.join("src/main.sh"), "echo changed, longer").unwrap();
        assert_ne!(before, fingerprint(&b));
        assert_eq!(fingerprint(&a), fingerprint(&b));
    }
}
