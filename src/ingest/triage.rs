//! `triage/*.toml`: human labels on alarms, kept as small reviewable files
//! in the archive. perfdash only reads them (`perfdash triage --template`
//! prints entries to paste in).
//!
//! A file holds one entry as top-level keys:
//!
//! ```toml
//! run = "2026-05-04T0300Z"
//! endpoint = "order-list"
//! label = "noise"            # real | noise | accepted
//! note = "GC pause on the load generator"
//! author = "dana"
//! date = 2026-05-05
//! owner = "dana"            # optional: who follows it up
//! issue = "https://issues.example.com/PERF-12"   # optional: an http(s) address
//! status = "investigating"  # optional: investigating | fixed | wontfix
//! ```
//!
//! or several as `[[label]]` tables with the same keys (the label itself
//! is then `label.label`, spelled `label = "…"` inside each table).

use std::path::Path;

use chrono::NaiveDate;
use serde::Deserialize;
use toml::Spanned;

use crate::error::{Diagnostic, DiagnosticKind, Error};
use crate::model::{FollowUp, Label, Status, TriageLabel};

use super::layout;

/// The folder under the archive root that holds the triage files.
pub const TRIAGE_DIR: &str = "triage";

/// One entry as written; spans give the line of each value for messages.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEntry {
    run: Spanned<String>,
    endpoint: Spanned<String>,
    label: Spanned<String>,
    #[serde(default)]
    note: Option<String>,
    author: Spanned<String>,
    date: Spanned<toml::Value>,
    #[serde(default)]
    owner: Option<String>,
    #[serde(default)]
    issue: Option<Spanned<String>>,
    #[serde(default)]
    status: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ManyEntries {
    label: Vec<Spanned<RawEntry>>,
}

/// Parses one triage file. `path` (relative to the archive root) is used
/// in messages and in each label's `source`.
pub fn parse_triage_file(text: &str, path: &Path) -> Result<Vec<TriageLabel>, Error> {
    let line_of = |offset: usize| crate::error::line_at(text, offset);
    let toml_err = |e: toml::de::Error| {
        Error::at(
            path,
            crate::config::toml_line(text, &e),
            e.message().to_string(),
        )
    };
    // `label` is a string in a one-entry file and an array of tables in a
    // many-entry file; look before choosing the shape to deserialize. A
    // file that reads as one entry has a string `label`, so it would take
    // that shape anyway: try it first, and parse once (thousands of
    // one-entry files are read by every build and check).
    let entries: Vec<(u64, RawEntry)> = if let Ok(one) = toml::from_str::<RawEntry>(text) {
        vec![(1, one)]
    } else if matches!(
        toml::from_str::<toml::Table>(text)
            .map_err(toml_err)?
            .get("label"),
        Some(toml::Value::Array(_))
    ) {
        let many: ManyEntries = toml::from_str(text).map_err(toml_err)?;
        if many.label.is_empty() {
            return Err(Error::at(path, None, "[[label]] list is empty"));
        }
        many.label
            .into_iter()
            .map(|e| {
                let start = e.span().start;
                (line_of(start), e.into_inner())
            })
            .collect()
    } else {
        let one: RawEntry = toml::from_str(text).map_err(toml_err)?;
        vec![(1, one)]
    };
    entries
        .into_iter()
        .map(|(entry_line, raw)| {
            let at = |span: std::ops::Range<usize>, message: String| {
                Error::at(path, Some(line_of(span.start)), message)
            };
            let label = Label::parse(raw.label.get_ref()).ok_or_else(|| {
                at(
                    raw.label.span(),
                    format!(
                        "label '{}' is not one of real, noise, accepted",
                        raw.label.get_ref()
                    ),
                )
            })?;
            for (key, value) in [
                ("run", &raw.run),
                ("endpoint", &raw.endpoint),
                ("author", &raw.author),
            ] {
                if value.get_ref().trim().is_empty() {
                    return Err(at(value.span(), format!("{key} must not be empty")));
                }
            }
            let date_text = match raw.date.get_ref() {
                toml::Value::String(s) => s.clone(),
                toml::Value::Datetime(d) => d.to_string(),
                other => {
                    return Err(at(
                        raw.date.span(),
                        format!(
                            "date should be a date such as 2026-05-05, found {}",
                            other.type_str()
                        ),
                    ));
                }
            };
            let date = NaiveDate::parse_from_str(&date_text, "%Y-%m-%d").map_err(|_| {
                at(
                    raw.date.span(),
                    format!("date '{date_text}' is not a day such as 2026-05-05"),
                )
            })?;
            let follow_up = follow_up(&raw, &at)?;
            Ok(TriageLabel {
                follow_up,
                run: raw.run.into_inner(),
                endpoint: raw.endpoint.into_inner(),
                label,
                note: raw.note.filter(|n| !n.trim().is_empty()),
                author: raw.author.into_inner(),
                date,
                source: format!("{}:{entry_line}", path.display()),
            })
        })
        .collect()
}

