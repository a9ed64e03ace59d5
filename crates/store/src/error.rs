//! Everything that can go wrong with the store ([`StoreError`]), apart
//! from the code that raises it so that every module may return it, and a
//! histogram blob that cannot be written or read ([`HistogramError`]).

use std::path::PathBuf;

/// Everything that can go wrong with the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    // Sqlite and Json show their cause in their own message and do not
    // also return it as `source`: with both, `{:#}` printed it twice
    // ("results store error: file is not a database: file is not a database").
    #[error("results store error: {0}")]
    Sqlite(rusqlite::Error),
    #[error("cannot create the folder for {0}: {1}")]
    Dir(PathBuf, std::io::Error),
    #[error("bad JSON in the results store: {0}")]
    Json(serde_json::Error),
    #[error("{0}")]
    Histogram(HistogramError),
    #[error("the database has schema version {found}, newer than this shootout supports ({supported}); use a newer shootout")]
    TooNew { found: i64, supported: i64 },
    #[error("no run matches '{0}' (use a run id or 'latest'; `shootout history` lists them)")]
    NoSuchRun(String),
    #[error("bad value in the results store: {0}")]
    Corrupt(String),
    #[error("{} is not a shootout results store ({why}); left untouched", path.display())]
    NotAStore { path: PathBuf, why: String },
    /// SQLite refused the file while opening it (damaged, locked past the
    /// wait, not writable): the message names the file, as a run opens its
    /// store after much else has been said.
    #[error("cannot use the results store {}: {cause}", path.display())]
    Open {
        path: PathBuf,
        cause: rusqlite::Error,
    },
    #[error("cannot read the results store {}: {cause}", path.display())]
    Unreadable {
        path: PathBuf,
        cause: std::io::Error,
    },
}

impl StoreError {
    /// This error, naming `path` when it is SQLite's own (which does not).
    pub(crate) fn at(self, path: &std::path::Path) -> StoreError {
        match self {
            StoreError::Sqlite(cause) => StoreError::Open {
                path: path.to_path_buf(),
                cause,
            },
            e => e,
        }
    }

    /// Whether the message names the store's file already.
    pub fn names_file(&self) -> bool {
        matches!(
            self,
            StoreError::NotAStore { .. }
                | StoreError::Open { .. }
                | StoreError::Unreadable { .. }
                | StoreError::Dir(..)
        )
    }
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> StoreError {
        StoreError::Sqlite(e)
    }
}

impl From<serde_json::Error> for StoreError {
    fn from(e: serde_json::Error) -> StoreError {
        StoreError::Json(e)
    }
}

impl From<HistogramError> for StoreError {
    fn from(e: HistogramError) -> StoreError {
        StoreError::Histogram(e)
    }
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// A histogram that cannot be encoded as, or decoded from, an HdrHistogram
/// V2 blob (or the hex form JSON exports carry).
#[derive(Debug, thiserror::Error)]
pub enum HistogramError {
    // The causes are shown with `{:?}`, as their Display drops the detail.
    #[error("cannot serialise histogram: {0:?}")]
    Encode(hdrhistogram::serialization::V2SerializeError),
    #[error("cannot decode histogram: {0:?}")]
    Decode(hdrhistogram::serialization::DeserializeError),
    #[error("odd-length hex")]
    OddHex,
    #[error("{0}")]
    Hex(std::num::ParseIntError),
}
