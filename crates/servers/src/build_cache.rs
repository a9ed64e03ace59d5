//! The build cache: a target's built artefacts kept outside the checkout
//! (`~/.cache/shootout/builds/`, or `$SHOOTOUT_CACHE_DIR/builds/`), keyed by
//! a SHA-256 of everything the build reads, so a fresh clone restores them in
//! a second instead of compiling for minutes. The key covers the build
//! commands, the footprint, the toolchain's own report of its version
//! (`rustc -vV`, `go version`, `node -v`, `mvn -v`, ...), the build-steering
//! environment variables, and every input file's path, executable bit and
//! content (never a modification time, which a clone does not keep). A stale
//! hit is therefore impossible by construction: any byte of any input, or
//! another toolchain, is another key. This is what CI systems' keyed caches
//! do (a GitHub Actions cache key is a hash of the lockfiles).
//!
//! Entries are written to a temporary folder and renamed into place, so a
//! reader never sees half an entry. The cache has a size bound and evicts the
//! least recently used entries beyond it. Only artefacts that are
//! relocatable are cached: a Python venv writes its own absolute path into
//! its scripts, so those targets always build (in seconds).

use sha2::{Digest, Sha256};
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use crate::inputs::{tree_size, walk_files, InputFile};
use crate::manifest::Target;
use crate::toolchain::Toolchain;

/// Environment variable naming the cache's folder (builds go in `builds/`).
pub const CACHE_DIR_ENV: &str = "SHOOTOUT_CACHE_DIR";
/// Environment variable bounding the build cache, in MiB.
pub const CACHE_MAX_ENV: &str = "SHOOTOUT_BUILD_CACHE_MAX_MB";
/// The bound when none is set: every reference server built twice over fits.
pub const DEFAULT_MAX_BYTES: u64 = 4 << 30;
/// Variables that change what a build produces, so they are part of the key.
const STEERING_ENV: &[&str] = &[
    "RUSTFLAGS",
    "CARGO_ENCODED_RUSTFLAGS",
    "CARGO_BUILD_TARGET",
    "GOFLAGS",
    "GOAMD64",
    "CGO_ENABLED",
    "MAVEN_OPTS",
    "NODE_ENV",
];
/// Bumped when the layout or the key's recipe changes.
const FORMAT: &str = "shootout build cache v1";

/// A build cache rooted at one folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildCache {
    dir: PathBuf,
    max_bytes: u64,
}

/// Why the cache could not be used for one target; the build goes on
/// without it and the outcome says so.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    #[error("{toolchain}'s version could not be read (`{command}`): {detail}")]
    Version {
        toolchain: Toolchain,
        command: String,
        detail: String,
    },
    #[error("reading input {}: {source}", path.display())]
    Input { path: PathBuf, source: io::Error },
    #[error("{} in the build cache: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
    #[error("{0} is not set: no place for the build cache (set {CACHE_DIR_ENV})")]
    NoHome(&'static str),
    #[error("{CACHE_MAX_ENV}={0:?} is not a whole number of MiB")]
    BadBound(String),
}

/// The key of one target's build: a SHA-256, in hex.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheKey(String);

impl CacheKey {
    /// The full digest in hex.
    pub fn hex(&self) -> &str {
        &self.0
    }
    /// The first 12 hex digits, for a reader.
    pub fn short(&self) -> &str {
        &self.0[..12]
    }
}

impl BuildCache {
    /// A cache in `dir` (its entries under `dir/builds`) bounded to
    /// `max_bytes`.
    pub fn at(dir: impl Into<PathBuf>, max_bytes: u64) -> BuildCache {
        BuildCache {
            dir: dir.into(),
            max_bytes,
        }
    }

    /// `$SHOOTOUT_CACHE_DIR`, else `$XDG_CACHE_HOME/shootout`, else
    /// `~/.cache/shootout`; the bound from `$SHOOTOUT_BUILD_CACHE_MAX_MB`.
    pub fn from_env() -> Result<BuildCache, CacheError> {
        let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
        let dir = match (var(CACHE_DIR_ENV), var("XDG_CACHE_HOME"), var("HOME")) {
            (Some(d), _, _) => PathBuf::from(d),
            (None, Some(x), _) => PathBuf::from(x).join("shootout"),
            (None, None, Some(h)) => PathBuf::from(h).join(".cache/shootout"),
            (None, None, None) => return Err(CacheError::NoHome("HOME")),
        };
        let max_bytes = match std::env::var(CACHE_MAX_ENV) {
            Ok(v) => v
                .trim()
                .parse::<u64>()
                .map_err(|_| CacheError::BadBound(v.clone()))?
                .saturating_mul(1 << 20),
            Err(_) => DEFAULT_MAX_BYTES,
        };
        Ok(BuildCache::at(dir, max_bytes))
    }

