//! Text reports for the terminal and CI systems: pure functions from
//! analysis results to `String`s. The CLI prints them; nothing here does
//! I/O.

pub mod check;
pub mod compare;
pub mod pr_comment;
pub mod triage;

use crate::escape::xml as xml_escape;

/// Escapes text for a GitHub-flavoured Markdown table cell.
pub fn markdown_cell(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '|' | '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping() {
        assert_eq!(
            markdown_cell("GET /a|b *x*\nnext"),
            "GET /a\\|b \\*x\\* next"
        );
    }
}
