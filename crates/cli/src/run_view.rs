//! How `shootout run` shows a run's events on stderr: an indicatif bar on a
//! terminal (target, scenario, repetition, ETA and live req/s read from the
//! engine's counters four times a second) with log lines above it, plain
//! log lines when stderr is not a terminal (CI logs, `| tee`: a line as
//! each target's build starts and ends, as verification starts and ends,
//! as the database starts and as each measurement ends), or nothing with
//! `--quiet`. A capacity search shows the level it tries and its bracket
//! on the bar, and one line with the capacity found when it ends.
//! Colour only when NO_COLOR is unset. The runner only emits events; every
//! word the user reads is written here or in [`crate::run_lines`].

use crate::run_lines::{
    built_line, capacity_line, database_line, measurement_line, prepared_line, search_line,
    warming_line,
};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use shootout_capacity::Event as SearchEvent;
use shootout_engine::Control;
use shootout_runner::event::{Event, Observer, Phase, RunStart};
use shootout_runner::schedule::{eta_seconds, format_eta};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
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

impl ProgressMode {
    /// The mode for this process: quiet if asked, a bar on a terminal.
    pub fn detect(quiet: bool) -> ProgressMode {
        if quiet {
            ProgressMode::Quiet
        } else if crate::term::stderr_is_tty() {
            ProgressMode::Bar {
                color: crate::term::color_enabled(),
            }
        } else {
            ProgressMode::Lines
        }
    }
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
    /// When verification began, to say how long it took.
    verify_started: Option<Instant>,
}

/// The stderr view of one run; an [`Observer`] of the runner.
#[derive(Debug)]
pub struct RunView {
    mode: ProgressMode,
    bar: Mutex<Option<ProgressBar>>,
    state: Arc<Mutex<State>>,
    started: Instant,
    stop: Arc<AtomicBool>,
    ticker: Mutex<Option<std::thread::JoinHandle<()>>>,
    /// The run's id once recorded (0 before), for a hard exit on Ctrl-C.
    run_id: AtomicI64,
}

impl RunView {
    pub fn new(mode: ProgressMode) -> RunView {
        RunView {
            mode,
            bar: Mutex::new(None),
            state: Arc::new(Mutex::new(State::default())),
            started: Instant::now(),
            stop: Arc::new(AtomicBool::new(false)),
            ticker: Mutex::new(None),
            run_id: AtomicI64::new(0),
        }
    }

    /// The recorded run, once there is one.
    pub fn run_id(&self) -> Option<i64> {
        Some(self.run_id.load(Ordering::SeqCst)).filter(|&id| id > 0)
    }

    /// The plan is known: start the bar (on a terminal).
    fn start(&self, measurements: u64, estimate_s: f64) {
        {
            let mut s = lock(&self.state);
            s.remaining_estimate_s = estimate_s;
            s.total = measurements;
        }
        let ProgressMode::Bar { color } = self.mode else {
            return;
        };
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
        let (b, s, st, started) = (
            bar.clone(),
            self.state.clone(),
            self.stop.clone(),
            self.started,
        );
        let ticker = std::thread::spawn(move || {
            while !st.load(Ordering::Relaxed) {
                b.set_message(tick(&s, started));
                b.tick();
                std::thread::sleep(Duration::from_millis(250));
            }
        });
        *lock(&self.bar) = Some(bar);
        *lock(&self.ticker) = Some(ticker);
    }

    /// A log line: above the bar, or on stderr (never with --quiet).
    pub fn println(&self, line: &str) {
        match (lock(&self.bar).as_ref(), self.mode) {
            (_, ProgressMode::Quiet) => {}
            (Some(bar), _) => bar.println(line),
            (None, _) => eprintln!("{line}"),
        }
    }

    /// Stops the ticker and clears the bar.
    pub fn finish(&self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = lock(&self.ticker).take() {
            let _ = t.join();
        }
        if let Some(bar) = lock(&self.bar).take() {
            bar.finish_and_clear();
        }
    }

    fn credit(&self, estimate_s: f64) {
        let mut s = lock(&self.state);
        s.done_estimate_s += estimate_s;
        s.remaining_estimate_s = (s.remaining_estimate_s - estimate_s).max(0.0);
    }

    fn begin(&self, what: String, control: Arc<Control>, estimate_s: f64) {
        let mut s = lock(&self.state);
        s.what = what;
        s.control = Some(control);
        s.current = Some((estimate_s, Instant::now()));
        s.last = None;
        s.rps = 0.0;
    }

    fn end(&self, estimate_s: f64, result: Option<&str>) {
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
        let line = format!(
            "[{done}/{total}] {what}: {} (ETA {})",
            result.unwrap_or("dropped"),
            format_eta(eta)
        );
        match (lock(&self.bar).as_ref(), self.mode) {
            (Some(bar), _) => {
                bar.inc(1);
                bar.println(line);
            }
            (None, ProgressMode::Lines) => eprintln!("{line}"),
            _ => {}
        }
    }

