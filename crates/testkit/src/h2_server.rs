//! A small, strict HTTP/2 server (h2c with prior knowledge, on 127.0.0.1
//! port 0) that enforces the rules a client must keep, for the engine's
//! HTTP/2 conformance tests. It announces the SETTINGS a test asks for
//! ([`Rules`]: initial window, concurrent streams, frame size), grants
//! window late, may change the initial window mid-connection, and answers
//! every whole request with 200. When the client breaks a rule (DATA
//! beyond a window, a frame over the size, a stream over the limit, a
//! body of the wrong length, …) it records the violation, sends GOAWAY
//! with the RFC 9113 code and closes the connection.
//!
//! The framing is written here by hand (the rules live in `h2_rules`); the
//! request's header block is not decoded: the tests know the body they send.

pub use crate::h2_rules::{Rules, Seen};
use crate::h2_rules::{Session, Step};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A running server; stops and joins its threads when dropped.
#[derive(Debug)]
pub struct H2Server {
    addr: SocketAddr,
    seen: Arc<Mutex<Seen>>,
    stop: Arc<AtomicBool>,
    accept: Option<JoinHandle<()>>,
}

impl H2Server {
    /// Starts the server with `rules` on 127.0.0.1, port 0.
    pub fn start(rules: Rules) -> io::Result<H2Server> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let seen = Arc::new(Mutex::new(Seen::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let (s, st) = (seen.clone(), stop.clone());
        let accept = std::thread::spawn(move || accept_loop(&listener, &rules, &s, &st));
        Ok(H2Server {
            addr,
            seen,
            stop,
            accept: Some(accept),
        })
    }

    /// `http://127.0.0.1:PORT/`.
    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// What was seen so far.
    pub fn seen(&self) -> Seen {
        self.seen.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

impl Drop for H2Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.accept.take() {
            let _ = t.join();
        }
    }
}

fn accept_loop(listener: &TcpListener, rules: &Rules, seen: &Arc<Mutex<Seen>>, stop: &AtomicBool) {
    let stop_all = Arc::new(AtomicBool::new(false));
    let mut sessions = Vec::new();
    while !stop.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((sock, _)) => {
                if let Ok(mut s) = seen.lock() {
                    s.connections += 1;
                }
                let (rules, seen, st) = (rules.clone(), seen.clone(), stop_all.clone());
                sessions.push(std::thread::spawn(move || {
                    let _ = serve(sock, &rules, &seen, &st);
                }));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    stop_all.store(true, Ordering::SeqCst);
    for s in sessions {
        let _ = s.join();
    }
}

/// One connection: reads with a short timeout so that late grants go out
/// on time and a stop is noticed.
fn serve(
    mut sock: TcpStream,
    rules: &Rules,
    seen: &Mutex<Seen>,
    stop: &AtomicBool,
) -> io::Result<()> {
    sock.set_read_timeout(Some(Duration::from_millis(5)))?;
    sock.set_nodelay(true)?;
    let mut session = Session::new(rules.clone());
    sock.write_all(&session.take_out())?;
    let mut buf = vec![0u8; 64 * 1024];
    while !stop.load(Ordering::SeqCst) {
        let step = match sock.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => session.feed(&buf[..n], Instant::now()),
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                session.tick(Instant::now())
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return Ok(()),
        };
        let out = session.take_out();
        if let Ok(mut s) = seen.lock() {
            session.report(&mut s);
        }
        if !out.is_empty() && sock.write_all(&out).is_err() {
            return Ok(());
        }
        if step == Step::Close {
            let _ = sock.shutdown(std::net::Shutdown::Write);
            return Ok(());
        }
    }
    Ok(())
}
