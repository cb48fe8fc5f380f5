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
    /// It becomes the only run of a fresh window: a regression a human
    /// labelled `accepted` (an intended change), so its level is the new
    /// normal and the old level must not keep flagging it.
    Restart,
}

/// Decides what a run does to later baselines, from its verdict and
/// whether its regression was triaged as `accepted`.
pub fn baseline_effect(verdict: Verdict, accepted_by_triage: bool) -> BaselineEffect {
    match verdict {
        Verdict::Regression if accepted_by_triage => BaselineEffect::Restart,
        v if v.feeds_baseline() => BaselineEffect::Join,
        _ => BaselineEffect::Skip,
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
}

/// Decides the verdict. Improvement is symmetric to regression on a log
/// scale (÷ ratio), so a 15% band means the same both ways.
pub fn decide(e: &Evidence) -> Verdict {
    if e.rounds < e.expected_rounds as usize {
        return Verdict::Insufficient;
    }
    let Some(baseline) = e.baseline_p99_ms.filter(|b| *b > 0.0) else {
        return Verdict::NoBaseline;
    };
    let ratio = e.median_p99_ms / baseline;
    // "Exceeds" is strict. A ratio that equals the threshold up to float
    // rounding (115 ms against 100 ms at 1.15) is at the line, not over it.
    const ULP_SLACK: f64 = 1e-12;
    if ratio > e.threshold_ratio * (1.0 + ULP_SLACK) {
        Verdict::Regression
    } else if ratio < (1.0 / e.threshold_ratio) * (1.0 - ULP_SLACK) {
        Verdict::Improvement
    } else {
        Verdict::Ok
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
        }
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
    fn accepted_regressions_restart_the_baseline() {
        assert_eq!(
            baseline_effect(Verdict::Regression, true),
            BaselineEffect::Restart
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
    fn contract_strings() {
        assert_eq!(
            serde_json::to_string(&Verdict::NoBaseline).unwrap(),
            "\"no-baseline\""
        );
        assert_eq!(Verdict::Insufficient.to_string(), "insufficient");
    }
}
