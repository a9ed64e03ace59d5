//! Ctrl-C handling for a run. The first SIGINT sets the stop
//! flag, cancels the load in flight and SIGKILLs every server this process
//! started, so the run ends within a few seconds and is marked interrupted
//! with its finished measurements kept. A second one kills the servers,
//! marks the run interrupted and exits at once with code 130.

use shootout_engine::Control;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

/// Shared between the signal thread and the run.
#[derive(Debug, Default)]
pub struct Interrupt {
    stopped: AtomicBool,
    signals: AtomicU32,
    control: Mutex<Option<Arc<Control>>>,
    run: Mutex<Option<(PathBuf, i64)>>,
}

impl Interrupt {
    pub fn new() -> Arc<Interrupt> {
        Arc::new(Interrupt::default())
    }

    /// True once a stop was asked for.
    pub fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::SeqCst)
    }

    /// Asks the run to stop: cancels the load in flight and kills every
    /// server. Returns how many times it has been asked.
    pub fn trigger(&self) -> u32 {
        self.stopped.store(true, Ordering::SeqCst);
        if let Some(c) = lock(&self.control).as_ref() {
            c.cancel();
        }
        shootout_servers::kill_all_servers();
        self.signals.fetch_add(1, Ordering::SeqCst) + 1
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

    /// The run to mark interrupted if the process must exit at once.
    pub fn set_run(&self, db: PathBuf, run_id: i64) {
        *lock(&self.run) = Some((db, run_id));
    }

    /// Marks the registered run interrupted (best effort, for a hard exit).
    pub fn mark_interrupted(&self) {
        if let Some((db, id)) = lock(&self.run).clone() {
            if let Ok(store) = shootout_store::Store::open(&db) {
                let _ = store.finish_run(id, shootout_store::RunStatus::Interrupted);
            }
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Installs the Ctrl-C (SIGINT) handler for this process; the handler runs
/// on ctrlc's own thread, once per signal.
pub fn install_signal_handler(interrupt: Arc<Interrupt>) -> Result<(), ctrlc::Error> {
    ctrlc::set_handler(move || {
        if interrupt.trigger() == 1 {
            eprintln!(
                "\ninterrupted: stopping, killing the servers and keeping the finished measurements (Ctrl-C again to quit at once)"
            );
        } else {
            shootout_servers::kill_all_servers();
            interrupt.mark_interrupted();
            eprintln!("\ninterrupted twice: servers killed, exiting");
            std::process::exit(130);
        }
    })
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
        assert_eq!(i.trigger(), 1);
        assert!(i.is_stopped() && running.is_cancelled());
        let later = Arc::new(Control::new());
        i.set_control(Some(later.clone()));
        assert!(
            later.is_cancelled(),
            "a load started after the stop is cancelled at once"
        );
        assert_eq!(i.trigger(), 2);
    }
}
