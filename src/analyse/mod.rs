//! Analysis: pure functions from an [`Archive`] to an [`Analysis`].
//!
//! Per endpoint, runs are walked in time order ([`baseline::SeriesWalk`]).
//! Each run's figures are the medians of its rounds' ([`figures`]: p99,
//! error rate, throughput, spread; failed rounds left out); its baselines
//! are the medians of the figures of the last `baseline_window` accepted
//! runs before it; its verdict comes from [`verdict::decide`], the only
//! place verdicts are made.

pub mod alarms;
pub mod attribution;
pub mod baseline;
pub mod capacity;
pub mod changepoint;
pub mod comparability;
pub mod compare;
pub mod environment;
pub mod evidence;
pub mod figures;
pub mod gate;
pub mod policy;
pub mod problems;
pub mod verdict;
pub mod weekly;

use chrono::{DateTime, Utc};
use rayon::prelude::*;
use serde::Serialize;

use crate::config::Settings;
use crate::error::Diagnostic;
use crate::model::{Archive, Round, RunMeta};
use crate::stats::median;
pub use alarms::AlarmReport;
pub use comparability::EnvironmentChange;
pub use environment::RunWideShift;
pub use figures::RunFigures;
pub use policy::Policy;
pub use verdict::{Figure, Verdict};

/// Everything the renderers need; no file system access after this.
#[derive(Debug, Clone)]
pub struct Analysis {
    pub settings: Settings,
    /// Runs in time order.
    pub runs: Vec<RunInfo>,
    /// Endpoints sorted by id.
    pub endpoints: Vec<EndpointAnalysis>,
    /// Files skipped while reading, for the site and the exit code.
    pub diagnostics: Vec<Diagnostic>,
    /// Every policy's alarms, their states and labels, and the per-endpoint
    /// accounting (false-positive rates, detection delays).
    pub alarms: AlarmReport,
    /// Runs whose `[environment]` differs from the run before: chart markers.
    pub environment_changes: Vec<EnvironmentChange>,
    /// The run comparisons `[compare]` asks for, for the comparison pages.
    pub comparisons: Vec<compare::SiteComparison>,
    /// One row per release, for the release history page.
    pub releases: compare::ReleaseHistory,
    /// Step-load runs per endpoint: knees, limits, capacity verdicts.
    pub capacity: Vec<capacity::EndpointCapacity>,
    /// Deploys, config changes, incidents (`annotations/*.toml`), by time.
    pub annotations: Vec<crate::model::Annotation>,
}

impl Analysis {
    /// How many endpoints regressed in the latest run: the figure the
    /// overview and `perfdash build` both report.
    pub fn latest_run_regressions(&self) -> usize {
        let Some(latest) = self.latest_run() else {
            return 0;
        };
        self.endpoints
            .iter()
            .filter(|e| {
                e.points
                    .iter()
                    .any(|p| p.run == latest.id && p.verdict == Verdict::Regression)
            })
            .count()
    }
}

impl Analysis {
    /// How many endpoints failed in the latest run.
    pub fn latest_run_failures(&self) -> usize {
        let Some(latest) = self.latest_run() else {
            return 0;
        };
        self.endpoints
            .iter()
            .filter(|e| {
                e.points
                    .iter()
                    .any(|p| p.run == latest.id && p.verdict == Verdict::Failed)
            })
            .count()
    }

    /// The latest run whose time can be trusted (see
    /// [`Archive::latest_run`]): what every page and `check --latest`
    /// call the latest run.
    pub fn latest_run(&self) -> Option<&RunInfo> {
        self.runs.iter().rev().find(|r| r.untrusted_time.is_none())
    }
}

/// A run as the site lists it.
#[derive(Debug, Clone)]
pub struct RunInfo {
    pub id: String,
    pub started_at: DateTime<Utc>,
    pub meta: RunMeta,
    /// Problems met while reading this run; non-empty means incomplete.
    pub problems: Vec<Diagnostic>,
    /// Why its `started_at` cannot be trusted, when it cannot: never the
    /// latest run.
    pub untrusted_time: Option<String>,
    /// Most of the run's endpoints moved the same way together: likely
    /// the environment, not the code ([`environment`]).
    pub environment_suspect: Option<RunWideShift>,
}

