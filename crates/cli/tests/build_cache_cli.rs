//! The build cache end to end, on real Go builds: a fresh clone restores
//! what another clone built, without running `go build`, and the restored
//! server passes `verify`; one byte changed in one target's source rebuilds
//! that target and no other; another toolchain version is a miss. A shim
//! `go` first on PATH logs every call, so "no build ran" is observed, not
//! inferred from the output's wording.

#![allow(clippy::unwrap_used)]

mod common;

use common::{go_nethttp_copy, stderr, stdout, Tmp};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

/// A clone's targets folder with two Go targets.
fn clone(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    go_nethttp_copy(dir, "go-one", |s| s.to_string());
    go_nethttp_copy(dir, "go-two", |s| s.to_string());
}

/// `go` that logs its arguments and runs the real one, or, when
/// FAKE_GO_VERSION is set, answers `go version` with it.
fn shim(bin: &Path, log: &Path) {
    let real = shootout_testkit::which("go").unwrap();
    std::fs::create_dir_all(bin).unwrap();
    let script = format!(
        "#!/bin/sh\necho \"$*\" >> '{}'\n\
         if [ \"$1\" = version ] && [ -n \"$FAKE_GO_VERSION\" ]; then echo \"$FAKE_GO_VERSION\"; exit 0; fi\n\
         exec '{}' \"$@\"\n",
        log.display(),
        real.display()
    );
    let go = bin.join("go");
    std::fs::write(&go, script).unwrap();
    std::fs::set_permissions(&go, std::fs::Permissions::from_mode(0o755)).unwrap();
}

struct Env {
    _tmp: Tmp,
    cache: std::path::PathBuf,
    bin: std::path::PathBuf,
    log: std::path::PathBuf,
    root: std::path::PathBuf,
}

impl Env {
    fn shootout(&self, args: &[&str], targets: &Path, fake: Option<&str>) -> Output {
        let path = format!("{}:{}", self.bin.display(), std::env::var("PATH").unwrap());
        let mut c = Command::new(env!("CARGO_BIN_EXE_shootout"));
        c.args(args)
            .arg("--targets-dir")
            .arg(targets)
            .env("SHOOTOUT_CACHE_DIR", &self.cache)
            .env("PATH", path)
            .env_remove("FAKE_GO_VERSION");
        if let Some(v) = fake {
            c.env("FAKE_GO_VERSION", v);
        }
        c.output().unwrap()
    }

    /// `shootout build` in `targets`: its stdout, and the `go build`
    /// calls it made (the log is emptied each time).
    fn build(&self, targets: &Path, fake: Option<&str>) -> (String, Vec<String>) {
        let _ = std::fs::remove_file(&self.log);
        let out = self.shootout(&["build"], targets, fake);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let calls = std::fs::read_to_string(&self.log).unwrap_or_default();
        let builds = calls
            .lines()
            .filter(|l| l.starts_with("build"))
            .map(str::to_string)
            .collect();
        (stdout(&out), builds)
    }
}

fn env() -> Option<Env> {
    if !shootout_testkit::tools(&["go"]) {
        return None;
    }
    let tmp = Tmp::new("build-cache");
    let root = tmp.0.clone();
    let e = Env {
        cache: root.join("cache"),
        bin: root.join("bin"),
        log: root.join("go-calls.log"),
        root,
        _tmp: tmp,
    };
    shim(&e.bin, &e.log);
    Some(e)
}

impl Env {
    /// How many builds the cache holds.
    fn entries(&self) -> usize {
        std::fs::read_dir(self.cache.join("builds"))
            .unwrap()
            .flatten()
            .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
            .count()
    }
}

fn line<'a>(out: &'a str, target: &str) -> &'a str {
    out.lines()
        .find(|l| l.starts_with(&format!("{target}: ")))
        .unwrap_or_else(|| panic!("no line for {target} in:\n{out}"))
}

