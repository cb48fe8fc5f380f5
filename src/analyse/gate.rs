//! The CI gate: did one run regress under one policy?
//!
//! `perfdash check` asks this of the latest run (or a named one). The
//! answer reads the judgements, alarm episodes and labels the analysis
//! already made ([`AlarmReport::at`](super::alarms::AlarmReport::at)), so
//! the gate and the weekly page never disagree. It returns a typed
//! [`Outcome`]; the exit code is chosen from it in `src/cli/`, nowhere
//! else.

use std::fmt::Write as _;

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::alarms::{self, AlarmState, Episode};
use super::attribution::{Attribution, ProfileAnalysis};
use super::environment::RunWideShift;
use super::figures::{FigureSummary, rate_percent};
use super::policy::{Judgement, Policy, RaisedAt};
use super::verdict::{CapacityVerdict, Figure};
use super::{Analysis, BranchBase, EndpointAnalysis, RunPoint, Verdict};
use crate::error::{DiagnosticKind, Error};
use crate::model::Label;

/// Which run to check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunSelector {
    Latest,
    Id(String),
}

/// What the gate may let through.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CheckOptions {
    /// Judge a run even if some endpoint has fewer usable rounds than
    /// expected (`--allow-insufficient`): those endpoints are reported
    /// and do not stop the gate from vouching for the others.
    pub allow_insufficient: bool,
    /// Pass endpoints that have no earlier run to be judged against (a
    /// new archive, a new endpoint, a new `series_by` series) or whose
    /// early verdict is inconclusive (`--allow-no-baseline`); without it
    /// the gate cannot vouch for them. A new load profile is not let
    /// through by this: see [`CannotVouch::NewLoadProfile`].
    pub allow_no_baseline: bool,
}

/// The overall outcome. `src/cli/check.rs` maps it to the exit code
/// (0, 1, 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Nothing regressed or failed.
    Pass,
    /// At least one endpoint regressed or failed.
    Regression,
    /// The gate cannot vouch for the run ([`CannotVouch`] says why);
    /// regressions found are still listed.
    CannotVouch,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Regression => "regression",
            Outcome::CannotVouch => "cannot-vouch",
        }
    }
}

/// Why the gate cannot vouch for a run. Each reason says what to fix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum CannotVouch {
    /// Inputs of the run that hold measurements could not be read
    /// (diagnostics of kind `skipped-input`, listed in `problems`).
    UnreadableInputs { count: usize },
    /// Inputs were read, but something about them is off: a summary that
    /// disagrees with its raw file, a cut-short line, a gap in the round
    /// numbers (kind `doubtful`, listed in `problems`).
    DoubtfulInputs { count: usize },
    /// An endpoint has fewer usable rounds than expected (rounds missing,
    /// or some failed); `--allow-insufficient` lets the gate judge the
    /// rest.
    TooFewRounds {
        endpoint: String,
        usable_rounds: usize,
        rounds: usize,
        expected_rounds: u32,
    },
    /// The checked run's `started_at` cannot be trusted, or (`--latest`)
    /// another run's: it may be the real latest run on a skewed clock
    /// (listed in `problems`).
    UntrustedTime { runs: Vec<String> },
    /// Endpoints with no earlier run to be judged against, not even for
    /// an early verdict: the first run of an archive, of an endpoint or of
    /// a `series_by` series (`--allow-no-baseline` lets them pass).
    NoBaseline { endpoints: Vec<String> },
    /// Endpoints whose early verdict (1 or 2 earlier runs) is over the
    /// line while their rounds overlap the earlier ones too much to tell
    /// a change from noise (`--allow-no-baseline` lets them pass).
    EarlyInconclusive { endpoints: Vec<String> },
    /// Endpoints whose load profile changed so that their p99 has nothing
    /// comparable to be judged against (docs/alarms.md,
    /// "Comparability"). A triage label `accepted` on the run, or
    /// `[alarms] accept_new_load_profile = true`, accepts the new profile
    /// as the start of a new baseline.
    NewLoadProfile {
        endpoints: Vec<String>,
        change: String,
    },
}

/// "order-list, cart and 3 more": a few names, so that a reason stays one
/// short line whatever the number of endpoints.
fn some_names(names: &[String]) -> String {
    const SHOWN: usize = 3;
    match names.len() {
        0 => String::new(),
        n if n <= SHOWN => match names {
            [one] => one.clone(),
            [init @ .., last] => format!("{} and {last}", init.join(", ")),
            [] => unreachable!(),
        },
        n => format!("{} and {} more", names[..SHOWN].join(", "), n - SHOWN),
    }
}

/// Text from the data in a reason stays short: a load profile with a
/// million keys must not make a million-character headline.
fn clipped(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

impl CannotVouch {
    /// "1 of 5 rounds of order-list", "2 unreadable inputs".
    pub fn describe(&self) -> String {
        let plural = |count: usize| if count == 1 { "" } else { "s" };
        match self {
            CannotVouch::UnreadableInputs { count } => {
                format!("{count} unreadable input{}", plural(*count))
            }
            CannotVouch::DoubtfulInputs { count } => {
                format!("{count} doubtful input{}", plural(*count))
            }
            CannotVouch::TooFewRounds {
                endpoint,
                usable_rounds,
                rounds,
                expected_rounds,
            } => {
                let failed = rounds - usable_rounds;
                if failed > 0 {
                    format!(
                        "{usable_rounds} of {expected_rounds} rounds of {endpoint} usable ({failed} failed)"
                    )
                } else {
                    format!("{usable_rounds} of {expected_rounds} rounds of {endpoint}")
                }
            }
            CannotVouch::UntrustedTime { runs } => format!(
                "an untrusted started_at (run{} {})",
                plural(runs.len()),
                runs.join(", ")
            ),
            CannotVouch::NoBaseline { endpoints } => {
                format!("no earlier run to judge {} against", some_names(endpoints))
            }
            CannotVouch::EarlyInconclusive { endpoints } => format!(
                "an early verdict that cannot tell a change from noise for {}",
                some_names(endpoints)
            ),
            CannotVouch::NewLoadProfile { endpoints, change } => format!(
                "a new load profile ({}) for {}",
                clipped(change, 120),
                some_names(endpoints)
            ),
        }
    }

    /// What to do about it, when there is something to say.
    pub fn hint(&self) -> Option<&'static str> {
        match self {
            CannotVouch::TooFewRounds { .. } => Some(
                "re-run the missing or failed rounds, or pass --allow-insufficient to judge the other endpoints",
            ),
            CannotVouch::NoBaseline { .. } => Some(
                "the first runs of an endpoint have nothing to be compared with; pass --allow-no-baseline to let them through",
            ),
            CannotVouch::EarlyInconclusive { .. } => {
                Some("re-run the test, or pass --allow-no-baseline to let early runs through")
            }
            CannotVouch::NewLoadProfile { .. } => Some(
                "if the new load profile is meant, label the run `accepted` in triage/ (perfdash triage --template) or set [alarms] accept_new_load_profile = true",
            ),
            _ => None,
        }
    }
}

