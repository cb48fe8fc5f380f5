//! Evidence shown beside an alarm: how uncertain a run's median is, which
//! rounds look like GC or noise, and how large a shift is with an interval.
//!
//! All distribution-free: a run has ~5 rounds, far too few to assume a
//! shape, and rounds of one run are not independent samples of run-to-run
//! behaviour (DETECTION.md §2), so nothing here treats them as such beyond
//! the order statistics of the run itself.

use serde::Serialize;

use super::median;

/// A distribution-free interval for the median of one run's rounds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MedianBand {
    pub low: f64,
    pub high: f64,
    /// Probability that [low, high] covers the true median: 1 − 2·0.5ⁿ for
    /// [min, max] (93.75% with 5 rounds).
    pub coverage: f64,
}

/// The [min, max] band of a run's rounds, a distribution-free interval for
/// the median. `None` for no rounds.
pub fn median_band(rounds: &[f64]) -> Option<MedianBand> {
    let low = rounds.iter().copied().reduce(f64::min)?;
    let high = rounds.iter().copied().reduce(f64::max)?;
    Some(MedianBand {
        low,
        high,
        coverage: order_statistic_coverage(rounds.len(), 1),
    })
}

/// Coverage of [x₍ₖ₎, x₍ₙ₊₁₋ₖ₎] (1-based order statistics) as an interval
/// for the median of a continuous distribution: 1 − 2·P(Bin(n, ½) ≤ k − 1).
/// `k = 1` is [min, max]: 1 − 2·0.5ⁿ. Zero when the interval is empty or
/// degenerate (2k > n + 1 gives no interval; n = 1 gives a point).
pub fn order_statistic_coverage(n: usize, k: usize) -> f64 {
    if k == 0 || 2 * k > n + 1 || n < 2 {
        return 0.0;
    }
    // P(Bin(n, ½) ≤ k − 1) = Σ_{i<k} C(n, i) / 2ⁿ, in floats to allow large n.
    let mut term = 0.5f64.powi(n as i32); // C(n,0)/2ⁿ
    let mut tail = 0.0;
    for i in 0..k {
        tail += term;
        term *= (n - i) as f64 / (i + 1) as f64;
    }
    (1.0 - 2.0 * tail).max(0.0)
}

/// Rounds more than `factor` × the run median (1.5 by default in perfdash):
/// likely a GC pause or a noisy neighbour, shown as such rather than hidden.
/// Returns their positions in `rounds`.
pub fn outlier_rounds(rounds: &[f64], factor: f64) -> Vec<usize> {
    let Some(m) = median(rounds) else {
        return Vec::new();
    };
    rounds
        .iter()
        .enumerate()
        .filter(|(_, v)| **v > factor * m)
        .map(|(i, _)| i)
        .collect()
}

/// The default factor for [`outlier_rounds`].
pub const OUTLIER_FACTOR: f64 = 1.5;

/// A shift between two samples with a distribution-free interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Shift {
    /// Hodges–Lehmann estimate: the median of all differences after − before.
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
    /// The exact coverage of [low, high] (≥ the requested confidence when
    /// the samples allow it; lower when they are too small for it).
    pub coverage: f64,
}

/// Hodges–Lehmann shift `after − before` with the order-statistic interval
/// that inverts the Mann–Whitney test (Lehmann 1975; Bauer 1972): with the
/// m·n pairwise differences sorted, [D₍ₖ₎, D₍ₘₙ₊₁₋ₖ₎] where k − 1 is the
/// largest lower quantile of the Mann–Whitney U with P(U ≤ k − 1) ≤ α/2.
/// U's null distribution is exact for m·n ≤ 2 500, normal beyond.
/// `None` when either sample is empty.
pub fn hodges_lehmann(before: &[f64], after: &[f64], confidence: f64) -> Option<Shift> {
    if before.is_empty() || after.is_empty() {
        return None;
    }
    let mut diffs: Vec<f64> = after
        .iter()
        .flat_map(|a| before.iter().map(move |b| a - b))
        .collect();
    diffs.sort_by(f64::total_cmp);
    let estimate = median(&diffs)?;
    let (m, n) = (before.len(), after.len());
    let alpha_half = (1.0 - confidence) / 2.0;
    let cdf = mann_whitney_cdf(m, n);
    // Largest c with P(U ≤ c) ≤ α/2; k = c + 1 (1-based).
    let mut k = 0usize;
    while k < cdf.len() && cdf[k] <= alpha_half {
        k += 1;
    }
    let total = diffs.len();
    // k − 1 = c, the largest u with P(U ≤ u) ≤ α/2; the interval is
    // [D(c+1), D(mn−c)] (1-based) and misses on each side with P(U ≤ c).
    // When even c = 0 is too likely (tiny samples), report [min, max] of the
    // differences with its real, lower coverage.
    let c = k.saturating_sub(1).min((total - 1) / 2);
    Some(Shift {
        estimate,
        low: diffs[c],
        high: diffs[total - 1 - c],
        coverage: (1.0 - 2.0 * cdf[c]).max(0.0),
    })
}

