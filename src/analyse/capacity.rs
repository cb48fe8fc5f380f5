//! Capacity from step-load runs (docs/capacity.md): per endpoint and run,
//! the knee (the highest step throughput that meets the p99 objective with
//! errors under the ceiling), the recommended limit (knee × (1 −
//! headroom)) with its reasoning, and the knee's history across runs with
//! capacity verdicts ([`verdict::decide_capacity`]).
//!
//! The knee rule, on steps in load order:
//!
//! 1. A step *meets* the objective when its p99 (after settling) is at or
//!    under the objective and its error rate is under the ceiling.
//! 2. The first *sustained break* is the first step that misses and is
//!    either the last step or followed by a step that misses too. A miss
//!    followed by a step that meets the objective again is *noise* (one
//!    disturbed step, e.g. a GC storm or a neighbour's load): it is shown
//!    and ignored.
//! 3. The knee is the step with the highest throughput among the steps
//!    that meet the objective before the first sustained break (a
//!    saturated service's throughput can fall as load rises; the knee is
//!    the best it did within the objective).

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::baseline::RollingWindow;
use super::verdict::{self, CapacityVerdict};
use crate::model::{Archive, LoadUnit, Step, StepSeries};
use crate::stats::median;

/// The fewest earlier accepted knees that form a capacity baseline.
pub const MIN_BASELINE_KNEES: usize = 2;

/// What a step is judged against.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Objective {
    pub p99_ms: f64,
    /// A step must have an error rate strictly below this.
    pub max_error_rate: f64,
    pub headroom: f64,
}

/// Why a step meets the objective or not.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepCheck {
    pub step: u32,
    pub meets: bool,
    /// Why it misses (empty when it meets): `"p99 312 ms > 250 ms"`, …
    pub reasons: Vec<String>,
    /// A miss followed by a step that meets the objective again.
    pub noise: bool,
}

/// The knee of one step series, with the reasoning as data.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Knee {
    pub checks: Vec<StepCheck>,
    /// The knee step's number (1-based), if any step met the objective.
    pub knee_step: Option<u32>,
    pub knee_rps: Option<f64>,
    /// knee × (1 − headroom).
    pub limit_rps: Option<f64>,
    /// The first sustained break's step number, if any.
    pub break_step: Option<u32>,
    /// The steps that missed alone (noise), ignored.
    pub noise_steps: Vec<u32>,
    /// The reasoning in words, for the page and the JSON.
    pub reasoning: String,
}

/// Applies the knee rule (module docs) to steps in load order.
pub fn find_knee(steps: &[Step], unit: LoadUnit, objective: &Objective) -> Knee {
    let meets: Vec<Vec<String>> = steps.iter().map(|s| misses(s, objective)).collect();
    let ok = |i: usize| meets[i].is_empty();
    let break_index = (0..steps.len()).find(|&i| !ok(i) && (i + 1 == steps.len() || !ok(i + 1)));
    let considered = break_index.unwrap_or(steps.len());
    let noise: Vec<usize> = (0..considered).filter(|&i| !ok(i)).collect();
    // Highest throughput; on a tie the lighter (earlier) step.
    let knee_index = (0..considered)
        .filter(|&i| ok(i))
        .fold(None, |best: Option<usize>, i| match best {
            Some(b) if steps[b].throughput_rps >= steps[i].throughput_rps => Some(b),
            _ => Some(i),
        });
    let knee_rps = knee_index.map(|i| steps[i].throughput_rps);
    let limit_rps = knee_rps.map(|k| k * (1.0 - objective.headroom));
    let checks = steps
        .iter()
        .zip(&meets)
        .enumerate()
        .map(|(i, (s, why))| StepCheck {
            step: s.number,
            meets: why.is_empty(),
            reasons: why.clone(),
            noise: noise.contains(&i),
        })
        .collect();
    let reasoning = reasoning(
        steps,
        unit,
        objective,
        knee_index,
        break_index,
        &noise,
        &meets,
    );
    Knee {
        checks,
        knee_step: knee_index.map(|i| steps[i].number),
        knee_rps,
        limit_rps,
        break_step: break_index.map(|i| steps[i].number),
        noise_steps: noise.iter().map(|&i| steps[i].number).collect(),
        reasoning,
    }
}

/// Why a step misses the objective (empty: it meets it).
fn misses(step: &Step, o: &Objective) -> Vec<String> {
    let mut why = Vec::new();
    match step.p99_ms {
        Some(p) if p <= o.p99_ms => {}
        Some(p) => why.push(format!("p99 {} > {} objective", ms(p), ms(o.p99_ms))),
        None => why.push("no successful request to measure".into()),
    }
    if step.error_rate >= o.max_error_rate {
        why.push(format!(
            "errors {} ≥ {}",
            pct(step.error_rate),
            pct(o.max_error_rate)
        ));
    }
    why
}

