//! Reading an archive: the only stage that reads the file system.
//!
//! Layout (documented for users in `docs/archive.md`):
//!
//! ```text
//! <archive>/perfdash.toml                            optional settings
//! <archive>/runs/<run-id>/run.toml                   optional run metadata
//! <archive>/runs/<run-id>/<endpoint>/round-<n>[.<label>].<ext>   summary or raw output
//! <archive>/runs/<run-id>/round-<n>[.<label>].<ext>              raw output of all endpoints
//! ```
//!
//! What a file holds is told by its content ([`raw::sniff`]). Raw outputs
//! are recomputed after trimming the warm-up ([`raw`]); when a round has
//! both a raw file and a summary, the raw file wins and the summary is a
//! cross-check.
//!
//! One bad file never stops the build: it becomes a [`Diagnostic`], the
//! run is marked incomplete, and the rest is read.
//!
//! **Where the files come from** (the seam a remote archive plugs into,
//! issue 37). Ingest asks four things of the place an archive lives, each
//! in one place:
//!
//! * *list a folder*: `layout::list_dir` (names in order, each file
//!   with its [`SourceIdentity`]), and `listing::RunLister`, which lists a
//!   run's folders from the run's record when their stamps are as they were;
//! * *identify one file by name*: `layout::identify` (`resources.csv`,
//!   `run.toml`'s time);
//! * *open a file*: [`input::InputFile::open_in_archive`] (one checked
//!   descriptor, every pass reads through it);
//! * *read a small text file*: [`limits::read_archive_text_file`]
//!   (`run.toml`, `perfdash.toml`, triage and annotation files).
//!
//! Above them nothing touches the file system, and nothing knows a file's
//! `stat`: a run is known unchanged by the [`SourceIdentity`] of each of
//! its files (`crate::cache::identity`). An archive on object storage
//! (`--archive s3://…`, issue 37) does not come through here: `crate::remote`
//! keeps a local copy, fetches only the objects whose listed identity (ETag
//! and size, or size and last modified) changed, and rewrites a file of the
//! copy only then, so ingest reads the copy as any folder and the `stat`
//! of its files moves exactly when an object changes.

pub mod annotations;
pub mod capacity;
pub mod input;
pub mod inspect;
pub mod k6_summary;
mod layout;
pub mod limits;
mod listing;
pub mod raw;
mod run_meta;
pub mod settings;
pub mod triage;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;

use crate::config::Settings;
use crate::error::{Diagnostic, DiagnosticKind, Error};
use crate::model::{
    Archive, CrossCheck, EndpointRun, ProfileFile, Round, Run, RunMeta, SourceFormat,
};

use crate::cache::{ReadCounts, RoundsRecord, RunCache, RunIdentity, SourceIdentity, Store};
use input::InputFile;
use raw::{FileResult, FileSettings, GroupResult, ReadOptions, StatsOptions};

pub use layout::{
    FileRole, ROUND_EXTENSIONS, RoundFileName, classify, locust_companion_suffix,
    parse_round_file_name,
};
pub use run_meta::{parse_run_meta, run_time_from_id};

/// The folder under the archive root that holds one folder per run.
pub const RUNS_DIR: &str = "runs";

/// What was read, and what was skipped on the way.
#[derive(Debug)]
pub struct Loaded {
    pub archive: Archive,
    pub diagnostics: Vec<Diagnostic>,
    /// Round files read, and how many of them came from the cache.
    pub counts: ReadCounts,
    /// A fingerprint of everything the archive gave: every file's `stat`
    /// (or content), the settings and every diagnostic. Equal fingerprints
    /// mean an equal archive as far as any build can tell; `None` when
    /// some file changed too recently to be known by `stat` (see `record`).
    pub inputs: Option<u128>,
}

/// How to load an archive beyond its own settings.
#[derive(Debug, Default)]
pub struct LoadOptions {
    /// `--warmup SECONDS`: overrides every warm-up setting.
    pub warmup_override: Option<f64>,
    /// What the last build kept (`crate::cache`).
    pub cache: Option<Store>,
    /// Show a progress bar on stderr (only pass `true` when stderr is a
    /// terminal).
    pub progress: bool,
    /// The build's time, against which runs dated in the future are
    /// flagged; `None`: [`build_time`] (`PERFDASH_NOW` or the wall clock).
    /// Tests pass a fixed time.
    pub now: Option<DateTime<Utc>>,
    /// Leave out the profiles of runs that come from their record (a gate:
    /// nothing it reports comes from stacks). A record is kept only for a
    /// run whose every file, profiles included, was read without a
    /// problem, and parsing is deterministic: parsing them again could
    /// only give the same stacks and no diagnostic. Their points then
    /// have no profiles, so a site must not be rendered from such a load.
    pub skip_recorded_profiles: bool,
}

/// Reads the whole archive with default options (no cache, the
/// archive's own warm-up settings).
pub fn load_archive(root: &Path) -> Result<Loaded, Error> {
    load_archive_with(root, &LoadOptions::default())
}

