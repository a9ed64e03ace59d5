//! `shootout database`: the PostgreSQL the database routes run against, for
//! a person writing or checking a server by hand. It starts the same
//! throwaway cluster a run starts (seeded, `pg_stat_statements` loaded),
//! prints `DATABASE_URL` and `DB_POOL_SIZE` on stdout as shell assignments,
//! the superuser's psql line on stderr, and keeps it until Ctrl-C (or
//! `--for`), then stops it and removes its folder.

use crate::exit::Outcome;
use crate::units;
use anyhow::Context as _;
use shootout_runner::database::POOL_PER_SERVER_CPU;
use shootout_servers::database::{Cluster, ClusterOptions, DB_NAME, SUPERUSER};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// DB_POOL_SIZE to print (and size max_connections for)
    #[arg(long, default_value_t = POOL_PER_SERVER_CPU, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pool_size: u32,
    /// Stop after this long instead of waiting for Ctrl-C (e.g. 10m)
    #[arg(long = "for", value_parser = units::parse_duration)]
    duration: Option<Duration>,
}

pub fn run(a: Args) -> anyhow::Result<Outcome> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    crate::interrupt::on_stop(move |presses| {
        flag.store(true, Ordering::SeqCst);
        if presses > 1 {
            shootout_servers::database::stop_all_clusters();
            crate::interrupt::exit_now();
        }
    })?;
    eprintln!("starting PostgreSQL (initdb, start, seed)...");
    let mut cluster = Cluster::start(&ClusterOptions::for_pool(a.pool_size, vec![]))
        .context("cannot start PostgreSQL")?;
    let access = cluster.access();
    for (name, value) in access.server_env() {
        outln!("export {name}='{value}'");
    }
    let (dir, info) = (cluster.dir().display().to_string(), cluster.info());
    eprintln!(
        "PostgreSQL {} ready; superuser: psql -h {dir} -p {} -U {SUPERUSER} {DB_NAME}",
        info.version,
        cluster.port()
    );
    eprintln!("Ctrl-C stops it and deletes {dir}");
    let deadline = a.duration.map(|d| Instant::now() + d);
    while !stop.load(Ordering::SeqCst) && deadline.is_none_or(|d| Instant::now() < d) {
        std::thread::sleep(Duration::from_millis(100));
    }
    cluster.stop();
    eprintln!("stopped and removed");
    Ok(if stop.load(Ordering::SeqCst) {
        Outcome::Interrupted
    } else {
        Outcome::Ok
    })
}
