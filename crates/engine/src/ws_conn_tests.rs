//! `WsConn` against a scripted byte stream (every step of a session, each
//! fault it must name), then against a real echo server nobody here wrote
//! (`tungstenite`, in the testkit), over a blocking socket.

use super::*;
use crate::ws_frame::{mask, server_frame};
use crate::ws_handshake::answer_for;
use shootout_testkit::ws_echo::{EchoRules, WsEcho};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

fn job(kind: u16) -> Job {
    let now = Instant::now();
    Job {
        intended: now,
        sent_at: now,
        measured: true,
        deadline: now + Duration::from_secs(10),
        kind,
    }
}

fn message(host: &str, size: usize, text: bool) -> Arc<WsMessage> {
    let mut rng = fastrand::Rng::with_seed(7);
    Arc::new(WsMessage::new(host, "/ws", size, text, &mut rng).unwrap())
}

/// The client's frames in `bytes`, unmasked: (opcode, payload).
fn client_frames(bytes: &[u8]) -> Vec<(u8, Vec<u8>)> {
    let mut frames = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let b = &bytes[at..];
        assert_eq!(b[0] & 0xf0, 0x80, "FIN, no reserved bits");
        assert_eq!(b[1] & 0x80, 0x80, "every client frame is masked");
        let (len, head) = match b[1] & 0x7f {
            126 => (usize::from(u16::from_be_bytes([b[2], b[3]])), 4),
            127 => (
                u64::from_be_bytes(b[2..10].try_into().unwrap()) as usize,
                10,
            ),
            n => (usize::from(n), 2),
        };
        let key: [u8; 4] = b[head..head + 4].try_into().unwrap();
        let mut payload = b[head + 4..head + 4 + len].to_vec();
        mask(&mut payload, key, 0);
        frames.push((b[0] & 0x0f, payload));
        at += head + 4 + len;
    }
    frames
}

/// Takes what the session queued to write.
fn take(conn: &mut WsConn) -> Vec<u8> {
    let bytes = conn.pending().to_vec();
    conn.wrote(bytes.len());
    bytes
}

fn key_in(request: &[u8]) -> String {
    let text = std::str::from_utf8(request).unwrap();
    let key = text
        .lines()
        .find_map(|l| l.strip_prefix("Sec-WebSocket-Key: "));
    key.unwrap().to_string()
}

/// A session past its 101, with nothing pending.
fn opened(size: usize, text: bool, check: bool) -> WsConn {
    let mut conn = WsConn::new(message("h", size, text), check);
    let key = key_in(&take(&mut conn));
    conn.feed(&answer_for(&key)).unwrap();
    assert!(conn.is_open());
    conn
}

/// Sends one message and returns its payload as the server reads it.
fn sent(conn: &mut WsConn, kind: u16) -> Vec<u8> {
    conn.push(job(kind));
    let mut frames = client_frames(&take(conn));
    assert_eq!(frames.len(), 1);
    frames.remove(0).1
}

fn kinds(done: &[Finished]) -> Vec<u16> {
    done.iter().map(|f| f.job.kind).collect()
}

/// The upgrade with a message held back, a ping in the same bytes as the
/// 101, and three echoes in order: the session, open, after them.
fn three_echoes() -> WsConn {
    let mut conn = WsConn::new(message("127.0.0.1:9", 32, false), true);
    assert_eq!(
        (conn.room(4), conn.outstanding()),
        (1, 0),
        "1 before the 101"
    );
    conn.push(job(0));
    let request = take(&mut conn);
    assert!(
        request.starts_with(b"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:9\r\n")
            && request.ends_with(b"\r\n\r\n"),
        "nothing but the upgrade goes before the 101"
    );
    let mut answer = answer_for(&key_in(&request));
    answer.extend(server_frame(opcode::PING, true, b"hb"));
    for b in answer {
        conn.feed(&[b]).unwrap();
    }
    assert_eq!(conn.room(4), 4);
    conn.push(job(1));
    conn.push(job(2));
    let frames = client_frames(&take(&mut conn));
    assert_eq!(
        frames[1],
        (opcode::PONG, b"hb".to_vec()),
        "the held message, then the pong"
    );
    let sent: Vec<Vec<u8>> = frames
        .iter()
        .filter(|f| f.0 == opcode::BINARY)
        .map(|f| f.1.clone())
        .collect();
    assert_eq!(sent.len(), 3);
    for (i, m) in sent.iter().enumerate() {
        assert_eq!(m[..8], (i as u64).to_be_bytes(), "numbered");
        assert_eq!((m.len(), &m[8..]), (32, &sent[0][8..]), "the same filler");
    }
    // Three echoes, in order, in one read.
    let echoes: Vec<u8> = sent
        .iter()
        .flat_map(|m| server_frame(opcode::BINARY, true, m))
        .collect();
    assert_eq!(conn.outstanding(), 3);
    conn.feed(&echoes).unwrap();
    let done = std::mem::take(&mut conn.done);
    assert_eq!(kinds(&done), [0, 1, 2]);
    assert!(done
        .iter()
        .all(|f| f.passed && f.outcome.is_ok() && f.mismatch.is_none()));
    conn
}

