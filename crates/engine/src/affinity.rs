//! CPU affinity through sched_getaffinity(2)/sched_setaffinity(2), for the
//! whole project: which CPUs this process may use, pinning the calling
//! thread, and running a closure on a pinned helper thread. A server is
//! pinned by starting it from such a thread: fork(2) copies the calling
//! thread's mask, so the server and every process or thread it creates
//! inherit it from the first instruction, with no race. Besides `sys.rs`,
//! this is the only module of the engine with `unsafe`.

use std::io;
use std::mem;

/// The CPUs the calling thread may run on, if the kernel says.
pub fn current() -> Option<Vec<usize>> {
    // SAFETY: cpu_set_t is plain old data; the kernel fills it.
    let mut set: libc::cpu_set_t = unsafe { mem::zeroed() };
    // SAFETY: set is a valid, writable cpu_set_t of the size passed.
    let rc = unsafe { libc::sched_getaffinity(0, mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return None;
    }
    let cpus: Vec<usize> = (0..libc::CPU_SETSIZE as usize)
        // SAFETY: c < CPU_SETSIZE, so CPU_ISSET reads inside the set.
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect();
    (!cpus.is_empty()).then_some(cpus)
}

/// The CPUs this process may run on; when the kernel does not say, the
/// first `available_parallelism` CPUs.
pub fn allowed_cpus() -> Vec<usize> {
    current().unwrap_or_else(|| {
        (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect()
    })
}

/// Pins the calling thread to `cpus` (no-op for an empty list).
pub fn pin_current_thread(cpus: &[usize]) -> io::Result<()> {
    if cpus.is_empty() {
        return Ok(());
    }
    // SAFETY: as above.
    let mut set: libc::cpu_set_t = unsafe { mem::zeroed() };
    for &c in cpus.iter().filter(|&&c| c < libc::CPU_SETSIZE as usize) {
        // SAFETY: c < CPU_SETSIZE, so CPU_SET writes inside the set.
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    // SAFETY: set is a valid cpu_set_t of the size passed.
    let rc = unsafe { libc::sched_setaffinity(0, mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Runs `f` on a fresh thread pinned to `cpus`, so that processes it spawns
/// inherit the mask; the caller's own mask is untouched.
pub fn with_pinned_thread<T: Send>(cpus: &[usize], f: impl FnOnce() -> T + Send) -> io::Result<T> {
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

    #[test]
    fn allowed_cpus_is_never_empty_and_pinning_to_them_works() {
        let allowed = allowed_cpus();
        assert!(!allowed.is_empty());
        let seen = with_pinned_thread(&allowed[..1], current).unwrap();
        assert_eq!(seen, Some(allowed[..1].to_vec()));
        assert_eq!(
            with_pinned_thread(&[], || 7).unwrap(),
            7,
            "empty: no pinning"
        );
    }
}
