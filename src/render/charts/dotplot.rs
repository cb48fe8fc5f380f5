//! The comparison page's dot plot: both runs' round p99s on one axis.

use std::fmt::Write as _;

use crate::analyse::compare::EndpointComparison;
use crate::render::{format as f, palette, xml_escape};

pub(super) const COLOR_THRESHOLD: &str = palette::THRESHOLD.light;
pub(super) const COLOR_AXIS: &str = palette::MUTED.light;
const COLOR_A: &str = palette::ROUND.light;
const COLOR_B: &str = palette::MEDIAN.light;

/// Both runs' round p99s as dots on one axis (A above, B below), each
/// run's median as a tick, and A's median × and ÷ the threshold as dashed
/// lines: B's median beyond them is what the gate calls a regression or an
/// improvement.
pub fn dot_plot(e: &EndpointComparison, id: &str) -> String {
    const W: f64 = 560.0;
    const H: f64 = 92.0;
    const LEFT: f64 = 30.0;
    const RIGHT: f64 = 16.0;
    const ROW_A: f64 = 22.0;
    const ROW_B: f64 = 50.0;
    const AXIS: f64 = 70.0;
    let a = e.a.as_ref();
    let b = e.b.as_ref();
    let lines: Vec<f64> = a
        .map(|s| {
            vec![
                s.median_p99_ms * e.threshold_ratio,
                s.median_p99_ms / e.threshold_ratio,
            ]
        })
        .unwrap_or_default();
    let values: Vec<f64> = a
        .into_iter()
        .chain(b)
        .flat_map(|s| s.round_p99_ms.iter().copied())
        .chain(lines.iter().copied())
        .filter(|v| v.is_finite())
        .collect();
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (lo, hi) = if lo.is_finite() && hi > lo {
        let pad = (hi - lo) * 0.05;
        ((lo - pad).max(0.0), hi + pad)
    } else if lo.is_finite() {
        ((lo * 0.9).max(0.0), lo * 1.1 + 1.0)
    } else {
        (0.0, 1.0)
    };
    let x = |v: f64| LEFT + (v - lo) / (hi - lo) * (W - LEFT - RIGHT);
    let name = xml_escape(&e.name);
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg class="chart dotplot" id="{id}" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img" aria-labelledby="{id}-t {id}-d" xmlns="http://www.w3.org/2000/svg">"#
    );
    let _ = write!(
        s,
        r#"<title id="{id}-t">{name}: round p99 of run A and run B</title><desc id="{id}-d">A: {}. B: {}. Verdict: {}.</desc>"#,
        xml_escape(&round_list(a)),
        xml_escape(&round_list(b)),
        e.verdict
    );
    let _ = write!(
        s,
        r#"<line x1="{LEFT}" y1="{AXIS}" x2="{}" y2="{AXIS}" stroke="{COLOR_AXIS}" stroke-width="1"/>"#,
        W - RIGHT
    );
    for (v, anchor) in [(lo, "start"), (hi, "end")] {
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{}" font-size="11" text-anchor="{anchor}" fill="{COLOR_AXIS}">{} ms</text>"#,
            x(v),
            AXIS + 15.0,
            f::ms(v)
        );
    }
    for (i, t) in lines.iter().enumerate() {
        let label = if i == 0 {
            "regression line: A median × threshold"
        } else {
            "improvement line: A median ÷ threshold"
        };
        let _ = write!(
            s,
            r#"<line x1="{0:.1}" y1="8" x2="{0:.1}" y2="{AXIS}" stroke="{COLOR_THRESHOLD}" stroke-width="1" stroke-dasharray="4 3"><title>{label}: {1} ms</title></line>"#,
            x(*t),
            f::ms(*t)
        );
    }
    for (label, side, y, color) in [("A", a, ROW_A, COLOR_A), ("B", b, ROW_B, COLOR_B)] {
        let _ = write!(
            s,
            r#"<text x="4" y="{:.1}" font-size="12" font-weight="600" fill="{COLOR_AXIS}">{label}</text>"#,
            y + 4.0
        );
        let Some(side) = side else {
            let _ = write!(
                s,
                r#"<text x="{LEFT}" y="{:.1}" font-size="11" fill="{COLOR_AXIS}">not in this run</text>"#,
                y + 4.0
            );
            continue;
        };
        for (i, v) in side.round_p99_ms.iter().enumerate() {
            // Rounds with equal p99 would hide each other: stagger them.
            let dy = (i % 3) as f64 * 4.0 - 4.0;
            let _ = write!(
                s,
                r#"<circle cx="{:.1}" cy="{:.1}" r="4" fill="{color}" fill-opacity="0.8"><title>{label} round {}: {} ms</title></circle>"#,
                x(*v),
                y + dy,
                i + 1,
                f::ms(*v)
            );
        }
        let m = side.median_p99_ms;
        let _ = write!(
            s,
            r#"<line x1="{0:.1}" y1="{1:.1}" x2="{0:.1}" y2="{2:.1}" stroke="{color}" stroke-width="3"><title>{label} median p99: {3} ms</title></line>"#,
            x(m),
            y - 10.0,
            y + 10.0,
            f::ms(m)
        );
    }
    s.push_str("</svg>");
    s
}

