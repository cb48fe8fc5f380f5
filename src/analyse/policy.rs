//! Gating policies, computed side by side over the whole history.
//!
//! A policy looks at one endpoint's judged runs and says, for each, whether
//! it is over the line ([`Judgement::Over`]), within it, or not judged at
//! all (no baseline, too few rounds, a different load profile). The alarm
//! states (`candidate` → `confirmed` / `reverted`) are then the same for
//! every policy (see [`super::alarms`]); a policy only adds whether it
//! raises its alarm at the candidate run or waits for confirmation.
//!
//! Adding a policy is: one variant, its name and summary, and one arm in
//! [`Policy::judge`] returning one [`Judgement`] per point.

use std::collections::HashMap;

use serde::Serialize;

use super::changepoint::known::KnownJudgements;
use super::changepoint::{self, ChangePointParams, OnlineJudgement};
use super::verdict::{self, Figure, Verdict};
use super::{EndpointAnalysis, RunPoint};
use crate::config::Settings;
use crate::stats::{median, robust_z};

pub use crate::config::{DEFAULT_POLICY, Policy, SENSITIVE_POLICY};

/// One run as one policy sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Judgement {
    /// Over the policy's line: alarm-worthy.
    Over,
    /// Within the band.
    Within,
    /// Not judged: no (comparable) baseline or too few rounds. Skipped when
    /// counting the runs that confirm or revert an alarm.
    NotJudged,
}

/// When a policy raises its alarm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RaisedAt {
    /// At the first run over the line (the candidate).
    Candidate,
    /// Only when later runs confirm it.
    Confirmation,
}

impl Policy {
    pub fn raised_at(self) -> RaisedAt {
        match self {
            Policy::Persistent => RaisedAt::Confirmation,
            Policy::Naive | Policy::Median | Policy::Robust | Policy::ChangePoint => {
                RaisedAt::Candidate
            }
        }
    }

    /// Judges every point of one endpoint (one judgement per point, same
    /// order). The baselines are the ones the analysis formed, so every
    /// policy is measured against the same yardstick.
    ///
    /// Policies differ only in how they read latency. A failed run, and an
    /// error-rate or throughput regression, is over the line under every
    /// policy: no reading of p99 makes a broken run pass.
    pub fn judge(self, endpoint: &EndpointAnalysis, settings: &Settings) -> Vec<Judgement> {
        self.judge_with(endpoint, settings, None)
    }

    /// [`Policy::judge`], with the `changepoint` policy's judgements of an
    /// earlier build at hand (`known`: only new runs are judged).
    pub fn judge_with(
        self,
        endpoint: &EndpointAnalysis,
        settings: &Settings,
        known: Option<&KnownJudgements>,
    ) -> Vec<Judgement> {
        self.judge_dated(endpoint, settings, known).judgements
    }

    /// [`Policy::judge_with`], and where the policy itself dates the
    /// changes it judges over the line ([`Dated::onsets`]).
    pub fn judge_dated(
        self,
        endpoint: &EndpointAnalysis,
        settings: &Settings,
        known: Option<&KnownJudgements>,
    ) -> Dated {
        let mut onsets = vec![None; endpoint.points.len()];
        let latency: Vec<Judgement> = match self {
            Policy::Median | Policy::Persistent => endpoint
                .points
                .iter()
                .map(|p| from_verdict(p.verdict))
                .collect(),
            Policy::Naive => endpoint
                .points
                .iter()
                .map(|p| {
                    // The same decision as the default, fed the first usable
                    // round instead of the median: the threshold stays in
                    // verdict.rs.
                    let first_round = p
                        .rounds
                        .iter()
                        .find(|r| !p.figures.failed_rounds.iter().any(|f| f.round == r.number))
                        .map(|r| r.stats.p99_ms)
                        .unwrap_or(p.median_p99_ms);
                    // What teams did before: one round against the
                    // threshold ratio, without the noise line.
                    from_verdict(
                        verdict::decide(&verdict::Evidence {
                            median_p99_ms: first_round,
                            ..p.decided_from.without_noise_line()
                        })
                        .verdict,
                    )
                })
                .collect(),
            Policy::Robust => {
                let medians: HashMap<&str, f64> = endpoint
                    .points
                    .iter()
                    .map(|p| (p.run.as_str(), p.median_p99_ms))
                    .collect();
                endpoint
                    .points
                    .iter()
                    .map(|p| robust_judgement(p, &medians, settings))
                    .collect()
            }
            Policy::ChangePoint => changepoint_judgements(endpoint, settings, known, &mut onsets),
        };
        let judgements = latency
            .into_iter()
            .zip(&endpoint.points)
            .map(|(j, p)| {
                if beyond_latency(p) {
                    Judgement::Over
                } else {
                    j
                }
            })
            .collect();
        Dated { judgements, onsets }
    }
}

