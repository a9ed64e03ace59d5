//! Where a target's figures came from: the versions its build resolved for
//! the framework and its main libraries, read from the target's lockfile
//! (never from the manifest's ranges), and the runtime's version as the
//! build saw it, parsed from the toolchain's own report (the one the build
//! cache keys on, [`crate::build_cache::toolchain_version`]).
//!
//! The lockfile is the one of the toolchain's kind among the target's
//! `inputs` (what the build reads), else the one in its folder or, for a
//! Cargo workspace, a folder above it: `Cargo.lock` (its `[[package]]`
//! entries), `go.mod` (its `require` lines: with minimal version selection
//! they are the versions the build uses), `package-lock.json`
//! (`packages["node_modules/NAME"].version`), `requirements.txt` (`NAME==V`
//! lines) and, for Maven, the built jar's `BOOT-INF/lib/NAME-V.jar` names
//! (what Maven resolved) and the pom's `<parent>`. The packages are the
//! manifest's `provenance` list, or without one the framework's package:
//! the first word of `framework` (see [`default_packages`]). Whatever
//! cannot be read is said, as a [`NotRecorded`] naming the file and the
//! entry, never left blank or guessed.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use crate::manifest::Target;
use crate::toolchain::Toolchain;

/// What a target's build resolved, package by package, and its runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Provenance {
    /// The framework's and main libraries' versions, in the manifest's order.
    pub packages: Vec<Package>,
    /// The runtime's short version, e.g. `rustc 1.91.0` or `go1.26.8`.
    pub runtime: Result<Found, NotRecorded>,
}

/// One package's resolved version, or why it is not known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Package {
    /// The name as the manifest (or the default) gives it.
    pub name: String,
    pub version: Result<Found, NotRecorded>,
}

/// A version and where it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub version: String,
    /// The file (`targets/Cargo.lock`) or command (`rustc -vV`) it came from.
    pub source: String,
}

/// Why a version is not recorded; the message names the file and entry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotRecorded {
    #[error("not recorded: {file} is missing")]
    NoLockfile { file: String },
    #[error("not recorded: {file} has no {entry}")]
    NoEntry { file: String, entry: String },
    #[error(
        "not recorded: {file} holds {name} at {versions} and the target's own entry names none"
    )]
    Ambiguous {
        file: String,
        name: String,
        versions: String,
    },
    #[error("not recorded: {file} pins {name} as {line:?}, not with ==")]
    NotPinned {
        file: String,
        name: String,
        line: String,
    },
    #[error("not recorded: reading {file}: {detail}")]
    Unreadable { file: String, detail: String },
    #[error("not recorded: {0}")]
    Runtime(String),
    /// Every place looked in, each with what it lacked.
    #[error("not recorded: {0}")]
    Searched(String),
    #[error("not recorded: `{command}` printed no version ({first_line:?})")]
    Unparsed { command: String, first_line: String },
}

/// The packages recorded when the manifest has no `provenance` list: the
/// framework's own, the first word of `framework` lowercased
/// (`actix-web 4.18` gives `actix-web`, `net/http (Go ...)` gives
/// `net/http`); for Maven, the pom's `<parent>` when its artifactId starts
/// with that word (`Spring Boot` gives `spring-boot-starter-parent`: the
/// framework's parent pom, whose version pins the rest).
pub fn default_packages(target: &Target) -> Vec<String> {
    let Some(word) = target.framework.split_whitespace().next() else {
        return Vec::new();
    };
    let word = word.to_lowercase();
    if target.toolchain == Toolchain::Maven {
        let lock = Lockfile::of(target);
        let parent = lock
            .path
            .and_then(|p| std::fs::read_to_string(p).ok())
            .and_then(|pom| pom_parent(&pom))
            .map(|(artifact, _)| artifact)
            .filter(|a| a.starts_with(&format!("{word}-")));
        if let Some(artifact) = parent {
            return vec![artifact];
        }
    }
    vec![word]
}

/// Reads the provenance of a built target. The runtime's version costs one
/// run of the toolchain's version commands per process.
pub fn provenance(target: &Target) -> Provenance {
    let names = target
        .provenance
        .clone()
        .unwrap_or_else(|| default_packages(target));
    let runtime = runtime(target.toolchain);
    Provenance {
        packages: packages(target, &names, &runtime),
        runtime,
    }
}

