//! How a level's label writes a duration: whole seconds as `5s`, other
//! lengths of a second or more to the millisecond (`1.25s`), shorter ones
//! in milliseconds (`250ms`). One definition for the level, warm-up and
//! WebSocket labels.

pub(crate) fn format_secs(s: f64) -> String {
    if s >= 1.0 && (s - s.round()).abs() < 1e-9 {
        format!("{}s", s.round() as u64)
    } else if s >= 1.0 {
        // 1.25 s is "1.25s", not "1.2s": up to milliseconds, no trailing 0.
        let ms = format!("{s:.3}");
        format!("{}s", ms.trim_end_matches('0'))
    } else {
        format!("{}ms", (s * 1000.0).round() as u64)
    }
}
