//! Ranked horizontal bars in HTML and CSS rather than SVG, so that names,
//! values and axis labels are laid out by the browser (they cannot overlap
//! and stay legible at 390 px) while bar lengths are percentages. Each row
//! carries its target's colour and `tN` class (the page's "hide" switches
//! reach every chart through it) and a tooltip shown on hover or focus by
//! CSS alone. When values span more than [`LOG_SPAN`]× the axis is
//! logarithmic, with a checkbox that switches the chart to linear; both
//! geometries are in the page and CSS picks one, so no script is involved.

use crate::colour::Palette;
use crate::escape::html as esc;
use crate::metric::{axis_num, num};
use std::fmt::Write;

/// Above this ratio of the largest to the smallest value, a log axis.
pub const LOG_SPAN: f64 = 20.0;

/// One bar of a ranked chart.
#[derive(Debug, Clone)]
pub struct Row {
    /// The target (its colour and `tN` class).
    pub target: String,
    /// What is printed as its name (with flag marks).
    pub label: String,
    pub value: f64,
    pub ci: Option<(f64, f64)>,
    /// The tooltip's text, one line per entry.
    pub tip: Vec<String>,
}

/// A chart's axis: linear from 0, or logarithmic over whole decades.
#[derive(Debug, Clone, Copy)]
struct Scale {
    log: bool,
    lo: f64,
    hi: f64,
}

impl Scale {
    fn linear(hi: f64) -> Scale {
        Scale {
            log: false,
            lo: 0.0,
            hi: nice_top(hi),
        }
    }

    fn logarithmic(min: f64, max: f64) -> Scale {
        Scale {
            log: true,
            lo: 10f64.powf((min / 1.5).log10().floor()),
            // Room for the largest bar, not a whole empty decade.
            hi: max * 1.1,
        }
    }

    /// Position of `v` in percent of the track.
    fn pct(&self, v: f64) -> f64 {
        let p = if self.log {
            if v <= 0.0 {
                0.0
            } else {
                (v.log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())
            }
        } else {
            v / self.hi
        };
        (100.0 * p).clamp(0.0, 100.0)
    }

    /// At most five labelled ticks: decades on a log axis, a 1-2-5 step
    /// on a linear one.
    fn ticks(&self) -> Vec<f64> {
        if self.log {
            let (a, b) = (
                self.lo.log10().round() as i32,
                // Only decades inside the axis: a tick past its end would
                // be clamped onto it, beside the last real one.
                self.hi.log10().floor() as i32,
            );
            let step = ((b - a) as usize).div_ceil(5).max(1);
            (a..=b).step_by(step).map(|e| 10f64.powi(e)).collect()
        } else {
            let step = nice_step(self.hi / 4.0);
            let mut t = Vec::new();
            let mut v = 0.0;
            while v <= self.hi * 1.000_001 {
                t.push(v);
                v += step;
            }
            t
        }
    }
}

/// A 1-2-5 step of about `raw`.
pub(super) fn nice_step(raw: f64) -> f64 {
    if raw <= 0.0 || !raw.is_finite() {
        return 1.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    mag * if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    }
}

fn nice_top(max: f64) -> f64 {
    if max <= 0.0 || !max.is_finite() {
        return 1.0;
    }
    let step = nice_step(max / 4.0);
    (max / step).ceil() * step
}

/// `12k`, `1.5M`: short tick labels, so that five fit at 390 px.
fn short_num(v: f64) -> String {
    let a = v.abs();
    if a >= 1e6 {
        format!("{}M", axis_num(v / 1e6))
    } else if a >= 1e4 {
        format!("{}k", axis_num(v / 1e3))
    } else {
        axis_num(v)
    }
}

/// The scales a set of values needs: linear, plus log when they span more
/// than [`LOG_SPAN`]× and are all positive.
fn scales(rows: &[Row]) -> (Scale, Option<Scale>) {
    let tops = rows
        .iter()
        .map(|r| r.ci.map_or(r.value, |c| c.1.max(r.value)));
    let max = tops.fold(0.0_f64, |m, v| if v.is_finite() { m.max(v) } else { m });
    let min = rows
        .iter()
        .map(|r| r.value)
        .filter(|v| v.is_finite())
        .fold(f64::INFINITY, f64::min);
    let lin = Scale::linear(max);
    let log = (min > 0.0 && max / min > LOG_SPAN).then(|| Scale::logarithmic(min, max));
    (lin, log)
}

/// The custom properties of one row on one scale: bar end, CI ends.
fn geometry(out: &mut String, prefix: &str, s: &Scale, r: &Row) {
    let (lo, hi) = r.ci.unwrap_or((r.value, r.value));
    let _ = write!(
        out,
        "--{prefix}:{:.2}%;--{prefix}a:{:.2}%;--{prefix}b:{:.2}%;",
        s.pct(r.value),
        s.pct(lo),
        s.pct(hi.max(r.value))
    );
}