/// One endpoint's history.
#[derive(Debug, Clone)]
pub struct EndpointAnalysis {
    /// The folder name in each run.
    pub id: String,
    /// Display name (`perfdash.toml` `[endpoints.<id>] name`, else the id).
    pub name: String,
    pub threshold_ratio: f64,
    /// One point per run that has this endpoint, in time order.
    pub points: Vec<RunPoint>,
    /// Level shifts in the run medians (Otava change points,
    /// `[changepoint]` settings), oldest first.
    pub change_points: Vec<changepoint::LevelShift>,
}

impl EndpointAnalysis {
    /// The point of the latest run whose time can be trusted.
    pub fn latest(&self) -> Option<&RunPoint> {
        self.points.iter().rev().find(|p| !p.untrusted_time)
    }
}

/// One endpoint in one run, judged.
#[derive(Debug, Clone, Serialize)]
pub struct RunPoint {
    /// Index into [`Analysis::runs`].
    #[serde(skip)]
    pub run_index: usize,
    pub run: String,
    pub started_at: DateTime<Utc>,
    /// The run's commit (run.toml), for suspect ranges.
    #[serde(skip)]
    pub commit: Option<String>,
    /// The run's rounds, shared with the archive (not a copy).
    pub rounds: crate::model::Rounds,
    pub round_p99_ms: Vec<f64>,
    /// The median of the usable rounds' p99; for a failed run without a
    /// usable round, of all its rounds (shown, never judged).
    pub median_p99_ms: f64,
    pub baseline_p99_ms: Option<f64>,
    /// median ÷ baseline (`None` for a failed run).
    pub ratio: Option<f64>,
    pub verdict: Verdict,
    /// The runs whose medians formed the baseline, oldest first.
    pub baseline_runs: Vec<String>,
    /// Why this run was not compared with its predecessors (its load
    /// profile differs from theirs); its verdict is then `no-baseline`.
    pub not_comparable: Option<String>,
    /// Why there is no baseline, whenever there is none.
    pub no_baseline_reason: Option<String>,
    /// The four figures (p99/p90, error rate, throughput, spread) and the
    /// failed rounds ([`figures`]).
    pub figures: RunFigures,
    /// The error rate and throughput the run was compared with.
    pub baseline_error_rate: Option<f64>,
    pub baseline_throughput_rps: Option<f64>,
    /// Why throughput was not judged (no recorded load profile, …).
    pub throughput_not_judged: Option<String>,
    /// The figures that crossed their lines (a `regression`'s reasons).
    pub regressed: Vec<Figure>,
    /// What the verdict was decided from (the policies re-decide from it).
    #[serde(skip)]
    pub decided_from: verdict::Evidence,
    /// Flame-graph profiles of this endpoint in this run, classified and
    /// compared with the baseline's ([`attribution`]).
    pub profiles: Vec<attribution::ProfileAnalysis>,
    /// A regression inside a change a human triaged `accepted` (see
    /// [`verdict::AcceptedChanges`]): still a regression by the
    /// numbers, shown as accepted rather than alarming.
    pub accepted_change: bool,
    /// The rounds' band, likely GC/noise rounds, and the shift of this
    /// run's median against its baseline window ([`evidence`]).
    pub evidence: evidence::Evidence,
    /// The run's `started_at` cannot be trusted: never the latest point.
    #[serde(skip)]
    pub untrusted_time: bool,
}

impl RunPoint {
    /// The regression line: baseline × threshold ratio.
    pub fn threshold_p99_ms(&self, ratio: f64) -> Option<f64> {
        self.baseline_p99_ms.map(|b| b * ratio)
    }

    /// The error rate above which this run regressed, when judged.
    pub fn error_rate_line(&self) -> Option<f64> {
        self.baseline_error_rate
            .map(|b| self.decided_from.lines.error_rate_line(b))
    }

