//! Renders one load run for `shootout load -o text|json|markdown|csv`.
//! Text reads like wrk's or oha's; JSON follows docs/load.schema.json; the
//! Markdown rows and CSV columns of metrics are the catalogue's labels and
//! names (docs/columns.md). Every format counts mismatches (responses that
//! failed `--expect-*`), and text and Markdown name the first one. A mix's
//! request kinds get a table of their own beside the totals (text and
//! Markdown) and the `routes` array (JSON).

use super::Format;
use crate::escape;
use crate::group::MIN_RANKED_S;
use shootout_engine::{HttpVersion, LatencySummary, LoadReport, Mismatch, Summary, TlsSummary};
use shootout_study::Metric;
use std::borrow::Cow;
use std::fmt::Write;

/// The load in `format`.
pub fn render(report: &LoadReport, format: Format) -> String {
    match format {
        Format::Text => text(report),
        Format::Json => json(report),
        Format::Markdown => markdown(&report.summary),
        Format::Csv => csv(&report.summary),
    }
}

fn json(report: &LoadReport) -> String {
    super::pretty(&json_value(report))
}

/// The JSON document of docs/load.schema.json, before printing (`shootout
/// merge` adds its `shards` to it).
pub fn json_value(report: &LoadReport) -> serde_json::Value {
    let mut value = serde_json::to_value(&report.summary).unwrap_or_default();
    if let Some(map) = value.as_object_mut() {
        map.insert(
            "timeline".into(),
            serde_json::to_value(&report.timeline).unwrap_or_default(),
        );
        map.insert("warnings".into(), warnings(&report.summary).into());
    }
    value
}

/// What makes the figures weak, in sentences (text prints them under
/// "Warning", JSON lists them in `warnings`).
pub fn warnings(s: &Summary) -> Vec<String> {
    too_short(s).into_iter().collect()
}

/// A measured phase under [`MIN_RANKED_S`] (the run's `⌛` rule): whatever
/// else the machine does in that instant moves the figure.
fn too_short(s: &Summary) -> Option<String> {
    (s.duration_s < MIN_RANKED_S).then(|| {
        format!(
            "the measured phase lasted {:.2} s, under {MIN_RANKED_S:.0} s: too short to carry its \
             figure (anything else running, even a program reading this output, moves it); \
             load for longer (-z) or send more (-n)",
            s.duration_s
        )
    })
}

/// When no request completed and every failure was a refused or failed
/// connect, says so: the numbers then describe no server at all. `shootout
/// load` prints it (stdout for text, stderr always) and exits 2.
pub fn nothing_connected(s: &Summary) -> Option<String> {
    let e = &s.errors;
    (s.requests.completed == 0 && e.connect > 0 && e.total() == e.connect).then(|| {
        format!(
            "no connection succeeded ({} connect errors): check that a server is listening on {}",
            e.connect,
            listening_address(&s.url)
        )
    })
}

/// When requests were sent and not one response came back whole (nothing
/// completed, nothing mismatched), and neither rule above explains it:
/// the figures describe no answer at all. `shootout load` prints it and
/// exits 2. Says how the requests ended, and over HTTP/2 the first rule
/// the server broke.
pub fn nothing_answered(s: &Summary) -> Option<String> {
    let (r, e) = (&s.requests, &s.errors);
    if r.sent == 0 || r.completed > 0 || e.mismatch > 0 {
        return None;
    }
    let ended: Vec<String> = [
        (r.cut, "still waiting at the deadline"),
        (e.timeout, "timed out"),
        (e.read, "lost to a reset or closed connection"),
        (e.write, "failed to write"),
        (e.parse, "answered with a malformed response"),
        (e.connect, "failed to connect"),
        (e.tls, "failed in TLS"),
        (e.stream_reset, "reset by the server (RST_STREAM)"),
        (e.goaway, "left unprocessed by a GOAWAY"),
        (e.protocol, violation(s)),
        (e.handshake_refused, "refused at the WebSocket upgrade"),
        (e.closed, "lost to a WebSocket close"),
    ]
    .iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("{n} {what}"))
    .collect();
    let mut line = format!(
        "the server answered none of the {} requests sent in {:.2} s ({})",
        r.sent,
        s.duration_s,
        ended.join(", ")
    );
    match &s.first_violation {
        Some(why) => line.push_str(&format!(": it broke {}'s rules ({why})", spoken(s))),
        None => line.push_str(&format!(
            ": check that it serves {} and answers within --timeout",
            s.url
        )),
    }
    Some(line)
}

