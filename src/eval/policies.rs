//! The policies under evaluation: perfdash's own [`Policy`] variants with
//! their real judgements and the real alarm rules ([`alarms::episodes`]),
//! behind a small trait so variants of a policy can be compared too.

use crate::analyse::EndpointAnalysis;
use crate::analyse::alarms;
use crate::analyse::policy::{Dated, Judgement, Policy, RaisedAt};
use crate::config::Settings;

/// A policy under evaluation.
pub trait EvalPolicy: Sync {
    /// The name in tables (`naive`, `median`, …).
    fn name(&self) -> &str;
    /// One judgement per point of the endpoint, in order, and where the
    /// policy dates the changes it judges over the line.
    fn judge(&self, endpoint: &EndpointAnalysis, settings: &Settings) -> Dated;
    /// When the alarm is raised.
    fn raised_at(&self) -> RaisedAt;
}

impl EvalPolicy for Policy {
    fn name(&self) -> &str {
        Policy::name(*self)
    }
    fn judge(&self, endpoint: &EndpointAnalysis, settings: &Settings) -> Dated {
        Policy::judge_dated(*self, endpoint, settings, None)
    }
    fn raised_at(&self) -> RaisedAt {
        Policy::raised_at(*self)
    }
}

/// `changepoint` without waiting for a second run at the new level, to show
/// what that wait buys (docs/detection.md).
pub struct ChangePointWithoutWait;

impl EvalPolicy for ChangePointWithoutWait {
    fn name(&self) -> &str {
        "changepoint-1run"
    }
    fn judge(&self, endpoint: &EndpointAnalysis, settings: &Settings) -> Dated {
        let mut settings = settings.clone();
        settings.changepoint.min_runs_at_level = 1;
        Policy::ChangePoint.judge_dated(endpoint, &settings, None)
    }
    fn raised_at(&self) -> RaisedAt {
        RaisedAt::Candidate
    }
}

/// One alarm: where it was raised and the last run of its episode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AlarmSpan {
    pub raised: usize,
    /// Where the episode closed (reverted, or back within the band), or the
    /// last run when still open.
    pub end: usize,
}

/// The alarms a policy raises on these judgements, by perfdash's alarm
/// rules (candidate, confirmed / reverted; `alarms` settings) and the
/// points' levels ([`alarms::Levels`]).
pub fn alarm_spans(
    judgements: &[Judgement],
    levels: &alarms::Levels,
    at: RaisedAt,
    settings: &Settings,
) -> Vec<AlarmSpan> {
    alarms::episodes(judgements, levels, &settings.alarms)
        .iter()
        .filter_map(|ep| {
            ep.raised(at).map(|raised| AlarmSpan {
                raised,
                end: ep.end(judgements.len()),
            })
        })
        .collect()
}

/// The policies `perfdash eval` compares, in table order: every
/// [`Policy`], then the `changepoint` variant without the one-run wait.
pub fn all() -> Vec<Box<dyn EvalPolicy>> {
    let mut out: Vec<Box<dyn EvalPolicy>> = Policy::ALL
        .into_iter()
        .map(|p| Box::new(p) as Box<dyn EvalPolicy>)
        .collect();
    out.push(Box::new(ChangePointWithoutWait));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use Judgement::{NotJudged as N, Over as O, Within as W};

    fn raised(j: &[Judgement], at: RaisedAt) -> Vec<usize> {
        alarm_spans(j, &alarms::Levels::default(), at, &Settings::default())
            .iter()
            .map(|a| a.raised)
            .collect()
    }

    #[test]
    fn alarms_follow_the_real_episode_rules() {
        let c = RaisedAt::Candidate;
        let k = RaisedAt::Confirmation;
        // A lasting regression: one alarm at the candidate, or at confirmation.
        assert_eq!(raised(&[W, W, O, O, O, O, O], c), vec![2]);
        assert_eq!(raised(&[W, W, O, O, O, O, O], k), vec![4]);
        // A one-run spike: a candidate that reverts; never confirmed.
        assert_eq!(raised(&[W, O, W, W, W, W], c), vec![1]);
        assert!(raised(&[W, O, W, W, W, W], k).is_empty());
        // Not-judged runs neither confirm nor revert.
        assert_eq!(raised(&[O, N, N, O, N, O], k), vec![5]);
        // A run back under the line ends a candidate: the later rise is a
        // new alarm, dated at its own first run.
        assert_eq!(raised(&[W, O, W, O, O, O], c), vec![1, 3]);
        assert_eq!(raised(&[W, O, W, O, O, O], k), vec![5]);
        // Spans: a reverted candidate ends where it reverted (the first
        // run back within the band); an open one at the end.
        let spans = alarm_spans(
            &[W, O, W, W, O, O],
            &alarms::Levels::default(),
            c,
            &Settings::default(),
        );
        assert_eq!(
            spans,
            vec![
                AlarmSpan { raised: 1, end: 2 },
                AlarmSpan { raised: 4, end: 5 }
            ]
        );
    }
}
