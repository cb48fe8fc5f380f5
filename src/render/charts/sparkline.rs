//! The overview's sparklines.

use std::fmt::Write as _;

use crate::analyse::{EndpointAnalysis, RunPoint, Verdict};
use crate::render::display::{DisplayState, display_state};
use crate::render::xml_escape;

/// A tiny inline trend line of run medians, the last point coloured by
/// its verdict. Hand-written: a polyline is all it needs, and it keeps
/// the overview light.
pub fn sparkline(endpoint: &EndpointAnalysis, max_points: usize) -> String {
    const W: f64 = 120.0;
    const H: f64 = 28.0;
    // Runs whose time cannot be trusted have no place in a time line.
    let trusted: Vec<&RunPoint> = endpoint
        .points
        .iter()
        .filter(|p| !p.untrusted_time)
        .collect();
    let pts = &trusted[trusted.len().saturating_sub(max_points)..];
    // A failed run has no valid latency: it sets no scale and sits at the
    // bottom.
    let failed = |p: &RunPoint| p.verdict == Verdict::Failed;
    let (lo, hi) = pts
        .iter()
        .filter(|p| !failed(p))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| {
            (lo.min(p.median_p99_ms), hi.max(p.median_p99_ms))
        });
    let (lo, hi) = if lo.is_finite() { (lo, hi) } else { (0.0, 0.0) };
    let span = if hi > lo { hi - lo } else { 1.0 };
    let step = if pts.len() > 1 {
        (W - 6.0) / (pts.len() - 1) as f64
    } else {
        0.0
    };
    let coord = |i: usize, p: &RunPoint| {
        let y = if failed(p) {
            H - 3.0
        } else {
            H - 3.0 - (p.median_p99_ms - lo) / span * (H - 6.0)
        };
        (3.0 + i as f64 * step, y)
    };
    let mut line = String::new();
    for (i, p) in pts.iter().enumerate() {
        let (x, y) = coord(i, p);
        let _ = write!(line, "{}{x:.1},{y:.1}", if i == 0 { "" } else { " " });
    }
    let mut marks = String::new();
    for (i, p) in pts.iter().enumerate() {
        let state = display_state(p);
        if matches!(
            state,
            DisplayState::Regression | DisplayState::Accepted | DisplayState::Failed
        ) || i + 1 == pts.len()
        {
            let (x, y) = coord(i, p);
            if state == DisplayState::Failed {
                // A square, as on the trend chart: a failed run is not a
                // point of the line.
                let _ = write!(
                    marks,
                    r#"<rect x="{:.1}" y="{:.1}" width="6" height="6" class="v-failed"/>"#,
                    x - 3.0,
                    y - 3.0
                );
            } else {
                let _ = write!(
                    marks,
                    r#"<circle cx="{x:.1}" cy="{y:.1}" r="2.5" class="v-{}"/>"#,
                    state.key()
                );
            }
        }
    }
    format!(
        r#"<svg class="spark" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img"><title>{}: last {} run medians, {} to {} ms</title><polyline points="{line}"/>{marks}</svg>"#,
        xml_escape(&endpoint.name),
        pts.len(),
        crate::render::format::ms(lo),
        crate::render::format::ms(hi),
    )
}