/// Over TLS, when no request was served and no TLS session was had (every
/// failure a connect or TLS one, some TLS), or the server asked for a
/// client certificate the load did not have and answered nothing 2xx/3xx:
/// says why. `shootout load` prints it and exits 2, as when nothing
/// connected at all.
pub fn no_tls_session(s: &Summary) -> Option<String> {
    let tls = s.tls.as_ref()?;
    let e = &s.errors;
    if tls.client_cert_asked > 0 && !tls.client_cert && s.requests.ok == 0 {
        return Some(format!(
            "the server asked for a client certificate in {} handshakes and none was given \
             (--cert FILE --key FILE); no request succeeded",
            tls.client_cert_asked
        ));
    }
    let refused = s.requests.completed == 0 && e.tls > 0 && e.total() == e.tls + e.connect;
    // The causes are sentences that say what to do (shootout-engine's
    // tls_cause); without one, the commonest cause is a certificate.
    refused.then(|| match tls_causes(tls) {
        Some(causes) => format!(
            "no TLS handshake succeeded ({} tls errors): {causes}",
            e.tls
        ),
        None => format!(
            "no TLS handshake succeeded ({} tls errors): check the server's certificate \
             and --cacert, or the client certificate",
            e.tls
        ),
    })
}

/// `invalid peer certificate: UnknownIssuer (20)`: the commonest causes.
fn tls_causes(tls: &TlsSummary) -> Option<String> {
    let mut causes: Vec<(&String, &u64)> = tls.failures.iter().collect();
    causes.sort_by(|a, b| b.1.cmp(a.1));
    let shown: Vec<String> = causes
        .iter()
        .take(3)
        .map(|(cause, n)| format!("{cause} ({n})"))
        .collect();
    (!shown.is_empty()).then(|| shown.join(", "))
}

/// The TLS section of the text output.
fn tls_text(o: &mut String, tls: &TlsSummary) {
    let h = &tls.handshakes;
    // A certificate is verified only in a completed handshake.
    let verified = match (&tls.version, tls.verified) {
        (None, _) => "no handshake completed, certificate not checked",
        (Some(_), true) => "certificate verified",
        (Some(_), false) => "certificate NOT verified (--insecure)",
    };
    let client = if tls.client_cert {
        ", client certificate sent"
    } else {
        ""
    };
    let spoken = match (&tls.version, &tls.cipher_suite) {
        (Some(v), Some(suite)) => format!("{v} {suite}, "),
        (Some(v), None) => format!("{v}, "),
        (None, _) => String::new(),
    };
    let _ = writeln!(o, "\nTLS            {spoken}{verified}{client}");
    let _ = writeln!(
        o,
        "  handshakes   {} done, {} resumed, {} failed; p50 {:.3} ms, p99 {:.3} ms",
        h.done, h.resumed, h.failed, tls.handshake_ms.p50, tls.handshake_ms.p99
    );
    if let Some(causes) = tls_causes(tls) {
        let _ = writeln!(o, "  failures     {causes}");
    }
    if tls.client_cert_asked > 0 && !tls.client_cert {
        let _ = writeln!(
            o,
            "  the server asked for a client certificate in {} handshakes; none was given",
            tls.client_cert_asked
        );
    }
}

/// `127.0.0.1:8080` of `http://127.0.0.1:8080/json`.
fn listening_address(url: &str) -> &str {
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))
        .or_else(|| url.strip_prefix("ws://"))
        .or_else(|| url.strip_prefix("wss://"))
        .unwrap_or(url);
    rest.split('/').next().unwrap_or(rest)
}

