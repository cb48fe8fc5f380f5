//! `perfdash eval`: how each alarm policy performs on generated histories
//! with known injected events, so no one has to take a detector on faith.
//!
//! Quiet histories (5 rounds per run; multiplicative between-run and
//! within-run noise; GC-tail rounds; occasional noisy-neighbour runs) are
//! generated from a seed, events are injected at a random run, the history
//! goes through the real [`crate::analyse::analyse`] (baselines and
//! verdicts as in production), and each policy's alarms are scored:
//!
//! * **false alarms per 100 endpoint-runs** on quiet histories (95%
//!   bootstrap interval over series);
//! * **transients alarmed**: the share of one-run spikes, GC-tail runs and
//!   noisy-neighbour runs that raise an alarm (none of them is a
//!   regression; Wilson 95%);
//! * **recall** of steps (5–50%) and a ramp within `horizon` runs of the
//!   onset (Wilson 95% over series);
//! * **detection delay** in runs from the onset to the alarm (median and
//!   90th percentile over detected series).
//!
//! Pure and deterministic: the same configuration gives the same report.

pub mod fleet;
pub mod generate;
pub mod policies;

use std::collections::BTreeMap;
use std::fmt::Write as _;

use chrono::{Duration, TimeZone, Utc};
use rayon::prelude::*;
use serde::Serialize;

use crate::analyse::analyse;
use crate::analyse::policy::Judgement;
use crate::config::Settings;
use crate::model::{Archive, EndpointRun, Round, RoundStats, Run, SourceFormat};
use crate::stats::percentile::percentile_of_sorted;
use crate::stats::{PercentileMethod, WILSON_Z95, wilson_interval};
use generate::{History, Injection, NOISE_MODELS, NoiseModel, Rng};
use policies::{AlarmSpan, EvalPolicy, alarm_spans};

/// What to simulate.
#[derive(Debug, Clone, Serialize)]
pub struct EvalConfig {
    pub seed: u64,
    /// Histories per scenario and noise model.
    pub series: usize,
    /// Runs per history (3 a week: 60 runs ≈ 20 weeks).
    pub runs: usize,
    pub rounds: usize,
    /// A regression counts as detected when alarmed within this many runs
    /// of its onset (6 runs ≈ 2 weeks).
    pub horizon: usize,
    /// Bootstrap resamples for the false-alarm interval.
    pub bootstrap: usize,
    /// Histories per fleet ([`fleet`]): 12 endpoints each.
    pub fleet_histories: usize,
}

impl Default for EvalConfig {
    fn default() -> Self {
        EvalConfig {
            seed: 20_261_129,
            series: 200,
            runs: 60,
            rounds: 5,
            horizon: 6,
            bootstrap: 400,
            fleet_histories: 100,
        }
    }
}

/// The scenarios, in table order.
pub fn scenarios() -> Vec<(&'static str, Injection)> {
    vec![
        ("quiet", Injection::None),
        ("spike +50%", Injection::Spike(0.5)),
        ("GC-tail run", Injection::GcRun),
        ("neighbour run", Injection::NeighbourRun),
        ("step +5%", Injection::Step(0.05)),
        ("step +10%", Injection::Step(0.10)),
        ("step +15%", Injection::Step(0.15)),
        ("step +20%", Injection::Step(0.20)),
        ("step +30%", Injection::Step(0.30)),
        ("step +50%", Injection::Step(0.50)),
        (
            "ramp +1%/run to +20%",
            Injection::Ramp {
                per_run: 0.01,
                cap: 0.20,
            },
        ),
    ]
}

/// A proportion with its 95% interval.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Estimate {
    pub value: f64,
    pub low: f64,
    pub high: f64,
}

/// One policy under one noise model.
#[derive(Debug, Clone, Serialize)]
pub struct PolicyResult {
    pub policy: String,
    pub false_alarms_per_100_runs: Estimate,
    /// Scenario name → share of series alarmed (transients) or detected
    /// within the horizon (regressions).
    pub rates: BTreeMap<String, Estimate>,
    /// Scenario name → (median, p90) delay in runs among detected series.
    pub delays: BTreeMap<String, (f64, f64)>,
}

