//! Synthetic runs written through the store, for the report's tests,
//! snapshots, browser test and demo; a dev-dependency only, so none of it is
//! compiled into the shipping library. Beside the capacity run ([`capacity`])
//! and the `default`-shaped run ([`default_like`]), the `tls`-shaped
//! run ([`tls`]), the `websocket`-shaped run ([`ws`]) and a run on a
//! two-node Kubernetes cluster ([`cluster`]), this file holds the
//! deterministic rust-trio run: three Rust targets (one generator-bound
//! once, one that answered some requests wrongly once), one that failed to
//! build, a single-level scenario and a two-level sweep, three repetitions,
//! with histograms and timelines drawn from a seeded generator. Optionally
//! one target is slowed down, a hostile target name is added, or the run is
//! a database run instead (`db` and `fortunes` against a PostgreSQL pinned
//! to the server's CPU, as on a two-core machine, with its own CPU and RSS).
//! Twelve such runs with one target slowed in four of them make the
//! history of the change-point tests ([`write_twelve_runs`]).
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod capacity;
pub mod cluster;
pub mod default_like;
pub mod tls;
pub mod ws;

use hdrhistogram::Histogram;
use shootout_engine::{LatencySummary, Second, Summary};
use shootout_store::{
    DatabaseRecord, Host, Measurement, NewRun, PackageVersion, Pinning, Provenance, Recorded,
    RunStatus, Store, TargetRecord, TargetStatus,
};
use std::collections::BTreeMap;
use std::path::Path;

/// The study text of the fixture, with published figures.
pub const STUDY_TEXT: &str = r#"name = "rust-trio"
description = "Axum, Actix and Rocket. [Published RPS Axum/Actix/Rocket: simple 12010/12483/7419.]"
source = "a synthetic fixture"
targets = ["rust-axum", "rust-actix", "rust-rocket"]

[[scenario]]
name = "simple"
load = { connections = 10, requests = 1000 }

[[scenario]]
name = "plaintext"
levels = [{ connections = 10, requests = 1000 }, { connections = 50, requests = 2000 }]

[published.simple]
rps = { rust-axum = 12010, rust-actix = 12483, rust-rocket = 7419 }
rss_peak_mib = { axum = 71, actix = 71, rocket = 102 }

[published.plaintext]
rps = { rust-actix = [10412, 10761], rust-axum = [nan, 9000] }
"#;

/// The study text of the database fixture.
pub const DATABASE_STUDY_TEXT: &str = r#"name = "rust-trio-db"
description = "Axum, Actix and Rocket on TechEmpower's single query and fortunes."
source = "a synthetic fixture"
targets = ["rust-axum", "rust-actix", "rust-rocket"]

[[scenario]]
name = "db"
load = { connections = 64, duration = "5s" }

[[scenario]]
name = "fortunes"
load = { connections = 64, duration = "5s" }
"#;

/// How to vary the fixture.
#[derive(Debug, Clone, Default)]
pub struct FixtureOptions {
    /// Seeds the noise; equal seeds give equal runs.
    pub seed: u64,
    /// Divide this target's throughput by the factor (and multiply its latency).
    pub slow: Option<(String, f64)>,
    /// Add a target named `<script>alert(1)</script>`.
    pub hostile_name: bool,
    /// Make it a database run (`DATABASE_STUDY_TEXT`) instead.
    pub database: bool,
    /// Auto warm-ups: every measurement steady after a few seconds but
    /// one of rust-rocket's (plaintext level 0, repetition 2), capped at
    /// [`CAPPED_WARMUP_S`] unsteady.
    pub auto_warmup: bool,
}

/// The capped warm-up of the `auto_warmup` fixture.
pub const CAPPED_WARMUP_S: f64 = 30.0;

/// The hostile target name used by the XSS tests.
pub const HOSTILE: &str = "<script>alert(1)</script>";

pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    /// A uniform number in [0, 1) (SplitMix64).
    pub(crate) fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Symmetric noise in [-1, 1).
    pub(crate) fn noise(&mut self) -> f64 {
        2.0 * self.next() - 1.0
    }
}

