//! Property tests of the response reader (a child module of `response`, so
//! they see its private state). Two properties:
//!
//! - **Arbitrary bytes, in arbitrary pieces, never panic and never stall**:
//!   every `feed` returns, a completed response consumed at least one byte of
//!   the piece that completed it, and an incomplete head never grows past
//!   `MAX_HEAD`. Pure noise rarely gets past the status line, so two more
//!   inputs aim deeper: noise after a valid head (the framing machines) and
//!   a soup of HTTP fragments.
//! - **Splitting never changes the answer**: a valid response
//!   (Content-Length, chunked with extensions and trailers, close-delimited,
//!   HTTP/1.0, 1xx interim responses first, HEAD, 204/304), optionally
//!   followed by a pipelined response, gives the same status, keep-alive and
//!   length on the wire whether it arrives whole or cut at arbitrary points,
//!   and those match what was generated. The reader counts body bytes without
//!   reporting them, so the body is checked through the length: the response
//!   ends exactly where its generated body ends (`extra` is the pipelined
//!   tail), which holds only if every body byte was counted once.
//!
//! - **Pipelined responses read in order**: several valid responses back to
//!   back, cut at arbitrary points and fed with each response's leftover
//!   bytes going to the next (as a connection does), each end where
//!   generated.
//!
//! Case counts are bounded so `cargo test` stays fast; a failure is shrunk
//! and printed, and each bug found gets a named regression test in `tests`.

use super::*;
use proptest::prelude::*;
use proptest::test_runner::Config;

/// The engine's configuration, with time to shrink a looping input.
fn config(cases: u32) -> Config {
    Config {
        // A looping input costs `bounded`'s limit per shrinking step.
        max_shrink_time: 30_000,
        ..crate::props::config(cases)
    }
}

/// What feeding a whole input produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// A whole response: its status, keep-alive and bytes on the wire.
    Done {
        status: u16,
        keep_alive: bool,
        len: usize,
    },
    Failed(ReadFailure),
    /// Everything fed, response not whole, and the peer did not close.
    Pending,
}

/// Cuts `wire` at `cuts` (positions taken modulo its length), sorted.
fn pieces<'a>(wire: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
    let mut at: Vec<usize> = cuts
        .iter()
        .map(|c| if wire.is_empty() { 0 } else { c % wire.len() })
        .collect();
    at.push(0);
    at.push(wire.len());
    at.sort_unstable();
    at.dedup();
    at.windows(2).map(|w| &wire[w[0]..w[1]]).collect()
}

/// Feeds the pieces of one response in order, then (when `eof`) closes.
/// Checks the invariants every feed must keep, whatever the bytes.
fn feed_pieces(r: &mut ResponseReader, pieces: &[&[u8]], eof: bool) -> Outcome {
    let mut offset = 0;
    for piece in pieces {
        match r.feed(piece) {
            Ok(Some(done)) => {
                assert!(
                    done.extra < piece.len(),
                    "a response completed without consuming any byte of the piece that completed it"
                );
                return Outcome::Done {
                    status: done.status,
                    keep_alive: done.keep_alive,
                    len: offset + piece.len() - done.extra,
                };
            }
            Ok(None) => {
                assert!(r.head.len() <= MAX_HEAD, "head buffer grew past MAX_HEAD");
            }
            Err(e) => return Outcome::Failed(e),
        }
        offset += piece.len();
    }
    if !eof {
        return Outcome::Pending;
    }
    match r.on_eof() {
        Ok(done) => Outcome::Done {
            status: done.status,
            keep_alive: done.keep_alive,
            len: offset,
        },
        Err(e) => Outcome::Failed(e),
    }
}

/// Reads responses back to back from noise, as a connection that kept
/// parsing after each one would: every completion must make progress, so
/// the number of responses is bounded by the number of bytes.
fn read_all_noise(wire: &[u8], cuts: &[usize], head_request: bool) {
    let mut r = ResponseReader::new(head_request, None);
    let mut rest = wire;
    let mut responses = 0;
    while !rest.is_empty() {
        r.reset();
        match feed_pieces(&mut r, &pieces(rest, cuts), false) {
            Outcome::Done { len, .. } => {
                assert!(len > 0 && len <= rest.len());
                rest = &rest[len..];
                responses += 1;
                assert!(responses <= wire.len(), "no progress");
            }
            Outcome::Failed(_) | Outcome::Pending => break,
        }
    }
    let _ = r.on_eof();
}

