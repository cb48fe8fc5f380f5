//! Alarms, their states and labels, and what each policy would have done.
//!
//! For each endpoint and each [`Policy`], the runs it judges over the line
//! become alarm episodes:
//!
//! * `candidate`: the first run over the line (after a quiet spell);
//! * `confirmed`: the next `confirm_needed` (2) judged runs are over too;
//! * `reverted`: the candidate did not persist: the next judged run is back
//!   within the band (the episode ends there), or over the line at a
//!   clearly different level than the run before ([`another_level`]), where
//!   a new episode starts. (A ramp, each run a little higher, stays one
//!   episode.)
//!
//! So a noise run never lends its date to a real step: a noisy-neighbour
//! run, a quiet run and then a ×2.2 step are two alarms, the first
//! reverted, the second dated at the step's first run. Each alarm names its
//! suspect range: the last run at the old level and the first at the new
//! one, with both commits.
//!
//! A confirmed episode stays open while the runs stay over and closes after
//! `confirm_needed` consecutive runs within the band, so a regression that
//! lasts three weeks is one alarm, not nine.
//!
//! Human labels (`triage/*.toml`) attach to the episode holding the
//! labelled run ([`episode_label`], the one place labels are matched; the
//! gate reads the result). Persistence gives an inferred label to every
//! decided alarm (confirmed → likely real, reverted → likely noise), and an
//! undecided alarm of an `environment suspect` run is likely noise too;
//! inferred labels are reported apart from the human labels with their
//! agreement.
//!
//! Regressions for detection delay are the runs humans labelled `real`;
//! labels within one `median` episode are one regression, whose onset is
//! the earliest labelled run. (`accepted` alarms count as true alarms in
//! the false-positive rate, but an intended change is not something a
//! gate has to catch, so it has no detection delay.)

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::changepoint::known::KnownJudgements;
use super::environment::{RunWideShift, ShiftDirection};
use super::evidence::SuspectRange;
use super::figures::FigureSummary;
use super::policy::{Dated, Judgement, Policy, RaisedAt, SENSITIVE_POLICY};
use super::{EndpointAnalysis, RunInfo, RunPoint, Verdict};
use crate::config::{AlarmSettings, Settings};
use crate::model::{Label, TriageLabel};
use crate::stats::{Interval, WILSON_Z95, median, rise_split, wilson_interval};

/// The state of one alarm. The strings are part of the JSON contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AlarmState {
    /// Over the line; not yet decided by the runs after it.
    Candidate,
    /// Persisted: at least 2 of the next 3 judged runs were over too.
    Confirmed,
    /// Back within the band before it could be confirmed.
    Reverted,
}

impl AlarmState {
    pub fn as_str(self) -> &'static str {
        match self {
            AlarmState::Candidate => "candidate",
            AlarmState::Confirmed => "confirmed",
            AlarmState::Reverted => "reverted",
        }
    }

    /// The label persistence suggests: confirmed alarms are likely real,
    /// reverted ones likely noise; an undecided one suggests nothing.
    pub fn inferred_label(self) -> Option<InferredLabel> {
        match self {
            AlarmState::Confirmed => Some(InferredLabel::Real),
            AlarmState::Reverted => Some(InferredLabel::Noise),
            AlarmState::Candidate => None,
        }
    }
}

impl std::fmt::Display for AlarmState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A label inferred from persistence, never from a human.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum InferredLabel {
    Real,
    Noise,
}

impl InferredLabel {
    pub fn as_str(self) -> &'static str {
        match self {
            InferredLabel::Real => "real",
            InferredLabel::Noise => "noise",
        }
    }

    /// Whether a human label says the same thing (`accepted` counts as
    /// real: the alarm was right that the level changed).
    pub fn agrees_with(self, label: Label) -> bool {
        label.is_true_alarm() == (self == InferredLabel::Real)
    }
}

/// One alarm episode as positions in an endpoint's points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Episode {
    /// The first run at the new level: where the alarm starts and its
    /// suspect range ends (`date_episodes`). The candidate itself, or an
    /// earlier run that was already at the new level while still within
    /// the line (a +10% step on a quiet endpoint that crosses the line a
    /// few runs later), or the `changepoint` policy's change point. Later
    /// than the candidate only when every run from the candidate to it
    /// was environment suspect (a noisy-neighbour run that the step
    /// followed: it measured the environment, not the step).
    pub onset: usize,
    /// The first run over the line.
    pub candidate: usize,
    pub state: AlarmState,
    /// Where it was confirmed or reverted.
    pub decided: Option<usize>,
    /// Where it closed (reverted, or back within the band after confirmation).
    pub closed: Option<usize>,
    /// The last run of the episode that was over the line.
    pub last_over: usize,
    /// Every run of the episode that was over the line, the candidate first.
    pub over: Vec<usize>,
}

impl Episode {
    /// The last position that belongs to the episode (open ones run to
    /// the end of the series, `len - 1`).
    pub fn end(&self, len: usize) -> usize {
        self.closed.unwrap_or(len.saturating_sub(1))
    }

    /// Every position of the episode: from its onset or its candidate,
    /// whichever is first, to its end.
    pub fn span(&self, len: usize) -> std::ops::RangeInclusive<usize> {
        self.onset.min(self.candidate)..=self.end(len)
    }

    /// Where the alarm is raised under a policy, if it is raised at all.
    pub fn raised(&self, at: RaisedAt) -> Option<usize> {
        match at {
            RaisedAt::Candidate => Some(self.candidate),
            RaisedAt::Confirmation => (self.state == AlarmState::Confirmed)
                .then_some(self.decided)
                .flatten(),
        }
    }
}

/// The points' levels (median ÷ baseline, their `ratio`), the
/// endpoint's threshold ratio, the run medians and where the policy dated
/// its changes: what [`episodes`] needs besides the judgements to tell a
/// new level from an episode's, and to date each episode.
#[derive(Debug, Clone, Default)]
pub struct Levels {
    pub ratios: Vec<Option<f64>>,
    pub threshold_ratio: f64,
    /// The run medians of the points that measured the endpoint's level
    /// (`None`: a failed run, one short of rounds); in a run where most
    /// endpoints moved together, the median divided by what the run did to
    /// every endpoint (`RunWideShift::run_ratio`), the endpoint's own level.
    pub medians: Vec<Option<f64>>,
    /// Where the policy dates a run's change itself
    /// ([`super::policy::Dated::onsets`]); empty: nowhere.
    pub onsets: Vec<Option<usize>>,
    /// The runs where most endpoints moved together (environment suspect):
    /// an episode made of them alone measured the environment, and it
    /// neither ends the old level nor bounds the dating of the next one.
    pub environment: Vec<bool>,
}

