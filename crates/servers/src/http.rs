//! A tiny blocking HTTP/1.1 client for the readiness probe and the verifier:
//! std sockets with timeouts, httparse for the head, and the three body
//! framings (Content-Length, chunked, close). `send` is one request on a
//! fresh connection; `Conn` keeps one open to check keep-alive. It is
//! deliberately not the load generator: it favours clear errors over speed.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// How the response body was delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    ContentLength(u64),
    Chunked,
    /// Neither header: the body ran until the server closed the connection.
    Close,
}

/// A complete response.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub framing: Framing,
    /// From connect to the last body byte.
    pub elapsed: Duration,
}

impl Response {
    /// The first header called `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The Content-Type's media type, lower-cased, without parameters.
    pub fn media_type(&self) -> Option<String> {
        let ct = self.header("content-type")?;
        Some(
            ct.split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase(),
        )
    }
}

/// A request to send; `body` is sent with Content-Length when non-empty or
/// when the method is POST.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    pub method: &'a str,
    pub path: &'a str,
    pub content_type: Option<&'a str>,
    pub body: &'a [u8],
    /// Send `Connection: close`.
    pub close: bool,
}

impl<'a> Request<'a> {
    pub fn get(path: &'a str) -> Self {
        Request {
            method: "GET",
            path,
            content_type: None,
            body: b"",
            close: false,
        }
    }

    pub fn post_json(path: &'a str, body: &'a [u8]) -> Self {
        Request {
            method: "POST",
            path,
            content_type: Some("application/json"),
            body,
            close: false,
        }
    }

    /// The same request with `Connection: close`.
    pub fn closing(self) -> Self {
        Request {
            close: true,
            ..self
        }
    }
}

/// Longest response head accepted; contract responses are tiny.
const MAX_HEAD: usize = 64 * 1024;
/// Longest body accepted, so a runaway server cannot exhaust memory.
const MAX_BODY: u64 = 16 * 1024 * 1024;

/// Sends one request on a fresh connection and reads the whole response;
/// `timeout` bounds the connect and each read or write.
pub fn send(addr: SocketAddr, req: &Request<'_>, timeout: Duration) -> io::Result<Response> {
    let start = Instant::now();
    let mut resp = Conn::open(addr, timeout)?.send(req)?;
    resp.elapsed = start.elapsed();
    Ok(resp)
}

/// A read or write that ran out of its socket timeout says so: Linux
/// reports it as EAGAIN ("Resource temporarily unavailable"), which reads
/// like a fault of this side rather than a server that did not answer.
fn timed_out(e: io::Error, timeout: Duration) -> io::Error {
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => io::Error::new(
            io::ErrorKind::TimedOut,
            format!("no answer within {timeout:?}"),
        ),
        _ => e,
    }
}

/// One open connection, for several requests in a row.
#[derive(Debug)]
pub struct Conn {
    addr: SocketAddr,
    reader: BufReader<TcpStream>,
    timeout: Duration,
}

impl Conn {
    pub fn open(addr: SocketAddr, timeout: Duration) -> io::Result<Conn> {
        let stream = TcpStream::connect_timeout(&addr, timeout)?;
        stream.set_read_timeout(Some(timeout))?;
        stream.set_write_timeout(Some(timeout))?;
        stream.set_nodelay(true)?;
        Ok(Conn {
            addr,
            reader: BufReader::new(stream),
            timeout,
        })
    }

    /// Sends `req` and reads its response; `elapsed` counts from the write.
    pub fn send(&mut self, req: &Request<'_>) -> io::Result<Response> {
        exchange(&mut self.reader, self.addr, req).map_err(|e| timed_out(e, self.timeout))
    }

    /// Waits (up to the read timeout) for the server to close: Ok(true) on
    /// EOF or reset, Ok(false) if it sent more bytes, Err if it did neither.
    pub fn closed_by_peer(&mut self) -> io::Result<bool> {
        let mut byte = [0; 1];
        match self.reader.read(&mut byte) {
            Ok(n) => Ok(n == 0),
            Err(e) if e.kind() == io::ErrorKind::ConnectionReset => Ok(true),
            Err(e) => Err(e),
        }
    }
}

/// Writes `req` (for the server at `addr`) on any stream, such as a TLS
/// session, and reads its response; `elapsed` counts from the write.
pub fn exchange<S: Read + Write>(
    reader: &mut BufReader<S>,
    addr: SocketAddr,
    req: &Request<'_>,
) -> io::Result<Response> {
    let start = Instant::now();
    reader.get_mut().write_all(&encode(addr, req))?;
    reader.get_mut().flush()?;
    let (status, headers) = read_head(reader)?;
    let framing = framing_of(&headers)?;
    let body = match framing {
        Framing::ContentLength(n) => read_exact_body(reader, n)?,
        Framing::Chunked => read_chunked(reader)?,
        Framing::Close => read_to_close(reader)?,
    };
    Ok(Response {
        status,
        headers,
        body,
        framing,
        elapsed: start.elapsed(),
    })
}

fn encode(addr: SocketAddr, req: &Request<'_>) -> Vec<u8> {
    let mut head = format!("{} {} HTTP/1.1\r\nHost: {addr}\r\n", req.method, req.path);
    if req.close {
        head.push_str("Connection: close\r\n");
    }
    if let Some(ct) = req.content_type {
        head.push_str(&format!("Content-Type: {ct}\r\n"));
    }
    if !req.body.is_empty() || req.method == "POST" {
        head.push_str(&format!("Content-Length: {}\r\n", req.body.len()));
    }
    head.push_str("\r\n");
    let mut out = head.into_bytes();
    out.extend_from_slice(req.body);
    out
}

