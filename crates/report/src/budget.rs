//! Resource budgets in reports: the values of the budget metrics
//! (throttled time, requests per CPU-second of quota and per GiB of
//! limit), each result's budget fields in the JSON, and the note under a
//! table whose targets were throttled or killed for memory.

use serde_json::{json, Value};
use shootout_store::Measurement;

/// Seconds throttled, shown where a quota was set or throttling happened
/// (an unlimited group is never throttled, so its 0 is not news); NaN
/// elsewhere, so the row appears only for budgets.
pub fn throttled_s(m: &Measurement) -> f64 {
    match m.throttled_s {
        Some(t) if m.resources_cpus.is_some() || t > 0.0 => t,
        _ => f64::NAN,
    }
}

/// Completed requests per CPU-second of quota: the rate over the quota
/// (`rps / cpus`); NaN without a quota.
pub fn req_per_quota_cpu_s(m: &Measurement) -> f64 {
    match m.resources_cpus {
        Some(c) if c > 0.0 => m.summary.rps / c,
        _ => f64::NAN,
    }
}

/// Requests per second per GiB of memory limit; NaN without a limit.
pub fn rps_per_limit_gib(m: &Measurement) -> f64 {
    match m.resources_memory_mib {
        Some(mib) if mib > 0.0 => m.summary.rps / (mib / 1024.0),
        _ => f64::NAN,
    }
}

/// Adds a result's budget and cgroup counters to its JSON object.
pub fn json(m: &Measurement, v: &mut Value) {
    let num = |x: Option<f64>| {
        x.filter(|x| x.is_finite())
            .map_or(Value::Null, |x| json!(x))
    };
    v["resources"] = json!({
        "cpus": num(m.resources_cpus),
        "memory_mib": num(m.resources_memory_mib),
    });
    v["throttled_s"] = num(m.throttled_s);
    v["throttled_periods"] = m.throttled_periods.map_or(Value::Null, |p| json!(p));
    v["oom_killed"] = m.oom_killed.map_or(Value::Null, |k| json!(k));
    v["memory_peak_mib"] = num(m.memory_peak_mib);
    if m.db_memory_peak_mib.is_some() {
        v["db_memory_peak_mib"] = num(m.db_memory_peak_mib);
    }
}

/// A note for a table with throttled or OOM-killed repetitions.
pub fn note<'a>(reps: impl Iterator<Item = &'a Measurement>) -> Option<String> {
    let (mut throttled, mut killed) = (0.0, 0u64);
    for m in reps {
        throttled += m.throttled_s.unwrap_or(0.0);
        killed += m.oom_killed.unwrap_or(0);
    }
    let mut parts = Vec::new();
    if throttled > 0.0 {
        parts.push(format!(
            "CPU quotas throttled the servers for {throttled:.2} s in all: a quota runs out \
             within each 100 ms period and the server waits for the next, which shows in the tail latency"
        ));
    }
    if killed > 0 {
        parts.push(format!(
            "the kernel's OOM killer killed {killed} server process(es) at their memory limit; \
             those targets failed"
        ));
    }
    (!parts.is_empty()).then(|| {
        let mut s = parts.join("; ");
        s[..1].make_ascii_uppercase();
        s + "."
    })
}
