//! Facts about the machine and this checkout that every run records: CPU
//! model, cores, memory, kernel, host name, git commit, and the split of the
//! CPUs this process may use between the servers and the load generator;
//! and, for the run header, how busy the machine is as the run starts.

use shootout_store::{Host, Pinning};
use shootout_study::CpuSplit;
use std::path::Path;

/// How busy the machine is as a run starts (the run header says it).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct HostState {
    /// The 1-minute load average; None where /proc/loadavg is unreadable.
    pub load_1m: Option<f64>,
    /// Share of the measured CPUs' time other processes used over a
    /// one-second probe (nothing of ours runs meanwhile).
    pub others_cpu_share: Option<f64>,
    /// Share of that time the hypervisor stole.
    pub steal_share: Option<f64>,
}

/// Probes `cpus` for [`HOST_PROBE`] and reads the load average.
pub fn state(cpus: &[usize]) -> HostState {
    let load_1m = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|t| t.split_whitespace().next()?.parse().ok());
    let probe = crate::quiet::probe(cpus, HOST_PROBE);
    HostState {
        load_1m,
        others_cpu_share: probe.map(|d| d.others_cpu_share),
        steal_share: probe.map(|d| d.steal_share),
    }
}

/// How long the run header's probe of the CPUs lasts.
pub const HOST_PROBE: std::time::Duration = std::time::Duration::from_secs(1);

/// Reads the host description from /proc and uname(2).
pub fn host() -> Host {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu_model = cpuinfo
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            matches!(k.trim(), "model name" | "Model" | "cpu model").then(|| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into());
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let mem_total_mib = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kib| kib / 1024);
    let (kernel, hostname) = uname();
    Host {
        cpu_model,
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        mem_total_mib,
        kernel,
        hostname,
    }
}

fn uname() -> (String, String) {
    // SAFETY: utsname is plain old data; uname fills it or fails.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    if unsafe { libc::uname(&mut u) } != 0 {
        return ("unknown".into(), "unknown".into());
    }
    let field = |f: &[libc::c_char]| {
        let bytes: Vec<u8> = f
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    (
        format!("{} {}", field(&u.sysname), field(&u.release)),
        field(&u.nodename),
    )
}

/// The commit checked out in `dir` (short hash, `+dirty` if modified), if any.
pub fn git_commit(dir: &Path) -> Option<String> {
    let run = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .stderr(std::process::Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let hash = run(&["rev-parse", "--short=12", "HEAD"])?;
    let dirty =
        run(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    Some(if dirty { format!("{hash}+dirty") } else { hash })
}

/// A study's CPU split that this machine cannot honour.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CpuError {
    #[error("cpus: CPU {cpu} is not available to this process (allowed: {allowed:?})")]
    Unavailable { cpu: usize, allowed: Vec<usize> },
}

/// Splits CPUs as the study asks. `Auto`: servers get the first half
/// (rounded up), the generator the rest; with one CPU nothing is pinned.
pub fn split_cpus(split: &CpuSplit, allowed: &[usize]) -> Result<Pinning, CpuError> {
    match split {
        CpuSplit::Auto => {
            if allowed.len() < 2 {
                return Ok(Pinning::default());
            }
            let server = allowed.len().div_ceil(2);
            Ok(Pinning {
                server_cpus: allowed[..server].to_vec(),
                generator_cpus: allowed[server..].to_vec(),
            })
        }
        CpuSplit::Explicit { server, generator } => {
            if let Some(&cpu) = server
                .iter()
                .chain(generator)
                .find(|c| !allowed.contains(c))
            {
                return Err(CpuError::Unavailable {
                    cpu,
                    allowed: allowed.to_vec(),
                });
            }
            Ok(Pinning {
                server_cpus: server.clone(),
                generator_cpus: generator.clone(),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_split_is_half_and_half() {
        let p = split_cpus(&CpuSplit::Auto, &[0, 1]).unwrap();
        assert_eq!((p.server_cpus, p.generator_cpus), (vec![0], vec![1]));
        let p = split_cpus(&CpuSplit::Auto, &[0, 1, 2, 3, 4]).unwrap();
        assert_eq!(
            (p.server_cpus, p.generator_cpus),
            (vec![0, 1, 2], vec![3, 4])
        );
        assert_eq!(
            split_cpus(&CpuSplit::Auto, &[3]).unwrap(),
            Pinning::default()
        );
        let explicit = CpuSplit::Explicit {
            server: vec![0],
            generator: vec![7],
        };
        assert_eq!(
            split_cpus(&explicit, &[0, 1]).unwrap_err().to_string(),
            "cpus: CPU 7 is not available to this process (allowed: [0, 1])"
        );
    }

    #[test]
    fn host_state_is_read() {
        let s = state(&[0]);
        assert!(s.load_1m.is_some_and(|l| l >= 0.0), "{s:?}");
        let others = s.others_cpu_share.expect("cpu0 is readable");
        assert!((0.0..=1.0).contains(&others), "{s:?}");
        assert_eq!(state(&[]).others_cpu_share, None, "no CPU, no probe");
    }

    #[test]
    fn host_facts_are_read() {
        let h = host();
        assert!(h.cores >= 1);
        assert!(h.mem_total_mib > 0);
        assert!(h.kernel.starts_with("Linux"), "{}", h.kernel);
    }
}
