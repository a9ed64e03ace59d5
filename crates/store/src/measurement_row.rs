//! One row of the `measurements` table. Its columns are named once, in
//! [`COLUMNS`]; the INSERT is built from the (name, value) pairs of
//! [`insert`], whose names must be exactly those columns (a test holds them
//! to it), and the SELECT reads each field by its column's name. A
//! migration that adds a column adds it here and nowhere else in the store.

use crate::column::{bad_col, json_col};
use crate::error::Result;
use crate::model::{decode_histogram, encode_histogram, Measurement};
use hdrhistogram::Histogram;
use rusqlite::{Connection, Row, ToSql};

/// Every column of a measurement's row except its keys `id` and `run_id`.
const COLUMNS: [&str; 34] = [
    "target",
    "scenario",
    "level",
    "level_label",
    "repetition",
    "started_at",
    "summary",
    "histogram",
    "histogram_uncorrected",
    "timeline",
    "rss_idle_mib",
    "rss_peak_mib",
    "rss_after_mib",
    "pss_peak_mib",
    "server_cpu_s",
    "req_per_cpu_s",
    "generator_bound",
    "startup_s",
    "db_cpu_s",
    "db_rss_peak_mib",
    "warmup_s",
    "steady",
    "warmup_cv",
    "resources_cpus",
    "resources_memory_mib",
    "throttled_s",
    "throttled_periods",
    "oom_killed",
    "memory_peak_mib",
    "db_memory_peak_mib",
    "others_cpu_share",
    "steal_share",
    "disturbed",
    "parts",
];

/// Stores `m` as a row of run `run_id`, replacing one with the same key.
pub(crate) fn insert(conn: &Connection, run_id: i64, m: &Measurement) -> Result<()> {
    let histogram = encode_histogram(&m.histogram)?;
    let uncorrected = match &m.histogram_uncorrected {
        Some(h) => Some(encode_histogram(h)?),
        None => None,
    };
    let summary = serde_json::to_string(&m.summary)?;
    let timeline = serde_json::to_string(&m.timeline)?;
    let periods = m.throttled_periods.map(|p| p as i64);
    let oom = m.oom_killed.map(|k| k as i64);
    let parts = if m.parts.is_empty() {
        None
    } else {
        Some(serde_json::to_string(&m.parts)?)
    };
    let values: [(&str, &dyn ToSql); 34] = [
        ("target", &m.target),
        ("scenario", &m.scenario),
        ("level", &m.level),
        ("level_label", &m.level_label),
        ("repetition", &m.repetition),
        ("started_at", &m.started_at),
        ("summary", &summary),
        ("histogram", &histogram),
        ("histogram_uncorrected", &uncorrected),
        ("timeline", &timeline),
        ("rss_idle_mib", &m.rss_idle_mib),
        ("rss_peak_mib", &m.rss_peak_mib),
        ("rss_after_mib", &m.rss_after_mib),
        ("pss_peak_mib", &m.pss_peak_mib),
        ("server_cpu_s", &m.server_cpu_s),
        ("req_per_cpu_s", &m.req_per_cpu_s),
        ("generator_bound", &m.generator_bound),
        ("startup_s", &m.startup_s),
        ("db_cpu_s", &m.db_cpu_s),
        ("db_rss_peak_mib", &m.db_rss_peak_mib),
        ("warmup_s", &m.warmup_s),
        ("steady", &m.steady),
        ("warmup_cv", &m.warmup_cv),
        ("resources_cpus", &m.resources_cpus),
        ("resources_memory_mib", &m.resources_memory_mib),
        ("throttled_s", &m.throttled_s),
        ("throttled_periods", &periods),
        ("oom_killed", &oom),
        ("memory_peak_mib", &m.memory_peak_mib),
        ("db_memory_peak_mib", &m.db_memory_peak_mib),
        ("others_cpu_share", &m.others_cpu_share),
        ("steal_share", &m.steal_share),
        ("disturbed", &m.disturbed),
        ("parts", &parts),
    ];
    debug_assert!(values.iter().map(|v| v.0).eq(COLUMNS));
    let mut params: Vec<(&str, &dyn ToSql)> = vec![(":run_id", &run_id)];
    let names: Vec<String> = COLUMNS.iter().map(|c| format!(":{c}")).collect();
    params.extend(names.iter().zip(values).map(|(n, (_, v))| (n.as_str(), v)));
    let sql = format!(
        "INSERT OR REPLACE INTO measurements (run_id, {}) VALUES (:run_id, {})",
        COLUMNS.join(", "),
        names.join(", ")
    );
    conn.execute(&sql, params.as_slice())?;
    Ok(())
}

