//! The engine's one proptest configuration, shared by its property tests
//! (`response_props.rs`, `units_props.rs`): bounded case counts so `cargo
//! test` stays fast, `PROPTEST_CASES` for a longer soak, and no persistence
//! files, because each bug found becomes a named regression test instead.

use proptest::test_runner::Config;

/// `cases` per property, unless `PROPTEST_CASES` asks for a longer soak.
pub(crate) fn config(cases: u32) -> Config {
    let soak = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok());
    Config {
        cases: soak.unwrap_or(cases),
        failure_persistence: None,
        ..Config::default()
    }
}