#[test]
fn a_scripted_session_echoes_in_order() {
    let conn = three_echoes();
    assert_eq!(
        (conn.outstanding(), conn.front().map(|j| j.kind)),
        (0, None)
    );
}

#[test]
fn a_scripted_session_mismatches_pings_and_closes() {
    let mut conn = three_echoes();
    // A corrupted echo is a mismatch.
    let mut bad = sent(&mut conn, 3);
    bad[20] ^= 1;
    conn.feed(&server_frame(opcode::BINARY, true, &bad))
        .unwrap();
    let f = conn.done.pop().unwrap();
    assert!(!f.passed);
    let m = f.mismatch.unwrap();
    assert_eq!(
        (m.status, m.reason.as_str()),
        (
            101,
            "echo of message 3 differs at byte 20 (sent 32 bytes, got 32)"
        )
    );
    // Our ping, answered.
    conn.ping();
    let ping = client_frames(&take(&mut conn)).remove(0);
    assert_eq!(ping, (opcode::PING, 0u64.to_be_bytes().to_vec()));
    assert_eq!(conn.unanswered_pings(), 1);
    conn.feed(&server_frame(opcode::PONG, true, &ping.1))
        .unwrap();
    conn.feed(&server_frame(opcode::PONG, true, &ping.1))
        .unwrap();
    assert_eq!(
        (conn.pongs, conn.unanswered_pings()),
        (1, 0),
        "a second pong counts no more"
    );
    // The server closes with 1011 while a message awaits its echo.
    conn.push(job(4));
    take(&mut conn);
    let close = server_frame(opcode::CLOSE, true, &[0x03, 0xf3, b'o', b'o', b'p', b's']);
    assert_eq!(conn.feed(&close), Err(WsFail::Closed(1011)));
    assert_eq!(WsFail::Closed(1011).class(), ErrorClass::Closed);
    assert_eq!(conn.closes, [1011]);
    assert!(conn.is_closed());
    assert_eq!(conn.room(4), 0);
    let reply = client_frames(&take(&mut conn));
    assert_eq!(
        reply,
        [(opcode::CLOSE, 1011u16.to_be_bytes().to_vec())],
        "the close echoed"
    );
    assert_eq!(conn.drain().iter().map(|j| j.kind).collect::<Vec<_>>(), [4]);
    assert_eq!(
        conn.feed(&server_frame(opcode::BINARY, true, b"late")),
        Ok(()),
        "nothing is read after"
    );
}

#[test]
fn reordered_echoes_both_mismatch_and_unchecked_runs_pass_anything() {
    let mut conn = opened(16, false, true);
    let (a, b) = (sent(&mut conn, 0), sent(&mut conn, 1));
    conn.feed(
        &[
            server_frame(opcode::BINARY, true, &b),
            server_frame(opcode::BINARY, true, &a),
        ]
        .concat(),
    )
    .unwrap();
    assert!(conn.done.iter().all(|f| !f.passed), "{:?}", conn.done);
    assert!(conn.done[0]
        .mismatch
        .as_ref()
        .unwrap()
        .reason
        .contains("at byte 7"));
    let mut conn = opened(16, false, false);
    sent(&mut conn, 0);
    conn.feed(&server_frame(opcode::BINARY, true, b"anything"))
        .unwrap();
    assert!(conn.done[0].passed, "check off");
}

