//! A group per server: `shootout/<owner>/<name>` under each hierarchy's
//! base, made with its budget, a process moved in, its counters read, and
//! removed (processes killed first) by [`Group::remove`] or on drop.

use crate::attach::Attacher;
use crate::budget::{Budget, PERIOD_US};
use crate::counters::{self, Counters};
use crate::error::{CgroupError, Result};
use crate::fs;
use crate::layout::{Controller, Hierarchy, Layout, Version};
use crate::owner::{Owner, PARENT};
use crate::remove;
use std::io;
use std::path::{Path, PathBuf};

/// One group: a folder per hierarchy (one on v2).
#[derive(Debug)]
pub struct Group {
    version: Version,
    name: String,
    /// The group's own folders, each with the controllers of its hierarchy.
    leaves: Vec<Hierarchy>,
    budget: Budget,
    swap_limited: bool,
    removed: bool,
}

impl Layout {
    /// Makes group `name` of this process with `budget`; see
    /// [`Layout::create_for`].
    pub fn create(&self, name: &str, budget: &Budget) -> Result<Group> {
        self.create_for(&Owner::current()?, name, budget)
    }

    /// Makes group `name` under `shootout/<owner>` in every hierarchy and
    /// applies `budget`. An existing group of that name is reused only when
    /// it holds no process (a leftover whose removal failed); its counters
    /// then start where it stopped, so callers read a baseline first. On
    /// error, whatever was made is removed again.
    pub fn create_for(&self, owner: &Owner, name: &str, budget: &Budget) -> Result<Group> {
        self.create_for_quota_ready(owner, name, budget, false)
    }

    /// [`Layout::create`], inside the `cpu` controller when `quota_ready`
    /// even if `budget` sets no quota yet, so a later
    /// [`Group::set_budget`] may set one (a server whose later load levels
    /// have a CPU budget and its first none).
    pub fn create_quota_ready(
        &self,
        name: &str,
        budget: &Budget,
        quota_ready: bool,
    ) -> Result<Group> {
        self.create_for_quota_ready(&Owner::current()?, name, budget, quota_ready)
    }

    /// [`Layout::create_quota_ready`] for `owner`.
    pub fn create_for_quota_ready(
        &self,
        owner: &Owner,
        name: &str,
        budget: &Budget,
        quota_ready: bool,
    ) -> Result<Group> {
        let cpu = quota_ready || budget.cpus.is_some();
        check_name(name)?;
        budget.validate()?;
        if budget.cpuset.is_some() && !self.has(Controller::Cpuset) {
            let base = self.hierarchies()[0].base.clone();
            return Err(CgroupError::NoController {
                controller: "cpuset",
                path: base,
            });
        }
        let mut group = Group {
            version: self.version(),
            name: name.to_string(),
            leaves: Vec::new(),
            budget: Budget::default(),
            swap_limited: false,
            removed: false,
        };
        for h in self.hierarchies() {
            let Some(h) = joined(self.version(), h, budget, cpu) else {
                continue;
            };
            let parent = h.base.join(PARENT).join(owner.dir_name());
            let leaf = prepare_leaf(self.version(), &h, &parent, name)?;
            // From here the drop of `group` removes the folder on error.
            group.leaves.push(Hierarchy {
                controllers: h.controllers.clone(),
                base: leaf.clone(),
            });
            if self.version() == Version::V1 && h.controllers.contains(&Controller::Cpuset) {
                inherit_cpuset(&leaf)?;
            }
        }
        group.set_budget(budget)?;
        Ok(group)
    }
}

/// The part of hierarchy `h` a group with `budget` joins (`cpu`: with the
/// `cpu` controller), None for none.
/// Counting (CPU time, memory) needs `cpuacct` and `memory` only; the `cpu`
/// controller is joined only for a CPU quota and `cpuset` only for a CPU
/// list, because joining `cpu` makes the whole server one scheduling entity
/// that competes as a single task with the processes beside it (a
/// PostgreSQL pinned to the same CPU would get more of it than before).
/// On v1 a hierarchy is joined whole (co-mounted `cpu,cpuacct` cannot be
/// split); on v2 only the wanted controllers are enabled down the way,
/// and `cpu.stat`'s CPU time is there without the `cpu` controller.
fn joined(version: Version, h: &Hierarchy, budget: &Budget, cpu: bool) -> Option<Hierarchy> {
    let wanted = |c: &Controller| match c {
        Controller::Cpuacct | Controller::Memory => true,
        Controller::Cpu => cpu,
        Controller::Cpuset => budget.cpuset.is_some(),
    };
    let controllers: Vec<Controller> = h.controllers.iter().copied().filter(wanted).collect();
    match version {
        Version::V1 if controllers.is_empty() => None,
        Version::V1 => Some(h.clone()),
        Version::V2 => Some(Hierarchy {
            controllers,
            base: h.base.clone(),
        }),
    }
}

