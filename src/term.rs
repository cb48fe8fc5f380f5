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
/// `\u{1b}`, …), so that it prints as exactly one line of what it says.
pub fn escape(text: &str) -> Cow<'_, str> {
    escape_keeping(text, false)
}

/// Like [`escape`], but newlines are kept: for messages made of several
/// lines, whose parts that come from data were escaped with [`escape`].
pub fn escape_lines(text: &str) -> Cow<'_, str> {
    escape_keeping(text, true)
}

fn escape_keeping(text: &str, newlines: bool) -> Cow<'_, str> {
    let needs = |c: char| is_unsafe(c) && !(newlines && c == '\n');
    if !text.chars().any(needs) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if !needs(c) {
            out.push(c);
            continue;
        }
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            other => out.push_str(&format!("\\u{{{:x}}}", other as u32)),
        }
    }
    Cow::Owned(out)
}

/// C0 and C1 controls and DEL, and the bidirectional formatting
/// characters (which can make a name display as different text).
fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
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