#[derive(Debug, Clone, Serialize)]
pub struct NoiseResult {
    pub noise: NoiseModel,
    pub policies: Vec<PolicyResult>,
}

#[derive(Debug, Clone, Serialize)]
pub struct EvalReport {
    pub config: EvalConfig,
    pub results: Vec<NoiseResult>,
    /// The policy the selection rule picks (see [`choose_default`]).
    pub chosen_default: Option<String>,
    /// The fleets ([`fleet::mixed_fleet`], [`fleet::typical_fleet`]).
    pub fleets: Vec<fleet::FleetResult>,
    /// The default policy under each `noise_k` ([`fleet::noise_k_sweep`]).
    pub noise_k_sweep: Vec<fleet::NoiseKRow>,
    /// The `noise_k` and `noise_window` the rule picks ([`choose_noise_k`]).
    pub chosen_noise_k: Option<(f64, usize)>,
}

/// Runs the evaluation.
pub fn evaluate(config: &EvalConfig, policies: &[Box<dyn EvalPolicy>]) -> EvalReport {
    let settings = Settings::default();
    let scenarios = scenarios();
    let results = NOISE_MODELS
        .iter()
        .enumerate()
        .map(|(ni, noise)| {
            // alarms[scenario][policy][series] = (alarm positions, onset, judged runs)
            let per_scenario: Vec<Vec<Vec<SeriesOutcome>>> = scenarios
                .par_iter()
                .enumerate()
                .map(|(si, (_, injection))| {
                    let histories: Vec<History> = (0..config.series)
                        .map(|k| {
                            let mut rng =
                                Rng::derive(config.seed, &[ni as u64, si as u64, k as u64]);
                            let onset = rng
                                .range(config.runs / 2 - 5, config.runs / 2 + 10)
                                .min(config.runs - 2 * config.horizon - 1);
                            generate::history(
                                &mut rng,
                                noise,
                                *injection,
                                config.runs,
                                config.rounds,
                                onset,
                            )
                        })
                        .collect();
                    let archive = synthetic_archive(&histories, &settings);
                    let analysis = analyse(&archive, Vec::new());
                    policies
                        .iter()
                        .map(|p| {
                            analysis
                                .endpoints
                                .par_iter()
                                .map(|e| {
                                    let k: usize =
                                        e.id.parse().expect("synthetic endpoint ids are numbers");
                                    let dated = p.judge(e, &settings);
                                    let judgements = &dated.judgements;
                                    SeriesOutcome {
                                        alarms: alarm_spans(
                                            judgements,
                                            &crate::analyse::alarms::Levels::of(e, &analysis.runs)
                                                .with_onsets(dated.onsets.clone()),
                                            p.raised_at(),
                                            &settings,
                                        ),
                                        onset: histories[k].onset,
                                        judged: judgements
                                            .iter()
                                            .filter(|j| **j != Judgement::NotJudged)
                                            .count(),
                                    }
                                })
                                .collect()
                        })
                        .collect()
                })
                .collect();
            let policies = policies
                .iter()
                .enumerate()
                .map(|(pi, p)| score(p.name(), &scenarios, &per_scenario, pi, config))
                .collect();
            NoiseResult {
                noise: *noise,
                policies,
            }
        })
        .collect::<Vec<_>>();
    let chosen_default = choose_default(&results);
    let fleet_config = EvalConfig {
        series: config.fleet_histories,
        ..config.clone()
    };
    let fleets = [fleet::mixed_fleet(), fleet::typical_fleet()]
        .iter()
        .enumerate()
        .map(|(i, model)| {
            fleet::evaluate_fleet(&fleet_config, model, i as u64, policies, &settings)
        })
        .collect();
    let noise_k_sweep = fleet::noise_k_sweep(&fleet_config, &|| {
        Box::new(crate::analyse::policy::DEFAULT_POLICY) as Box<dyn EvalPolicy>
    });
    let chosen_noise_k = choose_noise_k(&noise_k_sweep);
    EvalReport {
        config: config.clone(),
        results,
        chosen_default,
        fleets,
        noise_k_sweep,
        chosen_noise_k,
    }
}

#[derive(Debug, Clone)]
struct SeriesOutcome {
    alarms: Vec<AlarmSpan>,
    onset: Option<usize>,
    judged: usize,
}