/// Heads the noise is put behind, to reach each framing state machine.
const HEADS: &[&[u8]] = &[
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\n",
    b"HTTP/1.0 200 OK\r\n\r\n",
    b"HTTP/1.1 100 Continue\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;a=b\r\nhello\r\n",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n",
];

/// Fragments of HTTP that a soup is made of.
const FRAGMENTS: &[&[u8]] = &[
    b"HTTP/1.1 ",
    b"HTTP/1.0 ",
    b"200 OK",
    b"100 Continue",
    b"204",
    b"\r\n",
    b"\r",
    b"\n",
    b"Content-Length: ",
    b"Transfer-Encoding: chunked",
    b"Connection: close",
    b"0",
    b"5",
    b"a",
    b"F",
    b";",
    b"=",
    b": ",
    b" ",
    b"hello",
    b"-1",
    b"99999999999999999999",
    b"fffffffffffffffff",
];

fn soup() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop::sample::select(FRAGMENTS), 0..40).prop_map(|f| f.concat())
}

fn noise() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        1 => prop::collection::vec(any::<u8>(), 0..600),
        1 => (
            prop::sample::select(HEADS),
            prop::collection::vec(any::<u8>(), 0..300)
        )
            .prop_map(|(h, n)| [h, &n[..]].concat()),
        2 => (prop::sample::select(HEADS), soup()).prop_map(|(h, s)| [h, &s[..]].concat()),
        1 => soup(),
    ]
}

fn cuts() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(any::<usize>(), 0..12)
}

/// Runs `f` on its own thread and fails if it has not returned in 5 s (a
/// case takes well under a millisecond), so a reader that loops fails the
/// property instead of hanging `cargo test`. The looping thread is leaked.
fn bounded(f: impl FnOnce() + Send + 'static) {
    let (tx, rx) = std::sync::mpsc::channel();
    let thread = std::thread::spawn(move || {
        f();
        let _ = tx.send(());
    });
    match rx.recv_timeout(std::time::Duration::from_secs(5)) {
        Ok(()) => {}
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            if let Err(panic) = thread.join() {
                std::panic::resume_unwind(panic);
            }
        }
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            panic!("the reader did not return within 5 s: it loops")
        }
    }
}

proptest! {
    #![proptest_config(config(512))]

    #[test]
    fn noise_never_panics_or_stalls(wire in noise(), cuts in cuts(), head in any::<bool>()) {
        bounded(move || {
            read_all_noise(&wire, &cuts, head);
            read_all_noise(&wire, &[], head);
        });
    }
}

// ---- valid responses ----

#[derive(Debug, Clone)]
enum Framing {
    Length,
    /// Chunks of the body, each with its extension, then trailer lines.
    Chunked {
        sizes: Vec<usize>,
        exts: Vec<String>,
        upper: bool,
        zeros: usize,
        trailers: Vec<String>,
    },
    Close,
}

#[derive(Debug, Clone)]
struct Spec {
    interim: Vec<u16>,
    http10: bool,
    status: u16,
    /// `Connection: close` (1.1) or `Connection: keep-alive` (1.0).
    conn_header: bool,
    head_request: bool,
    extra_headers: Vec<(String, String)>,
    framing: Framing,
    body: Vec<u8>,
    /// Bytes after the response (a pipelined one); never with `Close`.
    tail: Vec<u8>,
}

/// A valid response's bytes and what reading it must give.
#[derive(Debug)]
struct Wire {
    bytes: Vec<u8>,
    status: u16,
    keep_alive: bool,
    /// Length of the response itself (the tail excluded).
    len: usize,
}

