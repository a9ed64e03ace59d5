//! Reports made from the stored data alone: seed-shaped Markdown tables, one
//! self-contained HTML page with charts, JSON with a committed schema, CSV,
//! and `compare` with real significance tests. Everything starts from a
//! [`shootout_store::RunData`]; the statistics live in [`stats`].

pub mod context;
pub mod escape;
pub mod group;
pub mod html;
pub mod markdown;
pub mod metric;
pub mod published;
pub mod stats;

pub use context::Context;
pub use shootout_store::RunData;

/// Renders the self-contained HTML report of a run.
pub fn html(data: &RunData) -> String {
    html::render(&Context::new(data))
}

/// Renders the Markdown report of a run.
pub fn markdown(data: &RunData) -> String {
    markdown::render(&Context::new(data))
}

pub mod fixture;

use std::path::Path;

/// Opens the database and loads the run named by `spec` (`latest` or an id).
pub fn load(db: &Path, spec: &str) -> anyhow::Result<RunData> {
    let store = shootout_store::Store::open(db)?;
    let id = store.resolve(spec)?;
    Ok(store.load_run(id)?)
}
