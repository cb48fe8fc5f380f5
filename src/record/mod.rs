//! `perfdash record`: files one run's outputs into an archive.
//!
//! Besides `build`'s cache, the only code that writes near an archive, and
//! only a new `runs/<run-id>/`: every file is first read with the readers
//! `build` uses ([`crate::ingest::read_round_file`]), and one bad file
//! refuses the whole run before anything is written. The run folder is
//! assembled in a hidden temporary folder inside `runs/` (which `build`
//! ignores) and renamed into place, so a reader sees the whole run or none
//! of it; an existing run is never replaced.

pub mod ci;
pub mod profile;
pub mod rounds;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};

use crate::error::{Diagnostic, DiagnosticKind, Error};
use crate::ingest::{
    ROUND_EXTENSIONS, RUNS_DIR, max_round_number, parse_round_file_name, parse_run_meta,
};
use crate::model::SourceFormat;

pub use ci::CiFacts;

/// The run metadata file written into the new run.
const RUN_META_FILE: &str = "run.toml";

/// What to record.
#[derive(Debug, Clone)]
pub struct RecordRequest {
    /// The archive root; created with its `runs/` when missing.
    pub archive: PathBuf,
    /// The endpoint every file belongs to; `None`: run-level files that
    /// hold several endpoints, split by the `[raw] split_tag` tag.
    pub endpoint: Option<String>,
    /// The files of the run, in round order unless all are named
    /// `round-<n>…`: round files (raw outputs and summaries), the files
    /// Locust writes beside a `_stats.csv`, profiles (`flame.*`), a
    /// step-load file (`steps.*`) and its `resources.csv`, each told by its
    /// name as `build` tells them (`ingest::classify`).
    pub files: Vec<PathBuf>,
    /// Profiles given with `--profile`, filed as `flame.<profile_kind>.<ext>`
    /// (a file already named `flame.*` keeps its name).
    pub profiles: Vec<PathBuf>,
    /// The kind of those profiles (`cpu`, `alloc`, `lock`, `wall`, …).
    pub profile_kind: String,
    /// When the run started: gives the run id and `started_at`.
    pub started_at: DateTime<Utc>,
    /// A run id chosen by hand instead of the one made from `started_at`.
    pub id: Option<String>,
    /// What the CI system says about the job.
    pub ci: Option<CiFacts>,
    /// The machine the test ran on (`host` in run.toml).
    pub host: Option<String>,
    /// `--set key=value` pairs, in order; later ones win, and they win
    /// over the CI facts and the host.
    pub sets: Vec<(String, String)>,
    /// The time `record` runs at (`PERFDASH_NOW` or the clock): a start
    /// time more than a day after it is refused, as build distrusts it.
    pub now: DateTime<Utc>,
    /// Record a start time build will not trust (`--force`).
    pub force: bool,
}

/// A recorded run.
#[derive(Debug)]
pub struct Recorded {
    pub id: String,
    /// `<archive>/runs/<id>`.
    pub dir: PathBuf,
    /// The rounds filed (a raw file and its summary are one round).
    pub rounds: usize,
    /// Every file copied in.
    pub files: usize,
    /// What the readers noted about files they accepted (shown, not fatal).
    pub notes: Vec<Diagnostic>,
}

/// The run id `perfdash record` gives a run started at `t`: the archive's
/// usual `2026-05-04T0300Z` (docs/archive.md), which sorts by time and
/// which `build` reads back as the start time.
pub fn run_id(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%dT%H%MZ").to_string()
}

