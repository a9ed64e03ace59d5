//! Groups a run's measurements the way the tables are laid out: one group
//! per scenario × level, and inside it the repetitions of each target. In
//! a run with TLS levels each group is titled by its protocol too
//! ([`crate::protocol::label`]), so cleartext and TLS tables read apart.

use crate::metric::{self, Metric};
use crate::stats::{Floor, Margin, Pooled, Spread};
use crate::traffic::Traffic;
use shootout_store::{Measurement, RunData, TargetRecord};
use shootout_study::{Aggregate, Level, Scope, Study};

/// The repetitions of one target in one scenario × level.
#[derive(Debug, Clone)]
pub struct Column<'a> {
    pub target: &'a str,
    pub reps: Vec<&'a Measurement>,
    /// The run's record of the target (its build), for per-target metrics.
    pub record: Option<&'a TargetRecord>,
    /// Every measurement of the run: the target's other cells give the
    /// pooled start variance of its intervals.
    pub all: &'a [Measurement],
}

impl Column<'_> {
    /// The metric over the repetitions; a per-target metric has the one
    /// value of the target's record.
    pub fn values(&self, metric: Metric) -> Vec<f64> {
        if metric.info().scope == Scope::Target {
            return self
                .record
                .map(|t| metric::target_value(metric, t))
                .into_iter()
                .collect();
        }
        self.reps.iter().map(|m| metric::value(metric, m)).collect()
    }

    /// The cell of a table: the repetitions aggregated as the catalogue
    /// says; a median has the interval of its starts with the target's
    /// pooled start variance ([`crate::stats::starts`]).
    pub fn spread(&self, metric: Metric) -> Option<Spread> {
        let values = self.values(metric);
        match metric.aggregate() {
            Aggregate::Median if metric.info().scope == Scope::Target => Spread::of(&values),
            Aggregate::Median => {
                Spread::of_starts(&values, self.pooled(|m| metric::value(metric, m)))
            }
            Aggregate::Max => {
                let finite = values.iter().copied().filter(|v| v.is_finite());
                Spread::of(&[finite.fold(f64::NAN, f64::max)])
            }
        }
    }

    /// The variance of ln(value) between this target's starts, pooled over
    /// its cells in the run of the same kind as this column's (a WebSocket
    /// hold's with holds only, every other level's without holds: a hold's
    /// handshake rate is steady by construction and would narrow an echo's
    /// or a request's interval); None without a cell of two starts.
    pub fn pooled(&self, value: impl Fn(&Measurement) -> f64) -> Option<Pooled> {
        let hold = self
            .reps
            .first()
            .is_some_and(|m| shootout_store::is_hold(m));
        let same = |m: &Measurement| {
            if shootout_store::is_hold(m) == hold {
                value(m)
            } else {
                f64::NAN
            }
        };
        let cells = start_cells(self.all, Some(self.target), same);
        Pooled::of(cells.iter().map(|c| &c[..]))
    }

    /// True when every repetition measured less than [`MIN_RANKED_S`]: too
    /// short to carry its figure, so it ranks nothing on its own.
    pub fn too_short(&self) -> bool {
        !self.reps.is_empty()
            && self
                .reps
                .iter()
                .all(|m| m.summary.duration_s < MIN_RANKED_S)
    }

    /// True when any repetition was limited by the load generator.
    pub fn generator_bound(&self) -> bool {
        self.reps.iter().any(|m| m.generator_bound)
    }

    /// True when an auto warm-up of any repetition hit its cap before the
    /// server was steady: the figures may include warm-up.
    pub fn not_steady(&self) -> bool {
        self.reps.iter().any(|m| m.steady == Some(false))
    }

    /// True when any repetition was disturbed: other processes or the
    /// hypervisor took more than their limit of the measured CPUs.
    pub fn disturbed(&self) -> bool {
        self.reps.iter().any(|m| m.disturbed)
    }

    /// Responses of all repetitions that failed the SPEC.md check of the
    /// run (wrong status, media type or body; counted under `mismatch`).
    pub fn mismatches(&self) -> u64 {
        self.reps.iter().map(|m| m.summary.errors.mismatch).sum()
    }

    /// Requests sent over all repetitions, to put the mismatches beside.
    pub fn sent(&self) -> u64 {
        self.reps.iter().map(|m| m.summary.requests.sent).sum()
    }

    /// The target's name with the marks of its flags: `‡` generator-bound,
    /// `≠` wrong answers, `∿` not steady, `※` disturbed, `⌛` too short.
    pub fn marked_name(&self) -> String {
        format!("{}{}", self.target, self.marks(" "))
    }

    /// The flags' marks, each after `sep` (empty when none applies).
    pub fn marks(&self, sep: &str) -> String {
        let mut s = String::new();
        if self.generator_bound() {
            s.push_str(sep);
            s.push_str(BOUND_MARK);
        }
        if self.mismatches() > 0 {
            s.push_str(sep);
            s.push_str(MISMATCH_MARK);
        }
        if self.not_steady() {
            s.push_str(sep);
            s.push_str(NOT_STEADY_MARK);
        }
        if self.disturbed() {
            s.push_str(sep);
            s.push_str(DISTURBED_MARK);
        }
        if self.too_short() {
            s.push_str(sep);
            s.push_str(SHORT_MARK);
        }
        s
    }
}

