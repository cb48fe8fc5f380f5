//! Change-point detection: a port of Apache Otava's (formerly Hunter's)
//! `compute_change_points` (otava 0.8.0, `otava/analysis.py` and
//! `otava/change_point_divisive/`), Apache-2.0.
//!
//! The algorithm (Fleming et al., ICPE 2023, "Hunter"):
//! 1. **Split.** Slide a window of `window_len` points over the series
//!    (step `window_len / 2`, or on to the last change point found). In each
//!    window run E-divisive means (Matteson & James 2014, α = 1): find the
//!    split (τ, κ) maximising the energy statistic Q̂, test it with a
//!    two-sample Student t-test, keep it when p ≤ a relaxed threshold and
//!    split again, until a candidate is not significant. The union over all
//!    windows are the "weak" change points.
//! 2. **Merge.** Re-test every weak point between its neighbours on the whole
//!    series, then repeatedly drop the weakest one (highest p, or when all
//!    p < `max_pvalue`, the smallest magnitude if it is ≤ `min_magnitude`)
//!    and re-test.
//!
//! The port is deliberately literal, quirks included, so that it gives the
//! same change points as Otava (the TigerBeetle vectors in
//! `../shared/fixtures/otava` are the golden test):
//! - Q̂ is computed the way Otava's `PairDistanceCalculator` vectorises it
//!   (prefix sums of the same terms, in the same order), and the arg-max is
//!   numpy's: the first maximum in row-major (τ, κ) order over a square matrix
//!   whose lower triangle is 0.
//! - Ties between intervals keep the first (Python's `max`).
//! - Standard deviations are population ones (`np.std`, ddof 0) fed into
//!   `scipy.stats.ttest_ind_from_stats`, which expects sample ones; Otava
//!   does this, so we do too.
//! - After removing a point, the merge step re-tests the points now at the
//!   removed position and the one after it (the right neighbour and the one
//!   beyond), not the left neighbour.
//! - A NaN p-value (both sides constant and equal) is never significant, and
//!   compares like Python floats in `max`/`min`.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::RunPoint;
use super::verdict::Verdict;
use crate::config::ChangePointSettings;
use crate::stats::{median, student_t};

/// Parameters of [`detect`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ChangePointParams {
    /// Points per sliding window (≥ 2). Otava's default is 50.
    pub window_len: usize,
    /// A change point survives the merge when its p-value is below this.
    pub max_pvalue: f64,
    /// … and its relative change (the larger of forward and backward) is
    /// above this. 0.05 = 5%.
    pub min_magnitude: f64,
}

impl ChangePointParams {
    /// Otava 0.8's defaults: window 50, p 0.001, no magnitude floor.
    pub const OTAVA_DEFAULTS: ChangePointParams = ChangePointParams {
        window_len: 50,
        max_pvalue: 0.001,
        min_magnitude: 0.0,
    };

    /// Errors in words when the parameters cannot be used.
    pub fn validate(&self) -> Result<(), String> {
        if self.window_len < 2 {
            return Err(format!(
                "window_len must be at least 2, not {}",
                self.window_len
            ));
        }
        if !(self.max_pvalue > 0.0 && self.max_pvalue <= 1.0) {
            return Err(format!(
                "max_pvalue must be in (0, 1], not {}",
                self.max_pvalue
            ));
        }
        if !(self.min_magnitude >= 0.0 && self.min_magnitude.is_finite()) {
            return Err(format!(
                "min_magnitude must be ≥ 0, not {}",
                self.min_magnitude
            ));
        }
        Ok(())
    }

    /// The split pass's relaxed threshold, exactly as Otava sets it.
    pub fn first_pass_pvalue(&self) -> f64 {
        let p = self.max_pvalue;
        if p < 0.05 {
            p * 10.0
        } else if p < 0.5 {
            p * 2.0
        } else {
            p
        }
    }
}

/// perfdash's defaults: Otava's window and p, with the 5% magnitude floor
/// that keeps the t-test from calling 1–2% shifts on long quiet stretches
/// (see `docs/detection.md`).
impl Default for ChangePointParams {
    fn default() -> Self {
        ChangePointParams {
            min_magnitude: 0.05,
            ..ChangePointParams::OTAVA_DEFAULTS
        }
    }
}

impl From<&ChangePointSettings> for ChangePointParams {
    fn from(s: &ChangePointSettings) -> Self {
        ChangePointParams {
            window_len: s.window_len,
            max_pvalue: s.max_pvalue,
            min_magnitude: s.min_magnitude,
        }
    }
}

/// One detected level shift.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ChangePoint {
    /// Index of the first point of the new level.
    pub index: usize,
    /// Two-sided t-test p-value between the segments either side.
    pub pvalue: f64,
    /// mean_after ÷ mean_before − 1 (0 when mean_before is 0).
    pub forward_change: f64,
    /// max(|forward change|, |backward change|): what `min_magnitude` is
    /// compared with.
    pub magnitude: f64,
    pub mean_before: f64,
    pub mean_after: f64,
    /// Population standard deviations of the two segments.
    pub stddev_before: f64,
    pub stddev_after: f64,
}

/// Finds the change points of `series` (Otava's `compute_change_points`).
/// Returned in index order. Panics only if `params` fail
/// [`ChangePointParams::validate`].
pub fn detect(series: &[f64], params: &ChangePointParams) -> Vec<ChangePoint> {
    let mut detector = OnlineDetector::new(*params);
    detector.series = series.to_vec();
    detector.change_points()
}

