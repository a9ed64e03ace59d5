//! The one list of metric names: what a study may list in `metrics` and
//! key figures by under `[published]`, and what the report reads from a
//! measurement for each of them. Nothing else spells these names.

use serde::Serialize;
use std::fmt;

macro_rules! metrics {
    ($($variant:ident = $name:literal,)*) => {
        /// A metric a study or a report can name.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
        #[serde(into = "&'static str")]
        pub enum MetricName {
            $($variant,)*
        }

        impl MetricName {
            /// Every metric, in the order error messages list them.
            pub const ALL: &'static [MetricName] = &[$(MetricName::$variant,)*];

            /// The name as written in study files, e.g. `p99_ms`.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(MetricName::$variant => $name,)*
                }
            }
        }
    };
}

metrics! {
    Rps = "rps",
    RpsStdev = "rps_stdev",
    RpsMax = "rps_max",
    MeanMs = "mean_ms",
    StdevMs = "stdev_ms",
    MinMs = "min_ms",
    MedianMs = "median_ms",
    P90Ms = "p90_ms",
    P99Ms = "p99_ms",
    MaxMs = "max_ms",
    Errors = "errors",
    ErrorsTimeout = "errors_timeout",
    ErrorsConnect = "errors_connect",
    ErrorsRead = "errors_read",
    Status2xx = "status_2xx",
    StatusOther = "status_other",
    ThroughputMibS = "throughput_mib_s",
    RssIdleMib = "rss_idle_mib",
    RssPeakMib = "rss_peak_mib",
    RssAfterMib = "rss_after_mib",
    DbRssPeakMib = "db_rss_peak_mib",
    ServerCpuS = "server_cpu_s",
    DbCpuS = "db_cpu_s",
    ReqPerCpuS = "req_per_cpu_s",
    ReqPerTotalCpuS = "req_per_total_cpu_s",
    FootprintMib = "footprint_mib",
    StartupS = "startup_s",
}

impl MetricName {
    /// The metric with this name, if any.
    pub fn parse(name: &str) -> Option<MetricName> {
        MetricName::ALL.iter().copied().find(|m| m.as_str() == name)
    }

    /// Every name, comma-separated, for error messages.
    pub fn known() -> String {
        let names: Vec<&str> = MetricName::ALL.iter().map(|m| m.as_str()).collect();
        names.join(", ")
    }
}

impl From<MetricName> for &'static str {
    fn from(m: MetricName) -> &'static str {
        m.as_str()
    }
}

impl fmt::Display for MetricName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_parse_back() {
        for m in MetricName::ALL {
            assert_eq!(MetricName::parse(m.as_str()), Some(*m));
        }
        let mut names: Vec<&str> = MetricName::ALL.iter().map(|m| m.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), MetricName::ALL.len());
        assert_eq!(MetricName::parse("p99"), None, "no aliases");
        assert!(MetricName::known().starts_with("rps, rps_stdev"));
    }
}
