//! Reading `targets/<name>/target.toml` manifests, finding every target under
//! a targets directory, and locating that directory in the first place
//! (flag, `SHOOTOUT_TARGETS`, or a walk up from the working directory).
//! Manifest errors name the file, the key and the line so a target's
//! author can fix them without guessing.

use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::protocols::{Protocol, Protocols, WsPlace};
use crate::toolchain::Toolchain;

/// The manifest file name inside each target folder.
pub const MANIFEST: &str = "target.toml";

/// One reference server, as declared by its manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub name: String,
    pub language: String,
    pub framework: String,
    pub description: String,
    pub toolchain: Toolchain,
    /// Shell commands run in `dir`, in order.
    pub build: Vec<String>,
    /// One shell command run in `dir` with `PORT` and `HOST` set.
    pub run: String,
    /// Path polled with GET until it answers 200.
    pub ready: String,
    /// Paths (relative to `dir`) whose total size is the footprint.
    pub footprint: Vec<String>,
    /// Paths (relative to `dir`) the build depends on.
    pub inputs: Vec<String>,
    /// Set for servers whose workers block per request.
    pub sync_workers: Option<u32>,
    /// What it serves besides cleartext HTTP/1.1 (`protocols`; absent:
    /// nothing else).
    pub protocols: Protocols,
    /// Where `/ws` is served (`ws_port = true`: a second process on
    /// `WS_PORT`; targets/SPEC.md "WebSocket").
    pub ws_place: WsPlace,
    /// Load time its runtime needs after a start before any measurement
    /// (`warmup_min`; a JIT's later tiers can sit on a plateau longer than
    /// any steady-state rule can see past): the runner loads it at least
    /// this long, warm-up and earlier levels of the same start counted.
    pub warmup_min: Option<Duration>,
    /// The packages whose resolved versions each run records
    /// (`provenance`; absent: the framework's, crate::provenance).
    pub provenance: Option<Vec<String>>,
    /// The target's folder, `targets/<name>`.
    pub dir: PathBuf,
    /// The targets directory that holds `dir` (and `.build/`).
    pub root: PathBuf,
}

impl Target {
    /// A target with no manifest: `run` started by the shell in `dir`, with
    /// nothing to build, ready at `/`, in no language's toolchain (Python 3's
    /// stands in, being on every machine that runs the shipped targets).
    /// The one literal the tests' fake and borrowed servers (nginx, a busy
    /// loop) start from; change a field with struct update syntax.
    pub fn command(name: &str, dir: &Path, run: &str) -> Target {
        Target {
            name: name.into(),
            language: "sh".into(),
            framework: "none".into(),
            description: String::new(),
            toolchain: Toolchain::Python3,
            build: vec![],
            run: run.into(),
            ready: "/".into(),
            footprint: vec![],
            inputs: vec![],
            sync_workers: None,
            warmup_min: None,
            provenance: None,
            protocols: Protocols::default(),
            ws_place: WsPlace::Port,
            dir: dir.to_path_buf(),
            root: dir.to_path_buf(),
        }
    }

    /// Where build and server logs and stamps live: `targets/.build/`.
    pub fn build_dir(&self) -> PathBuf {
        self.root.join(".build")
    }

    /// The build log, `targets/.build/<name>.log`.
    pub fn build_log(&self) -> PathBuf {
        self.build_dir().join(format!("{}.log", self.name))
    }

    /// The build stamp, `targets/.build/<name>.stamp`.
    pub fn stamp_path(&self) -> PathBuf {
        self.build_dir().join(format!("{}.stamp", self.name))
    }

    /// A log for one server start, `targets/.build/<name>.<what>.log`.
    pub fn server_log(&self, what: &str) -> PathBuf {
        self.build_dir().join(format!("{}.{what}.log", self.name))
    }
}

/// Why a manifest could not be read; names the file, the key and the line.
pub type ManifestError = shootout_contract::located::FileError;

