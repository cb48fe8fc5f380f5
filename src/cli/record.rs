//! `perfdash record`: files one run's outputs into the archive.

use std::path::PathBuf;

use chrono::{DateTime, Utc};
use clap::Args;

use super::{EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, diagnostic_label};
use crate::analyse::gate::{CheckOptions, CheckReport, RunSelector};
use crate::error::Error;
use crate::pipeline::GateOptions;
use crate::record::profile::{ProfileOutcome, ProfileRequest, profile_if_regressed};
use crate::record::rounds::{parse_pause, run_rounds};
use crate::record::{RecordRequest, ci, host_name, parse_set, record};

#[derive(Debug, Args)]
pub struct RecordArgs {
    #[command(flatten)]
    pub archive: super::ArchiveArg,
    /// The endpoint the files measure (its folder name). Without it the
    /// files are run-level results of every endpoint, split by the
    /// `[raw] split_tag` tag.
    #[arg(long, value_name = "ID")]
    pub endpoint: Option<String>,
    /// A run.toml key (`jvm_flags=-Xmx2g`, `load.vus=50`, `branch=main`);
    /// repeatable; wins over what the CI variables and the host say.
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = parse_set)]
    pub sets: Vec<(String, String)>,
    /// When the run started (RFC 3339) [default: now, or PERFDASH_NOW].
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    pub started_at: Option<DateTime<Utc>>,
    /// The run id [default: the start time, as 2026-05-04T0300Z].
    #[arg(long, value_name = "ID")]
    pub id: Option<String>,
    /// The round files, one per round, in round order (files already named
    /// round-<n>… keep their numbers).
    #[arg(
        value_name = "FILE",
        required_unless_present = "rounds",
        conflicts_with = "rounds"
    )]
    pub files: Vec<PathBuf>,
    /// Run the command after `--` this many times, one round each, and
    /// record what it wrote to `{out}`.
    #[arg(long, value_name = "N", requires = "command",
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub rounds: Option<u32>,
    /// The wait between rounds (`10s`, `500ms`, `2m`).
    #[arg(long, value_name = "DURATION", default_value = "0s", value_parser = parse_pause)]
    pub pause: std::time::Duration,
    /// The extension of `{out}`: what the command writes (k6 gzips a name ending in .gz).
    #[arg(long, value_name = "EXT", default_value = "ndjson.gz")]
    pub out_ext: String,
    /// The command that runs one round, with `{out}` (the file it must
    /// write) and `{round}` (1, 2, …) substituted; run without a shell.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
    /// Once the run is recorded, judge it as `perfdash check --run <id>`
    /// would; only on a regression, run CMD once (with `sh -c`; `{out}`,
    /// `{run}` and `{endpoint}` substituted and quoted) and file what it
    /// wrote to `{out}` as the run's flame graph. Exit 1 when the profile
    /// is refused (the run is kept). See docs/ci.md.
    #[arg(long, value_name = "CMD", requires = "endpoint")]
    pub profile_on_regression: Option<String>,
    /// The kind of the profile (`flame.<kind>.<ext>`: cpu, alloc, lock, wall, …).
    #[arg(long, value_name = "KIND", default_value = "cpu")]
    pub profile_kind: String,
    /// The extension of `{out}` and of the filed profile; async-profiler
    /// picks its output format from it (collapsed, html).
    #[arg(long, value_name = "EXT", default_value = "collapsed")]
    pub profile_ext: String,
}

fn parse_time(text: &str) -> Result<DateTime<Utc>, String> {
    crate::calendar::parse_rfc3339(text).map_err(|why| why.trim_start_matches("is ").to_string())
}

