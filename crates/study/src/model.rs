//! What a parsed, validated study is: its targets, CPU split, scenarios and
//! published figures. Built by [`crate::parse`], read by the runner, the
//! scaler and the report; the levels and capacity searches it holds are
//! defined in [`crate::level`] and [`crate::capacity`].

use crate::capacity::Capacity;
use crate::level::Level;
use crate::metric::Metric;
use crate::mix::ScenarioMix;
use crate::raw::{Order, Restart};
use crate::resources::Resources;
use crate::warmup::Warmup;
use serde::Serialize;
use shootout_contract::protocol::Protocol;
use shootout_contract::spec::ScenarioName;
use shootout_engine::Arrival;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// Which targets a study measures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum TargetSelection {
    /// Every target in the targets directory.
    All,
    List(Vec<String>),
}

/// How cores are split between servers and the load generator.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum CpuSplit {
    /// Half and half of the CPUs this process may use (no pinning on 1 CPU).
    Auto,
    Explicit {
        server: Vec<usize>,
        generator: Vec<usize>,
    },
}

/// One `[[scenario]]`: a route of SPEC.md and its load levels.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scenario {
    /// The route; for a mix, the route of its heaviest kind on one.
    pub name: ScenarioName,
    /// The request kinds sent instead of one request (docs/mix.md).
    pub mix: Option<ScenarioMix>,
    /// A WebSocket scenario's name (`ws = "echo"`): its levels load `/ws`
    /// over `ws` (`crate::ws`); `name` is then plaintext's, unrequested.
    pub ws: Option<String>,
    /// How an open loop's requests arrive (the search's levels' for a
    /// capacity scenario).
    pub arrival: Arrival,
    /// The seed of the mix's and the arrivals' draws; None: a random one.
    pub seed: Option<u64>,
    pub method: String,
    pub path: String,
    pub body: Vec<u8>,
    /// Warm-up before every level (fixed or until steady).
    pub warmup: Warmup,
    pub timeout: Duration,
    /// Empty for a capacity search.
    pub levels: Vec<Level>,
    /// A capacity search instead of levels (`capacity = { slo = [..] }`).
    pub capacity: Option<Capacity>,
    /// Cost at fixed rates, standing and overload after its one closed-loop
    /// level (`cost = { .. }`, cost.rs).
    pub cost: Option<crate::cost::CostPlan>,
    /// The scenario's budget (the study's filled in), used by a capacity
    /// search; each level carries its own merged budget.
    pub resources: Resources,
}

impl Scenario {
    /// Whether it needs the database (SPEC.md "Database routes").
    pub fn needs_database(&self) -> bool {
        match &self.mix {
            Some(m) => m.needs_database(),
            None if self.ws.is_some() => false,
            None => self.name.route().needs_database(),
        }
    }

    /// The protocols of its TLS levels, in order.
    pub fn tls_protocols(&self) -> impl Iterator<Item = Protocol> + '_ {
        self.levels
            .iter()
            .map(|l| l.protocol)
            .filter(|p| p.is_tls())
    }

    /// The scenario's name in every output: its route's, its mix
    /// file's stem (`service`) or its WebSocket name (`echo`).
    pub fn shown_name(&self) -> &str {
        match (&self.mix, &self.ws) {
            (Some(m), _) => &m.shown,
            (None, Some(ws)) => ws,
            (None, None) => self.name.as_str(),
        }
    }

    /// Whether it loads the `/ws` echo (`ws = "name"`).
    pub fn is_websocket(&self) -> bool {
        self.ws.is_some()
    }

    /// The path a level requests: the scenario's, with `queries=Q` when the
    /// level sets a query count; `/` for a mix (its kinds give theirs).
    pub fn path_for(&self, level: &Level) -> String {
        if self.mix.is_some() {
            return "/".to_string();
        }
        if self.ws.is_some() {
            return self.path.clone();
        }
        match level.queries {
            Some(q) => self.name.route().path_with_queries(q),
            None => self.path.clone(),
        }
    }
}

impl Study {
    /// Whether any scenario needs the database.
    pub fn needs_database(&self) -> bool {
        self.scenarios.iter().any(Scenario::needs_database)
    }

    /// The protocols of its TLS levels (`tls`, `mtls`), in study order;
    /// none for a study that only speaks cleartext.
    pub fn tls_protocols(&self) -> impl Iterator<Item = Protocol> + '_ {
        self.scenarios.iter().flat_map(Scenario::tls_protocols)
    }
}

/// A figure an article published, to show next to what was measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Published {
    /// None: the figure is about the study as a whole (e.g. one RAM peak).
    pub scenario: Option<ScenarioName>,
    pub level: Option<u32>,
    pub metric: Metric,
    pub values: BTreeMap<String, f64>,
}

/// A parsed, validated study.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Study {
    pub name: String,
    pub description: String,
    pub source: String,
    pub targets: TargetSelection,
    pub repetitions: u32,
    pub order: Order,
    /// The seed of `order = "random"`; None: the run picks one and records it.
    pub seed: Option<u64>,
    /// More starts while a target's interval is wide (`precision.rs`).
    pub precision: Option<crate::precision::Precision>,
    /// The practical margin a pair must differ by to be told apart, as a
    /// fraction (0.05: 5%); None: the default (`resolve.rs`).
    pub margin: Option<f64>,
    /// More starts where the ranking's order is in doubt (`resolve.rs`).
    pub resolve: Option<crate::resolve::Resolve>,
    pub restart: Restart,
    pub threads: Option<usize>,
    pub cpus: CpuSplit,
    /// The metrics the article reported (rows of its tables).
    pub metrics: Vec<Metric>,
    /// `DB_POOL_SIZE` for every server; None: 4 per server CPU.
    pub db_pool_size: Option<u32>,
    /// The study-wide budget (each scenario and level has it merged in).
    pub resources: Resources,
    pub scenarios: Vec<Scenario>,
    pub published: Vec<Published>,
    /// Where it was read from, and its text as read.
    pub file: PathBuf,
    #[serde(skip)]
    pub text: String,
}
