//! A scenario's mix (`mix = "mixes/service.toml"`, docs/mix.md) and its
//! arrivals (`arrival = "poisson"`, `seed = 7`): the mix file is found
//! relative to the study file's folder and read by `shootout_mix` (whose
//! own errors name the mix file, its line and its key); a path that cannot
//! be read is an error at the study's `mix` key. Each kind that has no
//! `expect_*` of its own gets what SPEC.md says its route answers, so a
//! wrong answer is a mismatch of its kind, as in a one-request level.

use crate::locator::{Locator, StudyError};
use serde::Serialize;
use shootout_contract::expect::expect_request;
use shootout_contract::spec::{Route, ScenarioName};
use shootout_engine::{Arrival, Mix};
use std::path::PathBuf;
use toml::Spanned;

/// The mix a scenario sends instead of one request.
#[derive(Debug, Clone, Serialize)]
pub struct ScenarioMix {
    /// The file as resolved (the study's folder joined with the key).
    pub file: PathBuf,
    /// The scenario's name in every output: the file's stem (`service`).
    pub shown: String,
    #[serde(skip)]
    pub mix: Mix,
}

impl PartialEq for ScenarioMix {
    /// Two scenarios send the same mix when they read the same file.
    fn eq(&self, other: &ScenarioMix) -> bool {
        self.file == other.file && self.shown == other.shown
    }
}

impl ScenarioMix {
    /// Whether any kind requests a route that needs the database.
    pub fn needs_database(&self) -> bool {
        self.routes().any(|r| r.needs_database())
    }

    /// The SPEC.md route of each kind that has one, in the mix's order.
    fn routes(&self) -> impl Iterator<Item = &'static Route> + '_ {
        self.mix.kinds().iter().filter_map(|k| {
            let path = k.path.as_str();
            let bare = path.split_once('?').map_or(path, |(p, _)| p);
            Route::find(&method_of(&k.request.method), bare)
        })
    }

    /// The route of the kind with the most weight that is on a SPEC.md
    /// route: the scenario's route for what needs one (its nominal service
    /// time for estimates).
    fn main_route(&self) -> Option<ScenarioName> {
        let mut on_routes: Vec<_> = self
            .mix
            .kinds()
            .iter()
            .filter_map(|k| {
                let path = k.path.as_str();
                let bare = path.split_once('?').map_or(path, |(p, _)| p);
                Route::find(&method_of(&k.request.method), bare).map(|r| (k.weight, r.name))
            })
            .collect();
        on_routes.sort_by_key(|(w, _)| std::cmp::Reverse(*w));
        on_routes.first().map(|(_, n)| *n)
    }
}

fn method_of(m: &str) -> String {
    match m {
        "" => "GET".to_string(),
        m => m.to_ascii_uppercase(),
    }
}

/// Reads the scenario's `mix` key; returns the mix and the route the
/// scenario stands for.
pub(crate) fn read(
    at: &Locator<'_>,
    key: &Spanned<String>,
) -> Result<(ScenarioMix, ScenarioName), StudyError> {
    let folder = at.path.parent().unwrap_or(std::path::Path::new(""));
    let file = folder.join(key.get_ref());
    let text = std::fs::read_to_string(&file)
        .map_err(|e| at.at(key, "mix", format!("cannot read {}: {e}", file.display())))?;
    let mix = shootout_mix::parse(&file, &text)?;
    let mix = with_contract_expectations(mix);
    let shown = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "mix".to_string());
    let mixed = ScenarioMix { file, shown, mix };
    let route = mixed.main_route().ok_or_else(|| {
        at.at(
            key,
            "mix",
            format!(
                "no request of {} is on a SPEC.md route: a study measures the targets' contract",
                mixed.file.display()
            ),
        )
    })?;
    Ok((mixed, route))
}

/// The mix with each kind that has no checks of its own checked as SPEC.md
/// says its route answers (a kind on no route keeps none).
fn with_contract_expectations(mix: Mix) -> Mix {
    let kinds: Vec<_> = mix
        .kinds()
        .iter()
        .cloned()
        .map(|mut k| {
            if k.expect.is_none() {
                let e = expect_request(
                    &method_of(&k.request.method),
                    k.path.as_str(),
                    &k.request.body,
                );
                k.expect = (!e.is_empty()).then_some(e);
            }
            k
        })
        .collect();
    // The same kinds, names and weights as a mix already checked.
    Mix::new(kinds).unwrap_or(mix)
}

/// `arrival = "uniform" | "poisson"`.
pub(crate) fn arrival(
    at: &Locator<'_>,
    key: &str,
    raw: &Spanned<String>,
) -> Result<Arrival, StudyError> {
    Arrival::parse(raw.get_ref()).map_err(|m| at.at(raw, key, m.to_string()))
}
