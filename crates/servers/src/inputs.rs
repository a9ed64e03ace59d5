//! A target's files as its build sees them: every input file under the
//! manifest's `inputs` in a stable order (build outputs and caches skipped),
//! and the size of a built tree. The stamp (build.rs, by size and time) and
//! the build cache's key (build_cache.rs, by content) walk the same files.

use std::path::{Path, PathBuf};

/// Folders never walked: build outputs, virtual environments and caches
/// change without the sources changing.
const SKIP_DIRS: &[&str] = &["target", ".venv", "__pycache__", "bin", ".build", ".git"];

/// One input as the stamp and the cache's key see it; `rel` is relative to
/// the target's folder.
pub(crate) enum InputFile {
    /// A named input that does not exist (creating it changes both).
    Missing(String),
    /// A symbolic link, not followed.
    Link { rel: String, to: String },
    /// A regular file, and whether it is executable.
    File {
        rel: String,
        path: PathBuf,
        exec: bool,
    },
}

/// Every file under `path` (itself if a file), in a stable order, skipping
/// build outputs and caches (SKIP_DIRS).
pub(crate) fn walk_files(base: &Path, path: &Path) -> Vec<InputFile> {
    let mut out = Vec::new();
    let rel = |p: &Path| p.strip_prefix(base).unwrap_or(p).display().to_string();
    if std::fs::symlink_metadata(path).is_err() {
        out.push(InputFile::Missing(rel(path)));
    }
    walk_inputs(path, &mut |p, meta| {
        use std::os::unix::fs::PermissionsExt;
        out.push(if meta.file_type().is_symlink() {
            let to = std::fs::read_link(p).map(|t| t.display().to_string());
            InputFile::Link {
                rel: rel(p),
                to: to.unwrap_or_default(),
            }
        } else {
            InputFile::File {
                rel: rel(p),
                path: p.to_path_buf(),
                exec: meta.permissions().mode() & 0o111 != 0,
            }
        });
    });
    out
}

fn walk_inputs(path: &Path, visit: &mut dyn FnMut(&Path, &std::fs::Metadata)) {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return;
    };
    if meta.is_dir() {
        let Ok(entries) = std::fs::read_dir(path) else {
            return;
        };
        let mut children: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        children.sort();
        for child in children {
            let name = child.file_name().map(|n| n.to_string_lossy().into_owned());
            if !name.is_some_and(|n| SKIP_DIRS.contains(&n.as_str()) && child.is_dir()) {
                walk_inputs(&child, visit);
            }
        }
    } else {
        visit(path, &meta);
    }
}

pub(crate) fn tree_size(path: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    if !meta.is_dir() {
        return meta.len();
    }
    let Ok(entries) = std::fs::read_dir(path) else {
        return 0;
    };
    entries.flatten().map(|e| tree_size(&e.path())).sum()
}
