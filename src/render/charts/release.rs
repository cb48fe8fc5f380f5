//! The releases page's chart.

use std::fmt::Write as _;

use super::dotplot::{COLOR_AXIS, COLOR_THRESHOLD};
use crate::analyse::compare::ReleaseHistory;
use crate::render::{format as f, xml_escape};

/// Twelve distinguishable line colours (Tableau 10 plus two).
const PALETTE: [&str; 12] = crate::render::palette::SERIES;

/// Each endpoint's median p99 per release, relative to its first release
/// (×1.00), so endpoints of any speed share one axis and drift shows as
/// distance from the 1.00 line. Empty when there are no releases.
pub fn release_chart(history: &ReleaseHistory, threshold_ratio: f64) -> String {
    if history.releases.is_empty() {
        return String::new();
    }
    const W: f64 = 760.0;
    const H: f64 = 320.0;
    const LEFT: f64 = 56.0;
    const RIGHT: f64 = 190.0;
    const TOP: f64 = 16.0;
    const BOTTOM: f64 = 44.0;
    // series[j] = (release index, ratio to the endpoint's first release, ms)
    let series: Vec<Vec<(usize, f64, f64)>> = (0..history.endpoints.len())
        .map(|j| {
            let first = history
                .releases
                .iter()
                .find_map(|r| r.median_p99_ms[j].filter(|m| *m > 0.0));
            history
                .releases
                .iter()
                .enumerate()
                .filter_map(|(i, r)| Some((i, r.median_p99_ms[j]? / first?, r.median_p99_ms[j]?)))
                .collect()
        })
        .collect();
    let ratios = series
        .iter()
        .flatten()
        .map(|p| p.1)
        .filter(|r| r.is_finite());
    let (mut lo, mut hi) = (1.0 / threshold_ratio, threshold_ratio);
    for r in ratios {
        lo = lo.min(r);
        hi = hi.max(r);
    }
    let pad = (hi - lo) * 0.06;
    let (lo, hi) = (lo - pad, hi + pad);
    let n = history.releases.len();
    let x = |i: usize| {
        if n == 1 {
            LEFT + (W - LEFT - RIGHT) / 2.0
        } else {
            LEFT + i as f64 / (n - 1) as f64 * (W - LEFT - RIGHT)
        }
    };
    let y = |r: f64| TOP + (hi - r) / (hi - lo) * (H - TOP - BOTTOM);

    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg class="chart" id="release-chart" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img" aria-labelledby="release-chart-t release-chart-d" xmlns="http://www.w3.org/2000/svg">"#
    );
    let _ = write!(
        s,
        r#"<title id="release-chart-t">Median p99 per release, relative to each endpoint's first release</title><desc id="release-chart-d">{} releases, {} endpoints; the table below has the numbers.</desc>"#,
        n,
        history.endpoints.len()
    );
    // Horizontal guides: 1.00 and the threshold band.
    for (r, dash, label) in [
        (1.0, "", "×1.00".to_string()),
        (threshold_ratio, "4 3", format!("×{threshold_ratio:.2}")),
        (
            1.0 / threshold_ratio,
            "4 3",
            format!("÷{threshold_ratio:.2}"),
        ),
    ] {
        let color = if dash.is_empty() {
            COLOR_AXIS
        } else {
            COLOR_THRESHOLD
        };
        let _ = write!(
            s,
            r#"<line x1="{LEFT}" y1="{0:.1}" x2="{1}" y2="{0:.1}" stroke="{color}" stroke-width="1" stroke-dasharray="{dash}"/><text x="{2}" y="{3:.1}" font-size="11" text-anchor="end" fill="{COLOR_AXIS}">{label}</text>"#,
            y(r),
            W - RIGHT,
            LEFT - 6.0,
            y(r) + 4.0
        );
    }
    for (i, r) in history.releases.iter().enumerate() {
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{:.1}" font-size="11" text-anchor="middle" fill="{COLOR_AXIS}">{}</text>"#,
            x(i),
            H - BOTTOM + 18.0,
            xml_escape(&r.release)
        );
    }
    for (j, points) in series.iter().enumerate() {
        let color = PALETTE[j % PALETTE.len()];
        let name = xml_escape(&history.endpoints[j].1);
        if points.len() > 1 {
            let path: Vec<String> = points
                .iter()
                .map(|(i, r, _)| format!("{:.1},{:.1}", x(*i), y(*r)))
                .collect();
            let _ = write!(
                s,
                r#"<polyline points="{}" fill="none" stroke="{color}" stroke-width="1.6"><title>{name}</title></polyline>"#,
                path.join(" ")
            );
        }
        for (i, r, ms) in points {
            let _ = write!(
                s,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3.5" fill="{color}"><title>{name}, {}: {} ms (×{:.2} of its first release)</title></circle>"#,
                x(*i),
                y(*r),
                xml_escape(&history.releases[*i].release),
                f::ms(*ms),
                r
            );
        }
        // Legend, one line per endpoint; long names are cut, the title has all.
        let short: String = history.endpoints[j].1.chars().take(26).collect();
        let ly = TOP + 6.0 + j as f64 * 16.0;
        let _ = write!(
            s,
            r#"<g><title>{name}</title><rect x="{:.1}" y="{:.1}" width="10" height="10" fill="{color}"/><text x="{:.1}" y="{:.1}" font-size="11" fill="{COLOR_AXIS}">{}</text></g>"#,
            W - RIGHT + 12.0,
            ly - 9.0,
            W - RIGHT + 27.0,
            ly,
            xml_escape(&short)
        );
    }
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_chart_puts_each_endpoint_relative_to_its_first_release() {
        use crate::analyse::compare::ReleaseRow;
        let t = chrono::DateTime::<chrono::Utc>::UNIX_EPOCH;
        let history = ReleaseHistory {
            endpoints: vec![("a".into(), "<a>".into()), ("b".into(), "b".into())],
            releases: vec![
                ReleaseRow {
                    release: "1.0".into(),
                    run: "r1".into(),
                    started_at: t,
                    median_p99_ms: vec![Some(100.0), None],
                },
                ReleaseRow {
                    release: "1.1".into(),
                    run: "r2".into(),
                    started_at: t,
                    median_p99_ms: vec![Some(150.0), Some(10.0)],
                },
            ],
        };
        let svg = release_chart(&history, 1.15);
        assert!(
            svg.contains("&lt;a&gt;, 1.1: 150 ms (×1.50 of its first release)"),
            "{svg}"
        );
        assert!(
            svg.contains("b, 1.1: 10.0 ms (×1.00 of its first release)"),
            "{svg}"
        );
        assert_eq!(svg.matches("<polyline").count(), 1, "b has one point only");
        assert!(
            release_chart(
                &ReleaseHistory {
                    endpoints: vec![],
                    releases: vec![]
                },
                1.15
            )
            .is_empty()
        );
    }
}
