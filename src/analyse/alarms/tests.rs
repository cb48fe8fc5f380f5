//! Every policy on hand-made series with known answers: a GC-tail round,
//! a step, a ramp, a one-run spike and a noisy-neighbour run.
//!
//! Runs are 56 hours apart (three a week). Each run's five rounds wobble
//! by ±2% around the run's level, so the median of the rounds equals the
//! level and a quiet window has MAD 0 (the robust scale is then the 2%
//! floor: 2 ms at 100 ms).

use chrono::NaiveDate;

use super::*;
use crate::analyse::{Analysis, analyse};
use crate::model::Archive;

const WOBBLE: [f64; 5] = [0.99, 1.0, 1.01, 1.0, 1.02];

fn rounds_at(level: f64) -> Vec<f64> {
    WOBBLE.iter().map(|w| w * level).collect()
}

/// `quiet` runs at 100 ms followed by `tail` levels.
fn levels(quiet: usize, tail: &[f64]) -> Vec<Vec<f64>> {
    let mut runs: Vec<Vec<f64>> = (0..quiet).map(|_| rounds_at(100.0)).collect();
    runs.extend(tail.iter().map(|&l| rounds_at(l)));
    runs
}

use crate::test_support::run_id;

/// Endpoints (id → rounds per run); every endpoint has every run.
fn archive(endpoints: &[(&str, Vec<Vec<f64>>)], triage: &[(usize, &str, Label)]) -> Archive {
    Archive {
        triage: triage
            .iter()
            .map(|&(i, endpoint, label)| TriageLabel {
                run: run_id(i),
                endpoint: endpoint.into(),
                label,
                note: None,
                author: "test".into(),
                date: NaiveDate::from_ymd_opt(2026, 3, 1).unwrap(),
                source: format!("triage/{i}.toml:1"),
                follow_up: Default::default(),
            })
            .collect(),
        ..crate::test_support::archive_of(endpoints)
    }
}

fn analysed(endpoints: &[(&str, Vec<Vec<f64>>)], triage: &[(usize, &str, Label)]) -> Analysis {
    analyse(&archive(endpoints, triage), vec![])
}

/// (candidate run index, state) of one policy's alarms on one endpoint.
fn alarms_of(a: &Analysis, endpoint: &str, policy: Policy) -> Vec<(usize, AlarmState)> {
    a.alarms
        .of(policy)
        .filter(|al| al.endpoint == endpoint)
        .map(|al| (al.candidate_index, al.state))
        .collect()
}

use AlarmState::{Candidate, Confirmed, Reverted};

/// A noise run, then an outage (every round failed: over the line with no
/// level), then a real ×6 step: the failed run does not carry the noise
/// run's candidate over to the step. The step is its own alarm, dated at
/// its first run (the bookshop archive's N+1 was dated at the noise run the
/// outage bridged).
#[test]
fn a_failed_run_does_not_bridge_a_noise_candidate_to_a_step() {
    use Judgement::{Over as O, Within as W};
    let s = AlarmSettings::default();
    let levels = Levels {
        ratios: vec![Some(1.0), Some(1.38), None, Some(6.1), Some(6.2)],
        threshold_ratio: 1.15,
        ..Levels::default()
    };
    let eps: Vec<(usize, AlarmState)> = episodes(&[W, O, O, O, O], &levels, &s)
        .iter()
        .map(|e| (e.candidate, e.state))
        .collect();
    assert_eq!(eps, [(1, Reverted), (3, Candidate)]);
}

/// An outage (failed runs: over the line, no level), then a run over the
/// line at a level: two problems, the outage's alarm ends where the slow
/// run starts its own (the bookshop archive's N+1 came right after its
/// outage run and was dated at it).
#[test]
fn an_outage_then_a_slow_run_are_two_alarms() {
    use Judgement::{Over as O, Within as W};
    let s = AlarmSettings::default();
    let levels = Levels {
        ratios: vec![Some(1.0), None, Some(5.9), Some(5.2)],
        threshold_ratio: 1.15,
        ..Levels::default()
    };
    let eps: Vec<(usize, AlarmState, Option<usize>)> = episodes(&[W, O, O, O], &levels, &s)
        .iter()
        .map(|e| (e.candidate, e.state, e.closed))
        .collect();
    assert_eq!(eps, [(1, Reverted, Some(1)), (2, Candidate, None)]);
}

/// `naive` over the line on one GC-tail round of a run whose median sat
/// under its baseline, then a ×2 step: the step is its own alarm, dated at
/// its own first run, not at the GC round's run before it.
#[test]
fn a_candidate_at_its_baseline_then_a_step_are_two_alarms() {
    use Judgement::{Over as O, Within as W};
    let s = AlarmSettings::default();
    let levels = Levels {
        ratios: vec![Some(1.0), Some(0.97), Some(2.0), Some(2.1)],
        threshold_ratio: 1.15,
        ..Levels::default()
    };
    let eps: Vec<(usize, AlarmState, usize)> = episodes(&[W, O, O, O], &levels, &s)
        .iter()
        .map(|e| (e.candidate, e.state, e.onset))
        .collect();
    assert_eq!(eps, [(1, Reverted, 1), (2, Candidate, 2)]);
    // A candidate already above its baseline and a run over the line near
    // it are one level: one episode.
    let near = Levels {
        ratios: vec![Some(1.0), Some(1.18), Some(1.22), Some(1.2)],
        threshold_ratio: 1.15,
        ..Levels::default()
    };
    assert_eq!(episodes(&[W, O, O, O], &near, &s).len(), 1);
}

