//! Progress on stderr: an indicatif bar on a terminal (target, scenario,
//! repetition, ETA and live req/s read from the engine's counters four
//! times a second), one plain line per measurement otherwise, or nothing.
//! Colour only when NO_COLOR is unset.

use crate::schedule::{eta_seconds, format_eta};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use shootout_engine::Control;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressMode {
    /// A live bar (stderr is a terminal).
    Bar {
        color: bool,
    },
    /// One line per measurement.
    Lines,
    Quiet,
}

#[derive(Debug, Default)]
struct State {
    what: String,
    control: Option<Arc<Control>>,
    last: Option<(Instant, u64)>,
    rps: f64,
    done_estimate_s: f64,
    remaining_estimate_s: f64,
    done: u64,
    total: u64,
    /// The measurement in flight: its estimate and when it began.
    current: Option<(f64, Instant)>,
}

/// The progress display of one run.
#[derive(Debug)]
pub struct Progress {
    mode: ProgressMode,
    bar: Option<ProgressBar>,
    state: Arc<Mutex<State>>,
    started: Instant,
    stop: Arc<AtomicBool>,
    ticker: Option<std::thread::JoinHandle<()>>,
}

impl Progress {
    /// `measurements` to do, estimated at `estimate_s` seconds in all.
    pub fn new(mode: ProgressMode, measurements: u64, estimate_s: f64) -> Progress {
        let state = Arc::new(Mutex::new(State {
            remaining_estimate_s: estimate_s,
            total: measurements,
            ..State::default()
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let started = Instant::now();
        let (bar, ticker) = match mode {
            ProgressMode::Bar { color } => {
                let bar = ProgressBar::with_draw_target(
                    Some(measurements),
                    ProgressDrawTarget::stderr_with_hz(4),
                );
                let template = if color {
                    "{spinner:.cyan} [{pos}/{len}] {bar:20.cyan/blue} {msg}"
                } else {
                    "{spinner} [{pos}/{len}] {bar:20} {msg}"
                };
                if let Ok(style) = ProgressStyle::with_template(template) {
                    bar.set_style(style.progress_chars("=> "));
                }
                let (b, s, st) = (bar.clone(), state.clone(), stop.clone());
                let ticker = std::thread::spawn(move || {
                    while !st.load(Ordering::Relaxed) {
                        b.set_message(tick(&s, started));
                        b.tick();
                        std::thread::sleep(Duration::from_millis(250));
                    }
                });
                (Some(bar), Some(ticker))
            }
            _ => (None, None),
        };
        Progress {
            mode,
            bar,
            state,
            started,
            stop,
            ticker,
        }
    }

    /// Prints a line above the bar (or on stderr).
    pub fn println(&self, line: &str) {
        match (&self.bar, self.mode) {
            (_, ProgressMode::Quiet) => {}
            (Some(bar), _) => bar.println(line),
            (None, _) => eprintln!("{line}"),
        }
    }

    /// A measurement starts: what it is and the engine counters to watch.
    pub fn begin(&self, what: String, control: Arc<Control>, estimate_s: f64) {
        let mut s = lock(&self.state);
        s.what = what;
        s.control = Some(control);
        s.current = Some((estimate_s, Instant::now()));
        s.last = None;
        s.rps = 0.0;
    }

    /// A measurement ended (or was dropped), worth `estimate_s` of the plan.
    pub fn end(&self, estimate_s: f64, result: Option<&str>) {
        let (what, eta, done, total) = {
            let mut s = lock(&self.state);
            s.control = None;
            s.current = None;
            s.done += 1;
            s.done_estimate_s += estimate_s;
            s.remaining_estimate_s = (s.remaining_estimate_s - estimate_s).max(0.0);
            let eta = eta_seconds(
                self.started.elapsed().as_secs_f64(),
                s.done_estimate_s,
                s.remaining_estimate_s,
            );
            (s.what.clone(), eta, s.done, s.total)
        };
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
        let line = format!(
            "[{done}/{total}] {what}: {} (ETA {})",
            result.unwrap_or("dropped"),
            format_eta(eta)
        );
        match (&self.bar, self.mode) {
            (Some(bar), _) => bar.println(line),
            (None, ProgressMode::Lines) => eprintln!("{line}"),
            _ => {}
        }
    }

    /// Shows what happens between measurements (building, verifying).
    pub fn status(&self, what: String) {
        let mut s = lock(&self.state);
        s.what = what;
        s.control = None;
    }

    /// Credits work done outside measurements (verification, starts, stops).
    pub fn advance(&self, estimate_s: f64) {
        let mut s = lock(&self.state);
        s.done_estimate_s += estimate_s;
        s.remaining_estimate_s = (s.remaining_estimate_s - estimate_s).max(0.0);
    }

    /// Skips work that will not happen (a failed target's sessions).
    pub fn skip(&self, measurements: u64, estimate_s: f64) {
        let mut s = lock(&self.state);
        s.remaining_estimate_s = (s.remaining_estimate_s - estimate_s).max(0.0);
        s.total = s.total.saturating_sub(measurements);
        if let Some(bar) = &self.bar {
            bar.set_length(bar.length().unwrap_or(0).saturating_sub(measurements));
        }
    }

    pub fn finish(mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.ticker.take() {
            let _ = t.join();
        }
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The bar's message: what runs, live req/s and the ETA.
fn tick(state: &Mutex<State>, started: Instant) -> String {
    let mut s = lock(state);
    let now = Instant::now();
    if let Some(c) = s.control.clone() {
        let done = c.completed();
        if let Some((t, n)) = s.last {
            let dt = now.duration_since(t).as_secs_f64();
            if dt > 0.0 && c.is_measuring() {
                // Smooth a little so the number is readable.
                let inst = done.saturating_sub(n) as f64 / dt;
                s.rps = if s.rps == 0.0 {
                    inst
                } else {
                    0.5 * s.rps + 0.5 * inst
                };
            }
        }
        s.last = Some((now, done));
    }
    // Count the measurement in flight as done in proportion to its time.
    let partial = s
        .current
        .map_or(0.0, |(est, t)| t.elapsed().as_secs_f64().min(est));
    let eta = eta_seconds(
        started.elapsed().as_secs_f64(),
        s.done_estimate_s + partial,
        (s.remaining_estimate_s - partial).max(0.0),
    );
    let live = if s.control.as_ref().is_some_and(|c| c.is_measuring()) {
        format!(" · {:.0} req/s", s.rps)
    } else if s.control.is_some() {
        " · warming up".to_string()
    } else {
        String::new()
    };
    format!("{}{live} · ETA {}", s.what, format_eta(eta))
}
