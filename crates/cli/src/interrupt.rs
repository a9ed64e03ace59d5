//! The one place the binary handles the signals that ask it to stop:
//! SIGINT (Ctrl-C), SIGTERM (what `kill`, `timeout`, systemd, Kubernetes
//! and CI runners send) and SIGHUP (the terminal went away). All three mean
//! the same: commands register what a stop means to them, and the handler
//! runs on a thread of its own, once per signal, told how many there have
//! been, so a command can stop gracefully on the first and quit at once on
//! the second. A command stopped by a signal exits 128 + its number, as a
//! shell reports a process killed by it (130 SIGINT, 143 SIGTERM, 129
//! SIGHUP); the number is the first stop signal received.
//!
//! The C handler only writes the signal's number to a pipe (write(2) is
//! async-signal-safe); the thread reading the pipe does the rest.

use anyhow::Context as _;
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};

/// The signals that stop a command.
const STOP_SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// The pipe's write end, for the C handler (-1 until installed).
static PIPE_WRITE: AtomicI32 = AtomicI32::new(-1);
/// The first stop signal received (0: none).
static FIRST: AtomicI32 = AtomicI32::new(0);

/// The exit code of a command stopped by `signal`.
pub fn exit_code(signal: i32) -> u8 {
    u8::try_from(128 + signal).unwrap_or(130)
}

/// The exit code of a command stopped by the stop signal received (130,
/// Ctrl-C's, when none was).
pub fn exit_interrupted() -> u8 {
    exit_code(received().unwrap_or(libc::SIGINT))
}

/// The first stop signal received, if any.
pub fn received() -> Option<i32> {
    match FIRST.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

/// What a first stop's message adds: how to quit at once, only after a
/// Ctrl-C (whoever sent SIGTERM or SIGHUP is not at a keyboard; a second
/// signal of any kind still quits at once).
pub fn again_hint() -> &'static str {
    match received() {
        None | Some(libc::SIGINT) => " (Ctrl-C again to quit at once)",
        Some(_) => "",
    }
}

/// How a message names the stop: "Ctrl-C", "SIGTERM" or "SIGHUP".
pub fn stop_name() -> &'static str {
    match received() {
        Some(libc::SIGTERM) => "SIGTERM",
        Some(libc::SIGHUP) => "SIGHUP",
        _ => "Ctrl-C",
    }
}

extern "C" fn on_signal(signal: libc::c_int) {
    let byte = signal as u8;
    let fd = PIPE_WRITE.load(Ordering::SeqCst);
    // SAFETY: write(2) is async-signal-safe; the byte lives on this stack.
    // The pipe is non-blocking: a full pipe drops the signal, never hangs.
    unsafe { libc::write(fd, std::ptr::addr_of!(byte).cast(), 1) };
}

/// Calls `on_stop(n)` on the n-th stop signal (n starts at 1): SIGINT,
/// SIGTERM or SIGHUP. Installed once per process.
pub fn on_stop(on_stop: impl Fn(u32) + Send + 'static) -> anyhow::Result<()> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills the two descriptors of the array it is given.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error()).context("cannot create the signal pipe");
    }
    let [read, write] = fds;
    // SAFETY: fcntl on a descriptor just created.
    unsafe { libc::fcntl(write, libc::F_SETFL, libc::O_NONBLOCK) };
    anyhow::ensure!(
        PIPE_WRITE
            .compare_exchange(-1, write, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok(),
        "the stop-signal handler is already installed"
    );
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || listen(read, on_stop))
        .context("cannot start the signal thread")?;
    for signal in STOP_SIGNALS {
        // SAFETY: a zeroed sigaction with a handler that only calls write(2);
        // SA_RESTART keeps other threads' blocking calls from failing EINTR.
        let rc = unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as *const () as usize;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut())
        };
        if rc != 0 {
            return Err(std::io::Error::last_os_error())
                .with_context(|| format!("cannot handle signal {signal}"));
        }
    }
    Ok(())
}

/// The signal thread: one call of `on_stop` per signal read from the pipe.
fn listen(read: libc::c_int, on_stop: impl Fn(u32)) {
    let presses = AtomicU32::new(0);
    loop {
        let mut byte = 0u8;
        // SAFETY: read(2) of one byte into a local.
        let n = unsafe { libc::read(read, std::ptr::addr_of_mut!(byte).cast(), 1) };
        if n != 1 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return;
        }
        let signal = i32::from(byte);
        let _ = FIRST.compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst);
        if signal == libc::SIGHUP {
            detach_from_terminal();
        }
        on_stop(presses.fetch_add(1, Ordering::SeqCst) + 1);
    }
}

/// After SIGHUP the terminal is gone and writing to it fails, which would
/// make every later message panic before the run is saved: point the
/// standard streams that were that terminal at /dev/null instead.
fn detach_from_terminal() {
    // SAFETY: open, isatty, dup2 and close on descriptors this process owns.
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC);
        if null < 0 {
            return;
        }
        for fd in 0..=2 {
            if libc::isatty(fd) == 1 {
                libc::dup2(null, fd);
            }
        }
        libc::close(null);
    }
}

/// Exits at once with 128 + the first stop signal, for a second one.
pub fn exit_now() -> ! {
    std::process::exit(i32::from(exit_interrupted()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signal_stop_exits_128_plus_its_number() {
        assert_eq!(exit_code(libc::SIGINT), 130);
        assert_eq!(exit_code(libc::SIGTERM), 143);
        assert_eq!(exit_code(libc::SIGHUP), 129);
    }
}
