//! Broken study and target files through the real `shootout` binary: each
//! is a usage error (exit 2) naming its file, line and key, refused before
//! anything is built or measured (issue 39, item 7).

#![allow(clippy::unwrap_used)] // test helpers: a failed setup should panic

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

struct Tmp(PathBuf);

impl Tmp {
    fn new(name: &str) -> Tmp {
        let p = std::env::temp_dir().join(format!("shootout-input-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(p.join("studies")).unwrap();
        std::fs::create_dir_all(p.join("targets/bad")).unwrap();
        Tmp(p)
    }
}

impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A study of target `bad` with `extra` after its `targets` line (line 4).
fn study(tmp: &Path, name: &str, extra: &str) -> PathBuf {
    let text = format!(
        "name = \"{name}\"\ndescription = \"test only\"\nsource = \"tests\"\n\
         targets = [\"bad\"]\n{extra}\n[[scenario]]\nname = \"plaintext\"\n\
         load = {{ connections = 1, requests = 5 }}\n"
    );
    let path = tmp.join("studies").join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    path
}

/// A target manifest, complete but for `extra` (line 11 on).
fn manifest(tmp: &Path, extra: &str) -> PathBuf {
    let text = format!(
        "name = \"bad\"\nlanguage = \"sh\"\nframework = \"none\"\ndescription = \"test only\"\n\
         toolchain = \"go\"\nbuild = []\nrun = \"exit 1\"\nready = \"/plaintext\"\nfootprint = []\ninputs = []\n{extra}"
    );
    let path = tmp.join("targets/bad/target.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn shootout(tmp: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_shootout"))
        .args(args)
        .arg("--targets-dir")
        .arg(tmp.join("targets"))
        .env("SHOOTOUT_LOCK", tmp.join("lock"))
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn run(tmp: &Path, study: &Path) -> Output {
    let db = tmp.join("t.db");
    shootout(
        tmp,
        &["run", study.to_str().unwrap(), "--db", db.to_str().unwrap()],
    )
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_warmup_without_its_unit_is_refused_with_file_line_and_key() {
    let tmp = Tmp::new("warmup");
    manifest(&tmp.0, "");
    for (written, shown) in [("5", "5"), ("\"5\"", "5"), ("2.5", "2.5")] {
        let s = study(&tmp.0, "w", &format!("warmup = {written}"));
        let out = run(&tmp.0, &s);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{written}: {err}");
        let at = format!("{}:5: key `warmup`", s.display());
        assert!(err.contains(&at), "{at} not in {err}");
        let why = format!("'{shown}' needs a unit, e.g. \"{shown}s\"");
        assert!(err.contains(&why), "{why} not in {err}");
    }
    // Zero needs none; the study's other durations are held alike.
    let s = study(&tmp.0, "t", "timeout = 5");
    let err = stderr(&run(&tmp.0, &s));
    assert!(
        err.contains("key `timeout`") && err.contains("needs a unit"),
        "{err}"
    );
}

#[test]
fn studies_exits_2_on_a_broken_study_as_run_does() {
    let tmp = Tmp::new("studies");
    manifest(&tmp.0, "");
    study(&tmp.0, "good", "warmup = \"1s\"");
    let broken = study(&tmp.0, "broken", "warmup = 5");
    let dir = tmp.0.join("studies");
    let listed = shootout(&tmp.0, &["studies", "--studies-dir", dir.to_str().unwrap()]);
    let ran = run(&tmp.0, &broken);
    assert_eq!(listed.status.code(), Some(2), "{}", stderr(&listed));
    assert_eq!(ran.status.code(), Some(2), "{}", stderr(&ran));
    let line = |out: &Output| {
        stderr(out)
            .lines()
            .find(|l| l.contains("broken.toml"))
            .map(str::to_string)
            .unwrap_or_default()
    };
    assert!(
        line(&listed).contains(":5: key `warmup`"),
        "{}",
        stderr(&listed)
    );
    assert_eq!(line(&listed), line(&ran), "the same message");
    // The good study is still listed.
    assert!(
        String::from_utf8_lossy(&listed.stdout).contains("good"),
        "{}",
        String::from_utf8_lossy(&listed.stdout)
    );
}

#[test]
fn a_bad_warmup_min_in_a_manifest_is_a_usage_error_with_file_line_and_key() {
    let tmp = Tmp::new("manifest");
    let file = manifest(&tmp.0, "warmup_min = \"soon\"\n");
    let s = study(&tmp.0, "m", "warmup = \"1s\"");
    let out = run(&tmp.0, &s);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let at = format!("{}:11: key `warmup_min`: 'soon'", file.display());
    assert!(err.contains(&at), "{at} not in {err}");
    assert!(!err.contains("build"), "nothing was built: {err}");
}

/// Holds the machine lock file `path` (as a measuring shootout would)
/// while the returned file is open.
fn hold_lock(path: &Path) -> std::fs::File {
    use std::os::fd::AsRawFd;
    let file = std::fs::File::create(path).unwrap();
    // SAFETY: flock on a descriptor this function owns.
    assert_eq!(unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) }, 0);
    file
}

#[test]
fn cpus_the_machine_cannot_give_are_refused_before_the_lock() {
    let tmp = Tmp::new("cpus");
    manifest(&tmp.0, "");
    let _held = hold_lock(&tmp.0.join("lock"));
    let allowed = shootout_engine::affinity::allowed_cpus();
    let db = tmp.0.join("t.db");
    let run_no_wait = |s: &Path| {
        let args = [
            "run",
            s.to_str().unwrap(),
            "--db",
            db.to_str().unwrap(),
            "--no-wait",
        ];
        shootout(&tmp.0, &args)
    };
    // A quota above every CPU there is: file, line 5 and key, at once.
    let quota = allowed.len() + 1;
    let s = study(&tmp.0, "q", &format!("resources = {{ cpus = {quota} }}"));
    let out = run_no_wait(&s);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let at = format!(
        "{}:5: key `resources.cpus`: a quota of {quota} CPUs is more than the {} CPU(s) this machine",
        s.display(),
        allowed.len()
    );
    assert!(err.contains(&at), "{at} not in {err}");
    assert!(
        !err.contains("machine lock"),
        "refused before the lock: {err}"
    );
    // Above the one CPU the servers are pinned to, within the machine:
    // said, with its place, and the run goes on (to the held lock).
    if allowed.len() >= 2 {
        let c = allowed[0];
        let split =
            format!("cpus = {{ server = [{c}], generator = [{c}] }}\nresources = {{ cpus = 1.5 }}");
        let s = study(&tmp.0, "over", &split);
        let err = stderr(&run_no_wait(&s));
        let at = format!(
            "warning: {}:6: key `resources.cpus`: a quota of 1.5 CPUs is more than the 1 CPU(s) the servers run on here ([{c}])",
            s.display()
        );
        assert!(err.contains(&at), "{at} not in {err}");
        assert!(err.contains("machine lock"), "{err}");
    } else {
        shootout_testkit::machine("one CPU: no quota can be above the servers' CPUs alone");
    }
    // A split naming a CPU this process may not use, likewise.
    let s = study(
        &tmp.0,
        "split",
        "cpus = { server = [4000], generator = [0] }",
    );
    let err = stderr(&run_no_wait(&s));
    assert!(err.contains("cpus: CPU 4000 is not available"), "{err}");
    assert!(
        !err.contains("machine lock"),
        "refused before the lock: {err}"
    );
    // A quota that fits goes on to the lock, which is held.
    let s = study(&tmp.0, "fits", "resources = { cpus = 0.5 }");
    let err = stderr(&run_no_wait(&s));
    assert!(err.contains("machine lock"), "{err}");
}
