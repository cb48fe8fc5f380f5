//! Evidence shown beside an alarm: how uncertain a run's median is, which
//! rounds look like GC or noise, and how large a shift is with an interval.
//!
//! All distribution-free: a run has ~5 rounds, far too few to assume a
//! shape, and rounds of one run are not independent samples of run-to-run
//! behaviour (docs/detection.md, "Rounds, runs and small samples"), so nothing here treats them as such beyond
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
}
