//! Folder listing and file-name rules of the archive layout.

use std::path::{Path, PathBuf};

use crate::cache::SourceIdentity;
use crate::error::{Diagnostic, DiagnosticKind};

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
        /// What shows it unchanged without reading it (a local file: its
        /// `stat`, not following a link, taken while listing: cheaper than
        /// a lookup of the whole path later), and what time trust and run
        /// records need of every file. `None`: it could not be looked at
        /// (or is no longer a file).
        identity: Option<SourceIdentity>,
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
        // Any of these might have been a round file: its figures may be
        // missing from the run.
        Diagnostic {
            kind: DiagnosticKind::SkippedInput,
            path: super::relative(root, &self.path),
            line: None,
            message: self.reason.to_string(),
        }
    }
}

/// Lists a folder without following symbolic links: an archive is read as
/// it lies, and a link could lead anywhere on the machine. Sorted by name
/// so that every build sees the same order. `dir` itself must not be a
/// link either (a linked `runs/` or `triage/` is refused, not followed);
/// its files are later opened with no link allowed on their path, so a
/// folder swapped for a link after this check is refused then.
pub(crate) fn list_dir(dir: &Path) -> std::io::Result<Vec<Entry>> {
    if std::fs::symlink_metadata(dir)?.file_type().is_symlink() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "is a symbolic link; links are not followed",
        ));
    }
    list_listed_dir(dir)
}

/// The identity of one file looked for by name rather than listed (a
/// step-load run's `resources.csv`, `run.toml`'s time): `None` when it is
/// not there, or not a regular file. A link is not followed.
pub(crate) fn identify(path: &Path) -> Option<SourceIdentity> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    crate::stat_stamp::of(&meta).map(|stamp| SourceIdentity::local(&stamp))
}

/// [`list_dir`] for a folder that a listing just gave as an
/// [`Entry::Dir`] (so not a link): the check is not made again, one path
/// lookup less per run and endpoint folder. Should it have been swapped
/// for a link since, its files are still refused when opened.
pub(crate) fn list_listed_dir(dir: &Path) -> std::io::Result<Vec<Entry>> {
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
            let identity = entry
                .metadata()
                .ok()
                .and_then(|m| crate::stat_stamp::of(&m))
                .map(|stamp| SourceIdentity::local(&stamp));
            out.push(Entry::File {
                name,
                path,
                identity,
            });
        } else {
            out.push(Entry::Skipped(Skipped {
                path,
                reason: "skipped: not a regular file",
            }));
        }
    }
    // One folder: the order of the paths is the order of the names.
    out.sort_by(|a, b| key(a).cmp(&key(b)));
    Ok(out)
}

