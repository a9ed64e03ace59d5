//! Temporary folders. Each server start gets its own ([`ServerTmp`]):
//! `<temp>/shootout-servers-<pid>/<target>-<n>`, handed to the server as
//! `TMPDIR` and as the JVM's `java.io.tmpdir`, so what a framework leaves
//! there (Tomcat's `tomcat.*` folders, uploads, sockets) goes when the
//! server stops; the process's folder goes with its last server, and
//! [`remove_all`] removes it at once on an interrupt. Folders of processes
//! that no longer exist (killed with -9) are swept once per process.
//! Also, for tests, a self-deleting [`Dir`], so they need no tempfile
//! dependency.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Once;

const PREFIX: &str = "shootout-servers-";

/// This process's folder of server temporary folders.
fn process_dir() -> PathBuf {
    std::env::temp_dir().join(format!("{PREFIX}{}", std::process::id()))
}

/// One server start's temporary folder, removed on drop.
#[derive(Debug)]
pub struct ServerTmp(PathBuf);

impl ServerTmp {
    /// Makes a fresh, empty folder for one start of `target`.
    pub fn create(target: &str) -> std::io::Result<ServerTmp> {
        static SWEPT: Once = Once::new();
        static N: AtomicU32 = AtomicU32::new(0);
        SWEPT.call_once(sweep_dead);
        let safe: String = target
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let n = N.fetch_add(1, Ordering::Relaxed);
        let path = process_dir().join(format!("{safe}-{n}"));
        let _ = std::fs::remove_dir_all(&path);
        // Another server's drop may remove the shared parent between the
        // two mkdirs of create_dir_all: try again.
        let mut tries = 0;
        while let Err(e) = std::fs::create_dir_all(&path) {
            tries += 1;
            if tries == 3 || e.kind() != std::io::ErrorKind::NotFound {
                return Err(e);
            }
        }
        Ok(ServerTmp(path))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for ServerTmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
        // Fails while another server's folder is still in there: the last
        // one out removes it.
        if let Some(parent) = self.0.parent() {
            let _ = std::fs::remove_dir(parent);
        }
    }
}

/// Removes every server temporary folder of this process (an interrupt
/// that kills the servers and may exit without running destructors).
pub fn remove_all() {
    let _ = std::fs::remove_dir_all(process_dir());
}

/// Removes the folders of shootout processes that are gone.
fn sweep_dead() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// The environment that points a server's temporary files into `dir`:
/// `TMPDIR`, and `JAVA_TOOL_OPTIONS` with `-Djava.io.tmpdir` (ahead of
/// any options already set, which may override it) and
/// `-XX:+PerfDisableSharedMem`, which keeps HotSpot's performance counters
/// in memory instead of `/tmp/hsperfdata_<user>/<pid>` (a path the JVM
/// fixes at /tmp whatever `java.io.tmpdir` says).
pub fn server_env(dir: &Path) -> Vec<(String, String)> {
    let mut java = format!(
        "-Djava.io.tmpdir={} -XX:+PerfDisableSharedMem",
        dir.display()
    );
    if let Some(old) = std::env::var_os("JAVA_TOOL_OPTIONS").filter(|o| !o.is_empty()) {
        java.push(' ');
        java.push_str(&old.to_string_lossy());
    }
    vec![
        ("TMPDIR".into(), dir.display().to_string()),
        ("JAVA_TOOL_OPTIONS".into(), java),
    ]
}

/// Test support: a self-deleting temporary directory.
#[cfg(test)]
#[derive(Debug)]
pub struct Dir(PathBuf);

#[cfg(test)]
impl Dir {
    pub fn new() -> Dir {
        static N: AtomicU32 = AtomicU32::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let p =
            std::env::temp_dir().join(format!("shootout-servers-test-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        Dir(p)
    }
    pub fn path(&self) -> &Path {
        &self.0
    }
}

#[cfg(test)]
impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
