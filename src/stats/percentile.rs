//! Exact percentiles and moments of latency samples.
//!
//! perfdash has ONE percentile definition for recomputed rounds,
//! [`PercentileMethod::Linear`]: sort the n samples, take rank
//! `h = p/100 × (n − 1)` (0-based) and interpolate linearly between the
//! samples at `⌊h⌋` and `⌈h⌉`. This is Hyndman & Fan type 7 (R's default,
//! numpy's `linear`), and it is exactly what k6's trend sink computes for
//! `p(N)` (`TrendSink.P`: `i := pct*(count-1)`, then `j + (k-j)*f`), so on
//! untrimmed data perfdash reproduces k6's own `p(99)` bit for bit.
//!
//! [`PercentileMethod::JmeterDashboard`] reproduces JMeter's HTML report
//! generator (`statistics.json` `pct1ResTime`…), which uses Apache
//! commons-math `Percentile` with its default `LEGACY` estimation:
//! `pos = p × (n + 1) / 100`; below 1 → the minimum, at or above n → the
//! maximum, else interpolate between the samples at 1-based ranks
//! `⌊pos⌋` and `⌊pos⌋ + 1`. (JMeter only keeps the last
//! `jmeter.reportgenerator.statistic_window` = 20 000 samples per label;
//! perfdash uses them all.)
//!
//! Order statistics are found with `select_nth_unstable` (O(n) each)
//! instead of a full sort.

use serde::{Deserialize, Serialize};

/// How a percentile is estimated from samples.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PercentileMethod {
    /// Linear interpolation between closest ranks, `h = p(n−1)`
    /// (R-7, numpy `linear`, k6's `p(N)`). The default.
    #[default]
    Linear,
    /// JMeter's dashboard / commons-math `LEGACY` estimator, `pos = p(n+1)`.
    JmeterDashboard,
}

impl PercentileMethod {
    pub fn as_str(self) -> &'static str {
        match self {
            PercentileMethod::Linear => "linear",
            PercentileMethod::JmeterDashboard => "jmeter-dashboard",
        }
    }

    /// The 0-based ranks whose values the percentile interpolates between,
    /// and the interpolation weight of the upper one. `n > 0`.
    fn ranks(self, percent: f64, n: usize) -> (usize, usize, f64) {
        let last = n - 1;
        match self {
            PercentileMethod::Linear => {
                // Same operations, in the same order, as k6's TrendSink.P.
                let i = percent / 100.0 * (n as f64 - 1.0);
                let lo = (i.floor() as usize).min(last);
                let hi = (i.ceil() as usize).min(last);
                (lo, hi, i - i.floor())
            }
            PercentileMethod::JmeterDashboard => {
                let pos = percent * (n as f64 + 1.0) / 100.0;
                if pos < 1.0 {
                    (0, 0, 0.0)
                } else if pos >= n as f64 {
                    (last, last, 0.0)
                } else {
                    let floor = pos.floor();
                    let lo = floor as usize - 1;
                    (lo, lo + 1, pos - floor)
                }
            }
        }
    }
}

impl std::fmt::Display for PercentileMethod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Percentiles of `values` for each of `percents` (0..=100), in the order
/// asked. Reorders `values` (partial selection, no full sort). Empty input
/// gives an empty result.
pub fn percentiles(values: &mut [f64], percents: &[f64], method: PercentileMethod) -> Vec<f64> {
    percentiles_by(values, percents, method, |v| *v)
}

/// [`percentiles`] of `key(item)` over `items`, selecting the items
/// themselves (so samples need no separate copy of their values).
pub fn percentiles_by<T>(
    items: &mut [T],
    percents: &[f64],
    method: PercentileMethod,
    key: impl Fn(&T) -> f64,
) -> Vec<f64> {
    let n = items.len();
    if n == 0 {
        return Vec::new();
    }
    let plans: Vec<(usize, usize, f64)> = percents
        .iter()
        .map(|&p| method.ranks(p.clamp(0.0, 100.0), n))
        .collect();
    let mut needed: Vec<usize> = plans.iter().flat_map(|&(lo, hi, _)| [lo, hi]).collect();
    needed.sort_unstable();
    needed.dedup();
    // Select the needed ranks in ascending order; each selection only
    // looks at the part to the right of the previous one, which is already
    // partitioned to hold exactly the larger values.
    let mut start = 0;
    for &rank in &needed {
        if rank >= start {
            items[start..].select_nth_unstable_by(rank - start, |a, b| key(a).total_cmp(&key(b)));
            start = rank + 1;
        }
    }
    plans
        .iter()
        .map(|&(lo, hi, weight)| {
            let (a, b) = (key(&items[lo]), key(&items[hi]));
            // k6 writes `j + (k-j)*f`; keep that form for identical rounding.
            a + (b - a) * weight
        })
        .collect()
}