fn render(s: &Spec) -> Wire {
    let mut w = Vec::new();
    let version = if s.http10 { "HTTP/1.0" } else { "HTTP/1.1" };
    for code in &s.interim {
        w.extend_from_slice(
            format!("{version} {code} Interim\r\nX-Hint: {code}\r\n\r\n").as_bytes(),
        );
    }
    w.extend_from_slice(format!("{version} {} Whatever\r\n", s.status).as_bytes());
    for (k, v) in &s.extra_headers {
        w.extend_from_slice(format!("{k}: {v}\r\n").as_bytes());
    }
    if s.conn_header {
        let token = if s.http10 { "keep-alive" } else { "close" };
        w.extend_from_slice(format!("Connection: {token}\r\n").as_bytes());
    }
    let no_body = s.head_request || s.status == 204 || s.status == 304;
    let mut keep_alive = s.http10 == s.conn_header;
    match &s.framing {
        Framing::Length => {
            w.extend_from_slice(format!("content-LENGTH: {}\r\n\r\n", s.body.len()).as_bytes());
            if !no_body {
                w.extend_from_slice(&s.body);
            }
        }
        Framing::Chunked {
            sizes,
            exts,
            upper,
            zeros,
            trailers,
        } => {
            w.extend_from_slice(b"Transfer-Encoding: gzip, chunked\r\n\r\n");
            if !no_body {
                let mut at = 0;
                let size_line = |n: usize, ext: &str| {
                    let hex = if *upper {
                        format!("{n:X}")
                    } else {
                        format!("{n:x}")
                    };
                    format!("{}{hex}{ext}\r\n", "0".repeat(*zeros))
                };
                for (i, &n) in sizes.iter().enumerate() {
                    let ext = exts.get(i).map_or("", String::as_str);
                    w.extend_from_slice(size_line(n, ext).as_bytes());
                    w.extend_from_slice(&s.body[at..at + n]);
                    w.extend_from_slice(b"\r\n");
                    at += n;
                }
                w.extend_from_slice(
                    size_line(0, exts.last().map_or("", String::as_str)).as_bytes(),
                );
                for t in trailers {
                    w.extend_from_slice(t.as_bytes());
                    w.extend_from_slice(b"\r\n");
                }
                w.extend_from_slice(b"\r\n");
            }
        }
        Framing::Close => {
            w.extend_from_slice(b"\r\n");
            if !no_body {
                w.extend_from_slice(&s.body);
                keep_alive = false;
            }
        }
    }
    let len = w.len();
    w.extend_from_slice(&s.tail);
    Wire {
        bytes: w,
        status: s.status,
        keep_alive,
        len,
    }
}

fn token() -> impl Strategy<Value = String> {
    "[A-Za-z][A-Za-z0-9-]{0,8}"
}

fn chunk_ext() -> impl Strategy<Value = String> {
    // RFC 9112 7.1.1: *( BWS ";" BWS name [ BWS "=" BWS value ] ), the value
    // a token or a quoted string.
    let one = (
        prop::sample::select(&["", " ", "\t"][..]),
        token(),
        prop::option::of(prop_oneof![
            token(),
            "\"[a-z ;=]{0,6}\"".prop_map(String::from)
        ]),
    )
        .prop_map(|(bws, name, value)| match value {
            Some(v) => format!("{bws};{name}={v}"),
            None => format!("{bws};{name}"),
        });
    prop::collection::vec(one, 0..3).prop_map(|e| e.concat())
}

/// Splits `len` into chunk sizes.
fn chunk_sizes(len: usize, cuts: &[usize]) -> Vec<usize> {
    let mut at: Vec<usize> = cuts.iter().map(|c| c % (len + 1)).collect();
    at.push(0);
    at.push(len);
    at.sort_unstable();
    at.dedup();
    at.windows(2).map(|w| w[1] - w[0]).collect()
}

fn framing(len: usize) -> impl Strategy<Value = Framing> {
    let chunked = (
        prop::collection::vec(any::<usize>(), 0..5),
        prop::collection::vec(chunk_ext(), 0..6),
        any::<bool>(),
        0usize..3,
        prop::collection::vec(
            (token(), "[ -~]{0,10}").prop_map(|(k, v)| format!("{k}: {v}")),
            0..3,
        ),
    )
        .prop_map(
            move |(cuts, exts, upper, zeros, trailers)| Framing::Chunked {
                sizes: chunk_sizes(len, &cuts),
                exts,
                upper,
                zeros,
                trailers,
            },
        );
    prop_oneof![Just(Framing::Length), chunked, Just(Framing::Close)]
}