/// Reads the whole archive. Fails only when nothing useful can be read
/// (no archive, no `runs/`, unreadable settings); anything smaller is a
/// diagnostic. Runs, and the round files within a run, are read in
/// parallel.
pub fn load_archive_with(root: &Path, opts: &LoadOptions) -> Result<Loaded, Error> {
    let meta = std::fs::metadata(root).map_err(|e| Error::io(root, e))?;
    if !meta.is_dir() {
        return Err(Error::at(
            root,
            None,
            "not a folder: the archive must be a folder with a runs/ folder inside",
        ));
    }
    if let Some(w) = opts.warmup_override {
        crate::config::check_warmup("--warmup", w).map_err(Error::Usage)?;
    }
    let settings = settings::load(root)?;
    let now = match opts.now {
        Some(now) => now,
        None => build_time()?,
    };
    // Read below the resolved root: a path built from it holds no link
    // until the archive's own names, and those are never followed.
    let real_root = std::fs::canonicalize(root).map_err(|e| Error::io(root, e))?;
    let mut diagnostics = Vec::new();
    let candidates = list_run_folders(root, &real_root, &mut diagnostics)?;
    let reader = RoundReader {
        root: &real_root,
        settings: &settings,
        record_settings: serde_json::to_vec(&(&settings, opts.warmup_override)).unwrap_or_default(),
        started: std::time::SystemTime::now(),
        opts,
        uncached_reads: std::sync::atomic::AtomicUsize::new(0),
        progress: progress_bar(opts.progress),
        now,
        stacks: crate::profile::StackInterner::default(),
    };
    // The triage folder (thousands of small files at scale) is read while
    // the runs are: it needs nothing from them until the labels are
    // checked against the runs below.
    let (results, (mut labels, triage_diagnostics)) = rayon::join(
        || -> Vec<RunRead> {
            candidates
                .par_iter()
                .map(|(id, path)| read_run(&reader, id, path))
                .collect()
        },
        || triage::load_triage(&real_root, &settings.limits),
    );
    reader.progress.finish_and_clear();
    let counts = match &opts.cache {
        Some(cache) => cache.counts(),
        None => ReadCounts {
            read: reader
                .uncached_reads
                .load(std::sync::atomic::Ordering::Relaxed),
            cached: 0,
            runs_by_stat: 0,
            folders_as_listed: 0,
        },
    };
    let mut runs = Vec::new();
    // The fingerprint of everything read (see `Loaded::inputs`).
    let mut inputs = Some(xxhash_rust::xxh3::Xxh3::new());
    for ((run, diags, fingerprint), (id, _)) in results.into_iter().zip(&candidates) {
        diagnostics.extend(diags);
        runs.extend(run);
        match (&mut inputs, fingerprint) {
            (Some(h), Some(fp)) => {
                h.update(&(id.len() as u64).to_le_bytes());
                h.update(id.as_bytes());
                h.update(&fp.to_le_bytes());
            }
            _ => inputs = None,
        }
    }
    runs.sort_by(|a, b| {
        a.started_at
            .cmp(&b.started_at)
            .then_with(|| a.id.cmp(&b.id))
    });
    flag_runs_at_one_time(&runs, &mut diagnostics);
    diagnostics.extend(triage_diagnostics);
    keep_known_labels(&mut labels, &runs, &mut diagnostics);
    let (annotations, annotation_diagnostics) =
        annotations::load_annotations(&real_root, &runs, &settings.limits);
    diagnostics.extend(annotation_diagnostics);
    diagnostics.sort_by(|a, b| a.path.cmp(&b.path).then(a.line.cmp(&b.line)));
    let diagnostics = crate::error::merge_information(diagnostics);
    // Everything else the analysis reads: the settings, the labels and
    // annotations as parsed, and every diagnostic (which carries what the
    // clock decided: runs dated in the future).
    let inputs = inputs.and_then(|mut h| {
        let rest = (&reader.record_settings, &labels, &annotations, &diagnostics);
        h.update(&serde_json::to_vec(&rest).ok()?);
        Some(h.digest128())
    });

    Ok(Loaded {
        archive: Archive {
            root: root.to_path_buf(),
            settings,
            runs,
            triage: labels,
            annotations,
        },
        diagnostics,
        counts,
        inputs,
    })
}

/// The run folders under `runs/` (name and path below `real_root`, the
/// archive's resolved root); what is skipped there goes to `diagnostics`.
fn list_run_folders(
    root: &Path,
    real_root: &Path,
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<Vec<(String, PathBuf)>, Error> {
    let runs_dir = root.join(RUNS_DIR);
    let run_dirs = layout::list_dir(&real_root.join(RUNS_DIR)).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Error::at(
            &runs_dir,
            None,
            "no runs/ folder: an archive keeps one folder per run under runs/ (see docs/archive.md)",
        ),
        _ => Error::io(&runs_dir, e),
    })?;
    let mut candidates = Vec::new();
    for entry in run_dirs {
        match entry {
            layout::Entry::Dir { name, path } => candidates.push((name, path)),
            layout::Entry::Skipped(d) => diagnostics.push(d.relative_to(real_root)),
            layout::Entry::File { .. } => {} // notes or READMEs beside the runs are fine
        }
    }
    Ok(candidates)
}

/// Two folders for one moment (a re-uploaded run, `2026-05-04T0300Z`
/// beside `2026-05-04t0300z`) would count twice towards the baseline: both
/// are kept, in id order (`runs` is sorted), but the user is told.
fn flag_runs_at_one_time(runs: &[Run], diagnostics: &mut Vec<Diagnostic>) {
    for pair in runs.windows(2) {
        if pair[0].started_at == pair[1].started_at {
            diagnostics.push(Diagnostic {
                kind: DiagnosticKind::Doubtful,
                path: format!("{RUNS_DIR}/{}", pair[1].id),
                line: None,
                message: format!(
                    "starts at the same time as {RUNS_DIR}/{} ({}): both are kept, ordered by id; \
                     remove one if it is a copy",
                    pair[0].id,
                    crate::calendar::rfc3339(pair[0].started_at)
                ),
            });
        }
    }
}

/// A label on a run or endpoint that is not in the archive is most likely
/// a typo: it is dropped, and the user told, rather than silently ignored.
fn keep_known_labels(
    labels: &mut Vec<crate::model::TriageLabel>,
    runs: &[Run],
    diagnostics: &mut Vec<Diagnostic>,
) {
    let runs_by_id: std::collections::HashMap<&str, &Run> =
        runs.iter().map(|r| (r.id.as_str(), r)).collect();
    labels.retain(|label| {
        let known = runs_by_id.get(label.run.as_str()).is_some_and(|r| {
            r.endpoints.contains_key(&label.endpoint) || r.capacity.contains_key(&label.endpoint)
        });
        if !known {
            let (path, line) = triage::split_source(&label.source);
            diagnostics.push(Diagnostic {
                kind: DiagnosticKind::Ignored,
                path,
                line,
                message: format!(
                    "ignored: no run {} with endpoint {} in the archive",
                    label.run, label.endpoint
                ),
            });
        }
        known
    });
}

fn progress_bar(show: bool) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new_spinner();
    if let Ok(style) =
        ProgressStyle::with_template("{spinner} read {pos} round files ({per_sec}) {elapsed}")
    {
        bar.set_style(style);
    }
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    bar
}

/// What every run read shares.
struct RoundReader<'a> {
    root: &'a Path,
    settings: &'a Settings,
    opts: &'a LoadOptions,
    /// Round files read when there is no cache (the cache counts its own).
    uncached_reads: std::sync::atomic::AtomicUsize,
    progress: ProgressBar,
    /// The build's time (runs dated after it are not trusted).
    now: DateTime<Utc>,
    /// Everything besides its files that decides a run's rounds, for its
    /// record's fingerprint.
    record_settings: Vec<u8>,
    /// The wall clock when reading began (not `now`, which tests and
    /// `PERFDASH_NOW` set): files changed since shortly before it get no
    /// record (see `record`).
    started: std::time::SystemTime,
    /// The profiles' stacks, shared between the profiles of every run.
    stacks: crate::profile::StackInterner,
}

/// One round file to read.
struct Job {
    /// `None`: a run-level file holding several endpoints.
    endpoint: Option<String>,
    name: RoundFileName,
    path: PathBuf,
    rel: String,
    /// Its identity from the listing.
    identity: Option<SourceIdentity>,
}

/// A round of one endpoint offered by one file.
struct Offer {
    endpoint: String,
    number: u32,
    label: Option<String>,
    source: String,
    format: SourceFormat,
    /// 0 raw file in the endpoint folder, 1 run-level raw file, 2 summary.
    rank: u8,
    group: GroupResult,
}

