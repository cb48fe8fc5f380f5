//! Generated sections of the documentation: the text between
//! `<!-- BEGIN perfdash NAME -->` and `<!-- END perfdash NAME -->` is
//! written by a command (`perfdash eval --write`, `cargo run --example
//! gen_demo`) and read back by the tests that fail when it drifts, so docs
//! never quote a number by hand.

fn markers(name: &str) -> (String, String) {
    (
        format!("<!-- BEGIN perfdash {name} -->"),
        format!("<!-- END perfdash {name} -->"),
    )
}

/// The generated text of section `name`, if the document has one.
pub fn section<'a>(document: &'a str, name: &str) -> Option<&'a str> {
    let (begin, end) = markers(name);
    let from = document.find(&begin)? + begin.len();
    let to = from + document[from..].find(&end)?;
    Some(
        document[from..to]
            .strip_prefix('\n')
            .unwrap_or(&document[from..to]),
    )
}

/// `document` with section `name` replaced by `generated` (appended, with
/// its markers, when the document has none).
pub fn splice(document: &str, name: &str, generated: &str) -> String {
    let (begin, end) = markers(name);
    match (document.find(&begin), document.find(&end)) {
        (Some(b), Some(e)) if b < e => format!(
            "{}{begin}\n{generated}{end}{}",
            &document[..b],
            &document[e + end.len()..]
        ),
        _ => format!("{document}\n{begin}\n{generated}{end}\n"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splice_replaces_between_markers_and_section_reads_it_back() {
        let doc = "intro\n<!-- BEGIN perfdash x -->\nold\n<!-- END perfdash x -->\noutro\n";
        let out = splice(doc, "x", "new\n");
        assert_eq!(
            out,
            "intro\n<!-- BEGIN perfdash x -->\nnew\n<!-- END perfdash x -->\noutro\n"
        );
        assert_eq!(section(&out, "x"), Some("new\n"));
        assert_eq!(section(&out, "y"), None);
        let appended = splice("x", "y", "new\n");
        assert_eq!(section(&appended, "y"), Some("new\n"));
        // Another section's markers are left alone.
        assert_eq!(splice(&out, "y", "z\n").matches("new").count(), 1);
    }
}
