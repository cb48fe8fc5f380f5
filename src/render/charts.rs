//! Charts as SVG strings. The trend chart is drawn with plotters (no
//! system fonts: text is left to the browser); perfdash then adds what
//! plotters has no notion of: a `<title>`/`<desc>` for screen readers and
//! an overlay of linked, titled points so that every run can be hovered
//! (native tooltip, no JavaScript needed) and clicked.

use std::fmt::Write as _;

use plotters::prelude::*;

use super::xml_escape;
use crate::analyse::{EndpointAnalysis, Verdict};
use crate::error::Error;

pub const REGRESSION: RGBColor = RGBColor(0xc6, 0x28, 0x28);
pub const IMPROVEMENT: RGBColor = RGBColor(0x2e, 0x7d, 0x32);
const MEDIAN: RGBColor = RGBColor(0x1f, 0x4e, 0x79);
const ROUND: RGBColor = RGBColor(0x8a, 0x97, 0xa8);
const BASELINE: RGBColor = RGBColor(0x44, 0x44, 0x44);
const THRESHOLD: RGBColor = RGBColor(0xe0, 0x7b, 0x00);

const SECONDS_PER_DAY: f64 = 86_400.0;

/// A point of the overlay: where it is drawn and what it says.
pub struct PointInfo {
    pub href: String,
    pub title: String,
}

/// The endpoint trend chart: every round as a dot, the per-run median
/// p99, the baseline, the baseline × ratio line, and regressions marked.
/// `points[i]` describes `endpoint.points[i]` for the overlay.
pub fn trend_chart(
    endpoint: &EndpointAnalysis,
    points: &[PointInfo],
    id: &str,
) -> Result<String, Error> {
    const W: u32 = 960;
    const H: u32 = 380;
    let pts = &endpoint.points;
    let t0 = pts.first().map(|p| p.started_at.timestamp()).unwrap_or(0);
    let day =
        |p: &crate::analyse::RunPoint| (p.started_at.timestamp() - t0) as f64 / SECONDS_PER_DAY;
    let x_max = pts.last().map(day).unwrap_or(0.0).max(1.0);
    let y_max = pts
        .iter()
        .flat_map(|p| {
            p.round_p99_ms
                .iter()
                .copied()
                .chain(p.threshold_p99_ms(endpoint.threshold_ratio))
        })
        .fold(0.0f64, f64::max)
        .max(1.0)
        * 1.08;
    let first_date = pts.first().map(|p| p.started_at);

    let mut svg = String::new();
    let mut overlay = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (W, H)).into_drawing_area();
        let e = |e: DrawingAreaErrorKind<_>| {
            Error::Internal(format!("drawing the chart for {}: {e:?}", endpoint.id))
        };
        root.fill(&WHITE).map_err(e)?;
        let mut chart = ChartBuilder::on(&root)
            .margin(12)
            .x_label_area_size(42)
            .y_label_area_size(64)
            .build_cartesian_2d(-0.5f64..x_max + 0.5, 0f64..y_max)
            .map_err(e)?;
        let date_label = |x: &f64| match first_date {
            Some(t) => (t + chrono::Duration::seconds((x * SECONDS_PER_DAY) as i64))
                .format("%Y-%m-%d")
                .to_string(),
            None => String::new(),
        };
        chart
            .configure_mesh()
            .x_labels(8)
            .y_labels(8)
            .x_label_formatter(&date_label)
            .y_label_formatter(&|y| format!("{y:.0}"))
            .x_desc("run date (UTC)")
            .y_desc("p99 latency (ms)")
            .max_light_lines(1)
            .light_line_style(RGBColor(0xf0, 0xf0, 0xf0))
            .bold_line_style(RGBColor(0xdd, 0xdd, 0xdd))
            .draw()
            .map_err(e)?;

        chart
            .draw_series(
                pts.iter()
                    .flat_map(|p| p.round_p99_ms.iter().map(move |r| (day(p), *r)))
                    .map(|(x, y)| Circle::new((x, y), 2, ROUND.filled())),
            )
            .map_err(e)?
            .label("round p99")
            .legend(|(x, y)| Circle::new((x + 10, y), 3, ROUND.filled()));

        for segment in contiguous(pts.iter().map(|p| p.baseline_p99_ms.map(|b| (day(p), b)))) {
            chart
                .draw_series(LineSeries::new(segment, BASELINE.stroke_width(2)))
                .map_err(e)?;
        }
        chart
            .draw_series(std::iter::empty::<Circle<(f64, f64), u32>>())
            .map_err(e)?
            .label("baseline (median of accepted runs)")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BASELINE.stroke_width(2)));

        let ratio = endpoint.threshold_ratio;
        for segment in contiguous(
            pts.iter()
                .map(|p| p.threshold_p99_ms(ratio).map(|t| (day(p), t))),
        ) {
            chart
                .draw_series(DashedLineSeries::new(
                    segment,
                    6,
                    4,
                    THRESHOLD.stroke_width(2),
                ))
                .map_err(e)?;
        }
        chart
            .draw_series(std::iter::empty::<Circle<(f64, f64), u32>>())
            .map_err(e)?
            .label(format!("regression line (baseline ×{ratio})"))
            .legend(|(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], THRESHOLD.stroke_width(2))
            });

        chart
            .draw_series(LineSeries::new(
                pts.iter().map(|p| (day(p), p.median_p99_ms)),
                MEDIAN.stroke_width(2),
            ))
            .map_err(e)?
            .label("run median p99")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], MEDIAN.stroke_width(2)));
        chart
            .draw_series(pts.iter().map(|p| {
                let style = match p.verdict {
                    Verdict::Regression => REGRESSION.filled(),
                    Verdict::Improvement => IMPROVEMENT.filled(),
                    Verdict::Insufficient => WHITE.filled(),
                    _ => MEDIAN.filled(),
                };
                let r = if p.verdict == Verdict::Regression {
                    5
                } else {
                    3
                };
                Circle::new((day(p), p.median_p99_ms), r, style)
            }))
            .map_err(e)?;
        chart
            .draw_series(std::iter::empty::<Circle<(f64, f64), u32>>())
            .map_err(e)?
            .label("regression")
            .legend(|(x, y)| Circle::new((x + 10, y), 5, REGRESSION.filled()));

        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(0xcc, 0xcc, 0xcc))
            .draw()
            .map_err(e)?;

        for (p, info) in pts.iter().zip(points) {
            let (cx, cy) = chart.backend_coord(&(day(p), p.median_p99_ms));
            let _ = write!(
                overlay,
                r#"<a href="{}"><circle class="pd-hit" cx="{cx}" cy="{cy}" r="8" data-verdict="{}"><title>{}</title></circle></a>"#,
                xml_escape(&info.href),
                p.verdict.as_str(),
                xml_escape(&info.title),
            );
        }
        root.present().map_err(e)?;
    }
    let title = format!("{}: p99 latency per run", endpoint.name);
    let desc = format!(
        "Each grey dot is one round's p99; the blue line joins each run's median of rounds; the grey line is the baseline \
         and the dashed orange line the regression threshold (baseline ×{}). {} runs, {} regressions.",
        endpoint.threshold_ratio,
        pts.len(),
        pts.iter()
            .filter(|p| p.verdict == Verdict::Regression)
            .count()
    );
    Ok(finish_svg(
        svg,
        id,
        &title,
        &desc,
        &format!(r#"<g class="pd-overlay">{overlay}</g>"#),
    ))
}

