//! A cgroup per server start, so the kernel counts every process the server
//! runs (forked workers and exited children included) and its removal kills
//! whatever escaped the server's process group. This module owns the
//! registry of live servers (process group and cgroup, for a Ctrl-C
//! handler), the group names, and the once-per-process sweep of groups left
//! by shootouts that died by SIGKILL. Where no group can be made the server
//! runs without one and keeps the typed reason for its caller. The
//! PostgreSQL cluster of database scenarios is registered the same way,
//! under its postmaster's process group.

use shootout_cgroup::{Budget, CgroupError, Counters, Group, Layout};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, Once};

/// Live servers: process group id and the server's cgroup, if it has one.
static LIVE: Mutex<BTreeMap<i32, Option<Group>>> = Mutex::new(BTreeMap::new());

fn live() -> MutexGuard<'static, BTreeMap<i32, Option<Group>>> {
    // A panic elsewhere while holding the lock must not stop the cleanup.
    LIVE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Makes a fresh group for one start of `target` with `limits`, sweeping
/// dead owners' groups first (once per process). Each start gets its own
/// group, so the counters of one start never include another's.
pub(crate) fn make(target: &str, limits: &Limits) -> Result<Group, CgroupError> {
    make_named(|n| group_name(target, n), limits)
}

/// A fresh group for one PostgreSQL cluster (`database-<n>`), unlimited:
/// it exists for its counters and so its removal kills every backend.
pub(crate) fn make_database() -> Result<Group, CgroupError> {
    make_named(|n| format!("database-{n}"), &Limits::default())
}

fn make_named(name: impl Fn(u64) -> String, limits: &Limits) -> Result<Group, CgroupError> {
    static SWEPT: Once = Once::new();
    static STARTS: AtomicU64 = AtomicU64::new(0);
    let layout = Layout::detect()?;
    // A sweep that fails leaves only stale folders; the create below
    // reports any permission problem itself.
    SWEPT.call_once(|| drop(layout.sweep()));
    let n = STARTS.fetch_add(1, Ordering::Relaxed);
    layout.create_quota_ready(&name(n), &limits.budget, limits.quota_ready)
}

/// The budget a server starts under, and whether a later load level may
/// set a CPU quota (the group then joins the `cpu` controller from the
/// start, see `shootout_cgroup::Layout::create_quota_ready`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Limits {
    pub budget: Budget,
    pub quota_ready: bool,
}

impl Limits {
    /// Whether anything is limited, now or later: a start with limits
    /// must have a cgroup, or it would measure something else.
    pub fn any(&self) -> bool {
        self.quota_ready || self.budget != Budget::default()
    }
}

/// `server-<target>-<n>` with anything but letters, digits, `-` and `_`
/// replaced, short enough for the cgroup crate's 64-byte limit.
fn group_name(target: &str, n: u64) -> String {
    let clean: String = target
        .chars()
        .take(36)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("server-{clean}-{n}")
}

/// Records a started server.
pub(crate) fn register(pgid: i32, group: Option<Group>) {
    live().insert(pgid, group);
}

/// Runs `f` on the group of live server `pgid`, mutably; None when it has
/// none (or was already released).
pub(crate) fn with_group_mut<T>(pgid: i32, f: impl FnOnce(&mut Group) -> T) -> Option<T> {
    live().get_mut(&pgid).and_then(|g| g.as_mut()).map(f)
}

/// Runs `f` on the group of live server `pgid`; None when it has none (or
/// was already released).
pub(crate) fn with_group<T>(pgid: i32, f: impl FnOnce(&Group) -> T) -> Option<T> {
    live().get(&pgid).and_then(|g| g.as_ref()).map(f)
}

/// Forgets server `pgid` and removes its group (killing what is left in
/// it). Returns whether it was registered and the removal's error, if any.
pub(crate) fn release(pgid: i32) -> (bool, Option<CgroupError>) {
    let entry = live().remove(&pgid);
    match entry {
        Some(Some(group)) => (true, group.remove().err()),
        Some(None) => (true, None),
        None => (false, None),
    }
}

/// Takes every live server: their process groups, then their cgroups (to
/// be killed and removed by the caller after the signals).
pub(crate) fn take_all() -> Vec<(i32, Option<Group>)> {
    std::mem::take(&mut *live()).into_iter().collect()
}

/// Whether servers will get cgroups here: makes and removes a probe group.
/// Ok: the layout in one line, for a run's header; Err: why not (the run
/// then samples `/proc`).
pub fn probe() -> Result<String, CgroupError> {
    let group = make("probe", &Limits::default())?;
    let layout = Layout::detect()?;
    group.remove()?;
    Ok(layout.describe())
}

/// A handle on a live server's cgroup that another thread (a sampler) can
/// hold: it reads through the registry, so it never outlives the group.
#[derive(Debug, Clone, Copy)]
pub struct CgroupReader {
    pub(crate) pgid: i32,
}

impl CgroupReader {
    /// The group's counters; None once the server is stopped.
    pub fn counters(&self) -> Option<Result<Counters, CgroupError>> {
        with_group(self.pgid, Group::counters)
    }

    /// Restarts the group's memory high-water mark where the kernel allows
    /// (v1; see [`Group::reset_peak`]); None once the server is stopped.
    pub fn reset_peak(&self) -> Option<Result<bool, CgroupError>> {
        with_group(self.pgid, Group::reset_peak)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_names_are_safe_and_distinct() {
        assert_eq!(group_name("rust-axum", 3), "server-rust-axum-3");
        assert_eq!(group_name("a b/c", 0), "server-a_b_c-0");
        let long = group_name(&"x".repeat(200), u64::MAX);
        assert!(long.len() <= 64, "{long}");
    }
}