/// An episode whose first run over the line was a noisy-neighbour run and
/// whose run medians show no split: dated at its first run over the line
/// that measured the endpoint, not at the neighbour's.
#[test]
fn an_episode_opened_by_a_neighbour_run_is_dated_at_the_endpoints_own_run() {
    use Judgement::{Over as O, Within as W};
    let s = AlarmSettings::default();
    // Too few runs before it for a split (two of the old level are needed).
    let levels = Levels {
        ratios: vec![Some(1.0), Some(1.3), Some(1.2), Some(1.2)],
        threshold_ratio: 1.15,
        medians: vec![Some(100.0), None, Some(120.0), Some(120.0)],
        environment: vec![false, true, false, false],
        ..Levels::default()
    };
    let eps: Vec<(usize, usize)> = episodes(&[W, O, O, O], &levels, &s)
        .iter()
        .map(|e| (e.candidate, e.onset))
        .collect();
    assert_eq!(eps, [(1, 2)]);
}

/// A quiet step that the `changepoint` policy judged over only 14 runs
/// after its change point (more than `ONSET_LOOKBACK`): dated at the
/// change point, where the runs show the step, not at a split of the new
/// level's own noise among the last runs before the first one over the
/// line (before the fix, run 17, where the new level ticks up 3%).
#[test]
fn a_change_point_far_before_the_first_run_over_the_line_dates_the_alarm() {
    use Judgement::{Over as O, Within as W};
    let s = AlarmSettings::default();
    let (change, candidate, len) = (10, 24, 30);
    let medians: Vec<Option<f64>> = (0..len)
        .map(|i| {
            let wobble = if i % 2 == 0 { 0.5 } else { -0.5 };
            Some(
                wobble
                    + if i < change {
                        100.0
                    } else if i < 17 {
                        108.0
                    } else {
                        111.0
                    },
            )
        })
        .collect();
    let ratios: Vec<Option<f64>> = (0..len)
        .map(|i| Some(if i < candidate { 1.0 } else { 1.2 }))
        .collect();
    let judgements: Vec<Judgement> = (0..len)
        .map(|i| if i < candidate { W } else { O })
        .collect();
    let levels = Levels {
        ratios,
        threshold_ratio: 1.15,
        medians,
        onsets: (0..len)
            .map(|i| (i >= candidate).then_some(change))
            .collect(),
        environment: vec![false; len],
    };
    let eps: Vec<(usize, usize)> = episodes(&judgements, &levels, &s)
        .iter()
        .map(|e| (e.candidate, e.onset))
        .collect();
    assert_eq!(eps, [(candidate, change)]);
    assert!(candidate - change > ONSET_LOOKBACK);
}

#[test]
fn state_machine_rules() {
    use Judgement::{NotJudged as N, Over as O, Within as W};
    let s = AlarmSettings::default();
    let eps_at = |j: &[Judgement], ratios: &[Option<f64>]| {
        let levels = Levels {
            ratios: ratios.to_vec(),
            threshold_ratio: 1.15,
            ..Levels::default()
        };
        episodes(j, &levels, &s)
            .iter()
            .map(|e| (e.candidate, e.state, e.decided, e.closed))
            .collect::<Vec<_>>()
    };
    let eps = |j: &[Judgement]| eps_at(j, &[]);
    // The next two over: confirmed at the second; then open while runs are
    // over, closed after two runs within.
    assert_eq!(
        eps(&[W, O, O, O, W, O, W, W, W]),
        [(1, Confirmed, Some(3), Some(7))]
    );
    assert_eq!(
        episodes(&[W, O, O, O, W, O, W, W, W], &Levels::default(), &s)[0].over,
        [1, 2, 3, 5]
    );
    // A candidate ends at the first run back within the band; a later rise
    // is a new episode with its own date.
    assert_eq!(
        eps(&[W, O, O, W, O, W, W, W]),
        [
            (1, Reverted, Some(3), Some(3)),
            (4, Reverted, Some(5), Some(5))
        ]
    );
    assert_eq!(
        eps(&[O, W, O, W, O]),
        [
            (0, Reverted, Some(1), Some(1)),
            (2, Reverted, Some(3), Some(3)),
            (4, Candidate, None, None)
        ]
    );
    // A noise run, one normal run, then a real step: the step is its own
    // alarm, never dated at the noise run.
    assert_eq!(
        eps(&[W, O, W, O, O, O]),
        [
            (1, Reverted, Some(2), Some(2)),
            (3, Confirmed, Some(5), None)
        ]
    );
    // A ×1.18 noise run right before a ×2.2 step: over both times, but at
    // another level, so the step starts its own episode.
    let levels = [Some(1.0), Some(1.18), Some(2.2), Some(2.25), Some(2.1)];
    assert_eq!(
        eps_at(&[W, O, O, O, O], &levels),
        [
            (1, Reverted, Some(2), Some(1)),
            (2, Confirmed, Some(4), None)
        ]
    );
    // Two noisy runs of one step are one level.
    let levels = [Some(1.0), Some(1.25), Some(1.32), Some(1.28)];
    assert_eq!(
        eps_at(&[W, O, O, O], &levels),
        [(1, Confirmed, Some(3), None)]
    );
    // Runs not judged neither confirm nor revert.
    assert_eq!(eps(&[O, N, N, O, N, O]), [(0, Confirmed, Some(5), None)]);
    assert_eq!(eps(&[W, N, W]), []);
}

