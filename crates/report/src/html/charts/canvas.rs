//! The drawing surface every chart shares: the SVG size and font, the
//! [`Line`] a chart plots, rendering a drawing closure into an SVG string
//! ([`svg`]) with the one error type plotters can give ([`ChartError`]),
//! the headroom above the highest value ([`axis_max`]), and the frame of a
//! linear chart ([`linear`]: title, margins, room for the axis labels and
//! for the lines' names at the right, its mesh). The spectrum and timeline
//! (`lines.rs`) and the capacity and goodput curves (`capacity.rs`) draw
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

/// A chart with linear axes of `f64` on both sides.
pub(crate) type Chart<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// One linear axis from 0: its top, what it shows, how a label reads.
pub(crate) struct Axis<'f> {
    pub max: f64,
    pub desc: &'f str,
    pub label: &'f dyn Fn(&f64) -> String,
}

/// The frame every linear line chart has: `title`, room for the axis
/// labels and for the lines' names at the right, and its mesh drawn.
pub(crate) fn linear<'a, 'b>(
    area: &'a Draw<'b>,
    title: &str,
    x: &Axis<'_>,
    y: &Axis<'_>,
) -> Result<Chart<'a, 'b>, ChartError> {
    let mut chart = ChartBuilder::on(area)
        .caption(title, (FONT, 20))
        .margin(10)
        .x_label_area_size(46)
        .y_label_area_size(84)
        .margin_right(150)
        .build_cartesian_2d(0.0..x.max, 0.0..y.max)?;
    chart
        .configure_mesh()
        .x_desc(x.desc)
        .x_label_formatter(x.label)
        .y_desc(y.desc)
        .y_label_formatter(y.label)
        .label_style((FONT, 15))
        .draw()?;
    Ok(chart)
}

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