fn reasoning(
    steps: &[Step],
    unit: LoadUnit,
    o: &Objective,
    knee: Option<usize>,
    brk: Option<usize>,
    noise: &[usize],
    why: &[Vec<String>],
) -> String {
    let load = |s: &Step| match (&s.label, unit) {
        (Some(l), LoadUnit::Tagged) => format!("{} ({l})", number(s.load)),
        _ => format!("{} {}", number(s.load), unit.label()),
    };
    let mut parts = Vec::new();
    match knee {
        Some(i) => {
            let s = &steps[i];
            // "2,600 req/s at 80% CPU": the reading a limit is argued from.
            let cpu = s
                .cpu_pct
                .map(|c| format!(", CPU {}%", number(c)))
                .unwrap_or_default();
            parts.push(format!(
                "knee {} req/s at {} (step {}: p99 {} ≤ {} objective, errors {}{cpu}); limit = {} × (1 − {}) = {} req/s",
                number(s.throughput_rps),
                load(s),
                s.number,
                s.p99_ms.map(ms).unwrap_or_default(),
                ms(o.p99_ms),
                pct(s.error_rate),
                number(s.throughput_rps),
                pct(o.headroom),
                number(s.throughput_rps * (1.0 - o.headroom)),
            ));
        }
        None => parts.push(format!(
            "no knee: no step met the objective (p99 ≤ {}, errors < {}) before the first sustained break",
            ms(o.p99_ms),
            pct(o.max_error_rate)
        )),
    }
    if let Some(b) = brk {
        let s = &steps[b];
        let sustained = if b + 1 < steps.len() {
            format!(" and step {} missed too", steps[b + 1].number)
        } else {
            " (the last step)".to_string()
        };
        parts.push(format!(
            "step {} at {} broke the objective: {}{sustained}",
            s.number,
            load(s),
            why[b].join(", ")
        ));
    }
    for &n in noise {
        let s = &steps[n];
        parts.push(format!(
            "step {} at {} missed alone ({}) and step {} met the objective again: treated as noise",
            s.number,
            load(s),
            why[n].join(", "),
            steps[n + 1].number
        ));
    }
    parts.join("; ")
}