fn status() -> impl Strategy<Value = u16> {
    prop_oneof![
        4 => 200u16..600,
        1 => prop::sample::select(&[200u16, 204, 304][..]),
    ]
}

fn interim() -> impl Strategy<Value = u16> {
    prop::sample::select(&[100u16, 102, 103, 199][..])
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        prop::collection::vec(any::<u8>(), 0..400),
        prop::collection::vec(interim(), 0..3),
        any::<bool>(),
        status(),
        any::<bool>(),
        prop::bool::weighted(0.1),
        prop::collection::vec((token(), "[ -~]{0,20}"), 0..4),
        prop_oneof![
            Just(Vec::new()),
            Just(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".to_vec()),
            prop::collection::vec(any::<u8>(), 1..20),
        ],
    )
        .prop_flat_map(
            |(body, interim, http10, status, conn_header, head_request, headers, tail)| {
                framing(body.len()).prop_map(move |framing| {
                    let extra_headers = headers
                        .iter()
                        // The framing headers are the generator's to write.
                        .filter(|(k, _)| {
                            !["content-length", "transfer-encoding", "connection"]
                                .contains(&k.to_ascii_lowercase().as_str())
                        })
                        .map(|(k, v)| (k.clone(), v.trim().to_string()))
                        .collect();
                    let no_body = head_request || status == 204 || status == 304;
                    let tail = if matches!(framing, Framing::Close) && !no_body {
                        Vec::new()
                    } else {
                        tail.clone()
                    };
                    Spec {
                        interim: interim.clone(),
                        http10,
                        status,
                        conn_header,
                        head_request,
                        extra_headers,
                        framing,
                        body: body.clone(),
                        tail,
                    }
                })
            },
        )
}

proptest! {
    #![proptest_config(config(512))]

    #[test]
    fn any_split_reads_like_the_whole(s in spec(), cuts in cuts()) {
        let wire = render(&s);
        let expected = Outcome::Done {
            status: wire.status,
            keep_alive: wire.keep_alive,
            len: wire.len,
        };
        // Close-delimited bodies end at EOF; everything else must end by itself.
        let eof = wire.len == wire.bytes.len();
        let whole = feed_pieces(&mut ResponseReader::new(s.head_request, None), &[&wire.bytes], eof);
        prop_assert_eq!(whole, expected, "whole: {:?}", String::from_utf8_lossy(&wire.bytes));
        let split = feed_pieces(
            &mut ResponseReader::new(s.head_request, None),
            &pieces(&wire.bytes, &cuts),
            eof,
        );
        prop_assert_eq!(split, expected, "split: {:?}", String::from_utf8_lossy(&wire.bytes));
    }

    /// A response cut short never completes, whatever the split.
    #[test]
    fn truncated_never_completes(s in spec(), cut in any::<usize>(), cuts in cuts()) {
        let wire = render(&s);
        let short = &wire.bytes[..cut % wire.len];
        let got = feed_pieces(&mut ResponseReader::new(s.head_request, None), &pieces(short, &cuts), false);
        prop_assert_eq!(got, Outcome::Pending, "{:?}", String::from_utf8_lossy(short));
    }
}

/// Pipelined responses back to back, as one connection receives them: the
/// reader is fed each piece and, after every whole response, the bytes left
/// over (`extra`), exactly as the connection does. Returns where each
/// response ended in the stream, with its status and keep-alive.
fn read_stream(r: &mut ResponseReader, pieces: &[&[u8]]) -> Vec<(u16, bool, usize)> {
    let mut got = Vec::new();
    let mut offset = 0;
    for piece in pieces {
        let mut rest: &[u8] = piece;
        loop {
            match r.feed(rest) {
                Ok(Some(done)) => {
                    let used = rest.len() - done.extra;
                    assert!(used > 0, "a response completed on no bytes");
                    offset += used;
                    got.push((done.status, done.keep_alive, offset));
                    rest = &rest[used..];
                    if rest.is_empty() {
                        break;
                    }
                }
                Ok(None) => {
                    offset += rest.len();
                    break;
                }
                Err(e) => panic!("{e:?} at byte {offset}"),
            }
        }
    }
    got
}