/// The manifest as written; unknown keys are tolerated so that newer
/// manifests still load in older binaries.
#[derive(Debug, Deserialize)]
struct Raw {
    name: String,
    language: String,
    framework: String,
    description: String,
    toolchain: Toolchain,
    build: Vec<String>,
    run: String,
    ready: String,
    footprint: Vec<String>,
    inputs: Vec<String>,
    sync_workers: Option<u32>,
    protocols: Option<Vec<Protocol>>,
    #[serde(default)]
    ws_port: bool,
    warmup_min: Option<String>,
    provenance: Option<Vec<String>>,
}

/// Reads and validates `dir/target.toml`.
pub fn load(dir: &Path) -> Result<Target, ManifestError> {
    let file = dir.join(MANIFEST);
    let err = |key: Option<&str>, line: Option<usize>, message: String| ManifestError {
        file: file.clone(),
        key: key.map(str::to_owned),
        line,
        message,
    };
    let text = std::fs::read_to_string(&file).map_err(|e| err(None, None, e.to_string()))?;
    let raw: Raw = toml::from_str(&text).map_err(|e| {
        let (key, line) = locate_de_error(&text, &e);
        err(key.as_deref(), line, e.message().to_owned())
    })?;
    let folder = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if let Err((key, msg)) = check_fields(&raw, &folder) {
        return Err(err(Some(key), line_of_key(&text, key), msg));
    }
    let protocols = match &raw.protocols {
        None => Protocols::default(),
        Some(list) => Protocols::from_list(list).map_err(|e| {
            let line = line_of_key(&text, "protocols");
            err(Some("protocols"), line, e.to_string())
        })?,
    };
    if raw.ws_port && !protocols.ws {
        let msg = "is true but \"ws\" is not in protocols: only a target that serves /ws \
                   can serve it on WS_PORT"
            .into();
        return Err(err(Some("ws_port"), line_of_key(&text, "ws_port"), msg));
    }
    let ws_place = if raw.ws_port {
        WsPlace::OwnPort
    } else {
        WsPlace::Port
    };
    let warmup_min = warmup_min(raw.warmup_min.as_deref()).map_err(|e| {
        err(
            Some("warmup_min"),
            line_of_key(&text, "warmup_min"),
            e.to_string(),
        )
    })?;
    let root = dir.parent().map(Path::to_path_buf).unwrap_or_default();
    Ok(Target {
        name: raw.name,
        language: raw.language,
        framework: raw.framework,
        description: raw.description,
        toolchain: raw.toolchain,
        build: raw.build,
        run: raw.run,
        ready: raw.ready,
        footprint: raw.footprint,
        inputs: raw.inputs,
        sync_workers: raw.sync_workers,
        protocols,
        ws_place,
        warmup_min,
        provenance: raw.provenance,
        dir: dir.to_path_buf(),
        root,
    })
}

/// The checks of single keys: the name is the folder's, `run` and `ready`
/// are not empty, `ready` is a path, `sync_workers` is at least 1. The
/// key and message of the first that fails.
fn check_fields(raw: &Raw, folder: &str) -> Result<(), (&'static str, String)> {
    if raw.name != folder {
        let msg = format!(
            "is {:?} but the folder is {folder:?}; they must match",
            raw.name
        );
        return Err(("name", msg));
    }
    for (key, value) in [("run", &raw.run), ("ready", &raw.ready)] {
        if value.trim().is_empty() {
            return Err((key, "must not be empty".into()));
        }
    }
    if !raw.ready.starts_with('/') {
        let msg = format!("{:?} must be a path starting with '/'", raw.ready);
        return Err(("ready", msg));
    }
    if raw.sync_workers == Some(0) {
        return Err(("sync_workers", "must be at least 1".into()));
    }
    Ok(())
}

