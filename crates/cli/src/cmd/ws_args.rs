//! The WebSocket flags of `shootout load` (`--message-size`, `--binary`,
//! `--hold`, `--ping-every`), one clap group, and the rules that tie them
//! to the URL: they need a `ws://` or `wss://` URL, and such a URL refuses
//! the flags that only make sense for HTTP requests (a method, headers, a
//! body, response checks, HTTP/2, a mix, io_uring, no keep-alive). Every
//! refusal names its flag and exits 2 before anything is sent.

use crate::units;
use anyhow::bail;
use std::time::Duration;

/// The message size when none is given.
pub const DEFAULT_MESSAGE_SIZE: u64 = 64;

#[derive(Debug, Clone, Default, clap::Args)]
pub struct WsArgs {
    /// WebSocket (ws:// or wss://): the bytes of each message, echoed and checked (1 B to 16 MiB; k or KiB is 1024, m or MiB 1048576) [default: 64].
    #[arg(long, value_name = "BYTES", value_parser = units::parse_size, allow_hyphen_values = true)]
    pub message_size: Option<u64>,
    /// WebSocket: send binary messages instead of text.
    #[arg(long)]
    pub binary: bool,
    /// WebSocket hold mode: open -c connections, send no message and keep them open this long (instead of -z), then report how many stayed open.
    #[arg(long, value_name = "DURATION", value_parser = units::parse_duration, allow_hyphen_values = true)]
    pub hold: Option<Duration>,
    /// WebSocket hold mode: ping every open connection this often, counting the pongs [default: no pings].
    #[arg(long, value_name = "DURATION", requires = "hold", value_parser = units::parse_duration, allow_hyphen_values = true)]
    pub ping_every: Option<Duration>,
}

/// Whether `url` asks for WebSocket (`ws://` or `wss://`).
pub fn is_websocket(url: &str) -> bool {
    let lower = url.get(..6).unwrap_or(url).to_ascii_lowercase();
    lower.starts_with("ws://") || lower.starts_with("wss://")
}

/// The flags of the load that a WebSocket load reads differently or not
/// at all, as given.
#[derive(Debug)]
pub struct Others<'a> {
    pub method: &'a str,
    pub headers: bool,
    pub body: bool,
    pub no_keepalive: bool,
    pub http2: bool,
    pub mix: bool,
    pub expect: bool,
    pub uring: bool,
    pub requests: bool,
    pub duration: bool,
    pub rate: bool,
    pub stages: bool,
    pub pipeline: u64,
}

impl WsArgs {
    /// The message size asked for, or the default.
    pub fn size(&self) -> u64 {
        self.message_size.unwrap_or(DEFAULT_MESSAGE_SIZE)
    }

    /// The engine's WebSocket options (used only with a ws:// URL).
    pub fn options(&self) -> shootout_engine::WsOptions {
        shootout_engine::WsOptions {
            message_size: usize::try_from(self.size()).unwrap_or(usize::MAX),
            binary: self.binary,
            hold: self.hold.is_some(),
            ping_every: self.ping_every,
        }
    }

    /// Checks the WebSocket flags against the URL (`websocket`: a ws:// or
    /// wss:// one) and the other flags; the error names the flag.
    pub fn check(&self, websocket: bool, o: &Others<'_>) -> anyhow::Result<()> {
        if !websocket {
            let given = [
                (self.message_size.is_some(), "--message-size"),
                (self.binary, "--binary"),
                (self.hold.is_some(), "--hold"),
            ];
            if let Some((_, flag)) = given.iter().find(|(on, _)| *on) {
                bail!("{flag} needs a ws:// or wss:// URL (a WebSocket load)");
            }
            return Ok(());
        }
        if o.http2 {
            bail!(
                "--http2: a ws:// or wss:// URL speaks WebSocket over HTTP/1.1 (its upgrade, \
                 RFC 6455); WebSocket over HTTP/2 (RFC 8441) is not supported"
            );
        }
        let http_only = [
            (!o.method.eq_ignore_ascii_case("GET"), "-m/--method"),
            (o.headers, "-H/--header"),
            (o.body, "-d/--body and --body-file"),
            (o.no_keepalive, "--no-keepalive"),
            (o.mix, "--mix"),
            (o.expect, "--expect-*"),
        ];
        if let Some((_, flag)) = http_only.iter().find(|(on, _)| *on) {
            bail!(
                "{flag} does not apply to a WebSocket load: it sends messages on connections \
                 kept open, each echo checked against its message (see --message-size, --binary)"
            );
        }
        if o.uring {
            bail!(
                "--io uring: io_uring carries cleartext HTTP/1.1 only; a WebSocket load uses epoll"
            );
        }
        let size = self.size();
        if !(1..=16 << 20).contains(&size) {
            bail!("--message-size: a message size of {size} bytes: it must be 1 B to 16 MiB");
        }
        if self.hold.is_some() {
            let moving = [
                (o.duration, "-z/--duration (--hold is how long)"),
                (o.requests, "-n/--requests"),
                (o.rate, "-q/--rate"),
                (o.stages, "--stages"),
                (o.pipeline > 1, "--pipeline"),
                (self.message_size.is_some(), "--message-size"),
                (self.binary, "--binary"),
            ];
            if let Some((_, flag)) = moving.iter().find(|(on, _)| *on) {
                bail!("--hold keeps connections idle, sending no message: {flag} does not apply");
            }
        }
        if self.ping_every.is_some_and(|d| d.is_zero()) {
            bail!("--ping-every: must be more than 0");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scheme_decides() {
        for url in ["ws://127.0.0.1/", "WSS://x", "wss://[::1]:1/ws"] {
            assert!(is_websocket(url), "{url}");
        }
        for url in ["http://127.0.0.1/", "ws:/x", "wsx://", "", "w"] {
            assert!(!is_websocket(url), "{url}");
        }
    }
}
