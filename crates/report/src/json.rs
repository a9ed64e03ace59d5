//! The JSON report (the shape promised in the runner issue, schema in
//! `docs/report.schema.json`): `run`, `targets`, `results` (one per
//! measurement) and `summary` (one per target × scenario × level, with the
//! RPS median, 95% CI and coefficient of variation). `run.database` and the
//! `db_*` result fields appear only for runs and measurements that have a
//! database, so other reports are unchanged. Version 2 adds each result's
//! budget and cgroup counters (`resources`, `throttled_s`,
//! `throttled_periods`, `oom_killed`, `memory_peak_mib`) and warm-up
//! (`warmup_s`, `steady`), the summary's `not_steady`, and the target
//! status `failed`. `run.order_seed` is the seed the run recorded (a
//! random target order's; null without one), as in every other output
//! (docs/statistics.md). Each target and each result has `provenance`:
//! the framework's and main libraries' resolved versions and the
//! runtime's (crate::provenance). A run on Kubernetes has `run.cluster`
//! (the stored `ClusterRecord` as is) and each result its `placement`,
//! the node that ran its start's server (null when not recorded); local
//! runs have neither key (crate::cluster).

use crate::group::groups;
use crate::metric::Metric;
use serde_json::{json, Value};
use shootout_store::{Measurement, RunData};

/// The schema version written into every JSON report.
pub const SCHEMA_ID: &str = "shootout-report/4";

/// Builds the JSON document of a run.
pub fn render(data: &RunData) -> Value {
    let mut v = json!({
        "schema": SCHEMA_ID,
        "run": run(data),
        "targets": data.targets.iter().map(|t| json!({
            "target": t.target,
            "language": t.language,
            "framework": t.framework,
            "status": t.status.as_str(),
            "reason": t.reason,
            "footprint_bytes": t.footprint_bytes,
            "build_s": t.build_s,
            "description": t.description,
            "run_command": t.run_command,
            "provenance": crate::provenance::json(t),
        })).collect::<Vec<_>>(),
        "results": data.measurements.iter().map(|m| {
            let mut v = result(m);
            v["provenance"] = provenance_of(data, &m.target);
            if crate::cluster::present(data) {
                v["placement"] = crate::cluster::result_json(data, m);
            }
            v
        }).collect::<Vec<_>>(),
        "summary": summary(data),
    });
    // Only runs with capacity searches have the key, so others are unchanged.
    if !data.capacity.is_empty() {
        v["capacity"] = crate::capacity::json(data);
    }
    v
}

fn run(data: &RunData) -> Value {
    let r = &data.run;
    let mut v = json!({
        "id": r.id,
        "study": r.study,
        "status": r.status.as_str(),
        "started_at": r.started_at,
        "finished_at": r.finished_at,
        "tool_version": r.tool_version,
        "git_commit": r.git_commit,
        "scale": r.scale,
        "host": {
            "cpu_model": r.host.cpu_model,
            "cores": r.host.cores,
            "mem_total_mib": r.host.mem_total_mib,
            "kernel": r.host.kernel,
            "hostname": r.host.hostname,
        },
        "pinning": {
            "server_cpus": r.pinning.server_cpus,
            "generator_cpus": r.pinning.generator_cpus,
        },
        "order_seed": r.order_seed,
    });
    if let Some(c) = &r.cluster {
        v["cluster"] = crate::cluster::json(c);
    }
    if let Some(db) = &r.database {
        v["database"] = json!({
            "version": db.version,
            "settings": db.settings,
            "cpus": db.cpus,
            "pool_size": db.pool_size,
        });
    }
    v
}

/// A result's provenance: its target's (null when the run has no record
/// of the target at all).
fn provenance_of(data: &RunData, target: &str) -> Value {
    data.targets
        .iter()
        .find(|t| t.target == target)
        .map_or(Value::Null, crate::provenance::json)
}

fn finite(v: f64) -> Value {
    if v.is_finite() {
        json!(v)
    } else {
        Value::Null
    }
}

fn result(m: &Measurement) -> Value {
    let l = &m.summary.latency_ms;
    let mut v = json!({
        "target": m.target,
        "scenario": m.scenario,
        "level": m.level,
        "level_label": m.level_label,
        "repetition": m.repetition,
        "pipeline": m.summary.pipeline,
        "rps": finite(m.summary.rps),
        "latency_ms": {
            "p50": finite(l.p50), "p90": finite(l.p90), "p99": finite(l.p99),
            "max": finite(l.max), "mean": finite(l.mean),
        },
        "errors": m.summary.errors.total(),
        "mismatches": m.summary.errors.mismatch,
        "rss_mib": {
            "idle": finite(m.rss_idle_mib), "peak": finite(m.rss_peak_mib), "after": finite(m.rss_after_mib),
        },
        "server_cpu_s": finite(m.server_cpu_s),
        "req_per_cpu_s": finite(m.req_per_cpu_s),
        "generator_bound": m.generator_bound,
        "warmup_s": m.warmup_s.map_or(Value::Null, finite),
        "steady": m.steady,
        "warmup_cv": m.warmup_cv.map_or(Value::Null, finite),
        "others_cpu_share": m.others_cpu_share.map_or(Value::Null, finite),
        "steal_share": m.steal_share.map_or(Value::Null, finite),
        "disturbed": m.disturbed,
    });
    if m.db_cpu_s.is_some() || m.db_rss_peak_mib.is_some() {
        v["db_cpu_s"] = m.db_cpu_s.map_or(Value::Null, finite);
        v["db_rss_peak_mib"] = m.db_rss_peak_mib.map_or(Value::Null, finite);
        v["req_per_total_cpu_s"] = finite(crate::metric::req_per_total_cpu_s(m));
    }
    crate::budget::json(m, &mut v);
    protocol_json(m, &mut v);
    if !m.parts.is_empty() {
        v["parts"] = serde_json::to_value(&m.parts).unwrap_or(Value::Null);
    }
    v
}

/// The protocol spoken and, over TLS, the handshake figures.
fn protocol_json(m: &Measurement, v: &mut Value) {
    let p = &m.summary.protocol;
    v["protocol"] = json!({ "http": p.http, "tls": p.tls, "client_cert": p.client_cert });
    if let Some(t) = &m.summary.tls {
        let h = &t.handshakes;
        v["handshakes"] = json!({
            "done": h.done, "resumed": h.resumed, "failed": h.failed,
            "p50_ms": finite(t.handshake_ms.p50), "p99_ms": finite(t.handshake_ms.p99),
        });
    }
}

fn summary(data: &RunData) -> Vec<Value> {
    let mut out = Vec::new();
    for g in groups(data) {
        for c in &g.columns {
            let Some(s) = c.spread(Metric::Rps) else {
                continue;
            };
            out.push(json!({
                "target": c.target,
                "scenario": g.scenario,
                "level": g.level,
                "level_label": g.level_label,
                "repetitions": s.n,
                "rps": {
                    "median": finite(s.median),
                    "ci_low": s.half_ci.map_or(Value::Null, |_| finite(s.ci_low())),
                    "ci_high": s.half_ci.map_or(Value::Null, |_| finite(s.ci_high())),
                    "cv": s.cv.map_or(Value::Null, finite),
                },
                "generator_bound": c.generator_bound(),
                "not_steady": c.not_steady(),
                "disturbed": c.disturbed(),
                "mismatches": c.mismatches(),
            }));
        }
    }
    out
}
