//! Data on stdout. `println!` panics when the reader has gone (`shootout
//! studies | head`); these macros write the same text and treat a closed
//! pipe as the reader's choice to stop reading: the rest of the output is
//! dropped quietly and the command finishes as it would have. SIGPIPE stays
//! ignored, as Rust sets it, because the load engine writes to sockets whose
//! peer may close at any time.

use std::io::{self, Write};

/// Writes `args` to stdout; a closed pipe is not an error, any other write
/// failure is reported once on stderr.
pub fn write(args: std::fmt::Arguments<'_>) {
    let mut out = io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.flush()) {
        if e.kind() != io::ErrorKind::BrokenPipe {
            eprintln!("cannot write to stdout: {e}");
        }
    }
}

/// `println!` to stdout that survives a closed pipe.
macro_rules! outln {
    () => { $crate::out::write(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::out::write(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `print!` to stdout that survives a closed pipe.
macro_rules! out {
    ($($arg:tt)*) => { $crate::out::write(format_args!($($arg)*)) };
}
