//! Analysis: pure functions from an [`Archive`] to an [`Analysis`].
//!
//! Per endpoint, runs are walked in time order. Each run's figure is the
//! median of its rounds' p99; its baseline is the median of the figures of
//! the last `baseline_window` accepted runs before it; its verdict comes
//! from [`verdict::decide`], the only place verdicts are made.

pub mod alarms;
pub mod attribution;
pub mod capacity;
pub mod changepoint;
pub mod comparability;
pub mod compare;
pub mod evidence;
pub mod gate;
pub mod policy;
pub mod problems;
pub mod verdict;
pub mod weekly;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::config::Settings;
use crate::error::Diagnostic;
use crate::model::{Archive, Round, RunMeta};
use crate::stats::median;
pub use alarms::AlarmReport;
pub use comparability::EnvironmentChange;
pub use policy::Policy;
pub use verdict::Verdict;

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
    pub rounds: Vec<Round>,
    pub round_p99_ms: Vec<f64>,
    pub median_p99_ms: f64,
    pub baseline_p99_ms: Option<f64>,
    /// median ÷ baseline.
    pub ratio: Option<f64>,
    pub verdict: Verdict,
    /// The runs whose medians formed the baseline, oldest first.
    pub baseline_runs: Vec<String>,
    /// Why this run was not compared with its predecessors (its load
    /// profile differs from theirs); its verdict is then `no-baseline`.
    pub not_comparable: Option<String>,
    /// Flame-graph profiles of this endpoint in this run, classified and
    /// compared with the baseline's ([`attribution`]).
    pub profiles: Vec<attribution::ProfileAnalysis>,
    /// A regression inside a change a human triaged `accepted` (see
    /// [`verdict::accepted_change_continues`]): still a regression by the
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
}

/// Analyses an archive. Deterministic: the same archive gives the same
/// analysis.
pub fn analyse(archive: &Archive, mut diagnostics: Vec<Diagnostic>) -> Analysis {
    let settings = &archive.settings;
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
        })
        .collect();

    let endpoints: Vec<EndpointAnalysis> = archive
        .endpoint_ids()
        .into_iter()
        .map(|id| {
            let threshold_ratio = settings.threshold_ratio(&id);
            let series: Vec<(usize, &[Round])> = archive
                .runs
                .iter()
                .enumerate()
                .filter_map(|(i, run)| run.endpoints.get(&id).map(|e| (i, e.rounds.as_slice())))
                .collect();
            let mut points = judge_series(&id, &series, archive, settings, threshold_ratio);
            if let Some(classifier) = &classifier {
                attribution::attach_profiles(
                    &id,
                    &mut points,
                    archive,
                    classifier,
                    settings.profiles.min_shift_pts,
                );
            }
            let change_points = changepoint::endpoint_change_points(&points, &settings.changepoint);
            EndpointAnalysis {
                name: settings.endpoint_name(&id),
                id,
                threshold_ratio,
                points,
                change_points,
            }
        })
        .collect();

    let alarms = alarms::report(&endpoints, &archive.triage, settings);
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
        capacity: capacity::analyse_capacity(archive),
        annotations: archive.annotations.clone(),
    }
}

/// A run that may serve in later baselines.
struct AcceptedRun<'a> {
    id: &'a str,
    median_p99_ms: f64,
    load: &'a std::collections::BTreeMap<String, String>,
}

/// Walks one endpoint's runs in time order, forming rolling baselines.
///
/// The window is the last `baseline_window` accepted runs, of which only
/// those measured under the same load profile count: a run with a new
/// profile is "not comparable" until enough runs with that profile exist.
/// Regressions triaged `accepted` (and the regressions right after them)
/// join the window, so the baseline moves to the accepted level.
fn judge_series(
    endpoint: &str,
    series: &[(usize, &[Round])],
    archive: &Archive,
    settings: &Settings,
    threshold_ratio: f64,
) -> Vec<RunPoint> {
    let a = &settings.analysis;
    // Accepted runs, oldest first.
    let mut accepted: Vec<AcceptedRun> = Vec::new();
    // Changes a human accepted, in progress (see verdict.rs).
    let mut accepted_changes = verdict::AcceptedChanges::new(a.baseline_window);
    let mut points = Vec::with_capacity(series.len());
    for &(run_index, rounds) in series {
        let run = &archive.runs[run_index];
        let round_p99_ms: Vec<f64> = rounds.iter().map(|r| r.stats.p99_ms).collect();
        let Some(median_p99_ms) = median(&round_p99_ms) else {
            continue; // ingest never keeps an endpoint without rounds
        };
        let recent = &accepted[accepted.len().saturating_sub(a.baseline_window)..];
        let window: Vec<&AcceptedRun> = recent
            .iter()
            .filter(|r| comparability::same_load(r.load, &run.meta.load))
            .collect();
        let baseline_p99_ms = if window.len() >= a.min_baseline_runs {
            median(&window.iter().map(|r| r.median_p99_ms).collect::<Vec<_>>())
        } else {
            None
        };
        let not_comparable = match recent
            .iter()
            .rev()
            .find(|r| !comparability::same_load(r.load, &run.meta.load))
        {
            Some(other) if baseline_p99_ms.is_none() => Some(format!(
                "load profile differs from run {}'s: {}",
                other.id,
                comparability::describe_changes(other.load, &run.meta.load)
            )),
            _ => None,
        };
        let verdict = verdict::decide(&verdict::Evidence {
            rounds: rounds.len(),
            expected_rounds: a.expected_rounds,
            median_p99_ms,
            baseline_p99_ms,
            threshold_ratio,
            resolution: verdict::Resolution::of_rounds(rounds),
        });
        let baseline_runs = if baseline_p99_ms.is_some() {
            window.iter().map(|r| r.id.to_string()).collect()
        } else {
            Vec::new()
        };
        let labelled_accepted = archive.accepted_by_triage(&run.id, endpoint);
        let accepted_by_triage =
            accepted_changes.next_run(verdict, median_p99_ms, labelled_accepted, threshold_ratio);
        let window_medians: Vec<f64> = if baseline_p99_ms.is_some() {
            window.iter().map(|r| r.median_p99_ms).collect()
        } else {
            Vec::new()
        };
        let evidence = evidence::evidence(rounds, &window_medians, &[median_p99_ms]);
        if verdict::baseline_effect(verdict, accepted_by_triage) == verdict::BaselineEffect::Join {
            accepted.push(AcceptedRun {
                id: &run.id,
                median_p99_ms,
                load: &run.meta.load,
            });
        }
        points.push(RunPoint {
            run_index,
            run: run.id.clone(),
            started_at: run.started_at,
            rounds: rounds.to_vec(),
            round_p99_ms,
            median_p99_ms,
            baseline_p99_ms,
            ratio: baseline_p99_ms.map(|b| median_p99_ms / b),
            verdict,
            baseline_runs,
            not_comparable,
            profiles: Vec::new(),
            accepted_change: accepted_by_triage,
            evidence,
            untrusted_time: run.untrusted_time.is_some(),
        });
    }
    points
}

#[cfg(test)]
mod tests;