/// The weak change points of the split pass, re-tested on the whole series
/// (Otava returns them as its second value). Exposed for tests and charts.
pub fn weak_change_points(series: &[f64], params: &ChangePointParams) -> Vec<ChangePoint> {
    let mut detector = OnlineDetector::new(*params);
    detector.series = series.to_vec();
    detector.weak_change_points()
}

/// One run as the `changepoint` policy judges it when it arrives
/// ([`online_regressions`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnlineJudgement {
    /// Not judged: before `skip`, or the latest change point has fewer
    /// than `min_runs_at_level` runs after it (not a level yet).
    NotJudged,
    /// No change point, or the latest one did not raise the level, or the
    /// run is back near the old level.
    Within,
    /// The latest change point raised the level and the run is still
    /// above it. `change` is that change point's index (Otava's: the first
    /// point of the new level) and `level_from` the change point before it
    /// (0 without one): where the old level began. [`dated_onset`] dates
    /// the change from them; the alarm and its suspect range start there,
    /// so the culprit commit is the range's last.
    Over { change: usize, level_from: usize },
}

impl OnlineJudgement {
    pub fn is_over(self) -> bool {
        matches!(self, OnlineJudgement::Over { .. })
    }
}

/// The `changepoint` policy's view of each run, as it would have been
/// computed when that run arrived: change points are detected on the run
/// medians up to and including run `t`, and run `t` is *over* when the most
/// recent change point raised the level (forward change > 0; its magnitude
/// is already above `min_magnitude`), and both run `t` and the median of the
/// runs since the change point are more than `min_magnitude` above the
/// median level before it. (Otava's t-test needs a few runs to split off a
/// one-run spike; until then the medians keep the spike from counting.)
///
/// A change point with fewer than `min_runs_at_level` runs after it (run `t`
/// included) is not a level yet: run `t` is then not judged (`None`), so it
/// neither raises, confirms nor reverts an alarm. With 2, a one-run spike
/// does not alarm (while fresh it is not judged; one run later the run is
/// back at the old level), at the cost of one run of delay. The first `skip` runs are
/// not judged either (other policies have no baseline there). A run over
/// the line carries the change's first run ([`OnlineJudgement::Over`]).
///
/// Cost: about one window's work per judged run (see [`OnlineDetector`]);
/// runs before `skip` cost only the complete windows they add up to. A gate
/// that needs the judgements of the last k runs only can pass
/// `skip = medians.len() − k` and gets them for O(history / window) window
/// searches plus O(k · window).
pub fn online_regressions(
    medians: &[f64],
    params: &ChangePointParams,
    skip: usize,
    min_runs_at_level: usize,
) -> Vec<OnlineJudgement> {
    // One detector fed run by run: each run costs about one window's work
    // (see OnlineDetector), not a detection over the whole history.
    let mut detector = OnlineDetector::new(*params);
    let mut levels = Levels::default();
    medians
        .iter()
        .enumerate()
        .map(|(t, &value)| {
            detector.push(value);
            if t < skip {
                return OnlineJudgement::NotJudged;
            }
            let cps = detector.change_points();
            let Some(cp) = cps.last() else {
                return OnlineJudgement::Within;
            };
            if t + 1 - cp.index < min_runs_at_level {
                return OnlineJudgement::NotJudged;
            }
            // The old level: the runs since the change point before this
            // one, reaching back past change points that left fewer than
            // MIN_RUNS_AT_OLD_LEVEL runs between them.
            let Some(previous) = old_level_start(&cps, cp.index) else {
                return OnlineJudgement::Within;
            };
            let before = levels
                .between(medians, previous, cp.index)
                .unwrap_or(cp.mean_before);
            let after = levels.since(medians, cp.index, t);
            let line = before * (1.0 + params.min_magnitude);
            if cp.forward_change > 0.0 && medians[t] > line && after > line {
                OnlineJudgement::Over {
                    change: cp.index,
                    level_from: previous,
                }
            } else {
                OnlineJudgement::Within
            }
        })
        .collect()
}

/// How many runs the level before a change must hold for the change to be
/// judged a regression from it: as many as a baseline needs
/// (`analysis.min_baseline_runs`' default). A history's first run alone
/// below the rest is a change point at index 1 whose "old level" is that
/// one run; every later run sat more than `min_magnitude` above it, and
/// the policy held one false alarm open for the whole history (3 of the
/// mixed fleet's 560 quiet steps landed inside such an alarm).
pub const MIN_RUNS_AT_OLD_LEVEL: usize = 3;

/// Where the level before the change point at `index` (the last of `cps`)
/// starts: at the latest earlier change point with at least
/// [`MIN_RUNS_AT_OLD_LEVEL`] runs before `index`, or at the first run;
/// `None` when not even the runs from the first one are that many.
fn old_level_start(cps: &[ChangePoint], index: usize) -> Option<usize> {
    let start = cps[..cps.len().saturating_sub(1)]
        .iter()
        .rev()
        .map(|c| c.index)
        .find(|&from| index >= from + MIN_RUNS_AT_OLD_LEVEL)
        .unwrap_or(0);
    (index >= start + MIN_RUNS_AT_OLD_LEVEL).then_some(start)
}

/// The medians [`online_regressions`] compares, kept from run to run: the
/// level between two change points never changes once both are known, and
/// the level since the latest one grows by one run at a time (a sorted
/// copy, one insertion per run, instead of sorting the segment again).
#[derive(Debug, Default)]
struct Levels {
    between: HashMap<(usize, usize), Option<f64>>,
    /// The change point the sorted copy starts at, and the copy.
    since: Option<(usize, Vec<f64>)>,
}

