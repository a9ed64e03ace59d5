//! Line charts: the latency percentile spectrum of merged HdrHistograms on
//! a log 1/(1−p) axis, and the per-second timeline of req/s and p99. Each
//! line has its own marker shape and is named at its end and in a legend.

use super::canvas::{axis_max, linear, svg, Axis, ChartError, Draw, Line, FONT, SIZE};
use hdrhistogram::Histogram;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// The latency spectrum: latency (ms) against percentile on a log 1/(1−p)
/// axis, one line per target, each named at its right end.
pub fn spectrum(title: &str, lines: &[Line]) -> Result<String, ChartError> {
    let x_max = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.0))
        .fold(10.0_f64, f64::max)
        .min(1e6);
    let y_max = axis_max(lines.iter().flat_map(|l| l.points.iter().map(|p| p.1)));
    svg(SIZE, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(title, (FONT, 24))
            .margin(12)
            .x_label_area_size(52)
            .y_label_area_size(84)
            .margin_right(150)
            .build_cartesian_2d((1.0..x_max * 1.5).log_scale(), 0.0..y_max)?;
        chart
            .configure_mesh()
            .x_label_formatter(&|x| percentile_label(*x))
            .x_desc("percentile (log scale of 1/(1−p))")
            .y_desc("latency (ms)")
            .y_label_formatter(&|v| crate::metric::axis_num(*v))
            .label_style((FONT, 16))
            .draw()?;
        draw_lines(&mut chart, lines)
    })
}

pub(super) fn draw_lines<'a, 'b, X, Y>(
    chart: &mut ChartContext<'a, SVGBackend<'b>, Cartesian2d<X, Y>>,
    lines: &[Line],
) -> Result<(), ChartError>
where
    X: plotters::coord::ranged1d::Ranged<ValueType = f64>,
    Y: plotters::coord::ranged1d::Ranged<ValueType = f64>,
{
    for (i, l) in lines.iter().enumerate() {
        let c = l.color;
        chart.draw_series(LineSeries::new(l.points.iter().copied(), c.stroke_width(2)))?;
        let step = (l.points.len() / 12).max(1);
        chart.draw_series(
            l.points
                .iter()
                .step_by(step)
                .map(|&p| EmptyElement::at(p) + marker(i, (0, 0), c)),
        )?;
    }
    // Each line is named at its end instead of in a legend box, which
    // would sit over the lines it explains.
    end_labels(chart, lines)
}

/// 1/(1−p) → "99.9%".
fn percentile_label(x: f64) -> String {
    if x <= 1.0 {
        return "0%".into();
    }
    let p = 100.0 * (1.0 - 1.0 / x);
    let digits = (x.log10().round() as usize).saturating_sub(2);
    format!("{p:.digits$}%")
}

/// Percentile spectrum points from a histogram in µs: (1/(1−p), ms).
pub fn spectrum_points(h: &Histogram<u64>) -> Vec<(f64, f64)> {
    if h.is_empty() {
        return Vec::new();
    }
    let mut pts = Vec::new();
    for v in h.iter_quantiles(4) {
        let q = v.quantile_iterated_to();
        if q >= 1.0 {
            break;
        }
        pts.push((1.0 / (1.0 - q), v.value_iterated_to() as f64 / 1000.0));
    }
    let max_x = 1.0 / (1.0 - (1.0 - 1.0 / h.len() as f64).max(0.0)).max(1e-9);
    pts.push((
        max_x.max(pts.last().map_or(1.0, |p| p.0)),
        h.max() as f64 / 1000.0,
    ));
    pts
}

/// Two stacked panels over seconds: throughput on top (in `unit`), p99
/// below (titled `p99_title`).
pub fn timeline(
    title: &str,
    unit: &str,
    p99_title: &str,
    rps: &[Line],
    p99: &[Line],
) -> Result<String, ChartError> {
    let t_max = rps
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.0))
        .fold(1.0_f64, f64::max);
    svg((SIZE.0, 640), |root| {
        let (upper, lower) = root.split_vertically(320);
        panel(&upper, title, unit, t_max, rps)?;
        panel(&lower, p99_title, "p99 (ms)", t_max, p99)
    })
}

