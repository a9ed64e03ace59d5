//! Is a measurement the contestant's? Before and after every level the
//! runner asks whether the server is alive, runnable and the one holding
//! its port, and after it whether it answered at all; otherwise the level
//! is failed with a reason ("server exited during the level: signal 9
//! (SIGKILL)", "no response for the last 3 s of the level", "port 40123 is
//! held by pid 812 (python3), not by the server") instead of becoming a
//! number. The checks ask the contestant (`place::Contestant`:
//! a local one reads `/proc`); the session turns a reason into a failed
//! target.

use crate::place::{Contestant, Liveness};
use shootout_engine::{Second, Summary};
use shootout_servers::listener::ListenerError;

/// Seconds at the end of a level without a completion that fail it.
pub const SILENT_TAIL_S: usize = 3;

/// Why a level is not the contestant's; its sentence is the failed
/// level's recorded reason.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Lost {
    /// Another process holds the port, or the server's is not seen.
    #[error(transparent)]
    Port(ListenerError),
    #[error("server exited {when}: {how}")]
    Exited { when: String, how: String },
    #[error("server exited {when}: no process of it is left")]
    NoProcessLeft { when: String },
    #[error(
        "server stopped {when} (SIGSTOP or a debugger): none of its {count} process(es) can run"
    )]
    Stopped { when: String, count: usize },
    #[error("server no longer listens on port {port} {when}")]
    NotListening { port: u16, when: String },
    #[error("{0}")]
    GeneratorSilent(GeneratorSilent),
    #[error("no response for {secs:.0} s: not one of {sent} requests completed")]
    NoResponse { secs: f64, sent: u64 },
    #[error("no response for the last {SILENT_TAIL_S} s of the level")]
    SilentTail,
    #[error("none of the {opened} WebSocket connections opened stayed open through the hold")]
    NoneHeld { opened: u64 },
}

/// The generator sent none of the requests due: the load machine's
/// failure, not the server's.
#[derive(Debug, thiserror::Error)]
#[error(
    "the generator sent none of the {unsent} requests due in the measured {secs:.0} s: \
     the load machine could not offer the rate (the server is not to blame)"
)]
pub(crate) struct GeneratorSilent {
    unsent: u64,
    secs: f64,
}

/// The server holds `port` alone, is alive and is not stopped. The port's
/// owner is asked first: a server that could not bind because another
/// process took the port has exited, and the impostor is the news.
pub(crate) fn check_server(server: &dyn Contestant, port: u16, when: &str) -> Result<(), Lost> {
    let owner = server.holds_port(port);
    if let Err(e @ (ListenerError::Foreign { .. } | ListenerError::Unseen { .. })) = owner {
        return Err(Lost::Port(e));
    }
    let when = when.to_string();
    match server.liveness_closely() {
        Liveness::Exited { how, .. } => return Err(Lost::Exited { when, how }),
        Liveness::Gone => return Err(Lost::NoProcessLeft { when }),
        Liveness::Frozen { count } => return Err(Lost::Stopped { when, count }),
        Liveness::Alive => {}
    }
    match owner {
        Err(ListenerError::NotListening { port }) => Err(Lost::NotListening { port, when }),
        // Ours, or /proc unreadable: then nothing is claimed either way.
        _ => Ok(()),
    }
}

/// Why a load is the generator's failure, not the server's: it sent none
/// of the requests due, and no connection was refused or failed (a
/// refused connection is the server's news, not the generator's). The one
/// rule the guard and the cost probe read.
pub(crate) fn generator_silent(s: &Summary) -> Option<GeneratorSilent> {
    let unsent = s.lag.as_ref().map_or(0, |l| l.unsent);
    (s.requests.sent == 0 && unsent > 0 && s.errors.total() == 0).then_some(GeneratorSilent {
        unsent,
        secs: s.duration_s,
    })
}