/// One endpoint's result in the checked run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CheckStatus {
    /// Most rounds failed (no latency measured, or too many errors):
    /// fails the gate under every policy, whatever the labels say.
    Failed,
    /// Over the policy's line (for `persistent`: confirmed), or the error
    /// rate or throughput crossed its line: fails the gate.
    Regression,
    /// `persistent` only: over the line, waiting for the next runs.
    Pending,
    /// Over the line for latency or throughput in a run where most
    /// endpoints moved slower together (environment suspect), as one of
    /// them: part of the run's one run-wide alarm ([`RunWideCheck`]),
    /// which fails the gate unless `[alarms] fail_on_environment_suspect =
    /// false`. Passes on its own.
    EnvironmentSuspect,
    /// Over the line, but a human labelled this alarm `noise`.
    TriagedNoise,
    /// Over the line, but a human labelled it `accepted` (intended).
    TriagedAccepted,
    Ok,
    Improvement,
    /// Too few earlier runs to form a baseline.
    NoBaseline,
    /// The load profile differs from the baseline runs'.
    NotComparable,
    /// Fewer usable rounds than expected.
    Insufficient,
    /// The endpoint was in earlier runs but not in this one.
    Missing,
}

impl CheckStatus {
    /// Every status, in the order reports count them.
    pub const ALL: [CheckStatus; 12] = [
        CheckStatus::Failed,
        CheckStatus::Regression,
        CheckStatus::Pending,
        CheckStatus::EnvironmentSuspect,
        CheckStatus::TriagedNoise,
        CheckStatus::TriagedAccepted,
        CheckStatus::Ok,
        CheckStatus::Improvement,
        CheckStatus::NoBaseline,
        CheckStatus::NotComparable,
        CheckStatus::Insufficient,
        CheckStatus::Missing,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            CheckStatus::Failed => "failed",
            CheckStatus::Regression => "regression",
            CheckStatus::Pending => "pending",
            CheckStatus::EnvironmentSuspect => "environment-suspect",
            CheckStatus::TriagedNoise => "triaged-noise",
            CheckStatus::TriagedAccepted => "triaged-accepted",
            CheckStatus::Ok => "ok",
            CheckStatus::Improvement => "improvement",
            CheckStatus::NoBaseline => "no-baseline",
            CheckStatus::NotComparable => "not-comparable",
            CheckStatus::Insufficient => "insufficient",
            CheckStatus::Missing => "missing",
        }
    }

    /// Whether this status fails the gate.
    pub fn fails(self) -> bool {
        matches!(self, CheckStatus::Failed | CheckStatus::Regression)
    }

    /// Neither passed nor failed: nothing to compare with.
    pub fn is_skipped(self) -> bool {
        matches!(
            self,
            CheckStatus::NoBaseline
                | CheckStatus::NotComparable
                | CheckStatus::Insufficient
                | CheckStatus::Missing
        )
    }
}

/// One endpoint in the checked run.
#[derive(Debug, Clone, Serialize)]
pub struct EndpointCheck {
    pub endpoint: String,
    pub name: String,
    pub status: CheckStatus,
    /// The analysis verdict of this endpoint in this run (`None`: missing).
    pub verdict: Option<Verdict>,
    /// The rounds' numbers (`round-<n>`) and p99s, in round order.
    pub round_numbers: Vec<u32>,
    pub round_p99_ms: Vec<f64>,
    pub median_p99_ms: Option<f64>,
    pub baseline_p99_ms: Option<f64>,
    pub ratio: Option<f64>,
    pub threshold_ratio: f64,
    /// The four figures against their baselines and lines, failed rounds
    /// and the figures that crossed their lines (`None`: missing).
    pub figures: Option<FigureSummary>,
    /// The alarm this run belongs to under the policy, if any.
    pub alarm_run: Option<String>,
    pub alarm_state: Option<AlarmState>,
    /// Set when the status is an early verdict: too few earlier runs for a
    /// baseline, so the run's rounds were compared with theirs.
    pub early: Option<EarlyCheck>,
    /// One sentence saying why.
    pub reason: String,
    /// Over the line with profiles in the run: each compared with its
    /// baseline profile, and why the endpoint is slower (docs/profiles.md).
    /// Filled in by `pipeline::gate`, which reads the profiles; absent
    /// from the JSON when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub profiles: Vec<CheckedProfile>,
}

impl EndpointCheck {
    /// Whether the run is over the policy's line for this endpoint without
    /// having failed: a regression, however the gate then treats it
    /// (pending, environment suspect, triaged). Its profiles are compared.
    pub fn over_the_line(&self) -> bool {
        matches!(
            self.status,
            CheckStatus::Regression
                | CheckStatus::Pending
                | CheckStatus::EnvironmentSuspect
                | CheckStatus::TriagedNoise
                | CheckStatus::TriagedAccepted
        )
    }
}

