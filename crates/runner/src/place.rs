//! Where a contestant runs: the one seam between the runner and the place
//! a target's server is started. A [`Place`] starts a target and hands
//! back a [`Contestant`]: what the session asks of a started server (is it
//! ready, alive, frozen, the one on its port; its budget; its log; stop
//! it) and a [`Meter`] of its CPU and memory that the sampler, the drain
//! and the standing cost read, each figure saying where it came from
//! ([`Source`]) or why this place cannot give it ([`Figure::Unavailable`],
//! never a zero). The run picks its place once (`SessionContext::place`);
//! nothing else in the runner knows which it is: local processes
//! ([`local`]) or Kubernetes pods ([`kube`]); docs/architecture.md
//! ("Where a contestant runs") says what each implements. A place also
//! says where a level's load is generated ([`Generator`]): in this
//! process, or in generator pods on the cluster's client nodes
//! ([`generators`]).

pub(crate) mod generators;
pub(crate) mod kube;
pub(crate) mod kubectl;
pub(crate) mod kubelet;
pub(crate) mod local;
mod pod;
pub(crate) mod postgres;

use crate::error::EngineRefusal;
use shootout_cgroup::{Budget, CgroupError, Counters};
use shootout_engine::{Control, LoadReport, Plan};
use shootout_servers::listener::ListenerError;
use shootout_servers::{Limits, StartError, Target};
use std::net::IpAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// Where a figure came from: the contestant's cgroup (the kernel's
/// counters of everything it ran), its processes in `/proc`, or its pod's
/// cgroup as its node's kubelet reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Cgroup,
    Procfs,
    Kubelet,
}

impl Source {
    /// As the run says it: "cgroup", "procfs".
    pub fn name(self) -> &'static str {
        match self {
            Source::Cgroup => "cgroup",
            Source::Procfs => "procfs",
            Source::Kubelet => "kubelet",
        }
    }
}

/// One figure of a contestant, or why its place cannot give it.
#[derive(Debug, Clone, PartialEq)]
pub enum Figure<T> {
    Had { value: T, from: Source },
    Unavailable(String),
}

/// A figure a level needs that the contestant's place cannot give.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("the server's {what} cannot be had here: {why}")]
pub struct Unavailable {
    pub what: String,
    pub why: String,
}

impl<T: Copy> Figure<T> {
    /// The value, or why it cannot be had ("the server's `what` cannot be
    /// had here: why").
    pub fn required(&self, what: &str) -> Result<T, Unavailable> {
        match self {
            Figure::Had { value, .. } => Ok(*value),
            Figure::Unavailable(why) => Err(Unavailable {
                what: what.into(),
                why: why.clone(),
            }),
        }
    }
}

impl Figure<f64> {
    /// The growth from `before` to this read (a CPU time over a phase),
    /// from their common source; unavailable when either is, or when the
    /// two came from different sources.
    pub fn since(&self, before: &Figure<f64>) -> Figure<f64> {
        match (before, self) {
            (Figure::Had { value: a, from: fa }, Figure::Had { value: b, from: fb })
                if fa == fb =>
            {
                Figure::Had {
                    value: (b - a).max(0.0),
                    from: *fa,
                }
            }
            (Figure::Had { from: fa, .. }, Figure::Had { from: fb, .. }) => {
                Figure::Unavailable(format!(
                    "read from {} at the start and {} at the end",
                    fa.name(),
                    fb.name()
                ))
            }
            (Figure::Unavailable(why), _) | (_, Figure::Unavailable(why)) => {
                Figure::Unavailable(why.clone())
            }
        }
    }
}

/// A contestant's memory at one look.
#[derive(Debug, Clone, PartialEq)]
pub struct Memory {
    /// Resident memory of all its processes, in bytes.
    pub rss: Figure<u64>,
    /// Proportional set size in bytes, when asked for and readable.
    pub pss: Option<u64>,
}

/// Reads a started contestant's CPU and memory; cheap to call often and
/// safe from another thread (the sampler's). Reads after the contestant
/// stopped give what is left, never an error.
pub(crate) trait Meter: Send + Sync {
    /// CPU time it used so far, in seconds (a delta of two reads from the
    /// same source is its CPU over that time).
    fn cpu(&self) -> Figure<f64>;
    /// Its memory now; `pss` also reads the proportional set size (costlier).
    fn memory(&self, pss: bool) -> Memory;
    /// Its cgroup's counters (CPU, throttling, memory high-water mark, OOM
    /// kills); None where it has no cgroup or it cannot be read.
    fn counters(&self) -> Option<Counters>;
    /// Restarts the memory high-water mark where the place can (best effort).
    fn reset_peak(&self);
}

