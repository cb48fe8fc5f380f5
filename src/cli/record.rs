//! `perfdash record`: files one run's outputs into the archive.

use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use clap::Args;

use super::{EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, diagnostic_label};
use crate::analyse::gate::{CheckOptions, CheckReport, RunSelector};
use crate::error::Error;
use crate::pipeline::GateOptions;
use crate::record::profile::{ProfileOutcome, ProfileRequest, profile_if_regressed, take_profile};
use crate::record::rounds::{parse_pause, run_rounds};
use crate::record::{
    RecordRequest, Recorded, ci, host_name, parse_set, preflight, record, request_id,
};
use crate::remote::{ArchiveLocation, Remote, mirror, publish};

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
    /// Record a start time build will not trust (more than a day in the
    /// future, before 2000, far from the date in --id), which is refused
    /// otherwise.
    #[arg(long)]
    pub force: bool,
    /// The run's files, told by their names as `build` tells them: round
    /// files (raw outputs and summaries; files already named round-<n>…
    /// keep their numbers, others are numbered in the order given, a raw
    /// file and a summary of the same name being one round), the files
    /// Locust writes beside a `_stats.csv`, `flame.*` profiles, `steps.*`
    /// and `resources.csv`.
    #[arg(
        value_name = "FILE",
        required_unless_present = "rounds",
        conflicts_with = "rounds"
    )]
    pub files: Vec<PathBuf>,
    /// Run the command after `--` this many times, one round each, and
    /// record what it wrote to `{out}` (and beside it under `{prefix}`).
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
    /// write), `{prefix}` (that path without its extension, for tools
    /// that add their own: `locust --csv {prefix}`, `k6 --summary-export
    /// {prefix}.json`) and `{round}` (1, 2, …) substituted; run without a
    /// shell.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
    /// A profile to file with the run, on any run (folded stacks,
    /// async-profiler HTML, perf script, speedscope, …): filed as
    /// `<endpoint>/flame.<kind>.<ext>`; repeatable (one per kind).
    #[arg(long = "profile", value_name = "FILE", requires = "endpoint")]
    pub profiles: Vec<PathBuf>,
    /// Once the run is recorded, judge it as `perfdash check --run <id>`
    /// would; only on a regression, run CMD once (with `sh -c`; `{out}`,
    /// `{run}` and `{endpoint}` substituted and quoted) and file what it
    /// wrote to `{out}` as the run's flame graph. Exit 1 when the profile
    /// is refused (the run is kept). See docs/ci.md.
    #[arg(
        long,
        value_name = "CMD",
        requires = "endpoint",
        conflicts_with = "profile_every_run"
    )]
    pub profile_on_regression: Option<String>,
    /// As `--profile-on-regression`, but on every run, regressed or not:
    /// so that the baseline runs have the profiles a regression's flame
    /// graph is compared with.
    #[arg(long, value_name = "CMD", requires = "endpoint")]
    pub profile_every_run: Option<String>,
    /// The kind of a profile (`flame.<kind>.<ext>`: cpu, alloc, lock, wall, …).
    #[arg(long, value_name = "KIND", default_value = "cpu")]
    pub profile_kind: String,
    /// The extension of the profiler's `{out}` and of the filed profile;
    /// async-profiler picks its output format from it (collapsed, html).
    #[arg(long, value_name = "EXT", default_value = "collapsed")]
    pub profile_ext: String,
}

fn parse_time(text: &str) -> Result<DateTime<Utc>, String> {
    crate::calendar::parse_rfc3339(text).map_err(|why| why.trim_start_matches("is ").to_string())
}

/// When the profiler runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ProfileWhen {
    /// Only when the gate finds the run regressed.
    OnRegression,
    /// On every run.
    EveryRun,
}

fn print_errors(errors: &[Error]) {
    for e in errors {
        eprintln!("error: {}", crate::term::escape(&e.to_string()));
    }
}

