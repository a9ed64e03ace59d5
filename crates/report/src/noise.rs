//! What varied in a run, and why, said once: the A/A noise floor the run
//! measured (two starts of the same server are an A/A pair), the targets
//! whose throughput moved from one start to the next (a JIT's or a
//! runtime's outcome at start), and the warm-ups whose windows varied more
//! than the steady-state rule's bound, each with its cause: counting
//! (a short window at a low rate holds few requests), the server's own
//! variation, or other processes' CPU (the `disturbed` flag, whose note is
//! [`crate::group::disturbed_note`]). No sentence here blames the machine
//! unless the run saw others take its CPUs. docs/statistics.md has the
//! methods.

use crate::group::{floor, start_cells, Group};
use crate::stats::{Floor, Pooled};
use shootout_store::{throughput, Measurement, RunData};

/// Above this start-to-start variation (the pooled standard deviation of
/// ln(throughput), about a relative standard deviation) a target's starts
/// are said to differ, so its intervals are wide for that reason.
pub const STARTS_NOTED: f64 = 0.03;

/// The run's A/A floor in a sentence; None below its minimum of pairs.
/// When other processes disturbed some measurements, it says how many and
/// what the floor is without them, so the cause named is the one the
/// figures show: their CPU when the floor falls without them, the servers'
/// own variation between starts when it does not.
pub fn floor_line(data: &RunData) -> Option<String> {
    let cells = start_cells(&data.measurements, None, throughput);
    let f = Floor::of(cells.iter().map(|c| &c[..]))?;
    let disturbed = data.measurements.iter().filter(|m| m.disturbed).count();
    let cause = if disturbed > 0 {
        let quiet: Vec<Measurement> = data
            .measurements
            .iter()
            .filter(|m| !m.disturbed)
            .cloned()
            .collect();
        let head = format!(
            " {disturbed} of the {} measurements were disturbed (※: other processes or the \
             hypervisor took the measured CPUs)",
            data.measurements.len()
        );
        match floor(&quiet, throughput) {
            // Half or less without them: theirs is most of it.
            Some(q) if q.pct() <= 0.5 * f.pct() => format!(
                "{head}; without their pairs the floor is {:.1}%, so much of it is their CPU, \
                 not the servers'.",
                q.pct()
            ),
            Some(q) => format!(
                "{head}; without their pairs it is {:.1}%, so they do not explain it: the \
                 servers' starts differ that much (the between-starts line says which).",
                q.pct()
            ),
            None => format!(
                "{head}, too many for a floor without them; a quieter machine measures its own."
            ),
        }
    } else {
        String::new()
    };
    let margin = crate::group::run_margin(data);
    Some(format!(
        "Noise floor (A/A): two starts of the same server differed in throughput by up to \
         {:.1}% (95th percentile of {} pairs of starts in this run). It describes the run and \
         decides nothing: each pair of contestants is held to its own start-to-start variation \
         and to the {} margin, so a noisy target never ties two quiet ones \
         (docs/statistics.md).{cause}",
        f.pct(),
        f.pairs,
        crate::precision::pct(margin.pct() / 100.0)
    ))
}

/// The targets whose throughput varied between starts by more than
/// [`STARTS_NOTED`], pooled over their cells, on measurements nobody
/// disturbed (a disturbed target's variation is said by the floor's and
/// the ※ notes, with its cause); None when none did.
pub fn starts_line(data: &RunData, targets: &[&str]) -> Option<String> {
    let parts: Vec<String> = targets
        .iter()
        .filter(|&&t| {
            !data
                .measurements
                .iter()
                .any(|m| m.target == t && m.disturbed)
        })
        .filter_map(|&t| {
            let cells = start_cells(&data.measurements, Some(t), throughput);
            let p = Pooled::of(cells.iter().map(|c| &c[..]))?;
            let sd = p.var.sqrt();
            (sd > STARTS_NOTED).then(|| {
                format!(
                    "{t} {:.1}% ({} cells)",
                    sd.exp_m1() * 100.0,
                    cells.iter().filter(|c| c.len() > 1).count()
                )
            })
        })
        .collect();
    (!parts.is_empty()).then(|| {
        format!(
            "Between starts: {} (standard deviation of throughput from one start to the next, \
             pooled over the target's scenarios, on CPUs no other process took). What differs \
             between starts: a JIT's choices, memory layout, the core and caches the process \
             settled on, and on a virtual machine the physical core behind the virtual one, \
             which no counter here sees. Their intervals are wider for it; more repetitions \
             narrow them.",
            parts.join(", ")
        )
    })
}

/// Why one warm-up's last windows varied more than the rule's bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WarmupCause {
    /// No more than twice what counting the window's requests gives.
    Counting,
    /// More than counting explains, on CPUs nobody else took.
    Server,
    /// Others took the measured CPUs (the `disturbed` flag).
    Others,
}

/// The relative standard deviation counting alone gives a window that
/// holds `rps × window_s` requests (a Poisson count, 1/√N).
pub fn counting_cv(rps: f64, window_s: f64) -> Option<f64> {
    let n = rps * window_s;
    (n >= 1.0 && n.is_finite()).then(|| 1.0 / n.sqrt())
}

