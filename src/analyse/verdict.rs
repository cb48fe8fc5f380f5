//! The one place where a run's verdict is decided.

use serde::Serialize;

/// The verdict for one endpoint in one run. The strings are part of the
/// JSON data contract (`docs/data-contract.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Median p99 above baseline × threshold ratio.
    Regression,
    /// Median p99 below baseline ÷ threshold ratio.
    Improvement,
    /// Within the band.
    Ok,
    /// Too few accepted runs before this one to form a baseline.
    NoBaseline,
    /// Fewer rounds than expected: shown, never alarmed on, never a baseline.
    Insufficient,
}

impl Verdict {
    /// The contract string (`regression`, `no-baseline`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Regression => "regression",
            Verdict::Improvement => "improvement",
            Verdict::Ok => "ok",
            Verdict::NoBaseline => "no-baseline",
            Verdict::Insufficient => "insufficient",
        }
    }

    /// Whether a run with this verdict may join later runs' baselines.
    /// A regression must not: it would drag the baseline up and hide itself.
    pub fn feeds_baseline(self) -> bool {
        matches!(
            self,
            Verdict::Ok | Verdict::Improvement | Verdict::NoBaseline
        )
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

/// What the verdict is decided from.
#[derive(Debug, Clone, Copy)]
pub struct Evidence {
    pub rounds: usize,
    pub expected_rounds: u32,
    pub median_p99_ms: f64,
    pub baseline_p99_ms: Option<f64>,
    pub threshold_ratio: f64,
    /// How finely the p99 figures were measured.
    pub resolution: Resolution,
}

/// How finely a run's p99 figures were measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
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
    /// Locust `_stats.csv`.
    pub fn of_rounds(rounds: &[crate::model::Round]) -> Resolution {
        if rounds
            .iter()
            .any(|r| r.format == crate::model::SourceFormat::LocustStats)
        {
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

/// Decides the verdict. Improvement is symmetric to regression on a log
/// scale (÷ ratio), so a 15% band means the same both ways.
///
/// With rounded figures ([`Resolution::LocustBuckets`]) a verdict is never
/// decided by the rounding step alone: a regression must be over the line
/// even for the lowest ratio the rounding allows (the median at the bottom
/// of its interval, the baseline at the top), an improvement below it even
/// for the highest. On unchanged code Locust's p99 can move by a whole step
/// (26 → 30 ms is ×1.154, over ×1.15; at its interval bounds it is
/// 29.5 / 26.5 = ×1.11, within).
pub fn decide(e: &Evidence) -> Verdict {
    if e.rounds < e.expected_rounds as usize {
        return Verdict::Insufficient;
    }
    let Some(baseline) = e.baseline_p99_ms.filter(|b| *b > 0.0) else {
        return Verdict::NoBaseline;
    };
    let median = e.median_p99_ms;
    let (median_slack, baseline_slack) = (
        e.resolution.half_step_ms(median),
        e.resolution.half_step_ms(baseline),
    );
    let lowest = (median - median_slack) / (baseline + baseline_slack);
    let highest = match baseline - baseline_slack {
        b if b > 0.0 => (median + median_slack) / b,
        _ => f64::INFINITY,
    };
    if band(lowest, e.threshold_ratio) == Band::Above {
        Verdict::Regression
    } else if band(highest, e.threshold_ratio) == Band::Below {
        Verdict::Improvement
    } else {
        Verdict::Ok
    }
}

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
    // "Exceeds" is strict. A ratio that equals the threshold up to float
    // rounding (115 ms against 100 ms at 1.15) is at the line, not over it.
    const ULP_SLACK: f64 = 1e-12;
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

/// Whether a run's knee may join later runs' capacity baselines: as for
/// latency, a regression stays out unless triaged `accepted` (an intended
/// change), and a run without a knee has nothing to add.
pub fn capacity_feeds_baseline(verdict: CapacityVerdict, accepted: bool) -> bool {
    match verdict {
        CapacityVerdict::Regression => accepted,
        CapacityVerdict::NoKnee => false,
        CapacityVerdict::Ok | CapacityVerdict::Improvement | CapacityVerdict::NoBaseline => true,
    }
}

/// The verdict of one endpoint when two runs are compared (`perfdash
/// compare`, the comparison pages). The strings are part of the JSON data
/// contract (`docs/data-contract.md`, compare section).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ComparisonVerdict {
    /// B's median p99 is over A's × threshold and the rounds separate.
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
}

/// Decides one endpoint's comparison verdict:
///
/// * fewer rounds than expected in either run, no ratio or no interval:
///   `inconclusive` (the gate calls such a run `insufficient` and never
///   alarms on it);
/// * the ratio of medians is past the gate's threshold ([`band`]) and the
///   interval excludes 1 (the rounds of B sit apart from those of A):
///   `regression` / `improvement`; past the threshold but the interval
///   contains 1: `inconclusive`;
/// * the ratio is within the band and the whole interval lies within
///   [1/threshold, threshold]: `same`; otherwise the rounds cannot rule out
///   a change as large as the threshold: `inconclusive`.
pub fn decide_comparison(e: &ComparisonEvidence) -> ComparisonVerdict {
    let expected = e.expected_rounds as usize;
    if e.rounds_a < expected || e.rounds_b < expected {
        return ComparisonVerdict::Inconclusive;
    }
    let (Some(ratio), Some((low, high))) = (e.ratio, e.interval) else {
        return ComparisonVerdict::Inconclusive;
    };
    match band(ratio, e.threshold_ratio) {
        Band::Above if low > 1.0 => ComparisonVerdict::Regression,
        Band::Below if high < 1.0 => ComparisonVerdict::Improvement,
        Band::Within
            if band(low, e.threshold_ratio) == Band::Within
                && band(high, e.threshold_ratio) == Band::Within =>
        {
            ComparisonVerdict::Same
        }
        _ => ComparisonVerdict::Inconclusive,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(median: f64, baseline: Option<f64>, rounds: usize) -> Evidence {
        Evidence {
            rounds,
            expected_rounds: 5,
            median_p99_ms: median,
            baseline_p99_ms: baseline,
            threshold_ratio: 1.15,
            resolution: Resolution::Exact,
        }
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
        decide_comparison(&ComparisonEvidence {
            rounds_a: 5,
            rounds_b: 5,
            expected_rounds: 5,
            ratio: Some(ratio),
            interval: Some(interval),
            threshold_ratio: 1.15,
        })
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
        let mut e = ComparisonEvidence {
            rounds_a: 4,
            rounds_b: 5,
            expected_rounds: 5,
            ratio: Some(2.0),
            interval: Some((1.9, 2.1)),
            threshold_ratio: 1.15,
        };
        assert_eq!(
            decide_comparison(&e),
            Inconclusive,
            "too few rounds never alarm"
        );
        e.rounds_a = 5;
        assert_eq!(decide_comparison(&e), Regression);
        e.interval = None;
        assert_eq!(decide_comparison(&e), Inconclusive);
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
