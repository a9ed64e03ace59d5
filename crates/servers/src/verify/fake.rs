//! In-process HTTP servers for the verifier's tests: a spec-compliant
//! handler, and a harness that serves any handler on 127.0.0.1 port 0,
//! either one thread per connection or strictly one connection at a time.
//! The database routes are in `db_fake`; here they answer 503.
//! Connections are kept alive unless the request or the reply says close.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How a fake response is framed on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    Length,
    Chunked,
    /// No framing header: the body ends when the connection closes.
    Unframed,
}

/// What a fake does with the connection after a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// HTTP/1.1 rules: keep alive unless the request said close.
    Normal,
    /// Close after every response (and say so).
    AlwaysClose,
    /// Close after every response without saying so.
    SilentClose,
    /// Keep the connection open even when the request said close.
    IgnoreClose,
}

/// The `Date` a fake sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DateHeader {
    /// The time of the response, as RFC 9110 spells it.
    Now,
    Missing,
    /// One value for good, like a date cached at start.
    Frozen(&'static str),
}

/// A fake response.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub content_type: Option<&'static str>,
    pub body: Vec<u8>,
    pub wire: Wire,
    /// Slept before answering.
    pub delay: Duration,
    pub keep: Keep,
    /// Send `Server: fake`.
    pub server: bool,
    pub date: DateHeader,
}

impl Reply {
    pub fn new(status: u16, content_type: &'static str, body: impl Into<Vec<u8>>) -> Reply {
        Reply {
            status,
            content_type: Some(content_type),
            body: body.into(),
            wire: Wire::Length,
            delay: Duration::ZERO,
            keep: Keep::Normal,
            server: true,
            date: DateHeader::Now,
        }
    }

    pub fn json(body: impl Into<Vec<u8>>) -> Reply {
        Reply::new(200, "application/json; charset=utf-8", body)
    }

    pub fn delayed(mut self, delay: Duration) -> Reply {
        self.delay = delay;
        self
    }
}

/// One parsed request.
#[derive(Debug)]
pub struct Req {
    pub method: String,
    pub path: String,
    pub body: Vec<u8>,
    /// The request carried `Connection: close`.
    pub close: bool,
}

impl Req {
    /// The string `payload` of a JSON body, if it is one.
    pub fn payload(&self) -> Option<String> {
        let v: serde_json::Value = serde_json::from_slice(&self.body).ok()?;
        Some(v.get("payload")?.as_str()?.to_owned())
    }
}

/// What SPEC.md asks for, route by route (from [`shootout_contract::spec::ROUTES`]);
/// `/file_read` is chunked to exercise that framing.
pub fn correct(req: &Req) -> Reply {
    use shootout_contract::spec::{Answer, Route, ScenarioName};
    let Some(route) = Route::find(&req.method, &req.path) else {
        return Reply::new(404, "text/plain", "not found");
    };
    let payload = req.payload();
    let body = match (route.answer, payload) {
        // SPEC.md: without DATABASE_URL the database routes answer 503.
        (Answer::Database, _) => return Reply::new(503, "text/plain", "no database"),
        (Answer::Exact(body), _) => body.to_owned(),
        (Answer::Greet, Some(p)) => route.expected_body(&p).unwrap_or_default(),
        (Answer::Bcrypt, Some(p)) => {
            let hash = bcrypt::hash(p, shootout_contract::spec::BCRYPT_COST).expect("bcrypt");
            format!(r#"{{"payload":"{hash}"}}"#)
        }
        (_, None) => return Reply::new(422, "application/json", r#"{"error":"bad"}"#),
    };
    let mut reply = match route.media_type {
        shootout_contract::spec::TEXT => Reply::new(200, "text/plain", body),
        _ => Reply::json(body),
    };
    if route.name == ScenarioName::FileRead {
        reply.wire = Wire::Chunked;
    }
    match route.min_duration {
        Some(min) => reply.delayed(min + Duration::from_millis(5)),
        None => reply,
    }
}

/// Serves `handler` on a fresh port; `serial` handles one connection at a
/// time on the accept thread, so a slow route blocks all others.
pub fn serve(handler: impl Fn(&Req) -> Reply + Send + Sync + 'static, serial: bool) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    let handler = Arc::new(handler);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let handler = Arc::clone(&handler);
            match serial {
                true => answer(stream, &*handler),
                false => drop(std::thread::spawn(move || answer(stream, &*handler))),
            }
        }
    });
    addr
}