pub(crate) fn target_record(name: &str, framework: &str, status: TargetStatus) -> TargetRecord {
    let failed = status != TargetStatus::Ok;
    TargetRecord {
        target: name.to_string(),
        language: if name.starts_with("python") {
            "python"
        } else {
            "rust"
        }
        .to_string(),
        framework: framework.to_string(),
        status,
        reason: failed.then(|| "cargo build exited with status 101".to_string()),
        log_tail: failed.then(|| "error[E0433]: failed to resolve".to_string()),
        verify: (!failed).then(|| serde_json::json!({"plaintext": "ok", "json": "ok"})),
        footprint_bytes: (!failed).then_some(4_200_000),
        build_s: Some(31.5),
        description: Some(format!("{framework}, default workers")),
        run_command: Some(format!("exec ../target/release/{name}")),
        provenance: (!failed).then(|| provenance(framework)),
    }
}

/// What a fixture target's build resolved: its framework at 1.2.3 and a
/// second library that the lockfile lacks, on rustc 1.91.0. Every target
/// of a fixture run that built records it; the report's tests start from it.
pub fn provenance(framework: &str) -> Provenance {
    Provenance {
        packages: vec![
            PackageVersion {
                name: framework.to_string(),
                recorded: Recorded::Found {
                    version: "1.2.3".into(),
                    source: "targets/Cargo.lock".into(),
                },
            },
            PackageVersion {
                name: "tokio".into(),
                recorded: Recorded::Missing {
                    not_recorded: "not recorded: targets/Cargo.lock has no package \"tokio\""
                        .into(),
                },
            },
        ],
        runtime: Recorded::Found {
            version: "rustc 1.91.0".into(),
            source: "rustc -vV".into(),
        },
        build: None,
    }
}

/// The targets of the fixture run: (record, base RPS).
fn targets(opts: &FixtureOptions) -> Vec<(TargetRecord, f64)> {
    let mut t = vec![
        (
            target_record("rust-axum", "axum", TargetStatus::Ok),
            12000.0,
        ),
        (
            target_record("rust-actix", "actix", TargetStatus::Ok),
            12400.0,
        ),
        (
            target_record("rust-rocket", "rocket", TargetStatus::Ok),
            7400.0,
        ),
        (
            target_record("python-django", "django", TargetStatus::BuildFailed),
            0.0,
        ),
    ];
    if opts.hostile_name {
        t.push((target_record(HOSTILE, HOSTILE, TargetStatus::Ok), 5000.0));
    }
    t
}

/// The fixture's run header.
pub fn new_run() -> NewRun {
    NewRun {
        study: "rust-trio".into(),
        started_at: "2026-01-02T03:04:05Z".into(),
        tool_version: "0.1.0".into(),
        git_commit: Some("abc1234".into()),
        host: Host {
            cpu_model: "Fixture CPU @ 3.0GHz".into(),
            cores: 2,
            mem_total_mib: 24_000,
            kernel: "6.1.0-fixture".into(),
            hostname: "fixture-host".into(),
        },
        pinning: Pinning {
            server_cpus: vec![0],
            generator_cpus: vec![1],
        },
        scale: 1.0,
        study_text: STUDY_TEXT.into(),
        database: None,
        order_seed: None,
    }
}

/// The PostgreSQL of the database fixture: pinned to CPU 0, the server's.
pub fn database_record() -> DatabaseRecord {
    DatabaseRecord {
        version: "16.4 (Debian 16.4-1.pgdg120+2)".into(),
        settings: BTreeMap::from([
            ("max_connections".to_string(), "200".to_string()),
            ("shared_buffers".to_string(), "128MB".to_string()),
            ("synchronous_commit".to_string(), "off".to_string()),
            ("fsync".to_string(), "off".to_string()),
        ]),
        cpus: vec![0],
        pool_size: 16,
    }
}