impl Levels {
    /// `median(&medians[from..to])`.
    fn between(&mut self, medians: &[f64], from: usize, to: usize) -> Option<f64> {
        *self
            .between
            .entry((from, to))
            .or_insert_with(|| median(&medians[from..to]))
    }

    /// `median(&medians[from..=t])`, for a `t` one past the last call's
    /// when `from` is unchanged.
    fn since(&mut self, medians: &[f64], from: usize, t: usize) -> f64 {
        match &mut self.since {
            Some((start, sorted)) if *start == from && from + sorted.len() == t => {
                let value = medians[t];
                let at = sorted.partition_point(|x| x.total_cmp(&value).is_le());
                sorted.insert(at, value);
            }
            _ => {
                let mut sorted = medians[from..=t].to_vec();
                sorted.sort_by(f64::total_cmp);
                self.since = Some((from, sorted));
            }
        }
        let sorted = &self.since.as_ref().expect("just set").1;
        crate::stats::median_of_sorted(sorted).expect("medians[from..=t] holds t")
    }
}

/// A change point on one endpoint's history, as the charts and the history
/// page show it. The levels are the medians of the run medians between
/// neighbouring change points (recomputed on the final segments; Otava's
/// own means can be left over from the merge pass), unless those do not
/// show the change the statistic found (its direction, a magnitude above
/// `min_magnitude`): then the statistic's own means. The direction is
/// always the statistic's.
#[derive(Debug, Clone, Serialize)]
pub struct LevelShift {
    /// The first run at the new level.
    pub run: String,
    /// When that run started: the onset date.
    #[serde(serialize_with = "serialize_rfc3339")]
    pub started_at: DateTime<Utc>,
    /// Position in the endpoint's points.
    #[serde(skip)]
    pub point_index: usize,
    pub level_before_ms: f64,
    pub level_after_ms: f64,
    /// level_after ÷ level_before − 1 (0.12 = 12% slower).
    pub change: f64,
    /// `regression` (slower) or `improvement`.
    pub direction: &'static str,
    /// Otava's t-test p-value for the change point.
    pub pvalue: f64,
    /// Between the last run at the old level and the first at the new one
    /// (`run`), with both commits.
    pub suspect: super::evidence::SuspectRange,
}

fn serialize_rfc3339<S: serde::Serializer>(t: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&crate::calendar::rfc3339(*t))
}

/// The runs change points are looked for in: positions of the points with
/// enough rounds (`insufficient` and `failed` runs are left out, as they
/// are left out of baselines), one list per series (`[analysis]
/// series_by`: a host's runs are never one series with another's), cut
/// where the load profile changed (a run marked not comparable starts a
/// new series: a level shift there is not a regression).
pub fn comparable_series(points: &[RunPoint]) -> Vec<Vec<usize>> {
    let mut keys: Vec<&crate::model::SeriesKey> = points.iter().map(|p| &p.series).collect();
    keys.sort();
    keys.dedup();
    let mut out: Vec<Vec<usize>> = Vec::new();
    for key in keys {
        let mut current: Vec<usize> = Vec::new();
        let mut previous_not_comparable = None;
        for (i, p) in points.iter().enumerate().filter(|(_, p)| &p.series == key) {
            let starts_new_profile =
                p.not_comparable.is_some() && !previous_not_comparable.unwrap_or(false);
            if starts_new_profile && !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            if !matches!(p.verdict, Verdict::Insufficient | Verdict::Failed) {
                current.push(i);
            }
            previous_not_comparable = Some(p.not_comparable.is_some());
        }
        if !current.is_empty() {
            out.push(current);
        }
    }
    out
}

/// The change points of one endpoint's run medians, per comparable series
/// ([`comparable_series`]).
pub fn endpoint_change_points(
    points: &[RunPoint],
    settings: &ChangePointSettings,
) -> Vec<LevelShift> {
    let params = ChangePointParams::from(settings);
    let mut out = Vec::new();
    for usable in comparable_series(points) {
        let medians: Vec<f64> = usable.iter().map(|&i| points[i].median_p99_ms).collect();
        let measured = |k: usize| !points[usable[k]].environment_suspect;
        let cps = detect(&medians, &params);
        let bounds: Vec<usize> = std::iter::once(0)
            .chain(cps.iter().map(|c| c.index))
            .chain(std::iter::once(medians.len()))
            .collect();
        for (k, cp) in cps.iter().enumerate() {
            let (lo, hi) = (bounds[k], bounds[k + 2]);
            let rising = cp.forward_change > 0.0;
            let onset = dated_onset(
                &medians,
                lo,
                cp.index,
                hi,
                rising,
                params.min_magnitude,
                &measured,
            );
            // The levels either side of the onset, when they show the
            // change the statistic found; else the statistic's own means
            // (the median of a segment that also holds a short episode can
            // sit at the other side's level: the end of a ×1.8 episode
            // was once drawn as a "+0.6% regression" when its statistic
            // said −15.4%).
            let (before, after) = match level_change(&medians, lo, onset, hi, &measured) {
                Some((b, a)) if shows_change(b, a, rising, params.min_magnitude) => (b, a),
                _ => (cp.mean_before, cp.mean_after),
            };
            let point = &points[usable[onset]];
            let change = if before == 0.0 {
                0.0
            } else {
                after / before - 1.0
            };
            out.push(LevelShift {
                run: point.run.clone(),
                started_at: point.started_at,
                point_index: usable[onset],
                level_before_ms: before,
                level_after_ms: after,
                change,
                // The direction of the statistic that found the point.
                direction: if cp.forward_change > 0.0 {
                    "regression"
                } else {
                    "improvement"
                },
                pvalue: cp.pvalue,
                suspect: super::evidence::SuspectRange::before(points, usable[onset]),
            });
        }
    }
    out
}