fn score(
    name: &str,
    scenarios: &[(&'static str, Injection)],
    per_scenario: &[Vec<Vec<SeriesOutcome>>],
    pi: usize,
    config: &EvalConfig,
) -> PolicyResult {
    let mut rates = BTreeMap::new();
    let mut delays = BTreeMap::new();
    let mut false_alarms = Estimate {
        value: 0.0,
        low: 0.0,
        high: 0.0,
    };
    for (si, (scenario, injection)) in scenarios.iter().enumerate() {
        let outcomes = &per_scenario[si][pi];
        match injection {
            Injection::None => {
                let per_series: Vec<(f64, f64)> = outcomes
                    .iter()
                    .map(|o| (o.alarms.len() as f64, o.judged as f64))
                    .collect();
                false_alarms = per_100_runs_with_bootstrap(&per_series, config);
            }
            _ => {
                // The first alarm up within [onset, onset + horizon]: raised in
                // it, or raised before and still open at the onset (the
                // regression lands on an alarm already up; delay 0). A ramp
                // creeps, so it gets twice the horizon.
                let horizon = match injection {
                    Injection::Ramp { .. } => 2 * config.horizon,
                    _ => config.horizon,
                };
                let hits: Vec<Option<usize>> = outcomes
                    .iter()
                    .map(|o| {
                        let onset = o.onset.expect("injected series have an onset");
                        o.alarms
                            .iter()
                            .find(|a| {
                                let raised_in_window =
                                    a.raised >= onset && a.raised <= onset + horizon;
                                // Transients must not raise an alarm; an old one still up is not theirs.
                                raised_in_window
                                    || (injection.is_regression()
                                        && a.raised < onset
                                        && a.end >= onset)
                            })
                            .map(|a| a.raised.saturating_sub(onset))
                    })
                    .collect();
                let n = hits.len();
                let k = hits.iter().filter(|h| h.is_some()).count();
                rates.insert(scenario.to_string(), wilson(k, n));
                if injection.is_regression() {
                    let mut d: Vec<f64> = hits.iter().flatten().map(|&d| d as f64).collect();
                    d.sort_by(f64::total_cmp);
                    if !d.is_empty() {
                        delays.insert(scenario.to_string(), (quantile(&d, 0.5), quantile(&d, 0.9)));
                    }
                }
            }
        }
    }
    PolicyResult {
        policy: name.to_string(),
        false_alarms_per_100_runs: false_alarms,
        rates,
        delays,
    }
}

/// Alarms per 100 judged runs with a percentile bootstrap over series.
fn per_100_runs_with_bootstrap(per_series: &[(f64, f64)], config: &EvalConfig) -> Estimate {
    let rate = |items: &mut dyn Iterator<Item = (f64, f64)>| {
        let (a, r) = items.fold((0.0, 0.0), |(a, r), (x, y)| (a + x, r + y));
        if r == 0.0 { 0.0 } else { 100.0 * a / r }
    };
    let value = rate(&mut per_series.iter().copied());
    let mut rng = Rng::derive(config.seed, &[0xB007]);
    let n = per_series.len();
    let mut boots: Vec<f64> = (0..config.bootstrap)
        .map(|_| rate(&mut (0..n).map(|_| per_series[rng.range(0, n - 1)])))
        .collect();
    boots.sort_by(f64::total_cmp);
    Estimate {
        value,
        low: quantile(&boots, 0.025),
        high: quantile(&boots, 0.975),
    }
}

/// A share of `k` in `n` series with its Wilson 95% interval
/// ([`wilson_interval`], the one implementation). No series at all is no
/// information: [0, 1].
fn wilson(k: usize, n: usize) -> Estimate {
    match wilson_interval(k as u64, n as u64, WILSON_Z95) {
        Some(i) => Estimate {
            value: k as f64 / n as f64,
            low: i.low,
            high: i.high,
        },
        None => Estimate {
            value: 0.0,
            low: 0.0,
            high: 1.0,
        },
    }
}

/// The `q`-quantile of sorted values by the one percentile definition
/// (linear interpolation, R-7). NaN for no values.
fn quantile(sorted: &[f64], q: f64) -> f64 {
    percentile_of_sorted(sorted, q * 100.0, PercentileMethod::Linear).unwrap_or(f64::NAN)
}

/// Median delay (runs after the onset) a default policy may have on the
/// [`SELECTION_STEP`] steps: 0, the gate must fail the regressed run itself.
pub const GATE_DELAY_RUNS: f64 = 0.0;

/// The steps the default policy must catch: +30%, the scenario nearest
/// above issue 33's bar for the default (×1.25+ steps). It was +20% while
/// every line was ×1.15; the noise line widens a typical endpoint's line
/// to about ×1.20 on purpose, so a +20% step now sits at the line.
pub const SELECTION_STEP: &str = "step +30%";

/// The selection rule for the default policy: among policies that, under
/// *typical* noise, catch ≥ 90% of [`SELECTION_STEP`] steps within the horizon **on the run
/// that carries them** (median delay 0 runs: `perfdash check` gates the run
/// in front of it, and a policy that waits for the next run lets the
/// regressed build through), the one with the fewest false alarms per 100
/// runs under typical noise (ties: fewer under noisy noise, then fewer
/// transients alarmed). docs/detection.md says why the delay bar moved from
/// ≤ 2 runs to 0, and why the step moved from +20% to +30% with the noise
/// line (issue 33).
pub fn choose_default(results: &[NoiseResult]) -> Option<String> {
    let typical = results.iter().find(|r| r.noise.name == "typical")?;
    let noisy = results.iter().find(|r| r.noise.name == "noisy");
    let key = SELECTION_STEP;
    let transient = |p: &PolicyResult| -> f64 {
        ["spike +50%", "GC-tail run", "neighbour run"]
            .iter()
            .filter_map(|s| p.rates.get(*s).map(|e| e.value))
            .sum()
    };
    typical
        .policies
        .iter()
        // Only policies perfdash ships by name: variants shown for
        // comparison (`changepoint-1run`) are not candidates.
        .filter(|p| {
            crate::analyse::Policy::ALL
                .iter()
                .any(|q| q.name() == p.policy)
        })
        .filter(|p| {
            p.rates.get(key).is_some_and(|e| e.value >= 0.9)
                && p.delays.get(key).is_some_and(|d| d.0 <= GATE_DELAY_RUNS)
        })
        .min_by(|a, b| {
            let na = noisy.and_then(|n| n.policies.iter().find(|q| q.policy == a.policy));
            let nb = noisy.and_then(|n| n.policies.iter().find(|q| q.policy == b.policy));
            a.false_alarms_per_100_runs
                .value
                .total_cmp(&b.false_alarms_per_100_runs.value)
                .then(
                    na.map_or(0.0, |p| p.false_alarms_per_100_runs.value)
                        .total_cmp(&nb.map_or(0.0, |p| p.false_alarms_per_100_runs.value)),
                )
                .then(transient(a).total_cmp(&transient(b)))
        })
        .map(|p| p.policy.clone())
}

/// The false alarm runs per 100 endpoint-runs the default policy may make
/// on a fleet (issue 33's target).
pub const MAX_FALSE_ALARM_RUNS: f64 = 2.0;

/// What [`choose_noise_k`] holds the upper end of each fleet's interval
/// to: the target itself. An earlier rule kept a quarter in reserve for
/// tails heavier than the generator's (1.5); that reserve chose k = 3,
/// whose line sits at ×1.20 on the median typical endpoint, and a +20%
/// step there went from always caught to 82%: the reserve was paid by the
/// endpoints where the team's ×1.15 should stand. Heavier tails are what
/// `[analysis] noise_k` is a setting for.
pub const NOISE_K_FALSE_ALARM_BUDGET: f64 = MAX_FALSE_ALARM_RUNS;

/// The share of ×1.25–2.2 steps the default policy must catch within 3
/// runs (issue 33's target) …
pub const MIN_STEPS_CAUGHT: f64 = 0.97;

/// … steps of this size or more.
pub const LARGE_STEP: f64 = 1.25;

/// The `noise_window` the evaluation chooses `noise_k` for: 20 runs, about
/// seven weeks at three runs a week. The generated noise never changes, so
/// on the fleets a longer window only ever looks better (a steadier spread);
/// what it costs, a line slow to follow an endpoint whose noise changed, is
/// not in the generator. The sweep shows the other windows for information.
pub const CHOSEN_NOISE_WINDOW: usize = 20;

/// The rule for `[analysis] noise_k` (at [`CHOSEN_NOISE_WINDOW`]): among
/// the values of the sweep at which the default policy's false alarm runs
/// stay under [`NOISE_K_FALSE_ALARM_BUDGET`] per 100 endpoint-runs on both
/// fleets (upper end of the 95% interval) while it still catches
/// [`MIN_STEPS_CAUGHT`] of the ×1.25–2.2 steps within 3 runs, the one that
/// widens the line on the fewest runs of the typical endpoints (where noise
/// is typical, the team's ×1.15 should stand); ties: the smaller k.
pub fn choose_noise_k(rows: &[fleet::NoiseKRow]) -> Option<(f64, usize)> {
    rows.iter()
        .filter(|r| r.noise_window == CHOSEN_NOISE_WINDOW)
        .filter(|r| {
            r.fleets
                .iter()
                .all(|f| f.false_alarm_runs.high <= NOISE_K_FALSE_ALARM_BUDGET)
                && r.fleets
                    .iter()
                    .flat_map(|f| f.steps.values())
                    .filter(|s| s.smallest_step >= LARGE_STEP)
                    .all(|s| s.caught_3.value >= MIN_STEPS_CAUGHT)
        })
        .filter_map(|r| {
            let widened = r.typical_lines.as_ref()?.widened;
            Some((widened, r.noise_k?, r.noise_window))
        })
        .min_by(|a, b| {
            a.0.total_cmp(&b.0)
                .then(a.1.total_cmp(&b.1))
                .then(a.2.cmp(&b.2))
        })
        .map(|(_, k, w)| (k, w))
}

/// One endpoint per history (ids `000`, `001`, …), runs 56 hours apart.
fn synthetic_archive(histories: &[History], settings: &Settings) -> Archive {
    let runs = histories.first().map_or(0, |h| h.rounds.len());
    let t0 = Utc
        .with_ymd_and_hms(2026, 1, 5, 3, 0, 0)
        .single()
        .expect("valid date");
    let archive_runs = (0..runs)
        .map(|i| Run {
            capacity: Default::default(),
            id: format!("run-{i:03}"),
            started_at: t0 + Duration::hours(56 * i as i64),
            meta: Default::default(),
            endpoints: histories
                .iter()
                .enumerate()
                .map(|(k, h)| {
                    let rounds = h.rounds[i]
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
        .collect();
    Archive {
        root: "generated".into(),
        settings: settings.clone(),
        runs: archive_runs,
        triage: Vec::new(),
        annotations: Vec::new(),
    }
}

/// A target of issue 33, measured.
struct Target {
    what: String,
    target: String,
    measured: String,
    met: bool,
}

impl EvalReport {
    /// The fleet result of `policy` on the fleet named `fleet`.
    fn on_fleet(&self, fleet: &str, policy: &str) -> Option<&fleet::FleetPolicyResult> {
        self.fleets
            .iter()
            .find(|f| f.fleet.name == fleet)?
            .policies
            .iter()
            .find(|p| p.policy == policy)
    }

    /// Issue 33's targets, each with what the evaluation measured.
    fn targets(&self) -> Vec<Target> {
        use crate::analyse::policy::{DEFAULT_POLICY, SENSITIVE_POLICY};
        let (default, sensitive) = (DEFAULT_POLICY.name(), SENSITIVE_POLICY.name());
        let mut out = Vec::new();
        let per_100 = |e: &Estimate| format!("{:.2} ({:.2}–{:.2})", e.value, e.low, e.high);
        for fleet in ["mixed", "typical"] {
            if let Some(p) = self.on_fleet(fleet, default) {
                out.push(Target {
                    what: format!("`{default}` (the default): false alarm runs per 100 endpoint-runs, {fleet} fleet"),
                    target: format!("≤ {MAX_FALSE_ALARM_RUNS}"),
                    measured: per_100(&p.false_alarm_runs),
                    met: p.false_alarm_runs.value <= MAX_FALSE_ALARM_RUNS,
                });
            }
        }
        if let Some(p) = self.on_fleet("typical", default) {
            for s in p.steps.values().filter(|s| s.smallest_step >= LARGE_STEP) {
                out.push(Target {
                    what: format!("`{default}`: ×{LARGE_STEP}+ steps caught within 3 runs"),
                    target: format!("≥ {:.0}%", 100.0 * MIN_STEPS_CAUGHT),
                    measured: pct(&s.caught_3),
                    met: s.caught_3.value >= MIN_STEPS_CAUGHT,
                });
                out.push(Target {
                    what: format!("`{default}`: their alarms dated at the step's first run"),
                    target: "≥ 95%".into(),
                    measured: share_of(&s.dated, s.caught),
                    met: s.dated.value >= 0.95,
                });
            }
        }
        if let Some(b) = self
            .fleets
            .iter()
            .find(|f| f.fleet.name == "mixed")
            .and_then(|f| f.baselines.iter().find(|b| b.class == "noisy"))
        {
            out.push(Target {
                what: format!(
                    "noisy endpoints' baselines against their true level (runs {}+; p10–p90 across runs)",
                    fleet::SETTLED_FROM_RUN
                ),
                target: "within ±3%".into(),
                measured: format!("×{:.3} (×{:.3}–×{:.3})", b.median, b.p10, b.p90),
                met: (b.median - 1.0).abs() <= 0.03,
            });
        }
        if let Some(p) = self.on_fleet("mixed", sensitive) {
            if let Some(s) = p.steps.get("quiet") {
                out.push(Target {
                    what: format!("`{sensitive}` (the sensitive reading): quiet +10% steps caught within 6 runs"),
                    target: "≥ 90%".into(),
                    measured: pct(&s.caught_6),
                    met: s.caught_6.value >= 0.9,
                });
            }
            out.push(Target {
                what: format!(
                    "`{sensitive}`: false alarm runs per 100 endpoint-runs, the whole mixed fleet"
                ),
                target: "≤ 1".into(),
                measured: per_100(&p.false_alarm_runs),
                met: p.false_alarm_runs.value <= 1.0,
            });
        }
        for f in &self.fleets {
            for p in &f.policies {
                for (class, s) in &p.steps {
                    if s.caught > 0 {
                        out.push(Target {
                            what: format!(
                                "`{}`: suspect range starts at the step's first run, {} fleet, {class} steps it caught",
                                p.policy, f.fleet.name
                            ),
                            target: "≥ 90%".into(),
                            measured: share_of(&s.dated, s.caught),
                            met: s.dated.value >= 0.9,
                        });
                    }
                }
            }
        }
        out
    }
}

/// A share with its count, to one decimal: a target missed by one step
/// in hundreds must not read as met ("90%" for 503 of 560).
fn share_of(e: &Estimate, n: usize) -> String {
    format!(
        "{:.1}%, {} of {n} ({:.0}–{:.0})",
        100.0 * e.value,
        (e.value * n as f64).round() as usize,
        100.0 * e.low,
        100.0 * e.high
    )
}

fn pct(e: &Estimate) -> String {
    format!(
        "{:.0}% ({:.0}–{:.0})",
        100.0 * e.value,
        100.0 * e.low,
        100.0 * e.high
    )
}

impl EvalReport {
    /// The tables of `docs/detection.md` (between the generated markers).
    pub fn to_markdown(&self) -> String {
        let c = &self.config;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "Generated by `perfdash eval` (seed {}; fleets: {} histories each; single-endpoint scenarios: {} \
             histories per scenario and noise level, {} runs of {} rounds each). Brackets are 95% intervals \
             over histories: bootstrap ({} resamples) for false alarms, Wilson for shares.\n",
            c.seed, c.fleet_histories, c.series, c.runs, c.rounds, c.bootstrap
        );
        let _ = writeln!(s, "### The targets\n");
        let _ = writeln!(s, "| what | target | measured | |\n|---|---|---|---|");
        for t in self.targets() {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} |",
                t.what,
                t.target,
                t.measured,
                if t.met { "met" } else { "**not met**" }
            );
        }
        let _ = writeln!(s);
        s.push_str(&fleet::to_markdown(&self.fleets));
        let _ = writeln!(
            s,
            "### The noise line's k\n\nThe default policy on both fleets for each `[analysis] noise_k` \
             (off: the ×{} line everywhere).\n",
            crate::config::AnalysisSettings::default().threshold_ratio
        );
        s.push_str(&fleet::sweep_markdown(&self.noise_k_sweep));
        let _ = writeln!(
            s,
            "\nRule: among the settings at which the default policy's false alarm runs stay under {} per 100 \
             endpoint-runs on both fleets (the upper end of the interval, at the target) while it catches ≥ {:.0}% of ×{}+ steps within 3 runs, the \
             one that widens the typical endpoints' line on the fewest runs (where noise is typical the \
             team's ×{} should stand); ties: the smaller k. The window is fixed at {} runs: the generated noise \
             never changes, so a longer window can only look better here, and what it costs (a line slow to follow \
             an endpoint whose noise changed) is not measured. **Chosen {}.**\n",
            NOISE_K_FALSE_ALARM_BUDGET,
            100.0 * MIN_STEPS_CAUGHT,
            LARGE_STEP,
            crate::config::AnalysisSettings::default().threshold_ratio,
            CHOSEN_NOISE_WINDOW,
            self.chosen_noise_k
                .map_or("none: no setting qualifies".to_string(), |(k, w)| {
                    format!("noise_k = {k}, noise_window = {w}")
                })
        );
        let _ = writeln!(
            s,
            "### Single-endpoint scenarios\n\nOne endpoint per history, {} runs, one event injected at a random \
             run; detected = alarmed within {} runs of the onset.\n",
            c.runs, c.horizon
        );
        for r in &self.results {
            let n = &r.noise;
            let _ = writeln!(
                s,
                "#### {} noise (between-run σ {:.0}%, within-run σ {:.0}%, GC-tail rounds {:.0}% ×{}, noisy-neighbour runs {:.0}% ×{})\n",
                n.name,
                100.0 * n.between_run,
                100.0 * n.within_run,
                100.0 * n.gc_round_prob,
                n.gc_factor,
                100.0 * n.neighbour_run_prob,
                n.neighbour_factor
            );
            let transients = ["spike +50%", "GC-tail run", "neighbour run"];
            let _ = writeln!(
                s,
                "| policy | false alarms / 100 runs | {} |",
                transients.map(|t| format!("{t} alarmed")).join(" | ")
            );
            let _ = writeln!(s, "|---|---|{}", "---|".repeat(transients.len()));
            for p in &r.policies {
                let fa = &p.false_alarms_per_100_runs;
                let _ = write!(
                    s,
                    "| `{}` | {:.2} ({:.2}–{:.2}) |",
                    p.policy, fa.value, fa.low, fa.high
                );
                for t in transients {
                    let _ = write!(s, " {} |", p.rates.get(t).map(pct).unwrap_or_default());
                }
                let _ = writeln!(s);
            }
            let _ = writeln!(s);
            let regressions: Vec<&str> = scenarios()
                .into_iter()
                .filter(|(_, i)| i.is_regression())
                .map(|(n, _)| n)
                .collect();
            let _ = writeln!(
                s,
                "Recall (share of regressions with an alarm up within {} runs of the onset, {} for the ramp):\n",
                c.horizon,
                2 * c.horizon
            );
            let _ = writeln!(s, "| policy | {} |", regressions.join(" | "));
            let _ = writeln!(s, "|---|{}", "---|".repeat(regressions.len()));
            for p in &r.policies {
                let _ = write!(s, "| `{}` |", p.policy);
                for g in &regressions {
                    let _ = write!(s, " {} |", p.rates.get(*g).map(pct).unwrap_or_default());
                }
                let _ = writeln!(s);
            }
            let _ = writeln!(s);
            let _ = writeln!(
                s,
                "Detection delay in runs after the onset, median / 90th percentile of detected series:\n"
            );
            let _ = writeln!(s, "| policy | {} |", regressions.join(" | "));
            let _ = writeln!(s, "|---|{}", "---|".repeat(regressions.len()));
            for p in &r.policies {
                let _ = write!(s, "| `{}` |", p.policy);
                for g in &regressions {
                    match p.delays.get(*g) {
                        Some((m, p90)) => {
                            let _ = write!(s, " {m:.0} / {p90:.0} |");
                        }
                        None => {
                            let _ = write!(s, " – |");
                        }
                    }
                }
                let _ = writeln!(s);
            }
            let _ = writeln!(s);
        }
        let _ = writeln!(
            s,
            "Selection rule: among policies that, under typical noise, catch ≥ 90% of {} steps within {} runs \
             and flag them on the run that carries them (median delay 0 runs: the gate judges the run in front of it), \
             take the one with the fewest false alarms per 100 runs under typical noise (ties: noisy noise, then \
             transients alarmed); only the policies perfdash ships by name are candidates. **Chosen: {}.**",
            SELECTION_STEP.trim_start_matches("step "),
            c.horizon,
            self.chosen_default
                .as_deref()
                .map_or("none qualifies".to_string(), |p| format!("`{p}`"))
        );
        s
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_published_choice_is_the_shipped_default() {
        let doc =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/detection.md"))
                .unwrap();
        let chosen = doc
            .split("**Chosen: `")
            .nth(1)
            .and_then(|rest| rest.split('`').next())
            .expect("docs/detection.md names the chosen policy");
        assert_eq!(
            chosen,
            crate::analyse::policy::DEFAULT_POLICY.name(),
            "docs/detection.md picks `{chosen}`: change DEFAULT_POLICY or the selection rule, then \
             regenerate with `cargo run --release -- eval --write docs/detection.md`"
        );
    }

    use super::*;

    /// The `noise_k` docs/detection.md's rule picks is the shipped one.
    #[test]
    fn the_published_noise_k_is_the_shipped_default() {
        let doc =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/detection.md"))
                .unwrap();
        let chosen = doc
            .split("**Chosen noise_k = ")
            .nth(1)
            .and_then(|rest| rest.split(".**").next())
            .and_then(|rest| rest.split_once(", noise_window = "))
            .and_then(|(k, w)| Some((k.parse::<f64>().ok()?, w.parse::<usize>().ok()?)))
            .expect("docs/detection.md names the chosen noise_k and noise_window");
        let shipped = crate::config::AnalysisSettings::default();
        assert_eq!(
            chosen,
            (shipped.noise_k, shipped.noise_window),
            "docs/detection.md picks (noise_k, noise_window) = {chosen:?}: change the defaults or the \
             rule, then regenerate with `cargo run --release -- eval --write docs/detection.md`"
        );
    }

    #[test]
    fn wilson_known_values() {
        // 8/10: Wilson 95% ≈ (0.490, 0.943)
        let e = wilson(8, 10);
        assert!(
            (e.low - 0.490).abs() < 0.002 && (e.high - 0.943).abs() < 0.002,
            "{e:?}"
        );
        assert_eq!(e.value, 0.8);
        let e = wilson(0, 50);
        assert!(e.low < 1e-12);
        assert!((e.high - 0.0713).abs() < 0.001);
        let none = wilson(0, 0);
        assert_eq!((none.value, none.low, none.high), (0.0, 0.0, 1.0));
    }

    #[test]
    fn quantiles_interpolate_linearly() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile(&v, 0.5), 2.5);
        assert_eq!(quantile(&v, 0.0), 1.0);
        assert_eq!(quantile(&v, 1.0), 4.0);
        assert!((quantile(&v, 0.9) - 3.7).abs() < 1e-12);
        assert!(quantile(&[], 0.5).is_nan());
    }

    #[test]
    fn a_small_evaluation_separates_noise_from_regressions() {
        let config = EvalConfig {
            series: 12,
            runs: 32,
            bootstrap: 20,
            ..EvalConfig::default()
        };
        let report = evaluate(&config, &policies::all());
        let typical = &report.results[0];
        let get = |name: &str| typical.policies.iter().find(|p| p.policy == name).unwrap();
        // A +50% step is caught by every policy; naive cries wolf more than median.
        for p in &typical.policies {
            assert!(
                p.rates["step +50%"].value >= 0.9,
                "{} {:?}",
                p.policy,
                p.rates["step +50%"]
            );
        }
        assert!(
            get("naive").false_alarms_per_100_runs.value
                >= get("median").false_alarms_per_100_runs.value
        );
        assert!(
            get("persistent").rates["spike +50%"].value <= get("median").rates["spike +50%"].value
        );
        // Deterministic.
        let again = evaluate(&config, &policies::all());
        assert_eq!(report.to_markdown(), again.to_markdown());
    }
}
