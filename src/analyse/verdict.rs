//! The one place where a run's verdict is decided.

use serde::Serialize;

/// The verdict for one endpoint in one run. The strings are part of the
/// JSON data contract (`docs/data-contract.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Most of the run's rounds failed (no latency measured, or an error
    /// rate of at least `failed_round_error_rate`): nothing to compare,
    /// and never a pass.
    Failed,
    /// A figure crossed its line: median p99 above baseline × threshold
    /// ratio, error rate above its line, or throughput below its line
    /// ([`Figure`]).
    Regression,
    /// Median p99 below baseline ÷ threshold ratio, and no figure regressed.
    Improvement,
    /// Within the band.
    Ok,
    /// Too few accepted runs before this one to form a baseline.
    NoBaseline,
    /// Fewer usable rounds than expected: shown, never alarmed on, never a baseline.
    Insufficient,
}

impl Verdict {
    /// The contract string (`regression`, `no-baseline`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Failed => "failed",
            Verdict::Regression => "regression",
            Verdict::Improvement => "improvement",
            Verdict::Ok => "ok",
            Verdict::NoBaseline => "no-baseline",
            Verdict::Insufficient => "insufficient",
        }
    }

    /// Whether a run with this verdict may join later runs' baselines.
    /// A regression must not: it would drag the baseline up and hide
    /// itself; a failed run measured nothing.
    pub fn feeds_baseline(self) -> bool {
        matches!(
            self,
            Verdict::Ok | Verdict::Improvement | Verdict::NoBaseline
        )
    }
}

/// A figure that can cross its line. The strings are part of the JSON
/// contract (`regressed` lists).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Figure {
    /// The median of the rounds' p99 (the configured metric).
    P99,
    /// The median of the rounds' error rates.
    ErrorRate,
    /// The median of the rounds' requests per second, at the same load.
    Throughput,
}

impl Figure {
    pub fn as_str(self) -> &'static str {
        match self {
            Figure::P99 => "p99",
            Figure::ErrorRate => "error-rate",
            Figure::Throughput => "throughput",
        }
    }

    /// How the figure is named in sentences.
    pub fn words(self) -> &'static str {
        match self {
            Figure::P99 => "p99",
            Figure::ErrorRate => "error rate",
            Figure::Throughput => "throughput",
        }
    }
}

impl std::fmt::Display for Figure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The lines of the figures other than p99 (`[analysis]` settings).
/// (`Serialize`: page memo keys digest it, `render::memo::PointKey`.)
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FigureLines {
    /// Error rate over max(baseline + this, `max_error_rate`) regresses.
    pub error_rate_delta: f64,
    pub max_error_rate: f64,
    /// Throughput under baseline × (1 − this) regresses.
    pub throughput_drop: f64,
}

impl FigureLines {
    pub fn of(a: &crate::config::AnalysisSettings) -> FigureLines {
        FigureLines {
            error_rate_delta: a.error_rate_delta,
            max_error_rate: a.max_error_rate,
            throughput_drop: a.throughput_drop,
        }
    }

    /// The error rate above which a run regresses against `baseline`.
    pub fn error_rate_line(&self, baseline: f64) -> f64 {
        (baseline + self.error_rate_delta).max(self.max_error_rate)
    }

    /// The throughput below which a run regresses against `baseline`.
    pub fn throughput_line(&self, baseline: f64) -> f64 {
        baseline * (1.0 - self.throughput_drop)
    }
}

/// What a judged run does to the baseline of the runs after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BaselineEffect {
    /// It joins the rolling window of accepted runs.
    Join,
    /// It stays out (a regression, or too few rounds).
    Skip,
}

/// Whether a run with this verdict measured the endpoint's level: every
/// run but a failed one and one short of rounds. These runs, accepted into
/// the baseline or not, measure the endpoint's own noise (the noise line,
/// [`line_ratio`]).
pub fn measures_level(verdict: Verdict) -> bool {
    !matches!(verdict, Verdict::Failed | Verdict::Insufficient)
}

/// Decides what a run does to later baselines. `accepted` says the run is
/// part of an accepted change: a human triaged its regression, or an
/// earlier one in the same unbroken stretch of regressions, as `accepted`
/// (an intended change). Such regressions join the baseline, so that
/// after a few runs the baseline sits at the new level and stops flagging
/// it, while unaccepted regressions never drag the baseline up.
pub fn baseline_effect(verdict: Verdict, accepted: bool) -> BaselineEffect {
    match verdict {
        Verdict::Regression if accepted => BaselineEffect::Join,
        v if v.feeds_baseline() => BaselineEffect::Join,
        _ => BaselineEffect::Skip,
    }
}

/// Accepted changes on one endpoint, walked in time order.
///
/// A human labels a regression `accepted` (an intended change). From that
/// run on, runs at the accepted level (up to its median × the threshold
/// ratio) count as part of the change: they keep the verdict `regression`
/// but join the baseline, so the baseline moves to the new level. The
/// change lasts until more than half of the baseline window has joined
/// since the label: the window's median then sits at the new level, and a
/// run above the line again is a new regression. A run well above the
/// accepted level is a new regression even inside the change.
///
/// Ending the change at the first run that is not a regression (the rule
/// before) let one quiet run end it while the baseline was still catching
/// up, so the runs after it turned red again at the accepted level.
#[derive(Debug, Clone)]
pub struct AcceptedChanges {
    baseline_window: usize,
    current: Option<AcceptedChange>,
}

