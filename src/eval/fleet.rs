//! The fleet evaluation: whole fleets of endpoints measured in the same
//! runs, scored the way `perfdash check` gates them.
//!
//! Two fleets ([`mixed_fleet`], [`typical_fleet`]) are generated from the
//! seed ([`super::generate::fleet`]), each history analysed as one archive
//! by the real [`crate::analyse::analyse`] (baselines, verdicts, the
//! environment-suspect mark) and each policy's judgements read as the gate
//! reads them:
//!
//! * the gate **fails an endpoint** in a run when the policy judges it over
//!   its line (a policy that raises at confirmation: once the alarm is
//!   confirmed);
//! * in a run marked environment suspect (slower) the alarms that begin in
//!   it are **one run-wide alarm**, not one per endpoint
//!   (`analyse::alarms::part_of_run_wide`, docs/alarms.md);
//! * a **false alarm run** is an endpoint failed in a run it had not
//!   regressed in (outside environment-suspect runs), or a run-wide alarm
//!   (counted as one, whatever the number of endpoints: an environment
//!   shift is never a code regression), per 100 endpoint-runs with a
//!   baseline;
//! * a step is **caught within h runs** when the gate fails that endpoint
//!   (not as part of a run-wide alarm) in one of the runs from the step's
//!   first run to h runs after it, and
//!   **dated at the step** when the alarm holding that run starts at the
//!   step's first run (its suspect range then ends at the culprit).

use std::collections::BTreeMap;

use chrono::{Duration, TimeZone, Utc};
use rayon::prelude::*;
use serde::Serialize;

use super::generate::{self, EndpointClass, Fleet, FleetModel, NoiseModel, StepSize};
use super::policies::EvalPolicy;
use super::{Estimate, EvalConfig, per_100_runs_with_bootstrap, quantile, wilson};
use crate::analyse::alarms::{self, AlarmState, Levels};
use crate::analyse::environment::ShiftDirection;
use crate::analyse::gate::RunSelector;
use crate::analyse::policy::DEFAULT_POLICY;
use crate::analyse::policy::{Dated, Judgement, RaisedAt};
use crate::analyse::{AnalyseOptions, Scope, Verdict, analyse_scoped};
use crate::config::Settings;
use crate::model::{Archive, EndpointRun, Round, RoundStats, Run, SourceFormat};

/// Quiet endpoints: 2% run-to-run noise.
pub const QUIET: NoiseModel = NoiseModel {
    name: "quiet",
    between_run: 0.02,
    within_run: 0.03,
    gc_round_prob: 0.04,
    gc_factor: 1.8,
    neighbour_run_prob: 0.0,
    neighbour_factor: 1.0,
};

/// Noisy endpoints: 15% run-to-run noise.
pub const NOISY: NoiseModel = NoiseModel {
    name: "noisy",
    between_run: 0.15,
    within_run: 0.08,
    gc_round_prob: 0.08,
    gc_factor: 1.8,
    neighbour_run_prob: 0.0,
    neighbour_factor: 1.0,
};

/// Typical endpoints: the "typical" noise of the scenario tables.
pub const TYPICAL: NoiseModel = NoiseModel {
    name: "typical",
    neighbour_run_prob: 0.0,
    neighbour_factor: 1.0,
    ..generate::NOISE_MODELS[0]
};

/// Runs per fleet history: 26 weeks at three runs a week.
pub const FLEET_RUNS: usize = 78;

/// Six quiet endpoints that each take one +10% step and six noisy ones
/// that never regress, with noisy-neighbour runs (2% of runs, ×1.25 on
/// every endpoint).
pub fn mixed_fleet() -> FleetModel {
    FleetModel {
        name: "mixed",
        classes: vec![
            EndpointClass {
                name: "quiet",
                noise: QUIET,
                count: 6,
                step: StepSize::Fixed(1.10),
            },
            EndpointClass {
                name: "noisy",
                noise: NOISY,
                count: 6,
                step: StepSize::None,
            },
        ],
        neighbour_run_prob: 0.02,
        neighbour_factor: 1.25,
        runs: FLEET_RUNS,
        first_onset: 24,
        last_onset: FLEET_RUNS - 12,
    }
}

