//! Reports made from the stored data alone: seed-shaped Markdown tables, one
//! self-contained HTML page with charts, JSON with a committed schema, CSV,
//! and `compare` with real significance tests. Everything starts from a
//! [`shootout_store::RunData`]; the statistics live in [`stats`].

pub mod stats;