#[derive(Debug, Clone, Copy)]
struct AcceptedChange {
    /// The labelled run's median p99.
    level_ms: f64,
    /// Runs that joined the baseline since the label (the labelled one too).
    joined: usize,
}

impl AcceptedChanges {
    pub fn new(baseline_window: usize) -> AcceptedChanges {
        AcceptedChanges {
            baseline_window,
            current: None,
        }
    }

    /// Takes the next run and says whether it is part of an accepted change
    /// (pass the answer to [`baseline_effect`]). `labelled_accepted`: a
    /// triage label says `accepted` for this run.
    pub fn next_run(
        &mut self,
        verdict: Verdict,
        median_p99_ms: f64,
        labelled_accepted: bool,
        threshold_ratio: f64,
    ) -> bool {
        if labelled_accepted && verdict == Verdict::Regression {
            self.current = Some(AcceptedChange {
                level_ms: median_p99_ms,
                joined: 0,
            });
        }
        let Some(change) = self.current.as_mut() else {
            return false;
        };
        let at_accepted_level = median_p99_ms <= change.level_ms * threshold_ratio;
        let accepted = verdict == Verdict::Regression && at_accepted_level;
        if baseline_effect(verdict, accepted) == BaselineEffect::Join {
            change.joined += 1;
            if change.joined > self.baseline_window / 2 {
                self.current = None;
            }
        }
        accepted
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the verdict is decided from. (`Serialize`: page memo keys digest
/// it, `render::memo::PointKey`; it is not in `analysis.json`.)
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Evidence {
    /// Rounds in the run, failed ones included.
    pub rounds: usize,
    /// Rounds that did not fail (`analyse::figures`).
    pub usable_rounds: usize,
    pub expected_rounds: u32,
    /// The median of the usable rounds' p99.
    pub median_p99_ms: f64,
    pub baseline_p99_ms: Option<f64>,
    pub threshold_ratio: f64,
    /// The run's error rate and its baseline (`None`: not reported).
    pub error_rate: Option<f64>,
    pub baseline_error_rate: Option<f64>,
    /// The run's throughput and its baseline; the baseline is `None`
    /// unless the load profile is recorded and the same.
    pub throughput_rps: Option<f64>,
    pub baseline_throughput_rps: Option<f64>,
    pub lines: FigureLines,
    /// How finely the p99 figures were measured.
    pub resolution: Resolution,
    /// The endpoint's own run-to-run spread: σ of the log of its recent
    /// accepted run medians ([`crate::stats::successive_log_spread`]),
    /// `None` until enough accepted runs are there to measure it.
    pub noise_spread: Option<f64>,
    /// `[analysis] noise_k`: the noise line is exp(`noise_k` × spread).
    pub noise_k: f64,
}

/// The p99 line as a ratio to the baseline: the threshold ratio, widened
/// to the noise line exp(`noise_k` × `spread`) where the endpoint's own
/// run-to-run noise makes the threshold meaningless (docs/detection.md).
/// Where the noise is typical the noise line is under the threshold ratio
/// and the team's rule stands as it is.
///
/// The noise line is capped at [`MAX_NOISE_LINE`]: noise widens the line,
/// but never so far that a doubled p99 passes.
pub fn line_ratio(threshold_ratio: f64, spread: Option<f64>, noise_k: f64) -> f64 {
    match spread {
        Some(s) if noise_k > 0.0 && s.is_finite() => {
            threshold_ratio.max((noise_k * s).exp().min(MAX_NOISE_LINE))
        }
        _ => threshold_ratio,
    }
}

/// The widest the noise line goes (×2). An endpoint whose runs move by
/// more than that from one to the next (the real bookshop archive's
/// book-reviews: 7 to 47 ms in its first six runs, a spread of ×12 at
/// k = 2.5) would otherwise pass its own N+1 at ×5.2 the run after it was
/// caught at ×5.9; no noise excuses a doubled p99. The generated noisy
/// endpoints (15% run to run) have lines near ×1.5, under the cap.
pub const MAX_NOISE_LINE: f64 = 2.0;

impl Evidence {
    /// The p99 line this run was judged by, as a ratio to the baseline
    /// ([`line_ratio`]).
    pub fn line_ratio(&self) -> f64 {
        line_ratio(self.threshold_ratio, self.noise_spread, self.noise_k)
    }

    /// The same evidence judged by the threshold ratio alone (the `naive`
    /// policy: what teams did before).
    pub fn without_noise_line(self) -> Evidence {
        Evidence {
            noise_spread: None,
            ..self
        }
    }

    /// Evidence with only p99 figures (no error rate, no throughput), as
    /// summaries that report nothing else give.
    pub fn latency_only(
        rounds: usize,
        expected_rounds: u32,
        median_p99_ms: f64,
        baseline_p99_ms: Option<f64>,
        threshold_ratio: f64,
    ) -> Evidence {
        Evidence {
            rounds,
            usable_rounds: rounds,
            expected_rounds,
            median_p99_ms,
            baseline_p99_ms,
            threshold_ratio,
            error_rate: None,
            baseline_error_rate: None,
            throughput_rps: None,
            baseline_throughput_rps: None,
            lines: FigureLines::of(&crate::config::AnalysisSettings::default()),
            resolution: Resolution::Exact,
            noise_spread: None,
            noise_k: 0.0,
        }
    }
}

/// How finely a run's p99 figures were measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub enum Resolution {
    /// As finely as a float holds them (k6, JMeter, Gatling, raw files).
    #[default]
    Exact,
    /// Locust's buckets: Locust rounds every response time before it
    /// computes percentiles (`bucket_response_time` in locust/stats.py:
    /// whole ms below 100 ms, tens below 1 s, hundreds below 10 s,
    /// thousands above), so a percentile it reports as v may really lie
    /// anywhere within half a step of v.
    LocustBuckets,
}

impl Resolution {
    /// The resolution of a run's rounds: Locust's buckets if any round is a
    /// Locust `_stats.csv` or `--json`.
    pub fn of_rounds(rounds: &[crate::model::Round]) -> Resolution {
        if rounds.iter().any(|r| r.format.has_locust_buckets()) {
            Resolution::LocustBuckets
        } else {
            Resolution::Exact
        }
    }

    /// How far the true value may lie from a reported `ms`: half the
    /// rounding step at that size (the step of the value's own decade, so
    /// a reported 100 ms, which may be a rounded 99.6, gets ±5 ms).
    pub fn half_step_ms(self, ms: f64) -> f64 {
        match self {
            Resolution::Exact => 0.0,
            Resolution::LocustBuckets => {
                let step = match ms {
                    ms if ms < 100.0 => 1.0,
                    ms if ms < 1_000.0 => 10.0,
                    ms if ms < 10_000.0 => 100.0,
                    _ => 1_000.0,
                };
                step / 2.0
            }
        }
    }
}

/// A verdict and the figures that crossed their lines.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub verdict: Verdict,
    /// The figures over (or, for throughput, under) their lines, in
    /// [`Figure`] order; empty unless the verdict is `regression`.
    pub regressed: Vec<Figure>,
}

/// Decides the verdict:
///
/// 1. `failed` when most rounds failed (more failed than usable);
/// 2. `insufficient` when fewer usable rounds than expected;
/// 3. `no-baseline` without a (positive) p99 baseline, unless the error
///    rate crossed its line against an error-rate baseline of its own
///    (a new load level, where only the error rate stays comparable):
///    then `regression` on the error rate;
/// 4. `regression` when any figure crossed its line: the median p99 over
///    baseline × the line ratio ([`line_ratio`]: the threshold ratio, or
///    the endpoint's noise line where that is wider; [`band`]), the error
///    rate over
///    max(baseline + delta, floor), or the throughput under baseline ×
///    (1 − drop) (only with a throughput baseline, which needs the same
///    recorded load profile);
/// 5. `improvement` when the p99 is under baseline ÷ ratio and nothing
///    regressed (symmetric on a log scale, so a 15% band means the same
///    both ways); `ok` otherwise.
///
/// With rounded figures ([`Resolution::LocustBuckets`]) a p99 verdict is
/// never decided by the rounding step alone: a regression must be over the
/// line even for the lowest ratio the rounding allows (the median at the
/// bottom of its interval, the baseline at the top), an improvement below
/// it even for the highest. On unchanged code Locust's p99 can move by a
/// whole step (26 → 30 ms is ×1.154, over ×1.15; at its interval bounds
/// it is 29.5 / 26.5 = ×1.11, within).
pub fn decide(e: &Evidence) -> Decision {
    let plain = |verdict| Decision {
        verdict,
        regressed: Vec::new(),
    };
    let failed = e.rounds - e.usable_rounds.min(e.rounds);
    if failed > e.usable_rounds {
        return plain(Verdict::Failed);
    }
    if e.usable_rounds < e.expected_rounds as usize {
        return plain(Verdict::Insufficient);
    }
    let errors_over = matches!(
        (e.error_rate, e.baseline_error_rate),
        (Some(rate), Some(base)) if rate > e.lines.error_rate_line(base) * (1.0 + ULP_SLACK)
    );
    let Some(baseline) = e.baseline_p99_ms.filter(|b| *b > 0.0) else {
        // A new load level leaves the p99 without a baseline but the error
        // rate comparable (`comparability::comparable`): the baseline then
        // carries an error rate only, and errors over its line regress.
        if e.baseline_p99_ms.is_none() && errors_over {
            return Decision {
                verdict: Verdict::Regression,
                regressed: vec![Figure::ErrorRate],
            };
        }
        return plain(Verdict::NoBaseline);
    };
    let latency = latency_band(e.median_p99_ms, baseline, e.line_ratio(), e.resolution);
    let mut regressed = Vec::new();
    if latency == Band::Above {
        regressed.push(Figure::P99);
    }
    if errors_over {
        regressed.push(Figure::ErrorRate);
    }
    if let (Some(tput), Some(base)) = (e.throughput_rps, e.baseline_throughput_rps)
        && base > 0.0
        && tput < e.lines.throughput_line(base) * (1.0 - ULP_SLACK)
    {
        regressed.push(Figure::Throughput);
    }
    let verdict = if !regressed.is_empty() {
        Verdict::Regression
    } else if latency == Band::Below {
        Verdict::Improvement
    } else {
        Verdict::Ok
    };
    Decision { verdict, regressed }
}

/// Where a median lies against its baseline's band, allowing for the
/// rounding of the figures ([`Resolution`]).
fn latency_band(median: f64, baseline: f64, threshold_ratio: f64, resolution: Resolution) -> Band {
    let (median_slack, baseline_slack) = (
        resolution.half_step_ms(median),
        resolution.half_step_ms(baseline),
    );
    let lowest = (median - median_slack) / (baseline + baseline_slack);
    let highest = match baseline - baseline_slack {
        b if b > 0.0 => (median + median_slack) / b,
        _ => f64::INFINITY,
    };
    if band(lowest, threshold_ratio) == Band::Above {
        Band::Above
    } else if band(highest, threshold_ratio) == Band::Below {
        Band::Below
    } else {
        Band::Within
    }
}

/// "Exceeds" is strict. A figure that equals its line up to float rounding
/// (115 ms against 100 ms at 1.15) is at the line, not over it.
const ULP_SLACK: f64 = 1e-12;

/// Where a ratio (new ÷ reference) lies against the threshold band
/// [1/threshold, threshold].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Band {
    /// Slower than reference × threshold.
    Above,
    /// Faster than reference ÷ threshold.
    Below,
    /// Neither.
    Within,
}

