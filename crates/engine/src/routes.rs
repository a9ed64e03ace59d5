//! Per-kind measurements of a mix: each kind's counts, errors and latency
//! beside the run's totals, kept by the same [`Recorder`](crate::stats::Recorder)
//! calls (a run without a mix keeps none) and merged across threads at the end.

use crate::mix::Mix;
use crate::report::{ErrorCounts, LatencySummary, RequestCounts, RouteSummary};
use crate::stats::{latency_histogram, ErrorClass};
use hdrhistogram::Histogram;

/// One kind's measurements in one thread.
#[derive(Debug, Clone)]
pub(crate) struct RouteStats {
    pub counts: RequestCounts,
    pub errors: ErrorCounts,
    /// Latency in microseconds, as the run's (corrected in open loop).
    pub latency: Histogram<u64>,
}

impl RouteStats {
    pub fn new() -> RouteStats {
        RouteStats {
            counts: RequestCounts::default(),
            errors: ErrorCounts::default(),
            latency: latency_histogram(),
        }
    }

    pub fn completed(&mut self, status: u16, corrected_us: u64) {
        self.counts.completed += 1;
        if (200..400).contains(&status) {
            self.counts.ok += 1;
        }
        self.latency.saturating_record(corrected_us);
    }

    pub fn failed(&mut self, class: ErrorClass) {
        self.errors.count(class);
    }

    pub fn merge(&mut self, other: &RouteStats) {
        let c = &mut self.counts;
        c.sent += other.counts.sent;
        c.completed += other.counts.completed;
        c.ok += other.counts.ok;
        c.cut += other.counts.cut;
        self.errors.add(&other.errors);
        // Both share the same bounds, so adding cannot fail.
        let _ = self.latency.add(&other.latency);
    }
}

/// The routes of a report: one per kind of `mix`, in the mix's order
/// (`stats` is empty when nothing was recorded).
pub(crate) fn summaries(mix: Option<&Mix>, stats: &[RouteStats]) -> Vec<RouteSummary> {
    let Some(mix) = mix else { return Vec::new() };
    let empty = RouteStats::new();
    mix.kinds()
        .iter()
        .enumerate()
        .map(|(i, kind)| {
            let s = stats.get(i).unwrap_or(&empty);
            RouteSummary {
                name: kind.name.clone(),
                weight: kind.weight,
                path: kind.path.to_string(),
                requests: s.counts.clone(),
                errors: s.errors.clone(),
                latency_ms: LatencySummary::from_histogram(&s.latency),
            }
        })
        .collect()
}