pub(super) fn run(args: RecordArgs) -> anyhow::Result<u8> {
    let now = crate::ingest::build_time()?;
    let started_at = args.started_at.unwrap_or(now);
    // A profile request that could never be filed is refused before any
    // round runs.
    let profile = match (&args.profile_on_regression, &args.profile_every_run) {
        (Some(command), _) => Some((command, ProfileWhen::OnRegression)),
        (None, Some(command)) => Some((command, ProfileWhen::EveryRun)),
        (None, None) => None,
    }
    .map(|(command, when)| {
        (
            ProfileRequest {
                command: command.clone(),
                kind: args.profile_kind.clone(),
                extension: args.profile_ext.clone(),
            },
            when,
        )
    });
    if let Some((p, _)) = &profile {
        p.validate().map_err(crate::error::Error::Usage)?;
    }
    let target = Target::of(&args.archive)?;
    let mut request = RecordRequest {
        archive: target.dir(),
        endpoint: args.endpoint.clone(),
        files: args.files,
        profiles: args.profiles,
        profile_kind: args.profile_kind.clone(),
        started_at,
        id: args.id,
        ci: ci::detect(&|name| std::env::var(name).ok()),
        host: host_name(),
        sets: Vec::new(),
        now,
        force: args.force,
    };
    if let Err(e) = target.refuse_existing(&request_id(&request)) {
        print_errors(&[e]);
        return Ok(EXIT_ERROR);
    }
    let scratch = match args.rounds {
        Some(rounds) => match run_the_rounds(
            &args.command,
            rounds,
            args.pause,
            &args.out_ext,
            &mut request,
        )? {
            Ok(scratch) => Some(scratch),
            Err(code) => return Ok(code),
        },
        None => None,
    };
    request.sets.extend(args.sets);
    let recorded = match record(&request).and_then(|r| target.publish(r)) {
        Ok(recorded) => recorded,
        Err(errors) => {
            print_errors(&errors);
            eprintln!("error: nothing was recorded; the archive is unchanged");
            if let Some((dir, registered)) = scratch.filter(|_| !request.files.is_empty()) {
                // The rounds ran: a measurement is never thrown away.
                drop(registered);
                let kept = dir.keep();
                eprintln!(
                    "the rounds that ran are kept in {}: file them by hand once the problem \
                     is fixed (perfdash record … {}/round-*)",
                    kept.display(),
                    kept.display()
                );
            }
            return Ok(EXIT_ERROR);
        }
    };
    drop(scratch);
    for d in &recorded.notes {
        eprintln!(
            "{}: {}",
            diagnostic_label(d),
            crate::term::escape(&d.to_string())
        );
    }
    eprintln!(
        "recorded {} round{} ({} file{}) into {}",
        recorded.rounds,
        if recorded.rounds == 1 { "" } else { "s" },
        recorded.files,
        if recorded.files == 1 { "" } else { "s" },
        crate::term::escape(&target.show(&recorded))
    );
    // The id alone on stdout, for `RUN=$(perfdash record …)`. The run is
    // recorded whatever happens to stdout: the exit code says so, and a
    // failure to print the id is only a warning (a retry on exit 2 would
    // file the run twice).
    if let Err(e) = super::write_stdout(format_args!("{}\n", recorded.id)) {
        eprintln!(
            "warning: could not write the run id to stdout ({e}); the run is recorded as {}",
            crate::term::escape(&recorded.id)
        );
    }
    match (&profile, &args.endpoint) {
        (Some((p, when)), Some(endpoint)) => Ok(profile_step(
            &target,
            &request.archive,
            &recorded.id,
            &recorded.dir,
            endpoint,
            p,
            *when,
        )),
        _ => Ok(EXIT_OK),
    }
}

/// Where the run goes: a local archive, or an archive on object storage,
/// for which the run is assembled in a temporary local archive (with the
/// bucket's `perfdash.toml`, so files are read as build will read them)
/// and then uploaded with conditional puts (`remote::publish`).
enum Target {
    Local(PathBuf),
    Remote {
        remote: Box<Remote>,
        scratch: tempfile::TempDir,
    },
}

