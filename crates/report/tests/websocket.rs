//! The reports of a WebSocket run (the `websocket`-shaped fixture, issue
//! #48): an echo level speaks in messages (`msg/s`, "Messages per CPU-s",
//! "µs per message"), and a hold level (1000 idle connections) ranks
//! memory per idle connection, lower first, with no throughput row, its
//! latency named the handshake's, and how many connections were held of
//! those asked; in Markdown, in the findings and in the HTML (its ranked
//! charts and first screen). The JSON and CSV keep their names.

mod common;

use shootout_report::RunData;
use shootout_report_fixtures::ws::write_ws_run;

fn ws_run(tag: &str) -> RunData {
    let db = common::temp_dir(tag).join("shootout.db");
    let id = write_ws_run(&db).expect("ws fixture");
    common::load(&db, id)
}

/// The Markdown section under heading `title`, up to the next heading.
fn section<'a>(md: &'a str, title: &str) -> &'a str {
    let start = md
        .find(&format!("\n## {title}"))
        .unwrap_or_else(|| panic!("no section {title} in\n{md}"));
    let rest = &md[start + 4..];
    let end = rest.find("\n## ").unwrap_or(rest.len());
    &rest[..end]
}

/// The findings' lines of one scenario (`*title*` and its list).
fn findings<'a>(md: &'a str, title: &str) -> &'a str {
    let start = md
        .find(&format!("*{title}"))
        .unwrap_or_else(|| panic!("no findings of {title} in\n{md}"));
    let rest = &md[start..];
    let end = rest.find("\n\n*").unwrap_or(rest.len());
    &rest[..end]
}

#[test]
fn markdown_of_the_websocket_run() {
    let md = shootout_report::markdown(&ws_run("ws-snap"));
    insta::assert_snapshot!("websocket_md", common::scrub_times(&md));
}

#[test]
fn an_echo_counts_messages_in_the_table_findings_and_cost() {
    let md = shootout_report::markdown(&ws_run("ws-echo"));
    let echo = section(&md, "echo (");
    assert!(echo.contains("| Messages/s (msg/s) |"), "{echo}");
    assert!(echo.contains("| Messages per CPU-s |"), "{echo}");
    assert!(!echo.contains("RPS"), "{echo}");
    assert!(!echo.contains("Req per"), "{echo}");
    let f = findings(&md, "echo (");
    assert!(f.contains("- Throughput: go-nethttp "), "{f}");
    assert!(f.contains(" msg/s"), "{f}");
    assert!(!f.contains("req/s"), "{f}");
    let cost = section(&md, "echo-open — cost per message");
    assert!(cost.contains("**1000 msg/s**"), "{cost}");
    assert!(
        cost.contains("| Target | µs per message | offered (msg/s) |"),
        "{cost}"
    );
    assert!(cost.contains("cannot sustain 1000 msg/s"), "{cost}");
    assert!(!cost.contains("req/s"), "{cost}");
    let f = findings(&md, "cost per message");
    assert!(f.contains("µs of server CPU per message"), "{f}");
    assert!(f.contains("cannot sustain 1000 msg/s"), "{f}");
}

#[test]
fn a_hold_ranks_memory_per_idle_connection_and_names_the_handshake() {
    let md = shootout_report::markdown(&ws_run("ws-hold"));
    let idle = section(&md, "idle (");
    assert!(!idle.contains("RPS"), "{idle}");
    assert!(!idle.contains("per CPU-s"), "{idle}");
    assert!(idle.contains("| Median handshake latency (ms) |"), "{idle}");
    assert!(idle.contains("| p99 handshake latency (ms) |"), "{idle}");
    assert!(
        idle.contains("| Memory per idle connection (KiB) |"),
        "{idle}"
    );
    let f = findings(&md, "idle (");
    assert!(!f.contains("Throughput"), "{f}");
    assert!(!f.contains("req/s"), "{f}");
    // Lower is better: the least memory first, the others as multiples.
    assert!(
        f.contains("- Memory per idle connection: rust-actix "),
        "{f}"
    );
    let ranking = f
        .lines()
        .find(|l| l.starts_with("- Memory per idle connection:"))
        .expect("ranking line");
    let (actix, nethttp, django) = (
        ranking.find("rust-actix").expect("actix"),
        ranking.find("go-nethttp").expect("nethttp"),
        ranking.find("python-django").expect("django"),
    );
    assert!(actix < nethttp && nethttp < django, "{ranking}");
    assert!(ranking.contains(" KiB"), "{ranking}");
    // The others as multiples of the least, with their intervals.
    assert!(
        ranking.contains("6.42× \\[5.68–7.25\\] go-nethttp"),
        "{ranking}"
    );
    assert!(
        f.contains(
            "Connections held of 1000 asked (each target's fewest over its starts): \
             go-nethttp 1000; rust-actix 1000; python-django 950."
        ),
        "{f}"
    );
    assert!(f.contains("- p99 handshake latency: lowest "), "{f}");
}