#[test]
fn another_level_is_judged_on_a_log_scale() {
    assert!(another_level(Some(1.18), Some(2.2)));
    assert!(
        another_level(Some(2.2), Some(1.18)),
        "a spike before a smaller step"
    );
    assert!(!another_level(Some(1.25), Some(1.32)));
    assert!(
        !another_level(Some(1.3), Some(1.6)),
        "×1.23 apart, nearer each other than 1"
    );
    assert!(!another_level(None, Some(2.0)), "a failed run has no level");
    assert!(
        !another_level(Some(0.9), Some(2.0)),
        "over for its error rate, not its latency"
    );
}

#[test]
fn a_gc_tail_round_fools_only_the_naive_policy() {
    let mut runs = levels(14, &[]);
    // Run 10's first round hits a 2× GC pause; the other four are steady.
    runs[10][0] = 200.0;
    let a = analysed(&[("e", runs)], &[]);
    assert_eq!(alarms_of(&a, "e", Policy::Naive), [(10, Reverted)]);
    for p in [Policy::Median, Policy::Persistent, Policy::Robust] {
        assert_eq!(alarms_of(&a, "e", p), [], "{p}");
    }
}

#[test]
fn a_step_is_caught_at_once_and_confirmed_two_runs_later() {
    let a = analysed(&[("e", levels(12, &[130.0; 6]))], &[(12, "e", Label::Real)]);
    for p in [Policy::Naive, Policy::Median, Policy::Robust] {
        assert_eq!(alarms_of(&a, "e", p), [(12, Confirmed)], "{p}");
    }
    assert_eq!(alarms_of(&a, "e", Policy::Persistent), [(12, Confirmed)]);
    let persistent = a.alarms.of(Policy::Persistent).next().unwrap();
    assert_eq!(
        (
            persistent.raised_run.as_str(),
            persistent.confirmed_run.as_deref()
        ),
        ("run-014", Some("run-014"))
    );
    assert_eq!(persistent.label, Some(Label::Real));

    let reg = &a.alarms.regressions;
    assert_eq!(reg.len(), 1);
    assert_eq!(reg[0].onset_run, "run-012");
    let by = |p: Policy| reg[0].detections.iter().find(|d| d.policy == p).unwrap();
    assert_eq!(by(Policy::Median).delay_runs, Some(0));
    assert_eq!(by(Policy::Median).confirm_delay_runs, Some(2));
    assert_eq!(by(Policy::Persistent).delay_runs, Some(2));
    let days = by(Policy::Persistent).delay_days.unwrap();
    assert!(
        (days - 112.0 / 24.0).abs() < 1e-9,
        "two runs 56 h apart: {days}"
    );

    let stats = &a.alarms.endpoint("e").unwrap().policies[&Policy::Median];
    assert_eq!(
        (stats.alarms, stats.real, stats.noise, stats.unknown),
        (1, 1, 0, 0)
    );
    assert_eq!(stats.fp_rate, Some(0.0));
    assert_eq!((stats.detected, stats.regressions), (1, 1));
    assert_eq!(stats.median_delay_days, Some(0.0));
    assert_eq!(
        stats.agreement,
        Agreement {
            compared: 1,
            agreeing: 1,
            rate: Some(1.0)
        }
    );
}

#[test]
fn a_ramp_is_seen_first_by_robust_and_last_by_persistent() {
    // 100 ms, then +10 ms a run up to 150 ms, where it stays.
    let a = analysed(
        &[(
            "e",
            levels(12, &[110.0, 120.0, 130.0, 140.0, 150.0, 150.0, 150.0]),
        )],
        &[],
    );
    // 110 is within ×1.15, joins the baseline (which stays at 100), 120 is over.
    assert_eq!(alarms_of(&a, "e", Policy::Median), [(13, Confirmed)]);
    assert_eq!(alarms_of(&a, "e", Policy::Naive), [(13, Confirmed)]);
    // 110 against a quiet window is 5 floored MADs and +10%: over already.
    assert_eq!(alarms_of(&a, "e", Policy::Robust), [(12, Confirmed)]);
    let persistent = a.alarms.of(Policy::Persistent).next().unwrap();
    assert_eq!(
        (persistent.candidate_index, persistent.raised_index),
        (13, 15)
    );
}