#[test]
fn an_echo_of_the_wrong_kind_or_length_mismatches() {
    let mut conn = opened(12, true, true);
    let m = sent(&mut conn, 0);
    conn.feed(&server_frame(opcode::BINARY, true, &m)).unwrap();
    let why = conn.done.pop().unwrap().mismatch.unwrap().reason;
    assert_eq!(why, "echo of message 0 came as binary, sent as text");
    let m = sent(&mut conn, 1);
    conn.feed(&server_frame(opcode::TEXT, true, &m[..11]))
        .unwrap();
    let why = conn.done.pop().unwrap().mismatch.unwrap().reason;
    assert_eq!(
        why,
        "echo of message 1 differs at byte 11 (sent 12 bytes, got 11)"
    );
}

#[test]
fn text_messages_are_printable_and_short_ones_use_a_short_counter() {
    let mut conn = opened(3, true, true);
    let got: Vec<Vec<u8>> = (0..18).map(|i| sent(&mut conn, i)).collect();
    assert_eq!(got[0], b"000");
    assert_eq!(got[17], b"011", "the low hex digits of 17");
    let mut conn = opened(100, true, true);
    let m = sent(&mut conn, 0);
    assert!(m.iter().all(|b| (b' '..=b'~').contains(b)), "{m:?}");
    assert_eq!(m[..8], *b"00000000");
    conn.feed(&server_frame(opcode::TEXT, true, &m)).unwrap();
    assert!(conn.done[0].passed);
    let mut conn = opened(2, false, true);
    assert_eq!(sent(&mut conn, 0), [0, 0]);
    assert_eq!(sent(&mut conn, 1), [0, 1]);
}

#[test]
fn message_sizes_are_1_byte_to_16_mib() {
    let mut rng = fastrand::Rng::with_seed(1);
    for size in [0, MAX_MESSAGE + 1] {
        let e = WsMessage::new("h", "/", size, false, &mut rng).unwrap_err();
        assert_eq!(e, WsSizeError(size));
    }
    for size in [1, MAX_MESSAGE] {
        assert_eq!(
            WsMessage::new("h", "/", size, true, &mut rng)
                .unwrap()
                .size(),
            size
        );
    }
}

#[test]
fn a_refused_or_false_upgrade_ends_the_session() {
    let mut conn = WsConn::new(message("h", 8, false), true);
    take(&mut conn);
    let refused = conn.feed(b"HTTP/1.1 403 Forbidden\r\n\r\n");
    assert_eq!(refused, Err(WsFail::Refused(403)));
    assert_eq!(WsFail::Refused(403).class(), ErrorClass::HandshakeRefused);
    assert!(conn.is_closed());
    let mut conn = WsConn::new(message("h", 8, false), true);
    take(&mut conn);
    let wrong = answer_for("dGhlIHNhbXBsZSBub25jZQ==");
    match conn.feed(&wrong) {
        Err(WsFail::Violation(why)) => assert!(why.contains("Sec-WebSocket-Accept"), "{why}"),
        other => panic!("{other:?}"),
    }
    // A new socket gets a new key; what the worker did not take stays.
    conn.closes.push(1001);
    let before = conn.key.clone();
    conn.reset();
    assert_ne!(conn.key, before);
    assert_eq!((conn.closes.as_slice(), conn.room(2)), (&[1001u16][..], 1));
}

#[test]
fn a_violation_queues_the_close_its_code_calls_for() {
    for (frame, code) in [
        (vec![0x82, 0x81, 1, 2, 3, 4, 5], code::PROTOCOL),
        (vec![0x81, 0x01, 0xff], code::INVALID_DATA),
    ] {
        let mut conn = opened(8, false, true);
        assert!(matches!(conn.feed(&frame), Err(WsFail::Violation(_))));
        assert_eq!(
            client_frames(conn.pending()),
            [(opcode::CLOSE, code.to_be_bytes().to_vec())]
        );
        assert!(conn.is_closed());
    }
    let mut conn = opened(8, false, true);
    let extra = conn.feed(&server_frame(opcode::BINARY, true, b"unasked!"));
    assert_eq!(
        extra,
        Err(WsFail::Violation(
            "a message when no message of ours awaited its echo"
        ))
    );
}

