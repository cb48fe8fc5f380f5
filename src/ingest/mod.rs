//! Reading an archive: the only stage that reads the file system.
//!
//! Layout (documented for users in `docs/archive.md`):
//!
//! ```text
//! <archive>/perfdash.toml                            optional settings
//! <archive>/runs/<run-id>/run.toml                   optional run metadata
//! <archive>/runs/<run-id>/<endpoint>/round-<n>[.<label>].json
//! ```
//!
//! One bad file never stops the build: it becomes a [`Diagnostic`], the
//! run is marked incomplete, and the rest is read.

pub mod k6_summary;
mod layout;
pub mod limits;
mod run_meta;

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::config::Settings;
use crate::error::{Diagnostic, Error};
use crate::model::{Archive, EndpointRun, Round, Run};

pub use layout::{RoundFileName, parse_round_file_name};
pub use run_meta::{parse_run_meta, run_time_from_id};

/// The folder under the archive root that holds one folder per run.
pub const RUNS_DIR: &str = "runs";

/// What was read, and what was skipped on the way.
#[derive(Debug)]
pub struct Loaded {
    pub archive: Archive,
    pub diagnostics: Vec<Diagnostic>,
}

/// Reads the whole archive. Fails only when nothing useful can be read
/// (no archive, no `runs/`, unreadable settings); anything smaller is a
/// diagnostic.
pub fn load_archive(root: &Path) -> Result<Loaded, Error> {
    let meta = std::fs::metadata(root).map_err(|e| Error::io(root, e))?;
    if !meta.is_dir() {
        return Err(Error::at(
            root,
            None,
            "not a folder: the archive must be a folder with a runs/ folder inside",
        ));
    }
    let settings = Settings::load(root)?;
    let runs_dir = root.join(RUNS_DIR);
    let run_dirs = layout::list_dir(&runs_dir).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Error::at(
            &runs_dir,
            None,
            "no runs/ folder: an archive keeps one folder per run under runs/ (see docs/archive.md)",
        ),
        _ => Error::io(&runs_dir, e),
    })?;

    let mut diagnostics = Vec::new();
    let mut candidates = Vec::new();
    for entry in run_dirs {
        match entry {
            layout::Entry::Dir { name, path } => candidates.push((name, path)),
            layout::Entry::Skipped(d) => diagnostics.push(d.relative_to(root)),
            layout::Entry::File { .. } => {} // notes or READMEs beside the runs are fine
        }
    }

    let results: Vec<(Option<Run>, Vec<Diagnostic>)> = candidates
        .par_iter()
        .map(|(id, path)| read_run(root, id, path, &settings))
        .collect();
    let mut runs = Vec::new();
    for (run, diags) in results {
        diagnostics.extend(diags);
        runs.extend(run);
    }
    runs.sort_by(|a, b| {
        a.started_at
            .cmp(&b.started_at)
            .then_with(|| a.id.cmp(&b.id))
    });
    // Two folders for one moment (a re-uploaded run, `2026-05-04T0300Z`
    // beside `2026-05-04t0300z`) would count twice towards the baseline:
    // both are kept, in id order, but the user is told.
    for pair in runs.windows(2) {
        if pair[0].started_at == pair[1].started_at {
            diagnostics.push(Diagnostic {
                path: format!("{RUNS_DIR}/{}", pair[1].id),
                line: None,
                message: format!(
                    "starts at the same time as {RUNS_DIR}/{} ({}): both are kept, ordered by id; \
                     remove one if it is a copy",
                    pair[0].id,
                    pair[0].started_at.to_rfc3339()
                ),
            });
        }
    }
    diagnostics.sort_by(|a, b| a.path.cmp(&b.path).then(a.line.cmp(&b.line)));

    Ok(Loaded {
        archive: Archive {
            root: root.to_path_buf(),
            settings,
            runs,
        },
        diagnostics,
    })
}