/// A policy's judgements of one endpoint ([`Policy::judge_dated`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Dated {
    /// One per point, in order.
    pub judgements: Vec<Judgement>,
    /// One per point: for a run over the line, the first run (a point
    /// index) of the change the policy saw, when the policy dates it
    /// itself (`changepoint`: the change point's first run); `None` leaves
    /// the date to the alarm rules (`alarms::episodes`).
    pub onsets: Vec<Option<usize>>,
}

/// Over the line whatever the policy: the run failed, or a figure other
/// than p99 regressed.
fn beyond_latency(p: &RunPoint) -> bool {
    p.verdict == Verdict::Failed || p.regressed.iter().any(|f| *f != Figure::P99)
}

/// The `changepoint` policy on each comparable series of the endpoint
/// ([`changepoint::comparable_series`]: runs with too few rounds left out,
/// a new load profile starts afresh). Runs before a baseline exists are not
/// judged, like under every other policy.
fn changepoint_judgements(
    endpoint: &EndpointAnalysis,
    settings: &Settings,
    known: Option<&KnownJudgements>,
    onsets: &mut [Option<usize>],
) -> Vec<Judgement> {
    let params = ChangePointParams::from(&settings.changepoint);
    let mut out = vec![Judgement::NotJudged; endpoint.points.len()];
    let series = changepoint::comparable_series(&endpoint.points)
        .into_iter()
        .flat_map(|usable| split_at_accepted_changes(usable, &endpoint.points));
    for usable in series {
        let medians: Vec<f64> = usable
            .iter()
            .map(|&i| endpoint.points[i].median_p99_ms)
            .collect();
        let measured = |k: usize| !endpoint.points[usable[k]].environment_suspect;
        let min_runs = settings.changepoint.min_runs_at_level;
        let online = match known {
            Some(known) => known.online_regressions(&medians, &params, min_runs),
            None => changepoint::online_regressions(&medians, &params, 0, min_runs),
        };
        for (k, &i) in usable.iter().enumerate() {
            if endpoint.points[i].verdict == Verdict::NoBaseline {
                continue;
            }
            out[i] = match online[k] {
                OnlineJudgement::Over { change, level_from } => {
                    // Dated as the charts date change points, on the runs
                    // known so far.
                    let onset = changepoint::dated_onset(
                        &medians,
                        level_from,
                        change,
                        k + 1,
                        true,
                        params.min_magnitude,
                        &measured,
                    );
                    onsets[i] = usable.get(onset).copied();
                    Judgement::Over
                }
                OnlineJudgement::Within => Judgement::Within,
                OnlineJudgement::NotJudged => Judgement::NotJudged,
            };
        }
    }
    out
}

/// Splits a series where an accepted change begins: a level a human
/// accepted is the new normal, so the change point that led to it must not
/// keep raising alarms, and later shifts are measured from the new level.
fn split_at_accepted_changes(usable: Vec<usize>, points: &[RunPoint]) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    let mut current: Vec<usize> = Vec::new();
    let mut in_accepted = false;
    for i in usable {
        let starts = points[i].accepted_change && !in_accepted;
        in_accepted = points[i].accepted_change;
        if starts && !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
        current.push(i);
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// The robust z-score of a point's median against its baseline window,
/// when it has one. Shown beside robust alarms ("4.2 MADs, +12%").
pub fn robust_z_of(point: &RunPoint, medians: &HashMap<&str, f64>) -> Option<f64> {
    let window: Vec<f64> = point
        .baseline_runs
        .iter()
        .filter_map(|id| medians.get(&**id).copied())
        .collect();
    robust_z(point.median_p99_ms, &window)
}

fn robust_judgement(
    point: &RunPoint,
    medians: &HashMap<&str, f64>,
    settings: &Settings,
) -> Judgement {
    if matches!(
        point.verdict,
        Verdict::Insufficient | Verdict::NoBaseline | Verdict::Failed
    ) {
        return Judgement::NotJudged;
    }
    let window: Vec<f64> = point
        .baseline_runs
        .iter()
        .filter_map(|id| medians.get(&**id).copied())
        .collect();
    let (Some(z), Some(baseline)) = (robust_z(point.median_p99_ms, &window), median(&window))
    else {
        return Judgement::NotJudged;
    };
    let effect = point.median_p99_ms / baseline - 1.0;
    if z > settings.alarms.robust_k && effect > settings.alarms.min_effect {
        Judgement::Over
    } else {
        Judgement::Within
    }
}

fn from_verdict(v: Verdict) -> Judgement {
    match v {
        Verdict::Regression | Verdict::Failed => Judgement::Over,
        Verdict::Ok | Verdict::Improvement => Judgement::Within,
        Verdict::NoBaseline | Verdict::Insufficient => Judgement::NotJudged,
    }
}
