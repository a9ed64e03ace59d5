//! Facts about the workspace that drifted once and must not again: every
//! crate inherits the declared minimum Rust version, and the docs describe the
//! epoll mode the engine actually registers its sockets with.

use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

#[test]
fn every_crate_inherits_the_workspace_rust_version() {
    let root = root();
    let workspace = read(&root.join("Cargo.toml"));
    let declared = workspace
        .lines()
        .find_map(|l| l.strip_prefix("rust-version = "))
        .expect("the workspace declares rust-version")
        .trim_matches('"')
        .to_string();
    // Let-else, `is_none_or` and friends need 1.82; an older claim is false.
    let minor: u32 = declared
        .split('.')
        .nth(1)
        .and_then(|m| m.parse().ok())
        .expect("rust-version is 1.N");
    assert!(
        minor >= 82,
        "rust-version {declared} is below what the code needs (1.82)"
    );
    let mut crates = 0;
    for entry in fs::read_dir(root.join("crates")).expect("crates/") {
        let manifest = entry.expect("dir entry").path().join("Cargo.toml");
        if !manifest.exists() {
            continue;
        }
        crates += 1;
        assert!(
            read(&manifest)
                .lines()
                .any(|l| l.trim() == "rust-version.workspace = true"),
            "{} does not inherit rust-version from the workspace",
            manifest.display()
        );
    }
    assert!(crates >= 6, "found only {crates} crates");
}

#[test]
fn docs_name_the_epoll_mode_the_engine_uses() {
    let root = root();
    let sys = read(&root.join("crates/engine/src/sys.rs"));
    assert!(
        sys.contains("libc::EPOLLET"),
        "the engine no longer registers edge-triggered; update this test and the docs"
    );
    for doc in [
        "README.md",
        "docs/architecture.md",
        "crates/engine/src/sys.rs",
    ] {
        let text = read(&root.join(doc));
        assert!(
            !text.contains("level-triggered"),
            "{doc} calls the epoll loop level-triggered"
        );
        assert!(
            text.contains("edge-triggered"),
            "{doc} does not say edge-triggered"
        );
    }
}