/// Reads one run folder. Returns `None` when the run cannot be placed in
/// time or holds no rounds at all.
fn read_run(
    root: &Path,
    id: &str,
    dir: &Path,
    settings: &Settings,
) -> (Option<Run>, Vec<Diagnostic>) {
    let mut diags = Vec::new();
    let rel = |p: &Path| relative(root, p);

    let meta_path = dir.join("run.toml");
    let parsed_meta = match limits::read_text_file(&meta_path, &settings.limits) {
        Ok(Some(text)) => match parse_run_meta(&text, Path::new(&rel(&meta_path))) {
            Ok(m) => Some(m),
            Err(e) => {
                diags.push(Diagnostic::from_error(&e));
                None
            }
        },
        Ok(None) => None,
        Err(e) => {
            diags.push(Diagnostic::from_error(&Error::io(
                Path::new(&rel(&meta_path)),
                e,
            )));
            None
        }
    };
    let (meta, started_at) = match parsed_meta {
        Some((meta, Some(t))) => (meta, Some(t)),
        Some((meta, None)) => (meta, run_time_from_id(id)),
        None => (Default::default(), run_time_from_id(id)),
    };
    let Some(started_at) = started_at else {
        diags.push(Diagnostic {
            path: rel(dir),
            line: None,
            message:
                "run skipped: no started_at in run.toml and the run id does not start with a date \
                      (e.g. 2026-05-04T0300Z)"
                    .into(),
        });
        return (None, diags);
    };

    let mut run = Run {
        id: id.to_string(),
        started_at,
        meta,
        endpoints: Default::default(),
        problems: Vec::new(),
    };
    let entries = match layout::list_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            diags.push(Diagnostic::from_error(&Error::io(Path::new(&rel(dir)), e)));
            return (None, diags);
        }
    };
    for entry in entries {
        match entry {
            layout::Entry::Dir { name, path } => {
                let (endpoint, mut d) = read_endpoint(root, &path, settings);
                if endpoint.rounds.is_empty() {
                    d.push(Diagnostic {
                        path: rel(&path),
                        line: None,
                        message: "no readable round files; endpoint left out of this run".into(),
                    });
                } else {
                    run.endpoints.insert(name, endpoint);
                }
                diags.extend(d);
            }
            layout::Entry::File { name, .. } if name == "run.toml" => {}
            layout::Entry::File { path, .. } => diags.push(Diagnostic {
                path: rel(&path),
                line: None,
                message: "ignored: files directly in a run folder other than run.toml are not read"
                    .into(),
            }),
            layout::Entry::Skipped(d) => diags.push(d.relative_to(root)),
        }
    }
    run.problems = diags.iter().map(|d| d.to_string()).collect();
    if run.endpoints.is_empty() {
        diags.push(Diagnostic {
            path: rel(dir),
            line: None,
            message: "run skipped: it holds no readable rounds".into(),
        });
        return (None, diags);
    }
    (Some(run), diags)
}

fn read_endpoint(root: &Path, dir: &Path, settings: &Settings) -> (EndpointRun, Vec<Diagnostic>) {
    let mut diags = Vec::new();
    let mut rounds: Vec<Round> = Vec::new();
    // Round numbers that have a file, read or not: a gap is a lost file.
    let mut numbers_seen = std::collections::BTreeSet::new();
    let entries = match layout::list_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            diags.push(Diagnostic::from_error(&Error::io(
                Path::new(&relative(root, dir)),
                e,
            )));
            return (EndpointRun::default(), diags);
        }
    };
    for entry in entries {
        let (name, path) = match entry {
            layout::Entry::File { name, path } => (name, path),
            layout::Entry::Dir { path, .. } => {
                diags.push(Diagnostic {
                    path: relative(root, &path),
                    line: None,
                    message: "ignored: folders inside an endpoint folder are not read".into(),
                });
                continue;
            }
            layout::Entry::Skipped(d) => {
                diags.push(d.relative_to(root));
                continue;
            }
        };
        let rel_path = relative(root, &path);
        let Some(file_name) = parse_round_file_name(&name) else {
            diags.push(Diagnostic {
                path: rel_path,
                line: None,
                message: "ignored: not a round file (expected round-<n>[.<label>].json)".into(),
            });
            continue;
        };
        if file_name.is_warmup() {
            continue;
        }
        numbers_seen.insert(file_name.number);
        let read = limits::read_document(&path, &settings.limits)
            .map_err(|e| Error::io(Path::new(&rel_path), e))
            .and_then(|bytes| {
                k6_summary::parse(&bytes, Path::new(&rel_path), &settings.analysis.metric)
            });
        match read {
            Ok(summary) => {
                if let Some(prev) = rounds.iter().find(|r| r.number == file_name.number) {
                    diags.push(Diagnostic {
                        path: rel_path,
                        line: None,
                        message: format!(
                            "skipped: round {} is already read from {}",
                            file_name.number, prev.source
                        ),
                    });
                    continue;
                }
                rounds.push(Round {
                    number: file_name.number,
                    label: file_name.label,
                    source: rel_path,
                    format: summary.format,
                    stats: summary.stats,
                });
            }
            Err(e) => diags.push(Diagnostic {
                message: format!("skipped: {}", Diagnostic::from_error(&e).message),
                ..Diagnostic::from_error(&e)
            }),
        }
    }
    rounds.sort_by_key(|r| r.number);
    if let Some(&last) = numbers_seen.last() {
        let missing: Vec<String> = (1..last)
            .filter(|n| !numbers_seen.contains(n))
            .map(|n| n.to_string())
            .collect();
        if !missing.is_empty() {
            diags.push(Diagnostic {
                path: relative(root, dir),
                line: None,
                message: format!(
                    "round(s) {} missing: there are files up to round-{last} but none for these numbers",
                    missing.join(", ")
                ),
            });
        }
    }
    (EndpointRun { rounds }, diags)
}

/// `path` relative to the archive root, with `/` separators, for messages
/// and for the site (so both are stable wherever the archive lives).
pub fn relative(root: &Path, path: &Path) -> String {
    let rel: PathBuf = path
        .strip_prefix(root)
        .map(Path::to_path_buf)
        .unwrap_or_else(|_| path.to_path_buf());
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}
