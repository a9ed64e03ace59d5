//! `shootout run --kubernetes` without a cluster: its flags are checked
//! before anything starts, a study the Kubernetes place cannot run yet is
//! refused before a run is recorded, and a cluster that does not answer
//! fails the run (recorded as failed) with kubectl's own words, exit 2.
//! The runs on a real cluster are the manual step of
//! deploy/kubernetes/README.md ("A whole study on Kubernetes").

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("shootout-kube-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `shootout run ARGS` with its own results store and machine lock.
fn run(d: &Path, args: &[&str], kubeconfig: Option<&Path>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_shootout"));
    c.arg("run")
        .args(args)
        .arg("--db")
        .arg(d.join("k.db"))
        .arg("--quiet")
        .env("SHOOTOUT_LOCK", d.join("lock"))
        .env_remove("KUBECONFIG");
    if let Some(k) = kubeconfig {
        c.env("KUBECONFIG", k);
    }
    c.output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn bad_kubernetes_flags_are_refused_before_anything_starts() {
    let d = dir("flags");
    let o = run(&d, &["default", "--namespace", "x"], None);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--kubernetes"), "{}", stderr(&o));

    let o = run(
        &d,
        &[
            "default",
            "--kubernetes",
            "--kubeconfig",
            "/nonexistent/kubeconfig",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--kubeconfig /nonexistent/kubeconfig: no such file"),
        "{}",
        stderr(&o)
    );

    let o = run(
        &d,
        &["default", "--kubernetes", "--image", "localhost/x:e2e"],
        None,
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("put {target} where its name goes"),
        "{}",
        stderr(&o)
    );
    assert!(
        !d.join("k.db").exists(),
        "a store was made for a refused command"
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_study_it_cannot_run_yet_is_refused_before_a_run_is_recorded() {
    let d = dir("tls");
    let o = run(&d, &["tls", "--quick", "--kubernetes"], None);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("kubernetes: TLS levels are not run on Kubernetes yet"),
        "{}",
        stderr(&o)
    );
    if d.join("k.db").exists() {
        let store = shootout_store::Store::open_existing(d.join("k.db")).unwrap();
        assert!(store.runs().unwrap().is_empty(), "a run was recorded");
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn capacity_searches_with_generator_pods_are_refused_and_shards_need_kubernetes() {
    let d = dir("capacity");
    let o = run(&d, &["capacity", "--quick", "--kubernetes"], None);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("capacity searches and cost levels with generator pods (--shards 0"),
        "{}",
        stderr(&o)
    );
    let o = run(&d, &["default", "--shards", "2"], None);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--kubernetes"), "{}", stderr(&o));
    let o = run(&d, &["default", "--kubernetes", "--shards", "65"], None);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("65"), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&d);
}

/// A kubeconfig whose API server does not listen: kubectl fails at once
/// (or is not installed: then that is the error), the run is failed.
#[test]
fn a_cluster_that_does_not_answer_fails_the_run_with_kubectls_words() {
    let d = dir("down");
    let port = shootout_servers::free_ports::<1>().unwrap()[0];
    let kubeconfig = d.join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {{server: \"https://127.0.0.1:{port}\"}}\n\
             users:\n- name: u\n  user: {{token: none}}\ncontexts:\n- name: x\n  context: {{cluster: c, user: u}}\n\
             current-context: x\n"
        ),
    )
    .unwrap();
    let o = run(
        &d,
        &[
            "default",
            "--quick",
            "--targets",
            "go-nethttp",
            "--kubernetes",
        ],
        Some(&kubeconfig),
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("kubernetes: "), "{err}");
    assert!(
        err.contains(&format!("127.0.0.1:{port}")) || err.contains("cannot run kubectl"),
        "{err}"
    );
    let store = shootout_store::Store::open_existing(d.join("k.db")).unwrap();
    let runs = store.runs().unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(
        runs[0].status,
        shootout_store::RunStatus::Failed,
        "{runs:?}"
    );
    let _ = std::fs::remove_dir_all(&d);
}
