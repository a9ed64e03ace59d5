//! Uncertainty on real servers (issue #36): go-nethttp against a copy of
//! itself under another name (its folder copied, the manifest's name
//! changed) is called tied; the same server under 30% less CPU quota is
//! told apart by `compare --fail-if-slower --across-resources` with no
//! percentage (exit 1,
//! every cell slower; exit 0 the other way round, every cell faster); and
//! a cell's interval narrows as starts are added. Both contestants run
//! under a CPU quota (0.5 CPUs, and 0.35 for the 30% less) with pipelined
//! requests, so that the debug build's load generator saturates them even
//! on a busy machine.
//!
//! Five starts per run: with three, one CI run here saw the quota's 30%
//! as −22% at p = 0.069 (a miss); starts on this VM differ by a 10% sd
//! of ln(rps), which three starts per side cannot always tell from 30%.
//! Five per side put the expected t near 5.6 against a critical 2.3.

#![allow(clippy::unwrap_used)]

mod common;

use common::{repo, Tmp};
use shootout_report::group::groups;
use shootout_report::ranking::{rank, Measure};
use shootout_report::stats::{Pooled, Spread};
use shootout_store::RunData;
use std::path::Path;
use std::process::{Command, Output};

/// Whether the test can run here; records why not (shootout-testkit).
fn usable() -> bool {
    if !shootout_testkit::tools(&["go"]) {
        return false;
    }
    if let Err(e) = shootout_servers::cgroup::probe() {
        assert!(
            e.is_unavailable(),
            "cgroups usable but the probe failed: {e}"
        );
        shootout_testkit::machine(format!("no cgroup can be made here: {e}"));
        return false;
    }
    true
}

/// A targets folder with go-nethttp (linked) and `go-nethttp-copy`, its
/// folder copied and the manifest's name changed.
fn targets(tmp: &Path) -> std::path::PathBuf {
    let dir = tmp.join("targets");
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink(repo().join("targets/go-nethttp"), dir.join("go-nethttp")).unwrap();
    common::go_nethttp_copy(&dir, "go-nethttp-copy", str::to_string);
    dir
}

/// Runs the A/A study at `cpus` CPUs of quota; returns the stored run.
fn run(tmp: &Path, targets_dir: &Path, name: &str, cpus: f64) -> RunData {
    let text = format!(
        "name = \"aa\"\ndescription = \"A/A\"\nsource = \"tests\"\n\
         targets = [\"go-nethttp\", \"go-nethttp-copy\"]\nrepetitions = 5\norder = \"random\"\n\
         warmup = \"500ms\"\nresources = {{ cpus = {cpus} }}\n\n\
         [[scenario]]\nname = \"plaintext\"\n\
         load = {{ mode = \"closed\", connections = 32, duration = \"1500ms\", pipeline = 8 }}\n"
    );
    let db = tmp.join("t.db");
    common::run_study_ok(tmp, name, &text, &db, targets_dir, &["--quiet"]).0
}

/// True when the run's plaintext ranking calls the two a tie.
fn tied(data: &RunData) -> bool {
    let g = &groups(data)[0];
    let ranked = rank(g, Measure::Metric(shootout_report::metric::Metric::Rps));
    assert_eq!(ranked.len(), 2, "both measured");
    let v = ranked[1].vs_above.expect("a verdict on five starts each");
    eprintln!(
        "A/A: {} {:+.1}%, p = {:?}, interval {:?}, margin {:?}",
        ranked[1].target(),
        v.change_pct,
        v.p_value,
        v.interval_pct,
        v.margin_pct
    );
    ranked[1].tied_above()
}

