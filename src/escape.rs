//! Escaping, one function per target. Text from the archive (endpoint
//! names, run ids, notes, frame names) reaches HTML, SVG, XML, CSV, TOML
//! and Markdown; each target has exactly one escaper:
//!
//! | target | escaper |
//! |---|---|
//! | HTML pages | [`Html`], askama's escaper for every `{{ … }}` in `templates/` (`askama.toml`) |
//! | SVG drawn by perfdash (inline in pages), JUnit XML | [`xml`] |
//! | flame-graph SVG | inferno's own XML writer |
//! | CSV downloads | the `csv` crate's writer (`render::data`) |
//! | TOML (demo files, `perfdash triage --template`) | [`toml_string`] |
//! | a terminal or CI log (stderr, `check`/`compare`/`triage` text) | [`terminal`] (`term::escape`) |
//! | Markdown (`check --format markdown`, `compare --format markdown`) | [`markdown`] |
//! | JUnit XML (`check --format junit`) | [`junit`] |
//! | JSON printed by `check`/`compare`/`inspect` | serde_json, then [`json_output`] |
//! | a link to the published site (`[site] url`) | [`url`] |
//!
//! No JSON is embedded in a page (`data/analysis.json` is a file of its
//! own), so no JSON-in-HTML escaper is needed.
//!
//! What a reader is shown must be what the data says, on one line: a
//! name holding a newline, an escape sequence (`ESC [2K`) or a
//! bidirectional override (U+202E) could otherwise fake a line such as
//! `PASS: nothing regressed` in a CI log or a pull-request comment. Such
//! characters are written as visible escapes (`\n`, `\u{1b}`,
//! `\u{202e}`) by [`terminal`], which the text, Markdown and JUnit
//! escapers apply first; the pages' escaper ([`Html`]) writes them the
//! same way, keeping only the whitespace a page shows as a space (line
//! feed, tab, carriage return) ([`page_text`]).

use std::borrow::Cow;

/// Escapes text for XML (and HTML) content and attribute values: `& < > " '`
/// become entities, and the characters XML 1.0 forbids even as character
/// references (controls below U+0020 but tab, line feed and carriage
/// return; U+FFFE and U+FFFF) become U+FFFD.
///
/// Until issue 16 there were two copies. The one for SVG kept control
/// characters, so an endpoint named with, say, U+0007 made the chart's
/// markup ill-formed XML; the one for JUnit replaced them. Replacing is
/// right: the output must be well-formed wherever it lands. (They also
/// differed on `'`: `&#39;` is used because HTML 4 has no `&apos;`.)
pub fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if !xml_char(c) => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// Text for a terminal or a CI log: every control character (C0, C1,
/// DEL), every character that reorders text on screen (the bidirectional
/// formatting characters) and the Unicode line and paragraph separators
/// written as a visible escape (`\n`, `\r`, `\t`, `\u{1b}`, …), so that
/// the text prints as exactly one line of what it says.
pub fn terminal(text: &str) -> Cow<'_, str> {
    visible(text, &[])
}

/// [`terminal`], but line feeds are kept: for a message made of several
/// lines of perfdash's own, whose parts from data were escaped with
/// [`terminal`].
pub fn terminal_lines(text: &str) -> Cow<'_, str> {
    visible(text, &['\n'])
}

/// Text for a page (HTML, SVG, XML) before its entities: [`terminal`], but
/// the whitespace a page shows as a space is kept (line feed, tab,
/// carriage return), so a multi-line note stays as it was written while an
/// escape sequence or a bidirectional override is shown for what it is
/// instead of reordering the text around it.
pub fn page_text(text: &str) -> Cow<'_, str> {
    visible(text, &['\n', '\t', '\r'])
}

/// The characters [`is_unsafe`] names, but those in `keep`, written as
/// visible escapes.
fn visible<'a>(text: &'a str, keep: &[char]) -> Cow<'a, str> {
    let needs = |c: char| is_unsafe(c) && !keep.contains(&c);
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
            other => {
                use std::fmt::Write as _;
                let _ = write!(out, "\\u{{{:x}}}", other as u32);
            }
        }
    }
    Cow::Owned(out)
}

/// askama's escaper for the pages (`askama.toml` names it for `.html`
/// templates): [`page_text`], then askama's own HTML escaping.
#[derive(Debug, Clone, Copy, Default)]
pub struct Html;