/// The columns a run's figures are read from: all but the latency
/// histograms and the timeline, the bulk of a row to read and decode.
const FIGURE_COLUMNS: [&str; 31] = {
    let mut out = [""; 31];
    let mut i = 0;
    let mut j = 0;
    while i < COLUMNS.len() {
        // Columns 7 to 9: histogram, histogram_uncorrected, timeline.
        if i < 7 || i > 9 {
            out[j] = COLUMNS[i];
            j += 1;
        }
        i += 1;
    }
    out
};

/// How much of each row [`select`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Read {
    /// Every column, the histograms and timeline decoded (`Store::load_run`).
    Full,
    /// [`FIGURE_COLUMNS`] only: each measurement's `histogram` is empty,
    /// `histogram_uncorrected` None and `timeline` empty
    /// (`Store::load_run_figures`).
    Figures,
}

impl Read {
    /// The columns this read selects.
    fn columns(self) -> &'static [&'static str] {
        match self {
            Read::Full => &COLUMNS,
            Read::Figures => &FIGURE_COLUMNS,
        }
    }
}

/// The measurements of run `run_id`, as much of each as `read` says,
/// ordered by target, scenario, level, repetition.
pub(crate) fn select(conn: &Connection, run_id: i64, read: Read) -> Result<Vec<Measurement>> {
    let sql = format!(
        "SELECT {} FROM measurements WHERE run_id = ?1
         ORDER BY target, scenario, level, repetition",
        read.columns().join(", ")
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map([run_id], |r| from_row(r, read))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// A measurement from its row, of the columns `read` selects.
fn from_row(r: &Row<'_>, read: Read) -> rusqlite::Result<Measurement> {
    let col = |name: &str| r.as_ref().column_index(name);
    let (histogram, histogram_uncorrected, timeline) = if read == Read::Full {
        let hist: Vec<u8> = r.get("histogram")?;
        let unc: Option<Vec<u8>> = r.get("histogram_uncorrected")?;
        (
            decode_histogram(&hist)
                .map_err(|e| bad_col(col("histogram").unwrap_or(0), e.to_string()))?,
            unc.map(|b| decode_histogram(&b))
                .transpose()
                .map_err(|e| bad_col(col("histogram_uncorrected").unwrap_or(0), e.to_string()))?,
            json_col(r, col("timeline")?)?,
        )
    } else {
        let empty = Histogram::new(3).map_err(|e| bad_col(0, e.to_string()))?;
        (empty, None, Vec::new())
    };
    let periods: Option<i64> = r.get("throttled_periods")?;
    let oom: Option<i64> = r.get("oom_killed")?;
    Ok(Measurement {
        target: r.get("target")?,
        scenario: r.get("scenario")?,
        level: r.get("level")?,
        level_label: r.get("level_label")?,
        repetition: r.get("repetition")?,
        started_at: r.get("started_at")?,
        summary: json_col(r, col("summary")?)?,
        histogram,
        histogram_uncorrected,
        timeline,
        rss_idle_mib: r.get("rss_idle_mib")?,
        rss_peak_mib: r.get("rss_peak_mib")?,
        rss_after_mib: r.get("rss_after_mib")?,
        pss_peak_mib: r.get("pss_peak_mib")?,
        server_cpu_s: r.get("server_cpu_s")?,
        req_per_cpu_s: r.get("req_per_cpu_s")?,
        generator_bound: r.get("generator_bound")?,
        startup_s: r.get("startup_s")?,
        db_cpu_s: r.get("db_cpu_s")?,
        db_rss_peak_mib: r.get("db_rss_peak_mib")?,
        warmup_s: r.get("warmup_s")?,
        steady: r.get("steady")?,
        warmup_cv: r.get("warmup_cv")?,
        resources_cpus: r.get("resources_cpus")?,
        resources_memory_mib: r.get("resources_memory_mib")?,
        throttled_s: r.get("throttled_s")?,
        throttled_periods: periods.map(|p| p.max(0) as u64),
        oom_killed: oom.map(|k| k.max(0) as u64),
        memory_peak_mib: r.get("memory_peak_mib")?,
        db_memory_peak_mib: r.get("db_memory_peak_mib")?,
        others_cpu_share: r.get("others_cpu_share")?,
        steal_share: r.get("steal_share")?,
        disturbed: r.get("disturbed")?,
        parts: {
            let text: Option<String> = r.get("parts")?;
            match text {
                Some(t) => serde_json::from_str(&t)
                    .map_err(|e| bad_col(col("parts").unwrap_or(0), e.to_string()))?,
                None => crate::parts::Parts::default(),
            }
        },
    })
}

#[cfg(test)]
mod tests {
    use super::{COLUMNS, FIGURE_COLUMNS};
    use crate::tests::{measurement, new_run, TempDb};
    use crate::Store;

    #[test]
    fn the_figures_are_every_column_but_the_histograms_and_timeline() {
        let heavy = ["histogram", "histogram_uncorrected", "timeline"];
        let want: Vec<&str> = COLUMNS
            .iter()
            .copied()
            .filter(|c| !heavy.contains(c))
            .collect();
        assert_eq!(FIGURE_COLUMNS.to_vec(), want);
    }

    /// `load_run_figures` (what `shootout history` lists) reads every
    /// figure `load_run` does and never the histograms: a run whose
    /// histogram no longer decodes still has its figures.
    #[test]
    fn a_runs_figures_are_its_measurements_without_histograms_or_timelines() {
        let tmp = TempDb::new("figures");
        let store = Store::open(tmp.path()).unwrap();
        let id = store.begin_run(&new_run()).unwrap();
        let mut m = measurement("go-nethttp", 0, &[100, 200]);
        m.histogram_uncorrected = Some(m.histogram.clone());
        store.record_measurement(id, &m).unwrap();
        store
            .record_measurement(id, &measurement("rust-axum", 1, &[300]))
            .unwrap();
        let mut full = store.load_run(id).unwrap();
        for m in &mut full.measurements {
            m.histogram = hdrhistogram::Histogram::new(3).unwrap();
            m.histogram_uncorrected = None;
            m.timeline.clear();
        }
        store
            .conn
            .execute("UPDATE measurements SET histogram = x'00'", [])
            .unwrap();
        assert!(store.load_run(id).is_err(), "the histograms are broken");
        let light = store.load_run_figures(id).unwrap();
        let json = |ms: &[crate::Measurement]| serde_json::to_string(ms).unwrap();
        assert_eq!(json(&light.measurements), json(&full.measurements));
        assert_eq!(light.run.id, id);
        assert_eq!(light.targets, full.targets);
        assert!(light.measurements.iter().all(|m| m.histogram.is_empty()));
    }

    /// The table the migrations make has exactly these columns, so a new
    /// migration's column cannot be left out of the row.
    #[test]
    fn the_row_names_every_column_of_the_table() {
        let tmp = TempDb::new("row-columns");
        let store = Store::open(tmp.path()).unwrap();
        let mut stmt = store
            .conn
            .prepare("SELECT name FROM pragma_table_info('measurements') ORDER BY cid")
            .unwrap();
        let got: Vec<String> = stmt
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let mut want = vec!["id".to_string(), "run_id".to_string()];
        want.extend(COLUMNS.iter().map(|c| c.to_string()));
        let (mut g, mut w) = (got.clone(), want.clone());
        g.sort();
        w.sort();
        assert_eq!(g, w, "the table's columns: {got:?}");
    }

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