/// The run header for these options.
fn run_header(opts: &FixtureOptions) -> NewRun {
    let mut run = new_run();
    if opts.database {
        run.study = "rust-trio-db".into();
        run.study_text = DATABASE_STUDY_TEXT.into();
        run.database = Some(database_record());
    }
    run
}

/// Writes one fixture run into the database at `path` and returns its id.
pub fn write_fixture_run(
    path: &Path,
    opts: &FixtureOptions,
) -> Result<i64, shootout_store::StoreError> {
    let store = Store::open(path)?;
    let id = store.begin_run(&run_header(opts))?;
    let mut rng = Rng(opts.seed.wrapping_mul(7919).wrapping_add(17));
    for (t, base) in targets(opts) {
        store.record_target(id, &t)?;
        if t.status != TargetStatus::Ok {
            continue;
        }
        let factor = match &opts.slow {
            Some((name, f)) if *name == t.target => *f,
            _ => 1.0,
        };
        let ms = if opts.database {
            database_measurements(&t.target, base / factor, &mut rng)
        } else {
            measurements(&t.target, base / factor, &mut rng)
        };
        for mut m in ms {
            if opts.auto_warmup {
                auto_warmup(&mut m);
            }
            store.record_measurement(id, &m)?;
        }
    }
    store.finish_run(id, RunStatus::Complete)?;
    Ok(id)
}

/// Writes the history that the change-point tests read into the database
/// at `path`: twelve fixture runs (seeds 1 to 12, ids 1 to 12 in a new
/// store), rust-axum 25% slower in runs 5 to 8 and restored from run 9.
pub fn write_twelve_runs(path: &Path) -> Result<(), shootout_store::StoreError> {
    for seed in 1..=12 {
        let opts = FixtureOptions {
            seed,
            slow: (5..=8)
                .contains(&seed)
                .then(|| ("rust-axum".to_string(), 1.25)),
            ..Default::default()
        };
        write_fixture_run(path, &opts)?;
    }
    Ok(())
}

fn measurements(target: &str, rps: f64, rng: &mut Rng) -> Vec<Measurement> {
    let plan = [
        ("simple", 0, "n=10000 c=100", 1.0),
        ("plaintext", 0, "n=1000 c=10", 0.9),
        ("plaintext", 1, "n=2000 c=50", 0.95),
    ];
    let mut out = Vec::new();
    for rep in 0..3 {
        for &(scenario, level, label, scale) in &plan {
            let bound = target == "rust-actix" && scenario == "plaintext" && level == 1;
            let r = rps * scale * (1.0 + 0.01 * rng.noise());
            let mut m = measurement(target, scenario, level, label, rep, r, bound, rng);
            if target == "rust-rocket" && scenario == "simple" && rep == 1 {
                wrong_answers(&mut m, WRONG_ANSWERS);
            }
            out.push(m);
        }
    }
    out
}

/// An auto warm-up's outcome (no noise drawn, so the other numbers stay
/// those of the plain fixture): steady after 2.5 to 3.5 s, but capped once.
fn auto_warmup(m: &mut Measurement) {
    let capped =
        m.target == "rust-rocket" && m.scenario == "plaintext" && m.level == 0 && m.repetition == 2;
    m.warmup_s = Some(if capped {
        CAPPED_WARMUP_S
    } else {
        2.5 + 0.5 * m.repetition as f64
    });
    m.steady = Some(!capped);
    // Quiet windows, but for one noisy warm-up (a shared machine's).
    let noisy = m.target == "rust-actix" && m.scenario == "simple" && m.repetition == 1;
    m.warmup_cv = Some(if noisy { 0.12 } else { 0.01 });
}

/// How many responses of one fixture measurement failed the SPEC.md check.
pub const WRONG_ANSWERS: u64 = 37;

/// Adds `n` responses that failed the check (answered 500), keeping
/// `sent = completed + cut + errors`.
fn wrong_answers(m: &mut Measurement, n: u64) {
    m.summary.errors.mismatch += n;
    m.summary.requests.sent += n;
    *m.summary.status.entry("500".into()).or_default() += n;
}