/// One profile of a regressed endpoint against its baseline profile: the
/// attribution `perfdash check` shows beside the regression.
#[derive(Debug, Clone, Serialize)]
pub struct CheckedProfile {
    /// `cpu`, `alloc`, …
    pub kind: String,
    /// The file, relative to the archive.
    pub source: String,
    /// The run of the baseline profile (`None`: no earlier run that may
    /// serve as a baseline has a profile of this kind).
    pub baseline_run: Option<String>,
    pub attribution: Option<Attribution>,
    /// The line shown: the attribution's ([`Attribution::line`]), or why
    /// there is none.
    pub line: String,
}

impl CheckedProfile {
    pub fn of(pa: &ProfileAnalysis) -> CheckedProfile {
        let line = match (&pa.attribution, &pa.baseline) {
            (Some(a), _) => a.line(),
            (None, None) => format!(
                "no baseline profile: no earlier accepted run has a {} profile to compare with",
                pa.kind
            ),
            (None, Some(b)) => format!("compared with run {}; not attributed", b.run),
        };
        CheckedProfile {
            kind: pa.kind.clone(),
            source: pa.source.clone(),
            baseline_run: pa.baseline.as_ref().map(|b| b.run.clone()),
            attribution: pa.attribution.clone(),
            line,
        }
    }
}

/// Fills [`EndpointCheck::profiles`] from an analysis that compared every
/// profile (a site's, [`super::Scope::Site`]): each endpoint over the line
/// gets its point's profiles as the site shows them. `perfdash check`
/// analyses no profile and compares the checked run's alone
/// (`pipeline::gate`); the tests hold the two equal.
pub fn profiles_from(report: &mut CheckReport, analysis: &Analysis) {
    for check in report.endpoints.iter_mut().filter(|c| c.over_the_line()) {
        let Some(e) = analysis.endpoints.iter().find(|e| e.id == check.endpoint) else {
            continue;
        };
        if let Some(point) = e
            .points
            .iter()
            .chain(&e.branch_points)
            .find(|p| p.run == report.run)
        {
            check.profiles = point.profiles.iter().map(CheckedProfile::of).collect();
        }
    }
}

impl EndpointCheck {
    /// The status as reports show it: `regression (early)` for an early
    /// verdict, so it is never taken for one against a baseline.
    pub fn status_label(&self) -> String {
        match &self.early {
            Some(_) => format!("{} (early)", self.status.as_str()),
            None => self.status.as_str().to_string(),
        }
    }
}

/// An early verdict: the run's rounds against the rounds of the 1 to
/// `min_baseline_runs` − 1 accepted runs before it, with the interval and
/// rule `perfdash compare` uses ([`super::compare::compare_rounds`],
/// [`super::verdict::decide_early`]).
#[derive(Debug, Clone, Serialize)]
pub struct EarlyCheck {
    pub verdict: super::verdict::EarlyVerdict,
    /// The earlier runs whose rounds were pooled, oldest first.
    pub runs: Vec<String>,
    /// The median p99 of their usable rounds, pooled.
    pub earlier_median_p99_ms: Option<f64>,
    /// This run's median p99 ÷ the pooled rounds' median p99.
    pub ratio: Option<f64>,
    /// The Hodges–Lehmann interval for that ratio from the rounds.
    pub ratio_interval: Option<[f64; 2]>,
    pub interval_confidence: Option<f64>,
    /// The figures over their lines against the earlier rounds.
    pub regressed: Vec<Figure>,
}

/// One endpoint's step-load result in the checked run: its knee against
/// the knees of earlier runs (docs/capacity.md). Independent of the policy.
#[derive(Debug, Clone, Serialize)]
pub struct CapacityCheck {
    pub endpoint: String,
    pub name: String,
    /// `regression`, `triaged-noise`, `triaged-accepted`, `ok`,
    /// `improvement` or `no-baseline`.
    pub status: CheckStatus,
    pub knee_rps: Option<f64>,
    pub baseline_knee_rps: Option<f64>,
    /// knee ÷ baseline knee.
    pub ratio: Option<f64>,
    /// A regression is a knee below baseline × this.
    pub line_ratio: f64,
    pub limit_rps: Option<f64>,
    /// One sentence saying why.
    pub reason: String,
}

/// The gate's answer for one run.
#[derive(Debug, Clone, Serialize)]
pub struct CheckReport {
    pub run: String,
    pub started_at: DateTime<Utc>,
    pub policy: Policy,
    pub outcome: Outcome,
    /// For a run of another branch than the main one: which main baseline
    /// it was judged against.
    pub branch: Option<BranchBase>,
    /// The main branch (`None`: no run records a branch).
    #[serde(skip)]
    pub main_branch: Option<String>,
    /// Why the gate cannot vouch for the run (empty unless the outcome is
    /// `cannot-vouch`).
    pub cannot_vouch: Vec<CannotVouch>,
    /// Most endpoints of this run moved together: likely the environment.
    pub environment_suspect: Option<RunWideShift>,
    /// The run's one run-wide alarm, when endpoints over their line moved
    /// slower together in it (their status is `environment-suspect`).
    pub run_wide_alarm: Option<RunWideCheck>,
    /// Sorted by endpoint id.
    pub endpoints: Vec<EndpointCheck>,
    /// Endpoints with a step-load file in this run, sorted by id; a
    /// capacity regression fails the gate like a latency one.
    pub capacity: Vec<CapacityCheck>,
    /// Inputs of this run that could not be read (they make the outcome
    /// `cannot-vouch`).
    pub problems: Vec<String>,
    /// Files in this run that perfdash does not read (notes, profiles it
    /// does not know): reported, harmless to the verdicts.
    pub ignored: Vec<String>,
}

impl CheckReport {
    pub fn count(&self, status: CheckStatus) -> usize {
        self.endpoints.iter().filter(|e| e.status == status).count()
    }

    pub fn capacity_count(&self, status: CheckStatus) -> usize {
        self.capacity.iter().filter(|c| c.status == status).count()
    }
}

