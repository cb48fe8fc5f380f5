//! The evidence shown beside an alarm (issue 6): how sure the run's median
//! is, which rounds look like GC or noise, and how large the shift is.
//!
//! Computed here, once, from the statistics in [`crate::stats::evidence`];
//! the pages and `analysis.json` only show it.
//!
//! * `band`: [min, max] of the rounds' p99, a distribution-free interval
//!   for the run's median (93.75% with 5 rounds).
//! * `outlier_rounds`: rounds over 1.5 × the run's median, likely a GC
//!   pause or a noisy neighbour.
//! * `shift`: the Hodges–Lehmann shift of run medians, the alarmed runs
//!   against the runs of the baseline window, with the order-statistic
//!   interval and its real coverage. Run medians, never rounds: rounds of
//!   one run are not independent samples of run-to-run behaviour
//!   (docs/detection.md). With one alarmed run and a window of 10 the
//!   interval is [min, max] of the differences and covers 1 − 2/11 ≈ 82%,
//!   not the 95% asked for; the coverage says so rather than pretending.

use serde::Serialize;

use super::{RunPoint, Verdict};
use crate::model::Round;
use crate::stats::evidence::{MedianBand, OUTLIER_FACTOR, median_band, outlier_rounds};
use crate::stats::{Shift, hodges_lehmann};

/// The confidence the shift interval asks for; its real coverage is in
/// [`ShiftEvidence::coverage`].
pub const SHIFT_CONFIDENCE: f64 = 0.95;

/// One round flagged as likely GC or noise.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OutlierRound {
    /// The round's number (`round-<n>`).
    pub round: u32,
    pub p99_ms: f64,
}

/// The Hodges–Lehmann shift of run medians against the baseline window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ShiftEvidence {
    /// Median of all differences alarmed − baseline run median, ms.
    pub estimate_ms: f64,
    pub low_ms: f64,
    pub high_ms: f64,
    /// The exact coverage of [low, high]: at most [`SHIFT_CONFIDENCE`],
    /// lower when the samples are too small for it.
    pub coverage: f64,
    /// The runs on each side (the window's runs, the alarmed runs).
    pub baseline_runs: usize,
    pub alarmed_runs: usize,
}

impl ShiftEvidence {
    fn from_shift(s: Shift, baseline_runs: usize, alarmed_runs: usize) -> ShiftEvidence {
        ShiftEvidence {
            estimate_ms: s.estimate,
            low_ms: s.low,
            high_ms: s.high,
            coverage: s.coverage,
            baseline_runs,
            alarmed_runs,
        }
    }
}

/// The evidence for one run of one endpoint (or one alarm).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Evidence {
    /// `None` only for a run without rounds (ingest never keeps one), or a
    /// point whose evidence a gate did not compute.
    pub band: Option<MedianBand>,
    /// Rounds over [`OUTLIER_FACTOR`] × the run median, in round order.
    pub outlier_rounds: Vec<OutlierRound>,
    /// `None` without a baseline.
    pub shift: Option<ShiftEvidence>,
}

impl Evidence {
    /// The evidence of a point a gate does not check: nothing computed
    /// (see [`super::AnalyseOptions::checked_run`]).
    pub fn not_computed() -> Evidence {
        Evidence {
            band: None,
            outlier_rounds: Vec::new(),
            shift: None,
        }
    }
}

/// The evidence for a run: its rounds, and the medians of the runs its
/// baseline was formed from (empty without a baseline) against the
/// medians of `alarmed` runs (the run itself, or an alarm's runs over the
/// line).
pub fn evidence<'a>(
    rounds: impl IntoIterator<Item = &'a Round>,
    baseline_medians: &[f64],
    alarmed_medians: &[f64],
) -> Evidence {
    let (numbers, p99): (Vec<u32>, Vec<f64>) = rounds
        .into_iter()
        .map(|r| (r.number, r.stats.p99_ms))
        .unzip();
    Evidence {
        band: median_band(&p99),
        outlier_rounds: outlier_rounds(&p99, OUTLIER_FACTOR)
            .into_iter()
            .map(|i| OutlierRound {
                round: numbers[i],
                p99_ms: p99[i],
            })
            .collect(),
        shift: hodges_lehmann(baseline_medians, alarmed_medians, SHIFT_CONFIDENCE)
            .map(|s| ShiftEvidence::from_shift(s, baseline_medians.len(), alarmed_medians.len())),
    }
}

