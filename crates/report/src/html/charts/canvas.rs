//! The drawing surface every chart shares: the SVG size and font, the
//! [`Line`] a chart plots, rendering a drawing closure into an SVG string
//! ([`svg`]) with the one error type plotters can give ([`ChartError`]),
//! and the headroom above the highest value ([`axis_max`]). The spectrum
//! and timeline (`lines.rs`) and the capacity curves (`capacity.rs`) draw
//! on it.

use plotters::prelude::*;

pub(crate) const SIZE: (u32, u32) = (960, 420);
pub(crate) const FONT: &str = "sans-serif";

/// One line: a label and its points.
#[derive(Debug, Clone)]
pub struct Line {
    pub label: String,
    /// The target's colour (see [`crate::colour`]).
    pub color: RGBColor,
    pub points: Vec<(f64, f64)>,
}

pub(crate) type Draw<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

/// Why plotters could not draw a chart; the page then shows the reason in
/// the chart's place.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct ChartError(#[from] DrawingAreaErrorKind<std::io::Error>);

/// Renders `draw` into an SVG string.
pub(crate) fn svg(
    size: (u32, u32),
    draw: impl FnOnce(&Draw) -> Result<(), ChartError>,
) -> Result<String, ChartError> {
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, size).into_drawing_area();
        root.fill(&WHITE)?;
        draw(&root)?;
        root.present()?;
    }
    Ok(buf)
}

pub(crate) fn axis_max(values: impl Iterator<Item = f64>) -> f64 {
    let m = values.filter(|v| v.is_finite()).fold(0.0_f64, f64::max);
    if m > 0.0 {
        m * 1.18
    } else {
        1.0
    }
}
