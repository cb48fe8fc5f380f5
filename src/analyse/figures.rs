//! The four figures a performance review reads together, for one endpoint
//! in one run: p99 (with p90), error rate, throughput and the spread
//! between rounds; and which rounds failed.
//!
//! This is the one place a run's figures are computed from its rounds: the
//! verdicts, `perfdash compare`, the release history and every page read
//! them from here.
//!
//! * A **failed round** measured nothing usable: requests were made but the
//!   p99 is 0 (k6 writes the `{expected_response:true}` trend as zeros when
//!   no request succeeded, and a refused connection has a duration of 0),
//!   or its error rate is at least `analysis.failed_round_error_rate`
//!   (0.5). A failed round is never part of a median, a baseline or an
//!   improvement; it is shown in red with its error rate.
//! * p99, p90, throughput and spread are medians over the **usable**
//!   (not failed) rounds.
//! * The **error rate** of a run is the median of *every* round's error
//!   rate, failed rounds included: their errors happened. The median, as
//!   for every other figure, so one bad round neither hides nor decides
//!   the run. (The site used to show the worst round's rate, which made
//!   one noisy round look like a broken run; `compare` pooled the
//!   requests, so one round of refused connections, thousands of instant
//!   failures, outweighed four healthy rounds.)

use serde::Serialize;

use super::RunPoint;
use super::verdict::Figure;
use crate::model::{Round, RoundStats};
use crate::stats::median;

/// Why a round counts as failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RoundFailure {
    /// Requests were made but no latency was measured (p99 = 0): no
    /// request succeeded, or none was made at all.
    NoLatency,
    /// The error rate reached `analysis.failed_round_error_rate`.
    Errors,
}

impl RoundFailure {
    pub fn describe(self) -> &'static str {
        match self {
            RoundFailure::NoLatency => "no latency measured (p99 0 ms)",
            RoundFailure::Errors => "too many errors",
        }
    }
}

/// One failed round.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FailedRound {
    /// `n` in `round-<n>`.
    pub round: u32,
    pub reason: RoundFailure,
    /// The round's error rate, when its input has one.
    pub error_rate: Option<f64>,
}

/// Whether a round failed (module docs), and why.
pub fn round_failure(stats: &RoundStats, failed_round_error_rate: f64) -> Option<RoundFailure> {
    if stats
        .error_rate
        .is_some_and(|e| e >= failed_round_error_rate)
    {
        return Some(RoundFailure::Errors);
    }
    // A request count says requests were made (or, at 0, that none
    // were: nothing measured either); a bare p99 of 0 with no count could
    // be a rounded sub-millisecond figure, so it stands.
    (stats.p99_ms == 0.0 && stats.count.is_some()).then_some(RoundFailure::NoLatency)
}

/// The figures of one endpoint in one run.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RunFigures {
    /// Median of the usable rounds' p99; `None` without a usable round.
    pub p99_ms: Option<f64>,
    /// Median of the usable rounds' p90, when they report one.
    pub p90_ms: Option<f64>,
    /// Median of the usable rounds' requests per second.
    pub throughput_rps: Option<f64>,
    /// Median of every round's error rate (failed rounds included).
    pub error_rate: Option<f64>,
    /// (max − min) ÷ median of the usable rounds' p99: how far the rounds
    /// of the run disagree (0.1 = the rounds span 10% of the median).
    pub spread: Option<f64>,
    /// Rounds that are not failed.
    pub usable_rounds: usize,
    /// Failed rounds, in round order.
    pub failed_rounds: Vec<FailedRound>,
}

impl RunFigures {
    /// The figures of `rounds`, with `failed_round_error_rate` from
    /// `analysis.failed_round_error_rate`.
    pub fn of(rounds: &[Round], failed_round_error_rate: f64) -> RunFigures {
        let mut failed_rounds = Vec::new();
        let mut usable: Vec<&RoundStats> = Vec::new();
        for r in rounds {
            match round_failure(&r.stats, failed_round_error_rate) {
                Some(reason) => failed_rounds.push(FailedRound {
                    round: r.number,
                    reason,
                    error_rate: r.stats.error_rate,
                }),
                None => usable.push(&r.stats),
            }
        }
        let of_usable = |f: fn(&RoundStats) -> Option<f64>| {
            median(&usable.iter().filter_map(|s| f(s)).collect::<Vec<_>>())
        };
        let p99_ms = of_usable(|s| Some(s.p99_ms));
        RunFigures {
            p99_ms,
            p90_ms: of_usable(|s| s.p90_ms),
            throughput_rps: of_usable(|s| s.throughput_rps),
            error_rate: run_error_rate(rounds.iter().map(|r| &r.stats)),
            spread: spread(&usable.iter().map(|s| s.p99_ms).collect::<Vec<_>>()),
            usable_rounds: usable.len(),
            failed_rounds,
        }
    }

    /// A run fails when most of its rounds failed (all of them, in the
    /// usual case of a service that was down): its median round is a
    /// failed one.
    pub fn run_failed(&self) -> bool {
        self.failed_rounds.len() > self.usable_rounds
    }

