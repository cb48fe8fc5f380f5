//! Charts as SVG strings. The trend chart is drawn with plotters (no
//! system fonts: text is left to the browser); perfdash then adds what
//! plotters has no notion of: a `<title>`/`<desc>` for screen readers and
//! an overlay of linked, titled points so that every run can be hovered
//! (native tooltip, no JavaScript needed) and clicked.

use std::fmt::Write as _;

use plotters::prelude::*;

use super::display::{DisplayState, display_state};
use super::xml_escape;
use crate::analyse::changepoint::{self, LevelShift};
use crate::analyse::{EndpointAnalysis, EnvironmentChange, Verdict};
use crate::error::Error;

pub const REGRESSION: RGBColor = RGBColor(0xc6, 0x28, 0x28);
pub const IMPROVEMENT: RGBColor = RGBColor(0x2e, 0x7d, 0x32);
const MEDIAN: RGBColor = RGBColor(0x1f, 0x4e, 0x79);
const ROUND: RGBColor = RGBColor(0x8a, 0x97, 0xa8);
const BASELINE: RGBColor = RGBColor(0x44, 0x44, 0x44);
const THRESHOLD: RGBColor = RGBColor(0xe0, 0x7b, 0x00);
/// Runs of a change triaged `accepted`: neutral, not alarming.
pub const ACCEPTED: RGBColor = RGBColor(0x7e, 0x6f, 0xa8);
/// Change points (level shifts): solid purple marker and level segments.
pub const CHANGE_POINT: RGBColor = RGBColor(0x6a, 0x1b, 0x9a);
/// Environment changes: dotted teal marker, unlike every other line.
pub const ENVIRONMENT: RGBColor = RGBColor(0x00, 0x7c, 0x89);

const SECONDS_PER_DAY: f64 = 86_400.0;
/// Where the plot starts: above it are the caption and the legend row.
const LEGEND_TOP: u32 = 62;
/// The second legend row (accepted change, change point, environment
/// change) when the chart has any of them.
const LEGEND_ROW: u32 = 20;

/// What the second legend row shows: only what the chart draws.
#[derive(Debug, Clone, Copy, Default)]
struct ExtraLegend {
    accepted: bool,
    change_points: bool,
    environment: bool,
}

impl ExtraLegend {
    fn any(self) -> bool {
        self.accepted || self.change_points || self.environment
    }
}

