//! Contestants: reading `targets/<name>/target.toml` manifests, building
//! targets with stamps so unchanged ones are not rebuilt and a cache keyed
//! by content so a fresh clone restores what another built, starting and
//! stopping servers in their own process groups, and the verifier that proves
//! a running server honours `targets/SPEC.md`. The CLI and the runner are thin
//! callers of this crate.

#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod build;
pub mod build_cache;
pub mod cert_dir;
pub mod cgroup;
pub mod cpustat;
pub mod database;
pub mod http;
mod inputs;
pub mod lifeline;
pub mod listener;
pub mod manifest;
pub mod process;
pub mod protocols;
pub mod provenance;
pub mod tail;
mod tempdir;
pub mod toolchain;
pub mod verify;

pub use build::{
    build, build_from_source, build_or_rebuild, footprint_bytes, is_built, BuildError,
    BuildOutcome, CacheNote,
};
pub use build_cache::{BuildCache, CacheError};
pub use cert_dir::{CertDir, CertDirError};
pub use cgroup::{CgroupReader, Limits};
pub use database::DatabaseAccess;
pub use manifest::{
    discover, load, locate_targets_dir, Discovered, LocateError, ManifestError, Target,
};
pub use process::{
    budget_cpus, free_port, free_ports, kill_all_servers, server_cpus, Server, StartError,
    StopReport,
};
pub use protocols::{tls_env, ws_env, Protocol, Protocols, TlsFiles, Unsupported, WsPlace};
pub use toolchain::Toolchain;
pub use verify::{verify_target, Check, Column, Failure, VerifyOptions, VerifyReport};