/// The optional `owner`, `issue` and `status` of an entry; an empty
/// value (as `perfdash triage --template` writes them) is no value.
fn follow_up(
    raw: &RawEntry,
    at: &dyn Fn(std::ops::Range<usize>, String) -> Error,
) -> Result<FollowUp, Error> {
    let given = |s: &str| Some(s.trim().to_string()).filter(|s| !s.is_empty());
    let issue = match &raw.issue {
        Some(v) => match given(v.get_ref()) {
            Some(url) if url.starts_with("https://") || url.starts_with("http://") => Some(url),
            Some(url) => {
                return Err(at(
                    v.span(),
                    format!("issue '{url}' should be an http(s) address of the issue"),
                ));
            }
            None => None,
        },
        None => None,
    };
    let status = match &raw.status {
        Some(v) => match given(v.get_ref()) {
            Some(s) => Some(Status::parse(&s).ok_or_else(|| {
                at(
                    v.span(),
                    format!("status '{s}' is not one of investigating, fixed, wontfix"),
                )
            })?),
            None => None,
        },
        None => None,
    };
    Ok(FollowUp {
        owner: raw.owner.as_deref().and_then(given),
        issue,
        status,
    })
}

/// Reads every `triage/*.toml` under the archive root, in name order. A bad
/// file becomes a diagnostic and the others are still read. When two
/// entries label the same alarm, the first (by file name) is kept. Files
/// are read like every archive file: one descriptor, no symbolic links,
/// no FIFOs, under the `[limits]` caps.
pub fn load_triage(
    root: &Path,
    limits: &super::limits::Limits,
) -> (Vec<TriageLabel>, Vec<Diagnostic>) {
    let (files, mut diagnostics) =
        layout::read_toml_folder(root, TRIAGE_DIR, limits, DiagnosticKind::SkippedInput);
    let mut labels: Vec<TriageLabel> = Vec::new();
    // (run, endpoint) → index in `labels`: thousands of labels are common.
    let mut first_of: std::collections::HashMap<(String, String), usize> = Default::default();
    // Parsed on every core, merged in name order: the first label of a
    // (run, endpoint) wins whatever thread parsed it.
    use rayon::prelude::*;
    let parsed: Vec<Result<Vec<TriageLabel>, crate::error::Error>> = files
        .into_par_iter()
        .map(|(rel, text)| text.and_then(|text| parse_triage_file(&text, Path::new(&rel))))
        .collect();
    for parsed in parsed {
        match parsed {
            Ok(found) => {
                for label in found {
                    let key = (label.run.clone(), label.endpoint.clone());
                    if let Some(first) = first_of.get(&key).map(|&i| &labels[i]) {
                        let (file, line) = split_source(&label.source);
                        diagnostics.push(Diagnostic {
                            kind: DiagnosticKind::Ignored,
                            path: file,
                            line,
                            message: format!(
                                "ignored: {} / {} is already labelled {} in {}",
                                label.run, label.endpoint, first.label, first.source
                            ),
                        });
                    } else {
                        first_of.insert(key, labels.len());
                        labels.push(label);
                    }
                }
            }
            Err(e) => diagnostics.push(Diagnostic::from_error_with(
                DiagnosticKind::SkippedInput,
                "skipped: ",
                &e,
            )),
        }
    }
    labels.sort_by(|a, b| a.run.cmp(&b.run).then_with(|| a.endpoint.cmp(&b.endpoint)));
    (labels, diagnostics)
}