/// Parses `key=value` for `--set`. Keys are `run.toml` keys: a bare key,
/// or `load.<key>` / `environment.<key>` for those tables.
pub fn parse_set(text: &str) -> Result<(String, String), String> {
    let (key, value) = text
        .split_once('=')
        .ok_or_else(|| format!("'{text}' is not key=value"))?;
    let key = key.trim();
    let parts: Vec<&str> = key.split('.').collect();
    let bare = |k: &str| {
        !k.is_empty()
            && k.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    let ok = match parts.as_slice() {
        [k] => bare(k),
        [table, k] => matches!(*table, "load" | "environment") && bare(k),
        _ => false,
    };
    if !ok {
        return Err(format!(
            "'{key}' is not a run.toml key: use letters, digits, '_' and '-', or load.<key> / environment.<key>"
        ));
    }
    if key == "started_at" {
        return Err("started_at comes from --started-at (or the time record starts)".into());
    }
    Ok((key.to_string(), value.to_string()))
}

/// The text of the new run's `run.toml`: `started_at`, the CI facts, the
/// host, then `--set` (which wins). Keys are sorted, so the same inputs
/// give the same bytes.
pub fn run_meta_text(req: &RecordRequest) -> String {
    let mut top: BTreeMap<String, String> = BTreeMap::new();
    let mut tables: BTreeMap<&str, BTreeMap<String, String>> = BTreeMap::new();
    if let Some(ci) = &req.ci {
        top.insert("ci_provider".into(), ci.provider.to_string());
        let facts = [
            ("commit", &ci.commit),
            ("branch", &ci.branch),
            ("ci_job", &ci.job_url),
            ("pull_request", &ci.pull_request),
        ];
        for (key, value) in facts {
            if let Some(v) = value {
                top.insert(key.into(), v.clone());
            }
        }
    }
    if let Some(host) = &req.host {
        top.insert("host".into(), host.clone());
    }
    for (key, value) in &req.sets {
        match key.split_once('.') {
            Some((table @ ("load" | "environment"), k)) => {
                tables
                    .entry(table)
                    .or_default()
                    .insert(k.to_string(), value.clone());
            }
            _ => {
                top.insert(key.clone(), value.clone());
            }
        }
    }
    let mut table = toml::Table::new();
    table.insert(
        "started_at".into(),
        toml::Value::String(crate::calendar::rfc3339(req.started_at)),
    );
    for (k, v) in top {
        table.insert(k, toml::Value::String(v));
    }
    for (name, values) in tables {
        let inner: toml::Table = values
            .into_iter()
            .map(|(k, v)| (k, toml::Value::String(v)))
            .collect();
        table.insert(name.to_string(), toml::Value::Table(inner));
    }
    let mut text = String::from("# Written by `perfdash record`.\n");
    text.push_str(&toml::to_string(&table).expect("strings and tables serialise"));
    text
}

/// What a filed file is: where it goes and how it was checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A round's result: a raw output, or a summary (a raw file's
    /// cross-check when both are given for one round).
    Round { summary: bool },
    /// A warm-up round (`round-0.warmup.json`): kept, never read.
    Warmup,
    /// A file Locust writes beside a round's `_stats.csv`.
    Companion,
    /// A flame graph (`flame.<kind>.<ext>`).
    Profile,
    /// A step-load run (`steps.<ext>`) or its `resources.csv`.
    Capacity,
}

/// One file and the name it is filed under (in the endpoint folder, or
/// the run folder for run-level rounds).
#[derive(Debug, Clone)]
struct Placed {
    source: PathBuf,
    name: String,
    kind: Kind,
}

/// A round file read and checked, before it is numbered.
struct ReadRound {
    source: PathBuf,
    /// Its file name.
    name: String,
    /// `round-<n>…` when it is named so.
    round: Option<crate::ingest::RoundFileName>,
    summary: bool,
}

/// Reads and checks one round file exactly as `build` would: `Err` when
/// build could not use it (one error per problem).
fn read_round(
    settings: &crate::config::Settings,
    file: &Path,
    endpoint: Option<&str>,
    notes: &mut Vec<Diagnostic>,
) -> Result<bool, Vec<Error>> {
    let result =
        crate::ingest::read_round_file(settings, file, file, endpoint).map_err(|e| vec![e])?;
    notes.extend(result.warnings);
    let mut errors = Vec::new();
    if result.groups.is_empty() {
        errors.push(Error::at(
            file,
            None,
            format!(
                "no requests of the metric {} in it: nothing to measure",
                settings.analysis.metric
            ),
        ));
    }
    for (group, outcome) in result.groups {
        if let Err(message) = outcome {
            let message = if group.is_empty() {
                message
            } else {
                format!("endpoint {group}: {message}")
            };
            errors.push(Error::at(file, None, message));
        }
    }
    // As build tells them apart (`ingest::choose_rounds`): a summary
    // beside a raw file of the same round is its cross-check.
    let summary = matches!(
        result.format,
        SourceFormat::K6HandleSummary
            | SourceFormat::K6SummaryExport
            | SourceFormat::K6MachineReadable
    );
    if errors.is_empty() {
        Ok(summary)
    } else {
        Err(errors)
    }
}

