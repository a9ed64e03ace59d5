//! Writes a fixture database and prints one of its reports: a demo and a
//! helper for the browser test (`cargo run -p shootout-report --example
//! fixture_report -- DB FORMAT [db]`; `db` writes the database fixture).

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let db = std::path::PathBuf::from(args.get(1).map_or("target/fixture.db", |s| s.as_str()));
    let format = args.get(2).map_or("md", |s| s.as_str());
    let _ = std::fs::remove_file(&db);
    let opts = shootout_report_fixtures::FixtureOptions {
        database: args.get(3).is_some_and(|a| a == "db"),
        ..Default::default()
    };
    let id = shootout_report_fixtures::write_fixture_run(&db, &opts)?;
    let data = shootout_report::load(&db, &id.to_string())?;
    match format {
        "md" => print!("{}", shootout_report::markdown(&data)),
        "html" => print!("{}", shootout_report::html(&data)),
        "json" => print!("{}", shootout_report::json(&data)),
        "csv" => print!("{}", shootout_report::csv(&data)),
        other => anyhow::bail!("unknown format {other}"),
    }
    Ok(())
}