/// Twelve typical endpoints, six of which take one step of ×1.25–2.2,
/// with noisy-neighbour runs (1% of runs, ×1.25 on every endpoint).
pub fn typical_fleet() -> FleetModel {
    FleetModel {
        name: "typical",
        classes: vec![
            EndpointClass {
                name: "typical, stepping",
                noise: TYPICAL,
                count: 6,
                step: StepSize::Between(1.25, 2.2),
            },
            EndpointClass {
                name: "typical",
                noise: TYPICAL,
                count: 6,
                step: StepSize::None,
            },
        ],
        neighbour_run_prob: 0.01,
        neighbour_factor: 1.25,
        runs: FLEET_RUNS,
        first_onset: 24,
        last_onset: FLEET_RUNS - 12,
    }
}

/// Runs from which a baseline's level is compared with the true level
/// (the noise line needs its window filled first).
pub const SETTLED_FROM_RUN: usize = 20;

/// How steps of one endpoint class were caught.
#[derive(Debug, Clone, Serialize)]
pub struct StepResult {
    /// The class's smallest step (1.10 = +10%).
    pub smallest_step: f64,
    pub steps: usize,
    /// Failed within 3 and within 6 runs of the step's first run.
    pub caught_3: Estimate,
    pub caught_6: Estimate,
    /// How many were caught within 6 runs …
    pub caught: usize,
    /// … and of those, the share whose alarm starts at the step's first
    /// run (the suspect range ends at the culprit).
    pub dated: Estimate,
    /// Median runs from the step's first run to the first failure, among
    /// those caught within 6.
    pub median_delay: f64,
}

/// One policy on one fleet.
#[derive(Debug, Clone, Serialize)]
pub struct FleetPolicyResult {
    pub policy: String,
    /// False alarm runs per 100 endpoint-runs (endpoint alarms outside
    /// environment-suspect runs, plus one per run-wide alarm), with a 95%
    /// bootstrap interval over histories.
    pub false_alarm_runs: Estimate,
    /// The same, endpoint alarms only, per class.
    pub false_by_class: BTreeMap<String, Estimate>,
    /// Run-wide alarms per 100 runs.
    pub run_wide_per_100_runs: f64,
    pub endpoint_runs: usize,
    /// Class name → how its steps were caught (classes with steps only).
    pub steps: BTreeMap<String, StepResult>,
}

/// Where a noisy endpoint's baseline settles against its true level.
#[derive(Debug, Clone, Serialize)]
pub struct BaselineDrift {
    pub class: String,
    /// Baseline ÷ true level over the runs from [`SETTLED_FROM_RUN`] on.
    pub median: f64,
    pub p10: f64,
    pub p90: f64,
    /// Share of those runs whose verdict is `regression` (none regressed).
    pub regression_share: f64,
}

/// One fleet, every policy.
#[derive(Debug, Clone, Serialize)]
pub struct FleetResult {
    pub fleet: FleetModel,
    pub histories: usize,
    pub policies: Vec<FleetPolicyResult>,
    /// Per endpoint class without steps.
    pub baselines: Vec<BaselineDrift>,
    /// Per endpoint class: the lines its runs were judged by.
    pub lines: Vec<LineStats>,
}

/// The p99 lines one endpoint class's runs were judged by (the noise line
/// where it is wider than the threshold ratio).
#[derive(Debug, Clone, Serialize)]
pub struct LineStats {
    pub class: String,
    /// Share of judged runs whose line is wider than the threshold ratio.
    pub widened: f64,
    /// The line ratio: median and 90th percentile over judged runs.
    pub median: f64,
    pub p90: f64,
}

