use super::*;
use crate::layout::Version;

/// This machine's lines: v1 hierarchies one per controller, an empty
/// unified tree, and a memory group that is not the root.
const V1_MOUNTINFO: &str = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
36 31 0:33 / /sys/fs/cgroup/devices rw,relatime - cgroup cgroup rw,devices
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /nonexistent/unified rw,relatime - cgroup2 cgroup2 rw
";
const V1_OWN: &str = "\
9:name=systemd:/
4:memory:/process_api/833ee
3:cpuset:/
2:cpuacct:/
1:cpu:/
0::/
";

#[test]
fn v1_machine_with_separate_hierarchies() {
    let l = layout(V1_MOUNTINFO, V1_OWN).unwrap();
    assert_eq!(l.version(), Version::V1);
    let bases: Vec<(Vec<Controller>, PathBuf)> = l
        .hierarchies()
        .iter()
        .map(|h| (h.controllers.clone(), h.base.clone()))
        .collect();
    assert_eq!(
        bases,
        vec![
            (vec![Controller::Cpu], "/sys/fs/cgroup/cpu".into()),
            (vec![Controller::Cpuacct], "/sys/fs/cgroup/cpuacct".into()),
            (vec![Controller::Cpuset], "/sys/fs/cgroup/cpuset".into()),
            (
                vec![Controller::Memory],
                "/sys/fs/cgroup/memory/process_api/833ee".into()
            ),
        ]
    );
}

#[test]
fn v1_co_mounted_cpu_and_cpuacct_in_a_container() {
    let mountinfo = "\
50 40 0:40 /docker/abc /sys/fs/cgroup/cpu,cpuacct ro,nosuid - cgroup cgroup rw,cpu,cpuacct
51 40 0:41 /docker/abc /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory
";
    let own = "3:cpu,cpuacct:/docker/abc/x\n2:memory:/docker/abc\n";
    let l = layout(mountinfo, own).unwrap();
    let h = l.hierarchies();
    assert_eq!(h.len(), 2);
    assert_eq!(h[0].controllers, vec![Controller::Cpu, Controller::Cpuacct]);
    assert_eq!(h[0].base, PathBuf::from("/sys/fs/cgroup/cpu,cpuacct/x"));
    assert_eq!(h[1].base, PathBuf::from("/sys/fs/cgroup/memory"));
    assert!(!l.has(Controller::Cpuset));
}

#[test]
fn a_missing_controller_is_said_in_one_line() {
    let mountinfo = "32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu,cpuacct\n";
    let e = layout(mountinfo, "1:cpu,cpuacct:/\n").unwrap_err();
    assert!(e.is_unavailable());
    let msg = e.to_string();
    assert!(msg.contains("`memory`"), "{msg}");
    assert!(!msg.contains('\n'));
    let e = layout("", "0::/\n").unwrap_err();
    assert!(matches!(e, CgroupError::NotMounted(_)), "{e}");
}

#[test]
fn v2_is_chosen_when_its_tree_has_the_controllers() {
    let dir = std::env::temp_dir().join(format!("shootout-cgroup-detect-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("cgroup.controllers"),
        "cpuset cpu io memory pids\n",
    )
    .unwrap();
    let mountinfo = format!(
        "{}\n29 23 0:26 / {} rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n",
        V1_MOUNTINFO.lines().nth(1).unwrap(),
        dir.display()
    );
    let l = layout(&mountinfo, "0::/user.slice/session-1.scope\n").unwrap();
    assert_eq!(l.version(), Version::V2);
    assert_eq!(l.hierarchies()[0].base, dir);
    assert!(l.has(Controller::Cpuset) && l.has(Controller::Cpuacct));
    // Without `memory` the unified tree is passed over, and without v1
    // hierarchies too, the error names both reasons.
    std::fs::write(dir.join("cgroup.controllers"), "cpu pids\n").unwrap();
    let e = layout(&mountinfo, "0::/\n").unwrap_err().to_string();
    assert!(e.contains("`memory`") && e.contains("v2 at"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn mount_points_are_unescaped() {
    let m = cgroup_mounts("1 2 0:3 / /a\\040b rw - cgroup cgroup rw,memory\n");
    assert_eq!(m[0].point, PathBuf::from("/a b"));
    assert!(cgroup_mounts("garbage line\n").is_empty());
}