    /// The throughput below which this run regressed, when judged.
    pub fn throughput_line(&self) -> Option<f64> {
        self.baseline_throughput_rps
            .map(|b| self.decided_from.lines.throughput_line(b))
    }
}

/// How much of the analysis to compute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Everything the site shows: every policy side by side (the weekly
    /// page compares them all), profiles, change points, comparisons.
    Site,
    /// What `perfdash check` reads to judge one run under one policy:
    /// every endpoint's verdicts and baselines, the run-wide shifts, the
    /// step-load results and this policy's alarm track ([`gate`]). The
    /// other policies, flame-graph attribution, change points for the
    /// charts, comparisons and releases are left empty.
    Gate(Policy),
}

/// Analyses an archive. Deterministic: the same archive gives the same
/// analysis.
pub fn analyse(archive: &Archive, diagnostics: Vec<Diagnostic>) -> Analysis {
    analyse_scoped(archive, diagnostics, Scope::Site)
}

/// [`analyse`], computing only what `scope` needs. A [`Scope::Gate`]
/// analysis gives `perfdash check` the same report as a full one (the
/// test `gate_scope_checks_like_the_full_analysis` compares them on every
/// run and policy of the demo archive).
pub fn analyse_scoped(
    archive: &Archive,
    mut diagnostics: Vec<Diagnostic>,
    scope: Scope,
) -> Analysis {
    let settings = &archive.settings;
    let site = scope == Scope::Site;
    // Loading the settings (ingest::settings) compiled these rules, so this only fails for
    // settings built in code.
    let classifier = match crate::profile::Classifier::new(&settings.profiles) {
        Ok(c) => Some(c),
        Err(e) => {
            diagnostics.push(Diagnostic {
                kind: crate::error::DiagnosticKind::Ignored,
                path: crate::config::SETTINGS_FILE.to_string(),
                line: None,
                message: format!("profiles: {e}; profiles are not classified"),
            });
            None
        }
    };
    let runs: Vec<RunInfo> = archive
        .runs
        .iter()
        .map(|r| RunInfo {
            id: r.id.clone(),
            started_at: r.started_at,
            meta: r.meta.clone(),
            problems: r.problems.clone(),
            untrusted_time: r.untrusted_time.clone(),
            environment_suspect: None,
        })
        .collect();

    // Endpoints are independent of each other until the run-wide steps
    // below: one task each, on every core; `collect` keeps the id order,
    // so the analysis is the same whatever the number of threads.
    let endpoints: Vec<EndpointAnalysis> = archive
        .endpoint_ids()
        .into_par_iter()
        .map(|id| {
            let threshold_ratio = settings.threshold_ratio(&id);
            let series: Vec<(usize, &crate::model::Rounds)> = archive
                .runs
                .iter()
                .enumerate()
                .filter_map(|(i, run)| run.endpoints.get(&id).map(|e| (i, &e.rounds)))
                .collect();
            let mut points = judge_series(&id, &series, archive, settings, threshold_ratio);
            if let Some(classifier) = classifier.as_ref().filter(|_| site) {
                attribution::attach_profiles(
                    &id,
                    &mut points,
                    archive,
                    classifier,
                    settings.profiles.min_shift_pts,
                );
            }
            let change_points = match site {
                true => changepoint::endpoint_change_points(&points, &settings.changepoint),
                false => Vec::new(),
            };
            EndpointAnalysis {
                name: settings.endpoint_name(&id),
                id,
                threshold_ratio,
                points,
                change_points,
            }
        })
        .collect();

    let mut runs = runs;
    for (run, shift) in runs
        .iter_mut()
        .zip(environment::run_wide_shifts(&endpoints, archive.runs.len()))
    {
        run.environment_suspect = shift;
    }
    let capacity = capacity::analyse_capacity(archive);
    if let Scope::Gate(policy) = scope {
        return Analysis {
            settings: settings.clone(),
            alarms: alarms::gate_report(&endpoints, &archive.triage, settings, policy),
            runs,
            endpoints,
            diagnostics,
            environment_changes: Vec::new(),
            comparisons: Vec::new(),
            releases: compare::ReleaseHistory {
                endpoints: Vec::new(),
                releases: Vec::new(),
            },
            capacity,
            annotations: archive.annotations.clone(),
        };
    }
    let alarms = alarms::report(&endpoints, &runs, &archive.triage, settings);
    let environment_changes = comparability::environment_changes(&archive.runs);
    let (comparisons, compare_diagnostics) = compare::site_comparisons(archive);
    let mut diagnostics = diagnostics;
    diagnostics.extend(compare_diagnostics);
    Analysis {
        settings: settings.clone(),
        runs,
        endpoints,
        diagnostics,
        alarms,
        environment_changes,
        comparisons,
        releases: compare::release_history(archive),
        capacity,
        annotations: archive.annotations.clone(),
    }
}

