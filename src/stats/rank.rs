//! Rank statistics: the Mann–Whitney null distribution and the
//! Hodges–Lehmann shift with the interval that inverts it.
//!
//! The one implementation used by the alarm evidence (run medians against
//! the baseline window) and by run comparisons (round ratios of two runs).
//! Until issue 16 there were two, and they answered differently on small
//! samples; see [`hodges_lehmann`] for which answer was right and the tests
//! below for the cases that told them apart.

use serde::Serialize;

use super::median_of_sorted;

/// Above this many pairs the exact table (which grows as (n·m)²) gives way
/// to the normal approximation with a continuity correction.
const EXACT_PAIRS: usize = 2_500;

/// A shift between two samples with a distribution-free interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Shift {
    /// Hodges–Lehmann estimate: the median of all differences after − before.
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
    /// The exact coverage of [low, high] under the shift model: at least
    /// the requested confidence when the samples allow it, lower (and said
    /// so) when they are too small for it.
    pub coverage: f64,
}

impl Shift {
    /// Whether the interval reaches `confidence`. Too few values on a side
    /// give the widest interval there is, [min, max] of the differences,
    /// with a lower coverage: callers that must not show it ask this.
    pub fn reaches(&self, confidence: f64) -> bool {
        self.coverage >= confidence - TOLERANCE
    }
}

/// Levels are compared with this slack: `(1 − 0.8) / 2` is
/// 0.09999999999999998 in binary, and 3 vs 3 rounds have a tail of exactly
/// 2/20 = 0.1 that must count as within it.
const TOLERANCE: f64 = 1e-9;

/// Hodges–Lehmann shift `after − before` with the order-statistic interval
/// that inverts the Mann–Whitney test (Lehmann, *Nonparametrics*, 1975,
/// §2.6; Bauer 1972): with the m·n pairwise differences D sorted,
/// [D₍c+1₎, D₍mn−c₎] (1-based) where c is the largest u with
/// P(U ≤ u) ≤ α/2, α = 1 − `confidence`. Each tail then misses with
/// probability P(U ≤ c), and the coverage is 1 − 2·P(U ≤ c). When even
/// P(U ≤ 0) is above α/2 (2 vs 2 values have only 6 orderings) the interval
/// is [min, max] of the differences with its real, lower coverage — see
/// [`Shift::reaches`]. Distribution-free as long as both samples are
/// independent draws from distributions differing only by a shift.
/// `None` when either sample is empty.
///
/// Which of the two former copies was right: on a tail exactly at α/2 —
/// 3 vs 3 values at 80%, P(U ≤ 1) = 2/20 — the copy in `stats/evidence.rs`
/// compared with the rounded `(1 − confidence) / 2` and widened the interval
/// to [D₍1₎, D₍9₎] (90%), while the one in `stats/mod.rs` gave [D₍2₎, D₍8₎],
/// exactly 80%: the latter is the definition. On samples too small for the
/// level, `stats/mod.rs` gave no interval at all and `stats/evidence.rs`
/// [min, max] with its real coverage; both facts are kept here (the
/// interval, and whether it [reaches](Shift::reaches) the level).
pub fn hodges_lehmann(before: &[f64], after: &[f64], confidence: f64) -> Option<Shift> {
    if before.is_empty() || after.is_empty() {
        return None;
    }
    let mut diffs: Vec<f64> = after
        .iter()
        .flat_map(|a| before.iter().map(move |b| a - b))
        .collect();
    // Unstable is the same slice here (see `super::median`).
    diffs.sort_unstable_by(f64::total_cmp);
    let estimate = median_of_sorted(&diffs)?;
    let cdf = known_mann_whitney_cdf(before.len(), after.len());
    let alpha_half = (1.0 - confidence) / 2.0;
    let total = diffs.len();
    // Tails of the cdf below α/2, capped so that the interval never turns
    // inside out; c is the last of them (0 when there are none: [min, max]).
    let within = cdf
        .iter()
        .take_while(|p| **p <= alpha_half + TOLERANCE)
        .count();
    let c = within.saturating_sub(1).min((total - 1) / 2);
    Some(Shift {
        estimate,
        low: diffs[c],
        high: diffs[total - 1 - c],
        coverage: (1.0 - 2.0 * cdf[c]).max(0.0),
    })
}