/// The name of a file, or an error naming the path.
fn file_name(file: &Path) -> Result<String, Error> {
    file.file_name()
        .and_then(|n| n.to_str())
        .map(str::to_string)
        .ok_or_else(|| Error::at(file, None, "not a file name perfdash can file (not UTF-8?)"))
}

/// `name` without its round extension (`k6-out` of `k6-out.ndjson.gz`,
/// `r1` of `r1_stats.csv` and of `r1_failures.csv`) and that extension,
/// written the way build reads it (`ndjson.gz`, `_stats.csv`).
fn stem_and_extension(name: &str) -> Option<(&str, String)> {
    if let Some(suffix) = crate::ingest::locust_companion_suffix(name) {
        return Some((&name[..name.len() - suffix.len()], suffix.to_string()));
    }
    if let Some(stem) = name.strip_suffix("_stats.csv") {
        return Some((stem, "_stats.csv".to_string()));
    }
    let lower = name.to_ascii_lowercase();
    ROUND_EXTENSIONS.iter().find_map(|ext| {
        let cut = lower.strip_suffix(ext)?.strip_suffix('.')?.len();
        Some((&name[..cut], format!(".{ext}")))
    })
}

/// Numbers the round files (and places the Locust companions beside
/// their `_stats.csv`). Files all named `round-<n>…` keep their names
/// (so `round-10` stays round ten whatever order the shell listed it
/// in); otherwise the rounds are numbered in the order given, a raw file
/// and a summary with the same name before the extension (`r1.ndjson.gz`,
/// `r1.json`) being one round, as are a Locust `_stats.csv` and the
/// files Locust wrote beside it. At most one raw file and one summary per
/// round, as build reads them (the summary is the raw file's
/// cross-check).
fn number_rounds(
    rounds: Vec<ReadRound>,
    companions: Vec<(PathBuf, String)>,
    notes: &mut Vec<Diagnostic>,
) -> Result<Vec<Placed>, Vec<Error>> {
    let mut errors = Vec::new();
    let mut placed = Vec::new();
    let all_named = rounds.iter().all(|r| r.round.is_some())
        && companions
            .iter()
            .all(|(_, name)| name.starts_with("round-"));
    // (number, summary?) → the file already filed there.
    let mut taken: BTreeMap<(u32, bool), PathBuf> = BTreeMap::new();
    fn take(
        taken: &mut BTreeMap<(u32, bool), PathBuf>,
        number: u32,
        summary: bool,
        file: &Path,
        errors: &mut Vec<Error>,
    ) -> bool {
        match taken.get(&(number, summary)) {
            Some(first) => {
                errors.push(Error::at(
                    file,
                    None,
                    format!(
                        "round {number} already has a {} ({}): build would read only one of them",
                        if summary { "summary" } else { "raw file" },
                        first.display()
                    ),
                ));
                false
            }
            None => {
                taken.insert((number, summary), file.to_path_buf());
                true
            }
        }
    }
    if all_named {
        for r in rounds {
            let round = r.round.expect("all named");
            if take(&mut taken, round.number, r.summary, &r.source, &mut errors) {
                placed.push(Placed {
                    source: r.source,
                    name: r.name,
                    kind: Kind::Round { summary: r.summary },
                });
            }
        }
        placed.extend(companions.into_iter().map(|(source, name)| Placed {
            source,
            name,
            kind: Kind::Companion,
        }));
        return if errors.is_empty() {
            Ok(placed)
        } else {
            Err(errors)
        };
    }
    // stem → round number, for the files of one round given together.
    let mut stems: BTreeMap<String, u32> = BTreeMap::new();
    let mut next = 1u32;
    for r in rounds {
        let Some((stem, ext)) = stem_and_extension(&r.name) else {
            errors.push(Error::at(
                &r.source,
                None,
                format!(
                    "cannot tell a round file by this name: it should end in .{} or _stats.csv \
                     (what it holds is read from its content)",
                    ROUND_EXTENSIONS.join(", .")
                ),
            ));
            continue;
        };
        let number = match stems.get(stem) {
            Some(&n) if !taken.contains_key(&(n, r.summary)) => n,
            _ => {
                let n = next;
                next += 1;
                stems.insert(stem.to_string(), n);
                n
            }
        };
        take(&mut taken, number, r.summary, &r.source, &mut errors);
        let name = if ext.starts_with('_') {
            format!("round-{number}{ext}")
        } else {
            format!("round-{number}{}", ext.to_ascii_lowercase())
        };
        placed.push(Placed {
            source: r.source,
            name,
            kind: Kind::Round { summary: r.summary },
        });
    }
    for (source, name) in companions {
        let (stem, suffix) = stem_and_extension(&name).expect("a companion has its suffix");
        match stems.get(stem) {
            Some(n) => placed.push(Placed {
                source,
                name: format!("round-{n}{suffix}"),
                kind: Kind::Companion,
            }),
            None => notes.push(Diagnostic::new(
                DiagnosticKind::Information,
                source.display().to_string(),
                None,
                format!("passed over, as build passes it over: no {stem}_stats.csv was given to file it beside"),
            )),
        }
    }
    if errors.is_empty() {
        Ok(placed)
    } else {
        Err(errors)
    }
}

