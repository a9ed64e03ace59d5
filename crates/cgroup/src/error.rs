//! The one error type of the crate. Every message is one line that names the
//! file or folder at fault, so the caller can print it as the reason it fell
//! back to `/proc` sampling.

use std::io;
use std::path::PathBuf;

/// Why a cgroup could not be found, made, used or removed.
#[derive(Debug, thiserror::Error)]
pub enum CgroupError {
    /// `/proc/self/mountinfo` lists no usable cgroup file system.
    #[error("no cgroup file system is mounted with the cpu and memory controllers ({0})")]
    NotMounted(String),
    /// A controller the budget or the counters need is missing.
    #[error("cgroup controller `{controller}` is not available under {path}")]
    NoController {
        controller: &'static str,
        path: PathBuf,
    },
    /// Not allowed to create or write (not root, no delegation).
    #[error("no permission to manage cgroups at {path} (run as root or delegate the subtree)")]
    PermissionDenied { path: PathBuf },
    /// The cgroup file system is mounted read-only (a container default).
    #[error("the cgroup file system at {path} is read-only")]
    ReadOnly { path: PathBuf },
    /// v2 refuses controllers under a group that holds processes (the
    /// "no internal processes" rule), as in a container whose processes sit
    /// in its namespace's root group.
    #[error("cannot enable cgroup controllers in {path}: it holds processes (cgroup v2 allows controllers only below groups without processes)")]
    NotDelegated { path: PathBuf },
    /// Any other failure of a system call on a cgroup file.
    #[error("cannot {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// A counter file whose contents are not what the kernel documents.
    #[error("{path}: malformed cgroup file: {detail}")]
    Malformed { path: PathBuf, detail: String },
    /// A budget or group name that cannot be applied.
    #[error("invalid cgroup request: {0}")]
    Invalid(String),
    /// Processes were still in the group after the kill deadline.
    #[error("processes {pids:?} are still in {path} after SIGKILL")]
    StillPopulated { path: PathBuf, pids: Vec<u32> },
}

impl CgroupError {
    /// Classifies an I/O error on `path`: permission and read-only file
    /// systems become their own variants, since they mean "fall back".
    pub(crate) fn io(action: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        let path = path.into();
        match source.raw_os_error() {
            Some(libc::EACCES) | Some(libc::EPERM) => CgroupError::PermissionDenied { path },
            Some(libc::EROFS) => CgroupError::ReadOnly { path },
            _ => CgroupError::Io {
                action,
                path,
                source,
            },
        }
    }

    /// True when the error means cgroups cannot be used here at all (the
    /// caller should fall back to sampling `/proc` and say why), rather than
    /// a fault of one group.
    pub fn is_unavailable(&self) -> bool {
        matches!(
            self,
            CgroupError::NotMounted(_)
                | CgroupError::NoController { .. }
                | CgroupError::PermissionDenied { .. }
                | CgroupError::ReadOnly { .. }
                | CgroupError::NotDelegated { .. }
        )
    }
}

/// The crate's result type.
pub type Result<T, E = CgroupError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permission_and_read_only_mean_fall_back() {
        let at = |errno| {
            CgroupError::io(
                "create",
                "/sys/fs/cgroup/x",
                io::Error::from_raw_os_error(errno),
            )
        };
        assert!(matches!(
            at(libc::EACCES),
            CgroupError::PermissionDenied { .. }
        ));
        assert!(matches!(
            at(libc::EPERM),
            CgroupError::PermissionDenied { .. }
        ));
        assert!(matches!(at(libc::EROFS), CgroupError::ReadOnly { .. }));
        assert!(at(libc::EACCES).is_unavailable() && at(libc::EROFS).is_unavailable());
        // Any other failure is the group's own fault, not a reason to fall back.
        let other = at(libc::ENOSPC);
        assert!(!other.is_unavailable());
        for e in [at(libc::EACCES), at(libc::EROFS), other] {
            let line = e.to_string();
            assert!(
                line.contains("/sys/fs/cgroup/x") && !line.contains('\n'),
                "{line}"
            );
        }
    }
}
