//! `annotations/*.toml`: what happened around the tests — deploys, config
//! changes, incidents — kept as small reviewable files in the archive,
//! drawn on the charts and listed on the history page.
//!
//! A file holds one entry as top-level keys:
//!
//! ```toml
//! date = 2026-11-19T14:30:00Z        # or a day (2026-11-19, midnight UTC), or run = "<run id>"
//! text = "Payment service moved to the new cluster"
//! link = "https://wiki.example.com/incidents/42"   # optional, an http(s) address
//! endpoints = ["cart-checkout"]      # optional; without it, every endpoint
//! ```
//!
//! or several as `[[annotation]]` tables with the same keys. A bad file
//! is a diagnostic naming the file and line; the other files are read.

use std::path::Path;

use chrono::{DateTime, NaiveDate, Utc};
use serde::Deserialize;
use toml::Spanned;

use super::layout;
use crate::error::{Diagnostic, DiagnosticKind, Error};
use crate::model::{Annotation, Run};

/// The folder under the archive root that holds the annotation files.
pub const ANNOTATIONS_DIR: &str = "annotations";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEntry {
    #[serde(default)]
    date: Option<Spanned<toml::Value>>,
    #[serde(default)]
    run: Option<Spanned<String>>,
    text: Spanned<String>,
    #[serde(default)]
    link: Option<Spanned<String>>,
    #[serde(default)]
    endpoints: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ManyEntries {
    annotation: Vec<Spanned<RawEntry>>,
}

/// Parses one annotation file; `runs` resolve `run = "…"` to its start.
/// `path` (relative to the archive root) is used in messages and in each
/// annotation's `source`.
pub fn parse_annotation_file(
    text: &str,
    path: &Path,
    runs: &[Run],
) -> Result<Vec<Annotation>, Error> {
    let toml_err = |e: toml::de::Error| {
        Error::at(
            path,
            crate::config::toml_line(text, &e),
            e.message().to_string(),
        )
    };
    let table: toml::Table = toml::from_str(text).map_err(toml_err)?;
    let entries: Vec<(u64, RawEntry)> = if table.contains_key("annotation") {
        let many: ManyEntries = toml::from_str(text).map_err(toml_err)?;
        if many.annotation.is_empty() {
            return Err(Error::at(path, None, "[[annotation]] list is empty"));
        }
        many.annotation
            .into_iter()
            .map(|e| (crate::error::line_at(text, e.span().start), e.into_inner()))
            .collect()
    } else {
        vec![(1, toml::from_str(text).map_err(toml_err)?)]
    };
    entries
        .into_iter()
        .map(|(line, raw)| {
            let at = |span: std::ops::Range<usize>, message: String| {
                Error::at(path, Some(crate::error::line_at(text, span.start)), message)
            };
            let (at_time, run) = match (&raw.date, &raw.run) {
                (Some(_), Some(run)) => {
                    return Err(at(
                        run.span(),
                        "give either date or run, not both".to_string(),
                    ));
                }
                (None, None) => {
                    return Err(Error::at(
                        path,
                        Some(line),
                        "an annotation needs a date (2026-11-19 or 2026-11-19T14:30:00Z) or a run",
                    ));
                }
                (Some(date), None) => (parse_when(date).map_err(|m| at(date.span(), m))?, None),
                (None, Some(run)) => {
                    let found = runs
                        .iter()
                        .find(|r| r.id == *run.get_ref())
                        .ok_or_else(|| {
                            at(
                                run.span(),
                                format!("no run {} in the archive", run.get_ref()),
                            )
                        })?;
                    (found.started_at, Some(found.id.clone()))
                }
            };
            if raw.text.get_ref().trim().is_empty() {
                return Err(at(raw.text.span(), "text must not be empty".into()));
            }
            let link = match &raw.link {
                Some(l)
                    if l.get_ref().starts_with("https://")
                        || l.get_ref().starts_with("http://") =>
                {
                    Some(l.get_ref().clone())
                }
                Some(l) if l.get_ref().trim().is_empty() => None,
                Some(l) => {
                    return Err(at(
                        l.span(),
                        format!("link '{}' should be an http(s) address", l.get_ref()),
                    ));
                }
                None => None,
            };
            let mut endpoints = raw.endpoints.clone();
            endpoints.sort();
            endpoints.dedup();
            Ok(Annotation {
                at: at_time,
                run,
                text: raw.text.get_ref().trim().to_string(),
                link,
                endpoints,
                source: format!("{}:{line}", path.display()),
            })
        })
        .collect()
}

/// A TOML date-time with an offset, or a day (midnight UTC).
fn parse_when(value: &Spanned<toml::Value>) -> Result<DateTime<Utc>, String> {
    let text = match value.get_ref() {
        toml::Value::Datetime(d) => d.to_string(),
        toml::Value::String(s) => s.clone(),
        other => {
            return Err(format!(
                "date should be a day (2026-11-19) or a time (2026-11-19T14:30:00Z), found {}",
                other.type_str()
            ));
        }
    };
    if let Ok(day) = NaiveDate::parse_from_str(&text, "%Y-%m-%d") {
        return Ok(day.and_hms_opt(0, 0, 0).expect("midnight exists").and_utc());
    }
    crate::calendar::parse_rfc3339(&text).map_err(|_| {
            format!(
                "date '{text}' is not a day (2026-11-19) or a time with its offset (2026-11-19T14:30:00Z)"
            )
        })
}

/// Reads every `annotations/*.toml` under the archive root, in name
/// order, and returns them sorted by time. A bad file becomes a
/// diagnostic and the others are still read.
pub fn load_annotations(
    root: &Path,
    runs: &[Run],
    limits: &super::limits::Limits,
) -> (Vec<Annotation>, Vec<Diagnostic>) {
    let (files, mut diagnostics) =
        layout::read_toml_folder(root, ANNOTATIONS_DIR, limits, DiagnosticKind::SkippedExtra);
    let mut out = Vec::new();
    for (rel, text) in files {
        let parsed = text.and_then(|text| parse_annotation_file(&text, Path::new(&rel), runs));
        match parsed {
            Ok(found) => out.extend(found),
            // Annotations add to the pages, never to a verdict.
            Err(e) => diagnostics.push(Diagnostic::from_error_with(
                DiagnosticKind::SkippedExtra,
                "skipped: ",
                &e,
            )),
        }
    }
    out.sort_by(|a, b| a.at.cmp(&b.at).then_with(|| a.source.cmp(&b.source)));
    (out, diagnostics)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support;

    fn runs() -> Vec<Run> {
        test_support::archive_of(&[("e", vec![vec![1.0]; 3])]).runs
    }

    #[test]
    fn one_entry_by_day_and_many_by_time_or_run() {
        let one = "date = 2026-11-19\ntext = \"Deployed 1.7.0\"\n";
        let a = &parse_annotation_file(one, Path::new("annotations/a.toml"), &runs()).unwrap()[0];
        assert_eq!(a.at.to_rfc3339(), "2026-11-19T00:00:00+00:00");
        assert_eq!(
            (a.text.as_str(), a.run.as_deref()),
            ("Deployed 1.7.0", None)
        );
        assert!(a.endpoints.is_empty() && a.link.is_none());
        assert_eq!(a.source, "annotations/a.toml:1");

        let runs = runs();
        let many = format!(
            "[[annotation]]\ndate = 2026-11-19T14:30:00+01:00\ntext = \"incident\"\nlink = \"https://wiki.example.com/42\"\n\
             endpoints = [\"b\", \"a\", \"b\"]\n\n[[annotation]]\nrun = \"{}\"\ntext = \"new JVM flags\"\n",
            runs[1].id
        );
        let list = parse_annotation_file(&many, Path::new("annotations/m.toml"), &runs).unwrap();
        assert_eq!(list[0].at.to_rfc3339(), "2026-11-19T13:30:00+00:00");
        assert_eq!(list[0].endpoints, ["a", "b"]);
        assert_eq!(list[0].link.as_deref(), Some("https://wiki.example.com/42"));
        assert_eq!(list[1].at, runs[1].started_at);
        assert_eq!(list[1].run.as_deref(), Some(runs[1].id.as_str()));
        assert_eq!(list[1].source, "annotations/m.toml:7");
    }

    #[test]
    fn errors_name_file_and_line() {
        for (text, line, words) in [
            ("text = \"x\"\n", 1, "needs a date"),
            (
                "date = 2026-11-19\nrun = \"r\"\ntext = \"x\"\n",
                2,
                "not both",
            ),
            ("run = \"nope\"\ntext = \"x\"\n", 1, "no run nope"),
            ("date = \"last week\"\ntext = \"x\"\n", 1, "is not a day"),
            (
                "date = 2026-11-19\ntext = \"  \"\n",
                2,
                "text must not be empty",
            ),
            (
                "date = 2026-11-19\ntext = \"x\"\nlink = \"wiki/42\"\n",
                3,
                "http(s)",
            ),
            (
                "date = 2026-11-19\ntext = \"x\"\ncolour = \"red\"\n",
                3,
                "colour",
            ),
        ] {
            let err = parse_annotation_file(text, Path::new("a.toml"), &runs())
                .unwrap_err()
                .to_string();
            assert!(
                err.starts_with(&format!("a.toml:{line}:")),
                "{text:?}: {err}"
            );
            assert!(err.contains(words), "{text:?}: {err}");
        }
    }

    #[test]
    fn a_bad_file_does_not_hide_the_others() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join(ANNOTATIONS_DIR);
        std::fs::create_dir(&folder).unwrap();
        std::fs::write(
            folder.join("a.toml"),
            "date = 2026-11-20\ntext = \"later\"\n",
        )
        .unwrap();
        std::fs::write(folder.join("b.toml"), "date = \n").unwrap();
        std::fs::write(
            folder.join("c.toml"),
            "date = 2026-11-19\ntext = \"earlier\"\n",
        )
        .unwrap();
        std::fs::write(folder.join("README.md"), "notes").unwrap();
        let (list, diags) = load_annotations(dir.path(), &runs(), &Default::default());
        assert_eq!(
            list.iter().map(|a| a.text.as_str()).collect::<Vec<_>>(),
            ["earlier", "later"]
        );
        assert_eq!(diags.len(), 1, "{diags:?}");
        assert_eq!(diags[0].path, "annotations/b.toml");
        assert!(diags[0].message.starts_with("skipped:"), "{diags:?}");
        assert_eq!(
            load_annotations(
                tempfile::tempdir().unwrap().path(),
                &[],
                &Default::default()
            ),
            (vec![], vec![])
        );
    }
}
