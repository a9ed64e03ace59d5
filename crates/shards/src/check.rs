//! Whether N shards' logs belong to one load: same settings, every shard
//! present exactly once, measured phases that overlap and start within
//! [`MAX_SKEW`] of each other, and each open-loop shard's achieved rate
//! within [`RATE_TOLERANCE`] of its share, and none stopped by a signal
//! before its end unless a partial window is accepted. Each broken rule is
//! one sentence naming the files concerned.

use crate::log::ShardLog;
use shootout_engine::Shard;
use std::collections::BTreeMap;

/// The largest start difference between shards the merge accepts.
pub const MAX_SKEW_MS: f64 = 50.0;
/// How far (as a fraction) a shard's achieved rate may be from its share.
pub const RATE_TOLERANCE: f64 = 0.01;

fn name(log: &ShardLog) -> String {
    log.path.display().to_string()
}

/// What a merge lets through that `shootout merge` refuses by default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Accept {
    /// Shards interrupted before their end (`--accept-partial`).
    pub partial: bool,
    /// Open-loop shards that sent below their share: a load that asks
    /// more than its connections can carry (an overload level) records
    /// what it could not send as unsent, as one generator's report does.
    pub short_rates: bool,
}

/// Every rule the shards break; empty when they can be merged.
/// `accept_partial`: shards interrupted before their end may be merged.
pub fn problems(logs: &[ShardLog], accept_partial: bool) -> Vec<String> {
    problems_but(
        logs,
        Accept {
            partial: accept_partial,
            short_rates: false,
        },
    )
}

/// [`problems`], less the rules `accept` lets through.
pub fn problems_but(logs: &[ShardLog], accept: Accept) -> Vec<String> {
    let accept_partial = accept.partial;
    let Some(first) = logs.first() else {
        return vec!["no shard logs given".into()];
    };
    let mut out = Vec::new();
    let count = first.sidecar.shard.count();
    let mut seen: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    for log in logs {
        let s = log.sidecar.shard;
        if Shard::new(s.index(), s.count()).is_err() {
            out.push(format!(
                "{} claims shard {s}, which cannot exist",
                name(log)
            ));
        } else if s.count() != count {
            out.push(format!(
                "{} is shard {s} but {} is shard {}: the shard counts differ",
                name(log),
                name(first),
                first.sidecar.shard
            ));
        } else {
            seen.entry(s.index()).or_default().push(name(log));
        }
        let diff = log.sidecar.settings.differences(&first.sidecar.settings);
        if !diff.is_empty() {
            out.push(format!(
                "{} was run with other settings than {}: {}",
                name(log),
                name(first),
                diff.join(", ")
            ));
        }
        let logged: u64 = log.seconds.iter().map(|(_, h)| h.len()).sum();
        let completed = log.sidecar.summary.requests.completed;
        if logged != completed {
            out.push(format!(
                "{}: the log holds {logged} responses but its sidecar counts {completed} completed",
                name(log)
            ));
        }
    }
    for i in 1..=count {
        match seen.get(&i).map(Vec::as_slice) {
            None | Some([]) => out.push(format!("shard {i}/{count} is missing")),
            Some([_]) => {}
            Some(many) => out.push(format!(
                "shard {i}/{count} appears {} times: {}",
                many.len(),
                many.join(", ")
            )),
        }
    }
    if !accept_partial {
        out.extend(interrupted(logs));
    }
    out.extend(timing(logs));
    if !accept.short_rates {
        out.extend(rates(logs));
    }
    out
}

/// Each shard stopped by a signal, with how much of its load it measured.
fn interrupted(logs: &[ShardLog]) -> Vec<String> {
    logs.iter()
        .filter(|l| l.sidecar.interrupted)
        .map(|l| {
            let planned = l
                .sidecar
                .settings
                .duration_s
                .map(|d| format!(" of {d:.1} s"))
                .unwrap_or_default();
            format!(
                "{} (shard {}) was interrupted after {:.1} s{planned}: its window is partial \
                 (--accept-partial merges it over the shortened window)",
                name(l),
                l.sidecar.shard,
                l.sidecar.summary.duration_s
            )
        })
        .collect()
}

/// Overlapping windows and the start skew.
fn timing(logs: &[ShardLog]) -> Vec<String> {
    let mut out = Vec::new();
    let by = |f: fn(&ShardLog) -> f64| logs.iter().map(f).collect::<Vec<_>>();
    let starts = by(|l| l.sidecar.measured_from_unix_s);
    let ends = by(|l| l.sidecar.measured_until_unix_s());
    let pick = |v: &[f64], max: bool| {
        let mut i = 0;
        for (j, x) in v.iter().enumerate() {
            if (max && *x > v[i]) || (!max && *x < v[i]) {
                i = j;
            }
        }
        i
    };
    let (earliest, latest) = (pick(&starts, false), pick(&starts, true));
    let first_end = pick(&ends, false);
    if starts[latest] >= ends[first_end] {
        out.push(format!(
            "the measured phases do not overlap: {} ended at {} before {} started at {}",
            name(&logs[first_end]),
            at(ends[first_end]),
            name(&logs[latest]),
            at(starts[latest])
        ));
    }
    let skew_ms = (starts[latest] - starts[earliest]) * 1000.0;
    if skew_ms > MAX_SKEW_MS {
        out.push(format!(
            "the shards started {skew_ms:.1} ms apart ({} at {}, {} at {}), more than {MAX_SKEW_MS} ms: \
             give them one --start-at and check the machines' clocks (NTP)",
            name(&logs[earliest]),
            at(starts[earliest]),
            name(&logs[latest]),
            at(starts[latest])
        ));
    }
    out
}

fn at(unix_s: f64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs_f64(unix_s.max(0.0));
    crate::clock::format_time(t)
}

/// Each open-loop shard sent its share: sent / duration within 1% of its
/// rate. A shard a signal stopped is not judged: its duration runs to the
/// stop, while it sends no more once the signal arrives (a partial merge
/// keeps only its whole seconds before the stop).
fn rates(logs: &[ShardLog]) -> Vec<String> {
    let mut out = Vec::new();
    for log in logs.iter().filter(|l| !l.sidecar.interrupted) {
        let s = &log.sidecar.summary;
        let (Some(share), "open") = (s.rate, s.mode.as_str()) else {
            continue;
        };
        let achieved = if s.duration_s > 0.0 {
            s.requests.sent as f64 / s.duration_s
        } else {
            0.0
        };
        let off = achieved / share - 1.0;
        if off.abs() > RATE_TOLERANCE {
            out.push(format!(
                "{} (shard {}) sent {achieved:.1} req/s, {:.1}% {} its share of {share} req/s{}",
                name(log),
                log.sidecar.shard,
                off.abs() * 100.0,
                if off < 0.0 { "below" } else { "above" },
                if off < 0.0 {
                    ": its generator or connections could not keep up"
                } else {
                    ""
                }
            ));
        }
    }
    out
}