/// The threshold rule shared by the gate ([`decide`]) and run comparison
/// ([`decide_comparison`]), so both mean the same by "×1.15".
pub fn band(ratio: f64, threshold_ratio: f64) -> Band {
    if ratio > threshold_ratio * (1.0 + ULP_SLACK) {
        Band::Above
    } else if ratio < (1.0 / threshold_ratio) * (1.0 - ULP_SLACK) {
        Band::Below
    } else {
        Band::Within
    }
}

/// The capacity verdict of one endpoint in one step-load run. The strings
/// are part of the JSON data contract (`capacity` section of
/// `docs/data-contract.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CapacityVerdict {
    /// The knee fell below baseline knee × (1 − drop), or no step met the
    /// objective where earlier runs had a knee.
    Regression,
    /// The knee rose above baseline knee ÷ (1 − drop).
    Improvement,
    /// Within the band.
    Ok,
    /// Too few earlier accepted knees to form a baseline.
    NoBaseline,
    /// No step met the objective, and there is no baseline to compare with.
    NoKnee,
}

impl CapacityVerdict {
    /// The contract string.
    pub fn as_str(self) -> &'static str {
        match self {
            CapacityVerdict::Regression => "regression",
            CapacityVerdict::Improvement => "improvement",
            CapacityVerdict::Ok => "ok",
            CapacityVerdict::NoBaseline => "no-baseline",
            CapacityVerdict::NoKnee => "no-knee",
        }
    }
}