#[test]
fn the_html_ranks_a_hold_by_memory_and_counts_messages() {
    let html = shootout_report::html(&ws_run("ws-html"));
    // The first screen: the hold's ranking is memory per connection.
    let idle = html
        .find("id=\"glance-idle-l0\"")
        .map(|i| &html[i..])
        .expect("idle at a glance");
    let idle = &idle[..idle.find("</figure>").expect("end")];
    assert!(
        idle.contains("<span>KiB/conn, lower is better</span>"),
        "{idle}"
    );
    let order: Vec<usize> = ["rust-actix", "go-nethttp", "python-django"]
        .iter()
        .map(|t| idle.find(t).expect("target"))
        .collect();
    assert!(order[0] < order[1] && order[1] < order[2], "{idle}");
    let echo = html
        .find("id=\"glance-echo-l0\"")
        .map(|i| &html[i..])
        .expect("echo at a glance");
    let echo = &echo[..echo.find("</figure>").expect("end")];
    assert!(echo.contains("<span>msg/s</span>"), "{echo}");
    // The hold's section: no throughput chart or row, a memory chart.
    let s = &html[html
        .find("<section id=\"s-idle-l0\">")
        .expect("idle section")..];
    let s = &s[..s.find("</section>").expect("end")];
    assert!(!s.contains("Requests per second"), "idle section");
    assert!(!s.contains("RPS (req/s)"), "idle section");
    assert!(!s.contains("req/s"), "idle section");
    assert!(s.contains("Memory per idle connection"), "idle section");
    assert!(s.contains("p99 handshake latency (ms)"), "idle section");
    let s = &html[html
        .find("<section id=\"s-echo-l0\">")
        .expect("echo section")..];
    let s = &s[..s.find("</section>").expect("end")];
    assert!(s.contains("Messages/s (msg/s)"), "echo section");
    assert!(!s.contains("req/s"), "echo section");
    assert!(!s.contains("RPS (req/s)"), "echo section");
    let s = &html[html.find("<section id=\"s-cost\">").expect("cost section")..];
    let s = &s[..s.find("</section>").expect("end")];
    assert!(s.contains("µs per message"), "cost section");
    assert!(!s.contains("req/s"), "cost section");
}

#[test]
fn the_exports_keep_their_names() {
    let data = ws_run("ws-json");
    let json = shootout_report::json(&data);
    assert!(json.contains("\"rps\""));
    let csv = shootout_report::csv(&data);
    assert!(csv.lines().next().expect("header").contains("rps"));
}

#[test]
fn the_trend_page_counts_messages_and_a_holds_handshakes() {
    let db = common::temp_dir("ws-trend").join("shootout.db");
    write_ws_run(&db).expect("ws fixture");
    let out = db.with_file_name("trend.html");
    shootout_report::write_trend(&db, None, Some(&out)).expect("trend");
    let page = std::fs::read_to_string(&out).expect("page");
    let section = |slug: &str| {
        let s = &page[page
            .find(&format!("<section id=\"s-{slug}\">"))
            .unwrap_or_else(|| panic!("no {slug} in {page}"))..];
        s[..s.find("</section>").expect("end")].to_string()
    };
    let echo = section("echo-l0");
    assert!(echo.contains("Median messages per second"), "{echo}");
    assert!(echo.contains("msg/s: median"), "{echo}");
    assert!(!echo.contains("req/s"), "{echo}");
    let idle = section("idle-l0");
    assert!(idle.contains("Median handshakes per second"), "{idle}");
    assert!(!idle.contains("req/s"), "{idle}");
}

/// An echo's throughput interval is pooled over the target's other
/// non-hold cells only: the same with the run's holds taken out. A hold's
/// handshake rate (connections over the hold, steady by construction)
/// would otherwise narrow it, and the same for the run's noise floor.
#[test]
fn a_hold_does_not_narrow_an_echo_interval_or_the_floor() {
    let data = ws_run("ws-pool");
    let mut without = ws_run("ws-pool-without");
    without
        .measurements
        .retain(|m| m.summary.websocket.as_ref().is_none_or(|w| !w.hold));
    assert!(without.measurements.len() < data.measurements.len());
    let echo_cells = |d: &RunData| {
        let md = shootout_report::markdown(d);
        let echo = section(&md, "echo (");
        let row = echo.lines().find(|l| l.starts_with("| Messages/s"));
        row.unwrap_or_default().to_string()
    };
    let row = echo_cells(&data);
    assert!(row.contains(" ± "), "an interval: {row}");
    assert_eq!(row, echo_cells(&without));
    let floor = |d: &RunData| shootout_report::noise::floor_line(d);
    assert_eq!(floor(&data), floor(&without));
}
