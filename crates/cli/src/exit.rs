//! Maps command outcomes to exit codes: 0 ok, 1 a threshold or comparison
//! failed, 2 a usage or environment error (printed to stderr), 130 stopped
//! by Ctrl-C. The library crates never exit; this is where codes are made.

use std::process::ExitCode;

/// What a command concluded, when it ran to the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Everything passed.
    Ok,
    /// The command ran, but a threshold, check or comparison failed.
    Failed,
    /// The user stopped it with Ctrl-C (what was finished is kept).
    Interrupted,
}

pub fn finish(result: anyhow::Result<Outcome>) -> ExitCode {
    match result {
        Ok(Outcome::Ok) => ExitCode::SUCCESS,
        Ok(Outcome::Failed) => ExitCode::from(1),
        Ok(Outcome::Interrupted) => ExitCode::from(crate::interrupt::EXIT_INTERRUPTED),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