/// The runs of `lo..hi` that measured the endpoint's level (`measured`:
/// not in a run where most endpoints moved together), and the position
/// among them of the first at or after `at`.
fn kept_runs(
    lo: usize,
    at: usize,
    hi: usize,
    measured: &dyn Fn(usize) -> bool,
) -> (Vec<usize>, usize) {
    let kept: Vec<usize> = (lo..hi).filter(|&i| measured(i)).collect();
    let position = kept.partition_point(|&i| i < at);
    (kept, position)
}

/// The levels either side of an onset at `at`: the medians of the
/// measured runs of `lo..at` and of `at..hi`.
fn level_change(
    medians: &[f64],
    lo: usize,
    at: usize,
    hi: usize,
    measured: &dyn Fn(usize) -> bool,
) -> Option<(f64, f64)> {
    let (kept, k) = kept_runs(lo, at, hi, measured);
    let values: Vec<f64> = kept.iter().map(|&i| medians[i]).collect();
    Some((median(&values[..k])?, median(&values[k..])?))
}

/// Whether levels `before` → `after` show the change a change point's
/// statistic found: its direction (`rising`), and a change (after ÷
/// before − 1, as the charts print it) larger than `min_magnitude`.
fn shows_change(before: f64, after: f64, rising: bool, min_magnitude: f64) -> bool {
    before > 0.0
        && after > 0.0
        && (after > before) == rising
        && (after / before - 1.0).abs() > min_magnitude
}

/// The first run of the change found at `index` (between the neighbouring
/// change points `lo` and `hi`; `rising`: the direction of its statistic):
/// `refine_onset`'s on the runs that measured the endpoint's level
/// (`measured`; a run where most endpoints moved together measured the
/// environment, and a noisy-neighbour run just before a step was once
/// taken for its first run), unless at the refined onset the run medians
/// would no longer show the change the statistic found (another
/// direction, or a magnitude not above `min_magnitude`: once a refined
/// onset showed +3.3% on a 5% floor); then the first measured run from
/// Otava's own index.
pub fn dated_onset(
    medians: &[f64],
    lo: usize,
    index: usize,
    hi: usize,
    rising: bool,
    min_magnitude: f64,
    measured: &dyn Fn(usize) -> bool,
) -> usize {
    let (kept, at) = kept_runs(lo, index, hi, measured);
    if at == 0 || at >= kept.len() {
        return kept.get(at).copied().unwrap_or(index);
    }
    let values: Vec<f64> = kept.iter().map(|&i| medians[i]).collect();
    let refined = refine_onset(&values, at);
    let shows = |k: usize| match (median(&values[..k]), median(&values[k..])) {
        (Some(b), Some(a)) => shows_change(b, a, rising, min_magnitude),
        _ => false,
    };
    if refined == at || shows(refined) {
        kept[refined]
    } else {
        kept[at]
    }
}

/// How far from Otava's index [`refine_onset`] may move a change's first
/// run, and how many runs either side of it it reads.
const ONSET_REACH: usize = 10;

/// The first run at the new level near the split Otava chose (`index`,
/// `0 < index < len`): the split of the run medians within
/// [`ONSET_REACH`] of it into an old and a new level whose sums of
/// absolute deviations (on a log scale) from each side's median are least;
/// on a tie, the nearest to Otava's index. E-divisive places a split where
/// the energy statistic peaks, which can be a run or more away from the
/// first run at the new level when the runs around it are noisy
/// (order-detail's improvement on the bundled archive was dated
/// 2026-10-07 while 2026-10-05 was already at the new level).
///
/// A run beyond the new level by more than twice the change (a GC-heavy
/// run ×1.7 just before a +10% step) is at neither level: it is left out,
/// never taken for the first run of the new one.
fn refine_onset(medians: &[f64], index: usize) -> usize {
    let (Some(before), Some(after)) = (median(&medians[..index]), median(&medians[index..])) else {
        return index;
    };
    if !(before > 0.0 && after > 0.0) {
        return index;
    }
    let step = (after / before).ln();
    let outlier = |v: f64| {
        let from_after = (v / after).ln();
        v.is_nan()
            || v <= 0.0
            || (from_after.signum() == step.signum() && from_after.abs() > 2.0 * step.abs())
    };
    let from = index.saturating_sub(2 * ONSET_REACH);
    let to = (index + 2 * ONSET_REACH).min(medians.len());
    let kept: Vec<usize> = (from..to).filter(|&i| !outlier(medians[i])).collect();
    let logs: Vec<f64> = kept.iter().map(|&i| medians[i].ln()).collect();
    let deviations = |side: &[f64]| -> f64 {
        let m = median(side).unwrap_or(0.0);
        side.iter().map(|v| (v - m).abs()).sum()
    };
    let mut best: Option<(f64, usize, usize)> = None;
    for k in 1..kept.len() {
        let at = kept[k];
        if at == 0 || at.abs_diff(index) > ONSET_REACH {
            continue;
        }
        let cost = deviations(&logs[..k]) + deviations(&logs[k..]);
        let distance = at.abs_diff(index);
        let better = match best {
            None => true,
            Some((c, _, d)) => cost < c || (cost == c && distance < d),
        };
        if better {
            best = Some((cost, at, distance));
        }
    }
    best.map_or(index, |(_, at, _)| at)
}

