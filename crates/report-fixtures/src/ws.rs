//! A deterministic run shaped like the `websocket` study (issue #48), for
//! the report's words on WebSocket levels: three targets, two repetitions,
//! the closed-loop echo (messages/s), the open-loop echo at 1000 msg/s
//! with its cost per message (python-django cannot sustain it), and the
//! idle hold of 1000 connections with the server's memory per idle
//! connection (rust-actix the least, python-django the most, and
//! python-django holds only 950 of the 1000 asked). A hold's latency is
//! that of the opening handshakes, so its histogram is in the hundreds of
//! milliseconds.

use crate::{measurement, new_run, target_record, Rng};
use shootout_engine::WsSummary;
use shootout_store::parts::{Cost, Hold};
use shootout_store::{Measurement, RunStatus, Store, StoreError, TargetStatus};
use std::path::Path;

/// The study text of the run.
pub const STUDY_TEXT: &str = r#"name = "websocket"
description = "A synthetic run shaped like the websocket study."
source = "a synthetic fixture"
targets = ["go-nethttp", "rust-actix", "python-django"]
repetitions = 2
metrics = ["rps", "median_ms", "p99_ms", "errors", "rss_peak_mib", "req_per_cpu_s", "kib_per_idle_conn", "hold_cpu_ms_per_s"]

[[scenario]]
ws = "echo"
load = { mode = "closed", connections = 64, duration = "5s", message_size = 64 }

[[scenario]]
ws = "echo-open"
load = { mode = "open", rate = 1000, connections = 16, duration = "5s", message_size = 64 }

[[scenario]]
ws = "idle"
warmup = "0s"
load = { connections = 1000, hold = "10s", ping_every = "5s" }
"#;

/// (target, echo msg/s, µs of server CPU per message at 1000 msg/s, KiB
/// per idle connection, connections held of 1000).
pub const TARGETS: [(&str, f64, f64, f64, u64); 3] = [
    ("go-nethttp", 28_000.0, 106.0, 13.0, 1000),
    ("rust-actix", 22_000.0, 66.0, 2.0, 1000),
    ("python-django", 3_000.0, 350.0, 23.0, 950),
];

/// The connections a hold asks for.
pub const HOLD_CONNECTIONS: u64 = 1000;

/// The WebSocket figures of an echo, or of a hold with `held` open.
fn ws(hold: Option<u64>) -> WsSummary {
    WsSummary {
        message_size: hold.is_none().then_some(64),
        binary: false,
        hold: hold.is_some(),
        ping_every_s: hold.map(|_| 5.0),
        held_open: hold,
        pings: 0,
        pongs: 0,
    }
}

/// A measurement of `target` over WebSocket: the summary says so.
fn over_ws(mut m: Measurement, hold: Option<u64>) -> Measurement {
    m.summary.url = "ws://127.0.0.1:8080/ws".into();
    m.summary.protocol.http = "websocket".into();
    m.summary.status = [("101".to_string(), m.summary.requests.completed)].into();
    m.summary.websocket = Some(ws(hold));
    m
}

/// A hold of `target`: `held` of the 1000 connections asked kept open for
/// 10 s, each taking `kib` of the server's memory; its "requests" are the
/// upgrades, each a handshake of some hundred milliseconds under the
/// opening burst.
fn hold(target: &str, rep: u32, held: u64, kib: f64, rng: &mut Rng) -> Measurement {
    let label = "c=1000 hold 10s ws ping=5s";
    let mut m = measurement(target, "idle", 0, label, rep, held as f64 / 5.0, false, rng);
    m.summary.connections = HOLD_CONNECTIONS as usize;
    let rss_idle = m.rss_idle_mib;
    let rss_held = rss_idle + kib * held as f64 / 1024.0;
    m.rss_peak_mib = rss_held;
    m.parts.hold = Some(Hold {
        connections: held,
        seconds: 10.0,
        rss_idle_mib: rss_idle,
        rss_held_mib: rss_held,
        cpu_s: 0.1 * (1.0 + 0.02 * rng.noise()),
        kib_per_connection: Hold::kib_per(rss_idle, rss_held, held),
    });
    over_ws(m, Some(held))
}

/// One measurement of go-nethttp over WebSocket, for unit tests: its
/// echo at about 28000 msg/s, or (`hold`) its hold of 1000 connections
/// with `held` of them kept open.
pub fn sample(hold_held: Option<u64>) -> Measurement {
    let mut rng = Rng(48);
    match hold_held {
        Some(held) => hold("go-nethttp", 0, held, 13.0, &mut rng),
        None => over_ws(
            measurement(
                "go-nethttp",
                "echo",
                0,
                "c=64 5s ws 64B",
                0,
                28_000.0,
                false,
                &mut rng,
            ),
            None,
        ),
    }
}

/// Writes the websocket-shaped run into the database at `path`; its id.
pub fn write_ws_run(path: &Path) -> Result<i64, StoreError> {
    let store = Store::open(path)?;
    let mut header = new_run();
    header.study = "websocket".into();
    header.study_text = STUDY_TEXT.into();
    let id = store.begin_run(&header)?;
    let mut rng = Rng(4848);
    for (target, rate, us, kib, held) in TARGETS {
        let framework = target.split('-').nth(1).unwrap_or(target);
        store.record_target(id, &target_record(target, framework, TargetStatus::Ok))?;
        for rep in 0..2 {
            let noise = |rng: &mut Rng| 1.0 + 0.02 * rng.noise();
            let r = rate * noise(&mut rng);
            let echo = measurement(target, "echo", 0, "c=64 5s ws 64B", rep, r, false, &mut rng);
            store.record_measurement(id, &over_ws(echo, None))?;

            let carried = if held < HOLD_CONNECTIONS {
                990.0
            } else {
                1000.0
            };
            let mut open = measurement(
                target,
                "echo-open",
                0,
                "rate=1000 c=16 5s ws 64B",
                rep,
                carried,
                false,
                &mut rng,
            );
            open.summary.mode = "open".into();
            open.summary.rate = Some(1000.0);
            open.summary.connections = 16;
            let sustained = held == HOLD_CONNECTIONS;
            open.parts.cost = Some(Cost {
                offered_rps: 1000.0,
                achieved_rps: carried,
                us_per_request: us * noise(&mut rng),
                generator_share: 0.2,
                invalid: (!sustained)
                    .then(|| "requests left up to 56.4 ms late (p99 send lag)".to_string()),
                not_offered: false,
            });
            store.record_measurement(id, &over_ws(open, None))?;

            let idle = hold(target, rep, held, kib * noise(&mut rng), &mut rng);
            store.record_measurement(id, &idle)?;
        }
    }
    store.finish_run(id, RunStatus::Complete)?;
    Ok(id)
}