/// What the analysis made of one run of one endpoint, for the baseline and
/// line statistics.
#[derive(Debug, Clone, Copy)]
struct Point {
    baseline: Option<f64>,
    regression: bool,
    /// The line ratio and the threshold ratio, when judged.
    line: Option<(f64, f64)>,
}

/// What one policy did on one endpoint of one history.
#[derive(Debug, Clone, Default)]
struct EndpointScore {
    false_runs: usize,
    judged_runs: usize,
    /// For a stepped endpoint: (runs to the first failure, dated at the
    /// step), `None` when never failed from the step on.
    step: Option<Option<(usize, bool)>>,
}

/// One history, one policy.
#[derive(Debug, Clone, Default)]
struct HistoryScore {
    endpoints: Vec<EndpointScore>,
    run_wide_alarms: usize,
    runs: usize,
}

/// One generated fleet history: the fleet, each policy's score and each
/// endpoint's points (baseline, verdict, line).
type HistoryOutcome = (Fleet, Vec<HistoryScore>, Vec<Vec<Point>>);

/// Evaluates `policies` on `model`, `config.series` histories of it.
pub fn evaluate_fleet(
    config: &EvalConfig,
    model: &FleetModel,
    fleet_index: u64,
    policies: &[Box<dyn EvalPolicy>],
    settings: &Settings,
) -> FleetResult {
    let per_history: Vec<HistoryOutcome> = (0..config.series)
        .into_par_iter()
        .map(|h| {
            let fleet = generate::fleet(
                config.seed,
                &[0xF1EE7, fleet_index, h as u64],
                model,
                config.rounds,
            );
            let archive = fleet_archive(&fleet, settings);
            // Baselines, lines, verdicts and the run-wide shifts, as
            // production makes them; each policy is judged below, so the
            // analysis need not judge them all (nor draw charts).
            let options = AnalyseOptions {
                // Evidence (bands, shifts) for no run: nothing here reads it.
                checked_run: Some(RunSelector::Id(String::new())),
                ..AnalyseOptions::default()
            };
            let analysis =
                analyse_scoped(&archive, Vec::new(), Scope::Gate(DEFAULT_POLICY), &options);
            let suspect: Vec<bool> = analysis
                .runs
                .iter()
                .map(|r| {
                    r.environment_suspect
                        .as_ref()
                        .is_some_and(|s| s.direction == ShiftDirection::Slower)
                })
                .collect();
            let scores = policies
                .iter()
                .map(|p| score_history(p.as_ref(), &fleet, &analysis, &suspect, settings))
                .collect();
            let baselines = analysis
                .endpoints
                .iter()
                .map(|e| {
                    e.points
                        .iter()
                        .map(|p| Point {
                            baseline: p.baseline_p99_ms,
                            regression: p.verdict == Verdict::Regression,
                            line: p
                                .baseline_p99_ms
                                .map(|_| (p.line_ratio(), p.decided_from.threshold_ratio)),
                        })
                        .collect()
                })
                .collect();
            (fleet, scores, baselines)
        })
        .collect();
    let policies_out = policies
        .iter()
        .enumerate()
        .map(|(pi, p)| {
            let histories: Vec<&HistoryScore> = per_history.iter().map(|h| &h.1[pi]).collect();
            summarise(p.name(), model, &per_history, &histories, config)
        })
        .collect();
    let baselines = baseline_drift(config, model, fleet_index, &per_history);
    let lines = model
        .classes
        .iter()
        .enumerate()
        .map(|(ci, class)| {
            let mut lines: Vec<(f64, f64)> = per_history
                .iter()
                .flat_map(|(fleet, _, points)| {
                    fleet
                        .endpoints
                        .iter()
                        .zip(points)
                        .filter(|(e, _)| e.class == ci)
                        .flat_map(|(_, p)| p.iter().filter_map(|p| p.line))
                })
                .collect();
            let widened = lines.iter().filter(|(line, ratio)| line > ratio).count();
            let share = widened as f64 / lines.len().max(1) as f64;
            lines.sort_by(|a, b| a.0.total_cmp(&b.0));
            let sorted: Vec<f64> = lines.iter().map(|l| l.0).collect();
            LineStats {
                class: class.name.to_string(),
                widened: share,
                median: quantile(&sorted, 0.5),
                p90: quantile(&sorted, 0.9),
            }
        })
        .collect();
    FleetResult {
        fleet: model.clone(),
        histories: config.series,
        policies: policies_out,
        baselines,
        lines,
    }
}