/// Makes the group's own folder, or takes over an empty existing one.
fn make_leaf(leaf: &Path) -> Result<PathBuf> {
    match std::fs::create_dir(leaf) {
        Ok(()) => Ok(leaf.to_path_buf()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            let pids = fs::pids(&leaf.join("cgroup.procs"))?;
            if pids.is_empty() {
                Ok(leaf.to_path_buf())
            } else {
                Err(CgroupError::Invalid(format!(
                    "group {} already holds processes {pids:?}",
                    leaf.display()
                )))
            }
        }
        Err(e) => Err(CgroupError::io("create", leaf, e)),
    }
}

fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(CgroupError::Invalid(format!(
            "group name `{name}`: use 1 to 64 letters, digits, `-` or `_`"
        )))
    }
}

/// Makes `base/shootout/<owner>` (idempotent), with v2's controllers enabled
/// down the way and v1's cpusets filled in, then the group's folder. The
/// removal of another group (this shootout's or another's) may prune an
/// empty parent meanwhile, so a vanished parent is retried.
fn prepare_leaf(version: Version, h: &Hierarchy, parent: &Path, name: &str) -> Result<PathBuf> {
    let mut attempt = 0;
    loop {
        match prepare_once(version, h, parent).and_then(|()| make_leaf(&parent.join(name))) {
            Err(CgroupError::Io { source, .. })
                if source.kind() == io::ErrorKind::NotFound && attempt < 5 =>
            {
                attempt += 1;
            }
            other => return other,
        }
    }
}

fn prepare_once(version: Version, h: &Hierarchy, parent: &Path) -> Result<()> {
    let mut dir = h.base.clone();
    let rel = parent.strip_prefix(&h.base).unwrap_or(parent);
    if version == Version::V2 {
        enable_controllers(&dir, &h.controllers)?;
    }
    for part in rel.components() {
        dir.push(part);
        fs::mkdir(&dir)?;
        match version {
            Version::V2 => enable_controllers(&dir, &h.controllers)?,
            Version::V1 if h.controllers.contains(&Controller::Cpuset) => inherit_cpuset(&dir)?,
            Version::V1 => {}
        }
    }
    Ok(())
}

/// v2: lets the children of `dir` use `controllers` (`+cpu +memory`).
fn enable_controllers(dir: &Path, controllers: &[Controller]) -> Result<()> {
    let file = dir.join("cgroup.subtree_control");
    let on = fs::read(&file)?;
    let missing: Vec<String> = controllers
        .iter()
        .filter(|c| !on.split_whitespace().any(|x| x == c.name()))
        .map(|c| format!("+{}", c.name()))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    match fs::write(&file, &missing.join(" ")) {
        Err(CgroupError::Io { source, .. }) if source.raw_os_error() == Some(libc::EBUSY) => {
            Err(CgroupError::NotDelegated {
                path: dir.to_path_buf(),
            })
        }
        other => other,
    }
}

/// v1: a new cpuset has no CPUs and no memory nodes, and refuses processes
/// until both are set; copy the parent's.
fn inherit_cpuset(dir: &Path) -> Result<()> {
    let Some(parent) = dir.parent() else {
        return Ok(());
    };
    for file in ["cpuset.cpus", "cpuset.mems"] {
        if fs::read(&dir.join(file))?.trim().is_empty() {
            let value = fs::read(&parent.join(file))?;
            fs::write(&dir.join(file), value.trim())?;
        }
    }
    Ok(())
}

impl Group {
    /// The group's name (the last folder).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The group's folders, one per hierarchy (one on v2).
    pub fn paths(&self) -> Vec<&Path> {
        self.leaves.iter().map(|h| h.base.as_path()).collect()
    }

