//! Who answers on a port, and is the server alive and runnable? A port
//! chosen by binding port 0 and releasing it can be taken by another
//! process before the server binds it, and a readiness probe accepts any
//! 200; so before and after every measurement the runner asks the kernel
//! which processes hold the listening sockets on the port (`/proc/net/tcp`
//! and `tcp6` give the socket inodes, `/proc/<pid>/fd` who holds them) and
//! refuses any that is not the server's. A server whose processes are all
//! stopped (SIGSTOP, a debugger) is reported as such, not measured as 0.

use std::collections::BTreeSet;
use std::path::Path;

/// Why the port's listener is not (only) the server.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ListenerError {
    #[error("nothing listens on port {port}")]
    NotListening { port: u16 },
    #[error("port {port} is held by pid {pid} ({command}), not by the server")]
    Foreign {
        port: u16,
        pid: u32,
        command: String,
    },
    #[error("port {port} is held by a process that cannot be seen here (socket inode {inode}), not by the server")]
    Unseen { port: u16, inode: u64 },
    #[error("cannot read {0}")]
    Proc(String),
}

/// Checks that every socket listening on `port` (any loopback or wildcard
/// address, IPv4 or IPv6) belongs to one of `pids`.
pub fn check_owner(port: u16, pids: &[u32]) -> Result<(), ListenerError> {
    let inodes = listening_inodes(port)?;
    if inodes.is_empty() {
        return Err(ListenerError::NotListening { port });
    }
    let ours: BTreeSet<u64> = pids.iter().flat_map(|&p| socket_inodes(p)).collect();
    match inodes.iter().find(|i| !ours.contains(i)) {
        None => Ok(()),
        Some(&inode) => Err(match holder(inode) {
            Some((pid, command)) => ListenerError::Foreign { port, pid, command },
            None => ListenerError::Unseen { port, inode },
        }),
    }
}

/// The inodes of the sockets in state LISTEN on `port`.
fn listening_inodes(port: u16) -> Result<Vec<u64>, ListenerError> {
    let mut out = Vec::new();
    let mut read_any = false;
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        if let Ok(text) = std::fs::read_to_string(table) {
            read_any = true;
            out.extend(parse_listeners(&text, port));
        }
    }
    if !read_any {
        return Err(ListenerError::Proc("/proc/net/tcp".into()));
    }
    Ok(out)
}

/// The LISTEN rows (state 0A) of a `/proc/net/tcp{,6}` table on `port`.
fn parse_listeners(table: &str, port: u16) -> Vec<u64> {
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            let local = f.get(1)?;
            let p = u16::from_str_radix(local.rsplit(':').next()?, 16).ok()?;
            let listening = *f.get(3)? == "0A";
            (listening && p == port).then(|| f.get(9)?.parse().ok())?
        })
        .collect()
}

/// The socket inodes among `pid`'s open files.
fn socket_inodes(pid: u32) -> Vec<u64> {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| std::fs::read_link(e.path()).ok())
        .filter_map(|link| socket_inode(&link))
        .collect()
}

fn socket_inode(link: &Path) -> Option<u64> {
    link.to_str()?
        .strip_prefix("socket:[")?
        .strip_suffix(']')?
        .parse()
        .ok()
}

/// The process holding socket `inode`, and its command, when visible.
fn holder(inode: u64) -> Option<(u32, String)> {
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: u32 = e.file_name().to_str()?.parse().ok()?;
        socket_inodes(pid)
            .contains(&inode)
            .then(|| (pid, command(pid)))
    })
}

/// The processes (not zombies) of process group `pgid`, from `/proc`.
pub fn group_members(pgid: i32) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            // After the parenthesised command: state ppid pgrp ...
            let mut f = stat[stat.rfind(')')? + 1..].split_whitespace();
            let state = f.next()?;
            let pgrp: i32 = f.nth(1)?.parse().ok()?;
            (pgrp == pgid && state != "Z").then_some(pid)
        })
        .collect()
}

/// A process's command name (`comm`), or "?".
pub fn command(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "?".into())
}