#[test]
fn a_one_run_spike_reverts_and_never_reaches_persistent() {
    let a = analysed(
        &[("e", levels(12, &[140.0, 100.0, 100.0, 100.0]))],
        &[(12, "e", Label::Noise)],
    );
    for p in [Policy::Naive, Policy::Median, Policy::Robust] {
        assert_eq!(alarms_of(&a, "e", p), [(12, Reverted)], "{p}");
    }
    assert_eq!(alarms_of(&a, "e", Policy::Persistent), []);
    let alarm = a.alarms.of(Policy::Median).next().unwrap();
    assert_eq!(
        (alarm.label, alarm.inferred_label),
        (Some(Label::Noise), Some(InferredLabel::Noise))
    );
    // It ends at the first run back within the band.
    assert_eq!(alarm.closed_run.as_deref(), Some("run-013"));
    let stats = &a.alarms.endpoint("e").unwrap().policies[&Policy::Median];
    assert_eq!(stats.fp_rate, Some(1.0));
    let ci = stats.fp_interval.unwrap();
    assert!(
        ci.low > 0.0 && ci.low < 0.3 && ci.high == 1.0,
        "1 of 1 is weak evidence: {ci:?}"
    );
    assert_eq!(a.alarms.regressions.len(), 0);
}

/// A noisy-neighbour run (all three endpoints ×1.3 together, back the next
/// run) is one problem: each policy that would have alarmed on every
/// endpoint raises one run-wide alarm naming the three, and no endpoint
/// alarm of its own, so it counts in no endpoint's false-positive rate
/// (issue 33). `persistent` never alarmed on it at all.
#[test]
fn a_noisy_neighbour_run_is_one_run_wide_alarm_not_one_per_endpoint() {
    let mut runs = levels(16, &[]);
    runs[12] = rounds_at(130.0);
    let endpoints = [("a", runs.clone()), ("b", runs.clone()), ("c", runs)];
    let a = analysed(&endpoints, &[]);
    for e in ["a", "b", "c"] {
        for p in Policy::ALL {
            assert_eq!(alarms_of(&a, e, p), [], "{e} {p}");
        }
    }
    let shift = a.runs[12].environment_suspect.as_ref().expect("marked");
    assert_eq!(shift.direction, ShiftDirection::Slower);
    let run_wide: Vec<(Policy, &str, Vec<&str>)> = a
        .alarms
        .run_wide
        .iter()
        .map(|r| {
            (
                r.policy,
                r.run.as_str(),
                r.endpoints.iter().map(String::as_str).collect(),
            )
        })
        .collect();
    let run = a.runs[12].id.as_str();
    for p in [Policy::Naive, Policy::Median, Policy::Robust] {
        assert!(
            run_wide.contains(&(p, run, vec!["a", "b", "c"])),
            "{p}: {run_wide:?}"
        );
    }
    assert!(
        !run_wide.iter().any(|(p, _, _)| *p == Policy::Persistent),
        "{run_wide:?}"
    );
    assert_eq!(
        run_wide
            .iter()
            .filter(|(p, _, _)| *p == Policy::Median)
            .count(),
        1,
        "one per run and policy"
    );
    let median = &a.alarms.totals[&Policy::Median];
    assert_eq!((median.alarms, median.fp_rate), (0, None));
}

#[test]
fn labels_on_naive_noise_and_a_missed_regression() {
    // Endpoint "a": three GC rounds in the first position (naive noise),
    // labelled noise; endpoint "b": a 10% step, below ×1.15, that a human
    // found anyway and labelled real.
    let mut a_runs = levels(20, &[]);
    for i in [11, 14, 17] {
        a_runs[i][0] = 190.0;
    }
    let b_runs = levels(12, &[110.0; 8]);
    let a = analysed(
        &[("a", a_runs), ("b", b_runs)],
        &[
            (11, "a", Label::Noise),
            (14, "a", Label::Noise),
            (12, "b", Label::Real),
        ],
    );
    let naive = &a.alarms.endpoint("a").unwrap().policies[&Policy::Naive];
    assert_eq!((naive.alarms, naive.noise, naive.unknown), (3, 2, 1));
    assert_eq!(naive.fp_rate, Some(1.0));
    assert_eq!(
        a.alarms.endpoint("a").unwrap().policies[&Policy::Median].alarms,
        0
    );

    // The median rule misses a 10% step; robust (5 floored MADs, +10%) does not.
    let b = &a.alarms.regressions;
    assert_eq!(b.len(), 1);
    let by = |p: Policy| b[0].detections.iter().find(|d| d.policy == p).unwrap();
    assert_eq!(by(Policy::Median).alarm_run, None);
    assert_eq!(
        by(Policy::Median).runs_watched,
        8,
        "censored: watched to the end"
    );
    assert_eq!(by(Policy::Robust).delay_runs, Some(0));
    let totals = &a.alarms.totals;
    assert_eq!(
        (
            totals[&Policy::Median].regressions,
            totals[&Policy::Median].detected
        ),
        (1, 0)
    );
    assert_eq!(totals[&Policy::Robust].detected, 1);
}