/// Two to five responses for one connection: no close-delimited body (it
/// would end the stream), all for the same request method.
fn stream() -> impl Strategy<Value = Vec<Spec>> {
    prop::collection::vec(spec(), 2..6).prop_map(|mut specs| {
        let head_request = specs[0].head_request;
        for s in &mut specs {
            s.head_request = head_request;
            s.tail.clear();
            if matches!(s.framing, Framing::Close) {
                s.framing = Framing::Length;
            }
        }
        specs
    })
}

proptest! {
    #![proptest_config(config(256))]

    /// Several responses in one buffer, cut at arbitrary points (a cut may
    /// fall anywhere in any of them, or several into one), read one after
    /// another like the whole: each ends where it was generated to end.
    #[test]
    fn pipelined_responses_read_in_order_whatever_the_split(specs in stream(), cuts in cuts()) {
        let mut bytes = Vec::new();
        let mut expected = Vec::new();
        for s in &specs {
            let wire = render(s);
            bytes.extend_from_slice(&wire.bytes);
            expected.push((wire.status, wire.keep_alive, bytes.len()));
        }
        let head = specs[0].head_request;
        let whole = read_stream(&mut ResponseReader::new(head, None), &[&bytes]);
        prop_assert_eq!(&whole, &expected, "whole: {:?}", String::from_utf8_lossy(&bytes));
        let split = read_stream(&mut ResponseReader::new(head, None), &pieces(&bytes, &cuts));
        prop_assert_eq!(&split, &expected, "split: {:?}", String::from_utf8_lossy(&bytes));
    }
}

// ---- the streaming checker against `Expect::check` ----

/// How a test derives the expectations from the response it generated, so
/// that both passing and each kind of failing response are common.
#[derive(Debug, Clone)]
struct ExpectRecipe {
    /// 0 none, 1 the status, 2 its class, 3 another code, 4 another class.
    status: u8,
    other_status: u16,
    /// The Content-Type header sent, if any.
    content_type: Option<&'static str>,
    /// 0 none, 1 a prefix of the header sent, 2 another type.
    media: u8,
    /// 0 none, 1 exact, 2 one byte changed, 3 cut, 4 extended, 5 the
    /// body's own shape, 6 a shape from `[]{}` and whitespace.
    body: u8,
    at: usize,
    cut: usize,
    extra: Vec<u8>,
    /// Replace the body with one rich in brackets and trailing whitespace.
    ws_body: Option<Vec<u8>>,
}

fn ws_alphabet() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop::sample::select(&b"[]{}ab \t\r\n\x0c"[..]), 0..40)
}

fn recipe() -> impl Strategy<Value = ExpectRecipe> {
    let types = &[
        "text/plain",
        "text/plain; charset=utf-8",
        " TEXT/Plain",
        "application/json",
    ][..];
    (
        (0u8..5, 100u16..600),
        (prop::option::of(prop::sample::select(types)), 0u8..3),
        (0u8..7, any::<usize>(), any::<usize>()),
        ws_alphabet(),
        prop::option::weighted(0.4, ws_alphabet()),
    )
        .prop_map(
            |((status, other_status), (content_type, media), (body, at, cut), extra, ws_body)| {
                ExpectRecipe {
                    status,
                    other_status,
                    content_type,
                    media,
                    body,
                    at,
                    cut,
                    extra,
                    ws_body,
                }
            },
        )
}

