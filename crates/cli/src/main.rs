//! The `shootout` binary: thin glue that parses flags into validated plans and
//! hands them to the library crates. Data goes to stdout; logs and progress go
//! to stderr. Exit codes: 0 ok, 1 a threshold or comparison failed, 2 a usage
//! or environment error, 128 + the signal's number when stopped by SIGINT
//! (130), SIGTERM (143) or SIGHUP (129) ([`exit`], [`interrupt`]).

#[macro_use]
mod out;
mod capacity_progress;
mod cmd;
mod exit;
mod interrupt;
mod lock;
mod progress;
mod run_lines;
mod run_view;
mod term;
mod units;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// A web-framework shootout: an honest load generator, reference servers that
/// answer alike, repeatable studies and reports with error bars.
#[derive(Debug, Parser)]
#[command(name = "shootout", version, about, long_about = None, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Load one URL and report throughput, latency and errors.
    Load(Box<cmd::load::Args>),
    /// Merge the interval logs of a load's shards (load --shard I/N --hdr-log FILE) into one exact report.
    Merge(cmd::merge::Args),
    /// Run loads for a runner elsewhere (the generator pods of run --kubernetes), one connection at a time.
    Agent(cmd::agent::Args),
    /// Find the highest rate a server sustains under a latency SLO, and its latency-vs-load curve.
    Capacity(Box<cmd::capacity::Args>),
    /// List the reference servers in targets/.
    Targets(cmd::targets::ListArgs),
    /// Build reference servers.
    Build(cmd::targets::BuildArgs),
    /// Prove that reference servers answer as targets/SPEC.md says.
    Verify(cmd::targets::VerifyArgs),
    /// Run a study: build, verify, start, load, measure and record each target.
    Run(cmd::run::Args),
    /// Measure this host's noise between server starts (a short study), for runs with one start per cell.
    Calibrate(cmd::run::CalibrateArgs),
    /// List the studies in studies/.
    Studies(cmd::run::StudiesArgs),
    /// List the recorded runs.
    History(cmd::report::HistoryArgs),
    /// Write a report of a recorded run.
    Report(cmd::report::ReportArgs),
    /// Compare two recorded runs with significance tests.
    Compare(cmd::report::CompareArgs),
    /// Write the results site: a static, offline HTML site of every recorded run (index, targets, runs).
    Site(cmd::site::Args),
    /// Start the database routes' PostgreSQL and print its DATABASE_URL, until Ctrl-C.
    Database(cmd::database::Args),
    /// Write throw-away TLS certificates (a CA, a server and a client certificate) as PEM files.
    Certs(cmd::certs::Args),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let result = match cli.command {
        Command::Load(a) => cmd::load::run(*a),
        Command::Merge(a) => cmd::merge::run(a),
        Command::Agent(a) => cmd::agent::run(a),
        Command::Capacity(a) => cmd::capacity::run(*a),
        Command::Targets(a) => cmd::targets::list(a),
        Command::Build(a) => cmd::targets::build(a),
        Command::Verify(a) => cmd::targets::verify(a),
        Command::Run(a) => cmd::run::run(a),
        Command::Calibrate(a) => cmd::run::calibrate(a),
        Command::Studies(a) => cmd::run::studies(a),
        Command::History(a) => cmd::report::history(a),
        Command::Report(a) => cmd::report::report(a),
        Command::Compare(a) => cmd::report::compare(a),
        Command::Site(a) => cmd::site::run(a),
        Command::Database(a) => cmd::database::run(a),
        Command::Certs(a) => cmd::certs::run(a),
    };
    exit::finish(result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn every_load_flag_parses() {
        // --start-at may be at most a day ahead.
        let soon = shootout_shards::clock::format_time(
            std::time::SystemTime::now() + std::time::Duration::from_secs(3600),
        );
        let cli = Cli::try_parse_from([
            "shootout",
            "load",
            "-c",
            "10k",
            "-n",
            "1m",
            "-z",
            "2m",
            "-q",
            "2.5k",
            "--stages",
            "60s:100,60s:100",
            "-t",
            "2",
            "-m",
            "post",
            "-H",
            "A: b",
            "-H",
            "C: d",
            "-d",
            "{}",
            "--no-keepalive",
            "--timeout",
            "500ms",
            "--warmup",
            "1s",
            "--cpus",
            "0-1",
            "-o",
            "csv",
            "--fail-if",
            "p99>50ms",
            "--fail-if",
            "errors>0",
            "--quiet",
            "--shard",
            "2/3",
            "--start-at",
            &soon,
            "--hdr-log",
            "x.hlog",
            "--remote",
            "http://127.0.0.1:1/",
        ])
        .unwrap();
        let Command::Load(args) = cli.command else {
            panic!("not load")
        };
        assert_eq!(args.connections, 10_000);
        assert_eq!(args.cpus.unwrap().0, vec![0, 1]);
        assert_eq!(args.stages.unwrap().0.len(), 2);
        assert_eq!(args.fail_if.len(), 2);
        assert_eq!(args.shard.unwrap().to_string(), "2/3");
        assert!(args.start_at.is_some() && args.remote);
    }
}