impl RoundReader<'_> {
    fn fingerprinter(&self) -> RunIdentity {
        RunIdentity::new(self.started, &self.record_settings)
    }

    fn file_settings(&self, run_warmup: Option<f64>, endpoint: Option<&str>) -> FileSettings {
        file_settings(
            self.settings,
            self.opts.warmup_override,
            run_warmup,
            endpoint,
        )
    }

    /// Reads one round file: opened once, from the cache when its bytes
    /// and settings are known.
    fn analyse(
        &self,
        run_cache: Option<&RunCache<'_>>,
        job: &Job,
        settings: &FileSettings,
    ) -> Result<FileResult, Error> {
        let shown = Path::new(&job.rel);
        let result = match (InputFile::open_in_archive(&job.path), run_cache) {
            (Ok(file), Some(cache)) => {
                cache.get_or_compute("round", &job.rel, file, settings, |f| {
                    raw::analyse_input(f, shown, settings)
                })
            }
            (file, _) => {
                self.count_read();
                file.map_err(|e| Error::io(shown, e))
                    .and_then(|f| raw::analyse_input(&f, shown, settings))
            }
        };
        self.progress.inc(1);
        result
    }

    fn count_read(&self) {
        match &self.opts.cache {
            Some(cache) => cache.count_uncached(),
            None => {
                self.uncached_reads
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        }
    }
}

/// How `build` reads a round file of `endpoint`'s folder (or a run-level
/// file holding every endpoint when `None`): the warm-up is `--warmup`,
/// else run.toml, else the endpoint's setting, else `[raw] warmup_seconds`.
fn file_settings(
    settings: &Settings,
    warmup_override: Option<f64>,
    run_warmup: Option<f64>,
    endpoint: Option<&str>,
) -> FileSettings {
    let raw = &settings.raw;
    let warmup_s = warmup_override
        .or(run_warmup)
        .or_else(|| {
            endpoint
                .and_then(|e| settings.endpoints.get(e))
                .and_then(|e| e.warmup_seconds)
        })
        .unwrap_or(raw.warmup_seconds);
    let stats = StatsOptions {
        warmup_s,
        method: raw.percentile,
        failures_in_latency: raw.failures_in_latency,
    };
    let read = ReadOptions {
        metric: settings.analysis.metric.clone(),
        split_tag: endpoint.is_none().then(|| raw.split_tag.clone()),
        limits: settings.limits.clone(),
    };
    let (tag_map, endpoint_warmups) = if endpoint.is_some() {
        Default::default()
    } else {
        let warmups = if warmup_override.is_some() || run_warmup.is_some() {
            Default::default()
        } else {
            settings
                .endpoints
                .iter()
                .filter_map(|(id, e)| Some((id.clone(), e.warmup_seconds?)))
                .collect()
        };
        (raw.tags.clone(), warmups)
    };
    FileSettings {
        read,
        stats,
        tag_map,
        endpoint_warmups,
    }
}

/// Reads one round file with the archive's settings exactly as `build`
/// reads it in `endpoint`'s folder (`None`: a run-level file split by
/// tag), without the cache. `perfdash record` checks every file with it
/// before it writes anything, so what it files is what `build` can read.
pub fn read_round_file(
    settings: &Settings,
    path: &Path,
    shown: &Path,
    endpoint: Option<&str>,
) -> Result<FileResult, Error> {
    raw::analyse_file(path, shown, &file_settings(settings, None, None, endpoint))
}

/// `warmup_seconds` from run.toml (kept by `parse_run_meta` among the
/// extra keys).
fn run_warmup(meta: &RunMeta, path: &str, diags: &mut Vec<Diagnostic>) -> Option<f64> {
    let text = meta.extra.get("warmup_seconds")?;
    match text
        .parse::<f64>()
        .map_err(|e| e.to_string())
        .and_then(|w| {
            crate::config::check_warmup("warmup_seconds", w)?;
            Ok(w)
        }) {
        Ok(w) => Some(w),
        Err(e) => {
            diags.push(Diagnostic {
                kind: DiagnosticKind::Ignored,
                path: path.to_string(),
                line: None,
                message: format!("warmup_seconds = {text} ignored: {e}"),
            });
            None
        }
    }
}

/// What one run folder gave: the run (unless skipped), its diagnostics, and
/// the fingerprint of every file it read (`None` when some file changed
/// too recently to be known by its identity; see `crate::cache::identity`).
type RunRead = (Option<Run>, Vec<Diagnostic>, Option<u128>);

/// Reads one run folder: its `run.toml`, its listing, the identity of
/// every file it reads; then its rounds from its record when that holds
/// them for exactly these files, else from the files. The run is `None`
/// when it cannot be placed in time or holds no rounds at all.
fn read_run(reader: &RoundReader<'_>, id: &str, dir: &Path) -> RunRead {
    let root = reader.root;
    let mut diags = Vec::new();
    let mut identity = reader.fingerprinter();
    let Some(mut head) = read_run_toml(reader, id, dir, &mut identity, &mut diags) else {
        return (None, diags, identity.finish());
    };
    let mut run = Run {
        capacity: Default::default(),
        id: id.to_string(),
        started_at: head.started_at,
        meta: std::mem::take(&mut head.meta),
        endpoints: Default::default(),
        problems: Vec::new(),
        untrusted_time: None,
    };
    let mut run_cache = reader.opts.cache.as_ref().map(|c| c.run(id));
    let Some(listed) = list_run(reader, dir, run_cache.as_mut(), &mut diags) else {
        return (None, diags, None);
    };
    let ListedRun {
        files:
            FolderFiles {
                rounds: mut jobs,
                profiles: profile_jobs,
                steps: steps_jobs,
            },
        endpoint_dirs,
        listing,
    } = listed;
    // Of every file the run reads (a changed profile also costs the
    // record: profiles are few and rarely change).
    let newest_file = identify_files(root, &mut identity, &jobs, &steps_jobs, &profile_jobs)
        .max(layout::identify(&head.path).and_then(|i| i.modified()))
        .map(DateTime::<Utc>::from);
    let fingerprint = identity.finish();
    check_run_time(reader, id, dir, &head, newest_file, &mut run, &mut diags);
    let max_round = max_round_number(reader.settings.analysis.expected_rounds);
    jobs.retain(|job| {
        let keep = job.name.number <= max_round;
        if !keep {
            diags.push(Diagnostic {
                kind: DiagnosticKind::SkippedInput,
                path: job.rel.clone(),
                line: None,
                message: format!(
                    "skipped: its round number is above {max_round}, the largest read \
                     (max(expected_rounds × 10, 100)): a date or a typo? Rename the file to be read"
                ),
            });
        }
        keep
    });
    missing_rounds(root, &jobs, &endpoint_dirs, &mut diags);
    // Only the time-trust notice so far: the run may come from its record.
    let clean = diags
        .iter()
        .all(|d| d.kind == DiagnosticKind::UntrustedTime);
    let recorded = match (&mut run_cache, fingerprint) {
        (Some(rc), Some(fp)) if clean => rc.take_recorded_rounds(fp, jobs.len()),
        _ => None,
    };
    match recorded {
        Some(found) => {
            reader.progress.inc(jobs.len() as u64);
            for (endpoint, rounds) in found.endpoints {
                let rounds = rounds.into();
                let profiles = Vec::new();
                run.endpoints
                    .insert(endpoint, EndpointRun { rounds, profiles });
            }
            if !reader.opts.skip_recorded_profiles {
                attach_profiles(&mut run, profile_jobs, reader, &mut diags);
            }
            run.capacity = found.capacity;
            if let Some(rc) = run_cache {
                rc.finish(listing, RoundsRecord::Kept);
            }
        }
        None => {
            let files = (jobs, profile_jobs, steps_jobs);
            let record = read_rounds(
                reader,
                run_cache.as_ref(),
                &mut run,
                files,
                head.warmup,
                &mut diags,
                fingerprint.filter(|_| clean),
            );
            if let Some(rc) = run_cache {
                rc.finish(listing, RoundsRecord::Made(record));
            }
        }
    }
    let run = finish_run(root, dir, run, &endpoint_dirs, &mut diags);
    (run, diags, fingerprint)
}