/// How far before its first run over the line an episode may be dated:
/// the runs of a new level that stayed within the line joined the
/// baseline, and after half a baseline window of them the baseline sits
/// at the new level and nothing is over the line any more.
pub const ONSET_LOOKBACK: usize = 10;

impl Levels {
    /// `runs`: the archive's runs (by run index), for the environment's
    /// part of an environment-suspect run.
    pub fn of(endpoint: &EndpointAnalysis, runs: &[RunInfo]) -> Levels {
        Levels {
            ratios: endpoint.points.iter().map(|p| p.ratio).collect(),
            threshold_ratio: endpoint.threshold_ratio,
            medians: endpoint
                .points
                .iter()
                .map(|p| {
                    let own = match runs
                        .get(p.run_index)
                        .and_then(|r| r.environment_suspect.as_ref())
                    {
                        // What the environment did to every endpoint of
                        // the run, divided out: the endpoint's own level.
                        Some(shift) if p.environment_suspect && shift.run_ratio > 0.0 => {
                            p.median_p99_ms / shift.run_ratio
                        }
                        _ if p.environment_suspect => return None,
                        _ => p.median_p99_ms,
                    };
                    (super::verdict::measures_level(p.verdict) && own > 0.0).then_some(own)
                })
                .collect(),
            onsets: Vec::new(),
            environment: endpoint
                .points
                .iter()
                .map(|p| p.environment_suspect)
                .collect(),
        }
    }

    /// These levels, with the policy's own dates of its changes.
    pub fn with_onsets(self, onsets: Vec<Option<usize>>) -> Levels {
        Levels { onsets, ..self }
    }

    fn at(&self, i: usize) -> Option<f64> {
        self.ratios.get(i).copied().flatten()
    }
}

/// Whether two runs over the line sit at clearly different levels: their
/// levels (ratios to the baseline, both above 1) are further apart, on a
/// log scale, than the lower one is from the baseline. A ×1.18 noise run
/// and a ×2.2 step are (the noise run is nearer the old level than the
/// new one); ×1.25 and ×1.32, two noisy runs of one step, are not.
pub fn another_level(a: Option<f64>, b: Option<f64>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) if a > 1.0 && b > 1.0 => {
            let (la, lb) = (a.ln(), b.ln());
            (la - lb).abs() > la.min(lb)
        }
        _ => false,
    }
}

/// Whether the level moved at this run rather than at the candidate's: the
/// candidate's median sat at or under its baseline (over the line by one
/// round under `naive`, or by its error rate), and this run's median is
/// itself over the plain threshold. `naive` candidates on a GC-tail round
/// the run before a ×1.25–2.2 step were dated at that round's run in 2% of
/// the typical fleet's steps.
fn moved_here(candidate: Option<f64>, now: Option<f64>, threshold_ratio: f64) -> bool {
    matches!((candidate, now), (Some(c), Some(n)) if c <= 1.0 && n > threshold_ratio)
}

/// Turns one policy's judgements into alarm episodes (see the module
/// documentation for the rules). Runs not judged are skipped: they neither
/// confirm nor revert.
///
/// A confirmed episode stays open while its runs are over the line; when
/// two runs in a row sit above its recent level × the threshold ratio, at
/// another level ([`another_level`]; a second, larger step on top of it),
/// the episode closes before the first of them and they start a new
/// episode, with its own date and suspect range.
pub fn episodes(
    judgements: &[Judgement],
    levels: &Levels,
    settings: &AlarmSettings,
) -> Vec<Episode> {
    let start = |i: usize| Episode {
        onset: i,
        candidate: i,
        state: AlarmState::Candidate,
        decided: None,
        closed: None,
        last_over: i,
        over: vec![i],
    };
    let mut out = Vec::new();
    // The open episode, with the runs over the line after its candidate,
    // the current streak of runs within the band, and (confirmed only) the
    // first of the runs above its level.
    let mut open: Option<(Episode, usize, usize, Option<usize>)> = None;
    for (i, &j) in judgements.iter().enumerate() {
        if j == Judgement::NotJudged {
            continue;
        }
        let over = j == Judgement::Over;
        let Some((mut ep, mut overs, mut streak, mut higher)) = open.take() else {
            if over {
                open = Some((start(i), 0, 0, None));
            }
            continue;
        };
        match ep.state {
            AlarmState::Candidate if !over => {
                // Back under the line: it did not persist, and it ends here.
                ep.state = AlarmState::Reverted;
                ep.decided = Some(i);
                ep.closed = Some(i);
                out.push(ep);
            }
            // A candidate of failed runs alone (an outage: no level) and now
            // a run over the line at a level: the service is back and slower,
            // another problem than the outage (the bookshop archive's N+1
            // came right after its outage run and was dated at it).
            AlarmState::Candidate
                if levels.at(i).is_some() && ep.over.iter().all(|&k| levels.at(k).is_none()) =>
            {
                ep.state = AlarmState::Reverted;
                ep.decided = Some(i);
                ep.closed = Some(ep.last_over);
                out.push(ep);
                open = Some((start(i), 0, 0, None));
            }
            // The candidate's level: of its last run over the line that has
            // one (a failed run has none and says nothing about it).
            AlarmState::Candidate
                if another_level(
                    ep.over.iter().rev().find_map(|&k| levels.at(k)),
                    levels.at(i),
                ) || moved_here(
                    ep.over.iter().rev().find_map(|&k| levels.at(k)),
                    levels.at(i),
                    levels.threshold_ratio,
                ) =>
            {
                // Over again, but at another level: the candidate did not
                // persist at its own, and this run starts a new episode.
                ep.state = AlarmState::Reverted;
                ep.decided = Some(i);
                ep.closed = Some(ep.last_over);
                out.push(ep);
                open = Some((start(i), 0, 0, None));
            }
            AlarmState::Candidate => {
                ep.last_over = i;
                ep.over.push(i);
                overs += 1;
                if overs >= settings.confirm_needed {
                    ep.state = AlarmState::Confirmed;
                    ep.decided = Some(i);
                }
                open = Some((ep, overs, 0, None));
            }
            AlarmState::Confirmed if over => {
                streak = 0;
                // The episode's recent level: the median of its last three
                // runs over the line before the ones above it (a ramp moves
                // it along; one low run does not).
                let before: Vec<f64> = ep
                    .over
                    .iter()
                    .filter(|&&k| higher.is_none_or(|h| k < h))
                    .rev()
                    .take(3)
                    .filter_map(|&k| levels.at(k))
                    .collect();
                let above = match (median(&before), levels.at(i)) {
                    (Some(l), Some(v)) => {
                        super::verdict::band(v / l, levels.threshold_ratio)
                            == super::verdict::Band::Above
                            && another_level(Some(l), Some(v))
                    }
                    _ => false,
                };
                match (above, higher) {
                    (true, Some(h)) => {
                        // Two runs in a row above the episode's level: a new
                        // step. Close the old episode before it.
                        ep.over.retain(|&k| k < h);
                        ep.last_over = *ep.over.last().expect("the candidate stays");
                        ep.closed = Some(h - 1);
                        out.push(ep);
                        if another_level(levels.at(h), levels.at(i)) {
                            // The first of them was a level of its own.
                            let mut own = start(h);
                            own.state = AlarmState::Reverted;
                            own.decided = Some(i);
                            own.closed = Some(h);
                            out.push(own);
                            open = Some((start(i), 0, 0, None));
                            continue;
                        }
                        let mut new = start(h);
                        new.over.push(i);
                        new.last_over = i;
                        if 1 >= settings.confirm_needed {
                            new.state = AlarmState::Confirmed;
                            new.decided = Some(i);
                        }
                        open = Some((new, 1, 0, None));
                        continue;
                    }
                    (true, None) => higher = Some(i),
                    (false, _) => higher = None,
                }
                ep.last_over = i;
                ep.over.push(i);
                open = Some((ep, overs, streak, higher));
            }
            AlarmState::Confirmed => {
                streak += 1;
                if streak >= settings.confirm_needed {
                    ep.closed = Some(i);
                    out.push(ep);
                    continue;
                }
                open = Some((ep, overs, streak, None));
            }
            AlarmState::Reverted => unreachable!("reverted episodes are closed at once"),
        }
    }
    out.extend(open.map(|(ep, ..)| ep));
    date_episodes(&mut out, levels);
    out
}