/// The trend chart's legend as rows of SVG under the caption, so it never
/// covers data (plotters only offers legends inside the plot).
fn trend_legend(name: &str, ratio: f64, width: u32, extra: ExtraLegend) -> String {
    let y = 46;
    let items: [(&str, String); 6] = [
        (
            "round",
            format!(r##"<circle r="2.5" fill="{}"/>"##, hex(ROUND)),
        ),
        (
            "run median p99",
            format!(
                r##"<path d="M-9 0H9" stroke="{0}" stroke-width="2"/><circle r="3" fill="{0}"/>"##,
                hex(MEDIAN)
            ),
        ),
        (
            "baseline",
            format!(
                r##"<path d="M-9 0H9" stroke="{}" stroke-width="2"/>"##,
                hex(BASELINE)
            ),
        ),
        (
            "regression line",
            format!(
                r##"<path d="M-9 0H9" stroke="{}" stroke-width="2" stroke-dasharray="6 4"/>"##,
                hex(THRESHOLD)
            ),
        ),
        (
            "regression",
            format!(r##"<circle r="5" fill="{}"/>"##, hex(REGRESSION)),
        ),
        (
            "improvement",
            format!(r##"<circle r="4" fill="{}"/>"##, hex(IMPROVEMENT)),
        ),
    ];
    let mut out = format!(
        r##"<text class="pd-caption" x="{}" y="22" text-anchor="middle" font-family="sans-serif" font-size="17" font-weight="600" fill="#222">{}: p99 latency per run (ms)</text><g class="pd-legend" font-family="sans-serif" font-size="13" fill="#333">"##,
        width / 2,
        xml_escape(name)
    );
    let mut x = 90usize;
    let item = |out: &mut String, x: &mut usize, y: u32, label: &str, mark: &str| {
        let _ = write!(
            out,
            r#"<g transform="translate({x},{y})">{mark}<text x="14" y="4.5">{}</text></g>"#,
            xml_escape(label)
        );
        *x += 14 + label.chars().count() * 8 + 24;
    };
    for (label, mark) in items {
        // Short words: the figure caption and <desc> explain them.
        let label = match label {
            "round" => "round p99".to_string(),
            "regression line" => format!("regression line (×{ratio})"),
            other => other.to_string(),
        };
        item(&mut out, &mut x, y, &label, &mark);
    }
    let mut x = 90usize;
    let y2 = y + LEGEND_ROW;
    if extra.accepted {
        let mark = format!(r##"<circle r="4.5" fill="{}"/>"##, hex(ACCEPTED));
        item(&mut out, &mut x, y2, "accepted change (triaged)", &mark);
    }
    if extra.change_points {
        let mark = format!(
            r##"<path d="M0 -7V7" stroke="{0}" stroke-width="2"/><path d="M-9 3H0M0 -3H9" stroke="{0}" stroke-width="3" stroke-opacity="0.6"/>"##,
            hex(CHANGE_POINT)
        );
        item(
            &mut out,
            &mut x,
            y2,
            "change point: level before → after",
            &mark,
        );
    }
    if extra.environment {
        let mark = format!(
            r##"<path d="M0 -7V7" stroke="{}" stroke-width="2" stroke-dasharray="2 2"/>"##,
            hex(ENVIRONMENT)
        );
        item(&mut out, &mut x, y2, "environment change", &mark);
    }
    out.push_str("</g>");
    out
}

fn hex(c: RGBColor) -> String {
    format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
}

/// A point of the overlay: where it is drawn and what it says.
pub struct PointInfo {
    pub href: String,
    pub title: String,
}

/// The endpoint trend chart: every round as a dot, the per-run median
/// p99, the baseline, the baseline × ratio line, and regressions marked.
/// `points[i]` describes `endpoint.points[i]` for the overlay.
///
/// On top: each change point as a solid purple marker at its onset run,
/// with the level before and after as horizontal segments and a label
/// (`+31% from 2026-09-14`); each environment change in the chart's time
/// span as a dotted teal marker labelled with the keys that changed.
pub fn trend_chart(
    endpoint: &EndpointAnalysis,
    points: &[PointInfo],
    environment: &[EnvironmentChange],
    id: &str,
) -> Result<String, Error> {
    const W: u32 = 960;
    let pts = &endpoint.points;
    let span = (
        pts.first().map(|p| p.started_at),
        pts.last().map(|p| p.started_at),
    );
    let environment: Vec<&EnvironmentChange> = match span {
        (Some(first), Some(last)) => environment
            .iter()
            .filter(|c| first <= c.started_at && c.started_at <= last)
            .collect(),
        _ => Vec::new(),
    };
    let extra = ExtraLegend {
        accepted: pts
            .iter()
            .any(|p| display_state(p) == DisplayState::Accepted),
        change_points: !endpoint.change_points.is_empty(),
        environment: !environment.is_empty(),
    };
    let legend_top = LEGEND_TOP + if extra.any() { LEGEND_ROW } else { 0 };
    let h: u32 = 338 + legend_top;
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
        .filter(|v| v.is_finite())
        .fold(0.0f64, f64::max)
        .max(1.0)
        * 1.08;
    // An infinite axis end sends plotters' tick search into an endless
    // loop (found with a p99 of 1.7e308); keep the axis finite whatever
    // the data says.
    let y_max = y_max.min(f64::MAX / 4.0);
    let first_date = pts.first().map(|p| p.started_at);

    let mut svg = String::new();
    let mut overlay = String::new();
    let mut marks = String::new();
    let legend;
    {
        let root = SVGBackend::with_string(&mut svg, (W, h)).into_drawing_area();
        let e = |e: DrawingAreaErrorKind<_>| {
            Error::Internal(format!("drawing the chart for {}: {e:?}", endpoint.id))
        };
        root.fill(&WHITE).map_err(e)?;
        let mut chart = ChartBuilder::on(&root)
            .margin(12)
            // Room for the caption and the legend row drawn above the
            // plot by `trend_legend` (plotters would draw it over data).
            .margin_top(legend_top)
            .x_label_area_size(46)
            .y_label_area_size(70)
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
            .label_style(("sans-serif", 15))
            .axis_desc_style(("sans-serif", 15))
            .max_light_lines(1)
            .light_line_style(RGBColor(0xf0, 0xf0, 0xf0))
            .bold_line_style(RGBColor(0xdd, 0xdd, 0xdd))
            .draw()
            .map_err(e)?;

        // The baseline is a plain polyline; plotters draws it compactly.
        for segment in contiguous(pts.iter().map(|p| p.baseline_p99_ms.map(|b| (day(p), b)))) {
            chart
                .draw_series(LineSeries::new(segment, BASELINE.stroke_width(2)))
                .map_err(e)?;
        }
        // The rest is written by hand: plotters writes one ~95-byte
        // <circle> per dot, and three years of five rounds a run would
        // weigh hundreds of kilobytes. A dot here is a zero-length path
        // segment with a round cap (~12 bytes), in the same order plotters
        // would draw: rounds, regression line, run medians, verdict marks.
        let px = |x: f64, y: f64| chart.backend_coord(&(x, y));
        let dots = |coords: &mut dyn Iterator<Item = (i32, i32)>| {
            let mut d = String::new();
            for (x, y) in coords {
                let _ = write!(d, "M{x} {y}h0");
            }
            d
        };
        let polyline = |points: &[(f64, f64)]| {
            points
                .iter()
                .map(|(x, y)| {
                    let (x, y) = px(*x, *y);
                    format!("{x},{y}")
                })
                .collect::<Vec<_>>()
                .join(" ")
        };
        let rounds = dots(
            &mut pts
                .iter()
                .flat_map(|p| p.round_p99_ms.iter().map(move |r| px(day(p), *r))),
        );
        let _ = write!(
            marks,
            r#"<path d="{rounds}" stroke="{}" stroke-width="4" stroke-linecap="round" fill="none"/>"#,
            hex(ROUND)
        );
        let ratio = endpoint.threshold_ratio;
        for segment in contiguous(
            pts.iter()
                .map(|p| p.threshold_p99_ms(ratio).map(|t| (day(p), t))),
        ) {
            let _ = write!(
                marks,
                r#"<polyline points="{}" stroke="{}" stroke-width="2" stroke-dasharray="6 4" fill="none"/>"#,
                polyline(&segment),
                hex(THRESHOLD)
            );
        }
        let medians: Vec<(f64, f64)> = pts.iter().map(|p| (day(p), p.median_p99_ms)).collect();
        let _ = write!(
            marks,
            r#"<polyline points="{}" stroke="{}" stroke-width="2" fill="none"/>"#,
            polyline(&medians),
            hex(MEDIAN)
        );
        for (states, colour, radius) in [
            (&[DisplayState::Ok, DisplayState::NoBaseline][..], MEDIAN, 3),
            (&[DisplayState::Improvement][..], IMPROVEMENT, 4),
            (&[DisplayState::Accepted][..], ACCEPTED, 4),
            (
                &[DisplayState::Regression, DisplayState::Failed][..],
                REGRESSION,
                5,
            ),
        ] {
            let d = dots(
                &mut pts
                    .iter()
                    .filter(|p| states.contains(&display_state(p)))
                    .map(|p| px(day(p), p.median_p99_ms)),
            );
            if !d.is_empty() {
                let _ = write!(
                    marks,
                    r#"<path d="{d}" stroke="{}" stroke-width="{}" stroke-linecap="round" fill="none"/>"#,
                    hex(colour),
                    radius * 2
                );
            }
        }
        // Hollow: too few rounds to judge.
        for p in pts.iter().filter(|p| p.verdict == Verdict::Insufficient) {
            let (x, y) = px(day(p), p.median_p99_ms);
            let _ = write!(
                marks,
                r##"<circle cx="{x}" cy="{y}" r="4" fill="#fff" stroke="{}" stroke-width="2"/>"##,
                hex(MEDIAN)
            );
        }
        let (_, plot_y) = chart.plotting_area().get_pixel_range();
        let plot = PlotBox {
            top: plot_y.start,
            bottom: plot_y.end,
            right: W as i32,
        };
        let x_of = |p: &crate::analyse::RunPoint| px(day(p), 0.0).0;
        let y_of = |v: f64| px(0.0, v.min(y_max)).1;
        marks.push_str(&change_point_marks(endpoint, &plot, &x_of, &y_of));
        let x_at = |t: chrono::DateTime<chrono::Utc>| {
            px((t.timestamp() - t0) as f64 / SECONDS_PER_DAY, 0.0).0
        };
        marks.push_str(&environment_marks(&environment, &plot, &x_at));
        legend = trend_legend(&endpoint.name, ratio, W, extra);
        for (p, info) in pts.iter().zip(points) {
            let (cx, cy) = chart.backend_coord(&(day(p), p.median_p99_ms));
            let _ = write!(
                overlay,
                r#"<a href="{}"><circle class="pd-hit" cx="{cx}" cy="{cy}" r="8" data-verdict="{}" data-tip-target><title>{}</title></circle></a>"#,
                xml_escape(&info.href),
                p.verdict.as_str(),
                xml_escape(&info.title),
            );
        }
        root.present().map_err(e)?;
    }
    let title = format!("{}: p99 latency per run", endpoint.name);
    let mut desc = format!(
        "Each grey dot is one round's p99; the blue line joins each run's median of rounds; the grey line is the baseline \
         and the dashed orange line the regression threshold (baseline ×{}). {} runs, {} regressions.",
        endpoint.threshold_ratio,
        pts.len(),
        pts.iter()
            .filter(|p| display_state(p) == DisplayState::Regression)
            .count()
    );
    let accepted = pts
        .iter()
        .filter(|p| display_state(p) == DisplayState::Accepted)
        .count();
    if accepted > 0 {
        let _ = write!(
            desc,
            " {accepted} runs of accepted changes (triaged as intended) in purple-grey."
        );
    }
    for cp in &endpoint.change_points {
        let _ = write!(desc, " Change point: {}.", change_point_words(cp));
    }
    for c in &environment {
        let _ = write!(desc, " Environment change: {}.", environment_words(c));
    }
    Ok(finish_svg(
        svg,
        id,
        &title,
        &desc,
        &format!(r#"{marks}{legend}<g class="pd-overlay">{overlay}</g>"#),
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

/// The plot area in SVG pixels, for markers spanning its height.
struct PlotBox {
    top: i32,
    bottom: i32,
    /// The SVG's right edge: labels near it are anchored at their end.
    right: i32,
}

/// Picks a row for a label at `x` so that labels closer than `gap` pixels
/// do not overlap: the first row whose last label is far enough left
/// (row 0 again when all are taken).
fn label_row(rows: &mut Vec<i32>, x: i32, gap: i32, max_rows: usize) -> usize {
    if let Some(r) = rows.iter().position(|last| x - *last >= gap) {
        rows[r] = x;
        return r;
    }
    if rows.len() < max_rows {
        rows.push(x);
        return rows.len() - 1;
    }
    rows[0] = x;
    0
}

/// `+31% from 2026-09-14 (1.2 → 1.6 ms)`.
fn change_point_words(cp: &LevelShift) -> String {
    format!(
        "{} from {} ({} → {} ms, run {}, {})",
        super::format::signed_percent(cp.change),
        super::format::date(cp.started_at),
        super::format::ms(cp.level_before_ms),
        super::format::ms(cp.level_after_ms),
        cp.run,
        cp.direction
    )
}

/// `run X: host perf-01 → perf-03`.
fn environment_words(c: &EnvironmentChange) -> String {
    format!(
        "{} at run {}: {}",
        super::format::date(c.started_at),
        c.run,
        super::format::setting_changes(&c.changes)
    )
}

/// Change-point markers: a solid vertical line at the onset run, the level
/// before (from the previous change point or the start of its comparable
/// series) and after (to the next one or the series' end) as horizontal
/// segments, and a label at the top of the plot.
fn change_point_marks(
    endpoint: &EndpointAnalysis,
    plot: &PlotBox,
    x_of: &dyn Fn(&crate::analyse::RunPoint) -> i32,
    y_of: &dyn Fn(f64) -> i32,
) -> String {
    let pts = &endpoint.points;
    let series = changepoint::comparable_series(pts);
    let onsets: Vec<usize> = endpoint
        .change_points
        .iter()
        .map(|c| c.point_index)
        .collect();
    let colour = hex(CHANGE_POINT);
    let mut out = String::new();
    let mut rows = Vec::new();
    for cp in &endpoint.change_points {
        let i = cp.point_index;
        let Some(onset) = pts.get(i) else {
            continue;
        };
        let (start, end) = series
            .iter()
            .find(|s| s.contains(&i))
            .and_then(|s| Some((*s.first()?, *s.last()?)))
            .unwrap_or((0, pts.len() - 1));
        let from = onsets
            .iter()
            .copied()
            .filter(|&j| start <= j && j < i)
            .max()
            .unwrap_or(start);
        let to = onsets
            .iter()
            .copied()
            .filter(|&j| i < j && j <= end)
            .min()
            .unwrap_or(end);
        let x = x_of(onset);
        let (y_before, y_after) = (y_of(cp.level_before_ms), y_of(cp.level_after_ms));
        let words = change_point_words(cp);
        let label = format!(
            "{} from {}",
            super::format::signed_percent(cp.change),
            super::format::date(cp.started_at)
        );
        let row = label_row(&mut rows, x, 150, 3);
        let ly = plot.top + 14 + 16 * row as i32;
        let (lx, anchor) = if x + 150 > plot.right {
            (x - 5, "end")
        } else {
            (x + 5, "start")
        };
        let _ = write!(
            out,
            r##"<g class="pd-changepoint" data-run="{run}" data-x="{x}" data-tip-target><title>Change point: {title}</title><path d="M{x0} {y_before}H{x}M{x} {y_after}H{x1}" stroke="{colour}" stroke-width="3" stroke-opacity="0.6" fill="none"/><path d="M{x} {top}V{bottom}" stroke="{colour}" stroke-width="2"/><path d="M{x} {top}V{bottom}" stroke="transparent" stroke-width="10"/><text x="{lx}" y="{ly}" text-anchor="{anchor}" font-family="sans-serif" font-size="13" font-weight="600" fill="{colour}">{label}</text></g>"##,
            run = xml_escape(&onset.run),
            title = xml_escape(&words),
            x0 = x_of(&pts[from]),
            x1 = x_of(&pts[to]),
            top = plot.top,
            bottom = plot.bottom,
            label = xml_escape(&label),
        );
    }
    out
}

/// Environment-change markers: a dotted vertical line at the run whose
/// `[environment]` changed, labelled at the bottom of the plot with the
/// keys that changed (the full old → new values are in its title).
fn environment_marks(
    changes: &[&EnvironmentChange],
    plot: &PlotBox,
    x_at: &dyn Fn(chrono::DateTime<chrono::Utc>) -> i32,
) -> String {
    let colour = hex(ENVIRONMENT);
    let mut out = String::new();
    let mut rows = Vec::new();
    for c in changes {
        let x = x_at(c.started_at);
        let keys: Vec<&str> = c.changes.iter().map(|k| k.key.as_str()).collect();
        let label = ellipsis(&format!("env: {}", keys.join(", ")), 28);
        let row = label_row(&mut rows, x, 8 * label.chars().count() as i32 + 10, 3);
        let ly = plot.bottom - 6 - 16 * row as i32;
        let (lx, anchor) = if x + 8 * label.chars().count() as i32 + 10 > plot.right {
            (x - 4, "end")
        } else {
            (x + 4, "start")
        };
        let _ = write!(
            out,
            r##"<g class="pd-envchange" data-run="{run}" data-x="{x}" data-tip-target><title>Environment change: {title}</title><path d="M{x} {top}V{bottom}" stroke="{colour}" stroke-width="2" stroke-dasharray="2 3"/><path d="M{x} {top}V{bottom}" stroke="transparent" stroke-width="10"/><text x="{lx}" y="{ly}" text-anchor="{anchor}" font-family="sans-serif" font-size="12" fill="{colour}">{label}</text></g>"##,
            run = xml_escape(&c.run),
            title = xml_escape(&environment_words(c)),
            top = plot.top,
            bottom = plot.bottom,
            label = xml_escape(&label),
        );
    }
    out
}

/// Makes a plotters SVG responsive and accessible: drops the fixed size
/// (the viewBox stays), adds `role="img"`, a `<title>` and a `<desc>`, and
/// appends `extra` markup at the end.
pub(super) fn finish_svg(svg: String, id: &str, title: &str, desc: &str, extra: &str) -> String {
    let Some(open_end) = svg.find('>') else {
        return svg;
    };
    let (open, rest) = svg.split_at(open_end);
    let open = strip_attr(&strip_attr(open, "width"), "height");
    let body = rest[1..].trim_end();
    let body = body.strip_suffix("</svg>").unwrap_or(body);
    format!(
        r#"{open} class="chart" role="img" aria-labelledby="{id}-title {id}-desc" data-tip-source><title id="{id}-title">{}</title><desc id="{id}-desc">{}</desc>{body}{extra}</svg>"#,
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
        let state = display_state(p);
        if matches!(state, DisplayState::Regression | DisplayState::Accepted) || i + 1 == pts.len()
        {
            let (x, y) = coord(i, p.median_p99_ms);
            let _ = write!(
                marks,
                r#"<circle cx="{x:.1}" cy="{y:.1}" r="2.5" class="v-{}"/>"#,
                state.key()
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

/// The heatmap legend swatches: every display state (worst first, see
/// [`DisplayState::severity`]), then "no run".
fn heatmap_legend() -> Vec<(&'static str, &'static str)> {
    DisplayState::ALL
        .iter()
        .map(|s| (s.key(), s.words()))
        .chain(std::iter::once(("none", "no run")))
        .collect()
}

/// One heatmap row: an endpoint, where its page is, and its history.
pub struct HeatmapRow<'a> {
    pub endpoint: &'a EndpointAnalysis,
    pub href: String,
}

/// The Monday (UTC) that starts the ISO week of `t`.
fn week_start(t: chrono::DateTime<chrono::Utc>) -> chrono::NaiveDate {
    use chrono::Datelike;
    let d = t.date_naive();
    d - chrono::Duration::days(i64::from(d.weekday().num_days_from_monday()))
}

/// The calendar heatmap of the overview: one row per endpoint, one column
/// per ISO week (the last `max_weeks` weeks up to the latest run), each
/// cell coloured by the worst verdict of that endpoint's runs that week,
/// with a `<title>` saying what the cell is made of. Hand-written SVG
/// (plotters has no notion of category grids) with classes for colours,
/// so the site's light and dark themes both apply. Returns the SVG and
/// how many weeks of history did not fit (shown on the endpoint pages).
pub fn heatmap(rows: &[HeatmapRow], max_weeks: usize, id: &str) -> (String, usize) {
    use chrono::Datelike;
    use std::collections::BTreeMap;
    const CELL: usize = 16;
    const GAP: usize = 2;
    const LABEL_W: usize = 240;
    const TOP: usize = 36;

    let times = rows
        .iter()
        .flat_map(|r| r.endpoint.points.iter().map(|p| p.started_at));
    let (Some(first), Some(last)) = (times.clone().min(), times.max()) else {
        return (String::new(), 0);
    };
    let last_week = week_start(last);
    let all_weeks = ((last_week - week_start(first)).num_days() / 7 + 1) as usize;
    let shown = all_weeks.min(max_weeks.max(1));
    let first_week = last_week - chrono::Duration::weeks(shown as i64 - 1);
    let weeks: Vec<chrono::NaiveDate> = (0..shown)
        .map(|i| first_week + chrono::Duration::weeks(i as i64))
        .collect();

    // Wide enough for the grid, the axis name and the legend row.
    let legend = heatmap_legend();
    let legend_w: usize = legend
        .iter()
        .map(|(_, words)| CELL + 5 + words.len() * 7 + 16)
        .sum();
    let width = (LABEL_W + shown * (CELL + GAP)).max(LABEL_W + legend_w) + 8;
    let grid_h = rows.len() * (CELL + GAP);
    let legend_y = TOP + grid_h + 26;
    let height = legend_y + 22;
    let mut body = String::new();

    // Month labels over the first week of each month, and the axis name.
    let _ = write!(
        body,
        r#"<text x="{LABEL_W}" y="11" class="hm-axis">ISO weeks (UTC, Monday start) →</text>"#
    );
    let month_of = |w: &chrono::NaiveDate| (w.year(), w.month());
    let mut last_month = None;
    for (i, w) in weeks.iter().enumerate() {
        let month = month_of(w);
        if last_month != Some(month) {
            // The first column's month is labelled only when its label
            // does not run into the next month's.
            let crowded = i == 0 && weeks.iter().take(4).any(|n| month_of(n) != month);
            if !crowded {
                let _ = write!(
                    body,
                    r#"<text x="{}" y="{}" class="hm-month">{}</text>"#,
                    LABEL_W + i * (CELL + GAP),
                    TOP - 6,
                    w.format(if month.1 == 1 || last_month.is_none() {
                        "%b %Y"
                    } else {
                        "%b"
                    })
                );
            }
            last_month = Some(month);
        }
    }

    for (r, row) in rows.iter().enumerate() {
        let e = row.endpoint;
        let y = TOP + r * (CELL + GAP);
        let _ = write!(
            body,
            r#"<a href="{}"><text x="{}" y="{}" class="hm-label" text-anchor="end">{}{}</text></a>"#,
            xml_escape(&row.href),
            LABEL_W - 8,
            y + CELL - 3,
            xml_escape(&ellipsis(&e.name, 34)),
            if e.name.chars().count() > 34 {
                format!("<title>{}</title>", xml_escape(&e.name))
            } else {
                String::new()
            },
        );
        let mut by_week: BTreeMap<chrono::NaiveDate, Vec<DisplayState>> = BTreeMap::new();
        for p in &e.points {
            let w = week_start(p.started_at);
            if w >= first_week {
                by_week.entry(w).or_default().push(display_state(p));
            }
        }
        for (i, w) in weeks.iter().enumerate() {
            let x = LABEL_W + i * (CELL + GAP);
            let iso = w.iso_week();
            let head = format!(
                "{} · {}-W{:02} (week of {})",
                e.name,
                iso.year(),
                iso.week(),
                w.format("%Y-%m-%d")
            );
            let (class, tip) = match by_week.get(w) {
                None => ("none".to_string(), format!("{head}\nNo run this week")),
                Some(vs) => {
                    let worst = vs
                        .iter()
                        .copied()
                        .min()
                        .expect("a week in the map has a run");
                    let mut counts: BTreeMap<DisplayState, usize> = BTreeMap::new();
                    for v in vs {
                        *counts.entry(*v).or_insert(0) += 1;
                    }
                    let detail: Vec<String> = counts
                        .iter()
                        .map(|(v, n)| format!("{n} {}", v.key()))
                        .collect();
                    (
                        worst.key().to_string(),
                        format!(
                            "{head}\nWorst: {}\nRuns: {} ({})",
                            worst.key(),
                            vs.len(),
                            detail.join(", ")
                        ),
                    )
                }
            };
            let _ = write!(
                body,
                r#"<rect x="{x}" y="{y}" width="{CELL}" height="{CELL}" class="h-{class}" data-tip-target><title>{}</title></rect>"#,
                xml_escape(&tip)
            );
        }
    }

    // Legend.
    let mut x = LABEL_W;
    let _ = write!(
        body,
        r#"<text x="{}" y="{}" class="hm-axis" text-anchor="end">worst verdict of the week:</text>"#,
        LABEL_W - 8,
        legend_y + 12
    );
    for (key, words) in &legend {
        let _ = write!(
            body,
            r#"<rect x="{x}" y="{legend_y}" width="{CELL}" height="{CELL}" class="h-{key}"/><text x="{}" y="{}" class="hm-legend">{words}</text>"#,
            x + CELL + 5,
            legend_y + 12
        );
        x += CELL + 5 + words.len() * 7 + 16;
    }

    let counted: Vec<usize> = rows
        .iter()
        .map(|r| {
            r.endpoint
                .points
                .iter()
                .filter(|p| week_start(p.started_at) >= first_week)
                .filter(|p| display_state(p) == DisplayState::Regression)
                .count()
        })
        .collect();
    let title = format!(
        "Worst verdict per endpoint and week, {} to {}",
        first_week.format("%Y-%m-%d"),
        (last_week + chrono::Duration::days(6)).format("%Y-%m-%d")
    );
    let desc = format!(
        "{} endpoints by {} ISO weeks. Each cell is coloured by the worst verdict of that endpoint's runs in that week \
         (regression, insufficient rounds, no baseline yet, accepted change, ok, improvement), or grey when there was no run. \
         {} regressed runs in these weeks (accepted changes not counted).",
        rows.len(),
        shown,
        counted.iter().sum::<usize>()
    );
    let svg = format!(
        r#"<svg class="heatmap" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" aria-labelledby="{id}-title {id}-desc" data-tip-source><title id="{id}-title">{}</title><desc id="{id}-desc">{}</desc>{body}</svg>"#,
        xml_escape(&title),
        xml_escape(&desc),
    );
    (svg, all_weeks - shown)
}

/// Shortens a label to `max` characters with an ellipsis.
fn ellipsis(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut out: String = s.chars().take(max - 1).collect();
        out.push('…');
        out
    }
}

#[cfg(test)]
mod tests {
    use chrono::Duration;

    use super::*;
    use crate::analyse::analyse;
    use crate::analyse::comparability::SettingChange;
    use crate::model::{Archive, Label, TriageLabel};
    use crate::test_support;

    /// One endpoint `e` with these round p99s (runs from
    /// `test_support`); `accepted` labels the alarm on that run `accepted`.
    fn archive(runs: &[Vec<f64>], accepted: Option<usize>) -> Archive {
        let mut archive = test_support::archive_of(&[("e", runs.to_vec())]);
        archive.triage = accepted
            .map(|i| TriageLabel {
                run: test_support::run_id(i),
                endpoint: "e".into(),
                label: Label::Accepted,
                note: None,
                author: "t".into(),
                date: chrono::NaiveDate::from_ymd_opt(2026, 3, 1).unwrap(),
                source: "triage/t.toml:1".into(),
            })
            .into_iter()
            .collect();
        archive
    }

    /// 20 runs near 100 ms, then 20 near 150 ms (a +50% step at run 20).
    fn step_series() -> Vec<Vec<f64>> {
        (0..40)
            .map(|i| {
                let level = if i < 20 { 100.0 } else { 150.0 };
                let wobble = [0.0, 1.0, -1.0, 2.0, -2.0][i % 5];
                (0..5).map(|r| level + wobble + r as f64 * 0.5).collect()
            })
            .collect()
    }

    fn infos(e: &EndpointAnalysis) -> Vec<PointInfo> {
        e.points
            .iter()
            .map(|p| PointInfo {
                href: format!("{}.html", p.run),
                title: format!("Run {}", p.run),
            })
            .collect()
    }

    /// The `cx` of the overlay point of `run`.
    fn point_x(svg: &str, run: &str) -> i32 {
        let at = svg
            .find(&format!(r#"<a href="{run}.html">"#))
            .unwrap_or_else(|| panic!("{run} in the overlay"));
        let rest = &svg[at..];
        let cx = &rest[rest.find("cx=\"").unwrap() + 4..];
        cx[..cx.find('"').unwrap()].parse().unwrap()
    }

    fn attr<'a>(tag: &'a str, name: &str) -> &'a str {
        let needle = format!("{name}=\"");
        let v = &tag[tag.find(&needle).unwrap() + needle.len()..];
        &v[..v.find('"').unwrap()]
    }

    #[test]
    fn change_point_and_environment_markers_sit_at_their_runs() {
        let analysis = analyse(&archive(&step_series(), None), vec![]);
        let e = &analysis.endpoints[0];
        assert_eq!(e.change_points.len(), 1, "{:?}", e.change_points);
        let cp = &e.change_points[0];
        assert_eq!((cp.run.as_str(), cp.point_index), ("run-020", 20));

        let env = EnvironmentChange {
            run: "run-007".into(),
            started_at: e.points[7].started_at,
            previous_run: "run-006".into(),
            changes: vec![SettingChange {
                key: "host".into(),
                before: Some("perf-01".into()),
                after: Some("<b>perf-03</b>".into()),
            }],
        };
        // A change outside the endpoint's time span is not drawn.
        let outside = EnvironmentChange {
            run: "later".into(),
            started_at: e.points[39].started_at + Duration::days(5),
            ..env.clone()
        };
        let svg = trend_chart(e, &infos(e), &[env, outside], "c").unwrap();

        // One change-point marker, at the onset run's x, between its
        // neighbours, labelled with the change and the onset date.
        let markers: Vec<&str> = svg.split("<g class=\"pd-changepoint\"").skip(1).collect();
        assert_eq!(markers.len(), 1);
        let m = markers[0];
        assert_eq!(attr(m, "data-run"), "run-020");
        let x: i32 = attr(m, "data-x").parse().unwrap();
        assert_eq!(x, point_x(&svg, "run-020"));
        assert!(point_x(&svg, "run-019") < x && x < point_x(&svg, "run-021"));
        assert!(m.contains(&format!("M{x} ")), "vertical line at x: {m}");
        // Run 20 starts 20 × 56 h after 2026-01-05 03:00: 2026-02-20.
        assert!(m.contains(">+50% from 2026-02-20</text>"), "{m}");
        // Level segments: before from the first run to the onset, after
        // from the onset to the last run.
        let levels = attr(m, "d");
        assert!(
            levels.starts_with(&format!("M{} ", point_x(&svg, "run-000")))
                && levels.ends_with(&format!("H{}", point_x(&svg, "run-039"))),
            "{levels}"
        );

        // One environment marker at its run, the values escaped.
        let env: Vec<&str> = svg.split("<g class=\"pd-envchange\"").skip(1).collect();
        assert_eq!(env.len(), 1);
        assert_eq!(attr(env[0], "data-run"), "run-007");
        let ex: i32 = attr(env[0], "data-x").parse().unwrap();
        assert_eq!(ex, point_x(&svg, "run-007"));
        assert!(env[0].contains("host perf-01 → &lt;b&gt;perf-03&lt;/b&gt;"));
        assert!(env[0].contains(">env: host</text>"));
        assert!(!svg.contains("<b>"));

        // Both have a legend entry; the chart without them has neither.
        assert!(svg.contains(">change point: level before → after</text>"));
        assert!(svg.contains(">environment change</text>"));
        let steady: Vec<Vec<f64>> = step_series().into_iter().take(20).collect();
        let quiet = analyse(&archive(&steady, None), vec![]);
        let q = &quiet.endpoints[0];
        let svg = trend_chart(q, &infos(q), &[], "q").unwrap();
        assert!(!svg.contains("pd-changepoint") && !svg.contains("pd-envchange"));
        assert!(!svg.contains("change point") && !svg.contains("environment change"));
    }

    #[test]
    fn accepted_changes_are_drawn_as_accepted_everywhere() {
        // The step's first regression is triaged `accepted`: its runs are a
        // regression by the numbers but shown in the accepted colour.
        let analysis = analyse(&archive(&step_series(), Some(20)), vec![]);
        let e = &analysis.endpoints[0];
        let accepted: Vec<&str> = e
            .points
            .iter()
            .filter(|p| display_state(p) == DisplayState::Accepted)
            .map(|p| p.run.as_str())
            .collect();
        assert!(accepted.first() == Some(&"run-020"), "{accepted:?}");
        assert!(
            e.points
                .iter()
                .all(|p| display_state(p) != DisplayState::Regression),
            "the whole accepted step is accepted"
        );

        let svg = trend_chart(e, &infos(e), &[], "c").unwrap();
        assert!(svg.contains(&format!(r#"stroke="{}""#, hex(ACCEPTED))));
        assert!(!svg.contains(&format!(r#"stroke="{}""#, hex(REGRESSION))));
        assert!(svg.contains(">accepted change (triaged)</text>"));

        let spark = sparkline(e, 52);
        assert!(spark.contains(r#"class="v-accepted""#));
        assert!(!spark.contains(r#"class="v-regression""#));

        let (heat, _) = heatmap(
            &[HeatmapRow {
                endpoint: e,
                href: "e.html".into(),
            }],
            53,
            "h",
        );
        let cells = heat
            .split("<rect ")
            .filter(|c| c.contains("data-tip-target"))
            .filter(|c| c.contains(r#"class="h-accepted""#))
            .count();
        assert!(cells > 0, "accepted weeks in the heatmap");
        assert!(!heat.contains(r#"class="h-regression" data-tip-target"#));
        assert!(heat.contains(">accepted change</text>"), "legend entry");

        // Unlabelled, the same runs are regressions.
        let analysis = analyse(&archive(&step_series(), None), vec![]);
        let e = &analysis.endpoints[0];
        assert!(
            sparkline(e, 52).contains(r#"class="v-regression""#)
                && !sparkline(e, 52).contains("v-accepted")
        );
    }
}
