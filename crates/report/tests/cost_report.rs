//! The cost sections from stored parts (docs/cost.md): a point where a
//! target did not carry the rate is "cannot sustain", never ranked; the
//! cheapest is first; two targets whose costs differ by less than their
//! starts do are tied (≈ in the bars, "tied with" in the findings) and a
//! clear difference is not; overloads are said with goodput and recovery.

mod common;

use shootout_report::RunData;
use shootout_report_fixtures::FixtureOptions;
use shootout_store::parts::{Cost, Derived, Overload, Parts};

/// A cost point at `offered` req/s, refused with `invalid` when given.
fn cost(offered: f64, us: f64, invalid: Option<&str>, not_offered: bool) -> Option<Cost> {
    Some(Cost {
        offered_rps: offered,
        achieved_rps: if invalid.is_some() {
            0.8 * offered
        } else {
            offered
        },
        us_per_request: us,
        generator_share: 0.2,
        invalid: invalid.map(str::to_string),
        not_offered,
    })
}

/// A point derived from a capacity of 1,000 req/s (`fraction` of it, or a
/// common rate).
fn derived(fraction: Option<f64>) -> Option<Derived> {
    Some(Derived {
        capacity_rps: 1000.0,
        fraction,
    })
}

/// An overload at twice a capacity of 1,000 req/s for 3 s, then 6 s at
/// half of it.
fn overload(goodput: f64, connect_errors: u64, unsent: u64, recovery_s: Option<f64>) -> Overload {
    Overload {
        factor: 2.0,
        capacity_rps: 1000.0,
        deadline_ms: 10.0,
        overload_s: 3.0,
        recover_s: 6.0,
        offered_rps: 2000.0,
        throughput_rps: 990.0,
        goodput_rps: goodput,
        errors: shootout_engine::ErrorCounts {
            connect: connect_errors,
            ..Default::default()
        },
        unsent,
        recovery_s,
        seconds: Vec::new(),
    }
}

/// `m` moved `by` levels on, with `parts`.
fn moved(m: &shootout_store::Measurement, by: u32, parts: Parts) -> shootout_store::Measurement {
    let mut m = m.clone();
    m.level += by;
    m.parts = parts;
    m
}

/// The fixture run with its targets' measurements turned into cost points
/// at 500 req/s (`us` per start, `carried` false for a target that did not
/// carry it); at 25% of capacity, a point the last did not carry and one
/// the generator did not offer to the first; and two overloads, the
/// first target's recovering, the last's shedding, never recovering and
/// not fully offered.
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
            let refused = (!carried).then_some("carried 328 of the 500 req/s offered");
            let mut m = moved(
                &base,
                0,
                Parts {
                    cost: cost(500.0, *v, refused, false),
                    derived: derived(None),
                    ..Parts::default()
                },
            );
            m.repetition = rep as u32;
            out.push(m);
        }
    }
    let (first, last) = (out[0].clone(), out[out.len() - 1].clone());
    let quarter = |c| Parts {
        cost: c,
        derived: derived(Some(0.25)),
        ..Parts::default()
    };
    let refused = Some("carried 200 of the 250 req/s offered");
    out.push(moved(&last, 2, quarter(cost(250.0, 900.0, refused, false))));
    let silent = Some("the generator sent none of the 500 requests due");
    out.push(moved(&first, 2, quarter(cost(250.0, 0.0, silent, true))));
    let over = |o| Parts {
        overload: Some(o),
        ..Parts::default()
    };
    out.push(moved(&last, 3, over(overload(20.0, 7, 1800, None))));
    out.push(moved(&first, 1, over(overload(310.0, 0, 0, Some(4.0)))));
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
    assert_eq!(q.unsustained.len(), 2);
    assert_eq!(q.unsustained[0].0, a);
    assert!(
        q.unsustained[0]
            .1
            .starts_with("was not offered 250 req/s: the generator sent none"),
        "the generator's shortfall is not the server's: {:?}",
        q.unsustained[0]
    );
    assert!(q.unsustained[1]
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
            "at 25% of capacity: Not ranked: {a} was not offered 250 req/s: the generator \
             sent none of the 500 requests due; {c} cannot sustain 250 req/s"
        )),
        "{findings}"
    );
    assert!(
        findings.contains(&format!(
            " at 200% of each target's capacity for 3 s, then 50%: goodput within 10 ms \
             {a} 15.5% of the rate offered down to {c} 1.0%; recovered after {a} 4 s; did not \
             recover within 6 s: {c}; failed requests: {c} (refused 7); the rate was not fully \
             offered to {c} (20% of the requests due never sent)."
        )),
        "one sentence per multiple: {findings}"
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

/// The CSV has the cost figures of every measurement: µs per request (and
/// why a point is not a cost), and goodput and recovery past the knee;
/// empty cells where a measurement has no such part.
#[test]
fn the_csv_has_the_cost_columns() {
    let (db, ids) = common::fixture_db("cost-csv", &[FixtureOptions::default()]);
    let names = targets(&common::load(&db, ids[0]));
    let (a, c) = (&names[0][..], &names[2][..]);
    let data = cost_run(&[
        (a, [100.0, 104.0, 96.0], true),
        (c, [300.0, 310.0, 290.0], false),
    ]);
    let csv = shootout_report::csv(&data);
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    for column in shootout_report::csv::COST_HEADER {
        assert!(header.contains(&column), "{column} in {header:?}");
    }
    let col = |name: &str| header.iter().position(|h| *h == name).expect(name);
    let rows: Vec<Vec<String>> = lines.map(split_csv).collect();
    assert_eq!(rows.len(), data.measurements.len());
    let cell = |r: &Vec<String>, name: &str| r[col(name)].clone();
    let first = &rows[0];
    assert_eq!(cell(first, "us_per_request"), "100");
    assert_eq!(cell(first, "cost_offered_rps"), "500");
    assert_eq!(cell(first, "cost_invalid"), "");
    assert_eq!(cell(first, "goodput_rps"), "", "no overload part");
    let refused = rows
        .iter()
        .find(|r| cell(r, "cost_invalid").starts_with("carried 328"))
        .expect("the point not carried says why");
    assert_eq!(cell(refused, "us_per_request"), "300");
    let recovered = rows
        .iter()
        .find(|r| cell(r, "recovery_s") == "4")
        .expect("the overload that recovered");
    assert_eq!(cell(recovered, "goodput_rps"), "310");
    assert_eq!(cell(recovered, "overload_factor"), "2");
    assert_eq!(cell(recovered, "us_per_request"), "", "no fixed-rate part");
    let stuck = rows
        .iter()
        .find(|r| cell(r, "goodput_rps") == "20")
        .expect("the overload that did not recover");
    assert_eq!(cell(stuck, "recovery_s"), "", "did not recover");
    assert_eq!(cell(stuck, "unsent"), "1800");
    assert_eq!(cell(stuck, "overload_errors"), "7");
}

/// One CSV line's cells (RFC 4180 quotes; no line breaks in these cells).
fn split_csv(line: &str) -> Vec<String> {
    let (mut cells, mut cur, mut quoted) = (Vec::new(), String::new(), false);
    let mut chars = line.chars().peekable();
    while let Some(ch) = chars.next() {
        match (ch, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => cells.push(std::mem::take(&mut cur)),
            _ => cur.push(ch),
        }
    }
    cells.push(cur);
    cells
}
