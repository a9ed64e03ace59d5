//! The metric catalogue: every metric a study may list in `metrics` or key
//! figures by under `[published]`, with its label, unit, better direction,
//! how repetitions are aggregated, and whether article tables show it when
//! a study lists none. Its name is also its export column: the one spelling
//! in CSV headers and flat JSON keys of `load`, `capacity`, `merge` and
//! `report` (docs/columns.md lists them). It lives here, in the study crate,
//! because the study parser is the lowest crate that needs the names and
//! the report crate depends on it; reading a metric's value from a stored
//! measurement is the report crate's `metric::value`, whose exhaustive
//! match the compiler holds to this list. Adding a metric is one row below
//! plus that one match arm.

use serde::Serialize;
use std::fmt;

/// What a metric's values are measured in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    ReqPerS,
    Ms,
    MiB,
    MibPerS,
    Seconds,
    ReqPerCpuS,
    Errors,
    Responses,
    /// CPUs of a quota (`resources.cpus`).
    Cpus,
    /// Requests per second per GiB of memory limit.
    ReqPerSPerGib,
    /// TLS handshakes (a count).
    Handshakes,
    /// Kibibytes (memory per connection).
    KiB,
    /// CPU milliseconds per second (a server holding idle connections).
    MsPerS,
}

impl Unit {
    /// The unit as printed after a value: `req/s`, `ms`, `MiB`, …
    pub fn symbol(self) -> &'static str {
        match self {
            Unit::ReqPerS => "req/s",
            Unit::Ms => "ms",
            Unit::MiB => "MiB",
            Unit::MibPerS => "MiB/s",
            Unit::Seconds => "s",
            Unit::ReqPerCpuS => "req per CPU-s",
            Unit::Errors => "errors",
            Unit::Responses => "responses",
            Unit::Cpus => "CPUs",
            Unit::ReqPerSPerGib => "req/s per GiB",
            Unit::Handshakes => "handshakes",
            Unit::KiB => "KiB",
            Unit::MsPerS => "ms/s",
        }
    }
}

/// Which direction of a metric is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    Higher,
    Lower,
}

/// How the repetitions of one target in one scenario level are combined
/// into a table cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Aggregate {
    /// The median, ± the half-width of its 95% CI from two repetitions on.
    Median,
    /// The largest value of any repetition (a peak stays a peak).
    Max,
}

/// Which measurements have a value of a metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Every measurement.
    Every,
    /// Only database scenarios; tables drop the row where no column has it.
    Database,
    /// One value per target (its build), from the run's target record.
    Target,
    /// Only measurements under a `resources` budget (or read from a
    /// server's cgroup); tables drop the row where no column has it.
    Budget,
    /// Only measurements after an auto (steady-state) warm-up; tables drop
    /// the row where no column has it.
    AutoWarmup,
    /// Only measurements over TLS without keep-alive, where every request
    /// opens a connection and shakes hands in the measured phase (a
    /// kept-alive connection shook hands in the warm-up); tables drop the
    /// row where no column has it.
    NewTlsConnections,
    /// Only WebSocket hold levels (connections held open and idle);
    /// tables drop the row where no column has it.
    Hold,
}

/// Everything the catalogue says about one metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetricInfo {
    /// The study-file name and export column, e.g. `p99_ms`.
    pub name: &'static str,
    /// The row label of tables, with its unit, e.g. `p99 latency (ms)`.
    pub label: &'static str,
    pub unit: Unit,
    pub better: Better,
    pub aggregate: Aggregate,
    pub scope: Scope,
    /// Shown in article tables of a study whose `metrics` is empty.
    pub default_row: bool,
}

macro_rules! catalogue {
    ($($variant:ident = $name:literal, $label:literal, $unit:ident, $better:ident,
       $aggregate:ident, $scope:ident, $row:literal;)*) => {
        /// A metric of the catalogue.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
        #[serde(into = "&'static str")]
        pub enum Metric {
            $($variant,)*
        }

        impl Metric {
            /// Every metric, in catalogue order (the order of table rows
            /// and of error messages).
            pub const ALL: &'static [Metric] = &[$(Metric::$variant,)*];

            /// Everything the catalogue says about this metric.
            pub fn info(self) -> MetricInfo {
                match self {
                    $(Metric::$variant => MetricInfo {
                        name: $name,
                        label: $label,
                        unit: Unit::$unit,
                        better: Better::$better,
                        aggregate: Aggregate::$aggregate,
                        scope: Scope::$scope,
                        default_row: $row,
                    },)*
                }
            }
        }
    };
}

