//! Nothing left behind: a server started by this process dies when this
//! process dies, however it dies (SIGKILL included). Two mechanisms, because
//! neither is enough alone:
//!
//! - the server's first process gets `PR_SET_PDEATHSIG(SIGKILL)`. The kernel
//!   sends it when the *thread* that forked the child exits, so every server
//!   is forked by one spawner thread that lives as long as the process;
//! - servers fork workers (gunicorn, uvicorn) that the death signal does not
//!   reach, so each server also gets a watchdog: a tiny `sh` in its own
//!   process group that blocks reading a pipe whose only write end this
//!   process holds. When this process dies the kernel closes that end, the
//!   read returns, and the watchdog SIGKILLs the server's whole process group.
//!
//! The CPU pinning of a server is applied in the child before exec, since the
//! spawner thread itself is not pinned.

use shootout_engine::affinity;
use std::io;
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::sync::OnceLock;

type Job = (Command, mpsc::Sender<io::Result<Child>>);

static SPAWNER: OnceLock<mpsc::Sender<Job>> = OnceLock::new();

/// The sender of the process-lifetime spawner thread (started on first use).
fn spawner() -> &'static mpsc::Sender<Job> {
    SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Job>();
        // If the thread cannot start, rx is dropped and every spawn reports it.
        let _ = std::thread::Builder::new()
            .name("server-spawner".into())
            .spawn(move || {
                for (mut cmd, reply) in rx {
                    let _ = reply.send(cmd.spawn());
                }
            });
        tx
    })
}

/// Spawns `cmd` from the spawner thread, with `PR_SET_PDEATHSIG(SIGKILL)` and,
/// when `cpus` is not empty, pinned to those CPUs by the one affinity module
/// ([`shootout_engine::affinity::pin_current_thread`], in the child). Its rule
/// for a CPU beyond `CPU_SETSIZE` holds here too: it is dropped, so servers,
/// PostgreSQL and the load generator treat a CPU list alike; a list with no
/// CPU left is refused by the kernel and the spawn fails.
pub fn spawn_tied(mut cmd: Command, cpus: &[usize]) -> io::Result<Child> {
    let parent = std::process::id() as libc::pid_t;
    let cpus = cpus.to_vec();
    // SAFETY: the hook runs between fork and exec and only makes system
    // calls (prctl, getppid, sched_setaffinity) on memory allocated before
    // the fork; it does not allocate.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            ) != 0
            {
                return Err(io::Error::last_os_error());
            }
            // The parent may have died before the death signal was armed.
            if libc::getppid() != parent {
                return Err(io::Error::from_raw_os_error(libc::ESRCH));
            }
            affinity::pin_current_thread(&cpus)
        })
    };
    let (reply, answer) = mpsc::channel();
    let gone = || io::Error::other("the server spawner thread is not running");
    spawner().send((cmd, reply)).map_err(|_| gone())?;
    answer.recv().map_err(|_| gone())?
}

/// Kills process group `pgid` when this process dies; see the module doc.
#[derive(Debug)]
pub struct Watchdog {
    child: Child,
    /// The write end of the watchdog's stdin: closing it (or dying) fires it.
    _pipe: ChildStdin,
}

impl Watchdog {
    pub fn start(pgid: i32) -> io::Result<Watchdog> {
        let mut child = Command::new("sh")
            .arg("-c")
            // dash's kill takes no `--`; `-9 -PGID` means the whole group.
            .arg(format!("read -r _; kill -9 -{pgid} 2>/dev/null"))
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            // Out of the terminal's group: a Ctrl-C must not kill the watchdog.
            .process_group(0)
            .spawn()?;
        let pipe = child
            .stdin
            .take()
            .ok_or_else(|| io::Error::other("watchdog without a stdin pipe"))?;
        Ok(Watchdog { child, _pipe: pipe })
    }

    /// Stands the watchdog down once the group is gone, so it can never hit a
    /// later group that reuses the id.
    pub fn dismiss(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn a_tied_child_runs_pinned_and_reports_spawn_errors() {
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg("grep Cpus_allowed_list /proc/self/status")
            .stdout(Stdio::piped());
        let out = spawn_tied(cmd, &[0]).unwrap().wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.trim_end().ends_with("\t0"), "{text}");
        assert!(spawn_tied(Command::new("/nonexistent/binary"), &[]).is_err());
    }

    #[test]
    fn out_of_range_cpus_are_dropped_and_none_left_is_refused() {
        let beyond = libc::CPU_SETSIZE as usize + 3;
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg("grep Cpus_allowed_list /proc/self/status")
            .stdout(Stdio::piped());
        let out = spawn_tied(cmd, &[0, beyond])
            .unwrap()
            .wait_with_output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.trim_end().ends_with("\t0"), "{text}");
        let err = spawn_tied(Command::new("true"), &[beyond]).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::EINVAL), "{err}");
    }

    #[test]
    fn a_watchdog_kills_the_group_when_its_pipe_closes() {
        let mut sleeper = Command::new("sleep")
            .arg("60")
            .process_group(0)
            .spawn()
            .unwrap();
        let pgid = sleeper.id() as i32;
        let dog = Watchdog::start(pgid).unwrap();
        // Closing the pipe is what the kernel does when this process dies.
        let Watchdog { mut child, _pipe } = dog;
        drop(_pipe);
        let t0 = Instant::now();
        let status = sleeper.wait().unwrap();
        assert!(t0.elapsed() < Duration::from_secs(2));
        assert!(!status.success(), "{status:?}");
        let _ = child.wait();
    }
}