/// Is a started contestant still there?
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Liveness {
    Alive,
    /// Every process of it is stopped (SIGSTOP, a debugger): none can run.
    Frozen {
        count: usize,
    },
    /// Its first process ended, `how` ("exit status 3", "signal 9
    /// (SIGKILL)"); `others_left` when some other process of it remains.
    Exited {
        how: String,
        others_left: bool,
    },
    /// No process of it is left (and how its first one ended is not known).
    Gone,
}

/// Why a level's budget cannot be put on a contestant.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BudgetError {
    #[error(transparent)]
    Cgroup(#[from] CgroupError),
    #[error("the server's cgroup is gone")]
    Gone,
    /// A pod's resources are fixed when it starts.
    #[error("a pod's CPU and memory are fixed when it starts")]
    Fixed,
}

/// How a stop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stopped {
    /// It was gone within its grace period (else it was killed).
    pub graceful: bool,
    /// Something of it survived the stop.
    pub leftovers: bool,
}

/// What a place is asked to start.
#[derive(Debug)]
pub(crate) struct StartSpec<'a> {
    pub target: &'a Target,
    /// Its cleartext port (`PORT`); its other ports are in `env`.
    pub port: u16,
    /// Where its output goes.
    pub log: &'a Path,
    /// The CPUs it is pinned to (none: not pinned).
    pub cpus: &'a [usize],
    /// Variables besides `PORT`, `HOST` and `SERVER_CPUS`.
    pub env: &'a [(String, String)],
    /// Its starting budget.
    pub limits: &'a Limits,
}

/// Where contestants run.
pub(crate) trait Place: Sync {
    /// The cluster it runs on and the node servers run on; None for this
    /// machine's processes.
    fn cluster(&self) -> Option<(&shootout_store::ClusterRecord, &str)> {
        None
    }
    /// Three distinct ports free where its contestants listen.
    fn free_ports(&self) -> std::io::Result<[u16; 3]>;
    /// Starts a target (not yet ready: see [`Contestant::wait_ready`]).
    fn start(&self, spec: &StartSpec<'_>) -> Result<Box<dyn Contestant>, StartError>;
    /// Where its levels' loads are generated: this process by default.
    fn generator(&self) -> &dyn Generator {
        &InProcess
    }
    /// Which server addresses a load may go to: loopback for this
    /// machine's processes; a cluster's node address otherwise.
    fn reach(&self) -> shootout_engine::Reach {
        shootout_engine::Reach::Loopback
    }
}

/// Where a level's load is generated. It runs `plan` to its end, or until
/// `control` is cancelled, adding its live counts to `control` as it goes
/// (the warm-up's windows and the progress bar read them), and returns
/// the whole load's report.
pub(crate) trait Generator: Sync {
    fn run(&self, plan: &Plan, control: &Arc<Control>) -> Result<LoadReport, EngineRefusal>;
}

/// The engine, in this process, on the CPUs the plan pins.
pub(crate) struct InProcess;

impl Generator for InProcess {
    fn run(&self, plan: &Plan, control: &Arc<Control>) -> Result<LoadReport, EngineRefusal> {
        Ok(shootout_engine::run(plan, control)?)
    }
}

/// A started target, as the runner asks about it. Dropping it kills it.
pub(crate) trait Contestant: Send + Sync {
    /// Where its ports are, as the generator reaches it.
    fn host(&self) -> IpAddr;
    /// Waits until its ready route answers 200; how long that took. Fails
    /// at once, with its log's tail, when it exits.
    fn wait_ready(&mut self, timeout: Duration) -> Result<Duration, StartError>;
    /// Whether it is alive, frozen or gone.
    fn liveness(&self) -> Liveness;
    /// [`Contestant::liveness`], looked at closely where a close look costs
    /// more than a quick one (a pod's processes are read inside it); asked
    /// before and after each level, not in its warm-up's windows.
    fn liveness_closely(&self) -> Liveness {
        self.liveness()
    }
    /// Whether it (and no one else) listens on `port`; Ok also when the
    /// place cannot tell.
    fn holds_port(&self, port: u16) -> Result<(), ListenerError>;
    /// Its CPU and memory.
    fn meter(&self) -> Arc<dyn Meter>;
    /// The budget in force; None when it cannot be held to one.
    fn budget(&self) -> Option<Budget>;
    /// Puts a level's budget on it.
    fn set_budget(&self, budget: &Budget) -> Result<(), BudgetError>;
    /// The last `lines` lines of its output.
    fn log_tail(&self, lines: usize) -> String;
    /// The local process group a later run kills should this run die
    /// without stopping it (`crate::liveness`); None where the place
    /// cleans up otherwise.
    fn process_group(&self) -> Option<i32>;
    /// Stops it: asked to end, then killed after a grace period.
    fn stop(self: Box<Self>) -> Stopped;
}

#[cfg(test)]
mod tests {
    use super::local::LocalPlace;
    use super::*;
    use std::path::PathBuf;