/// Dates each episode at the first run of its new level
/// ([`Episode::onset`]), with what is known of the runs up to
/// [`ONSET_LOOKAHEAD`] after its first run over the line (two runs after a
/// change, a GC-heavy run at its start still looks like the new level; a
/// few runs later it does not):
///
/// * at the split of the run medians into an old and a new level
///   ([`rise_split`]) among the runs from [`ONSET_LOOKBACK`] before the
///   candidate to those after it, up to the next episode, leaving out the
///   runs over the line in earlier episodes (a noise run, a GC-heavy run:
///   at neither level); a noise run alone above the rest is its own onset;
///   a step whose first runs stayed within the line is dated at its first
///   run;
/// * where the split finds no rise, where the policy dated the change
///   itself (the `changepoint` policy's change point, as dated at the
///   latest of those runs it judged over); else at the candidate, or,
///   when the candidate measured the environment, at the episode's first
///   run over the line that did not.
///
/// Never at or before the previous episode's last run over the line
/// (unless all its runs over the line were environment suspect: they
/// measured the environment, not the endpoint), never after the
/// candidate unless the candidate measured the environment.
fn date_episodes(episodes: &mut [Episode], levels: &Levels) {
    let mut floor = 0;
    let candidates: Vec<usize> = episodes.iter().map(|ep| ep.candidate).collect();
    // Runs over the line in earlier episodes: at neither level of a later
    // change (a noise run, a GC-heavy run, an earlier step's runs).
    let mut earlier_over: Vec<usize> = Vec::new();
    for (k, ep) in episodes.iter_mut().enumerate() {
        let horizon = ep.candidate + ONSET_LOOKAHEAD;
        let own = ep
            .over
            .iter()
            .filter(|&&i| i <= horizon)
            .rev()
            .find_map(|&i| levels.onsets.get(i).copied().flatten());
        // A change the policy dated itself (a change point) may lie more
        // than ONSET_LOOKBACK before the first run over the line: a quiet
        // step can take a dozen runs to be judged over. The split then
        // reads the runs around that date, not only the last
        // ONSET_LOOKBACK runs, which would all be at the new level (and
        // split on its noise).
        let earliest = own.map_or(ep.candidate, |own| own.min(ep.candidate));
        let lo = floor.max(earliest.saturating_sub(ONSET_LOOKBACK));
        let next = candidates.get(k + 1).copied().unwrap_or(usize::MAX);
        let split = split_onset(
            ep.candidate,
            earliest.saturating_sub(ONSET_LOOKBACK),
            floor,
            horizon.min(next.saturating_sub(1)),
            &earlier_over,
            levels,
        );
        // The split reads the runs after the first one over the line too
        // (up to ONSET_LOOKAHEAD): it dates better than a date the policy
        // made from the runs it knew then; that date stands where the split
        // finds no rise.
        ep.onset = match (split, own) {
            (Some(onset), _) => onset,
            (None, Some(onset)) => onset.clamp(lo, ep.candidate),
            // A first run over the line that measured the environment (a
            // noisy-neighbour run) tells nothing of the endpoint's own
            // level: its first run over the line that did not is the
            // first known to be at the new one.
            (None, None) => ep
                .over
                .iter()
                .copied()
                .filter(|&i| i <= horizon)
                .find(|&i| !levels.environment.get(i).copied().unwrap_or(false))
                .unwrap_or(ep.candidate),
        };
        // A run the environment moved keeps its place: divided by the run's
        // shift, it measured the endpoint's own level like any other run.
        earlier_over.extend(
            ep.over
                .iter()
                .copied()
                .filter(|&i| !levels.environment.get(i).copied().unwrap_or(false)),
        );
        // The runs after its last run over the line (the ones that reverted
        // or closed it too) measured the old level again, unless every run
        // of it over the line measured the environment (one run-wide shift,
        // docs/alarms.md): those say nothing about the endpoint's level.
        let environment_only = ep
            .over
            .iter()
            .all(|&i| levels.environment.get(i).copied().unwrap_or(false));
        if !environment_only {
            floor = ep.last_over + 1;
        }
    }
}

/// How far the new level must stand from the old one towards the first
/// run over the line (on a log scale) for a split to date an episode: a
/// noise run followed by runs back at the old level is dated at itself,
/// not at a split the noise happened to favour. Not a half: a quiet
/// endpoint's +10% step often first crosses ×1.15 on a run that is high
/// on top of it (×1.20), and its new level then stands a little under
/// halfway (4% of 8.5%); at 0.4 the mixed fleet's `median` alarms on
/// quiet steps were dated at the step in 85% of catches, at 0.5 in 80%,
/// and every other measure moved by at most a point.
pub const NEW_LEVEL_SHARE: f64 = 0.4;

/// How many runs after an episode's first run over the line are read to
/// date it (`date_episodes`).
pub const ONSET_LOOKAHEAD: usize = 5;