/// The shift as a ratio `after / before`: Hodges–Lehmann on logarithms,
/// for multiplicative noise (1.12 = 12% slower). Values must be > 0.
pub fn hodges_lehmann_ratio(before: &[f64], after: &[f64], confidence: f64) -> Option<Shift> {
    let ln = |v: &[f64]| v.iter().map(|x| x.ln()).collect::<Vec<f64>>();
    let s = hodges_lehmann(&ln(before), &ln(after), confidence)?;
    Some(Shift {
        estimate: s.estimate.exp(),
        low: s.low.exp(),
        high: s.high.exp(),
        coverage: s.coverage,
    })
}

/// [`mann_whitney_cdf`], computed once per thread for each pair of
/// sizes: an analysis asks for the same few sizes (a baseline window's
/// runs against one run's) for every point of every endpoint, and the
/// exact recurrence was most of [`hodges_lehmann`]'s cost (about 4 % of a
/// build's instructions at 120 endpoints × 156 weeks).
/// Sizes beyond the exact counts are computed each time (a table that
/// large is not worth holding).
fn known_mann_whitney_cdf(m: usize, n: usize) -> std::rc::Rc<[f64]> {
    use std::cell::RefCell;
    use std::collections::HashMap;
    use std::rc::Rc;
    if m * n > EXACT_PAIRS {
        return mann_whitney_cdf(m, n).into();
    }
    type BySizes = HashMap<(usize, usize), Rc<[f64]>>;
    thread_local! {
        static KNOWN: RefCell<BySizes> = RefCell::new(HashMap::new());
    }
    KNOWN.with(|known| {
        known
            .borrow_mut()
            .entry((m, n))
            .or_insert_with(|| mann_whitney_cdf(m, n).into())
            .clone()
    })
}

