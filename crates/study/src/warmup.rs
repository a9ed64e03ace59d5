//! How a scenario warms up before each level ([`Warmup`]): for a fixed
//! time (`warmup = "2s"`, the engine's own warm-up inside the measured
//! plan), or until the server is steady (`warmup = "auto"`, or
//! `warmup = { window = "500ms", max = "30s" }`): the runner loads it in
//! windows and stops when `shootout_steady::Rule` says so, or at `max`
//! (docs/steady-state.md). This is the one definition the runner, the
//! scaler and the estimates read. Also the raw TOML form and its checks.

use crate::locator::{KeyError, Locator, StudyError};
use crate::raw::RawWarmup;
use crate::secs::format_secs;
use serde::Serialize;
use std::time::Duration;
use toml::Spanned;

/// The fewest windows of an auto warm-up (`shootout_steady::MIN_WINDOWS`:
/// the last `k` and the `k` before them): a steady server leaves after
/// this many.
pub const STEADY_WINDOWS: u32 = shootout_steady::MIN_WINDOWS as u32;
/// The windows an auto warm-up takes on average, for estimates: noise that
/// looks like a change keeps a steady server a little longer than
/// [`STEADY_WINDOWS`]. Measured: the default study's 51 warm-ups without a
/// declared minimum took 10 to 19 windows of 250 ms, 12.0 on average
/// (2026-11-27).
pub const TYPICAL_WINDOWS: u32 = 12;
/// `warmup = "auto"`: one-second windows, capped at a minute (the issue's
/// and docs/steady-state.md's defaults).
pub const AUTO_WINDOW: Duration = Duration::from_secs(1);
pub const AUTO_MAX: Duration = Duration::from_secs(60);
/// The shortest window a study may give: shorter ones hold too few
/// requests of a slow route to judge a throughput.
pub const MIN_WINDOW: Duration = Duration::from_millis(100);
/// The shortest window `--quick`/`--scale` shrink to.
pub const SCALED_WINDOW_FLOOR: Duration = Duration::from_millis(250);

/// A scenario's warm-up before each of its levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Warmup {
    /// Load for this long inside the measured plan, not counted.
    Fixed(Duration),
    /// Load in windows of `window` until the server is steady, at most
    /// `max` (then the measurement is flagged "not steady").
    Auto { window: Duration, max: Duration },
}

impl Warmup {
    /// `warmup = "auto"`.
    pub const AUTO: Warmup = Warmup::Auto {
        window: AUTO_WINDOW,
        max: AUTO_MAX,
    };

    /// The warm-up the engine runs inside the measured plan: the fixed
    /// duration, or none after an auto warm-up (which ran before).
    pub fn engine(&self) -> Duration {
        match *self {
            Warmup::Fixed(d) => d,
            Warmup::Auto { .. } => Duration::ZERO,
        }
    }

    /// What to expect for estimates and ETAs: the fixed duration, or a
    /// typical server's [`TYPICAL_WINDOWS`] windows.
    pub fn expected(&self) -> Duration {
        match *self {
            Warmup::Fixed(d) => d,
            Warmup::Auto { window, max } => (window * TYPICAL_WINDOWS).min(max),
        }
    }

    /// The fixed warm-up a capacity search uses before each of its levels:
    /// a search runs a dozen levels, so it takes a steady server's
    /// [`STEADY_WINDOWS`] windows rather than waiting for steadiness at each.
    pub fn as_fixed(&self) -> Duration {
        match *self {
            Warmup::Fixed(d) => d,
            Warmup::Auto { window, max } => (window * STEADY_WINDOWS).min(max),
        }
    }

    /// The most windows an auto warm-up runs (`max / window`, at least
    /// [`STEADY_WINDOWS`]); 0 for a fixed one.
    pub fn cap_windows(&self) -> u32 {
        match *self {
            Warmup::Fixed(_) => 0,
            Warmup::Auto { window, max } => {
                let n = (max.as_secs_f64() / window.as_secs_f64() + 1e-9).floor();
                (n as u32).max(STEADY_WINDOWS)
            }
        }
    }

    /// Shrunk by `f` for `--scale`/`--quick`: a fixed warm-up to at least
    /// 0.25 s, a window to at least [`SCALED_WINDOW_FLOOR`] (never longer
    /// than written), and the cap by `f` but never under
    /// [`STEADY_WINDOWS`] windows.
    pub fn scaled(&self, f: f64) -> Warmup {
        let shrink = |d: Duration, floor: Duration| {
            Duration::from_secs_f64((d.as_secs_f64() * f).max(floor.min(d).as_secs_f64()))
        };
        match *self {
            Warmup::Fixed(d) if d.is_zero() => *self,
            Warmup::Fixed(d) => Warmup::Fixed(shrink(d, Duration::from_millis(250))),
            Warmup::Auto { window, max } => {
                let window = shrink(window, SCALED_WINDOW_FLOOR);
                let max = shrink(max, Duration::ZERO).max(window * STEADY_WINDOWS);
                Warmup::Auto { window, max }
            }
        }
    }

    /// `2s`, `auto`, `auto (500ms windows, ≤30s)`.
    pub fn describe(&self) -> String {
        match *self {
            Warmup::Fixed(d) => shown(d),
            Warmup::Auto { .. } if *self == Warmup::AUTO => "auto".to_string(),
            Warmup::Auto { window, max } => {
                format!("auto ({} windows, ≤{})", shown(window), shown(max))
            }
        }
    }
}

/// `2s`, `500ms`: as level labels write durations.
fn shown(d: Duration) -> String {
    format_secs(d.as_secs_f64())
}

/// Checks a written warm-up: a window of at least [`MIN_WINDOW`] and a cap
/// of at least [`STEADY_WINDOWS`] windows.
pub(crate) fn check(raw: RawWarmup) -> Result<Warmup, KeyError> {
    let (window, max) = match raw {
        RawWarmup::Fixed(d) => return Ok(Warmup::Fixed(d)),
        RawWarmup::Auto { window, max } => (window.unwrap_or(AUTO_WINDOW), max),
    };
    if window < MIN_WINDOW {
        return Err(KeyError::new(
            "warmup.window",
            format!(
                "{} is under {}: a window must hold enough requests to judge",
                shown(window),
                shown(MIN_WINDOW)
            ),
        ));
    }
    let max = max.unwrap_or(AUTO_MAX.max(window * STEADY_WINDOWS));
    if max < window * STEADY_WINDOWS {
        return Err(KeyError::new(
            "warmup.max",
            format!(
                "{} is under {STEADY_WINDOWS} windows of {} (the steady-state rule needs {STEADY_WINDOWS} to say steady)",
                shown(max),
                shown(window)
            ),
        ));
    }
    Ok(Warmup::Auto { window, max })
}

/// [`check`] a spanned `warmup`, or `default` when absent; errors at its line.
pub(crate) fn read(
    at: &Locator<'_>,
    raw: Option<&Spanned<RawWarmup>>,
    default: Warmup,
) -> Result<Warmup, StudyError> {
    match raw {
        None => Ok(default),
        Some(w) => {
            check(*w.get_ref()).map_err(|e| at.error(Some(w.span()), Some(&e.key), e.message))
        }
    }
}