/// Means, standard deviations and p-value either side of a split (Otava's
/// `TTestStats`).
#[derive(Debug, Clone, Copy)]
struct Stats {
    pvalue: f64,
    mean_1: f64,
    mean_2: f64,
    std_1: f64,
    std_2: f64,
}

impl Stats {
    fn forward_rel_change(&self) -> f64 {
        if self.mean_1 == 0.0 {
            0.0
        } else {
            self.mean_2 / self.mean_1 - 1.0
        }
    }

    fn backward_rel_change(&self) -> f64 {
        if self.mean_2 == 0.0 {
            0.0
        } else {
            self.mean_1 / self.mean_2 - 1.0
        }
    }

    fn change_magnitude(&self) -> f64 {
        self.forward_rel_change()
            .abs()
            .max(self.backward_rel_change().abs())
    }
}

#[derive(Debug, Clone, Copy)]
struct Found {
    index: usize,
    stats: Stats,
}

impl Found {
    fn public(&self) -> ChangePoint {
        ChangePoint {
            index: self.index,
            pvalue: self.stats.pvalue,
            forward_change: self.stats.forward_rel_change(),
            magnitude: self.stats.change_magnitude(),
            mean_before: self.stats.mean_1,
            mean_after: self.stats.mean_2,
            stddev_before: self.stats.std_1,
            stddev_after: self.stats.std_2,
        }
    }
}

/// A half-open range of indexes, `start..stop`.
type Interval = (usize, usize);

/// Otava's `SignificanceTester.get_intervals`: the segments between sorted
/// change points, empty ones dropped.
#[cfg(test)]
fn intervals(change_points: &[usize], len: usize) -> Vec<Interval> {
    intervals_between(change_points, 0, len)
}

/// [`intervals`] of `lo..hi` (a window of the series), for change points
/// inside it.
fn intervals_between(change_points: &[usize], lo: usize, hi: usize) -> Vec<Interval> {
    let mut out = Vec::with_capacity(change_points.len() + 1);
    let mut start = lo;
    for &cp in change_points {
        if start != cp {
            out.push((start, cp));
        }
        start = cp;
    }
    if start != hi {
        out.push((start, hi));
    }
    out
}

/// The two sides of a candidate (Otava's `get_sides`): a point on an
/// interval boundary (merge pass) takes the whole intervals either side; a
/// point inside an interval (split pass) splits it.
fn sides(index: usize, intervals: &[Interval]) -> (Interval, Interval) {
    for (i, &(start, stop)) in intervals.iter().enumerate() {
        if stop == index {
            return ((start, stop), intervals[i + 1]);
        }
        if start < index && index < stop {
            return ((start, index), (index, stop));
        }
    }
    unreachable!("change point {index} lies in no interval of {intervals:?}");
}

/// Otava's `TTestSignificanceTester.change_point` (the batch reference
/// port's; the detector memoises it in [`Memo::test_split`]).
#[cfg(test)]
fn test_split(index: usize, series: &[f64], intervals: &[Interval]) -> Stats {
    let ((l0, l1), (r0, r1)) = sides(index, intervals);
    compare(&series[l0..l1], &series[r0..r1])
}

/// Otava's `TTestSignificanceTester.compare`: `np.mean`, `np.std` (ddof 0)
/// and `scipy.stats.ttest_ind_from_stats` (pooled variance, two-sided).
fn compare(left: &[f64], right: &[f64]) -> Stats {
    let mean_1 = np_mean(left);
    let mean_2 = np_mean(right);
    let std_1 = if left.len() >= 2 { np_std(left) } else { 0.0 };
    let std_2 = if right.len() >= 2 { np_std(right) } else { 0.0 };
    let pvalue = if left.len() + right.len() > 2 {
        let (n1, n2) = (left.len() as f64, right.len() as f64);
        // scipy zeroes the variance of a one-point sample.
        let v1 = if left.len() == 1 { 0.0 } else { std_1 * std_1 };
        let v2 = if right.len() == 1 { 0.0 } else { std_2 * std_2 };
        let df = n1 + n2 - 2.0;
        let svar = ((n1 - 1.0) * v1 + (n2 - 1.0) * v2) / df;
        let denom = (svar * (1.0 / n1 + 1.0 / n2)).sqrt();
        let t = (mean_1 - mean_2) / denom;
        student_t::two_sided_p(t, df)
    } else {
        1.0
    };
    Stats {
        pvalue,
        mean_1,
        mean_2,
        std_1,
        std_2,
    }
}

/// numpy's `add.reduce` on a contiguous float64 array: the first element is
/// the initial value and the rest is summed pairwise (blocks of 8, then
/// halves above 128 elements). Matching it keeps means and deviations equal
/// to Otava's in the last bit, so ties and thresholds fall the same way.
fn np_sum(values: &[f64]) -> f64 {
    match values.split_first() {
        None => 0.0,
        Some((first, rest)) => first + pairwise_sum(rest),
    }
}