/// The onset [`rise_split`] finds for an episode whose first run over the
/// line is `candidate`: at or after `floor` (after the previous episode),
/// among the measured runs from `from` (at most [`ONSET_LOOKBACK`] before
/// the candidate; earlier for a change the policy dated itself) to `hi`, leaving out the runs over the line in earlier episodes (`skip`).
/// The old level may be read before `floor`: a noise run just before a
/// step ends its own episode, and the step still has an old level to be
/// compared with.
fn split_onset(
    candidate: usize,
    from: usize,
    floor: usize,
    hi: usize,
    skip: &[usize],
    levels: &Levels,
) -> Option<usize> {
    let measured = |i: usize| levels.medians.get(i).copied().flatten();
    let from = from.min(candidate.saturating_sub(ONSET_LOOKBACK));
    let positions: Vec<usize> = (from..=hi.max(candidate))
        .filter(|&i| measured(i).is_some() && !skip.contains(&i))
        .collect();
    // The candidate's position; after a candidate that measured the
    // environment (a noisy-neighbour run: its level is only what is left
    // once the run-wide shift is divided out) the split may reach the
    // first run after it that did not, if only such runs lie between: the
    // step may have come in with the neighbour or after it.
    let environment = |i: usize| levels.environment.get(i).copied().unwrap_or(false);
    let last = positions
        .iter()
        .position(|&i| i >= candidate && !environment(i))
        .filter(|&p| (candidate..positions[p]).all(environment))
        .or_else(|| positions.iter().position(|&i| i == candidate))?;
    let logs: Vec<f64> = positions
        .iter()
        .filter_map(|&i| measured(i).map(f64::ln))
        .collect();
    // At least two runs of the old level to compare with, and never at or
    // before the previous episode.
    let first_allowed = positions.iter().position(|&i| i >= floor)?;
    let s = rise_split(&logs, first_allowed.max(2), last)?;
    // The new level must stand at least halfway from the old one to the
    // candidate: a noise run followed by runs back at the old level is
    // dated at itself, not at a split the noise happened to favour.
    let (before, after) = (median(&logs[..s])?, median(&logs[s..])?);
    (after - before >= NEW_LEVEL_SHARE * (logs[last] - before)).then(|| positions[s])
}

/// The human label of an episode: the first label of this endpoint on a
/// run inside it. `labels` are this endpoint's labels by position, oldest
/// first. The one place labels are matched to alarms (the gate reads the
/// result from [`AlarmReport::at`]).
pub fn episode_label<'a>(
    ep: &Episode,
    labels: &[(usize, &'a TriageLabel)],
    len: usize,
) -> Option<&'a TriageLabel> {
    let span = ep.span(len);
    labels
        .iter()
        .find(|(i, _)| span.contains(i))
        .map(|(_, l)| *l)
}

/// One policy's view of one endpoint: a judgement per point, the episodes
/// and their labels. What the gate reads.
#[derive(Debug, Clone, Default)]
pub struct PolicyTrack {
    pub judgements: Vec<Judgement>,
    pub episodes: Vec<Episode>,
    /// The human label of each episode, same order.
    pub labels: Vec<Option<TriageLabel>>,
}

/// One run of one endpoint under one policy, as the gate asks about it.
#[derive(Debug, Clone, Copy)]
pub struct RunAlarm<'a> {
    pub judgement: Judgement,
    /// The episode holding the run, if any.
    pub episode: Option<&'a Episode>,
    /// That episode's human label.
    pub label: Option<&'a TriageLabel>,
}

/// One alarm of one policy on one endpoint.
#[derive(Debug, Clone, Serialize)]
pub struct Alarm {
    pub endpoint: String,
    /// The alarm's first run: the first run at the new level
    /// ([`Episode::onset`]), where the change came in. Usually the first
    /// run over the line (`first_over_run`); earlier when the runs before
    /// it were already at the new level (`changepoint`: its change point).
    pub run: String,
    /// The first run over the line: the candidate, whose figures follow.
    pub first_over_run: String,
    pub policy: Policy,
    pub state: AlarmState,
    /// The human label, when a triage file labels a run of this alarm.
    pub label: Option<Label>,
    /// The label persistence suggests (confirmed → real, reverted → noise).
    pub inferred_label: Option<InferredLabel>,
    /// Where the label was read (`triage/x.toml:3`).
    pub label_source: Option<String>,
    pub label_note: Option<String>,
    /// When `run` started.
    pub started_at: DateTime<Utc>,
    /// The run at which the policy raised it (the confirmation run for
    /// `persistent`).
    pub raised_run: String,
    pub raised_at: DateTime<Utc>,
    pub confirmed_run: Option<String>,
    /// The run that closed it (reverted, or back within the band).
    pub closed_run: Option<String>,
    /// Runs of this alarm that were over the line, oldest first.
    pub over_runs: Vec<String>,
    /// The candidate run's figures, for "its rounds against the baseline".
    pub round_p99_ms: Vec<f64>,
    pub median_p99_ms: f64,
    pub baseline_p99_ms: Option<f64>,
    pub ratio: Option<f64>,
    /// The median ratio to baseline over every endpoint of the candidate
    /// run. Well above 1 means the whole run was slow (a noisy neighbour,
    /// a slow host), not this endpoint: a triage hint, never a verdict.
    pub run_median_ratio: Option<f64>,
    /// How many endpoints that median is over.
    pub run_endpoints: usize,
    /// The candidate run is `environment suspect` (most endpoints moved
    /// together): the alarm is inferred noise unless it persists.
    pub environment_suspect: bool,
    /// The candidate run's verdict and its four figures against their
    /// baselines, with those that crossed their lines.
    pub verdict: Verdict,
    pub figures: FigureSummary,
    /// Between the last run at the old level and the first at the new one
    /// (`run`), with both commits: where to look for the cause; the
    /// culprit is the range's last commit.
    pub suspect: SuspectRange,
    /// The candidate run's rounds (band, likely GC/noise rounds) and the
    /// shift of the episode's runs over the line against the candidate's
    /// baseline window (`analyse::evidence`).
    pub evidence: super::evidence::Evidence,
    /// Positions in the endpoint's points (for pages, not the contract):
    /// the first run over the line, the alarm's first run (`run`), the run
    /// that raised it.
    #[serde(skip)]
    pub candidate_index: usize,
    #[serde(skip)]
    pub onset_index: usize,
    #[serde(skip)]
    pub raised_index: usize,
}

/// How quickly one policy caught one regression.
#[derive(Debug, Clone, Serialize)]
pub struct Detection {
    pub policy: Policy,
    /// The run at which it first alarmed; `None`: missed.
    pub alarm_run: Option<String>,
    pub delay_runs: Option<usize>,
    pub delay_days: Option<f64>,
    pub confirmed_run: Option<String>,
    pub confirm_delay_runs: Option<usize>,
    pub confirm_delay_days: Option<f64>,
    /// For a miss: how many runs from the onset were watched without an
    /// alarm (a right-censored delay, "≥ N runs").
    pub runs_watched: usize,
}