/// The name a profile given with `--profile` is filed under: its own when
/// it is already a profile name build reads (`flame.alloc.html`), else
/// `flame.<kind>.<ext>` with the extension of the file (`cpu.collapsed`
/// → `flame.cpu.collapsed`). Build must read the name back as this kind.
fn profile_name(file: &Path, kind: &str) -> Result<String, Error> {
    let name = file_name(file)?;
    if let crate::ingest::FileRole::Profile { .. } = crate::ingest::classify(&name) {
        return Ok(name);
    }
    let ext = name
        .split_once('.')
        .map(|(_, ext)| ext)
        .filter(|ext| !ext.is_empty())
        .unwrap_or("txt");
    let named = format!("flame.{kind}.{ext}");
    match crate::profile::kind_from_file_name(&named) {
        Some(k) if k == kind => Ok(named),
        _ => Err(Error::Usage(format!(
            "--profile-kind '{kind}': build would not read {named} as a {kind} profile; a kind is \
             lower-case letters, digits, '-' and '_', starting with a letter (cpu, alloc, lock, wall)"
        ))),
    }
}

/// Whether `name` can be a run or endpoint folder: one plain path
/// component that `build` reads (not hidden, not `run.toml`).
fn check_folder_name(what: &str, name: &str) -> Result<(), Error> {
    let plain = !name.is_empty()
        && !name.starts_with('.')
        && !name.contains(['/', '\\', '\0'])
        && name != RUN_META_FILE
        && name.trim() == name;
    if plain {
        Ok(())
    } else {
        Err(Error::Usage(format!(
            "{what} '{}' cannot be a folder name in the archive (no '/', no leading '.')",
            crate::escape::terminal(name)
        )))
    }
}

/// The run id a request records under.
pub fn request_id(req: &RecordRequest) -> String {
    req.id.clone().unwrap_or_else(|| run_id(req.started_at))
}