#[test]
fn an_accepted_step_becomes_the_baseline() {
    let a = analysed(
        &[("e", levels(12, &[130.0; 8]))],
        &[(12, "e", Label::Accepted)],
    );
    let points = &a.endpoints[0].points;
    use crate::analyse::Verdict::{Ok, Regression};
    // One label on the first run accepts the stretch: runs 12–16 still
    // regress against the old level but join the window; once half of it
    // is at 130 the baseline follows.
    let verdicts: Vec<_> = points[12..].iter().map(|p| p.verdict).collect();
    assert_eq!(
        verdicts,
        [
            Regression, Regression, Regression, Regression, Regression, Ok, Ok, Ok
        ]
    );
    assert_eq!(points[16].baseline_p99_ms, Some(100.0));
    assert_eq!(points[17].baseline_p99_ms, Some(115.0));
    assert_eq!(points[18].baseline_p99_ms, Some(130.0));
    assert_eq!(alarms_of(&a, "e", Policy::Median), [(12, Confirmed)]);
    let alarm = a.alarms.of(Policy::Median).next().unwrap();
    assert_eq!(
        alarm.closed_run.as_deref(),
        Some("run-018"),
        "closed after two runs back in the band"
    );
    let stats = &a.alarms.endpoint("e").unwrap().policies[&Policy::Median];
    assert_eq!((stats.alarms, stats.real, stats.accepted), (1, 1, 1));
    assert_eq!(
        stats.agreement.compared, 0,
        "accepted alarms are left out of agreement"
    );

    // Without the label the step stays a regression to the end.
    let b = analysed(&[("e", levels(12, &[130.0; 8]))], &[]);
    assert!(
        b.endpoints[0].points[12..]
            .iter()
            .all(|p| p.verdict == crate::analyse::Verdict::Regression)
    );
}

#[test]
fn a_new_load_profile_is_not_compared_with_the_old() {
    let mut arch = archive(&[("e", levels(12, &[160.0; 6]))], &[]);
    for (i, run) in arch.runs.iter_mut().enumerate() {
        let vus = if i < 12 { "50" } else { "100" };
        run.meta.load.insert("vus".into(), vus.into());
    }
    let a = analyse(&arch, vec![]);
    let points = &a.endpoints[0].points;
    let reason = points[12].not_comparable.as_deref().unwrap();
    assert!(reason.contains("vus 50 → 100"), "{reason}");
    assert_eq!(points[12].verdict, crate::analyse::Verdict::NoBaseline);
    // Three runs under the new profile form a baseline at the new level.
    assert_eq!(points[15].baseline_p99_ms, Some(160.0));
    assert_eq!(points[15].not_comparable, None);
    for p in Policy::ALL {
        assert_eq!(alarms_of(&a, "e", p), [], "{p}");
    }
}

#[test]
fn the_median_policy_is_the_verdict() {
    // Whatever the series, `median` is over exactly where the verdict is a regression.
    let runs = levels(12, &[130.0, 100.0, 118.0, 112.0, 140.0, 140.0, 90.0]);
    let a = analysed(&[("e", runs)], &[]);
    let judged = Policy::Median.judge(&a.endpoints[0], &a.settings);
    for (p, j) in a.endpoints[0].points.iter().zip(judged) {
        assert_eq!(
            p.verdict == crate::analyse::Verdict::Regression,
            j == Judgement::Over,
            "{}",
            p.run
        );
    }
}