/// A regression a human confirmed (labelled `real`).
#[derive(Debug, Clone, Serialize)]
pub struct Regression {
    pub endpoint: String,
    /// The first regressed run (the earliest labelled run of it).
    pub onset_run: String,
    pub onset_at: DateTime<Utc>,
    pub label: Label,
    pub label_source: String,
    /// One entry per policy, in [`Policy::ALL`] order.
    pub detections: Vec<Detection>,
}

/// Human labels against inferred ones, over alarms that have both.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Agreement {
    pub compared: usize,
    pub agreeing: usize,
    pub rate: Option<f64>,
}

/// What one policy did on one endpoint (or on all of them).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PolicyStats {
    /// Alarms raised.
    pub alarms: usize,
    /// Labelled by a human as a true alarm (`real`, including `accepted`).
    pub real: usize,
    /// Of those, labelled `accepted` (an intended change).
    pub accepted: usize,
    /// Labelled `noise`.
    pub noise: usize,
    /// Not labelled.
    pub unknown: usize,
    /// noise ÷ (real + noise), over labelled alarms only.
    pub fp_rate: Option<f64>,
    /// 95% Wilson interval of `fp_rate`.
    pub fp_interval: Option<Interval>,
    /// Inferred from persistence.
    pub inferred_real: usize,
    pub inferred_noise: usize,
    /// Human and inferred labels compared where both exist.
    pub agreement: Agreement,
    pub alarms_per_week: f64,
    /// Human-labelled regressions, how many this policy alarmed on, and the
    /// median delays of those it caught.
    pub regressions: usize,
    pub detected: usize,
    pub median_delay_runs: Option<f64>,
    pub median_delay_days: Option<f64>,
    pub median_confirm_delay_days: Option<f64>,
}

/// One endpoint's accounting.
#[derive(Debug, Clone, Serialize)]
pub struct EndpointAlarms {
    pub endpoint: String,
    pub name: String,
    /// Policy name → what it did here, in [`Policy::ALL`] order of names.
    pub policies: BTreeMap<Policy, PolicyStats>,
    /// How the sensitive policy reads the latest run (`None`: no run with
    /// a trusted time).
    pub sensitive: Option<SensitiveReading>,
}

/// How the sensitive policy ([`SENSITIVE_POLICY`]) reads an endpoint's
/// latest run, beside the archive's policy: on a quiet endpoint a +10%
/// step stays under a ×1.15 line, and a change point shows it
/// (docs/detection.md). Shown, never gated on.
#[derive(Debug, Clone, Serialize)]
pub struct SensitiveReading {
    pub policy: Policy,
    /// The latest run whose time can be trusted.
    pub run: String,
    /// Over the sensitive policy's line, within it, or not judged (no
    /// baseline, or a change point with one run after it).
    pub judgement: Judgement,
    /// When over: the first run of the change it sees (its alarm's run).
    pub since_run: Option<String>,
    /// When over: the median of the runs since then against the median of
    /// up to [`ONSET_LOOKBACK`] runs before (0.10 = 10% slower).
    pub change: Option<f64>,
}

impl SensitiveReading {
    /// The reading of `endpoint`'s latest run from the sensitive policy's
    /// judgements and episodes.
    fn of(
        endpoint: &EndpointAnalysis,
        judgements: &[Judgement],
        episodes: &[Episode],
    ) -> Option<Self> {
        let points = &endpoint.points;
        let latest = points.iter().rposition(|p| !p.untrusted_time)?;
        let judgement = judgements
            .get(latest)
            .copied()
            .unwrap_or(Judgement::NotJudged);
        let onset = episodes
            .iter()
            .find(|ep| (ep.candidate..=ep.end(points.len())).contains(&latest))
            .map(|ep| ep.onset)
            .filter(|_| judgement == Judgement::Over);
        let level = |range: std::ops::Range<usize>| {
            let medians: Vec<f64> = points[range]
                .iter()
                .filter(|p| super::verdict::measures_level(p.verdict) && !p.environment_suspect)
                .map(|p| p.median_p99_ms)
                .collect();
            median(&medians)
        };
        let change = onset.and_then(|o| {
            let before = level(o.saturating_sub(ONSET_LOOKBACK)..o)?;
            let after = level(o..latest + 1)?;
            (before > 0.0).then(|| after / before - 1.0)
        });
        Some(SensitiveReading {
            policy: SENSITIVE_POLICY,
            run: points[latest].run.clone(),
            judgement,
            since_run: onset.map(|o| points[o].run.clone()),
            change,
        })
    }
}

/// Everything about alarms in one archive.
#[derive(Debug, Clone, Default, Serialize)]
pub struct AlarmReport {
    /// Every policy's alarms, sorted by endpoint, policy, candidate time.
    pub alarms: Vec<Alarm>,
    /// Sorted by endpoint id.
    pub endpoints: Vec<EndpointAlarms>,
    /// All endpoints together, per policy.
    pub totals: BTreeMap<Policy, PolicyStats>,
    /// Human-labelled regressions and how each policy caught them.
    pub regressions: Vec<Regression>,
    /// One alarm per run where most endpoints moved slower together, per
    /// policy, by time ([`RunWideAlarm`]); the endpoint alarms it stands
    /// for are not in `alarms`.
    pub run_wide: Vec<RunWideAlarm>,
    /// Weeks spanned by the history (at least 1), for per-week rates.
    pub weeks: f64,
    /// The human labels read from `triage/*.toml`, sorted by run, endpoint.
    #[serde(skip)]
    pub labels: Vec<TriageLabel>,
    /// Every (endpoint, policy)'s judgements and episodes, for the gate.
    #[serde(skip)]
    pub tracks: BTreeMap<(String, Policy), PolicyTrack>,
}

impl AlarmReport {
    /// The alarms of one policy.
    pub fn of(&self, policy: Policy) -> impl Iterator<Item = &Alarm> {
        self.alarms.iter().filter(move |a| a.policy == policy)
    }

    /// One endpoint's accounting.
    pub fn endpoint(&self, id: &str) -> Option<&EndpointAlarms> {
        self.endpoints.iter().find(|e| e.endpoint == id)
    }

    /// The label a triage file gives one run of one endpoint (capacity
    /// verdicts are per run, not per episode).
    pub fn label_of_run(&self, run: &str, endpoint: &str) -> Option<&TriageLabel> {
        self.labels
            .iter()
            .find(|l| l.run == run && l.endpoint == endpoint)
    }

