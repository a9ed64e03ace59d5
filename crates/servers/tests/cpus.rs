//! The verifier's CPU check against two in-test bcrypt servers on
//! 127.0.0.1: one that hashes on a single thread (a server that ignores
//! `SERVER_CPUS`) must never pass, one with a thread per connection must
//! pass, unless other processes keep the machine too busy to tell (then
//! the check says so and proves nothing either way). Alone in its own test
//! binary so that the process's CPU time is the servers' (and the
//! generator's few hundredths).

#![allow(clippy::unwrap_used)] // test setup: a failure should panic

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

use shootout_servers::verify::{measure_cpus, Failure, Measured};

fn process_cpu() -> Result<Duration, Failure> {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes into the struct we own.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return Err(Failure::Transport("getrusage failed".into()));
    }
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    Ok(tv(ru.ru_utime) + tv(ru.ru_stime))
}

/// Answers `POST /test/bcrypt` with a cost-10 hash, keep-alive, on one
/// thread for every connection (`serial`) or one thread each.
fn serve(serial: bool) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            match serial {
                true => answer(stream),
                false => drop(std::thread::spawn(move || answer(stream))),
            }
        }
    });
    addr
}

fn answer(stream: TcpStream) {
    let mut reader = BufReader::new(stream);
    loop {
        let mut length = 0;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let lower = line.to_ascii_lowercase();
            if let Some(v) = lower.strip_prefix("content-length:") {
                length = v.trim().parse().unwrap_or(0);
            }
            if line == "\r\n" {
                break;
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let hash = bcrypt::hash(&body, 10).unwrap();
        let reply = format!(r#"{{"payload":"{hash}"}}"#);
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            reply.len()
        );
        let out = reader.get_mut();
        if out.write_all(head.as_bytes()).is_err() || out.write_all(reply.as_bytes()).is_err() {
            return;
        }
    }
}

#[test]
fn one_thread_on_two_cpus_never_passes_and_a_thread_each_does() {
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        shootout_testkit::machine("one CPU here");
        return;
    }
    match measure_cpus(serve(true), 2, &process_cpu).unwrap() {
        Measured::Quiet(u) => {
            eprintln!("serial server: {u:?}");
            assert!(!u.enough(), "a single hashing thread passed: {u:?}");
            assert!(u.used < 1.2, "{u:?}");
        }
        Measured::Disturbed(u) => eprintln!("serial server: machine too busy to tell: {u:?}"),
    }
    match measure_cpus(serve(false), 2, &process_cpu).unwrap() {
        Measured::Quiet(u) => {
            eprintln!("threaded server: {u:?}");
            assert!(u.enough(), "a thread per connection failed: {u:?}");
        }
        Measured::Disturbed(u) => eprintln!("threaded server: machine too busy to tell: {u:?}"),
    }
}