/// What a run's `run.toml` (or, without one, its id) says.
struct RunToml {
    /// The `run.toml` path (read or not).
    path: PathBuf,
    /// Taken by the run.
    meta: RunMeta,
    started_at: DateTime<Utc>,
    /// Whether the time came from `run.toml`, and from which line.
    from_toml: Option<Option<u64>>,
    /// `warmup_seconds` from `run.toml`.
    warmup: Option<f64>,
}

/// Reads a run's `run.toml` (its content enters the run's `identity`) and
/// places the run in time; `None` (a diagnostic) when it cannot be placed.
fn read_run_toml(
    reader: &RoundReader<'_>,
    id: &str,
    dir: &Path,
    identity: &mut RunIdentity,
    diags: &mut Vec<Diagnostic>,
) -> Option<RunToml> {
    let path = dir.join("run.toml");
    let rel = relative(reader.root, &path);
    let text = limits::read_archive_text_file(&path, &reader.settings.limits);
    match &text {
        Ok(Some(text)) => identity.add_content("run.toml", text.as_bytes()),
        _ => identity.add_content("no run.toml", b""),
    }
    let parsed = match text {
        Ok(Some(text)) => match parse_run_meta(&text, Path::new(&rel)) {
            Ok((meta, started_at)) => Some((
                meta,
                started_at.map(|t| (t, run_meta::key_line(&text, "started_at"))),
            )),
            Err(e) => {
                diags.push(Diagnostic::from_error(DiagnosticKind::SkippedInput, &e));
                None
            }
        },
        Ok(None) => None,
        Err(e) => {
            diags.push(Diagnostic::from_error(
                DiagnosticKind::SkippedInput,
                &Error::io(Path::new(&rel), e),
            ));
            None
        }
    };
    // Where the time came from: run.toml (and its line), else the id.
    let (meta, from_toml) = parsed.unwrap_or_default();
    let Some(started_at) = from_toml.map(|(t, _)| t).or_else(|| run_time_from_id(id)) else {
        diags.push(Diagnostic {
            kind: DiagnosticKind::SkippedInput,
            path: relative(reader.root, dir),
            line: None,
            message:
                "run skipped: no started_at in run.toml and the run id does not start with a date \
                      (e.g. 2026-05-04T0300Z)"
                    .into(),
        });
        return None;
    };
    let warmup = run_warmup(&meta, &rel, diags);
    Some(RunToml {
        path,
        meta,
        started_at,
        from_toml: from_toml.map(|(_, line)| line),
        warmup,
    })
}

/// A run folder's files by kind, its endpoint folders, and its listing
/// for the run's next record.
struct ListedRun {
    files: FolderFiles,
    endpoint_dirs: Vec<(String, PathBuf)>,
    listing: Option<crate::cache::stored::Listing>,
}

/// Lists a run folder and its endpoint folders (from the run's record
/// where they are as they were) and sorts what is in them; `None` (a
/// diagnostic) when the run folder cannot be listed.
fn list_run(
    reader: &RoundReader<'_>,
    dir: &Path,
    run_cache: Option<&mut RunCache<'_>>,
    diags: &mut Vec<Diagnostic>,
) -> Option<ListedRun> {
    let root = reader.root;
    let rel = |p: &Path| relative(root, p);
    let mut lister = match (&reader.opts.cache, run_cache) {
        (Some(store), Some(rc)) => {
            listing::RunLister::new(store, rc.take_listing(), reader.started)
        }
        _ => listing::RunLister::uncached(),
    };
    let entries = match lister.list_run(dir) {
        Ok(e) => e,
        Err(e) => {
            diags.push(Diagnostic::from_error(
                DiagnosticKind::SkippedInput,
                &Error::io(Path::new(&rel(dir)), e),
            ));
            return None;
        }
    };
    // Sized for the usual run (a job is a few hundred bytes, ~600 per run
    // at 120 endpoints: growing by doubling copied them all again).
    let folders = entries
        .iter()
        .filter(|e| matches!(e, layout::Entry::Dir { .. }))
        .count();
    let expected = reader.settings.analysis.expected_rounds as usize;
    let mut found = FolderFiles {
        rounds: Vec::with_capacity(folders.saturating_mul(expected).min(1 << 16)),
        profiles: Vec::new(),
        steps: Vec::new(),
    };
    let mut endpoint_dirs = Vec::new();
    for entry in entries {
        match entry {
            layout::Entry::Dir { name, path } => {
                let listed = lister.list_folder(&name, &path);
                list_endpoint(root, &name, &path, listed, &mut found, diags);
                endpoint_dirs.push((name, path));
            }
            layout::Entry::File { name, .. } if name == "run.toml" => {}
            layout::Entry::File { name, .. } if layout::is_locust_companion(&name) => {}
            layout::Entry::File {
                name,
                path,
                identity,
            } => match parse_round_file_name(&name) {
                Some(n) if n.is_warmup() => {}
                Some(n) => found.rounds.push(Job {
                    endpoint: None,
                    name: n,
                    rel: rel(&path),
                    path,
                    identity,
                }),
                None => diags.push(Diagnostic {
                    kind: DiagnosticKind::Ignored,
                    path: rel(&path),
                    line: None,
                    message:
                        "ignored: files directly in a run folder other than run.toml and run-level \
                              round files (round-<n>[.<label>].<ext>) are not read"
                            .into(),
                }),
            },
            layout::Entry::Skipped(d) => diags.push(d.relative_to(root)),
        }
    }
    Some(ListedRun {
        files: found,
        endpoint_dirs,
        listing: lister.finish(),
    })
}