// variant = name (export column), label, unit, better, aggregate, scope, default row
catalogue! {
    Rps = "rps", "RPS (req/s)", ReqPerS, Higher, Median, Every, true;
    RpsStdev = "rps_stdev", "RPS stdev over seconds (req/s)", ReqPerS, Lower, Median, Every, false;
    RpsMax = "rps_max", "RPS best second (req/s)", ReqPerS, Higher, Max, Every, false;
    Mean = "mean_ms", "Mean latency (ms)", Ms, Lower, Median, Every, true;
    Stdev = "stdev_ms", "Latency stdev (ms)", Ms, Lower, Median, Every, false;
    Min = "min_ms", "Min latency (ms)", Ms, Lower, Median, Every, false;
    Median = "median_ms", "Median latency (ms)", Ms, Lower, Median, Every, true;
    P90 = "p90_ms", "p90 latency (ms)", Ms, Lower, Median, Every, true;
    P99 = "p99_ms", "p99 latency (ms)", Ms, Lower, Median, Every, true;
    Throttled = "throttled_s", "Throttled by the CPU quota (s)", Seconds, Lower, Median, Budget, true;
    CpuQuota = "cpu_quota", "CPU quota (CPUs)", Cpus, Higher, Median, Budget, true;
    MemoryLimit = "memory_limit_mib", "Memory limit (MiB)", MiB, Higher, Median, Budget, true;
    ReqPerQuotaCpuS = "req_per_quota_cpu_s", "Req per CPU-s of quota", ReqPerCpuS, Higher, Median, Budget, true;
    RpsPerLimitGib = "rps_per_limit_gib", "RPS per GiB of limit (req/s per GiB)", ReqPerSPerGib, Higher, Median, Budget, true;
    P999 = "p999_ms", "p99.9 latency (ms)", Ms, Lower, Median, Every, false;
    Max = "max_ms", "Max latency (ms)", Ms, Lower, Median, Every, true;
    Errors = "errors", "Errors", Errors, Lower, Median, Every, true;
    ErrorsTimeout = "errors_timeout", "Timeout errors", Errors, Lower, Median, Every, false;
    ErrorsConnect = "errors_connect", "Connect errors", Errors, Lower, Median, Every, false;
    ErrorsRead = "errors_read", "Read errors", Errors, Lower, Median, Every, false;
    ErrorsWrite = "errors_write", "Write errors", Errors, Lower, Median, Every, false;
    ErrorsParse = "errors_parse", "Parse errors", Errors, Lower, Median, Every, false;
    Mismatches = "mismatches", "Mismatches", Responses, Lower, Median, Every, false;
    Status2xx = "status_2xx", "2xx responses", Responses, Higher, Median, Every, false;
    StatusOther = "status_other", "Non-2xx responses", Responses, Lower, Median, Every, false;
    Throughput = "throughput_mib_s", "Throughput (MiB/s)", MibPerS, Higher, Median, Every, false;
    RssIdle = "rss_idle_mib", "RSS idle (MiB)", MiB, Lower, Median, Every, true;
    RssPeak = "rss_peak_mib", "RSS peak (MiB)", MiB, Lower, Median, Every, true;
    RssAfter = "rss_after_mib", "RSS after (MiB)", MiB, Lower, Median, Every, true;
    PssPeak = "pss_peak_mib", "PSS peak (MiB)", MiB, Lower, Median, Every, false;
    MemoryPeak = "memory_peak_mib", "Cgroup memory peak (MiB)", MiB, Lower, Max, Budget, false;
    DbRssPeak = "db_rss_peak_mib", "DB RSS peak (MiB)", MiB, Lower, Median, Database, true;
    CpuS = "server_cpu_s", "Server CPU (s)", Seconds, Lower, Median, Every, true;
    DbCpuS = "db_cpu_s", "DB CPU (s)", Seconds, Lower, Median, Database, true;
    ReqPerCpuS = "req_per_cpu_s", "Req per CPU-s", ReqPerCpuS, Higher, Median, Every, true;
    ReqPerTotalCpuS = "req_per_total_cpu_s", "Req per CPU-s (server + DB)", ReqPerCpuS, Higher, Median, Database, true;
    Footprint = "footprint_mib", "Footprint (MiB)", MiB, Lower, Median, Target, false;
    Startup = "startup_s", "Startup (s)", Seconds, Lower, Median, Every, false;
    WarmupS = "warmup_s", "Warm-up to steady (s)", Seconds, Lower, Median, AutoWarmup, true;
    Handshakes = "handshakes", "TLS handshakes", Handshakes, Higher, Median, NewTlsConnections, true;
    HandshakesResumed = "handshakes_resumed", "TLS handshakes resumed", Handshakes, Higher, Median, NewTlsConnections, true;
    HandshakesFailed = "handshakes_failed", "TLS handshakes failed", Handshakes, Lower, Median, NewTlsConnections, true;
    HandshakeP99 = "handshake_p99_ms", "TLS handshake p99 (ms)", Ms, Lower, Median, NewTlsConnections, true;
    KibPerIdleConnection = "kib_per_idle_conn", "Memory per idle connection (KiB)", KiB, Lower, Median, Hold, true;
    HoldCpu = "hold_cpu_ms_per_s", "Server CPU while held (ms/s)", MsPerS, Lower, Median, Hold, true;
}