fn invalid(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.into())
}

/// Reads and parses the status line and headers, skipping 1xx responses.
fn read_head(reader: &mut impl BufRead) -> io::Result<(u16, Vec<(String, String)>)> {
    loop {
        let raw = read_until_blank_line(reader)?;
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut resp = httparse::Response::new(&mut headers);
        let status = match resp.parse(&raw) {
            Ok(httparse::Status::Complete(_)) => resp.code.unwrap_or(0),
            Ok(httparse::Status::Partial) => return Err(invalid("truncated response head")),
            Err(e) => return Err(invalid(format!("bad response head: {e}"))),
        };
        if (100..200).contains(&status) {
            continue;
        }
        let headers = resp
            .headers
            .iter()
            .map(|h| {
                (
                    h.name.to_owned(),
                    String::from_utf8_lossy(h.value).trim().to_owned(),
                )
            })
            .collect();
        return Ok((status, headers));
    }
}

fn read_until_blank_line(reader: &mut impl BufRead) -> io::Result<Vec<u8>> {
    let mut raw = Vec::new();
    loop {
        let before = raw.len();
        if reader.read_until(b'\n', &mut raw)? == 0 {
            let msg = if raw.is_empty() {
                "connection closed before a response"
            } else {
                "connection closed inside the response head"
            };
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, msg));
        }
        let line = &raw[before..];
        if line == b"\r\n" || line == b"\n" {
            return Ok(raw);
        }
        if raw.len() > MAX_HEAD {
            return Err(invalid("response head too large"));
        }
    }
}

fn framing_of(headers: &[(String, String)]) -> io::Result<Framing> {
    let get = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
    };
    if get("transfer-encoding").is_some_and(|v| v.to_ascii_lowercase().contains("chunked")) {
        return Ok(Framing::Chunked);
    }
    match get("content-length") {
        Some(v) => v
            .parse()
            .map(Framing::ContentLength)
            .map_err(|_| invalid(format!("bad Content-Length {v:?}"))),
        None => Ok(Framing::Close),
    }
}

fn read_exact_body(reader: &mut impl Read, len: u64) -> io::Result<Vec<u8>> {
    if len > MAX_BODY {
        return Err(invalid(format!("body of {len} bytes is too large")));
    }
    let mut body = vec![0; len as usize];
    reader.read_exact(&mut body)?;
    Ok(body)
}

fn read_to_close(reader: &mut impl Read) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    reader.take(MAX_BODY + 1).read_to_end(&mut body)?;
    if body.len() as u64 > MAX_BODY {
        return Err(invalid("body too large"));
    }
    Ok(body)
}

fn read_chunked(reader: &mut impl BufRead) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line)?;
        let size_hex = line.trim().split(';').next().unwrap_or_default().trim();
        let size = u64::from_str_radix(size_hex, 16)
            .map_err(|_| invalid(format!("bad chunk size line {line:?}")))?;
        if size == 0 {
            break;
        }
        if body.len() as u64 + size > MAX_BODY {
            return Err(invalid("chunked body too large"));
        }
        body.extend(read_exact_body(reader, size)?);
        let mut crlf = [0; 2];
        reader.read_exact(&mut crlf)?;
        if &crlf != b"\r\n" {
            return Err(invalid("chunk not followed by CRLF"));
        }
    }
    // Trailers, if any, end with a blank line.
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line.trim().is_empty() {
            return Ok(body);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    /// A server that takes the connection and never answers: the error
    /// names the timeout, not EAGAIN.
    #[test]
    fn a_silent_server_is_no_answer_within_the_timeout() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let err = send(
            addr,
            &Request::get("/plaintext"),
            Duration::from_millis(200),
        )
        .unwrap_err();
        drop(listener);
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        assert_eq!(err.to_string(), "no answer within 200ms");
    }

    /// Serves `raw` once to the first connection, after reading its head.
    fn serve_once(raw: &'static [u8]) -> SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(stream);
            read_until_blank_line(&mut reader).unwrap();
            let mut stream = reader.into_inner();
            stream.write_all(raw).unwrap();
        });
        addr
    }

    fn get(addr: SocketAddr) -> Response {
        send(addr, &Request::get("/"), Duration::from_secs(5)).unwrap()
    }

    #[test]
    fn content_length() {
        let addr = serve_once(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 5\r\n\r\nhello");
        let r = get(addr);
        assert_eq!(
            (r.status, r.body.as_slice(), r.framing),
            (200, &b"hello"[..], Framing::ContentLength(5))
        );
        assert_eq!(r.media_type().as_deref(), Some("text/plain"));
    }

    #[test]
    fn chunked_with_extension_and_trailer() {
        let addr = serve_once(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n7\r\n, world\r\n0\r\nX-T: 1\r\n\r\n");
        let r = get(addr);
        assert_eq!(
            (r.body.as_slice(), r.framing),
            (&b"hello, world"[..], Framing::Chunked)
        );
    }

    #[test]
    fn close_delimited_after_continue() {
        let addr = serve_once(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.0 404 Not Found\r\n\r\nnope");
        let r = get(addr);
        assert_eq!(
            (r.status, r.body.as_slice(), r.framing),
            (404, &b"nope"[..], Framing::Close)
        );
    }

    #[test]
    fn early_close_is_an_error() {
        let addr = serve_once(b"");
        assert!(send(addr, &Request::get("/"), Duration::from_secs(5)).is_err());
    }
}
