//! The cancellation handle of a run. The caller (the CLI's Ctrl-C handler)
//! calls [`Interrupt::stop`]: the stop flag is set, the load in flight is
//! cancelled and every server this process started is SIGKILLed, so the run
//! ends within a few seconds and is marked interrupted with its finished
//! measurements kept. Signals, messages and exit codes belong to the caller.

use shootout_engine::Control;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Shared between whoever may stop the run and the run itself.
#[derive(Debug, Default)]
pub struct Interrupt {
    stopped: AtomicBool,
    control: Mutex<Option<Arc<Control>>>,
}

impl Interrupt {
    pub fn new() -> Arc<Interrupt> {
        Arc::new(Interrupt::default())
    }

    /// True once a stop was asked for.
    pub fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::SeqCst)
    }

    /// Sleeps up to `d`, waking early when a stop is asked for.
    pub fn sleep(&self, d: Duration) {
        let end = Instant::now() + d;
        while !self.is_stopped() {
            let now = Instant::now();
            if now >= end {
                break;
            }
            std::thread::sleep((end - now).min(Duration::from_millis(50)));
        }
    }

    /// Asks the run to stop: cancels the load in flight and kills every
    /// server. Safe to call from any thread, any number of times.
    pub fn stop(&self) {
        self.stopped.store(true, Ordering::SeqCst);
        if let Some(c) = lock(&self.control).as_ref() {
            c.cancel();
        }
        shootout_servers::kill_all_servers();
    }

    /// The load now running (None between loads); cancelled at once if a
    /// stop was already asked for.
    pub fn set_control(&self, control: Option<Arc<Control>>) {
        let mut slot = lock(&self.control);
        if let (Some(c), true) = (&control, self.is_stopped()) {
            c.cancel();
        }
        *slot = control;
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stop_cancels_the_load_in_flight_and_any_later_one() {
        let i = Interrupt::new();
        let running = Arc::new(Control::new());
        i.set_control(Some(running.clone()));
        assert!(!i.is_stopped());
        i.stop();
        assert!(i.is_stopped() && running.is_cancelled());
        let later = Arc::new(Control::new());
        i.set_control(Some(later.clone()));
        assert!(
            later.is_cancelled(),
            "a load started after the stop is cancelled at once"
        );
    }
}