/// The shift as a ratio `after / before`: Hodges–Lehmann on logarithms,
/// suited to multiplicative noise. 1.12 = 12% slower. Values must be > 0.
pub fn hodges_lehmann_ratio(before: &[f64], after: &[f64], confidence: f64) -> Option<Shift> {
    let lb: Vec<f64> = before.iter().map(|v| v.ln()).collect();
    let la: Vec<f64> = after.iter().map(|v| v.ln()).collect();
    let s = hodges_lehmann(&lb, &la, confidence)?;
    Some(Shift {
        estimate: s.estimate.exp(),
        low: s.low.exp(),
        high: s.high.exp(),
        coverage: s.coverage,
    })
}

/// `cdf[u] = P(U ≤ u)` for the Mann–Whitney U of samples of sizes m and n
/// under the null, u = 0..=m·n.
fn mann_whitney_cdf(m: usize, n: usize) -> Vec<f64> {
    let mn = m * n;
    if mn <= 2_500 {
        // Exact counts by the classic recurrence over sample sizes,
        // f(i, j, u) = f(i−1, j, u−j) + f(i, j−1, u): only additions, so no
        // cancellation. `prev[j][u]` holds f(i−1, j, u).
        let mut prev: Vec<Vec<f64>> = (0..=n)
            .map(|_| {
                let mut v = vec![0.0; mn + 1];
                v[0] = 1.0; // f(0, j, 0) = 1
                v
            })
            .collect();
        for _i in 1..=m {
            let mut cur: Vec<Vec<f64>> = Vec::with_capacity(n + 1);
            // f(i, 0, 0) = 1
            let mut first = vec![0.0; mn + 1];
            first[0] = 1.0;
            cur.push(first);
            for j in 1..=n {
                let mut row = cur[j - 1].clone();
                for u in j..=mn {
                    row[u] += prev[j][u - j];
                }
                cur.push(row);
            }
            prev = cur;
        }
        let counts = &prev[n];
        let total: f64 = counts.iter().sum();
        let mut acc = 0.0;
        counts
            .iter()
            .map(|c| {
                acc += c;
                (acc / total).min(1.0)
            })
            .collect()
    } else {
        let mean = mn as f64 / 2.0;
        let sd = (mn as f64 * (m + n + 1) as f64 / 12.0).sqrt();
        (0..=mn)
            .map(|u| normal_cdf((u as f64 + 0.5 - mean) / sd))
            .collect()
    }
}

/// Standard normal CDF, for the large-sample approximation of U.
fn normal_cdf(z: f64) -> f64 {
    0.5 * erfc(-z / std::f64::consts::SQRT_2)
}