/// Adds the identity of every file a run reads to the run's `identity`
/// (round, step and profile files, and the step files' `resources.csv`,
/// or that it is absent), and gives the newest modification time among
/// them (time trust).
fn identify_files(
    root: &Path,
    identity: &mut RunIdentity,
    jobs: &[Job],
    steps_jobs: &[StepsJob],
    profile_jobs: &[ProfileJob],
) -> Option<std::time::SystemTime> {
    let mut newest = None;
    let mut add = |identity: &mut RunIdentity, rel: &str, source: Option<SourceIdentity>| {
        identity.add_source(rel, source.as_ref());
        newest = newest.max(source.and_then(|s| s.modified()));
    };
    for job in jobs {
        add(identity, &job.rel, job.identity);
    }
    for job in steps_jobs {
        add(identity, &job.rel, job.identity);
        let resources = relative(root, &job.resources);
        match layout::identify(&job.resources) {
            Some(source) => add(identity, &resources, Some(source)),
            None => identity.add_absent(&resources),
        }
    }
    for job in profile_jobs {
        add(identity, &job.rel, job.identity);
    }
    newest
}

/// Flags a run whose time cannot be trusted (dated in the future, before
/// its files, …): kept in the history, never taken as the latest run.
fn check_run_time(
    reader: &RoundReader<'_>,
    id: &str,
    dir: &Path,
    head: &RunToml,
    newest_file: Option<DateTime<Utc>>,
    run: &mut Run,
    diags: &mut Vec<Diagnostic>,
) {
    let evidence = run_meta::TimeEvidence {
        id_time: head.from_toml.and_then(|_| run_time_from_id(id)),
        newest_file,
        now: reader.now,
    };
    if let Some(reason) = run_meta::untrusted_time(head.started_at, &evidence) {
        let (path, line) = match head.from_toml {
            Some(line) => (relative(reader.root, &head.path), line),
            None => (relative(reader.root, dir), None),
        };
        diags.push(Diagnostic {
            kind: DiagnosticKind::UntrustedTime,
            path,
            line,
            message: format!(
                "{reason} The run is kept in the history but is not taken as the latest run \
                 until its time is fixed."
            ),
        });
        run.untrusted_time = Some(reason);
    }
}

/// The run as read, with an endpoint folder that gave nothing said, and
/// its warnings kept on it; `None` when it holds no rounds at all.
fn finish_run(
    root: &Path,
    dir: &Path,
    mut run: Run,
    endpoint_dirs: &[(String, PathBuf)],
    diags: &mut Vec<Diagnostic>,
) -> Option<Run> {
    for (name, path) in endpoint_dirs {
        if !run.endpoints.contains_key(name) && !run.capacity.contains_key(name) {
            diags.push(Diagnostic {
                kind: DiagnosticKind::SkippedInput,
                path: relative(root, path),
                line: None,
                message: "no readable round files; endpoint left out of this run".into(),
            });
        }
    }
    run.problems = diags.iter().filter(|d| d.is_warning()).cloned().collect();
    if run.endpoints.is_empty() && run.capacity.is_empty() {
        diags.push(Diagnostic {
            kind: DiagnosticKind::SkippedInput,
            path: relative(root, dir),
            line: None,
            message: "run skipped: it holds no readable rounds".into(),
        });
        return None;
    }
    Some(run)
}

/// Reads the round and step files of a run (through its record's file
/// entries) and its profiles into `run`; with a `fingerprint` (the run was
/// clean so far), gives back its rounds to record when reading added no
/// problem.
fn read_rounds(
    reader: &RoundReader<'_>,
    run_cache: Option<&RunCache<'_>>,
    run: &mut Run,
    (jobs, profile_jobs, steps_jobs): (Vec<Job>, Vec<ProfileJob>, Vec<StepsJob>),
    run_warmup: Option<f64>,
    diags: &mut Vec<Diagnostic>,
    fingerprint: Option<u128>,
) -> Option<crate::cache::stored::RecordedRounds> {
    let before = diags.len();
    let results: Vec<(&Job, Result<FileResult, Error>)> = jobs
        .par_iter()
        .map(|job| {
            let settings = reader.file_settings(run_warmup, job.endpoint.as_deref());
            (job, reader.analyse(run_cache, job, &settings))
        })
        .collect();
    let mut offers = Vec::new();
    for (job, result) in results {
        let file = match result {
            Ok(f) => f,
            Err(e) => {
                diags.push(Diagnostic::from_error_with(
                    DiagnosticKind::SkippedInput,
                    "skipped: ",
                    &e,
                ));
                continue;
            }
        };
        diags.extend(file.warnings);
        if job.endpoint.is_none() && !file.format.names_endpoints() {
            diags.push(Diagnostic {
                kind: DiagnosticKind::SkippedInput,
                path: job.rel.clone(),
                line: None,
                message: format!(
                    "skipped: {} does not say which endpoint it measured: put it in the \
                     endpoint's folder (runs/<run>/<endpoint>/{})",
                    file.format.describe(),
                    job.rel.rsplit('/').next().unwrap_or_default()
                ),
            });
            continue;
        }
        let is_summary = !file.format.is_raw();
        for (key, group) in file.groups {
            let endpoint = job.endpoint.clone().unwrap_or(key);
            match group {
                Ok(group) => offers.push(Offer {
                    endpoint,
                    number: job.name.number,
                    label: job.name.label.clone(),
                    source: job.rel.clone(),
                    format: file.format,
                    rank: if is_summary {
                        2
                    } else if job.endpoint.is_some() {
                        0
                    } else {
                        1
                    },
                    group,
                }),
                Err(message) => diags.push(Diagnostic {
                    kind: DiagnosticKind::SkippedInput,
                    path: job.rel.clone(),
                    line: None,
                    message: if job.endpoint.is_some() {
                        format!("skipped: {message}")
                    } else {
                        format!("skipped endpoint {endpoint}: {message}")
                    },
                }),
            }
        }
    }
    for (endpoint, rounds) in choose_rounds(offers, reader.settings.raw.summary_tolerance, diags) {
        run.endpoints.insert(
            endpoint,
            EndpointRun {
                rounds: rounds.into(),
                profiles: Vec::new(),
            },
        );
    }
    attach_profiles(run, profile_jobs, reader, diags);
    run.capacity = read_steps_files(reader, run_cache, steps_jobs, diags);
    // Profiles too: a run known by its record is then known to parse
    // cleanly, and a gate need not parse its profiles again.
    let clean = diags.len() == before;
    run_cache?;
    let identity = fingerprint.filter(|_| clean)?;
    Some(crate::cache::stored::RecordedRounds {
        identity,
        endpoints: run
            .endpoints
            .iter()
            .map(|(endpoint, e)| (endpoint.clone(), e.rounds.to_vec()))
            .collect(),
        capacity: run.capacity.clone(),
    })
}

/// Reads a run's profiles and hands each to its endpoint.
fn attach_profiles(
    run: &mut Run,
    profile_jobs: Vec<ProfileJob>,
    reader: &RoundReader<'_>,
    diags: &mut Vec<Diagnostic>,
) {
    let read = read_profiles(profile_jobs, &reader.settings.limits, &reader.stacks, diags);
    for (endpoint, profile) in read {
        if let Some(e) = run.endpoints.get_mut(&endpoint) {
            e.profiles.push(profile);
        }
    }
}