    /// Point `index` of `endpoint` under `policy`: its judgement, and the
    /// episode (with its label) that holds it.
    pub fn at(&self, endpoint: &str, policy: Policy, index: usize) -> Option<RunAlarm<'_>> {
        let track = self.tracks.get(&(endpoint.to_string(), policy))?;
        let judgement = *track.judgements.get(index)?;
        let len = track.judgements.len();
        let k = track
            .episodes
            .iter()
            .position(|e| (e.candidate..=e.end(len)).contains(&index));
        Some(RunAlarm {
            judgement,
            episode: k.map(|k| &track.episodes[k]),
            label: k.and_then(|k| track.labels[k].as_ref()),
        })
    }
}

/// Computes alarms for every policy and endpoint. Deterministic.
pub fn report(
    endpoints: &[EndpointAnalysis],
    runs: &[RunInfo],
    triage: &[TriageLabel],
    settings: &Settings,
    known: Option<&KnownJudgements>,
) -> AlarmReport {
    let weeks = history_weeks(endpoints);
    // Every endpoint's ratio to its baseline, by run.
    let mut run_ratios: HashMap<&str, Vec<f64>> = HashMap::new();
    for e in endpoints {
        for p in &e.points {
            if let Some(r) = p.ratio {
                run_ratios.entry(p.run.as_str()).or_default().push(r);
            }
        }
    }
    let mut report = AlarmReport {
        weeks,
        labels: triage.to_vec(),
        ..Default::default()
    };
    // Endpoints are judged independently, one task each on every core;
    // `collect` keeps the id order and the pieces are joined in it, so the
    // report is the same whatever the number of threads.
    use rayon::prelude::*;
    let pieces: Vec<EndpointReport> = endpoints
        .par_iter()
        .with_max_len(1)
        .map(|endpoint| endpoint_report(endpoint, runs, triage, settings, &run_ratios, known))
        .collect();
    let mut folded: BTreeMap<(Policy, usize), Vec<String>> = BTreeMap::new();
    for piece in pieces {
        for key in piece.folded {
            folded
                .entry(key)
                .or_default()
                .push(piece.accounting.endpoint.clone());
        }
        report.alarms.extend(piece.alarms);
        report.tracks.extend(piece.tracks);
        report.endpoints.push(piece.accounting);
        report.regressions.extend(piece.regressions);
    }
    for policy in Policy::ALL {
        let alarms: Vec<Alarm> = report.of(policy).cloned().collect();
        report.totals.insert(
            policy,
            stats_of(policy, &alarms, &report.regressions, weeks),
        );
    }
    report.alarms.sort_by(|a, b| {
        (&a.endpoint, a.policy, a.started_at).cmp(&(&b.endpoint, b.policy, b.started_at))
    });
    report.run_wide = folded
        .into_iter()
        .filter_map(|((policy, run), endpoints)| {
            let info = runs.get(run)?;
            Some(RunWideAlarm {
                run: info.id.clone(),
                started_at: info.started_at,
                policy,
                shift: info.environment_suspect.clone()?,
                endpoints,
            })
        })
        .collect();
    report.run_wide.sort_by_key(|a| (a.policy, a.started_at));
    report
}

/// Whether an episode is part of its run's run-wide alarm rather than an
/// alarm of its own (issue 33: one problem, one alarm): it began in a run
/// where most endpoints moved slower together (environment suspect,
/// [`super::environment`]), over the line for latency or throughput
/// (errors and failures are the service's own), and did not persist
/// (not confirmed). Such episodes are left out of the endpoint's alarms
/// and false-positive rate; the gate reads the same rule for the run it
/// checks.
pub fn part_of_run_wide(ep: &Episode, endpoint: &EndpointAnalysis, runs: &[RunInfo]) -> bool {
    let point = &endpoint.points[ep.candidate];
    let slower = runs
        .get(point.run_index)
        .and_then(|r| r.environment_suspect.as_ref())
        .is_some_and(|s| s.direction == ShiftDirection::Slower);
    slower
        && ep.state != AlarmState::Confirmed
        && point.verdict != Verdict::Failed
        && !point.regressed.contains(&super::verdict::Figure::ErrorRate)
}

/// One alarm for a run whose endpoints moved slower together (environment
/// suspect), standing for the alarms a policy would have raised on each of
/// them ([`part_of_run_wide`]).
#[derive(Debug, Clone, Serialize)]
pub struct RunWideAlarm {
    pub run: String,
    pub started_at: DateTime<Utc>,
    pub policy: Policy,
    /// "9 of 12 endpoints slower together (median ×1.20)": how many moved
    /// beyond their line in the run, of how many judged.
    pub shift: RunWideShift,
    /// The endpoints whose alarms it stands for (over the policy's line in
    /// this run and not persisting), by id.
    pub endpoints: Vec<String>,
}

impl RunWideAlarm {
    /// "run 2026-05-04T0300Z: 9 of 12 endpoints slower together (median ×1.20)".
    pub fn describe(&self) -> String {
        format!("run {}: {}", self.run, self.shift.describe())
    }
}

/// One endpoint's part of the [`AlarmReport`].
struct EndpointReport {
    alarms: Vec<Alarm>,
    /// (policy, run index) of each episode folded into a run-wide alarm.
    folded: Vec<(Policy, usize)>,
    tracks: Vec<((String, Policy), PolicyTrack)>,
    accounting: EndpointAlarms,
    regressions: Vec<Regression>,
}

