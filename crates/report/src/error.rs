//! Why a report could not be made: the store could not be read, or a
//! report file could not be written.

use std::path::PathBuf;

/// Why a report could not be loaded or written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The database could not be opened or read, or has no such run.
    #[error(transparent)]
    Store(#[from] shootout_store::StoreError),
    /// A report file or its folder could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}
