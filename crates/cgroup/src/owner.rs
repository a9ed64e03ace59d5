//! Whose groups these are. Groups outlive a SIGKILLed shootout (nothing
//! runs its drops), so every group sits under `shootout/<pid>-<start>`
//! ([`PARENT`], then an [`Owner`]'s folder): the owner's pid and its start
//! time in clock ticks since boot (field 22 of `/proc/<pid>/stat`). The
//! start time keeps a reused pid from passing for a dead owner. Making
//! (`group.rs`), removing (`remove.rs`) and sweeping (`sweep.rs`) groups
//! all name folders through this module.

use crate::error::{CgroupError, Result};
use crate::fs;
use std::path::Path;

/// The folder under each base that holds every group this crate makes.
pub const PARENT: &str = "shootout";

/// The process that owns a set of groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Owner {
    pub pid: u32,
    /// Start time in clock ticks since boot.
    pub start: u64,
}

impl Owner {
    /// This process.
    pub fn current() -> Result<Owner> {
        let path = Path::new("/proc/self/stat");
        let stat = fs::read(path)?;
        let start = start_ticks(&stat).ok_or_else(|| CgroupError::Malformed {
            path: path.to_path_buf(),
            detail: "no start time (field 22)".into(),
        })?;
        Ok(Owner {
            pid: std::process::id(),
            start,
        })
    }

    /// The folder name under `shootout/`.
    pub fn dir_name(&self) -> String {
        format!("{}-{}", self.pid, self.start)
    }

    /// The owner a folder name stands for, if it is one.
    pub fn parse(name: &str) -> Option<Owner> {
        let (pid, start) = name.split_once('-')?;
        Some(Owner {
            pid: pid.parse().ok()?,
            start: start.parse().ok()?,
        })
    }

    /// Whether the owner still runs: its pid exists with the same start time.
    pub fn is_alive(&self) -> bool {
        std::fs::read_to_string(format!("/proc/{}/stat", self.pid))
            .ok()
            .and_then(|s| start_ticks(&s))
            == Some(self.start)
    }
}

/// Field 22 of a `/proc/<pid>/stat` line. The command name (field 2) is in
/// parentheses and may hold spaces and parentheses, so count from the last
/// `)`: field 3 is the first after it.
fn start_ticks(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(22 - 3)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_time_survives_odd_command_names() {
        let tail = "S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 4242 20 21";
        let stat = format!("77 (a) b (c) {tail}");
        assert_eq!(start_ticks(&stat), Some(4242));
        assert_eq!(start_ticks("77 (x) S 1 2"), None);
    }

    #[test]
    fn this_process_is_alive_and_a_changed_start_is_not() {
        let me = Owner::current().unwrap();
        assert!(me.is_alive());
        let reused = Owner {
            start: me.start + 1,
            ..me
        };
        assert!(!reused.is_alive());
        assert_eq!(Owner::parse(&me.dir_name()), Some(me));
        assert_eq!(Owner::parse("postgres"), None);
    }
}
