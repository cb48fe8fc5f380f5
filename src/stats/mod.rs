//! Pure statistics over slices of `f64`: no I/O, no formatting.

pub mod evidence;
pub mod percentile;
pub mod student_t;

mod proportion;
mod robust;

pub use percentile::{Moments, PercentileMethod, moments, moments_by, percentiles, percentiles_by};
pub use proportion::{Interval, WILSON_Z95, wilson_interval};
pub use robust::{MAD_TO_SIGMA, MIN_SCALE_FRACTION, mad, robust_scale, robust_z};

/// The median of `values`: the middle value, or the mean of the two
/// middle values for an even count. `None` when empty. NaN is never
/// passed in (ingest rejects it).
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    Some(if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    })
}

/// The exact null distribution of the Mann–Whitney statistic U (the number
/// of pairs (x, y) with y > x, no ties) for samples of sizes `n` and `m`:
/// `P(U <= u)`. Computed with the classic recursion
/// `p(n, m, u) = n/(n+m)·p(n−1, m, u−m) + m/(n+m)·p(n, m−1, u)`, which is
/// exact for the small round counts a run has (5 vs 5: 252 orderings).
/// Above `EXACT_LIMIT` pairs it uses the normal approximation with a
/// continuity correction instead, because the table grows as (n·m)².
pub fn mann_whitney_cdf(n: usize, m: usize, u: usize) -> f64 {
    const EXACT_LIMIT: usize = 2500;
    let pairs = n * m;
    if u >= pairs {
        return 1.0;
    }
    if n == 0 || m == 0 {
        return 1.0;
    }
    if pairs > EXACT_LIMIT {
        let mean = pairs as f64 / 2.0;
        let sd = (pairs as f64 * (n + m + 1) as f64 / 12.0).sqrt();
        return standard_normal_cdf((u as f64 + 0.5 - mean) / sd);
    }
    // table[i][j][v] = P(U = v) for sizes (i, j); built up to (n, m).
    let mut table: Vec<Vec<Vec<f64>>> = vec![vec![Vec::new(); m + 1]; n + 1];
    for i in 0..=n {
        for j in 0..=m {
            let mut p = vec![0.0; i * j + 1];
            if i == 0 || j == 0 {
                p[0] = 1.0;
            } else {
                let (wi, wj) = (i as f64 / (i + j) as f64, j as f64 / (i + j) as f64);
                // Look at the largest of the i + j values. With probability
                // i/(i+j) it is an x: no y lies above it, U is unchanged.
                // Otherwise it is a y above all i x's: it adds i to U.
                for (v, slot) in p.iter_mut().enumerate() {
                    let from_x = table[i - 1][j].get(v).copied().unwrap_or(0.0);
                    let from_y = if v >= i {
                        table[i][j - 1].get(v - i).copied().unwrap_or(0.0)
                    } else {
                        0.0
                    };
                    *slot = wi * from_x + wj * from_y;
                }
            }
            table[i][j] = p;
        }
    }
    table[n][m][..=u].iter().sum::<f64>().min(1.0)
}

/// Φ(z) through the complementary error function below (|error| < 1.2e-7,
/// ample for a fallback that only ever picks an interval index).
fn standard_normal_cdf(z: f64) -> f64 {
    0.5 * erfc(-z / std::f64::consts::SQRT_2)
}