/// One alarm for the whole checked run: its endpoints moved slower
/// together (issue 33: one problem, one alarm, not one per endpoint).
#[derive(Debug, Clone, Serialize)]
pub struct RunWideCheck {
    /// "9 of 12 endpoints slower together (median ×1.20)".
    pub summary: String,
    /// The endpoints over their line that it stands for, by id.
    pub endpoints: Vec<String>,
    /// Whether it fails the gate (`[alarms] fail_on_environment_suspect`).
    pub fails: bool,
}

/// The index of the run `which` names among `runs` (an analysis' runs, in
/// time order). [`check`] checks this run, and a gate's analysis computes
/// the evidence of its points only ([`super::AnalyseOptions::checked_run`]):
/// one function, so the two never pick different runs.
pub fn selected_run(runs: &[super::RunInfo], which: &RunSelector) -> Option<usize> {
    match which {
        RunSelector::Latest => super::latest_run_index(runs),
        RunSelector::Id(id) => runs.iter().position(|r| &r.id == id),
    }
}

/// Checks one run under one policy.
pub fn check(
    analysis: &Analysis,
    which: &RunSelector,
    policy: Policy,
    options: &CheckOptions,
) -> Result<CheckReport, Error> {
    let run = match selected_run(&analysis.runs, which) {
        Some(i) => &analysis.runs[i],
        None => match which {
            RunSelector::Latest => {
                return Err(Error::Usage(
                    "the archive has no readable runs with a trusted time to check".into(),
                ));
            }
            RunSelector::Id(id) => {
                return Err(Error::Usage(format!(
                    "no run '{id}' in the archive (the latest is '{}')",
                    analysis
                        .latest_run()
                        .map(|r| r.id.as_str())
                        .unwrap_or("none")
                )));
            }
        },
    };
    let mut endpoints = Vec::new();
    // Endpoints that could not be judged, and why (in endpoint order).
    let mut blockers: Vec<(String, Blocker)> = Vec::new();
    for endpoint in &analysis.endpoints {
        let at = match &run.branch {
            None => endpoint
                .points
                .iter()
                .position(|p| p.run == run.id)
                .map(|index| PointAt::main(analysis, endpoint, index, policy)),
            Some(base) => endpoint
                .branch_points
                .iter()
                .find(|p| p.run == run.id)
                .map(|point| PointAt::branch(analysis, endpoint, point, base, policy)),
        };
        let Some(at) = at else {
            // Only an endpoint seen before this run is missing from it.
            if endpoint
                .points
                .first()
                .is_some_and(|p| p.started_at < run.started_at)
            {
                endpoints.push(EndpointCheck {
                    endpoint: endpoint.id.clone(),
                    name: endpoint.name.clone(),
                    status: CheckStatus::Missing,
                    verdict: None,
                    round_numbers: Vec::new(),
                    round_p99_ms: Vec::new(),
                    median_p99_ms: None,
                    baseline_p99_ms: None,
                    ratio: None,
                    threshold_ratio: endpoint.threshold_ratio,
                    figures: None,
                    alarm_run: None,
                    alarm_state: None,
                    early: None,
                    reason: "not measured in this run".into(),
                    profiles: Vec::new(),
                });
            }
            continue;
        };
        let (check, blocker) = endpoint_check(analysis, endpoint, &at);
        if let Some(blocker) = blocker {
            blockers.push((check.endpoint.clone(), blocker));
        }
        endpoints.push(check);
    }
    let run_wide_alarm = run.environment_suspect.as_ref().and_then(|shift| {
        let moved: Vec<String> = endpoints
            .iter()
            .filter(|e| e.status == CheckStatus::EnvironmentSuspect)
            .map(|e| e.endpoint.clone())
            .collect();
        (!moved.is_empty()).then(|| RunWideCheck {
            summary: shift.describe(),
            endpoints: moved,
            fails: analysis.settings.alarms.fail_on_environment_suspect,
        })
    });
    // Only diagnostics whose kind casts doubt on the figures (a skipped
    // round, a cut-short file, an untrusted time) stop the gate vouching;
    // the rest (notes, a second flame graph) are listed as harmless. Each
    // kind is its own reason: an untrusted time is not an unreadable file.
    let (mut problems, ignored): (Vec<_>, Vec<_>) = run
        .problems
        .iter()
        .partition(|d| d.kind.casts_doubt_on_verdicts());
    // A newer run folder that could not be read at all (every file of it
    // unreadable) is left out of the analysis: the latest run judged is
    // then an older one, which the gate must not pass for the newest.
    if *which == RunSelector::Latest {
        problems.extend(newer_runs_left_out(analysis, &run.id));
    }
    // Unreadable first, then doubtful, then untrusted times: reports list
    // each reason's own diagnostics in this order.
    problems.sort_by_key(|d| d.kind);
    let of_kind = |kind: DiagnosticKind| problems.iter().filter(|d| d.kind == kind).count();
    let mut cannot_vouch = Vec::new();
    match of_kind(DiagnosticKind::SkippedInput) {
        0 => {}
        count => cannot_vouch.push(CannotVouch::UnreadableInputs { count }),
    }
    match of_kind(DiagnosticKind::Doubtful) {
        0 => {}
        count => cannot_vouch.push(CannotVouch::DoubtfulInputs { count }),
    }
    let mut untrusted_runs: Vec<String> = Vec::new();
    if of_kind(DiagnosticKind::UntrustedTime) > 0 {
        untrusted_runs.push(run.id.clone());
    }
    let mut problems: Vec<String> = problems.iter().map(|d| d.to_string()).collect();
    let ignored: Vec<String> = ignored.iter().map(|d| d.to_string()).collect();
    // A run with an untrusted time is never "the latest", but it may be
    // today's run on a skewed clock: until it is fixed, the latest run
    // cannot be vouched for either.
    if *which == RunSelector::Latest {
        for other in analysis
            .runs
            .iter()
            .filter(|r| r.untrusted_time.is_some() && r.id != run.id)
        {
            untrusted_runs.push(other.id.clone());
            problems.extend(
                other
                    .problems
                    .iter()
                    .filter(|d| d.kind == DiagnosticKind::UntrustedTime)
                    .map(|d| d.to_string()),
            );
        }
    }
    if !untrusted_runs.is_empty() {
        cannot_vouch.push(CannotVouch::UntrustedTime {
            runs: untrusted_runs,
        });
    }
    let capacity = capacity_checks(analysis, &run.id);
    if !options.allow_insufficient {
        for check in endpoints
            .iter()
            .filter(|c| c.status == CheckStatus::Insufficient)
        {
            let figures = check
                .figures
                .as_ref()
                .expect("measured endpoints have figures");
            cannot_vouch.push(CannotVouch::TooFewRounds {
                endpoint: check.endpoint.clone(),
                usable_rounds: figures.usable_rounds,
                rounds: figures.rounds,
                expected_rounds: analysis.settings.analysis.expected_rounds,
            });
        }
    }
    cannot_vouch.extend(unjudged_reasons(&blockers, options));
    let outcome = if !cannot_vouch.is_empty() {
        Outcome::CannotVouch
    } else if endpoints
        .iter()
        .map(|e| e.status)
        .chain(capacity.iter().map(|c| c.status))
        .any(CheckStatus::fails)
        || run_wide_alarm.as_ref().is_some_and(|a| a.fails)
    {
        Outcome::Regression
    } else {
        Outcome::Pass
    };
    Ok(CheckReport {
        run: run.id.clone(),
        started_at: run.started_at,
        policy,
        outcome,
        branch: run.branch.clone(),
        main_branch: analysis.main_branch.clone(),
        cannot_vouch,
        environment_suspect: run.environment_suspect.clone(),
        run_wide_alarm,
        endpoints,
        capacity,
        problems,
        ignored,
    })
}

