//! Escaping of every string taken from data before it enters a report or
//! a command's output: HTML text and attributes, Markdown text and table
//! cells (which GitHub and others render as HTML, so angle brackets become
//! entities there too), and Markdown code spans. The one escaping module:
//! the study reports and the load, capacity and merge outputs use it.

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

/// A Markdown code span of `s`: fenced with more backticks than any run of
/// them inside (padded with spaces when `s` starts or ends with one), line
/// breaks as spaces, so it stays one span on its line. Nothing else needs
/// escaping inside a code span.
pub fn md_code(s: &str) -> String {
    let s = s.replace(['\n', '\r'], " ");
    let mut longest = 0;
    let mut run = 0;
    for c in s.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    let pad = if s.starts_with('`') || s.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{s}{pad}{fence}")
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

    #[test]
    fn md_code_outfences_backticks() {
        assert_eq!(super::md_code("GET /json"), "`GET /json`");
        assert_eq!(super::md_code("a``b\nc"), "```a``b c```");
        assert_eq!(super::md_code("`x"), "`` `x ``");
    }
}
