//! Against Debian's nginx at a fixed rate (issue #37): shootout's server CPU
//! per request — the runner's sampler over the server's own cgroup, the cost
//! probe's formula (`Cost::us_per`) — agrees within 10% with the kernel's
//! CPU time for nginx's process over the same window (`/proc/PID/stat`
//! utime + stime, read here by the test) divided by the requests nginx
//! logged. nginx runs as one process (`master_process off`), started the
//! way the runner starts every contestant (`Server::start_limited`, pinned,
//! in a cgroup of its own).

#![allow(clippy::unwrap_used)]

use shootout_engine::{Control, Endpoint, Load, Plan, Stop, Workload};
use shootout_runner::sampler::Sampler;
use shootout_servers::{Limits, Server, Target};
use shootout_store::parts::Cost;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

fn nginx_target(dir: &Path) -> Target {
    let d = dir.display();
    let conf = format!(
        "master_process off;\nworker_processes 1;\ndaemon off;\npid {d}/nginx.pid;\n\
         error_log {d}/error.log;\nevents {{ worker_connections 1024; }}\nhttp {{\n  \
         access_log {d}/access.log;\n  client_body_temp_path {d}; proxy_temp_path {d}; \
         fastcgi_temp_path {d}; uwsgi_temp_path {d}; scgi_temp_path {d};\n  \
         server {{ listen 127.0.0.1:@PORT@; location / {{ default_type text/plain; \
         return 200 \"Hello, World!\"; }} }}\n}}\n"
    );
    std::fs::write(dir.join("nginx.conf.in"), conf).unwrap();
    Target {
        language: "c".into(),
        framework: "nginx".into(),
        description: "test only: Debian's nginx, one process".into(),
        ready: "/plaintext".into(),
        ..Target::command(
            "nginx",
            dir,
            &format!(
                "sed \"s/@PORT@/$PORT/\" nginx.conf.in > nginx.conf && exec {} -c {d}/nginx.conf",
                shootout_testkit::NGINX
            ),
        )
    }
}

/// utime + stime of `pid` in seconds, from the kernel.
fn kernel_cpu_s(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command's closing parenthesis; utime and stime are
    // the 14th and 15th of the line, the 12th and 13th after it.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap();
    // SAFETY: sysconf reads a constant of the system.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    ticks / hz
}

/// 8,000 req/s for 4 s over 16 connections from CPU 1.
fn fixed_rate(port: u16) -> Plan {
    let workload = Workload::new(
        Load::Open {
            rate: 8000.0,
            connections: 16,
        },
        Stop {
            requests: None,
            duration: Some(Duration::from_secs(4)),
        },
    )
    .unwrap();
    let url = format!("http://127.0.0.1:{port}/plaintext");
    Plan::builder(Endpoint::parse(&url).unwrap(), workload)
        .threads(1)
        .cpus(vec![1])
        .build()
        .unwrap()
}

#[test]
fn cost_per_request_agrees_with_the_kernel_and_nginxs_log() {
    if !shootout_testkit::nginx() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("shootout-cost-nginx-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let target = nginx_target(&dir);
    let port = shootout_servers::free_port().unwrap();
    let mut server = Server::start_limited(
        &target,
        port,
        &dir.join("server.log"),
        &[0],
        &[],
        &Limits::default(),
    )
    .unwrap();
    server.wait_ready(Duration::from_secs(20)).unwrap();
    let Some(reader) = server.cgroup_reader() else {
        let why = server.cgroup_unavailable().unwrap();
        assert!(why.is_unavailable(), "cgroups usable but failed: {why}");
        shootout_testkit::machine(why);
        return;
    };
    let (pgid, pid) = (server.pgid(), server.pid());
    // The readiness probe's requests are in the log: count from here.
    let access_log = dir.join("access.log");
    let logged_before = shootout_testkit::settled_log_lines(&access_log);

    let plan = fixed_rate(port);
    let control = Arc::new(Control::new());
    let sampler = Sampler::start(pgid, pid as i32, control.clone(), vec![1], Some(reader));
    let kernel_before = kernel_cpu_s(pid);
    let report = shootout_engine::run(&plan, &control).unwrap();
    let usage = sampler.finish();
    let kernel_after = kernel_cpu_s(pid);
    let logged = shootout_testkit::settled_log_lines(&access_log) - logged_before;
    server.stop();
    let _ = std::fs::remove_dir_all(&dir);

    let completed = report.summary.requests.completed;
    assert!(usage.cpu_from_cgroup, "{usage:?}");
    // nginx also answered the requests in flight when the load stopped,
    // which the generator counts as cut.
    let cut = report.summary.requests.cut;
    assert_eq!(
        logged as u64,
        completed + cut,
        "nginx logged what it answered"
    );
    let ours = Cost::us_per(usage.cpu_s, completed);
    let kernel = (kernel_after - kernel_before) * 1e6 / logged as f64;
    eprintln!(
        "{completed} requests: shootout {ours:.2} µs per request, kernel/log {kernel:.2} µs \
         ({:.3} s vs {:.3} s of CPU)",
        usage.cpu_s,
        kernel_after - kernel_before
    );
    // At 8,000 req/s for 4 s nginx uses some tenths of a second: tens of
    // 10 ms ticks, so the kernel's own figure is good to a few percent.
    assert!(
        kernel_after - kernel_before > 0.1,
        "too little CPU to compare"
    );
    assert!(
        (ours - kernel).abs() <= 0.1 * kernel,
        "shootout {ours:.2} µs vs the kernel's {kernel:.2} µs per request"
    );
}