pub use shootout_store::MIN_RANKED_S;

/// Marks a column too short to rank.
pub const SHORT_MARK: &str = "⌛";

/// The note of a group with columns too short to rank; None when none is.
pub fn short_note(g: &Group) -> Option<String> {
    let parts: Vec<String> = g
        .columns
        .iter()
        .filter(|c| c.too_short())
        .map(|c| {
            let longest = c
                .reps
                .iter()
                .map(|m| m.summary.duration_s)
                .fold(0.0, f64::max);
            format!("{} ({longest:.2} s)", c.target)
        })
        .collect();
    (!parts.is_empty()).then(|| {
        format!(
            "{SHORT_MARK} Too short to rank: {}. Each measured under {MIN_RANKED_S:.0} s, where \
             start-up costs weigh as much as the steady rate, so they are shown but tied with \
             their neighbours; give the level a duration (or more requests) to rank them.",
            parts.join("; ")
        )
    })
}

/// Marks a generator-bound column.
pub const BOUND_MARK: &str = "‡";
/// Marks a column with responses that failed the SPEC.md check.
pub const MISMATCH_MARK: &str = "≠";
/// Marks a column whose auto warm-up ended at its cap, not steady.
pub const NOT_STEADY_MARK: &str = "∿";

/// The note under a table with a target that was not steady: which
/// targets, and the longest warm-up each had; None when none.
pub fn not_steady_note(g: &Group) -> Option<String> {
    let parts: Vec<String> = g
        .columns
        .iter()
        .filter(|c| c.not_steady())
        .map(|c| {
            let longest = c.reps.iter().filter_map(|m| m.warmup_s).fold(0.0, f64::max);
            format!("{} (warm-up capped at {longest:.1} s)", c.target)
        })
        .collect();
    (!parts.is_empty()).then(|| {
        format!(
            "{NOT_STEADY_MARK} Not steady: {}. The throughput still varied or trended when \
             warm-up reached its cap (docs/steady-state.md), so these figures may include warm-up.",
            parts.join("; ")
        )
    })
}

/// Marks a column measured while other processes or the hypervisor took
/// the measured CPUs.
pub const DISTURBED_MARK: &str = "※";

/// The note under a table with a disturbed target: which targets, and the
/// largest shares other processes and the hypervisor took; None when none.
pub fn disturbed_note(g: &Group) -> Option<String> {
    let parts: Vec<String> = g
        .columns
        .iter()
        .filter(|c| c.disturbed())
        .map(|c| {
            let most = |f: fn(&Measurement) -> Option<f64>| {
                c.reps.iter().filter_map(|m| f(m)).fold(0.0, f64::max) * 100.0
            };
            format!(
                "{} (other processes {:.0}%, steal {:.0}%)",
                c.target,
                most(|m| m.others_cpu_share),
                most(|m| m.steal_share)
            )
        })
        .collect();
    (!parts.is_empty()).then(|| {
        format!(
            "{DISTURBED_MARK} Disturbed: {}. Other processes used more than {:.0}% of the \
             server's and generator's CPUs, or the hypervisor stole more than {:.0}%, while \
             it was measured (docs/columns.md), so these figures are not the contestant's alone.",
            parts.join("; "),
            shootout_store::OTHERS_CPU_LIMIT * 100.0,
            shootout_store::STEAL_LIMIT * 100.0
        )
    })
}

/// The note under a table with wrong answers: which targets and how many,
/// e.g. `rust-rocket 37 of 30037 responses`; None when every answer
/// passed.
pub fn mismatch_note(g: &Group) -> Option<String> {
    let parts: Vec<String> = g
        .columns
        .iter()
        .filter(|c| c.mismatches() > 0)
        .map(|c| format!("{} {} of {} responses", c.target, c.mismatches(), c.sent()))
        .collect();
    (!parts.is_empty()).then(|| {
        format!(
            "{MISMATCH_MARK} Wrong answers (status, content type or body not as SPEC.md \
             says), over all repetitions: {}. Throughput counts only the right answers; the \
             server spent time on both.",
            parts.join("; ")
        )
    })
}

pub use shootout_store::start_cells;