fn panel(
    area: &Draw,
    title: &str,
    y_desc: &str,
    t_max: f64,
    lines: &[Line],
) -> Result<(), ChartError> {
    let y_max = 1.1 * axis_max(lines.iter().flat_map(|l| l.points.iter().map(|p| p.1)));
    let (seconds, num) = (|t: &f64| whole(*t), |v: &f64| crate::metric::axis_num(*v));
    let mut chart = linear(
        area,
        title,
        &Axis {
            max: t_max,
            desc: "second of the measured phase",
            label: &seconds,
        },
        &Axis {
            max: y_max,
            desc: y_desc,
            label: &num,
        },
    )?;
    if lines.iter().all(|l| l.points.is_empty()) {
        let style = (FONT, 17)
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(HPos::Center, VPos::Center));
        let note = "the load was too short for a per-second timeline";
        chart.draw_series(std::iter::once(Text::new(
            note,
            (t_max / 2.0, y_max / 2.0),
            style,
        )))?;
        return Ok(());
    }
    draw_lines(&mut chart, lines)
}

/// A shape per series, so lines can be told apart without colour.
fn marker<DB: DrawingBackend>(
    i: usize,
    at: (i32, i32),
    c: RGBColor,
) -> DynElement<'static, DB, (i32, i32)> {
    match i % 4 {
        0 => Circle::new(at, 4, c.filled()).into_dyn(),
        1 => TriangleMarker::new(at, 6, c.filled()).into_dyn(),
        2 => Cross::new(at, 5, c.stroke_width(2)).into_dyn(),
        _ => Rectangle::new([(at.0 - 4, at.1 - 4), (at.0 + 4, at.1 + 4)], c.filled()).into_dyn(),
    }
}

/// Whole numbers only, for axes of seconds.
fn whole(t: f64) -> String {
    if (t - t.round()).abs() < 1e-9 {
        format!("{t:.0}")
    } else {
        String::new()
    }
}

/// At most `max` characters, with an ellipsis when cut.
fn short(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max - 1).collect();
    out.push('…');
    out
}

/// Names each line at its last point, nudging labels apart vertically so
/// that lines ending close together stay readable.
fn end_labels<'a, 'b, X, Y>(
    chart: &mut ChartContext<'a, SVGBackend<'b>, Cartesian2d<X, Y>>,
    lines: &[Line],
) -> Result<(), ChartError>
where
    X: plotters::coord::ranged1d::Ranged<ValueType = f64>,
    Y: plotters::coord::ranged1d::Ranged<ValueType = f64>,
{
    const GAP: i32 = 15;
    let mut ends: Vec<(usize, (f64, f64), i32)> = lines
        .iter()
        .enumerate()
        .filter_map(|(i, l)| l.points.last().map(|&p| (i, p, chart.backend_coord(&p).1)))
        .collect();
    ends.sort_by_key(|e| e.2);
    // Push labels apart downwards, then back up from the plot's bottom, so
    // that many lines ending together neither overlap nor leave the chart.
    let bottom = chart.plotting_area().get_pixel_range().1.end - GAP / 2;
    let mut shown: Vec<i32> = Vec::with_capacity(ends.len());
    for e in &ends {
        let prev = shown.last().map_or(i32::MIN / 2, |p| p + GAP);
        shown.push(e.2.max(prev));
    }
    let mut limit = bottom;
    for y in shown.iter_mut().rev() {
        *y = (*y).min(limit);
        limit = *y - GAP;
    }
    for ((i, at, y), shown) in ends.into_iter().zip(shown) {
        let c = lines[i].color;
        let label = short(&lines[i].label, 24);
        let style = (FONT, 13)
            .into_font()
            .color(&c)
            .pos(Pos::new(HPos::Left, VPos::Center));
        chart.draw_series(std::iter::once(
            EmptyElement::at(at) + Text::new(label, (8, shown - y), style),
        ))?;
    }
    Ok(())
}