    /// What only the local place may say outside tests: starting a
    /// `Server`, its process group, `/proc` trees. The dead-run reaper
    /// (`liveness.rs`) kills a group a dead run recorded, before any place
    /// exists, and is allowed its `group_alive`.
    const LOCAL_ONLY: [&str; 6] = [
        "shootout_servers::Server",
        "Server::start",
        "shootout_servers::process::",
        "procfs::sample(",
        "procfs::cpu_seconds_precise(",
        ".pgid()",
    ];

    /// Every `.rs` file under `dir`, recursively.
    fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let p = e.unwrap_or_else(|e| panic!("{e}")).path();
            if p.is_dir() {
                sources(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }

    #[test]
    fn only_the_local_place_knows_contestants_are_processes() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        sources(&src, &mut files);
        let mut leaks = Vec::new();
        for f in &files {
            let name = f.strip_prefix(&src).unwrap_or(f).to_string_lossy();
            if name == "place/local.rs" || name.ends_with("_tests.rs") {
                continue;
            }
            let text = std::fs::read_to_string(f).unwrap_or_else(|e| panic!("{name}: {e}"));
            let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or("");
            for pat in LOCAL_ONLY {
                let allowed = name == "liveness.rs" && pat == "shootout_servers::process::";
                if code.contains(pat) && !allowed {
                    leaks.push(format!("{name}: {pat}"));
                }
            }
        }
        assert!(files.len() > 20, "{files:?}");
        assert!(leaks.is_empty(), "past the seam: {leaks:?}");
    }

    #[test]
    fn a_figure_is_a_delta_of_one_source_or_says_why_not() {
        let cg = |value| Figure::Had {
            value,
            from: Source::Cgroup,
        };
        let proc = Figure::Had {
            value: 1.0,
            from: Source::Procfs,
        };
        assert_eq!(cg(3.5).since(&cg(1.0)), cg(2.5));
        let mixed = proc.since(&cg(1.0));
        assert_eq!(
            mixed,
            Figure::Unavailable("read from cgroup at the start and procfs at the end".into())
        );
        let none = Figure::Unavailable("no kubelet".into());
        assert_eq!(cg(1.0).since(&none), none);
        assert_eq!(
            none.required("CPU time").unwrap_err().to_string(),
            "the server's CPU time cannot be had here: no kubelet"
        );
        assert_eq!(cg(2.0).required("CPU time"), Ok(2.0));
    }

    /// The local place end to end: figures with their sources, liveness
    /// through a kill, and a stop that leaves nothing.
    #[test]
    fn a_local_contestant_says_where_its_figures_came_from_and_how_it_ended() {
        let dir = std::env::temp_dir().join(format!("shootout-place-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        let target = shootout_servers::Target::command(
            "burn",
            &dir,
            "echo up; i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; echo spun; exec sleep 60",
        );
        let log = dir.join("burn.log");
        let place = LocalPlace;
        let [port, ..] = place.free_ports().unwrap_or_else(|e| panic!("{e}"));
        let spec = StartSpec {
            target: &target,
            port,
            log: &log,
            cpus: &[],
            env: &[],
            limits: &Limits::default(),
        };
        let c = place.start(&spec).unwrap_or_else(|e| panic!("{e}"));
        shootout_testkit::wait_until("the shell done spinning", Duration::from_secs(20), || {
            std::fs::read_to_string(&log).is_ok_and(|t| t.contains("spun\n"))
        });
        assert_eq!(c.liveness(), Liveness::Alive);
        assert!(c.log_tail(5).contains("up"), "{}", c.log_tail(5));
        let meter = c.meter();
        let from = match meter.cpu() {
            Figure::Had { value, from } => {
                assert!(value > 0.0, "{value} s of a spinning shell");
                from
            }
            Figure::Unavailable(why) => panic!("local CPU is always had: {why}"),
        };
        let cgroup = meter.counters().is_some();
        assert_eq!(
            from,
            if cgroup {
                Source::Cgroup
            } else {
                Source::Procfs
            }
        );
        match meter.memory(true).rss {
            Figure::Had { value, from } => {
                assert!(value > 0, "RSS of a live sleep");
                assert_eq!(from, Source::Procfs);
            }
            Figure::Unavailable(why) => panic!("local RSS is always had: {why}"),
        }
        let pgid = c.process_group().unwrap_or_else(|| panic!("a local group"));
        // SAFETY: killing the process this test started.
        unsafe { libc::kill(pgid, libc::SIGKILL) };
        shootout_testkit::wait_until("the leader reaped", Duration::from_secs(5), || {
            c.liveness() != Liveness::Alive
        });
        assert_eq!(
            c.liveness(),
            Liveness::Exited {
                how: "signal 9 (SIGKILL)".into(),
                others_left: false
            }
        );
        let stopped = c.stop();
        assert!(!stopped.leftovers, "{stopped:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