impl std::fmt::Display for CapacityVerdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Decides a capacity verdict from a run's knee (req/s; `None`: no step
/// met the objective), the baseline knee (median of earlier accepted
/// knees) and the allowed drop (0.15 by default):
///
/// * regression: knee < baseline × (1 − drop), or no knee at all while
///   there is a baseline (capacity fell below the lightest step);
/// * improvement: knee > baseline ÷ (1 − drop) (symmetric on a log scale);
/// * ok in between (the band's edges are ok);
/// * `no-baseline` / `no-knee` without a baseline.
pub fn decide_capacity(
    knee_rps: Option<f64>,
    baseline_rps: Option<f64>,
    drop: f64,
) -> CapacityVerdict {
    let Some(baseline) = baseline_rps.filter(|b| *b > 0.0) else {
        return if knee_rps.is_some() {
            CapacityVerdict::NoBaseline
        } else {
            CapacityVerdict::NoKnee
        };
    };
    let Some(knee) = knee_rps else {
        return CapacityVerdict::Regression;
    };
    // The latency rule's band, turned round: capacity regresses when it
    // falls, so knee ÷ baseline below (1 − drop) is the "above" side.
    match band(baseline / knee, 1.0 / (1.0 - drop)) {
        Band::Above => CapacityVerdict::Regression,
        Band::Below => CapacityVerdict::Improvement,
        Band::Within => CapacityVerdict::Ok,
    }
}

/// Whether a step-load run is an open capacity regression: a regression
/// by the numbers that is not part of an accepted change. The weekly
/// problems list it, and the recommended limit never mixes runs on both
/// sides of one.
pub fn capacity_regression_open(verdict: CapacityVerdict, accepted_change: bool) -> bool {
    verdict == CapacityVerdict::Regression && !accepted_change
}

/// Whether a run's knee may join later runs' capacity baselines: as for
/// latency, a regression stays out unless it is part of an accepted change
/// ([`capacity_accepted_change`]), and a run without a knee has nothing to
/// add.
pub fn capacity_feeds_baseline(verdict: CapacityVerdict, accepted: bool) -> bool {
    match verdict {
        CapacityVerdict::Regression => accepted,
        CapacityVerdict::NoKnee => false,
        CapacityVerdict::Ok | CapacityVerdict::Improvement | CapacityVerdict::NoBaseline => true,
    }
}

