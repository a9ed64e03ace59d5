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

    /// A TOML or serde error, with the key of an unknown field named.
    pub fn toml_error(&self, e: &toml::de::Error) -> StudyError {
        let message = e.message().trim().to_string();
        let unknown = message
            .strip_prefix("unknown field `")
            .and_then(|r| r.split('`').next())
            .map(str::to_string);
        let mut se = self.error(e.span(), None, message);
        if unknown.is_some() {
            se.key = unknown;
        }
        se
    }
}