/// Percentile of already sorted values (the reference implementation the
/// tests compare [`percentiles`] with, and handy for small inputs).
pub fn percentile_of_sorted(sorted: &[f64], percent: f64, method: PercentileMethod) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let (lo, hi, w) = method.ranks(percent.clamp(0.0, 100.0), sorted.len());
    Some(sorted[lo] + (sorted[hi] - sorted[lo]) * w)
}

/// Count, mean, population standard deviation, min and max.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Moments {
    pub count: u64,
    pub mean: f64,
    /// Population standard deviation (divides by n), as JMeter's and
    /// Gatling's reports show it.
    pub stddev: f64,
    pub min: f64,
    pub max: f64,
}

/// Moments of `values`; `None` when empty. Two passes (mean first) keep the
/// variance accurate for latencies with a large common offset.
pub fn moments(values: &[f64]) -> Option<Moments> {
    moments_by(values, |v| *v)
}

/// [`moments`] of `key(item)` over `items`.
pub fn moments_by<T>(items: &[T], key: impl Fn(&T) -> f64) -> Option<Moments> {
    if items.is_empty() {
        return None;
    }
    let n = items.len() as f64;
    let (mut sum, mut min, mut max) = (0.0, f64::INFINITY, f64::NEG_INFINITY);
    for v in items.iter().map(&key) {
        sum += v;
        min = min.min(v);
        max = max.max(v);
    }
    let mean = sum / n;
    let squares: f64 = items
        .iter()
        .map(|i| (key(i) - mean) * (key(i) - mean))
        .sum();
    Some(Moments {
        count: items.len() as u64,
        mean,
        stddev: (squares / n).sqrt(),
        min,
        max,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn linear_matches_numpy_examples() {
        // numpy.percentile([1,2,3,4], [0,25,50,90,100]) = 1, 1.75, 2.5, 3.7, 4
        let mut v = vec![4.0, 1.0, 3.0, 2.0];
        let got = percentiles(
            &mut v,
            &[0.0, 25.0, 50.0, 90.0, 100.0],
            PercentileMethod::Linear,
        );
        let want = [1.0, 1.75, 2.5, 3.7, 4.0];
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() < 1e-12, "{got:?}");
        }
    }

    #[test]
    fn jmeter_legacy_clamps_and_interpolates() {
        // commons-math LEGACY on [100,170,329]: pos(50)=2 → 170; pos(90)=3.6 ≥ n → max.
        let mut v = vec![329.0, 100.0, 170.0];
        let got = percentiles(
            &mut v,
            &[50.0, 90.0, 10.0],
            PercentileMethod::JmeterDashboard,
        );
        assert_eq!(got, vec![170.0, 329.0, 100.0]);
        // pos(95) on 1..=10 = 10.45 ≥ 10 → 10; pos(50) = 5.5 → 5.5
        let mut w: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(
            percentiles(&mut w, &[95.0, 50.0], PercentileMethod::JmeterDashboard),
            vec![10.0, 5.5]
        );
    }

    #[test]
    fn single_value_and_empty() {
        assert!(percentiles(&mut [], &[99.0], PercentileMethod::Linear).is_empty());
        for m in [PercentileMethod::Linear, PercentileMethod::JmeterDashboard] {
            assert_eq!(
                percentiles(&mut [7.5], &[0.0, 50.0, 99.0, 100.0], m),
                vec![7.5; 4]
            );
        }
        assert_eq!(moments(&[]), None);
        let m = moments(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!(
            (m.mean, m.stddev, m.min, m.max, m.count),
            (5.0, 2.0, 2.0, 9.0, 8)
        );
    }

    proptest! {
        #[test]
        fn selection_equals_sorting(
            v in proptest::collection::vec(0.0f64..1e5, 1..300),
            ps in proptest::collection::vec(0.0f64..=100.0, 1..6),
            jm in any::<bool>(),
        ) {
            let method = if jm { PercentileMethod::JmeterDashboard } else { PercentileMethod::Linear };
            let mut sorted = v.clone();
            sorted.sort_by(f64::total_cmp);
            let mut work = v.clone();
            let got = percentiles(&mut work, &ps, method);
            for (p, g) in ps.iter().zip(got) {
                prop_assert_eq!(g, percentile_of_sorted(&sorted, *p, method).unwrap());
            }
        }

        #[test]
        fn percentiles_are_monotone_and_bounded(v in proptest::collection::vec(0.0f64..1e5, 1..200)) {
            let mut work = v.clone();
            let got = percentiles(&mut work, &[0.0, 50.0, 90.0, 95.0, 99.0, 100.0], PercentileMethod::Linear);
            let m = moments(&v).unwrap();
            prop_assert_eq!(got[0], m.min);
            prop_assert_eq!(got[5], m.max);
            for w in got.windows(2) {
                prop_assert!(w[0] <= w[1]);
            }
        }
    }
}
