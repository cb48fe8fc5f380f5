//! Text reports for the terminal and CI systems: pure functions from
//! analysis results to `String`s. The CLI prints them; nothing here does
//! I/O.
//!
//! Every string from the data (endpoint ids and names, run ids, reasons
//! that quote them, problems naming files) goes through the one escaper of
//! the report's target ([`crate::escape`]): [`text_field`] for a terminal
//! or CI log, [`markdown_cell`] for Markdown, [`junit_field`] for JUnit
//! XML, [`json_text`] over a whole JSON document. Each also bounds the
//! field ([`MAX_FIELD_CHARS`]), so no input makes a report without end.

pub mod check;
pub mod compare;
pub mod pr_comment;
pub mod triage;

use crate::escape;

/// The most characters of one field from the data that a text, Markdown
/// or JUnit report shows (the JSON report keeps every character).
pub const MAX_FIELD_CHARS: usize = 600;

/// A field from the data for a terminal or CI log: one line, no control
/// or bidirectional characters, at most [`MAX_FIELD_CHARS`].
pub fn text_field(s: &str) -> String {
    escape::terminal(&escape::clip(s, MAX_FIELD_CHARS)).into_owned()
}

/// A field from the data for GitHub-flavoured Markdown, inline or in a
/// table cell ([`escape::markdown`]), at most [`MAX_FIELD_CHARS`].
pub fn markdown_cell(s: &str) -> String {
    escape::markdown(&escape::clip(s, MAX_FIELD_CHARS))
}

/// A field from the data for JUnit XML text or attributes
/// ([`escape::junit`]), at most [`MAX_FIELD_CHARS`].
pub fn junit_field(s: &str) -> String {
    escape::junit(&escape::clip(s, MAX_FIELD_CHARS))
}

/// A JSON document as printed: serde_json's escaping, and the characters
/// it leaves raw ([`escape::json_output`]) escaped too.
pub fn json_text(json: String) -> String {
    match escape::json_output(&json) {
        std::borrow::Cow::Borrowed(_) => json,
        std::borrow::Cow::Owned(escaped) => escaped,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping() {
        assert_eq!(
            markdown_cell("GET /a|b *x*\nnext"),
            "GET /a\\|b \\*x\\*\\\\nnext"
        );
        assert_eq!(markdown_cell("order-list v1.2"), "order-list v1.2");
        assert_eq!(markdown_cell("- item"), "\\- item");
        assert_eq!(text_field("a\u{1b}[2K\r\nOK"), "a\\u{1b}[2K\\r\\nOK");
        assert_eq!(
            junit_field("<x a=\"\u{202e}\">"),
            "&lt;x a=&quot;\\u{202e}&quot;&gt;"
        );
        assert_eq!(
            text_field(&"x".repeat(700)).chars().count(),
            MAX_FIELD_CHARS + 1
        );
    }
}