/// The resolved versions of `names` for `target`; `runtime` versions what
/// the toolchain itself provides (Go's standard library).
pub fn packages(
    target: &Target,
    names: &[String],
    runtime: &Result<Found, NotRecorded>,
) -> Vec<Package> {
    let lock = Lockfile::of(target);
    names
        .iter()
        .map(|name| Package {
            name: name.clone(),
            version: lock.version(name, target, runtime),
        })
        .collect()
}

/// The runtime's short version as the toolchain reports it.
pub fn runtime(toolchain: Toolchain) -> Result<Found, NotRecorded> {
    let text = crate::build_cache::toolchain_version(toolchain)
        .map_err(|e| NotRecorded::Runtime(e.to_string()))?;
    let command = toolchain.version_commands()[0].join(" ");
    match short_runtime(toolchain, &text) {
        Some(version) => Ok(Found {
            version,
            source: command,
        }),
        None => Err(NotRecorded::Unparsed {
            command,
            first_line: text.lines().next().unwrap_or_default().to_string(),
        }),
    }
}

/// The short version in a toolchain's report (every version command's
/// output joined): `rustc 1.91.0`, `go1.26.8`, `node v20.19.0`,
/// `CPython 3.11.7`, `Java 17.0.15`.
pub fn short_runtime(toolchain: Toolchain, text: &str) -> Option<String> {
    let words = || text.split_whitespace();
    match toolchain {
        Toolchain::Cargo => text
            .lines()
            .find_map(|l| l.strip_prefix("rustc "))
            .and_then(|rest| rest.split_whitespace().next())
            .map(|v| format!("rustc {v}")),
        Toolchain::Go => words()
            .find(|w| {
                w.strip_prefix("go")
                    .is_some_and(|v| v.starts_with(|c: char| c.is_ascii_digit()))
            })
            .map(str::to_string),
        Toolchain::Node => words()
            .find(|w| {
                w.strip_prefix('v')
                    .is_some_and(|v| v.starts_with(|c: char| c.is_ascii_digit()))
            })
            .map(|v| format!("node {v}")),
        Toolchain::Python3 => {
            let mut w = words();
            w.find(|w| *w == "Python")?;
            let v = w.next()?;
            let implementation = if text.contains("PyPy") {
                "PyPy"
            } else {
                "CPython"
            };
            Some(format!("{implementation} {v}"))
        }
        Toolchain::Maven => {
            // `java -version`: openjdk version "17.0.15" 2025-04-15; `mvn -v`:
            // Java version: 17.0.15, vendor: ...
            let quoted = text.lines().find_map(|l| {
                let rest = &l[l.find(" version \"")? + " version \"".len()..];
                Some(rest[..rest.find('"')?].to_string())
            });
            let mvn = || {
                text.lines()
                    .find_map(|l| l.trim().strip_prefix("Java version: "))
                    .and_then(|r| r.split(',').next())
                    .map(str::to_string)
            };
            quoted.or_else(mvn).map(|v| format!("Java {v}"))
        }
    }
}

/// The lockfile of a target, found but not yet read.
struct Lockfile {
    toolchain: Toolchain,
    /// `None`: no such file where the target's build would read it.
    path: Option<PathBuf>,
    /// Shown in messages: `targets/Cargo.lock`.
    shown: String,
}

impl Lockfile {
    fn of(target: &Target) -> Lockfile {
        let name = match target.toolchain {
            Toolchain::Cargo => "Cargo.lock",
            Toolchain::Go => "go.mod",
            Toolchain::Node => "package-lock.json",
            Toolchain::Python3 => "requirements.txt",
            Toolchain::Maven => "pom.xml",
        };
        let from_inputs = target
            .inputs
            .iter()
            .map(|i| target.dir.join(i))
            .find(|p| p.file_name().is_some_and(|n| n == name));
        let upwards = target
            .dir
            .ancestors()
            .take_while(|a| a.starts_with(&target.root) || *a == target.dir)
            .map(|a| a.join(name));
        let path = from_inputs.into_iter().chain(upwards).find(|p| p.is_file());
        let shown = shown(
            target,
            path.as_deref()
                .unwrap_or(&target.dir.join(name))
                .to_path_buf(),
        );
        Lockfile {
            toolchain: target.toolchain,
            path,
            shown,
        }
    }