/// One endpoint's point in the checked run and how the policy reads it.
struct PointAt<'a> {
    point: &'a RunPoint,
    judgement: Judgement,
    episode: Option<&'a Episode>,
    label: Option<Label>,
    /// Over the line but not raised yet: `persistent` waits for later
    /// runs to confirm.
    awaiting_confirmation: bool,
    /// Its alarm begins in this run and is part of the run's run-wide
    /// alarm ([`alarms::part_of_run_wide`]).
    run_wide: bool,
}

impl<'a> PointAt<'a> {
    /// Point `index` of the main history, as the alarm report holds it.
    fn main(
        analysis: &'a Analysis,
        endpoint: &'a EndpointAnalysis,
        index: usize,
        policy: Policy,
    ) -> PointAt<'a> {
        let at = analysis.alarms.at(&endpoint.id, policy, index);
        let episode = at.and_then(|a| a.episode);
        let confirmed_here = episode.is_some_and(|e| {
            e.state == AlarmState::Confirmed && e.decided.is_some_and(|d| d <= index)
        });
        PointAt {
            point: &endpoint.points[index],
            judgement: at.map_or(Judgement::NotJudged, |a| a.judgement),
            episode,
            label: at.and_then(|a| a.label).map(|l| l.label),
            awaiting_confirmation: policy.raised_at() == RaisedAt::Confirmation && !confirmed_here,
            run_wide: episode.is_some_and(|e| {
                e.candidate == index && alarms::part_of_run_wide(e, endpoint, &analysis.runs)
            }),
        }
    }

    /// A branch run's point: the policy reads it after the main history
    /// its baseline was taken from, as if it were the next run. Nothing
    /// can confirm it later (it never joins the history), so it is judged
    /// on its own under `persistent` too.
    fn branch(
        analysis: &'a Analysis,
        endpoint: &'a EndpointAnalysis,
        point: &'a RunPoint,
        base: &BranchBase,
        policy: Policy,
    ) -> PointAt<'a> {
        let before = base
            .main_run_index
            .map_or(0, |i| endpoint.points.partition_point(|p| p.run_index <= i));
        let history = EndpointAnalysis {
            points: endpoint.points[..before]
                .iter()
                .cloned()
                .chain(std::iter::once(point.clone()))
                .collect(),
            branch_points: Vec::new(),
            change_points: Vec::new(),
            ..endpoint.clone()
        };
        let judgement = policy
            .judge(&history, &analysis.settings)
            .pop()
            .unwrap_or(Judgement::NotJudged);
        PointAt {
            point,
            judgement,
            episode: None,
            label: analysis
                .alarms
                .label_of_run(&point.run, &endpoint.id)
                .map(|l| l.label),
            awaiting_confirmation: false,
            // A branch run is never in an environment-suspect run: only
            // the main history is marked.
            run_wide: false,
        }
    }
}

/// The diagnostics of run folders after `latest` (ids sort by time) that
/// were left out whole: "run skipped: it holds no readable rounds".
fn newer_runs_left_out<'a>(
    analysis: &'a Analysis,
    latest: &'a str,
) -> impl Iterator<Item = &'a crate::error::Diagnostic> + 'a {
    analysis.diagnostics.iter().filter(move |d| {
        d.kind == DiagnosticKind::SkippedInput
            && d.message.starts_with("run skipped")
            && d.path
                .strip_prefix(crate::ingest::RUNS_DIR)
                .and_then(|p| p.strip_prefix('/'))
                .is_some_and(|id| !id.contains('/') && id > latest)
    })
}

/// Why an endpoint of the checked run could not be judged.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Blocker {
    /// No earlier run at all (of the endpoint, of its series).
    NoBaseline,
    /// An early verdict over the line that the rounds cannot confirm.
    EarlyInconclusive,
    /// A new load profile, in words, not accepted.
    NewLoadProfile(String),
}

