//! `shootout load --plan-stdin` and `--progress-lines`: how a runner
//! drives a load in another process, such as a generator pod reached by
//! `kubectl exec -i`. The runner writes the plan it built
//! (`Plan::to_json`) as one line on stdin and keeps stdin open while the
//! load runs; the end of stdin, or a line `cancel`, stops the load as
//! Ctrl-C does (what was measured is reported, an `--hdr-log` sidecar says
//! interrupted). Only where and when this process runs comes from the
//! command line (`--shard`, `--start-at`, `--hdr-log`, `--quiet`, `-o`,
//! `--cpus`): the threads are the `--cpus` given, pinned, else one per CPU
//! this process may use, unpinned (the pod's cgroup confines it). `--progress-lines` writes the run's live counts
//! to stderr as lines a program parses, `shootout-progress completed=N
//! errors=N measuring=0|1`, at least every 100 ms and once at the end.

use anyhow::{anyhow, bail, Context};
use shootout_engine::{Control, Plan};
use std::io::{BufRead, Write};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::Duration;

/// The flags of `shootout load` that `--plan-stdin` refuses: everything
/// the plan itself says (a test holds this list to the flags there are).
pub(super) const CONFLICTS: [&str; 37] = [
    "url",
    "remote",
    "connections",
    "requests",
    "duration",
    "rate",
    "stages",
    "threads",
    "method",
    "headers",
    "body",
    "body_file",
    "no_keepalive",
    "mix",
    "arrival",
    "seed",
    "cacert",
    "insecure",
    "cert",
    "key",
    "tls_resume",
    "pipeline",
    "io",
    "http2",
    "streams",
    "message_size",
    "binary",
    "hold",
    "ping_every",
    "timeout",
    "warmup",
    "fail_if",
    "expect_status",
    "expect_body",
    "expect_body_file",
    "expect_type",
    "no_wait",
];

/// What the command line says of this process's part of the load.
#[derive(Debug, Clone, Default)]
pub(super) struct Here {
    pub shard: Option<shootout_engine::Shard>,
    pub start_at: Option<std::time::SystemTime>,
    /// `--hdr-log` given: per-second histograms are kept.
    pub hdr_log: bool,
    /// `--cpus` (empty: not pinned).
    pub cpus: Vec<usize>,
}

/// The plan on stdin's first line, with this process's shard, start,
/// interval histograms (for `--hdr-log`), threads and pinning.
pub(super) fn plan(args: &Here) -> anyhow::Result<Plan> {
    let mut line = String::new();
    std::io::stdin()
        .read_line(&mut line)
        .context("--plan-stdin: cannot read stdin")?;
    if line.trim().is_empty() {
        bail!(
            "--plan-stdin: stdin ended before a plan: write the plan's JSON as one line, \
             then keep stdin open while the load runs"
        );
    }
    let mut builder = Plan::from_json(&line).map_err(|e| anyhow!("--plan-stdin: {e}"))?;
    if let Some(shard) = args.shard {
        builder = builder.shard(shard);
    }
    if args.start_at.is_some() {
        builder = builder.start_at(args.start_at);
    }
    if args.hdr_log {
        builder = builder.interval_histograms(true);
    }
    // Pinned when told (a pod sharing its node's pool with the server's,
    // pinned where a local run pins its generator); else one thread per
    // CPU the pod's cgroup gives this process.
    let cpus = args.cpus.clone();
    let threads = match cpus.len() {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };
    builder
        .threads(threads)
        .cpus(cpus)
        .build()
        .map_err(|e| anyhow!("--plan-stdin: {e}"))
}

/// Watches the rest of stdin on a thread of its own: at its end (or a
/// read error), or at a line `cancel`, cancels the load. Other lines are
/// ignored. The returned cell says which stopped it, for the message.
pub(super) fn watch(control: Arc<Control>) -> anyhow::Result<Arc<OnceLock<&'static str>>> {
    let why = Arc::new(OnceLock::new());
    let said = why.clone();
    std::thread::Builder::new()
        .name("stdin".into())
        .spawn(move || {
            let mut stdin = std::io::stdin().lock();
            let mut line = Vec::new();
            let reason = loop {
                line.clear();
                match stdin.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => break "stdin ended",
                    Ok(_) if line.trim_ascii() == b"cancel" => break "a cancel line on stdin",
                    Ok(_) => {}
                }
            };
            let _ = said.set(reason);
            control.cancel();
        })
        .context("cannot start the thread watching stdin")?;
    Ok(why)
}

/// The most time between two progress lines.
const MOST_BETWEEN: Duration = Duration::from_millis(100);

/// Writes the live counts to stderr from a thread of its own until
/// [`ProgressLines::finish`], which writes the last line.
#[derive(Debug)]
pub(super) struct ProgressLines {
    stop: mpsc::Sender<()>,
    thread: JoinHandle<()>,
    control: Arc<Control>,
}

impl ProgressLines {
    /// A line every `every` (the plan's `progress_every`, when the
    /// workers add their counts), at least every 100 ms.
    pub(super) fn start(every: Duration, control: Arc<Control>) -> anyhow::Result<ProgressLines> {
        let every = every.min(MOST_BETWEEN);
        let (stop, stopped) = mpsc::channel::<()>();
        let counts = control.clone();
        let thread = std::thread::Builder::new()
            .name("progress-lines".into())
            .spawn(move || {
                while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(every) {
                    write_line(&counts);
                }
            })
            .context("cannot start the progress-lines thread")?;
        Ok(ProgressLines {
            stop,
            thread,
            control,
        })
    }

    /// Stops the thread and writes the final counts.
    pub(super) fn finish(self) {
        drop(self.stop);
        let _ = self.thread.join();
        write_line(&self.control);
    }
}

/// One line, written whole: `shootout-progress completed=N errors=N measuring=0|1`.
fn write_line(control: &Control) {
    let line = format!(
        "shootout-progress completed={} errors={} measuring={}\n",
        control.completed(),
        control.errors(),
        u8::from(control.is_measuring())
    );
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}
