//! The switches that hide a target from every chart, on the run page and
//! the trend page alike: one checkbox per measured target, and one CSS rule
//! per palette entry that hides everything of class `tN` while box N is
//! checked. CSS alone, so the page needs no script for it.

use crate::colour::Palette;
use crate::escape::html as esc;
use std::fmt::Write;

/// One checkbox per target of `palette` for which `measured` holds (a
/// target that failed has nothing to hide); box N hides `.tN`.
pub fn fieldset(out: &mut String, palette: &Palette, measured: impl Fn(&str) -> bool) {
    out.push_str("<fieldset class=\"switches\"><legend>Hide from every chart</legend>");
    for (i, s) in palette.swatches().iter().enumerate() {
        if !measured(&s.target) {
            continue;
        }
        let _ = write!(
            out,
            "<label style=\"--c:{}\"><input type=\"checkbox\" id=\"hide-{i}\"><i></i>{}</label>",
            s.hex(),
            esc(&s.target)
        );
    }
    out.push_str("</fieldset>\n");
}

/// The CSS that makes the switches work, one rule per palette entry.
pub fn hide_rules(palette: &Palette) -> String {
    let mut s = String::new();
    for i in 0..palette.swatches().len() {
        let _ = writeln!(s, "body:has(#hide-{i}:checked) .t{i} {{ display: none; }}");
    }
    s
}