/// The reasons the gate cannot vouch for the run's unjudged endpoints,
/// grouped by kind (and by load change), those the options let through
/// left out.
fn unjudged_reasons(blockers: &[(String, Blocker)], options: &CheckOptions) -> Vec<CannotVouch> {
    let of = |wanted: &Blocker| -> Vec<String> {
        blockers
            .iter()
            .filter(|(_, b)| b == wanted)
            .map(|(e, _)| e.clone())
            .collect()
    };
    let mut out = Vec::new();
    let mut changes: Vec<&String> = blockers
        .iter()
        .filter_map(|(_, b)| match b {
            Blocker::NewLoadProfile(change) => Some(change),
            _ => None,
        })
        .collect();
    changes.sort();
    changes.dedup();
    for change in changes {
        out.push(CannotVouch::NewLoadProfile {
            endpoints: of(&Blocker::NewLoadProfile(change.clone())),
            change: change.clone(),
        });
    }
    if !options.allow_no_baseline {
        let none = of(&Blocker::NoBaseline);
        if !none.is_empty() {
            out.push(CannotVouch::NoBaseline { endpoints: none });
        }
        let inconclusive = of(&Blocker::EarlyInconclusive);
        if !inconclusive.is_empty() {
            out.push(CannotVouch::EarlyInconclusive {
                endpoints: inconclusive,
            });
        }
    }
    out
}

/// A point without a baseline: its early verdict when it has earlier runs
/// to compare with, else why it cannot be judged.
struct Unjudged {
    status: CheckStatus,
    reason: String,
    early: Option<EarlyCheck>,
    blocker: Option<Blocker>,
}

fn unjudged(
    analysis: &Analysis,
    endpoint: &EndpointAnalysis,
    point: &RunPoint,
    label: Option<Label>,
) -> Unjudged {
    let settings = &analysis.settings;
    if !point.early_runs.is_empty() {
        let early = early_check(analysis, endpoint, point);
        let words = describe_early(&early, point, endpoint.threshold_ratio);
        use super::verdict::EarlyVerdict;
        let (status, reason, blocker) = match early.verdict {
            EarlyVerdict::Regression => match label {
                Some(Label::Noise) => (
                    CheckStatus::TriagedNoise,
                    format!("{words}; this alarm is triaged as noise"),
                    None,
                ),
                Some(Label::Accepted) => (
                    CheckStatus::TriagedAccepted,
                    format!("{words}; this change is triaged as accepted"),
                    None,
                ),
                _ => (CheckStatus::Regression, words, None),
            },
            EarlyVerdict::Improvement => (CheckStatus::Improvement, words, None),
            EarlyVerdict::Ok => (CheckStatus::Ok, words, None),
            EarlyVerdict::Inconclusive => (
                CheckStatus::NoBaseline,
                format!("{words}: the rounds overlap too much to tell a change from noise"),
                Some(Blocker::EarlyInconclusive),
            ),
        };
        return Unjudged {
            status,
            reason,
            early: Some(early),
            blocker,
        };
    }
    if let Some(change) = &point.load_change {
        let why = point
            .not_comparable
            .clone()
            .unwrap_or_else(|| format!("load profile changed: {change}"));
        // The label on this run itself, not only one of an alarm holding
        // it: a new load profile is not over the line when its endpoint's
        // noise line is wide, and then no alarm holds the run.
        let label = label.or_else(|| {
            analysis
                .alarms
                .label_of_run(&point.run, &endpoint.id)
                .map(|l| l.label)
        });
        let accepted_by = match label {
            Some(Label::Accepted) => Some("a triage label"),
            _ if settings.alarms.accept_new_load_profile => {
                Some("[alarms] accept_new_load_profile = true")
            }
            _ => None,
        };
        return match accepted_by {
            Some(by) => Unjudged {
                status: CheckStatus::TriagedAccepted,
                reason: format!(
                    "{why}; the new load profile is accepted by {by}: this run starts its baseline"
                ),
                early: None,
                blocker: None,
            },
            None => Unjudged {
                status: CheckStatus::NotComparable,
                reason: format!("{why}: the p99 has nothing comparable to be judged against"),
                early: None,
                blocker: Some(Blocker::NewLoadProfile(change.clone())),
            },
        };
    }
    match &point.not_comparable {
        // Another series (`series_by`) has a baseline, this one has none.
        Some(why) => Unjudged {
            status: CheckStatus::NotComparable,
            reason: why.clone(),
            early: None,
            blocker: Some(Blocker::NoBaseline),
        },
        None => Unjudged {
            status: CheckStatus::NoBaseline,
            reason: format!(
                "no baseline: {}",
                point
                    .no_baseline_reason
                    .as_deref()
                    .unwrap_or("too few earlier runs")
            ),
            early: None,
            blocker: Some(Blocker::NoBaseline),
        },
    }
}

