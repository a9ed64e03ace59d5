//! Does the server use the CPUs it is given? (SPEC.md "CPUs and workers",
//! issue 20.) A server told `SERVER_CPUS = n` must spread a CPU-bound load
//! over them: a fixed worker count, a single event loop or one process
//! where the framework's docs ask for one per CPU measures our
//! configuration, not the framework. The check saturates `POST
//! /test/bcrypt` (cost 10: tens of milliseconds of server CPU per request
//! against microseconds of the generator's, so the generator sharing the
//! cores takes almost nothing from the server) and reads the server's CPU
//! time from its cgroup, which counts every worker, forked or exited.
//! Without a cgroup the check is skipped, said in its note.

use std::net::SocketAddr;
use std::sync::{RwLock, RwLockReadGuard};
use std::time::{Duration, Instant};

use super::failure::Failure;
use super::model::{Aspect, Check, Column, CpuUse};
use super::payload::random_payload;
use crate::cpustat;
use crate::process::Server;
use shootout_engine::{Control, Endpoint, Load, Plan, RequestSpec, Stop, Workload};

/// Load before the counted window: thread pools and workers that start on
/// their first requests. (A JIT does not matter here: compiling is CPU
/// time too, and the check counts CPU, not answers; the contract checks
/// before it have already run every route.)
const WARMUP: Duration = Duration::from_secs(1);
/// The counted window: dozens of hashes of tens of milliseconds each per
/// CPU, read from a cgroup counter in nanoseconds. Every target's check
/// runs alone (below), so a run of thirteen pays thirteen of these.
const WINDOW: Duration = Duration::from_secs(2);

/// Turns on the CPUs within a process. A run verifies several targets at
/// once: a CPU check takes the lock alone, so two saturating loads never
/// take CPUs from each other; the rest of each verification (a start, the
/// contract checks, a stop) takes a shared turn ([`shared_turn`]), so a
/// check never counts another verification's work either. On two cores a
/// JVM starting beside a check took a CPU from it and cost a retry.
static TURNS: RwLock<()> = RwLock::new(());

/// A turn that any number of verifications share, never with a CPU check.
/// Drop it before [`check_cpus`] (which would wait for it forever).
pub(super) fn shared_turn() -> RwLockReadGuard<'static, ()> {
    TURNS.read().unwrap_or_else(|e| e.into_inner())
}

/// Saturates the server with bcrypt requests and checks that it keeps more
/// than [`MIN_SHARE`] of its `given` CPUs busy; returns the check and,
/// when measured, the figure.
pub(super) fn check_cpus(server: &Server, given: usize) -> (Check, Option<CpuUse>) {
    let col = Column::Cpus;
    if given < 2 {
        return (Check::skipped(col, "one CPU: nothing to spread over"), None);
    }
    match server.cgroup_counters() {
        Some(Ok(_)) => {}
        Some(Err(e)) => {
            return (
                Check::skipped(col, &format!("no cgroup counters: {e}")),
                None,
            )
        }
        None => return (Check::skipped(col, "the server has no cgroup here"), None),
    }
    let clock = || counters(server).map(|c| c.cpu);
    let (check, used) = judge(measure_cpus(server.addr(), given, &clock));
    (check.on("POST", "/test/bcrypt"), used)
}

/// The check's verdict on a measurement.
fn judge(measured: Result<Measured, Failure>) -> (Check, Option<CpuUse>) {
    let col = Column::Cpus;
    match measured {
        Ok(Measured::Quiet(u)) if u.enough() => (Check::pass(col, Aspect::Cpus), Some(u)),
        Ok(Measured::Quiet(u)) => (Check::fail(col, Aspect::Cpus, idle(&u)), Some(u)),
        Ok(Measured::Disturbed(u)) => {
            let why = format!(
                "not measured: other processes kept {:.2} of the {} CPUs busy, twice",
                u.others, u.given
            );
            (Check::skipped(col, &why), Some(u))
        }
        Err(f) => (Check::fail(col, Aspect::Cpus, f), None),
    }
}

fn idle(u: &CpuUse) -> Failure {
    Failure::IdleCpus {
        used_centi: (u.used * 100.0).round() as u32,
        given: u.given,
        others_centi: (u.others * 100.0).round() as u32,
        needed_centi: (u.needed() * 100.0).round() as u32,
    }
}

/// A measurement, or one that other processes disturbed too much to say
/// anything (a single-threaded server sharing two busy CPUs gets about as
/// much as a scaling one).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Measured {
    Quiet(CpuUse),
    Disturbed(CpuUse),
}

