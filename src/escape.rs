//! Escaping, one function per target. Text from the archive (endpoint
//! names, run ids, notes, frame names) reaches HTML, SVG, XML, CSV, TOML
//! and Markdown; each target has exactly one escaper:
//!
//! | target | escaper |
//! |---|---|
//! | HTML pages | askama's HTML escaping of every `{{ … }}` in `templates/` |
//! | SVG drawn by perfdash (inline in pages), JUnit XML | [`xml`] |
//! | flame-graph SVG | inferno's own XML writer |
//! | CSV downloads | the `csv` crate's writer (`render::data`) |
//! | TOML (demo files, `perfdash triage --template`) | [`toml_string`] |
//! | Markdown tables (`check`/`compare --format markdown`) | `report::markdown_cell` |
//!
//! No JSON is embedded in a page (`data/analysis.json` is a file of its
//! own), so no JSON-in-HTML escaper is needed.

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