/// Scores one policy on one analysed fleet history.
fn score_history(
    policy: &dyn EvalPolicy,
    fleet: &Fleet,
    analysis: &crate::analyse::Analysis,
    suspect: &[bool],
    settings: &Settings,
) -> HistoryScore {
    let runs = suspect.len();
    let mut failing_in_run = vec![false; runs];
    let mut endpoints = Vec::with_capacity(fleet.endpoints.len());
    for (k, e) in analysis.endpoints.iter().enumerate() {
        let truth = &fleet.endpoints[k];
        let Dated { judgements, onsets } = policy.judge(e, settings);
        let levels = Levels::of(e, &analysis.runs).with_onsets(onsets);
        let episodes = alarms::episodes(&judgements, &levels, &settings.alarms);
        let holding = |i: usize| {
            episodes
                .iter()
                .find(|ep| (ep.candidate..=ep.end(judgements.len())).contains(&i))
        };
        let fails: Vec<bool> = judgements
            .iter()
            .enumerate()
            .map(|(i, j)| {
                *j == Judgement::Over
                    && match policy.raised_at() {
                        RaisedAt::Candidate => true,
                        RaisedAt::Confirmation => holding(i).is_some_and(|ep| {
                            ep.state == AlarmState::Confirmed && ep.decided.is_some_and(|d| d <= i)
                        }),
                    }
            })
            .collect();
        // The gate's rule for the run in front of it: an alarm that begins
        // in a run whose endpoints moved slower together is part of that
        // run's one run-wide alarm (`alarms::part_of_run_wide`), not the
        // endpoint's.
        let run_wide = |i: usize| suspect[i] && holding(i).is_some_and(|ep| ep.candidate == i);
        let mut score = EndpointScore::default();
        for (i, p) in e.points.iter().enumerate() {
            let judged = p.baseline_p99_ms.is_some()
                && !matches!(p.verdict, Verdict::NoBaseline | Verdict::Insufficient);
            if judged {
                score.judged_runs += 1;
            }
            let regressed = truth.step.is_some_and(|(onset, _)| i >= onset);
            if fails[i] {
                if run_wide(i) {
                    failing_in_run[i] = true;
                } else if !regressed {
                    score.false_runs += 1;
                }
            }
        }
        if let Some((onset, _)) = truth.step {
            score.step = Some(
                (onset..runs)
                    .find(|&i| fails[i] && !run_wide(i))
                    .map(|i| (i - onset, holding(i).is_some_and(|ep| ep.onset == onset))),
            );
        }
        endpoints.push(score);
    }
    HistoryScore {
        endpoints,
        run_wide_alarms: failing_in_run.iter().filter(|f| **f).count(),
        runs,
    }
}