    /// The folder holding the entries.
    pub fn builds_dir(&self) -> PathBuf {
        self.dir.join("builds")
    }

    fn entry(&self, target: &Target, key: &CacheKey) -> PathBuf {
        self.builds_dir()
            .join(format!("{}-{}", target.name, key.hex()))
    }

    /// Restores the artefacts stored under `key` into the target's folder;
    /// `None` on a miss.
    pub fn restore(&self, target: &Target, key: &CacheKey) -> Result<Option<Duration>, CacheError> {
        let entry = self.entry(target, key);
        let meta = entry.join("meta");
        if !meta.is_file() {
            return Ok(None);
        }
        let start = Instant::now();
        for (i, rel) in artefacts(target).iter().enumerate() {
            let from = entry.join("files").join(i.to_string());
            let to = target.dir.join(rel);
            remove_any(&to).map_err(io_at(&to))?;
            if let Some(parent) = to.parent() {
                std::fs::create_dir_all(parent).map_err(io_at(parent))?;
            }
            copy_tree(&from, &to).map_err(io_at(&to))?;
        }
        // The least recently used go first: mark this one used now.
        let _ = std::fs::File::options()
            .append(true)
            .open(&meta)
            .and_then(|f| f.set_modified(SystemTime::now()));
        Ok(Some(start.elapsed()))
    }

    /// Stores the target's artefacts under `key`, then evicts the least
    /// recently used entries beyond the bound (never this one).
    pub fn store(&self, target: &Target, key: &CacheKey) -> Result<(), CacheError> {
        let builds = self.builds_dir();
        std::fs::create_dir_all(&builds).map_err(io_at(&builds))?;
        let entry = self.entry(target, key);
        let nanos = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let tmp = builds.join(format!(
            ".tmp-{}-{}-{nanos}",
            target.name,
            std::process::id()
        ));
        let result = self.fill(target, &tmp);
        if let Err(e) = result {
            let _ = std::fs::remove_dir_all(&tmp);
            return Err(e);
        }
        if std::fs::rename(&tmp, &entry).is_err() {
            // Another process stored the same key first: same content.
            let _ = std::fs::remove_dir_all(&tmp);
        }
        self.evict(&entry)
    }

    fn fill(&self, target: &Target, tmp: &Path) -> Result<(), CacheError> {
        let files = tmp.join("files");
        std::fs::create_dir_all(&files).map_err(io_at(&files))?;
        let mut size = 0;
        for (i, rel) in artefacts(target).iter().enumerate() {
            let from = target.dir.join(rel);
            copy_tree(&from, &files.join(i.to_string())).map_err(io_at(&from))?;
            size += tree_size(&from);
        }
        let meta = tmp.join("meta");
        let text = format!("target {}\nsize {size}\n", target.name);
        std::fs::write(&meta, text).map_err(io_at(&meta))
    }

    /// Removes the least recently used entries until the rest fit the
    /// bound; `keep` stays whatever its size.
    fn evict(&self, keep: &Path) -> Result<(), CacheError> {
        let builds = self.builds_dir();
        let mut entries: Vec<(SystemTime, u64, PathBuf)> = std::fs::read_dir(&builds)
            .map_err(io_at(&builds))?
            .flatten()
            .filter_map(|e| {
                let meta = e.path().join("meta");
                let used = std::fs::metadata(&meta).and_then(|m| m.modified()).ok()?;
                let size = std::fs::read_to_string(&meta)
                    .ok()?
                    .lines()
                    .find_map(|l| l.strip_prefix("size ")?.parse().ok())?;
                Some((used, size, e.path()))
            })
            .collect();
        entries.sort();
        let mut total: u64 = entries.iter().map(|e| e.1).sum();
        for (_, size, path) in entries {
            if total <= self.max_bytes {
                break;
            }
            if path != keep {
                std::fs::remove_dir_all(&path).map_err(io_at(&path))?;
                total -= size;
            }
        }
        Ok(())
    }
}

/// Why a target's build is not cached at all, if it is not.
pub fn uncacheable(target: &Target) -> Option<&'static str> {
    (target.toolchain == Toolchain::Python3).then_some("a Python venv holds its own absolute path")
}

