//! The mix flags (`--mix FILE`, `--arrival`, `--seed`), one clap group
//! shared by `load` and `capacity`, and what they become: the mix file
//! read and checked (docs/mix.md), and the rule that a threshold naming a
//! request kind (`db.p99<=20ms`) names one of the mix's.

use anyhow::bail;
use shootout_engine::{Arrival, Endpoint, Mix, PlanBuilder, Threshold};

#[derive(Debug, Clone, clap::Args)]
pub struct MixArgs {
    /// Send the weighted request kinds of a mix file (TOML, see docs/mix.md) instead of one request; the URL then gives only the server.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["method", "headers", "body", "body_file"])]
    pub mix: Option<std::path::PathBuf>,
    /// Open loop: how requests arrive, evenly spaced (uniform, as wrk2) or as a Poisson process (exponential gaps).
    #[arg(long, value_name = "PROCESS", default_value = "uniform", value_parser = Arrival::parse)]
    pub arrival: Arrival,
    /// Seed of the random draws (mix kinds, path ranges, Poisson gaps); the same seed repeats them [default: random, shown in the output].
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
}

impl MixArgs {
    /// The mix file of `--mix`, if given; the URL must then name only the server.
    pub fn mix(&self, endpoint: &Endpoint) -> anyhow::Result<Option<Mix>> {
        let Some(path) = &self.mix else {
            return Ok(None);
        };
        if endpoint.path != "/" {
            bail!(
                "--mix: the URL's path '{}' would be ignored: give only the server (e.g. \
                 http://127.0.0.1:8080) and the paths in the mix file",
                endpoint.path
            );
        }
        Ok(Some(shootout_mix::load(path)?))
    }

    /// `builder` with the mix, the arrival process and the seed.
    pub fn apply(&self, builder: PlanBuilder, mix: Option<Mix>) -> PlanBuilder {
        self.apply_draws(builder, mix).arrival(self.arrival)
    }

    /// `builder` with the mix and the seed, not the arrival process (a
    /// capacity search sets it on its open-loop levels only).
    pub fn apply_draws(&self, builder: PlanBuilder, mix: Option<Mix>) -> PlanBuilder {
        let builder = match self.seed {
            Some(seed) => builder.seed(seed),
            None => builder,
        };
        builder.mix(mix)
    }
}

/// Every rule of `flag` that names a request kind names one of the mix's.
pub fn check_routes(flag: &str, rules: &[Threshold], mix: Option<&Mix>) -> anyhow::Result<()> {
    for rule in rules {
        let Some(route) = rule.route() else { continue };
        let Some(mix) = mix else {
            bail!(
                "{flag} {}: names the request kind '{route}', but only a --mix has kinds",
                rule.text()
            );
        };
        if mix.position(route).is_none() {
            let names: Vec<&str> = mix.kinds().iter().map(|k| k.name.as_str()).collect();
            bail!(
                "{flag} {}: the mix has no request named '{route}' (it has {})",
                rule.text(),
                names.join(", ")
            );
        }
    }
    Ok(())
}