/// Every policy's judgements, episodes and alarms of one endpoint.
fn endpoint_report(
    endpoint: &EndpointAnalysis,
    runs: &[RunInfo],
    triage: &[TriageLabel],
    settings: &Settings,
    run_ratios: &HashMap<&str, Vec<f64>>,
    known: Option<&KnownJudgements>,
) -> EndpointReport {
    let len = endpoint.points.len();
    let labels = endpoint_labels(endpoint, triage);
    let levels = Levels::of(endpoint, runs);
    let dated: Vec<(Policy, Dated)> = Policy::ALL
        .iter()
        .map(|&p| (p, p.judge_dated(endpoint, settings, known)))
        .collect();
    let episodes_by_policy: Vec<(Policy, Vec<Episode>)> = dated
        .iter()
        .map(|(p, d)| {
            let levels = levels.clone().with_onsets(d.onsets.clone());
            (*p, episodes(&d.judgements, &levels, &settings.alarms))
        })
        .collect();
    let judged = dated.into_iter().map(|(p, d)| (p, d.judgements));
    let median_episodes = &episodes_by_policy
        .iter()
        .find(|(p, _)| *p == Policy::Median)
        .expect("median is always computed")
        .1;
    let regressions = regressions_of(endpoint, &labels, median_episodes, &episodes_by_policy);
    let mut piece = EndpointReport {
        alarms: Vec::new(),
        folded: Vec::new(),
        tracks: Vec::new(),
        accounting: EndpointAlarms {
            endpoint: endpoint.id.clone(),
            name: endpoint.name.clone(),
            policies: BTreeMap::new(),
            sensitive: None,
        },
        regressions: Vec::new(),
    };
    for ((policy, eps), (_, judgements)) in episodes_by_policy.iter().zip(judged) {
        let (folded, own): (Vec<&Episode>, Vec<&Episode>) = eps
            .iter()
            .partition(|ep| part_of_run_wide(ep, endpoint, runs));
        piece.folded.extend(
            folded
                .iter()
                .filter(|ep| ep.raised(policy.raised_at()).is_some())
                .map(|ep| (*policy, endpoint.points[ep.candidate].run_index)),
        );
        let alarms: Vec<Alarm> = own
            .into_iter()
            .filter_map(|ep| make_alarm(endpoint, runs, *policy, ep, &labels, len, run_ratios))
            .collect();
        if *policy == SENSITIVE_POLICY {
            piece.accounting.sensitive = SensitiveReading::of(endpoint, &judgements, eps);
        }
        let stats = stats_of(*policy, &alarms, &regressions, endpoint_weeks(endpoint));
        piece.accounting.policies.insert(*policy, stats);
        piece.alarms.extend(alarms);
        piece.tracks.push((
            (endpoint.id.clone(), *policy),
            track(judgements, eps.clone(), &labels, len),
        ));
    }
    piece.regressions = regressions;
    piece
}

/// The alarm report `perfdash check` reads ([`super::Scope::Gate`]): the
/// human labels, and each endpoint's track under the one gated policy,
/// made exactly as [`report`] makes it. Alarms, accounting and the other
/// policies are left empty: no page is rendered from it.
pub fn gate_report(
    endpoints: &[EndpointAnalysis],
    runs: &[RunInfo],
    triage: &[TriageLabel],
    settings: &Settings,
    policy: Policy,
) -> AlarmReport {
    let mut report = AlarmReport {
        weeks: history_weeks(endpoints),
        labels: triage.to_vec(),
        ..Default::default()
    };
    for endpoint in endpoints {
        let labels = endpoint_labels(endpoint, triage);
        let Dated { judgements, onsets } = policy.judge_dated(endpoint, settings, None);
        let levels = Levels::of(endpoint, runs).with_onsets(onsets);
        let eps = episodes(&judgements, &levels, &settings.alarms);
        report.tracks.insert(
            (endpoint.id.clone(), policy),
            track(judgements, eps, &labels, endpoint.points.len()),
        );
    }
    report
}

/// One endpoint's triage labels by position in its points, oldest first.
fn endpoint_labels<'a>(
    endpoint: &EndpointAnalysis,
    triage: &'a [TriageLabel],
) -> Vec<(usize, &'a TriageLabel)> {
    let index_of: HashMap<&str, usize> = endpoint
        .points
        .iter()
        .enumerate()
        .map(|(i, p)| (p.run.as_str(), i))
        .collect();
    let mut labels: Vec<(usize, &TriageLabel)> = triage
        .iter()
        .filter(|l| l.endpoint == endpoint.id)
        .filter_map(|l| index_of.get(l.run.as_str()).map(|&i| (i, l)))
        .collect();
    labels.sort_by_key(|(i, _)| *i);
    labels
}

fn track(
    judgements: Vec<Judgement>,
    episodes: Vec<Episode>,
    labels: &[(usize, &TriageLabel)],
    len: usize,
) -> PolicyTrack {
    PolicyTrack {
        judgements,
        labels: episodes
            .iter()
            .map(|ep| episode_label(ep, labels, len).cloned())
            .collect(),
        episodes,
    }
}

fn make_alarm(
    endpoint: &EndpointAnalysis,
    runs: &[RunInfo],
    policy: Policy,
    ep: &Episode,
    labels: &[(usize, &TriageLabel)],
    len: usize,
    run_ratios: &HashMap<&str, Vec<f64>>,
) -> Option<Alarm> {
    let raised = ep.raised(policy.raised_at())?;
    let points = &endpoint.points;
    let label = episode_label(ep, labels, len);
    let candidate = &points[ep.candidate];
    let environment_suspect = runs
        .get(candidate.run_index)
        .is_some_and(|r| r.environment_suspect.is_some());
    let over_runs = ep.over.iter().map(|&i| points[i].run.clone()).collect();
    // A run has one point, and a baseline's runs come before the
    // candidate: looked for there first (a scan of the whole history per
    // baseline run was 1 % of a build at 120 endpoints × 3 years).
    let before = &points[..ep.candidate];
    let baseline_medians: Vec<f64> = candidate
        .baseline_runs
        .iter()
        .filter_map(|id| {
            before
                .iter()
                .rev()
                .find(|p| p.run == **id)
                .or_else(|| points.iter().find(|p| p.run == **id))
        })
        .map(|p| p.median_p99_ms)
        .collect();
    let over_medians: Vec<f64> = ep.over.iter().map(|&i| points[i].median_p99_ms).collect();
    let evidence =
        super::evidence::evidence(candidate.rounds.iter(), &baseline_medians, &over_medians);
    let onset = &points[ep.onset];
    Some(Alarm {
        endpoint: endpoint.id.clone(),
        run: onset.run.clone(),
        first_over_run: candidate.run.clone(),
        policy,
        state: ep.state,
        label: label.map(|l| l.label),
        inferred_label: match ep.state {
            AlarmState::Candidate if environment_suspect => Some(InferredLabel::Noise),
            state => state.inferred_label(),
        },
        label_source: label.map(|l| l.source.clone()),
        label_note: label.and_then(|l| l.note.clone()),
        started_at: onset.started_at,
        raised_run: points[raised].run.clone(),
        raised_at: points[raised].started_at,
        confirmed_run: (ep.state == AlarmState::Confirmed)
            .then(|| ep.decided.map(|d| points[d].run.clone()))
            .flatten(),
        closed_run: ep.closed.map(|c| points[c].run.clone()),
        over_runs,
        round_p99_ms: candidate.round_p99_ms.clone(),
        median_p99_ms: candidate.median_p99_ms,
        baseline_p99_ms: candidate.baseline_p99_ms,
        ratio: candidate.ratio,
        run_median_ratio: run_ratios
            .get(candidate.run.as_str())
            .and_then(|r| median(r)),
        run_endpoints: run_ratios.get(candidate.run.as_str()).map_or(0, Vec::len),
        environment_suspect,
        verdict: candidate.verdict,
        figures: FigureSummary::of(candidate),
        suspect: SuspectRange::before(points, ep.onset),
        evidence,
        candidate_index: ep.candidate,
        onset_index: ep.onset,
        raised_index: raised,
    })
}

