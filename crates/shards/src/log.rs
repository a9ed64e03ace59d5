//! Writing and reading one shard's files: the standard HdrHistogram interval
//! log (`.hlog`, through the `hdrhistogram` crate's `interval_log`) and its
//! JSON sidecar (`<log>.json`).
//!
//! The log has `StartTime` and `BaseTime` headers (both the start of the
//! measured phase, seconds since the epoch), then one histogram per second
//! tagged `latency`: the latency in microseconds (from the intended send
//! time in an open loop) of the responses completed in that second, V2
//! deflate-compressed. An open loop adds two histograms over the whole
//! measured phase: `uncorrected` (from the actual send) and `send-lag`.
//! HdrHistogram's own tools read it (`HistogramLogProcessor -tag latency
//! -outputValueUnitRatio 1000` prints milliseconds).

use crate::sidecar::{Sidecar, FORMAT};
use base64::Engine as _;
use hdrhistogram::serialization::interval_log::{
    IntervalLogIterator, IntervalLogWriterBuilder, IntervalLogWriterError, LogEntry, Tag,
};
use hdrhistogram::serialization::{
    DeserializeError, Deserializer, V2DeflateSerializeError, V2DeflateSerializer,
};
use hdrhistogram::Histogram;
use shootout_engine::{LoadReport, Plan};
use std::path::{Path, PathBuf};
use std::time::Duration;

pub const LATENCY_TAG: &str = "latency";
pub const UNCORRECTED_TAG: &str = "uncorrected";
pub const LAG_TAG: &str = "send-lag";

/// A shard's files could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    #[error("{path}: {reason}")]
    File { path: PathBuf, reason: String },
}

/// A histogram that could not go into or come out of an interval log.
#[derive(Debug, thiserror::Error)]
pub enum HistogramError {
    /// The log's header could not be written.
    #[error("{0}")]
    Begin(std::io::Error),
    // The hdrhistogram errors below have no useful Display: shown with `{:?}`.
    #[error("{0:?}")]
    Write(IntervalLogWriterError<V2DeflateSerializeError>),
    #[error("bad base64 histogram: {0}")]
    Base64(base64::DecodeError),
    #[error("bad histogram: {0:?}")]
    Decode(DeserializeError),
}

fn file_error(path: &Path, reason: impl ToString) -> LogError {
    LogError::File {
        path: path.to_path_buf(),
        reason: reason.to_string(),
    }
}

/// The line between a shard's sidecar and its interval log when both
/// travel in one stream (`shootout agent` to the runner's generator pods):
/// neither holds it (JSON keeps text in quotes; a log's lines are
/// comments, headers and numbers).
pub const SEPARATOR: &str = "%%shootout-interval-log%%";

/// A stream of a sidecar, [`SEPARATOR`] and a log, cut at the separator:
/// the sidecar, then the log; None when it has no separator line.
pub fn split_stream(text: &str) -> Option<(&str, &str)> {
    text.split_once(&format!("\n{SEPARATOR}\n"))
}

/// The sidecar's path for a log: `shard-1.hlog` -> `shard-1.hlog.json`.
pub fn sidecar_path(hlog: &Path) -> PathBuf {
    let mut p = hlog.as_os_str().to_owned();
    p.push(".json");
    PathBuf::from(p)
}

/// Writes `hlog` and its sidecar for a run of `plan`; `interrupted` marks
/// a run stopped by a signal before its end.
pub fn write(
    hlog: &Path,
    plan: &Plan,
    report: &LoadReport,
    interrupted: bool,
) -> Result<(), LogError> {
    let mut text = Vec::new();
    encode(report, &mut text).map_err(|e| file_error(hlog, e))?;
    std::fs::write(hlog, text).map_err(|e| file_error(hlog, e))?;
    let name = hlog
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let sidecar = Sidecar::of(plan, report, name, interrupted);
    let json = serde_json::to_string_pretty(&sidecar).map_err(|e| file_error(hlog, e))?;
    let side = sidecar_path(hlog);
    std::fs::write(&side, json + "\n").map_err(|e| file_error(&side, e))
}

