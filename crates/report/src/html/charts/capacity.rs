//! Latency against offered load for capacity searches: p50 (top) and p99
//! (bottom) over the target rate, one line per target, each latency SLO as
//! a dashed horizontal line named on the chart. The capacity bars are
//! the page's ranked HTML bars with the SLO in their title. Also a cost
//! scenario's goodput against the offered rate, with its diagonal.

use super::canvas::{axis_max, linear, svg, Axis, Chart, ChartError, Draw, Line, FONT, SIZE};
use super::lines::draw_lines;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// A latency rule to draw: its value (ms), its text, and whether it is
/// about the median (drawn on the p50 panel) or a tail (the p99 panel).
#[derive(Debug, Clone)]
pub struct SloLine {
    pub ms: f64,
    pub text: String,
    pub median: bool,
}

/// Two stacked panels over the offered rate: p50 on top, p99 below.
pub fn latency_curves(
    title: &str,
    p50: &[Line],
    p99: &[Line],
    slo: &[SloLine],
) -> Result<String, ChartError> {
    let x_max = axis_max(p99.iter().flat_map(|l| l.points.iter().map(|p| p.0)));
    let (top_slo, low_slo): (Vec<SloLine>, Vec<SloLine>) =
        slo.iter().cloned().partition(|s| s.median);
    svg((SIZE.0, 640), |root| {
        let (upper, lower) = root.split_vertically(320);
        panel(&upper, title, "p50 (ms)", x_max, p50, &top_slo)?;
        panel(
            &lower,
            "p99 latency against the offered rate",
            "p99 (ms)",
            x_max,
            p99,
            &low_slo,
        )
    })
}

/// Goodput against the offered rate, both as multiples of each target's
/// capacity, with the diagonal (everything offered served in time) dashed.
pub fn goodput_curves(title: &str, lines: &[Line]) -> Result<String, ChartError> {
    let x_max = axis_max(lines.iter().flat_map(|l| l.points.iter().map(|p| p.0))).max(1.0) * 1.05;
    let y_max = x_max;
    let two = |v: &f64| format!("{v:.2}");
    svg((SIZE.0, 400), |root| {
        let mut chart = linear(
            root,
            title,
            &Axis {
                max: x_max,
                desc: "offered (× capacity)",
                label: &two,
            },
            &Axis {
                max: y_max,
                desc: "goodput (× capacity)",
                label: &two,
            },
        )?;
        chart.draw_series(DashedLineSeries::new(
            vec![(0.0, 0.0), (x_max, y_max)],
            6,
            4,
            ShapeStyle::from(&RGBColor(140, 140, 140)).stroke_width(1),
        ))?;
        draw_lines(&mut chart, lines)
    })
}

fn panel(
    area: &Draw,
    title: &str,
    y_desc: &str,
    x_max: f64,
    lines: &[Line],
    slo: &[SloLine],
) -> Result<(), ChartError> {
    let values = lines.iter().flat_map(|l| l.points.iter().map(|p| p.1));
    let y_max = 1.1 * axis_max(values.chain(slo.iter().map(|s| s.ms)));
    let num = |v: &f64| crate::metric::axis_num(*v);
    let mut chart = linear(
        area,
        title,
        &Axis {
            max: x_max,
            desc: "offered rate (req/s)",
            label: &num,
        },
        &Axis {
            max: y_max,
            desc: y_desc,
            label: &num,
        },
    )?;
    for s in slo {
        draw_slo(&mut chart, x_max, s)?;
    }
    draw_lines(&mut chart, lines)
}

/// A dashed line across the panel at the SLO, named at its left end.
fn draw_slo(chart: &mut Chart, x_max: f64, s: &SloLine) -> Result<(), ChartError> {
    let dashes = 24;
    let w = x_max / (2 * dashes) as f64;
    chart.draw_series((0..dashes).map(|i| {
        let x = 2.0 * i as f64 * w;
        PathElement::new(vec![(x, s.ms), (x + w, s.ms)], BLACK.stroke_width(2))
    }))?;
    let style = (FONT, 15)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Bottom));
    chart.draw_series(std::iter::once(
        EmptyElement::at((0.0, s.ms)) + Text::new(format!("SLO {}", s.text), (6, -4), style),
    ))?;
    Ok(())
}