/// The profiles of one endpoint folder of one run
/// (`runs/<run>/<endpoint>/flame*`), read and checked as a build reads them
/// (one per kind, the first by name). For `perfdash check`, whose load
/// leaves out the profiles of runs it knows from the cache
/// ([`LoadOptions::skip_recorded_profiles`]) until a regression needs them.
/// Problems come back as diagnostics naming the file; a folder that is not
/// there holds no profile.
pub fn read_endpoint_profiles(
    root: &Path,
    settings: &Settings,
    run: &str,
    endpoint: &str,
) -> (Vec<ProfileFile>, Vec<Diagnostic>) {
    let mut diags = Vec::new();
    let Ok(real_root) = std::fs::canonicalize(root) else {
        return (Vec::new(), diags);
    };
    let dir = real_root.join(RUNS_DIR).join(run).join(endpoint);
    let Ok(entries) = layout::list_dir(&dir) else {
        return (Vec::new(), diags);
    };
    let dir_rel = relative(&real_root, &dir);
    let jobs: Vec<ProfileJob> = entries
        .into_iter()
        .filter_map(|entry| match entry {
            layout::Entry::File {
                name,
                path,
                identity,
            } => crate::profile::kind_from_file_name(&name).map(|kind| ProfileJob {
                endpoint: endpoint.to_string(),
                kind,
                path,
                rel: format!("{dir_rel}/{name}"),
                identity,
            }),
            _ => None,
        })
        .collect();
    let stacks = crate::profile::StackInterner::default();
    let read = read_profiles(jobs, &settings.limits, &stacks, &mut diags);
    (read.into_iter().map(|(_, f)| f).collect(), diags)
}

/// The largest round number read: `max(expected_rounds × 10, 100)`. A
/// larger number is far more likely a date (`round-20260608.json`) or a
/// typo than a round; believing it would report millions of rounds missing.
pub fn max_round_number(expected_rounds: u32) -> u32 {
    expected_rounds.saturating_mul(10).max(100)
}

/// Warns about gaps in an endpoint folder's round numbers (`round-1, 2,
/// 4`): a file that is not there at all is a lost file, unlike a short
/// run, which simply has fewer rounds. Gaps are given as ranges
/// (`rounds 3, 6–99 missing`), never number by number.
fn missing_rounds(
    root: &Path,
    jobs: &[Job],
    endpoint_dirs: &[(String, PathBuf)],
    diags: &mut Vec<Diagnostic>,
) {
    // The round numbers of each endpoint folder, in one pass over the
    // files (a filter per folder was endpoints × files per run: 72 000
    // name comparisons for a run of 120 endpoints).
    let mut numbers: std::collections::HashMap<&str, std::collections::BTreeSet<u32>> =
        std::collections::HashMap::new();
    for job in jobs {
        if let Some(endpoint) = job.endpoint.as_deref() {
            numbers.entry(endpoint).or_default().insert(job.name.number);
        }
    }
    for (name, path) in endpoint_dirs {
        let Some(seen) = numbers.get(name.as_str()) else {
            continue;
        };
        let Some(&last) = seen.last() else { continue };
        let gaps = gaps_before(seen);
        if gaps.is_empty() {
            continue;
        }
        let single = gaps.len() == 1 && gaps[0].0 == gaps[0].1;
        diags.push(Diagnostic {
            kind: DiagnosticKind::Doubtful,
            path: relative(root, path),
            line: None,
            message: format!(
                "{} {} missing: there are files up to round-{last} but none for {}",
                if single { "round" } else { "rounds" },
                format_ranges(&gaps),
                if single {
                    "this number"
                } else {
                    "these numbers"
                },
            ),
        });
    }
}

/// The numbers from 1 up to the largest in `seen` that are not in it, as
/// inclusive ranges. Walks the numbers present, not every number: the
/// work is the same for `round-4294967295` as for `round-5`.
fn gaps_before(seen: &std::collections::BTreeSet<u32>) -> Vec<(u32, u32)> {
    let mut gaps = Vec::new();
    let mut expected = 1u32;
    for &n in seen {
        if n > expected {
            gaps.push((expected, n - 1));
        }
        expected = expected.max(n.saturating_add(1));
    }
    gaps
}