/// Whether a step-load run's capacity verdict is part of an accepted
/// change: a regression triaged `accepted` (an intended change), or a
/// regression right after one that was (the baseline fills with the new
/// level run by run, so the drop carries on until it has). `previous` is
/// the endpoint's step-load run before this one: its verdict and whether
/// it was part of an accepted change. Anything but a regression is never
/// an accepted change.
pub fn capacity_accepted_change(
    verdict: CapacityVerdict,
    triaged_accepted: bool,
    previous: Option<(CapacityVerdict, bool)>,
) -> bool {
    verdict == CapacityVerdict::Regression
        && (triaged_accepted
            || previous.is_some_and(|(v, accepted)| accepted && v == CapacityVerdict::Regression))
}

/// The verdict of one endpoint when two runs are compared (`perfdash
/// compare`, the comparison pages). The strings are part of the JSON data
/// contract (`docs/data-contract.md`, compare section).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ComparisonVerdict {
    /// Most of B's rounds failed (no latency measured, or too many errors).
    Failed,
    /// B's median p99 is over A's × threshold and the rounds separate, or
    /// B's error rate or throughput crossed its line against A's.
    Regression,
    /// B's median p99 is under A's ÷ threshold and the rounds separate.
    Improvement,
    /// Within the band, and the rounds rule out a change as large as it.
    Same,
    /// The rounds overlap too much to say, or a run has too few rounds.
    Inconclusive,
    /// Only run B has this endpoint.
    Added,
    /// Only run A has this endpoint.
    Removed,
}

impl ComparisonVerdict {
    /// The contract string.
    pub fn as_str(self) -> &'static str {
        match self {
            ComparisonVerdict::Failed => "failed",
            ComparisonVerdict::Regression => "regression",
            ComparisonVerdict::Improvement => "improvement",
            ComparisonVerdict::Same => "same",
            ComparisonVerdict::Inconclusive => "inconclusive",
            ComparisonVerdict::Added => "added",
            ComparisonVerdict::Removed => "removed",
        }
    }
}

impl std::fmt::Display for ComparisonVerdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a comparison verdict is decided from (one endpoint present in both
/// runs).
#[derive(Debug, Clone, Copy)]
pub struct ComparisonEvidence {
    /// Usable (not failed) rounds of each run.
    pub rounds_a: usize,
    pub rounds_b: usize,
    pub expected_rounds: u32,
    /// median p99 of B ÷ median p99 of A: the gate's statistic, so the
    /// threshold means what it means in `perfdash check`.
    pub ratio: Option<f64>,
    /// The interval for the B/A ratio from the rounds (see
    /// `analyse::compare`); `None` when the rounds are too few for one.
    pub interval: Option<(f64, f64)>,
    pub threshold_ratio: f64,
    /// Most rounds of that run failed.
    pub failed_a: bool,
    pub failed_b: bool,
    pub error_rate_a: Option<f64>,
    pub error_rate_b: Option<f64>,
    /// B's throughput is `None` unless both runs record the same load
    /// profile (throughput measures the load as much as the service).
    pub throughput_a: Option<f64>,
    pub throughput_b: Option<f64>,
    pub lines: FigureLines,
}

impl ComparisonEvidence {
    /// Evidence with p99 figures only (for the latency rule's tests).
    pub fn latency_only(
        rounds_a: usize,
        rounds_b: usize,
        expected_rounds: u32,
        ratio: Option<f64>,
        interval: Option<(f64, f64)>,
        threshold_ratio: f64,
    ) -> ComparisonEvidence {
        ComparisonEvidence {
            rounds_a,
            rounds_b,
            expected_rounds,
            ratio,
            interval,
            threshold_ratio,
            failed_a: false,
            failed_b: false,
            error_rate_a: None,
            error_rate_b: None,
            throughput_a: None,
            throughput_b: None,
            lines: FigureLines::of(&crate::config::AnalysisSettings::default()),
        }
    }
}

/// A comparison verdict, the figures of B that crossed their lines, and
/// what the latency rule alone said.
#[derive(Debug, Clone, PartialEq)]
pub struct ComparisonDecision {
    pub verdict: ComparisonVerdict,
    pub regressed: Vec<Figure>,
    pub latency: ComparisonVerdict,
}

/// Decides one endpoint's comparison verdict:
///
/// * most of B's rounds failed: `failed`; most of A's: `inconclusive`
///   (nothing to compare with);
/// * fewer usable rounds than expected in either run: `inconclusive` (the
///   gate calls such a run `insufficient` and never alarms on it);
/// * B's error rate over max(A's + delta, floor), or its throughput under
///   A's × (1 − drop) (same load profile only): `regression`, whatever
///   the latency says;
/// * otherwise the latency rule: the ratio of medians is past the gate's
///   threshold ([`band`]) and the interval excludes 1 (the rounds of B sit
///   apart from those of A): `regression` / `improvement`; past the
///   threshold but the interval contains 1: `inconclusive`; within the
///   band and the whole interval within [1/threshold, threshold]: `same`;
///   otherwise `inconclusive` (the rounds cannot rule out a change as
///   large as the threshold). No ratio or no interval: `inconclusive`.
pub fn decide_comparison(e: &ComparisonEvidence) -> ComparisonDecision {
    let plain = |verdict| ComparisonDecision {
        verdict,
        regressed: Vec::new(),
        latency: verdict,
    };
    if e.failed_b {
        return plain(ComparisonVerdict::Failed);
    }
    let expected = e.expected_rounds as usize;
    if e.failed_a || e.rounds_a < expected || e.rounds_b < expected {
        return plain(ComparisonVerdict::Inconclusive);
    }
    let latency = match (e.ratio, e.interval) {
        (Some(ratio), Some((low, high))) => match band(ratio, e.threshold_ratio) {
            Band::Above if low > 1.0 => ComparisonVerdict::Regression,
            Band::Below if high < 1.0 => ComparisonVerdict::Improvement,
            Band::Within
                if band(low, e.threshold_ratio) == Band::Within
                    && band(high, e.threshold_ratio) == Band::Within =>
            {
                ComparisonVerdict::Same
            }
            _ => ComparisonVerdict::Inconclusive,
        },
        _ => ComparisonVerdict::Inconclusive,
    };
    let mut regressed = Vec::new();
    if latency == ComparisonVerdict::Regression {
        regressed.push(Figure::P99);
    }
    if let (Some(a), Some(b)) = (e.error_rate_a, e.error_rate_b)
        && b > e.lines.error_rate_line(a) * (1.0 + ULP_SLACK)
    {
        regressed.push(Figure::ErrorRate);
    }
    if let (Some(a), Some(b)) = (e.throughput_a, e.throughput_b)
        && a > 0.0
        && b < e.lines.throughput_line(a) * (1.0 - ULP_SLACK)
    {
        regressed.push(Figure::Throughput);
    }
    ComparisonDecision {
        verdict: if regressed.is_empty() {
            latency
        } else {
            ComparisonVerdict::Regression
        },
        regressed,
        latency,
    }
}

/// The gate's early verdict on a run with too few accepted runs before it
/// for a baseline (1 to `min_baseline_runs` − 1): its rounds against the
/// rounds of those runs, compared as `perfdash compare` compares two runs
/// ([`decide_comparison`]). The strings are part of `check`'s JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EarlyVerdict {
    /// The median p99 is over the line and the rounds sit apart from the
    /// earlier rounds, or the error rate or throughput crossed its line.
    Regression,
    /// Faster beyond the line, the rounds apart.
    Improvement,
    /// Not over the line.
    Ok,
    /// Over the line, but the rounds overlap the earlier ones too much to
    /// tell a change from noise: the gate cannot vouch for it.
    Inconclusive,
}