/// Walks one endpoint's runs in time order ([`baseline::SeriesWalk`]),
/// judging each against the accepted runs before it.
fn judge_series(
    endpoint: &str,
    series: &[(usize, &crate::model::Rounds)],
    archive: &Archive,
    settings: &Settings,
    threshold_ratio: f64,
) -> Vec<RunPoint> {
    let a = &settings.analysis;
    let mut walk = baseline::SeriesWalk::new(a, threshold_ratio);
    let mut points = Vec::with_capacity(series.len());
    for &(run_index, rounds) in series {
        let run = &archive.runs[run_index];
        let round_p99_ms: Vec<f64> = rounds.iter().map(|r| r.stats.p99_ms).collect();
        let figures = RunFigures::of(rounds, a.failed_round_error_rate);
        let Some(median_p99_ms) = figures.p99_ms.or_else(|| median(&round_p99_ms)) else {
            continue; // ingest never keeps an endpoint without rounds
        };
        let judged = walk.judge(baseline::RunInput {
            id: &run.id,
            rounds: rounds.len(),
            figures: &figures,
            median_p99_ms,
            load: &run.meta.load,
            labelled_accepted: archive.accepted_by_triage(&run.id, endpoint),
            resolution: verdict::Resolution::of_rounds(rounds),
        });
        let b = judged.baseline;
        let baseline_p99_ms = b.p99_ms.filter(|_| b.missing.is_none());
        let usable: Vec<Round> = rounds
            .iter()
            .filter(|r| !figures.failed_rounds.iter().any(|f| f.round == r.number))
            .cloned()
            .collect();
        let evidence = evidence::evidence(
            if usable.is_empty() {
                &rounds[..]
            } else {
                &usable
            },
            if baseline_p99_ms.is_some() {
                &b.run_p99_ms
            } else {
                &[]
            },
            &[median_p99_ms],
        );
        points.push(RunPoint {
            run_index,
            run: run.id.clone(),
            started_at: run.started_at,
            commit: run.meta.commit.clone(),
            rounds: std::sync::Arc::clone(rounds),
            round_p99_ms,
            median_p99_ms,
            baseline_p99_ms,
            // A failed run has no latency to compare.
            ratio: baseline_p99_ms
                .filter(|_| judged.decision.verdict != Verdict::Failed)
                .map(|b| median_p99_ms / b),
            verdict: judged.decision.verdict,
            baseline_runs: if baseline_p99_ms.is_some() {
                b.runs
            } else {
                Vec::new()
            },
            not_comparable: b.not_comparable,
            no_baseline_reason: b.missing,
            figures,
            baseline_error_rate: b.error_rate.filter(|_| baseline_p99_ms.is_some()),
            baseline_throughput_rps: b.throughput_rps.filter(|_| baseline_p99_ms.is_some()),
            throughput_not_judged: b.throughput_not_judged,
            regressed: judged.decision.regressed,
            decided_from: judged.evidence,
            profiles: Vec::new(),
            accepted_change: judged.accepted_change,
            evidence,
            untrusted_time: run.untrusted_time.is_some(),
        });
    }
    points
}

#[cfg(test)]
mod tests;
