//! The toolchains a target may need to build and run (cargo, go, python3,
//! node, maven) and the check that each of their programs is on `PATH`. PATH is searched here rather than by shelling
//! out to `which`, which is not installed everywhere and costs a process.

use serde::Deserialize;
use std::ffi::OsStr;
use std::fmt;
use std::path::{Path, PathBuf};

/// A build toolchain, as named in `target.toml`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Toolchain {
    Cargo,
    Go,
    Python3,
    /// Node.js: `node` runs the server, `npm ci` installs its packages.
    Node,
    /// Maven builds the jar and `java` runs it.
    Maven,
}

impl Toolchain {
    /// The name used in `target.toml`.
    pub fn name(self) -> &'static str {
        match self {
            Toolchain::Cargo => "cargo",
            Toolchain::Go => "go",
            Toolchain::Python3 => "python3",
            Toolchain::Node => "node",
            Toolchain::Maven => "maven",
        }
    }

    /// Every executable that must be on PATH to build and run a target.
    pub fn binaries(self) -> &'static [&'static str] {
        match self {
            Toolchain::Cargo => &["cargo"],
            Toolchain::Go => &["go"],
            Toolchain::Python3 => &["python3"],
            Toolchain::Node => &["node", "npm"],
            Toolchain::Maven => &["mvn", "java"],
        }
    }

    /// The commands whose output names the toolchain's version, for the
    /// build cache's key: the compiler or runtime, and the tool that
    /// resolves packages where it is another program.
    pub fn version_commands(self) -> &'static [&'static [&'static str]] {
        match self {
            Toolchain::Cargo => &[&["rustc", "-vV"], &["cargo", "-V"]],
            Toolchain::Go => &[&["go", "version"]],
            Toolchain::Python3 => &[&["python3", "-VV"]],
            Toolchain::Node => &[&["node", "-v"], &["npm", "-v"]],
            // `mvn -v` names Maven, the JDK it runs on and the platform.
            Toolchain::Maven => &[&["mvn", "-v"], &["java", "-version"]],
        }
    }

    /// The first of the toolchain's executables that is not on PATH.
    pub fn missing(self) -> Option<&'static str> {
        let path = std::env::var_os("PATH").unwrap_or_default();
        self.binaries()
            .iter()
            .copied()
            .find(|b| find_on_path(b, &path).is_none())
    }

    /// True when every executable of the toolchain is on PATH.
    pub fn is_present(self) -> bool {
        self.missing().is_none()
    }
}

impl fmt::Display for Toolchain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// First executable regular file called `name` in the directories of `path`.
pub fn find_on_path(name: &str, path: &OsStr) -> Option<PathBuf> {
    std::env::split_paths(path)
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    // metadata() follows symlinks, so pyenv shims and alternatives links count.
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tempdir;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn finds_only_executables() {
        let dir = tempdir::Dir::new();
        let exe = dir.path().join("tool");
        let plain = dir.path().join("plain");
        std::fs::write(&exe, "#!/bin/sh\n").unwrap();
        std::fs::write(&plain, "").unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = std::env::join_paths(["/nonexistent", dir.path().to_str().unwrap()]).unwrap();
        assert_eq!(find_on_path("tool", &path), Some(exe));
        assert_eq!(find_on_path("plain", &path), None);
        assert_eq!(find_on_path("missing", &path), None);
    }

    #[test]
    fn a_toolchain_needs_every_binary() {
        assert_eq!(Toolchain::Node.binaries(), ["node", "npm"]);
        assert_eq!(Toolchain::Maven.binaries(), ["mvn", "java"]);
        assert_eq!(Toolchain::Maven.to_string(), "maven");
    }

    #[test]
    fn sh_is_present() {
        let path = std::env::var_os("PATH").unwrap();
        assert!(find_on_path("sh", &path).is_some());
    }
}
