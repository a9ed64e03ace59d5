//! Debian's nginx serving TLS with throw-away certificates from
//! `shootout-certs`, on 127.0.0.1 and a free port, for the engine's and the
//! CLI's TLS tests (the CLI's include this file). Without nginx a test
//! is counted as skipped, and fails under `CI=true` (scripts/setup.sh
//! installs it).
#![allow(dead_code, clippy::unwrap_used)]

use shootout_certs::CertPaths;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const NGINX: &str = shootout_testkit::NGINX;

/// How the TLS server is set up.
#[derive(Debug, Clone, Copy, Default)]
pub struct Setup {
    /// `ssl_verify_client on` with the set's CA.
    pub require_client_cert: bool,
    /// `ssl_protocols TLSv1.2` (else 1.2 and 1.3).
    pub tls12_only: bool,
    /// HTTP/2 offered through ALPN (`listen ... ssl http2`, nginx 1.22's form).
    pub http2: bool,
    /// No TLS: with `http2`, h2c with prior knowledge (`listen ... http2`).
    pub cleartext: bool,
    /// `http2_max_concurrent_streams` (nginx's default, 128, when None).
    pub max_streams: Option<u32>,
    /// `keepalive_requests` (a million when None): nginx sends GOAWAY after it.
    pub keepalive_requests: Option<u32>,
    /// `location /ws` proxied to this WebSocket server (nginx's documented
    /// WebSocket proxying: HTTP/1.1 upstream, `Upgrade` and `Connection`
    /// passed on), so `wss://` is TLS in nginx and WebSocket behind it.
    pub ws_upstream: Option<std::net::SocketAddr>,
}

pub struct NginxTls {
    child: Child,
    pub dir: PathBuf,
    pub port: u16,
    /// The certificates nginx serves (and the client's, for mutual TLS).
    pub certs: CertPaths,
}

/// nginx when installed; otherwise the test is skipped (shootout-testkit)
/// and this gives None. `_test` names the test in the caller's source.
pub fn start(_test: &str, setup: Setup) -> Option<NginxTls> {
    if !shootout_testkit::nginx() {
        return None;
    }
    Some(NginxTls::start(setup, None))
}

/// Like [`start`], serving `certs` (as [`openssl_certs`] makes them).
pub fn start_with(_test: &str, setup: Setup, certs: CertPaths) -> Option<NginxTls> {
    if !shootout_testkit::nginx() {
        return None;
    }
    Some(NginxTls::start(setup, Some(certs)))
}

/// Runs `openssl` in `dir`, as a user would; panics on failure.
pub fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Certificates made in `dir` the way most guides make them, with the
/// `openssl` command: the server's self-signed by `openssl req -x509 -subj
/// /CN=localhost` (CA:TRUE, no subject alternative name), served as is and
/// given as its own CA; a CA the same way; and a client certificate
/// signed by that CA with `openssl x509 -req` and no extensions (X.509
/// v1). `ca` is the server's own certificate.
pub fn openssl_certs(dir: &Path) -> CertPaths {
    std::fs::create_dir_all(dir).unwrap();
    let days = ["-days", "2"];
    let mut req = vec!["req", "-x509", "-newkey", "rsa:2048", "-nodes"];
    req.extend(days);
    let mut server = req.clone();
    server.extend([
        "-keyout",
        "server.key",
        "-out",
        "server.pem",
        "-subj",
        "/CN=localhost",
    ]);
    openssl(dir, &server);
    let mut ca = req;
    ca.extend([
        "-keyout",
        "clientca.key",
        "-out",
        "clientca.pem",
        "-subj",
        "/CN=Client CA",
    ]);
    openssl(dir, &ca);
    openssl(
        dir,
        &[
            "req",
            "-new",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "client.key",
            "-out",
            "client.csr",
            "-subj",
            "/CN=client",
        ],
    );
    let mut sign = vec![
        "x509",
        "-req",
        "-in",
        "client.csr",
        "-CA",
        "clientca.pem",
        "-CAkey",
        "clientca.key",
        "-CAcreateserial",
        "-out",
        "client.pem",
    ];
    sign.extend(days);
    openssl(dir, &sign);
    CertPaths {
        ca: dir.join("server.pem"),
        server_cert: dir.join("server.pem"),
        server_key: dir.join("server.key"),
        client_cert: dir.join("client.pem"),
        client_key: dir.join("client.key"),
    }
}

/// A free port: the kernel's pick for a listener closed at once. Another
/// test may be handed the same one before nginx binds it, which
/// [`spawn_ours`] detects and retries.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts nginx with `dir/nginx.conf` (written by `write_conf` for a port)
/// and waits until this nginx, not another test's on a reused port, is
/// listening: nginx writes its pid file only once its sockets are bound. A
/// port taken meanwhile (nginx exits after its bind retries) is tried again
/// on a new one, up to five times. Returns the child and its port.
pub fn spawn_ours(dir: &Path, write_conf: &dyn Fn(u16)) -> (Child, u16) {
    let mut last = String::new();
    for _ in 0..5 {
        let port = free_port();
        write_conf(port);
        let _ = std::fs::remove_file(dir.join("nginx.pid"));
        let mut child = Command::new(NGINX)
            .arg("-c")
            .arg(dir.join("nginx.conf"))
            .arg("-p")
            .arg(dir)
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        match wait_ours(&mut child, dir, port) {
            Ok(()) => return (child, port),
            Err(why) => {
                let _ = child.kill();
                let _ = child.wait();
                last = why;
            }
        }
    }
    panic!("nginx did not start: {last}");
}