    /// "rounds 1–5 (100% errors)", "round 3 (100% errors), round 4 (no
    /// latency measured (p99 0 ms))": rounds that failed alike are grouped.
    pub fn describe_failed_rounds(&self) -> String {
        let why = |f: &FailedRound| match (f.reason, f.error_rate) {
            (_, Some(e)) => format!("{} errors", rate_percent(e)),
            (reason, None) => reason.describe().to_string(),
        };
        let mut groups: Vec<(String, Vec<u32>)> = Vec::new();
        for f in &self.failed_rounds {
            let w = why(f);
            match groups.iter_mut().find(|(g, _)| *g == w) {
                Some((_, rounds)) => rounds.push(f.round),
                None => groups.push((w, vec![f.round])),
            }
        }
        groups
            .iter()
            .map(|(w, rounds)| {
                let list = number_ranges(rounds);
                let noun = if rounds.len() == 1 { "round" } else { "rounds" };
                format!("{noun} {list} ({w})")
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// "1–5", "1, 3, 5–7": sorted numbers with runs of consecutive ones as ranges.
pub fn number_ranges(numbers: &[u32]) -> String {
    let mut sorted = numbers.to_vec();
    sorted.sort_unstable();
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
            i += 1;
            end = sorted[i];
        }
        parts.push(if end == start {
            start.to_string()
        } else if end == start + 1 {
            format!("{start}, {end}")
        } else {
            format!("{start}–{end}")
        });
        i += 1;
    }
    parts.join(", ")
}

/// The four figures of one run point against their baselines and lines,
/// as alarms, `perfdash check` and `analysis.json` report them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FigureSummary {
    /// Median of the usable rounds' p99 (`None`: no usable round).
    pub p99_ms: Option<f64>,
    pub baseline_p99_ms: Option<f64>,
    pub p99_line_ms: Option<f64>,
    pub p90_ms: Option<f64>,
    pub error_rate: Option<f64>,
    pub baseline_error_rate: Option<f64>,
    /// An error rate above this regresses.
    pub error_rate_line: Option<f64>,
    pub throughput_rps: Option<f64>,
    pub baseline_throughput_rps: Option<f64>,
    /// A throughput below this regresses.
    pub throughput_line_rps: Option<f64>,
    /// Why throughput was not judged, when it was not.
    pub throughput_not_judged: Option<String>,
    pub spread: Option<f64>,
    pub rounds: usize,
    pub usable_rounds: usize,
    pub failed_rounds: Vec<FailedRound>,
    /// The figures that crossed their lines.
    pub regressed: Vec<Figure>,
}

impl FigureSummary {
    pub fn of(p: &RunPoint) -> FigureSummary {
        let f = &p.figures;
        FigureSummary {
            p99_ms: f.p99_ms,
            baseline_p99_ms: p.baseline_p99_ms,
            p99_line_ms: p.p99_line_ms(),
            p90_ms: f.p90_ms,
            error_rate: f.error_rate,
            baseline_error_rate: p.baseline_error_rate,
            error_rate_line: p.error_rate_line(),
            throughput_rps: f.throughput_rps,
            baseline_throughput_rps: p.baseline_throughput_rps,
            throughput_line_rps: p.throughput_line(),
            throughput_not_judged: p
                .throughput_not_judged
                .clone()
                .filter(|_| p.baseline_p99_ms.is_some()),
            spread: f.spread,
            rounds: p.rounds.len(),
            usable_rounds: f.usable_rounds,
            failed_rounds: f.failed_rounds.clone(),
            regressed: p.regressed.clone(),
        }
    }
}

/// The error rate of a run: the median of its rounds' error rates (rounds
/// without one are left out). The one definition every page, report and
/// verdict uses.
pub fn run_error_rate<'a>(rounds: impl IntoIterator<Item = &'a RoundStats>) -> Option<f64> {
    median(
        &rounds
            .into_iter()
            .filter_map(|s| s.error_rate)
            .collect::<Vec<_>>(),
    )
}

/// (max − min) ÷ median: the rounds' disagreement relative to their
/// median; `None` for no values or a median of 0.
pub fn spread(values: &[f64]) -> Option<f64> {
    let mid = median(values).filter(|m| *m > 0.0)?;
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    Some((max - min) / mid)
}