/// `cdf[u] = P(U ≤ u)` for the Mann–Whitney U (the number of pairs
/// (x, y) with y > x, no ties) of samples of sizes m and n under the null,
/// u = 0..=m·n. Exact counts up to [`EXACT_PAIRS`] pairs (5 vs 5: 252
/// orderings); normal with a continuity correction beyond.
pub(super) fn mann_whitney_cdf(m: usize, n: usize) -> Vec<f64> {
    let mn = m * n;
    if mn > EXACT_PAIRS {
        let mean = mn as f64 / 2.0;
        let sd = (mn as f64 * (m + n + 1) as f64 / 12.0).sqrt();
        return (0..=mn)
            .map(|u| standard_normal_cdf((u as f64 + 0.5 - mean) / sd))
            .collect();
    }
    // Counts by the classic recurrence over sample sizes,
    // f(i, j, u) = f(i−1, j, u−j) + f(i, j−1, u): look at the largest of the
    // i + j values; an x adds nothing, a y above all i x's adds i. Only
    // additions, so no cancellation. `prev[j][u]` holds f(i−1, j, u).
    let start = |_| {
        let mut v = vec![0.0; mn + 1];
        v[0] = 1.0;
        v
    };
    let mut prev: Vec<Vec<f64>> = (0..=n).map(start).collect();
    for _ in 1..=m {
        let mut cur: Vec<Vec<f64>> = Vec::with_capacity(n + 1);
        cur.push(start(0));
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
}

/// Φ(z) through the complementary error function below.
fn standard_normal_cdf(z: f64) -> f64 {
    0.5 * erfc(-z / std::f64::consts::SQRT_2)
}

/// Complementary error function (Numerical Recipes `erfcc`, Chebyshev
/// fit, |error| < 1.2e-7: ample for a coverage figure and an index).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
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
    if x >= 0.0 { r } else { 2.0 - r }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sorted_diffs(before: &[f64], after: &[f64]) -> Vec<f64> {
        let mut d: Vec<f64> = after
            .iter()
            .flat_map(|a| before.iter().map(move |b| a - b))
            .collect();
        d.sort_by(f64::total_cmp);
        d
    }

    #[test]
    fn mann_whitney_five_by_five_matches_the_table() {
        // Counts of the 252 orderings with U <= u: 1, 2, 4, 7, 12, 19, 28.
        let cdf = mann_whitney_cdf(5, 5);
        assert_eq!(cdf.len(), 26);
        for (u, count) in [1.0, 2.0, 4.0, 7.0, 12.0, 19.0, 28.0].iter().enumerate() {
            assert!((cdf[u] - count / 252.0).abs() < 1e-15, "u={u}: {}", cdf[u]);
        }
        assert!((cdf[25] - 1.0).abs() < 1e-15);
        // 5 vs 15: the floor quoted in docs/detection.md, 1/C(20,5) = 6.4e-5.
        assert!((mann_whitney_cdf(5, 15)[0] - 1.0 / 15_504.0).abs() < 1e-18);
        // Symmetric around nm/2.
        let c = mann_whitney_cdf(3, 4);
        for u in 0..12 {
            assert!((c[u] - (1.0 - c[11 - u])).abs() < 1e-12, "u={u}");
        }
    }

    #[test]
    fn normal_fallback_is_close_to_exact_where_both_apply() {
        // 50 vs 50 is still exact; compare with the approximation formula.
        let exact = mann_whitney_cdf(50, 50)[1000];
        let pairs = 2500.0;
        let sd = (pairs * 101.0 / 12.0f64).sqrt();
        let approx = standard_normal_cdf((1000.5 - pairs / 2.0) / sd);
        assert!((exact - approx).abs() < 2e-3, "{exact} vs {approx}");
        // 51 vs 50 takes the approximation and stays a distribution.
        let big = mann_whitney_cdf(51, 50);
        assert!(big.windows(2).all(|w| w[0] <= w[1]) && big[2550] > 0.999);
        assert!((standard_normal_cdf(0.0) - 0.5).abs() < 1e-7);
        assert!((standard_normal_cdf(1.959_963_985) - 0.975).abs() < 1e-6);
        assert!((standard_normal_cdf(-1.0) - 0.158_655_25).abs() < 1e-6);
    }

    #[test]
    fn known_intervals() {
        // Differences of [1,2,3] → [11,12,13]: 8..12, median 10. 3 vs 3:
        // P(U ≤ 0) = 1/20 ≤ 0.05 < P(U ≤ 1), so [D(1), D(9)] at 90%.
        let s = hodges_lehmann(&[1.0, 2.0, 3.0], &[11.0, 12.0, 13.0], 0.9).unwrap();
        assert_eq!((s.estimate, s.low, s.high), (10.0, 8.0, 12.0));
        assert!((s.coverage - 0.9).abs() < 1e-12 && s.reaches(0.9));
        // 5 vs 5 at 95%: P(U ≤ 2) = 4/252 ≤ .025 < P(U ≤ 3) = 7/252 →
        // [D(3), D(23)], coverage 1 − 8/252.
        let before = [100.0, 101.0, 99.0, 102.0, 98.0];
        let after = [110.0, 112.0, 109.0, 111.0, 113.0];
        let s = hodges_lehmann(&before, &after, 0.95).unwrap();
        let d = sorted_diffs(&before, &after);
        assert_eq!(s.estimate, 11.0);
        assert_eq!((s.low, s.high), (d[2], d[22]));
        assert!((s.coverage - (1.0 - 8.0 / 252.0)).abs() < 1e-12);
        // 5 vs 5 at one-sided 10% (the comparison's level): the 6th
        // smallest and 6th largest of 25, coverage 1 − 2·19/252 = 84.9%.
        let shifted: Vec<f64> = before.iter().map(|v| v + 30.0).collect();
        let s = hodges_lehmann(&before, &shifted, 0.8).unwrap();
        let d = sorted_diffs(&before, &shifted);
        assert_eq!((s.estimate, s.low, s.high), (30.0, d[5], d[19]));
        assert!((s.coverage - (1.0 - 2.0 * 19.0 / 252.0)).abs() < 1e-12);
        assert_eq!(hodges_lehmann(&[], &[1.0], 0.95), None);
        assert_eq!(hodges_lehmann(&[1.0], &[], 0.95), None);
    }

    /// The case the two former copies disagreed on: a tail exactly at α/2.
    /// 3 vs 3 at 80%: P(U ≤ 1) = 2/20 = 0.1 = α/2, so c = 1 and the
    /// interval is [D(2), D(8)] with coverage exactly 80%. The copy in
    /// `stats/evidence.rs` compared with the rounded (1 − 0.8)/2 and
    /// answered [D(1), D(9)], 90%.
    #[test]
    fn a_tail_exactly_at_the_level_is_inside_it() {
        let before = [1.0, 2.0, 3.0];
        let after = [11.0, 12.5, 14.0];
        let d = sorted_diffs(&before, &after);
        let s = hodges_lehmann(&before, &after, 0.8).unwrap();
        assert_eq!((s.low, s.high), (d[1], d[7]));
        assert!((s.coverage - 0.8).abs() < 1e-12, "{s:?}");
        assert!(s.reaches(0.8));
    }

    /// The other disagreement: samples too small for the level. 2 vs 2
    /// values have 6 orderings, P(U ≤ 0) = 1/6 > 0.1: the interval is
    /// [min, max] of the differences with its real coverage 2/3, and it
    /// does not reach 80% (the former `stats/mod.rs` copy gave no interval,
    /// the former `stats/evidence.rs` copy the interval without saying).
    #[test]
    fn too_few_values_give_min_max_with_the_real_coverage() {
        let s = hodges_lehmann(&[1.0, 2.0], &[3.0, 4.0], 0.8).unwrap();
        assert_eq!((s.low, s.estimate, s.high), (1.0, 2.0, 3.0));
        assert!((s.coverage - (1.0 - 2.0 / 6.0)).abs() < 1e-12);
        assert!(!s.reaches(0.8) && s.reaches(0.6));
        // One value a side: a single difference, no coverage at all.
        let one = hodges_lehmann(&[1.0], &[4.0], 0.95).unwrap();
        assert_eq!(
            (one.low, one.estimate, one.high, one.coverage),
            (3.0, 3.0, 3.0, 0.0)
        );
    }

    #[test]
    fn ratio_is_multiplicative() {
        let before = [100.0, 101.0, 99.0, 102.0, 98.0];
        let after: Vec<f64> = before.iter().map(|v| v * 1.2).collect();
        let s = hodges_lehmann_ratio(&before, &after, 0.9).unwrap();
        assert!((s.estimate - 1.2).abs() < 1e-12);
        assert!(s.low <= 1.2 && 1.2 <= s.high);
    }

    proptest! {
        #[test]
        fn shift_is_equivariant_and_antisymmetric(
            x in proptest::collection::vec(1.0f64..1e3, 2..8),
            y in proptest::collection::vec(1.0f64..1e3, 2..8),
            c in -100.0f64..100.0,
            confidence in 0.5f64..0.99,
        ) {
            let s = hodges_lehmann(&x, &y, confidence).unwrap();
            let y2: Vec<f64> = y.iter().map(|v| v + c).collect();
            let s2 = hodges_lehmann(&x, &y2, confidence).unwrap();
            prop_assert!((s2.estimate - s.estimate - c).abs() < 1e-9);
            prop_assert!((s2.low - s.low - c).abs() < 1e-9 && (s2.high - s.high - c).abs() < 1e-9);
            prop_assert!(s.low <= s.estimate && s.estimate <= s.high);
            prop_assert_eq!(s.coverage, s2.coverage);
            // Swapping the samples negates the shift and mirrors the interval.
            let r = hodges_lehmann(&y, &x, confidence).unwrap();
            prop_assert!((r.estimate + s.estimate).abs() < 1e-9);
            prop_assert!((r.low + s.high).abs() < 1e-9 && (r.high + s.low).abs() < 1e-9);
            // The coverage is the level when the samples allow it, and the
            // interval is the narrowest with that property.
            if s.reaches(confidence) {
                prop_assert!(s.coverage >= confidence - 1e-9);
            }
        }
    }
}