/// Where to look for the cause of a change: between the last run at the
/// old level and the first at the new one, with their commits.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SuspectRange {
    /// `None` when the change starts at the endpoint's first measured run.
    pub last_old_run: Option<String>,
    pub last_old_commit: Option<String>,
    pub first_new_run: String,
    pub first_new_commit: Option<String>,
}

impl SuspectRange {
    /// The range ending at point `first_new`: from the nearest earlier
    /// point that measured a level (failed and insufficient runs say
    /// nothing about it).
    pub fn before(points: &[RunPoint], first_new: usize) -> SuspectRange {
        let last_old = points[..first_new]
            .iter()
            .rev()
            .find(|p| !matches!(p.verdict, Verdict::Failed | Verdict::Insufficient));
        let new = &points[first_new];
        SuspectRange {
            last_old_run: last_old.map(|p| p.run.clone()),
            last_old_commit: last_old.and_then(|p| p.commit.clone()),
            first_new_run: new.run.clone(),
            first_new_commit: new.commit.clone(),
        }
    }

    /// "between run A (commit 4f2a9c1) and run B (commit 9e0d…)".
    pub fn describe(&self) -> String {
        let run = |id: &str, commit: &Option<String>| match commit {
            Some(c) => format!("run {id} (commit {})", short_commit(c)),
            None => format!("run {id}"),
        };
        match &self.last_old_run {
            Some(old) => format!(
                "between {} and {}",
                run(old, &self.last_old_commit),
                run(&self.first_new_run, &self.first_new_commit)
            ),
            None => format!(
                "at {} (the first measured run)",
                run(&self.first_new_run, &self.first_new_commit)
            ),
        }
    }
}

/// The first 12 characters of a commit id, as people quote them.
pub fn short_commit(c: &str) -> &str {
    match c.char_indices().nth(12) {
        Some((i, _)) => &c[..i],
        None => c,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rounds(p99: &[f64]) -> Vec<Round> {
        crate::test_support::endpoint_run(p99, crate::test_support::round)
            .rounds
            .to_vec()
    }

    /// A hand-made alarm: rounds [98, 101, 99, 102, 180] (the GC round of
    /// docs/detection.md) against a window of ten run medians 80..=89.
    #[test]
    fn evidence_of_a_hand_made_alarm() {
        let window: Vec<f64> = (80..90).map(f64::from).collect();
        let e = evidence(
            &rounds(&[98.0, 101.0, 99.0, 102.0, 180.0]),
            &window,
            &[101.0],
        );
        let band = e.band.unwrap();
        assert_eq!((band.low, band.high, band.coverage), (98.0, 180.0, 0.9375));
        assert_eq!(
            e.outlier_rounds,
            vec![OutlierRound {
                round: 5,
                p99_ms: 180.0
            }]
        );
        let s = e.shift.unwrap();
        // Differences 101 − 80..=89 = 12..=21: median 16.5. One alarmed run
        // against ten: P(U ≤ 0) = 1/11 > 0.025, so the interval is
        // [min, max] = [12, 21] with coverage 1 − 2/11.
        assert_eq!(s.estimate_ms, 16.5);
        assert_eq!((s.low_ms, s.high_ms), (12.0, 21.0));
        assert!((s.coverage - (1.0 - 2.0 / 11.0)).abs() < 1e-12);
        assert_eq!((s.baseline_runs, s.alarmed_runs), (10, 1));

        // Three alarmed runs against ten: C(13, 3) = 286 rank orders;
        // P(U ≤ 3) = 7/286 ≤ 0.025 < P(U ≤ 4) = 11/286, so the interval is
        // [D(4), D(27)] of the 30 sorted differences = [14, 23], with coverage
        // 1 − 14/286 ≈ 95.1%.
        let e = evidence(&rounds(&[100.0; 5]), &window, &[101.0, 103.0, 105.0]);
        let s = e.shift.unwrap();
        assert_eq!(s.estimate_ms, 18.5);
        assert_eq!((s.low_ms, s.high_ms), (14.0, 23.0));
        assert!((s.coverage - (1.0 - 14.0 / 286.0)).abs() < 1e-12);
        assert!(e.outlier_rounds.is_empty());

        // No baseline, no shift; the band still stands.
        let e = evidence(&rounds(&[100.0, 110.0]), &[], &[105.0]);
        assert_eq!(e.shift, None);
        assert_eq!(e.band.unwrap().coverage, 0.5);
    }
}
