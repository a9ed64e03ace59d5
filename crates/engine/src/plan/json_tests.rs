//! A plan survives its JSON: every input comes back, the derived parts are
//! made again equal, and what the builders refuse is refused from JSON.

use super::super::*;
use crate::expect::{BodyMatch, StatusMatch};
use crate::mix::RequestKind;
use crate::template::Template;
use crate::tls::Verify;
use crate::workload::{Load, Stage, StageUnit, Stop};

fn endpoint(url: &str) -> Endpoint {
    Endpoint::parse(url).unwrap()
}

fn workload(load: Load, stop: Stop) -> Workload {
    Workload::new(load, stop).unwrap()
}

fn for_secs(s: u64) -> Stop {
    Stop {
        requests: None,
        duration: Some(Duration::from_secs(s)),
    }
}

/// A mix of two kinds (one with its own checks) on Poisson arrivals over a
/// rate ramp, one shard of three, starting at a given instant.
fn mixed() -> PlanBuilder {
    let kind = |name: &str, weight, path: &str| RequestKind {
        name: name.into(),
        weight,
        path: Template::parse(path).unwrap(),
        request: RequestSpec::default(),
        expect: None,
    };
    let mut update = kind("update", 1, "/updates?queries={1..20}");
    update.request = RequestSpec {
        method: "POST".into(),
        headers: vec![("Content-Type".into(), "application/json".into())],
        body: b"{\"x\":\"\xff\x00\"}".to_vec(),
    };
    update.expect = Some(Expect {
        status: vec![StatusMatch::Code(201)],
        ..Expect::default()
    });
    let mix = Mix::new(vec![kind("db", 6, "/db"), update]).unwrap();
    let ramp = Load::Stages {
        unit: StageUnit::Rate,
        stages: vec![
            Stage {
                duration: Duration::from_millis(1500),
                to: 1000.0 / 3.0,
            },
            Stage {
                duration: Duration::new(2, 123_456_789),
                to: 1_234.567_890_123_456_7,
            },
        ],
        connections: 6,
    };
    let stop = Stop {
        requests: Some(100_000),
        duration: Some(Duration::from_secs(20)),
    };
    let cpu = crate::affinity::allowed_cpus()[0];
    Plan::builder(endpoint("http://127.0.0.1:8080/"), workload(ramp, stop))
        .mix(Some(mix))
        .arrival(Arrival::Poisson)
        .seed(u64::MAX - 7)
        .shard(Shard::new(2, 3).unwrap())
        .start_at(Some(
            std::time::UNIX_EPOCH + Duration::new(1_800_000_000, 987_654_321),
        ))
        .interval_histograms(true)
        .warmup(Duration::from_millis(250))
        .timeout(Duration::from_millis(2500))
        .threads(3)
        .cpus(vec![cpu])
        .expect(Expect {
            status: vec![StatusMatch::Class(2), StatusMatch::Code(304)],
            media_type: Some("text/plain".into()),
            body: Some(BodyMatch::Exact(b"Hello, World!".to_vec())),
        })
}

/// Pipelined POSTs on an open loop, checked by shape, over epoll.
fn pipelined() -> PlanBuilder {
    let open = Load::Open {
        rate: 0.1 + 0.2,
        connections: 4,
    };
    Plan::builder(
        endpoint("http://[::1]:9/q?a=1"),
        workload(open, for_secs(3)),
    )
    .pipeline(8)
    .request(RequestSpec {
        method: "POST".into(),
        headers: vec![("X-A".into(), "1".into()), ("X-B".into(), "".into())],
        body: (0..=255).collect(),
    })
    .expect(Expect {
        body: Some(BodyMatch::Shape {
            prefix: b"[{".to_vec(),
            suffix: b"}]".to_vec(),
        }),
        ..Expect::default()
    })
    .io(Io::Epoll)
    .seed(1)
}

/// HTTP/2 with 16 streams over TLS, unverified, sessions resumed.
fn h2() -> PlanBuilder {
    let closed = Load::Closed { connections: 2 };
    Plan::builder(
        endpoint("https://localhost:8443/json"),
        workload(closed, for_secs(1)),
    )
    .http2(Some(16))
    .tls(TlsOptions {
        verify: Verify::Insecure,
        client_cert: None,
        resume: true,
    })
    .seed(2)
}

/// WebSocket hold mode with pings, binary messages of 4 KiB.
fn ws() -> PlanBuilder {
    let closed = Load::Closed { connections: 3 };
    Plan::builder(
        endpoint("ws://127.0.0.1:9001/ws"),
        workload(closed, for_secs(2)),
    )
    .websocket(WsOptions {
        message_size: 4096,
        binary: true,
        hold: true,
        ping_every: Some(Duration::from_millis(250)),
    })
    .seed(3)
}