impl EarlyVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            EarlyVerdict::Regression => "regression",
            EarlyVerdict::Improvement => "improvement",
            EarlyVerdict::Ok => "ok",
            EarlyVerdict::Inconclusive => "inconclusive",
        }
    }
}

/// Decides an early verdict (run B against the pooled rounds of the
/// earlier runs, A):
///
/// * a comparison `regression` (p99 over the line with the rounds apart,
///   or the error rate or throughput over its line) is a `regression`,
///   an `improvement` an `improvement`, `same` is `ok`;
/// * an `inconclusive` comparison whose ratio is over the line is
///   `inconclusive`: one or two runs cannot tell such a change from
///   noise, so the gate cannot vouch for the run;
/// * any other `inconclusive` (a ratio within the line or below it, the
///   interval too wide to say `same`) is `ok`: with a baseline the gate
///   would pass such a median too, and an early verdict must not be
///   stricter than the one that follows it.
pub fn decide_early(e: &ComparisonEvidence) -> (EarlyVerdict, Vec<Figure>) {
    let decision = decide_comparison(e);
    let verdict = match decision.verdict {
        ComparisonVerdict::Regression => EarlyVerdict::Regression,
        ComparisonVerdict::Improvement => EarlyVerdict::Improvement,
        ComparisonVerdict::Same => EarlyVerdict::Ok,
        ComparisonVerdict::Inconclusive => match e.ratio.map(|r| band(r, e.threshold_ratio)) {
            Some(Band::Within | Band::Below) => EarlyVerdict::Ok,
            _ => EarlyVerdict::Inconclusive,
        },
        ComparisonVerdict::Failed | ComparisonVerdict::Added | ComparisonVerdict::Removed => {
            EarlyVerdict::Inconclusive
        }
    };
    (verdict, decision.regressed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_early_verdict_alarms_only_when_the_rounds_sit_apart() {
        let early = |ratio: f64, interval: (f64, f64)| {
            decide_early(&ComparisonEvidence::latency_only(
                10,
                5,
                5,
                Some(ratio),
                Some(interval),
                1.15,
            ))
            .0
        };
        use EarlyVerdict::*;
        assert_eq!(early(2.5, (2.1, 3.0)), Regression);
        assert_eq!(
            early(1.3, (0.95, 1.6)),
            Inconclusive,
            "over, rounds overlap"
        );
        assert_eq!(early(1.02, (0.97, 1.05)), Ok, "same");
        assert_eq!(early(1.02, (0.80, 1.30)), Ok, "within the line, wide");
        assert_eq!(early(0.95, (0.70, 1.30)), Ok, "faster, wide");
        assert_eq!(early(0.6, (0.5, 0.7)), Improvement);
        let no_ratio = ComparisonEvidence::latency_only(10, 5, 5, None, None, 1.15);
        assert_eq!(decide_early(&no_ratio).0, Inconclusive);
        // Errors over their line regress whatever the latency says.
        let errors = ComparisonEvidence {
            error_rate_a: Some(0.001),
            error_rate_b: Some(0.2),
            ..ComparisonEvidence::latency_only(10, 5, 5, Some(1.0), Some((0.9, 1.1)), 1.15)
        };
        assert_eq!(decide_early(&errors), (Regression, vec![Figure::ErrorRate]));
    }

    #[test]
    fn a_new_load_level_judges_the_error_rate_alone() {
        let base = Evidence {
            baseline_p99_ms: None,
            baseline_error_rate: Some(0.001),
            error_rate: Some(0.002),
            ..Evidence::latency_only(5, 5, 100.0, None, 1.15)
        };
        assert_eq!(super::decide(&base).verdict, Verdict::NoBaseline);
        let failing = Evidence {
            error_rate: Some(0.08),
            ..base
        };
        assert_eq!(
            super::decide(&failing),
            Decision {
                verdict: Verdict::Regression,
                regressed: vec![Figure::ErrorRate]
            }
        );
        // A history of zeros is no baseline, for the errors too.
        let zeros = Evidence {
            baseline_p99_ms: Some(0.0),
            ..failing
        };
        assert_eq!(super::decide(&zeros).verdict, Verdict::NoBaseline);
    }

    fn ev(median: f64, baseline: Option<f64>, rounds: usize) -> Evidence {
        Evidence::latency_only(rounds, 5, median, baseline, 1.15)
    }

    fn decide(e: &Evidence) -> Verdict {
        super::decide(e).verdict
    }

    #[test]
    fn locust_rounding_alone_never_decides_a_verdict() {
        let locust = |median, baseline| Evidence {
            resolution: Resolution::LocustBuckets,
            ..ev(median, Some(baseline), 5)
        };
        // Seen on unchanged code: 26 → 30 ms, ×1.154 against a ×1.15 line.
        assert_eq!(decide(&ev(30.0, Some(26.0), 5)), Verdict::Regression);
        assert_eq!(decide(&locust(30.0, 26.0)), Verdict::Ok);
        // …and the mirror image is no improvement either.
        assert_eq!(decide(&ev(26.0, Some(30.0), 5)), Verdict::Improvement);
        assert_eq!(decide(&locust(26.0, 30.0)), Verdict::Ok);
        // A real step is still a regression: 26 → 32 ms is 31.5 / 26.5 =
        // ×1.19 even at the bounds; 260 → 320 ms is 315 / 265 = ×1.19.
        assert_eq!(decide(&locust(32.0, 26.0)), Verdict::Regression);
        assert_eq!(decide(&locust(320.0, 260.0)), Verdict::Regression);
        assert_eq!(decide(&locust(300.0, 260.0)), Verdict::Ok, "295 / 265");
        assert_eq!(decide(&locust(20.0, 26.0)), Verdict::Improvement);
        // Steps by decade, and a baseline inside its own rounding step.
        let r = Resolution::LocustBuckets;
        assert_eq!(
            [99.0, 100.0, 990.0, 1_000.0, 9_900.0, 10_000.0].map(|v| r.half_step_ms(v)),
            [0.5, 5.0, 5.0, 50.0, 50.0, 500.0]
        );
        assert_eq!(decide(&locust(1.0, 0.4)), Verdict::Ok, "0.4 ± 0.5 ms");
        assert_eq!(Resolution::Exact.half_step_ms(123.0), 0.0);
    }

    #[test]
    fn band_edges() {
        assert_eq!(
            decide(&ev(115.0, Some(100.0), 5)),
            Verdict::Ok,
            "exactly ×1.15 is not over"
        );
        assert_eq!(decide(&ev(115.1, Some(100.0), 5)), Verdict::Regression);
        assert_eq!(decide(&ev(100.0 / 1.15, Some(100.0), 5)), Verdict::Ok);
        assert_eq!(decide(&ev(86.0, Some(100.0), 5)), Verdict::Improvement);
        assert_eq!(decide(&ev(300.0, None, 5)), Verdict::NoBaseline);
        assert_eq!(decide(&ev(300.0, Some(100.0), 4)), Verdict::Insufficient);
        assert_eq!(decide(&ev(300.0, Some(100.0), 6)), Verdict::Regression);
    }

    #[test]
    fn a_capacity_change_is_accepted_from_its_label_while_it_regresses() {
        use CapacityVerdict::*;
        let accepted = capacity_accepted_change;
        assert!(accepted(Regression, true, None));
        assert!(accepted(Regression, true, Some((Ok, false))));
        // Carried on by the run before it …
        assert!(accepted(Regression, false, Some((Regression, true))));
        // … only while that one was an accepted regression.
        assert!(!accepted(Regression, false, Some((Regression, false))));
        assert!(!accepted(Regression, false, Some((Ok, true))));
        assert!(!accepted(Regression, false, None));
        // Only a regression can be an accepted change.
        for v in [Ok, Improvement, NoBaseline, NoKnee] {
            assert!(!accepted(v, true, Some((Regression, true))));
        }
    }

    #[test]
    fn accepted_regressions_join_the_baseline() {
        assert_eq!(
            baseline_effect(Verdict::Regression, true),
            BaselineEffect::Join
        );
        assert_eq!(
            baseline_effect(Verdict::Regression, false),
            BaselineEffect::Skip
        );
        assert_eq!(baseline_effect(Verdict::Ok, true), BaselineEffect::Join);
        assert_eq!(
            baseline_effect(Verdict::Insufficient, true),
            BaselineEffect::Skip
        );
    }

    #[test]
    fn an_accepted_change_lasts_until_the_baseline_has_caught_up() {
        use Verdict::{Ok, Regression};
        let mut walk = AcceptedChanges::new(10);
        assert!(
            !walk.next_run(Regression, 130.0, false, 1.15),
            "no label yet"
        );
        assert!(walk.next_run(Regression, 130.0, true, 1.15), "labelled");
        assert!(walk.next_run(Regression, 135.0, false, 1.15));
        // A quiet run does not end it (the old rule did) ...
        assert!(!walk.next_run(Ok, 112.0, false, 1.15));
        // ... so the next runs at the accepted level are still accepted.
        assert!(walk.next_run(Regression, 131.0, false, 1.15));
        // A run well above the accepted level is a new regression.
        assert!(!walk.next_run(Regression, 131.0 * 1.2, false, 1.15));
        // Six of ten runs joined (label, 135, 112, 131, and two more): over.
        assert!(walk.next_run(Regression, 129.0, false, 1.15));
        assert!(walk.next_run(Regression, 128.0, false, 1.15));
        assert!(!walk.next_run(Regression, 130.0, false, 1.15), "ended");
    }

    #[test]
    fn contract_strings() {
        assert_eq!(
            serde_json::to_string(&Verdict::NoBaseline).unwrap(),
            "\"no-baseline\""
        );
        assert_eq!(Verdict::Insufficient.to_string(), "insufficient");
    }
    fn cmp(ratio: f64, interval: (f64, f64)) -> ComparisonVerdict {
        decide_comparison(&ComparisonEvidence::latency_only(
            5,
            5,
            5,
            Some(ratio),
            Some(interval),
            1.15,
        ))
        .verdict
    }

    #[test]
    fn comparison_rule() {
        use ComparisonVerdict::*;
        assert_eq!(cmp(1.30, (1.20, 1.40)), Regression);
        assert_eq!(
            cmp(1.30, (1.01, 1.40)),
            Regression,
            "separated rounds, effect past the gate"
        );
        assert_eq!(cmp(1.30, (0.95, 1.60)), Inconclusive, "rounds overlap");
        assert_eq!(
            cmp(1.15, (1.10, 1.20)),
            Inconclusive,
            "at the gate line, and 1.20 cannot be ruled out"
        );
        assert_eq!(cmp(0.70, (0.60, 0.80)), Improvement);
        assert_eq!(cmp(0.70, (0.60, 1.05)), Inconclusive);
        assert_eq!(cmp(1.00, (0.97, 1.03)), Same);
        assert_eq!(
            cmp(1.00, (0.90, 1.15)),
            Same,
            "the band edges are inside, as in the gate"
        );
        assert_eq!(
            cmp(1.00, (0.80, 1.30)),
            Inconclusive,
            "wide interval: cannot say same"
        );
        let mut e = ComparisonEvidence::latency_only(4, 5, 5, Some(2.0), Some((1.9, 2.1)), 1.15);
        let v = |e: &ComparisonEvidence| decide_comparison(e).verdict;
        assert_eq!(v(&e), Inconclusive, "too few rounds never alarm");
        e.rounds_a = 5;
        assert_eq!(v(&e), Regression);
        e.interval = None;
        assert_eq!(v(&e), Inconclusive);
        assert_eq!(serde_json::to_string(&Same).unwrap(), "\"same\"");
    }

    #[test]
    fn gate_and_comparison_share_the_band() {
        // With a tight interval, comparison fires exactly where the gate does.
        for ratio in [
            0.5,
            1.0 / 1.15,
            0.8695,
            0.87,
            1.0,
            1.15,
            1.1500001,
            1.16,
            2.0,
        ] {
            let gate = decide(&ev(100.0 * ratio, Some(100.0), 5));
            let tight = cmp(
                ratio,
                (1.0 + (ratio - 1.0) * 0.9, 1.0 + (ratio - 1.0) * 1.1),
            );
            assert_eq!(
                gate == Verdict::Regression,
                tight == ComparisonVerdict::Regression,
                "ratio {ratio}"
            );
            assert_eq!(
                gate == Verdict::Improvement,
                tight == ComparisonVerdict::Improvement,
                "ratio {ratio}"
            );
        }
    }
}
