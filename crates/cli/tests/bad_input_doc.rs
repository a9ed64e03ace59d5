//! docs/bad-input.md kept true: every row of its `input | message | exit`
//! tables is run against the real binary, or says why not. A row runs
//! when its input cell starts with a code span: those are the arguments
//! (after the section's command, e.g. `load`, unless they start with a
//! command of their own), with `http://127.0.0.1:9/` added to a `load` or
//! `capacity` row that gives no URL (nor a last argument like `127.0.0.1:9`). The exit must be the row's, and the
//! message cell's first code span must appear in stderr, where `…` and the
//! words `N` and `PORT` stand for anything. A row that cannot run here
//! says `(not run: why)` in its input cell. The rows' study files
//! (`run ./cost-rate.toml`) are `tests/bad_input/`, copied to where they run.
//!
//! Only loopback is ever loaded: a row naming another host must be one the
//! binary refuses before any traffic (`http://10.1.2.3/`, the remote check),
//! and every command is killed after 20 s.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const COMMANDS: [&str; 13] = [
    "load", "capacity", "run", "build", "verify", "report", "history", "compare", "merge", "certs",
    "studies", "serve", "site",
];

#[derive(Debug)]
struct Row {
    line: usize,
    args: Vec<String>,
    message: String,
    exit: i32,
}

/// The rows to run, the count of rows marked not run, and rows that
/// follow neither form.
fn rows(doc: &str) -> (Vec<Row>, usize, Vec<String>) {
    let (mut runnable, mut skipped, mut bad) = (Vec::new(), 0, Vec::new());
    let mut command = String::new();
    let mut in_table = false;
    for (i, line) in doc.lines().enumerate() {
        if let Some(h) = line.strip_prefix("## ") {
            if let Some(c) = spans(h).first().and_then(|s| s.strip_prefix("shootout ")) {
                command = c.to_string();
            }
        }
        if !line.starts_with('|') {
            in_table = false;
            continue;
        }
        let cells = cells(line);
        if cells.len() == 3 && cells[0].to_lowercase().starts_with("input") {
            in_table = cells[1].to_lowercase().starts_with("message")
                && cells[2].to_lowercase().starts_with("exit");
            continue;
        }
        if !in_table || cells[0].starts_with("---") {
            continue;
        }
        let (input, message, exit) = (&cells[0], &cells[1], &cells[2]);
        if input.contains("(not run: ") {
            skipped += 1;
            continue;
        }
        let at = i + 1;
        if !input.starts_with('`') {
            bad.push(format!("docs/bad-input.md:{at}: the input should start with the arguments in `…`, or say (not run: why): {input}"));
            continue;
        }
        let given = split(&spans(input)[0]);
        let mut args: Vec<String> = if COMMANDS.contains(&given[0].as_str()) {
            given
        } else {
            std::iter::once(command.clone()).chain(given).collect()
        };
        let url_given = args.iter().any(|a| a.contains("://"))
            || args.len() > 1
                && args
                    .last()
                    .is_some_and(|a| !a.starts_with('-') && a.contains(':') && a.contains('.'));
        if matches!(args[0].as_str(), "load" | "capacity") && !url_given {
            args.push("http://127.0.0.1:9/".into());
        }
        let message = spans(message).into_iter().next().unwrap_or_default();
        let Ok(exit) = exit.trim().parse() else {
            bad.push(format!(
                "docs/bad-input.md:{at}: exit '{exit}' is not one code; say (not run: why)"
            ));
            continue;
        };
        runnable.push(Row {
            line: at,
            args,
            message,
            exit,
        });
    }
    (runnable, skipped, bad)
}

/// A table row's cells (a `\|` inside a cell is not a border).
fn cells(line: &str) -> Vec<String> {
    let inner = line.trim().trim_start_matches('|').trim_end_matches('|');
    let mut cells = vec![String::new()];
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cells.last_mut().unwrap().push('|');
                chars.next();
            }
            '|' => cells.push(String::new()),
            _ => cells.last_mut().unwrap().push(c),
        }
    }
    cells.iter().map(|c| c.trim().to_string()).collect()
}