/// What can be known before any round runs: the ids, the start time, the
/// settings, and that the run does not exist yet. `perfdash record
/// --rounds` asks this first, so that a test of half an hour is never run
/// only to be refused.
pub fn preflight(req: &RecordRequest) -> Result<crate::config::Settings, Vec<Error>> {
    let id = request_id(req);
    let mut errors = Vec::new();
    if let Err(e) = check_folder_name("run id", &id) {
        errors.push(e);
    }
    if let Some(endpoint) = &req.endpoint
        && let Err(e) = check_folder_name("endpoint", endpoint)
    {
        errors.push(e);
    }
    if !req.force
        && let Some(why) = crate::ingest::start_time_problem(req.started_at, &id, req.now)
    {
        errors.push(Error::Usage(format!(
            "{why} build would not trust this run; give the right --started-at, or pass --force \
             to record it anyway"
        )));
    }
    let target = req.archive.join(RUNS_DIR).join(&id);
    if target.symlink_metadata().is_ok() {
        errors.push(Error::at(
            &target,
            None,
            "this run exists already and is never replaced: give another id with --id",
        ));
    }
    // The archive's own settings decide how files are read, as in build.
    match crate::ingest::settings::load(&req.archive) {
        Ok(settings) if errors.is_empty() => Ok(settings),
        Ok(_) => Err(errors),
        Err(e) => {
            errors.push(e);
            Err(errors)
        }
    }
}

