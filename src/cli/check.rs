//! `perfdash check`: the CI gate.

use std::path::PathBuf;

use clap::Args;
use clap::builder::{PossibleValuesParser, TypedValueParser};

use super::outcome_exit_code;
use crate::analyse::Policy;
use crate::analyse::gate::{CheckOptions, RunSelector};
use crate::pipeline::GateOptions;
use crate::report::check::{CheckFormat, render};

#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub archive: super::ArchiveArg,
    /// Check this run (a folder name under runs/), of any branch: a run of
    /// another branch than `[analysis] main_branch` is judged against the
    /// main baseline (docs/alarms.md).
    #[arg(long, value_name = "ID", conflicts_with = "latest")]
    pub run: Option<String>,
    /// Check the latest run of the main branch (the default).
    #[arg(long)]
    pub latest: bool,
    /// With `--run` of a branch run: judge it against the main baseline as
    /// of this commit, its merge base (`git merge-base HEAD origin/main`),
    /// instead of as of its start time. A main run of that commit must be
    /// in the archive.
    #[arg(long, value_name = "SHA", requires = "run")]
    pub base_commit: Option<String>,
    /// The gating policy (docs/alarms.md) [default: `[alarms] policy` in
    /// perfdash.toml, else median].
    #[arg(long, value_name = "NAME", value_parser = policy_parser())]
    pub policy: Option<Policy>,
    /// Output: a short summary, JSON, the pull-request comment in
    /// Markdown (also a GitHub step summary; docs/ci.md), or JUnit XML.
    #[arg(long, value_name = "FORMAT", value_enum, default_value_t = CheckFormat::Text)]
    pub format: CheckFormat,
    /// Seconds of warm-up dropped from every raw round; overrides every
    /// setting in perfdash.toml and run.toml.
    #[arg(long, value_name = "SECONDS")]
    pub warmup: Option<f64>,
    /// The site folder `perfdash build --out` writes: the gate reads the
    /// cache kept beside it (`.perfdash-cache/<name>/`) and refreshes it
    /// (docs/ci.md).
    #[arg(long, value_name = "DIR", default_value = "site")]
    pub site: PathBuf,
    /// Read every round file instead of using the cache, and write none
    /// (the verdicts are the same either way).
    #[arg(long)]
    pub no_cache: bool,
    /// Judge the run even when an endpoint has fewer usable rounds than
    /// expected (reported as `insufficient`); without it the gate cannot
    /// vouch for such a run and exits 2.
    #[arg(long)]
    pub allow_insufficient: bool,
    /// Let endpoints through that have no earlier run to be judged against
    /// (the first runs of an archive, an endpoint or a `series_by`
    /// series) or whose early verdict is inconclusive; without it the gate
    /// cannot vouch for them and exits 2. With one or two earlier runs an
    /// endpoint gets an early verdict from the rounds either way.
    #[arg(long)]
    pub allow_no_baseline: bool,
}

/// `--policy` accepts exactly the policy names, listed in `--help`.
pub(crate) fn policy_parser() -> impl TypedValueParser<Value = Policy> {
    PossibleValuesParser::new(Policy::ALL.map(|p| p.name()))
        .map(|s| s.parse::<Policy>().expect("listed policies parse"))
}

pub(super) fn run(args: CheckArgs) -> anyhow::Result<u8> {
    let readable = args.archive.readable()?;
    match &args.run {
        Some(id) => readable.refuse_being_recorded(id)?,
        None => {
            // "The latest run" is the latest complete one: a run still
            // being recorded (perhaps the one this CI job means) is said.
            if let Some(synced) = &readable.synced
                && !synced.report.in_progress.is_empty()
            {
                eprintln!(
                    "note: left out as still being recorded: {}; the latest complete run is \
                     judged (name a run with --run)",
                    crate::term::escape(&synced.report.in_progress.join(", "))
                );
            }
        }
    }
    let gated = crate::pipeline::gate(&GateOptions {
        archive: readable.dir.clone(),
        run: match args.run {
            Some(id) => RunSelector::Id(id),
            None => RunSelector::Latest,
        },
        base_commit: args.base_commit,
        policy: args.policy,
        check: CheckOptions {
            allow_insufficient: args.allow_insufficient,
            allow_no_baseline: args.allow_no_baseline,
        },
        warmup: args.warmup,
        site: (!args.no_cache).then_some(args.site),
        now: None,
    })?;
    for notice in &gated.notices {
        eprintln!("note: {}", crate::term::escape(notice));
    }
    let (report, analysis) = (&gated.report, &gated.analysis);
    let elsewhere = gated.skipped_inputs;
    if elsewhere > report.problems.len() {
        eprintln!(
            "warning: {} input(s) skipped in the archive; `perfdash build --verbose` lists them",
            elsewhere - report.problems.len()
        );
    }
    let code = outcome_exit_code(report.outcome);
    let text = render(report, analysis, args.format, code);
    super::print_report(&text);
    // The process ends now: freeing every run point of a large archive one
    // by one cost ~4 % of a warm `check` at 120 endpoints × 156 weeks.
    std::mem::forget(gated);
    Ok(code)
}
