//! Reading a server's whole process tree from /proc: every process in its
//! process group or descended from its first process (gunicorn and uvicorn
//! have workers). One snapshot gives the summed RSS (statm), the summed PSS
//! (smaps_rollup, when readable) and the summed CPU ticks (utime + stime +
//! cutime + cstime from stat, so reaped workers still count).

use std::collections::HashMap;

/// One look at a process tree.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TreeSample {
    pub processes: usize,
    pub rss_bytes: u64,
    /// None when some member's smaps_rollup could not be read.
    pub pss_bytes: Option<u64>,
    /// User + system CPU seconds of the tree, including reaped children.
    pub cpu_s: f64,
}

struct Stat {
    ppid: i32,
    pgrp: i32,
    /// utime + stime + cutime + cstime.
    ticks: u64,
    /// cutime + cstime: reaped children only.
    child_ticks: u64,
}

use shootout_servers::cpustat::clock_ticks;

fn page_size() -> u64 {
    // SAFETY: as above.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as u64
    } else {
        4096
    }
}

/// Parses /proc/<pid>/stat: state, ppid, pgrp and the four CPU-time fields.
fn parse_stat(text: &str) -> Option<Stat> {
    let rest = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // f[0] = state (field 3), so field n is f[n - 3].
    if f.first() == Some(&"Z") {
        return None;
    }
    let num = |n: usize| f.get(n - 3)?.parse::<u64>().ok();
    Some(Stat {
        ppid: f.get(1)?.parse().ok()?,
        pgrp: f.get(2)?.parse().ok()?,
        ticks: num(14)? + num(15)? + num(16)? + num(17)?,
        child_ticks: num(16)? + num(17)?,
    })
}

/// A live member of a tree: pid, all CPU ticks, ticks of reaped children.
pub type Member = (i32, u64, u64);

/// The live members of the tree rooted at `root` or in group `pgid`.
pub fn members(pgid: i32, root: i32) -> Vec<Member> {
    let mut all: HashMap<i32, Stat> = HashMap::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        if let Some(st) = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .as_deref()
            .and_then(parse_stat)
        {
            all.insert(pid, st);
        }
    }
    let in_tree = |mut pid: i32| {
        for _ in 0..64 {
            let Some(st) = all.get(&pid) else {
                return false;
            };
            if pid == root || st.pgrp == pgid {
                return true;
            }
            if st.ppid <= 1 {
                return false;
            }
            pid = st.ppid;
        }
        false
    };
    let mut out: Vec<Member> = all
        .iter()
        .filter(|(&pid, _)| in_tree(pid))
        .map(|(&pid, st)| (pid, st.ticks, st.child_ticks))
        .collect();
    out.sort_unstable();
    out
}

/// Resident bytes of one process from statm.
fn rss_bytes(pid: i32, page: u64) -> Option<u64> {
    let statm = std::fs::read_to_string(format!("/proc/{pid}/statm")).ok()?;
    let resident: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(resident * page)
}

