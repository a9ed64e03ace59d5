//! The cost sections from stored parts (docs/cost.md): a point where a
//! target did not carry the rate is "cannot sustain", never ranked; the
//! cheapest is first; two targets whose costs differ by less than their
//! starts do are tied (≈ in the bars, "tied with" in the findings) and a
//! clear difference is not; overloads are said with goodput and recovery.

mod common;

use shootout_report::RunData;
use shootout_report_fixtures::FixtureOptions;
use shootout_store::parts::{Cost, Derived, Overload, Parts};

/// The fixture run with its targets' measurements turned into cost points
/// at 500 req/s (`us` per start, `carried` false for a target that did not
/// carry it), a point at 25% of capacity the last did not carry, and one
/// overload.
fn cost_run(us: &[(&str, [f64; 3], bool)]) -> RunData {
    let (db, ids) = common::fixture_db("cost", &[FixtureOptions::default()]);
    let mut data = common::load(&db, ids[0]);
    let scenario = data.measurements[0].scenario.clone();
    let level = data.measurements[0].level;
    let mut out = Vec::new();
    for (t, values, carried) in us {
        let base = data
            .measurements
            .iter()
            .find(|m| m.target == *t && m.scenario == scenario && m.level == level)
            .expect("the fixture has the target")
            .clone();
        for (rep, v) in values.iter().enumerate() {
            let mut m = base.clone();
            m.repetition = rep as u32;
            m.parts = Parts {
                cost: Some(Cost {
                    offered_rps: 500.0,
                    achieved_rps: if *carried { 500.0 } else { 328.0 },
                    us_per_request: *v,
                    generator_share: 0.2,
                    invalid: (!carried).then(|| "carried 328 of the 500 req/s offered".into()),
                }),
                derived: Some(Derived {
                    capacity_rps: 1000.0,
                    fraction: None,
                }),
                ..Parts::default()
            };
            out.push(m);
        }
    }
    // A second point, 25% of capacity, that the last target did not carry.
    let mut quarter = out[out.len() - 1].clone();
    quarter.level += 2;
    quarter.parts = Parts {
        cost: Some(Cost {
            offered_rps: 250.0,
            achieved_rps: 200.0,
            us_per_request: 900.0,
            generator_share: 0.2,
            invalid: Some("carried 200 of the 250 req/s offered".into()),
        }),
        derived: Some(Derived {
            capacity_rps: 1000.0,
            fraction: Some(0.25),
        }),
        ..Parts::default()
    };
    out.push(quarter);
    let mut over = out[0].clone();
    over.level += 1;
    over.parts = Parts {
        overload: Some(Overload {
            factor: 2.0,
            capacity_rps: 1000.0,
            deadline_ms: 10.0,
            overload_s: 3.0,
            recover_s: 6.0,
            offered_rps: 2000.0,
            throughput_rps: 990.0,
            goodput_rps: 310.0,
            errors: shootout_engine::ErrorCounts::default(),
            unsent: 0,
            recovery_s: Some(4.0),
            seconds: Vec::new(),
        }),
        ..Parts::default()
    };
    out.push(over);
    data.measurements = out;
    data
}

fn targets(data: &RunData) -> Vec<String> {
    let mut t: Vec<String> = data.measurements.iter().map(|m| m.target.clone()).collect();
    t.dedup();
    t
}

#[test]
fn costs_rank_cheapest_first_tie_close_ones_and_never_rank_the_unsustained() {
    let (db, ids) = common::fixture_db("cost-names", &[FixtureOptions::default()]);
    let names = targets(&common::load(&db, ids[0]));
    let (a, b, c) = (&names[0][..], &names[1][..], &names[2][..]);
    let data = cost_run(&[
        (a, [100.0, 104.0, 96.0], true),
        (b, [101.0, 97.0, 105.0], true),
        (c, [300.0, 310.0, 290.0], true),
    ]);
    let secs = shootout_report::cost::sections(&data);
    assert_eq!(secs.len(), 1);
    let p = &secs[0].points[0];
    assert_eq!(p.title, "500 req/s");
    let order: Vec<&str> = p.costs.iter().map(|r| r.target).collect();
    assert_eq!(order, [a, b, c], "cheapest first");
    assert!(p.costs[1].tied_above(), "1% apart with 4% noise: tied");
    assert!(!p.costs[2].tied_above(), "3x apart: told apart");
    let q = &secs[0].points[1];
    assert_eq!(q.title, "25% of capacity");
    assert!(q.costs.is_empty(), "a point not carried ranks nothing");
    assert_eq!(q.unsustained.len(), 1);
    assert!(q.unsustained[0]
        .1
        .starts_with("cannot sustain 250 req/s: carried 200"));

    let findings = shootout_report::cost::findings(&data).join("\n");
    assert!(
        findings.contains(&format!("{a} costs 100 µs")),
        "{findings}"
    );
    assert!(findings.contains(&format!("(tied with {b})")), "{findings}");
    assert!(
        findings.contains(&format!(
            "at 25% of capacity: Not ranked: {c} cannot sustain 250 req/s"
        )),
        "{findings}"
    );
    assert!(
        findings.contains(
            "keeps 15.5% goodput within 10 ms (310 req/s), errors none, and recovers 4 s after"
        ),
        "{findings}"
    );
    let html = shootout_report::html(&data);
    assert!(html.contains(&format!("≈ {b}")), "the tie drawn");
    assert!(html.contains("goodput against the offered rate"));
    let md = shootout_report::markdown(&data);
    assert!(
        md.contains("## ") && md.contains("cost per request"),
        "{md}"
    );
}
