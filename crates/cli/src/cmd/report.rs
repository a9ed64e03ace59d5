//! `shootout history`, `report` and `compare` (placeholder until reports land).
use crate::exit::Outcome;

#[derive(Debug, clap::Args)]
pub struct HistoryArgs {}
#[derive(Debug, clap::Args)]
pub struct ReportArgs {}
#[derive(Debug, clap::Args)]
pub struct CompareArgs {}

pub fn history(_: HistoryArgs) -> anyhow::Result<Outcome> {
    anyhow::bail!("`shootout history` is not available yet")
}
pub fn report(_: ReportArgs) -> anyhow::Result<Outcome> {
    anyhow::bail!("`shootout report` is not available yet")
}
pub fn compare(_: CompareArgs) -> anyhow::Result<Outcome> {
    anyhow::bail!("`shootout compare` is not available yet")
}
