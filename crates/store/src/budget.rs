//! The budget columns of a measurement (migration 5): the level's
//! `resources` and what the server's cgroup counted under them (throttling,
//! OOM kills, memory peak). Written and read by their own statements beside
//! the measurement's main row, keyed like it, so the main INSERT and SELECT
//! stay as they are.

use crate::error::Result;
use crate::model::Measurement;
use rusqlite::{params, Connection};
use std::collections::HashMap;

/// Stores `m`'s budget columns on its row (already inserted).
pub(crate) fn record(conn: &Connection, run_id: i64, m: &Measurement) -> Result<()> {
    conn.execute(
        "UPDATE measurements SET resources_cpus = ?1, resources_memory_mib = ?2,
            throttled_s = ?3, throttled_periods = ?4, oom_killed = ?5, memory_peak_mib = ?6,
            db_memory_peak_mib = ?12
         WHERE run_id = ?7 AND target = ?8 AND scenario = ?9 AND level = ?10
            AND repetition = ?11",
        params![
            m.resources_cpus,
            m.resources_memory_mib,
            m.throttled_s,
            m.throttled_periods.map(|p| p as i64),
            m.oom_killed.map(|k| k as i64),
            m.memory_peak_mib,
            run_id,
            m.target,
            m.scenario,
            m.level,
            m.repetition,
            m.db_memory_peak_mib,
        ],
    )?;
    Ok(())
}

type Key = (String, String, u32, u32);

struct Columns {
    cpus: Option<f64>,
    memory_mib: Option<f64>,
    throttled_s: Option<f64>,
    throttled_periods: Option<i64>,
    oom_killed: Option<i64>,
    memory_peak_mib: Option<f64>,
    db_memory_peak_mib: Option<f64>,
}

/// Fills the budget columns of a run's measurements read without them.
pub(crate) fn fill(conn: &Connection, run_id: i64, ms: &mut [Measurement]) -> Result<()> {
    let mut stmt = conn.prepare(
        "SELECT target, scenario, level, repetition, resources_cpus, resources_memory_mib,
            throttled_s, throttled_periods, oom_killed, memory_peak_mib, db_memory_peak_mib
         FROM measurements WHERE run_id = ?1",
    )?;
    let rows = stmt.query_map([run_id], |r| {
        let key: Key = (r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?);
        let cols = Columns {
            cpus: r.get(4)?,
            memory_mib: r.get(5)?,
            throttled_s: r.get(6)?,
            throttled_periods: r.get(7)?,
            oom_killed: r.get(8)?,
            memory_peak_mib: r.get(9)?,
            db_memory_peak_mib: r.get(10)?,
        };
        Ok((key, cols))
    })?;
    let mut by_key: HashMap<Key, Columns> = rows.collect::<rusqlite::Result<_>>()?;
    for m in ms {
        let key = (m.target.clone(), m.scenario.clone(), m.level, m.repetition);
        if let Some(c) = by_key.remove(&key) {
            m.resources_cpus = c.cpus;
            m.resources_memory_mib = c.memory_mib;
            m.throttled_s = c.throttled_s;
            m.throttled_periods = c.throttled_periods.map(|p| p.max(0) as u64);
            m.oom_killed = c.oom_killed.map(|k| k.max(0) as u64);
            m.memory_peak_mib = c.memory_peak_mib;
            m.db_memory_peak_mib = c.db_memory_peak_mib;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::tests::{measurement, new_run, TempDb};
    use crate::{Store, TargetRecord, TargetStatus};

    #[test]
    fn budget_columns_round_trip_and_default_to_none() {
        let tmp = TempDb::new("budget");
        let store = Store::open(tmp.path()).unwrap();
        let id = store.begin_run(&new_run()).unwrap();
        let mut m = measurement("go-nethttp", 0, &[100]);
        m.resources_cpus = Some(0.5);
        m.resources_memory_mib = Some(512.0);
        m.throttled_s = Some(1.25);
        m.throttled_periods = Some(37);
        m.oom_killed = Some(1);
        m.memory_peak_mib = Some(48.5);
        m.db_memory_peak_mib = Some(96.0);
        store.record_measurement(id, &m).unwrap();
        store
            .record_measurement(id, &measurement("rust-axum", 0, &[100]))
            .unwrap();
        let data = store.load_run(id).unwrap();
        let got = |t: &str| data.measurements.iter().find(|m| m.target == t).unwrap();
        let g = got("go-nethttp");
        assert_eq!(
            (g.resources_cpus, g.resources_memory_mib, g.throttled_s),
            (Some(0.5), Some(512.0), Some(1.25))
        );
        assert_eq!((g.throttled_periods, g.oom_killed), (Some(37), Some(1)));
        assert_eq!(
            (g.memory_peak_mib, g.db_memory_peak_mib),
            (Some(48.5), Some(96.0))
        );
        let r = got("rust-axum");
        assert_eq!(
            (r.resources_cpus, r.throttled_s, r.oom_killed),
            (None, None, None)
        );
    }

    #[test]
    fn a_target_failed_during_measurement_keeps_its_status() {
        let tmp = TempDb::new("budget-failed");
        let store = Store::open(tmp.path()).unwrap();
        let id = store.begin_run(&new_run()).unwrap();
        let rec = TargetRecord {
            target: "java-spring".into(),
            language: "java".into(),
            framework: "spring".into(),
            status: TargetStatus::Failed,
            reason: Some("killed: out of memory (limit 16 MiB)".into()),
            log_tail: None,
            verify: None,
            footprint_bytes: None,
            build_s: None,
            description: None,
            run_command: None,
        };
        store.record_target(id, &rec).unwrap();
        let data = store.load_run(id).unwrap();
        assert_eq!(data.targets[0].status, TargetStatus::Failed);
        assert_eq!(data.targets[0].reason, rec.reason);
    }
}