impl askama::filters::Escaper for Html {
    fn write_escaped_str<W: std::fmt::Write>(&self, dest: W, string: &str) -> std::fmt::Result {
        askama::filters::Html.write_escaped_str(dest, &page_text(string))
    }
}

/// Characters no output may carry raw: C0 and C1 controls and DEL, the
/// bidirectional formatting characters (which make a name display as
/// other text), and the line and paragraph separators (U+2028, U+2029),
/// which some viewers break lines at.
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}'
                | '\u{200e}'
                | '\u{200f}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2066}'..='\u{2069}'
                | '\u{2028}'
                | '\u{2029}'
        )
}

/// Text for Markdown (a pull-request comment, a step summary), inline or
/// in a table cell: [`terminal`] first (so a newline in a name cannot end
/// a table row or start a heading, and no control or bidi character is
/// carried), then every ASCII punctuation character that Markdown or
/// GitHub's HTML gives a meaning to inside a line is backslash-escaped
/// (CommonMark renders an escaped punctuation character as itself):
/// `\` `` ` `` `*` `_` `[` `]` `<` `>` `|` `~` `&` (no entity, so no
/// `&#x202e;` either). Without `[` no link or image can open, so `(`
/// `)` `!` `:` are left as they are, and text stays readable. The markers
/// that mean something only at the start of a line (`#` `+` `-` `=`) are
/// escaped at the start of the text: a field is never placed at the start
/// of a line, but a caller need not know that.
pub fn markdown(text: &str) -> String {
    let text = terminal(text);
    let mut out = String::with_capacity(text.len() + 8);
    for (i, c) in text.chars().enumerate() {
        let special = match c {
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '~' | '&' => true,
            '#' | '+' | '-' | '=' => i == 0,
            _ => false,
        };
        if special {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Text for JUnit XML content or attributes: [`terminal`] first (JUnit
/// messages end up in CI logs and test viewers), then [`xml`].
pub fn junit(text: &str) -> String {
    xml(&terminal(text))
}

/// JSON text as serde_json writes it, with the characters serde_json
/// leaves raw but [`is_unsafe`] names (bidirectional formatting
/// characters, U+2028/U+2029, C1 controls) written as `\uXXXX` escapes.
/// Outside strings JSON is ASCII, so any such character is inside a
/// string, where the escape means the same character: the document
/// parses to the same value.
pub fn json_output(json: &str) -> Cow<'_, str> {
    // Line feeds and indentation are the document's own layout: serde_json
    // escapes every C0 control inside a string.
    let raw = |c: char| is_unsafe(c) && !matches!(c, '\n' | '\r' | '\t');
    if !json.chars().any(raw) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if raw(c) {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                use std::fmt::Write as _;
                let _ = write!(out, "\\u{unit:04x}");
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Checks a URL from the settings (`[site] url`): `http://` or `https://`
/// with a host, and no whitespace or control characters (a URL never
/// holds them; one that does was pasted wrong or is meant to break out of
/// a link). `Err` says what is wrong.
pub fn check_url(url: &str) -> Result<(), String> {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
        .ok_or("it must start with https:// or http://")?;
    let host = rest.split(['/', '?', '#']).next().unwrap_or("");
    if host.is_empty() {
        return Err("it has no host after the scheme".into());
    }
    if let Some(c) = url.chars().find(|c| c.is_whitespace() || is_unsafe(*c)) {
        // Named by its code point too: a space or a bidi mark shown as
        // itself reads as nothing.
        let shown = match c {
            ' ' => "a space".to_string(),
            _ => format!("{} (U+{:04X})", terminal(&c.to_string()), c as u32),
        };
        return Err(format!("it holds {shown}, which no URL does"));
    }
    Ok(())
}

/// A URL as a link destination (Markdown `[text](url)`, HTML `href`):
/// every byte outside the characters a URL may hold unescaped, and those
/// that would end a Markdown link or table cell (`(` `)` `<` `>` `|`
/// `` ` `` `"` `'` `\` `[` `]` `{` `}` `^`, spaces, non-ASCII), is
/// percent-encoded; `%` itself is kept, so an encoded URL stays as it was.
pub fn url(url: &str) -> String {
    let mut out = String::with_capacity(url.len());
    for b in url.bytes() {
        let keep = b.is_ascii_alphanumeric()
            || matches!(
                b,
                b'-' | b'.'
                    | b'_'
                    | b'~'
                    | b':'
                    | b'/'
                    | b'?'
                    | b'#'
                    | b'@'
                    | b'!'
                    | b'$'
                    | b'&'
                    | b'*'
                    | b'+'
                    | b','
                    | b';'
                    | b'='
                    | b'%'
            );
        if keep {
            out.push(b as char);
        } else {
            use std::fmt::Write as _;
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// At most `max_chars` characters of `text`, with `…` where it was cut:
/// text from data printed in a report stays a bounded size (a run.toml
/// with a million `[load]` keys once made a 27.8 MB pull-request comment).
pub fn clip(text: &str, max_chars: usize) -> Cow<'_, str> {
    match text.char_indices().nth(max_chars) {
        Some((cut, _)) => Cow::Owned(format!("{}…", &text[..cut])),
        None => Cow::Borrowed(text),
    }
}

/// XML 1.0's `Char` production: what may appear in a document at all.
fn xml_char(c: char) -> bool {
    matches!(c as u32, 0x9 | 0xA | 0xD | 0x20..=0xD7FF | 0xE000..=0xFFFD | 0x10000..=0x10FFFF)
}

/// A TOML basic string, quoted and escaped.
pub fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What a page shows of a run.toml value holding an escape sequence,
    /// a bidirectional override and a line break (found by trying it: the
    /// pages carried them raw).
    #[test]
    fn pages_show_controls_and_bidi_overrides_as_escapes() {
        use askama::filters::Escaper as _;
        let mut page = String::new();
        Html.write_escaped_str(&mut page, "c0bd\u{1b}[2K\r\nOK <b>\u{202e}evil\tx")
            .unwrap();
        assert_eq!(page, "c0bd\\u{1b}[2K\r\nOK &#60;b&#62;\\u{202e}evil\tx");
        assert!(!page.chars().any(|c| is_unsafe(c) && !"\n\t\r".contains(c)));
    }

    #[test]
    fn xml_known_values() {
        assert_eq!(
            xml(r#"<a href="x">&'"#),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
        assert_eq!(xml("bell\u{7} nul\u{0}"), "bell\u{FFFD} nul\u{FFFD}");
        assert_eq!(xml("tab\there\r\n"), "tab\there\r\n");
        assert_eq!(xml("Requête ×1.15"), "Requête ×1.15");
        assert_eq!(xml("\u{FFFF}"), "\u{FFFD}");
    }

    #[test]
    fn toml_strings_read_back() {
        for s in [
            "plain",
            "quote \" and \\ backslash",
            "line\nbreak",
            "tab\tand \u{7}",
        ] {
            let doc = format!("v = {}", toml_string(s));
            let parsed: toml::Table = toml::from_str(&doc).unwrap();
            assert_eq!(parsed["v"].as_str(), Some(s), "{doc}");
        }
    }

    proptest! {
        /// The property the SVG copy broke: whatever the name, the escaped
        /// text is well-formed XML character data and attribute text, and
        /// quick-xml reads back the original (control characters aside).
        #[test]
        fn escaped_text_is_well_formed_xml(s in any::<String>()) {
            let escaped = xml(&s);
            prop_assert!(escaped.chars().all(xml_char), "{escaped:?}");
            prop_assert!(!escaped.contains(['<', '>', '"', '\'']));
            let doc = format!("<a t=\"{escaped}\">{escaped}</a>");
            let mut reader = quick_xml::Reader::from_str(&doc);
            let mut text = String::new();
            loop {
                match reader.read_event() {
                    Ok(quick_xml::events::Event::Text(t)) => {
                        text.push_str(&t[..]);
                    }
                    Ok(quick_xml::events::Event::GeneralRef(r)) => {
                        let name = &r[..];
                        text.push_str(match name {
                            "amp" => "&",
                            "lt" => "<",
                            "gt" => ">",
                            "quot" => "\"",
                            "#39" => "'",
                            other => panic!("unexpected entity {other}"),
                        });
                    }
                    Ok(quick_xml::events::Event::Eof) => break,
                    Ok(_) => {}
                    Err(e) => prop_assert!(false, "{e}: {doc:?}"),
                }
            }
            let expected: String = s
                .chars()
                .map(|c| if xml_char(c) { c } else { '\u{FFFD}' })
                .collect();
            prop_assert_eq!(text, expected);
        }
    }
}
