//! Errors in a study file: [`StudyError`] names the file, the line and the
//! key, and [`Locator`] turns a byte span of the study text into one. Every
//! step of parsing reports through it.

use shootout_contract::located::{key_at, line_at, FileError};
use std::ops::Range;
use std::path::Path;
use toml::Spanned;

/// A study file that could not be read; names the file, the key and the line.
pub type StudyError = FileError;

/// A bad value found before its place in the text is known: the key it
/// belongs to and why. [`Locator::error`] adds the file and the line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {message}")]
pub(crate) struct KeyError {
    pub key: String,
    pub message: String,
}

impl KeyError {
    pub fn new(key: impl Into<String>, message: impl Into<String>) -> KeyError {
        KeyError {
            key: key.into(),
            message: message.into(),
        }
    }
}

/// Turns a byte span of the study text into file:line:key errors.
pub(crate) struct Locator<'a> {
    pub path: &'a Path,
    pub text: &'a str,
}

impl Locator<'_> {
    /// An error at `span` (its line, and its key unless `key` is given).
    pub fn error(
        &self,
        span: Option<Range<usize>>,
        key: Option<&str>,
        message: String,
    ) -> StudyError {
        let line = span.as_ref().map(|s| line_at(self.text, s.start));
        let key = key
            .map(str::to_string)
            .or_else(|| span.and_then(|s| key_at(self.text, s.start)));
        StudyError {
            file: self.path.to_path_buf(),
            line,
            key,
            message,
        }
    }

    /// An error about the value `v` of `key`.
    pub fn at<T>(&self, v: &Spanned<T>, key: &str, message: impl Into<String>) -> StudyError {
        self.error(Some(v.span()), Some(key), message.into())
    }

    /// A TOML or serde error in the user's words, with the key as written
    /// (`cost.rates`, the unknown field of a table).
    pub fn toml_error(&self, e: &toml::de::Error) -> StudyError {
        let message = plain(e.message().trim());
        let unknown = message
            .strip_prefix("unknown field `")
            .and_then(|r| r.split('`').next())
            .map(str::to_string);
        let mut se = self.error(e.span(), None, message);
        let (parent, key) = e
            .span()
            .map(|s| dotted(self.text, s.start))
            .unwrap_or_default();
        match (unknown, key) {
            (Some(u), _) => se.key = Some(join(&parent, &u)),
            (None, Some(k)) => se.key = Some(join(&parent, &k)),
            (None, None) if !parent.is_empty() => se.key = Some(parent.join(".")),
            (None, None) => {}
        }
        se
    }
}

/// `parent.key` (the tables a value is in, then its key).
fn join(parent: &[String], key: &str) -> String {
    let mut all = parent.to_vec();
    all.push(key.to_string());
    all.join(".")
}

/// What serde and TOML call a type, as a study's author would say it.
const PLAIN: [(&str, &str); 19] = [
    (
        "expected struct RawCost",
        "expected a table such as { rates = [500] }",
    ),
    (
        "expected struct RawPrecision",
        "expected a table such as { width = \"5%\", max_repetitions = 4 }",
    ),
    (
        "expected struct RawResolve",
        "expected a table such as { max_repetitions = 4 }",
    ),
    (
        "expected struct RawCapacity",
        "expected a table such as { slo = [\"p99<=10ms\"] }",
    ),
    (
        "expected struct RawResources",
        "expected a table such as { cpus = 1, memory = \"512MiB\" }",
    ),
    (
        "expected struct RawLoad",
        "expected a table such as { connections = 64, duration = \"10s\" }",
    ),
    (
        "expected struct RawStage",
        "expected a table such as { duration = \"10s\", to = 100 }",
    ),
    (
        "expected struct RawScenario",
        "expected a [[scenario]] table",
    ),
    (
        "data did not match any variant of untagged enum RawCpus",
        "expected \"auto\" or a table such as { server = [0], generator = [1] }",
    ),
    (
        "data did not match any variant of untagged enum RawTargets",
        "expected \"all\" or a list of target names",
    ),
    (
        "data did not match any variant of untagged enum RawFraction",
        "expected a percentage such as \"2%\" or a fraction such as 0.02",
    ),
    (
        "wanted string or table",
        "expected one of its names, as a string in quotes",
    ),
    (
        "expected u32",
        "expected a whole number from 0 to 4294967295",
    ),
    (
        "expected u64",
        "expected a whole number from 0 to 18446744073709551615",
    ),
    ("expected usize", "expected a whole number of at least 0"),
    ("expected f64", "expected a number"),
    ("expected a sequence", "expected a list such as [1, 2]"),
    ("invalid type: sequence", "invalid type: a list"),
    ("invalid type: map", "invalid type: a table"),
];

