//! Maps command outcomes to exit codes: 0 ok, 1 a threshold or comparison
//! failed, 2 a usage or environment error (printed to stderr), 128 + the
//! signal's number when stopped by one (130 Ctrl-C, 143 SIGTERM, 129
//! SIGHUP; see [`crate::interrupt`]). The library crates never exit; this
//! is where codes are made.

use std::process::ExitCode;

/// What a command concluded, when it ran to the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Everything passed.
    Ok,
    /// The command ran, but a threshold, check or comparison failed.
    Failed,
    /// A stop signal (Ctrl-C, SIGTERM, SIGHUP) ended it; what was finished
    /// is kept.
    Interrupted,
    /// It did what it could, but a usage error (a broken input, already
    /// named on stderr) kept it from the rest: exit 2.
    Usage,
}

pub fn finish(result: anyhow::Result<Outcome>) -> ExitCode {
    match result {
        Ok(Outcome::Ok) => ExitCode::SUCCESS,
        Ok(Outcome::Failed) => ExitCode::from(1),
        Ok(Outcome::Interrupted) => ExitCode::from(crate::interrupt::exit_interrupted()),
        Ok(Outcome::Usage) => ExitCode::from(2),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
