//! Terminal conventions shared by every command: colour only when stderr is a
//! terminal and NO_COLOR is unset; progress bars only on a terminal.

use std::io::IsTerminal;

/// True when progress bars should be drawn on stderr.
pub fn stderr_is_tty() -> bool {
    std::io::stderr().is_terminal()
}

/// True when colour may be used (https://no-color.org).
pub fn color_enabled() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && stderr_is_tty()
}