fn pairwise_sum(a: &[f64]) -> f64 {
    const BLOCK: usize = 128;
    let n = a.len();
    if n < 8 {
        let mut res = 0.0;
        for &x in a {
            res += x;
        }
        res
    } else if n <= BLOCK {
        let mut r = [0.0; 8];
        r.copy_from_slice(&a[..8]);
        let mut i = 8;
        while i < n - (n % 8) {
            for j in 0..8 {
                r[j] += a[i + j];
            }
            i += 8;
        }
        let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        while i < n {
            res += a[i];
            i += 1;
        }
        res
    } else {
        let mut n2 = n / 2;
        n2 -= n2 % 8;
        pairwise_sum(&a[..n2]) + pairwise_sum(&a[n2..])
    }
}

fn np_mean(values: &[f64]) -> f64 {
    np_sum(values) / values.len() as f64
}

fn np_std(values: &[f64]) -> f64 {
    let mean = np_mean(values);
    let squares: Vec<f64> = values
        .iter()
        .map(|x| {
            let d = x - mean;
            d * d
        })
        .collect();
    (np_sum(&squares) / values.len() as f64).sqrt()
}

/// Otava's Q̂ arg-max (`PairDistanceCalculator` and
/// `get_candidate_change_point`) over one interval `start..stop` of the
/// window that starts at `window`, grown one point at a time.
///
/// Q̂(τ, κ) depends only on the points from the window's start up to κ,
/// never on where the interval or the window ends: appending a point adds
/// one column κ to Otava's matrices and leaves every earlier entry as it
/// was. Each new entry is summed in the order numpy sums it (the same
/// terms, the same prefix sums), so every Q̂ is bit-identical to the batch
/// computation and the arg-max falls on the same (τ, κ). Growing by one
/// point costs O(window) instead of the O(window²) of recomputing it.
#[derive(Debug, Clone)]
struct GrowingInterval {
    /// Global index of the window's first point: V counts distances from
    /// there.
    window: usize,
    start: usize,
    /// The interval is `start..stop`; it has m = stop − 1 − start columns.
    stop: usize,
    /// `H[x][κ]` at the last column κ, for the rows x = start.. of the
    /// interval.
    rows: Vec<f64>,
    /// The cumulative sum of V restricted to the interval.
    cum_v: Vec<f64>,
    /// The arg-max so far: Q̂ and its (row, column) within the interval.
    best: (f64, usize, usize),
    /// (τ, Q̂) of the arg-max for each stop: `best_by_stop[stop − start − 2]`.
    best_by_stop: Vec<(usize, f64)>,
    /// Scratch for one column of the reversed cumulative sum of H.
    rev: Vec<f64>,
}

impl GrowingInterval {
    fn new(window: usize, start: usize) -> Self {
        GrowingInterval {
            window,
            start,
            stop: start + 1,
            rows: Vec::new(),
            cum_v: Vec::new(),
            best: (f64::NEG_INFINITY, 0, 0),
            best_by_stop: Vec::new(),
            rev: Vec::new(),
        }
    }

    /// Otava's `get_candidate_change_point` for `series[start..stop]`: the
    /// τ of the first arg-max of Q̂ (row-major), and the maximum.
    fn candidate(&mut self, series: &[f64], stop: usize) -> (usize, f64) {
        debug_assert!(stop >= self.start + 2, "an interval of at least two points");
        while self.stop < stop {
            self.grow(series);
        }
        self.best_by_stop[stop - self.start - 2]
    }

    /// Takes in the point `series[self.stop]`: one more column.
    fn grow(&mut self, series: &[f64]) {
        let z = &series[self.window..];
        let s = self.start - self.window;
        let j = self.stop - 1 - self.start; // the new column
        let m = j + 1;
        let y = s + j; // its column of H and V, window-relative
        let newest = z[y + 1];
        // H[x][y] = H[x][y−1] + |z_x − z_{y+1}|; the new row x = y starts
        // at its diagonal (the zeros before it add nothing).
        for (x, h) in self.rows.iter_mut().enumerate() {
            *h += (z[s + x] - newest).abs();
        }
        self.rows.push((z[y] - newest).abs());
        // V[y] = Σ_{x ≤ y} |z_x − z_{y+1}|, less the sum over the points
        // before the interval, both summed from x = 0 as Otava does.
        let mut v = 0.0;
        let mut before = 0.0;
        for (x, &zx) in z[..=y].iter().enumerate() {
            if x == s {
                before = v;
            }
            let d = (zx - newest).abs();
            v = if x == 0 { d } else { v + d };
        }
        let vs = v - before;
        let cum = if j == 0 { vs } else { self.cum_v[j - 1] + vs };
        self.cum_v.push(cum);
        // flipud(cumsum(flipud(H[1:, 1:]))) for the new column.
        let h = &self.rows;
        self.rev.clear();
        self.rev.resize(j, 0.0);
        for r in (0..j).rev() {
            self.rev[r] = if r + 1 == j {
                h[j]
            } else {
                self.rev[r + 1] + h[r + 1]
            };
        }
        let mut cum_h = 0.0;
        for i in 0..m {
            cum_h = if i == 0 { h[0] } else { cum_h + h[i] };
            let q = q_hat(i, j, m, cum_h, &self.cum_v, &self.rev);
            offer(&mut self.best, q, i, j);
        }
        if m == 2 {
            // Below the diagonal numpy's matrix holds zeros; (1, 0) is the
            // first of them in row-major order, so the only one that can win.
            offer(&mut self.best, 0.0, 1, 0);
        }
        self.best_by_stop
            .push((self.best.1 + 1 + self.start, self.best.0));
        self.stop += 1;
    }
}

