//! The whole build as one library call: ingest → analyse → render → write.

use std::path::PathBuf;

use crate::analyse::analyse;
use crate::error::{Diagnostic, Error};
use crate::ingest::cache::RoundCache;
use crate::ingest::{LoadOptions, load_archive_with};
use crate::render::{RenderOptions, render_site_with};
use crate::write::{WriteOptions, check_output, inside_archive, write_site};

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
    /// Do not read or write the round cache (`.perfdash-cache/` beside
    /// the output folder).
    pub no_cache: bool,
    /// Show a progress bar on stderr (pass `true` only for a terminal).
    pub progress: bool,
    /// The build's time (runs dated more than a day after it are not
    /// trusted); `None`: `ingest::build_time()`.
    pub now: Option<chrono::DateTime<chrono::Utc>>,
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
    /// Endpoints that regressed in the latest run.
    pub latest_regressions: usize,
    /// Inputs skipped on the way (each names its file), and information
    /// said once per build (see `DiagnosticKind`).
    pub diagnostics: Vec<Diagnostic>,
    /// Round files parsed, and round results taken from the cache.
    pub rounds_parsed: usize,
    pub rounds_from_cache: usize,
}

/// Builds the site. On any error nothing is written and a previous site
/// is left as it was.
pub fn build(opts: &BuildOptions) -> Result<BuildReport, Error> {
    if let Some(w) = opts.warmup {
        crate::config::check_warmup("--warmup", w).map_err(Error::Usage)?;
    }
    let write_opts = WriteOptions {
        out: opts.out.clone(),
        archive: opts.archive.clone(),
        force: opts.force,
    };
    // Refuse a bad target before reading anything: the round cache is
    // written beside the output, and must never land in the archive.
    check_output(&write_opts)?;
    let cache = match opts.no_cache {
        true => None,
        false => Some(RoundCache::beside_output(&opts.out)),
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
    };
    let loaded = load_archive_with(&opts.archive, &load)?;
    let counts = load.cache.as_ref().map(|c| c.counts());
    if opts.strict && loaded.diagnostics.iter().any(|d| d.is_warning()) {
        let list: Vec<String> = loaded
            .diagnostics
            .iter()
            .filter(|d| d.is_warning())
            .map(|d| format!("  {d}"))
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
            .map(|d| format!("\n  {d}"))
            .collect();
        return Err(Error::at(
            &opts.archive,
            None,
            format!(
                "no readable runs: nothing to build (see docs/archive.md for the layout){reasons}"
            ),
        ));
    }
    let round_files = loaded
        .archive
        .runs
        .iter()
        .flat_map(|r| r.endpoints.values())
        .map(|e| e.rounds.len())
        .sum();
    let analysis = analyse(&loaded.archive, loaded.diagnostics);
    let site = render_site_with(&analysis, &opts.render)?;
    let written = write_site(&site, &write_opts)?;
    Ok(BuildReport {
        runs: analysis.runs.len(),
        endpoints: analysis.endpoints.len(),
        round_files,
        pages: site.pages(),
        files: written.files,
        bytes: written.bytes,
        latest_regressions: analysis.latest_run_regressions(),
        diagnostics: analysis.diagnostics,
        rounds_parsed: counts.map_or(round_files, |c| c.read),
        rounds_from_cache: counts.map_or(0, |c| c.cached),
    })
}