/// Other processes' share of the CPUs above which a measurement says
/// nothing about the server.
pub const DISTURBED_SHARE: f64 = 0.25;

/// Measures the server at `addr` with `given` CPUs, `cpu_clock` reading
/// its CPU time so far; a disturbed measurement is taken again once,
/// after a pause. One measurement at a time in a process.
pub fn measure_cpus(
    addr: SocketAddr,
    given: usize,
    cpu_clock: &dyn Fn() -> Result<Duration, Failure>,
) -> Result<Measured, Failure> {
    let _turn = TURNS.write().unwrap_or_else(|e| e.into_inner());
    let disturbed = |u: &CpuUse| u.others > DISTURBED_SHARE * u.given as f64;
    let first = measure(addr, given, cpu_clock)?;
    if !disturbed(&first) {
        return Ok(Measured::Quiet(first));
    }
    std::thread::sleep(Duration::from_secs(2));
    let second = measure(addr, given, cpu_clock)?;
    Ok(match disturbed(&second) {
        false => Measured::Quiet(second),
        true => Measured::Disturbed(second),
    })
}

/// One warm-up load, then a counted one; the server's CPU time over the
/// counted load's wall time, and everyone else's.
fn measure(
    addr: SocketAddr,
    given: usize,
    cpu_clock: &dyn Fn() -> Result<Duration, Failure>,
) -> Result<CpuUse, Failure> {
    // Two per CPU keep every CPU hashing while one answer is in flight;
    // more would only lengthen each request's queue.
    let connections = 2 * given;
    load(addr, connections, WARMUP)?;
    let cpus = shootout_engine::affinity::allowed_cpus();
    let times_before = cpustat::read(&cpus);
    let before = cpu_clock()?;
    let t0 = Instant::now();
    let completed = load(addr, connections, WINDOW)?;
    let wall = t0.elapsed().as_secs_f64();
    let used = cpu_clock()?.saturating_sub(before).as_secs_f64();
    // Stolen time is taken from the server too.
    let busy = cpustat::read(&cpus)
        .zip(times_before)
        .map(|(a, b)| a - b)
        .map(|d| d.busy + d.steal);
    if completed == 0 {
        return Err(Failure::Transport(format!(
            "no bcrypt request completed in {WINDOW:.0?} of {connections} connections"
        )));
    }
    Ok(CpuUse {
        used: used / wall,
        given,
        others: busy.map_or(0.0, |b| (b - used).max(0.0) / wall),
    })
}

fn counters(server: &Server) -> Result<shootout_cgroup::Counters, Failure> {
    match server.cgroup_counters() {
        Some(Ok(c)) => Ok(c),
        Some(Err(e)) => Err(Failure::Transport(format!(
            "reading the server's cgroup: {e}"
        ))),
        None => Err(Failure::Transport("the server's cgroup is gone".into())),
    }
}

/// A closed loop of `connections` on bcrypt for `duration`; the requests
/// it completed.
fn load(addr: SocketAddr, connections: usize, duration: Duration) -> Result<u64, Failure> {
    let engine = |e: &dyn std::fmt::Display| Failure::Transport(format!("load: {e}"));
    let url = format!("http://{addr}/test/bcrypt");
    let workload = Workload::new(
        Load::Closed { connections },
        Stop {
            requests: None,
            duration: Some(duration),
        },
    )
    .map_err(|e| engine(&e))?;
    let body = format!(r#"{{"payload":"{}"}}"#, random_payload()).into_bytes();
    let plan = Plan::builder(Endpoint::parse(&url).map_err(|e| engine(&e))?, workload)
        .request(RequestSpec {
            method: "POST".into(),
            headers: vec![("Content-Type".into(), "application/json".into())],
            body,
        })
        .timeout(Duration::from_secs(10))
        .build()
        .map_err(|e| engine(&e))?;
    let report = shootout_engine::run(&plan, &Control::new()).map_err(|e| engine(&e))?;
    Ok(report.summary.requests.completed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_need_shrinks_by_what_others_took() {
        let quiet = CpuUse {
            used: 1.35,
            given: 2,
            others: 0.05,
        };
        assert!(quiet.enough(), "{:.3}", quiet.needed());
        let one_loop = CpuUse {
            used: 0.98,
            given: 2,
            others: 0.05,
        };
        assert!(!one_loop.enough(), "a single event loop on two CPUs fails");
        let busy = CpuUse {
            used: 0.95,
            given: 2,
            others: 0.6,
        };
        assert!(busy.enough(), "0.95 of the 1.4 left is more than 65%");
    }
}
