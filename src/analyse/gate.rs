//! The CI gate: did one run regress under one policy?
//!
//! `perfdash check` asks this of the latest run (or a named one). The
//! answer uses the same judgements and alarm states as the site, so the
//! gate and the weekly page never disagree.

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::alarms::{self, AlarmState, Episode};
use super::policy::{Judgement, Policy, RaisedAt};
use super::verdict::CapacityVerdict;
use super::{Analysis, Verdict};
use crate::error::{DiagnosticKind, Error};
use crate::model::Label;

/// Which run to check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunSelector {
    Latest,
    Id(String),
}

/// The overall outcome, mapped to the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Nothing regressed: exit 0.
    Pass,
    /// At least one endpoint regressed: exit 1.
    Regression,
    /// The checked run has unreadable inputs, so the gate cannot vouch for
    /// it: exit 2 (regressions found are still listed).
    BadInput,
}

impl Outcome {
    pub fn exit_code(self) -> u8 {
        match self {
            Outcome::Pass => 0,
            Outcome::Regression => 1,
            Outcome::BadInput => 2,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Regression => "regression",
            Outcome::BadInput => "bad-input",
        }
    }
}

/// One endpoint's result in the checked run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CheckStatus {
    /// Over the policy's line (for `persistent`: confirmed): fails the gate.
    Regression,
    /// `persistent` only: over the line, waiting for the next runs.
    Pending,
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
    /// Fewer rounds than expected.
    Insufficient,
    /// The endpoint was in earlier runs but not in this one.
    Missing,
}

impl CheckStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            CheckStatus::Regression => "regression",
            CheckStatus::Pending => "pending",
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
    pub round_p99_ms: Vec<f64>,
    pub median_p99_ms: Option<f64>,
    pub baseline_p99_ms: Option<f64>,
    pub ratio: Option<f64>,
    pub threshold_ratio: f64,
    /// The alarm this run belongs to under the policy, if any.
    pub alarm_run: Option<String>,
    pub alarm_state: Option<AlarmState>,
    /// One sentence saying why.
    pub reason: String,
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
    pub exit_code: u8,
    /// Sorted by endpoint id.
    pub endpoints: Vec<EndpointCheck>,
    /// Endpoints with a step-load file in this run, sorted by id; a
    /// capacity regression fails the gate like a latency one.
    pub capacity: Vec<CapacityCheck>,
    /// Inputs of this run that could not be read (they make the outcome
    /// `bad-input`).
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

