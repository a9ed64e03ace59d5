//! What a level's throughput counts, and the one place the reports' words
//! for it come from: an HTTP level counts requests (`req/s`), a WebSocket
//! echo level counts messages (`msg/s`, "Messages per CPU-s", "µs per
//! message"), and a WebSocket hold counts nothing: it opens its
//! connections and keeps them idle, so its "requests" are the upgrades
//! over the hold. A hold is ranked by memory per idle connection (lower
//! is better), shows no throughput or per-CPU-second row, and its latency
//! rows are those of the opening handshake (the engine records a held
//! connection's job as the upgrade, from its connect to the 101). The kind
//! is read once per level ([`Traffic::of`]: the stored study's level, else
//! the summaries) and every format (Markdown, HTML, findings, cost
//! sections, the run's progress line) asks it for labels and units; the
//! export names (JSON keys, CSV columns) never change.

use shootout_engine::Summary;
use shootout_store::Measurement;
use shootout_study::{Level, Metric, Unit};
use std::borrow::Cow;

/// What a level's load counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Traffic {
    /// HTTP: requests and responses.
    #[default]
    Requests,
    /// A WebSocket echo: messages and their echoes.
    Messages,
    /// A WebSocket hold: connections opened and kept idle; what it counts
    /// are their handshakes.
    Hold,
}

impl Traffic {
    /// The kind of one measurement, from its summary (its `websocket`
    /// figures) and its hold part.
    pub fn of_measurement(m: &Measurement) -> Traffic {
        if shootout_store::is_hold(m) {
            Traffic::Hold
        } else {
            Traffic::of_summary(&m.summary)
        }
    }

    /// The kind of one load, from its summary's `websocket` figures.
    pub fn of_summary(s: &Summary) -> Traffic {
        match &s.websocket {
            Some(ws) if ws.hold => Traffic::Hold,
            Some(_) => Traffic::Messages,
            None => Traffic::Requests,
        }
    }

    /// The kind of a level: as the study defines it (`spec`), else as its
    /// measurements (`reps`) say.
    pub fn of(spec: Option<&Level>, reps: &[&Measurement]) -> Traffic {
        match spec.and_then(|l| l.ws) {
            Some(ws) if ws.hold => Traffic::Hold,
            Some(_) => Traffic::Messages,
            None => reps
                .first()
                .map_or(Traffic::Requests, |m| Traffic::of_measurement(m)),
        }
    }

    /// True for a WebSocket hold.
    pub fn is_hold(self) -> bool {
        self == Traffic::Hold
    }

