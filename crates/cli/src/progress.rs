//! The live progress bar of `shootout load` on stderr: elapsed time or
//! requests against the plan, with req/s and errors from the engine's
//! lock-free counters. Drawn only on a terminal.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use shootout_engine::{Control, Plan};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Debug)]
pub struct LoadBar {
    done: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<()>,
}

impl LoadBar {
    pub fn start(plan: &Plan, control: &Arc<Control>) -> LoadBar {
        let by_count = plan.stop().duration.is_none();
        let total = match (plan.stop().requests, plan.stop().duration) {
            (Some(n), None) => n,
            (_, Some(d)) => (plan.warmup() + d).as_millis() as u64,
            (None, None) => 0,
        };
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr_with_hz(5));
        let template = if by_count {
            "{bar:30} {pos}/{len} requests  {msg}"
        } else {
            "{bar:30} {elapsed}  {msg}"
        };
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style.progress_chars("=> "));
        }
        let done = Arc::new(AtomicBool::new(false));
        let (flag, control) = (done.clone(), control.clone());
        let thread = std::thread::spawn(move || tick(bar, by_count, &flag, &control));
        LoadBar { done, thread }
    }

    pub fn finish(self) {
        self.done.store(true, Ordering::Relaxed);
        let _ = self.thread.join();
    }
}

fn tick(bar: ProgressBar, by_count: bool, done: &AtomicBool, control: &Control) {
    let start = Instant::now();
    // Rate over the last second: workers flush every 100 ms, so a shorter
    // window makes the number jump with the flush phase.
    let mut window: std::collections::VecDeque<(Instant, u64)> = std::collections::VecDeque::new();
    while !done.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(200));
        let (now, n) = (Instant::now(), control.completed());
        window.push_back((now, n));
        while window.len() > 2 && now.duration_since(window[0].0) > Duration::from_secs(1) {
            window.pop_front();
        }
        let (t0, n0) = window[0];
        let rps = (n - n0) as f64 / now.duration_since(t0).as_secs_f64().max(0.2);
        bar.set_position(if by_count {
            n
        } else {
            start.elapsed().as_millis() as u64
        });
        let phase = if control.is_measuring() {
            ""
        } else {
            "warming up  "
        };
        bar.set_message(format!(
            "{phase}{rps:.0} req/s  {} errors",
            control.errors()
        ));
    }
    bar.finish_and_clear();
}