/// The process state letter of `pid` (`R`, `S`, `T` stopped, `Z`...).
pub fn state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat[stat.rfind(')')? + 1..]
        .split_whitespace()
        .next()?
        .chars()
        .next()
}

/// True when every process of `pids` that still exists is stopped (`T`,
/// or `t` traced): the server cannot answer, however long we wait.
pub fn all_stopped(pids: &[u32]) -> bool {
    let states: Vec<char> = pids.iter().filter_map(|&p| state(p)).collect();
    !states.is_empty() && states.iter().all(|s| matches!(s, 'T' | 't'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    const TABLE: &str = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4242 1 0000000000000000 100 0 0 10 0
   1: 0100007F:1F90 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0        0 4343 1 0000000000000000 20 4 30 10 -1
   2: 00000000:0050 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 99 1 0000000000000000 100 0 0 10 0
";

    #[test]
    fn listeners_are_the_listen_rows_of_the_port() {
        assert_eq!(
            parse_listeners(TABLE, 8080),
            vec![4242],
            "0x1F90, not the established row"
        );
        assert_eq!(parse_listeners(TABLE, 80), vec![99]);
        assert!(parse_listeners(TABLE, 81).is_empty());
        assert!(parse_listeners("header only\n", 80).is_empty());
    }

    #[test]
    fn our_own_listener_is_ours_and_anyone_elses_is_named() {
        let l = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = l.local_addr().expect("addr").port();
        let me = std::process::id();
        assert_eq!(check_owner(port, &[me]), Ok(()));
        match check_owner(port, &[1]) {
            Err(ListenerError::Foreign { pid, command, .. }) => {
                assert_eq!(pid, me);
                assert!(!command.is_empty() && command != "?", "{command}");
            }
            other => panic!("expected Foreign, got {other:?}"),
        }
        drop(l);
        // The port just released may be handed to another test's server
        // at once (CI saw that); a port held bound but not listening may not.
        let held = bound_not_listening();
        assert_eq!(
            check_owner(held.1, &[me]),
            Err(ListenerError::NotListening { port: held.1 })
        );
        // SAFETY: closing the descriptor made just above.
        unsafe { libc::close(held.0) };
    }

    /// A TCP socket bound to a free port on 127.0.0.1 without listening
    /// (and without SO_REUSEADDR, so no other bind may share it): its fd
    /// and port.
    fn bound_not_listening() -> (i32, u16) {
        // SAFETY: plain socket calls on a zeroed sockaddr_in we own.
        unsafe {
            let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0);
            assert!(fd >= 0);
            let mut addr: libc::sockaddr_in = std::mem::zeroed();
            addr.sin_family = libc::AF_INET as libc::sa_family_t;
            addr.sin_addr.s_addr = u32::from_ne_bytes([127, 0, 0, 1]);
            let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
            let sa = std::ptr::addr_of_mut!(addr).cast::<libc::sockaddr>();
            assert_eq!(libc::bind(fd, sa, len), 0);
            let mut got = len;
            assert_eq!(libc::getsockname(fd, sa, &mut got), 0);
            (fd, u16::from_be(addr.sin_port))
        }
    }

    #[test]
    fn a_stopped_child_is_stopped_and_a_running_one_is_not() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("sleep");
        let pid = child.id();
        assert!(!all_stopped(&[pid]));
        // SAFETY: getpgrp cannot fail.
        let me = group_members(unsafe { libc::getpgrp() });
        assert!(
            me.contains(&std::process::id()) && me.contains(&pid),
            "{me:?}"
        );
        // SAFETY: signalling our own child.
        unsafe { libc::kill(pid as i32, libc::SIGSTOP) };
        let stopped = (0..100).any(|_| {
            std::thread::sleep(std::time::Duration::from_millis(10));
            all_stopped(&[pid])
        });
        let _ = child.kill();
        let _ = child.wait();
        assert!(stopped, "state {:?}", state(pid));
        assert!(!all_stopped(&[]), "no process is not 'stopped'");
    }
}
