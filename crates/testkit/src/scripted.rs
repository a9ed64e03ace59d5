//! A TCP server on 127.0.0.1 (port 0) that plays one fixed script on every
//! connection, for the faults a well-behaved server never shows: a server
//! that accepts and says nothing, an HTTP/2 server whose SETTINGS allow
//! no stream, or one that breaks a framing rule once the request came.
//! Each connection gets a thread of its own; the server stops accepting
//! when dropped, and no connection outlives its 30 s limit.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What the server does on each connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Script {
    /// Reads whatever comes and never writes a byte.
    Silent,
    /// HTTP/2: SETTINGS with MAX_CONCURRENT_STREAMS 0, then silence.
    NoStreams,
    /// HTTP/2: an empty SETTINGS, then, once the client wrote anything
    /// past its preface, a PUSH_PROMISE on stream 1, which a client that
    /// disabled push must take as a connection error (RFC 9113 §8.4).
    PushPromise,
}

/// A running scripted server; stops accepting when dropped.
#[derive(Debug)]
pub struct ScriptedServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    accept: Option<JoinHandle<()>>,
}

/// The longest any connection is kept.
const LIMIT: Duration = Duration::from_secs(30);

impl ScriptedServer {
    pub fn start(script: Script) -> io::Result<ScriptedServer> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let accept = std::thread::spawn(move || {
            let end = Instant::now() + LIMIT;
            while !flag.load(Ordering::Relaxed) && Instant::now() < end {
                match listener.accept() {
                    Ok((conn, _)) => {
                        std::thread::spawn(move || play(conn, script));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Ok(ScriptedServer {
            addr,
            stop,
            accept: Some(accept),
        })
    }

    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.accept.take() {
            let _ = h.join();
        }
    }
}

/// A frame: 24-bit length, type, flags, stream id, payload.
fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut f = (payload.len() as u32).to_be_bytes()[1..].to_vec();
    f.extend_from_slice(&[kind, flags]);
    f.extend_from_slice(&stream.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

fn play(mut conn: TcpStream, script: Script) {
    let _ = conn.set_read_timeout(Some(LIMIT));
    let first = match script {
        Script::Silent => Vec::new(),
        // SETTINGS_MAX_CONCURRENT_STREAMS (0x3) = 0.
        Script::NoStreams => frame(4, 0, 0, &[0, 3, 0, 0, 0, 0]),
        Script::PushPromise => frame(4, 0, 0, &[]),
    };
    if conn.write_all(&first).is_err() {
        return;
    }
    let mut buf = [0u8; 4096];
    let mut pushed = false;
    // The client's preface (24 bytes) and SETTINGS come first; anything
    // past them is its request.
    let mut read = 0;
    while let Ok(n) = conn.read(&mut buf) {
        if n == 0 {
            return;
        }
        read += n;
        if script == Script::PushPromise && !pushed && read > 24 + 9 {
            pushed = true;
            // END_HEADERS, promised stream 2, an empty header block.
            let _ = conn.write_all(&frame(5, 0x4, 1, &2u32.to_be_bytes()));
        }
    }
}