impl Target {
    fn of(archive: &super::ArchiveArg) -> anyhow::Result<Target> {
        match &archive.location {
            ArchiveLocation::Local(dir) => Ok(Target::Local(dir.clone())),
            ArchiveLocation::Remote(url) => {
                let remote = Remote::connect(url)?;
                let scratch = tempfile::Builder::new()
                    .prefix("perfdash-record-")
                    .tempdir()?;
                publish::fetch_settings(&remote, scratch.path())?;
                Ok(Target::Remote {
                    remote: Box::new(remote),
                    scratch,
                })
            }
        }
    }

    /// The local archive `record` assembles the run in.
    fn dir(&self) -> PathBuf {
        match self {
            Target::Local(dir) => dir.clone(),
            Target::Remote { scratch, .. } => scratch.path().to_path_buf(),
        }
    }

    fn refuse_existing(&self, id: &str) -> Result<(), Error> {
        match self {
            Target::Local(_) => Ok(()),
            Target::Remote { remote, .. } => publish::refuse_existing(remote, id),
        }
    }

    /// Uploads the run recorded locally, for an archive on object storage.
    fn publish(&self, recorded: Recorded) -> Result<Recorded, Vec<Error>> {
        match self {
            Target::Local(_) => Ok(recorded),
            Target::Remote { remote, .. } => {
                publish::publish_run(remote, &recorded.dir, &recorded.id)
                    .map(|_| recorded)
                    .map_err(|e| vec![e])
            }
        }
    }

    /// The archive a recorded run is judged in: the local archive, or
    /// the bucket's local copy (the one `check` reads) brought up to date,
    /// which has the run since it is published. The copy stays locked
    /// while it is read.
    fn history(&self) -> Result<(PathBuf, Option<mirror::Synced>), Error> {
        match self {
            Target::Local(dir) => Ok((dir.clone(), None)),
            Target::Remote { remote, .. } => {
                let synced = super::synced_copy(remote)?;
                Ok((synced.dir.clone(), Some(synced)))
            }
        }
    }

    /// Files a profile taken into the recorded run's folder `dir`: a local
    /// archive has it there already; a bucket gets it as a new object of
    /// the run, never over one. Returns where it is, for the message.
    fn file_profile(&self, id: &str, dir: &Path, path: &Path) -> Result<String, Error> {
        match self {
            Target::Local(_) => Ok(path.display().to_string()),
            Target::Remote { remote, .. } => {
                let relative = path
                    .strip_prefix(dir)
                    .unwrap_or(path)
                    .to_string_lossy()
                    .replace(std::path::MAIN_SEPARATOR, "/");
                publish::add_to_run(remote, id, &relative, path)?;
                Ok(remote.url.show(&format!("runs/{id}/{relative}")))
            }
        }
    }

    /// Where the run went, for the message.
    fn show(&self, recorded: &Recorded) -> String {
        match self {
            Target::Local(_) => recorded.dir.display().to_string(),
            Target::Remote { remote, .. } => remote.url.show(&format!("runs/{}/", recorded.id)),
        }
    }
}

/// The scratch folder of `--rounds`, removed on a signal while registered.
type Scratch = (tempfile::TempDir, crate::cleanup::Registered);