    /// The budget in force.
    pub fn budget(&self) -> &Budget {
        &self.budget
    }

    /// Whether swap is kept out of the memory limit (v2 `memory.swap.max`,
    /// v1 `memory.memsw.limit_in_bytes`). False where the kernel has no swap
    /// accounting: the limit then covers RAM only, and the caller should
    /// say that swap is not limited.
    pub fn swap_limited(&self) -> bool {
        self.swap_limited
    }

    /// The folder of the hierarchy that carries `c`.
    fn dir(&self, c: Controller) -> Option<&Path> {
        // v2's CPU time (`cpu.stat` usage) needs no controller.
        if (self.version, c) == (Version::V2, Controller::Cpuacct) {
            return self.leaves.first().map(|h| h.base.as_path());
        }
        self.leaves
            .iter()
            .find(|h| h.controllers.contains(&c))
            .map(|h| h.base.as_path())
    }

    fn need(&self, c: Controller) -> Result<&Path> {
        self.dir(c).ok_or_else(|| CgroupError::NoController {
            controller: c.name(),
            path: self
                .leaves
                .first()
                .map(|h| h.base.clone())
                .unwrap_or_default(),
        })
    }

    /// Applies `budget` (it may change while processes run in the group,
    /// between load levels); unset fields lift their limit.
    pub fn set_budget(&mut self, budget: &Budget) -> Result<()> {
        budget.validate()?;
        if budget.cpuset.is_some() {
            self.need(Controller::Cpuset)?;
        }
        self.swap_limited = match self.version {
            Version::V2 => self.apply_v2(budget)?,
            Version::V1 => self.apply_v1(budget)?,
        };
        self.budget = budget.clone();
        Ok(())
    }

    fn apply_v2(&self, b: &Budget) -> Result<bool> {
        if let Some(cpu) = self.quota_dir(b)? {
            let quota = b.quota_us().map_or("max".to_string(), |q| q.to_string());
            fs::write(&cpu.join("cpu.max"), &format!("{quota} {PERIOD_US}"))?;
        }
        let dir = self.need(Controller::Memory)?;
        let mem = b.memory.map_or("max".to_string(), |m| m.to_string());
        fs::write(&dir.join("memory.max"), &mem)?;
        let swap = dir.join("memory.swap.max");
        let swap_limited = swap.exists();
        if swap_limited {
            fs::write(&swap, if b.memory.is_some() { "0" } else { "max" })?;
        }
        // One OOM kill takes the whole server down, not one worker that a
        // master would quietly respawn.
        let group_kill = dir.join("memory.oom.group");
        if group_kill.exists() {
            fs::write(&group_kill, if b.memory.is_some() { "1" } else { "0" })?;
        }
        if let Some(cpus) = self.dir(Controller::Cpuset) {
            fs::write(&cpus.join("cpuset.cpus"), b.cpuset.as_deref().unwrap_or(""))?;
        }
        Ok(swap_limited)
    }

    /// Where a CPU quota is written: None for a group made without one
    /// (outside the `cpu` controller, see `joined`), which then refuses one.
    fn quota_dir(&self, b: &Budget) -> Result<Option<&Path>> {
        match (self.dir(Controller::Cpu), b.cpus) {
            (None, Some(c)) => Err(CgroupError::Invalid(format!(
                "cpus = {c}: group {} was made without a CPU quota, so it is outside the cpu \
                 controller; make it with one to change it later",
                self.name
            ))),
            (dir, _) => Ok(dir),
        }
    }