    fn version(
        &self,
        name: &str,
        target: &Target,
        runtime: &Result<Found, NotRecorded>,
    ) -> Result<Found, NotRecorded> {
        if self.toolchain == Toolchain::Go && is_go_std(name) {
            return runtime.clone().map(|r| Found {
                version: r.version,
                source: "Go standard library".into(),
            });
        }
        let Some(path) = &self.path else {
            return Err(NotRecorded::NoLockfile {
                file: self.shown.clone(),
            });
        };
        let text = std::fs::read_to_string(path).map_err(|e| NotRecorded::Unreadable {
            file: self.shown.clone(),
            detail: e.to_string(),
        })?;
        let file = self.shown.as_str();
        let version = match self.toolchain {
            Toolchain::Cargo => cargo_lock(&text, file, &target.name, name),
            Toolchain::Go => go_mod(&text, file, name),
            Toolchain::Node => package_lock(&text, file, name),
            Toolchain::Python3 => requirements(&text, file, name),
            Toolchain::Maven => return maven(&text, file, target, name),
        }?;
        Ok(Found {
            version,
            source: self.shown.clone(),
        })
    }
}

/// A path as messages show it: from the targets folder's parent
/// (`targets/rust-actix/...`), `..` steps resolved without the file system.
fn shown(target: &Target, path: PathBuf) -> String {
    let clean = |path: &Path| {
        let mut out = PathBuf::new();
        for c in path.components() {
            match c {
                std::path::Component::ParentDir => {
                    out.pop();
                }
                std::path::Component::CurDir => {}
                other => out.push(other),
            }
        }
        out
    };
    let path = clean(&path);
    let base = clean(target.root.parent().unwrap_or(Path::new("")));
    path.strip_prefix(&base)
        .unwrap_or(&path)
        .display()
        .to_string()
}

/// Whether `name` is a package of Go's standard library: a folder of
/// `GOROOT/src`, GOROOT being the folder above the `bin/go` on PATH (links
/// followed, as distributions link /usr/bin/go into their GOROOT).
fn is_go_std(name: &str) -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let first = name.split('/').next().unwrap_or_default();
    !first.is_empty()
        && !first.contains('.')
        && crate::toolchain::find_on_path("go", &path)
            .and_then(|go| std::fs::canonicalize(go).ok())
            .and_then(|go| Some(go.parent()?.parent()?.join("src").join(name)))
            .is_some_and(|dir| dir.is_dir())
}

/// `name`'s version in a `Cargo.lock`. When the lockfile holds several
/// versions, the one the target's own package (`own`) depends on.
pub fn cargo_lock(text: &str, file: &str, own: &str, name: &str) -> Result<String, NotRecorded> {
    #[derive(serde::Deserialize)]
    struct Lock {
        #[serde(default)]
        package: Vec<Entry>,
    }
    #[derive(serde::Deserialize)]
    struct Entry {
        name: String,
        version: String,
        #[serde(default)]
        dependencies: Vec<String>,
    }
    let lock: Lock = toml::from_str(text).map_err(|e| NotRecorded::Unreadable {
        file: file.into(),
        detail: e.message().to_string(),
    })?;
    let versions: Vec<&str> = lock
        .package
        .iter()
        .filter(|p| p.name == name)
        .map(|p| p.version.as_str())
        .collect();
    match versions.as_slice() {
        [] => Err(NotRecorded::NoEntry {
            file: file.into(),
            entry: format!("package {name:?}"),
        }),
        [one] => Ok((*one).to_string()),
        several => {
            // The target's entry names a dependency "NAME VERSION" when
            // the lockfile holds more than one version of it.
            let named = lock
                .package
                .iter()
                .filter(|p| p.name == own)
                .flat_map(|p| &p.dependencies)
                .find_map(|d| {
                    let mut w = d.split_whitespace();
                    (w.next() == Some(name)).then(|| w.next()).flatten()
                });
            named
                .map(str::to_string)
                .ok_or_else(|| NotRecorded::Ambiguous {
                    file: file.into(),
                    name: name.into(),
                    versions: several.join(", "),
                })
        }
    }
}