impl Metric {
    /// The name as written in study files and export columns, e.g. `p99_ms`.
    pub fn as_str(self) -> &'static str {
        self.info().name
    }

    /// The study-file name and export column (the same as [`Metric::as_str`]).
    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// The row label, with its unit.
    pub fn label(self) -> &'static str {
        self.info().label
    }

    pub fn unit(self) -> Unit {
        self.info().unit
    }

    /// True when a larger value is better.
    pub fn higher_is_better(self) -> bool {
        self.info().better == Better::Higher
    }

    pub fn aggregate(self) -> Aggregate {
        self.info().aggregate
    }

    /// True for the metrics only database scenarios have.
    pub fn database_only(self) -> bool {
        self.info().scope == Scope::Database
    }

    /// True for the metrics some measurements lack (database scenarios,
    /// budgets, auto warm-ups): a table shows their row only where a column
    /// has a value.
    pub fn only_where_measured(self) -> bool {
        matches!(
            self.info().scope,
            Scope::Database
                | Scope::Budget
                | Scope::AutoWarmup
                | Scope::NewTlsConnections
                | Scope::Hold
        )
    }

    /// The rows of an article table when the study lists no metrics.
    pub fn default_rows() -> impl Iterator<Item = Metric> {
        Metric::ALL.iter().copied().filter(|m| m.info().default_row)
    }

    /// The metric with this name, if any.
    pub fn parse(name: &str) -> Option<Metric> {
        Metric::ALL.iter().copied().find(|m| m.as_str() == name)
    }

    /// Every name, comma-separated, for error messages.
    pub fn known() -> String {
        let names: Vec<&str> = Metric::ALL.iter().map(|m| m.as_str()).collect();
        names.join(", ")
    }
}

impl From<Metric> for &'static str {
    fn from(m: Metric) -> &'static str {
        m.as_str()
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_parse_back() {
        for m in Metric::ALL {
            assert_eq!(Metric::parse(m.as_str()), Some(*m));
        }
        let mut names: Vec<&str> = Metric::ALL.iter().map(|m| m.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Metric::ALL.len());
        assert_eq!(Metric::parse("p99"), None, "no aliases");
        assert!(Metric::known().starts_with("rps, rps_stdev"));
    }

    /// A label names its unit (counts of errors, responses and handshakes
    /// excepted: the label says what it counts), so a table row never
    /// shows a number without saying what it counts.
    #[test]
    fn labels_carry_their_units() {
        for m in Metric::ALL {
            let unit = m.unit();
            let (label, symbol) = (m.label().to_lowercase(), unit.symbol().to_lowercase());
            let named = label.ends_with(&format!("({symbol})")) || label.starts_with(&symbol);
            if !matches!(unit, Unit::Errors | Unit::Responses | Unit::Handshakes) {
                assert!(named, "{m}: {}", m.label());
            }
        }
    }

    /// docs/columns.md is the one description of the columns: it lists
    /// every metric's name with its label, and nothing the catalogue lacks.
    #[test]
    fn the_column_docs_list_the_catalogue() {
        let doc = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/columns.md"),
        )
        .expect("docs/columns.md");
        for m in Metric::ALL {
            let row = format!("| `{}` | {} |", m.name(), m.label());
            assert!(doc.contains(&row), "docs/columns.md lacks the row {row}");
        }
        let listed = doc
            .lines()
            .skip_while(|l| !l.starts_with("## Metrics"))
            .take_while(|l| !l.starts_with("## Other columns"))
            .filter(|l| l.starts_with("| `"))
            .count();
        assert_eq!(
            listed,
            Metric::ALL.len(),
            "docs/columns.md lists extra metrics"
        );
    }
}