/// A ranked chart: rows in the order given (best first), the value at the
/// end of each bar, CI whiskers, an axis with its unit.
pub fn ranked(palette: &Palette, title: &str, unit: &str, rows: &[Row]) -> String {
    if rows.is_empty() {
        return format!(
            "<p class=\"chart-title\">{}</p><p class=\"note\">no data for this chart</p>",
            esc(title)
        );
    }
    let (lin, log) = scales(rows);
    let mut out = String::new();
    let log_class = if log.is_some() { " log" } else { "" };
    let _ = write!(
        out,
        "<div class=\"chart-head\"><span class=\"chart-title\">{}</span>",
        esc(title)
    );
    if log.is_some() {
        out.push_str(
            "<label class=\"axis-toggle\"><input type=\"checkbox\" class=\"linear\"> linear axis</label>",
        );
    }
    let _ = write!(out, "</div>\n<div class=\"rows{log_class}\">\n");
    for r in rows {
        let sw = palette.of(&r.target);
        let mut style = format!("--c:{};", sw.hex());
        geometry(&mut style, "l", &lin, r);
        if let Some(s) = &log {
            geometry(&mut style, "g", s, r);
        }
        let whisker = if r.ci.is_some() {
            "<span class=\"ci\"></span>"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "<div class=\"row t{}\" tabindex=\"0\" style=\"{style}\"><span class=\"name\">{}</span>\
             <span class=\"track\"><span class=\"bar\"></span>{whisker}<span class=\"val\">{}</span></span>\
             <span class=\"tip\" role=\"tooltip\">{}</span></div>",
            palette.index(&r.target),
            esc(&r.label),
            esc(&num(r.value)),
            r.tip.iter().map(|l| esc(l)).collect::<Vec<_>>().join("<br>")
        );
    }
    out.push_str("</div>\n");
    axis(&mut out, "lin", &lin, unit);
    if let Some(s) = &log {
        axis(&mut out, "log", s, &format!("{unit}, log scale"));
    }
    out
}

fn axis(out: &mut String, class: &str, s: &Scale, unit: &str) {
    let _ = write!(
        out,
        "<div class=\"axis {class}\"><span class=\"unit\">{}</span><span class=\"ticks\">",
        esc(unit)
    );
    for t in s.ticks() {
        let _ = write!(
            out,
            "<span style=\"left:{:.2}%\">{}</span>",
            s.pct(t),
            esc(&short_num(t))
        );
    }
    out.push_str("</span></div>\n");
}

/// One group of a grouped chart: a target and one value per series.
#[derive(Debug, Clone)]
pub struct Group {
    pub target: String,
    pub values: Vec<f64>,
    pub tip: Vec<String>,
}

/// Grouped bars on one linear axis: per target, one thin bar per series
/// (told apart by shade and by a legend above, not by labels on the bars),
/// each with its value at its end.
pub fn grouped(
    palette: &Palette,
    title: &str,
    unit: &str,
    series: &[&str],
    groups: &[Group],
) -> String {
    if groups.is_empty() {
        return format!(
            "<p class=\"chart-title\">{}</p><p class=\"note\">no data for this chart</p>",
            esc(title)
        );
    }
    let max = groups
        .iter()
        .flat_map(|g| g.values.iter().copied())
        .filter(|v| v.is_finite())
        .fold(0.0_f64, f64::max);
    let lin = Scale::linear(max);
    let mut out = format!(
        "<div class=\"chart-head\"><span class=\"chart-title\">{}</span><span class=\"legend\">",
        esc(title)
    );
    for (i, s) in series.iter().enumerate() {
        let _ = write!(out, "<span class=\"key s{i}\"><i></i>{}</span>", esc(s));
    }
    out.push_str("</span></div>\n<div class=\"rows grouped\">\n");
    for g in groups {
        let sw = palette.of(&g.target);
        let _ = write!(
            out,
            "<div class=\"row t{}\" tabindex=\"0\" style=\"--c:{}\"><span class=\"name\">{}</span><span class=\"stack\">",
            palette.index(&g.target),
            sw.hex(),
            esc(&g.target)
        );
        for (i, v) in g.values.iter().enumerate() {
            let r = Row {
                target: g.target.clone(),
                label: String::new(),
                value: *v,
                ci: None,
                tip: Vec::new(),
            };
            let mut style = String::new();
            geometry(&mut style, "l", &lin, &r);
            let _ = write!(
                out,
                "<span class=\"track s{i}\" style=\"{style}\"><span class=\"bar\"></span><span class=\"val\">{}</span></span>",
                esc(&if v.is_finite() { num(*v) } else { "—".into() })
            );
        }
        let _ = writeln!(
            out,
            "</span><span class=\"tip\" role=\"tooltip\">{}</span></div>",
            g.tip
                .iter()
                .map(|l| esc(l))
                .collect::<Vec<_>>()
                .join("<br>")
        );
    }
    out.push_str("</div>\n");
    axis(&mut out, "lin", &lin, unit);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wide_span_gets_a_log_axis_over_whole_decades() {
        let row = |v: f64| Row {
            target: "t".into(),
            label: "t".into(),
            value: v,
            ci: None,
            tip: vec![],
        };
        let (_, log) = scales(&[row(117_000.0), row(2_000.0)]);
        let log = log.expect("58× is more than 20×");
        assert_eq!(log.lo, 1000.0);
        assert!((log.hi - 128_700.0).abs() < 1.0, "{}", log.hi);
        assert_eq!(log.ticks(), vec![1e3, 1e4, 1e5]);
        let (_, log) = scales(&[row(319.0), row(5.5)]);
        assert_eq!(log.expect("58×").ticks(), vec![1.0, 10.0, 100.0]);
        assert!(scales(&[row(12_000.0), row(7_000.0)]).1.is_none());
        let lin = Scale::linear(12_400.0);
        assert_eq!(lin.hi, 15_000.0);
        assert_eq!(lin.ticks().len(), 4);
    }
}