/// The key of the target's build as it would run now.
pub fn key(target: &Target) -> Result<CacheKey, CacheError> {
    key_with_version(target, &toolchain_version(target.toolchain)?)
}

/// The key, given the toolchain's version text (separate so a test can
/// show that another version is another key without installing one).
pub fn key_with_version(target: &Target, version: &str) -> Result<CacheKey, CacheError> {
    let mut h = Sha256::new();
    let mut line = |s: &str| {
        h.update(s.as_bytes());
        h.update(b"\n");
    };
    line(FORMAT);
    line(&format!("target {}", target.name));
    line(&format!("toolchain {}", target.toolchain));
    line(&format!(
        "platform {} {}",
        std::env::consts::OS,
        std::env::consts::ARCH
    ));
    line(&format!("version {}", version.trim()));
    for cmd in &target.build {
        line(&format!("cmd {cmd}"));
    }
    for f in &target.footprint {
        line(&format!("footprint {f}"));
    }
    for var in STEERING_ENV {
        if let Some(v) = std::env::var_os(var) {
            line(&format!("env {var}={}", v.to_string_lossy()));
        }
    }
    for input in &target.inputs {
        for file in walk_files(&target.dir, &target.dir.join(input)) {
            match file {
                InputFile::Missing(rel) => line(&format!("missing {rel}")),
                InputFile::Link { rel, to } => line(&format!("link {rel} {to}")),
                InputFile::File { rel, path, exec } => {
                    let bytes = std::fs::read(&path).map_err(|source| CacheError::Input {
                        path: path.clone(),
                        source,
                    })?;
                    line(&format!(
                        "file {rel} {exec} {}",
                        hex(&Sha256::digest(&bytes))
                    ));
                }
            }
        }
    }
    Ok(CacheKey(hex(&h.finalize())))
}

/// What the toolchain says of its version, every command's output joined;
/// asked once per process (`mvn -v` starts a JVM).
pub fn toolchain_version(toolchain: Toolchain) -> Result<String, CacheError> {
    use std::collections::HashMap;
    use std::sync::{Mutex, PoisonError};
    static SEEN: Mutex<Option<HashMap<Toolchain, String>>> = Mutex::new(None);
    let mut seen = SEEN.lock().unwrap_or_else(PoisonError::into_inner);
    let seen = seen.get_or_insert_with(HashMap::new);
    if let Some(v) = seen.get(&toolchain) {
        return Ok(v.clone());
    }
    let v = ask_version(toolchain)?;
    seen.insert(toolchain, v.clone());
    Ok(v)
}

fn ask_version(toolchain: Toolchain) -> Result<String, CacheError> {
    let mut text = String::new();
    for argv in toolchain.version_commands() {
        let failed = |detail: String| CacheError::Version {
            toolchain,
            command: argv.join(" "),
            detail,
        };
        let out = Command::new(argv[0])
            .args(&argv[1..])
            .stdin(Stdio::null())
            .output()
            .map_err(|e| failed(e.to_string()))?;
        if !out.status.success() {
            return Err(failed(out.status.to_string()));
        }
        text.push_str(&String::from_utf8_lossy(&out.stdout));
        text.push_str(&String::from_utf8_lossy(&out.stderr));
    }
    Ok(text)
}