fn regressions_of(
    endpoint: &EndpointAnalysis,
    labels: &[(usize, &TriageLabel)],
    median_episodes: &[Episode],
    episodes_by_policy: &[(Policy, Vec<Episode>)],
) -> Vec<Regression> {
    let len = endpoint.points.len();
    // Group true-alarm labels: those inside one median episode are one
    // regression; a label outside every median episode stands alone.
    let mut onsets: Vec<(usize, &TriageLabel)> = Vec::new();
    let mut seen_episodes: Vec<usize> = Vec::new();
    for &(i, label) in labels.iter().filter(|(_, l)| l.label == Label::Real) {
        let episode = median_episodes
            .iter()
            .position(|ep| ep.span(len).contains(&i));
        match episode {
            Some(e) if seen_episodes.contains(&e) => continue,
            Some(e) => seen_episodes.push(e),
            None => {}
        }
        onsets.push((i, label));
    }
    let points = &endpoint.points;
    let days = |from: usize, to: usize| {
        (points[to].started_at - points[from].started_at).num_seconds() as f64 / 86_400.0
    };
    onsets
        .iter()
        .enumerate()
        .map(|(k, &(onset, label))| {
            // An alarm belongs to this regression if it is raised before the
            // next regression's onset and its episode reaches the onset.
            let bound = onsets.get(k + 1).map(|(i, _)| *i).unwrap_or(len);
            let detections = episodes_by_policy
                .iter()
                .map(|(policy, eps)| {
                    let hit = eps.iter().find_map(|ep| {
                        let raised = ep.raised(policy.raised_at())?;
                        (ep.end(len) >= onset && raised < bound).then_some((ep, raised.max(onset)))
                    });
                    match hit {
                        Some((ep, at)) => {
                            let confirmed = (ep.state == AlarmState::Confirmed)
                                .then_some(ep.decided)
                                .flatten()
                                .map(|d| d.max(onset));
                            Detection {
                                policy: *policy,
                                alarm_run: Some(points[at].run.clone()),
                                delay_runs: Some(at - onset),
                                delay_days: Some(days(onset, at)),
                                confirmed_run: confirmed.map(|c| points[c].run.clone()),
                                confirm_delay_runs: confirmed.map(|c| c - onset),
                                confirm_delay_days: confirmed.map(|c| days(onset, c)),
                                runs_watched: at - onset + 1,
                            }
                        }
                        None => Detection {
                            policy: *policy,
                            alarm_run: None,
                            delay_runs: None,
                            delay_days: None,
                            confirmed_run: None,
                            confirm_delay_runs: None,
                            confirm_delay_days: None,
                            runs_watched: bound - onset,
                        },
                    }
                })
                .collect();
            Regression {
                endpoint: endpoint.id.clone(),
                onset_run: points[onset].run.clone(),
                onset_at: points[onset].started_at,
                label: label.label,
                label_source: label.source.clone(),
                detections,
            }
        })
        .collect()
}

fn stats_of(
    policy: Policy,
    alarms: &[Alarm],
    regressions: &[Regression],
    weeks: f64,
) -> PolicyStats {
    let mut s = PolicyStats {
        alarms: alarms.len(),
        ..Default::default()
    };
    for a in alarms {
        match a.label {
            Some(Label::Noise) => s.noise += 1,
            Some(l) => {
                s.real += 1;
                if l == Label::Accepted {
                    s.accepted += 1;
                }
            }
            None => s.unknown += 1,
        }
        match a.inferred_label {
            Some(InferredLabel::Real) => s.inferred_real += 1,
            Some(InferredLabel::Noise) => s.inferred_noise += 1,
            None => {}
        }
        // An accepted alarm moves the baseline to its own level, so whether
        // it "persisted" says nothing: leave it out of agreement.
        if let (Some(human), Some(inferred)) =
            (a.label.filter(|l| *l != Label::Accepted), a.inferred_label)
        {
            s.agreement.compared += 1;
            if inferred.agrees_with(human) {
                s.agreement.agreeing += 1;
            }
        }
    }
    s.agreement.rate = (s.agreement.compared > 0)
        .then(|| s.agreement.agreeing as f64 / s.agreement.compared as f64);
    let labelled = (s.real + s.noise) as u64;
    s.fp_rate = (labelled > 0).then(|| s.noise as f64 / labelled as f64);
    s.fp_interval = wilson_interval(s.noise as u64, labelled, WILSON_Z95);
    s.alarms_per_week = alarms.len() as f64 / weeks;
    let caught: Vec<&Detection> = regressions
        .iter()
        .filter_map(|r| r.detections.iter().find(|d| d.policy == policy))
        .filter(|d| d.alarm_run.is_some())
        .collect();
    s.regressions = regressions.len();
    s.detected = caught.len();
    s.median_delay_runs = median(
        &caught
            .iter()
            .filter_map(|d| d.delay_runs.map(|r| r as f64))
            .collect::<Vec<_>>(),
    );
    s.median_delay_days = median(
        &caught
            .iter()
            .filter_map(|d| d.delay_days)
            .collect::<Vec<_>>(),
    );
    s.median_confirm_delay_days = median(
        &caught
            .iter()
            .filter_map(|d| d.confirm_delay_days)
            .collect::<Vec<_>>(),
    );
    s
}

/// The span of history alarms are counted over: from the first to the
/// last run whose time can be trusted (a run dated 1970 or 2099 would
/// spread the alarms over decades: "0.00/wk").
fn trusted_span<'a>(
    points: impl Iterator<Item = &'a RunPoint>,
) -> Option<(DateTime<Utc>, DateTime<Utc>)> {
    points
        .filter(|p| !p.untrusted_time)
        .map(|p| p.started_at)
        .fold(None, |span, t| match span {
            None => Some((t, t)),
            Some((a, b)) => Some((a.min(t), b.max(t))),
        })
}

/// Weeks between an endpoint's first and last trusted run, at least one.
fn endpoint_weeks(endpoint: &EndpointAnalysis) -> f64 {
    trusted_span(endpoint.points.iter()).map_or(1.0, |(a, b)| weeks_between(a, b))
}

fn history_weeks(endpoints: &[EndpointAnalysis]) -> f64 {
    trusted_span(endpoints.iter().flat_map(|e| e.points.iter()))
        .map_or(1.0, |(a, b)| weeks_between(a, b))
}

fn weeks_between(a: DateTime<Utc>, b: DateTime<Utc>) -> f64 {
    ((b - a).num_seconds() as f64 / (7.0 * 86_400.0)).max(1.0)
}

#[cfg(test)]
mod tests;
