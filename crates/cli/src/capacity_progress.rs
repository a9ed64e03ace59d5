//! Draws the progress of `shootout capacity` on stderr: the level being
//! tried and the bracket. On a terminal with colour allowed the line is
//! redrawn in place; otherwise each level start and end is a plain line,
//! with no escape codes. The lines' words are the report crate's.

use shootout_capacity::Event;
use shootout_report::output::capacity::{level_done, level_starting};
use std::io::Write;

#[derive(Debug)]
pub struct Progress {
    enabled: bool,
    redraw: bool,
}

impl Progress {
    pub fn new(enabled: bool) -> Progress {
        Progress {
            enabled,
            redraw: crate::term::color_enabled(),
        }
    }

    pub fn event(&mut self, e: &Event) {
        if !self.enabled {
            return;
        }
        let mut err = std::io::stderr().lock();
        let clear = if self.redraw { "\r\x1b[2K" } else { "" };
        let _ = match e {
            Event::LevelStarting {
                index,
                phase,
                target_rps,
                bracket,
            } => {
                let line = level_starting(*index, *phase, *target_rps, *bracket);
                if self.redraw {
                    write!(err, "{clear}{line}")
                } else {
                    writeln!(err, "{line}")
                }
            }
            Event::LevelDone { index, record } => {
                writeln!(err, "{clear}{}", level_done(*index, record))
            }
        };
        let _ = err.flush();
    }
}
