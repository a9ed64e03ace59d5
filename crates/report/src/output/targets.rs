//! The tables of `shootout targets` and `shootout verify`: one row per
//! target, cells that are plain text, a verdict (pass, FAIL, or "-" when
//! not checked) or a yes/no. The CLI turns the servers' reports into these
//! rows (this crate does not depend on the servers) and says whether colour
//! is allowed; this module lays them out and returns a String.

use comfy_table::{presets, Cell, Color, Table};

/// One cell of a target table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StatusCell {
    Text(String),
    /// Some(true) "pass" (green), Some(false) "FAIL" (red), None "-".
    Verdict(Option<bool>),
    /// "yes" (green) or "no" (red).
    YesNo(bool),
}

/// A table of targets: the column names, one row of cells per target, and
/// whether the verdicts may be coloured (the CLI decides: colour allowed
/// and stdout a terminal).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusTable {
    pub header: Vec<String>,
    pub rows: Vec<Vec<StatusCell>>,
    pub colour: bool,
}

/// The table in box-drawing characters, coloured only when `colour`.
pub fn render(t: &StatusTable) -> String {
    let mut table = Table::new();
    table.load_preset(presets::UTF8_FULL_CONDENSED);
    if t.colour {
        table.enforce_styling();
    } else {
        table.force_no_tty();
    }
    table.set_header(t.header.iter().map(Cell::new));
    for row in &t.rows {
        table.add_row(row.iter().map(|c| cell(c, t.colour)).collect::<Vec<_>>());
    }
    table.to_string()
}

fn cell(c: &StatusCell, colour: bool) -> Cell {
    let coloured = |text: &str, fg: Color| {
        let cell = Cell::new(text);
        if colour {
            cell.fg(fg)
        } else {
            cell
        }
    };
    match c {
        StatusCell::Text(s) => Cell::new(s),
        StatusCell::Verdict(Some(true)) => coloured("pass", Color::Green),
        StatusCell::Verdict(Some(false)) => coloured("FAIL", Color::Red),
        StatusCell::Verdict(None) => Cell::new("-"),
        StatusCell::YesNo(true) => coloured("yes", Color::Green),
        StatusCell::YesNo(false) => coloured("no", Color::Red),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(colour: bool) -> StatusTable {
        StatusTable {
            header: ["target", "build", "plaintext"].map(String::from).to_vec(),
            rows: vec![
                vec![
                    StatusCell::Text("go-std".into()),
                    StatusCell::Verdict(Some(true)),
                    StatusCell::Verdict(Some(false)),
                ],
                vec![
                    StatusCell::Text("node".into()),
                    StatusCell::Verdict(None),
                    StatusCell::YesNo(false),
                ],
            ],
            colour,
        }
    }

    #[test]
    fn verdicts_as_words_without_colour() {
        let text = render(&table(false));
        let expected = "\
┌────────┬───────┬───────────┐
│ target ┆ build ┆ plaintext │
╞════════╪═══════╪═══════════╡
│ go-std ┆ pass  ┆ FAIL      │
│ node   ┆ -     ┆ no        │
└────────┴───────┴───────────┘";
        assert_eq!(text, expected);
        assert!(!text.contains('\u{1b}'), "no escape codes without colour");
    }

    #[test]
    fn verdicts_coloured_only_when_asked() {
        let text = render(&table(true));
        // Green pass, red FAIL and red no; "-" and names stay plain.
        for coloured in [
            "\u{1b}[38;5;10m pass  \u{1b}[39m",
            "\u{1b}[38;5;9m FAIL      \u{1b}[39m",
            "\u{1b}[38;5;9m no        \u{1b}[39m",
        ] {
            assert!(text.contains(coloured), "{coloured:?} not in {text:?}");
        }
        assert!(text.contains("│ node   ┆ -     ┆"), "{text:?}");
        assert_ne!(text, render(&table(false)));
    }
}
