//! Intervals for a proportion, e.g. the share of alarms that were noise.

use serde::Serialize;

/// The two-sided 95% normal quantile, Φ⁻¹(0.975).
pub const WILSON_Z95: f64 = 1.959_963_984_540_054;

/// A closed interval `[low, high]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
}

/// The Wilson score interval for `successes` out of `trials` at normal
/// quantile `z` (use [`WILSON_Z95`] for 95%). `None` when `trials` is 0.
///
/// Wilson rather than the textbook p ± z·√(p(1−p)/n): with the handful of
/// labelled alarms an endpoint has, the textbook interval collapses to a
/// point at 0/n and n/n and leaves [0, 1]; Wilson's stays inside [0, 1]
/// and keeps a sensible width (Newcombe 1998).
pub fn wilson_interval(successes: u64, trials: u64, z: f64) -> Option<Interval> {
    if trials == 0 || successes > trials {
        return None;
    }
    let n = trials as f64;
    let p = successes as f64 / n;
    let z2 = z * z;
    let denominator = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denominator;
    let half_width = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denominator;
    Some(Interval {
        low: (centre - half_width).max(0.0),
        high: (centre + half_width).min(1.0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rounded(i: Interval) -> (f64, f64) {
        ((i.low * 1e4).round() / 1e4, (i.high * 1e4).round() / 1e4)
    }

    /// Newcombe (1998), "Two-sided confidence intervals for the single
    /// proportion", Statistics in Medicine 17:857–872, Table II, method 3
    /// (score interval without continuity correction).
    #[test]
    fn newcombe_table_values() {
        let w = |x, n| rounded(wilson_interval(x, n, WILSON_Z95).unwrap());
        assert_eq!(w(81, 263), (0.2553, 0.3662));
        assert_eq!(w(15, 148), (0.0624, 0.1605));
        assert_eq!(w(0, 20), (0.0, 0.1611));
        assert_eq!(w(1, 29), (0.0061, 0.1718));
    }

    #[test]
    fn symmetric_and_defined_only_with_trials() {
        let a = wilson_interval(3, 10, WILSON_Z95).unwrap();
        let b = wilson_interval(7, 10, WILSON_Z95).unwrap();
        assert!((a.low - (1.0 - b.high)).abs() < 1e-12);
        assert!((a.high - (1.0 - b.low)).abs() < 1e-12);
        assert_eq!(wilson_interval(0, 0, WILSON_Z95), None);
        assert_eq!(wilson_interval(3, 2, WILSON_Z95), None);
        let all = wilson_interval(4, 4, WILSON_Z95).unwrap();
        assert_eq!(all.high, 1.0);
        assert!(
            all.low > 0.4 && all.low < 0.6,
            "4/4 is not proof of a 100% rate: {all:?}"
        );
    }
}
