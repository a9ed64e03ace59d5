//! `shootout agent`: runs loads for a runner elsewhere, the generator pods
//! of `shootout run --kubernetes`. It listens on one address (its node's
//! own, with `hostNetwork`; never a wildcard), says `listening on ADDR`
//! once on stderr, and serves one connection at a time. A connection
//! opens with a line of JSON ([`Header`]: the token from the agent's
//! environment, and this load's shard, shared start and CPUs); the next
//! line is the plan. The load is a child `shootout load --plan-stdin
//! --progress-lines`, so a load here is exactly what that command does:
//! whatever else the runner sends (a `cancel` line, or closing its end)
//! goes to the child's stdin and cancels it; the child's stderr (its
//! progress lines) comes back as it is written; when the child ends, the
//! line `shootout-exit CODE`, then its sidecar, `shootout_shards::SEPARATOR` and its
//! interval log, and the connection closes. No load passes through the
//! cluster's API server, kubelet or container runtime: a `kubectl exec`
//! per load, streaming progress, cost those daemons about 4 CPU-seconds
//! over a quick one-target study on the local cluster, measured, on the
//! very machine being measured.

use anyhow::{bail, Context};
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use shootout_shards::SEPARATOR;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Where to listen: one address and a port (0: any free one).
    #[arg(long, value_name = "ADDR:PORT")]
    listen: SocketAddr,
    /// The environment variable holding the token every connection must
    /// open with.
    #[arg(long, value_name = "NAME", default_value = "SHOOTOUT_AGENT_TOKEN")]
    token_env: String,
}

/// A connection's first line.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Header {
    token: String,
    /// `--shard I/N`, checked by the child's own parser.
    shard: Option<String>,
    /// `--start-at`, in Unix milliseconds.
    start_at_ms: Option<u64>,
    /// `--cpus`.
    cpus: Option<Vec<usize>>,
}

pub fn run(args: Args) -> anyhow::Result<crate::exit::Outcome> {
    if args.listen.ip().is_unspecified() {
        bail!(
            "--listen {}: give the one address to listen on (a node's own), not a wildcard",
            args.listen
        );
    }
    let token = std::env::var(&args.token_env)
        .ok()
        .filter(|t| t.len() >= 16)
        .with_context(|| {
            format!(
                "${} must hold the token connections open with (16 characters or more)",
                args.token_env
            )
        })?;
    let listener = TcpListener::bind(args.listen)
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    let at = listener.local_addr()?;
    let dir = std::env::temp_dir().join(format!("shootout-agent-{}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot make {}", dir.display()))?;
    eprintln!("listening on {at}");
    for conn in listener.incoming() {
        let Ok(conn) = conn else { continue };
        if let Err(e) = serve(conn, &token, &dir) {
            eprintln!("a load ended with an error: {e:#}");
        }
    }
    Ok(crate::exit::Outcome::Ok)
}

/// Runs the one load `conn` asks for.
fn serve(conn: TcpStream, token: &str, dir: &Path) -> anyhow::Result<()> {
    let mut reader = BufReader::new(conn.try_clone()?);
    let mut writer = conn;
    // A peer that never finishes its header must not hold the agent: the
    // header has 10 s and 64 KiB.
    writer.set_read_timeout(Some(std::time::Duration::from_secs(10)))?;
    let mut line = String::new();
    std::io::Read::take(&mut reader, 64 << 10).read_line(&mut line)?;
    writer.set_read_timeout(None)?;
    let header: Header = match serde_json::from_str(&line) {
        Ok(h) => h,
        Err(e) => return refuse(writer, &format!("not a header: {e}")),
    };
    if header.token != token {
        return refuse(writer, "wrong token");
    }
    let hlog = dir.join("load.hlog");
    let sidecar = shootout_shards::sidecar_path(&hlog);
    let _ = std::fs::remove_file(&hlog);
    let _ = std::fs::remove_file(&sidecar);
    let mut child = Command::new(std::env::current_exe()?)
        .args(load_args(&header, &hlog))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot start shootout load")?;
    if let Some(mut stdin) = child.stdin.take() {
        // The plan and whatever follows, until the runner closes its end.
        std::thread::spawn(move || forward(reader, &mut stdin));
    }
    if let Some(stderr) = child.stderr.take() {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            // A runner gone is no reason to stop: the load ends by itself.
            let _ = writeln!(writer, "{line}");
        }
    }
    let status = child.wait()?;
    let code = status.code().unwrap_or(-1);
    writeln!(writer, "shootout-exit {code}")?;
    if let (Ok(side), Ok(log)) = (std::fs::read(&sidecar), std::fs::read(&hlog)) {
        writer.write_all(&side)?;
        if !side.ends_with(b"\n") {
            writer.write_all(b"\n")?;
        }
        writeln!(writer, "{SEPARATOR}")?;
        writer.write_all(&log)?;
    }
    writer.flush()?;
    let _ = writer.shutdown(std::net::Shutdown::Both);
    Ok(())
}

