//! `--fail-if` expressions such as `p99>50ms`, `errors>0` or `rps<1000`:
//! parsed up front, evaluated against a finished run's summary.

use crate::units::parse_duration;
use shootout_engine::Summary;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Op {
    Gt,
    Ge,
    Lt,
    Le,
    Eq,
}

/// One parsed `--fail-if` condition: the run fails when it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Threshold {
    text: String,
    metric: String,
    op: Op,
    value: f64,
}

const LATENCY: [&str; 8] = ["min", "mean", "stdev", "p50", "p90", "p99", "p999", "max"];
const PLAIN: [&str; 6] = ["rps", "errors", "error_rate", "timeouts", "non_ok", "cut"];

impl Threshold {
    pub fn parse(text: &str) -> Result<Threshold, String> {
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
        .ok_or_else(|| format!("'{text}' has no comparison; write e.g. p99>50ms or errors>0"))?;
        let metric = t[..pos].to_ascii_lowercase();
        let raw = &t[pos + len..];
        let value = if LATENCY.contains(&metric.as_str()) {
            let d = parse_duration(raw).map_err(|e| format!("in '{text}': {e}"))?;
            d.as_secs_f64() * 1000.0
        } else if PLAIN.contains(&metric.as_str()) {
            match raw.strip_suffix('%') {
                Some(p) if metric == "error_rate" => p.parse::<f64>().map(|v| v / 100.0),
                _ => raw.parse::<f64>(),
            }
            .map_err(|_| format!("in '{text}': '{raw}' is not a number"))?
        } else {
            return Err(format!(
                "'{text}': unknown metric '{metric}'; use one of {}, {}",
                LATENCY.join(", "),
                PLAIN.join(", ")
            ));
        };
        Ok(Threshold {
            text: text.to_string(),
            metric,
            op,
            value,
        })
    }

    /// The metric's value in the summary (latencies in ms).
    fn actual(&self, s: &Summary) -> f64 {
        let l = &s.latency_ms;
        let errors =
            s.errors.connect + s.errors.write + s.errors.read + s.errors.timeout + s.errors.parse;
        match self.metric.as_str() {
            "min" => l.min,
            "mean" => l.mean,
            "stdev" => l.stdev,
            "p50" => l.p50,
            "p90" => l.p90,
            "p99" => l.p99,
            "p999" => l.p999,
            "max" => l.max,
            "rps" => s.rps,
            "errors" => errors as f64,
            "error_rate" => errors as f64 / (s.requests.sent.max(1)) as f64,
            "timeouts" => s.errors.timeout as f64,
            "non_ok" => (s.requests.completed - s.requests.ok) as f64,
            _ => s.requests.cut as f64,
        }
    }

    /// `Some(message)` when the condition holds, i.e. the run fails it.
    pub fn violation(&self, s: &Summary) -> Option<String> {
        let a = self.actual(s);
        let holds = match self.op {
            Op::Gt => a > self.value,
            Op::Ge => a >= self.value,
            Op::Lt => a < self.value,
            Op::Le => a <= self.value,
            Op::Eq => a == self.value,
        };
        holds.then(|| {
            format!(
                "--fail-if {}: {} was {}",
                self.text,
                self.metric,
                fmt_num(a)
            )
        })
    }
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
            .contains("no comparison"));
        assert!(Threshold::parse("speed>5")
            .unwrap_err()
            .contains("unknown metric"));
        assert!(Threshold::parse("p99>fast").is_err());
    }
}