#[test]
fn a_clone_restores_and_one_changed_byte_rebuilds_one_target() {
    let Some(e) = env() else { return };
    let a = e.root.join("a");
    let b = e.root.join("b");
    clone(&a);
    clone(&b);

    let (out, builds) = e.build(&a, None);
    assert!(line(&out, "go-one").contains("built in"), "{out}");
    assert!(
        line(&out, "go-one").contains("stored in the build cache"),
        "{out}"
    );
    assert_eq!(builds.len(), 2, "{builds:?}");

    // Another clone: both restored, no `go build` at all.
    let (out, builds) = e.build(&b, None);
    assert!(
        line(&out, "go-one").contains("restored from the build cache"),
        "{out}"
    );
    assert!(
        line(&out, "go-two").contains("restored from the build cache"),
        "{out}"
    );
    assert!(builds.is_empty(), "a hit ran {builds:?}");
    assert_eq!(
        std::fs::read(b.join("go-one/bin/go-one")).unwrap(),
        std::fs::read(a.join("go-one/bin/go-one")).unwrap()
    );
    // What was restored is a working server under the contract.
    let verified = e.shootout(
        &["verify", "--no-build", "--no-database", "go-one"],
        &b,
        None,
    );
    assert_eq!(
        verified.status.code(),
        Some(0),
        "{}\n{}",
        stdout(&verified),
        stderr(&verified)
    );

    // One byte of one target's source, same length: that target alone.
    let main = b.join("go-one/main.go");
    let mut bytes = std::fs::read(&main).unwrap();
    assert_eq!(bytes.pop(), Some(b'\n'));
    bytes.push(b' ');
    std::fs::write(&main, &bytes).unwrap();
    let (out, builds) = e.build(&b, None);
    assert!(line(&out, "go-one").contains("built in"), "{out}");
    assert_eq!(line(&out, "go-two"), "go-two: up to date", "{out}");
    assert_eq!(builds.len(), 1, "{builds:?}");
    assert_eq!(e.entries(), 3, "the changed source is a third build");
}

#[test]
fn another_toolchain_version_is_a_miss_in_the_cache_and_the_checkout() {
    let Some(e) = env() else { return };
    let a = e.root.join("a");
    clone(&a);
    let (_, builds) = e.build(&a, None);
    assert_eq!(builds.len(), 2, "{builds:?}");
    let (out, builds) = e.build(&a, None);
    assert_eq!(line(&out, "go-one"), "go-one: up to date", "{out}");
    assert!(builds.is_empty(), "{builds:?}");

    // The same sources, another Go: both rebuilt, in this checkout...
    let fake = Some("go version go1.0.0-fake linux/amd64");
    let (out, builds) = e.build(&a, fake);
    assert!(line(&out, "go-one").contains("built in"), "{out}");
    assert_eq!(builds.len(), 2, "{builds:?}");
    assert_eq!(e.entries(), 4, "another Go's builds are other entries");
    // ...and a fresh clone with the fake Go finds the fake Go's build, not
    // the real one's.
    let c = e.root.join("c");
    clone(&c);
    let (out, builds) = e.build(&c, fake);
    assert!(line(&out, "go-one").contains("restored"), "{out}");
    assert!(builds.is_empty(), "{builds:?}");
    let (out, _) = e.build(&c, None);
    assert!(line(&out, "go-one").contains("restored"), "{out}");

    // --no-cache builds although the target is up to date and the cache
    // holds it.
    let (out, _) = e.build(&c, None);
    assert_eq!(line(&out, "go-one"), "go-one: up to date", "{out}");
    let _ = std::fs::remove_file(&e.log);
    let out = e.shootout(&["build", "--no-cache", "go-one"], &c, None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("built in"), "{}", stdout(&out));
    assert!(stdout(&out).contains("build cache off"), "{}", stdout(&out));
    let calls = std::fs::read_to_string(&e.log).unwrap_or_default();
    let builds = calls.lines().filter(|l| l.starts_with("build")).count();
    assert_eq!(builds, 1, "{calls}");
}
