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

    /// Issue 16: the documentation stands on its own. It names no file of
    /// the team's shared notes (facts from them are copied with their
    /// public sources), and every relative link leads to a file of the
    /// repository.
    #[test]
    fn the_docs_point_inside_the_repository() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut pages = vec![root.join("README.md"), root.join("CHANGELOG.md")];
        for entry in std::fs::read_dir(root.join("docs")).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "md") {
                pages.push(path);
            }
        }
        let mut wrong = Vec::new();
        for page in &pages {
            let text = std::fs::read_to_string(page).unwrap();
            let name = page.strip_prefix(root).unwrap().display().to_string();
            for note in [
                "DETECTION.md",
                "FORMATS.md",
                "PEERS.md",
                "TOOLS.md",
                "STYLE.md",
            ] {
                if text.contains(note) {
                    wrong.push(format!("{name} names {note}"));
                }
            }
            for link in text.split("](").skip(1) {
                let target = link.split([')', '#', ' ']).next().unwrap_or_default();
                if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                let resolved = page.parent().unwrap().join(target);
                let inside = resolved
                    .canonicalize()
                    .is_ok_and(|p| p.starts_with(root.canonicalize().unwrap()));
                if !inside {
                    wrong.push(format!("{name} links to {target}"));
                }
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }
}
