//! `shootout load --http2 -m POST --body-file F` against the strict HTTP/2
//! server of `shootout-testkit`: 1,000-byte bodies against an initial
//! stream window of 100, and of 0 with every byte granted late, complete
//! with exact counts and no rule broken (the server would have recorded
//! it and ended the connection with GOAWAY).

#![allow(clippy::unwrap_used)]

mod common;

use common::{shootout, stderr};
use serde_json::Value;
use shootout_testkit::h2_server::{H2Server, Rules};
use std::time::Duration;

#[test]
fn post_bodies_wait_for_the_servers_window() {
    let dir = std::env::temp_dir().join(format!("h2_rules_cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let body = dir.join("body.bin");
    std::fs::write(&body, vec![b'x'; 1000]).unwrap();
    for window in [100, 0] {
        let server = H2Server::start(Rules {
            initial_window: window,
            body_len: 1000,
            update_delay: Duration::from_millis(3),
            stream_step: 250,
            ..Rules::default()
        })
        .unwrap();
        let out = shootout(&[
            "load",
            "--http2",
            "--streams",
            "8",
            "-c",
            "2",
            "-n",
            "120",
            "-m",
            "POST",
            "--body-file",
            body.to_str().unwrap(),
            "-o",
            "json",
            &server.url(),
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let json: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            (
                json["requests"]["sent"].as_u64(),
                json["requests"]["ok"].as_u64()
            ),
            (Some(120), Some(120)),
            "window {window}: {json}"
        );
        let seen = server.seen();
        assert_eq!(seen.violations, Vec::<String>::new(), "window {window}");
        assert_eq!((seen.answered, seen.body_bytes), (120, 120_000), "{seen:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
