//! Pure statistics over slices of `f64`: no I/O, no formatting.

pub mod evidence;
pub mod percentile;
pub mod student_t;

mod proportion;
mod rank;
mod robust;

pub use percentile::{Moments, PercentileMethod, moments, moments_by, percentiles, percentiles_by};
pub use proportion::{Interval, WILSON_Z95, wilson_interval};
pub use rank::{Shift, hodges_lehmann, hodges_lehmann_ratio};
pub use robust::{
    MAD_TO_SIGMA, MIN_SCALE_FRACTION, mad, rise_split, robust_scale, robust_z,
    successive_log_spread,
};

/// The median of `values`: the middle value, or the mean of the two
/// middle values for an even count. `None` when empty. NaN is never
/// passed in (ingest rejects it).
pub fn median(values: &[f64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    // Values equal under `total_cmp` have the same bits: an unstable sort
    // gives the same slice as a stable one, without its buffer.
    sorted.sort_unstable_by(f64::total_cmp);
    median_of_sorted(&sorted)
}

/// [`median`] of values already sorted (by `f64::total_cmp`), without
/// sorting a copy.
pub fn median_of_sorted(sorted: &[f64]) -> Option<f64> {
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
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
