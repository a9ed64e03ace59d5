//! The table of `shootout studies`: one row per study found, with what it
//! runs and how long it is estimated to take. The CLI works the rows out
//! (target counts, the estimate already formatted); this module only lays
//! them out and returns a String.

/// One study's row, every cell already in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StudyRow {
    pub name: String,
    /// `all (5)` or the listed targets.
    pub targets: String,
    /// `plaintext, json ×3`: scenarios, with their level counts above one.
    pub scenarios: String,
    pub measurements: usize,
    /// The estimated duration, e.g. `3m05s`.
    pub estimate: String,
    /// Where the study was read from; cut to its first 60 characters.
    pub source: String,
}

/// The studies as a Markdown-style table, in the order given.
pub fn render(rows: &[StudyRow]) -> String {
    let mut table = comfy_table::Table::new();
    table.load_preset(comfy_table::presets::ASCII_MARKDOWN);
    table.set_header([
        "study",
        "targets",
        "scenarios",
        "measurements",
        "estimate",
        "source",
    ]);
    for r in rows {
        table.add_row([
            r.name.clone(),
            r.targets.clone(),
            r.scenarios.clone(),
            r.measurements.to_string(),
            r.estimate.clone(),
            r.source.chars().take(60).collect(),
        ]);
    }
    table.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, source: &str) -> StudyRow {
        StudyRow {
            name: name.into(),
            targets: "all (3)".into(),
            scenarios: "plaintext, json ×3".into(),
            measurements: 12,
            estimate: "3m05s".into(),
            source: source.into(),
        }
    }

    #[test]
    fn one_row_per_study_and_the_source_cut_to_60_characters() {
        let long = format!("studies/{}.toml", "x".repeat(80));
        let text = render(&[row("quick", "studies/quick.toml"), row("long", &long)]);
        let expected = "\
| study | targets | scenarios          | measurements | estimate | source                                                       |
|-------|---------|--------------------|--------------|----------|--------------------------------------------------------------|
| quick | all (3) | plaintext, json ×3 | 12           | 3m05s    | studies/quick.toml                                           |
| long  | all (3) | plaintext, json ×3 | 12           | 3m05s    | studies/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx |";
        assert_eq!(text, expected);
        assert!(!text.contains(&long), "the source is cut");
    }
}