/// The run's A/A noise floor of a value: how far apart two starts of the
/// same target came in one cell ([`Floor`]); None below its minimum of
/// pairs.
pub fn floor(all: &[Measurement], value: impl Fn(&Measurement) -> f64) -> Option<Floor> {
    let cells = start_cells(all, None, value);
    Floor::of(cells.iter().map(|c| &c[..]))
}

/// One table: a scenario at one level.
#[derive(Debug, Clone)]
pub struct Group<'a> {
    pub scenario: &'a str,
    pub level: u32,
    pub level_label: &'a str,
    /// True when the scenario has more than one level (a sweep).
    pub sweep: bool,
    pub columns: Vec<Column<'a>>,
    /// The study's `metrics`, in its order; empty when it lists none or no
    /// longer parses.
    pub listed: Vec<Metric>,
    /// The level as the stored study defines it; None when the study no
    /// longer parses (or lacks the level).
    pub spec: Option<Level>,
    /// The protocol label (`TLS 1.3`, `cleartext, new connections`) in a
    /// run with TLS levels; None in a cleartext-only run.
    pub protocol: Option<String>,
    /// What the level's load counts (requests, WebSocket messages, or a
    /// hold's connections): the words and units of every format.
    pub traffic: Traffic,
    /// The window of the scenario's auto warm-up in seconds; None for a
    /// fixed warm-up or a study that no longer parses.
    pub warmup_window_s: Option<f64>,
    /// The practical margin every pair of this run is held to: the study's
    /// `margin`, else the default 5%.
    pub margin: Margin,
    /// The host's calibrated start variance of throughput, for targets
    /// measured once (`shootout calibrate`); None when never calibrated.
    pub calibration: Option<Pooled>,
}

impl Group<'_> {
    /// The table's title, e.g. `plaintext` or `plaintext — level 1:
    /// n=1000 c=10`; with a protocol, `plaintext · TLS 1.3 — level 2: c=64
    /// 3s tls`.
    pub fn title(&self) -> String {
        let scenario = match &self.protocol {
            Some(p) => format!("{} · {p}", self.scenario),
            None => self.scenario.to_string(),
        };
        if self.sweep {
            format!(
                "{scenario} — level {}: {}",
                self.level + 1,
                self.level_label
            )
        } else if self.level_label.is_empty() {
            scenario
        } else {
            format!("{scenario} ({})", self.level_label)
        }
    }

    /// The default rows of the catalogue, less the database and warm-up
    /// ones when no repetition here has them (so other scenarios and fixed
    /// warm-ups render as before), and less the rates a hold does not
    /// have ([`Traffic::shows`]).
    pub fn metrics(&self) -> Vec<Metric> {
        self.present(Metric::default_rows())
    }

    /// The rows of the article-style tables (Markdown and HTML): the
    /// study's `metrics` in its order, or [`Group::metrics`] when it lists
    /// none; database-only and warm-up rows only where some repetition
    /// has them.
    pub fn rows(&self) -> Vec<Metric> {
        if self.listed.is_empty() {
            return self.metrics();
        }
        self.present(self.listed.iter().copied())
    }

    fn present(&self, metrics: impl Iterator<Item = Metric>) -> Vec<Metric> {
        metrics
            .filter(|m| self.traffic.shows(*m))
            .filter(|m| {
                !m.only_where_measured() || self.columns.iter().any(|c| c.spread(*m).is_some())
            })
            .collect()
    }

    /// A stable id for anchors and chart ids (scenario and level only).
    pub fn slug(&self) -> String {
        let base: String = self
            .scenario
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '-'
                }
            })
            .collect();
        format!("{base}-l{}", self.level)
    }
}

/// Target names in the run's order: recorded targets first, then any that
/// only appear in measurements.
/// Targets listed in the study's `targets` array come first, in its order.
pub fn target_order(data: &RunData) -> Vec<&str> {
    target_order_in(data, stored_study(data).ok().as_ref())
}

fn target_order_in<'a>(data: &'a RunData, study: Option<&Study>) -> Vec<&'a str> {
    let mut names: Vec<&str> = data.targets.iter().map(|t| t.target.as_str()).collect();
    let listed = study_list(study, "targets");
    names.sort_by_key(|n| listed.iter().position(|l| l == n).unwrap_or(usize::MAX));
    for m in &data.measurements {
        if !names.contains(&m.target.as_str()) {
            names.push(&m.target);
        }
    }
    names
}