fn summarise(
    name: &str,
    model: &FleetModel,
    per_history: &[HistoryOutcome],
    histories: &[&HistoryScore],
    config: &EvalConfig,
) -> FleetPolicyResult {
    let totals: Vec<(f64, f64)> = histories
        .iter()
        .map(|h| {
            let false_runs: usize = h.endpoints.iter().map(|e| e.false_runs).sum();
            let judged: usize = h.endpoints.iter().map(|e| e.judged_runs).sum();
            ((false_runs + h.run_wide_alarms) as f64, judged as f64)
        })
        .collect();
    let endpoint_runs = totals.iter().map(|t| t.1 as usize).sum();
    let runs: usize = histories.iter().map(|h| h.runs).sum();
    let run_wide: usize = histories.iter().map(|h| h.run_wide_alarms).sum();
    let mut false_by_class = BTreeMap::new();
    let mut steps = BTreeMap::new();
    for (ci, class) in model.classes.iter().enumerate() {
        let of_class = |h: &HistoryScore, fleet: &Fleet| -> Vec<EndpointScore> {
            fleet
                .endpoints
                .iter()
                .zip(&h.endpoints)
                .filter(|(f, _)| f.class == ci)
                .map(|(_, s)| s.clone())
                .collect()
        };
        let per: Vec<Vec<EndpointScore>> = histories
            .iter()
            .zip(per_history)
            .map(|(h, (fleet, ..))| of_class(h, fleet))
            .collect();
        let class_totals: Vec<(f64, f64)> = per
            .iter()
            .map(|eps| {
                (
                    eps.iter().map(|e| e.false_runs).sum::<usize>() as f64,
                    eps.iter().map(|e| e.judged_runs).sum::<usize>() as f64,
                )
            })
            .collect();
        false_by_class.insert(
            class.name.to_string(),
            per_100_runs_with_bootstrap(&class_totals, config),
        );
        if class.step == StepSize::None {
            continue;
        }
        let outcomes: Vec<Option<(usize, bool)>> =
            per.iter().flatten().filter_map(|e| e.step).collect();
        let n = outcomes.len();
        let within = |h: usize| {
            outcomes
                .iter()
                .filter(|o| o.is_some_and(|(d, _)| d <= h))
                .count()
        };
        let caught: Vec<(usize, bool)> = outcomes
            .iter()
            .flatten()
            .filter(|(d, _)| *d <= 6)
            .copied()
            .collect();
        let mut delays: Vec<f64> = caught.iter().map(|(d, _)| *d as f64).collect();
        delays.sort_by(f64::total_cmp);
        steps.insert(
            class.name.to_string(),
            StepResult {
                smallest_step: match class.step {
                    StepSize::Fixed(f) => f,
                    StepSize::Between(lo, _) => lo,
                    StepSize::None => 1.0,
                },
                steps: n,
                caught_3: wilson(within(3), n),
                caught_6: wilson(within(6), n),
                caught: caught.len(),
                dated: wilson(caught.iter().filter(|(_, d)| *d).count(), caught.len()),
                median_delay: quantile(&delays, 0.5),
            },
        );
    }
    FleetPolicyResult {
        policy: name.to_string(),
        false_alarm_runs: per_100_runs_with_bootstrap(&totals, config),
        false_by_class,
        run_wide_per_100_runs: if runs == 0 {
            0.0
        } else {
            100.0 * run_wide as f64 / runs as f64
        },
        endpoint_runs,
        steps,
    }
}

/// Baseline ÷ true level of the classes without steps, from run
/// [`SETTLED_FROM_RUN`] on; the true level is the median run median of the
/// class's noise (and the fleet's neighbour runs), by simulation.
fn baseline_drift(
    config: &EvalConfig,
    model: &FleetModel,
    fleet_index: u64,
    per_history: &[HistoryOutcome],
) -> Vec<BaselineDrift> {
    let mut out = Vec::new();
    for (ci, class) in model.classes.iter().enumerate() {
        if class.step != StepSize::None {
            continue;
        }
        let truth = true_level(config, model, fleet_index, ci);
        let mut ratios = Vec::new();
        let mut regressions = 0usize;
        for (fleet, _, baselines) in per_history {
            for (k, e) in fleet.endpoints.iter().enumerate() {
                if e.class != ci {
                    continue;
                }
                for p in baselines[k].iter().skip(SETTLED_FROM_RUN) {
                    let Some(b) = p.baseline else { continue };
                    regressions += usize::from(p.regression);
                    ratios.push(b / truth);
                }
            }
        }
        ratios.sort_by(f64::total_cmp);
        out.push(BaselineDrift {
            class: class.name.to_string(),
            median: quantile(&ratios, 0.5),
            p10: quantile(&ratios, 0.1),
            p90: quantile(&ratios, 0.9),
            regression_share: if ratios.is_empty() {
                0.0
            } else {
                regressions as f64 / ratios.len() as f64
            },
        });
    }
    out
}

