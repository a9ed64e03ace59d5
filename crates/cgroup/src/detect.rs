//! Detection: which cgroup interface this process sees, from the text of
//! `/proc/self/mountinfo` (what is mounted where) and `/proc/self/cgroup`
//! (which group this process is in). Pure over those two texts, so tests
//! feed them the lines of a v1 machine or a v2 tree in a temporary folder.
//!
//! v2 wins when its tree offers `cpu` and `memory` (a hybrid machine mounts
//! an empty unified tree beside v1). Its groups go under the mount point:
//! v2 forbids controllers under a group that holds processes, and this
//! process's own group holds at least this process. v1 groups go under this
//! process's own group in each hierarchy, so any limit already imposed on
//! the caller (a container's) still covers them.

use crate::error::{CgroupError, Result};
use crate::fs;
use crate::layout::{Controller, Hierarchy, Layout};
use std::path::{Path, PathBuf};

impl Layout {
    /// Finds the layout from `/proc/self/mountinfo` and `/proc/self/cgroup`.
    pub fn detect() -> Result<Layout> {
        let mountinfo = fs::read(Path::new("/proc/self/mountinfo"))?;
        let own = fs::read(Path::new("/proc/self/cgroup"))?;
        layout(&mountinfo, &own)
    }
}

/// One line of mountinfo, the fields detection needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mount {
    /// The path of the hierarchy that is mounted (not "/" in a container
    /// that bind-mounts its own subtree).
    pub root: String,
    pub point: PathBuf,
    pub fstype: String,
    pub super_options: Vec<String>,
}

/// The cgroup mounts of a mountinfo text; lines of other file systems and
/// lines that do not parse are skipped (the kernel writes this file).
pub(crate) fn cgroup_mounts(mountinfo: &str) -> Vec<Mount> {
    mountinfo.lines().filter_map(parse_mount).collect()
}

fn parse_mount(line: &str) -> Option<Mount> {
    // id parent major:minor root point options [optional...] - fstype source super
    let (head, tail) = line.split_once(" - ")?;
    let head: Vec<&str> = head.split(' ').collect();
    let tail: Vec<&str> = tail.split(' ').collect();
    let fstype = *tail.first()?;
    if fstype != "cgroup" && fstype != "cgroup2" {
        return None;
    }
    Some(Mount {
        root: unescape(head.get(3)?),
        point: PathBuf::from(unescape(head.get(4)?)),
        fstype: fstype.to_string(),
        super_options: tail.get(2)?.split(',').map(str::to_string).collect(),
    })
}

/// mountinfo escapes space, tab, newline and backslash as `\ooo`.
fn unescape(field: &str) -> String {
    let b = field.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = b
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match (b[i], octal) {
            (b'\\', Some(d)) => {
                out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
                i += 4;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// This process's group per hierarchy: `(controllers, path)`; v2's line has
/// no controllers (`0::/path`).
pub(crate) fn own_groups(proc_cgroup: &str) -> Vec<(Vec<String>, String)> {
    proc_cgroup
        .lines()
        .filter_map(|l| {
            let mut f = l.splitn(3, ':');
            let _id = f.next()?;
            let ctl = f.next()?;
            let path = f.next()?;
            let ctl = ctl.split(',').filter(|c| !c.is_empty()).map(str::to_string);
            Some((ctl.collect(), path.to_string()))
        })
        .collect()
}

/// The layout these two texts describe; see the module doc for the choice.
pub(crate) fn layout(mountinfo: &str, proc_cgroup: &str) -> Result<Layout> {
    let mounts = cgroup_mounts(mountinfo);
    let own = own_groups(proc_cgroup);
    let mut why = Vec::new();
    for m in mounts.iter().filter(|m| m.fstype == "cgroup2") {
        match Layout::v2(&m.point) {
            Ok(l) => return Ok(l),
            Err(e) => why.push(format!("v2 at {}: {e}", m.point.display())),
        }
    }
    match v1_hierarchies(&mounts, &own) {
        Ok(h) => Layout::v1(h),
        Err(e) => {
            why.push(e.to_string());
            Err(CgroupError::NotMounted(why.join("; ")))
        }
    }
}

/// No v1 hierarchy offers a controller the budget or counters need; one
/// part of [`CgroupError::NotMounted`]'s reason.
#[derive(Debug, thiserror::Error)]
#[error("no v1 hierarchy with the `{controller}` controller")]
pub(crate) struct MissingV1Controller {
    controller: &'static str,
}

fn v1_hierarchies(
    mounts: &[Mount],
    own: &[(Vec<String>, String)],
) -> Result<Vec<Hierarchy>, MissingV1Controller> {
    let wanted = [
        Controller::Cpu,
        Controller::Cpuacct,
        Controller::Cpuset,
        Controller::Memory,
    ];
    let mut out: Vec<Hierarchy> = Vec::new();
    for m in mounts.iter().filter(|m| m.fstype == "cgroup") {
        let controllers: Vec<Controller> = wanted
            .into_iter()
            .filter(|c| m.super_options.iter().any(|o| o == c.name()))
            .collect();
        let Some(first) = controllers.first() else {
            continue;
        };
        let own_path = own
            .iter()
            .find(|(ctl, _)| ctl.iter().any(|c| c == first.name()))
            .map_or("/", |(_, p)| p.as_str());
        let base = under_mount(&m.point, &m.root, own_path);
        // The same hierarchy can be mounted twice (bind mounts): keep one.
        if !out.iter().any(|h| h.controllers == controllers) {
            out.push(Hierarchy { controllers, base });
        }
    }
    for want in Controller::REQUIRED_V1 {
        if !out.iter().any(|h| h.controllers.contains(&want)) {
            return Err(MissingV1Controller {
                controller: want.name(),
            });
        }
    }
    Ok(out)
}

/// The folder of group `own` in a hierarchy whose `root` is mounted at
/// `point`.
fn under_mount(point: &Path, root: &str, own: &str) -> PathBuf {
    let root = root.trim_end_matches('/');
    let rel = match own.strip_prefix(root) {
        Some(r) if r.is_empty() || r.starts_with('/') => r,
        _ => own,
    };
    let rel = rel.trim_start_matches('/');
    if rel.is_empty() {
        point.to_path_buf()
    } else {
        point.join(rel)
    }
}

#[cfg(test)]
mod tests;
