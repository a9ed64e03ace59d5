//! The one expression language over a run's [`Summary`]: `p99>50ms`,
//! `errors>0`, `rps<1000`, `error_rate<=0.1%`. `shootout load --fail-if`
//! fails a run when an expression holds; a capacity search's service-level
//! objectives (`--slo p99<=10ms`, study `capacity.slo`) pass a level when
//! every one holds. Parsed up front, evaluated against a finished run.
//! A rule may name one request kind of a mix (`db.p99<=20ms`): it is then
//! judged on that kind's figures (`Summary::routes`) alone.

use crate::report::{ErrorCounts, LatencySummary, RequestCounts, Summary};
use crate::units::{parse_duration, UnitError};
use serde::{Serialize, Serializer};

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Gt,
    Ge,
    Lt,
    Le,
    Eq,
}

impl Op {
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Eq => "==",
        }
    }

    fn holds(self, a: f64, b: f64) -> bool {
        match self {
            Op::Gt => a > b,
            Op::Ge => a >= b,
            Op::Lt => a < b,
            Op::Le => a <= b,
            Op::Eq => a == b,
        }
    }
}

impl Serialize for Op {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// One parsed condition over a summary, e.g. `p99<=10ms`.
///
/// Serialised as `{"text", "metric", "op", "value", "unit"}`; latencies are
/// in milliseconds, `error_rate` is a fraction (0.001 for `0.1%`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Threshold {
    text: String,
    /// The request kind of a mix the rule is about; None: the whole run.
    #[serde(skip_serializing_if = "Option::is_none")]
    route: Option<String>,
    metric: String,
    op: Op,
    value: f64,
    unit: &'static str,
}

/// Latency metrics, in milliseconds (corrected latency in open loop).
pub const LATENCY: [&str; 8] = ["min", "mean", "stdev", "p50", "p90", "p99", "p999", "max"];
/// Every other metric.
pub const PLAIN: [&str; 7] = [
    "rps",
    "errors",
    "error_rate",
    "timeouts",
    "non_ok",
    "cut",
    "mismatches",
];

/// Text that is not a threshold expression, with the reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ThresholdError {
    #[error("'{0}' has no comparison; write e.g. p99>50ms or errors>0")]
    NoComparison(String),
    #[error("'{text}': unknown metric '{metric}'; use one of {}, {}", LATENCY.join(", "), PLAIN.join(", "))]
    UnknownMetric { text: String, metric: String },
    #[error("in '{text}': {unit}")]
    BadDuration { text: String, unit: UnitError },
    #[error("in '{text}': '{raw}' is not a number")]
    NotANumber { text: String, raw: String },
}

/// Read back from its serialised form by re-parsing `text`, so a stored
/// rule means what it meant when it was written.
impl<'de> serde::Deserialize<'de> for Threshold {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(serde::Deserialize)]
        struct Stored {
            text: String,
        }
        let stored = Stored::deserialize(d)?;
        Threshold::parse(&stored.text).map_err(serde::de::Error::custom)
    }
}

impl Threshold {
    pub fn parse(text: &str) -> Result<Threshold, ThresholdError> {
        let t = text.replace(' ', "");
        let (pos, op, len) = [
            (">=", Op::Ge),
            ("<=", Op::Le),
            ("==", Op::Eq),
            (">", Op::Gt),
            ("<", Op::Lt),
        ]
        .iter()
        .find_map(|(sym, op)| t.find(sym).map(|p| (p, *op, sym.len())))
        .ok_or_else(|| ThresholdError::NoComparison(text.to_string()))?;
        let (route, metric) = match t[..pos].rsplit_once('.') {
            Some((route, metric)) => (Some(route.to_string()), metric.to_ascii_lowercase()),
            None => (None, t[..pos].to_ascii_lowercase()),
        };
        if route.as_deref() == Some("") {
            return Err(ThresholdError::UnknownMetric {
                text: text.to_string(),
                metric: t[..pos].to_string(),
            });
        }
        let raw = &t[pos + len..];
        let value = if LATENCY.contains(&metric.as_str()) {
            let d = parse_duration(raw).map_err(|unit| ThresholdError::BadDuration {
                text: text.to_string(),
                unit,
            })?;
            d.as_secs_f64() * 1000.0
        } else if PLAIN.contains(&metric.as_str()) {
            match raw.strip_suffix('%') {
                Some(p) if metric == "error_rate" => p.parse::<f64>().map(|v| v / 100.0),
                _ => raw.parse::<f64>(),
            }
            .map_err(|_| ThresholdError::NotANumber {
                text: text.to_string(),
                raw: raw.to_string(),
            })?
        } else {
            return Err(ThresholdError::UnknownMetric {
                text: text.to_string(),
                metric,
            });
        };
        let unit = match metric.as_str() {
            m if LATENCY.contains(&m) => "ms",
            "rps" => "req/s",
            "error_rate" => "fraction",
            _ => "requests",
        };
        Ok(Threshold {
            text: text.to_string(),
            route,
            metric,
            op,
            value,
            unit,
        })
    }

