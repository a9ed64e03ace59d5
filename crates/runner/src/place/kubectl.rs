//! The Kubernetes API as the Kubernetes place reaches it: `kubectl`, run
//! with the run's kubeconfig and namespace, JSON in and out. Shelling out
//! keeps the runner free of an async client and its dependency tree, and
//! it talks to any cluster the user's own `kubectl` does (the same
//! credentials plugins, the same `KUBECONFIG`). Each call is bounded in
//! time (`--request-timeout`), and a failure keeps what kubectl said.

use serde_json::Value;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

/// How long one API call may take.
const REQUEST_TIMEOUT: &str = "20s";

/// How the run reaches its cluster (`shootout run --kubernetes`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KubeOptions {
    /// `--kubeconfig` (None: kubectl's own default, `KUBECONFIG`).
    pub kubeconfig: Option<PathBuf>,
    /// `--namespace`: where every object of the run is made.
    pub namespace: String,
    /// The image of a target: `{target}` is replaced by its name.
    pub image: String,
    /// The kubectl to run.
    pub kubectl: PathBuf,
    /// `--shards`: generator pods on the client nodes, each one shard of
    /// every load; 0: the load runs in this process.
    pub shards: usize,
    /// `--generator-image`: the image with `shootout` in it.
    pub generator_image: String,
}

impl Default for KubeOptions {
    fn default() -> Self {
        KubeOptions {
            kubeconfig: None,
            namespace: "shootout".into(),
            image: "localhost/{target}:e2e".into(),
            kubectl: "kubectl".into(),
            shards: 1,
            generator_image: "localhost/shootout:e2e".into(),
        }
    }
}

/// Why a call to the cluster failed.
#[derive(Debug, thiserror::Error)]
pub enum KubeError {
    #[error("cannot run kubectl ({bin}): {source}", bin = .bin.display())]
    Spawn {
        bin: PathBuf,
        source: std::io::Error,
    },
    #[error("kubectl {args} failed: {stderr}")]
    Failed { args: String, stderr: String },
    #[error("kubectl {args} printed what is not JSON: {source}")]
    Json {
        args: String,
        source: serde_json::Error,
    },
}

/// `kubectl` with a kubeconfig (None: its own default, `KUBECONFIG` or
/// ~/.kube/config) and a namespace.
#[derive(Debug, Clone)]
pub struct Kubectl {
    pub bin: PathBuf,
    pub kubeconfig: Option<PathBuf>,
    pub namespace: String,
}

impl Kubectl {
    /// The kubectl a run's options name.
    pub fn for_options(opts: &KubeOptions) -> Kubectl {
        Kubectl {
            bin: opts.kubectl.clone(),
            kubeconfig: opts.kubeconfig.clone(),
            namespace: opts.namespace.clone(),
        }
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(&self.bin);
        if let Some(k) = &self.kubeconfig {
            cmd.arg("--kubeconfig").arg(k);
        }
        cmd.args(["--namespace", &self.namespace])
            .arg(format!("--request-timeout={REQUEST_TIMEOUT}"))
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }

    /// Runs `kubectl ARGS` (with `input` on its stdin) and returns its
    /// stdout.
    pub fn run(&self, args: &[&str], input: Option<&str>) -> Result<String, KubeError> {
        let mut cmd = self.command(args);
        if input.is_some() {
            cmd.stdin(Stdio::piped());
        }
        let spawn = |source| KubeError::Spawn {
            bin: self.bin.clone(),
            source,
        };
        let mut child = cmd.spawn().map_err(spawn)?;
        if let (Some(text), Some(mut stdin)) = (input, child.stdin.take()) {
            // A kubectl that exits early closes its end; its stderr says why.
            let _ = stdin.write_all(text.as_bytes());
        }
        let out = child.wait_with_output().map_err(spawn)?;
        if !out.status.success() {
            let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
            return Err(KubeError::Failed {
                args: args.join(" "),
                stderr: if stderr.is_empty() {
                    format!("{} with nothing on stderr", out.status)
                } else {
                    stderr
                },
            });
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// [`Kubectl::run`] with `-o json`, parsed.
    pub fn json(&self, args: &[&str]) -> Result<Value, KubeError> {
        let mut all = args.to_vec();
        all.extend(["-o", "json"]);
        let text = self.run(&all, None)?;
        serde_json::from_str(&text).map_err(|source| KubeError::Json {
            args: args.join(" "),
            source,
        })
    }

    /// Deletes what `selector` selects (pods, jobs, PVCs) and waits until it
    /// is gone, at most `timeout`.
    pub fn delete_selected(&self, selector: &str, timeout: Duration) -> Result<(), KubeError> {
        let wait = format!("--timeout={}s", timeout.as_secs().max(1));
        self.run(
            &[
                "delete",
                "pods,jobs,persistentvolumeclaims",
                "-l",
                selector,
                "--ignore-not-found",
                "--wait=true",
                &wait,
            ],
            None,
        )
        .map(drop)
    }
}