    /// What happens around a level: `--wait-quiet`'s first busy probe and
    /// capped wait get a line, every probe the bar's status, a disturbed
    /// level one more step; a skipped level a line with its reason.
    fn level_note(&self, e: &Event<'_>) {
        match *e {
            Event::LevelSkipped { load, reason } => {
                self.println(&format!("{load}: skipped: {reason}"));
            }
            Event::WaitingQuiet {
                load,
                waited_s,
                seen,
                first,
            } => {
                let words = disturbance_words(seen);
                if first {
                    self.println(&format!("{load}: waiting for quiet CPUs ({words})"));
                }
                self.status(format!(
                    "{load} · waiting for quiet CPUs ({waited_s:.0} s): {words}"
                ));
            }
            Event::NotQuiet { load, waited_s } => self.println(&format!(
                "warning: {load}: the CPUs were not quiet after {waited_s:.0} s; measuring anyway"
            )),
            Event::Remeasure { load, seen } => {
                self.add_one();
                self.println(&format!(
                    "{load}: disturbed ({}); measuring it once more",
                    disturbance_words(seen)
                ));
            }
            _ => {}
        }
    }

    /// One more measurement than planned (a disturbed level taken again).
    fn add_one(&self) {
        let mut s = lock(&self.state);
        s.total += 1;
        if let Some(bar) = lock(&self.bar).as_ref() {
            bar.set_length(bar.length().unwrap_or(0) + 1);
        }
    }

    fn skip(&self, measurements: u64, estimate_s: f64) {
        let mut s = lock(&self.state);
        s.remaining_estimate_s = (s.remaining_estimate_s - estimate_s).max(0.0);
        s.total = s.total.saturating_sub(measurements);
        if let Some(bar) = lock(&self.bar).as_ref() {
            bar.set_length(bar.length().unwrap_or(0).saturating_sub(measurements));
        }
    }

    /// More work than planned (`precision`'s extra starts).
    fn extend(&self, measurements: u64, estimate_s: f64) {
        let mut s = lock(&self.state);
        s.remaining_estimate_s += estimate_s;
        s.total += measurements;
        if let Some(bar) = lock(&self.bar).as_ref() {
            bar.set_length(bar.length().unwrap_or(0) + measurements);
        }
    }

    /// What the stop rules (`precision`, `resolve`) decided, and the work it adds.
    fn more_starts_note(&self, e: &Event<'_>) {
        match *e {
            Event::MoreStarts {
                repetition,
                wide,
                width,
                max,
                measurements,
                estimate_s,
            } => {
                self.extend(measurements, estimate_s);
                self.println(&format!(
                    "start {} of at most {max} for {}: wider than ±{} so far",
                    repetition + 1,
                    widths(wide),
                    pct(width)
                ));
            }
            Event::StillWide { wide, width, max } => self.println(&format!(
                "note: still wider than ±{} after {max} starts: {}; shown as wide as they are",
                pct(width),
                widths(wide)
            )),
            Event::InDoubt {
                repetition,
                pairs,
                max,
                measurements,
                estimate_s,
            } => {
                self.extend(measurements, estimate_s);
                self.println(&format!(
                    "start {} of at most {max} where the order is in doubt: {}",
                    repetition + 1,
                    doubts(pairs)
                ));
            }
            Event::StillInDoubt { pairs, max } => self.println(&format!(
                "note: still in doubt after {max} starts: {}; shown tied",
                doubts(pairs)
            )),
            _ => {}
        }
    }

    /// A capacity search starts: counted like a measurement, with no live
    /// counters (its levels say where it is).
    fn begin_search(&self, what: String, estimate_s: f64) {
        let mut s = lock(&self.state);
        s.what = what;
        s.control = None;
        s.current = Some((estimate_s, Instant::now()));
    }

    fn status(&self, what: String) {
        let mut s = lock(&self.state);
        s.what = what;
        s.control = None;
    }
}