/// The load answered: some completion, and some in its last seconds (a
/// WebSocket hold: some connection still open at its end).
pub(crate) fn check_answered(s: &Summary, timeline: &[Second]) -> Result<(), Lost> {
    if let Some(why) = generator_silent(s) {
        return Err(Lost::GeneratorSilent(why));
    }
    if s.requests.completed == 0 {
        return Err(Lost::NoResponse {
            secs: s.duration_s,
            sent: s.requests.sent,
        });
    }
    // A WebSocket hold sends nothing after its upgrades: its silence is
    // the load, and whether the server kept up is what it still held.
    if let Some(ws) = s.websocket.as_ref().filter(|w| w.hold) {
        return match ws.held_open {
            Some(0) => Err(Lost::NoneHeld {
                opened: s.requests.completed,
            }),
            _ => Ok(()),
        };
    }
    let tail = timeline;
    if tail.len() > SILENT_TAIL_S
        && tail[tail.len() - SILENT_TAIL_S..]
            .iter()
            .all(|sec| sec.completed == 0)
    {
        return Err(Lost::SilentTail);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;
    use std::time::Duration;

    /// A level in which nothing completed blames the server only when
    /// requests went out; when none did, the generator is named.
    #[test]
    fn silence_is_blamed_on_who_was_silent() {
        let mut s = shootout_testkit::summary::summary(10_000.0);
        s.requests.completed = 0;
        s.requests.sent = 120;
        let e = check_answered(&s, &[]).unwrap_err().to_string();
        assert!(e.starts_with("no response for"), "{e}");
        s.requests.sent = 0;
        s.lag = Some(shootout_engine::LagSummary {
            unsent: 10_147,
            ..Default::default()
        });
        let e = check_answered(&s, &[]).unwrap_err().to_string();
        assert!(
            e.contains("the generator sent none of the 10147 requests due"),
            "{e}"
        );
        assert!(e.contains("the server is not to blame"), "{e}");
        // Nothing sent because connections were refused: the server's.
        s.errors.connect = 64;
        let e = check_answered(&s, &[]).unwrap_err().to_string();
        assert!(e.starts_with("no response for"), "{e}");
    }

    /// A hold is silent after its upgrades: a silent tail fails an echo,
    /// not a hold, which fails when none of its connections stayed open.
    #[test]
    fn a_hold_is_answered_by_the_connections_it_kept() {
        let mut s = shootout_testkit::summary::summary(10_000.0);
        let quiet = |t| Second {
            t,
            completed: 0,
            ..Default::default()
        };
        let mut timeline: Vec<Second> = (0..10).map(quiet).collect();
        timeline[0].completed = 1000;
        let e = check_answered(&s, &timeline).unwrap_err();
        assert!(matches!(e, Lost::SilentTail), "{e}");
        s.websocket = Some(shootout_engine::WsSummary {
            hold: true,
            held_open: Some(1000),
            ..Default::default()
        });
        check_answered(&s, &timeline).expect("a hold held");
        s.websocket = Some(shootout_engine::WsSummary {
            hold: true,
            held_open: Some(0),
            ..Default::default()
        });
        let e = check_answered(&s, &timeline).unwrap_err().to_string();
        assert!(e.contains("stayed open through the hold"), "{e}");
    }

    /// A target whose server is Python's http.server on `$PORT`.
    fn http_server(dir: &std::path::Path) -> shootout_servers::Target {
        std::fs::create_dir_all(dir).expect("dir");
        std::fs::write(
            dir.join("target.toml"),
            "name = \"py-http\"\nlanguage = \"python\"\nframework = \"http.server\"\n\
             description = \"test only\"\ntoolchain = \"python3\"\nbuild = [\"true\"]\n\
             run = \"exec python3 -m http.server $PORT --bind 127.0.0.1\"\nready = \"/\"\n\
             footprint = [\"target.toml\"]\ninputs = [\"target.toml\"]\n",
        )
        .expect("manifest");
        shootout_servers::load(dir).expect("load")
    }

    fn temp(name: &str) -> std::path::PathBuf {
        std::env::temp_dir()
            .join(format!("shootout-guard-{name}-{}", std::process::id()))
            .join("py-http")
    }

    /// `target` started on `port` by the local place.
    fn start(
        target: &shootout_servers::Target,
        port: u16,
        log: &std::path::Path,
    ) -> Box<dyn Contestant> {
        use crate::place::{local::LocalPlace, Place, StartSpec};
        let spec = StartSpec {
            target,
            port,
            log,
            cpus: &[],
            env: &[],
            limits: &shootout_servers::Limits::default(),
        };
        LocalPlace.start(&spec).expect("start")
    }

    #[test]
    fn an_impostor_on_the_port_is_named_and_a_frozen_server_is_stopped() {
        let dir = temp("impostor");
        let target = http_server(&dir);
        // The impostor: this process holds the port before the server binds.
        let squatter = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = squatter.local_addr().expect("addr").port();
        let server = start(&target, port, &dir.join("squat.log"));
        // The server finds the port taken and exits: the case checked.
        shootout_testkit::wait_until(
            "the server exited, unable to bind the held port",
            Duration::from_secs(10),
            || matches!(server.liveness(), Liveness::Exited { .. }),
        );
        let why = check_server(server.as_ref(), port, "at start")
            .expect_err("not the server")
            .to_string();
        let me = std::process::id();
        assert!(
            why.starts_with(&format!("port {port} is held by pid {me} ("))
                && why.ends_with("not by the server"),
            "{why}"
        );
        drop(squatter);
        server.stop();

        let port = shootout_servers::free_port().expect("port");
        let mut server = start(&target, port, &dir.join("ok.log"));
        server.wait_ready(Duration::from_secs(20)).expect("ready");
        check_server(server.as_ref(), port, "before the level").expect("ours, running");
        // The group's leader is the server's first process (exec'd python).
        let pid = server.process_group().expect("a local process group");
        // SAFETY: stopping the server this test started.
        unsafe { libc::kill(pid, libc::SIGSTOP) };
        shootout_testkit::wait_until(
            "the server in state T (stopped) after SIGSTOP",
            Duration::from_secs(5),
            || shootout_servers::listener::state(pid as u32) == Some('T'),
        );
        let why = check_server(server.as_ref(), port, "during the level").expect_err("frozen");
        assert!(matches!(why, Lost::Stopped { count: 1.., .. }), "{why}");
        let why = why.to_string();
        assert!(why.starts_with("server stopped during the level"), "{why}");
        let stopped = server.stop();
        assert!(!stopped.leftovers, "{stopped:?}");
        let _ = std::fs::remove_dir_all(dir.parent().unwrap_or(&dir));
    }
}