/// The median run median of one class's endpoints (with the fleet's
/// neighbour runs), from 20,000 generated runs: what a baseline should
/// settle at.
pub fn true_level(config: &EvalConfig, model: &FleetModel, fleet_index: u64, class: usize) -> f64 {
    let runs = 20_000;
    let mut rng = generate::Rng::derive(config.seed, &[0x7E7E, fleet_index, class as u64]);
    let neighbours: Vec<bool> = (0..runs)
        .map(|_| rng.uniform() < model.neighbour_run_prob)
        .collect();
    let h = generate::leveled_history(
        &mut rng,
        &model.classes[class].noise,
        |_| 1.0,
        &neighbours,
        model.neighbour_factor,
        config.rounds,
    );
    let mut medians: Vec<f64> = h
        .rounds
        .iter()
        .filter_map(|r| crate::stats::median(r))
        .collect();
    medians.sort_by(f64::total_cmp);
    quantile(&medians, 0.5)
}

/// One fleet history as an archive: endpoints `000`, `001`, … in fleet
/// order, runs 56 hours apart.
pub fn fleet_archive(fleet: &Fleet, settings: &Settings) -> Archive {
    let runs = fleet.neighbour_runs.len();
    let t0 = Utc
        .with_ymd_and_hms(2026, 1, 5, 3, 0, 0)
        .single()
        .expect("valid date");
    Archive {
        root: "generated".into(),
        settings: settings.clone(),
        runs: (0..runs)
            .map(|i| Run {
                capacity: Default::default(),
                id: format!("run-{i:03}"),
                started_at: t0 + Duration::hours(56 * i as i64),
                meta: Default::default(),
                endpoints: fleet
                    .endpoints
                    .iter()
                    .enumerate()
                    .map(|(k, e)| {
                        let rounds = e.history.rounds[i]
                            .iter()
                            .enumerate()
                            .map(|(n, &p99)| {
                                Round::new(
                                    n as u32 + 1,
                                    String::new(),
                                    SourceFormat::K6HandleSummary,
                                    RoundStats {
                                        p99_ms: p99,
                                        ..Default::default()
                                    },
                                )
                            })
                            .collect();
                        (
                            format!("{k:03}"),
                            EndpointRun {
                                rounds,
                                ..Default::default()
                            },
                        )
                    })
                    .collect(),
                problems: Vec::new(),
                untrusted_time: None,
            })
            .collect(),
        triage: Vec::new(),
        annotations: Vec::new(),
    }
}

fn est(e: &Estimate, scale: f64, digits: usize) -> String {
    format!(
        "{:.d$} ({:.d$}–{:.d$})",
        scale * e.value,
        scale * e.low,
        scale * e.high,
        d = digits
    )
}