/// Offers Q̂ at (row i, column j) to the arg-max so far: numpy's arg-max
/// keeps the first maximum in row-major order.
fn offer(best: &mut (f64, usize, usize), q: f64, i: usize, j: usize) {
    let (best_q, bi, bj) = *best;
    if q > best_q || (q == best_q && (i, j) < (bi, bj)) {
        *best = (q, i, j);
    }
}

/// One entry Q̂(τ, κ) on or above the diagonal (row i = τ − s − 1, column
/// j = κ − s − 2) of an interval with m columns, exactly as Otava's
/// vectorised formula evaluates it:
/// `A − B − C` with A = 2/(κ−s) · (cumsum(H) − shifted cumsum(V)),
/// B = 2(κ−τ)/((κ−s)(τ−s−1)) · ΣV, C = 2(τ−s)/((κ−s)(κ−τ−1)) · ΣH over the
/// right segment. `rev[i]` is the reversed cumulative sum of H's column j
/// below row i.
fn q_hat(i: usize, j: usize, m: usize, cum_h: f64, cum_v: &[f64], rev: &[f64]) -> f64 {
    debug_assert!(i <= j && j < m);
    let a_coef = 2.0 / (j + 2) as f64;
    let within_left = if i >= 1 { cum_v[i - 1] } else { 0.0 };
    let a = a_coef * (cum_h - within_left);
    let b = if i >= 1 && j >= 1 {
        let den = (j + 2) * i;
        let coef = if den != 0 {
            (2 * (j + 1 - i)) as f64 / den as f64
        } else {
            0.0
        };
        coef * cum_v[i - 1]
    } else {
        0.0
    };
    let c = if i + 1 < m && j >= 1 {
        let coef = if j > i {
            let den = (j + 2) * (j - i);
            (2 * (i + 1)) as f64 / den as f64
        } else {
            0.0
        };
        coef * rev[i]
    } else {
        0.0
    };
    a - b - c
}

/// Work on one series that is only ever appended to, kept so that it is
/// done once: Q̂ arg-maxes by (window start, interval start), t-tests by
/// (left start, split, right stop). Neither depends on points after the
/// stop they were computed for.
#[derive(Debug, Default)]
struct Memo {
    grown: HashMap<(usize, usize), GrowingInterval>,
    tests: HashMap<(usize, usize, usize), Stats>,
}

impl Memo {
    fn candidate(
        &mut self,
        series: &[f64],
        window: usize,
        start: usize,
        stop: usize,
    ) -> (usize, f64) {
        self.grown
            .entry((window, start))
            .or_insert_with(|| GrowingInterval::new(window, start))
            .candidate(series, stop)
    }

    /// Otava's t-test of `series[left..index]` against `series[index..right]`.
    fn test(&mut self, series: &[f64], left: usize, index: usize, right: usize) -> Stats {
        *self
            .tests
            .entry((left, index, right))
            .or_insert_with(|| compare(&series[left..index], &series[index..right]))
    }

    /// Otava's `TTestSignificanceTester.change_point` for a point inside one
    /// of `intervals` (split pass).
    fn test_split(&mut self, series: &[f64], index: usize, intervals: &[Interval]) -> Stats {
        let ((left, _), (_, right)) = sides(index, intervals);
        self.test(series, left, index, right)
    }

    /// The t-test of `cps[k]` between its neighbours in `cps` (sorted
    /// change points of the whole series): Otava's re-test in `split` and
    /// `merge`.
    fn retest(&mut self, series: &[f64], cps: &[Found], k: usize) -> Stats {
        let left = if k == 0 { 0 } else { cps[k - 1].index };
        let right = cps.get(k + 1).map_or(series.len(), |c| c.index);
        self.test(series, left, cps[k].index, right)
    }
}

/// Otava's `ChangePointDetector.get_change_points` on `series[window..end]`
/// with a t-test at `max_pvalue`: E-divisive splitting until the best
/// candidate is not significant. Returns global indexes, sorted.
fn window_change_points(
    memo: &mut Memo,
    series: &[f64],
    window: usize,
    end: usize,
    max_pvalue: f64,
) -> Vec<usize> {
    let mut found: Vec<usize> = Vec::new();
    loop {
        let ivs = intervals_between(&found, window, end);
        // Otava's `get_next_candidate`: the best over all intervals longer
        // than one point; the first wins a tie (only a strictly greater Q̂
        // replaces it, as with Python's `max`).
        let mut best: Option<(usize, f64)> = None;
        for &(start, stop) in &ivs {
            if stop - start > 1 {
                let cand = memo.candidate(series, window, start, stop);
                if best.is_none_or(|(_, q)| cand.1 > q) {
                    best = Some(cand);
                }
            }
        }
        let Some((index, _qhat)) = best else {
            break;
        };
        // `p <= alpha`; a NaN p is never significant.
        if memo.test_split(series, index, &ivs).pvalue <= max_pvalue {
            let at = found.partition_point(|&f| f < index);
            found.insert(at, index);
        } else {
            break;
        }
    }
    found
}

/// Otava's change points of a series that grows one point at a time, as
/// [`detect`] would find them on the points so far.
///
/// Otava's split pass slides windows of `window_len` points over the
/// series; a window that is complete (all its points are in) never changes
/// again, nor does where the next window starts, so its change points are
/// found once and kept. Only the last, incomplete windows are searched
/// again when a point arrives, and they reuse every Q̂ column and t-test
/// computed for earlier points. Judging one more point costs about
/// O(window) for the split pass; the merge pass re-tests the weak change
/// points (a handful per series: few of them ever pass the relaxed first
/// threshold) from memoised t-tests.
///
/// The result after each point equals `detect` on the points so far
/// (a property test checks it on random series).
#[derive(Debug)]
pub struct OnlineDetector {
    params: ChangePointParams,
    series: Vec<f64>,
    memo: Memo,
    /// Weak change points of the complete windows, sorted, no duplicates.
    settled: Vec<usize>,
    /// Where the first window that is not complete yet starts.
    frontier: usize,
}