/// The name an entry sorts by: its own for the usual entries (taking it
/// from the path parsed the path on every comparison), the path's last
/// part for a skipped one (whose name may not be UTF-8).
fn key(e: &Entry) -> Option<&std::ffi::OsStr> {
    match e {
        Entry::Dir { name, .. } | Entry::File { name, .. } => Some(std::ffi::OsStr::new(name)),
        Entry::Skipped(s) => s.path.file_name(),
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

/// The extensions a round file may have, longest first so that
/// `ndjson.gz` wins over `gz`. What the file holds is decided by its
/// content; the extension only says it is worth reading.
pub const ROUND_EXTENSIONS: [&str; 12] = [
    "ndjson.gz",
    "json.gz",
    "csv.gz",
    "jtl.gz",
    "log.gz",
    "tsv.gz",
    "ndjson",
    "json",
    "csv",
    "jtl",
    "log",
    "tsv",
];

/// The suffix of a Locust stats file (`round-3_stats.csv`).
const LOCUST_SUFFIX: &str = "_stats.csv";

/// The files Locust's `--csv PREFIX` writes beside `PREFIX_stats.csv`.
const LOCUST_COMPANIONS: [&str; 3] = ["_stats_history.csv", "_failures.csv", "_exceptions.csv"];

/// Whether `name` is one of the files Locust writes beside a round's
/// `_stats.csv` (`round-3_failures.csv`, …): the normal output of the
/// tool, holding nothing perfdash reads, so passed over without a warning
/// (a warning per file made every Locust build exit 1).
pub(super) fn is_locust_companion(name: &str) -> bool {
    LOCUST_COMPANIONS.iter().any(|suffix| {
        name.strip_suffix(suffix).is_some_and(|prefix| {
            parse_round_file_name(&format!("{prefix}{LOCUST_SUFFIX}")).is_some()
        })
    })
}

/// What a file in an endpoint folder is, by its name: the one rule
/// `build` reads an endpoint folder by and `perfdash record` files by, so
/// that record takes exactly the layouts build reads. Checked in this
/// order (a name that is two things is the first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileRole {
    /// `flame[.<kind>].<ext>` (any name starting with `flame`): a profile
    /// of this kind, whatever its format (`crate::profile`).
    Profile { kind: String },
    /// `steps.<ext>`: a step-load run (docs/capacity.md).
    Steps,
    /// `resources.csv`: readings beside a step-load run.
    Resources,
    /// A file Locust's `--csv PREFIX` writes beside `PREFIX_stats.csv`
    /// (`round-3_failures.csv`): kept, holds nothing perfdash reads.
    LocustCompanion,
    /// `round-<n>[.<label>].<ext>` or `round-<n>[.<label>]_stats.csv`.
    Round(RoundFileName),
    /// `run.toml`, which belongs in the run folder.
    RunMeta,
    /// Anything else: not read.
    Other,
}

/// The [`FileRole`] of a file named `name` in an endpoint folder.
pub fn classify(name: &str) -> FileRole {
    if let Some(kind) = crate::profile::kind_from_file_name(name) {
        return FileRole::Profile { kind };
    }
    if super::capacity::is_steps_file_name(name) {
        return FileRole::Steps;
    }
    if name == super::capacity::RESOURCES_FILE {
        return FileRole::Resources;
    }
    if is_locust_companion(name) {
        return FileRole::LocustCompanion;
    }
    if let Some(round) = parse_round_file_name(name) {
        return FileRole::Round(round);
    }
    if name == "run.toml" {
        return FileRole::RunMeta;
    }
    FileRole::Other
}

/// The Locust companion suffixes (`_stats_history.csv`, …), for `perfdash
/// record`, which files them beside their round's `_stats.csv`.
pub fn locust_companion_suffix(name: &str) -> Option<&'static str> {
    LOCUST_COMPANIONS
        .iter()
        .copied()
        .find(|suffix| name.ends_with(suffix))
}

/// Parses a round file name `round-<n>[.<label>].<ext>` (or Locust's
/// `round-<n>[.<label>]_stats.csv`); `None` when the name does not follow
/// the pattern. `<ext>` is one of [`ROUND_EXTENSIONS`].
pub fn parse_round_file_name(name: &str) -> Option<RoundFileName> {
    let rest = name.strip_prefix("round-")?;
    let digits_end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    if digits_end == 0 {
        return None;
    }
    // Only digits here, so parsing fails only on overflow: such a number
    // is far above any round number read, and the reader says so
    // (`ingest::max_round_number`) rather than "not a round file".
    let number: u32 = rest[..digits_end].parse().unwrap_or(u32::MAX);
    let tail = &rest[digits_end..];
    let (body, extension) = match tail.strip_suffix(LOCUST_SUFFIX) {
        Some(body) => (body, "stats.csv"),
        None => ROUND_EXTENSIONS.iter().find_map(|ext| {
            let body = tail.strip_suffix(ext)?.strip_suffix('.')?;
            Some((body, *ext))
        })?,
    };
    let label = match body {
        "" => None,
        _ => {
            let label = body.strip_prefix('.')?;
            if label.is_empty() || label.ends_with('.') {
                return None;
            }
            Some(label.to_string())
        }
    };
    Some(RoundFileName {
        number,
        label,
        extension: extension.to_string(),
    })
}

