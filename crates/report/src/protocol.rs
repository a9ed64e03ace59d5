//! A level's protocol in the reports' words, the one spelling every table
//! title and the TLS-cost table use: `cleartext`, `TLS 1.3`, `mTLS 1.3`,
//! then `, new connections` without keep-alive and, over TLS, whether
//! those handshakes were `full handshakes` or `resumed`; HTTP versions
//! other than 1.1 lead (`HTTP/2 over TLS 1.3`). What the level asked for
//! is read from the stored study ([`shootout_study::Level`]: protocol,
//! keep-alive, `tls_resume`); what was spoken from the stored summaries
//! (`protocol.http`, `protocol.tls`, `protocol.client_cert`), so a TLS
//! version is the one negotiated, never assumed. Without a parsable study
//! the summaries alone decide (a level resumed when any handshake did).

use shootout_store::{Measurement, RunData};
use shootout_study::Level;
use std::collections::BTreeSet;

/// True when the run has a TLS level: its tables are then titled by
/// protocol, cleartext ones included, so the two read side by side.
pub fn run_has_tls(data: &RunData, study: Option<&shootout_study::Study>) -> bool {
    let asked = study.is_some_and(|s| {
        s.scenarios
            .iter()
            .flat_map(|sc| &sc.levels)
            .any(|l| l.protocol.is_tls())
    });
    asked || data.measurements.iter().any(|m| m.summary.tls.is_some())
}

/// The protocol label of a level's measurements (`reps`), as asked by
/// `spec` when the study gives it.
pub fn label(spec: Option<&Level>, reps: &[&Measurement]) -> String {
    let any = |f: fn(&Measurement) -> bool| reps.iter().any(|m| f(m));
    let tls = spec.map_or_else(|| any(|m| m.summary.tls.is_some()), |l| l.protocol.is_tls());
    let mutual = spec.map_or_else(
        || any(|m| m.summary.protocol.client_cert),
        |l| l.protocol.client_cert(),
    );
    let keepalive = spec.map_or_else(|| !any(|m| !m.summary.keepalive), |l| l.keepalive);
    let resumed = spec.map_or_else(
        || {
            any(|m| {
                m.summary
                    .tls
                    .as_ref()
                    .is_some_and(|t| t.handshakes.resumed > 0)
            })
        },
        |l| l.tls_resume,
    );
    let versions = joined(
        reps.iter()
            .filter_map(|m| m.summary.protocol.tls.as_deref()),
    );
    let http = joined(reps.iter().map(|m| m.summary.protocol.http.as_str()));
    let mut s = String::new();
    if !http.is_empty() && http != "1.1" {
        s.push_str(&format!("HTTP/{http} over "));
    }
    match (tls, mutual) {
        (false, _) => s.push_str("cleartext"),
        (true, false) => s.push_str("TLS"),
        (true, true) => s.push_str("mTLS"),
    }
    if tls && !versions.is_empty() {
        s.push_str(&format!(" {versions}"));
    }
    if !keepalive {
        s.push_str(", new connections");
        if tls {
            s.push_str(if resumed {
                ", resumed"
            } else {
                ", full handshakes"
            });
        }
    }
    s
}

/// The distinct values, in order, joined by `/` (`1.2/1.3` when targets
/// negotiated different versions).
fn joined<'a>(values: impl Iterator<Item = &'a str>) -> String {
    let set: BTreeSet<&str> = values.collect();
    set.into_iter().collect::<Vec<_>>().join("/")
}

#[cfg(test)]
mod tests {
    use super::label;
    use shootout_report_fixtures::tls::{sample, Way};
    use shootout_store::Measurement;

    fn with(
        tls: Option<&'static str>,
        client_cert: bool,
        keepalive: bool,
        resumed: u64,
    ) -> Measurement {
        let way = Way {
            tls,
            client_cert,
            keepalive,
            resumed: resumed > 0,
        };
        sample("go-nethttp", way)
    }

    #[test]
    fn labels_say_what_was_spoken_from_the_summaries_alone() {
        let l = |m: Measurement| label(None, &[&m]);
        assert_eq!(l(with(None, false, true, 0)), "cleartext");
        assert_eq!(l(with(None, false, false, 0)), "cleartext, new connections");
        assert_eq!(l(with(Some("1.3"), false, true, 0)), "TLS 1.3");
        assert_eq!(l(with(Some("1.3"), true, true, 0)), "mTLS 1.3");
        assert_eq!(
            l(with(Some("1.3"), false, false, 0)),
            "TLS 1.3, new connections, full handshakes"
        );
        assert_eq!(
            l(with(Some("1.2"), false, false, 1)),
            "TLS 1.2, new connections, resumed"
        );
        let (a, b) = (
            with(Some("1.3"), false, true, 0),
            with(Some("1.2"), false, true, 0),
        );
        assert_eq!(label(None, &[&a, &b]), "TLS 1.2/1.3");
        let mut h2 = with(Some("1.3"), false, true, 0);
        h2.summary.protocol.http = "2".into();
        assert_eq!(l(h2), "HTTP/2 over TLS 1.3");
    }

    #[test]
    fn the_study_says_what_was_asked_when_nothing_was_negotiated() {
        let study = shootout_study::parse(
            std::path::Path::new("t.toml"),
            "name = \"t\"\ndescription = \"d\"\nsource = \"s\"\ntargets = [\"a\"]\n\
             [[scenario]]\nname = \"json\"\nlevels = [\n\
             { connections = 2, duration = \"1s\", protocol = \"mtls\", keepalive = false, tls_resume = true },\n\
             ]\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let level = &study.scenarios[0].levels[0];
        // Every handshake failed: no version, nothing resumed.
        let failed = with(None, false, false, 0);
        assert_eq!(
            label(Some(level), &[&failed]),
            "mTLS, new connections, resumed"
        );
    }
}
