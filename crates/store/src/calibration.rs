//! A host's own noise, measured before a run (`shootout calibrate`, issue
//! #46): the latest complete run of the calibration study on the same host
//! (its name, CPU model and cores) gives the variance of ln(req/s) between
//! starts of one reference server, pooled over its cells. A run with one
//! start per cell has no such figure of its own; with a calibration its
//! throughput ranking is tested on the host's figure instead of not at all,
//! and says so. The calibration is an ordinary run in the results store,
//! with its host, so nothing new is stored beside it.

use crate::model::{Calibration, Host, Measurement, RunListing, RunStatus};
use crate::starts::start_cells;
use shootout_stats::Pooled;

/// The study `shootout calibrate` runs (`studies/calibrate.toml`).
pub const CALIBRATION_STUDY: &str = "calibrate";

impl Calibration {
    /// The calibration from a calibration run's measurements; None without
    /// a cell of two starts.
    pub fn of(run_id: i64, started_at: &str, ms: &[Measurement]) -> Option<Calibration> {
        let cells = start_cells(ms, None, crate::starts::throughput);
        let pooled = Pooled::of(cells.iter().map(|c| &c[..]))?;
        let mut targets: Vec<String> = ms.iter().map(|m| m.target.clone()).collect();
        targets.sort();
        targets.dedup();
        Some(Calibration {
            run_id,
            started_at: started_at.to_string(),
            targets,
            starts: ms
                .iter()
                .map(|m| m.repetition)
                .max()
                .map_or(0, |r| r as usize + 1),
            var_log: pooled.var,
            df: pooled.df,
        })
    }

    /// As the pooled variance a test on starts reads.
    pub fn pooled(&self) -> Pooled {
        Pooled {
            var: self.var_log,
            df: self.df,
        }
    }

    /// The standard deviation between starts, in percent (e^σ − 1).
    pub fn sd_pct(&self) -> f64 {
        self.var_log.sqrt().exp_m1() * 100.0
    }
}

/// The same machine: hostname, CPU model and core count.
fn same_host(a: &Host, b: &Host) -> bool {
    a.hostname == b.hostname && a.cpu_model == b.cpu_model && a.cores == b.cores
}

/// The calibration runs that may stand for `host`, newest first (`runs`
/// as the store lists them, newest first): complete runs of the
/// calibration study on the same machine, other than `except`.
pub(crate) fn candidates<'r>(
    runs: &'r [RunListing],
    host: &'r Host,
    except: Option<i64>,
) -> impl Iterator<Item = &'r RunListing> + 'r {
    runs.iter().filter(move |r| {
        r.study == CALIBRATION_STUDY
            && r.status == RunStatus::Complete
            && Some(r.id) != except
            && same_host(&r.host, host)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::{measurement, new_run, TempDb};
    use crate::Store;

    /// A calibration run on `host` with go-nethttp at `rps` per start.
    fn calibration_run(store: &Store, host: &str, rps: &[f64], status: RunStatus) -> i64 {
        let mut run = new_run();
        run.study = CALIBRATION_STUDY.into();
        run.host.hostname = host.into();
        let id = store.begin_run(&run).unwrap();
        for (i, r) in rps.iter().enumerate() {
            let mut m = measurement("go-nethttp", i as u32, &[1000]);
            m.summary.rps = *r;
            store.record_measurement(id, &m).unwrap();
        }
        store.finish_run(id, status).unwrap();
        id
    }

    /// The latest complete calibration of the same host, its figure by
    /// hand: ln values of 1000 and 1100 have variance
    /// (ln 1.1)²/2 = 0.0045421 over 1 df, sd e^0.067396 − 1 = 6.97%.
    #[test]
    fn the_latest_complete_calibration_of_the_same_host_is_found() {
        let tmp = TempDb::new("calibration");
        let store = Store::open(tmp.path()).unwrap();
        let host = new_run().host;
        assert_eq!(store.calibration(&host, None).unwrap(), None);
        let old = calibration_run(&store, "box", &[1000.0, 1200.0], RunStatus::Complete);
        let new = calibration_run(&store, "box", &[1000.0, 1100.0], RunStatus::Complete);
        calibration_run(&store, "box", &[1000.0, 2000.0], RunStatus::Interrupted);
        calibration_run(&store, "other-box", &[1000.0, 1010.0], RunStatus::Complete);
        let c = store.calibration(&host, None).unwrap().expect("calibrated");
        assert_eq!(
            (c.run_id, c.starts, c.targets.clone()),
            (new, 2, vec!["go-nethttp".to_string()])
        );
        assert!((c.var_log - 0.004_542_1).abs() < 1e-6, "{c:?}");
        assert!((c.df - 1.0).abs() < 1e-12);
        assert!((c.sd_pct() - 6.97).abs() < 0.01, "{}", c.sd_pct());
        // A report of the calibration run itself reads the one before.
        let c = store
            .calibration(&host, Some(new))
            .unwrap()
            .expect("the older one");
        assert_eq!(c.run_id, old);
        // Another machine has none of this one's.
        let mut elsewhere = host.clone();
        elsewhere.hostname = "third-box".into();
        assert_eq!(store.calibration(&elsewhere, None).unwrap(), None);
        // And a run's data carries its host's calibration.
        let id = store.begin_run(&new_run()).unwrap();
        let data = store.load_run(id).unwrap();
        assert_eq!(data.calibration.map(|c| c.run_id), Some(new));
    }
}
