//! Which kernel interface drives a worker's sockets (`--io`): epoll's
//! readiness, where the worker calls `send` and `recv` itself, or io_uring's
//! completions, where one `io_uring_enter` per loop turn submits the turn's
//! sends and collects its receives. Both carry the same requests, the same
//! way: only the system calls differ. io_uring carries cleartext HTTP/1.1
//! only; a TLS run asked to use it is refused when the plan is built.
//!
//! A plan that names no transport takes the default: `SHOOTOUT_IO` when it
//! is set (so a test suite can run every scenario over either), else
//! [`Io::DEFAULT`], the one measured cheaper per request
//! (`bench/cpu_per_request.py`, README). A default of io_uring falls back
//! to epoll where the kernel refuses it; see [`Io::resolve`].

use std::fmt;
use std::str::FromStr;

/// A worker's transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Io {
    Epoll,
    Uring,
}

/// The environment variable a plan's default transport is read from.
pub const IO_ENV: &str = "SHOOTOUT_IO";

impl Io {
    /// The transport measured cheaper per request on this project's
    /// machine: epoll (README, "Pipelining, system calls and threads").
    pub const DEFAULT: Io = Io::Epoll;

    pub fn name(self) -> &'static str {
        match self {
            Io::Epoll => "epoll",
            Io::Uring => "uring",
        }
    }

    /// The default for a plan that names none: `SHOOTOUT_IO`, else
    /// [`Io::DEFAULT`]. An unreadable value is ignored here (the CLI, which
    /// reads the same variable for `--io`, reports it).
    pub fn from_env() -> Io {
        std::env::var(IO_ENV)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(Io::DEFAULT)
    }

    /// The transport a run uses: `chosen` (None: the default); `epoll_only`
    /// for TLS and HTTP/2, which io_uring does not carry. A default of
    /// io_uring becomes epoll for those or where the kernel
    /// refuses io_uring, the second with a one-line note saying why; a
    /// chosen io_uring is used as asked (the plan refuses it over TLS and HTTP/2).
    pub fn resolve(chosen: Option<Io>, epoll_only: bool) -> (Io, Option<String>) {
        match chosen {
            Some(io) => (io, None),
            None if epoll_only => (Io::Epoll, None),
            None => match Io::from_env() {
                Io::Epoll => (Io::Epoll, None),
                Io::Uring => match uring_unavailable() {
                    None => (Io::Uring, None),
                    Some(why) => (Io::Epoll, Some(format!("{why}: using epoll"))),
                },
            },
        }
    }
}

impl fmt::Display for Io {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is no transport (as written).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a transport: epoll or uring")]
pub struct ParseIoError(pub String);

impl FromStr for Io {
    type Err = ParseIoError;

    fn from_str(s: &str) -> Result<Io, ParseIoError> {
        match s {
            "epoll" => Ok(Io::Epoll),
            "uring" | "io_uring" | "io-uring" => Ok(Io::Uring),
            other => Err(ParseIoError(other.to_string())),
        }
    }
}

/// Why io_uring cannot carry a run on this machine, or None when it can.
/// Sets up (and drops) a small ring, so it costs a few system calls.
pub fn uring_unavailable() -> Option<String> {
    crate::ring::unavailable()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for io in [Io::Epoll, Io::Uring] {
            assert_eq!(io.name().parse::<Io>(), Ok(io));
        }
        assert!("kqueue".parse::<Io>().is_err());
    }

    #[test]
    fn a_chosen_transport_is_kept_and_tls_defaults_to_epoll() {
        assert_eq!(Io::resolve(Some(Io::Uring), false), (Io::Uring, None));
        assert_eq!(Io::resolve(Some(Io::Epoll), false), (Io::Epoll, None));
        assert_eq!(Io::resolve(None, true), (Io::Epoll, None));
    }
}
