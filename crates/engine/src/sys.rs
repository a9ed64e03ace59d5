//! Thin, safe wrappers over the Linux calls the engine needs and std lacks:
//! an edge-triggered epoll set, the open-file limit, timer slack and process
//! CPU time. All `unsafe` in the engine lives here, in `affinity.rs` and in
//! `ring.rs` (io_uring).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Set once the kernel says it has no epoll_pwait2 (before Linux 5.11).
static PWAIT2_MISSING: AtomicBool = AtomicBool::new(false);

/// Readiness the worker cares about.
pub(crate) const READABLE: u32 = libc::EPOLLIN as u32;
pub(crate) const WRITABLE: u32 = libc::EPOLLOUT as u32;
/// The peer shut down its side, reset, or the socket failed.
pub(crate) const HANGUP: u32 = (libc::EPOLLRDHUP | libc::EPOLLHUP | libc::EPOLLERR) as u32;
/// Edge-triggered: each socket is registered once for both directions and
/// never modified, and the kernel does not re-poll sockets that were
/// reported ready but have nothing new.
pub(crate) const EDGE: u32 = libc::EPOLLET as u32;

/// An epoll set of the worker's sockets.
#[derive(Debug)]
pub(crate) struct Poller {
    fd: OwnedFd,
    events: Vec<libc::epoll_event>,
}

impl Poller {
    pub fn new(capacity: usize) -> io::Result<Poller> {
        // SAFETY: epoll_create1 has no memory-safety preconditions.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Poller {
            // SAFETY: fd is a fresh descriptor we own.
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
            events: vec![libc::epoll_event { events: 0, u64: 0 }; capacity.clamp(16, 1024)],
        })
    }

    fn ctl(&self, op: libc::c_int, fd: RawFd, interest: u32, token: usize) -> io::Result<()> {
        let mut ev = libc::epoll_event {
            events: interest,
            u64: token as u64,
        };
        // SAFETY: ev is a valid epoll_event for the duration of the call.
        let rc = unsafe { libc::epoll_ctl(self.fd.as_raw_fd(), op, fd, &mut ev) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    pub fn add(&self, fd: RawFd, interest: u32, token: usize) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_ADD, fd, interest, token)
    }

    /// Waits up to `timeout`; returns how many events are ready (0 on error
    /// or interruption, which the caller treats as a timeout).
    ///
    /// Uses epoll_pwait2's nanosecond timeout where the kernel has it, so an
    /// open-loop ticket due in 200 µs is not sent up to a millisecond late.
    pub fn wait(&mut self, timeout: Duration) -> usize {
        let n = if PWAIT2_MISSING.load(Ordering::Relaxed) {
            -1
        } else {
            self.wait_ns(timeout)
        };
        if n >= 0 {
            return n as usize;
        }
        if io::Error::last_os_error().raw_os_error() == Some(libc::ENOSYS) {
            PWAIT2_MISSING.store(true, Ordering::Relaxed);
        } else if !PWAIT2_MISSING.load(Ordering::Relaxed) {
            return 0;
        }
        // Round up so a sub-millisecond wait does not become a busy loop.
        let ms = timeout.as_micros().div_ceil(1000).min(i32::MAX as u128) as libc::c_int;
        // SAFETY: the buffer holds `len` initialised epoll_events.
        let n = unsafe {
            libc::epoll_wait(
                self.fd.as_raw_fd(),
                self.events.as_mut_ptr(),
                self.events.len() as libc::c_int,
                ms,
            )
        };
        n.max(0) as usize
    }

    fn wait_ns(&mut self, timeout: Duration) -> libc::c_long {
        let ts = libc::timespec {
            tv_sec: timeout.as_secs().min(i32::MAX as u64) as libc::time_t,
            tv_nsec: timeout.subsec_nanos() as libc::c_long,
        };
        // SAFETY: raw syscall with a valid fd, event buffer of `len` entries,
        // a valid timespec and no signal mask (NULL, size 0).
        unsafe {
            libc::syscall(
                libc::SYS_epoll_pwait2,
                self.fd.as_raw_fd(),
                self.events.as_mut_ptr(),
                self.events.len() as libc::c_int,
                &ts as *const libc::timespec,
                std::ptr::null::<libc::sigset_t>(),
                0usize,
            )
        }
    }

    /// The `i`th ready event of the last wait, as `(token, events)`.
    pub fn event(&self, i: usize) -> (usize, u32) {
        let e = self.events[i];
        (e.u64 as usize, e.events)
    }
}

/// Raises the soft open-file limit to the hard limit; returns the new soft limit.
pub(crate) fn raise_nofile_limit() -> u64 {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: lim is a valid out-pointer.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return 1024;
    }
    if lim.rlim_cur < lim.rlim_max {
        let raised = libc::rlimit {
            rlim_cur: lim.rlim_max,
            rlim_max: lim.rlim_max,
        };
        // SAFETY: raised is a valid rlimit.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            return raised.rlim_cur;
        }
    }
    lim.rlim_cur
}

/// Asks the kernel to wake this thread on time rather than coalescing its
/// timers (the default slack is 50 µs), for open-loop pacing.
pub(crate) fn tighten_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes a plain integer argument.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
    }
}

/// User + system CPU time of this whole process.
pub(crate) fn process_cpu_time() -> Duration {
    // SAFETY: usage is a valid out-pointer.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return Duration::ZERO;
    }
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}