fn compare(tmp: &Path, a: i64, b: i64) -> Output {
    Command::new(env!("CARGO_BIN_EXE_shootout"))
        .args([
            "compare",
            &a.to_string(),
            &b.to_string(),
            "--fail-if-slower",
            // The two runs differ in CPU quota on purpose.
            "--across-resources",
            "--db",
        ])
        .arg(tmp.join("t.db"))
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

#[test]
fn a_copy_is_tied_and_less_quota_is_slower() {
    if !usable() {
        return;
    }
    let tmp = Tmp::new("uncertainty");
    let dir = targets(&tmp.0);
    let a = run(&tmp.0, &dir, "a", 0.5);
    // An A/A pair is called different in under 5% of runs by design
    // (docs/statistics.md), so one such call is chance; a second in a row
    // (under 0.25%) is the rule failing.
    let a = if tied(&a) {
        a
    } else {
        eprintln!("A/A called different once: running it again");
        let again = run(&tmp.0, &dir, "a2", 0.5);
        assert!(tied(&again), "an A/A pair called different twice in a row");
        again
    };

    // Each start added narrows the interval, with the target's pooled
    // start variance (all five starts) held: √(2/3) of the width from two
    // starts to three, √(3/5) from three to five. That the
    // expected width falls as starts are added, the variance estimated
    // anew each time, is the unit test
    // `stats::starts::tests::intervals_narrow_as_starts_are_added`.
    let rps = |m: &shootout_store::Measurement| m.summary.rps;
    for target in ["go-nethttp", "go-nethttp-copy"] {
        let values: Vec<f64> = a
            .measurements
            .iter()
            .filter(|m| m.target == target)
            .map(rps)
            .collect();
        assert_eq!(values.len(), 5);
        let pooled = Pooled::of([&values[..]]).expect("pooled");
        let width = |n: usize| {
            let s = Spread::of_starts(&values[..n], Some(pooled)).expect("spread");
            s.half_ci.expect("interval") / s.median
        };
        for (from, to) in [(2, 3), (3, 5)] {
            let ratio = width(to) / width(from);
            let expected = (from as f64 / to as f64).sqrt();
            assert!(
                (ratio - expected).abs() < 0.02,
                "{target}: {from} to {to} starts, {ratio} (expected {expected})"
            );
        }
    }

    // The same server under 30% less CPU quota: every cell slower, exit 1.
    // Five starts give this test a power near 0.95 at the 10% start-to-
    // start spread usually measured here, but this machine has noisier
    // stretches (one CI run saw a 48% A/A floor and −16% at p = 0.066, a
    // miss): then both runs are measured again, once. A second miss in a
    // row is the rule failing; a rule that never calls a difference fails
    // both.
    let slower = |a: &RunData, b: &RunData| {
        let out = compare(&tmp.0, a.run.id, b.run.id);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        eprintln!("{text}");
        let both = ["go-nethttp", "go-nethttp-copy"]
            .iter()
            .all(|t| err.contains(&format!("slower: {t} on plaintext")));
        (out.status.code() == Some(1) && both, text, err)
    };
    let mut a = a;
    let mut b = run(&tmp.0, &dir, "b", 0.35);
    let (mut told, mut text, mut err) = slower(&a, &b);
    if !told {
        eprintln!("30% less quota not told apart once: measuring both again");
        a = run(&tmp.0, &dir, "a3", 0.5);
        b = run(&tmp.0, &dir, "b2", 0.35);
        (told, text, err) = slower(&a, &b);
    }
    assert!(
        told,
        "30% less quota not called slower twice in a row:\n{text}\n{err}"
    );
    assert!(text.contains("starts"), "the verdict is on starts:\n{text}");

    // The other way round nothing is slower (both faster): exit 0.
    let out = compare(&tmp.0, b.run.id, a.run.id);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The RPS verdict is the seventh column of each target's row.
    let rps_verdicts: Vec<String> = text
        .lines()
        .filter(|l| l.starts_with("| go-nethttp"))
        .map(|l| l.split('|').nth(7).unwrap_or("").trim().to_string())
        .collect();
    assert_eq!(rps_verdicts, ["faster", "faster"], "{text}");
}