/// `message` with serde's and TOML's internal names in plain words.
pub(crate) fn plain(message: &str) -> String {
    PLAIN
        .iter()
        .fold(message.to_string(), |m, (from, to)| m.replace(from, to))
}

/// Where byte `offset` of a study's TOML is: the tables it is in, as a
/// study names them (a `[[scenario]]`'s own keys bare, `cost.rates`,
/// `levels.rate`), and the key whose value it is in, when it is in one.
pub(crate) fn dotted(text: &str, offset: usize) -> (Vec<String>, Option<String>) {
    let mut scan = Scan::default();
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if i >= offset {
            break;
        }
        scan.step(c, &mut chars);
    }
    let mut parent: Vec<String> = scan.header.clone();
    if parent.first().is_some_and(|h| h == "scenario") {
        parent.remove(0);
    }
    parent.extend(scan.frames.iter().filter_map(|f| f.key.clone()));
    let key = (!scan.in_key).then_some(scan.pending).flatten();
    (parent, key)
}

/// An open `{` or `[` of a value, and the key it is the value of.
#[derive(Debug)]
struct Frame {
    key: Option<String>,
    table: bool,
}

/// A reader of TOML up to a point: just enough to name a key.
#[derive(Debug)]
struct Scan {
    header: Vec<String>,
    frames: Vec<Frame>,
    /// Reading a key (not a value).
    in_key: bool,
    key: String,
    /// The key of the value being read.
    pending: Option<String>,
}

impl Default for Scan {
    fn default() -> Scan {
        Scan {
            header: Vec::new(),
            frames: Vec::new(),
            in_key: true,
            key: String::new(),
            pending: None,
        }
    }
}

type Chars<'t> = std::iter::Peekable<std::str::CharIndices<'t>>;

impl Scan {
    fn step(&mut self, c: char, chars: &mut Chars<'_>) {
        match c {
            '#' => skip_until(chars, '\n'),
            '"' | '\'' if !self.in_key => skip_string(c, chars),
            '"' | '\'' => {
                let mut quoted = String::new();
                for (_, q) in chars.by_ref() {
                    if q == c {
                        break;
                    }
                    quoted.push(q);
                }
                self.key.push_str(&quoted);
            }
            '\n' if self.frames.is_empty() => {
                self.in_key = true;
                self.key.clear();
            }
            '[' if self.in_key && self.frames.is_empty() && self.key.trim().is_empty() => {
                let mut name = String::new();
                for (_, h) in chars.by_ref() {
                    if h == '\n' {
                        break;
                    }
                    name.push(h);
                }
                let name = name.trim_matches(|h: char| h == '[' || h == ']' || h.is_whitespace());
                self.header = name.split('.').map(|p| p.trim().to_string()).collect();
                self.key.clear();
                self.pending = None;
            }
            '=' if self.in_key => {
                self.pending = Some(self.key.trim().to_string());
                self.key.clear();
                self.in_key = false;
            }
            '{' | '[' if !self.in_key => {
                let in_array = self.frames.last().is_some_and(|f| !f.table);
                let key = if in_array { None } else { self.pending.take() };
                self.frames.push(Frame {
                    key,
                    table: c == '{',
                });
                self.in_key = c == '{';
                self.key.clear();
            }
            '}' | ']' if !self.in_key || c == '}' => {
                self.frames.pop();
                self.in_key = false;
                self.pending = None;
            }
            ',' if self.frames.last().is_some_and(|f| f.table) => {
                self.in_key = true;
                self.key.clear();
            }
            c if self.in_key => self.key.push(c),
            _ => {}
        }
    }
}

fn skip_until(chars: &mut Chars<'_>, end: char) {
    for (_, c) in chars.by_ref() {
        if c == end {
            return;
        }
    }
}

/// Past a string that opened with `quote` (basic or literal, one line or three).
fn skip_string(quote: char, chars: &mut Chars<'_>) {
    let triple = chars.peek().is_some_and(|(_, c)| *c == quote) && {
        chars.next();
        if chars.peek().is_some_and(|(_, c)| *c == quote) {
            chars.next();
            true
        } else {
            return; // an empty string
        }
    };
    let mut run = 0;
    while let Some((_, c)) = chars.next() {
        if c == '\\' && quote == '"' {
            chars.next();
            run = 0;
            continue;
        }
        run = if c == quote { run + 1 } else { 0 };
        if (!triple && run == 1)
            || (triple && run >= 3 && chars.peek().is_none_or(|(_, n)| *n != quote))
        {
            return;
        }
    }
}