/// Proportional set size of one process from smaps_rollup.
fn pss_bytes(pid: i32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?;
    let kib: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("Pss:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib * 1024)
}

/// Samples the tree; `with_pss` also reads smaps_rollup (slower).
pub fn sample(pgid: i32, root: i32, with_pss: bool) -> TreeSample {
    let page = page_size();
    let hz = clock_ticks();
    let procs = members(pgid, root);
    let mut s = TreeSample {
        processes: procs.len(),
        pss_bytes: with_pss.then_some(0),
        ..TreeSample::default()
    };
    for &(pid, ticks, _) in &procs {
        s.cpu_s += ticks as f64 / hz;
        s.rss_bytes += rss_bytes(pid, page).unwrap_or(0);
        if with_pss {
            s.pss_bytes = match (s.pss_bytes, pss_bytes(pid)) {
                (Some(a), Some(b)) => Some(a + b),
                _ => None,
            };
        }
    }
    s
}

pub const MIB: f64 = 1024.0 * 1024.0;

/// CPU seconds of the tree with nanosecond resolution: the on-CPU time of
/// every thread (schedstat) plus the ticks of reaped children. Falls back to
/// the tick counts of stat where schedstat is missing.
pub fn cpu_seconds_precise(pgid: i32, root: i32) -> f64 {
    let hz = clock_ticks();
    members(pgid, root)
        .iter()
        .map(|&(pid, ticks, child_ticks)| match threads_cpu_ns(pid) {
            Some(ns) => ns as f64 / 1e9 + child_ticks as f64 / hz,
            None => ticks as f64 / hz,
        })
        .sum()
}

/// Sum over the threads of `pid` of the first field of schedstat (ns on CPU).
fn threads_cpu_ns(pid: i32) -> Option<u64> {
    let mut total = 0;
    for t in std::fs::read_dir(format!("/proc/{pid}/task"))
        .ok()?
        .flatten()
    {
        let text = std::fs::read_to_string(t.path().join("schedstat")).ok()?;
        total += text.split_whitespace().next()?.parse::<u64>().ok()?;
    }
    Some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stat_with_spaces_in_the_name() {
        let text = "42 (my (odd) proc) S 1 42 42 0 -1 4194560 100 0 0 0 150 50 7 3 20 0 1 0";
        let st = parse_stat(text).unwrap();
        assert_eq!((st.ppid, st.pgrp, st.ticks), (1, 42, 210));
        assert!(parse_stat("1 (z) Z 0 1 1 0 -1 0 0 0 0 0 1 1 1 1").is_none());
    }

    #[test]
    fn samples_a_process_group_with_children() {
        use std::os::unix::process::CommandExt;
        let mut child = std::process::Command::new("sh")
            .arg("-c")
            .arg("sleep 30 & sleep 30 & i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; wait")
            .process_group(0)
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        // sh has forked both sleeps, and its loop has used a clock tick.
        shootout_testkit::wait_until(
            "sh and its two sleeps in the group, sh on the CPU a tick",
            std::time::Duration::from_secs(5),
            || {
                let m = members(pid, pid);
                m.len() >= 3 && m.iter().any(|&(_, ticks, _)| ticks > 0)
            },
        );
        let s = sample(pid, pid, true);
        // SAFETY: kill(2) on our own child's group.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
        let _ = child.wait();
        assert!(s.processes >= 3, "{s:?}");
        assert!(s.rss_bytes > 1024 * 1024, "{s:?}");
        assert!(s.cpu_s > 0.0, "{s:?}");
        assert!(s.pss_bytes.is_some_and(|p| p > 0), "{s:?}");
    }

    /// A child leading its own process group, which is SIGKILLed and
    /// reaped on drop, also when the test fails first.
    struct Group(std::process::Child);

    impl Drop for Group {
        fn drop(&mut self) {
            // SAFETY: kill(2) on our own child's group.
            unsafe { libc::kill(-(self.0.id() as i32), libc::SIGKILL) };
            let _ = self.0.wait();
        }
    }

    #[test]
    fn precise_cpu_counts_a_busy_child() {
        use std::os::unix::process::CommandExt;
        // Busy until killed: it is on the CPU through both samples.
        let child = Group(
            std::process::Command::new("sh")
                .arg("-c")
                .arg("while :; do :; done")
                .process_group(0)
                .spawn()
                .unwrap(),
        );
        let pid = child.0.id() as i32;
        shootout_testkit::wait_until(
            "the busy child has used CPU time",
            std::time::Duration::from_secs(5),
            || cpu_seconds_precise(pid, pid) > 0.0,
        );
        let a = cpu_seconds_precise(pid, pid);
        std::thread::sleep(std::time::Duration::from_millis(300));
        let b = cpu_seconds_precise(pid, pid);
        drop(child);
        assert!(b > a && b > 0.0, "{a} -> {b}");
    }
}