    fn apply_v1(&self, b: &Budget) -> Result<bool> {
        if let Some(cpu) = self.quota_dir(b)? {
            fs::write(&cpu.join("cpu.cfs_period_us"), &PERIOD_US.to_string())?;
            let quota = b.quota_us().map_or("-1".to_string(), |q| q.to_string());
            fs::write(&cpu.join("cpu.cfs_quota_us"), &quota)?;
        }
        let mem = self.need(Controller::Memory)?;
        let memsw = mem.join("memory.memsw.limit_in_bytes");
        let swap_limited = memsw.exists();
        // memsw may never be below the RAM limit: lift it, set RAM, lower it.
        if swap_limited {
            fs::write(&memsw, "-1")?;
        }
        let limit = b.memory.map_or("-1".to_string(), |m| m.to_string());
        fs::write(&mem.join("memory.limit_in_bytes"), &limit)?;
        if let (true, Some(m)) = (swap_limited, b.memory) {
            fs::write(&memsw, &m.to_string())?;
        }
        if let Some(dir) = self.dir(Controller::Cpuset) {
            match &b.cpuset {
                Some(list) => fs::write(&dir.join("cpuset.cpus"), list)?,
                None => {
                    let parent = dir.parent().unwrap_or(dir);
                    let all = fs::read(&parent.join("cpuset.cpus"))?;
                    fs::write(&dir.join("cpuset.cpus"), all.trim())?;
                }
            }
        }
        Ok(swap_limited)
    }

    /// Moves process `pid` (all its threads) into the group. Processes it
    /// already forked stay where they are: prefer [`Group::attacher`].
    pub fn add_pid(&self, pid: u32) -> Result<()> {
        for h in &self.leaves {
            fs::write(&h.base.join("cgroup.procs"), &pid.to_string())?;
        }
        Ok(())
    }

    /// Opens the group for a `pre_exec` hook, so a spawned process starts
    /// inside and everything it forks follows.
    pub fn attacher(&self) -> Result<Attacher> {
        Attacher::open(&self.paths())
    }

    /// The processes in the group now (every hierarchy's, once).
    pub fn pids(&self) -> Result<Vec<u32>> {
        remove::pids_in(&self.paths())
    }

    /// Reads every counter; see [`Counters`].
    pub fn counters(&self) -> Result<Counters> {
        let mut c = Counters::default();
        let throttling = self.dir(Controller::Cpu);
        let mem = self.need(Controller::Memory)?;
        let read = |dir: &Path, file: &str| -> Result<(String, PathBuf)> {
            let p = dir.join(file);
            Ok((fs::read(&p)?, p))
        };
        match self.version {
            Version::V2 => {
                let (t, p) = read(self.need(Controller::Cpuacct)?, "cpu.stat")?;
                counters::v2_cpu(&t, &p, throttling.is_some(), &mut c)?;
                let (t, p) = read(mem, "memory.current")?;
                c.memory_current = counters::single(&t, &p)?;
                let peak = mem.join("memory.peak");
                if let Some(t) = fs::read_optional(&peak)? {
                    c.memory_peak = Some(counters::single(&t, &peak)?);
                }
                let (t, p) = read(mem, "memory.events")?;
                c.oom_kills = counters::oom_kills(&t, &p)?;
            }
            Version::V1 => {
                let (t, p) = read(self.need(Controller::Cpuacct)?, "cpuacct.usage")?;
                c.cpu = std::time::Duration::from_nanos(counters::single(&t, &p)?);
                if let Some(cpu) = throttling {
                    let (t, p) = read(cpu, "cpu.stat")?;
                    counters::v1_cpu_stat(&t, &p, &mut c)?;
                }
                let (t, p) = read(mem, "memory.usage_in_bytes")?;
                c.memory_current = counters::single(&t, &p)?;
                let (t, p) = read(mem, "memory.max_usage_in_bytes")?;
                c.memory_peak = Some(counters::single(&t, &p)?);
                let (t, p) = read(mem, "memory.oom_control")?;
                c.oom_kills = counters::oom_kills(&t, &p)?;
            }
        }
        Ok(c)
    }

    /// Restarts the memory high-water mark (between load levels). v1 resets
    /// `memory.max_usage_in_bytes`; v2's `memory.peak` resets only for the
    /// descriptor that wrote it, so v2 answers `false`: its peak stays the
    /// group's lifetime peak.
    pub fn reset_peak(&self) -> Result<bool> {
        match self.version {
            Version::V1 => {
                let mem = self.need(Controller::Memory)?;
                fs::write(&mem.join("memory.max_usage_in_bytes"), "0")?;
                Ok(true)
            }
            Version::V2 => Ok(false),
        }
    }

    /// Kills every process left in the group, waits for them to leave, and
    /// removes the group's folders (and its owner's, once empty).
    pub fn remove(mut self) -> Result<()> {
        self.removed = true;
        remove::teardown(&self.paths())
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if !self.removed {
            let _ = remove::teardown(&self.paths());
        }
    }
}
