//! The contract between shootout and the servers it measures, with nothing
//! heavy behind it: the routes of `targets/SPEC.md` and the answers a correct
//! server gives ([`spec`]), what a load checks on every response of a route
//! ([`expect`]), and errors in TOML files that name the file, key and line
//! ([`located`]), shared by target manifests and study files. The verifier
//! and the process code (`shootout-servers`), the study parser and the
//! reports all read it, so a study or a report never compiles the PostgreSQL
//! client, bcrypt or process management.
//!
//! Its dependencies are serde, serde_json, thiserror and `shootout-engine`.
//! The engine is here for one thing: [`expect`] builds the engine's
//! [`shootout_engine::Expect`] straight from the route table, beside the
//! private pieces of the answers (payload framing, greeting) it is derived
//! from, so the table and its expectation cannot drift apart. The engine is
//! itself a leaf (httparse, hdrhistogram, libc, socket2, serde) that every
//! user of the contract already depends on, so it costs them nothing; keeping
//! the conversion in the runner instead would have exported those pieces and
//! split one definition over two crates.

#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod expect;
pub mod located;
pub mod protocol;
pub mod spec;