/// Splits a series with gaps into drawable runs of consecutive points.
fn contiguous(items: impl Iterator<Item = Option<(f64, f64)>>) -> Vec<Vec<(f64, f64)>> {
    let mut out: Vec<Vec<(f64, f64)>> = vec![Vec::new()];
    for item in items {
        match item {
            Some(p) => out.last_mut().expect("never empty").push(p),
            None if !out.last().expect("never empty").is_empty() => out.push(Vec::new()),
            None => {}
        }
    }
    out.retain(|s| !s.is_empty());
    out
}

/// Makes a plotters SVG responsive and accessible: drops the fixed size
/// (the viewBox stays), adds `role="img"`, a `<title>` and a `<desc>`, and
/// appends `extra` markup at the end.
fn finish_svg(svg: String, id: &str, title: &str, desc: &str, extra: &str) -> String {
    let Some(open_end) = svg.find('>') else {
        return svg;
    };
    let (open, rest) = svg.split_at(open_end);
    let open = strip_attr(&strip_attr(open, "width"), "height");
    let body = rest[1..].trim_end();
    let body = body.strip_suffix("</svg>").unwrap_or(body);
    format!(
        r#"{open} class="chart" role="img" aria-labelledby="{id}-title {id}-desc"><title id="{id}-title">{}</title><desc id="{id}-desc">{}</desc>{body}{extra}</svg>"#,
        xml_escape(title),
        xml_escape(desc),
    )
}

fn strip_attr(tag: &str, name: &str) -> String {
    let needle = format!(" {name}=\"");
    match tag.find(&needle) {
        Some(start) => {
            let value_start = start + needle.len();
            match tag[value_start..].find('"') {
                Some(len) => format!("{}{}", &tag[..start], &tag[value_start + len + 1..]),
                None => tag.to_string(),
            }
        }
        None => tag.to_string(),
    }
}

/// A tiny inline trend line of run medians, the last point coloured by
/// its verdict. Hand-written: a polyline is all it needs, and it keeps
/// the overview light.
pub fn sparkline(endpoint: &EndpointAnalysis, max_points: usize) -> String {
    const W: f64 = 120.0;
    const H: f64 = 28.0;
    let pts = &endpoint.points[endpoint.points.len().saturating_sub(max_points)..];
    let (lo, hi) = pts
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| {
            (lo.min(p.median_p99_ms), hi.max(p.median_p99_ms))
        });
    let span = if hi > lo { hi - lo } else { 1.0 };
    let step = if pts.len() > 1 {
        (W - 6.0) / (pts.len() - 1) as f64
    } else {
        0.0
    };
    let coord = |i: usize, v: f64| (3.0 + i as f64 * step, H - 3.0 - (v - lo) / span * (H - 6.0));
    let mut line = String::new();
    for (i, p) in pts.iter().enumerate() {
        let (x, y) = coord(i, p.median_p99_ms);
        let _ = write!(line, "{}{x:.1},{y:.1}", if i == 0 { "" } else { " " });
    }
    let mut marks = String::new();
    for (i, p) in pts.iter().enumerate() {
        if p.verdict == Verdict::Regression || i + 1 == pts.len() {
            let (x, y) = coord(i, p.median_p99_ms);
            let _ = write!(
                marks,
                r#"<circle cx="{x:.1}" cy="{y:.1}" r="2.5" class="v-{}"/>"#,
                p.verdict.as_str()
            );
        }
    }
    format!(
        r#"<svg class="spark" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img"><title>{}: last {} run medians, {} to {} ms</title><polyline points="{line}"/>{marks}</svg>"#,
        xml_escape(&endpoint.name),
        pts.len(),
        super::format::ms(lo),
        super::format::ms(hi),
    )
}
