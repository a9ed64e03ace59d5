//! The toolchains a target may need to build (cargo, go, python3) and the
//! check that one is on `PATH`. PATH is searched here rather than by shelling
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
}

impl Toolchain {
    /// The executable that must be on PATH.
    pub fn binary(self) -> &'static str {
        match self {
            Toolchain::Cargo => "cargo",
            Toolchain::Go => "go",
            Toolchain::Python3 => "python3",
        }
    }

    /// Where the toolchain's binary is, if it is on PATH.
    pub fn locate(self) -> Option<PathBuf> {
        find_on_path(self.binary(), std::env::var_os("PATH").as_deref()?)
    }

    /// True when the toolchain's binary is on PATH.
    pub fn is_present(self) -> bool {
        self.locate().is_some()
    }
}

impl fmt::Display for Toolchain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.binary())
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
    fn sh_is_present() {
        let path = std::env::var_os("PATH").unwrap();
        assert!(find_on_path("sh", &path).is_some());
    }
}
