//! Capacity searches of studies: one row per search (a target, scenario
//! and repetition) in `capacity_searches`, and every level it ran, the curve
//! included, in `capacity_levels`, so that a report can redraw the search
//! and the latency-vs-load curve. Written when a search ends (in one
//! transaction), read back into [`crate::RunData::capacity`].

use crate::column::{bad_col, json_col, opt_json_col};
use crate::error::Result;
use rusqlite::{params, Connection, Row};
use serde::{Deserialize, Serialize};
use shootout_capacity::{broke_first, CapacityResult, LevelRecord, LevelVerdict, Phase, Verdict};
use shootout_engine::LatencySummary;

/// One capacity search of a study run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CapacitySearch {
    pub target: String,
    pub scenario: String,
    pub repetition: u32,
    pub started_at: String,
    pub result: CapacityResult,
}

/// Which list of the result a stored level belongs to.
const LEVELS: &str = "levels";
const CURVE: &str = "curve";

/// Records a finished search and its levels in one transaction.
pub(crate) fn record(conn: &Connection, run_id: i64, s: &CapacitySearch) -> Result<()> {
    let tx = conn.unchecked_transaction()?;
    let r = &s.result;
    tx.execute(
        "DELETE FROM capacity_searches
             WHERE run_id = ?1 AND target = ?2 AND scenario = ?3 AND repetition = ?4",
        params![run_id, s.target, s.scenario, s.repetition],
    )?;
    tx.execute(
        "INSERT INTO capacity_searches (run_id, target, scenario, repetition, started_at,
                url, method, slo, capacity_rps, verdict, unstable, probe_rps, settings,
                lower_bound_rps)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
        params![
            run_id,
            s.target,
            s.scenario,
            s.repetition,
            s.started_at,
            r.url,
            r.method,
            serde_json::to_string(&r.slo)?,
            r.capacity_rps,
            enum_text(&r.verdict)?,
            r.unstable,
            r.probe_rps,
            serde_json::to_string(&r.search)?,
            r.lower_bound_rps,
        ],
    )?;
    let search = tx.last_insert_rowid();
    let lists = [(LEVELS, &r.levels), (CURVE, &r.curve)];
    for (list, levels) in lists {
        for (i, l) in levels.iter().enumerate() {
            insert_level(&tx, search, list, i, l)?;
        }
    }
    tx.commit()?;
    Ok(())
}