/// One line saying what load was offered.
pub fn describe(s: &Summary) -> String {
    let mut mode = match (s.mode.as_str(), s.rate) {
        ("open", Some(r)) if s.websocket.is_some() => format!("open loop at {r} messages/s"),
        ("open", Some(r)) => format!("open loop at {r} req/s"),
        ("stages", _) => "ramped load".to_string(),
        _ => "closed loop".to_string(),
    };
    if let Some(arrival) = s.arrival {
        mode = format!("{mode}, {arrival} arrivals");
    }
    let random = !s.routes.is_empty() || s.arrival == Some(shootout_engine::Arrival::Poisson);
    if let Some(seed) = s.seed.filter(|_| random) {
        mode = format!("{mode}, seed {seed}");
    }
    let pipeline = match (s.pipeline, s.pipeline_refill_at) {
        (1, _) => String::new(),
        (depth, Some(at)) => format!(", pipeline {depth}, refilled at {at} in flight"),
        (depth, None) => format!(", pipeline {depth}"),
    };
    let pipeline = match s.streams {
        Some(n) => format!(
            ", HTTP/2 with up to {n} stream{} each",
            if n == 1 { "" } else { "s" }
        ),
        None => pipeline,
    };
    let what = if let Some(ws) = &s.websocket {
        match ws.message_size {
            Some(size) if ws.binary => format!("{size}-byte binary messages to"),
            Some(size) => format!("{size}-byte text messages to"),
            None => "connections held open on".to_string(),
        }
    } else if s.routes.is_empty() {
        s.method.clone()
    } else {
        format!("a mix of {} kinds on", s.routes.len())
    };
    format!(
        "{mode}, {} connections{pipeline}, {} thread{}, {}, {what} {}",
        s.connections,
        s.threads,
        if s.threads == 1 { "" } else { "s" },
        if s.keepalive {
            "keep-alive"
        } else {
            "no keep-alive"
        },
        s.url
    )
}

fn text(report: &LoadReport) -> String {
    let s = &report.summary;
    let mut o = String::new();
    let _ = writeln!(o, "Load: {}", describe(s));
    let _ = writeln!(o, "\nSummary");
    counts_text(&mut o, s);
    let _ = writeln!(o, "  Duration     {:.2} s", s.duration_s);
    for w in warnings(s) {
        let _ = writeln!(o, "  Warning      {w}");
    }
    let _ = writeln!(
        o,
        "  Received     {} ({}/s)",
        bytes(s.bytes_received as f64),
        bytes(s.bytes_received as f64 / s.duration_s.max(1e-9))
    );
    let _ = writeln!(
        o,
        "\nLatency (ms)   {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "min", "mean", "stdev", "p50", "p90", "p99", "p99.9", "max"
    );
    let label = if s.latency_uncorrected_ms.is_some() {
        "  corrected  "
    } else {
        "  all        "
    };
    if s.requests.completed == 0 {
        // Zeros here would read as a latency: there is none.
        let _ = writeln!(o, "  (no request completed: no latency to show)");
    } else {
        latency_row(&mut o, label, &s.latency_ms);
        if let Some(u) = &s.latency_uncorrected_ms {
            latency_row(&mut o, "  uncorrected", u);
        }
    }
    if let Some(lag) = &s.lag {
        let _ = writeln!(
            o,
            "  send lag: {} late (>1 ms) of {}, mean {:.3} ms, p99 {:.3} ms, max {:.3} ms",
            lag.late, s.requests.sent, lag.mean_ms, lag.p99_ms, lag.max_ms
        );
    }
    routes_table(&mut o, s);
    histogram(&mut o, report);
    if let Some(tls) = &s.tls {
        tls_text(&mut o, tls);
    }
    let _ = writeln!(o, "\nStatus codes");
    if s.status.is_empty() {
        let _ = writeln!(o, "  (none)");
    }
    // Over WebSocket the status map counts each connection's upgrade.
    let answers = match crate::traffic::Traffic::of_summary(s) {
        crate::traffic::Traffic::Requests => "responses",
        _ => "upgrades",
    };
    for (code, n) in &s.status {
        let _ = writeln!(o, "  [{code}] {n} {answers}");
    }
    errors_text(&mut o, s);
    generator_text(&mut o, s);
    o
}

