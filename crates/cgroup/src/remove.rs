//! Leaving nothing behind: kill what is left in a group (v2 `cgroup.kill`
//! where the kernel has it, SIGKILL to every listed pid always, until the
//! group is empty), then remove its folder, children first, and the owner's
//! and `shootout` folders once they are empty.

use crate::error::{CgroupError, Result};
use crate::fs;
use crate::owner::{Owner, PARENT};
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long killed processes get to leave before a group counts as stuck.
const KILL_DEADLINE: Duration = Duration::from_secs(5);
/// How often the group is polled meanwhile.
const POLL: Duration = Duration::from_millis(10);

/// Every pid in any of `dirs`, sorted, each once.
pub(crate) fn pids_in(dirs: &[&Path]) -> Result<Vec<u32>> {
    let mut all = Vec::new();
    for d in dirs {
        all.extend(fs::pids(&d.join("cgroup.procs"))?);
    }
    all.sort_unstable();
    all.dedup();
    Ok(all)
}

/// Kills every process in `dirs` and waits until none is listed. This
/// process is never signalled: if a caller moved it in, this fails at once.
pub(crate) fn kill_all(dirs: &[&Path]) -> Result<()> {
    for d in dirs {
        let kill = d.join("cgroup.kill");
        if kill.exists() {
            // A failure here is covered by the signals below.
            let _ = fs::write(&kill, "1");
        }
    }
    let me = std::process::id();
    let deadline = Instant::now() + KILL_DEADLINE;
    loop {
        let pids = pids_in(dirs)?;
        if pids.is_empty() {
            return Ok(());
        }
        if pids.contains(&me) || Instant::now() > deadline {
            return Err(CgroupError::StillPopulated {
                path: dirs.first().map(|d| d.to_path_buf()).unwrap_or_default(),
                pids,
            });
        }
        for p in pids {
            // SAFETY: kill(2) with a pid read from the group; a pid that
            // already exited gives ESRCH, which is harmless.
            unsafe { libc::kill(p as libc::pid_t, libc::SIGKILL) };
        }
        std::thread::sleep(POLL);
    }
}

/// Removes an empty cgroup folder. The kernel may report it busy for a
/// moment after its last process exits, so EBUSY is retried.
pub(crate) fn rmdir(dir: &Path) -> Result<()> {
    let deadline = Instant::now() + KILL_DEADLINE;
    loop {
        match std::fs::remove_dir(dir) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) && Instant::now() < deadline => {
                std::thread::sleep(POLL);
            }
            Err(e) => return Err(CgroupError::io("remove", dir, e)),
        }
    }
}

/// Removes `dir` and every group below it, children first, killing their
/// processes.
pub(crate) fn remove_tree(dir: &Path) -> Result<()> {
    for child in subgroups(dir)? {
        remove_tree(&child)?;
    }
    kill_all(&[dir])?;
    rmdir(dir)
}

/// The child groups of `dir`: its sub-folders (interface files are files).
pub(crate) fn subgroups(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(CgroupError::io("list", dir, e)),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| CgroupError::io("list", dir, e))?;
        let kind = entry
            .file_type()
            .map_err(|e| CgroupError::io("list", dir, e))?;
        if kind.is_dir() {
            out.push(entry.path());
        }
    }
    Ok(out)
}

/// Removes a folder if it is empty of groups; a busy or non-empty one (a
/// sibling group, another shootout) is left alone.
pub(crate) fn prune(dir: &Path) {
    let _ = std::fs::remove_dir(dir);
}

/// A group's whole end: kill, wait, remove its folders (and sub-groups a
/// server may have made), then its owner's and `shootout` folders if empty.
pub(crate) fn teardown(leaves: &[&Path]) -> Result<()> {
    kill_all(leaves)?;
    let mut first_error = None;
    for leaf in leaves {
        if let Err(e) = remove_tree(leaf) {
            first_error.get_or_insert(e);
            continue;
        }
        // Only folders this crate made: `shootout/<pid>-<start>/`.
        let owner = leaf.parent().filter(|o| {
            let name = o.file_name().and_then(|n| n.to_str()).unwrap_or("");
            Owner::parse(name).is_some()
        });
        let shootout = owner
            .and_then(Path::parent)
            .filter(|p| p.file_name().is_some_and(|n| n == PARENT));
        if let (Some(owner), Some(shootout)) = (owner, shootout) {
            prune(owner);
            prune(shootout);
        }
    }
    first_error.map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    /// The kernel's own v2 `cgroup.kill`, on whatever cgroup2 tree is
    /// mounted (on a v1 machine, the empty unified tree: no controllers
    /// are needed to kill and remove).
    #[test]
    fn cgroup_kill_empties_a_real_v2_group() {
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
        let v2 = crate::detect::cgroup_mounts(&mountinfo)
            .into_iter()
            .find(|m| m.fstype == "cgroup2");
        let Some(v2) = v2 else {
            shootout_testkit::machine("no cgroup2 mount");
            return;
        };
        let dir = v2
            .point
            .join(format!("shootout-kill-test-{}", std::process::id()));
        if let Err(e) = std::fs::create_dir(&dir) {
            shootout_testkit::machine(format!("{}: {e}", dir.display()));
            return;
        }
        if !dir.join("cgroup.kill").exists() {
            shootout_testkit::machine("no cgroup.kill (Linux < 5.14)");
            rmdir(&dir).unwrap();
            return;
        }
        let mut sleeper = Command::new("sleep").arg("30").spawn().unwrap();
        fs::write(&dir.join("cgroup.procs"), &sleeper.id().to_string()).unwrap();
        assert_eq!(pids_in(&[&dir]).unwrap(), vec![sleeper.id()]);
        teardown(&[&dir]).unwrap();
        let status = sleeper.wait().unwrap();
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&status),
            Some(9)
        );
        assert!(!dir.exists());
    }
}