impl Observer for RunView {
    fn event(&self, e: &Event<'_>) {
        match *e {
            Event::Placed { description } => eprintln!("{description}"),
            Event::DeadRunMarked {
                run_id,
                killed_group,
            } => {
                eprintln!(
                    "run #{run_id} was left running by a process that died; marked interrupted"
                );
                if let Some(g) = killed_group {
                    eprintln!(
                        "warning: run #{run_id} left server process group {g} alive; killed it"
                    );
                }
            }
            Event::RunStarted(r) => self.run_started(r),
            Event::Phase(p) => self.phase(p),
            Event::Built { target, build_s } => self.progress_line(&built_line(target, build_s)),
            Event::Prepared { target, outcome } => self.println(&prepared_line(target, outcome)),
            Event::Credit { estimate_s } => self.credit(estimate_s),
            Event::Skip {
                measurements,
                estimate_s,
            } => self.skip(measurements, estimate_s),
            Event::LoadStarted {
                load,
                control,
                estimate_s,
            } => self.begin(load.to_string(), control.clone(), estimate_s),
            Event::WarmingUp {
                load,
                window,
                cap,
                cv,
                ..
            } => self.status(format!("{load} · {}", warming_line(window, cap, cv))),
            Event::LoadEnded {
                estimate_s,
                measurement,
            } => self.end(estimate_s, measurement.map(measurement_line).as_deref()),
            Event::CapacityStarted { load, estimate_s } => {
                self.begin_search(load.to_string(), estimate_s);
            }
            Event::Capacity { load, event } => {
                if let SearchEvent::LevelStarting { .. } = event {
                    self.status(format!("{load} · {}", search_line(event)));
                }
            }
            Event::CapacityEnded { estimate_s, result } => {
                self.end(estimate_s, result.map(capacity_line).as_deref());
            }
            Event::StartFailed { target, reason } => {
                self.println(&format!("{target}: failed to start: {reason}"));
            }
            Event::TargetFailed { target, reason } => {
                self.println(&format!("{target}: failed: {reason}"));
            }
            Event::Leftovers { target } => self.println(&format!(
                "warning: processes of {target} survived SIGKILL to its group"
            )),
            Event::EngineRefused { reason } => {
                eprintln!("error: the load engine refused to run: {reason}");
            }
            Event::Database(d) => self.println(&database_line(d)),
            Event::WaitingQuiet { .. }
            | Event::NotQuiet { .. }
            | Event::Remeasure { .. }
            | Event::LevelSkipped { .. } => self.level_note(e),
            Event::MoreStarts { .. }
            | Event::StillWide { .. }
            | Event::InDoubt { .. }
            | Event::StillInDoubt { .. } => self.more_starts_note(e),
            Event::StillBusy { target, waited_s } => self.println(&format!(
                "warning: {target} was still busy {waited_s:.1} s after the load; the next level may include its backlog"
            )),
        }
    }
}

use shootout_report::precision::pct;

/// `rust-axum (±12%), python-django (no interval yet)`.
fn widths(wide: &[(String, f64)]) -> String {
    wide.iter()
        .map(|(t, h)| {
            if h.is_finite() {
                format!("{t} (±{})", pct(*h))
            } else {
                format!("{t} (no interval yet)")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `rust-actix / rust-axum in json (−3.1%)`, one per pair.
fn doubts(pairs: &[shootout_store::Doubt]) -> String {
    pairs
        .iter()
        .map(|d| {
            let level = if d.level > 0 {
                format!(" level {}", d.level + 1)
            } else {
                String::new()
            };
            format!(
                "{} / {} in {}{level} ({:+.1}%)",
                d.above, d.below, d.scenario, d.change_pct
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

impl RunView {
    fn run_started(&self, r: &RunStart<'_>) {
        self.run_id.store(r.run_id, Ordering::SeqCst);
        self.start(r.measurements, r.estimate_s);
        self.println(&format!(
            "run #{}: study {} ({} target(s), {} measurement(s), about {}; servers on CPUs {:?}, generator on {:?}; db {})",
            r.run_id,
            r.study,
            r.targets,
            r.measurements,
            format_eta(r.estimate_s),
            r.pinning.server_cpus,
            r.pinning.generator_cpus,
            r.db.display()
        ));
        self.println(&match r.cgroups {
            Ok(layout) => format!("server CPU time from each server's own cgroup: {layout}"),
            Err(why) => format!("server CPU time sampled from /proc: no cgroup ({why})"),
        });
        self.println(&crate::run_lines::host_state_line(&r.host_state));
        // The seed of a random order, as the reports show it (docs/statistics.md).
        self.println(&shootout_report::context::order_line(r.plan, r.plan.seed));
    }

    /// Building and verifying: the bar's status on a terminal; without
    /// one, a line as each phase starts and ends, so a log shows where
    /// the minutes before the first measurement go.
    fn phase(&self, p: Phase<'_>) {
        match p {
            Phase::Building { target } => {
                self.status(format!("building {target}"));
                self.progress_line(&format!("building {target}"));
            }
            Phase::Verifying { targets } => {
                self.status(format!("verifying {targets} target(s)"));
                lock(&self.state).verify_started = Some(Instant::now());
                if targets > 0 {
                    self.progress_line(&format!("verifying {targets} target(s)"));
                }
            }
            Phase::VerifyEnded { targets } => {
                let took = lock(&self.state)
                    .verify_started
                    .map_or(0.0, |t| t.elapsed().as_secs_f64());
                self.progress_line(&format!(
                    "verification of {targets} target(s) done in {took:.1} s"
                ));
            }
        }
    }

    /// A line shown only without a terminal: what the bar shows live.
    fn progress_line(&self, line: &str) {
        if self.mode == ProgressMode::Lines {
            eprintln!("{line}");
        }
    }
}

impl Drop for RunView {
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

/// `others 31% of the CPUs, steal 0%`.
fn disturbance_words(d: &shootout_runner::quiet::Disturbance) -> String {
    format!(
        "other processes {:.0}% of the CPUs, steal {:.0}%",
        d.others_cpu_share * 100.0,
        d.steal_share * 100.0
    )
}