/// What was sent and completed: requests, WebSocket messages, or a hold's
/// upgrades and the connections it held open.
fn counts_text(o: &mut String, s: &Summary) {
    let r = &s.requests;
    match &s.websocket {
        Some(ws) if ws.hold => {
            let _ = writeln!(o, "  Upgrades/s   {:.2}", s.rps);
            let _ = writeln!(
                o,
                "  Upgrades     {} sent, {} completed (101), {} cut at the deadline",
                r.sent, r.completed, r.cut
            );
            let _ = writeln!(
                o,
                "  Held open    {} of {} connections at the end; {} pings, {} pongs",
                ws.held_open.unwrap_or(0),
                s.connections,
                ws.pings,
                ws.pongs
            );
        }
        Some(_) => {
            let _ = writeln!(o, "  Messages/s   {:.2}", s.rps);
            let _ = writeln!(
                o,
                "  Messages     {} sent, {} completed (echoed and checked), {} cut at the deadline",
                r.sent, r.completed, r.cut
            );
        }
        None => {
            let _ = writeln!(o, "  Requests/s   {:.2}", s.rps);
            let _ = writeln!(
                o,
                "  Requests     {} sent, {} completed, {} ok (2xx/3xx), {} cut at the deadline",
                r.sent, r.completed, r.ok, r.cut
            );
        }
    }
}

/// The generator's own CPU, and a warning when it may have been the limit.
fn generator_text(o: &mut String, s: &Summary) {
    let g = &s.generator;
    let _ = writeln!(
        o,
        "\nGenerator: {:.2} CPU-s, {:.0}% of {} threads, {:.2} µs CPU per {}",
        g.cpu_seconds,
        g.cpu_utilization * 100.0,
        s.threads,
        g.cpu_us_per_request,
        crate::traffic::Traffic::of_summary(s).noun()
    );
    if g.cpu_utilization >= 0.9 {
        let _ = writeln!(
            o,
            "warning: the generator was at or above 90% CPU; the server may not be the bottleneck"
        );
    }
}

/// A mix's kinds, one row each: counts, share of the sends, errors and
/// latency (ms, corrected in open loop); nothing without a mix.
fn routes_table(o: &mut String, s: &Summary) {
    if s.routes.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "\nBy request kind {:>6} {:>9} {:>9} {:>6} {:>7} {:>9} {:>9} {:>9} {:>9}",
        "weight", "sent", "completed", "share", "errors", "p50", "p90", "p99", "max"
    );
    let sent = s.requests.sent.max(1) as f64;
    for r in &s.routes {
        let l = &r.latency_ms;
        let _ = writeln!(
            o,
            "  {:<13} {:>6} {:>9} {:>9} {:>5.1}% {:>7} {:>9.3} {:>9.3} {:>9.3} {:>9.3}",
            r.name,
            r.weight,
            r.requests.sent,
            r.requests.completed,
            r.requests.sent as f64 * 100.0 / sent,
            r.errors.total(),
            l.p50,
            l.p90,
            l.p99,
            l.max
        );
    }
}

/// The errors by class, the first mismatch and why nothing was measured.
fn errors_text(o: &mut String, s: &Summary) {
    let e = &s.errors;
    // Only an https load can fail a handshake.
    let tls = s.tls.as_ref().map(|_| format!(", tls {}", e.tls));
    // Only HTTP/2 has streams to reset, GOAWAY and framing rules to break.
    let h2 = (version(s) == Some(HttpVersion::Http2)).then(|| {
        format!(
            ", stream reset {}, goaway {}, protocol {}",
            e.stream_reset, e.goaway, e.protocol
        )
    });
    // Only a WebSocket load has an upgrade to refuse and closes to count
    // (and protocol violations, as HTTP/2 has).
    let ws = (is_websocket(s) || e.handshake_refused + e.closed > 0).then(|| {
        format!(
            ", handshake refused {}, closed {}, protocol {}",
            e.handshake_refused, e.closed, e.protocol
        )
    });
    let _ = writeln!(
        o,
        "\nErrors\n  connect {}, write {}, read {}, timeout {}, parse {}, mismatch {}{}{}{}",
        e.connect,
        e.write,
        e.read,
        e.timeout,
        e.parse,
        e.mismatch,
        tls.unwrap_or_default(),
        h2.unwrap_or_default(),
        ws.unwrap_or_default()
    );
    if !e.close_codes.is_empty() {
        let codes: Vec<String> = e
            .close_codes
            .iter()
            .map(|(code, n)| format!("{code} ×{n}"))
            .collect();
        let _ = writeln!(o, "  closes by code: {}", codes.join(", "));
    }
    if let Some(m) = &s.first_mismatch {
        let _ = writeln!(o, "  first mismatch: {}", first_mismatch(m));
    }
    if let Some(why) = &s.first_violation {
        let _ = writeln!(o, "  first {} violation: {why}", spoken(s));
    }
    if let Some(hint) = nothing_connected(s)
        .or_else(|| no_tls_session(s))
        .or_else(|| nothing_answered(s))
    {
        let _ = writeln!(o, "  {hint}");
    }
}