pub(super) fn run(args: RecordArgs) -> anyhow::Result<u8> {
    let started_at = match args.started_at {
        Some(t) => t,
        None => crate::ingest::build_time()?,
    };
    // A profile request that could never be filed is refused before any
    // round runs.
    let profile = args
        .profile_on_regression
        .as_ref()
        .map(|command| ProfileRequest {
            command: command.clone(),
            kind: args.profile_kind.clone(),
            extension: args.profile_ext.clone(),
        });
    if let Some(p) = &profile {
        p.validate().map_err(crate::error::Error::Usage)?;
    }
    // Rounds run into a scratch folder outside the archive; record then
    // checks and files them like files given by hand.
    let scratch;
    let mut files = args.files;
    let mut sets = Vec::new();
    if let Some(rounds) = args.rounds {
        if !crate::ingest::ROUND_EXTENSIONS.contains(&args.out_ext.as_str()) {
            return Err(crate::error::Error::Usage(format!(
                "--out-ext {}: not an extension build reads ({})",
                args.out_ext,
                crate::ingest::ROUND_EXTENSIONS.join(", ")
            ))
            .into());
        }
        scratch = tempfile::tempdir()?;
        let outcome = run_rounds(
            &args.command,
            rounds,
            args.pause,
            scratch.path(),
            &args.out_ext,
        )
        .map_err(crate::error::Error::Usage)?;
        if !outcome.failed.is_empty() {
            sets.push(("failed_rounds".to_string(), outcome.failed.join(", ")));
        }
        files = outcome.files;
    }
    sets.extend(args.sets);
    let request = RecordRequest {
        archive: args.archive.dir.clone(),
        endpoint: args.endpoint.clone(),
        files,
        started_at,
        id: args.id,
        ci: ci::detect(&|name| std::env::var(name).ok()),
        host: host_name(),
        sets,
    };
    match record(&request) {
        Ok(recorded) => {
            for d in &recorded.notes {
                eprintln!(
                    "{}: {}",
                    diagnostic_label(d),
                    crate::term::escape(&d.to_string())
                );
            }
            eprintln!(
                "recorded {} round file(s) into {}",
                recorded.files,
                recorded.dir.display()
            );
            // The id alone on stdout, for `RUN=$(perfdash record …)`.
            outln!("{}", recorded.id)?;
            match (&profile, &args.endpoint) {
                (Some(p), Some(endpoint)) => Ok(profile_step(
                    &args.archive.dir,
                    &recorded.id,
                    &recorded.dir,
                    endpoint,
                    p,
                )),
                _ => Ok(EXIT_OK),
            }
        }
        Err(errors) => {
            for e in &errors {
                eprintln!("error: {}", crate::term::escape(&e.to_string()));
            }
            eprintln!("error: nothing was recorded; the archive is unchanged");
            Ok(EXIT_ERROR)
        }
    }
}

/// Judges a recorded run exactly as `perfdash check --run <run> --no-cache`
/// does: the same gate (`pipeline::gate`), the archive's policy. One
/// place decides a run's verdict, whichever command asks.
fn judge(archive: &std::path::Path, id: &str) -> Result<CheckReport, Error> {
    crate::pipeline::gate(&GateOptions {
        archive: archive.to_path_buf(),
        run: RunSelector::Id(id.to_string()),
        base_commit: None,
        policy: None,
        check: CheckOptions::default(),
        warmup: None,
        site: None,
        now: None,
    })
    .map(|gated| gated.report)
}

/// `--profile-on-regression`: judges the recorded run and files the
/// profiler's output when it regressed. The run is recorded whatever
/// happens here; exit 1 says the profile that was due is missing.
fn profile_step(
    archive: &std::path::Path,
    id: &str,
    dir: &std::path::Path,
    endpoint: &str,
    request: &ProfileRequest,
) -> u8 {
    let judged = judge(archive, id).and_then(|report| {
        crate::ingest::settings::load(archive).map(|settings| (report, settings))
    });
    let (report, settings) = match judged {
        Ok(judged) => judged,
        Err(e) => {
            eprintln!(
                "error: the run {id} is recorded, but it could not be judged, so no profile \
                 was taken: {}",
                crate::term::escape(&e.to_string())
            );
            return EXIT_FINDINGS;
        }
    };
    let headline = crate::report::check::headline(&report);
    match profile_if_regressed(&report, request, dir, endpoint, &settings) {
        ProfileOutcome::NotRun { .. } => {
            eprintln!("no profile taken: {}", crate::term::escape(&headline));
            EXIT_OK
        }
        ProfileOutcome::Filed { path, warnings } => {
            for w in warnings {
                eprintln!(
                    "note: {}: profile: {}",
                    path.display(),
                    crate::term::escape(&w)
                );
            }
            eprintln!(
                "{}: profiled, filed {}",
                crate::term::escape(&headline),
                path.display()
            );
            EXIT_OK
        }
        ProfileOutcome::Refused(e) => {
            eprintln!("{}: profiled, but", crate::term::escape(&headline));
            eprintln!(
                "error: profile refused: {}",
                crate::term::escape(&e.to_string())
            );
            eprintln!("the run {id} is recorded without a profile");
            EXIT_FINDINGS
        }
    }
}