/// Checks one run under one policy.
pub fn check(
    analysis: &Analysis,
    which: &RunSelector,
    policy: Policy,
) -> Result<CheckReport, Error> {
    let run = match which {
        RunSelector::Latest => analysis.latest_run().ok_or_else(|| {
            Error::Usage("the archive has no readable runs with a trusted time to check".into())
        })?,
        RunSelector::Id(id) => analysis.runs.iter().find(|r| &r.id == id).ok_or_else(|| {
            Error::Usage(format!(
                "no run '{id}' in the archive (the latest is '{}')",
                analysis
                    .latest_run()
                    .map(|r| r.id.as_str())
                    .unwrap_or("none")
            ))
        })?,
    };
    let settings = &analysis.settings;
    let mut endpoints = Vec::new();
    for endpoint in &analysis.endpoints {
        let base = |status, reason: String| EndpointCheck {
            endpoint: endpoint.id.clone(),
            name: endpoint.name.clone(),
            status,
            round_p99_ms: Vec::new(),
            median_p99_ms: None,
            baseline_p99_ms: None,
            ratio: None,
            threshold_ratio: endpoint.threshold_ratio,
            alarm_run: None,
            alarm_state: None,
            reason,
        };
        let Some(index) = endpoint.points.iter().position(|p| p.run == run.id) else {
            // Only an endpoint seen before this run is missing from it.
            if endpoint
                .points
                .first()
                .is_some_and(|p| p.started_at < run.started_at)
            {
                endpoints.push(base(
                    CheckStatus::Missing,
                    "not measured in this run".into(),
                ));
            }
            continue;
        };
        let point = &endpoint.points[index];
        let judgements = policy.judge(endpoint, settings);
        let episodes = alarms::episodes(&judgements, &settings.alarms);
        let episode: Option<&Episode> = episodes
            .iter()
            .find(|e| (e.candidate..=e.end(endpoint.points.len())).contains(&index));
        let label = episode.and_then(|e| {
            let span = e.candidate..=e.end(endpoint.points.len());
            analysis
                .alarms
                .labels
                .iter()
                .filter(|l| l.endpoint == endpoint.id)
                .find(|l| {
                    endpoint
                        .points
                        .iter()
                        .position(|p| p.run == l.run)
                        .is_some_and(|i| span.contains(&i))
                })
                .map(|l| l.label)
        });
        let figures = format!(
            "median p99 {:.1} ms{}",
            point.median_p99_ms,
            match (point.baseline_p99_ms, point.ratio) {
                (Some(b), Some(r)) => format!(
                    " vs baseline {b:.1} ms (×{r:.2}, line ×{:.2})",
                    endpoint.threshold_ratio
                ),
                _ => String::new(),
            }
        );
        let (status, reason) = match judgements[index] {
            Judgement::Over => {
                let confirmed_here = episode.is_some_and(|e| {
                    e.state == AlarmState::Confirmed && e.decided.is_some_and(|d| d <= index)
                });
                match label {
                    Some(Label::Noise) => (
                        CheckStatus::TriagedNoise,
                        format!("{figures}; this alarm is triaged as noise"),
                    ),
                    Some(Label::Accepted) => (
                        CheckStatus::TriagedAccepted,
                        format!("{figures}; this change is triaged as accepted"),
                    ),
                    _ if policy.raised_at() == RaisedAt::Confirmation && !confirmed_here => (
                        CheckStatus::Pending,
                        format!("{figures}; over the line, not yet confirmed by later runs"),
                    ),
                    _ => (CheckStatus::Regression, figures),
                }
            }
            Judgement::Within if point.verdict == Verdict::Improvement => {
                (CheckStatus::Improvement, figures)
            }
            Judgement::Within => (CheckStatus::Ok, figures),
            Judgement::NotJudged => match (point.verdict, &point.not_comparable) {
                (Verdict::Insufficient, _) => (
                    CheckStatus::Insufficient,
                    format!(
                        "{} of {} expected rounds",
                        point.rounds.len(),
                        settings.analysis.expected_rounds
                    ),
                ),
                (_, Some(why)) => (CheckStatus::NotComparable, why.clone()),
                _ => (
                    CheckStatus::NoBaseline,
                    "too few earlier runs to form a baseline".into(),
                ),
            },
        };
        endpoints.push(EndpointCheck {
            round_p99_ms: point.round_p99_ms.clone(),
            median_p99_ms: Some(point.median_p99_ms),
            baseline_p99_ms: point.baseline_p99_ms,
            ratio: point.ratio,
            alarm_run: episode.map(|e| endpoint.points[e.candidate].run.clone()),
            alarm_state: episode.map(|e| e.state),
            ..base(status, reason)
        });
    }
    // Only diagnostics whose kind casts doubt on the figures (a skipped
    // round, a cut-short file, an untrusted time) stop the gate vouching;
    // the rest (notes, a second flame graph) are listed as harmless.
    let (problems, ignored): (Vec<_>, Vec<_>) = run
        .problems
        .iter()
        .partition(|d| d.kind.casts_doubt_on_verdicts());
    let mut problems: Vec<String> = problems.iter().map(|d| d.to_string()).collect();
    let ignored: Vec<String> = ignored.iter().map(|d| d.to_string()).collect();
    // A run with an untrusted time is never "the latest", but it may be
    // today's run on a skewed clock: until it is fixed, the latest run
    // cannot be vouched for either.
    if *which == RunSelector::Latest {
        problems.extend(
            analysis
                .runs
                .iter()
                .filter(|r| r.untrusted_time.is_some())
                .flat_map(|r| &r.problems)
                .filter(|d| d.kind == DiagnosticKind::UntrustedTime)
                .map(|d| d.to_string()),
        );
    }
    let capacity = capacity_checks(analysis, &run.id);
    let outcome = if !problems.is_empty() {
        Outcome::BadInput
    } else if endpoints
        .iter()
        .map(|e| e.status)
        .chain(capacity.iter().map(|c| c.status))
        .any(|s| s == CheckStatus::Regression)
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
        exit_code: outcome.exit_code(),
        endpoints,
        capacity,
        problems,
        ignored,
    })
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
            .labels
            .iter()
            .find(|l| l.run == run && l.endpoint == endpoint.id)
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