/// The database scenarios: a single query and fortunes, at a fraction of
/// the plaintext rate. The server and PostgreSQL share CPU 0, so their CPU
/// seconds add up to a little under the 5 s measured.
fn database_measurements(target: &str, rps: f64, rng: &mut Rng) -> Vec<Measurement> {
    // (scenario, label, share of the plaintext rate, server's share of the CPU)
    let plan = [
        ("db", "c=64 5s", 0.55, 0.45),
        ("fortunes", "c=64 5s", 0.4, 0.55),
    ];
    let mut out = Vec::new();
    for rep in 0..3 {
        for &(scenario, label, scale, share) in &plan {
            let r = rps * scale * (1.0 + 0.01 * rng.noise());
            let mut m = measurement(target, scenario, 0, label, rep, r, false, rng);
            let busy = m.summary.duration_s * (0.9 + 0.02 * rng.noise());
            m.server_cpu_s = busy * share;
            m.req_per_cpu_s = m.summary.requests.completed as f64 / m.server_cpu_s;
            m.db_cpu_s = Some(busy * (1.0 - share));
            m.db_rss_peak_mib = Some(148.0 + 6.0 * rng.next());
            out.push(m);
        }
    }
    out
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn measurement(
    target: &str,
    scenario: &str,
    level: u32,
    label: &str,
    rep: u32,
    rps: f64,
    bound: bool,
    rng: &mut Rng,
) -> Measurement {
    let mean_us = 100.0 * 1_000_000.0 / rps;
    let hist = histogram(mean_us, rng);
    let duration = 5.0;
    let completed = (rps * duration) as u64;
    let timeline = timeline(rps, hist.value_at_quantile(0.99) as f64 / 1000.0, rng);
    let rss = if target.contains("rocket") {
        30.0
    } else {
        20.0
    };
    let cpu = duration * 0.95;
    Measurement {
        target: target.into(),
        scenario: scenario.into(),
        level,
        level_label: label.into(),
        repetition: rep,
        started_at: format!("2026-01-02T03:{:02}:00Z", 10 + rep),
        // The testkit's summary is of 5 s at `rps` too; only its latency
        // is drawn here.
        summary: Summary {
            latency_ms: LatencySummary::from_histogram(&hist),
            ..shootout_testkit::summary::summary(rps)
        },
        histogram: hist,
        histogram_uncorrected: None,
        timeline,
        rss_idle_mib: rss + rng.next(),
        rss_peak_mib: rss * 3.0 + 2.0 * rng.next(),
        rss_after_mib: rss * 2.0 + rng.next(),
        pss_peak_mib: Some(rss * 2.5),
        server_cpu_s: cpu,
        req_per_cpu_s: completed as f64 / cpu,
        generator_bound: bound,
        startup_s: 0.05,
        db_cpu_s: None,
        db_rss_peak_mib: None,
        resources_cpus: None,
        resources_memory_mib: None,
        throttled_s: None,
        throttled_periods: None,
        oom_killed: None,
        memory_peak_mib: None,
        db_memory_peak_mib: None,
        warmup_s: None,
        steady: None,
        warmup_cv: None,
        others_cpu_share: None,
        steal_share: None,
        disturbed: false,
        parts: Default::default(),
    }
}

/// A latency histogram (µs) with a log-normal-ish body and a small tail.
fn histogram(mean_us: f64, rng: &mut Rng) -> Histogram<u64> {
    let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).expect("static bounds");
    for _ in 0..2000 {
        let u = rng.next().max(1e-9);
        let v = mean_us * (0.5 + 0.5 * (-u.ln())) * (1.0 + 0.2 * rng.noise());
        let _ = h.record(v.max(1.0) as u64);
    }
    h
}

fn timeline(rps: f64, p99_ms: f64, rng: &mut Rng) -> Vec<Second> {
    (0..5)
        .map(|t| Second {
            t,
            completed: (rps * (1.0 + 0.03 * rng.noise())) as u64,
            errors: 0,
            p50_ms: p99_ms / 4.0,
            p99_ms: p99_ms * (1.0 + 0.1 * rng.noise()),
        })
        .collect()
}
