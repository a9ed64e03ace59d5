//! A process tree in a cgroup of its own: every target's server (with all
//! the workers it forks) gets one (`shootout_servers::cgroup`), with an
//! optional budget (a CPU quota in 100 ms periods, a hard memory limit with
//! swap off, a CPU list), and their CPU time, throttling, peak memory and
//! OOM kills are read from the kernel's own counters rather than sampled.
//!
//! Both interfaces: v2 (one unified tree, most machines) and v1 (one tree
//! per controller, `cpu` and `cpuacct` often together). [`Layout::detect`]
//! reads `/proc/self/mountinfo`; a test builds a [`Layout`] over a folder.
//! Groups live at `shootout/<pid>-<start>/<name>` under each tree;
//! [`Group::remove`] and its drop kill and remove them, and
//! [`Layout::sweep`] removes those of a shootout that died by SIGKILL.
//!
//! Where no group can be made (not root, a read-only cgroupfs, a missing
//! controller), every function returns a [`CgroupError`] whose
//! [`CgroupError::is_unavailable`] is true and whose message is one line:
//! the caller falls back to sampling `/proc` and says why.

#![deny(clippy::print_stdout, clippy::print_stderr)]

mod attach;
pub mod budget;
mod counters;
mod detect;
mod error;
mod fs;
mod group;
mod layout;
mod owner;
mod remove;
mod sweep;

pub use attach::Attacher;
pub use budget::{parse_cpu_list, Budget, PERIOD_US};
pub use counters::{Counters, Delta};
pub use error::{CgroupError, Result};
pub use group::Group;
pub use layout::{Controller, Hierarchy, Layout, Version};
pub use owner::{Owner, PARENT};
