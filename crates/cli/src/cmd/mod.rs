//! One module per group of subcommands; each turns its flags into a plan and
//! calls the library crate that owns the work.

pub mod agent;
pub mod capacity;
pub mod certs;
pub mod database;
pub mod http2_args;
pub mod load;
pub mod merge;
pub mod mix_args;
pub mod report;
pub mod run;
pub mod site;
pub mod targets;
pub mod tls_args;
pub mod ws_args;
