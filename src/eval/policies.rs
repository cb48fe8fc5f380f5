//! The policies under evaluation, behind one small trait so the harness
//! does not care how each decides.
//!
//! Each policy judges every run of an endpoint (over the line, within it,
//! or not judged) and the alarm rules turn judgements into alarms: a
//! candidate at the first run over the line; confirmed when ≥ 2 of the next
//! 3 judged runs are over too; reverted when that can no longer happen; a
//! confirmed alarm closes after 2 runs back within the band. `persistent`
//! raises its alarm at confirmation, every other policy at the candidate.

use crate::analyse::EndpointAnalysis;
use crate::analyse::changepoint::{self, ChangePointParams};
use crate::analyse::verdict::{self, Evidence, Verdict};
use crate::config::Settings;
use crate::stats::median;

/// One run as one policy sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    Over,
    Within,
    NotJudged,
}

/// A policy under evaluation.
pub trait EvalPolicy: Sync {
    /// The name in tables (`naive`, `median`, …).
    fn name(&self) -> &str;
    /// One mark per point of the endpoint, in order.
    fn judge(&self, endpoint: &EndpointAnalysis, settings: &Settings) -> Vec<Mark>;
    /// Whether the alarm is raised only once confirmed.
    fn raised_at_confirmation(&self) -> bool {
        false
    }
}

/// One alarm: where it was raised and the last run of its episode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AlarmSpan {
    pub raised: usize,
    /// Where the episode closed (reverted, or back within the band), or
    /// the last run when still open.
    pub end: usize,
}

/// Positions where alarms are raised, by the alarm rules above.
pub fn alarm_positions(marks: &[Mark], at_confirmation: bool) -> Vec<usize> {
    alarm_spans(marks, at_confirmation)
        .iter()
        .map(|a| a.raised)
        .collect()
}

/// The alarms raised, with how long each episode lasted.
pub fn alarm_spans(marks: &[Mark], at_confirmation: bool) -> Vec<AlarmSpan> {
    const CONFIRM_WINDOW: usize = 3;
    const CONFIRM_NEEDED: usize = 2;
    #[derive(PartialEq)]
    enum State {
        Quiet,
        Candidate { overs: usize, withins: usize },
        Confirmed { streak: usize },
    }
    let mut out: Vec<AlarmSpan> = Vec::new();
    // Whether the current episode's alarm has been raised (pushed to `out`).
    let mut raised = false;
    let mut state = State::Quiet;
    let close = |out: &mut Vec<AlarmSpan>, raised: bool, i: usize| {
        if raised && let Some(last) = out.last_mut() {
            last.end = i;
        }
    };
    for (i, &m) in marks.iter().enumerate() {
        if m == Mark::NotJudged {
            continue;
        }
        let over = m == Mark::Over;
        state = match state {
            State::Quiet if over => {
                raised = !at_confirmation;
                if raised {
                    out.push(AlarmSpan {
                        raised: i,
                        end: usize::MAX,
                    });
                }
                State::Candidate {
                    overs: 0,
                    withins: 0,
                }
            }
            State::Quiet => State::Quiet,
            State::Candidate {
                mut overs,
                mut withins,
            } => {
                if over {
                    overs += 1;
                } else {
                    withins += 1;
                }
                if overs >= CONFIRM_NEEDED {
                    if !raised {
                        raised = true;
                        out.push(AlarmSpan {
                            raised: i,
                            end: usize::MAX,
                        });
                    }
                    State::Confirmed { streak: 0 }
                } else if withins > CONFIRM_WINDOW - CONFIRM_NEEDED {
                    close(&mut out, raised, i);
                    State::Quiet
                } else {
                    State::Candidate { overs, withins }
                }
            }
            State::Confirmed { streak } => {
                let streak = if over { 0 } else { streak + 1 };
                if streak >= CONFIRM_NEEDED {
                    close(&mut out, raised, i);
                    State::Quiet
                } else {
                    State::Confirmed { streak }
                }
            }
        };
    }
    let last = marks.len().saturating_sub(1);
    for a in &mut out {
        if a.end == usize::MAX {
            a.end = last;
        }
    }
    out
}

fn from_verdict(v: Verdict) -> Mark {
    match v {
        Verdict::Regression => Mark::Over,
        Verdict::Ok | Verdict::Improvement => Mark::Within,
        Verdict::NoBaseline | Verdict::Insufficient => Mark::NotJudged,
    }
}

/// `naive`: the first round's p99 > baseline × ratio.
pub struct Naive;
/// `median`: the median of the rounds' p99 > baseline × ratio.
pub struct Median;
/// `persistent`: `median`, alarmed at confirmation.
pub struct Persistent;
/// `robust`: robust z of the run median against the baseline window > k and
/// at least `min_effect` above it.
pub struct Robust {
    pub k: f64,
    pub min_effect: f64,
}
/// `changepoint`: the latest Otava change point on the run medians so far
/// raised the level by more than the minimum magnitude.
pub struct ChangePoint {
    pub params: ChangePointParams,
    /// Runs at the new level (the latest included) before a change point counts.
    pub min_runs_at_level: usize,
}

