//! Errors in a TOML file that name the file, the key and the line, and the
//! helpers that find a key and line from a byte offset. Shared by target
//! manifests and study files, so both report bad input the same way.

use std::fmt;
use std::path::PathBuf;

/// A file that could not be read or understood.
#[derive(Debug, Clone, thiserror::Error)]
pub struct FileError {
    pub file: PathBuf,
    pub key: Option<String>,
    pub line: Option<usize>,
    pub message: String,
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if let Some(key) = &self.key {
            write!(f, ": key `{key}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// 1-based line number of a byte offset.
pub fn line_at(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// The key written before the value at `offset` (`key = <value>`), if any.
pub fn key_at(text: &str, offset: usize) -> Option<String> {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let before = &text[line_start..offset];
    let eq = before.rfind('=')?;
    let key: String = before[..eq]
        .trim_end()
        .chars()
        .rev()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '"'))
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let key = key.trim_matches('"').to_string();
    (!key.is_empty()).then_some(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_line_and_key() {
        let text = "name = \"x\"\nwarmup = 5\n[load]\nrate = \"fast\"\n";
        let at = text.find("\"fast\"").unwrap();
        assert_eq!(line_at(text, at), 4);
        assert_eq!(key_at(text, at).as_deref(), Some("rate"));
        assert_eq!(key_at(text, text.find("[load]").unwrap()), None);
    }

    #[test]
    fn displays_file_line_and_key() {
        let e = FileError {
            file: "studies/x.toml".into(),
            key: Some("warmup".into()),
            line: Some(2),
            message: "expected a duration".into(),
        };
        assert_eq!(
            e.to_string(),
            "studies/x.toml:2: key `warmup`: expected a duration"
        );
    }
}
