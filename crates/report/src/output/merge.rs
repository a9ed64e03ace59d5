//! Renders a merged sharded load: exactly `shootout load`'s output for the
//! merged report, followed by the shards (a `shards` array and
//! `start_skew_ms` in JSON, and `partial_window` when interrupted shards were
//! cut to a common window; a table in text and Markdown; CSV stays one row
//! of the load's columns).

use super::{load, Format};
use crate::escape;
use shootout_shards::Merged;
use std::fmt::Write;

/// The merged load and its shards in `format`.
pub fn render(m: &Merged, format: Format) -> String {
    match format {
        Format::Json => json(m),
        Format::Csv => load::render(&m.report, format),
        Format::Text => text(m),
        Format::Markdown => markdown(m),
    }
}

fn json(m: &Merged) -> String {
    let mut value = load::json_value(&m.report);
    if let Some(map) = value.as_object_mut() {
        map.insert(
            "shards".into(),
            serde_json::to_value(&m.shards).unwrap_or_default(),
        );
        map.insert("start_skew_ms".into(), m.start_skew_ms.into());
        if let Some(p) = &m.partial {
            map.insert(
                "partial_window".into(),
                serde_json::to_value(p).unwrap_or_default(),
            );
        }
    }
    super::pretty(&value)
}

fn text(m: &Merged) -> String {
    let mut o = load::render(&m.report, Format::Text);
    let _ = writeln!(
        o,
        "\nShards ({} merged, start skew {:.1} ms)",
        m.shards.len(),
        m.start_skew_ms
    );
    if let Some(p) = &m.partial {
        let _ = writeln!(
            o,
            "  partial window: every count over the first {} s every shard measured, {} to {}",
            p.window_s, p.from, p.until
        );
    }
    for r in &m.shards {
        let _ = writeln!(
            o,
            "  {:>5}  {:>10.2} req/s  {} sent  {} completed  from {} (+{:.1} ms, {:.1} ms late)  {}",
            r.shard.to_string(),
            r.rps,
            r.sent,
            r.completed,
            r.measured_from,
            r.start_offset_ms,
            r.late_ms,
            r.file
        );
    }
    o
}

fn markdown(m: &Merged) -> String {
    let mut o = load::render(&m.report, Format::Markdown);
    let _ = writeln!(
        o,
        "\n| shard | req/s | sent | completed | measured from | offset (ms) | file |\n|---|---:|---:|---:|---|---:|---|"
    );
    for r in &m.shards {
        let _ = writeln!(
            o,
            "| {} | {:.2} | {} | {} | {} | {:.1} | {} |",
            escape::md(&r.shard.to_string()),
            r.rps,
            r.sent,
            r.completed,
            escape::md(&r.measured_from),
            r.start_offset_ms,
            escape::md(&r.file)
        );
    }
    o
}