impl EvalPolicy for Naive {
    fn name(&self) -> &str {
        "naive"
    }
    fn judge(&self, e: &EndpointAnalysis, settings: &Settings) -> Vec<Mark> {
        e.points
            .iter()
            .map(|p| {
                let first = p.round_p99_ms.first().copied().unwrap_or(p.median_p99_ms);
                from_verdict(verdict::decide(&Evidence {
                    rounds: p.rounds.len(),
                    expected_rounds: settings.analysis.expected_rounds,
                    median_p99_ms: first,
                    baseline_p99_ms: p.baseline_p99_ms,
                    threshold_ratio: e.threshold_ratio,
                }))
            })
            .collect()
    }
}

impl EvalPolicy for Median {
    fn name(&self) -> &str {
        "median"
    }
    fn judge(&self, e: &EndpointAnalysis, _: &Settings) -> Vec<Mark> {
        e.points.iter().map(|p| from_verdict(p.verdict)).collect()
    }
}

impl EvalPolicy for Persistent {
    fn name(&self) -> &str {
        "persistent"
    }
    fn judge(&self, e: &EndpointAnalysis, s: &Settings) -> Vec<Mark> {
        Median.judge(e, s)
    }
    fn raised_at_confirmation(&self) -> bool {
        true
    }
}

impl EvalPolicy for Robust {
    fn name(&self) -> &str {
        "robust"
    }
    fn judge(&self, e: &EndpointAnalysis, _: &Settings) -> Vec<Mark> {
        let by_run: std::collections::HashMap<&str, f64> = e
            .points
            .iter()
            .map(|p| (p.run.as_str(), p.median_p99_ms))
            .collect();
        e.points
            .iter()
            .map(|p| {
                if matches!(p.verdict, Verdict::NoBaseline | Verdict::Insufficient) {
                    return Mark::NotJudged;
                }
                let window: Vec<f64> = p
                    .baseline_runs
                    .iter()
                    .filter_map(|id| by_run.get(id.as_str()).copied())
                    .collect();
                let Some(b) = median(&window) else {
                    return Mark::NotJudged;
                };
                let deviations: Vec<f64> = window.iter().map(|v| (v - b).abs()).collect();
                let mad = median(&deviations).unwrap_or(0.0);
                // Floored so a window of identical runs cannot give huge z.
                let scale = (1.4826 * mad).max(0.02 * b);
                let z = (p.median_p99_ms - b) / scale;
                if z > self.k && p.median_p99_ms / b - 1.0 > self.min_effect {
                    Mark::Over
                } else {
                    Mark::Within
                }
            })
            .collect()
    }
}

impl EvalPolicy for ChangePoint {
    fn name(&self) -> &str {
        if self.min_runs_at_level >= 2 {
            "changepoint"
        } else {
            "changepoint-1run"
        }
    }
    fn judge(&self, e: &EndpointAnalysis, settings: &Settings) -> Vec<Mark> {
        let medians: Vec<f64> = e.points.iter().map(|p| p.median_p99_ms).collect();
        changepoint::online_regressions(
            &medians,
            &self.params,
            settings.analysis.min_baseline_runs,
            self.min_runs_at_level,
        )
        .into_iter()
        .map(|o| match o {
            Some(true) => Mark::Over,
            Some(false) => Mark::Within,
            None => Mark::NotJudged,
        })
        .collect()
    }
}

/// The policies `perfdash eval` compares, in table order.
pub fn all() -> Vec<Box<dyn EvalPolicy>> {
    vec![
        Box::new(Naive),
        Box::new(Median),
        Box::new(Persistent),
        Box::new(Robust {
            k: 3.5,
            min_effect: 0.05,
        }),
        Box::new(ChangePoint {
            params: ChangePointParams::default(),
            min_runs_at_level: 1,
        }),
        Box::new(ChangePoint {
            params: ChangePointParams::default(),
            min_runs_at_level: 2,
        }),
    ]
}

#[cfg(test)]
mod tests {
    use super::Mark::{NotJudged as N, Over as O, Within as W};
    use super::*;

    #[test]
    fn candidate_alarms_and_confirmation() {
        // A lasting regression: one alarm at the candidate, or at confirmation.
        let marks = [W, W, O, O, O, O, O];
        assert_eq!(alarm_positions(&marks, false), vec![2]);
        assert_eq!(alarm_positions(&marks, true), vec![4]);
        // A one-run spike: a candidate that reverts; never confirmed.
        let marks = [W, O, W, W, W, W];
        assert_eq!(alarm_positions(&marks, false), vec![1]);
        assert!(alarm_positions(&marks, true).is_empty());
        // Not-judged runs neither confirm nor revert.
        let marks = [O, N, N, O, N, O];
        assert_eq!(alarm_positions(&marks, true), vec![5]);
        // A confirmed alarm closes after 2 runs within; a new one can start.
        let marks = [O, O, O, W, W, O, O, O];
        assert_eq!(alarm_positions(&marks, false), vec![0, 5]);
        assert_eq!(alarm_positions(&marks, true), vec![2, 7]);
        // Two of the next three: over, within, over confirms; within, within reverts.
        assert_eq!(alarm_positions(&[O, O, W, O], true), vec![3]);
        assert!(alarm_positions(&[O, W, W, O], true).is_empty());
        // Spans: a reverted candidate ends where it reverted; an open one at the end.
        assert_eq!(
            alarm_spans(&[W, O, W, W, O, O], false),
            vec![
                AlarmSpan { raised: 1, end: 3 },
                AlarmSpan { raised: 4, end: 5 },
            ]
        );
    }
}