fn erfc(x: f64) -> f64 {
    // Numerical Recipes' erfc via Chebyshev fit (erfccheb), relative error < 1.2e-7
    // is enough for an interval's coverage figure.
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let ans = t
        * (-z * z - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87
                                        + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    if x >= 0.0 { ans } else { 2.0 - ans }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn band_of_five_rounds_covers_93_75_percent() {
        let band = median_band(&[98.0, 101.0, 99.0, 102.0, 180.0]).unwrap();
        assert_eq!((band.low, band.high), (98.0, 180.0));
        assert_eq!(band.coverage, 0.9375);
        assert_eq!(median_band(&[]), None);
        assert_eq!(median_band(&[3.0]).unwrap().coverage, 0.0);
    }

    #[test]
    fn order_statistic_coverage_known_values() {
        assert_eq!(order_statistic_coverage(5, 1), 0.9375);
        assert_eq!(order_statistic_coverage(5, 2), 0.625);
        assert_eq!(order_statistic_coverage(5, 3), 0.0);
        assert_eq!(order_statistic_coverage(2, 1), 0.5);
        // 1 − 2·0.5ⁿ for general n.
        for n in 2..30 {
            let expected = 1.0 - 2.0 * 0.5f64.powi(n as i32);
            assert!(
                (order_statistic_coverage(n, 1) - expected).abs() < 1e-15,
                "n={n}"
            );
        }
        // n = 10, k = 2: 1 − 2·(1 + 10)/1024
        assert!((order_statistic_coverage(10, 2) - (1.0 - 22.0 / 1024.0)).abs() < 1e-15);
    }

    #[test]
    fn gc_round_is_flagged() {
        assert_eq!(
            outlier_rounds(&[98.0, 101.0, 99.0, 102.0, 180.0], OUTLIER_FACTOR),
            vec![4]
        );
        assert!(outlier_rounds(&[98.0, 101.0, 99.0, 102.0, 150.0], OUTLIER_FACTOR).is_empty());
        assert!(outlier_rounds(&[], OUTLIER_FACTOR).is_empty());
    }

    #[test]
    fn mann_whitney_distribution_is_exact() {
        // 5 vs 5: P(U ≤ 0) = 1/252 (DETECTION.md), P(U ≤ 1) = 2/252, P(U ≤ 2) = 4/252.
        let cdf = mann_whitney_cdf(5, 5);
        assert_eq!(cdf.len(), 26);
        assert!((cdf[0] - 1.0 / 252.0).abs() < 1e-15);
        assert!((cdf[1] - 2.0 / 252.0).abs() < 1e-15);
        assert!((cdf[2] - 4.0 / 252.0).abs() < 1e-15);
        assert!((cdf[25] - 1.0).abs() < 1e-15);
        // 5 vs 15: the floor is 1/C(20,5) = 6.45e-5.
        assert!((mann_whitney_cdf(5, 15)[0] - 1.0 / 15_504.0).abs() < 1e-18);
        // symmetric
        let c = mann_whitney_cdf(3, 4);
        for u in 0..12 {
            assert!((c[u] - (1.0 - c[11 - u])).abs() < 1e-12, "u={u}");
        }
    }

    #[test]
    fn hodges_lehmann_known_values() {
        // Differences of [1,2,3] → [11,12,13]: 8..12, median 10.
        let s = hodges_lehmann(&[1.0, 2.0, 3.0], &[11.0, 12.0, 13.0], 0.9).unwrap();
        assert_eq!(s.estimate, 10.0);
        // 3 vs 3: P(U ≤ 0) = 1/20 = 0.05 ≤ 0.05, so [D(1), D(9)] = [8, 12] with coverage 0.9.
        assert_eq!((s.low, s.high), (8.0, 12.0));
        assert!((s.coverage - 0.9).abs() < 1e-12);
        // 5 vs 5 at 95%: P(U ≤ 2) = 4/252 ≤ .025 < P(U ≤ 3) = 7/252 → [D(3), D(23)], coverage 1 − 8/252.
        let before = [100.0, 101.0, 99.0, 102.0, 98.0];
        let after = [110.0, 112.0, 109.0, 111.0, 113.0];
        let s = hodges_lehmann(&before, &after, 0.95).unwrap();
        assert_eq!(s.estimate, 11.0);
        assert!((s.coverage - (1.0 - 8.0 / 252.0)).abs() < 1e-12);
        assert!(s.low < s.estimate && s.estimate < s.high);
        let mut d: Vec<f64> = after
            .iter()
            .flat_map(|a| before.iter().map(move |b| a - b))
            .collect();
        d.sort_by(f64::total_cmp);
        assert_eq!((s.low, s.high), (d[2], d[22]));
        assert_eq!(hodges_lehmann(&[], &[1.0], 0.95), None);
    }

    #[test]
    fn hodges_lehmann_ratio_is_multiplicative() {
        let before = [100.0, 101.0, 99.0, 102.0, 98.0];
        let after: Vec<f64> = before.iter().map(|v| v * 1.2).collect();
        let s = hodges_lehmann_ratio(&before, &after, 0.9).unwrap();
        assert!((s.estimate - 1.2).abs() < 1e-12);
        assert!(s.low <= 1.2 && 1.2 <= s.high);
    }

    #[test]
    fn normal_cdf_is_close_enough() {
        assert!((normal_cdf(0.0) - 0.5).abs() < 1e-7);
        assert!((normal_cdf(1.959_963_985) - 0.975).abs() < 1e-6);
        assert!((normal_cdf(-1.0) - 0.158_655_25).abs() < 1e-6);
    }
}