/// Complementary error function (Numerical Recipes `erfcc`, |error| < 1.2e-7).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.26551223
            + t * (1.00002368
                + t * (0.37409196
                    + t * (0.09678418
                        + t * (-0.18628806
                            + t * (0.27886807
                                + t * (-1.13520398
                                    + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))))
            .exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

/// A Hodges–Lehmann shift estimate with its distribution-free interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shift {
    /// The median of all pairwise differences y_j − x_i.
    pub estimate: f64,
    /// `[low, high]` = the k-th smallest and k-th largest pairwise
    /// difference; `None` when the samples are too small for any interval
    /// at the requested level.
    pub interval: Option<(f64, f64)>,
    /// The exact coverage of the interval under the shift model,
    /// 1 − 2·P(U ≤ k−1) (0.849 for 5 vs 5 at one-sided 10%).
    pub confidence: f64,
}

/// Hodges–Lehmann estimate of the shift from `x` to `y` and the
/// Mann–Whitney-based interval [D₍k₎, D₍nm+1−k₎] over the sorted pairwise
/// differences D (Lehmann, *Nonparametrics*, 1975, §2.6). `k` is the largest
/// with P(U ≤ k−1) ≤ `one_sided_alpha`, so each tail holds at most that
/// much. Distribution-free as long as both samples are independent draws
/// from distributions differing only by a shift. `None` when either
/// sample is empty.
pub fn hodges_lehmann_shift(x: &[f64], y: &[f64], one_sided_alpha: f64) -> Option<Shift> {
    if x.is_empty() || y.is_empty() {
        return None;
    }
    let mut diffs: Vec<f64> = y
        .iter()
        .flat_map(|yj| x.iter().map(move |xi| yj - xi))
        .collect();
    diffs.sort_by(f64::total_cmp);
    let estimate = median(&diffs)?;
    let (n, m) = (x.len(), y.len());
    let pairs = diffs.len();
    // Largest k (1-based) with P(U <= k-1) <= alpha; the tail grows with k.
    let mut k = 0;
    while k < pairs / 2 && mann_whitney_cdf(n, m, k) <= one_sided_alpha {
        k += 1;
    }
    let (interval, confidence) = if k == 0 {
        (None, 0.0)
    } else {
        let tail = mann_whitney_cdf(n, m, k - 1);
        (Some((diffs[k - 1], diffs[pairs - k])), 1.0 - 2.0 * tail)
    };
    Some(Shift {
        estimate,
        interval,
        confidence,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn small_cases() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0]), Some(3.0));
        assert_eq!(median(&[3.0, 1.0]), Some(2.0));
        assert_eq!(median(&[98.0, 101.0, 99.0, 102.0, 180.0]), Some(101.0));
    }

    #[test]
    fn mann_whitney_five_by_five_matches_the_table() {
        // Counts of the 252 orderings with U <= u: 1, 2, 4, 7, 12, 19, 28.
        for (u, count) in [
            (0, 1.0),
            (1, 2.0),
            (2, 4.0),
            (3, 7.0),
            (4, 12.0),
            (5, 19.0),
            (6, 28.0),
        ] {
            let p = mann_whitney_cdf(5, 5, u);
            assert!((p - count / 252.0).abs() < 1e-12, "u={u}: {p}");
        }
        assert_eq!(mann_whitney_cdf(5, 5, 25), 1.0);
        // 5 vs 15: the floor quoted in DETECTION.md §2, 1/C(20,5) = 6.4e-5.
        assert!((mann_whitney_cdf(5, 15, 0) - 1.0 / 15504.0).abs() < 1e-15);
        // Symmetric around nm/2.
        assert!((mann_whitney_cdf(4, 6, 11) - (1.0 - mann_whitney_cdf(4, 6, 12))).abs() < 1e-12);
    }

    #[test]
    fn normal_fallback_is_close_to_exact_where_both_apply() {
        // 50 vs 50 is exact; compare with the approximation formula.
        let exact = mann_whitney_cdf(50, 50, 1000);
        let pairs = 2500.0;
        let sd = (pairs * 101.0 / 12.0f64).sqrt();
        let approx = standard_normal_cdf((1000.5 - pairs / 2.0) / sd);
        assert!((exact - approx).abs() < 2e-3, "{exact} vs {approx}");
        assert!((standard_normal_cdf(1.959964) - 0.975).abs() < 1e-6);
    }

    #[test]
    fn hodges_lehmann_five_by_five() {
        let x = [100.0, 101.0, 99.0, 102.0, 98.0];
        let y: Vec<f64> = x.iter().map(|v| v + 30.0).collect();
        let s = hodges_lehmann_shift(&x, &y, 0.10).unwrap();
        assert_eq!(s.estimate, 30.0);
        // k = 6: the 6th smallest and 6th largest of 25 differences.
        let (lo, hi) = s.interval.unwrap();
        assert!(
            lo > 26.0 && lo < 30.0 && hi > 30.0 && hi < 34.0,
            "{lo} {hi}"
        );
        assert!((s.confidence - (1.0 - 2.0 * 19.0 / 252.0)).abs() < 1e-12);
        // 2 vs 2 has only 6 orderings: no interval at one-sided 10%.
        let tiny = hodges_lehmann_shift(&[1.0, 2.0], &[3.0, 4.0], 0.10).unwrap();
        assert_eq!(tiny.interval, None);
        assert_eq!(hodges_lehmann_shift(&[], &[1.0], 0.1), None);
    }

    proptest! {
        #[test]
        fn shift_is_equivariant(x in proptest::collection::vec(1.0f64..1e3, 5), y in proptest::collection::vec(1.0f64..1e3, 5), c in -100.0f64..100.0) {
            let s = hodges_lehmann_shift(&x, &y, 0.10).unwrap();
            let y2: Vec<f64> = y.iter().map(|v| v + c).collect();
            let s2 = hodges_lehmann_shift(&x, &y2, 0.10).unwrap();
            prop_assert!((s2.estimate - s.estimate - c).abs() < 1e-9);
            let ((l, h), (l2, h2)) = (s.interval.unwrap(), s2.interval.unwrap());
            prop_assert!((l2 - l - c).abs() < 1e-9 && (h2 - h - c).abs() < 1e-9);
            prop_assert!(l <= s.estimate && s.estimate <= h);
            // Swapping the samples negates the shift and mirrors the interval.
            let r = hodges_lehmann_shift(&y, &x, 0.10).unwrap();
            prop_assert!((r.estimate + s.estimate).abs() < 1e-9);
            let (rl, rh) = r.interval.unwrap();
            prop_assert!((rl + h).abs() < 1e-9 && (rh + l).abs() < 1e-9);
        }
    }

    proptest! {
        #[test]
        fn median_ignores_order(mut v in proptest::collection::vec(0.0f64..1e6, 1..20), seed in any::<u64>()) {
            let m = median(&v);
            // A deterministic shuffle driven by the seed.
            let n = v.len();
            let mut s = seed;
            for i in (1..n).rev() {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                v.swap(i, (s >> 33) as usize % (i + 1));
            }
            prop_assert_eq!(median(&v), m);
        }

        #[test]
        fn median_lies_between_min_and_max(v in proptest::collection::vec(0.0f64..1e6, 1..20)) {
            let m = median(&v).unwrap();
            let lo = v.iter().cloned().fold(f64::INFINITY, f64::min);
            let hi = v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            prop_assert!(lo <= m && m <= hi);
        }
    }
}