/// `warmup_min` as written ("45s"): a duration of at most ten minutes.
fn warmup_min(text: Option<&str>) -> Result<Option<Duration>, WarmupMinError> {
    let Some(text) = text else {
        return Ok(None);
    };
    let d = shootout_engine::units::parse_duration(text)?;
    if d > Duration::from_secs(600) {
        return Err(WarmupMinError::TooLong(text.to_owned()));
    }
    Ok(Some(d))
}

/// Why `warmup_min` is refused: the message for the key.
#[derive(Debug, thiserror::Error)]
enum WarmupMinError {
    #[error(transparent)]
    Duration(#[from] shootout_engine::units::UnitError),
    #[error("{0:?} is more than ten minutes")]
    TooLong(String),
}

/// Finds the key and line of a deserialisation error. A missing key has no
/// span worth reporting (toml points at the whole table), so its name is
/// taken from the message; other errors point at the offending value.
fn locate_de_error(text: &str, e: &toml::de::Error) -> (Option<String>, Option<usize>) {
    if let Some(key) = backticked_after(e.message(), "missing field ") {
        return (Some(key), None);
    }
    let Some(span) = e.span() else {
        return (None, None);
    };
    let line = shootout_contract::located::line_at(text, span.start);
    let key = text
        .lines()
        .nth(line - 1)
        .and_then(|l| l.split_once('='))
        .map(|(k, _)| k.trim().trim_matches('"').to_owned())
        .filter(|k| !k.is_empty() && !k.starts_with('['));
    (key, Some(line))
}

fn backticked_after(message: &str, prefix: &str) -> Option<String> {
    let rest = &message[message.find(prefix)? + prefix.len()..];
    let rest = rest.strip_prefix('`')?;
    Some(rest[..rest.find('`')?].to_owned())
}

/// 1-based line of a top-level `key = ...` line, if present.
fn line_of_key(text: &str, key: &str) -> Option<usize> {
    text.lines()
        .position(|l| {
            l.split_once('=')
                .is_some_and(|(k, _)| k.trim().trim_matches('"') == key)
        })
        .map(|i| i + 1)
}

/// What `discover` found: loadable targets (sorted by name) and the
/// manifests that failed, kept apart so one broken target does not hide
/// the others.
#[derive(Debug, Default)]
pub struct Discovered {
    pub targets: Vec<Target>,
    pub broken: Vec<ManifestError>,
}

/// Lists the subfolders of `targets_dir` that hold a `target.toml`.
pub fn discover(targets_dir: &Path) -> std::io::Result<Discovered> {
    let mut dirs = Vec::new();
    for entry in std::fs::read_dir(targets_dir)? {
        let path = entry?.path();
        if path.is_dir() && path.join(MANIFEST).is_file() {
            dirs.push(path);
        }
    }
    dirs.sort();
    let mut found = Discovered::default();
    for dir in dirs {
        match load(&dir) {
            Ok(t) => found.targets.push(t),
            Err(e) => found.broken.push(e),
        }
    }
    found.targets.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(found)
}

/// Environment variable naming the targets directory.
pub const TARGETS_ENV: &str = "SHOOTOUT_TARGETS";

/// Why no targets directory was found.
#[derive(Debug, thiserror::Error)]
pub enum LocateError {
    #[error("targets directory {} does not exist", .0.display())]
    Missing(PathBuf),
    #[error("no targets/SPEC.md found above {}; pass --targets-dir or set {TARGETS_ENV}", .0.display())]
    NotFound(PathBuf),
    #[error("cannot read the working directory: {0}")]
    Cwd(std::io::Error),
}

/// Locates the targets directory: the flag if given, else `SHOOTOUT_TARGETS`,
/// else the first `targets/` holding `SPEC.md` walking up from the cwd.
pub fn locate_targets_dir(flag: Option<&Path>) -> Result<PathBuf, LocateError> {
    let env = std::env::var_os(TARGETS_ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    let cwd = std::env::current_dir().map_err(LocateError::Cwd)?;
    locate_from(flag, env.as_deref(), &cwd)
}

fn locate_from(
    flag: Option<&Path>,
    env: Option<&Path>,
    cwd: &Path,
) -> Result<PathBuf, LocateError> {
    if let Some(dir) = flag.or(env) {
        if !dir.is_dir() {
            return Err(LocateError::Missing(dir.to_path_buf()));
        }
        return Ok(dir.to_path_buf());
    }
    cwd.ancestors()
        .map(|a| a.join("targets"))
        .find(|t| t.join("SPEC.md").is_file())
        .ok_or_else(|| LocateError::NotFound(cwd.to_path_buf()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tempdir;

    const GOOD: &str = r#"name = "demo"
language = "rust"
framework = "none"
description = "a demo"
toolchain = "cargo"
build = ["true"]
run = "exec sleep 100"
ready = "/plaintext"
footprint = ["Cargo.toml"]
inputs = ["src"]
future_key = 1
"#;

    fn write(text: &str) -> (tempdir::Dir, PathBuf) {
        let root = tempdir::Dir::new();
        let dir = root.path().join("demo");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(MANIFEST), text).unwrap();
        (root, dir)
    }

    #[test]
    fn loads_a_good_manifest_and_ignores_unknown_keys() {
        let (_root, dir) = write(GOOD);
        let t = load(&dir).unwrap();
        assert_eq!(t.name, "demo");
        assert_eq!(t.toolchain, Toolchain::Cargo);
        assert_eq!(t.sync_workers, None);
        assert_eq!(t.protocols, Protocols::default());
        assert_eq!(t.build_log(), dir.parent().unwrap().join(".build/demo.log"));
    }

    #[test]
    fn missing_key_is_named() {
        let (_root, dir) = write(&GOOD.replace("run = \"exec sleep 100\"\n", ""));
        let e = load(&dir).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("run"));
        assert!(e.to_string().contains("target.toml"), "{e}");
    }

    #[test]
    fn wrong_type_names_key_and_line() {
        let (_root, dir) = write(&GOOD.replace("build = [\"true\"]", "build = \"true\""));
        let e = load(&dir).unwrap_err();
        assert_eq!((e.key.as_deref(), e.line), (Some("build"), Some(6)), "{e}");
    }

    #[test]
    fn warmup_min_is_a_duration_named_with_its_line_when_wrong() {
        let (_root, dir) = write(&format!("{GOOD}warmup_min = \"45s\"\n"));
        assert_eq!(
            load(&dir).unwrap().warmup_min,
            Some(Duration::from_secs(45))
        );
        let (_root, dir) = write(&format!("{GOOD}warmup_min = \"soon\"\n"));
        let e = load(&dir).unwrap_err();
        let line = GOOD.lines().count() + 1;
        assert_eq!(
            (e.key.as_deref(), e.line),
            (Some("warmup_min"), Some(line)),
            "{e}"
        );
        let (_root, dir) = write(&format!("{GOOD}warmup_min = \"1h\"\n"));
        assert!(load(&dir).unwrap_err().to_string().contains("ten minutes"));
        let (_root, dir) = write(GOOD);
        assert_eq!(load(&dir).unwrap().warmup_min, None);
    }

    #[test]
    fn ws_port_needs_ws_and_places_the_echo_on_its_own_port() {
        let (_root, dir) = write(GOOD);
        assert_eq!(load(&dir).unwrap().ws_place, WsPlace::Port);
        let ws = format!("{GOOD}protocols = [\"http/1.1\", \"ws\"]\nws_port = true\n");
        let (_root, dir) = write(&ws);
        let t = load(&dir).unwrap();
        assert!(t.protocols.ws);
        assert_eq!(t.ws_place, WsPlace::OwnPort);
        let (_root, dir) = write(&format!("{GOOD}ws_port = true\n"));
        let e = load(&dir).unwrap_err();
        assert_eq!(
            (e.key.as_deref(), e.line),
            (Some("ws_port"), Some(GOOD.lines().count() + 1)),
            "{e}"
        );
        assert!(e.to_string().contains("\"ws\" is not in protocols"), "{e}");
    }

    #[test]
    fn provenance_lists_packages_and_is_optional() {
        let (_root, dir) = write(&format!("{GOOD}provenance = [\"actix-web\", \"tokio\"]\n"));
        let names = load(&dir).unwrap().provenance;
        assert_eq!(names, Some(vec!["actix-web".into(), "tokio".into()]));
        let (_root, dir) = write(GOOD);
        assert_eq!(load(&dir).unwrap().provenance, None);
        let (_root, dir) = write(&format!("{GOOD}provenance = \"actix-web\"\n"));
        let e = load(&dir).unwrap_err();
        let line = GOOD.lines().count() + 1;
        assert_eq!((e.key.as_deref(), e.line), (Some("provenance"), Some(line)));
    }

    #[test]
    fn unknown_toolchain_names_key_and_line() {
        let (_root, dir) = write(&GOOD.replace("\"cargo\"", "\"make\""));
        let e = load(&dir).unwrap_err();
        assert_eq!(
            (e.key.as_deref(), e.line),
            (Some("toolchain"), Some(5)),
            "{e}"
        );
    }

    #[test]
    fn protocols_are_read_and_checked() {
        let with = |list: &str| write(&format!("{GOOD}protocols = {list}\n"));
        let (_root, dir) = with(r#"["http/1.1", "tls", "h2"]"#);
        let t = load(&dir).unwrap();
        assert_eq!(
            (t.protocols.tls, t.protocols.mtls, t.protocols.h2),
            (true, false, true)
        );
        // An unknown value names the file, the key and the line.
        let (_root, dir) = with(r#"["http/1.1", "h3"]"#);
        let e = load(&dir).unwrap_err();
        assert_eq!(
            (e.key.as_deref(), e.line),
            (Some("protocols"), Some(12)),
            "{e}"
        );
        assert!(
            e.to_string().contains("target.toml") && e.message.contains("h3"),
            "{e}"
        );
        let (_root, dir) = with(r#"["http/1.1", "mtls"]"#);
        let e = load(&dir).unwrap_err();
        assert_eq!(
            (e.key.as_deref(), e.line),
            (Some("protocols"), Some(12)),
            "{e}"
        );
        assert!(e.message.contains("without \"tls\""), "{e}");
    }

    #[test]
    fn name_must_match_folder() {
        let (_root, dir) = write(&GOOD.replace("name = \"demo\"", "name = \"other\""));
        let e = load(&dir).unwrap_err();
        assert_eq!((e.key.as_deref(), e.line), (Some("name"), Some(1)), "{e}");
    }

    #[test]
    fn discover_sorts_and_separates_broken() {
        let (root, _dir) = write(GOOD);
        let bad = root.path().join("broken");
        std::fs::create_dir_all(&bad).unwrap();
        std::fs::write(bad.join(MANIFEST), "name = ").unwrap();
        std::fs::create_dir_all(root.path().join("data")).unwrap();
        let found = discover(root.path()).unwrap();
        let names: Vec<_> = found.targets.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["demo"]);
        assert_eq!(found.broken.len(), 1);
        assert_eq!(found.broken[0].line, Some(1));
    }

    #[test]
    fn locate_walks_up_to_spec() {
        let root = tempdir::Dir::new();
        let targets = root.path().join("targets");
        let deep = root.path().join("a/b");
        std::fs::create_dir_all(&targets).unwrap();
        std::fs::create_dir_all(&deep).unwrap();
        assert!(locate_from(None, None, &deep).is_err());
        std::fs::write(targets.join("SPEC.md"), "").unwrap();
        assert_eq!(locate_from(None, None, &deep).unwrap(), targets);
        assert_eq!(locate_from(Some(&deep), None, root.path()).unwrap(), deep);
        assert!(locate_from(Some(&root.path().join("nope")), None, &deep).is_err());
    }
}
