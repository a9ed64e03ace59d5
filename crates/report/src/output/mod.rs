//! The outputs of the single-run commands: one load (`shootout load`), one
//! capacity search (`shootout capacity`) and a merged sharded load
//! (`shootout merge`), each as text, JSON, Markdown or CSV, and the tables
//! of `history`, `studies`, `targets` and `verify`. They return
//! Strings; the CLI prints them. Column names come from the metric
//! catalogue (`shootout_study::Metric`) and Markdown cells go through
//! [`crate::escape`], like the study reports'.

pub mod capacity;
pub mod history;
pub mod load;
pub mod merge;
pub mod studies;
pub mod targets;

/// Output formats of `shootout load`, `capacity` and `merge` (`-o`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Format {
    Text,
    Json,
    Markdown,
    Csv,
}

/// Pretty JSON with a final newline, as every JSON output ends.
fn pretty(value: &impl serde::Serialize) -> String {
    let mut out = serde_json::to_string_pretty(value).unwrap_or_default();
    out.push('\n');
    out
}

/// A CSV header from its column names.
fn header(columns: &[&str]) -> String {
    columns.join(",")
}

#[cfg(test)]
mod tests {
    use shootout_study::Metric;

    /// Every CSV column of `load`, `merge`, `capacity` and `report` is
    /// described in docs/columns.md, and a column that holds a metric is
    /// spelled as the catalogue spells it: so `lat_p99_ms` beside `p99_ms`
    /// cannot come back unnoticed.
    #[test]
    fn every_csv_column_is_documented_once() {
        let doc = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/columns.md"),
        )
        .expect("docs/columns.md");
        let current = doc.split("## Renamed").next().unwrap_or_default();
        let mut database = crate::csv::header();
        database
            .extend([Metric::DbCpuS, Metric::DbRssPeak, Metric::ReqPerTotalCpuS].map(Metric::name));
        database.extend(crate::csv::tls_header());
        database.extend(crate::csv::COST_HEADER);
        database.push("order_seed");
        let outputs: [(&str, Vec<&str>); 3] = [
            ("load", super::load::csv_columns().to_vec()),
            ("capacity", super::capacity::csv_columns().to_vec()),
            ("report", database),
        ];
        for (output, columns) in outputs {
            let mut seen = std::collections::BTreeSet::new();
            for c in columns {
                assert!(seen.insert(c), "{output}: column {c} twice");
                assert!(
                    current.contains(&format!("`{c}`")),
                    "{output}: {c} undocumented"
                );
                let metric_like =
                    c.ends_with("_ms") && !["send_lag_p99_ms", "deadline_ms"].contains(&c);
                assert!(
                    !metric_like || Metric::parse(c).is_some(),
                    "{output}: {c} looks like a metric the catalogue does not name"
                );
            }
        }
    }
}