/// The point's rounds against the pooled rounds of its early runs.
fn early_check(analysis: &Analysis, endpoint: &EndpointAnalysis, point: &RunPoint) -> EarlyCheck {
    let earlier: Vec<&RunPoint> = point
        .early_runs
        .iter()
        .filter_map(|id| endpoint.points.iter().find(|p| *p.run == **id))
        .collect();
    let load = |p: &RunPoint| &analysis.runs[p.run_index].meta.load;
    let throughput_not_judged =
        if load(point).is_empty() || earlier.iter().any(|p| load(p).is_empty()) {
            Some("the load profile is not recorded ([load] in run.toml)".to_string())
        } else {
            earlier
                .iter()
                .find(|p| !super::comparability::comparable(load(p), load(point)).throughput)
                .map(|p| {
                    format!(
                        "the load profiles differ: {}",
                        super::comparability::describe_changes(load(p), load(point))
                    )
                })
        };
    let rounds: Vec<&[crate::model::Round]> = earlier.iter().map(|p| &p.rounds[..]).collect();
    let c = super::compare::compare_rounds(
        &analysis.settings,
        &endpoint.id,
        &rounds,
        &point.rounds,
        throughput_not_judged,
    );
    let evidence = super::verdict::ComparisonEvidence {
        rounds_a: c.a.as_ref().map_or(0, |a| a.usable_rounds),
        rounds_b: c.b.as_ref().map_or(0, |b| b.usable_rounds),
        expected_rounds: analysis.settings.analysis.expected_rounds,
        ratio: c.ratio,
        interval: c.ratio_interval.map(|[l, h]| (l, h)),
        threshold_ratio: c.threshold_ratio,
        failed_a: c.a.as_ref().is_some_and(|a| a.failed),
        failed_b: c.b.as_ref().is_some_and(|b| b.failed),
        error_rate_a: c.a.as_ref().and_then(|a| a.error_rate),
        error_rate_b: c.b.as_ref().and_then(|b| b.error_rate),
        throughput_a: c.a.as_ref().and_then(|a| a.throughput_rps),
        throughput_b: c
            .b
            .as_ref()
            .and_then(|b| b.throughput_rps)
            .filter(|_| c.throughput_not_judged.is_none()),
        lines: super::verdict::FigureLines::of(&analysis.settings.analysis),
    };
    let (verdict, regressed) = super::verdict::decide_early(&evidence);
    EarlyCheck {
        verdict,
        runs: earlier.iter().map(|p| p.run.clone()).collect(),
        earlier_median_p99_ms: c.a.as_ref().map(|a| a.median_p99_ms),
        ratio: c.ratio,
        ratio_interval: c.ratio_interval,
        interval_confidence: c.interval_confidence,
        regressed,
    }
}

/// "early verdict against the rounds of runs a, b (too few for a
/// baseline): median p99 50.1 ms vs 5.4 ms, ×9.27 (rounds ×8.10–×10.20,
/// 85%), line ×1.15; error rate …".
fn describe_early(early: &EarlyCheck, point: &RunPoint, threshold_ratio: f64) -> String {
    let runs = match early.runs.as_slice() {
        [one] => format!("run {one}"),
        many => format!("runs {}", some_names(many)),
    };
    let mut out = format!(
        "early verdict against the rounds of {runs} (too few earlier runs for a baseline): median p99 {}",
        point
            .figures
            .p99_ms
            .map_or("–".to_string(), |v| format!("{v:.1} ms"))
    );
    if let Some(a) = early.earlier_median_p99_ms {
        let _ = write!(out, " vs {a:.1} ms");
    }
    if let Some(r) = early.ratio {
        let _ = write!(out, ", ×{r:.2}");
        if let (Some([low, high]), Some(c)) = (early.ratio_interval, early.interval_confidence) {
            let _ = write!(out, " (rounds ×{low:.2}–×{high:.2} at {:.0}%)", c * 100.0);
        }
        let _ = write!(out, ", line ×{threshold_ratio:.2}");
    }
    if early.regressed.contains(&Figure::ErrorRate) {
        let _ = write!(
            out,
            "; error rate {} over its line",
            point
                .figures
                .error_rate
                .map_or("–".to_string(), rate_percent)
        );
    }
    if early.regressed.contains(&Figure::Throughput) {
        out.push_str("; throughput under its line");
    }
    out
}

/// One endpoint's status in the checked run, and why it could not be
/// judged when it could not.
fn endpoint_check(
    analysis: &Analysis,
    endpoint: &EndpointAnalysis,
    at: &PointAt,
) -> (EndpointCheck, Option<Blocker>) {
    let settings = &analysis.settings;
    let point = at.point;
    let (judgement, episode, label) = (at.judgement, at.episode, at.label);
    let figures = describe_figures(point);
    let mut early = None;
    let mut blocker = None;
    let (status, reason) = match judgement {
        Judgement::Over if point.verdict == Verdict::Failed => (
            CheckStatus::Failed,
            format!(
                "{} of {} rounds failed: {}; error rate {}",
                point.figures.failed_rounds.len(),
                point.rounds.len(),
                point.figures.describe_failed_rounds(),
                point
                    .figures
                    .error_rate
                    .map_or("not reported".to_string(), rate_percent)
            ),
        ),
        Judgement::Over => {
            let run_wide = |shift: &RunWideShift| {
                format!(
                    "{figures}; one of {} endpoints slower together in this run: part of its \
                     run-wide alarm{}",
                    shift.moved,
                    if settings.alarms.fail_on_environment_suspect {
                        ""
                    } else {
                        " (which passes: [alarms] fail_on_environment_suspect = false)"
                    }
                )
            };
            let shift = analysis
                .runs
                .get(point.run_index)
                .and_then(|r| r.environment_suspect.as_ref());
            match label {
                Some(Label::Noise) => (
                    CheckStatus::TriagedNoise,
                    format!("{figures}; this alarm is triaged as noise"),
                ),
                Some(Label::Accepted) => (
                    CheckStatus::TriagedAccepted,
                    format!("{figures}; this change is triaged as accepted"),
                ),
                _ if at.awaiting_confirmation => (
                    CheckStatus::Pending,
                    format!("{figures}; over the line, not yet confirmed by later runs"),
                ),
                _ => match shift.filter(|_| at.run_wide) {
                    Some(shift) => (CheckStatus::EnvironmentSuspect, run_wide(shift)),
                    None => (CheckStatus::Regression, figures),
                },
            }
        }
        Judgement::Within if point.verdict == Verdict::Improvement => {
            (CheckStatus::Improvement, figures)
        }
        Judgement::Within => (CheckStatus::Ok, figures),
        Judgement::NotJudged => match (point.verdict, &point.not_comparable) {
            (Verdict::Insufficient, _) => {
                let failed = point.figures.failed_rounds.len();
                (
                    CheckStatus::Insufficient,
                    if failed > 0 {
                        format!(
                            "{} of {} expected rounds usable: {}",
                            point.figures.usable_rounds,
                            settings.analysis.expected_rounds,
                            point.figures.describe_failed_rounds()
                        )
                    } else {
                        format!(
                            "{} of {} expected rounds",
                            point.rounds.len(),
                            settings.analysis.expected_rounds
                        )
                    },
                )
            }
            _ => {
                let u = unjudged(analysis, endpoint, point, label);
                early = u.early;
                blocker = u.blocker;
                (u.status, u.reason)
            }
        },
    };
    let check = EndpointCheck {
        endpoint: endpoint.id.clone(),
        name: endpoint.name.clone(),
        status,
        verdict: Some(point.verdict),
        round_numbers: point.rounds.iter().map(|r| r.number).collect(),
        round_p99_ms: point.round_p99_ms.clone(),
        // A failed run's rounds measured no usable latency.
        median_p99_ms: point.figures.p99_ms,
        baseline_p99_ms: point.baseline_p99_ms,
        ratio: point.ratio,
        threshold_ratio: endpoint.threshold_ratio,
        figures: Some(FigureSummary::of(point)),
        alarm_run: episode.map(|e| endpoint.points[e.candidate].run.clone()),
        alarm_state: episode.map(|e| e.state),
        early,
        reason,
        profiles: Vec::new(),
    };
    (check, blocker)
}

