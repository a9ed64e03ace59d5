//! Reading the last lines of a log file, for error messages that show why a
//! build or a server failed without making the user open the log.

use std::path::Path;

/// The last `n` lines of the file at `path` (lossy UTF-8), or a note saying
/// why it could not be read.
pub fn log_tail(path: &Path, n: usize) -> String {
    match std::fs::read(path) {
        Ok(bytes) => last_lines(&String::from_utf8_lossy(&bytes), n),
        Err(e) => format!("(cannot read {}: {e})", path.display()),
    }
}

fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_last_lines() {
        assert_eq!(last_lines("a\nb\nc\n", 2), "b\nc");
        assert_eq!(last_lines("a", 5), "a");
        assert_eq!(last_lines("", 5), "");
    }
}
