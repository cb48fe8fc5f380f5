//! The endpoint trend chart, written by hand as SVG: every round's p99,
//! the run medians, the baseline and the regression line, verdicts as
//! shapes as well as colours (regression ▲, improvement ▼, accepted ◆,
//! too few rounds ○), the lines labelled where they end, change points,
//! environment changes and annotations marked with labels that never
//! overlap, and an overlay of linked, titled run points.
//!
//! [`trend_views`] draws it once per time range (4 weeks, 13 weeks, a
//! year, all) that the history is longer than; the endpoint page shows
//! one at a time (`#range-13w` by default, kept in the URL).
//!
//! Colours are CSS classes (`t-…`, static/style.css), so the light and
//! dark themes both apply.

use std::fmt::Write as _;

use chrono::{DateTime, Duration, Utc};

use super::axis::{date_ticks, place_in_rows, spread, text_width, value_label, value_ticks};
use super::ellipsis;
use crate::analyse::changepoint::{self, LevelShift};
use crate::analyse::{EndpointAnalysis, EnvironmentChange, RunPoint, Verdict};
use crate::model::Annotation;
use crate::render::display::{DisplayState, display_state};
use crate::render::format as f;
use crate::render::xml_escape;

/// The chart's size in SVG units (it scales to its box).
const W: f64 = 960.0;
const H: f64 = 430.0;
const LEFT: f64 = 64.0;
/// Room for the direct labels of the lines at their right end.
const RIGHT: f64 = 124.0;
/// Title, shape legend and the rows of marker labels above the plot.
const TOP: f64 = 104.0;
const BOTTOM: f64 = 52.0;
/// The key's first row, and the step to its second (the first row of
/// marker labels gives way to it).
const KEY_Y: f64 = 48.0;
const KEY_ROW_GAP: f64 = 17.0;
/// Rows for the labels of change points and annotations above the plot.
const TOP_LABEL_ROWS: usize = 3;

/// A point of the overlay: where it links and what its tooltip says.
pub struct PointInfo {
    pub href: String,
    /// One fact a line (the tooltip shows the lines).
    pub title: String,
}

/// One time range of the chart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    /// `4w`, `13w`, `1y`, `all`: the URL fragment is `range-<key>`.
    pub key: &'static str,
    /// `4 weeks`.
    pub words: &'static str,
    pub days: Option<i64>,
}

/// The ranges offered, shortest first; 13 weeks is the default view.
pub const RANGES: [Range; 4] = [
    Range {
        key: "4w",
        words: "4 weeks",
        days: Some(28),
    },
    Range {
        key: "13w",
        words: "13 weeks",
        days: Some(91),
    },
    Range {
        key: "1y",
        words: "1 year",
        days: Some(365),
    },
    Range {
        key: "all",
        words: "all",
        days: None,
    },
];

/// The key of the view shown when the URL names none.
pub const DEFAULT_RANGE: &str = "13w";

/// What the chart shows besides the endpoint's own runs.
pub struct TrendInput<'a> {
    pub endpoint: &'a EndpointAnalysis,
    /// `points[i]` describes `endpoint.points[i]`.
    pub points: &'a [PointInfo],
    pub environment: &'a [EnvironmentChange],
    /// The annotations of this endpoint, numbered from 1 in this order
    /// (the page lists them under the chart with the same numbers).
    pub annotations: &'a [&'a Annotation],
}

/// One drawn range.
pub struct TrendView {
    pub range: Range,
    pub svg: String,
    /// Shown when the URL names no range.
    pub default: bool,
    /// Runs in this view.
    pub runs: usize,
    /// Whether its runs can be hovered and followed (too dense otherwise).
    pub linked: bool,
}

/// The chart once per range the history is longer than, and once whole.
/// The default view is 13 weeks, or the whole history when it is shorter.
pub fn trend_views(input: &TrendInput, id: &str) -> Vec<TrendView> {
    let (Some(first), Some(last)) = trusted_ends(input.endpoint) else {
        return Vec::new();
    };
    let span = last.started_at - first.started_at;
    let mut views: Vec<TrendView> = RANGES
        .iter()
        .filter(|r| r.days.is_none_or(|d| Duration::days(d) < span))
        .map(|r| {
            let from = r
                .days
                .map_or(first.started_at, |d| last.started_at - Duration::days(d));
            let frame = Frame::new(input.endpoint, from, last.started_at);
            TrendView {
                range: *r,
                svg: draw(input, &frame, &format!("{id}-{}", r.key)),
                default: false,
                runs: frame.points.len(),
                linked: has_overlay(&frame),
            }
        })
        .collect();
    let default = views
        .iter()
        .position(|v| v.range.key == DEFAULT_RANGE)
        .unwrap_or(views.len() - 1);
    views[default].default = true;
    views
}

/// The chart over the whole history (one view).
pub fn trend_chart(input: &TrendInput, id: &str) -> String {
    match trusted_ends(input.endpoint) {
        (Some(first), Some(last)) => draw(
            input,
            &Frame::new(input.endpoint, first.started_at, last.started_at),
            id,
        ),
        _ => String::new(),
    }
}

/// The first and last runs whose time can be trusted: the time axis spans
/// them. A run dated 1970 or 2099 would stretch every range to decades; it
/// is left off the chart, and the page lists it apart
/// ([`crate::render::context::Ctx::untrusted_runs`]).
fn trusted_ends(e: &EndpointAnalysis) -> (Option<&RunPoint>, Option<&RunPoint>) {
    let mut trusted = e.points.iter().filter(|p| !p.untrusted_time);
    let first = trusted.next();
    (first, trusted.next_back().or(first))
}

/// Where a run's median sits: a failed run has no valid latency, so its
/// mark sits on the time axis instead of at a meaningless median.
fn point_y(frame: &Frame, p: &RunPoint) -> f64 {
    if p.verdict == Verdict::Failed {
        frame.y(0.0)
    } else {
        frame.y(p.median_p99_ms)
    }
}

/// The points in a view and the scales that place them.
struct Frame<'a> {
    /// Indices into the endpoint's points, in time order.
    points: Vec<usize>,
    all: &'a [RunPoint],
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    y_max: f64,
    y_ticks: Vec<f64>,
    threshold_ratio: f64,
}

