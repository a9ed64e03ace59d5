//! WebSocket scenarios and levels (targets/SPEC.md "WebSocket"). A
//! scenario written `ws = "echo"` loads the `/ws` echo, every level over
//! `protocol = "ws"`; its levels echo messages of `message_size` bytes
//! (64 when not given; text, or `binary = true`) in a closed or open loop,
//! or, with `hold = "10s"`, open `connections` and hold them idle that long
//! (pinged every `ping_every` when given), the load whose memory per idle
//! connection the runner measures. The WebSocket keys are refused on a
//! level that is not WebSocket, and the keys a hold does not use on a hold,
//! each named where it is written.

use crate::locator::KeyError;
use crate::raw::RawLoad;
use serde::Serialize;
use shootout_contract::protocol::Protocol;
use shootout_engine::{Load, Stop};
use std::time::Duration;

/// A message's size when a level gives none.
pub const DEFAULT_MESSAGE_SIZE: usize = 64;
/// The largest message a level may send: the engine's own limit (16 MiB,
/// the most `shootout load ws://` sends or receives).
pub const MAX_MESSAGE_SIZE: usize = 16 << 20;
/// The path of the WebSocket echo in targets/SPEC.md.
pub const WS_PATH: &str = "/ws";

/// What a WebSocket level sends, in the engine's terms (its `WsOptions`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct WsLevel {
    /// Bytes per message (unused by a hold).
    pub message_size: usize,
    /// Binary messages instead of text.
    pub binary: bool,
    /// Hold mode: the connections are opened, then held idle for the
    /// level's duration; no message is sent.
    pub hold: bool,
    /// Hold mode: a ping on every held connection this often.
    pub ping_every: Option<Duration>,
}

impl WsLevel {
    /// What the level's label adds after its load: ` ws 64B` (` binary`),
    /// or ` ws` for a hold (` ping=5s` when it pings).
    pub(crate) fn label_suffix(&self) -> String {
        if self.hold {
            return match self.ping_every {
                Some(p) => format!(" ws ping={}", crate::secs::format_secs(p.as_secs_f64())),
                None => " ws".to_string(),
            };
        }
        let kind = if self.binary { " binary" } else { "" };
        format!(" ws {}{kind}", bytes_label(self.message_size))
    }
}

/// `64B`, `1KiB`, `64KiB`, `16MiB`; an odd size in bytes (`1000B`).
pub fn bytes_label(bytes: usize) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{}MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{}KiB", b >> 10),
        b => format!("{b}B"),
    }
}

/// A level's WebSocket options, or the key that does not fit: the
/// WebSocket keys need `protocol = "ws"`, a message is 1 B to
/// [`MAX_MESSAGE_SIZE`], a hold sends none (no `message_size`, `binary`,
/// `pipeline`) and only a hold pings. None for another protocol.
pub(crate) fn level(l: &RawLoad, protocol: Protocol) -> Result<Option<WsLevel>, KeyError> {
    let given = [
        ("message_size", l.message_size.is_some()),
        ("binary", l.binary.is_some()),
        ("hold", l.hold.is_some()),
        ("ping_every", l.ping_every.is_some()),
    ];
    if protocol != Protocol::Ws {
        return match given.iter().find(|(_, g)| *g) {
            Some((key, _)) => Err(KeyError::new(
                *key,
                format!(
                    "is a WebSocket level's key, but this level's protocol is '{protocol}'; \
                     WebSocket levels belong to a scenario written ws = \"name\""
                ),
            )),
            None => Ok(None),
        };
    }
    let hold = l.hold.is_some();
    if hold {
        for (key, g) in [
            ("message_size", l.message_size.is_some()),
            ("binary", l.binary.is_some()),
        ] {
            if g {
                return Err(KeyError::new(
                    key,
                    "a hold sends no message: remove it, or `hold` for an echo level",
                ));
            }
        }
        if l.pipeline.is_some_and(|p| p > 1) {
            return Err(KeyError::new("pipeline", "a hold sends no message"));
        }
    } else if l.ping_every.is_some() {
        return Err(KeyError::new(
            "ping_every",
            "pings held connections: it needs `hold`",
        ));
    }
    let message_size = l.message_size.unwrap_or(DEFAULT_MESSAGE_SIZE);
    if !(1..=MAX_MESSAGE_SIZE).contains(&message_size) {
        return Err(KeyError::new(
            "message_size",
            format!("{message_size} bytes: a message is 1 B to 16 MiB ({MAX_MESSAGE_SIZE} bytes)"),
        ));
    }
    let ping_every = l.ping_every.map(|d| d.0);
    if ping_every.is_some_and(|d| d.is_zero()) {
        return Err(KeyError::new("ping_every", "must be more than 0"));
    }
    if let (Some(p), Some(h)) = (ping_every, l.hold) {
        if p > h.0 {
            return Err(KeyError::new(
                "ping_every",
                format!(
                    "a ping every {} is longer than the hold ({}): none would be sent",
                    crate::secs::format_secs(p.as_secs_f64()),
                    crate::secs::format_secs(h.0.as_secs_f64())
                ),
            ));
        }
    }
    Ok(Some(WsLevel {
        message_size,
        binary: l.binary.unwrap_or(false),
        hold,
        ping_every,
    }))
}

/// A hold's load: `connections` held for `hold`, a closed loop whose
/// connections send nothing; no `duration`, `requests`, `rate`, `stages`
/// or `mode` beside it (the hold is its duration).
pub(crate) fn hold_load(l: &RawLoad, hold: Duration) -> Result<(Load, Stop), KeyError> {
    let connections = l
        .connections
        .ok_or_else(|| KeyError::new("connections", "a hold needs `connections` to hold open"))?;
    let other = [
        ("duration", l.duration.is_some()),
        ("requests", l.requests.is_some()),
        ("rate", l.rate.is_some()),
        ("stages", l.stages.is_some()),
        ("mode", l.mode.is_some()),
    ];
    if let Some((key, _)) = other.iter().find(|(_, g)| *g) {
        return Err(KeyError::new(
            *key,
            "a hold lasts its `hold` and sends no message: remove it",
        ));
    }
    if hold.is_zero() {
        return Err(KeyError::new("hold", "must be more than 0"));
    }
    Ok((
        Load::Closed { connections },
        Stop {
            requests: None,
            duration: Some(hold),
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_labelled_in_their_largest_whole_unit() {
        assert_eq!(bytes_label(64), "64B");
        assert_eq!(bytes_label(1000), "1000B");
        assert_eq!(bytes_label(1024), "1KiB");
        assert_eq!(bytes_label(64 << 10), "64KiB");
        assert_eq!(bytes_label(MAX_MESSAGE_SIZE), "16MiB");
    }
}