/// The fleet tables of docs/detection.md.
pub fn to_markdown(fleets: &[FleetResult]) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    for f in fleets {
        let m = &f.fleet;
        let classes: Vec<String> = m
            .classes
            .iter()
            .map(|c| {
                let step = match c.step {
                    StepSize::None => "no step".to_string(),
                    StepSize::Fixed(x) => format!("one ×{x} step"),
                    StepSize::Between(lo, hi) => format!("one ×{lo}–{hi} step"),
                };
                format!(
                    "{} {} (between-run σ {:.0}%, within-run σ {:.0}%, GC-tail rounds {:.0}% ×{}; {step})",
                    c.count,
                    c.name,
                    100.0 * c.noise.between_run,
                    100.0 * c.noise.within_run,
                    100.0 * c.noise.gc_round_prob,
                    c.noise.gc_factor,
                )
            })
            .collect();
        let _ = writeln!(
            s,
            "### The {} fleet\n\n{} histories of {} runs; {}; noisy-neighbour runs {:.0}% ×{} on every endpoint at once; steps start between runs {} and {}.\n",
            m.name,
            f.histories,
            m.runs,
            classes.join(", "),
            100.0 * m.neighbour_run_prob,
            m.neighbour_factor,
            m.first_onset,
            m.last_onset
        );
        let stepped: Vec<&EndpointClass> = m
            .classes
            .iter()
            .filter(|c| c.step != StepSize::None)
            .collect();
        let _ = write!(s, "| policy | false alarm runs / 100 |");
        for c in &m.classes {
            let _ = write!(s, " {} endpoints alone |", c.name);
        }
        let _ = write!(s, " run-wide alarms / 100 runs |");
        for c in &stepped {
            let _ = write!(
                s,
                " {} steps caught ≤ 3 runs | ≤ 6 runs | dated at the step |",
                c.name
            );
        }
        let _ = writeln!(s);
        let cols = 3 + m.classes.len() + 3 * stepped.len();
        let _ = writeln!(s, "|{}", "---|".repeat(cols));
        for p in &f.policies {
            let _ = write!(
                s,
                "| `{}` | {} |",
                p.policy,
                est(&p.false_alarm_runs, 1.0, 2)
            );
            for c in &m.classes {
                let _ = write!(
                    s,
                    " {} |",
                    p.false_by_class
                        .get(c.name)
                        .map(|e| est(e, 1.0, 2))
                        .unwrap_or_default()
                );
            }
            let _ = write!(s, " {:.2} |", p.run_wide_per_100_runs);
            for c in &stepped {
                match p.steps.get(c.name) {
                    Some(r) => {
                        let _ = write!(
                            s,
                            " {} | {} | {} |",
                            est(&r.caught_3, 100.0, 0),
                            est(&r.caught_6, 100.0, 0),
                            est(&r.dated, 100.0, 0)
                        );
                    }
                    None => {
                        let _ = write!(s, " – | – | – |");
                    }
                }
            }
            let _ = writeln!(s);
        }
        let _ = writeln!(s);
        for l in &f.lines {
            let _ = writeln!(
                s,
                "The {} endpoints' line: ×{:.2} at the median run, ×{:.2} at the 90th percentile; wider than the threshold ratio on {:.0}% of their runs.\n",
                l.class,
                l.median,
                l.p90,
                100.0 * l.widened
            );
        }
        for b in &f.baselines {
            let _ = writeln!(
                s,
                "Baselines of the {} endpoints from run {SETTLED_FROM_RUN} on: {:.3}× their true level (p10 {:.3}×, p90 {:.3}×); {:.1}% of their runs read `regression`.\n",
                b.class,
                b.median,
                b.p10,
                b.p90,
                100.0 * b.regression_share
            );
        }
    }
    s
}

/// The default policy under one value of `[analysis] noise_k` and
/// `noise_window`.
#[derive(Debug, Clone, Serialize)]
pub struct NoiseKRow {
    /// `None`: the noise line off (the threshold ratio everywhere).
    pub noise_k: Option<f64>,
    pub noise_window: usize,
    /// The typical fleet's endpoints without a step: their lines.
    pub typical_lines: Option<LineStats>,
    /// Per fleet, in [`mixed_fleet`], [`typical_fleet`] order.
    pub fleets: Vec<FleetPolicyResult>,
    /// The noisy endpoints' baselines (mixed fleet).
    pub noisy_baseline: Option<BaselineDrift>,
}