impl<'a> Frame<'a> {
    fn new(e: &'a EndpointAnalysis, from: DateTime<Utc>, to: DateTime<Utc>) -> Frame<'a> {
        let points: Vec<usize> = (0..e.points.len())
            .filter(|&i| {
                let p = &e.points[i];
                !p.untrusted_time && from <= p.started_at && p.started_at <= to
            })
            .collect();
        // A failed run's latencies are not latencies: they set no scale.
        let highest = points
            .iter()
            .map(|&i| &e.points[i])
            .filter(|p| p.verdict != Verdict::Failed)
            .flat_map(|p| {
                p.round_p99_ms
                    .iter()
                    .copied()
                    .chain(p.threshold_p99_ms(e.threshold_ratio))
            })
            .filter(|v| v.is_finite())
            .fold(0.0f64, f64::max);
        // A p99 of 1.7e308 must not make an infinite axis.
        let y_ticks = value_ticks((highest * 1.05).min(f64::MAX / 4.0), 6);
        Frame {
            y_max: *y_ticks.last().expect("at least two ticks"),
            y_ticks,
            points,
            all: &e.points,
            from,
            to,
            threshold_ratio: e.threshold_ratio,
        }
    }

    fn pts(&self) -> impl Iterator<Item = &'a RunPoint> + '_ {
        self.points.iter().map(|&i| &self.all[i])
    }

    /// x of a moment; the ends get a little room (3% a side).
    fn x(&self, t: DateTime<Utc>) -> f64 {
        let span = (self.to - self.from).num_seconds().max(1) as f64;
        let frac = (t - self.from).num_seconds() as f64 / span;
        let width = W - LEFT - RIGHT;
        (LEFT + width * (0.03 + 0.94 * frac)).round()
    }

    fn y(&self, v: f64) -> f64 {
        let v = v.clamp(0.0, self.y_max);
        (H - BOTTOM - (H - TOP - BOTTOM) * v / self.y_max).round()
    }

    fn contains(&self, t: DateTime<Utc>) -> bool {
        self.from <= t && t <= self.to
    }
}

fn draw(input: &TrendInput, frame: &Frame, id: &str) -> String {
    let e = input.endpoint;
    let environment: Vec<&EnvironmentChange> = input
        .environment
        .iter()
        .filter(|c| frame.contains(c.started_at))
        .collect();
    let annotations: Vec<(usize, &Annotation)> = input
        .annotations
        .iter()
        .enumerate()
        .filter(|(_, a)| frame.contains(a.at))
        .map(|(i, a)| (i + 1, *a))
        .collect();
    let (key, key_rows) = legend(e, frame, !environment.is_empty(), !annotations.is_empty());
    let mut body = String::new();
    body.push_str(&axes(frame));
    // What moves when the time axis is zoomed (static/app.js): the series
    // and the markers, clipped to the plot.
    body.push_str(&format!(
        r#"<g class="t-zoom" clip-path="url(#{id}-clip)">{}"#,
        series(frame)
    ));
    // A second row of the key takes the place of the first row of labels.
    let label_rows = TOP_LABEL_ROWS + 1 - key_rows.min(TOP_LABEL_ROWS);
    body.push_str(&markers(e, frame, &environment, &annotations, label_rows));
    body.push_str("</g>");
    body.push_str(&direct_labels(frame));
    body.push_str(&key);
    let overlay = overlay(e, frame, input.points);
    let (x0, x1) = (frame.x(frame.from), frame.x(frame.to));
    format!(
        r#"<svg class="chart trend" viewBox="0 0 {W} {H}" role="group" aria-labelledby="{id}-title {id}-desc" data-tip-source data-zoom="{x0} {x1} {} {}" data-plot="{LEFT} {TOP} {} {}" xmlns="http://www.w3.org/2000/svg"><title id="{id}-title">{}</title><desc id="{id}-desc">{}</desc><defs><clipPath id="{id}-clip"><rect x="{LEFT}" y="0" width="{}" height="{H}"/></clipPath></defs><g aria-hidden="true">{body}</g><g class="pd-overlay" clip-path="url(#{id}-clip)">{overlay}</g></svg>"#,
        frame.from.timestamp(),
        frame.to.timestamp(),
        W - RIGHT,
        H - BOTTOM,
        xml_escape(&format!("{}: p99 latency per run", e.name)),
        xml_escape(&describe(e, frame, &environment, &annotations)),
        W - RIGHT - LEFT,
    )
}

/// Grid, value and date ticks, axis names.
fn axes(frame: &Frame) -> String {
    let mut s = String::from(r#"<g class="t-axis">"#);
    let step = frame.y_ticks.get(1).copied().unwrap_or(1.0);
    for v in &frame.y_ticks {
        let y = frame.y(*v);
        let _ = write!(
            s,
            r#"<path class="t-grid" d="M{LEFT} {y}H{}"/><text x="{}" y="{}" text-anchor="end">{}</text>"#,
            W - RIGHT,
            LEFT - 8.0,
            y + 4.0,
            value_label(*v, step)
        );
    }
    let bottom = H - BOTTOM;
    // The time axis's ticks, in a group of their own: app.js draws them
    // again for a zoomed range.
    s.push_str(r#"<g class="t-xticks">"#);
    for t in date_ticks(frame.from, frame.to, W - LEFT - RIGHT, 70.0) {
        let x = frame.x(t.at);
        let _ = write!(s, r#"<path class="t-tick" d="M{x} {bottom}v6"/>"#);
        if let Some(label) = t.label {
            let _ = write!(
                s,
                r#"<text x="{x}" y="{}" text-anchor="middle">{}</text>"#,
                bottom + 20.0,
                xml_escape(&label)
            );
        }
    }
    s.push_str("</g>");
    let _ = write!(
        s,
        r#"<path class="t-frame" d="M{LEFT} {TOP}V{bottom}H{}"/><text class="t-name" x="{}" y="{}" text-anchor="middle">run date (UTC)</text><text class="t-name" transform="translate(16 {}) rotate(-90)" text-anchor="middle">p99 latency (ms)</text></g>"#,
        W - RIGHT,
        (LEFT + W - RIGHT) / 2.0,
        H - 10.0,
        (TOP + bottom) / 2.0
    );
    s
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

fn polyline(class: &str, points: &[(f64, f64)]) -> String {
    let coords: Vec<String> = points.iter().map(|(x, y)| format!("{x},{y}")).collect();
    format!(
        r#"<polyline class="{class}" points="{}"/>"#,
        coords.join(" ")
    )
}

/// A verdict's shape at (x, y), as path commands (shapes of one kind
/// share one `<path>`).
fn shape(state: DisplayState, x: f64, y: f64) -> Option<String> {
    Some(match state {
        DisplayState::Regression => format!("M{x} {}l6.5 11h-13z", y - 7.0),
        DisplayState::Improvement => format!("M{x} {}l6.5 -11h-13z", y + 7.0),
        DisplayState::Accepted => format!("M{x} {}l6 6-6 6-6-6z", y - 6.0),
        // A failed run (too many requests failed): a square, whatever its
        // latency says.
        DisplayState::Failed => format!("M{} {}h11v11h-11z", x - 5.5, y - 5.5),
        _ => return None,
    })
}

/// Rounds, the regression line, the baseline, the medians and the
/// verdict shapes, back to front.
fn series(frame: &Frame) -> String {
    let mut s = String::new();
    let mut rounds = String::new();
    for p in frame.pts().filter(|p| p.verdict != Verdict::Failed) {
        let x = frame.x(p.started_at);
        for r in &p.round_p99_ms {
            let _ = write!(rounds, "M{x} {}h0", frame.y(*r));
        }
    }
    let _ = write!(s, r#"<path class="t-round" d="{rounds}"/>"#);
    let ratio = frame.threshold_ratio;
    for segment in contiguous(frame.pts().map(|p| {
        p.threshold_p99_ms(ratio)
            .map(|t| (frame.x(p.started_at), frame.y(t)))
    })) {
        s.push_str(&polyline("t-line", &segment));
    }
    for segment in contiguous(frame.pts().map(|p| {
        p.baseline_p99_ms
            .map(|b| (frame.x(p.started_at), frame.y(b)))
    })) {
        s.push_str(&polyline("t-baseline", &segment));
    }
    // The median line breaks at a failed run: it has no valid latency.
    for segment in contiguous(frame.pts().map(|p| {
        (p.verdict != Verdict::Failed).then(|| (frame.x(p.started_at), frame.y(p.median_p99_ms)))
    })) {
        s.push_str(&polyline("t-median", &segment));
    }
    let mut dots = String::new();
    let mut shapes: [(DisplayState, String); 4] = [
        (DisplayState::Accepted, String::new()),
        (DisplayState::Improvement, String::new()),
        (DisplayState::Regression, String::new()),
        (DisplayState::Failed, String::new()),
    ];
    for p in frame.pts() {
        let (x, y) = (frame.x(p.started_at), point_y(frame, p));
        let state = display_state(p);
        match shape(state, x, y) {
            Some(d) => {
                if let Some((_, path)) = shapes.iter_mut().find(|(k, _)| *k == state) {
                    path.push_str(&d);
                }
            }
            None if p.verdict == Verdict::Insufficient => {
                let _ = write!(
                    s,
                    r#"<circle class="t-insufficient" cx="{x}" cy="{y}" r="4.5"/>"#
                );
            }
            None => {
                let _ = write!(dots, "M{x} {y}h0");
            }
        }
    }
    let _ = write!(s, r#"<path class="t-dot" d="{dots}"/>"#);
    for (state, d) in shapes {
        if !d.is_empty() {
            let _ = write!(s, r#"<path class="t-{}" d="{d}"/>"#, state.key());
        }
    }
    s
}

/// The lines named where they end, instead of a legend to look up.
fn direct_labels(frame: &Frame) -> String {
    let Some(last) = frame.pts().last() else {
        return String::new();
    };
    let mut labels: Vec<(&str, String, f64)> = vec![if last.verdict == Verdict::Failed {
        (
            "t-median-label",
            "no valid latency".to_string(),
            point_y(frame, last),
        )
    } else {
        (
            "t-median-label",
            format!("median {} ms", f::ms(last.median_p99_ms)),
            frame.y(last.median_p99_ms),
        )
    }];
    let with_baseline = frame.pts().filter(|p| p.baseline_p99_ms.is_some()).last();
    if let Some(p) = with_baseline {
        let b = p.baseline_p99_ms.expect("filtered");
        labels.push(("t-baseline-label", "baseline".into(), frame.y(b)));
        labels.push((
            "t-line-label",
            format!("line ×{}", frame.threshold_ratio),
            frame.y(b * frame.threshold_ratio),
        ));
    }
    let ys: Vec<f64> = labels.iter().map(|l| l.2 + 4.0).collect();
    let placed = spread(&ys, 15.0, TOP + 10.0, H - BOTTOM);
    let x = W - RIGHT + 8.0;
    labels
        .iter()
        .zip(placed)
        .map(|((class, text, _), y)| {
            format!(
                r#"<text class="{class}" x="{x}" y="{y}">{}</text>"#,
                xml_escape(text)
            )
        })
        .collect()
}

/// When a run of `e` started, as its chart names it: the day, with the
/// time of day when another run of `e` started that day.
fn when(e: &EndpointAnalysis, t: DateTime<Utc>) -> String {
    let day = t.date_naive();
    if e.points
        .iter()
        .filter(|p| p.started_at.date_naive() == day)
        .nth(1)
        .is_some()
    {
        crate::calendar::date_and_time(t)
    } else {
        f::date(t)
    }
}

/// `+31% from 2026-09-14 (1.2 → 1.6 ms, run X, regression)`.
fn change_point_words(e: &EndpointAnalysis, cp: &LevelShift) -> String {
    format!(
        "{} from {} ({} → {} ms, run {}, {})",
        f::signed_percent(cp.change),
        when(e, cp.started_at),
        f::ms(cp.level_before_ms),
        f::ms(cp.level_after_ms),
        cp.run,
        cp.direction
    )
}

/// `2026-09-14 at run X: host perf-01 → perf-03`.
fn environment_words(c: &EnvironmentChange) -> String {
    format!(
        "{} at run {}: {}",
        f::date(c.started_at),
        c.run,
        f::setting_changes(&c.changes)
    )
}

/// A label above the plot (change points, annotations) or below it
/// (environment changes), with the vertical marker it belongs to.
struct Marker {
    x: f64,
    class: &'static str,
    data_run: String,
    title: String,
    label: String,
    /// The level before and after, for change points.
    levels: Option<String>,
    /// Annotation number, drawn in a flag at the top.
    number: Option<usize>,
    /// A shorter label for when the whole one finds no free row.
    short: String,
}

/// Change points, annotations and environment changes, their labels in
/// rows so that none overlaps another (a label with no free row is left
/// out; its marker, tooltip and the page's lists still say it).
fn markers(
    e: &EndpointAnalysis,
    frame: &Frame,
    environment: &[&EnvironmentChange],
    annotations: &[(usize, &Annotation)],
    top_rows: usize,
) -> String {
    let mut top: Vec<Marker> = change_point_markers(e, frame);
    top.extend(annotations.iter().map(|(n, a)| Marker {
        x: frame.x(a.at),
        class: "pd-annotation",
        data_run: a.run.clone().unwrap_or_default(),
        title: format!("Annotation {n} · {}: {}", f::datetime(a.at), a.text),
        // Whole when there is room (it was always cut at 28 characters:
        // "incident: batch job on the …").
        label: ellipsis(&a.text, 90),
        levels: None,
        number: Some(*n),
        short: ellipsis(&a.text, 28),
    }));
    top.sort_by(|a, b| a.x.total_cmp(&b.x));
    let mut bottom: Vec<Marker> = Vec::new();
    for c in environment {
        let keys: Vec<&str> = c.changes.iter().map(|k| k.key.as_str()).collect();
        let label = ellipsis(&format!("env: {}", keys.join(", ")), 40);
        let x = frame.x(c.started_at);
        let title = format!("Environment change: {}", environment_words(c));
        // Changes of the same keys at one place on the axis (runs of one
        // day going back and forth between hosts) are one label, not the
        // same words twice: "env: host" was drawn over itself.
        if let Some(m) = bottom
            .iter_mut()
            .find(|m| (m.x - x).abs() < 2.0 && m.label.starts_with(&label))
        {
            m.title.push('\n');
            m.title.push_str(&title);
            let n = m.title.lines().count();
            m.label = format!("{label} ×{n}");
            m.short = m.label.clone();
            continue;
        }
        bottom.push(Marker {
            x,
            class: "pd-envchange",
            data_run: c.run.clone(),
            title,
            short: label.clone(),
            label,
            levels: None,
            number: None,
        });
    }
    let mut s = String::new();
    // Top rows start under the legend; bottom rows stack up from the axis.
    s.push_str(&draw_markers(
        &top,
        |row| TOP - 8.0 - 16.0 * (top_rows - 1 - row) as f64,
        top_rows,
    ));
    s.push_str(&draw_markers(
        &bottom,
        |row| H - BOTTOM - 8.0 - 15.0 * row as f64,
        2,
    ));
    s
}

fn change_point_markers(e: &EndpointAnalysis, frame: &Frame) -> Vec<Marker> {
    let series = changepoint::comparable_series(&e.points);
    let onsets: Vec<usize> = e.change_points.iter().map(|c| c.point_index).collect();
    e.change_points
        .iter()
        .filter(|cp| frame.contains(cp.started_at))
        .filter_map(|cp| {
            let i = cp.point_index;
            let onset = e.points.get(i)?;
            let (start, end) = series
                .iter()
                .find(|s| s.contains(&i))
                .and_then(|s| Some((*s.first()?, *s.last()?)))
                .unwrap_or((0, e.points.len() - 1));
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
            // Clip the level segments to the view.
            let clip = |t: DateTime<Utc>| frame.x(t.clamp(frame.from, frame.to));
            let x = frame.x(onset.started_at);
            Some(Marker {
                x,
                class: "pd-changepoint",
                data_run: onset.run.clone(),
                title: format!("Change point: {}", change_point_words(e, cp)),
                label: format!(
                    "{} from {}",
                    f::signed_percent(cp.change),
                    when(e, cp.started_at)
                ),
                levels: Some(format!(
                    "M{} {}H{x}M{x} {}H{}",
                    clip(e.points[from].started_at),
                    frame.y(cp.level_before_ms),
                    frame.y(cp.level_after_ms),
                    clip(e.points[to].started_at)
                )),
                number: None,
                short: String::new(),
            })
        })
        .collect()
}

fn draw_markers<'a>(markers: &'a [Marker], row_y: impl Fn(usize) -> f64, rows: usize) -> String {
    // The labels are drawn at 13 px (style.css), change points' in bold:
    // measured a little wide so that neighbours never touch.
    const SIZE: f64 = 13.0 * 1.1;
    let span_of = |m: &Marker, label: &str| {
        let w = text_width(label, SIZE) + if m.number.is_some() { 20.0 } else { 0.0 };
        // Near the right edge the label is drawn to the left; never past
        // the plot's left edge.
        let start = if m.x + w + 6.0 > W - RIGHT {
            (m.x - w - 6.0).max(LEFT)
        } else {
            m.x + 6.0
        };
        (start, w)
    };
    // Whole labels first; a label that finds no free row tries its short
    // form (the whole is in its tooltip and in the list under the chart);
    // when some still find none, every label short, if that places more.
    let place = |labels: &[&str]| {
        let spans: Vec<(f64, f64)> = markers
            .iter()
            .zip(labels)
            .map(|(m, l)| span_of(m, l))
            .collect();
        let mut order: Vec<usize> = (0..markers.len()).collect();
        order.sort_by(|&a, &b| spans[a].0.total_cmp(&spans[b].0));
        let sorted: Vec<(f64, f64)> = order.iter().map(|&i| spans[i]).collect();
        let placed = place_in_rows(&sorted, 8.0, rows);
        (order, spans, placed)
    };
    let short = |m: &'a Marker| {
        if m.short.is_empty() {
            m.label.as_str()
        } else {
            m.short.as_str()
        }
    };
    let mut labels: Vec<&str> = markers.iter().map(|m| m.label.as_str()).collect();
    let mut best = place(&labels);
    let unplaced = |p: &[Option<usize>]| p.iter().filter(|r| r.is_none()).count();
    if unplaced(&best.2) > 0 {
        let (order, _, placed) = &best;
        let mut some = labels.clone();
        for (k, &i) in order.iter().enumerate() {
            if placed[k].is_none() {
                some[i] = short(&markers[i]);
            }
        }
        let second = place(&some);
        let all: Vec<&str> = markers.iter().map(short).collect();
        let third = place(&all);
        if unplaced(&third.2) < unplaced(&second.2) {
            (labels, best) = (all, third);
        } else {
            (labels, best) = (some, second);
        }
    }
    let (order, spans, placed) = best;
    let mut s = String::new();
    for (k, &i) in order.iter().enumerate() {
        let m = &markers[i];
        let x = m.x;
        let _ = write!(
            s,
            r#"<g class="{}" data-run="{}" data-x="{x}" data-tip-target><title>{}</title>"#,
            m.class,
            xml_escape(&m.data_run),
            xml_escape(&m.title)
        );
        if let Some(levels) = &m.levels {
            let _ = write!(s, r#"<path class="t-levels" d="{levels}"/>"#);
        }
        let _ = write!(
            s,
            r#"<path class="t-mark" d="M{x} {TOP}V{}"/><path class="t-hit" d="M{x} {TOP}V{}"/>"#,
            H - BOTTOM,
            H - BOTTOM
        );
        if let Some(row) = placed[k] {
            let y = row_y(row);
            let mut lx = spans[i].0;
            if let Some(n) = m.number {
                let _ = write!(
                    s,
                    r#"<circle class="t-flag" cx="{}" cy="{}" r="8"/><text class="t-flag-n" x="{}" y="{}" text-anchor="middle">{n}</text>"#,
                    lx + 8.0,
                    y - 4.0,
                    lx + 8.0,
                    y
                );
                lx += 20.0;
            }
            let _ = write!(
                s,
                r#"<text class="t-label" x="{lx}" y="{y}">{}</text>"#,
                xml_escape(labels[i])
            );
        }
        s.push_str("</g>");
    }
    s
}

/// The title and a key of the shapes this view draws, wrapped onto a
/// second row when it does not fit the width (no entry is cut off at the
/// chart's edge); returns the key and how many rows it took.
fn legend(
    e: &EndpointAnalysis,
    frame: &Frame,
    environment: bool,
    annotations: bool,
) -> (String, usize) {
    let has = |s: DisplayState| frame.pts().any(|p| display_state(p) == s);
    let mut items: Vec<(&str, &str)> = vec![
        (r#"<path class="t-round" d="M0 -4h0"/>"#, "round p99"),
        (r#"<path class="t-dot" d="M0 -4h0"/>"#, "run median"),
    ];
    for (state, mark, words) in [
        (
            DisplayState::Failed,
            r#"<path class="t-failed" d="M-5.5 -9.5h11v11h-11z"/>"#,
            "failed run: no valid latency (on the axis)",
        ),
        (
            DisplayState::Regression,
            r#"<path class="t-regression" d="M0 -11l6.5 11h-13z"/>"#,
            "regression",
        ),
        (
            DisplayState::Improvement,
            r#"<path class="t-improvement" d="M0 3l6.5 -11h-13z"/>"#,
            "improvement",
        ),
        (
            DisplayState::Accepted,
            r#"<path class="t-accepted" d="M0 -10l6 6-6 6-6-6z"/>"#,
            "accepted change (triaged)",
        ),
        (
            DisplayState::Insufficient,
            r#"<circle class="t-insufficient" cx="0" cy="-4" r="4.5"/>"#,
            "too few rounds",
        ),
    ] {
        if has(state) {
            items.push((mark, words));
        }
    }
    if frame.pts().any(|_| true)
        && !e
            .change_points
            .iter()
            .all(|c| !frame.contains(c.started_at))
    {
        items.push((r#"<path class="t-cp-key" d="M0 -11v14"/>"#, "change point"));
    }
    if environment {
        items.push((
            r#"<path class="t-env-key" d="M0 -11v14"/>"#,
            "environment change",
        ));
    }
    if annotations {
        items.push((
            r#"<circle class="t-flag" cx="0" cy="-4" r="6"/>"#,
            "annotation",
        ));
    }
    let mut s = format!(
        r#"<text class="t-title" x="{LEFT}" y="22">{}: p99 latency per run (ms)</text><g class="t-key">"#,
        xml_escape(&e.name)
    );
    let words: Vec<&str> = items.iter().map(|(_, w)| *w).collect();
    let places = key_layout(&words);
    for ((mark, words), (x, y)) in items.iter().zip(&places) {
        let _ = write!(
            s,
            r#"<g transform="translate({x} {y})">{mark}<text x="11" y="0">{words}</text></g>"#
        );
    }
    s.push_str("</g>");
    let rows = places.last().map_or(1, |&(_, y)| {
        1 + ((y - KEY_Y) / KEY_ROW_GAP).round() as usize
    });
    (s, rows)
}

/// Where each key entry goes (its mark's x and the row's y): left to
/// right, a new row when the next entry would pass the chart's right edge.
fn key_layout(words: &[&str]) -> Vec<(f64, f64)> {
    let start = LEFT + 6.0;
    let (mut x, mut y) = (start, KEY_Y);
    words
        .iter()
        .map(|w| {
            let width = key_entry_width(w);
            if x > start && x + width > W - 8.0 {
                x = start;
                y += KEY_ROW_GAP;
            }
            let at = (x, y);
            x += width + 22.0;
            at
        })
        .collect()
}

/// A key entry's mark and words, in SVG units.
fn key_entry_width(words: &str) -> f64 {
    11.0 + text_width(words, 13.0)
}

/// Runs closer than this (SVG pixels, on average) get no overlay: their
/// hit areas would pile on each other, and hundreds of tab stops help no
/// one. The shorter ranges (and the runs table) have every run.
const MIN_OVERLAY_SPACING: f64 = 4.0;

/// Whether a view links its runs (see [`MIN_OVERLAY_SPACING`]).
fn has_overlay(frame: &Frame) -> bool {
    (W - LEFT - RIGHT) / frame.points.len().max(1) as f64 >= MIN_OVERLAY_SPACING
}

/// The overlay: each run a link to its page with a tooltip. Focusable in
/// time order; the page puts a skip link before the chart.
fn overlay(e: &EndpointAnalysis, frame: &Frame, infos: &[PointInfo]) -> String {
    let mut s = String::new();
    if !has_overlay(frame) {
        return s;
    }
    for &i in &frame.points {
        let (p, Some(info)) = (&e.points[i], infos.get(i)) else {
            continue;
        };
        let _ = write!(
            s,
            // The <title> of the link is its accessible name and its
            // native tooltip (app.js turns it into a richer one).
            r#"<a href="{}" data-verdict="{}" data-tip-target><title>{}</title><circle class="pd-hit" cx="{}" cy="{}" r="9"/></a>"#,
            xml_escape(&info.href),
            p.verdict.as_str(),
            xml_escape(&info.title),
            frame.x(p.started_at),
            point_y(frame, p),
        );
    }
    s
}

/// What a screen reader hears: what is drawn, and the view's facts.
fn describe(
    e: &EndpointAnalysis,
    frame: &Frame,
    environment: &[&EnvironmentChange],
    annotations: &[(usize, &Annotation)],
) -> String {
    let count = |s: DisplayState| frame.pts().filter(|p| display_state(p) == s).count();
    let mut desc = format!(
        "{} to {}: {} runs. Dots are each round's p99; the line joins each run's median of rounds; the baseline \
         and the regression line (baseline ×{}) are labelled at their right end. {} regressions (triangles up), \
         {} improvements (triangles down), {} runs of accepted changes (diamonds), {} failed runs (squares on \
         the time axis: most requests failed, so there is no valid latency to draw).",
        f::date(frame.from),
        f::date(frame.to),
        frame.points.len(),
        e.threshold_ratio,
        count(DisplayState::Regression),
        count(DisplayState::Improvement),
        count(DisplayState::Accepted),
        count(DisplayState::Failed),
    );
    for cp in e
        .change_points
        .iter()
        .filter(|c| frame.contains(c.started_at))
    {
        let _ = write!(desc, " Change point: {}.", change_point_words(e, cp));
    }
    for c in environment {
        let _ = write!(desc, " Environment change: {}.", environment_words(c));
    }
    for (n, a) in annotations {
        let _ = write!(desc, " Annotation {n}, {}: {}.", f::datetime(a.at), a.text);
    }
    desc
}

#[cfg(test)]
mod tests {
    use chrono::{Duration, TimeZone};

    use super::*;
    use crate::analyse::analyse;
    use crate::analyse::comparability::SettingChange;
    use crate::model::{Archive, Label, TriageLabel};
    use crate::render::charts::{HeatmapRow, heatmap, sparkline};
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
                follow_up: Default::default(),
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
    fn point_x(svg: &str, run: &str) -> f64 {
        let at = svg
            .find(&format!(r#"<a href="{run}.html""#))
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

    fn input<'a>(
        e: &'a EndpointAnalysis,
        points: &'a [PointInfo],
        environment: &'a [EnvironmentChange],
        annotations: &'a [&'a Annotation],
    ) -> TrendInput<'a> {
        TrendInput {
            endpoint: e,
            points,
            environment,
            annotations,
        }
    }

    /// The cy of the overlay point of `run`.
    fn point_y_of(svg: &str, run: &str) -> f64 {
        let at = svg
            .find(&format!(r#"<a href="{run}.html""#))
            .unwrap_or_else(|| panic!("{run} in the overlay"));
        let rest = &svg[at..];
        let cy = &rest[rest.find("cy=\"").unwrap() + 4..];
        cy[..cy.find('"').unwrap()].parse().unwrap()
    }

    #[test]
    fn a_run_whose_time_cannot_be_trusted_stretches_no_range() {
        let series: Vec<Vec<f64>> = (0..60).map(|i| vec![100.0 + (i % 3) as f64; 5]).collect();
        let mut archive = archive(&series, None);
        // The last run says 2099 (a clock set ahead), the first 1970.
        let last = archive.runs.len() - 1;
        archive.runs[last].started_at = chrono::Utc.with_ymd_and_hms(2099, 1, 5, 3, 0, 0).unwrap();
        archive.runs[0].started_at = chrono::Utc.with_ymd_and_hms(1970, 1, 5, 3, 0, 0).unwrap();
        for i in [0, last] {
            archive.runs[i].untrusted_time = Some("far off".into());
        }
        archive.runs.sort_by_key(|r| r.started_at);
        let analysis = analyse(&archive, vec![]);
        let e = &analysis.endpoints[0];
        let infos = infos(e);
        let views = trend_views(&input(e, &infos, &[], &[]), "c");
        assert!(!views.is_empty());
        let trusted: Vec<&RunPoint> = e.points.iter().filter(|p| !p.untrusted_time).collect();
        let (first, latest) = (trusted[0].started_at, trusted.last().unwrap().started_at);
        for v in &views {
            for year in ["1970", "2099", "2098"] {
                assert!(!v.svg.contains(year), "{}: {year} on the axis", v.range.key);
            }
            for run in ["run-000", &format!("run-{last:03}")] {
                assert!(
                    !v.svg.contains(&format!("{run}.html")),
                    "{}: {run}",
                    v.range.key
                );
            }
            // Each range counts the trusted runs in its window up to the
            // latest trusted run.
            let from = v.range.days.map_or(first, |d| latest - Duration::days(d));
            let expected = trusted.iter().filter(|p| from <= p.started_at).count();
            assert_eq!(v.runs, expected, "{}", v.range.key);
        }
        // The 13-week view (the default) is 13 weeks of the trusted runs.
        assert!(views.iter().any(|v| v.default && v.range.key == "13w"));
        // The heatmap and the sparkline leave them out too.
        let (table, older) = heatmap(&[HeatmapRow::endpoint(e, "e.html".into())], 53, "h");
        assert!(
            !table.contains("2099") && !table.contains("2098"),
            "heatmap window"
        );
        let weeks_of_trusted = ((latest - first).num_days() / 7) as usize;
        assert!(older <= weeks_of_trusted, "{older} older weeks");
        let spark = sparkline(e, 200);
        assert!(
            spark.contains(&format!("last {} run medians", trusted.len())),
            "{spark}"
        );
    }

    #[test]
    fn a_failed_run_has_no_median_on_the_chart() {
        let mut series: Vec<Vec<f64>> = (0..20).map(|i| vec![100.0 + (i % 3) as f64; 5]).collect();
        series.push(vec![47.8; 5]);
        let mut archive = archive(&series, None);
        // Every request of the last run failed: its 47.8 ms are fast 500s.
        let failed = archive.runs.len() - 1;
        test_support::fail_rounds(&mut archive, failed, "e");
        let analysis = analyse(&archive, vec![]);
        let e = &analysis.endpoints[0];
        assert_eq!(e.points[failed].verdict, Verdict::Failed);
        let infos = infos(e);
        let svg = trend_chart(&input(e, &infos, &[], &[]), "c");
        // Its mark sits on the time axis, a square, with the median line
        // ending at the run before it.
        let run = format!("run-{failed:03}");
        assert_eq!(point_y_of(&svg, &run), H - BOTTOM);
        assert!(svg.contains(r#"<path class="t-failed""#), "a square");
        let median = &svg[svg.find(r#"<polyline class="t-median""#).unwrap()..];
        let median = &median[..median.find("/>").unwrap()];
        assert_eq!(median.split(' ').count() - 2, failed, "{median}");
        assert!(!svg.contains("median 47.8 ms"));
        assert!(svg.contains(">no valid latency</text>"));
        assert!(svg.contains("1 failed runs (squares on the time axis"));
        assert!(
            svg.contains("failed run: no valid latency"),
            "the legend explains the square"
        );
    }

    #[test]
    fn change_points_environment_changes_and_annotations_sit_at_their_runs() {
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
        let note = Annotation {
            at: e.points[30].started_at,
            run: Some("run-030".into()),
            text: "deploy <b>1.7</b>".into(),
            link: None,
            endpoints: vec![],
            source: "annotations/a.toml:1".into(),
        };
        let infos = infos(e);
        let environment = [env, outside];
        let notes = [&note];
        let svg = trend_chart(&input(e, &infos, &environment, &notes), "c");

        // One change-point marker, at the onset run's x, between its
        // neighbours, labelled with the change and the onset date.
        let markers: Vec<&str> = svg.split("<g class=\"pd-changepoint\"").skip(1).collect();
        assert_eq!(markers.len(), 1);
        let m = markers[0];
        assert_eq!(attr(m, "data-run"), "run-020");
        let x: f64 = attr(m, "data-x").parse().unwrap();
        assert_eq!(x, point_x(&svg, "run-020"));
        assert!(point_x(&svg, "run-019") < x && x < point_x(&svg, "run-021"));
        // Run 20 starts 20 × 56 h after 2026-01-05 03:00: 2026-02-20.
        assert!(m.contains(">+50% from 2026-02-20</text>"), "{m}");
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
        assert_eq!(
            attr(env[0], "data-x").parse::<f64>().unwrap(),
            point_x(&svg, "run-007")
        );
        assert!(env[0].contains("host perf-01 → &lt;b&gt;perf-03&lt;/b&gt;"));
        assert!(env[0].contains(">env: host</text>"));
        // The annotation: a numbered flag at its run, text escaped.
        let ann: Vec<&str> = svg.split("<g class=\"pd-annotation\"").skip(1).collect();
        assert_eq!(ann.len(), 1);
        assert_eq!(
            attr(ann[0], "data-x").parse::<f64>().unwrap(),
            point_x(&svg, "run-030")
        );
        assert!(ann[0].contains(">1</text>") && ann[0].contains("deploy &lt;b&gt;1.7&lt;/b&gt;"));
        assert!(!svg.contains("<b>"));

        // Each has a key entry; the chart without them has none.
        for key in [
            ">change point</text>",
            ">environment change</text>",
            ">annotation</text>",
        ] {
            assert!(svg.contains(key), "{key}");
        }
        let steady: Vec<Vec<f64>> = step_series().into_iter().take(20).collect();
        let quiet = analyse(&archive(&steady, None), vec![]);
        let q = &quiet.endpoints[0];
        let qi = infos_for(q);
        let svg = trend_chart(&input(q, &qi, &[], &[]), "q");
        assert!(!svg.contains("pd-changepoint") && !svg.contains("pd-envchange"));
        assert!(!svg.contains(">change point<") && !svg.contains(">environment change<"));
    }

    /// Every entry the key can have still fits the chart's width: the
    /// key wraps onto a second row instead of cutting "annotation" off.
    #[test]
    fn a_long_key_wraps_instead_of_running_off_the_chart() {
        let every = [
            "round p99",
            "run median",
            "failed run (errors)",
            "regression",
            "improvement",
            "accepted change (triaged)",
            "too few rounds",
            "change point",
            "environment change",
            "annotation",
        ];
        let places = key_layout(&every);
        for (w, (x, _)) in every.iter().zip(&places) {
            assert!(x + key_entry_width(w) <= W - 8.0, "{w} at {x} runs off");
        }
        let rows: Vec<f64> = places.iter().map(|p| p.1).collect();
        assert_eq!(rows.first(), Some(&KEY_Y));
        assert_eq!(rows.last(), Some(&(KEY_Y + KEY_ROW_GAP)), "two rows");
        // Entries of a row do not overlap.
        for pair in places.windows(2).zip(every.iter()) {
            let ([(x0, y0), (x1, y1)], w) = (pair.0, pair.1) else {
                unreachable!()
            };
            if y0 == y1 {
                assert!(x0 + key_entry_width(w) < *x1, "{w} overlaps the next entry");
            }
        }
        // A short key stays on one row.
        assert!(key_layout(&every[..4]).iter().all(|p| p.1 == KEY_Y));
    }

    fn infos_for(e: &EndpointAnalysis) -> Vec<PointInfo> {
        infos(e)
    }

    #[test]
    fn verdicts_are_shapes_and_the_lines_are_labelled_where_they_end() {
        let analysis = analyse(&archive(&step_series(), None), vec![]);
        let e = &analysis.endpoints[0];
        let infos = infos(e);
        let svg = trend_chart(&input(e, &infos, &[], &[]), "c");
        // Regressions are up-triangles, one per regressed run.
        let regressions = e
            .points
            .iter()
            .filter(|p| p.verdict == Verdict::Regression)
            .count();
        assert!(regressions > 0);
        let d = attr(
            &svg[svg.find(r#"<path class="t-regression" d=""#).unwrap()..],
            "d",
        );
        assert_eq!(d.matches("l6.5 11h-13z").count(), regressions);
        assert!(svg.contains(">regression</text>"), "key entry");
        for label in ["t-median-label", "t-baseline-label", "t-line-label"] {
            assert!(svg.contains(&format!("<text class=\"{label}\"")), "{label}");
        }
        assert!(svg.contains(">line ×1.15</text>"));
        // The overlay links are labelled for screen readers; the drawing
        // itself is hidden from them (the desc tells it).
        let link = &svg[svg.find(r#"<a href="run-000.html""#).unwrap()..];
        assert!(link[..link.find("</a>").unwrap()].contains("<title>Run run-000</title>"));
        assert!(svg.contains(r#"role="group""#) && svg.contains(r#"<g aria-hidden="true">"#));
    }

    #[test]
    fn ranges_are_offered_only_when_the_history_is_longer() {
        // 40 runs 56 h apart: ~91 days. 4 weeks is shorter, 13 weeks is
        // not (quite), so: 4w and all, all by default.
        let analysis = analyse(&archive(&step_series(), None), vec![]);
        let e = &analysis.endpoints[0];
        let infos = infos(e);
        let views = trend_views(&input(e, &infos, &[], &[]), "c");
        let keys: Vec<&str> = views.iter().map(|v| v.range.key).collect();
        assert_eq!(keys, ["4w", "all"]);
        assert!(views[1].default && !views[0].default);
        assert_eq!(views[1].runs, 40);
        // 4 weeks: the runs of the last 28 days only, at 56 h apart 12.
        assert_eq!(views[0].runs, 13);
        assert!(!views[0].svg.contains(r#"<a href="run-026.html""#));
        assert!(views[0].svg.contains(r#"<a href="run-027.html""#));
        assert!(views[0].svg.contains(r#"id="c-4w-title""#));
    }

    #[test]
    fn accepted_changes_are_drawn_as_accepted_everywhere() {
        // The step's first regression is triaged `accepted`: its runs are a
        // regression by the numbers but shown as accepted diamonds.
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

        let infos = infos(e);
        let svg = trend_chart(&input(e, &infos, &[], &[]), "c");
        assert!(svg.contains(r#"<path class="t-accepted" d="M"#));
        assert!(!svg.contains(r#"<path class="t-regression" d="M"#));
        assert!(svg.contains(">accepted change (triaged)</text>"));

        let spark = sparkline(e, 52);
        assert!(spark.contains(r#"class="v-accepted""#));
        assert!(!spark.contains(r#"class="v-regression""#));

        let (heat, _) = heatmap(&[HeatmapRow::endpoint(e, "e.html".into())], 53, "h");
        assert!(
            heat.contains(r#"<td class="h-accepted""#),
            "accepted weeks in the heatmap"
        );
        assert!(!heat.contains(r#"<td class="h-regression""#));
        assert!(heat.contains(">accepted change</span>"), "legend entry");

        // Unlabelled, the same runs are regressions.
        let analysis = analyse(&archive(&step_series(), None), vec![]);
        let e = &analysis.endpoints[0];
        assert!(
            sparkline(e, 52).contains(r#"class="v-regression""#)
                && !sparkline(e, 52).contains("v-accepted")
        );
    }

    /// The texts of an SVG's `<text class="t-label">`s.
    fn labels(svg: &str) -> Vec<String> {
        svg.split(r#"<text class="t-label""#)
            .skip(1)
            .map(|t| t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()].to_string())
            .collect()
    }

    #[test]
    fn a_label_is_whole_when_there_is_room_and_one_change_is_one_label() {
        let analysis = analyse(&archive(&step_series(), None), vec![]);
        let e = &analysis.endpoints[0];
        let host = |run: usize, from: &str, to: &str| EnvironmentChange {
            run: format!("run-{run:03}"),
            // Two changes an hour apart: the same place on the axis.
            started_at: e.points[7].started_at + Duration::minutes(run as i64 - 7),
            previous_run: "run-006".into(),
            changes: vec![SettingChange {
                key: "host".into(),
                before: Some(from.into()),
                after: Some(to.into()),
            }],
        };
        let environment = [host(7, "perf-01", "perf-03"), host(8, "perf-03", "perf-01")];
        let note = Annotation {
            at: e.points[30].started_at,
            run: Some("run-030".into()),
            text: "incident: batch job on the shared host perf-shared-03".into(),
            link: None,
            endpoints: vec![],
            source: "annotations/a.toml:1".into(),
        };
        let notes = [&note];
        let infos = infos(e);
        let svg = trend_chart(&input(e, &infos, &environment, &notes), "c");
        let all = labels(&svg);
        // The annotation's whole text (it was cut to 28 characters).
        assert!(
            all.iter()
                .any(|l| l == "incident: batch job on the shared host perf-shared-03"),
            "{all:?}"
        );
        // "env: host" once, saying it is two changes, not drawn twice.
        let env: Vec<&String> = all.iter().filter(|l| l.starts_with("env:")).collect();
        assert_eq!(env, ["env: host ×2"], "{all:?}");
        // Both changes are in its tooltip.
        assert!(svg.contains("perf-01 → perf-03") && svg.contains("perf-03 → perf-01"));
    }

    #[test]
    fn labels_with_no_room_for_their_whole_text_fall_back_to_a_short_one() {
        let analysis = analyse(&archive(&step_series(), None), vec![]);
        let e = &analysis.endpoints[0];
        // Six long annotations five runs apart: the rows above the plot
        // hold two of them whole, four short.
        let notes: Vec<Annotation> = (10..40)
            .step_by(5)
            .map(|i| Annotation {
                at: e.points[i].started_at,
                run: None,
                text: format!("annotation number {i} with a rather long text to it"),
                link: None,
                endpoints: vec![],
                source: "annotations/a.toml:1".into(),
            })
            .collect();
        let refs: Vec<&Annotation> = notes.iter().collect();
        let infos = infos(e);
        let svg = trend_chart(&input(e, &infos, &[], &refs), "c");
        let all = labels(&svg);
        assert!(all.len() >= 4, "{all:?}");
        assert!(all.iter().all(|l| l.ends_with('…')), "{all:?}");
        // Placed labels never share a row and a stretch of the axis.
        let placed: Vec<(f64, f64, f64)> = svg
            .split(r#"<text class="t-label""#)
            .skip(1)
            .map(|t| {
                let x: f64 = attr(t, "x").parse().unwrap();
                let y: f64 = attr(t, "y").parse().unwrap();
                let text = &t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()];
                (x, y, x + text_width(text, 13.0 * 1.1))
            })
            .collect();
        for (i, a) in placed.iter().enumerate() {
            for b in &placed[i + 1..] {
                assert!(
                    a.1 != b.1 || a.2 <= b.0 || b.2 <= a.0,
                    "{a:?} and {b:?} overlap"
                );
            }
        }
    }

    #[test]
    fn runs_of_one_day_get_hours_on_the_axis_and_times_in_their_labels() {
        let mut archive = archive(&step_series(), None);
        // Every run on one day, ten minutes apart.
        let day = chrono::Utc.with_ymd_and_hms(2026, 12, 1, 9, 0, 0).unwrap();
        for (i, r) in archive.runs.iter_mut().enumerate() {
            r.started_at = day + Duration::minutes(10 * i as i64);
        }
        let analysis = analyse(&archive, vec![]);
        let e = &analysis.endpoints[0];
        let infos = infos(e);
        let svg = trend_chart(&input(e, &infos, &[], &[]), "c");
        let ticks = &svg[svg.find(r#"<g class="t-xticks">"#).unwrap()..];
        let ticks = &ticks[..ticks.find("</g>").unwrap()];
        assert!(ticks.contains(">Dec 1 09:00</text>"), "{ticks}");
        assert!(ticks.contains(">10:00</text>"), "{ticks}");
        // The change point says its time of day.
        let all = labels(&svg);
        assert!(
            all.iter().any(|l| l.starts_with("+50% from 2026-12-01 ")),
            "{all:?}"
        );
    }
}
