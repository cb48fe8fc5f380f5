//! Display formatting in one place: templates get ready-made strings.

use chrono::{DateTime, Utc};

/// Milliseconds with three significant digits, never scientific.
/// What a failed run shows where a median p99 would be: most of its
/// requests failed, so its latencies (often the fast 500s, or 0) are not
/// the service's latency.
pub const NO_VALID_LATENCY: &str = "no valid latency";

/// A run's median p99 in ms, or [`NO_VALID_LATENCY`] for a failed run.
pub fn median_p99(p: &crate::analyse::RunPoint) -> String {
    if p.verdict == crate::analyse::verdict::Verdict::Failed {
        NO_VALID_LATENCY.into()
    } else {
        ms(p.median_p99_ms)
    }
}

pub fn ms(v: f64) -> String {
    if !v.is_finite() {
        return "–".into();
    }
    let a = v.abs();
    if a >= 100.0 {
        fixed(v, 0, false)
    } else if a >= 10.0 {
        fixed(v, 1, false)
    } else if a >= 1.0 {
        fixed(v, 2, false)
    } else {
        fixed(v, 3, false)
    }
}

/// `format!("{v:.digits$}")` (with `plus`: `format!("{v:+.digits$}")`),
/// byte for byte, for up to three digits; several times faster for the
/// usual values, which pages show by the hundred thousand (a fifth of
/// rendering a +1-run build went to the standard library's exact
/// formatting).
///
/// Why it is the same: the standard library prints the exact binary value
/// rounded to `digits` decimals, ties to even. Here `n`, the nearest
/// integer to `|v| × 10^digits` as a float product, is kept only when the
/// exact product (`mul_add` rounds once) is less than 0.499 away from it:
/// `n` is then that product rounded, and there was no tie. Anything else
/// (a tie or nearly one, a huge value, NaN, infinity) goes to `format!`.
pub fn fixed(v: f64, digits: usize, plus: bool) -> String {
    const SCALE: [f64; 4] = [1.0, 10.0, 100.0, 1000.0];
    const DIVISOR: [u64; 4] = [1, 10, 100, 1000];
    if digits < SCALE.len() && v.is_finite() {
        let a = v.abs();
        let product = a * SCALE[digits];
        // Integers below 2^53 are exact in an f64.
        if product < 1e15 {
            let n = product.round_ties_even();
            if a.mul_add(SCALE[digits], -n).abs() < 0.499 {
                use std::fmt::Write as _;
                let n = n as u64;
                let mut out = String::with_capacity(24);
                // The standard library signs negative zero too.
                if v.is_sign_negative() {
                    out.push('-');
                } else if plus {
                    out.push('+');
                }
                let (whole, fraction) = (n / DIVISOR[digits], n % DIVISOR[digits]);
                // Writing into a String never fails.
                let _ = match digits {
                    0 => write!(out, "{whole}"),
                    _ => write!(out, "{whole}.{fraction:0digits$}"),
                };
                return out;
            }
        }
    }
    match plus {
        true => format!("{v:+.digits$}"),
        false => format!("{v:.digits$}"),
    }
}

pub fn opt_ms(v: Option<f64>) -> String {
    v.map(ms).unwrap_or_else(|| "–".into())
}

/// A ratio as `×1.23`.
pub fn ratio(r: Option<f64>) -> String {
    r.map(|r| format!("×{}", fixed(r, 2, false)))
        .unwrap_or_else(|| "–".into())
}

/// A ratio as a signed change, `+23.0%`.
pub fn change(r: Option<f64>) -> String {
    r.map(|r| format!("{}%", fixed((r - 1.0) * 100.0, 1, true)))
        .unwrap_or_else(|| "–".into())
}

/// A share 0..=1 as a percentage.
pub fn percent(v: Option<f64>) -> String {
    v.map(|v| {
        if v > 0.0 && v < 0.001 {
            "<0.1%".to_string()
        } else {
            format!("{}%", fixed(v * 100.0, 1, false))
        }
    })
    .unwrap_or_else(|| "–".into())
}

/// An interval's coverage as a percentage with up to two decimals:
/// `93.75%`, `95.1%`, `50%`.
pub fn coverage(c: f64) -> String {
    let s = format!("{:.2}", c * 100.0);
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s}%")
}