/// The values of `noise_k` the evaluation compares …
pub const NOISE_K_SWEEP: [f64; 5] = [2.0, 2.5, 3.0, 3.5, 4.0];

/// … each with these values of `noise_window`.
pub const NOISE_WINDOW_SWEEP: [usize; 3] = [10, 20, 40];

/// The default policy on both fleets with the noise line off, then for
/// each `noise_window` of [`NOISE_WINDOW_SWEEP`] and `noise_k` of
/// [`NOISE_K_SWEEP`]: what chose the defaults.
pub fn noise_k_sweep(
    config: &EvalConfig,
    policy: &dyn Fn() -> Box<dyn EvalPolicy>,
) -> Vec<NoiseKRow> {
    let window = Settings::default().analysis.noise_window;
    std::iter::once((None, window))
        .chain(
            NOISE_WINDOW_SWEEP
                .iter()
                .flat_map(|&w| NOISE_K_SWEEP.iter().map(move |&k| (Some(k), w))),
        )
        .map(|(k, w)| {
            let mut settings = Settings::default();
            settings.analysis.noise_k = k.unwrap_or(0.0);
            settings.analysis.noise_window = w;
            let policies = [policy()];
            let results: Vec<FleetResult> = [mixed_fleet(), typical_fleet()]
                .iter()
                .enumerate()
                .map(|(i, model)| evaluate_fleet(config, model, i as u64, &policies, &settings))
                .collect();
            NoiseKRow {
                noise_k: k,
                noise_window: w,
                typical_lines: results[1]
                    .lines
                    .iter()
                    .find(|l| l.class == "typical")
                    .cloned(),
                noisy_baseline: results[0]
                    .baselines
                    .iter()
                    .find(|b| b.class == "noisy")
                    .cloned(),
                fleets: results
                    .into_iter()
                    .map(|r| r.policies.into_iter().next().expect("one policy"))
                    .collect(),
            }
        })
        .collect()
}

/// The sweep as a Markdown table.
pub fn sweep_markdown(rows: &[NoiseKRow]) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "| `noise_window` | `noise_k` | mixed fleet: false alarm runs / 100 | noisy endpoints alone | quiet +10% steps caught ≤ 6 runs | noisy baselines (p10–p90) | typical fleet: false alarm runs / 100 | ×1.25–2.2 steps caught ≤ 3 runs | dated at the step | typical endpoints' line: median (runs widened) |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|---|---|---|---|");
    for r in rows {
        let (k, w) = match r.noise_k {
            Some(k) => (format!("{k}"), format!("{}", r.noise_window)),
            None => ("off".to_string(), "–".to_string()),
        };
        let (mixed, typical) = (&r.fleets[0], &r.fleets[1]);
        let quiet = mixed.steps.get("quiet");
        let stepping = typical.steps.values().next();
        let _ = writeln!(
            s,
            "| {w} | {k} | {} | {} | {} | {} | {} | {} | {} | {} |",
            est(&mixed.false_alarm_runs, 1.0, 2),
            mixed
                .false_by_class
                .get("noisy")
                .map(|e| est(e, 1.0, 2))
                .unwrap_or_default(),
            quiet
                .map(|q| est(&q.caught_6, 100.0, 0))
                .unwrap_or_default(),
            r.noisy_baseline
                .as_ref()
                .map(|b| format!("{:.3}× ({:.3}–{:.3})", b.median, b.p10, b.p90))
                .unwrap_or_default(),
            est(&typical.false_alarm_runs, 1.0, 2),
            stepping
                .map(|q| est(&q.caught_3, 100.0, 0))
                .unwrap_or_default(),
            stepping
                .map(|q| est(&q.dated, 100.0, 0))
                .unwrap_or_default(),
            r.typical_lines
                .as_ref()
                .map(|l| format!("×{:.2} ({:.0}%)", l.median, 100.0 * l.widened))
                .unwrap_or_default(),
        );
    }
    s
}
