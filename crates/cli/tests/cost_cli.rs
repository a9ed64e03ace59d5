//! Cost at a fixed rate and past the knee on servers whose capacity is
//! known (issue #37): copies of go-nethttp whose /json holds one lock for
//! 5 ms per request serve at most 200 req/s. A cost study measures them:
//! the closed loop finds about 200 req/s; at 100 req/s the CPU per request
//! is a cost; at 400 req/s it is "cannot sustain 400 req/s" with what was
//! carried and is never ranked. Offered twice its capacity, the copy that
//! queues serves about its capacity, counts what came back after the
//! deadline as late (goodput below throughput) and recovers once the rate
//! drops to half; the copy that sheds (503 with four waiting) keeps its
//! goodput within 10% of its capacity and counts the rest as failed.

#![allow(clippy::unwrap_used)]

mod common;

use common::Tmp;
use shootout_store::{Measurement, Store};
use std::path::{Path, PathBuf};
use std::process::Command;

/// `go-slow`'s /json: one request at a time, 5 ms each; the rest wait.
const QUEUES: &str = "var one sync.Mutex\n\n\
     func jsonHandler(w http.ResponseWriter, r *http.Request) {\n\
     \tone.Lock()\n\ttime.Sleep(5 * time.Millisecond)\n\tone.Unlock()\n";

/// `go-shed`'s /json: the same, but with four already waiting it answers
/// 503 at once (a bounded queue that sheds load).
const SHEDS: &str = "var one sync.Mutex\n\nvar waiting = make(chan struct{}, 4)\n\n\
     func jsonHandler(w http.ResponseWriter, r *http.Request) {\n\
     \tselect {\n\tcase waiting <- struct{}{}:\n\tdefault:\n\
     \t\thttp.Error(w, \"busy\", http.StatusServiceUnavailable)\n\t\treturn\n\t}\n\
     \tone.Lock()\n\ttime.Sleep(5 * time.Millisecond)\n\tone.Unlock()\n\t<-waiting\n";

/// A targets folder with go-nethttp copies whose /json starts with `body`.
fn targets(tmp: &Path, copies: &[(&str, &str)]) -> PathBuf {
    let dir = tmp.join("targets");
    std::fs::create_dir_all(&dir).unwrap();
    for (name, body) in copies {
        common::go_nethttp_copy(&dir, name, |main| {
            let patched = main
                .replacen("\t\"strings\"\n", "\t\"strings\"\n\t\"sync\"\n", 1)
                .replacen(
                    "func jsonHandler(w http.ResponseWriter, r *http.Request) {\n",
                    body,
                    1,
                );
            assert_ne!(
                main, patched,
                "the json handler is where the test expects it"
            );
            assert!(patched.contains("\"sync\""), "sync imported");
            patched
        });
    }
    dir
}

/// Runs the cost study on `go-slow` and `go-shed`; returns the database.
fn run(tmp: &Path) -> PathBuf {
    let dir = targets(tmp, &[("go-slow", QUEUES), ("go-shed", SHEDS)]);
    let db = tmp.join("t.db");
    common::run_study_ok(
        tmp,
        "known",
        "name = \"known\"\ndescription = \"a server of known capacity\"\nsource = \"tests\"\n\
         targets = [\"go-slow\", \"go-shed\"]\nwarmup = \"300ms\"\n\n\
         [[scenario]]\nname = \"json\"\n\
         load = { mode = \"closed\", connections = 8, duration = \"2s\" }\n\
         cost = { rates = [100, 400], overload = [\"200%\"], deadline = \"100ms\", \
         duration = \"2s\", standing = \"1s\", overload_for = \"2s\", recover_for = \"10s\" }\n",
        &db,
        &dir,
        &[],
    );
    db
}

