//! Writes a long fixture history into a results store, for timing
//! `shootout history` (bench/history_speed.sh, issue #49): N rust-trio
//! runs (default 300), rust-axum 25% slower in the middle third, every
//! tenth run a database run instead.
//!
//!   cargo run --release -p shootout-report-fixtures --example many_runs -- DB [N]

use shootout_report_fixtures::{write_fixture_run, FixtureOptions};
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let db = PathBuf::from(args.next().ok_or("usage: many_runs DB [N]")?);
    let n: u64 = args.next().map_or(Ok(300), |s| s.parse())?;
    for seed in 1..=n {
        let opts = FixtureOptions {
            seed,
            slow: (n / 3 < seed && seed <= 2 * n / 3).then(|| ("rust-axum".to_string(), 1.25)),
            database: seed % 10 == 0,
            ..Default::default()
        };
        write_fixture_run(&db, &opts)?;
    }
    Ok(())
}
