//! cgroup v2 against a tree laid out in a temporary folder: the files a v2
//! kernel would show, so the test checks what the crate writes (controllers
//! enabled down the way, `cpu.max`, `memory.max`, swap off) and that it
//! parses what the kernel would answer. A regular folder differs from
//! cgroupfs in one way that matters: it cannot be removed while it holds
//! files, so the tests expect that error where the kernel would succeed.

#![allow(clippy::unwrap_used)] // test setup: a failure should panic

use shootout_cgroup::{Budget, CgroupError, Controller, Layout, Owner, Version};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

const MIB: u64 = 1024 * 1024;

/// A temporary v2 tree with the shootout parents and group `name` laid out.
struct Tree {
    base: PathBuf,
    owner: Owner,
}

impl Tree {
    fn new(name: &str) -> Tree {
        static N: AtomicU32 = AtomicU32::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let base =
            std::env::temp_dir().join(format!("shootout-cgroup-v2-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let owner = Owner {
            pid: 4242,
            start: 99,
        };
        let leaf = base.join("shootout").join(owner.dir_name()).join(name);
        std::fs::create_dir_all(&leaf).unwrap();
        let t = Tree { base, owner };
        t.put("cgroup.controllers", "cpuset cpu io memory pids\n");
        for dir in ["", "shootout", &format!("shootout/{}", owner.dir_name())] {
            t.put(&format!("{dir}/cgroup.subtree_control"), "");
        }
        let files = [
            ("cgroup.procs", ""),
            ("cgroup.kill", ""),
            ("cpu.max", "max 100000\n"),
            ("cpu.stat", "usage_usec 1500000\nuser_usec 1000000\nsystem_usec 500000\nnr_periods 30\nnr_throttled 9\nthrottled_usec 420000\n"),
            ("memory.max", "max\n"),
            ("memory.swap.max", "max\n"),
            ("memory.oom.group", "0\n"),
            ("memory.current", "10485760\n"),
            ("memory.peak", "73400320\n"),
            ("memory.events", "low 0\nhigh 0\nmax 4\noom 1\noom_kill 1\n"),
            ("cpuset.cpus", "\n"),
        ];
        for (f, text) in files {
            t.put(&format!("shootout/{}/{name}/{f}", owner.dir_name()), text);
        }
        t
    }

    fn put(&self, rel: &str, text: &str) {
        std::fs::write(self.base.join(rel.trim_start_matches('/')), text).unwrap();
    }

    fn get(&self, rel: &str) -> String {
        std::fs::read_to_string(self.base.join(rel.trim_start_matches('/'))).unwrap()
    }

    fn leaf(&self, name: &str, file: &str) -> String {
        self.get(&format!("shootout/{}/{name}/{file}", self.owner.dir_name()))
    }

    fn rm(&self, name: &str, file: &str) {
        let p = self
            .base
            .join("shootout")
            .join(self.owner.dir_name())
            .join(name)
            .join(file);
        std::fs::remove_file(p).unwrap();
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.base);
    }
}

fn full_budget() -> Budget {
    Budget {
        cpus: Some(1.5),
        memory: Some(512 * MIB),
        cpuset: Some("0-1".into()),
    }
}

#[test]
fn the_budget_is_written_as_v2_files() {
    let t = Tree::new("web");
    let layout = Layout::v2(&t.base).unwrap();
    assert_eq!(layout.version(), Version::V2);
    let mut g = layout.create_for(&t.owner, "web", &full_budget()).unwrap();
    for dir in ["", "shootout", &format!("shootout/{}", t.owner.dir_name())] {
        let on = t.get(&format!("{dir}/cgroup.subtree_control"));
        assert_eq!(on, "+cpu +memory +cpuset", "in {dir:?}");
    }
    assert_eq!(t.leaf("web", "cpu.max"), "150000 100000");
    assert_eq!(t.leaf("web", "memory.max"), (512 * MIB).to_string());
    assert_eq!(t.leaf("web", "memory.swap.max"), "0");
    assert_eq!(t.leaf("web", "memory.oom.group"), "1");
    assert_eq!(t.leaf("web", "cpuset.cpus"), "0-1");
    assert!(g.swap_limited());
    // Lifting the budget on the running group writes the unlimited values.
    g.set_budget(&Budget::default()).unwrap();
    assert_eq!(t.leaf("web", "cpu.max"), "max 100000");
    assert_eq!(t.leaf("web", "memory.max"), "max");
    assert_eq!(t.leaf("web", "memory.swap.max"), "max");
    assert_eq!(t.leaf("web", "memory.oom.group"), "0");
    assert_eq!(t.leaf("web", "cpuset.cpus"), "");
    assert_eq!(g.budget(), &Budget::default());
    std::mem::forget(g); // a regular folder cannot be rmdir'ed with files
}