fn round_list(s: Option<&crate::analyse::compare::Side>) -> String {
    s.map(|s| {
        let v: Vec<String> = s
            .round_p99_ms
            .iter()
            .map(|v| format!("{} ms", f::ms(*v)))
            .collect();
        format!("{} (median {} ms)", v.join(", "), f::ms(s.median_p99_ms))
    })
    .unwrap_or_else(|| "not in this run".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyse::compare::Side;
    use crate::analyse::verdict::ComparisonVerdict;

    fn endpoint(name: &str, a: Option<Vec<f64>>, b: Option<Vec<f64>>) -> EndpointComparison {
        let side = |v: Vec<f64>| Side {
            median_p99_ms: crate::stats::median(&v).unwrap(),
            usable_rounds: v.len(),
            round_p99_ms: v,
            p90_ms: None,
            throughput_rps: None,
            error_rate: None,
            spread: None,
            failed_rounds: Vec::new(),
            failed: false,
        };
        EndpointComparison {
            id: name.to_string(),
            name: name.to_string(),
            threshold_ratio: 1.15,
            a: a.map(side),
            b: b.map(side),
            ratio: None,
            hodges_lehmann_ratio: None,
            ratio_interval: None,
            interval_confidence: None,
            regressed: Vec::new(),
            throughput_not_judged: None,
            verdict: ComparisonVerdict::Regression,
            reason: String::new(),
        }
    }

    #[test]
    fn dot_plot_draws_every_round_and_escapes_the_name() {
        let e = endpoint(
            "GET /a?x=<b>&\"c\"",
            Some(vec![100.0, 101.0, 99.0, 102.0, 98.0]),
            Some(vec![130.0; 5]),
        );
        let svg = dot_plot(&e, "d");
        assert_eq!(svg.matches("<circle").count(), 10);
        assert!(
            svg.contains("GET /a?x=&lt;b&gt;&amp;&quot;c&quot;"),
            "{svg}"
        );
        assert!(!svg.contains("<b>"));
        assert!(
            svg.contains("regression line: A median × threshold: 115 ms"),
            "{svg}"
        );
        // B's median (130) is drawn right of the regression line (115).
        let pos = |needle: &str| -> f64 {
            let at = svg.find(needle).unwrap();
            let before = &svg[..at];
            let x1 = before.rfind("x1=\"").unwrap() + 4;
            before[x1..].split('"').next().unwrap().parse().unwrap()
        };
        assert!(pos("B median p99: 130 ms") > pos("regression line"));
    }

    #[test]
    fn dot_plot_of_an_added_endpoint() {
        let svg = dot_plot(&endpoint("new", None, Some(vec![5.0; 5])), "d");
        assert!(svg.contains("not in this run"));
        assert_eq!(svg.matches("<circle").count(), 5);
    }
}
