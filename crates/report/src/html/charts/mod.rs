//! The HTML report's charts, drawn with `plotters` into SVG strings that are
//! inlined into the page: bars with 95% CI whiskers (throughput,
//! efficiency), grouped memory bars ([`bars`]), the latency percentile
//! spectrum on a log 1/(1−p) axis and the per-second timeline ([`lines`]),
//! and latency against offered load for capacity searches ([`capacity`]).
//! Every series is named in text on the chart (not by colour alone);
//! plotters escapes the SVG text.

mod bars;
mod capacity;
mod lines;

pub use bars::{bars, grouped_bars};
pub use capacity::{latency_curves, SloLine};
pub use lines::{spectrum, spectrum_points, timeline};

use plotters::prelude::*;

/// Okabe–Ito colours: distinguishable with common colour blindness.
const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(213, 94, 0),
    RGBColor(120, 120, 120),
    RGBColor(0, 0, 0),
];
pub(crate) const SIZE: (u32, u32) = (960, 420);
pub(crate) const FONT: &str = "sans-serif";

pub fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// One bar: a label, a value and an optional 95% interval.
#[derive(Debug, Clone)]
pub struct Bar {
    pub label: String,
    pub value: f64,
    pub ci: Option<(f64, f64)>,
}

/// One line: a label and its points.
#[derive(Debug, Clone)]
pub struct Line {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

pub(crate) type Draw<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

/// Renders `draw` into an SVG string.
pub(crate) fn svg(
    size: (u32, u32),
    draw: impl FnOnce(&Draw) -> Result<(), String>,
) -> Result<String, String> {
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, size).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        draw(&root)?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(buf)
}

pub(crate) fn e<E: std::fmt::Display>(err: E) -> String {
    err.to_string()
}

pub(crate) fn axis_max(values: impl Iterator<Item = f64>) -> f64 {
    let m = values.filter(|v| v.is_finite()).fold(0.0_f64, f64::max);
    if m > 0.0 {
        m * 1.18
    } else {
        1.0
    }
}
