//! Open problems: what the weekly review has to decide on, one per
//! endpoint and change, as of the end of the reviewed week.
//!
//! * **latency** (and the other figures a run regresses on): an alarm of
//!   the archive's policy (`[alarms] policy`) that is still open when the
//!   week ends — its runs are still over the line (candidate or
//!   confirmed, not yet closed). A human label `noise` or `accepted`
//!   settles it; `real` does not (a real regression is a problem until it
//!   is fixed).
//! * **capacity**: an endpoint whose latest step-load run up to the week's
//!   end is a capacity regression not triaged `accepted` (and not part of
//!   an accepted change) or `noise`.
//!
//! Each problem says where it came in (the suspect range: the last run at
//! the old level and the first at the new one), since when and over how
//! many runs, its ratio to the baseline at its first run and now, and
//! its human label. Pure data: `render::weekly` formats it, and
//! `data/analysis.json` lists the same problems (`weekly`).

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::alarms::AlarmState;
use super::capacity::{CapacityPoint, EndpointCapacity};

use super::{Analysis, EndpointAnalysis};
use crate::model::{Label, TriageLabel};

/// What kind of problem. The strings are part of the JSON contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProblemKind {
    /// The run's p99 over its baseline × threshold.
    Latency,
    /// The knee of the step-load runs fell.
    Capacity,
}

impl ProblemKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ProblemKind::Latency => "latency",
            ProblemKind::Capacity => "capacity",
        }
    }
}

/// One open problem.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Problem {
    pub kind: ProblemKind,
    pub endpoint: String,
    /// The first run at the new level (an alarm's candidate run, the first
    /// of the latest streak of capacity regressions).
    pub first_bad_run: String,
    pub since: DateTime<Utc>,
    /// The endpoint's run before it: the last at the old level. `None`
    /// when the change came with the endpoint's first run.
    pub last_good_run: Option<String>,
    /// The endpoint's runs (step-load runs for capacity) from the first
    /// bad one up to the end of the week, both included.
    pub runs: usize,
    /// Ratio to the baseline at the first bad run, and at the latest run
    /// up to the week's end ("now").
    pub first_ratio: Option<f64>,
    pub ratio: Option<f64>,
    /// The latest run the ratio is of.
    pub latest_run: String,
    /// For latency: the alarm's state at the end of the data.
    pub state: Option<AlarmState>,
    /// The human label of the change, if any, and where it was read
    /// (`triage/x.toml:3`; its owner, issue and status are there too).
    pub label: Option<Label>,
    pub label_source: Option<String>,
    /// Whether it came in during the reviewed week.
    pub new_this_week: bool,
}

impl Problem {
    /// The triage entry behind the label, with its owner, issue and status.
    pub fn triage<'a>(&self, analysis: &'a Analysis) -> Option<&'a TriageLabel> {
        let source = self.label_source.as_deref()?;
        analysis.alarms.labels.iter().find(|l| l.source == source)
    }
}

/// Labels that settle a change: it is not a problem any more.
fn settled(label: Option<Label>) -> bool {
    matches!(label, Some(Label::Noise | Label::Accepted))
}

/// Every open problem at the end of `[from, to)`, by kind, then oldest
/// first, then endpoint.
pub fn open_problems(analysis: &Analysis, from: DateTime<Utc>, to: DateTime<Utc>) -> Vec<Problem> {
    let mut out = latency_problems(analysis, from, to);
    out.extend(
        analysis
            .capacity
            .iter()
            .filter_map(|e| capacity_problem(analysis, e, from, to)),
    );
    out.sort_by(|a, b| (a.kind, a.since, &a.endpoint).cmp(&(b.kind, b.since, &b.endpoint)));
    out
}

fn latency_problems(analysis: &Analysis, from: DateTime<Utc>, to: DateTime<Utc>) -> Vec<Problem> {
    let run_time = |id: &str| {
        analysis
            .runs
            .iter()
            .find(|r| r.id == id)
            .map(|r| r.started_at)
    };
    let endpoint = |id: &str| analysis.endpoints.iter().find(|e| e.id == id);
    analysis
        .alarms
        .of(analysis.settings.alarms.policy)
        .filter(|a| a.started_at < to && a.state != AlarmState::Reverted)
        .filter(|a| match a.closed_run.as_deref().and_then(run_time) {
            Some(closed) => closed >= to,
            None => true,
        })
        .filter(|a| !settled(a.label))
        .filter_map(|a| {
            let e: &EndpointAnalysis = endpoint(&a.endpoint)?;
            let upto: Vec<usize> = (0..e.points.len())
                .filter(|&i| e.points[i].started_at < to)
                .collect();
            let latest = &e.points[*upto.last()?];
            Some(Problem {
                kind: ProblemKind::Latency,
                endpoint: a.endpoint.clone(),
                first_bad_run: a.run.clone(),
                since: a.started_at,
                // The alarm's own suspect range (the alarm row and the
                // run pages show it): from the last run that measured the
                // old level to the alarm's first run, which is earlier
                // than the first run over the line when the change came
                // in within the line (`Episode::onset`).
                last_good_run: (a.onset_index < e.points.len())
                    .then(|| super::evidence::SuspectRange::before(&e.points, a.onset_index))
                    .and_then(|range| range.last_old_run),
                runs: upto.iter().filter(|&&i| i >= a.candidate_index).count(),
                first_ratio: a.ratio,
                ratio: latest.ratio,
                latest_run: latest.run.clone(),
                state: Some(a.state),
                label: a.label,
                label_source: a.label_source.clone(),
                new_this_week: from <= a.started_at,
            })
        })
        .collect()
}

/// The capacity problem of one endpoint: its latest step-load run up to
/// `to` is a capacity regression nobody settled.
fn capacity_problem(
    analysis: &Analysis,
    e: &EndpointCapacity,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> Option<Problem> {
    let upto: Vec<_> = e.runs.iter().filter(|p| p.started_at < to).collect();
    let latest = *upto.last()?;
    let open = |p: &CapacityPoint| p.is_open_regression();
    if !open(latest) {
        return None;
    }
    // The streak of regressions the latest run belongs to.
    let start = upto.iter().rposition(|p| !open(p)).map_or(0, |i| i + 1);
    let first = upto[start];
    let label = analysis
        .alarms
        .labels
        .iter()
        .find(|l| l.endpoint == e.id && upto[start..].iter().any(|p| p.run == l.run));
    if settled(label.map(|l| l.label)) {
        return None;
    }
    Some(Problem {
        kind: ProblemKind::Capacity,
        endpoint: e.id.clone(),
        first_bad_run: first.run.clone(),
        since: first.started_at,
        last_good_run: start.checked_sub(1).map(|i| upto[i].run.clone()),
        runs: upto.len() - start,
        first_ratio: first.ratio,
        ratio: latest.ratio,
        latest_run: latest.run.clone(),
        state: None,
        label: label.map(|l| l.label),
        label_source: label.map(|l| l.source.clone()),
        new_this_week: from <= first.started_at,
    })
}
