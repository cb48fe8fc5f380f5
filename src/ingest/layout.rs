//! Folder listing and file-name rules of the archive layout.

use std::path::{Path, PathBuf};

use crate::error::Diagnostic;

/// One entry of an archive folder, in name order.
#[derive(Debug)]
pub(crate) enum Entry {
    Dir {
        name: String,
        path: PathBuf,
    },
    File {
        name: String,
        path: PathBuf,
    },
    /// Not read, with the reason (symbolic links, non-UTF-8 names, …).
    Skipped(Skipped),
}

#[derive(Debug)]
pub(crate) struct Skipped {
    path: PathBuf,
    reason: &'static str,
}

impl Skipped {
    pub(crate) fn relative_to(&self, root: &Path) -> Diagnostic {
        Diagnostic {
            path: super::relative(root, &self.path),
            line: None,
            message: self.reason.to_string(),
        }
    }
}

/// Lists a folder without following symbolic links: an archive is read as
/// it lies, and a link could lead anywhere on the machine. Sorted by name
/// so that every build sees the same order.
pub(crate) fn list_dir(dir: &Path) -> std::io::Result<Vec<Entry>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let file_type = entry.file_type()?;
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            out.push(Entry::Skipped(Skipped {
                path,
                reason: "skipped: the name is not valid UTF-8",
            }));
            continue;
        };
        if name.starts_with('.') {
            continue; // .git, .DS_Store, editor files
        }
        if file_type.is_symlink() {
            out.push(Entry::Skipped(Skipped {
                path,
                reason: "skipped: symbolic links are not followed",
            }));
        } else if file_type.is_dir() {
            out.push(Entry::Dir { name, path });
        } else if file_type.is_file() {
            out.push(Entry::File { name, path });
        } else {
            out.push(Entry::Skipped(Skipped {
                path,
                reason: "skipped: not a regular file",
            }));
        }
    }
    out.sort_by(|a, b| key(a).cmp(key(b)));
    Ok(out)
}

fn key(e: &Entry) -> &Path {
    match e {
        Entry::Dir { path, .. } | Entry::File { path, .. } => path,
        Entry::Skipped(s) => &s.path,
    }
}

/// The parts of `round-<n>[.<label>].<ext>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoundFileName {
    pub number: u32,
    pub label: Option<String>,
    /// The extension(s) after the label, e.g. `json` or `ndjson.gz`.
    pub extension: String,
}

impl RoundFileName {
    /// `round-0.warmup.json`: a warm-up round kept for reference, never measured.
    pub fn is_warmup(&self) -> bool {
        self.label.as_deref() == Some("warmup")
    }
}

/// Parses a round file name; `None` when the name does not follow the
/// pattern. Only `.json` is a summary today.
pub fn parse_round_file_name(name: &str) -> Option<RoundFileName> {
    let rest = name.strip_prefix("round-")?;
    let digits_end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    if digits_end == 0 {
        return None;
    }
    let number: u32 = rest[..digits_end].parse().ok()?;
    let tail = rest[digits_end..].strip_prefix('.')?;
    let (label, extension) = match tail.rsplit_once('.') {
        Some((label, ext)) => (Some(label.to_string()), ext.to_string()),
        None => (None, tail.to_string()),
    };
    if extension != "json" || label.as_deref() == Some("") {
        return None;
    }
    Some(RoundFileName {
        number,
        label,
        extension,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_names() {
        assert_eq!(
            parse_round_file_name("round-3.json"),
            Some(RoundFileName {
                number: 3,
                label: None,
                extension: "json".into()
            })
        );
        let labelled = parse_round_file_name("round-12.host-a.json").unwrap();
        assert_eq!(labelled.number, 12);
        assert_eq!(labelled.label.as_deref(), Some("host-a"));
        assert!(
            parse_round_file_name("round-0.warmup.json")
                .unwrap()
                .is_warmup()
        );
        assert_eq!(parse_round_file_name("round-.json"), None);
        assert_eq!(parse_round_file_name("round-1.txt"), None);
        assert_eq!(parse_round_file_name("round-1..json"), None);
        assert_eq!(parse_round_file_name("summary.json"), None);
        assert_eq!(parse_round_file_name("round-1json"), None);
    }
}
