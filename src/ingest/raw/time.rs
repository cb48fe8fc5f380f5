//! Hand-written timestamp parsing for the hot loops (chrono's parser
//! is general and several times slower per sample).

/// Parses RFC 3339 with optional fraction and `Z`/`±hh:mm` offset, as Go's
/// RFC3339Nano writes it (`2025-06-14T09:21:29.140469067+01:00`), into
/// microseconds since the Unix epoch (UTC). `None` when malformed.
pub fn parse_rfc3339_micros(s: &[u8]) -> Option<i64> {
    if s.len() < 20 {
        return None;
    }
    let num = |range: std::ops::Range<usize>| -> Option<i64> {
        let mut v = 0i64;
        for &b in &s[range] {
            if !b.is_ascii_digit() {
                return None;
            }
            v = v * 10 + (b - b'0') as i64;
        }
        Some(v)
    };
    if s[4] != b'-'
        || s[7] != b'-'
        || !matches!(s[10], b'T' | b't' | b' ')
        || s[13] != b':'
        || s[16] != b':'
    {
        return None;
    }
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&month)
        || !(1..=days_in_month(year, month)).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let mut i = 19;
    let mut micros = 0i64;
    if s.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while i < s.len() && s[i].is_ascii_digit() {
            if i - start < 6 {
                micros = micros * 10 + (s[i] - b'0') as i64;
            }
            i += 1;
        }
        if i == start {
            return None;
        }
        for _ in (i - start)..6 {
            micros *= 10;
        }
    }
    let offset_s = match s.get(i)? {
        b'Z' | b'z' if i + 1 == s.len() => 0,
        sign @ (b'+' | b'-') if i + 6 == s.len() && s[i + 3] == b':' => {
            let (hours, minutes) = (num(i + 1..i + 3)?, num(i + 4..i + 6)?);
            if hours > 23 || minutes > 59 {
                return None; // RFC 3339's time-numoffset, as chrono reads it
            }
            let v = hours * 3600 + minutes * 60;
            if *sign == b'+' { v } else { -v }
        }
        _ => return None,
    };
    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + hour * 3600 + minute * 60 + second - offset_s;
    Some(secs * 1_000_000 + micros)
}

/// The days of a month of the proleptic Gregorian calendar. Checked
/// because `days_from_civil` would quietly carry 2025-02-30 into March
/// (chrono rejects it, rightly: no tool writes a day that does not exist,
/// so such a time stamp is a corrupt one).
fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
/// `days_from_civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Parses a plain unsigned decimal integer.
pub(crate) fn parse_u64(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 19 {
        return None;
    }
    let mut v = 0u64;
    for &b in s {
        if !b.is_ascii_digit() {
            return None;
        }
        v = v * 10 + (b - b'0') as u64;
    }
    Some(v)
}

/// Parses a non-negative finite decimal number (`12`, `3.25`, `1e3`).
pub(crate) fn parse_f64(s: &[u8]) -> Option<f64> {
    // Whole milliseconds (JMeter, Gatling) are the common case.
    if let Some(v) = parse_u64(s)
        && v < (1 << 53)
    {
        return Some(v as f64);
    }
    let text = std::str::from_utf8(s).ok()?;
    let v: f64 = text.trim().parse().ok()?;
    (v.is_finite() && v >= 0.0).then_some(v)
}

/// Epoch milliseconds as epoch microseconds; `None` when the value does
/// not fit (a corrupt time stamp must be an error, not an overflow:
/// found by fuzzing the JMeter CSV reader).
pub(crate) fn ms_to_us(ms: u64) -> Option<i64> {
    i64::try_from(ms).ok()?.checked_mul(1000)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::DateTime;

    #[test]
    fn agrees_with_chrono() {
        for s in [
            "2025-06-14T09:21:29.140469067+01:00",
            "2025-06-14T09:21:29Z",
            "1999-12-31T23:59:59.5-05:30",
            "2024-02-29T00:00:00.000001Z",
            "1970-01-01T00:00:00Z",
        ] {
            let want = DateTime::parse_from_rfc3339(s).unwrap().timestamp_micros();
            assert_eq!(parse_rfc3339_micros(s.as_bytes()), Some(want), "{s}");
        }
        for bad in [
            "2025-02-29T00:00:00Z",
            "2025-02-30T00:00:00Z",
            "2024-02-30T00:00:00Z",
            "2025-04-31T00:00:00Z",
            "1900-02-29T00:00:00Z",
            "2025-06-14 09:21",
            "2025-13-14T09:21:29Z",
            "2025-06-14T09:21:29+0100",
            "x",
        ] {
            assert_eq!(parse_rfc3339_micros(bad.as_bytes()), None, "{bad}");
        }
    }

    /// A time stamp from parts, some of them out of range on purpose.
    fn stamp() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let date = (0u32..=9999, 0u32..=13, 0u32..=32);
        let time = (0u32..=24, 0u32..=60, 0u32..=61);
        let fraction = proptest::option::of("[0-9]{1,12}");
        let separator = proptest::sample::select(vec!['T', 't', ' ', '_']);
        let offset = prop_oneof![
            Just("Z".to_string()),
            Just("z".to_string()),
            (
                proptest::sample::select(vec!['+', '-']),
                0u32..=25,
                0u32..=61
            )
                .prop_map(|(s, h, m)| format!("{s}{h:02}:{m:02}")),
            "[+-]?[0-9:]{0,5}",
        ];
        (date, separator, time, fraction, offset).prop_map(
            |((y, mo, d), sep, (h, mi, s), frac, off)| {
                let frac = frac.map(|f| format!(".{f}")).unwrap_or_default();
                format!("{y:04}-{mo:02}-{d:02}{sep}{h:02}:{mi:02}:{s:02}{frac}{off}")
            },
        )
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2048))]

        /// Differential: the hand-written parser gives chrono's answer for
        /// every time stamp, well-formed or not (chrono's microseconds:
        /// both truncate longer fractions). It once took 30 and 31
        /// February, which chrono rejects; chrono was right.
        #[test]
        fn parses_as_chrono_does(s in stamp()) {
            let theirs = DateTime::parse_from_rfc3339(&s).ok().map(|t| t.timestamp_micros());
            proptest::prop_assert_eq!(parse_rfc3339_micros(s.as_bytes()), theirs, "{}", s);
        }

        /// Any bytes: no panic, and nothing chrono rejects is accepted.
        #[test]
        fn arbitrary_bytes(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..40)) {
            if let Some(ours) = parse_rfc3339_micros(&bytes) {
                let text = std::str::from_utf8(&bytes).expect("accepted input is ASCII");
                let theirs = DateTime::parse_from_rfc3339(text).ok().map(|t| t.timestamp_micros());
                proptest::prop_assert_eq!(Some(ours), theirs, "{}", text);
            }
        }
    }
}
