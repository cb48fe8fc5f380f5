//! Robust location and scale: the median absolute deviation and the
//! robust z-score built on it.
//!
//! A run's figure is compared with a window of about ten earlier run
//! medians. The standard deviation of so few values is dragged by a single
//! outlier; the MAD is not (breakdown 50%).

use super::median;

/// Scales the MAD to estimate σ under normal noise: 1 / Φ⁻¹(3/4).
pub const MAD_TO_SIGMA: f64 = 1.4826;

/// The robust scale never drops below this fraction of the window's
/// median. A window of identical values has MAD 0, and any change at all
/// would then be "infinitely many MADs" away; 2% is below the run-to-run
/// drift of real load tests, so the floor only acts on suspiciously quiet
/// windows.
pub const MIN_SCALE_FRACTION: f64 = 0.02;

/// The median absolute deviation from the median. `None` when empty.
pub fn mad(values: &[f64]) -> Option<f64> {
    let m = median(values)?;
    let deviations: Vec<f64> = values.iter().map(|x| (x - m).abs()).collect();
    median(&deviations)
}

/// `1.4826 × MAD`, floored at 2% of the absolute median. `None` when
/// empty or when both are zero (an all-zero window has no scale).
pub fn robust_scale(values: &[f64]) -> Option<f64> {
    let m = median(values)?;
    let scale = (MAD_TO_SIGMA * mad(values)?).max(MIN_SCALE_FRACTION * m.abs());
    (scale > 0.0).then_some(scale)
}

/// How many robust scales `x` lies above the median of `window`
/// (negative below). `None` when the window has no scale.
pub fn robust_z(x: f64, window: &[f64]) -> Option<f64> {
    let m = median(window)?;
    Some((x - m) / robust_scale(window)?)
}

/// The run-to-run noise of a series on a log scale: σ of ln(x) estimated
/// from the ratios of successive values, `1.4826 × median |ln(xᵢ / xᵢ₋₁)|
/// ÷ √2` (a difference of two independent values has √2 times their σ).
/// Differences rather than deviations from one median, so a level that
/// moved within the series (an accepted change, a slow drift) adds one
/// large ratio, not half the series' worth. `None` with fewer than two
/// positive values.
pub fn successive_log_spread(values: &[f64]) -> Option<f64> {
    let logs: Vec<f64> = values
        .iter()
        .filter(|v| **v > 0.0)
        .map(|v| v.ln())
        .collect();
    let ratios: Vec<f64> = logs.windows(2).map(|w| (w[1] - w[0]).abs()).collect();
    Some(MAD_TO_SIGMA * median(&ratios)? / std::f64::consts::SQRT_2)
}