fn quota() -> Budget {
    Budget {
        cpus: Some(1.0),
        ..Budget::default()
    }
}

#[test]
fn a_group_without_a_cpu_quota_counts_without_the_cpu_controller() {
    let t = Tree::new("web");
    let layout = Layout::v2(&t.base).unwrap();
    let mut g = layout
        .create_for(&t.owner, "web", &Budget::default())
        .unwrap();
    // Joining `cpu` would make the server one scheduling entity: only
    // memory is enabled, and CPU time still comes from cpu.stat.
    for dir in ["", "shootout", &format!("shootout/{}", t.owner.dir_name())] {
        let on = t.get(&format!("{dir}/cgroup.subtree_control"));
        assert_eq!(on, "+memory", "in {dir:?}");
    }
    let c = g.counters().unwrap();
    assert_eq!(c.cpu, Duration::from_millis(1500));
    assert_eq!((c.periods, c.throttled_periods), (0, 0));
    let e = g.set_budget(&quota()).unwrap_err();
    assert!(e.to_string().contains("made without a CPU quota"), "{e}");
    std::mem::forget(g);
}

#[test]
fn counters_are_parsed_from_v2_files() {
    let t = Tree::new("web");
    let layout = Layout::v2(&t.base).unwrap();
    let g = layout.create_for(&t.owner, "web", &quota()).unwrap();
    let c = g.counters().unwrap();
    assert_eq!(c.cpu, Duration::from_millis(1500));
    assert_eq!((c.periods, c.throttled_periods), (30, 9));
    assert_eq!(c.throttled, Duration::from_millis(420));
    assert_eq!(c.memory_current, 10 * MIB);
    assert_eq!(c.memory_peak, Some(70 * MIB));
    assert_eq!(c.oom_kills, 1);
    assert!(
        !g.reset_peak().unwrap(),
        "v2 peaks cannot be reset for all readers"
    );
    // A kernel before 5.19 has no memory.peak: no peak, not an error.
    t.rm("web", "memory.peak");
    assert_eq!(g.counters().unwrap().memory_peak, None);
    std::mem::forget(g);
}

#[test]
fn each_malformed_counter_file_is_an_error_naming_it() {
    let cases = [
        ("cpu.stat", "usage_usec 1\n"),
        ("memory.current", "ten\n"),
        ("memory.peak", "1 2\n"),
        ("memory.events", "oom_kill lots\n"),
    ];
    for (file, text) in cases {
        let t = Tree::new("web");
        let g = Layout::v2(&t.base)
            .unwrap()
            .create_for(&t.owner, "web", &quota())
            .unwrap();
        t.put(&format!("shootout/{}/web/{file}", t.owner.dir_name()), text);
        let e = g.counters().unwrap_err();
        assert!(matches!(e, CgroupError::Malformed { .. }), "{file}: {e}");
        assert!(e.to_string().contains(file), "{e}");
        std::mem::forget(g);
    }
}

#[test]
fn without_swap_accounting_swap_is_not_limited() {
    let t = Tree::new("web");
    t.rm("web", "memory.swap.max");
    let layout = Layout::v2(&t.base).unwrap();
    let budget = Budget {
        memory: Some(64 * MIB),
        ..Budget::default()
    };
    let g = layout.create_for(&t.owner, "web", &budget).unwrap();
    assert!(!g.swap_limited());
    assert_eq!(t.leaf("web", "memory.max"), (64 * MIB).to_string());
    std::mem::forget(g);
}

