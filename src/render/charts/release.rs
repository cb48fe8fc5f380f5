//! The releases page's charts: small multiples, one small chart per
//! endpoint of its median p99 per release, relative to its first release
//! (×1.00), on a shared scale so that the panels compare at a glance. No
//! legend and no colours to match: each panel is named by its heading,
//! and its last value is written where the line ends.

use std::fmt::Write as _;

use crate::analyse::compare::ReleaseHistory;
use crate::render::{format as f, xml_escape};

const W: f64 = 300.0;
const H: f64 = 130.0;
const LEFT: f64 = 44.0;
const RIGHT: f64 = 64.0;
const TOP: f64 = 10.0;
const BOTTOM: f64 = 26.0;

/// One panel: the endpoint and its chart.
pub struct ReleasePanel {
    pub name: String,
    /// The endpoint's page id, for its link.
    pub id: String,
    pub svg: String,
}

/// Each endpoint's median p99 per release relative to its first release,
/// in panels sharing one y scale (the threshold band always shows).
/// Empty when there are no releases.
pub fn release_multiples(history: &ReleaseHistory, threshold_ratio: f64) -> Vec<ReleasePanel> {
    let n = history.releases.len();
    if n == 0 {
        return Vec::new();
    }
    // series[j] = (release index, ratio to the first release, ms)
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
                .filter_map(|(i, r)| {
                    let ms = r.median_p99_ms[j]?;
                    Some((i, ms / first?, ms))
                })
                .filter(|p| p.1.is_finite())
                .collect()
        })
        .collect();
    let (mut lo, mut hi) = (1.0 / threshold_ratio, threshold_ratio);
    for (_, r, _) in series.iter().flatten() {
        lo = lo.min(*r);
        hi = hi.max(*r);
    }
    let pad = (hi - lo) * 0.08;
    let scale = Scale {
        lo: lo - pad,
        hi: hi + pad,
        n,
    };
    history
        .endpoints
        .iter()
        .zip(&series)
        .map(|((id, name), points)| ReleasePanel {
            name: name.clone(),
            id: id.clone(),
            svg: panel(history, name, id, points, &scale, threshold_ratio),
        })
        .collect()
}

struct Scale {
    lo: f64,
    hi: f64,
    n: usize,
}

impl Scale {
    fn x(&self, i: usize) -> f64 {
        if self.n == 1 {
            LEFT + (W - LEFT - RIGHT) / 2.0
        } else {
            (LEFT + i as f64 / (self.n - 1) as f64 * (W - LEFT - RIGHT)).round()
        }
    }

    fn y(&self, r: f64) -> f64 {
        (TOP + (self.hi - r) / (self.hi - self.lo) * (H - TOP - BOTTOM)).round()
    }
}

fn panel(
    history: &ReleaseHistory,
    name: &str,
    id: &str,
    points: &[(usize, f64, f64)],
    scale: &Scale,
    threshold_ratio: f64,
) -> String {
    let slug_id = format!("rel-{}", crate::render::slug::slug(id));
    let mut s = format!(
        r#"<svg class="chart release-panel" viewBox="0 0 {W} {H}" role="img" aria-labelledby="{slug_id}-t {slug_id}-d" xmlns="http://www.w3.org/2000/svg"><title id="{slug_id}-t">{}: median p99 per release, relative to its first release</title><desc id="{slug_id}-d">{}</desc>"#,
        xml_escape(name),
        xml_escape(&describe(history, points))
    );
    // The threshold band and ×1.00.
    let (band_top, band_bottom) = (scale.y(threshold_ratio), scale.y(1.0 / threshold_ratio));
    let _ = write!(
        s,
        r#"<rect class="r-band" x="{LEFT}" y="{band_top}" width="{}" height="{}"/><path class="r-one" d="M{LEFT} {}H{}"/><text class="r-axis" x="{}" y="{}" text-anchor="end">×1.00</text>"#,
        W - LEFT - RIGHT,
        band_bottom - band_top,
        scale.y(1.0),
        W - RIGHT,
        LEFT - 4.0,
        scale.y(1.0) + 4.0,
    );
    // First and last release names under the axis, never on top of
    // each other.
    let n = history.releases.len();
    for i in [0, n - 1]
        .into_iter()
        .collect::<std::collections::BTreeSet<_>>()
    {
        let anchor = if n == 1 {
            "middle"
        } else if i == 0 {
            "start"
        } else {
            "end"
        };
        let _ = write!(
            s,
            r#"<text class="r-axis" x="{}" y="{}" text-anchor="{anchor}">{}</text>"#,
            scale.x(i),
            H - 8.0,
            xml_escape(&history.releases[i].release)
        );
    }
    if points.len() > 1 {
        let coords: Vec<String> = points
            .iter()
            .map(|(i, r, _)| format!("{},{}", scale.x(*i), scale.y(*r)))
            .collect();
        let _ = write!(
            s,
            r#"<polyline class="r-line" points="{}"/>"#,
            coords.join(" ")
        );
    }
    for (i, r, ms) in points {
        let _ = write!(
            s,
            r#"<circle class="r-dot" cx="{}" cy="{}" r="3.5"><title>{}, {}: {} ms (×{r:.2} of its first release)</title></circle>"#,
            scale.x(*i),
            scale.y(*r),
            xml_escape(name),
            xml_escape(&history.releases[*i].release),
            f::ms(*ms),
        );
    }
    if let Some((i, r, ms)) = points.last() {
        let _ = write!(
            s,
            r#"<text class="r-last" x="{}" y="{}">×{r:.2}</text><text class="r-axis" x="{}" y="{}">{} ms</text>"#,
            scale.x(*i) + 6.0,
            scale.y(*r) + 4.0,
            scale.x(*i) + 6.0,
            scale.y(*r) + 18.0,
            f::ms(*ms)
        );
    }
    s.push_str("</svg>");
    s
}

fn describe(history: &ReleaseHistory, points: &[(usize, f64, f64)]) -> String {
    if points.is_empty() {
        return "Not measured in any release run.".into();
    }
    points
        .iter()
        .map(|(i, r, ms)| {
            format!(
                "{}: {} ms (×{r:.2})",
                history.releases[*i].release,
                f::ms(*ms)
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyse::compare::ReleaseRow;

    fn history() -> ReleaseHistory {
        let t = chrono::DateTime::<chrono::Utc>::UNIX_EPOCH;
        ReleaseHistory {
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
        }
    }

    #[test]
    fn one_panel_per_endpoint_relative_to_its_first_release() {
        let panels = release_multiples(&history(), 1.15);
        assert_eq!(panels.len(), 2);
        let a = &panels[0].svg;
        assert!(
            a.contains("&lt;a&gt;, 1.1: 150 ms (×1.50 of its first release)"),
            "{a}"
        );
        assert!(
            a.contains(">×1.50</text>"),
            "the last value where the line ends"
        );
        assert!(!a.contains("<a>"));
        let b = &panels[1].svg;
        assert!(
            b.contains("b, 1.1: 10.0 ms (×1.00 of its first release)"),
            "{b}"
        );
        assert_eq!(b.matches("<polyline").count(), 0, "b has one point only");
        // A shared scale: ×1.00 sits at the same height in every panel.
        let one = |svg: &str| {
            let at = svg.find(r#"<path class="r-one" d="M"#).unwrap();
            svg[at..at + 60].to_string()
        };
        assert_eq!(one(a), one(b));
        let empty = ReleaseHistory {
            endpoints: vec![],
            releases: vec![],
        };
        assert!(release_multiples(&empty, 1.15).is_empty());
    }
}
