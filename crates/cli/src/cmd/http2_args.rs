//! The HTTP/2 flags (`--http2`, `--streams`), one clap group shared by
//! `load` and `capacity`, and what they become: the engine's streams per
//! connection when HTTP/2 is asked for, None for HTTP/1.1.

use crate::units;

#[derive(Debug, Clone, Default, clap::Args)]
pub struct Http2Args {
    /// Speak HTTP/2: negotiated through ALPN over https://, h2c with prior knowledge over http://. A server that refuses it is an error (no fall-back to HTTP/1.1).
    #[arg(long)]
    pub http2: bool,
    /// HTTP/2: keep up to N concurrent streams on each connection (like h2load -m), within the server's SETTINGS_MAX_CONCURRENT_STREAMS (1 to 1024).
    #[arg(long, value_name = "N", default_value = "1", requires = "http2", value_parser = units::parse_count, allow_hyphen_values = true)]
    pub streams: u64,
}

impl Http2Args {
    /// The engine's setting: streams per connection over HTTP/2, or None.
    pub fn streams(&self) -> Option<usize> {
        self.http2
            .then(|| usize::try_from(self.streams).unwrap_or(usize::MAX))
    }
}