/// A figure with thousands separators and sensible precision (2,600;
/// 36.5; 4.43; whole numbers such as VUs without decimals).
pub fn number(v: f64) -> String {
    if !v.is_finite() {
        return "–".into();
    }
    if v.abs() >= 100.0 || v == v.round() {
        let n = v.round() as i64;
        let digits = n.unsigned_abs().to_string();
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        if n < 0 { format!("-{out}") } else { out }
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

fn ms(v: f64) -> String {
    format!("{} ms", number(v))
}

fn pct(v: f64) -> String {
    let p = v * 100.0;
    if p == p.round() {
        format!("{p:.0}%")
    } else {
        format!("{p:.1}%")
    }
}

/// One endpoint's step-load runs, judged.
#[derive(Debug, Clone, Serialize)]
pub struct EndpointCapacity {
    pub id: String,
    pub name: String,
    pub objective: Objective,
    pub regression_drop: f64,
    /// Oldest first.
    pub runs: Vec<CapacityPoint>,
}

impl EndpointCapacity {
    /// The latest step-load run whose time can be trusted: a run dated
    /// 2099 (or 1970) is never "the latest", as for latency
    /// ([`crate::model::Archive::latest_run`]).
    pub fn latest(&self) -> Option<&CapacityPoint> {
        self.runs.iter().rev().find(|p| !p.untrusted_time)
    }

    /// The recommended limit over the recent step-load runs at the current
    /// level: the latest run and the runs right before it on the same side
    /// of a capacity regression (so a range never mixes the capacity before
    /// a drop with the capacity after it), at most `n` of them. Runs whose
    /// time cannot be trusted are left out: where they belong in the
    /// sequence is unknown.
    pub fn limit_range(&self, n: usize) -> Option<LimitRange> {
        let latest = self.latest()?;
        let regressed = CapacityPoint::is_open_regression;
        let side = regressed(latest);
        let recent: Vec<&CapacityPoint> = self
            .runs
            .iter()
            .rev()
            .filter(|p| !p.untrusted_time)
            .take_while(|p| regressed(p) == side)
            .take(n.max(1))
            .collect();
        let limits: Vec<f64> = recent.iter().filter_map(|p| p.knee.limit_rps).collect();
        Some(LimitRange {
            median: median(&limits)?,
            min: limits.iter().copied().fold(f64::INFINITY, f64::min),
            max: limits.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            runs: recent.iter().rev().map(|p| p.run.clone()).collect(),
        })
    }
}

/// The recommended limit over recent runs ([`EndpointCapacity::limit_range`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LimitRange {
    /// Median of the runs' limits (req/s): the limit to set.
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// The runs, oldest first (those without a knee have no limit and do
    /// not count in the figures).
    pub runs: Vec<String>,
}

/// The p99 a step-load run measured at a throughput, read off its steps
/// (linear between the two steps around it); `None` outside the steps'
/// range. Steps without a p99 are read across. Where steps tie on
/// throughput (a saturated service), the first in load order counts: the
/// one that reached that throughput first.
pub fn p99_at(steps: &[crate::model::Step], throughput_rps: f64) -> Option<f64> {
    let mut points: Vec<(f64, f64)> = steps
        .iter()
        .filter_map(|s| Some((s.throughput_rps, s.p99_ms?)))
        .collect();
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    let i = points.iter().position(|p| p.0 >= throughput_rps)?;
    if i == 0 {
        return (points[0].0 == throughput_rps).then_some(points[0].1);
    }
    let (a, b) = (points[i - 1], points[i]);
    let t = (throughput_rps - a.0) / (b.0 - a.0);
    Some(a.1 + t * (b.1 - a.1))
}

/// One endpoint's step-load file in one run.
#[derive(Debug, Clone, Serialize)]
pub struct CapacityPoint {
    pub run: String,
    pub started_at: DateTime<Utc>,
    pub release: Option<String>,
    pub series: StepSeries,
    pub knee: Knee,
    /// Median of the earlier accepted knees (req/s).
    pub baseline_knee_rps: Option<f64>,
    pub baseline_runs: Vec<String>,
    /// knee ÷ baseline.
    pub ratio: Option<f64>,
    pub verdict: CapacityVerdict,
    /// A capacity regression a human triaged `accepted` (an intended
    /// change), or a regression right after one while the baseline moves
    /// to the new level: still a regression by the numbers, not a problem.
    pub accepted_change: bool,
    /// The run's `started_at` cannot be trusted: never the latest run, and
    /// left out of the limit range.
    pub untrusted_time: bool,
}

impl CapacityPoint {
    /// A regression not part of an accepted change
    /// ([`verdict::capacity_regression_open`]).
    pub fn is_open_regression(&self) -> bool {
        verdict::capacity_regression_open(self.verdict, self.accepted_change)
    }
}

/// Judges every endpoint's step-load runs, in time order. Endpoints are
/// sorted by id.
pub fn analyse_capacity(archive: &Archive) -> Vec<EndpointCapacity> {
    let settings = &archive.settings;
    let c = &settings.capacity;
    let mut ids: Vec<&String> = archive
        .runs
        .iter()
        .flat_map(|r| r.capacity.keys())
        .collect();
    ids.sort();
    ids.dedup();
    ids.into_iter()
        .map(|id| {
            let objective = Objective {
                p99_ms: settings.capacity_objective_ms(id),
                max_error_rate: c.max_error_rate,
                headroom: settings.capacity_headroom(id),
            };
            let mut accepted = RollingWindow::new(c.baseline_window);
            let mut runs = Vec::new();
            for run in &archive.runs {
                let Some(series) = run.capacity.get(id) else {
                    continue;
                };
                let knee = find_knee(&series.steps, series.unit, &objective);
                let window: Vec<(&str, f64)> = accepted.recent().to_vec();
                let baseline_knee_rps = (window.len() >= MIN_BASELINE_KNEES)
                    .then(|| median(&window.iter().map(|w| w.1).collect::<Vec<_>>()))
                    .flatten();
                let verdict =
                    verdict::decide_capacity(knee.knee_rps, baseline_knee_rps, c.regression_drop);
                let triaged_accepted = archive.accepted_by_triage(&run.id, id);
                let accepted_change = verdict::capacity_accepted_change(
                    verdict,
                    triaged_accepted,
                    runs.last()
                        .map(|p: &CapacityPoint| (p.verdict, p.accepted_change)),
                );
                // Every run of an accepted change joins the baseline (not
                // only the labelled one), so it moves to the new level.
                if let Some(k) = knee.knee_rps
                    && verdict::capacity_feeds_baseline(verdict, accepted_change)
                {
                    accepted.accept((run.id.as_str(), k));
                }
                runs.push(CapacityPoint {
                    run: run.id.clone(),
                    started_at: run.started_at,
                    release: run.meta.release.clone(),
                    series: series.clone(),
                    ratio: baseline_knee_rps.zip(knee.knee_rps).map(|(b, k)| k / b),
                    baseline_runs: if baseline_knee_rps.is_some() {
                        window.iter().map(|w| w.0.to_string()).collect()
                    } else {
                        Vec::new()
                    },
                    baseline_knee_rps,
                    knee,
                    verdict,
                    accepted_change,
                    untrusted_time: run.untrusted_time.is_some(),
                });
            }
            EndpointCapacity {
                id: id.clone(),
                name: settings.endpoint_name(id),
                objective,
                regression_drop: c.regression_drop,
                runs,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
