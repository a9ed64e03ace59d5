//! `margin = "5%"` and `resolve = { max_repetitions = 4 }`: what a ranking
//! calls a difference, and more starts where its order is in doubt.
//!
//! Two contestants are told apart when the t-test on their own pooled
//! start variances is significant and their difference exceeds the
//! practical `margin` (default 5%, Datadog's; docs/statistics.md, "Ties").
//! With `resolve`, after the planned `repetitions`, each pair of adjacent
//! contestants in a scenario whose order is still in doubt (tied, with an
//! interval that reaches past the margin) gets one more start for both,
//! in rounds, until no pair is in doubt or they have `max_repetitions`
//! starts. Pairs clearly apart or clearly within the margin get none:
//! Laaber et al.'s stop rule aimed at the ranking rather than at each
//! interval. Checked here with file, line and key.

use crate::locator::{Locator, StudyError};
use crate::raw::RawResolve;
use serde::Serialize;
use toml::Spanned;

/// Extra starts for pairs whose order is in doubt.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Resolve {
    /// The most starts a target gets.
    pub max_repetitions: u32,
}

/// The largest margin a study may set: beyond it, "tied" would cover
/// contestants one and a half times as fast as each other.
const MAX_MARGIN: f64 = 0.5;

/// Checks `margin`: a percentage above 0 and at most 50%.
pub(crate) fn margin(
    at: &Locator<'_>,
    raw: Option<&Spanned<String>>,
) -> Result<Option<f64>, StudyError> {
    let Some(raw) = raw else { return Ok(None) };
    let text = raw.get_ref().trim();
    crate::raw::percent(text)
        .filter(|m| *m <= MAX_MARGIN)
        .map(Some)
        .ok_or_else(|| {
            at.at(
                raw,
                "margin",
                format!("'{text}' is not a percentage above 0 and at most 50%, e.g. \"5%\""),
            )
        })
}

/// Checks `resolve` against the study's `repetitions`.
pub(crate) fn check(
    at: &Locator<'_>,
    raw: Option<&Spanned<RawResolve>>,
    repetitions: u32,
) -> Result<Option<Resolve>, StudyError> {
    let Some(raw) = raw else { return Ok(None) };
    if repetitions < 2 {
        return Err(at.at(
            raw,
            "resolve",
            "needs repetitions = 2 or more: a pair is judged on two starts each",
        ));
    }
    let max = *raw.get_ref().max_repetitions.get_ref();
    if max < repetitions {
        return Err(at.at(
            &raw.get_ref().max_repetitions,
            "resolve.max_repetitions",
            format!("{max} is fewer than the study's repetitions ({repetitions})"),
        ));
    }
    Ok(Some(Resolve {
        max_repetitions: max,
    }))
}
