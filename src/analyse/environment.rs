//! Run-wide shifts: when most endpoints of one run move the same way
//! together, that is the environment (a noisy neighbour, a slow host, a
//! throttled load generator), not a dozen code regressions.
//!
//! A run is `environment suspect` when at least half of its judged
//! endpoints (and at least [`MIN_MOVED`]) *moved* beyond their line in the
//! same direction in this run: their median p99 is over baseline ×
//! threshold ratio (slower), or under baseline ÷ threshold ratio (faster),
//! and their previous judged run was not. Judged endpoints are those with
//! a baseline and enough usable rounds. An endpoint that has been over its
//! line for weeks (an unfixed regression) did not move in this run, so a
//! few old regressions never make every later run suspect. The mark is a
//! triage hint and a gate setting (`[alarms] fail_on_environment_suspect`);
//! the alarms of such a run are inferred `noise` unless they persist.

use serde::Serialize;

use super::EndpointAnalysis;
use super::verdict::{Band, Verdict, band};
use crate::stats::median;

/// The fewest endpoints that must move together.
pub const MIN_MOVED: usize = 3;

/// Which way a run-wide shift went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ShiftDirection {
    Slower,
    Faster,
}

impl ShiftDirection {
    pub fn as_str(self) -> &'static str {
        match self {
            ShiftDirection::Slower => "slower",
            ShiftDirection::Faster => "faster",
        }
    }
}

/// A run whose endpoints moved together.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunWideShift {
    pub direction: ShiftDirection,
    /// Endpoints that moved beyond their line in that direction in this
    /// run …
    pub moved: usize,
    /// … of the endpoints judged in this run.
    pub judged: usize,
    /// The median ratio to baseline of the endpoints that moved.
    pub median_ratio: f64,
    /// The median ratio to baseline of every endpoint judged in the run:
    /// what the environment did to all of them. An endpoint's median in
    /// the run divided by it is the endpoint's own level there, read only
    /// to date a change (`alarms::Levels`): a step that came in with a
    /// noisy neighbour is dated at that run.
    pub run_ratio: f64,
}

impl RunWideShift {
    /// "9 of 12 endpoints slower together (median ×1.20)".
    pub fn describe(&self) -> String {
        format!(
            "{} of {} endpoints {} together (median ×{:.2})",
            self.moved,
            self.judged,
            self.direction.as_str(),
            self.median_ratio
        )
    }
}

/// The run-wide shift of each run (by run index, `runs` long).
pub fn run_wide_shifts(endpoints: &[EndpointAnalysis], runs: usize) -> Vec<Option<RunWideShift>> {
    // Per run: (every judged endpoint's ratio, ratios of those slower,
    // ratios of those faster).
    let mut tally: Vec<(Vec<f64>, Vec<f64>, Vec<f64>)> =
        vec![(Vec::new(), Vec::new(), Vec::new()); runs];
    for e in endpoints {
        // Where the previous judged run of this endpoint stood.
        let mut previous = Band::Within;
        for p in &e.points {
            let Some(ratio) = p.ratio else { continue };
            if matches!(p.verdict, Verdict::Insufficient | Verdict::Failed) {
                continue;
            }
            let now = band(ratio, e.threshold_ratio);
            let moved = now != previous;
            previous = now;
            let Some(t) = tally.get_mut(p.run_index) else {
                continue;
            };
            t.0.push(ratio);
            match now {
                Band::Above if moved => t.1.push(ratio),
                Band::Below if moved => t.2.push(ratio),
                _ => {}
            }
        }
    }
    tally
        .into_iter()
        .map(|(all, slower, faster)| {
            let judged = all.len();
            let run_ratio = median(&all).unwrap_or(1.0);
            let shift = |ratios: Vec<f64>, direction| {
                let moved = ratios.len();
                (moved >= MIN_MOVED && 2 * moved >= judged).then(|| RunWideShift {
                    direction,
                    moved,
                    judged,
                    median_ratio: median(&ratios).unwrap_or(1.0),
                    run_ratio,
                })
            };
            shift(slower, ShiftDirection::Slower).or_else(|| shift(faster, ShiftDirection::Faster))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyse::analyse;
    use crate::test_support::{archive, run};

    /// Twelve endpoints; run 10 has `moved` of them ×1.2.
    fn shifted(moved: usize) -> Vec<Option<RunWideShift>> {
        let ids: Vec<String> = (0..12).map(|e| format!("e{e:02}")).collect();
        let runs = (0..11)
            .map(|i| {
                let levels: Vec<Vec<f64>> = (0..12)
                    .map(|e| {
                        let f = if i == 10 && e < moved { 1.2 } else { 1.0 };
                        vec![100.0 * f; 5]
                    })
                    .collect();
                let eps: Vec<(&str, &[f64])> = ids
                    .iter()
                    .zip(&levels)
                    .map(|(id, l)| (id.as_str(), l.as_slice()))
                    .collect();
                run(i, &eps)
            })
            .collect();
        let analysis = analyse(&archive(runs), Vec::new());
        analysis
            .runs
            .iter()
            .map(|r| r.environment_suspect.clone())
            .collect()
    }

    #[test]
    fn nine_of_twelve_rising_together_is_the_environment() {
        let marks = shifted(9);
        assert!(marks[..10].iter().all(Option::is_none));
        let m = marks[10].as_ref().expect("run 10 is suspect");
        assert_eq!(
            (m.moved, m.judged, m.direction),
            (9, 12, ShiftDirection::Slower)
        );
        assert!((m.median_ratio - 1.2).abs() < 1e-9);
        assert_eq!(
            m.describe(),
            "9 of 12 endpoints slower together (median ×1.20)"
        );
    }

    #[test]
    fn half_is_enough_and_fewer_is_not() {
        assert!(shifted(6).last().unwrap().is_some(), "6 of 12");
        assert!(shifted(5).last().unwrap().is_none(), "5 of 12");
        assert!(shifted(2).last().unwrap().is_none());
    }

    #[test]
    fn old_regressions_do_not_move_with_the_run() {
        // Nine endpoints step up ×1.5 at run 10 and stay there (never
        // accepted): run 10 is suspect, the runs after it are not.
        let ids: Vec<String> = (0..12).map(|e| format!("e{e:02}")).collect();
        let runs = (0..16)
            .map(|i| {
                let levels: Vec<Vec<f64>> = (0..12)
                    .map(|e| vec![if i >= 10 && e < 9 { 150.0 } else { 100.0 }; 5])
                    .collect();
                let eps: Vec<(&str, &[f64])> = ids
                    .iter()
                    .zip(&levels)
                    .map(|(id, l)| (id.as_str(), l.as_slice()))
                    .collect();
                run(i, &eps)
            })
            .collect();
        let analysis = analyse(&archive(runs), Vec::new());
        let marked: Vec<usize> = analysis
            .runs
            .iter()
            .enumerate()
            .filter(|(_, r)| r.environment_suspect.is_some())
            .map(|(i, _)| i)
            .collect();
        assert_eq!(marked, [10]);
    }

    #[test]
    fn at_least_three_endpoints_must_move() {
        // Two endpoints, both slower: half, but only two.
        let runs = (0..5)
            .map(|i| {
                let f = if i == 4 { 1.5 } else { 1.0 };
                run(i, &[("a", &[100.0 * f; 5]), ("b", &[50.0 * f; 5])])
            })
            .collect();
        let analysis = analyse(&archive(runs), Vec::new());
        assert!(
            analysis
                .runs
                .iter()
                .all(|r| r.environment_suspect.is_none())
        );
    }
}
