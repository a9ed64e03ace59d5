//! The one place the binary handles Ctrl-C (SIGINT). Commands register what
//! a press means to them; the handler runs on ctrlc's own thread, once per
//! signal, and is told how many presses there have been, so a command can
//! stop gracefully on the first and quit at once (exit 130) on the second.

use anyhow::Context as _;
use std::sync::atomic::{AtomicU32, Ordering};

/// The exit code of a command stopped by Ctrl-C (128 + SIGINT).
pub const EXIT_INTERRUPTED: u8 = 130;

/// Calls `on_press(n)` on the n-th Ctrl-C (n starts at 1).
pub fn on_ctrl_c(on_press: impl Fn(u32) + Send + 'static) -> anyhow::Result<()> {
    let presses = AtomicU32::new(0);
    ctrlc::set_handler(move || on_press(presses.fetch_add(1, Ordering::SeqCst) + 1))
        .context("cannot install the Ctrl-C handler")
}

/// Exits at once with [`EXIT_INTERRUPTED`], for a second Ctrl-C.
pub fn exit_now() -> ! {
    std::process::exit(i32::from(EXIT_INTERRUPTED))
}