#[test]
fn weekly_review_of_the_latest_week() {
    use crate::analyse::weekly::{WeekSpec, weekly_review};
    // Runs are 56 h apart, so the 7 days up to the latest (run 19) hold runs 17–19.
    let a_runs = levels(15, &[130.0; 5]); // step at 15, confirmed at 17
    let b_runs = levels(19, &[140.0]); // spike at 19, still a candidate
    let mut c_runs = levels(20, &[]);
    for run in &mut c_runs[17..] {
        *run = vec![80.0, 100.0, 100.0, 100.0, 160.0]; // same median, far noisier
    }
    let a = analysed(
        &[("a", a_runs), ("b", b_runs), ("c", c_runs)],
        &[(15, "a", Label::Real)],
    );
    let r = weekly_review(&a, WeekSpec::Latest, Policy::Median).unwrap();
    // The ISO week of run 19 (Wednesday 2026-02-18): Monday 02-16 on.
    assert_eq!(r.title, "2026-W08");
    assert_eq!(r.runs, [run_id(18), run_id(19)]);
    let new: Vec<(&str, &str, AlarmState)> = r
        .new_alarms
        .iter()
        .map(|x| {
            (
                x.alarm.endpoint.as_str(),
                x.alarm.run.as_str(),
                x.alarm.state,
            )
        })
        .collect();
    assert_eq!(new, [("b", run_id(19).as_str(), Candidate)]);
    assert_eq!(r.new_groups.len(), 1);
    assert_eq!(r.new_groups[0].alarms.len(), 1);
    // The back-test's counts still hold every policy's.
    assert_eq!(r.new_by_policy[&Policy::Persistent], 0);
    assert_eq!(r.new_by_policy[&Policy::Naive], 1);
    let untriaged: Vec<&str> = r
        .untriaged
        .iter()
        .map(|x| x.alarm.endpoint.as_str())
        .collect();
    assert_eq!(untriaged, ["b"], "a's alarm is labelled");
    let confirmed: Vec<&str> = r
        .confirmed
        .iter()
        .map(|x| x.alarm.endpoint.as_str())
        .collect();
    assert_eq!(
        confirmed,
        ["a"],
        "confirmed before the week, still open in it"
    );
    assert_eq!(r.noisier.len(), 1);
    assert_eq!(r.noisier[0].endpoint, "c");
    assert!(
        (r.noisier[0].spread_now - 0.8).abs() < 1e-9
            && (r.noisier[0].spread_before - 0.03).abs() < 1e-9
    );
    // The history starts on 2026-01-05 (ISO week 2): the 12 weeks up to W08
    // would start in 2025-W49, but no row comes before the first run.
    assert_eq!(r.fp_by_week.first().unwrap().week, "2026-W02");
    assert_eq!(r.fp_by_week.len(), 7);
    // Run 15 (2026-02-09 03:00) is the Monday of ISO week 7.
    let w7 = r.fp_by_week.iter().find(|w| w.week == "2026-W07").unwrap();
    assert_eq!(
        (
            w7.policies[&Policy::Median].alarms,
            w7.policies[&Policy::Median].real
        ),
        (1, 1)
    );
    assert_eq!(w7.policies[&Policy::Median].fp_rate, Some(0.0));

    // An ISO week with nothing in it is an empty review, not an error.
    let empty = weekly_review(
        &a,
        WeekSpec::Iso {
            year: 2025,
            week: 10,
        },
        Policy::Median,
    )
    .unwrap();
    assert!(empty.runs.is_empty() && empty.new_alarms.is_empty() && empty.untriaged.is_empty());
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    fn judgement() -> impl Strategy<Value = Judgement> {
        prop_oneof![
            Just(Judgement::Over),
            Just(Judgement::Within),
            Just(Judgement::NotJudged)
        ]
    }

    proptest! {
        #[test]
        fn episodes_follow_the_rules(js in proptest::collection::vec(judgement(), 0..60)) {
            let s = AlarmSettings::default();
            let eps = episodes(&js, &Levels::default(), &s);
            let mut previous_end: Option<usize> = None;
            for ep in &eps {
                prop_assert_eq!(js[ep.candidate], Judgement::Over);
                prop_assert_eq!(js[ep.last_over], Judgement::Over);
                prop_assert!(ep.over.iter().all(|&i| js[i] == Judgement::Over));
                prop_assert_eq!(ep.over.first(), Some(&ep.candidate));
                if let Some(end) = previous_end {
                    prop_assert!(ep.candidate > end, "episodes never overlap");
                }
                // The judged runs after the candidate, up to the decision.
                let after: Vec<(usize, Judgement)> = js
                    .iter()
                    .copied()
                    .enumerate()
                    .skip(ep.candidate + 1)
                    .filter(|(_, j)| *j != Judgement::NotJudged)
                    .collect();
                let first_within = after.iter().position(|(_, j)| *j == Judgement::Within);
                match ep.state {
                    AlarmState::Confirmed => {
                        // The next confirm_needed judged runs are all over.
                        prop_assert!(first_within.is_none_or(|w| w >= s.confirm_needed));
                        prop_assert_eq!(ep.decided, Some(after[s.confirm_needed - 1].0));
                    }
                    AlarmState::Reverted => {
                        // Ended at the first run back within the band.
                        let w = first_within.expect("a reverted candidate met a run within");
                        prop_assert!(w < s.confirm_needed);
                        prop_assert_eq!(ep.closed, Some(after[w].0));
                        prop_assert_eq!(ep.closed, ep.decided);
                    }
                    AlarmState::Candidate => {
                        prop_assert!(ep.closed.is_none() && after.len() < s.confirm_needed, "undecided only at the end");
                        prop_assert!(first_within.is_none());
                    }
                }
                previous_end = ep.closed.or(Some(js.len()));
            }
            // Every over run belongs to an episode.
            for (i, j) in js.iter().enumerate() {
                if *j == Judgement::Over {
                    prop_assert!(eps.iter().any(|e| e.candidate <= i && i <= e.end(js.len())), "run {} is in no episode", i);
                }
            }
        }

        #[test]
        fn levels_only_split_episodes(
            js in proptest::collection::vec(judgement(), 0..60),
            levels in proptest::collection::vec(proptest::option::of(0.8f64..3.0), 60),
        ) {
            let s = AlarmSettings::default();
            let levels = Levels { ratios: levels, threshold_ratio: 1.15, ..Levels::default() };
            let eps = episodes(&js, &levels, &s);
            let mut previous_end: Option<usize> = None;
            for ep in &eps {
                prop_assert_eq!(js[ep.candidate], Judgement::Over);
                if let Some(end) = previous_end {
                    prop_assert!(ep.candidate > end, "episodes never overlap");
                }
                previous_end = ep.closed.or(Some(js.len()));
                // Up to its decision, each over run of an episode is at the
                // level of the one before it.
                let decided = ep.decided.unwrap_or(js.len());
                let before: Vec<usize> = ep.over.iter().copied().filter(|&i| i <= decided).collect();
                for pair in before.windows(2) {
                    prop_assert!(!another_level(levels.ratios[pair[0]], levels.ratios[pair[1]]));
                }
            }
            for (i, j) in js.iter().enumerate() {
                if *j == Judgement::Over {
                    prop_assert!(eps.iter().any(|e| e.candidate <= i && i <= e.end(js.len())), "run {} is in no episode", i);
                }
            }
        }
    }
}

