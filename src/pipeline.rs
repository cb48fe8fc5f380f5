//! The whole build as one library call: ingest → analyse → render → write;
//! and the gate's: ingest → analyse (as far as the gate reads) → check.

use std::path::{Path, PathBuf};

use crate::analyse::changepoint::known::KnownJudgements;
use crate::analyse::gate::{CheckOptions, CheckReport, RunSelector, check};
use crate::analyse::{AnalyseOptions, Analysis, Policy, Scope, analyse_scoped, analyse_with};
use crate::cache::{Published, ReadCounts, Store};
use crate::error::{Diagnostic, Error};
use crate::ingest::{LoadOptions, load_archive_with};
use crate::render::{RenderOptions, render_site_into};
use crate::term::escape;
use crate::write::{
    MARKER_FILE, OutputLock, Publish, Staging, WhenLocked, WriteOptions, check_output, fresh,
    inside_archive, memo, remove_leftovers,
};
use memo::PageMemo;

/// What `perfdash build` was asked to do.
#[derive(Debug, Clone, Default)]
pub struct BuildOptions {
    pub archive: PathBuf,
    pub out: PathBuf,
    /// Fail instead of skipping bad inputs.
    pub strict: bool,
    /// Replace a non-empty output folder that has no perfdash marker.
    pub force: bool,
    /// What to render, e.g. which week `weekly.html` reviews.
    pub render: RenderOptions,
    /// `--warmup SECONDS`: overrides every warm-up setting for raw rounds.
    pub warmup: Option<f64>,
    /// Do not read or write the cache (`.perfdash-cache/<name of out>/`
    /// beside the output folder).
    pub no_cache: bool,
    /// Show a progress bar on stderr (pass `true` only for a terminal).
    pub progress: bool,
    /// What to do when another build is writing the same output
    /// (`--wait`).
    pub when_locked: WhenLocked,
    /// How the finished site replaces the previous one.
    pub publish: Publish,
    /// The build's time (runs dated more than a day after it are not
    /// trusted); `None`: `ingest::build_time()`.
    pub now: Option<chrono::DateTime<chrono::Utc>>,
    /// The process ends right after the build (the command line): the
    /// analysis is then not freed value by value, the system takes the
    /// memory back at once — about 0.07 s of a 2.4 s build after one new
    /// run at 120 endpoints × 3 years, on one core, at the very end.
    /// Leave it `false` in a process that goes on.
    pub process_exits_after: bool,
}

/// What a build did.
#[derive(Debug, Clone)]
pub struct BuildReport {
    pub runs: usize,
    pub endpoints: usize,
    pub round_files: usize,
    pub pages: usize,
    pub files: usize,
    pub bytes: u64,
    /// Of `files`, those with the same bytes as in the previous site
    /// (linked from it, not written again).
    pub unchanged_files: usize,
    /// Of `pages`, those the page memo vouched for: made from the same
    /// inputs as the previous site's, linked from it without being
    /// rendered (`write::memo`).
    pub reused_pages: usize,
    /// Endpoints that regressed in the latest run.
    pub latest_regressions: usize,
    /// Endpoints whose latest run failed (most requests failed, or no
    /// round could be used): never hidden behind "0 regressed".
    pub latest_failures: usize,
    /// Inputs skipped on the way (each names its file), and information
    /// said once per build (see `DiagnosticKind`).
    pub diagnostics: Vec<Diagnostic>,
    /// Things about the output and the cache the user should know (a
    /// damaged cache entry ignored, folders left by an interrupted build
    /// removed); they never change the site, so they are not warnings.
    pub notices: Vec<String>,
    /// Round files parsed, and round results taken from the cache.
    pub rounds_parsed: usize,
    pub rounds_from_cache: usize,
    /// Runs read from their cache record by `stat`, no file opened.
    pub runs_by_stat: usize,
    /// Folders listed from the cache, found as they were.
    pub folders_as_listed: usize,
    /// Series of the `changepoint` policy whose judgements were found in
    /// the cache (whole, or all but their newest runs), and series judged
    /// from their first run.
    pub changepoint_series_known: usize,
    pub changepoint_series_judged: usize,
    /// Cache files written and removed after the site was in place.
    pub cache_files_written: usize,
    pub cache_files_removed: usize,
    /// Nothing had changed since the last build: the site was left as it
    /// was, and the figures above are that build's ([`fresh`]).
    pub up_to_date: bool,
    /// Wall time of each stage of this build, in order (`build --verbose`
    /// prints them: where a slow build's time goes).
    pub stages: Vec<(&'static str, std::time::Duration)>,
}

/// The wall time of consecutive stages.
struct Stopwatch {
    last: std::time::Instant,
    stages: Vec<(&'static str, std::time::Duration)>,
}

impl Stopwatch {
    fn start() -> Stopwatch {
        Stopwatch {
            last: std::time::Instant::now(),
            stages: Vec::new(),
        }
    }