/// Where a series steps up: the split `s` (`min_before ≤ s ≤ last`) into
/// `values[..s]` and `values[s..]` whose sums of absolute deviations from
/// their own medians add up to the least (Chromium's step finder uses the
/// same fit, on medians, for its regressions), the latest such split on a
/// tie. `None` when the best split is not a rise (the later side's median
/// is not above the earlier side's) or no split is allowed.
///
/// Absolute deviations and medians, so one odd value on either side moves
/// the split no more than one ordinary value does.
pub fn rise_split(values: &[f64], min_before: usize, last: usize) -> Option<usize> {
    let deviations = |side: &[f64]| -> (f64, f64) {
        let m = median(side).unwrap_or(0.0);
        (side.iter().map(|v| (v - m).abs()).sum(), m)
    };
    let mut best: Option<(f64, usize, bool)> = None;
    for s in min_before.max(1)..=last.min(values.len().saturating_sub(1)) {
        let ((before, mb), (after, ma)) = (deviations(&values[..s]), deviations(&values[s..]));
        let cost = before + after;
        if best.is_none_or(|(c, _, _)| cost <= c) {
            best = Some((cost, s, ma > mb));
        }
    }
    best.filter(|(_, _, rise)| *rise).map(|(_, s, _)| s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn mad_small_cases() {
        assert_eq!(mad(&[]), None);
        assert_eq!(mad(&[5.0]), Some(0.0));
        // Deviations from 3 are 2,1,0,1,97 → median 1.
        assert_eq!(mad(&[1.0, 2.0, 3.0, 4.0, 100.0]), Some(1.0));
    }

    #[test]
    fn scale_is_floored_at_two_percent_of_the_median() {
        assert_eq!(robust_scale(&[100.0; 10]), Some(2.0));
        // MAD 1 → 1.4826, below the 2.0 floor at median 100.
        let scale = robust_scale(&[99.0, 100.0, 101.0, 100.0, 99.0, 101.0]).unwrap();
        assert_eq!(scale, 2.0);
        // MAD 10 → 14.826, above the floor.
        let scale = robust_scale(&[90.0, 100.0, 110.0]).unwrap();
        assert!((scale - 14.826).abs() < 1e-9);
        assert_eq!(robust_scale(&[0.0, 0.0]), None);
    }

    #[test]
    fn z_of_a_shift() {
        // Quiet window at 100: scale is the 2 ms floor, so 110 is 5 scales up.
        assert_eq!(robust_z(110.0, &[100.0; 10]), Some(5.0));
        assert_eq!(robust_z(96.0, &[100.0; 10]), Some(-2.0));
        // One wild value in the window barely moves the scale.
        let mut w = vec![100.0, 101.0, 99.0, 100.0, 102.0, 98.0, 100.0, 101.0, 99.0];
        w.push(1000.0);
        assert!(robust_z(110.0, &w).unwrap() > 4.0);
    }

    #[test]
    fn successive_spread_of_known_series() {
        assert_eq!(successive_log_spread(&[]), None);
        assert_eq!(successive_log_spread(&[100.0]), None);
        assert_eq!(successive_log_spread(&[100.0; 8]), Some(0.0));
        // Alternating ×1.1: every |ln ratio| is ln 1.1.
        let alt: Vec<f64> = (0..9)
            .map(|i| if i % 2 == 0 { 100.0 } else { 110.0 })
            .collect();
        let s = successive_log_spread(&alt).unwrap();
        assert!((s - MAD_TO_SIGMA * 1.1f64.ln() / 2f64.sqrt()).abs() < 1e-12);
        // A level that moved once adds one large ratio, not half the series.
        let mut step = alt.clone();
        step.extend(alt.iter().map(|v| v * 2.0));
        assert!((successive_log_spread(&step).unwrap() - s).abs() < 1e-12);
    }

    /// On normal noise (σ 15% of the log) the estimate lands near σ.
    #[test]
    fn successive_spread_estimates_sigma() {
        let mut state = 7u64;
        let mut normal = || {
            // Box–Muller on a small LCG: enough for a mean over many draws.
            let mut u = || {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
            };
            let (a, b) = (u(), u());
            (-2.0 * a.ln()).sqrt() * (2.0 * std::f64::consts::PI * b).cos()
        };
        let xs: Vec<f64> = (0..20_000)
            .map(|_| 100.0 * (0.15 * normal()).exp())
            .collect();
        let s = successive_log_spread(&xs).unwrap();
        assert!((s - 0.15).abs() < 0.005, "{s}");
    }

    #[test]
    fn rise_split_finds_the_step() {
        // A step at 5, the run before it a little high, one low run after.
        let v = [1.0, 1.01, 0.99, 1.0, 1.03, 1.10, 1.11, 1.06, 1.10, 1.16];
        assert_eq!(rise_split(&v, 2, 9), Some(5));
        // The latest run alone above the rest: the split is at it.
        let spike = [1.0, 1.02, 0.98, 1.0, 1.01, 0.99, 1.3];
        assert_eq!(rise_split(&spike, 2, 6), Some(6));
        // Limits: never before `min_before`, never after `last`.
        assert_eq!(rise_split(&v, 6, 9), Some(6));
        assert_eq!(rise_split(&v, 2, 3), Some(3), "as near the step as allowed");
        // A flat series has no rise.
        assert_eq!(rise_split(&[1.0; 6], 2, 5), None);
        // A fall is no rise.
        let fall: Vec<f64> = v.iter().rev().copied().collect();
        assert_eq!(rise_split(&fall, 2, 9), None);
        assert_eq!(rise_split(&[1.0], 1, 0), None);
    }

    proptest! {
        /// Any split found is within its limits and is a rise.
        #[test]
        fn rise_split_stays_in_its_limits(v in proptest::collection::vec(0.5f64..2.0, 1..16), min_before in 0usize..6, last in 0usize..16) {
            if let Some(s) = rise_split(&v, min_before, last) {
                prop_assert!(s >= min_before.max(1) && s <= last && s < v.len());
                prop_assert!(median(&v[s..]).unwrap() > median(&v[..s]).unwrap());
            }
        }

        #[test]
        fn successive_spread_is_scale_free(w in proptest::collection::vec(10.0f64..1000.0, 2..30), k in 0.1f64..10.0) {
            let scaled: Vec<f64> = w.iter().map(|x| x * k).collect();
            let (a, b) = (successive_log_spread(&w).unwrap(), successive_log_spread(&scaled).unwrap());
            prop_assert!((a - b).abs() < 1e-9);
        }

        #[test]
        fn z_is_scale_free(w in proptest::collection::vec(10.0f64..1000.0, 3..15), x in 10.0f64..2000.0, k in 0.1f64..10.0) {
            let scaled: Vec<f64> = w.iter().map(|v| v * k).collect();
            let a = robust_z(x, &w).unwrap();
            let b = robust_z(x * k, &scaled).unwrap();
            prop_assert!((a - b).abs() <= 1e-9 * a.abs().max(1.0));
        }

        #[test]
        fn mad_is_non_negative_and_bounded_by_the_range(w in proptest::collection::vec(-1e3f64..1e3, 1..20)) {
            let d = mad(&w).unwrap();
            let lo = w.iter().cloned().fold(f64::INFINITY, f64::min);
            let hi = w.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            prop_assert!(d >= 0.0 && d <= hi - lo);
        }
    }
}