/// Records a run. Every problem found before writing is returned at once
/// (one bad file never hides another), and then nothing has been written.
pub fn record(req: &RecordRequest) -> Result<Recorded, Vec<Error>> {
    if req.files.is_empty() && req.profiles.is_empty() {
        return Err(vec![Error::Usage("no files to record".into())]);
    }
    let id = request_id(req);
    let settings = preflight(req)?;
    let mut notes = Vec::new();
    let Sorted {
        mut placed,
        rounds,
        companions,
        mut errors,
    } = sort_files(req, &settings, &mut notes);
    match number_rounds(rounds, companions, &mut notes) {
        Ok(mut numbered) => placed.append(&mut numbered),
        Err(mut e) => errors.append(&mut e),
    }
    check_placed(&placed, &settings, &mut errors);
    let meta = run_meta_text(req);
    if let Err(e) = parse_run_meta(&meta, Path::new(RUN_META_FILE)) {
        errors.push(e);
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let runs = req.archive.join(RUNS_DIR);
    let target = runs.join(&id);
    let rounds = placed
        .iter()
        .filter(|p| matches!(p.kind, Kind::Round { .. }))
        .filter_map(|p| parse_round_file_name(&p.name).map(|r| (r.number, r.label)))
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    write_run(req, &runs, &target, &placed, &meta)
        .map(|()| Recorded {
            id,
            dir: target,
            rounds,
            files: placed.len(),
            notes,
        })
        .map_err(|e| vec![e])
}

/// The files of a request sorted out by their names (`ingest::classify`):
/// profiles and step-load files checked and placed, round files read and
/// checked (numbered next), Locust companions set aside.
struct Sorted {
    placed: Vec<Placed>,
    rounds: Vec<ReadRound>,
    companions: Vec<(PathBuf, String)>,
    errors: Vec<Error>,
}

fn sort_files(
    req: &RecordRequest,
    settings: &crate::config::Settings,
    notes: &mut Vec<Diagnostic>,
) -> Sorted {
    let mut errors = Vec::new();
    let mut placed = Vec::new();
    let mut rounds = Vec::new();
    let mut companions = Vec::new();
    let needs_endpoint = |file: &Path, what: &str, errors: &mut Vec<Error>| {
        if req.endpoint.is_none() {
            errors.push(Error::at(
                file,
                None,
                format!("{what} belongs to an endpoint folder: say which with --endpoint"),
            ));
        }
    };
    for file in &req.files {
        let name = match file_name(file) {
            Ok(name) => name,
            Err(e) => {
                errors.push(e);
                continue;
            }
        };
        // Locust's files beside a `_stats.csv` given by any name
        // (`eu_failures.csv` beside `eu_stats.csv`): build passes them
        // over once they are named after their round.
        let role = match crate::ingest::classify(&name) {
            crate::ingest::FileRole::Round(_) | crate::ingest::FileRole::Other
                if crate::ingest::locust_companion_suffix(&name).is_some() =>
            {
                crate::ingest::FileRole::LocustCompanion
            }
            role => role,
        };
        match role {
            crate::ingest::FileRole::Profile { .. } => {
                needs_endpoint(file, "a profile", &mut errors);
                read_profile_notes(file, settings, &mut errors, notes);
                placed.push(Placed {
                    source: file.clone(),
                    name,
                    kind: Kind::Profile,
                });
            }
            crate::ingest::FileRole::Steps => {
                needs_endpoint(file, "a step-load file", &mut errors);
                if let Err(e) = crate::ingest::capacity::steps_of_file(file, settings) {
                    errors.push(e);
                }
                placed.push(Placed {
                    source: file.clone(),
                    name,
                    kind: Kind::Capacity,
                });
            }
            crate::ingest::FileRole::Resources => {
                needs_endpoint(file, "resources.csv", &mut errors);
                if let Err(e) =
                    crate::ingest::capacity::read_resources(file, file, &settings.limits)
                {
                    errors.push(e);
                }
                placed.push(Placed {
                    source: file.clone(),
                    name,
                    kind: Kind::Capacity,
                });
            }
            crate::ingest::FileRole::LocustCompanion => companions.push((file.clone(), name)),
            crate::ingest::FileRole::RunMeta => errors.push(Error::at(
                file,
                None,
                "record writes the run's run.toml itself: give its keys with --set",
            )),
            crate::ingest::FileRole::Round(round) if round.is_warmup() => placed.push(Placed {
                source: file.clone(),
                name,
                kind: Kind::Warmup,
            }),
            role => match read_round(settings, file, req.endpoint.as_deref(), notes) {
                Ok(summary) => rounds.push(ReadRound {
                    source: file.clone(),
                    name,
                    round: match role {
                        crate::ingest::FileRole::Round(round) => Some(round),
                        _ => None,
                    },
                    summary,
                }),
                Err(mut e) => errors.append(&mut e),
            },
        }
    }
    sort_profiles(req, settings, &mut placed, &mut errors, notes);
    Sorted {
        placed,
        rounds,
        companions,
        errors,
    }
}

/// The profiles given with `--profile`: named `flame.<kind>.<ext>` and
/// read with build's profile readers.
fn sort_profiles(
    req: &RecordRequest,
    settings: &crate::config::Settings,
    placed: &mut Vec<Placed>,
    errors: &mut Vec<Error>,
    notes: &mut Vec<Diagnostic>,
) {
    for file in &req.profiles {
        if req.endpoint.is_none() {
            errors.push(Error::at(
                file,
                None,
                "a profile belongs to an endpoint folder: say which with --endpoint",
            ));
        }
        match profile_name(file, &req.profile_kind) {
            Ok(name) => placed.push(Placed {
                source: file.clone(),
                name,
                kind: Kind::Profile,
            }),
            Err(e) => errors.push(e),
        }
        read_profile_notes(file, settings, errors, notes);
    }
}

/// Reads a profile with build's readers: its warnings become notes, a
/// file build could not read an error.
fn read_profile_notes(
    file: &Path,
    settings: &crate::config::Settings,
    errors: &mut Vec<Error>,
    notes: &mut Vec<Diagnostic>,
) {
    match profile::read_profile(file, settings) {
        Ok(warnings) => notes.extend(warnings.into_iter().map(|w| {
            Diagnostic::new(
                DiagnosticKind::Information,
                file.display().to_string(),
                None,
                w,
            )
        })),
        Err(e) => errors.push(e),
    }
}

/// What build would refuse of the placed files as a whole: a round number
/// above the largest it reads, two files under one name, no round at all.
fn check_placed(placed: &[Placed], settings: &crate::config::Settings, errors: &mut Vec<Error>) {
    let max_round = max_round_number(settings.analysis.expected_rounds);
    let mut names: BTreeMap<&str, &Path> = BTreeMap::new();
    for p in placed {
        if let Some(r) = parse_round_file_name(&p.name)
            && r.number > max_round
        {
            errors.push(Error::at(
                &p.source,
                None,
                format!(
                    "round {} is above {max_round}, the largest build reads \
                     (max(expected_rounds × 10, 100))",
                    r.number
                ),
            ));
        }
        if let Some(first) = names.insert(&p.name, &p.source) {
            errors.push(Error::at(
                &p.source,
                None,
                format!("would be filed as {}, as {} is", p.name, first.display()),
            ));
        }
    }
    if !placed.iter().any(|p| matches!(p.kind, Kind::Round { .. })) && errors.is_empty() {
        errors.push(Error::Usage(
            "no round files: a run holds the rounds of at least one endpoint (Locust's \
             companion files need their _stats.csv)"
                .into(),
        ));
    }
}

/// Assembles the run in a hidden folder inside `runs/` and renames it to
/// `target`. On any failure the temporary folder is removed (dropped).
fn write_run(
    req: &RecordRequest,
    runs: &Path,
    target: &Path,
    placed: &[Placed],
    meta: &str,
) -> Result<(), Error> {
    std::fs::create_dir_all(runs).map_err(|e| Error::io(runs, e))?;
    let staging = tempfile::Builder::new()
        .prefix(".perfdash-record-")
        .tempdir_in(runs)
        .map_err(|e| Error::io(runs, e))?;
    // Removed by a SIGINT/SIGTERM/SIGHUP while it is being written.
    let _registered = crate::cleanup::register(staging.path());
    let meta_path = staging.path().join(RUN_META_FILE);
    std::fs::write(&meta_path, meta).map_err(|e| Error::io(&meta_path, e))?;
    let folder = match &req.endpoint {
        Some(endpoint) => {
            let dir = staging.path().join(endpoint);
            std::fs::create_dir(&dir).map_err(|e| Error::io(&dir, e))?;
            dir
        }
        None => staging.path().to_path_buf(),
    };
    for p in placed {
        let dest = folder.join(&p.name);
        std::fs::copy(&p.source, &dest).map_err(|e| Error::io(&p.source, e))?;
        std::fs::File::open(&dest)
            .and_then(|f| f.sync_all())
            .map_err(|e| Error::io(&dest, e))?;
    }
    // Never over an existing run, even one a second `record` racing for
    // the same id moved in after the check above.
    let _held = crate::cleanup::hold();
    crate::write::rename_no_replace(staging.path(), target).map_err(|e| {
        Error::at(
            target,
            None,
            format!("could not move the new run into place ({e}); nothing was recorded"),
        )
    })?;
    let _kept = staging.keep();
    Ok(())
}

/// The name of this machine, for `host` in run.toml: the kernel's host
/// name on Linux, else `HOSTNAME` / `COMPUTERNAME`.
pub fn host_name() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .or_else(|| std::env::var("COMPUTERNAME").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_id_is_the_archive_format_and_reads_back() {
        let t = DateTime::parse_from_rfc3339("2026-05-04T03:07:59Z")
            .unwrap()
            .with_timezone(&Utc);
        let id = run_id(t);
        assert_eq!(id, "2026-05-04T0307Z");
        assert_eq!(
            crate::ingest::run_time_from_id(&id).unwrap(),
            DateTime::parse_from_rfc3339("2026-05-04T03:07:00Z").unwrap()
        );
    }

    #[test]
    fn set_accepts_run_toml_keys_only() {
        assert_eq!(
            parse_set("jvm_flags=-Xmx2g -XX:+UseZGC").unwrap(),
            ("jvm_flags".into(), "-Xmx2g -XX:+UseZGC".into())
        );
        assert_eq!(parse_set("load.vus=50").unwrap().0, "load.vus");
        assert_eq!(parse_set("notes=a=b").unwrap().1, "a=b");
        for bad in [
            "novalue",
            "=x",
            "a.b=1",
            "load.a.b=1",
            "sp ace=1",
            "started_at=x",
        ] {
            assert!(parse_set(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn run_toml_has_ci_host_and_sets_and_reads_back() {
        let req = RecordRequest {
            archive: PathBuf::from("a"),
            endpoint: Some("order-list".into()),
            files: vec![],
            started_at: DateTime::parse_from_rfc3339("2026-05-04T03:00:00Z")
                .unwrap()
                .with_timezone(&Utc),
            id: None,
            ci: Some(CiFacts {
                provider: "github-actions",
                commit: Some("4f2a9c1".into()),
                branch: Some("feature \"quoted\"".into()),
                job_url: Some("https://github.com/acme/shop/actions/runs/1".into()),
                pull_request: Some("42".into()),
            }),
            host: Some("runner-1".into()),
            sets: vec![
                ("branch".into(), "main".into()),
                ("load.vus".into(), "50".into()),
                ("jvm_flags".into(), "-Xmx2g".into()),
            ],
            profiles: vec![],
            profile_kind: "cpu".into(),
            now: DateTime::parse_from_rfc3339("2026-05-04T03:10:00Z")
                .unwrap()
                .with_timezone(&Utc),
            force: false,
        };
        let text = run_meta_text(&req);
        let (meta, started) = parse_run_meta(&text, Path::new("run.toml")).unwrap();
        assert_eq!(started, Some(req.started_at));
        assert_eq!(meta.commit.as_deref(), Some("4f2a9c1"));
        assert_eq!(meta.branch.as_deref(), Some("main"), "--set wins over CI");
        assert_eq!(meta.extra["pull_request"], "42");
        assert_eq!(meta.extra["ci_provider"], "github-actions");
        assert_eq!(
            meta.extra["ci_job"],
            "https://github.com/acme/shop/actions/runs/1"
        );
        assert_eq!(meta.environment["host"], "runner-1");
        assert_eq!(meta.environment["jvm_flags"], "-Xmx2g");
        assert_eq!(meta.load["vus"], "50");
        assert_eq!(text, run_meta_text(&req), "same inputs, same bytes");
    }

    fn numbered(files: &[(&str, bool)], companions: &[&str]) -> Result<Vec<String>, usize> {
        let rounds = files
            .iter()
            .map(|(path, summary)| {
                let source = PathBuf::from(path);
                let name = source.file_name().unwrap().to_str().unwrap().to_string();
                ReadRound {
                    round: parse_round_file_name(&name),
                    source,
                    name,
                    summary: *summary,
                }
            })
            .collect();
        let companions = companions
            .iter()
            .map(|c| (PathBuf::from(c), c.to_string()))
            .collect();
        let mut notes = Vec::new();
        number_rounds(rounds, companions, &mut notes)
            .map(|placed| placed.into_iter().map(|p| p.name).collect())
            .map_err(|e| e.len())
    }

    #[test]
    fn rounds_keep_their_names_or_are_numbered_in_order_with_their_summaries() {
        assert_eq!(
            numbered(
                &[("x/round-10.ndjson.gz", false), ("round-2.json", true)],
                &[]
            )
            .unwrap(),
            ["round-10.ndjson.gz", "round-2.json"]
        );
        // A raw file and a summary of one round are one round, as build
        // reads them (the summary is the cross-check) …
        assert_eq!(
            numbered(
                &[("round-1.json", true), ("a/round-1.ndjson.gz", false)],
                &[]
            )
            .unwrap(),
            ["round-1.json", "round-1.ndjson.gz"]
        );
        // … two raw files of one number are not.
        assert_eq!(
            numbered(&[("round-1.json", false), ("a/round-1.csv", false)], &[]),
            Err(1)
        );
        assert_eq!(
            numbered(&[("out-a.NDJSON.GZ", false), ("round-7.csv", false)], &[]).unwrap(),
            ["round-1.ndjson.gz", "round-2.csv"]
        );
        // Same name before the extension: a raw file and its summary.
        assert_eq!(
            numbered(
                &[
                    ("r1.ndjson.gz", false),
                    ("r1.json", true),
                    ("r2.ndjson.gz", false),
                    ("r2.json", true),
                    // Two raw files of one name are two rounds.
                    ("r2.csv.gz", false),
                ],
                &[]
            )
            .unwrap(),
            [
                "round-1.ndjson.gz",
                "round-1.json",
                "round-2.ndjson.gz",
                "round-2.json",
                "round-3.csv.gz"
            ]
        );
        // Locust's files beside their stats file, one left over.
        assert_eq!(
            numbered(
                &[("eu_stats.csv", false), ("us_stats.csv", false)],
                &[
                    "us_failures.csv",
                    "eu_stats_history.csv",
                    "ap_exceptions.csv"
                ]
            )
            .unwrap(),
            [
                "round-1_stats.csv",
                "round-2_stats.csv",
                "round-2_failures.csv",
                "round-1_stats_history.csv"
            ]
        );
        assert_eq!(numbered(&[("results.txt", false)], &[]), Err(1));
    }
}