    /// Ends `stage` now; the next one starts.
    fn lap(&mut self, stage: &'static str) {
        let now = std::time::Instant::now();
        self.stages.push((stage, now - self.last));
        self.last = now;
    }
}

/// Builds the site. On any error nothing is written and a previous site
/// is left as it was; with `strict`, a build that finds any problem
/// writes nothing at all (no site, no cache, no lock file left).
///
/// The order is what keeps the output safe: refuse a bad target before
/// reading; take the output's lock (one builder at a time) and remove
/// what interrupted builds left; read and analyse; render each page on
/// any core and write it at once into a staging folder beside the output
/// (the site is never held whole in memory); swap the staging folder in
/// atomically; only then save the cache.
pub fn build(opts: &BuildOptions) -> Result<BuildReport, Error> {
    let mut clock = Stopwatch::start();
    if let Some(w) = opts.warmup {
        crate::config::check_warmup("--warmup", w).map_err(Error::Usage)?;
    }
    let write_opts = WriteOptions {
        out: opts.out.clone(),
        archive: opts.archive.clone(),
        force: opts.force,
        publish: opts.publish,
    };
    // Refuse a bad target before reading anything: the cache lives beside
    // the output, and must never land in the archive.
    check_output(&write_opts)?;
    let _lock = OutputLock::acquire(&opts.out, opts.when_locked)?;
    let mut notices = clean_up_leftovers(&opts.out)?;
    let cache = match opts.no_cache {
        true => None,
        false => Some(Store::beside_output(&opts.out)),
    };
    let cache = match cache {
        Some(c) if inside_archive(c.dir(), &opts.archive)? => None,
        other => other,
    };
    let load = LoadOptions {
        warmup_override: opts.warmup,
        cache,
        progress: opts.progress,
        now: opts.now,
        // A site shows profiles.
        skip_recorded_profiles: false,
    };
    let loaded = load_archive_with(&opts.archive, &load)?;
    refuse_unusable(&loaded, opts)?;
    let round_files = loaded.archive.round_files();
    let counts = loaded.counts;
    // The inputs' fingerprint with everything else that decides the site.
    let inputs = loaded.inputs.and_then(|archive| {
        let options = format!("{:?}", (&opts.render, opts.publish));
        load.cache.as_ref()?;
        Some(xxhash_rust::xxh3::xxh3_128(
            &[&archive.to_le_bytes()[..], options.as_bytes()].concat(),
        ))
    });
    if let (Some(cache), Some(inputs)) = (&load.cache, inputs)
        && let Some(summary) = fresh::up_to_date(cache.index().site.as_ref(), &opts.out, inputs)
    {
        clock.lap("read");
        return Ok(up_to_date_report(summary, &load, counts, notices, clock));
    }
    clock.lap("read");
    let (mut analysis, known) =
        analyse_for_site(&loaded.archive, loaded.diagnostics, load.cache.as_ref());
    clock.lap("analyse");
    // The archive's rounds are shared with the analysis; the rest of the
    // archive is not needed any more.
    drop(loaded.archive);
    // The page memo lives with the cache: `--no-cache` neither reads nor
    // writes it.
    let memo = load
        .cache
        .as_ref()
        .and_then(|c| PageMemo::from_kept(c.index().pages.as_ref()));
    let staging = Staging::begin(&write_opts, None)?.with_memo(memo);
    let rendered = render_site_into(&analysis, &opts.render, &staging)?;
    let made = staging.memo_made();
    clock.lap("pages and files");
    let written = staging.publish()?;
    clock.lap("swap");
    let summary = fresh::Summary {
        runs: analysis.runs.len(),
        endpoints: analysis.endpoints.len(),
        round_files,
        pages: rendered.pages,
        files: written.files,
        bytes: written.bytes,
        latest_regressions: analysis.latest_run_regressions(),
        latest_failures: analysis.latest_run_failures(),
        diagnostics: std::mem::take(&mut analysis.diagnostics),
    };
    // After the site: a full disk or a crash here costs only the cache.
    let saved = match &load.cache {
        Some(cache) => {
            let published = Published {
                pages: made
                    .zip(crate::cache::key::salt())
                    .map(|(made, salt)| memo::published(&opts.out, salt, made)),
                site: inputs
                    .and_then(|inputs| fresh::published(&opts.out, inputs, summary.clone())),
            };
            let saved = cache.save(Some(published));
            notices.extend(cache.notices());
            saved
        }
        None => Default::default(),
    };
    clock.lap("cache");
    if opts.process_exits_after {
        std::mem::forget(analysis);
    }
    let (known, judged) = known.map_or((0, 0), |k| k.counts());
    Ok(BuildReport {
        stages: clock.stages,
        changepoint_series_known: known,
        changepoint_series_judged: judged,
        ..report(
            summary,
            (written.unchanged, rendered.reused_pages),
            counts,
            saved,
            notices,
            false,
        )
    })
}

/// The site's analysis, with the `changepoint` policy's judgements of
/// the previous build from `cache` (this build's are handed to it, kept
/// when the cache is saved).
fn analyse_for_site(
    archive: &crate::model::Archive,
    diagnostics: Vec<Diagnostic>,
    cache: Option<&Store>,
) -> (Analysis, Option<std::sync::Arc<KnownJudgements>>) {
    // `None` when this perfdash cannot name itself (no salt): every run
    // is judged.
    let known = cache.and_then(|c| {
        let salt = crate::cache::key::salt()?;
        let kept = c.index().judgements.as_ref();
        Some(std::sync::Arc::new(KnownJudgements::from_kept(salt, kept)))
    });
    let options = AnalyseOptions {
        known_judgements: known.clone(),
        ..AnalyseOptions::default()
    };
    let analysis = analyse_with(archive, diagnostics, &options);
    if let (Some(cache), Some(known)) = (cache, &known) {
        cache.keep_judgements(known.to_kept());
    }
    (analysis, known)
}

/// Removes what interrupted builds left beside `out` (under the lock);
/// the notices say what was removed, and what was left alone.
fn clean_up_leftovers(out: &std::path::Path) -> Result<Vec<String>, Error> {
    let mut notices = Vec::new();
    let (removed, kept) = remove_leftovers(out)?;
    if !removed.is_empty() {
        notices.push(format!(
            "removed {} folder(s) left beside {} by an interrupted build",
            removed.len(),
            out.display()
        ));
    }
    for path in kept {
        notices.push(format!(
            "left {} alone: its name is one perfdash uses, but it holds no {MARKER_FILE} marker; \
             remove it if it is not yours",
            path.display()
        ));
    }
    Ok(notices)
}

/// `--strict` with input problems, or no readable run: nothing to build.
fn refuse_unusable(loaded: &crate::ingest::Loaded, opts: &BuildOptions) -> Result<(), Error> {
    if opts.strict && loaded.diagnostics.iter().any(|d| d.is_warning()) {
        let list: Vec<String> = loaded
            .diagnostics
            .iter()
            .filter(|d| d.is_warning())
            .map(|d| format!("  {}", escape(&d.to_string())))
            .collect();
        return Err(Error::Usage(format!(
            "--strict: {} input problem(s), nothing written:\n{}",
            list.len(),
            list.join("\n")
        )));
    }
    if loaded.archive.runs.is_empty() {
        // The reasons must reach the user: without them "no readable
        // runs" says nothing about which file to fix.
        let reasons: String = loaded
            .diagnostics
            .iter()
            .map(|d| format!("\n  {}", escape(&d.to_string())))
            .collect();
        return Err(Error::at(
            &opts.archive,
            None,
            format!(
                "no readable runs: nothing to build (see docs/archive.md for the layout){reasons}"
            ),
        ));
    }
    Ok(())
}

/// The report of a build that found the site up to date ([`fresh`]): the
/// last build's figures; only the cache is saved (a run read by content,
/// e.g. after its record was damaged, gets its record back).
fn up_to_date_report(
    summary: fresh::Summary,
    load: &LoadOptions,
    counts: ReadCounts,
    mut notices: Vec<String>,
    mut clock: Stopwatch,
) -> BuildReport {
    let saved = load
        .cache
        .as_ref()
        .map(|c| c.save(None))
        .unwrap_or_default();
    if let Some(cache) = &load.cache {
        notices.extend(cache.notices());
    }
    clock.lap("cache");
    let unchanged = summary.files;
    BuildReport {
        stages: clock.stages,
        ..report(summary, (unchanged, 0), counts, saved, notices, true)
    }
}

/// A build's report: what it built (or found built), and how (its
/// stage times are the caller's to add).
fn report(
    summary: fresh::Summary,
    (unchanged_files, reused_pages): (usize, usize),
    counts: ReadCounts,
    saved: crate::cache::Saved,
    notices: Vec<String>,
    up_to_date: bool,
) -> BuildReport {
    BuildReport {
        runs: summary.runs,
        endpoints: summary.endpoints,
        round_files: summary.round_files,
        pages: summary.pages,
        files: summary.files,
        bytes: summary.bytes,
        unchanged_files,
        reused_pages,
        latest_regressions: summary.latest_regressions,
        latest_failures: summary.latest_failures,
        diagnostics: summary.diagnostics,
        notices,
        rounds_parsed: counts.read,
        rounds_from_cache: counts.cached,
        runs_by_stat: counts.runs_by_stat,
        folders_as_listed: counts.folders_as_listed,
        changepoint_series_known: 0,
        changepoint_series_judged: 0,
        cache_files_written: saved.written,
        cache_files_removed: saved.removed,
        up_to_date,
        stages: Vec::new(),
    }
}

/// What `perfdash check` was asked to do.
#[derive(Debug, Clone)]
pub struct GateOptions {
    pub archive: PathBuf,
    pub run: RunSelector,
    /// `--base-commit SHA` with `--run` of a branch run: judge it against
    /// the main baseline as of its merge base (docs/alarms.md).
    pub base_commit: Option<String>,
    /// `None`: `[alarms] policy` in perfdash.toml, else the default.
    pub policy: Option<Policy>,
    pub check: CheckOptions,
    /// `--warmup SECONDS`: overrides every warm-up setting for raw rounds.
    pub warmup: Option<f64>,
    /// The site folder whose cache (`.perfdash-cache/<name>/` beside it,
    /// the one `perfdash build --out SITE` keeps) the gate reads and
    /// refreshes; `None`: no cache.
    pub site: Option<PathBuf>,
    /// The build's time (see [`BuildOptions::now`]).
    pub now: Option<chrono::DateTime<chrono::Utc>>,
}

/// The gate's answer and what it was made from.
#[derive(Debug)]
pub struct Gated {
    pub report: CheckReport,
    /// The analysis the report was read from, computed only as far as
    /// the gate needs ([`Scope::Gate`]): the pull-request comment reads
    /// the rounds' figures from it.
    pub analysis: Analysis,
    /// Inputs skipped anywhere in the archive (warnings).
    pub skipped_inputs: usize,
    /// Things about the cache the user should know (never the verdicts).
    pub notices: Vec<String>,
    /// Round files parsed, and round results taken from the cache.
    pub counts: ReadCounts,
}

/// Where `--base-commit` puts a branch run's baseline. The same CI step
/// may run on the main branch too, where the merge base is the run's own
/// commit: a main run is judged in the main history and the flag is
/// noted, not refused.
fn analyse_options(
    archive: &crate::model::Archive,
    run: &RunSelector,
    base_commit: Option<&str>,
    notices: &mut Vec<String>,
) -> Result<AnalyseOptions, Error> {
    let mut options = AnalyseOptions::default();
    let (RunSelector::Id(run), Some(commit)) = (run, base_commit) else {
        return Ok(options);
    };
    let main = archive.main_branch();
    if let Some(r) = archive.runs.iter().find(|r| &r.id == run)
        && r.meta.on_main(main.as_deref())
    {
        notices.push(format!(
            "run '{run}' is a main-branch run, judged in the main history; --base-commit is for runs of other branches"
        ));
        return Ok(options);
    }
    let base = crate::analyse::merge_base_run(archive, run, commit)?;
    options.merge_bases.insert(run.to_string(), base);
    Ok(options)
}

/// Compares the profiles of every endpoint of the checked run that is over
/// the line with their baseline profiles, as the site does
/// ([`crate::analyse::attribution::attribute_checked`]), so that `check`
/// says why it is slower. The gate's load leaves out the profiles of runs
/// the cache knows, and its analysis classifies none: the checked run's
/// and each kind's baseline profile are read here, and only they.
fn compare_checked_profiles(
    report: &mut CheckReport,
    analysis: &Analysis,
    archive: &crate::model::Archive,
    root: &std::path::Path,
) {
    use crate::analyse::attribution::{Candidate, attribute_checked};
    use crate::analyse::gate::CheckedProfile;
    let settings = &archive.settings;
    let Ok(classifier) = crate::profile::Classifier::new(&settings.profiles) else {
        return;
    };
    let main_branch = archive.main_branch();
    for check in report.endpoints.iter_mut().filter(|c| c.over_the_line()) {
        let Some(e) = analysis.endpoints.iter().find(|e| e.id == check.endpoint) else {
            continue;
        };
        let Some(point) = e
            .points
            .iter()
            .chain(&e.branch_points)
            .find(|p| p.run == report.run)
        else {
            continue;
        };
        let profiles_of = |p: &crate::analyse::RunPoint| {
            let held = archive.runs[p.run_index]
                .endpoints
                .get(&e.id)
                .map(|r| r.profiles.clone())
                .unwrap_or_default();
            if held.is_empty() {
                // Left out of the load (the run came from the cache), or
                // none: a listing tells.
                crate::ingest::read_endpoint_profiles(
                    root,
                    settings,
                    &archive.runs[p.run_index].id,
                    &e.id,
                )
                .0
            } else {
                held
            }
        };
        let files = profiles_of(point);
        if files.is_empty() {
            continue;
        }
        let earlier = e
            .points
            .iter()
            .filter(|p| p.run_index < point.run_index)
            .rev()
            .map(|p| Candidate {
                point: p,
                meta: &archive.runs[p.run_index].meta,
            });
        let analysed = attribute_checked(
            Candidate {
                point,
                meta: &archive.runs[point.run_index].meta,
            },
            &files,
            earlier,
            profiles_of,
            main_branch.as_deref(),
            &classifier,
            // Attributed exactly where the site attributes: a regression.
            (
                settings.profiles.min_shift_pts,
                point.verdict == crate::analyse::Verdict::Regression,
            ),
        );
        check.profiles = analysed.iter().map(CheckedProfile::of).collect();
    }
}

/// Judges one run under one policy: reads the archive (round results of
/// unchanged files from the cache, which is content-keyed, so a stale or
/// missing cache only costs time), analyses only what the gate reads, and
/// checks. The report is the one a full analysis gives
/// (`gate_scope_checks_like_the_full_analysis`).
///
/// Then it refreshes the cache, as a build of the site would (same folder,
/// same entries), so that the next check or build is warm: unless
/// `--warmup` changed the results (they would evict the build's), or a
/// build holds the site's lock (it writes the cache itself). A failure
/// there costs only the cache, with a notice.
pub fn gate(opts: &GateOptions) -> Result<Gated, Error> {
    if let Some(w) = opts.warmup {
        crate::config::check_warmup("--warmup", w).map_err(Error::Usage)?;
    }
    // Only the cache beside a site whose folder exists or can: `--site /`
    // has no folder beside it (its cache once went into the current
    // folder), and `--site /missing/site` must not make `check` create
    // `/missing`. The cache itself, beside the site, is `check`'s to write.
    let cache_home = |site: &Path| {
        site.file_name().is_some()
            && site
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."))
                .is_dir()
    };
    let cache = match &opts.site {
        Some(site) if cache_home(site) => {
            let cache = Store::beside_output(site);
            (!inside_archive(cache.dir(), &opts.archive)?).then_some(cache)
        }
        _ => None,
    };
    let load = LoadOptions {
        warmup_override: opts.warmup,
        cache,
        progress: false,
        now: opts.now,
        skip_recorded_profiles: true,
    };
    let loaded = load_archive_with(&opts.archive, &load)?;
    let skipped_inputs = loaded.diagnostics.iter().filter(|d| d.is_warning()).count();
    let policy = opts.policy.unwrap_or(loaded.archive.settings.alarms.policy);
    let mut notices = Vec::new();
    let mut options = analyse_options(
        &loaded.archive,
        &opts.run,
        opts.base_commit.as_deref(),
        &mut notices,
    )?;
    options.checked_run = Some(opts.run.clone());
    let analysis = analyse_scoped(
        &loaded.archive,
        loaded.diagnostics,
        Scope::Gate(policy),
        &options,
    );
    let mut report = check(&analysis, &opts.run, policy, &opts.check)?;
    compare_checked_profiles(&mut report, &analysis, &loaded.archive, &opts.archive);
    if let (Some(cache), Some(site), None) = (&load.cache, &opts.site, opts.warmup) {
        // Never wait for a build: it saves the cache itself.
        if let Ok(_lock) = OutputLock::acquire(site, WhenLocked::Fail) {
            cache.save(None);
        }
    }
    if let Some(cache) = &load.cache {
        notices.extend(cache.notices());
    }
    Ok(Gated {
        report,
        analysis,
        skipped_inputs,
        notices,
        counts: loaded.counts,
    })
}