#[test]
fn a_200_req_s_server_is_costed_below_its_knee_and_seen_past_it() {
    if !shootout_testkit::tools(&["go"]) {
        return;
    }
    let tmp = Tmp::new("cost");
    let db = run(&tmp.0);
    let store = Store::open(&db).unwrap();
    let data = store.load_run(store.resolve("latest").unwrap()).unwrap();
    let ms: Vec<&Measurement> = data
        .measurements
        .iter()
        .filter(|m| m.target == "go-slow")
        .collect();
    assert_eq!(ms.len(), 4, "closed, 100, 400, overload");

    let capacity = ms[0].summary.rps;
    eprintln!("capacity {capacity:.1} req/s");
    assert!((150.0..=205.0).contains(&capacity), "about 200: {capacity}");
    let standing = ms[0].parts.standing.as_ref().expect("standing measured");
    assert!(
        standing.seconds >= 1.0 && standing.rss_mib > 0.0,
        "{standing:?}"
    );

    let at_100 = ms[1].parts.cost.as_ref().expect("costed");
    assert_eq!(at_100.offered_rps, 100.0);
    assert!(at_100.valid(), "100 req/s is carried: {at_100:?}");
    assert!(at_100.us_per_request > 0.0, "{at_100:?}");

    let at_400 = ms[2].parts.cost.as_ref().expect("costed");
    assert!(!at_400.valid(), "400 req/s is not carried: {at_400:?}");
    assert!(
        at_400.achieved_rps <= 1.1 * 200.0,
        "never shown as sustaining 400: {at_400:?}"
    );
    assert!(
        at_400.invalid.as_deref().unwrap_or("").contains("carried"),
        "{at_400:?}"
    );

    let o = ms[3].parts.overload.as_ref().expect("overload measured");
    eprintln!(
        "overload: offered {:.0}, served {:.0}, goodput {:.0}, recovery {:?}, seconds {:?}",
        o.offered_rps,
        o.throughput_rps,
        o.goodput_rps,
        o.recovery_s,
        o.seconds
            .iter()
            .map(|s| (s.t, s.completed, s.good, s.p99_ms.round()))
            .collect::<Vec<_>>()
    );
    assert!((o.offered_rps - 2.0 * capacity).abs() < 1.0, "{o:?}");
    assert!(
        (o.throughput_rps - capacity).abs() <= 0.1 * capacity,
        "serves about its capacity, not what was offered: {:.0} of {:.0}",
        o.throughput_rps,
        capacity
    );
    assert!(
        o.goodput_rps < o.throughput_rps,
        "the late are not goodput: {o:?}"
    );
    assert!(o.recovery_s.is_some(), "recovers at half its capacity");

    let report = Command::new(env!("CARGO_BIN_EXE_shootout"))
        .args(["report", "latest", "--format", "md", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let md = String::from_utf8_lossy(&report.stdout);
    assert!(
        md.contains("go-slow cannot sustain 400 req/s: carried"),
        "{md}"
    );
    // Both carry 100 req/s: both are ranked (one start each, untested).
    let at_100 = md
        .lines()
        .find(|l| l.starts_with("- json at 100 req/s:"))
        .unwrap_or_else(|| panic!("a sentence for 100 req/s: {md}"));
    assert!(
        at_100.contains("µs of server CPU per request") && at_100.contains("go-slow"),
        "{at_100}"
    );
    assert!(at_100.contains("not tested for ties"), "{at_100}");
    assert!(md.contains("recovered after"), "{md}");
    shedding_keeps_goodput(&data);
}

/// The shedding copy, offered twice its capacity, answers about its
/// capacity in time (goodput within 10% of it) and refuses the rest with
/// 503, counted as failed requests, never as latency.
fn shedding_keeps_goodput(data: &shootout_store::RunData) {
    let ms: Vec<&Measurement> = data
        .measurements
        .iter()
        .filter(|m| m.target == "go-shed")
        .collect();
    assert_eq!(ms.len(), 4, "closed, 100, 400, overload");
    let capacity = ms[0].summary.rps;
    let at_400 = ms[2].parts.cost.as_ref().expect("costed");
    assert!(!at_400.valid(), "shedding is not carrying: {at_400:?}");
    let o = ms[3].parts.overload.as_ref().expect("overload measured");
    eprintln!(
        "shedding: capacity {capacity:.0}, offered {:.0}, served {:.0}, goodput {:.0}, \
         shed {}, recovery {:?}",
        o.offered_rps, o.throughput_rps, o.goodput_rps, o.errors.mismatch, o.recovery_s
    );
    assert!(
        (o.goodput_rps - capacity).abs() <= 0.1 * capacity,
        "a server that sheds keeps its goodput: {:.0} of {capacity:.0}",
        o.goodput_rps
    );
    assert!(
        o.errors.mismatch as f64 >= 0.5 * capacity * o.overload_s,
        "the shed 503s are failures: {o:?}"
    );
    assert!(o.recovery_s.is_some(), "{o:?}");
}
