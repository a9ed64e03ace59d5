//! What a study file may be before anything runs: a regular file of at
//! most [`MAX_STUDY_BYTES`] (`run /dev/zero` read 2 GB before failing), at
//! most [`MAX_REPETITIONS`] starts of a target, and a plan estimated at no
//! more than [`MAX_STUDY_HOURS`] (a million repetitions were accepted, an
//! estimated 4,354 hours).

use crate::locator::{Locator, StudyError};
use crate::model::{Study, TargetSelection};
use std::io::Read;
use std::path::Path;
use toml::Spanned;

/// The largest study file read: the shipped ones are a few KiB.
pub const MAX_STUDY_BYTES: u64 = 1 << 20;
/// The most starts of a target a study may ask for (`repetitions`, and the
/// `max_repetitions` of `precision` and `resolve`).
pub const MAX_REPETITIONS: u32 = 1000;
/// The longest a study may be estimated to take, with the fewest targets
/// it can have (a week: no machine stays quiet for longer).
pub const MAX_STUDY_HOURS: f64 = 168.0;

/// The text of the study file at `path`, refused unread when it is not a
/// regular file or is larger than [`MAX_STUDY_BYTES`].
pub(crate) fn read(path: &Path) -> Result<String, StudyError> {
    let refuse = |message: String| StudyError {
        file: path.to_path_buf(),
        line: None,
        key: None,
        message,
    };
    let meta = std::fs::metadata(path).map_err(|e| refuse(format!("cannot read: {e}")))?;
    if !meta.is_file() {
        return Err(refuse(
            "is not a regular file: a study is a TOML file (see studies/README.md)".to_string(),
        ));
    }
    let too_big = |bytes: u64| {
        refuse(format!(
            "is {bytes} bytes; a study file is at most {MAX_STUDY_BYTES} bytes (1 MiB)"
        ))
    };
    if meta.len() > MAX_STUDY_BYTES {
        return Err(too_big(meta.len()));
    }
    let file = std::fs::File::open(path).map_err(|e| refuse(format!("cannot read: {e}")))?;
    let mut text = String::new();
    file.take(MAX_STUDY_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| refuse(format!("cannot read: {e}")))?;
    if text.len() as u64 > MAX_STUDY_BYTES {
        return Err(too_big(text.len() as u64));
    }
    Ok(text)
}

/// A count of starts (`key`) above [`MAX_REPETITIONS`] is refused.
pub(crate) fn repetitions(
    at: &Locator<'_>,
    raw: Option<&Spanned<u32>>,
    key: &str,
) -> Result<(), StudyError> {
    match raw {
        Some(v) if *v.get_ref() > MAX_REPETITIONS => Err(at.at(
            v,
            key,
            format!(
                "{} is more than {MAX_REPETITIONS} starts of every target",
                v.get_ref()
            ),
        )),
        _ => Ok(()),
    }
}

/// A study estimated, with the fewest targets it can have, at more than
/// [`MAX_STUDY_HOURS`] is refused at its `repetitions`, with the estimate.
pub(crate) fn duration(
    at: &Locator<'_>,
    raw: Option<&Spanned<u32>>,
    study: &Study,
) -> Result<(), StudyError> {
    let targets = match &study.targets {
        TargetSelection::List(l) => l.len(),
        TargetSelection::All => 1,
    };
    let hours = study.estimate(targets, 1.0).total_s / 3600.0;
    if hours <= MAX_STUDY_HOURS {
        return Ok(());
    }
    let message = format!(
        "the study is estimated at {hours:.0} h with {targets} target(s), more than the \
         {MAX_STUDY_HOURS:.0} h a study may take: use fewer repetitions or shorter loads"
    );
    Err(match raw {
        Some(v) => at.at(v, "repetitions", message),
        None => at.error(None, None, message),
    })
}