/// The HTTP version the summary says was spoken.
fn version(s: &Summary) -> Option<HttpVersion> {
    HttpVersion::from_label(&s.protocol.http)
}

/// Whether the load spoke WebSocket (its "requests" are messages).
fn is_websocket(s: &Summary) -> bool {
    version(s) == Some(HttpVersion::WebSocket)
}

/// The protocol whose rules a violation broke: HTTP/2 or WebSocket.
fn spoken(s: &Summary) -> &'static str {
    if is_websocket(s) {
        "WebSocket"
    } else {
        "HTTP/2"
    }
}

/// How a request lost to a violation ended, in [`nothing_answered`].
fn violation(s: &Summary) -> &'static str {
    if is_websocket(s) {
        "ended by a WebSocket violation"
    } else {
        "ended by an HTTP/2 violation"
    }
}

/// `status 200, body differs at byte 7: expected "World!", got "world!"`;
/// quoted with escapes so control bytes and trailing spaces show.
pub fn first_mismatch(m: &Mismatch) -> String {
    let mut line = format!("status {}, {}", m.status, m.reason);
    if !(m.expected.is_empty() && m.got.is_empty()) {
        let _ = write!(line, ": expected {:?}, got {:?}", m.expected, m.got);
    }
    line
}

fn latency_row(o: &mut String, label: &str, l: &LatencySummary) {
    let _ = writeln!(
        o,
        "{label}  {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3}",
        l.min, l.mean, l.stdev, l.p50, l.p90, l.p99, l.p999, l.max
    );
}

/// A small linear histogram from min to p99.9, like oha's; the last bucket
/// holds everything slower.
fn histogram(o: &mut String, report: &LoadReport) {
    let h = &report.histogram;
    if h.is_empty() {
        return;
    }
    const BUCKETS: u64 = 10;
    let lo = h.min();
    let hi = h.value_at_quantile(0.999).max(lo + BUCKETS);
    let step = (hi - lo).div_ceil(BUCKETS);
    let counts: Vec<u64> = (0..BUCKETS)
        .map(|i| {
            let a = lo + i * step;
            let b = if i + 1 == BUCKETS { u64::MAX } else { a + step };
            h.iter_recorded()
                .filter(|v| v.value_iterated_to() >= a && v.value_iterated_to() < b)
                .map(|v| v.count_at_value())
                .sum()
        })
        .collect();
    let most = counts.iter().copied().max().unwrap_or(1).max(1);
    let _ = writeln!(o, "\nLatency histogram (ms)");
    for (i, n) in counts.iter().enumerate() {
        let upper = (lo + (i as u64 + 1) * step) as f64 / 1000.0;
        let bar = "■".repeat(((n * 40).div_ceil(most)) as usize);
        let edge = if i as u64 + 1 == BUCKETS { ">" } else { "<" };
        let _ = writeln!(o, "  {edge}{upper:>10.3} [{n:>9}] {bar}");
    }
}

fn bytes(v: f64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut v = v;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.2} {}", UNITS[u])
}

