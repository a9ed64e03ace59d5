//! CPU pinning through sched_setaffinity(2). A server is pinned by starting
//! it from a short-lived thread that is itself pinned: fork(2) copies the
//! calling thread's mask, so the server and every process or thread it
//! creates inherit it from the first instruction, with no race.

use std::mem;

/// The CPUs the calling thread may run on, if the kernel says.
pub fn current() -> Option<Vec<usize>> {
    // SAFETY: cpu_set_t is plain old data; the kernel fills it.
    let mut set: libc::cpu_set_t = unsafe { mem::zeroed() };
    let rc = unsafe { libc::sched_getaffinity(0, mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return None;
    }
    let cpus: Vec<usize> = (0..libc::CPU_SETSIZE as usize)
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect();
    (!cpus.is_empty()).then_some(cpus)
}

/// Pins the calling thread to `cpus` (no-op for an empty list).
pub fn pin_current_thread(cpus: &[usize]) -> std::io::Result<()> {
    if cpus.is_empty() {
        return Ok(());
    }
    // SAFETY: as above; CPU_SET only writes inside the set for c < CPU_SETSIZE.
    let mut set: libc::cpu_set_t = unsafe { mem::zeroed() };
    for &c in cpus.iter().filter(|&&c| c < libc::CPU_SETSIZE as usize) {
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    let rc = unsafe { libc::sched_setaffinity(0, mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Runs `f` on a fresh thread pinned to `cpus`, so that processes it spawns
/// inherit the mask; the caller's own mask is untouched.
pub fn with_pinned_thread<T: Send>(
    cpus: &[usize],
    f: impl FnOnce() -> T + Send,
) -> std::io::Result<T> {
    std::thread::scope(|s| {
        s.spawn(|| {
            pin_current_thread(cpus)?;
            Ok(f())
        })
        .join()
        .unwrap_or_else(|p| std::panic::resume_unwind(p))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spawned_child_inherits_the_pinned_threads_mask() {
        let allowed = current().unwrap();
        let cpu = *allowed.last().unwrap();
        let out = with_pinned_thread(&[cpu], || {
            std::process::Command::new("sh")
                .arg("-c")
                .arg("grep Cpus_allowed_list /proc/self/status")
                .output()
                .unwrap()
        })
        .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.trim().ends_with(&format!("\t{cpu}")), "{text}");
        assert_eq!(current().unwrap(), allowed, "caller's mask unchanged");
    }
}