/// A run's capacity searches, ordered by target, scenario, repetition.
pub(crate) fn searches(conn: &Connection, run_id: i64) -> Result<Vec<CapacitySearch>> {
    let mut stmt = conn.prepare(
        "SELECT id, target, scenario, repetition, started_at, url, method, slo,
                capacity_rps, verdict, unstable, probe_rps, settings, lower_bound_rps
             FROM capacity_searches WHERE run_id = ?1
             ORDER BY target, scenario, repetition",
    )?;
    let rows = stmt.query_map([run_id], |r| {
        let id: i64 = r.get(0)?;
        let search = CapacitySearch {
            target: r.get(1)?,
            scenario: r.get(2)?,
            repetition: r.get(3)?,
            started_at: r.get(4)?,
            result: CapacityResult {
                url: r.get(5)?,
                method: r.get(6)?,
                slo: json_col(r, 7)?,
                capacity_rps: r.get(8)?,
                verdict: text_enum::<Verdict>(r, 9)?,
                unstable: r.get(10)?,
                probe_rps: r.get(11)?,
                search: json_col(r, 12)?,
                lower_bound_rps: r.get(13)?,
                levels: Vec::new(),
                curve: Vec::new(),
                broke_first: None,
            },
        };
        Ok((id, search))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (id, mut s) = row?;
        s.result.levels = levels(conn, id, LEVELS)?;
        s.result.curve = levels(conn, id, CURVE)?;
        s.result.broke_first = broke_first(&s.result.levels, s.result.capacity_rps);
        out.push(s);
    }
    Ok(out)
}

/// The levels of one stored search in `list` (levels or curve), in order.
fn levels(conn: &Connection, search: i64, list: &str) -> Result<Vec<LevelRecord>> {
    let mut stmt = conn.prepare(
        "SELECT phase, target_rps, achieved_rps, connections, lat_min_ms, lat_mean_ms,
                lat_stdev_ms, lat_p50_ms, lat_p90_ms, lat_p99_ms, lat_p999_ms, lat_max_ms,
                sent, completed, errors, error_rate, all_busy, send_lag_p99_ms,
                generator_cpu, verdict, reason, fraction, routes
             FROM capacity_levels WHERE search_id = ?1 AND list = ?2 ORDER BY idx",
    )?;
    let rows = stmt.query_map(params![search, list], level_from)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

fn insert_level(
    tx: &rusqlite::Transaction<'_>,
    search: i64,
    list: &str,
    i: usize,
    l: &LevelRecord,
) -> Result<()> {
    let lat = &l.latency_ms;
    let routes = match l.routes.is_empty() {
        true => None,
        false => Some(serde_json::to_string(&l.routes)?),
    };
    tx.execute(
        "INSERT INTO capacity_levels (search_id, list, idx, phase, target_rps, achieved_rps,
            connections, lat_min_ms, lat_mean_ms, lat_stdev_ms, lat_p50_ms, lat_p90_ms,
            lat_p99_ms, lat_p999_ms, lat_max_ms, sent, completed, errors, error_rate,
            all_busy, send_lag_p99_ms, generator_cpu, verdict, reason, fraction, routes)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
            ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26)",
        params![
            search,
            list,
            i as i64,
            enum_text(&l.phase)?,
            l.target_rps,
            l.achieved_rps,
            l.connections as i64,
            lat.min,
            lat.mean,
            lat.stdev,
            lat.p50,
            lat.p90,
            lat.p99,
            lat.p999,
            lat.max,
            l.sent as i64,
            l.completed as i64,
            serde_json::to_string(&l.errors)?,
            l.error_rate,
            l.all_busy as i64,
            l.send_lag_p99_ms,
            l.generator_cpu,
            enum_text(&l.verdict)?,
            l.reason,
            l.fraction,
            routes,
        ],
    )?;
    Ok(())
}

fn level_from(r: &Row<'_>) -> rusqlite::Result<LevelRecord> {
    let verdict = text_enum::<LevelVerdict>(r, 19)?;
    Ok(LevelRecord {
        phase: text_enum::<Phase>(r, 0)?,
        target_rps: r.get(1)?,
        achieved_rps: r.get(2)?,
        connections: r.get::<_, i64>(3)? as usize,
        latency_ms: LatencySummary {
            min: r.get(4)?,
            mean: r.get(5)?,
            stdev: r.get(6)?,
            p50: r.get(7)?,
            p90: r.get(8)?,
            p99: r.get(9)?,
            p999: r.get(10)?,
            max: r.get(11)?,
        },
        sent: r.get::<_, i64>(12)? as u64,
        completed: r.get::<_, i64>(13)? as u64,
        errors: json_col(r, 14)?,
        error_rate: r.get(15)?,
        all_busy: r.get::<_, i64>(16)? as u64,
        send_lag_p99_ms: r.get(17)?,
        generator_cpu: r.get(18)?,
        pass: verdict == LevelVerdict::Pass,
        verdict,
        reason: r.get(20)?,
        fraction: r.get(21)?,
        routes: opt_json_col(r, 22)?.unwrap_or_default(),
    })
}

/// The serde name of a unit enum (`found`, `generator-limited`), one
/// spelling for the JSON output and the database.
fn enum_text<T: Serialize>(v: &T) -> Result<String> {
    match serde_json::to_value(v)? {
        serde_json::Value::String(s) => Ok(s),
        other => Ok(other.to_string()),
    }
}

fn text_enum<T: serde::de::DeserializeOwned>(r: &Row<'_>, col: usize) -> rusqlite::Result<T> {
    let s: String = r.get(col)?;
    serde_json::from_value(serde_json::Value::String(s.clone()))
        .map_err(|_| bad_col(col, format!("'{s}'")))
}