/// `3, 6–99` for [(3, 3), (6, 99)].
fn format_ranges(ranges: &[(u32, u32)]) -> String {
    ranges
        .iter()
        .map(|&(a, b)| match a == b {
            true => a.to_string(),
            false => format!("{a}–{b}"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The environment variable that fixes the build's time (RFC 3339), for
/// tests and reproducible builds.
pub const NOW_VARIABLE: &str = "PERFDASH_NOW";

/// The build's time when [`LoadOptions::now`] does not give one:
/// `PERFDASH_NOW` (an RFC 3339 time) when it is set, else the wall clock.
/// Only used to flag runs dated more than a day after it. (Not
/// `SOURCE_DATE_EPOCH`: packagers set that to the time of the last source
/// change, which would flag every run recorded since.)
pub fn build_time() -> Result<DateTime<Utc>, Error> {
    match std::env::var(NOW_VARIABLE) {
        Ok(text) => crate::calendar::parse_rfc3339(&text)
            .map_err(|why| Error::Usage(format!("{NOW_VARIABLE}='{text}' {why}"))),
        Err(_) => Ok(Utc::now()),
    }
}

/// Why `build` would not trust a run with this `started_at` and `id`
/// recorded at `now` (in the future, before 2000, far from the date in
/// its id), in the words of its warning; `None` when it would. `perfdash
/// record` refuses such a time unless forced: the same rule as `build`'s,
/// so what record files, build trusts.
pub fn start_time_problem(
    started_at: DateTime<Utc>,
    id: &str,
    now: DateTime<Utc>,
) -> Option<String> {
    run_meta::untrusted_time(
        started_at,
        &run_meta::TimeEvidence {
            id_time: run_time_from_id(id),
            newest_file: None,
            now,
        },
    )
}

/// A step-load file to read: `<endpoint>/steps.<ext>`, with the
/// endpoint's `resources.csv` when there is one.
struct StepsJob {
    endpoint: String,
    path: PathBuf,
    rel: String,
    resources: PathBuf,
    /// Its identity from the listing.
    identity: Option<SourceIdentity>,
}

/// Reads the step-load files of a run in parallel and joins resource
/// readings to their steps. Problems become diagnostics naming the file;
/// a bad resource CSV only loses the resource columns.
fn read_steps_files(
    reader: &RoundReader<'_>,
    run_cache: Option<&RunCache<'_>>,
    jobs: Vec<StepsJob>,
    diags: &mut Vec<Diagnostic>,
) -> BTreeMap<String, crate::model::StepSeries> {
    let s = reader.settings;
    let opts = capacity::StepOptions::new(
        &s.capacity,
        ReadOptions {
            metric: s.analysis.metric.clone(),
            split_tag: None,
            limits: s.limits.clone(),
        },
        s.raw.percentile,
    );
    let results: Vec<_> = jobs
        .into_par_iter()
        .map(|job| {
            let shown = Path::new(&job.rel);
            let read = |f: &InputFile| capacity::read_steps_input(f, shown, &opts);
            let series = match (InputFile::open_in_archive(&job.path), run_cache) {
                (Ok(file), Some(cache)) => {
                    cache.get_or_compute("steps", &job.rel, file, &opts, read)
                }
                (file, _) => file.map_err(|e| Error::io(shown, e)).and_then(|f| read(&f)),
            };
            let resources = series.as_ref().ok().and_then(|_| {
                let rel = relative(reader.root, &job.resources);
                match job.resources.try_exists() {
                    Ok(true) => Some((
                        rel.clone(),
                        capacity::read_resources(&job.resources, Path::new(&rel), &s.limits),
                    )),
                    _ => None,
                }
            });
            (job, series, resources)
        })
        .collect();
    let mut out = BTreeMap::new();
    for (job, series, resources) in results {
        let mut series = match series {
            Ok(series) => series,
            Err(e) => {
                diags.push(Diagnostic::from_error_with(
                    DiagnosticKind::SkippedInput,
                    "skipped step-load file: ",
                    &e,
                ));
                continue;
            }
        };
        match resources {
            Some((rel, Ok(readings))) => {
                capacity::join_resources(&mut series, &readings);
                series.resources = Some(rel);
            }
            Some((_, Err(e))) => diags.push(Diagnostic::from_error_with(
                DiagnosticKind::SkippedExtra,
                "resource readings ignored: ",
                &e,
            )),
            None => {}
        }
        match out.entry(job.endpoint) {
            std::collections::btree_map::Entry::Vacant(v) => {
                v.insert(series);
            }
            std::collections::btree_map::Entry::Occupied(o) => diags.push(Diagnostic {
                kind: DiagnosticKind::SkippedInput,
                path: job.rel,
                line: None,
                message: format!(
                    "skipped: {} already has a step-load file in this run",
                    o.key()
                ),
            }),
        }
    }
    out
}

/// A profile file to read: `<endpoint>/flame[.<kind>].<ext>`.
struct ProfileJob {
    endpoint: String,
    kind: String,
    path: PathBuf,
    rel: String,
    /// Its identity from the listing.
    identity: Option<SourceIdentity>,
}

/// Reads profile files in parallel; one per (endpoint, kind), the first by
/// file name wins. Problems become diagnostics naming the file.
fn read_profiles(
    mut jobs: Vec<ProfileJob>,
    limits: &limits::Limits,
    stacks: &crate::profile::StackInterner,
    diags: &mut Vec<Diagnostic>,
) -> Vec<(String, ProfileFile)> {
    jobs.sort_by(|a, b| (&a.endpoint, &a.kind, &a.rel).cmp(&(&b.endpoint, &b.kind, &b.rel)));
    let mut kept: Vec<ProfileJob> = Vec::with_capacity(jobs.len());
    for job in jobs {
        match kept.last() {
            Some(prev) if prev.endpoint == job.endpoint && prev.kind == job.kind => {
                diags.push(Diagnostic {
                    kind: DiagnosticKind::Ignored,
                    path: job.rel.clone(),
                    line: None,
                    message: format!(
                        "skipped: the {} profile of {} is already read from {}",
                        job.kind, job.endpoint, prev.rel
                    ),
                });
            }
            _ => kept.push(job),
        }
    }
    let results: Vec<(ProfileJob, Result<crate::profile::Profile, Error>)> = kept
        .into_par_iter()
        .map(|job| {
            let rel = Path::new(&job.rel);
            let read = InputFile::open_in_archive(&job.path)
                .and_then(|file| limits::read_document(&file, limits))
                .map_err(|e| Error::io(rel, e))
                .and_then(|bytes| crate::profile::parse(&bytes, rel))
                .map(|mut profile| {
                    stacks.intern(&mut profile);
                    profile
                });
            (job, read)
        })
        .collect();
    let mut out = Vec::new();
    for (job, result) in results {
        match result {
            Ok(profile) => {
                for w in &profile.warnings {
                    diags.push(Diagnostic {
                        kind: DiagnosticKind::SkippedExtra,
                        path: job.rel.clone(),
                        line: None,
                        message: format!("profile: {w}"),
                    });
                }
                out.push((
                    job.endpoint,
                    ProfileFile {
                        kind: job.kind,
                        source: job.rel,
                        profile: std::sync::Arc::new(profile),
                    },
                ));
            }
            Err(e) => diags.push(Diagnostic::from_error_with(
                DiagnosticKind::SkippedExtra,
                "skipped profile: ",
                &e,
            )),
        }
    }
    out
}

/// The files a run's listings offer, by kind.
struct FolderFiles {
    rounds: Vec<Job>,
    profiles: Vec<ProfileJob>,
    steps: Vec<StepsJob>,
}

/// Sorts the files of one endpoint folder (`listed`: its listing) into
/// `found`.
fn list_endpoint(
    root: &Path,
    endpoint: &str,
    dir: &Path,
    listed: std::io::Result<Vec<layout::Entry>>,
    found: &mut FolderFiles,
    diags: &mut Vec<Diagnostic>,
) {
    let entries = match listed {
        Ok(e) => e,
        Err(e) => {
            diags.push(Diagnostic::from_error(
                DiagnosticKind::SkippedInput,
                &Error::io(Path::new(&relative(root, dir)), e),
            ));
            return;
        }
    };
    // A listed name is one plain component (no `/`, `.` or `..`): its
    // path relative to the root is the folder's and the name.
    let dir_rel = relative(root, dir);
    let rel = |name: &str| format!("{dir_rel}/{name}");
    for entry in entries {
        // What each file is, by its name: the one rule `perfdash record`
        // files by too (`layout::classify`).
        match entry {
            layout::Entry::File {
                name,
                path,
                identity,
            } => match classify(&name) {
                FileRole::Profile { kind } => found.profiles.push(ProfileJob {
                    endpoint: endpoint.to_string(),
                    kind,
                    path: path.clone(),
                    rel: rel(&name),
                    identity,
                }),
                FileRole::Steps => found.steps.push(StepsJob {
                    endpoint: endpoint.to_string(),
                    resources: dir.join(capacity::RESOURCES_FILE),
                    path: path.clone(),
                    rel: rel(&name),
                    identity,
                }),
                FileRole::Resources | FileRole::LocustCompanion => {}
                FileRole::Round(n) if n.is_warmup() => {}
                FileRole::Round(n) => found.rounds.push(Job {
                    endpoint: Some(endpoint.to_string()),
                    name: n,
                    rel: rel(&name),
                    path,
                    identity,
                }),
                FileRole::RunMeta | FileRole::Other => diags.push(Diagnostic {
                    kind: DiagnosticKind::Ignored,
                    path: relative(root, &path),
                    line: None,
                    message: "ignored: not a round file (expected round-<n>[.<label>].<ext> with ext one of \
                              json, ndjson, csv, tsv, jtl, log, optionally .gz, or round-<n>_stats.csv), \
                              nor a profile (flame[.<kind>].<ext>), nor a step-load file (steps.<ext>, resources.csv)"
                        .into(),
                }),
            },
            layout::Entry::Dir { path, .. } => diags.push(Diagnostic {
                kind: DiagnosticKind::Ignored,
                path: relative(root, &path),
                line: None,
                message: "ignored: folders inside an endpoint folder are not read".into(),
            }),
            layout::Entry::Skipped(d) => diags.push(d.relative_to(root)),
        }
    }
}

/// Picks one file per (endpoint, round): a raw file in the endpoint folder,
/// else a run-level raw file, else a summary. A summary of a round that
/// also has a raw file becomes its cross-check; other duplicates are
/// reported as skipped.
fn choose_rounds(
    mut offers: Vec<Offer>,
    tolerance: f64,
    diags: &mut Vec<Diagnostic>,
) -> BTreeMap<String, Vec<Round>> {
    offers.sort_by(|a, b| {
        (&a.endpoint, a.number, a.rank, &a.source).cmp(&(&b.endpoint, b.number, b.rank, &b.source))
    });
    let mut out: BTreeMap<String, Vec<Round>> = BTreeMap::new();
    let mut offers = offers.into_iter().peekable();
    while let Some(first) = offers.next() {
        let mut round = Round {
            number: first.number,
            label: first.label,
            source: first.source,
            format: first.format,
            stats: first.group.stats,
            warmup_s: first.group.trimmed.then_some(first.group.warmup_s),
            cross_check: None,
        };
        while let Some(other) =
            offers.next_if(|o| o.endpoint == first.endpoint && o.number == first.number)
        {
            match (
                round.cross_check.is_none() && other.rank == 2 && is_k6_summary(other.format),
                first.group.untrimmed_p99_ms,
            ) {
                (true, Some(raw_p99)) => {
                    let summary_p99 = other.group.stats.p99_ms;
                    let agrees = (summary_p99 - raw_p99).abs()
                        <= tolerance * summary_p99.abs().max(raw_p99.abs());
                    if !agrees {
                        diags.push(Diagnostic {
                            kind: DiagnosticKind::Doubtful,
                            path: other.source.clone(),
                            line: None,
                            message: format!(
                                "round {} of {}: this summary's p99 ({summary_p99:.3} ms) and the whole-test p99 \
                                 of {} ({raw_p99:.3} ms) differ by more than trimming explains (both cover the \
                                 whole test); are they from the same test? The raw file is used ({:.3} ms after \
                                 the warm-up).",
                                round.number, first.endpoint, round.source, round.stats.p99_ms
                            ),
                        });
                    }
                    round.cross_check = Some(Box::new(CrossCheck {
                        source: other.source,
                        format: other.format,
                        summary_p99_ms: summary_p99,
                        raw_untrimmed_p99_ms: raw_p99,
                        agrees,
                    }));
                }
                // Another tool's own summary of a round that has its raw
                // file (ab's -e beside its -g): the raw file is the round;
                // a summary by another percentile method is no check of it.
                (false, Some(_)) if other.rank == 2 && !is_k6_summary(other.format) => {}
                _ => diags.push(Diagnostic {
                    kind: DiagnosticKind::SkippedInput,
                    path: other.source,
                    line: None,
                    // The endpoint is in the path, except for run-level files.
                    message: if other.rank == 1 || first.rank == 1 {
                        format!(
                            "skipped: round {} of {} is already read from {}",
                            round.number, first.endpoint, round.source
                        )
                    } else {
                        format!(
                            "skipped: round {} is already read from {}",
                            round.number, round.source
                        )
                    },
                }),
            }
        }
        out.entry(first.endpoint).or_default().push(round);
    }
    out
}

/// k6's summaries: the same percentile definition as a raw file's
/// recomputation, so their whole-test p99 cross-checks it.
fn is_k6_summary(format: SourceFormat) -> bool {
    matches!(
        format,
        SourceFormat::K6HandleSummary
            | SourceFormat::K6SummaryExport
            | SourceFormat::K6MachineReadable
    )
}

/// `path` after `root` and the separator, compared as bytes (a path
/// joined from `root` starts with its bytes; `Path::strip_prefix` parsed
/// both paths into components for each of ~300k files). `None` when the
/// bytes differ, e.g. `root` written another way: the caller then parses.
fn strip_root_bytes<'a>(root: &Path, path: &'a Path) -> Option<&'a [u8]> {
    let root = root.as_os_str().as_encoded_bytes();
    let rest = path.as_os_str().as_encoded_bytes().strip_prefix(root)?;
    match root.ends_with(b"/") {
        true => Some(rest),
        false => rest.strip_prefix(b"/"),
    }
}

/// `path` relative to the archive root, with `/` separators, for messages
/// and for the site (so both are stable wherever the archive lives).
pub fn relative(root: &Path, path: &Path) -> String {
    // The common case, paths joined from listed names: already in the
    // form the slow path gives (it runs for ~300k files per build).
    if cfg!(unix)
        && let Some(rel) = strip_root_bytes(root, path)
        && let Ok(text) = std::str::from_utf8(rel)
        && !text.is_empty()
        && !text.ends_with('/')
        && text
            .split('/')
            .all(|c| !c.is_empty() && c != "." && c != "..")
    {
        return text.to_string();
    }
    relative_by_components(root, path)
}

/// [`relative`] for any path: parsed into components.
fn relative_by_components(root: &Path, path: &Path) -> String {
    let rel: PathBuf = path
        .strip_prefix(root)
        .map(Path::to_path_buf)
        .unwrap_or_else(|_| path.to_path_buf());
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod relative_tests {
    use super::*;
    use proptest::prelude::*;

    fn component() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-z0-9-]{1,6}".prop_map(String::from),
            Just(".".to_string()),
            Just("..".to_string()),
            Just(String::new()),
        ]
    }

    proptest! {
        /// The byte comparison gives what parsing gives, for roots written
        /// with `//`, `.`, `..` or a trailing `/`, and paths inside or not.
        #[test]
        fn the_quick_path_agrees_with_components(
            root in prop::collection::vec(component(), 1..4),
            rest in prop::collection::vec(component(), 0..4),
            trailing in any::<bool>(),
            other_root in any::<bool>(),
        ) {
            let root_text = format!("/{}{}", root.join("/"), if trailing { "/" } else { "" });
            let root = Path::new(&root_text);
            let base = if other_root { Path::new("/elsewhere") } else { root };
            let path = base.join(rest.join("/"));
            prop_assert_eq!(relative(root, &path), relative_by_components(root, &path));
        }
    }
}
