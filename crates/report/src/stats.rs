//! The statistics every report reads: `shootout-stats` (summaries,
//! intervals, significance, the pooled start variance, the A/A floor, an
//! interval's width), which sits below both the runner and the report.
//! Re-exported whole, modules and items, as `crate::stats`.

pub use shootout_stats::*;