/// The cause of a warm-up whose last windows varied by `cv`, of a
/// measurement at `rps` (disturbed or not) with windows of `window_s`
/// seconds (None: unknown, so counting is not claimed).
pub fn warmup_cause(disturbed: bool, rps: f64, cv: f64, window_s: Option<f64>) -> WarmupCause {
    if disturbed {
        return WarmupCause::Others;
    }
    match window_s.and_then(|w| counting_cv(rps, w)) {
        Some(c) if cv <= 2.0 * c => WarmupCause::Counting,
        _ => WarmupCause::Server,
    }
}

/// At most this many cells are named for each cause of a noisy warm-up,
/// the largest first; the rest are counted (each cell's figure is the
/// `warmup_cv` column of the CSV and JSON reports).
pub const WARMUPS_NAMED: usize = 5;

/// The warm-ups whose windows varied more than the steady-state rule's
/// bound, counted by cause with the largest named; None when none did.
/// Said once for the run.
pub fn warmup_line(groups: &[Group]) -> Option<String> {
    let rule = shootout_steady::Rule::default();
    let mut counting: Vec<(f64, String)> = Vec::new();
    let mut server: Vec<(f64, String)> = Vec::new();
    for g in groups {
        for c in &g.columns {
            let worst = c
                .reps
                .iter()
                .filter_map(|m| m.warmup_cv.map(|cv| (m, cv)))
                .filter(|(_, cv)| rule.is_noisy(*cv))
                .max_by(|a, b| a.1.total_cmp(&b.1));
            let Some((m, cv)) = worst else { continue };
            let what = format!("{} {} {:.0}%", c.target, g.scenario, cv * 100.0);
            match warmup_cause(m.disturbed, throughput(m), cv, g.warmup_window_s) {
                WarmupCause::Counting => {
                    let c = g
                        .warmup_window_s
                        .and_then(|w| counting_cv(throughput(m), w))
                        .unwrap_or(f64::NAN);
                    counting.push((
                        cv,
                        format!("{what} against {:.1}% from counting", c * 100.0),
                    ));
                }
                WarmupCause::Server => server.push((cv, what)),
                // Said by the disturbed note, with the shares.
                WarmupCause::Others => {}
            }
        }
    }
    let mut parts = Vec::new();
    if !counting.is_empty() {
        parts.push(format!(
            "in {} within twice what counting the requests of one window gives at that rate ({}) — \
             the window is short for the rate, not the server unsteady",
            cells(counting.len()),
            largest(counting)
        ));
    }
    if !server.is_empty() {
        parts.push(format!(
            "in {} by more than counting explains, on CPUs no other process took ({}) — the server's \
             own variation on its CPU from window to window (pauses, batching, or on a virtual \
             machine the physical core behind the virtual one, which no counter here sees)",
            cells(server.len()),
            largest(server)
        ));
    }
    (!parts.is_empty()).then(|| {
        format!(
            "Warm-up windows varied over the steady-state rule's {:.0}% (docs/steady-state.md; \
             each cell's figure is the warmup_cv column of the CSV and JSON reports): {}.",
            rule.max_cv * 100.0,
            parts.join("; ")
        )
    })
}

/// "1 cell", "9 cells".
fn cells(n: usize) -> String {
    if n == 1 {
        "1 cell".to_string()
    } else {
        format!("{n} cells")
    }
}

/// The [`WARMUPS_NAMED`] largest, then how many more.
fn largest(mut v: Vec<(f64, String)>) -> String {
    v.sort_by(|a, b| b.0.total_cmp(&a.0));
    let more = v.len().saturating_sub(WARMUPS_NAMED);
    let named: Vec<String> = v.into_iter().take(WARMUPS_NAMED).map(|(_, t)| t).collect();
    let head = if more > 0 { "largest " } else { "" };
    let tail = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    format!("{head}{}{tail}", named.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counting_noise_is_one_over_root_n() {
        let c = counting_cv(6000.0, 0.25).expect("cv");
        assert!((c - 1.0 / 1500f64.sqrt()).abs() < 1e-12);
        assert!(counting_cv(0.0, 0.25).is_none());
    }

    #[test]
    fn the_largest_are_named_and_the_rest_counted() {
        let v = |n: usize| -> Vec<(f64, String)> {
            (0..n).map(|i| (i as f64, format!("c{i}"))).collect()
        };
        assert_eq!(largest(v(2)), "c1, c0");
        assert_eq!(largest(v(7)), "largest c6, c5, c4, c3, c2 and 2 more");
        assert_eq!((cells(1), cells(9)), ("1 cell".into(), "9 cells".into()));
    }

    #[test]
    fn each_cause_is_named_from_its_figures() {
        // 400 req/s in 250 ms windows: 100 requests, 10% by counting alone.
        assert_eq!(
            warmup_cause(false, 400.0, 0.06, Some(0.25)),
            WarmupCause::Counting
        );
        assert_eq!(
            warmup_cause(false, 400.0, 0.25, Some(0.25)),
            WarmupCause::Server
        );
        // 12,000 req/s: 3,000 requests, 1.8%; 12% is the server's.
        assert_eq!(
            warmup_cause(false, 12e3, 0.12, Some(0.25)),
            WarmupCause::Server
        );
        assert_eq!(
            warmup_cause(true, 400.0, 0.06, Some(0.25)),
            WarmupCause::Others
        );
        assert_eq!(warmup_cause(false, 400.0, 0.06, None), WarmupCause::Server);
    }
}