fn answer(stream: TcpStream, handler: &dyn Fn(&Req) -> Reply) {
    let mut reader = BufReader::new(stream);
    while let Some(req) = read_request(&mut reader) {
        let reply = handler(&req);
        std::thread::sleep(reply.delay);
        let close = match reply.keep {
            _ if reply.wire == Wire::Unframed => true,
            Keep::Normal => req.close,
            Keep::AlwaysClose | Keep::SilentClose => true,
            Keep::IgnoreClose => false,
        };
        if reader
            .get_mut()
            .write_all(&encode(&reply, close && reply.keep != Keep::SilentClose))
            .is_err()
            || close
        {
            return;
        }
    }
}

fn read_request(reader: &mut BufReader<TcpStream>) -> Option<Req> {
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        if reader.read_until(b'\n', &mut head).ok()? == 0 {
            return None;
        }
    }
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut parsed = httparse::Request::new(&mut headers);
    parsed.parse(&head).ok()?;
    let len = parsed
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("content-length"))
        .and_then(|h| std::str::from_utf8(h.value).ok()?.trim().parse().ok())
        .unwrap_or(0);
    let close = parsed.headers.iter().any(|h| {
        h.name.eq_ignore_ascii_case("connection") && h.value.eq_ignore_ascii_case(b"close")
    });
    let mut body = vec![0; len];
    reader.read_exact(&mut body).ok()?;
    Some(Req {
        close,
        method: parsed.method?.to_owned(),
        path: parsed.path?.to_owned(),
        body,
    })
}

fn encode(reply: &Reply, close: bool) -> Vec<u8> {
    let mut out = format!("HTTP/1.1 {} X\r\n", reply.status);
    if close {
        out.push_str("Connection: close\r\n");
    }
    if reply.server {
        out.push_str("Server: fake\r\n");
    }
    match reply.date {
        DateHeader::Now => out.push_str(&format!("Date: {}\r\n", http_date(SystemTime::now()))),
        DateHeader::Frozen(date) => out.push_str(&format!("Date: {date}\r\n")),
        DateHeader::Missing => {}
    }
    if let Some(ct) = reply.content_type {
        out.push_str(&format!("Content-Type: {ct}\r\n"));
    }
    let mut body = reply.body.clone();
    match reply.wire {
        Wire::Length => out.push_str(&format!("Content-Length: {}\r\n", body.len())),
        Wire::Chunked => {
            out.push_str("Transfer-Encoding: chunked\r\n");
            let mut chunked = format!("{:x}\r\n", body.len()).into_bytes();
            chunked.extend_from_slice(&body);
            chunked.extend_from_slice(b"\r\n0\r\n\r\n");
            body = chunked;
        }
        Wire::Unframed => {}
    }
    out.push_str("\r\n");
    let mut bytes = out.into_bytes();
    bytes.extend_from_slice(&body);
    bytes
}

/// `Sun, 06 Nov 1994 08:49:37 GMT` for `t` (days to a civil date by
/// Howard Hinnant's algorithm), so no date crate is needed for a test.
pub fn http_date(t: SystemTime) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{}, {day:02} {} {year} {:02}:{:02}:{:02} GMT",
        DAYS[days.rem_euclid(7) as usize],
        MONTHS[(month - 1) as usize],
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[test]
fn http_dates_are_rfc_9110() {
    let at = |s| UNIX_EPOCH + Duration::from_secs(s);
    assert_eq!(http_date(at(784_111_777)), "Sun, 06 Nov 1994 08:49:37 GMT");
    assert_eq!(http_date(at(0)), "Thu, 01 Jan 1970 00:00:00 GMT");
    assert_eq!(http_date(at(951_782_400)), "Tue, 29 Feb 2000 00:00:00 GMT");
    assert!(super::headers::http_date_ok(&http_date(SystemTime::now())));
}
