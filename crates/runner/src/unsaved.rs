//! What the results store could not take. When a measurement cannot be
//! committed (the store locked past `shootout_store::BUSY_WAIT`, the disk
//! full), it is written as JSON beside the database, `<db>.run-<id>.unsaved.json`
//! (an array, one entry per measurement or capacity search, in the store's
//! own serde form), and the run stops as interrupted: nothing printed is
//! lost, and the error names the file.

use serde::Serialize;
use std::path::{Path, PathBuf};

/// A measurement the store refused, and where it was kept instead.
#[derive(Debug, Clone, PartialEq)]
pub struct Unsaved {
    /// Why the store refused it.
    pub error: String,
    /// The JSON file holding it; None when that could not be written either.
    pub file: Option<PathBuf>,
}

/// The file of run `run_id`'s unsaved measurements.
pub fn path(db: &Path, run_id: i64) -> PathBuf {
    let mut name = db.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".run-{run_id}.unsaved.json"));
    db.with_file_name(name)
}

/// Appends `item` to the run's unsaved file; the file on success.
pub fn keep(db: &Path, run_id: i64, item: &impl Serialize) -> Option<PathBuf> {
    let file = path(db, run_id);
    let mut all: Vec<serde_json::Value> = std::fs::read(&file)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    all.push(serde_json::to_value(item).ok()?);
    let text = serde_json::to_vec_pretty(&all).ok()?;
    std::fs::write(&file, text).ok()?;
    Some(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_items_accumulate_in_one_file_beside_the_database() {
        let dir = std::env::temp_dir().join(format!("shootout-unsaved-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        let db = dir.join("r.db");
        assert_eq!(path(&db, 7), dir.join("r.db.run-7.unsaved.json"));
        let a = keep(&db, 7, &serde_json::json!({"target": "a"}));
        let b = keep(&db, 7, &serde_json::json!({"target": "b"}));
        assert_eq!(a, b);
        let text = std::fs::read_to_string(path(&db, 7)).unwrap_or_default();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        assert_eq!(v[0]["target"], "a");
        assert_eq!(v[1]["target"], "b");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
