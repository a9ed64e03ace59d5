//! The HTML report's line charts, drawn with `plotters` into SVG strings
//! that are inlined into the page: the latency percentile spectrum on a log
//! 1/(1−p) axis and the per-second timeline ([`lines`]), and latency
//! against offered load for capacity searches ([`capacity`]). Bars are HTML
//! (`super::bars`). Every line is in its target's colour
//! ([`crate::colour`]) and named in text at its end, not by colour alone;
//! plotters escapes the SVG text. The size, font, line type and SVG
//! rendering they share are in [`canvas`].

mod canvas;
mod capacity;
mod lines;

pub use canvas::{ChartError, Line};
pub use capacity::{goodput_curves, latency_curves, SloLine};
pub use lines::{spectrum, spectrum_points, timeline};