/// The figures in one sentence, those over their lines first:
/// "error rate 5% over its line 1.1% (baseline 0.1%); median p99 100.0 ms
/// vs baseline 99.0 ms (×1.01, line ×1.15); throughput 200.0 req/s". The
/// line is the one the run was judged by (the noise line where wider).
fn describe_figures(p: &RunPoint) -> String {
    let line_ratio = p.line_ratio();
    let mut over = Vec::new();
    let mut rest = Vec::new();
    let p99 = format!(
        "median p99 {:.1} ms{}",
        p.median_p99_ms,
        match (p.baseline_p99_ms, p.ratio) {
            (Some(b), Some(r)) =>
                format!(" vs baseline {b:.1} ms (×{r:.2}, line ×{line_ratio:.2})"),
            _ => String::new(),
        }
    );
    if p.regressed.contains(&Figure::P99) {
        over.push(p99);
    } else {
        rest.push(p99);
    }
    if let Some(e) = p.figures.error_rate {
        let text = match (p.baseline_error_rate, p.error_rate_line()) {
            (Some(b), Some(line)) if p.regressed.contains(&Figure::ErrorRate) => format!(
                "error rate {} over its line {} (baseline {})",
                rate_percent(e),
                rate_percent(line),
                rate_percent(b)
            ),
            (Some(b), _) => format!(
                "error rate {} (baseline {})",
                rate_percent(e),
                rate_percent(b)
            ),
            _ => format!("error rate {}", rate_percent(e)),
        };
        if p.regressed.contains(&Figure::ErrorRate) {
            over.push(text);
        } else {
            rest.push(text);
        }
    }
    if let Some(t) = p.figures.throughput_rps {
        let text = match (p.baseline_throughput_rps, p.throughput_line()) {
            (Some(b), Some(line)) if p.regressed.contains(&Figure::Throughput) => format!(
                "throughput {t:.1} req/s under its line {line:.1} req/s (baseline {b:.1} req/s, ×{:.2})",
                t / b
            ),
            (Some(b), _) => format!("throughput {t:.1} req/s (baseline {b:.1} req/s)"),
            _ => format!("throughput {t:.1} req/s"),
        };
        if p.regressed.contains(&Figure::Throughput) {
            over.push(text);
        } else {
            rest.push(text);
        }
    }
    if !p.figures.failed_rounds.is_empty() {
        rest.push(format!(
            "failed rounds: {}",
            p.figures.describe_failed_rounds()
        ));
    }
    over.extend(rest);
    over.join("; ")
}

/// The checked run's step-load results. A capacity regression a human
/// labelled (`triage/` entry for the run and endpoint) does not fail the
/// gate, as for latency.
fn capacity_checks(analysis: &Analysis, run: &str) -> Vec<CapacityCheck> {
    let mut out = Vec::new();
    for endpoint in &analysis.capacity {
        let Some(point) = endpoint.runs.iter().find(|p| p.run == run) else {
            continue;
        };
        let line_ratio = 1.0 - endpoint.regression_drop;
        let knee = point.knee.knee_rps;
        let figures = match (knee, point.baseline_knee_rps, point.ratio) {
            (Some(k), Some(b), Some(r)) => format!(
                "knee {k:.1} req/s vs baseline {b:.1} req/s (×{r:.2}, line ×{line_ratio:.2})"
            ),
            (Some(k), _, _) => format!("knee {k:.1} req/s"),
            (None, Some(b), _) => {
                format!("no step met the objective (baseline knee {b:.1} req/s)")
            }
            (None, None, _) => "no step met the objective".to_string(),
        };
        let label = analysis
            .alarms
            .label_of_run(run, &endpoint.id)
            .map(|l| l.label);
        let status = match point.verdict {
            CapacityVerdict::Regression => match label {
                Some(Label::Noise) => CheckStatus::TriagedNoise,
                Some(Label::Accepted) => CheckStatus::TriagedAccepted,
                _ => CheckStatus::Regression,
            },
            CapacityVerdict::Improvement => CheckStatus::Improvement,
            CapacityVerdict::Ok => CheckStatus::Ok,
            CapacityVerdict::NoBaseline | CapacityVerdict::NoKnee => CheckStatus::NoBaseline,
        };
        let reason = match status {
            CheckStatus::TriagedNoise => format!("{figures}; triaged as noise"),
            CheckStatus::TriagedAccepted => format!("{figures}; triaged as accepted"),
            CheckStatus::NoBaseline if point.baseline_knee_rps.is_none() => {
                format!("{figures}; too few earlier step-load runs to compare with")
            }
            _ => figures,
        };
        out.push(CapacityCheck {
            endpoint: endpoint.id.clone(),
            name: endpoint.name.clone(),
            status,
            knee_rps: knee,
            baseline_knee_rps: point.baseline_knee_rps,
            ratio: point.ratio,
            line_ratio,
            limit_rps: point.knee.limit_rps,
            reason,
        });
    }
    out
}