/// `--rounds N -- CMD`: runs the rounds into a scratch folder outside the
/// archive and hands their files to `request`; record then checks and
/// files them like files given by hand. The scratch folder is removed on
/// every way out: filed, refused (after its rounds are moved somewhere
/// kept, in `run`), or interrupted by a signal, which ends the load test
/// first (`cleanup`). `Ok(Err(code))`: refused before any round ran.
fn run_the_rounds(
    command: &[String],
    rounds: u32,
    pause: std::time::Duration,
    out_ext: &str,
    request: &mut RecordRequest,
) -> anyhow::Result<Result<Scratch, u8>> {
    if !crate::ingest::ROUND_EXTENSIONS.contains(&out_ext) {
        return Err(crate::error::Error::Usage(format!(
            "--out-ext {out_ext}: not an extension build reads ({})",
            crate::ingest::ROUND_EXTENSIONS.join(", ")
        ))
        .into());
    }
    // Everything that would refuse the run before a round runs.
    if let Err(errors) = preflight(request) {
        print_errors(&errors);
        eprintln!("error: no round was run and nothing was recorded");
        return Ok(Err(EXIT_ERROR));
    }
    crate::cleanup::install_signal_handlers()?;
    let dir = tempfile::Builder::new()
        .prefix("perfdash-rounds-")
        .tempdir()?;
    let registered = crate::cleanup::register(dir.path());
    let outcome = run_rounds(command, rounds, pause, dir.path(), out_ext)
        .map_err(crate::error::Error::Usage)?;
    if outcome.files.is_empty() {
        // Nothing ran far enough to write a file (a script that does not
        // compile, a tool that is not there): bad input, nothing to keep.
        eprintln!(
            "error: no round wrote a file (rounds {}): nothing was recorded",
            outcome.failed.join(", ")
        );
        return Ok(Err(EXIT_ERROR));
    }
    if !outcome.failed.is_empty() {
        request
            .sets
            .push(("failed_rounds".to_string(), outcome.failed.join(", ")));
    }
    request.files = outcome.files;
    Ok(Ok((dir, registered)))
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

/// `--profile-on-regression` / `--profile-every-run`: judges the recorded
/// run when only a regression is profiled, and files the profiler's
/// output. The run is recorded whatever happens here; exit 1 says the
/// profile that was due is missing.
fn profile_step(
    target: &Target,
    archive: &std::path::Path,
    id: &str,
    dir: &std::path::Path,
    endpoint: &str,
    request: &ProfileRequest,
    when: ProfileWhen,
) -> u8 {
    let settings = match crate::ingest::settings::load(archive) {
        Ok(settings) => settings,
        Err(e) => {
            eprintln!(
                "error: the run {} is recorded, but the archive's settings could not be read, \
                 so no profile was taken: {}",
                crate::term::escape(id),
                crate::term::escape(&e.to_string())
            );
            return EXIT_FINDINGS;
        }
    };
    let (outcome, headline) = match when {
        ProfileWhen::EveryRun => (take_profile(request, dir, id, endpoint, &settings), None),
        ProfileWhen::OnRegression => {
            let judged = target
                .history()
                .and_then(|(history, _copy)| judge(&history, id));
            let report = match judged {
                Ok(report) => report,
                Err(e) => {
                    eprintln!(
                        "error: the run {} is recorded, but it could not be judged, so no \
                         profile was taken: {}",
                        crate::term::escape(id),
                        crate::term::escape(&e.to_string())
                    );
                    return EXIT_FINDINGS;
                }
            };
            let headline = crate::report::check::headline(&report);
            (
                profile_if_regressed(&report, request, dir, endpoint, &settings),
                Some(headline),
            )
        }
    };
    let said = |text: &str| match &headline {
        Some(h) => format!("{}: {text}", crate::term::escape(h)),
        None => text.to_string(),
    };
    let refused = |e: Error| {
        eprintln!("{}", said("profiled, but"));
        eprintln!(
            "error: profile refused: {}",
            crate::term::escape(&e.to_string())
        );
        eprintln!(
            "the run {} is recorded without a profile",
            crate::term::escape(id)
        );
        EXIT_FINDINGS
    };
    match outcome {
        ProfileOutcome::NotRun { .. } => {
            eprintln!(
                "no profile taken: {}",
                crate::term::escape(headline.as_deref().unwrap_or("not due"))
            );
            EXIT_OK
        }
        ProfileOutcome::Filed { path, warnings } => {
            let path = match target.file_profile(id, dir, &path) {
                Ok(shown) => shown,
                Err(e) => return refused(e),
            };
            for w in warnings {
                eprintln!(
                    "note: {}: profile: {}",
                    crate::term::escape(&path),
                    crate::term::escape(&w)
                );
            }
            eprintln!(
                "{}",
                said(&format!("profiled, filed {}", crate::term::escape(&path)))
            );
            EXIT_OK
        }
        ProfileOutcome::Refused(e) => refused(e),
    }
}