/// Says why a connection gets no load and closes it, after reading what
/// its peer already sent (at most a second): closing with unread data
/// resets the connection, and the peer could lose the reason.
fn refuse(mut conn: TcpStream, why: &str) -> anyhow::Result<()> {
    writeln!(conn, "shootout-refused {why}")?;
    conn.shutdown(std::net::Shutdown::Write)?;
    conn.set_read_timeout(Some(std::time::Duration::from_secs(1)))?;
    let mut sink = [0u8; 4096];
    while matches!(std::io::Read::read(&mut conn, &mut sink), Ok(n) if n > 0) {}
    Ok(())
}

/// Copies what the runner sends after its header (the plan, a `cancel`)
/// to the child's stdin as it comes, until either end closes. By hand:
/// `std::io::copy` from a socket to a pipe splices and held the plan back.
fn forward(mut from: BufReader<TcpStream>, to: &mut impl Write) {
    let held = from.buffer().to_vec();
    from.consume(held.len());
    if to.write_all(&held).and_then(|()| to.flush()).is_err() {
        return;
    }
    let mut conn = from.into_inner();
    let mut buf = [0u8; 4096];
    loop {
        match std::io::Read::read(&mut conn, &mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                if to.write_all(&buf[..n]).and_then(|()| to.flush()).is_err() {
                    return;
                }
            }
        }
    }
}

/// The child's arguments: its own, then the header's.
fn load_args(h: &Header, hlog: &Path) -> Vec<String> {
    let mut args: Vec<String> = [
        "load",
        "--plan-stdin",
        "--progress-lines",
        "--quiet",
        "-o",
        "json",
        "--hdr-log",
    ]
    .map(String::from)
    .to_vec();
    args.push(PathBuf::from(hlog).display().to_string());
    if let Some(s) = &h.shard {
        args.extend(["--shard".into(), s.clone()]);
    }
    if let Some(ms) = h.start_at_ms {
        args.extend(["--start-at".into(), ms.to_string()]);
    }
    if let Some(cpus) = h.cpus.as_ref().filter(|c| !c.is_empty()) {
        let list: Vec<String> = cpus.iter().map(usize::to_string).collect();
        args.extend(["--cpus".into(), list.join(",")]);
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_gives_the_child_its_shard_start_and_cpus_and_nothing_else() {
        let h: Header = serde_json::from_str(
            r#"{"token":"t","shard":"2/3","start_at_ms":1700000000000,"cpus":[1,3]}"#,
        )
        .unwrap();
        let args = load_args(&h, Path::new("/tmp/x/load.hlog"));
        assert_eq!(
            args.join(" "),
            "load --plan-stdin --progress-lines --quiet -o json --hdr-log /tmp/x/load.hlog \
             --shard 2/3 --start-at 1700000000000 --cpus 1,3"
        );
        let odd = serde_json::from_str::<Header>(r#"{"token":"t","hdr_log":"/etc/x"}"#);
        assert!(odd.is_err(), "an unknown key is refused");
    }

    /// What an agent expecting the token `the-right-token-of-16` answers
    /// a peer that sends `sent` and then reads until the agent closes.
    fn served(sent: Vec<u8>) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let at = listener.local_addr().unwrap();
        let client = std::thread::spawn(move || {
            let mut c = TcpStream::connect(at).unwrap();
            c.write_all(&sent).unwrap();
            let mut said = String::new();
            let _ = std::io::Read::read_to_string(&mut c, &mut said);
            said
        });
        let (conn, _) = listener.accept().unwrap();
        serve(conn, "the-right-token-of-16", Path::new("/nonexistent")).unwrap();
        client.join().unwrap()
    }

    #[test]
    fn a_header_past_64_kib_is_refused_not_read_on() {
        let said = served(vec![b'x'; 70_000]);
        assert!(said.starts_with("shootout-refused not a header"), "{said}");
    }

    #[test]
    fn a_wrong_token_is_refused_before_any_load() {
        let said = served(b"{\"token\":\"nope\"}\n".to_vec());
        assert_eq!(said, "shootout-refused wrong token\n");
    }
}