#[test]
fn an_accepted_change_stops_the_changepoint_policy_too() {
    // A 35% step at run 12 that stays: changepoint alarms one run later.
    let runs = levels(12, &[135.0; 8]);
    let a = analysed(&[("e", runs.clone())], &[]);
    assert_eq!(alarms_of(&a, "e", Policy::ChangePoint), [(13, Confirmed)]);
    // Accepted at its first run: the new level is the normal one, for the
    // change-point policy as for the baseline.
    let a = analysed(&[("e", runs)], &[(12, "e", Label::Accepted)]);
    assert_eq!(alarms_of(&a, "e", Policy::ChangePoint), []);
    assert!(
        a.endpoints[0].points[12..15]
            .iter()
            .all(|p| p.accepted_change)
    );
}

/// Issue 14's onset rule on generated histories: a noisy-neighbour run
/// (×1.18, every round) one or two runs before a real ×2.2 step. Under
/// every policy, a confirmed alarm that covers the step starts at the
/// step's first run (±0), and its suspect range is the run before it and
/// the step's first run, with both commits; the default policy confirms
/// the step at its first run.
///
/// Not every history: known ways a generated history still dates an
/// alarm elsewhere are counted and must stay rare (≤ 10 % of `naive`'s
/// alarms, ≤ 1 % of another policy's; ≤ 1 % of the histories not
/// confirmed at once by `median`): a GC-tail run between the noise run
/// and the step past the levels' midpoint is the step's first run by the
/// data (issue 33's dating reads the medians for every policy). `naive` (one round judged) can read
/// the normal run between the noise run and the step as over its line, so
/// its episode is unbroken from the noise run; and under noisy noise a
/// GC-tail run far above a two-run candidate reverts it as "another level"
/// (`another_level` compares one run with the next), so the step's alarm
/// is dated at the GC-tail run. Dating at the change is issue 33's.
#[test]
fn a_noise_run_never_lends_its_date_to_a_real_step() {
    use crate::eval::generate::{Injection, NOISE_MODELS, Rng, history};
    let onset = 30;
    let (mut checked, mut skipped, mut histories) = (0, 0, 0);
    let (mut misdated, mut not_confirmed) = (Vec::new(), Vec::new());
    let mut naive_checked = 0usize;
    // The injected ×1.18 run is the noise run; the models' own random
    // neighbour runs (×1.25) are turned off so none lands on it by chance
    // (×1.47 would be nearer the new level than the old).
    for noise in NOISE_MODELS.map(|m| crate::eval::generate::NoiseModel {
        neighbour_run_prob: 0.0,
        ..m
    }) {
        let noise = &noise;
        for gap in [1, 2] {
            for seed in 0..40u64 {
                let mut rng = Rng::derive(seed, &[gap as u64]);
                let mut h = history(&mut rng, noise, Injection::Step(1.2), 45, 5, onset);
                for v in &mut h.rounds[onset - gap] {
                    *v *= 1.18;
                }
                // Rarely, GC-tail rounds lift the noise run's median to the
                // new level itself (three of five rounds ×1.8): by the data
                // it is no longer a ×1.18 noise run, so it is left out.
                let noise_level = crate::stats::median(&h.rounds[onset - gap]).unwrap() / 100.0;
                if noise_level > 2.2f64.sqrt() {
                    skipped += 1;
                    continue;
                }
                let mut archive = crate::test_support::archive_of(&[("e", h.rounds.clone())]);
                for (i, run) in archive.runs.iter_mut().enumerate() {
                    run.meta.commit = Some(format!("c{i:03}"));
                }
                let a = analyse(&archive, vec![]);
                for alarm in a
                    .alarms
                    .alarms
                    .iter()
                    .filter(|x| x.state == Confirmed && x.over_runs.contains(&run_id(onset)))
                {
                    let at = (seed, noise.name, gap, alarm.policy);
                    checked += 1;
                    naive_checked += usize::from(alarm.policy == Policy::Naive);
                    if alarm.run != run_id(onset) {
                        misdated.push((at, alarm.run.clone()));
                        continue;
                    }
                    assert_eq!(
                        alarm.suspect,
                        crate::analyse::evidence::SuspectRange {
                            last_old_run: Some(run_id(onset - 1)),
                            last_old_commit: Some(format!("c{:03}", onset - 1)),
                            first_new_run: run_id(onset),
                            first_new_commit: Some(format!("c{onset:03}")),
                        },
                        "{at:?}"
                    );
                }
                // The step is caught and confirmed under the default policy.
                histories += 1;
                if !a
                    .alarms
                    .of(Policy::Median)
                    .any(|x| x.state == Confirmed && x.run == run_id(onset))
                {
                    not_confirmed.push((seed, noise.name, gap));
                }
            }
        }
    }
    assert!(skipped <= 4, "{skipped} histories left out");
    // Every policy that judges the run's median dates its alarms at the
    // step, all but a boundary run (below); `naive` (one round) may
    // bridge, rarely.
    let naive_checked = naive_checked;
    let (naive, others): (Vec<_>, Vec<_>) = misdated
        .iter()
        .partition(|((_, _, _, policy), _)| *policy == Policy::Naive);
    // A third way, for every policy that dates by the run medians: a
    // GC-tail run between the noise run and the step that reads past the
    // midpoint of the two levels on a log scale (×1.5 between 100 and 210
    // ms, seed 9 under noisy noise) is, by the data, the step's first run.
    // Rare: at most 1 % of the other policies' alarms.
    let others_checked = checked - naive_checked;
    assert!(
        others.len() * 100 <= others_checked,
        "{} of {others_checked} alarms not dated at the step: {others:?}",
        others.len()
    );
    assert!(
        naive.len() * 10 <= naive_checked,
        "{} of {naive_checked} naive alarms not dated at the step: {naive:?}",
        naive.len()
    );
    assert!(
        not_confirmed.len() * 100 <= histories,
        "{} of {histories} steps not confirmed at their first run by median: {not_confirmed:?}",
        not_confirmed.len()
    );
    eprintln!(
        "{} of {checked} alarms not dated at the step {misdated:?}; {} of {histories} steps not confirmed at once {not_confirmed:?}",
        misdated.len(),
        not_confirmed.len()
    );
    assert!(checked >= 2 * 2 * 36 * 4, "{checked} alarms checked");
}