pub fn rate(v: Option<f64>) -> String {
    v.map(|v| format!("{}/s", fixed(v, 1, false)))
        .unwrap_or_else(|| "–".into())
}

pub fn count(v: Option<u64>) -> String {
    v.map(|v| v.to_string()).unwrap_or_else(|| "–".into())
}

/// A relative change as a signed whole percentage: `+31%`, `-20%`.
pub fn signed_percent(change: f64) -> String {
    format!("{:+.0}%", change * 100.0)
}

/// A p-value: fixed digits down to 0.001, then scientific (`3.5e-28`).
pub fn pvalue(p: f64) -> String {
    if !p.is_finite() {
        "–".into()
    } else if p >= 0.001 {
        format!("{p:.3}")
    } else {
        format!("{p:.1e}")
    }
}

/// A signed duration in ms: `+31.2`, `-4.0`.
pub fn signed_ms(v: f64) -> String {
    if v > 0.0 {
        format!("+{}", ms(v))
    } else {
        ms(v)
    }
}

/// `host perf-01 → perf-03, jvm_flags (none) → -Xmx4g`: the same words as
/// the analysis uses for a not-comparable run.
pub fn setting_changes(changes: &[crate::analyse::comparability::SettingChange]) -> String {
    crate::analyse::comparability::describe(changes)
}

pub fn date(t: DateTime<Utc>) -> String {
    crate::calendar::date(t.date_naive())
}

pub fn datetime(t: DateTime<Utc>) -> String {
    crate::calendar::datetime(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(ms(1234.5), "1234");
        assert_eq!(ms(54.957), "55.0");
        assert_eq!(ms(4.4111), "4.41");
        assert_eq!(ms(0.25), "0.250");
        assert_eq!(ratio(Some(1.2345)), "×1.23");
        assert_eq!(change(Some(1.2345)), "+23.4%");
        assert_eq!(change(Some(0.9)), "-10.0%");
        assert_eq!(percent(Some(0.0004)), "<0.1%");
        assert_eq!(percent(Some(0.0)), "0.0%");
    }

    fn standard(v: f64, digits: usize, plus: bool) -> String {
        match plus {
            true => format!("{v:+.digits$}"),
            false => format!("{v:.digits$}"),
        }
    }

    #[test]
    fn fixed_formats_ties_signs_and_edges_as_the_standard_library() {
        let edges = [
            0.0,
            -0.0,
            0.5,
            1.5,
            2.5,
            -2.5,
            0.125,
            0.375,
            1.005,
            2.675,
            0.0005,
            0.0015,
            -0.0004,
            -0.04,
            99.95,
            9.995,
            999.5,
            1e14,
            1e15,
            1e16,
            -1e300,
            1e-300,
            f64::MIN_POSITIVE,
            f64::MAX,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            4503599627370495.5,
            0.1 + 0.2,
        ];
        for v in edges {
            for digits in 0..=3 {
                for plus in [false, true] {
                    assert_eq!(
                        fixed(v, digits, plus),
                        standard(v, digits, plus),
                        "{v:e} {digits}"
                    );
                }
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4000))]
        // Any f64 bit pattern, and the decimals pages show, with every
        // tie (k / 2000 is a tie at three digits when k is odd).
        #[test]
        fn fixed_is_the_standard_library_s_format(
            bits in proptest::prelude::any::<u64>(),
            k in -40_000_000i64..40_000_000,
            scale in 0usize..5,
            digits in 0usize..4,
            plus in proptest::prelude::any::<bool>(),
        ) {
            let any = f64::from_bits(bits);
            proptest::prop_assert_eq!(fixed(any, digits, plus), standard(any, digits, plus));
            let decimal = k as f64 / [2.0, 20.0, 200.0, 2000.0, 20000.0][scale];
            proptest::prop_assert_eq!(
                fixed(decimal, digits, plus),
                standard(decimal, digits, plus),
                "{}", decimal
            );
            let near = decimal * (1.0 + f64::EPSILON);
            proptest::prop_assert_eq!(fixed(near, digits, plus), standard(near, digits, plus));
        }
    }
}