/// Applies the recipe: the response to send (spec) and what to expect of it.
fn with_expect(mut s: Spec, r: &ExpectRecipe) -> (Spec, Expect) {
    use crate::expect::{BodyMatch, StatusMatch};
    if let Some(body) = &r.ws_body {
        s.body = body.clone();
        if let Framing::Chunked { sizes, .. } = &mut s.framing {
            *sizes = chunk_sizes(body.len(), &[r.cut, r.at]);
        }
    }
    s.extra_headers
        .retain(|(k, _)| !k.eq_ignore_ascii_case("content-type"));
    if let Some(ct) = r.content_type {
        s.extra_headers
            .insert(0, ("Content-Type".into(), ct.into()));
    }
    let status = match r.status {
        1 => vec![StatusMatch::Code(s.status)],
        2 => vec![StatusMatch::Class((s.status / 100) as u8)],
        3 => vec![StatusMatch::Code(r.other_status), StatusMatch::Code(204)],
        4 => vec![StatusMatch::Class((r.other_status / 100) as u8)],
        _ => vec![],
    };
    let media_type = match (r.media, r.content_type) {
        (1, Some(ct)) => Some(ct.trim()[..ct.trim().len().min(10)].to_string()),
        (1, None) | (2, _) => Some("application/json".to_string()),
        _ => None,
    };
    let b = &s.body;
    let at = |n: usize| if b.is_empty() { 0 } else { n % b.len() };
    let body = match r.body {
        1 => Some(BodyMatch::Exact(b.clone())),
        2 if !b.is_empty() => {
            let mut w = b.clone();
            w[at(r.at)] ^= 0x20;
            Some(BodyMatch::Exact(w))
        }
        3 => Some(BodyMatch::Exact(b[..at(r.cut)].to_vec())),
        4 => Some(BodyMatch::Exact([&b[..], &r.extra[..]].concat())),
        5 => {
            let trimmed = b.trim_ascii_end();
            // The suffix may overlap the prefix: then only a longer body fits.
            let p = at(r.at);
            let from = r.cut % (trimmed.len() + 1);
            Some(BodyMatch::Shape {
                prefix: b[..p].to_vec(),
                suffix: trimmed[from..].to_vec(),
            })
        }
        6 => {
            let half = r.extra.len() / 2;
            Some(BodyMatch::Shape {
                prefix: r.extra[..half.min(2)].to_vec(),
                suffix: r.extra[half..].trim_ascii_end().to_vec(),
            })
        }
        _ => None,
    };
    let expect = Expect {
        status,
        media_type,
        body,
    };
    (s, expect)
}

/// Reads the response through a checker; the verdict on the whole response.
fn streamed_verdict(
    s: &Spec,
    expect: &Expect,
    pieces: &[&[u8]],
    eof: bool,
) -> Option<Option<Mismatch>> {
    let shared = std::sync::Arc::new(expect.clone());
    let mut r = ResponseReader::new(s.head_request, Checker::for_expect(&shared));
    match feed_pieces(&mut r, pieces, eof) {
        Outcome::Done { .. } => {}
        _ => return None,
    }
    let mismatch = r.mismatch();
    // `passed` is what the worker counts by; it must agree with the details.
    assert_eq!(r.passed(), mismatch.is_none());
    Some(mismatch)
}

use crate::expect::{Expect, Mismatch};

proptest! {
    #![proptest_config(config(1024))]

    /// The streaming checker, fed a response cut anywhere, gives the verdict
    /// (and the very same `Mismatch`) that `Expect::check` gives on the
    /// whole response.
    #[test]
    fn streaming_check_agrees_with_the_reference(s in spec(), r in recipe(), cuts in cuts()) {
        let (s, expect) = with_expect(s, &r);
        let wire = render(&s);
        let eof = wire.len == wire.bytes.len();
        let no_body = s.head_request || s.status == 204 || s.status == 304;
        let body: &[u8] = if no_body { b"" } else { &s.body };
        let content_type = r.content_type.map(|c| c.trim().as_bytes());
        let want = Some(expect.check(s.status, content_type, body).err());
        let whole = streamed_verdict(&s, &expect, &[&wire.bytes], eof);
        prop_assert_eq!(&whole, &want, "whole, expect {:?}", expect);
        let split = streamed_verdict(&s, &expect, &pieces(&wire.bytes, &cuts), eof);
        prop_assert_eq!(&split, &want, "split, expect {:?}", expect);
    }
}