/// The weekly page lists one row per endpoint and suspect commit range:
/// a second alarm on the same commits, or one dated inside one commit's
/// runs ("6694d24 → 6694d24"), joins the row of the change it belongs to.
#[test]
fn weekly_groups_alarms_by_endpoint_and_suspect_commits() {
    use crate::analyse::evidence::SuspectRange;
    use crate::analyse::weekly::{ReviewAlarm, group_alarms};
    let a = analysed(&[("a", levels(15, &[130.0; 5]))], &[]);
    let template = a.alarms.of(Policy::Median).next().unwrap().clone();
    let alarm = |endpoint: &str, run: usize, old: Option<(usize, &str)>, new: &str| {
        let mut x = template.clone();
        x.endpoint = endpoint.to_string();
        x.run = run_id(run);
        x.suspect = SuspectRange {
            last_old_run: old.map(|(r, _)| run_id(r)),
            last_old_commit: old.map(|(_, c)| c.to_string()),
            first_new_run: run_id(run),
            first_new_commit: Some(new.to_string()),
        };
        ReviewAlarm {
            alarm: x,
            endpoint_name: endpoint.to_uppercase(),
        }
    };
    let alarms = [
        // reviews: the N+1 came with 6694d24 (runs 7 and 8 are both of it).
        alarm("reviews", 7, Some((6, "2453067")), "6694d24"),
        // authors: faster, another endpoint of the same commit.
        alarm("authors", 7, Some((6, "2453067")), "6694d24"),
        // reviews again, dated at the second run of the commit: no commit
        // lies between its ends.
        alarm("reviews", 8, Some((7, "6694d24")), "6694d24"),
        // reviews, a later change: its own row.
        alarm("reviews", 9, Some((8, "6694d24")), "9e0d111"),
    ];
    let groups = group_alarms(&alarms);
    let rows: Vec<(&str, Vec<&str>)> = groups
        .iter()
        .map(|g| {
            (
                g.endpoint.as_str(),
                g.alarms.iter().map(|x| x.run.as_str()).collect(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("reviews", vec!["run-007", "run-008"]),
            ("authors", vec!["run-007"]),
            ("reviews", vec!["run-009"]),
        ]
    );
    assert_eq!(groups[0].endpoint_name, "REVIEWS");
    assert_eq!(groups[0].latest().run, "run-008");
    // Without commits the runs are the range: two alarms, two rows.
    let mut bare = alarms[0].clone();
    bare.alarm.suspect.last_old_commit = None;
    bare.alarm.suspect.first_new_commit = None;
    let mut later = bare.clone();
    later.alarm.run = run_id(8);
    later.alarm.suspect.last_old_run = Some(run_id(7));
    later.alarm.suspect.first_new_run = run_id(8);
    assert_eq!(group_alarms(&[bare, later]).len(), 2);
}
