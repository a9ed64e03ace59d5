//! Why a report could not be made: the store could not be read, or a
//! report file could not be written.

use std::path::PathBuf;

/// Why a report could not be loaded or written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The database could not be opened or read, or has no such run.
    #[error(transparent)]
    Store(#[from] shootout_store::StoreError),
    /// A report file or its folder could not be written. The cause is
    /// shown in the message and not also returned as `source`: with both,
    /// `{:#}` printed the OS error twice.
    #[error("cannot write {}: {cause}", path.display())]
    Write {
        path: PathBuf,
        cause: std::io::Error,
    },
    /// `-o` named a file in a folder that does not exist.
    #[error("cannot write {}: the folder {} does not exist", path.display(), folder.display())]
    NoFolder { path: PathBuf, folder: PathBuf },
}

impl ReportError {
    /// Writing `path` failed with `cause`: a missing folder said as such.
    pub(crate) fn write(path: &std::path::Path, cause: std::io::Error) -> ReportError {
        let folder = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .filter(|d| cause.kind() == std::io::ErrorKind::NotFound && !d.exists());
        match folder {
            Some(folder) => ReportError::NoFolder {
                path: path.to_path_buf(),
                folder: folder.to_path_buf(),
            },
            None => ReportError::Write {
                path: path.to_path_buf(),
                cause,
            },
        }
    }
}