impl OnlineDetector {
    /// Panics only if `params` fail [`ChangePointParams::validate`].
    pub fn new(params: ChangePointParams) -> Self {
        if let Err(e) = params.validate() {
            panic!("invalid change-point parameters: {e}");
        }
        OnlineDetector {
            params,
            series: Vec::new(),
            memo: Memo::default(),
            settled: Vec::new(),
            frontier: 0,
        }
    }

    /// Appends a point (finite, as run medians are).
    pub fn push(&mut self, value: f64) {
        self.series.push(value);
    }

    /// The points so far.
    pub fn series(&self) -> &[f64] {
        &self.series
    }

    /// Otava's change points of the points so far, in index order.
    pub fn change_points(&mut self) -> Vec<ChangePoint> {
        let weak = self.weak();
        merge(
            weak,
            &mut self.memo,
            &self.series,
            self.params.max_pvalue,
            self.params.min_magnitude,
        )
        .into_iter()
        .map(|cp| cp.public())
        .collect()
    }

    /// The weak change points of the split pass, re-tested on the whole
    /// series (Otava returns them as its second value).
    pub fn weak_change_points(&mut self) -> Vec<ChangePoint> {
        self.weak().into_iter().map(|cp| cp.public()).collect()
    }

    /// Searches the windows that became complete since the last call.
    fn settle(&mut self) {
        let window_len = self.params.window_len;
        let relaxed = self.params.first_pass_pvalue();
        let mut moved = false;
        while self.frontier + window_len <= self.series.len() {
            let start = self.frontier;
            let end = start + window_len;
            let found = window_change_points(&mut self.memo, &self.series, start, end, relaxed);
            let last = found.last().copied().unwrap_or(0);
            self.frontier = last.max(start + window_len / 2);
            for cp in found {
                if let Err(at) = self.settled.binary_search(&cp) {
                    self.settled.insert(at, cp);
                }
            }
            moved = true;
        }
        if moved {
            // No later window starts before the frontier.
            let frontier = self.frontier;
            self.memo.grown.retain(|&(window, _), _| window >= frontier);
        }
    }

    /// Otava's `split` on the points so far: sliding windows, the union of
    /// their change points, each re-tested between its neighbours.
    fn weak(&mut self) -> Vec<Found> {
        self.settle();
        let len = self.series.len();
        let window_len = self.params.window_len;
        let relaxed = self.params.first_pass_pvalue();
        let mut indexes = self.settled.clone();
        let mut start = self.frontier;
        while start < len {
            let found = window_change_points(&mut self.memo, &self.series, start, len, relaxed);
            let last = found.last().copied().unwrap_or(0);
            start = last.max(start + window_len / 2);
            for cp in found {
                if let Err(at) = indexes.binary_search(&cp) {
                    indexes.insert(at, cp);
                }
            }
        }
        let mut cps: Vec<Found> = indexes
            .into_iter()
            .map(|index| Found {
                index,
                stats: NOT_TESTED,
            })
            .collect();
        for k in 0..cps.len() {
            cps[k].stats = self.memo.retest(&self.series, &cps, k);
        }
        cps
    }
}

/// A placeholder until a change point's t-test is in.
const NOT_TESTED: Stats = Stats {
    pvalue: f64::NAN,
    mean_1: f64::NAN,
    mean_2: f64::NAN,
    std_1: f64::NAN,
    std_2: f64::NAN,
};

/// Python's `max(items, key=…)`: the first item no later item is `>` than.
fn python_max_by(items: &[Found], key: impl Fn(&Found) -> f64) -> usize {
    let mut best = 0;
    for i in 1..items.len() {
        if key(&items[i]) > key(&items[best]) {
            best = i;
        }
    }
    best
}

/// Python's `min(items, key=…)`.
fn python_min_by(items: &[Found], key: impl Fn(&Found) -> f64) -> usize {
    let mut best = 0;
    for i in 1..items.len() {
        if key(&items[i]) < key(&items[best]) {
            best = i;
        }
    }
    best
}

/// Otava's `merge`.
fn merge(
    mut cps: Vec<Found>,
    memo: &mut Memo,
    series: &[f64],
    max_pvalue: f64,
    min_magnitude: f64,
) -> Vec<Found> {
    while !cps.is_empty() {
        let mut weakest = python_max_by(&cps, |c| c.stats.pvalue);
        if cps[weakest].stats.pvalue < max_pvalue {
            weakest = python_min_by(&cps, |c| c.stats.change_magnitude());
            if cps[weakest].stats.change_magnitude() > min_magnitude {
                return cps;
            }
        }
        cps.remove(weakest);
        // Otava re-tests the points now at `weakest` and `weakest + 1`
        // (not the left neighbour, whose right side also changed).
        for k in [weakest, weakest + 1] {
            if k < cps.len() {
                cps[k].stats = memo.retest(series, &cps, k);
            }
        }
    }
    cps
}

pub mod known;
#[cfg(test)]
mod reference;
#[cfg(test)]
mod tests;