#[test]
fn a_tree_without_the_memory_controller_is_unavailable() {
    let t = Tree::new("web");
    t.put("cgroup.controllers", "cpu io pids\n");
    let e = Layout::v2(&t.base).unwrap_err();
    assert!(
        matches!(
            e,
            CgroupError::NoController {
                controller: "memory",
                ..
            }
        ),
        "{e}"
    );
    assert!(e.is_unavailable() && !e.to_string().contains('\n'));
    // Without cpuset the layout stands, and a CPU list is refused by name.
    t.put("cgroup.controllers", "cpu memory\n");
    let layout = Layout::v2(&t.base).unwrap();
    assert!(!layout.has(Controller::Cpuset));
    let e = layout
        .create_for(&t.owner, "web", &full_budget())
        .unwrap_err();
    assert!(
        matches!(
            e,
            CgroupError::NoController {
                controller: "cpuset",
                ..
            }
        ),
        "{e}"
    );
    // Nor can a running group be given one later.
    let mut g = layout
        .create_for(&t.owner, "web", &Budget::default())
        .unwrap();
    let e = g.set_budget(&full_budget()).unwrap_err();
    let is_cpuset = matches!(
        e,
        CgroupError::NoController {
            controller: "cpuset",
            ..
        }
    );
    assert!(is_cpuset, "{e}");
    assert_eq!(g.budget(), &Budget::default());
    std::mem::forget(g);
}

#[test]
fn a_spawned_child_enters_from_its_pre_exec_hook() {
    let t = Tree::new("web");
    let g = Layout::v2(&t.base)
        .unwrap()
        .create_for(&t.owner, "web", &Budget::default())
        .unwrap();
    let mut cmd = Command::new("true");
    g.attacher().unwrap().install(&mut cmd);
    assert!(cmd.status().unwrap().success());
    // The child wrote "0" (itself) to cgroup.procs before exec.
    assert_eq!(t.leaf("web", "cgroup.procs"), "0");
    let child = Command::new("true").spawn().unwrap();
    let pid = child.id();
    g.add_pid(pid).unwrap();
    assert_eq!(t.leaf("web", "cgroup.procs"), pid.to_string());
    t.put(
        &format!("shootout/{}/web/cgroup.procs", t.owner.dir_name()),
        "",
    );
    std::mem::forget(g);
    let _ = child.wait_with_output();
}

#[test]
fn removal_uses_cgroup_kill_then_sigkill_and_says_what_stayed() {
    let t = Tree::new("web");
    let g = Layout::v2(&t.base)
        .unwrap()
        .create_for(&t.owner, "web", &Budget::default())
        .unwrap();
    let leaf: PathBuf = g.paths()[0].to_path_buf();
    // A listed process is SIGKILLed even with cgroup.kill written; a fake
    // cgroup.procs keeps listing it, so removal ends with the pid named.
    let mut sleeper = Command::new("sleep").arg("30").spawn().unwrap();
    t.put(
        &format!("shootout/{}/web/cgroup.procs", t.owner.dir_name()),
        &format!("{}\n", sleeper.id()),
    );
    let e = g.remove().unwrap_err();
    assert_eq!(t.leaf("web", "cgroup.kill"), "1");
    let status = sleeper.wait().unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(9)
    );
    assert!(
        matches!(&e, CgroupError::StillPopulated { pids, .. } if pids == &vec![sleeper.id()]),
        "{e}"
    );
    // Once empty, the folder's files are what stop a regular rmdir.
    t.put(
        &format!("shootout/{}/web/cgroup.procs", t.owner.dir_name()),
        "",
    );
    let g = Layout::v2(&t.base)
        .unwrap()
        .create_for(&t.owner, "web", &Budget::default())
        .unwrap();
    let e = g.remove().unwrap_err();
    assert!(e.to_string().contains(&leaf.display().to_string()), "{e}");
    assert!(Path::new(&leaf).exists());
}

#[test]
fn a_quota_ready_group_joins_the_cpu_controller_before_it_has_a_quota() {
    let t = Tree::new("web");
    let layout = Layout::v2(&t.base).unwrap();
    let mut g = layout
        .create_for_quota_ready(&t.owner, "web", &Budget::default(), true)
        .unwrap();
    for dir in ["", "shootout", &format!("shootout/{}", t.owner.dir_name())] {
        let on = t.get(&format!("{dir}/cgroup.subtree_control"));
        assert!(on.split_whitespace().any(|c| c == "+cpu"), "{dir:?}: {on}");
    }
    assert_eq!(t.leaf("web", "cpu.max"), "max 100000");
    g.set_budget(&quota()).unwrap();
    assert_eq!(t.leaf("web", "cpu.max"), "100000 100000");
    let c = g.counters().unwrap();
    assert_eq!(
        (c.periods, c.throttled_periods),
        (30, 9),
        "throttling is read"
    );
    std::mem::forget(g);
}