/// `triage/x.toml:3` → (`triage/x.toml`, Some(3)).
pub(crate) fn split_source(source: &str) -> (String, Option<u64>) {
    match source.rsplit_once(':') {
        Some((file, line)) if line.parse::<u64>().is_ok() => (file.to_string(), line.parse().ok()),
        _ => (source.to_string(), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ONE: &str = "run = \"2026-05-04T0300Z\"\nendpoint = \"order-list\"\nlabel = \"noise\"\n\
                       note = \"GC on the load generator\"\nauthor = \"dana\"\ndate = 2026-05-05\n";

    #[test]
    fn one_entry_per_file() {
        let labels = parse_triage_file(ONE, Path::new("triage/a.toml")).unwrap();
        assert_eq!(labels.len(), 1);
        let l = &labels[0];
        assert_eq!(
            (l.run.as_str(), l.endpoint.as_str(), l.label),
            ("2026-05-04T0300Z", "order-list", Label::Noise)
        );
        assert_eq!(l.note.as_deref(), Some("GC on the load generator"));
        assert_eq!(l.date.to_string(), "2026-05-05");
        assert_eq!(l.source, "triage/a.toml:1");
    }

    #[test]
    fn many_entries_per_file_with_lines() {
        let text = "# week 47\n\n[[label]]\nrun = \"r1\"\nendpoint = \"e\"\nlabel = \"real\"\nauthor = \"a\"\ndate = \"2026-05-05\"\n\n\
                    [[label]]\nrun = \"r2\"\nendpoint = \"e\"\nlabel = \"accepted\"\nauthor = \"a\"\ndate = 2026-05-06\n";
        let labels = parse_triage_file(text, Path::new("triage/w47.toml")).unwrap();
        assert_eq!(
            labels.iter().map(|l| l.label).collect::<Vec<_>>(),
            [Label::Real, Label::Accepted]
        );
        assert_eq!(
            labels[0].source, "triage/w47.toml:3",
            "the [[label]] header line"
        );
        assert_eq!(labels[1].source, "triage/w47.toml:10");
        assert_eq!(labels[0].note, None);
    }

    #[test]
    fn errors_name_file_and_line() {
        let bad_label = ONE.replace("\"noise\"", "\"flaky\"");
        let err = parse_triage_file(&bad_label, Path::new("triage/a.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("triage/a.toml:3:"), "{err}");
        assert!(err.contains("real, noise, accepted"), "{err}");

        let bad_date = ONE.replace("2026-05-05", "\"yesterday\"");
        let err = parse_triage_file(&bad_date, Path::new("t.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("t.toml:6:"), "{err}");

        let unknown = format!("{ONE}severity = 3\n");
        let err = parse_triage_file(&unknown, Path::new("t.toml"))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("t.toml:7:") && err.contains("severity"),
            "{err}"
        );

        let missing = ONE.replace("author = \"dana\"\n", "");
        let err = parse_triage_file(&missing, Path::new("t.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("author"), "{err}");

        let second_bad = "[[label]]\nrun = \"r1\"\nendpoint = \"e\"\nlabel = \"real\"\nauthor = \"a\"\ndate = 2026-05-05\n\
                          [[label]]\nrun = \"r2\"\nendpoint = \"\"\nlabel = \"real\"\nauthor = \"a\"\ndate = 2026-05-05\n";
        let err = parse_triage_file(second_bad, Path::new("t.toml"))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("t.toml:9:") && err.contains("endpoint must not be empty"),
            "{err}"
        );
    }

    #[test]
    fn folder_reading_keeps_going_past_a_bad_file_and_reports_duplicates() {
        let dir = tempfile::tempdir().unwrap();
        let triage = dir.path().join(TRIAGE_DIR);
        std::fs::create_dir(&triage).unwrap();
        std::fs::write(triage.join("a.toml"), ONE).unwrap();
        std::fs::write(triage.join("b.toml"), "run = \n").unwrap();
        std::fs::write(triage.join("c.toml"), ONE.replace("noise", "real")).unwrap();
        std::fs::write(triage.join("README.md"), "labels live here").unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let (labels, diags) = load_triage(&root, &Default::default());
        assert_eq!(labels.len(), 1);
        assert_eq!(labels[0].label, Label::Noise, "the first file wins");
        assert_eq!(diags.len(), 2, "{diags:?}");
        assert_eq!(
            (diags[0].path.as_str(), diags[0].line),
            ("triage/b.toml", Some(1))
        );
        assert_eq!(
            (diags[1].path.as_str(), diags[1].line),
            ("triage/c.toml", Some(1))
        );
        assert!(
            diags[1]
                .message
                .contains("already labelled noise in triage/a.toml:1"),
            "{}",
            diags[1].message
        );
    }

    #[test]
    fn no_triage_folder_is_fine() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            load_triage(dir.path(), &Default::default()),
            (vec![], vec![])
        );
    }

    #[test]
    fn triage_files_are_read_under_the_limits_and_never_through_links() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let triage = root.join(TRIAGE_DIR);
        std::fs::create_dir(&triage).unwrap();
        std::fs::write(triage.join("a.toml"), ONE).unwrap();
        let limits = crate::ingest::limits::Limits {
            max_document_bytes: 10,
            ..Default::default()
        };
        let (labels, diags) = load_triage(&root, &limits);
        assert!(labels.is_empty());
        assert!(
            diags[0].message.contains("over the limit of 10"),
            "{diags:?}"
        );
        // A linked triage folder is not followed.
        let elsewhere = root.join("elsewhere");
        std::fs::rename(&triage, &elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &triage).unwrap();
        let (labels, diags) = load_triage(&root, &Default::default());
        assert!(labels.is_empty());
        assert_eq!(diags.len(), 1, "{diags:?}");
        assert!(diags[0].message.contains("symbolic link"), "{diags:?}");
    }

    #[test]
    fn owner_issue_and_status_are_read_and_checked() {
        let text = format!(
            "{ONE}owner = \"dana\"\nissue = \"https://issues.example.com/PERF-12\"\nstatus = \"investigating\"\n"
        );
        let l = &parse_triage_file(&text, Path::new("t.toml")).unwrap()[0];
        assert_eq!(l.follow_up.owner.as_deref(), Some("dana"));
        assert_eq!(
            l.follow_up.issue.as_deref(),
            Some("https://issues.example.com/PERF-12")
        );
        assert_eq!(l.follow_up.status, Some(Status::Investigating));

        // Left empty, as the template writes them: not given.
        let empty = format!("{ONE}owner = \"\"\nissue = \"\"\nstatus = \"\"\n");
        let l = &parse_triage_file(&empty, Path::new("t.toml")).unwrap()[0];
        assert_eq!(l.follow_up, FollowUp::default());

        let bad_status = format!("{ONE}status = \"done\"\n");
        let err = parse_triage_file(&bad_status, Path::new("t.toml"))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("t.toml:7:") && err.contains("investigating, fixed, wontfix"),
            "{err}"
        );
        let bad_issue = format!("{ONE}issue = \"PERF-12\"\n");
        let err = parse_triage_file(&bad_issue, Path::new("t.toml"))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("t.toml:7:") && err.contains("http(s)"),
            "{err}"
        );
    }
}