fn encode(report: &LoadReport, out: &mut Vec<u8>) -> Result<(), HistogramError> {
    let start = report.clock.measured_from;
    let mut serializer = V2DeflateSerializer::new();
    let mut log = IntervalLogWriterBuilder::new()
        .add_comment("shootout load interval log: latency in microseconds")
        .with_start_time(start)
        .with_base_time(start)
        .begin_log_with(out, &mut serializer)
        .map_err(HistogramError::Begin)?;
    let duration = Duration::from_secs_f64(report.summary.duration_s.max(0.0));
    let tag = |t| Tag::new(t).expect("static tags have no separators");
    let err = HistogramError::Write;
    for (i, h) in report.intervals.latency.iter().enumerate() {
        let from = Duration::from_secs(i as u64);
        let len = duration.saturating_sub(from).min(Duration::from_secs(1));
        let len = if len.is_zero() {
            Duration::from_secs(1)
        } else {
            len
        };
        log.write_histogram(h, from, len, Some(tag(LATENCY_TAG)))
            .map_err(err)?;
    }
    if let Some(h) = &report.uncorrected {
        log.write_histogram(h, Duration::ZERO, duration, Some(tag(UNCORRECTED_TAG)))
            .map_err(err)?;
    }
    if let Some(h) = &report.intervals.lag {
        log.write_histogram(h, Duration::ZERO, duration, Some(tag(LAG_TAG)))
            .map_err(err)?;
    }
    Ok(())
}

/// One shard's log and sidecar, read back.
#[derive(Debug, Clone)]
pub struct ShardLog {
    /// The log's path as given.
    pub path: PathBuf,
    pub sidecar: Sidecar,
    /// `latency` histograms with their start in Unix seconds.
    pub seconds: Vec<(f64, Histogram<u64>)>,
    pub uncorrected: Option<Histogram<u64>>,
    pub lag: Option<Histogram<u64>>,
}

/// Reads a shard given its log or its sidecar (`x.hlog` or `x.hlog.json`).
pub fn read(path: &Path) -> Result<ShardLog, LogError> {
    let hlog = match path.to_str().and_then(|p| p.strip_suffix(".json")) {
        Some(stem) => PathBuf::from(stem),
        None => path.to_path_buf(),
    };
    let side = sidecar_path(&hlog);
    let text = std::fs::read_to_string(&side)
        .map_err(|e| file_error(&side, format!("cannot read the sidecar: {e}")))?;
    let sidecar: Sidecar = serde_json::from_str(&text)
        .map_err(|e| file_error(&side, format!("not a shard sidecar: {e}")))?;
    if sidecar.format != FORMAT {
        return Err(file_error(
            &side,
            format!("format '{}', expected '{FORMAT}'", sidecar.format),
        ));
    }
    let bytes = std::fs::read(&hlog)
        .map_err(|e| file_error(&hlog, format!("cannot read the interval log: {e}")))?;
    let mut log = ShardLog {
        path: hlog.clone(),
        sidecar,
        seconds: Vec::new(),
        uncorrected: None,
        lag: None,
    };
    let mut base = 0.0;
    for entry in IntervalLogIterator::new(&bytes) {
        let entry = entry.map_err(|e| file_error(&hlog, format!("bad interval log: {e:?}")))?;
        match entry {
            LogEntry::BaseTime(t) => base = t.as_secs_f64(),
            LogEntry::StartTime(_) => {}
            LogEntry::Interval(i) => {
                let h = decode(i.encoded_histogram()).map_err(|e| file_error(&hlog, e))?;
                let at = base + i.start_timestamp().as_secs_f64();
                match i.tag().map(|t| t.as_str()) {
                    Some(LATENCY_TAG) => log.seconds.push((at, h)),
                    Some(UNCORRECTED_TAG) => log.uncorrected = Some(h),
                    Some(LAG_TAG) => log.lag = Some(h),
                    _ => {}
                }
            }
        }
    }
    Ok(log)
}

/// A base64 V2 (possibly deflated) histogram, as the interval log holds it.
pub fn decode(encoded: &str) -> Result<Histogram<u64>, HistogramError> {
    let raw = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .map_err(HistogramError::Base64)?;
    Deserializer::new()
        .deserialize(&mut &raw[..])
        .map_err(HistogramError::Decode)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_is_cut_between_sidecar_and_log() {
        let text = format!("{{\"a\": \"%%x\"}}\n{SEPARATOR}\n#[StartTime: 1]\n0.0,1.0\n");
        assert_eq!(
            split_stream(&text),
            Some(("{\"a\": \"%%x\"}", "#[StartTime: 1]\n0.0,1.0\n"))
        );
        assert_eq!(split_stream("{}\n#[StartTime: 1]\n"), None);
    }
}