    /// The expression as written.
    pub fn text(&self) -> &str {
        &self.text
    }
    pub fn metric(&self) -> &str {
        &self.metric
    }
    /// The request kind the rule names (`db` of `db.p99<=20ms`), if any.
    pub fn route(&self) -> Option<&str> {
        self.route.as_deref()
    }
    pub fn op(&self) -> Op {
        self.op
    }
    /// The bound, in the metric's unit (ms for latencies, a fraction for `error_rate`).
    pub fn value(&self) -> f64 {
        self.value
    }
    /// Whether the metric is a latency (in ms).
    pub fn is_latency(&self) -> bool {
        LATENCY.contains(&self.metric.as_str())
    }

    /// The metric's value in the summary (latencies in ms); NaN, which
    /// no comparison holds, when the rule names a kind the run did not send
    /// or a latency of no completed response.
    pub fn actual(&self, s: &Summary) -> f64 {
        let figures = match &self.route {
            None => Figures {
                latency: &s.latency_ms,
                requests: &s.requests,
                errors: &s.errors,
                rps: s.rps,
            },
            Some(name) => match s.routes.iter().find(|r| &r.name == name) {
                Some(r) => Figures {
                    latency: &r.latency_ms,
                    requests: &r.requests,
                    errors: &r.errors,
                    rps: if s.duration_s > 0.0 {
                        r.requests.completed as f64 / s.duration_s
                    } else {
                        0.0
                    },
                },
                None => return f64::NAN,
            },
        };
        self.actual_in(&figures)
    }

    fn actual_in(&self, f: &Figures<'_>) -> f64 {
        let (l, s) = (f.latency, f);
        // No response, no latency: a percentile of nothing is not 0 ms (a
        // capacity search leaves such a rule on a kind unjudged and fails
        // one on the whole load).
        if self.is_latency() && s.requests.completed == 0 {
            return f64::NAN;
        }
        let errors = s.errors.total();
        match self.metric.as_str() {
            "min" => l.min,
            "mean" => l.mean,
            "stdev" => l.stdev,
            "p50" => l.p50,
            "p90" => l.p90,
            "p99" => l.p99,
            "p999" => l.p999,
            "max" => l.max,
            "rps" => f.rps,
            "errors" => errors as f64,
            "error_rate" => errors as f64 / (s.requests.sent.max(1)) as f64,
            "timeouts" => s.errors.timeout as f64,
            "non_ok" => (s.requests.completed - s.requests.ok) as f64,
            "mismatches" => s.errors.mismatch as f64,
            _ => s.requests.cut as f64,
        }
    }

    /// Whether the condition is true of the summary (never for a kind it lacks).
    pub fn holds(&self, s: &Summary) -> bool {
        self.op.holds(self.actual(s), self.value)
    }

    /// `Some(message)` when the condition holds, i.e. a run fails it as a
    /// `--fail-if`.
    pub fn violation(&self, s: &Summary) -> Option<String> {
        let a = self.actual(s);
        self.holds(s).then(|| {
            format!(
                "--fail-if {}: {}{} was {}",
                self.text,
                self.route
                    .as_deref()
                    .map(|r| format!("{r}."))
                    .unwrap_or_default(),
                self.metric,
                fmt_num(a)
            )
        })
    }
}

/// The figures a rule reads: the whole run's or one kind's.
struct Figures<'a> {
    latency: &'a LatencySummary,
    requests: &'a RequestCounts,
    errors: &'a ErrorCounts,
    rps: f64,
}

fn fmt_num(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects() {
        let t = Threshold::parse("p99>50ms").unwrap();
        assert_eq!((t.metric.as_str(), t.op, t.value), ("p99", Op::Gt, 50.0));
        assert_eq!(Threshold::parse("p99 >= 1s").unwrap().value, 1000.0);
        assert_eq!(Threshold::parse("error_rate>1%").unwrap().value, 0.01);
        assert!(Threshold::parse("p99")
            .unwrap_err()
            .to_string()
            .contains("no comparison"));
        assert!(Threshold::parse("speed>5")
            .unwrap_err()
            .to_string()
            .contains("unknown metric"));
        assert!(Threshold::parse("p99>fast").is_err());
        let t = Threshold::parse("db.p99<=20ms").unwrap();
        assert_eq!((t.route(), t.metric(), t.value), (Some("db"), "p99", 20.0));
        assert_eq!(Threshold::parse("p99<=20ms").unwrap().route(), None);
        assert!(Threshold::parse(".p99<1s").is_err());
        assert!(Threshold::parse("db.speed<1").is_err());
        assert_eq!(
            Threshold::parse("p99>fast").unwrap_err().to_string(),
            "in 'p99>fast': 'fast' is not a duration (e.g. 500ms, 10s, 2m; units us, ms, s, m or min, h)"
        );
        assert_eq!(
            Threshold::parse("rps>lots").unwrap_err(),
            ThresholdError::NotANumber {
                text: "rps>lots".into(),
                raw: "lots".into()
            }
        );
    }
}
