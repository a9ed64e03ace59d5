//! The machine-wide measurement lock as `run`, `capacity` and a pinned
//! `load` take it ([`shootout_runner::machine_lock`]): `--no-wait` refuses
//! (exit 2, naming the holder) instead of waiting, and a waiter says once
//! who it waits for.

use shootout_runner::machine_lock::{self, Holder, MachineLock};

/// The lock's flag, flattened into each command that measures.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct LockArgs {
    /// When another run, capacity search or pinned load holds the machine-wide lock ($SHOOTOUT_LOCK, default /tmp/shootout.lock), exit 2 instead of waiting for it.
    #[arg(long)]
    pub no_wait: bool,
}

/// Takes the machine lock for this command, waiting unless `--no-wait`.
pub fn take(args: &LockArgs) -> anyhow::Result<MachineLock> {
    let path = machine_lock::path();
    let mut on_wait = |h: Option<&Holder>| {
        let who = h.map_or_else(|| "another process".to_string(), Holder::to_string);
        eprintln!(
            "waiting for the machine lock {}: held by {who} (--no-wait refuses instead)",
            path.display()
        );
    };
    Ok(machine_lock::acquire(
        &path,
        &command_line(),
        !args.no_wait,
        &mut on_wait,
    )?)
}

/// `shootout run default --quick`: how a waiter names this process.
fn command_line() -> String {
    let mut args = std::env::args();
    let program = args
        .next()
        .and_then(|a| {
            std::path::Path::new(&a)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "shootout".into());
    let line = std::iter::once(program)
        .chain(args)
        .collect::<Vec<_>>()
        .join(" ");
    line.chars().take(200).collect()
}