#[test]
fn every_input_comes_back_and_the_derived_parts_are_made_again() {
    for (name, builder) in [
        ("mix", mixed()),
        ("pipelined", pipelined()),
        ("h2", h2()),
        ("ws", ws()),
    ] {
        let plan = builder.build().unwrap();
        let plan = plan.with_progress_every(Duration::from_millis(7));
        let json = plan.to_json();
        assert!(!json.contains('\n'), "{name}: one line");
        let again = Plan::from_json(&json)
            .unwrap_or_else(|e| panic!("{name}: {e}\n{json}"))
            .build()
            .unwrap_or_else(|e| panic!("{name}: {e}\n{json}"));
        assert_eq!(again.to_json(), json, "{name}");
        assert_eq!(format!("{again:?}"), format!("{plan:?}"), "{name}");
        // The same as the derived plan every caller makes today.
        let rebuilt = plan.to_builder().build().unwrap();
        assert_eq!(format!("{again:?}"), format!("{rebuilt:?}"), "{name}");
    }
}

#[test]
fn the_derived_parts_are_what_the_inputs_make() {
    let plan = Plan::from_json(&mixed().build().unwrap().to_json())
        .unwrap()
        .build()
        .unwrap();
    assert_eq!(plan.workload().load().max_connections(), 6, "the whole");
    assert_eq!(plan.load().max_connections(), 2, "shard 2/3's share");
    assert_eq!(plan.stop().requests, Some(33_333));
    let h2 = Plan::from_json(&h2().build().unwrap().to_json())
        .unwrap()
        .build()
        .unwrap();
    assert!(h2.tls_client().is_some());
    assert_eq!(h2.http2_streams(), Some(16));
    let ws = Plan::from_json(&ws().build().unwrap().to_json())
        .unwrap()
        .build()
        .unwrap();
    assert_eq!(ws.version(), HttpVersion::WebSocket);
    assert_eq!(ws.ping_every(), Some(Duration::from_millis(250)));
}

/// The JSON of a valid plan with one part changed: `from` becomes `to`.
fn edited(from: &str, to: &str) -> String {
    let json = Plan::builder(
        endpoint("http://127.0.0.1:8080/"),
        workload(Load::Closed { connections: 2 }, for_secs(1)),
    )
    .threads(4)
    .build()
    .unwrap()
    .to_json();
    assert!(json.contains(from), "{from} in {json}");
    json.replacen(from, to, 1)
}

fn refusal(json: &str) -> PlanError {
    match Plan::from_json(json).and_then(PlanBuilder::build) {
        Ok(_) => panic!("accepted: {json}"),
        Err(e) => e,
    }
}

#[test]
fn a_workload_without_connections_is_refused_naming_the_field() {
    let e = refusal(&edited("\"connections\":2", "\"connections\":0"));
    assert_eq!(e.field(), PlanField::Connections, "{e}");
    assert_eq!(
        e.to_string(),
        "invalid value for connections: must be at least 1"
    );
}

#[test]
fn what_the_builders_refuse_is_refused_from_json() {
    let field = |from: &str, to: &str| refusal(&edited(from, to)).field();
    assert_eq!(
        field("\"requests\":null", "\"requests\":0"),
        PlanField::Requests
    );
    assert_eq!(field("\"threads\":4", "\"threads\":0"), PlanField::Threads);
    assert_eq!(
        field("\"threads\":", "\"x\":1,\"threads\":"),
        PlanField::Json
    );
    assert_eq!(
        field("\"pipeline\":1", "\"pipeline\":0"),
        PlanField::Pipeline
    );
    assert_eq!(
        field("\"shard\":\"1/1\"", "\"shard\":\"3/2\""),
        PlanField::Json
    );
    assert_eq!(
        field("\"status\":[]", "\"status\":[\"6xx\"]"),
        PlanField::Json
    );
    assert_eq!(
        field("\"version\":\"1.1\"", "\"version\":\"websocket\""),
        PlanField::Json
    );
    assert_eq!(
        field("\"version\":\"1.1\"", "\"version\":\"3\""),
        PlanField::Json
    );
    assert_eq!(field("\"io\":null", "\"io\":\"kqueue\""), PlanField::Json);
    assert_eq!(
        field("127.0.0.1:8080\"", "127.0.0.1:8081\""),
        PlanField::Url
    );
    assert_eq!(field("shootout-plan/1", "shootout-plan/2"), PlanField::Json);
    assert_eq!(
        field("\"method\":\"\"", "\"method\":\"G T\""),
        PlanField::Json
    );
    let kinds = r#""mix":[{"name":"a","weight":1,"path":"/q={5..1}","request":{"method":"","headers":[],"body":""},"expect":null}]"#;
    assert_eq!(field("\"mix\":null", kinds), PlanField::Mix);
    let unnamed = kinds.replace("{5..1}", "{1..5}").replace("\"a\"", "\"\"");
    assert_eq!(field("\"mix\":null", &unnamed), PlanField::Mix);
    assert_eq!(refusal("").field(), PlanField::Json);
    assert_eq!(
        refusal("{\"format\":\"shootout-plan/1\"}").field(),
        PlanField::Json
    );
}