#[test]
fn our_close_waits_for_the_servers_and_an_eof_is_1006() {
    let mut conn = opened(8, false, true);
    conn.close(code::NORMAL);
    assert_eq!((conn.room(4), conn.is_closed()), (0, false));
    assert_eq!(
        client_frames(&take(&mut conn)),
        [(opcode::CLOSE, 1000u16.to_be_bytes().to_vec())]
    );
    conn.ping();
    assert!(conn.pending().is_empty(), "nothing after our close");
    conn.feed(&server_frame(opcode::CLOSE, true, &1000u16.to_be_bytes()))
        .unwrap();
    assert!(conn.is_closed() && conn.closes.is_empty() && conn.pending().is_empty());
    assert_eq!(conn.on_eof(), Ok(()));
    let mut conn = opened(8, false, true);
    assert_eq!(conn.on_eof(), Err(WsFail::Closed(1006)));
    assert_eq!(conn.closes, [1006]);
    let mut conn = WsConn::new(message("h", 8, false), true);
    assert_eq!(
        conn.on_eof(),
        Ok(()),
        "before the 101: the transport's read error"
    );
    // A close before the 101 sends nothing and just ends.
    let mut conn = WsConn::new(message("h", 8, false), true);
    take(&mut conn);
    conn.close(code::NORMAL);
    assert!(conn.is_closed() && conn.pending().is_empty());
}

/// The end of a run: the messages awaiting their echo are drained (cut),
/// then our close sent; their echoes, still on the way, are let be (no
/// violation, nothing done) until the server's close ends the session,
/// which is no close of the server's to count. Each upgrade is counted
/// once, however many messages follow it.
#[test]
fn echoes_after_the_drain_before_our_close_are_let_be() {
    let mut conn = opened(8, false, true);
    let payloads = [sent(&mut conn, 0), sent(&mut conn, 1)];
    assert_eq!(conn.drain().len(), 2);
    conn.close(code::NORMAL);
    assert!(conn.is_closing());
    for payload in &payloads {
        let echo = server_frame(opcode::BINARY, true, payload);
        assert_eq!(conn.feed(&echo), Ok(()));
    }
    assert!(conn.done.is_empty() && conn.is_closing());
    conn.feed(&server_frame(opcode::CLOSE, true, &1000u16.to_be_bytes()))
        .unwrap();
    assert!(conn.is_closed() && !conn.is_closing() && conn.closes.is_empty());
    assert_eq!(conn.upgrades, 1);
    conn.reset();
    assert_eq!(conn.upgrades, 1, "kept for the worker across sockets");
}

/// Our close and the server's own crossed: its close (1011) is counted as
/// its close, where its 1000 would only be the answer to ours.
#[test]
fn a_servers_own_close_crossing_ours_is_counted() {
    let mut conn = opened(8, false, true);
    conn.close(code::NORMAL);
    conn.feed(&server_frame(opcode::CLOSE, true, &1011u16.to_be_bytes()))
        .unwrap();
    assert!(conn.is_closed());
    assert_eq!(conn.closes, [1011]);
}

// ---- against a real echo server ----

/// A session on a socket to `server`, driven by blocking reads and writes.
struct Driven {
    conn: WsConn,
    sock: TcpStream,
    buf: Vec<u8>,
}

impl Driven {
    fn connect(server: &WsEcho, size: usize, text: bool) -> Driven {
        let sock = TcpStream::connect(server.addr()).unwrap();
        sock.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let host = server.addr().to_string();
        let conn = WsConn::new(message(&host, size, text), true);
        Driven {
            conn,
            sock,
            buf: vec![0; 64 << 10],
        }
    }

    /// Writes what is pending, then reads once and feeds it.
    fn step(&mut self) -> Result<(), WsFail> {
        let out = self.conn.pending().to_vec();
        self.sock.write_all(&out).unwrap();
        self.conn.wrote(out.len());
        let n = self
            .sock
            .read(&mut self.buf)
            .expect("the server answers within 5 s");
        if n == 0 {
            return self.conn.on_eof();
        }
        self.conn.feed(&self.buf[..n])
    }

    /// Sends `total` messages, `depth` at a time, until each is echoed or
    /// the session fails; returns the echoes.
    fn echo(&mut self, total: u16, depth: usize) -> (Vec<Finished>, Result<(), WsFail>) {
        let (mut pushed, mut done) = (0, Vec::new());
        while done.len() < usize::from(total) {
            while pushed < total && self.conn.outstanding() < self.conn.room(depth) {
                self.conn.push(job(pushed));
                pushed += 1;
            }
            let result = self.step();
            done.append(&mut self.conn.done);
            if result.is_err() {
                return (done, result);
            }
        }
        (done, Ok(()))
    }

