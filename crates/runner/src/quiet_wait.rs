//! `run --wait-quiet`: before each level, wait (up to a cap) until the
//! server's and the generator's CPUs are quiet, telling the observer what
//! keeps them busy; a measurement that still comes out disturbed is
//! dropped and taken once more ([`crate::measure`] decides that, this
//! module only waits and says so).

use crate::context::SessionContext;
use crate::event::Event;
use crate::quiet::{wait_quiet, watched_cpus, Disturbance, Waited};
use shootout_store::Measurement;
use std::time::Duration;

/// Waits for quiet CPUs before the level `load`, at most `cap`.
pub(crate) fn before_level(cx: &SessionContext<'_>, load: &str, cap: Duration) -> Waited {
    let cpus = watched_cpus(&cx.pinning.server_cpus, &cx.pinning.generator_cpus);
    let stopped = || cx.interrupt.is_stopped();
    let mut first = true;
    let waited = wait_quiet(&cpus, cap, &stopped, &mut |seen, waited_s| {
        cx.observer.event(&Event::WaitingQuiet {
            load,
            waited_s,
            seen,
            first,
        });
        first = false;
    });
    if let Waited::Capped { waited_s } = waited {
        cx.observer.event(&Event::NotQuiet { load, waited_s });
    }
    waited
}

/// What made `m` disturbed, when it was.
pub(crate) fn disturbance(m: &Measurement) -> Option<Disturbance> {
    m.disturbed.then(|| Disturbance {
        others_cpu_share: m.others_cpu_share.unwrap_or(0.0),
        steal_share: m.steal_share.unwrap_or(0.0),
    })
}
