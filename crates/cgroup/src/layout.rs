//! Where the cgroup hierarchies are: one unified tree (v2) or one tree per
//! controller group (v1, where `cpu` and `cpuacct` are often co-mounted).
//! A [`Layout`] holds, per hierarchy, the *base* folder under which this
//! crate makes `shootout/<owner>/<name>`. [`Layout::detect`] (in `detect.rs`,
//! which builds on this module) finds it from `/proc/self`; tests build one
//! over a temporary folder instead.

use crate::error::{CgroupError, Result};
use crate::fs;
use std::path::PathBuf;

/// Which cgroup interface the kernel offers here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// Separate hierarchies per controller (`/sys/fs/cgroup/cpu`, ...).
    V1,
    /// The unified hierarchy with `cgroup.controllers`.
    V2,
}

/// The controllers this crate uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Controller {
    /// CPU quota and throttling (`cpu.max` / `cpu.cfs_quota_us`, `cpu.stat`).
    Cpu,
    /// CPU time on v1 (`cpuacct.usage`); part of `cpu` on v2.
    Cpuacct,
    /// CPU lists (`cpuset.cpus`); optional.
    Cpuset,
    /// Memory limit, peak and OOM kills.
    Memory,
}

impl Controller {
    /// The kernel's name of the controller.
    pub fn name(self) -> &'static str {
        match self {
            Controller::Cpu => "cpu",
            Controller::Cpuacct => "cpuacct",
            Controller::Cpuset => "cpuset",
            Controller::Memory => "memory",
        }
    }

    pub(crate) const REQUIRED_V1: [Controller; 3] =
        [Controller::Cpu, Controller::Cpuacct, Controller::Memory];
}

/// One hierarchy: the controllers attached to it and the folder under which
/// groups are made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hierarchy {
    pub controllers: Vec<Controller>,
    pub base: PathBuf,
}

/// The hierarchies found (or given), checked to hold what the crate needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    version: Version,
    hierarchies: Vec<Hierarchy>,
}

impl Layout {
    /// A unified (v2) tree whose groups go under `base`. The controllers are
    /// those `base/cgroup.controllers` lists; `cpu` and `memory` are needed.
    pub fn v2(base: impl Into<PathBuf>) -> Result<Layout> {
        let base = base.into();
        let listed = fs::read(&base.join("cgroup.controllers"))?;
        let mut controllers = Vec::new();
        for want in [Controller::Cpu, Controller::Memory, Controller::Cpuset] {
            if listed.split_whitespace().any(|c| c == want.name()) {
                controllers.push(want);
            } else if want != Controller::Cpuset {
                return Err(CgroupError::NoController {
                    controller: want.name(),
                    path: base,
                });
            }
        }
        Ok(Layout {
            version: Version::V2,
            hierarchies: vec![Hierarchy { controllers, base }],
        })
    }

    /// Separate (v1) hierarchies. Each needed controller (`cpu`, `cpuacct`,
    /// `memory`) must appear in exactly one; `cpuset` is optional.
    pub fn v1(hierarchies: Vec<Hierarchy>) -> Result<Layout> {
        for want in Controller::REQUIRED_V1 {
            if !hierarchies.iter().any(|h| h.controllers.contains(&want)) {
                let path = hierarchies.first().map(|h| h.base.clone());
                return Err(CgroupError::NoController {
                    controller: want.name(),
                    path: path.unwrap_or_else(|| PathBuf::from("/sys/fs/cgroup")),
                });
            }
        }
        Ok(Layout {
            version: Version::V1,
            hierarchies,
        })
    }

    /// Which interface this layout uses.
    pub fn version(&self) -> Version {
        self.version
    }

    /// The hierarchies, each once.
    pub fn hierarchies(&self) -> &[Hierarchy] {
        &self.hierarchies
    }

    /// Whether `c` can be used (always for `cpu`, `cpuacct` and `memory`).
    pub fn has(&self, c: Controller) -> bool {
        self.version == Version::V2 && c == Controller::Cpuacct
            || self.hierarchies.iter().any(|h| h.controllers.contains(&c))
    }

    /// One line for a run's header: "cgroup v1 (cpu at /sys/fs/cgroup/cpu, ...)".
    pub fn describe(&self) -> String {
        let parts: Vec<String> = self
            .hierarchies
            .iter()
            .map(|h| {
                let names: Vec<&str> = h.controllers.iter().map(|c| c.name()).collect();
                format!("{} at {}", names.join(","), h.base.display())
            })
            .collect();
        let v = match self.version {
            Version::V1 => "v1",
            Version::V2 => "v2",
        };
        format!("cgroup {v} ({})", parts.join("; "))
    }
}