    /// Closes with 1000 and reads until the server's close came.
    fn close(&mut self) {
        self.conn.close(code::NORMAL);
        while !self.conn.is_closed() {
            self.step().unwrap();
        }
        assert!(self.conn.closes.is_empty());
    }
}

#[test]
fn a_real_server_echoes_a_thousand_messages_in_order() {
    let server = WsEcho::start(EchoRules::default()).unwrap();
    let mut d = Driven::connect(&server, 1000, false);
    let (done, result) = d.echo(1000, 4);
    assert_eq!(result, Ok(()));
    assert_eq!(kinds(&done), (0..1000).collect::<Vec<u16>>(), "FIFO");
    assert!(
        done.iter().all(|f| f.passed),
        "{:?}",
        done.iter().find(|f| !f.passed)
    );
    // A ping is answered before the echo that follows it.
    d.conn.ping();
    let (_, result) = d.echo(1, 1);
    assert_eq!(
        (result, d.conn.pongs, d.conn.unanswered_pings()),
        (Ok(()), 1, 0)
    );
    d.close();
    // Text, and a message long enough for a 64-bit length.
    let mut d = Driven::connect(&server, 70_000, true);
    let (done, result) = d.echo(3, 2);
    assert_eq!(result, Ok(()));
    assert!(done.iter().all(|f| f.passed));
    d.close();
}

#[test]
fn a_real_server_corrupting_one_echo_in_100_is_caught_exactly() {
    let rules = EchoRules {
        corrupt_every: Some(100),
        ..EchoRules::default()
    };
    let server = WsEcho::start(rules).unwrap();
    let mut d = Driven::connect(&server, 64, true);
    let (done, result) = d.echo(1000, 8);
    assert_eq!(result, Ok(()));
    let bad: Vec<u16> = done
        .iter()
        .filter(|f| !f.passed)
        .map(|f| f.job.kind)
        .collect();
    assert_eq!(bad, (1..=10).map(|i| i * 100 - 1).collect::<Vec<u16>>());
    let m = done[99].mismatch.as_ref().unwrap();
    assert_eq!(
        m.reason,
        "echo of message 99 differs at byte 63 (sent 64 bytes, got 64)"
    );
    let corrupted = server
        .counts()
        .corrupted
        .load(std::sync::atomic::Ordering::Relaxed);
    assert_eq!(corrupted, 10);
}

#[test]
fn a_real_server_closing_with_1011_is_recorded() {
    let rules = EchoRules {
        close_after: Some((50, 1011)),
        ..EchoRules::default()
    };
    let server = WsEcho::start(rules).unwrap();
    let mut d = Driven::connect(&server, 16, false);
    let (done, mut result) = d.echo(50, 1);
    assert!(done.iter().all(|f| f.passed) && done.len() == 50);
    if result.is_ok() {
        // The close did not come in the same read as the last echo.
        result = d.step();
    }
    assert_eq!(result, Err(WsFail::Closed(1011)));
    assert_eq!(d.conn.closes, [1011]);
    assert_eq!((d.conn.room(1), d.conn.outstanding()), (0, 0));
    // The close echoed back ends the server's side too: it hangs up.
    let reply = d.conn.pending().to_vec();
    d.sock.write_all(&reply).unwrap();
    assert_eq!(d.sock.read(&mut d.buf).unwrap(), 0);
}

#[test]
fn a_real_server_that_never_pongs_leaves_pings_unanswered() {
    let rules = EchoRules {
        no_pongs: true,
        ..EchoRules::default()
    };
    let server = WsEcho::start(rules).unwrap();
    let mut d = Driven::connect(&server, 16, false);
    d.echo(1, 1).1.unwrap();
    d.conn.ping();
    d.conn.ping();
    let (done, result) = d.echo(1, 1);
    assert_eq!(
        (done.len(), result),
        (1, Ok(())),
        "the echo after the pings came"
    );
    assert_eq!((d.conn.pongs, d.conn.unanswered_pings()), (0, 2));
    d.close();
}