fn wait_ours(child: &mut Child, dir: &Path, port: u16) -> Result<(), String> {
    let log = || std::fs::read_to_string(dir.join("error.log")).unwrap_or_default();
    let start = Instant::now();
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!("exited ({status}): {}", log()));
        }
        let pid = std::fs::read_to_string(dir.join("nginx.pid")).unwrap_or_default();
        if pid.trim() == child.id().to_string()
            && std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
        {
            return Ok(());
        }
        if start.elapsed() > Duration::from_secs(10) {
            return Err(format!("not listening on {port} after 10 s: {}", log()));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

impl NginxTls {
    fn start(setup: Setup, certs: Option<CertPaths>) -> NginxTls {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("shootout-nginx-tls-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let certs = match certs {
            Some(c) => c,
            None => shootout_certs::write(&dir.join("certs")).unwrap(),
        };
        std::fs::write(dir.join(BIG_NAME), big_body()).unwrap();
        let (child, port) = spawn_ours(&dir, &|port| {
            std::fs::write(dir.join("nginx.conf"), conf(&dir, port, &certs, setup)).unwrap();
        });
        NginxTls {
            child,
            dir,
            port,
            certs,
        }
    }

    pub fn url(&self, host: &str) -> String {
        format!("https://{host}:{}/", self.port)
    }

    /// The URL of a cleartext server.
    pub fn h2c_url(&self, host: &str) -> String {
        format!("http://{host}:{}/", self.port)
    }

    /// Requests nginx logged, once its access log has settled (see
    /// [`settled_log_lines`]).
    pub fn logged_requests(&self) -> usize {
        settled_log_lines(&self.dir.join("access.log"))
    }
}

pub use shootout_testkit::settled_log_lines;

/// A file nginx serves at `/big.txt`: larger than HTTP/2's default
/// 64 KiB window and many of its 16 KiB frames.
pub const BIG_NAME: &str = "big.txt";
/// [`BIG_NAME`]'s length in bytes.
pub const BIG_LEN: usize = 200 * 1024;

/// [`BIG_NAME`]'s contents: lines of a counter, so a lost or repeated frame
/// changes the text.
pub fn big_body() -> Vec<u8> {
    let mut body = Vec::with_capacity(BIG_LEN);
    let mut n = 0u32;
    while body.len() < BIG_LEN {
        body.extend_from_slice(format!("{n:09}\n").as_bytes());
        n += 1;
    }
    body.truncate(BIG_LEN);
    body
}

fn conf(dir: &Path, port: u16, certs: &CertPaths, setup: Setup) -> String {
    let d = dir.display();
    // openssl_certs' client certificates have a CA of their own.
    let own_ca = certs.client_cert.with_file_name("clientca.pem");
    let client_ca = if own_ca.exists() { &own_ca } else { &certs.ca };
    let client = if setup.require_client_cert {
        format!(
            "ssl_client_certificate {}; ssl_verify_client on;",
            client_ca.display()
        )
    } else {
        String::new()
    };
    let protocols = if setup.tls12_only {
        "TLSv1.2"
    } else {
        "TLSv1.2 TLSv1.3"
    };
    let ssl = if setup.cleartext { "" } else { " ssl" };
    let h2 = if setup.http2 { " http2" } else { "" };
    let tls = if setup.cleartext {
        String::new()
    } else {
        format!(
            "ssl_certificate {}; ssl_certificate_key {};\n    \
             ssl_protocols {protocols}; ssl_session_tickets on; ssl_session_cache shared:tls:1m;",
            certs.server_cert.display(),
            certs.server_key.display(),
        )
    };
    let streams = setup.max_streams.map_or(String::new(), |n| {
        format!("http2_max_concurrent_streams {n};")
    });
    let keepalive = setup.keepalive_requests.unwrap_or(1_000_000);
    // https://nginx.org/en/docs/http/websocket.html
    let ws = setup.ws_upstream.map_or(String::new(), |a| {
        format!(
            "location /ws {{ proxy_pass http://{a}; proxy_http_version 1.1; \
             proxy_set_header Upgrade $http_upgrade; proxy_set_header Connection \"upgrade\"; }}"
        )
    });
    format!(
        "master_process off;\nworker_processes 1;\ndaemon off;\npid {d}/nginx.pid;\nerror_log {d}/error.log;\n\
         events {{ worker_connections 1024; }}\nhttp {{\n  access_log {d}/access.log;\n  \
         client_body_temp_path {d}; proxy_temp_path {d}; fastcgi_temp_path {d}; uwsgi_temp_path {d}; scgi_temp_path {d};\n  \
         keepalive_requests {keepalive};\n  \
         server {{ listen 127.0.0.1:{port}{ssl}{h2}; listen [::1]:{port}{ssl}{h2};\n    \
         {tls}\n    {streams}\n    \
         {client}\n    \
         {ws}\n    \
         location /reset {{ return 444; }}\n    \
         location = /{BIG_NAME} {{ root {d}; default_type text/plain; }}\n    \
         location / {{ default_type text/plain; return 200 \"Hello, World!\"; }} }}\n}}\n"
    )
}

impl Drop for NginxTls {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