/// The footprint paths the build makes: those that are not inputs (sources
/// such as `server.js` are in the clone already).
fn artefacts(target: &Target) -> Vec<&String> {
    let is_input = |p: &str| {
        target.inputs.iter().any(|i| {
            let i = i.trim_end_matches('/');
            p == i || p.strip_prefix(i).is_some_and(|rest| rest.starts_with('/'))
        })
    };
    target.footprint.iter().filter(|p| !is_input(p)).collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn io_at(path: &Path) -> impl Fn(io::Error) -> CacheError + '_ {
    move |source| CacheError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn remove_any(path: &Path) -> io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Copies a file or a folder, keeping symlinks as symlinks (node_modules/.bin)
/// and permission bits (std::fs::copy keeps them).
fn copy_tree(from: &Path, to: &Path) -> io::Result<()> {
    let meta = std::fs::symlink_metadata(from)?;
    if meta.file_type().is_symlink() {
        std::os::unix::fs::symlink(std::fs::read_link(from)?, to)
    } else if meta.is_dir() {
        std::fs::create_dir(to)?;
        for entry in std::fs::read_dir(from)? {
            let entry = entry?;
            copy_tree(&entry.path(), &to.join(entry.file_name()))?;
        }
        Ok(())
    } else {
        std::fs::copy(from, to).map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tempdir;

    fn target(root: &Path, name: &str) -> Target {
        let dir = root.join(name);
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(dir.join("src/main.sh"), "echo hi").unwrap();
        Target {
            toolchain: Toolchain::Go,
            build: vec!["mkdir -p out/bin && echo built >> out/bin/count".into()],
            footprint: vec!["out".into(), "src/main.sh".into()],
            inputs: vec!["src".into()],
            root: root.to_path_buf(),
            ..Target::command(name, &dir, "true")
        }
    }

    #[test]
    fn the_key_follows_content_not_times() {
        let root = tempdir::Dir::new();
        let t = target(root.path(), "demo");
        let before = key_with_version(&t, "go1").unwrap();
        assert_eq!(before, key_with_version(&t, "go1").unwrap());
        // Another toolchain is another key.
        assert_ne!(before, key_with_version(&t, "go2").unwrap());
        // One byte changed, same length: another key.
        let file = t.dir.join("src/main.sh");
        std::fs::write(&file, "echo ho").unwrap();
        let changed = key_with_version(&t, "go1").unwrap();
        assert_ne!(before, changed);
        // Touched only: the same key.
        std::fs::write(&file, "echo ho").unwrap();
        assert_eq!(changed, key_with_version(&t, "go1").unwrap());
        // The same sources in another folder (another clone): the same key.
        let other = tempdir::Dir::new();
        let u = target(other.path(), "demo");
        std::fs::write(u.dir.join("src/main.sh"), "echo ho").unwrap();
        assert_eq!(changed, key_with_version(&u, "go1").unwrap());
    }

    #[test]
    fn stores_restores_and_keeps_symlinks() {
        let root = tempdir::Dir::new();
        let cache_dir = tempdir::Dir::new();
        let cache = BuildCache::at(cache_dir.path(), DEFAULT_MAX_BYTES);
        let t = target(root.path(), "demo");
        let key = key_with_version(&t, "go1").unwrap();
        assert_eq!(cache.restore(&t, &key).unwrap(), None);
        std::fs::create_dir_all(t.dir.join("out/bin")).unwrap();
        std::fs::write(t.dir.join("out/bin/tool"), "binary").unwrap();
        std::os::unix::fs::symlink("bin/tool", t.dir.join("out/link")).unwrap();
        cache.store(&t, &key).unwrap();
        // Only the artefacts were stored, not the input in the footprint.
        let stored = std::fs::read_dir(cache.entry(&t, &key).join("files")).unwrap();
        assert_eq!(stored.count(), 1);

        std::fs::remove_dir_all(t.dir.join("out")).unwrap();
        std::fs::create_dir_all(t.dir.join("out")).unwrap();
        std::fs::write(t.dir.join("out/stale"), "x").unwrap();
        assert!(cache.restore(&t, &key).unwrap().is_some());
        assert_eq!(
            std::fs::read(t.dir.join("out/bin/tool")).unwrap(),
            b"binary"
        );
        assert_eq!(
            std::fs::read_link(t.dir.join("out/link")).unwrap(),
            Path::new("bin/tool")
        );
        assert!(
            !t.dir.join("out/stale").exists(),
            "a restore replaces, not merges"
        );
    }

    #[test]
    fn evicts_the_least_recently_used_beyond_the_bound() {
        let root = tempdir::Dir::new();
        let cache_dir = tempdir::Dir::new();
        // Room for two entries of 100 bytes, not three.
        let cache = BuildCache::at(cache_dir.path(), 250);
        let mut keys = Vec::new();
        for name in ["a", "b", "c"] {
            let t = target(root.path(), name);
            std::fs::create_dir_all(t.dir.join("out")).unwrap();
            std::fs::write(t.dir.join("out/blob"), [0u8; 100]).unwrap();
            let key = key_with_version(&t, "go1").unwrap();
            if name == "c" {
                // "a" used since "b" was stored: "b" is the oldest now.
                let a = target(root.path(), "a");
                let ka = key_with_version(&a, "go1").unwrap();
                std::thread::sleep(Duration::from_millis(20));
                cache.restore(&a, &ka).unwrap().unwrap();
            }
            cache.store(&t, &key).unwrap();
            keys.push((t, key));
            std::thread::sleep(Duration::from_millis(20));
        }
        let present: Vec<bool> = keys
            .iter()
            .map(|(t, k)| cache.entry(t, k).exists())
            .collect();
        assert_eq!(present, [true, false, true]);
    }
}
