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
    if let Err(e) = params.validate() {
        panic!("invalid change-point parameters: {e}");
    }
    let weak = split(series, params.window_len, params.first_pass_pvalue());
    merge(weak, series, params.max_pvalue, params.min_magnitude)
        .into_iter()
        .map(|cp| cp.public())
        .collect()
}

/// The weak change points of the split pass, re-tested on the whole series
/// (Otava returns them as its second value). Exposed for tests and charts.
pub fn weak_change_points(series: &[f64], params: &ChangePointParams) -> Vec<ChangePoint> {
    if let Err(e) = params.validate() {
        panic!("invalid change-point parameters: {e}");
    }
    split(series, params.window_len, params.first_pass_pvalue())
        .into_iter()
        .map(|cp| cp.public())
        .collect()
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
/// not judged either (other policies have no baseline there).
pub fn online_regressions(
    medians: &[f64],
    params: &ChangePointParams,
    skip: usize,
    min_runs_at_level: usize,
) -> Vec<Option<bool>> {
    (0..medians.len())
        .map(|t| {
            if t < skip {
                return None;
            }
            let cps = detect(&medians[..=t], params);
            let Some(cp) = cps.last() else {
                return Some(false);
            };
            if t + 1 - cp.index < min_runs_at_level {
                return None;
            }
            let previous = cps.len().checked_sub(2).map_or(0, |i| cps[i].index);
            let before = median(&medians[previous..cp.index]).unwrap_or(cp.mean_before);
            let after = median(&medians[cp.index..=t]).unwrap_or(medians[t]);
            let line = before * (1.0 + params.min_magnitude);
            Some(cp.forward_change > 0.0 && medians[t] > line && after > line)
        })
        .collect()
}

/// A change point on one endpoint's history, as the charts and the history
/// page show it. The levels are the medians of the run medians between
/// neighbouring change points (recomputed on the final segments; Otava's
/// own means can be left over from the merge pass).
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
/// are left out of baselines), cut where the load profile changed (a run marked not
/// comparable starts a new series: a level shift there is not a regression).
pub fn comparable_series(points: &[RunPoint]) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    let mut current: Vec<usize> = Vec::new();
    for (i, p) in points.iter().enumerate() {
        let starts_new_profile =
            p.not_comparable.is_some() && (i == 0 || points[i - 1].not_comparable.is_none());
        if starts_new_profile && !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
        if !matches!(p.verdict, Verdict::Insufficient | Verdict::Failed) {
            current.push(i);
        }
    }
    if !current.is_empty() {
        out.push(current);
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
        let cps = detect(&medians, &params);
        let bounds: Vec<usize> = std::iter::once(0)
            .chain(cps.iter().map(|c| c.index))
            .chain(std::iter::once(medians.len()))
            .collect();
        for (k, cp) in cps.iter().enumerate() {
            let (lo, hi) = (bounds[k], bounds[k + 2]);
            let onset = refine_onset(&medians, lo, cp.index, hi);
            let (Some(before), Some(after)) =
                (median(&medians[lo..onset]), median(&medians[onset..hi]))
            else {
                continue;
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
                direction: if after > before {
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

/// The first run at the new level, checked against the run medians on
/// both sides of the split Otava chose (`index`, between the neighbouring
/// change points `lo` and `hi`): the onset moves earlier while the run
/// before it is nearer (on a log scale) the level after than the level
/// before, and later while the onset run itself is nearer the level
/// before. E-divisive places a split where the energy statistic peaks,
/// which can be one run late when the first run at the new level is a
/// little short of it (order-detail's improvement on the bundled archive
/// was dated 2026-10-07 while 2026-10-05 was already at the new level).
fn refine_onset(medians: &[f64], lo: usize, index: usize, hi: usize) -> usize {
    let levels = |at: usize| {
        (
            median(&medians[lo..at]).unwrap_or(f64::NAN),
            median(&medians[at..hi]).unwrap_or(f64::NAN),
        )
    };
    // Distance on a log scale; a non-positive median is no level.
    let nearer_after = |v: f64, (before, after): (f64, f64)| {
        v > 0.0 && before > 0.0 && after > 0.0 && (v / after).ln().abs() < (v / before).ln().abs()
    };
    let (before, after) = levels(index);
    let mut onset = index;
    while onset > lo + 1 && nearer_after(medians[onset - 1], (before, after)) {
        onset -= 1;
    }
    if onset == index {
        while onset + 1 < hi && !nearer_after(medians[onset], (before, after)) {
            onset += 1;
        }
    }
    onset
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
fn intervals(change_points: &[usize], len: usize) -> Vec<Interval> {
    let mut out = Vec::with_capacity(change_points.len() + 1);
    let mut start = 0;
    for &cp in change_points {
        if start != cp {
            out.push((start, cp));
        }
        start = cp;
    }
    if start != len {
        out.push((start, len));
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

/// Otava's `TTestSignificanceTester.change_point`.
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

/// Otava's `PairDistanceCalculator` over one window: pairwise distances
/// |zᵢ − zⱼ| and the prefix sums V and H from which every Q̂(τ, κ) follows.
struct Calculator<'a> {
    z: &'a [f64],
    /// `V[b]` = Σ_{a ≤ b} |z_a − z_{b+1}|.
    v: Vec<f64>,
    /// `H[a][b]` = Σ_{c = a..=b} |z_a − z_{c+1}| (0 below the diagonal),
    /// row-major, (n−1)².
    h: Vec<f64>,
}

impl<'a> Calculator<'a> {
    fn new(z: &'a [f64]) -> Self {
        let n = z.len();
        let m = n.saturating_sub(1);
        // triu(D, k=1)[:-1, 1:]: T[a][b] = |z_a − z_{b+1}| for a ≤ b.
        let t = |a: usize, b: usize| if a <= b { (z[a] - z[b + 1]).abs() } else { 0.0 };
        let mut v = vec![0.0; m];
        for (b, vb) in v.iter_mut().enumerate() {
            // numpy sums axis 0 row by row, zeros included.
            let mut acc = t(0, b);
            for a in 1..m {
                acc += t(a, b);
            }
            *vb = acc;
        }
        let mut h = vec![0.0; m * m];
        for a in 0..m {
            let mut acc = 0.0;
            for b in 0..m {
                acc = if b == 0 { t(a, 0) } else { acc + t(a, b) };
                h[a * m + b] = acc;
            }
        }
        Calculator { z, v, h }
    }

    fn dist(&self, i: usize, j: usize) -> f64 {
        (self.z[i] - self.z[j]).abs()
    }

    /// Otava's `get_candidate_change_point` for `z[start..stop]`: the τ of
    /// the first arg-max of Q̂ and the maximum.
    fn candidate(&self, start: usize, stop: usize) -> (usize, f64) {
        debug_assert!(stop - start > 1);
        let width = self.z.len() - 1;
        let m = stop - 1 - start;
        // V restricted to points from `start` on.
        let vs: Vec<f64> = (0..m)
            .map(|k| {
                let col = start + 1 + k;
                let mut sub = 0.0;
                for a in 0..start {
                    sub = if a == 0 {
                        self.dist(0, col)
                    } else {
                        sub + self.dist(a, col)
                    };
                }
                self.v[start + k] - sub
            })
            .collect();
        let hs = |i: usize, j: usize| self.h[(start + i) * width + start + j];
        let mut cum_v = vec![0.0; m];
        let mut acc = 0.0;
        for k in 0..m {
            acc = if k == 0 { vs[0] } else { acc + vs[k] };
            cum_v[k] = acc;
        }
        // cumsum(H, axis=0)
        let mut cum_h = vec![0.0; m * m];
        for j in 0..m {
            let mut acc = 0.0;
            for i in 0..m {
                acc = if i == 0 { hs(0, j) } else { acc + hs(i, j) };
                cum_h[i * m + j] = acc;
            }
        }
        // flipud(cumsum(flipud(H[1:, 1:]), axis=0)): R[r][c] = Σ_{r' ≥ r} H[r'+1][c+1]
        let g = m.saturating_sub(1);
        let mut rev_h = vec![0.0; g * g];
        for c in 0..g {
            let mut acc = 0.0;
            for r in (0..g).rev() {
                acc = if r == g - 1 {
                    hs(r + 1, c + 1)
                } else {
                    acc + hs(r + 1, c + 1)
                };
                rev_h[r * g + c] = acc;
            }
        }
        let mut best = (0usize, 0usize);
        let mut best_q = f64::NEG_INFINITY;
        for i in 0..m {
            for j in 0..m {
                // A = 2/(κ−s) · triu(cumsum(H) − shifted cumsum(V))
                let a_coef = 2.0 / (j + 2) as f64;
                let a = if j >= i {
                    let within_left = if i >= 1 { cum_v[i - 1] } else { 0.0 };
                    a_coef * (cum_h[i * m + j] - within_left)
                } else {
                    0.0
                };
                // B = 2(κ−τ) / ((κ−s)(τ−s−1)) · Σ V
                let b = if i >= 1 && j >= 1 {
                    let den = (j + 2) * i;
                    let coef = if j >= i && den != 0 {
                        (2 * (j + 1 - i)) as f64 / den as f64
                    } else {
                        0.0
                    };
                    coef * cum_v[i - 1]
                } else {
                    0.0
                };
                // C = 2(τ−s) / ((κ−s)(κ−τ−1)) · Σ H over the right segment
                let c = if i + 1 < m && j >= 1 {
                    let coef = if j > i {
                        let den = (j + 2) * (j - i);
                        (2 * (i + 1)) as f64 / den as f64
                    } else {
                        0.0
                    };
                    coef * rev_h[i * g + (j - 1)]
                } else {
                    0.0
                };
                let q = a - b - c;
                if q > best_q {
                    best_q = q;
                    best = (i, j);
                }
            }
        }
        (best.0 + 1 + start, best_q)
    }

    /// Otava's `get_next_candidate`: the best candidate over all intervals
    /// longer than one point; the first wins a tie.
    fn next_candidate(&self, intervals: &[Interval]) -> Option<(usize, f64)> {
        let mut best: Option<(usize, f64)> = None;
        for &(start, stop) in intervals {
            if stop - start > 1 {
                let cand = self.candidate(start, stop);
                // Replace only on a strictly greater Q̂, as Python's `max` does.
                if best.is_none_or(|(_, q)| cand.1 > q) {
                    best = Some(cand);
                }
            }
        }
        best
    }
}

/// Otava's `ChangePointDetector.get_change_points` on `series[start..end]`
/// with a t-test at `max_pvalue`: E-divisive splitting until the best
/// candidate is not significant. Indexes are global.
fn detect_in_window(series: &[f64], start: usize, end: usize, max_pvalue: f64) -> Vec<Found> {
    let z = &series[start..end];
    let calc = Calculator::new(z);
    let mut found: Vec<Found> = Vec::new();
    loop {
        let cps: Vec<usize> = found.iter().map(|f| f.index).collect();
        let ivs = intervals(&cps, z.len());
        let Some((index, _qhat)) = calc.next_candidate(&ivs) else {
            break;
        };
        let stats = test_split(index, z, &ivs);
        // `p <= alpha`; a NaN p is never significant.
        if stats.pvalue <= max_pvalue {
            found.push(Found { index, stats });
            found.sort_by_key(|f| f.index);
        } else {
            break;
        }
    }
    for f in &mut found {
        f.index += start;
    }
    found
}

/// Otava's `split`: sliding windows, union of the change points found,
/// each re-tested between its neighbours on the whole series.
fn split(series: &[f64], window_len: usize, max_pvalue: f64) -> Vec<Found> {
    let step = window_len / 2;
    let mut start = 0;
    let mut found: Vec<Found> = Vec::new();
    while start < series.len() {
        let end = (start + window_len).min(series.len());
        let new = detect_in_window(series, start, end, max_pvalue);
        let last = new.last().map_or(0, |f| f.index);
        start = last.max(start + step);
        for cp in new {
            if !found.iter().any(|f| f.index == cp.index) {
                found.push(cp);
            }
        }
    }
    found.sort_by_key(|f| f.index);
    let cps: Vec<usize> = found.iter().map(|f| f.index).collect();
    let ivs = intervals(&cps, series.len());
    found
        .iter()
        .map(|f| Found {
            index: f.index,
            stats: test_split(f.index, series, &ivs),
        })
        .collect()
}

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
fn merge(mut cps: Vec<Found>, series: &[f64], max_pvalue: f64, min_magnitude: f64) -> Vec<Found> {
    while !cps.is_empty() {
        let mut weakest = python_max_by(&cps, |c| c.stats.pvalue);
        if cps[weakest].stats.pvalue < max_pvalue {
            weakest = python_min_by(&cps, |c| c.stats.change_magnitude());
            if cps[weakest].stats.change_magnitude() > min_magnitude {
                return cps;
            }
        }
        cps.remove(weakest);
        let indexes: Vec<usize> = cps.iter().map(|c| c.index).collect();
        let ivs = intervals(&indexes, series.len());
        // Otava re-tests the points now at `weakest` and `weakest + 1`.
        for k in [weakest, weakest + 1] {
            if k < cps.len() {
                cps[k].stats = test_split(cps[k].index, series, &ivs);
            }
        }
    }
    cps
}

#[cfg(test)]
mod tests;