    /// What one unit of load is: `request`, `message`, or a hold's
    /// `handshake` (the upgrades it counts, at the start of the hold).
    pub fn noun(self) -> &'static str {
        match self {
            Traffic::Requests => "request",
            Traffic::Messages => "message",
            Traffic::Hold => "handshake",
        }
    }

    /// The plural of [`Traffic::noun`].
    pub fn nouns(self) -> &'static str {
        match self {
            Traffic::Requests => "requests",
            Traffic::Messages => "messages",
            Traffic::Hold => "handshakes",
        }
    }

    /// [`Traffic::nouns`] at the head of a title: `Requests`, `Messages`.
    pub fn title_nouns(self) -> &'static str {
        match self {
            Traffic::Requests => "Requests",
            Traffic::Messages => "Messages",
            Traffic::Hold => "Handshakes",
        }
    }

    /// What the latency figures time: `Latency`, or a hold's `Handshake
    /// latency` (connect to the 101).
    pub fn latency_word(self) -> &'static str {
        match self {
            Traffic::Hold => "Handshake latency",
            _ => "Latency",
        }
    }

    /// What a timeline's upper panel counts per second: `Throughput`, or
    /// a hold's `Handshakes` (its upgrades, at the start of the hold).
    pub fn per_second(self) -> &'static str {
        match self {
            Traffic::Hold => "Handshakes",
            _ => "Throughput",
        }
    }

    /// The rate's unit: `req/s`, `msg/s` for messages, a hold's
    /// `handshakes/s`.
    pub fn rate(self) -> &'static str {
        self.symbol(Unit::ReqPerS)
    }

    /// A unit as printed after a value: the catalogue's symbol, with
    /// messages instead of requests for a WebSocket echo.
    pub fn symbol(self, unit: Unit) -> &'static str {
        match (self, unit) {
            (Traffic::Messages, Unit::ReqPerS) => "msg/s",
            (Traffic::Messages, Unit::ReqPerCpuS) => "msg per CPU-s",
            (Traffic::Messages, Unit::ReqPerSPerGib) => "msg/s per GiB",
            (Traffic::Hold, Unit::ReqPerS) => "handshakes/s",
            _ => unit.symbol(),
        }
    }

    /// A metric's row label: the catalogue's, in messages for a WebSocket
    /// echo, and with the handshake named in a hold's latency rows.
    pub fn label(self, metric: Metric) -> Cow<'static, str> {
        let label = metric.label();
        match self {
            Traffic::Requests => Cow::Borrowed(label),
            Traffic::Messages => Cow::Borrowed(match metric {
                Metric::Rps => "Messages/s (msg/s)",
                Metric::RpsStdev => "Messages/s stdev over seconds (msg/s)",
                Metric::RpsMax => "Messages/s best second (msg/s)",
                Metric::ReqPerCpuS => "Messages per CPU-s",
                Metric::ReqPerTotalCpuS => "Messages per CPU-s (server + DB)",
                Metric::ReqPerQuotaCpuS => "Messages per CPU-s of quota",
                Metric::RpsPerLimitGib => "Messages/s per GiB of limit (msg/s per GiB)",
                _ => label,
            }),
            Traffic::Hold if metric == Metric::Rps => Cow::Borrowed("Handshakes/s (handshakes/s)"),
            Traffic::Hold if is_latency(metric) => Cow::Owned(
                label
                    .replace("latency", "handshake latency")
                    .replace("Latency", "Handshake latency"),
            ),
            Traffic::Hold => Cow::Borrowed(label),
        }
    }

    /// False for the rows that mean nothing here: a hold's rates (its
    /// upgrades over the hold) and everything per request of them.
    pub fn shows(self, metric: Metric) -> bool {
        !(self.is_hold()
            && matches!(
                metric.unit(),
                Unit::ReqPerS | Unit::ReqPerCpuS | Unit::ReqPerSPerGib | Unit::MibPerS
            ))
    }

    /// What the ranking of a level is headed by in the findings:
    /// `Throughput`, or a hold's `Memory per idle connection`.
    pub fn ranking_head(self) -> &'static str {
        match self {
            Traffic::Hold => "Memory per idle connection",
            _ => "Throughput",
        }
    }

    /// The metric a level is ranked by: throughput, or a hold's memory per
    /// idle connection.
    pub fn ranked_by(self) -> Metric {
        match self {
            Traffic::Hold => Metric::KibPerIdleConnection,
            _ => Metric::Rps,
        }
    }
}

/// The latency rows (in ms, over every measurement).
fn is_latency(metric: Metric) -> bool {
    matches!(
        metric,
        Metric::Mean
            | Metric::Stdev
            | Metric::Min
            | Metric::Median
            | Metric::P90
            | Metric::P99
            | Metric::P999
            | Metric::Max
    )
}

#[cfg(test)]
mod tests {
    use super::Traffic;
    use shootout_study::Metric;

    #[test]
    fn requests_keep_the_catalogue_words() {
        for &m in Metric::ALL {
            assert_eq!(Traffic::Requests.label(m), m.label());
            assert!(Traffic::Requests.shows(m));
            assert_eq!(Traffic::Requests.symbol(m.unit()), m.unit().symbol());
        }
        assert_eq!(Traffic::Requests.rate(), "req/s");
    }

    #[test]
    fn an_echo_counts_messages() {
        let t = Traffic::Messages;
        assert_eq!(t.label(Metric::Rps), "Messages/s (msg/s)");
        assert_eq!(t.label(Metric::ReqPerCpuS), "Messages per CPU-s");
        assert_eq!(t.label(Metric::P99), "p99 latency (ms)");
        assert_eq!(t.rate(), "msg/s");
        assert_eq!(t.noun(), "message");
        for &m in Metric::ALL {
            assert!(!t.label(m).contains("req"), "{m:?}: {}", t.label(m));
            assert!(!t.label(m).contains("Req"), "{m:?}: {}", t.label(m));
        }
    }

    #[test]
    fn a_hold_shows_no_rate_and_names_the_handshake() {
        let t = Traffic::Hold;
        assert!(!t.shows(Metric::Rps));
        assert!(!t.shows(Metric::ReqPerCpuS));
        assert!(t.shows(Metric::KibPerIdleConnection));
        assert!(t.shows(Metric::RssPeak));
        assert_eq!(t.label(Metric::P99), "p99 handshake latency (ms)");
        assert_eq!(t.label(Metric::Stdev), "Handshake latency stdev (ms)");
        assert_eq!(t.ranked_by(), Metric::KibPerIdleConnection);
    }
}