/// The tables of a run: scenarios in the study file's order (else first
/// appearance), levels ascending.
pub fn groups(data: &RunData) -> Vec<Group<'_>> {
    let mut keys: Vec<(&str, u32, &str)> = Vec::new();
    // A cost level derived from each target's own capacity offers each a
    // different rate: it is read in the cost sections, never ranked by
    // throughput beside the others (`crate::cost`).
    for m in data
        .measurements
        .iter()
        .filter(|m| m.parts.derived.is_none())
    {
        let k = (m.scenario.as_str(), m.level, m.level_label.as_str());
        if !keys.iter().any(|(s, l, _)| *s == k.0 && *l == k.1) {
            keys.push(k);
        }
    }
    let scenarios: Vec<&str> = keys.iter().fold(Vec::new(), |mut acc, k| {
        if !acc.contains(&k.0) {
            acc.push(k.0);
        }
        acc
    });
    let study = stored_study(data).ok();
    let listed = study_list(study.as_ref(), "scenario");
    let mut scenarios = scenarios;
    scenarios.sort_by_key(|s| listed.iter().position(|l| l == s).unwrap_or(usize::MAX));
    let order = target_order_in(data, study.as_ref());
    let tls = crate::protocol::run_has_tls(data, study.as_ref());
    let mut out = Vec::new();
    for s in scenarios {
        let mut levels: Vec<_> = keys.iter().filter(|k| k.0 == s).collect();
        levels.sort_by_key(|k| k.1);
        let sweep = levels.len() > 1;
        for &&(scenario, level, level_label) in &levels {
            let spec = study
                .as_ref()
                .and_then(|st| level_spec(st, scenario, level));
            let columns = columns(data, &order, scenario, level);
            let reps: Vec<&Measurement> = columns.iter().flat_map(|c| c.reps.clone()).collect();
            out.push(Group {
                scenario,
                level,
                level_label,
                sweep,
                columns,
                listed: study
                    .as_ref()
                    .map(|s| s.metrics.clone())
                    .unwrap_or_default(),
                protocol: tls.then(|| crate::protocol::label(spec.as_ref(), &reps)),
                traffic: Traffic::of(spec.as_ref(), &reps),
                spec,
                warmup_window_s: study.as_ref().and_then(|st| warmup_window_s(st, scenario)),
                margin: study.as_ref().map(study_margin).unwrap_or_default(),
                calibration: data.calibration.as_ref().map(|c| c.pooled()),
            });
        }
    }
    out
}

/// The practical margin a study asks for (`margin`), else the default.
pub fn study_margin(study: &Study) -> Margin {
    Margin::of_study(study.margin)
}

/// The practical margin of a stored run: its study's, else the default.
pub fn run_margin(data: &RunData) -> Margin {
    stored_study(data)
        .map(|s| study_margin(&s))
        .unwrap_or_default()
}

/// The auto warm-up window of `scenario` in the stored study, in seconds.
fn warmup_window_s(study: &Study, scenario: &str) -> Option<f64> {
    let sc = study
        .scenarios
        .iter()
        .find(|s| s.name.as_str() == scenario)?;
    match sc.warmup {
        shootout_study::Warmup::Auto { window, .. } => Some(window.as_secs_f64()),
        shootout_study::Warmup::Fixed(_) => None,
    }
}

/// Level `level` of `scenario` in the stored study.
fn level_spec(study: &Study, scenario: &str, level: u32) -> Option<Level> {
    let sc = study
        .scenarios
        .iter()
        .find(|s| s.name.as_str() == scenario)?;
    sc.levels.get(level as usize).cloned()
}

fn columns<'a>(
    data: &'a RunData,
    order: &[&'a str],
    scenario: &str,
    level: u32,
) -> Vec<Column<'a>> {
    order
        .iter()
        .filter_map(|&target| {
            let mut reps: Vec<&Measurement> = data
                .measurements
                .iter()
                .filter(|m| m.target == target && m.scenario == scenario && m.level == level)
                .collect();
            reps.sort_by_key(|m| m.repetition);
            let record = data.targets.iter().find(|t| t.target == target);
            (!reps.is_empty()).then_some(Column {
                target,
                reps,
                record,
                all: &data.measurements,
            })
        })
        .collect()
}

/// The study as stored with the run, parsed: the one place the report
/// reads it (`Context::study`; the groups' and capacity sections' own
/// look-ups, which are given only the run, call this too). An error when
/// it no longer parses (the report says so, see `Context::study_note`).
pub(crate) fn stored_study(data: &RunData) -> Result<Study, shootout_study::StudyError> {
    let name = format!("study text of run {}", data.run.id);
    shootout_study::parse(std::path::Path::new(&name), &data.run.study_text)
}

/// Names listed in the stored study: its `targets` list or its scenarios;
/// empty when it lists all targets or no longer parses.
fn study_list(study: Option<&Study>, key: &str) -> Vec<String> {
    let Some(study) = study else {
        return Vec::new();
    };
    match key {
        "targets" => match &study.targets {
            shootout_study::TargetSelection::List(names) => names.clone(),
            shootout_study::TargetSelection::All => Vec::new(),
        },
        _ => study
            .scenarios
            .iter()
            .map(|s| s.shown_name().to_string())
            .collect(),
    }
}
