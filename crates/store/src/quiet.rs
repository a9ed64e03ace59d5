//! The quiet columns of a measurement (migration 7): the share of the
//! measured CPUs' time that other processes used and that the hypervisor
//! stole, and whether that disturbed the measurement. Written and read by
//! their own statements beside the measurement's main row, keyed like it,
//! as the budget columns are.

use crate::error::Result;
use crate::model::Measurement;
use rusqlite::{params, Connection};
use std::collections::HashMap;

/// Stores `m`'s quiet columns on its row (already inserted).
pub(crate) fn record(conn: &Connection, run_id: i64, m: &Measurement) -> Result<()> {
    conn.execute(
        "UPDATE measurements SET others_cpu_share = ?1, steal_share = ?2, disturbed = ?3
         WHERE run_id = ?4 AND target = ?5 AND scenario = ?6 AND level = ?7
            AND repetition = ?8",
        params![
            m.others_cpu_share,
            m.steal_share,
            m.disturbed,
            run_id,
            m.target,
            m.scenario,
            m.level,
            m.repetition,
        ],
    )?;
    Ok(())
}

type Key = (String, String, u32, u32);
type Columns = (Option<f64>, Option<f64>, bool);

/// Fills the quiet columns of a run's measurements read without them.
pub(crate) fn fill(conn: &Connection, run_id: i64, ms: &mut [Measurement]) -> Result<()> {
    let mut stmt = conn.prepare(
        "SELECT target, scenario, level, repetition, others_cpu_share, steal_share, disturbed
         FROM measurements WHERE run_id = ?1",
    )?;
    let rows = stmt.query_map([run_id], |r| {
        let key: Key = (r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?);
        let cols: Columns = (r.get(4)?, r.get(5)?, r.get(6)?);
        Ok((key, cols))
    })?;
    let mut by_key: HashMap<Key, Columns> = rows.collect::<rusqlite::Result<_>>()?;
    for m in ms {
        let key = (m.target.clone(), m.scenario.clone(), m.level, m.repetition);
        if let Some((others, steal, disturbed)) = by_key.remove(&key) {
            m.others_cpu_share = others;
            m.steal_share = steal;
            m.disturbed = disturbed;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::tests::{measurement, new_run, TempDb};
    use crate::Store;

    #[test]
    fn quiet_columns_round_trip_and_default_to_quiet() {
        let tmp = TempDb::new("quiet");
        let store = Store::open(tmp.path()).unwrap();
        let id = store.begin_run(&new_run()).unwrap();
        let mut m = measurement("go-nethttp", 0, &[100]);
        m.others_cpu_share = Some(0.31);
        m.steal_share = Some(0.02);
        m.disturbed = true;
        store.record_measurement(id, &m).unwrap();
        store
            .record_measurement(id, &measurement("rust-axum", 0, &[100]))
            .unwrap();
        let data = store.load_run(id).unwrap();
        let got = |t: &str| data.measurements.iter().find(|m| m.target == t).unwrap();
        let g = got("go-nethttp");
        assert_eq!(
            (g.others_cpu_share, g.steal_share, g.disturbed),
            (Some(0.31), Some(0.02), true)
        );
        let r = got("rust-axum");
        assert_eq!(
            (r.others_cpu_share, r.steal_share, r.disturbed),
            (None, None, false)
        );
    }
}
