//! Loads past one machine: each shard of a load (`shootout load --shard I/N
//! --hdr-log FILE`) writes a standard HdrHistogram interval log and a JSON
//! sidecar ([`log`], [`sidecar`]); [`merge`] checks that N shards belong to
//! one load ([`check`]) and adds them into one exact report of the engine's
//! own types. The engine stays unaware of files; the CLI only calls in here.

#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod check;
pub mod clock;
pub mod log;
pub mod merge;
pub mod sidecar;
pub mod tls;

pub use check::Accept;
pub use log::{read, sidecar_path, split_stream, write, LogError, ShardLog, SEPARATOR};
pub use merge::{merge, merge_accepting, Merged, Mismatch, PartialWindow, ShardRow};
pub use sidecar::{Settings, Sidecar};
