//! Small in-process HTTP/1.1 servers on 127.0.0.1:0 with scripted behaviour,
//! used to prove what the engine counts. One thread per connection keeps them
//! simple and lets a handler sleep without stalling other connections.
#![allow(dead_code, clippy::unwrap_used)]

pub mod stops;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the server does with one request.
pub enum Action {
    /// Write these bytes and keep the connection.
    Reply(Vec<u8>),
    /// Write these bytes, then close.
    ReplyAndClose(Vec<u8>),
    /// Write these bytes, then shut the sending side (a FIN) and read what
    /// else arrives without answering, so requests pipelined behind this
    /// one are lost cleanly (a close with unread requests would be a reset).
    ReplyAndShutdown(Vec<u8>),
    /// Close without answering.
    Close,
    /// Close with a TCP reset.
    Reset,
    /// Never answer (the connection stays open until the server stops).
    Hang,
}

pub fn ok(body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

pub type Handler = dyn Fn(u64) -> Action + Send + Sync;

pub struct TestServer {
    pub addr: SocketAddr,
    pub requests: Arc<AtomicU64>,
    pub connections: Arc<AtomicU64>,
    /// Requests that had the next request already waiting behind them when
    /// read: the client pipelined.
    pub pipelined: Arc<AtomicU64>,
    /// Requests received by request line (`GET /db HTTP/1.1`).
    pub lines: Arc<Mutex<BTreeMap<String, u64>>>,
    stop: Arc<AtomicBool>,
}

/// The counters a connection's thread updates.
#[derive(Clone)]
struct Counters {
    requests: Arc<AtomicU64>,
    pipelined: Arc<AtomicU64>,
    lines: Arc<Mutex<BTreeMap<String, u64>>>,
    stop: Arc<AtomicBool>,
}

impl TestServer {
    /// Starts a server; `handler` gets the request's sequence number (from 0).
    pub fn start(handler: impl Fn(u64) -> Action + Send + Sync + 'static) -> TestServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let server = TestServer {
            addr,
            requests: Arc::new(AtomicU64::new(0)),
            connections: Arc::new(AtomicU64::new(0)),
            pipelined: Arc::new(AtomicU64::new(0)),
            lines: Arc::default(),
            stop: Arc::new(AtomicBool::new(false)),
        };
        let counters = Counters {
            requests: server.requests.clone(),
            pipelined: server.pipelined.clone(),
            lines: server.lines.clone(),
            stop: server.stop.clone(),
        };
        let (connections, stop) = (server.connections.clone(), server.stop.clone());
        let handler: Arc<Handler> = Arc::new(handler);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                connections.fetch_add(1, Ordering::Relaxed);
                let (handler, counters) = (handler.clone(), counters.clone());
                std::thread::spawn(move || serve(stream, &*handler, &counters));
            }
        });
        server
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    pub fn connections(&self) -> u64 {
        self.connections.load(Ordering::Relaxed)
    }

    pub fn pipelined(&self) -> u64 {
        self.pipelined.load(Ordering::Relaxed)
    }

    /// The requests received so far, counted by request line.
    pub fn lines(&self) -> BTreeMap<String, u64> {
        self.lines.lock().unwrap().clone()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = TcpStream::connect(self.addr);
    }
}

fn serve(stream: TcpStream, handler: &Handler, counters: &Counters) {
    let (requests, stop) = (&counters.requests, &counters.stop);
    let _ = stream.set_nodelay(true);
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut out = stream;
    loop {
        let Some((line, body_len)) = read_head(&mut reader) else {
            return;
        };
        *counters.lines.lock().unwrap().entry(line).or_default() += 1;
        let mut body = vec![0; body_len];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let n = requests.fetch_add(1, Ordering::Relaxed);
        if !reader.buffer().is_empty() {
            counters.pipelined.fetch_add(1, Ordering::Relaxed);
        }
        match handler(n) {
            Action::Reply(bytes) => {
                if out.write_all(&bytes).is_err() {
                    return;
                }
            }
            Action::ReplyAndClose(bytes) => {
                let _ = out.write_all(&bytes);
                return;
            }
            Action::ReplyAndShutdown(bytes) => {
                let _ = out.write_all(&bytes);
                let _ = out.shutdown(std::net::Shutdown::Write);
                let _ = std::io::copy(&mut reader, &mut std::io::sink());
                return;
            }
            Action::Close => return,
            Action::Reset => {
                let _ = socket2::SockRef::from(&out).set_linger(Some(Duration::ZERO));
                return;
            }
            Action::Hang => {
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(20));
                }
                return;
            }
        }
    }
}

/// Reads a request head; returns its request line and Content-Length, or
/// None at EOF.
fn read_head(r: &mut BufReader<TcpStream>) -> Option<(String, usize)> {
    let mut len = 0;
    let mut line = String::new();
    let mut first = true;
    let mut request_line = String::new();
    loop {
        line.clear();
        if r.read_line(&mut line).ok()? == 0 {
            return None;
        }
        if line == "\r\n" && !first {
            return Some((request_line, len));
        }
        if first {
            request_line = line.trim_end().to_string();
        }
        first = false;
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            len = v.trim().parse().ok()?;
        }
    }
}
