//! The evidence beside an alarm as display strings, the same on the
//! endpoint, run and weekly pages. The numbers come from
//! `analyse::evidence`; nothing is computed here.

use super::format as f;
use crate::analyse::evidence::Evidence;

#[derive(Debug, Clone, serde::Serialize)]
pub struct EvidenceView {
    /// `98.0–180 ms (93.75%)`: the rounds' [min, max], an interval for the
    /// run's median, with its coverage.
    pub band: String,
    /// `round 5 (180 ms)`, or empty.
    pub outliers: String,
    /// `+16.5 ms [+12.0, +21.0] · 81.82% · 1 vs 10 runs`, or `–`.
    pub shift: String,
    /// One line of all three, for tooltips and narrow cells.
    pub line: String,
}

pub fn evidence_view(e: &Evidence) -> EvidenceView {
    let band = e
        .band
        .map(|b| {
            format!(
                "{}–{} ms ({})",
                f::ms(b.low),
                f::ms(b.high),
                f::coverage(b.coverage)
            )
        })
        .unwrap_or_else(|| "–".into());
    let outliers = e
        .outlier_rounds
        .iter()
        .map(|o| format!("round {} ({} ms)", o.round, f::ms(o.p99_ms)))
        .collect::<Vec<_>>()
        .join(", ");
    let shift = e
        .shift
        .as_ref()
        .map(|s| {
            format!(
                "{} ms [{}, {}] · {} · {} vs {} runs",
                f::signed_ms(s.estimate_ms),
                f::signed_ms(s.low_ms),
                f::signed_ms(s.high_ms),
                f::coverage(s.coverage),
                s.alarmed_runs,
                s.baseline_runs
            )
        })
        .unwrap_or_else(|| "–".into());
    let line = format!(
        "band {band}; likely GC/noise: {}; shift {shift}",
        if outliers.is_empty() {
            "none"
        } else {
            &outliers
        }
    );
    EvidenceView {
        band,
        outliers,
        shift,
        line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyse::evidence::{OutlierRound, ShiftEvidence};
    use crate::stats::evidence::MedianBand;

    #[test]
    fn a_hand_made_alarm_reads_as_numbers() {
        let e = Evidence {
            band: Some(MedianBand {
                low: 98.0,
                high: 180.0,
                coverage: 0.9375,
            }),
            outlier_rounds: vec![OutlierRound {
                round: 5,
                p99_ms: 180.0,
            }],
            shift: Some(ShiftEvidence {
                estimate_ms: 16.5,
                low_ms: 12.0,
                high_ms: 21.0,
                coverage: 1.0 - 2.0 / 11.0,
                baseline_runs: 10,
                alarmed_runs: 1,
            }),
        };
        let v = evidence_view(&e);
        assert_eq!(v.band, "98.0–180 ms (93.75%)");
        assert_eq!(v.outliers, "round 5 (180 ms)");
        assert_eq!(v.shift, "+16.5 ms [+12.0, +21.0] · 81.82% · 1 vs 10 runs");
        assert_eq!(f::coverage(0.5), "50%");
        assert_eq!(f::coverage(1.0 - 14.0 / 286.0), "95.1%");
    }
}