/// `name`'s version in a `go.mod`'s `require` lines: a module path, or
/// the last element of one (`gin` for github.com/gin-gonic/gin, `pgx` for
/// github.com/jackc/pgx/v5).
pub fn go_mod(text: &str, file: &str, name: &str) -> Result<String, NotRecorded> {
    let mut in_block = false;
    let mut required = Vec::new();
    for line in text.lines() {
        let line = line.split("//").next().unwrap_or_default().trim();
        let spec = if in_block {
            if line == ")" {
                in_block = false;
                continue;
            }
            line
        } else if let Some(rest) = line.strip_prefix("require") {
            let rest = rest.trim();
            if rest == "(" {
                in_block = true;
                continue;
            }
            rest
        } else {
            continue;
        };
        let mut w = spec.split_whitespace();
        if let (Some(path), Some(version)) = (w.next(), w.next()) {
            required.push((path, version));
        }
    }
    let last = |path: &str| {
        let mut parts: Vec<&str> = path.split('/').collect();
        let major = |p: &str| {
            p.strip_prefix('v')
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        };
        if parts.len() > 1 && parts.last().is_some_and(|p| major(p)) {
            parts.pop();
        }
        parts.last().map(|p| p.to_string()).unwrap_or_default()
    };
    required
        .iter()
        .find(|(p, _)| *p == name)
        .or_else(|| required.iter().find(|(p, _)| last(p) == name))
        .map(|(_, v)| (*v).to_string())
        .ok_or_else(|| NotRecorded::NoEntry {
            file: file.into(),
            entry: format!("require of {name}"),
        })
}

/// `name`'s version in a `package-lock.json` (lockfile version 2 or 3):
/// `packages["node_modules/NAME"].version`.
pub fn package_lock(text: &str, file: &str, name: &str) -> Result<String, NotRecorded> {
    let lock: serde_json::Value =
        serde_json::from_str(text).map_err(|e| NotRecorded::Unreadable {
            file: file.into(),
            detail: e.to_string(),
        })?;
    let key = format!("node_modules/{name}");
    lock.get("packages")
        .and_then(|p| p.get(&key))
        .and_then(|p| p.get("version"))
        .and_then(serde_json::Value::as_str)
        .map(str::to_string)
        .ok_or(NotRecorded::NoEntry {
            file: file.into(),
            entry: key,
        })
}

/// `name`'s pinned version in a `requirements.txt` (`NAME==VERSION`,
/// names compared as PEP 503 normalises them: `Django` is `django`).
pub fn requirements(text: &str, file: &str, name: &str) -> Result<String, NotRecorded> {
    let norm = |s: &str| {
        let mut out = String::new();
        for c in s.trim().chars() {
            let c = c.to_ascii_lowercase();
            if matches!(c, '-' | '_' | '.') {
                if !out.ends_with('-') {
                    out.push('-');
                }
            } else {
                out.push(c);
            }
        }
        out
    };
    let want = norm(name);
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or_default().trim();
        if line.is_empty() || line.starts_with('-') {
            continue;
        }
        let end = line
            .find(|c: char| "=<>!~;[ @".contains(c))
            .unwrap_or(line.len());
        if norm(&line[..end]) != want {
            continue;
        }
        let rest = line[end..].trim_start();
        let rest = rest
            .strip_prefix('[')
            .and_then(|r| r.split_once(']'))
            .map_or(rest, |(_, r)| r.trim_start());
        return match rest.strip_prefix("==") {
            Some(v) => Ok(v
                .split(|c: char| c == ';' || c.is_whitespace())
                .next()
                .unwrap_or_default()
                .to_string()),
            None => Err(NotRecorded::NotPinned {
                file: file.into(),
                name: name.into(),
                line: line.into(),
            }),
        };
    }
    Err(NotRecorded::NoEntry {
        file: file.into(),
        entry: format!("{name}==VERSION line"),
    })
}

/// `name`'s version for a Maven target: the artifact Maven resolved into
/// the built jar (`BOOT-INF/lib/NAME-VERSION.jar`), else the pom's
/// `<parent>` when its artifactId is `name`.
fn maven(pom: &str, file: &str, target: &Target, name: &str) -> Result<Found, NotRecorded> {
    let jar = target
        .footprint
        .iter()
        .find(|f| f.ends_with(".jar"))
        .map(|f| target.dir.join(f));
    let mut missing = Vec::new();
    if let Some(jar) = jar {
        let jar_shown = shown(target, jar.clone());
        match jar_libs(&jar) {
            Ok(libs) => {
                if let Some((_, v)) = libs.iter().find(|(a, _)| a == name) {
                    return Ok(Found {
                        version: v.clone(),
                        source: jar_shown,
                    });
                }
                missing.push(format!(
                    "{jar_shown} has no BOOT-INF/lib/{name}-VERSION.jar"
                ));
            }
            Err(e) => missing.push(format!("{jar_shown} cannot be read ({e})")),
        }
    }
    if let Some((artifact, version)) = pom_parent(pom) {
        if artifact == name {
            return Ok(Found {
                version,
                source: format!("{file} <parent> {artifact}"),
            });
        }
    }
    missing.push(format!("{file} has no <parent> {name}"));
    Err(NotRecorded::Searched(missing.join(", and ")))
}

