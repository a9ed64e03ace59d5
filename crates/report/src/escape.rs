//! Escaping of every string taken from data before it enters a report: HTML
//! text and attributes, and Markdown table cells (which GitHub and others
//! render as HTML, so angle brackets become entities there too).

/// Escapes text for HTML element content and double- or single-quoted attributes.
pub fn html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Escapes text for a Markdown paragraph or table cell: HTML-significant
/// characters become entities, Markdown punctuation is backslash-escaped and
/// line breaks become spaces so a cell stays on its row.
pub fn md(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\n' | '\r' => out.push(' '),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '#' | '!' | '~' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn html_escapes_markup_and_quotes() {
        assert_eq!(
            super::html("<script>alert('x')</script>&\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;"
        );
    }

    #[test]
    fn md_escapes_markup_and_table_syntax() {
        assert_eq!(super::md("<b>|*x*|\nrow"), "&lt;b&gt;\\|\\*x\\*\\| row");
    }
}
