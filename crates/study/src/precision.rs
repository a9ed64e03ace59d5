//! `precision = { width = "5%", max_repetitions = 4 }`: adaptive length by
//! a stop rule on the interval, as Laaber et al. stop a benchmark once its
//! result is stable ("Dynamically reconfiguring software microbenchmarks",
//! ESEC/FSE 2020). The study's `repetitions` are the starts every target
//! gets; after them, a target whose 95% interval (pooled over its cells,
//! docs/statistics.md) is still wider than ±`width` of its median gets one
//! more start, in a fresh random order among the wide ones, until it is
//! narrow enough or has `max_repetitions` starts. A cell that stays wide is
//! shown wide. Checked here with file, line and key.

use crate::locator::{Locator, StudyError};
use crate::raw::RawPrecision;
use serde::Serialize;
use toml::Spanned;

/// The stop rule of a study's repetitions.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Precision {
    /// The widest half-width a target's interval may keep, as a fraction of
    /// its median (0.05: ±5%).
    pub width: f64,
    /// The most starts a target gets.
    pub max_repetitions: u32,
}

/// Checks `precision` against the study's `repetitions`.
pub(crate) fn check(
    at: &Locator<'_>,
    raw: Option<&Spanned<RawPrecision>>,
    repetitions: u32,
) -> Result<Option<Precision>, StudyError> {
    let Some(raw) = raw else { return Ok(None) };
    let p = raw.get_ref();
    let text = p.width.get_ref().trim();
    let bad = || {
        at.at(
            &p.width,
            "precision.width",
            format!("'{text}' is not a percentage above 0 and at most 1000, e.g. \"5%\""),
        )
    };
    let width = crate::raw::percent(text)
        .filter(|w| *w <= 10.0)
        .ok_or_else(bad)?;
    if repetitions < 2 {
        return Err(at.at(
            raw,
            "precision",
            "needs repetitions = 2 or more: an interval from starts needs two",
        ));
    }
    let max = *p.max_repetitions.get_ref();
    if max < repetitions {
        return Err(at.at(
            &p.max_repetitions,
            "precision.max_repetitions",
            format!("{max} is fewer than the study's repetitions ({repetitions})"),
        ));
    }
    Ok(Some(Precision {
        width,
        max_repetitions: max,
    }))
}