fn markdown(s: &Summary) -> String {
    let l = &s.latency_ms;
    let e = &s.errors;
    let mut o = format!(
        "**Load:** {}\n\n| metric | value |\n|---|---:|\n",
        escape::md(&describe(s))
    );
    // A WebSocket load's rows in its own words (messages, a hold's
    // handshakes); the rest as the catalogue says.
    let traffic = crate::traffic::Traffic::of_summary(s);
    let ms = |m: Metric, v: f64| (traffic.label(m), format!("{v:.3}"));
    let rows: [(Cow<str>, String); 18] = [
        (traffic.label(Metric::Rps), format!("{:.2}", s.rps)),
        ("sent".into(), s.requests.sent.to_string()),
        ("completed".into(), s.requests.completed.to_string()),
        ("ok (2xx/3xx)".into(), s.requests.ok.to_string()),
        ("cut".into(), s.requests.cut.to_string()),
        ("duration (s)".into(), format!("{:.2}", s.duration_s)),
        ("pipeline depth".into(), s.pipeline.to_string()),
        ms(Metric::Min, l.min),
        ms(Metric::Mean, l.mean),
        ms(Metric::Stdev, l.stdev),
        ms(Metric::Median, l.p50),
        ms(Metric::P90, l.p90),
        ms(Metric::P99, l.p99),
        ms(Metric::P999, l.p999),
        ms(Metric::Max, l.max),
        (
            "errors (connect/write/read/timeout/parse)".into(),
            format!(
                "{}/{}/{}/{}/{}",
                e.connect, e.write, e.read, e.timeout, e.parse
            ),
        ),
        (Metric::Mismatches.label().into(), e.mismatch.to_string()),
        (
            "generator CPU".into(),
            format!(
                "{:.2} s ({:.0}%)",
                s.generator.cpu_seconds,
                s.generator.cpu_utilization * 100.0
            ),
        ),
    ];
    for (k, v) in rows {
        let _ = writeln!(o, "| {k} | {v} |");
    }
    if let Some(m) = &s.first_mismatch {
        let _ = writeln!(
            o,
            "\n**First mismatch:** {}",
            escape::md(&first_mismatch(m))
        );
    }
    if !s.routes.is_empty() {
        o.push_str("\n| kind | weight | sent | completed | errors | p50 (ms) | p99 (ms) |\n");
        o.push_str("|---|---:|---:|---:|---:|---:|---:|\n");
        for r in &s.routes {
            let _ = writeln!(
                o,
                "| {} | {} | {} | {} | {} | {:.3} | {:.3} |",
                escape::md(&r.name),
                r.weight,
                r.requests.sent,
                r.requests.completed,
                r.errors.total(),
                r.latency_ms.p50,
                r.latency_ms.p99
            );
        }
    }
    o
}

/// The CSV columns, in order; metrics under their catalogue names.
pub fn csv_columns() -> [&'static str; 31] {
    [
        "mode",
        "url",
        "method",
        "connections",
        "threads",
        "keepalive",
        "rate",
        "duration_s",
        Metric::Rps.name(),
        "sent",
        "completed",
        "ok",
        "cut",
        Metric::ErrorsConnect.name(),
        Metric::ErrorsWrite.name(),
        Metric::ErrorsRead.name(),
        Metric::ErrorsTimeout.name(),
        Metric::ErrorsParse.name(),
        "bytes_received",
        Metric::Min.name(),
        Metric::Mean.name(),
        Metric::Stdev.name(),
        Metric::Median.name(),
        Metric::P90.name(),
        Metric::P99.name(),
        Metric::P999.name(),
        Metric::Max.name(),
        "generator_cpu_s",
        "generator_cpu",
        Metric::Mismatches.name(),
        "pipeline",
    ]
}

fn csv(s: &Summary) -> String {
    let l = &s.latency_ms;
    let e = &s.errors;
    let r = &s.requests;
    format!(
        "{}\n{},{},{},{},{},{},{},{:.6},{:.3},{},{},{},{},{},{},{},{},{},{},{:.3},{:.3},{:.3},{:.3},{:.3},{:.3},{:.3},{:.3},{:.4},{:.4},{},{}\n",
        super::header(&csv_columns()),
        crate::csv::text(&s.mode), crate::csv::quoted(&s.url), crate::csv::text(&s.method),
        s.connections, s.threads, s.keepalive,
        s.rate.map(|r| r.to_string()).unwrap_or_default(),
        s.duration_s, s.rps, r.sent, r.completed, r.ok, r.cut,
        e.connect, e.write, e.read, e.timeout, e.parse, s.bytes_received,
        l.min, l.mean, l.stdev, l.p50, l.p90, l.p99, l.p999, l.max,
        s.generator.cpu_seconds, s.generator.cpu_utilization, e.mismatch, s.pipeline
    )
}

#[cfg(test)]
mod tests {
    use shootout_report_fixtures::ws::sample;

    #[test]
    fn a_websocket_load_in_markdown_counts_messages_or_handshakes() {
        let echo = super::markdown(&sample(None).summary);
        assert!(echo.contains("| Messages/s (msg/s) | 28000.00 |"), "{echo}");
        assert!(!echo.contains("req/s"), "{echo}");
        let hold = super::markdown(&sample(Some(1000)).summary);
        assert!(hold.contains("| Handshakes/s (handshakes/s) |"), "{hold}");
        assert!(hold.contains("| p99 handshake latency (ms) |"), "{hold}");
        assert!(!hold.contains("req/s"), "{hold}");
    }
}