/// A rate as a percentage for messages, to two decimals without trailing
/// zeros: 5%, 0.1%, 1.1%, 0.25%, 100%. (Tables of shares use the pages'
/// `render::format::percent`: one decimal, `<0.1%` for a trace.)
pub fn rate_percent(rate: f64) -> String {
    let text = crate::decimal::fixed(rate * 100.0, 2, false);
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text}%")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::round_with;

    fn stats(p99: f64, count: Option<u64>, errors: Option<f64>) -> RoundStats {
        RoundStats {
            p99_ms: p99,
            count,
            error_rate: errors,
            throughput_rps: count.map(|c| c as f64 / 10.0),
            ..Default::default()
        }
    }

    #[test]
    fn failed_rounds_by_the_issue_rules() {
        // k6 with a threshold on the expected_response sub-metric: zeros.
        assert_eq!(
            round_failure(&stats(0.0, Some(4120), Some(1.0)), 0.5),
            Some(RoundFailure::Errors)
        );
        // No error rate in the input, but requests and no latency.
        assert_eq!(
            round_failure(&stats(0.0, Some(10), None), 0.5),
            Some(RoundFailure::NoLatency)
        );
        // Every request answered 500 in 48 ms: the latency is real, the
        // round is not.
        assert_eq!(
            round_failure(&stats(47.8, Some(1001), Some(1.0)), 0.5),
            Some(RoundFailure::Errors)
        );
        assert_eq!(
            round_failure(&stats(49.5, Some(1113), Some(0.5004)), 0.5),
            Some(RoundFailure::Errors),
            "half failed is failed at the default 0.5"
        );
        assert_eq!(
            round_failure(&stats(49.5, Some(1113), Some(0.49)), 0.5),
            None
        );
        // A summary with only its p99 (no count) is a measurement.
        assert_eq!(round_failure(&stats(0.0, None, None), 0.5), None);
        assert_eq!(
            round_failure(&stats(12.0, Some(100), Some(0.05)), 0.5),
            None
        );
    }

    fn rounds(list: &[RoundStats]) -> Vec<Round> {
        list.iter()
            .enumerate()
            .map(|(i, s)| round_with(i as u32 + 1, s.clone()))
            .collect()
    }

    #[test]
    fn medians_leave_failed_rounds_out_but_count_their_errors() {
        let r = rounds(&[
            stats(100.0, Some(1000), Some(0.001)),
            stats(0.0, Some(40_000), Some(1.0)),
            stats(104.0, Some(1000), Some(0.002)),
            stats(98.0, Some(1000), Some(0.001)),
            stats(0.0, Some(40_000), Some(1.0)),
        ]);
        let f = RunFigures::of(&r, 0.5);
        assert_eq!(f.p99_ms, Some(100.0), "zeros never drag the median down");
        assert_eq!(
            f.throughput_rps,
            Some(100.0),
            "instant failures never lift it"
        );
        assert_eq!(f.usable_rounds, 3);
        assert_eq!(f.failed_rounds.len(), 2);
        assert!(!f.run_failed());
        // Median of 0.001, 1, 0.002, 0.001, 1.
        assert_eq!(f.error_rate, Some(0.002));
        assert_eq!(f.spread, Some(0.06));
        assert_eq!(f.describe_failed_rounds(), "rounds 2, 5 (100% errors)");
        assert_eq!(number_ranges(&[5, 1, 2, 3, 7, 8]), "1–3, 5, 7, 8");
    }

    #[test]
    fn a_run_fails_when_most_rounds_failed() {
        let ok = stats(100.0, Some(1000), Some(0.0));
        let bad = stats(0.0, Some(5000), Some(1.0));
        let f = RunFigures::of(&rounds(&[bad.clone(), ok.clone(), bad.clone()]), 0.5);
        assert!(f.run_failed());
        let f = RunFigures::of(&rounds(&[bad.clone(), ok.clone()]), 0.5);
        assert!(!f.run_failed(), "one of two: not most");
        let f = RunFigures::of(&rounds(&vec![bad.clone(); 5]), 0.5);
        assert!(f.run_failed());
        assert_eq!(f.p99_ms, None);
        assert_eq!(f.error_rate, Some(1.0));
    }

    /// The three definitions of a run's error rate that perfdash had, on a
    /// run with one round of refused connections (40 000 instant failures)
    /// and four healthy rounds of 1 000 requests at 0.1%: the worst round
    /// says 100%, the pooled rate 90.9%, the median 0.1%. Only the median
    /// reads the run as its rounds do (a failed round is shown on its own).
    #[test]
    fn the_error_rate_is_the_median_of_the_rounds() {
        let healthy = stats(100.0, Some(1000), Some(0.001));
        let refused = stats(0.0, Some(40_000), Some(1.0));
        let r = rounds(&[
            healthy.clone(),
            refused,
            healthy.clone(),
            healthy.clone(),
            healthy,
        ]);
        let worst = r
            .iter()
            .filter_map(|r| r.stats.error_rate)
            .fold(0.0, f64::max);
        let total: u64 = r.iter().filter_map(|r| r.stats.count).sum();
        let pooled = r
            .iter()
            .map(|r| r.stats.error_rate.unwrap() * r.stats.count.unwrap() as f64)
            .sum::<f64>()
            / total as f64;
        assert_eq!(worst, 1.0);
        assert!((pooled - 40_004.0 / 44_000.0).abs() < 1e-12);
        assert_eq!(RunFigures::of(&r, 0.5).error_rate, Some(0.001));
    }

    #[test]
    fn percentages() {
        assert_eq!(rate_percent(1.0), "100%");
        assert_eq!(rate_percent(0.05), "5%");
        assert_eq!(rate_percent(0.001), "0.1%");
        assert_eq!(rate_percent(0.0025), "0.25%");
        assert_eq!(rate_percent(0.001 + 0.01), "1.1%", "not 1.0999999999999999");
        assert_eq!(rate_percent(0.0), "0%");
    }
}
