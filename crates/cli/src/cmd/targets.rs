//! `shootout targets`, `build` and `verify` (placeholder until the contestants land).
use crate::exit::Outcome;

#[derive(Debug, clap::Args)]
pub struct ListArgs {}
#[derive(Debug, clap::Args)]
pub struct BuildArgs {}
#[derive(Debug, clap::Args)]
pub struct VerifyArgs {}

pub fn list(_: ListArgs) -> anyhow::Result<Outcome> {
    anyhow::bail!("`shootout targets` is not available yet")
}
pub fn build(_: BuildArgs) -> anyhow::Result<Outcome> {
    anyhow::bail!("`shootout build` is not available yet")
}
pub fn verify(_: VerifyArgs) -> anyhow::Result<Outcome> {
    anyhow::bail!("`shootout verify` is not available yet")
}
