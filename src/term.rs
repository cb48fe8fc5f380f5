//! Text for the terminal: names from an archive (folder and file names,
//! run ids, tag values) may hold control characters. Printed raw, a
//! newline in a folder name starts a fake `warning:` line, and an escape
//! sequence can recolour, hide or rewrite what the terminal shows. Every
//! message that names something from the data is printed through
//! [`escape`] (one line) or [`escape_lines`] (a message whose own lines
//! are perfdash's).

use std::borrow::Cow;

/// `text` with every control character, and every Unicode character that
/// reorders text on screen, written as an escape (`\n`, `\r`, `\t`,
/// `\u{1b}`, …), so that it prints as exactly one line of what it says
/// ([`crate::escape::terminal`], the one escaper for this target).
pub fn escape(text: &str) -> Cow<'_, str> {
    crate::escape::terminal(text)
}

/// Like [`escape`], but newlines are kept: for messages made of several
/// lines, whose parts that come from data were escaped with [`escape`].
pub fn escape_lines(text: &str) -> Cow<'_, str> {
    crate::escape::terminal_lines(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_cannot_start_a_line_or_send_escape_sequences() {
        let name = "ep\nwarning: all good\r\u{1b}[2K\u{202e}cod.exe";
        assert_eq!(
            escape(name),
            "ep\\nwarning: all good\\r\\u{1b}[2K\\u{202e}cod.exe"
        );
        assert_eq!(escape_lines("a\nb\u{7}"), "a\nb\\u{7}");
        assert!(matches!(escape("plain ünïcode"), Cow::Borrowed(_)));
    }
}
