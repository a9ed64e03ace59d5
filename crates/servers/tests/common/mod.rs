//! What the integration tests against a real shipped target share: finding
//! it under `targets/` and building it, or saying why not.

#![allow(clippy::unwrap_used)] // test setup: a failure should panic

use shootout_servers::{build, discover, BuildCache, BuildOutcome, Target};
use std::path::Path;

/// The shipped target `name`, built; `None` (the test skipped, a failure
/// under `CI=true`: setup installs every target's toolchain) when its
/// toolchain is missing.
pub fn built(name: &str, test: &str) -> Option<Target> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../targets");
    let found = discover(&root).unwrap();
    let target = found.targets.into_iter().find(|t| t.name == name)?;
    let cache = BuildCache::from_env().unwrap();
    match build(&target, Some(&cache)).unwrap() {
        BuildOutcome::Skipped { reason } => {
            shootout_testkit::missing(format!("{test}: {reason}"));
            None
        }
        _ => Some(target),
    }
}
