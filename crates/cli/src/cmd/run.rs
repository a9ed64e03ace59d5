//! `shootout run` and `studies` (placeholder until the runner lands).
use crate::exit::Outcome;

#[derive(Debug, clap::Args)]
pub struct Args {}
#[derive(Debug, clap::Args)]
pub struct StudiesArgs {}

pub fn run(_: Args) -> anyhow::Result<Outcome> {
    anyhow::bail!("`shootout run` is not available yet")
}
pub fn studies(_: StudiesArgs) -> anyhow::Result<Outcome> {
    anyhow::bail!("`shootout studies` is not available yet")
}
