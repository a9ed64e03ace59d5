//! Typed values out of SQLite rows, for every table: a JSON column that
//! does not parse, like any other bad value, becomes a conversion error
//! naming its column (a [`StoreError::Corrupt`] inside), never a panic.

use crate::error::StoreError;
use rusqlite::Row;

pub(crate) fn bad_col(col: usize, msg: String) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(
        col,
        rusqlite::types::Type::Text,
        Box::new(StoreError::Corrupt(msg)),
    )
}

pub(crate) fn json_col<T: serde::de::DeserializeOwned>(
    r: &Row<'_>,
    col: usize,
) -> rusqlite::Result<T> {
    let s: String = r.get(col)?;
    serde_json::from_str(&s).map_err(|e| bad_col(col, e.to_string()))
}

/// A nullable JSON column: NULL is `None`, anything else must parse.
pub(crate) fn opt_json_col<T: serde::de::DeserializeOwned>(
    r: &Row<'_>,
    col: usize,
) -> rusqlite::Result<Option<T>> {
    let s: Option<String> = r.get(col)?;
    s.map(|s| serde_json::from_str(&s).map_err(|e| bad_col(col, e.to_string())))
        .transpose()
}