/// The code spans of `text` (single backticks).
fn spans(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// Splits arguments as a shell would, for single and double quotes.
fn split(args: &str) -> Vec<String> {
    let (mut out, mut word, mut quote, mut any) = (Vec::new(), String::new(), None, false);
    for c in args.chars() {
        match (quote, c) {
            (None, '\'' | '"') => (quote, any) = (Some(c), true),
            (Some(q), c) if c == q => quote = None,
            (None, c) if c.is_whitespace() => {
                if any {
                    out.push(std::mem::take(&mut word));
                }
                any = false;
            }
            (_, c) => (word.push(c), any = true).1,
        }
    }
    if any {
        out.push(word);
    }
    out
}

/// Whether `stderr` holds `pattern`'s pieces in order (`…`, and the
/// words `N` and `PORT`, match anything).
fn matches(stderr: &str, pattern: &str) -> bool {
    // clap wraps its lists onto new lines: spacing is not the message.
    let flat = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    let stderr = flat(stderr);
    let mut rest = stderr.as_str();
    for piece in wildcards(pattern).split('…') {
        let piece = flat(piece);
        let piece = piece.as_str();
        if piece.is_empty() {
            continue;
        }
        match rest.find(piece) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    true
}

/// `pattern` with the words `N` and `PORT` turned into `…`.
fn wildcards(pattern: &str) -> String {
    let chars: Vec<char> = pattern.chars().collect();
    let word = |i: usize| chars.get(i).is_some_and(|c| c.is_alphanumeric());
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let n = ["PORT", "N"]
            .iter()
            .map(|w| w.chars().collect::<Vec<_>>())
            .find(|w| chars[i..].starts_with(w) && !word(i + w.len()) && (i == 0 || !word(i - 1)))
            .map_or(0, |w| w.len());
        if n > 0 {
            out.push('…');
            i += n;
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

/// Only loopback, or the one host the remote check refuses unsent.
fn assert_local(row: &Row) {
    for a in row.args.iter().filter(|a| a.contains("://")) {
        let after = a.split("://").nth(1).unwrap_or("");
        let authority = after.split('/').next().unwrap_or("");
        let host = authority.rsplit('@').next().unwrap_or("");
        let ok = ["127.0.0.1", "localhost", "[::1", "10.1.2.3"]
            .iter()
            .any(|h| {
                host == *h
                    || host.starts_with(&format!("{h}:"))
                    || (h.starts_with('[') && host.starts_with(h))
            });
        assert!(ok, "docs/bad-input.md:{}: {a} is not loopback", row.line);
    }
}

fn run(row: &Row, dir: &Path) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_shootout"))
        .args(&row.args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("SHOOTOUT_LOCK", dir.join("lock"))
        .env_remove("SHOOTOUT_STUDIES")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            break child.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    (status.code(), err)
}

#[test]
fn every_row_of_bad_input_md_holds() {
    let doc_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/bad-input.md");
    let doc = std::fs::read_to_string(&doc_path).unwrap();
    let (rows, skipped, mut wrong) = rows(&doc);
    let dir: PathBuf = std::env::temp_dir().join(format!("bad_input_doc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // The study files the `run ./NAME.toml` rows refuse.
    let studies = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad_input");
    for f in std::fs::read_dir(&studies).unwrap().flatten() {
        std::fs::copy(f.path(), dir.join(f.file_name())).unwrap();
    }
    rows.iter().for_each(assert_local);
    for row in &rows {
        let (code, err) = run(row, &dir);
        if code != Some(row.exit) || !matches(&err, &row.message) {
            wrong.push(format!(
                "docs/bad-input.md:{}: shootout {:?}: exit {code:?} (doc {}), stderr: {}\n  doc: {}",
                row.line,
                row.args,
                row.exit,
                err.trim(),
                row.message
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        wrong.is_empty(),
        "{} of {} rows wrong:\n{}",
        wrong.len(),
        rows.len(),
        wrong.join("\n")
    );
    // Most rows run; the rest say why not.
    assert!(rows.len() > skipped, "{} run, {skipped} not", rows.len());
}

#[test]
fn the_matcher_and_the_splitter_do_what_the_doc_says() {
    assert_eq!(
        split("-z '5 parsecs' -q \"1 2\""),
        ["-z", "5 parsecs", "-q", "1 2"]
    );
    assert!(matches(
        "error: no connection succeeded (5 connect errors): x",
        "no connection succeeded (N connect errors): x"
    ));
    assert!(matches(
        "invalid URL 'http://[::1': bad host",
        "invalid URL '…': bad host"
    ));
    assert!(!matches("bad host", "invalid URL '…': bad host"));
    assert_eq!(cells("| `a \\| b` | m | 2 |"), ["`a | b`", "m", "2"]);
}
