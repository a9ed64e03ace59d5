//! Bar charts: one bar per target with its value printed above it and 95%
//! CI whiskers, and grouped bars (one group per target, one labelled bar per
//! series). Targets are named under the axis in text.

use super::{axis_max, color, e, svg, Bar, Draw, FONT, SIZE};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Vertical bars with 95% CI whiskers and the value printed above each bar.
pub fn bars(title: &str, y_desc: &str, bars: &[Bar]) -> Result<String, String> {
    let n = bars.len().max(1);
    let top = axis_max(
        bars.iter()
            .map(|b| b.ci.map_or(b.value, |c| c.1.max(b.value))),
    );
    svg(SIZE, |root| {
        let mut chart = frame(root, title, y_desc, n, top)?;
        for (i, b) in bars.iter().enumerate() {
            draw_bar(&mut chart, i, b)?;
        }
        if bars.is_empty() {
            no_data(&mut chart)?;
        }
        let names: Vec<String> = bars.iter().map(|b| b.label.clone()).collect();
        category_labels(&mut chart, &names)?;
        Ok(())
    })
}

type BarChart<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// Axes for `n` categories from 0 to `top`: no x mesh or ticks (categories
/// are named by [`category_labels`]), y ticks without trailing zeros.
fn frame<'a, 'b>(
    root: &'a Draw<'b>,
    title: &str,
    y_desc: &str,
    n: usize,
    top: f64,
) -> Result<BarChart<'a, 'b>, String> {
    let mut chart = ChartBuilder::on(root)
        .caption(title, (FONT, 24))
        .margin(12)
        .x_label_area_size(48)
        .y_label_area_size(84)
        .build_cartesian_2d(-0.5..n as f64 - 0.5, 0.0..top)
        .map_err(e)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_desc(y_desc)
        .y_label_formatter(&|v| crate::metric::axis_num(*v))
        .label_style((FONT, 16))
        .draw()
        .map_err(e)?;
    Ok(chart)
}

/// A visible note on an empty chart.
fn no_data(chart: &mut BarChart) -> Result<(), String> {
    let style = (FONT, 18)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Center, VPos::Center));
    let (x, y) = (chart.x_range(), chart.y_range());
    let at = ((x.start + x.end) / 2.0, (y.start + y.end) / 2.0);
    chart
        .draw_series(std::iter::once(Text::new(
            "no data for this chart",
            at,
            style,
        )))
        .map_err(e)?;
    Ok(())
}

/// Writes each category's name centred under its slot, below the x axis.
fn category_labels(chart: &mut BarChart, names: &[String]) -> Result<(), String> {
    let style = (FONT, 17)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Center, VPos::Top));
    chart
        .draw_series(names.iter().enumerate().map(|(i, name)| {
            EmptyElement::at((i as f64, 0.0)) + Text::new(name.clone(), (0, 8), style.clone())
        }))
        .map_err(e)?;
    Ok(())
}

fn draw_bar(chart: &mut BarChart, i: usize, b: &Bar) -> Result<(), String> {
    let x = i as f64;
    let c = color(i);
    chart
        .draw_series(std::iter::once(Rectangle::new(
            [(x - 0.3, 0.0), (x + 0.3, b.value)],
            c.mix(0.85).filled(),
        )))
        .map_err(e)?;
    let mut top = b.value;
    if let Some((lo, hi)) = b.ci {
        top = hi.max(b.value);
        chart
            .draw_series(std::iter::once(ErrorBar::new_vertical(
                x,
                lo,
                b.value,
                hi,
                BLACK.stroke_width(2),
                14,
            )))
            .map_err(e)?;
    }
    let text = crate::metric::num(b.value);
    let style = (FONT, 17)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Center, VPos::Bottom));
    chart
        .draw_series(std::iter::once(
            EmptyElement::at((x, top)) + Text::new(text, (0, -4), style),
        ))
        .map_err(e)?;
    Ok(())
}

/// Grouped bars: for each target, one bar per series (e.g. idle/peak/after),
/// each labelled with its series name and value.
pub fn grouped_bars(
    title: &str,
    y_desc: &str,
    series: &[&str],
    groups: &[(String, Vec<f64>)],
) -> Result<String, String> {
    let n = groups.len().max(1);
    let top = axis_max(groups.iter().flat_map(|g| g.1.iter().copied()));
    svg(SIZE, |root| {
        let mut chart = frame(root, title, y_desc, n, top)?;
        let width = 0.8 / series.len().max(1) as f64;
        for (gi, (_, values)) in groups.iter().enumerate() {
            for (si, v) in values.iter().enumerate() {
                let x0 = gi as f64 - 0.4 + si as f64 * width;
                let style = color(si).mix(0.85).filled();
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(x0 + 0.02, 0.0), (x0 + width - 0.02, *v)],
                        style,
                    )))
                    .map_err(e)?;
                let name = series.get(si).copied().unwrap_or("");
                let text = format!("{name} {}", crate::metric::axis_num(*v));
                let style = (FONT, 14)
                    .into_font()
                    .color(&BLACK)
                    .pos(Pos::new(HPos::Center, VPos::Bottom));
                let at = (x0 + width / 2.0, *v);
                chart
                    .draw_series(std::iter::once(
                        EmptyElement::at(at) + Text::new(text, (0, -3), style),
                    ))
                    .map_err(e)?;
            }
        }
        let names: Vec<String> = groups.iter().map(|g| g.0.clone()).collect();
        category_labels(&mut chart, &names)
    })
}
