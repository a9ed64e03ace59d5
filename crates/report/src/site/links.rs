//! Where the site's pages are, relative to its root, and what its pages
//! say of a stale run: shared by the index and the target pages (and the
//! writer in `mod.rs`), so that no page imports another.

use crate::changes::SeriesHistory;

/// The page of run `id`, relative to the site's root.
pub fn run_page(id: i64) -> String {
    format!("runs/{id}.html")
}

/// The page of `target`, relative to the site's root: its name made
/// file-safe ([`crate::paths::file_safe`]), with a few hex digits of its
/// hash when that changed it, so that two names never share a page.
pub fn target_page(target: &str) -> String {
    let safe = crate::paths::file_safe(target);
    if safe == target {
        format!("targets/{safe}.html")
    } else {
        let h = crate::html::csp::sha256(target.as_bytes());
        format!(
            "targets/{safe}-{:02x}{:02x}{:02x}{:02x}.html",
            h[0], h[1], h[2], h[3]
        )
    }
}

/// Why a run's results are stale, from the series of [`crate::changes`]
/// (another host, too old, another runtime line), each reason once.
pub(crate) fn stale_reasons(series: &[&SeriesHistory], run: i64) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in series {
        for row in s.rows.iter().filter(|r| r.run == run) {
            for why in &row.stale {
                let why = if why.starts_with("runtime") {
                    format!("{}: {why}", s.target)
                } else {
                    why.clone()
                };
                if !out.contains(&why) {
                    out.push(why);
                }
            }
        }
    }
    out
}
