//! Floats as fixed-point decimal text, byte for byte as `format!` writes
//! them, faster: pages and messages show them by the hundred thousand.

/// `format!("{v:.digits$}")` (with `plus`: `format!("{v:+.digits$}")`),
/// byte for byte, for up to three digits; several times faster for the
/// usual values (a fifth of rendering a +1-run build went to the standard
/// library's exact formatting).
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
                let n = n as u64;
                let mut out = String::with_capacity(24);
                // The standard library signs negative zero too.
                if v.is_sign_negative() {
                    out.push('-');
                } else if plus {
                    out.push('+');
                }
                let (whole, fraction) = (n / DIVISOR[digits], n % DIVISOR[digits]);
                push_digits(&mut out, whole, 1);
                if digits > 0 {
                    out.push('.');
                    push_digits(&mut out, fraction, digits);
                }
                return out;
            }
        }
    }
    match plus {
        true => format!("{v:+.digits$}"),
        false => format!("{v:.digits$}"),
    }
}

/// `n` in decimal, zero-padded to `width` digits, without the formatting
/// machinery (`write!` was four fifths of [`fixed`]'s cost).
fn push_digits(out: &mut String, mut n: u64, width: usize) {
    let mut buf = [0u8; 20];
    let mut at = buf.len();
    while n > 0 || buf.len() - at < width {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
    }
    out.push_str(std::str::from_utf8(&buf[at..]).expect("ASCII digits"));
}

#[cfg(test)]
mod tests {
    use super::*;

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