/// The `<parent>`'s artifactId and version in a pom.
pub fn pom_parent(pom: &str) -> Option<(String, String)> {
    let start = pom.find("<parent>")?;
    let block = &pom[start..start + pom[start..].find("</parent>")?];
    let tag = |t: &str| {
        let open = format!("<{t}>");
        let from = block.find(&open)? + open.len();
        let len = block[from..].find('<')?;
        Some(block[from..from + len].trim().to_string())
    };
    Some((tag("artifactId")?, tag("version")?))
}

/// Why a jar's library list could not be read.
#[derive(Debug, thiserror::Error)]
pub enum JarError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("not a zip file (no end of central directory)")]
    NotZip,
    #[error("its central directory is cut short")]
    Truncated,
}

/// The `(artifact, version)` of every `BOOT-INF/lib/*.jar` in a Spring
/// Boot jar, from the zip's central directory (names only, nothing
/// inflated). `spring-boot-3.5.16.jar` is `("spring-boot", "3.5.16")`:
/// the version starts at the first `-` followed by a digit.
pub fn jar_libs(jar: &Path) -> Result<Vec<(String, String)>, JarError> {
    Ok(zip_names(jar)?
        .iter()
        .filter_map(|n| n.strip_prefix("BOOT-INF/lib/")?.strip_suffix(".jar"))
        .filter_map(split_artifact)
        .collect())
}

fn split_artifact(file: &str) -> Option<(String, String)> {
    let b = file.as_bytes();
    let at = (0..b.len().saturating_sub(1)).find(|&i| b[i] == b'-' && b[i + 1].is_ascii_digit())?;
    Some((file[..at].to_string(), file[at + 1..].to_string()))
}

/// Every entry name in a zip file's central directory.
fn zip_names(path: &Path) -> Result<Vec<String>, JarError> {
    let mut f = std::fs::File::open(path)?;
    let len = f.metadata()?.len();
    // The end record is 22 bytes plus a comment of at most 64 KiB.
    let tail_len = len.min(22 + 65_535);
    f.seek(SeekFrom::Start(len - tail_len))?;
    let mut tail = vec![0u8; tail_len as usize];
    f.read_exact(&mut tail)?;
    let end = (0..tail.len().saturating_sub(21))
        .rev()
        .find(|&i| tail[i..i + 4] == [0x50, 0x4b, 0x05, 0x06])
        .ok_or(JarError::NotZip)?;
    let u16_at = |b: &[u8], i: usize| u16::from_le_bytes([b[i], b[i + 1]]) as usize;
    let u32_at = |b: &[u8], i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    let entries = u16_at(&tail, end + 10);
    let size = u32_at(&tail, end + 12) as usize;
    let offset = u64::from(u32_at(&tail, end + 16));
    f.seek(SeekFrom::Start(offset))?;
    let mut dir = vec![0u8; size];
    f.read_exact(&mut dir)?;
    let mut names = Vec::with_capacity(entries);
    let mut at = 0;
    for _ in 0..entries {
        if at + 46 > dir.len() || dir[at..at + 4] != [0x50, 0x4b, 0x01, 0x02] {
            return Err(JarError::Truncated);
        }
        let (n, extra, comment) = (
            u16_at(&dir, at + 28),
            u16_at(&dir, at + 30),
            u16_at(&dir, at + 32),
        );
        let name = dir.get(at + 46..at + 46 + n).ok_or(JarError::Truncated)?;
        names.push(String::from_utf8_lossy(name).into_owned());
        at += 46 + n + extra + comment;
    }
    Ok(names)
}

#[cfg(test)]
#[path = "provenance_tests.rs"]
mod tests;
