//! `shootout load` (placeholder until the engine lands).
use crate::exit::Outcome;

#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_: Args) -> anyhow::Result<Outcome> {
    anyhow::bail!("`shootout load` is not available yet")
}
