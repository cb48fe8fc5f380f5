//! Display formatting in one place: templates get ready-made strings.

use chrono::{DateTime, Utc};

pub use crate::decimal::fixed;

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
}