/// One `*.toml` file of an archive folder: its path relative to the
/// archive root and its text, or why it could not be read.
pub(crate) type TomlFile = (String, Result<String, crate::error::Error>);

/// The `*.toml` files of the archive folder `dir_name` (triage labels,
/// annotations), in name order, each as its path relative to `root` and
/// its text, read like every archive file: one descriptor, no symbolic
/// links, no FIFOs, under the `[limits]` caps. A missing folder is empty;
/// a folder that cannot be listed, and entries that are not plain files,
/// become diagnostics of `kind`. Other files (a README) are left alone.
pub(crate) fn read_toml_folder(
    root: &Path,
    dir_name: &str,
    limits: &super::limits::Limits,
    kind: DiagnosticKind,
) -> (Vec<TomlFile>, Vec<Diagnostic>) {
    use crate::error::Error;
    let dir = root.join(dir_name);
    let mut diagnostics = Vec::new();
    let entries = match list_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (Vec::new(), diagnostics),
        Err(e) => {
            diagnostics.push(Diagnostic::from_error(
                kind,
                &Error::io(Path::new(&super::relative(root, &dir)), e),
            ));
            return (Vec::new(), diagnostics);
        }
    };
    let mut paths = Vec::new();
    for entry in entries {
        let (name, path) = match entry {
            Entry::File { name, path, .. } => (name, path),
            Entry::Dir { .. } => continue,
            Entry::Skipped(s) => {
                diagnostics.push(s.relative_to(root));
                continue;
            }
        };
        if name.ends_with(".toml") {
            paths.push(path);
        }
    }
    // Read on every core (a triage folder holds thousands of small
    // files); `collect` keeps the name order.
    use rayon::prelude::*;
    let files = paths
        .into_par_iter()
        .map(|path| {
            let rel = super::relative(root, &path);
            let text = super::input::InputFile::open_in_archive(&path)
                .and_then(|file| super::limits::read_text(&file, limits))
                .map_err(|e| Error::io(Path::new(&rel), e));
            (rel, text)
        })
        .collect();
    (files, diagnostics)
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
        let raw = parse_round_file_name("round-2.ndjson.gz").unwrap();
        assert_eq!(
            (raw.number, raw.label, raw.extension.as_str()),
            (2, None, "ndjson.gz")
        );
        let labelled = parse_round_file_name("round-4.eu-west.jtl").unwrap();
        assert_eq!(
            (labelled.label.as_deref(), labelled.extension.as_str()),
            (Some("eu-west"), "jtl")
        );
        let locust = parse_round_file_name("round-5_stats.csv").unwrap();
        assert_eq!(
            (locust.number, locust.label, locust.extension.as_str()),
            (5, None, "stats.csv")
        );
        assert_eq!(
            parse_round_file_name("round-5.a_stats.csv")
                .unwrap()
                .label
                .as_deref(),
            Some("a")
        );
        assert_eq!(parse_round_file_name("round-1.gz"), None);
        assert_eq!(parse_round_file_name("round-1.csv.bz2"), None);
        for companion in [
            "round-1_stats_history.csv",
            "round-12.eu_failures.csv",
            "round-3_exceptions.csv",
        ] {
            assert!(is_locust_companion(companion), "{companion}");
        }
        // Asked first: `round-12.eu_failures.csv` would otherwise be round 12
        // with the label `eu_failures`.
        assert_eq!(parse_round_file_name("round-3_exceptions.csv"), None);
        for other in [
            "round-1_stats.csv",
            "notes_failures.csv",
            "round-_failures.csv",
        ] {
            assert!(!is_locust_companion(other), "{other}");
        }
        assert_eq!(
            parse_round_file_name("round-99999999999.json").map(|n| n.number),
            Some(u32::MAX),
            "too large for a round number, but still a round file name"
        );
    }
}
