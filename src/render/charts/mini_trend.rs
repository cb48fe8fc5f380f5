//! The small trend beside each open problem and improvement of the weekly
//! review: the last runs' values (median p99, or the knee of step-load
//! runs) with their baseline, the runs over the line in red and a failed
//! run as a square at the bottom, as on the endpoint's chart. Big enough
//! to read from the back of a room (180 × 48 px); no text in it, the
//! numbers are beside it, and its `<title>` says what it shows.
//!
//! Colours are CSS classes (`mt-…`, static/style.css), so both themes
//! apply.

use std::fmt::Write as _;

use crate::render::display::DisplayState;
use crate::render::xml_escape;

/// One run of a mini trend.
#[derive(Debug, Clone, PartialEq)]
pub struct MiniPoint {
    /// `None`: a failed run (no valid latency), drawn at the bottom.
    pub value: Option<f64>,
    pub baseline: Option<f64>,
    pub state: DisplayState,
}

const W: f64 = 180.0;
const H: f64 = 48.0;
const PAD: f64 = 5.0;

/// The trend of `points` (oldest first), titled `title`. Empty without
/// points.
pub fn mini_trend(points: &[MiniPoint], title: &str) -> String {
    if points.is_empty() {
        return String::new();
    }
    let values = points
        .iter()
        .flat_map(|p| [p.value, p.baseline])
        .flatten()
        .filter(|v| v.is_finite());
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    let (lo, hi) = if lo.is_finite() { (lo, hi) } else { (0.0, 1.0) };
    // Some room above and below, and a flat series drawn in the middle.
    let (lo, hi) = if hi > lo {
        let pad = (hi - lo) * 0.1;
        (lo - pad, hi + pad)
    } else {
        (lo - 1.0, hi + 1.0)
    };
    let step = if points.len() > 1 {
        (W - 2.0 * PAD) / (points.len() - 1) as f64
    } else {
        0.0
    };
    let x = |i: usize| {
        if points.len() > 1 {
            PAD + i as f64 * step
        } else {
            W / 2.0
        }
    };
    let y = |v: f64| H - PAD - (v - lo) / (hi - lo) * (H - 2.0 * PAD);
    let mut s = format!(
        r#"<svg class="mini-trend" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img"><title>{}</title>"#,
        xml_escape(title)
    );
    // The baseline, then the values, broken at failed runs.
    for (class, pick) in [
        (
            "mt-base",
            (|p: &MiniPoint| p.baseline) as fn(&MiniPoint) -> Option<f64>,
        ),
        ("mt-line", |p: &MiniPoint| p.value),
    ] {
        let mut segment: Vec<String> = Vec::new();
        let flush = |segment: &mut Vec<String>, s: &mut String| {
            if segment.len() > 1 {
                let _ = write!(
                    s,
                    r#"<polyline class="{class}" points="{}"/>"#,
                    segment.join(" ")
                );
            }
            segment.clear();
        };
        for (i, p) in points.iter().enumerate() {
            match pick(p).filter(|v| v.is_finite()) {
                Some(v) => segment.push(format!("{:.1},{:.1}", x(i), y(v))),
                None => flush(&mut segment, &mut s),
            }
        }
        flush(&mut segment, &mut s);
    }
    for (i, p) in points.iter().enumerate() {
        match p.value.filter(|v| v.is_finite()) {
            None => {
                let _ = write!(
                    s,
                    r#"<rect class="v-failed" x="{:.1}" y="{:.1}" width="7" height="7"/>"#,
                    x(i) - 3.5,
                    H - PAD - 3.5
                );
            }
            Some(v) => {
                let _ = write!(
                    s,
                    r#"<circle class="v-{}" cx="{:.1}" cy="{:.1}" r="3"/>"#,
                    p.state.key(),
                    x(i),
                    y(v)
                );
            }
        }
    }
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(value: Option<f64>, state: DisplayState) -> MiniPoint {
        MiniPoint {
            value,
            baseline: Some(100.0),
            state,
        }
    }

    #[test]
    fn values_rise_on_screen_and_a_failed_run_is_a_square_at_the_bottom() {
        let svg = mini_trend(
            &[
                point(Some(100.0), DisplayState::Ok),
                point(None, DisplayState::Failed),
                point(Some(150.0), DisplayState::Regression),
            ],
            "a <title>",
        );
        assert!(svg.contains("<title>a &lt;title&gt;</title>"), "{svg}");
        assert!(svg.contains(r#"<rect class="v-failed""#));
        // The regression sits higher (smaller y) than the ok run.
        let cy = |class: &str| -> f64 {
            let at = svg.find(&format!(r#"class="v-{class}" cx="#)).unwrap();
            let rest = &svg[at..];
            let v = &rest[rest.find("cy=\"").unwrap() + 4..];
            v[..v.find('"').unwrap()].parse().unwrap()
        };
        assert!(cy("regression") < cy("ok"));
        // The line breaks at the failed run: two single points, no polyline.
        assert!(!svg.contains(r#"class="mt-line""#), "{svg}");
        assert!(svg.contains(r#"class="mt-base""#));
        assert_eq!(mini_trend(&[], "x"), "");
    }
}
