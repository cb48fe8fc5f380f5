//! The weekly page's evidence chart: one alarm's rounds against the
//! baseline and the regression line.

use crate::analyse::alarms::Alarm;
use crate::render::{format as f, xml_escape};

/// A small SVG: the rounds' p99 as dots against the baseline (solid) and
/// the regression line (dashed); printable and readable without colour.
pub fn evidence_svg(a: &Alarm, threshold_ratio: f64) -> String {
    let (w, h, pad) = (150.0, 40.0, 4.0);
    let threshold = a.baseline_p99_ms.map(|b| b * threshold_ratio);
    let mut values: Vec<f64> = a.round_p99_ms.clone();
    values.extend(a.baseline_p99_ms);
    values.extend(threshold);
    let lo = values.iter().cloned().fold(f64::INFINITY, f64::min) * 0.95;
    let hi = values.iter().cloned().fold(f64::NEG_INFINITY, f64::max) * 1.05;
    if !(lo.is_finite() && hi.is_finite() && hi > lo) {
        return String::new();
    }
    let y = |v: f64| h - pad - (v - lo) / (hi - lo) * (h - 2.0 * pad);
    let mut s = format!(
        "<svg class=\"evidence\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" role=\"img\"><title>{}</title>",
        xml_escape(&format!(
            "rounds p99 {} ms; baseline {} ms; line {} ms",
            a.round_p99_ms
                .iter()
                .map(|v| f::ms(*v))
                .collect::<Vec<_>>()
                .join(", "),
            f::opt_ms(a.baseline_p99_ms),
            f::opt_ms(threshold)
        ))
    );
    if let Some(b) = a.baseline_p99_ms {
        s.push_str(&format!(
            "<line class=\"ev-base\" x1=\"0\" x2=\"{w}\" y1=\"{0:.1}\" y2=\"{0:.1}\"/>",
            y(b)
        ));
    }
    if let Some(t) = threshold {
        s.push_str(&format!(
            "<line class=\"ev-line\" x1=\"0\" x2=\"{w}\" y1=\"{0:.1}\" y2=\"{0:.1}\"/>",
            y(t)
        ));
    }
    let n = a.round_p99_ms.len().max(1) as f64;
    for (i, v) in a.round_p99_ms.iter().enumerate() {
        let x = pad + (i as f64 + 0.5) * (w - 2.0 * pad) / n;
        let over = threshold.is_some_and(|t| *v > t);
        s.push_str(&format!(
            "<circle class=\"ev-round{}\" cx=\"{x:.1}\" cy=\"{:.1}\" r=\"3\"/>",
            if over { " over" } else { "" },
            y(*v)
        ));
    }
    s.push_str("</svg>");
    s
}
