//! Cleaning up after a shootout that died by SIGKILL: its groups are still
//! there under `shootout/<pid>-<start>` (see `owner.rs`), so a later
//! shootout's [`Layout::sweep`] removes every owner folder whose process is
//! gone.

use crate::error::Result;
use crate::layout::Layout;
use crate::owner::{Owner, PARENT};
use crate::remove;
use std::path::PathBuf;

impl Layout {
    /// Removes the groups of every dead owner (processes killed, folders
    /// removed children first), in every hierarchy. Returns the owner
    /// folders removed. Folders that are not an owner's are left alone.
    pub fn sweep(&self) -> Result<Vec<PathBuf>> {
        let mut removed = Vec::new();
        for h in self.hierarchies() {
            let parent = h.base.join(PARENT);
            for dir in remove::subgroups(&parent)? {
                let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or("");
                match Owner::parse(name) {
                    Some(owner) if !owner.is_alive() => {
                        remove::remove_tree(&dir)?;
                        removed.push(dir);
                    }
                    _ => {}
                }
            }
            remove::prune(&parent);
        }
        Ok(removed)
    }
}
