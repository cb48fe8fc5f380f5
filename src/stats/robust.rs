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

    proptest! {
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
