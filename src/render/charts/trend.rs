//! The endpoint trend chart: every round's p99, the run medians, the
//! baseline and the regression line, with change points and environment
//! changes marked and an overlay of linked, titled run points.

use std::fmt::Write as _;

use plotters::prelude::*;

use super::{
    ACCEPTED, CHANGE_POINT, ENVIRONMENT, IMPROVEMENT, REGRESSION, ellipsis, finish_svg, hex,
};
use crate::analyse::changepoint::{self, LevelShift};
use crate::analyse::{EndpointAnalysis, EnvironmentChange, Verdict};
use crate::error::Error;
use crate::render::display::{DisplayState, display_state};
use crate::render::{palette, xml_escape};

const MEDIAN: RGBColor = palette::MEDIAN.rgb();
const ROUND: RGBColor = palette::ROUND.rgb();
const BASELINE: RGBColor = palette::BASELINE.rgb();
const THRESHOLD: RGBColor = palette::THRESHOLD.rgb();

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
            Some(t) => crate::calendar::date(
                (t + chrono::Duration::seconds((x * SECONDS_PER_DAY) as i64)).date_naive(),
            ),
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
            .light_line_style(super::GRID_LIGHT)
            .bold_line_style(super::GRID_BOLD)
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
        crate::render::format::signed_percent(cp.change),
        crate::render::format::date(cp.started_at),
        crate::render::format::ms(cp.level_before_ms),
        crate::render::format::ms(cp.level_after_ms),
        cp.run,
        cp.direction
    )
}

/// `run X: host perf-01 → perf-03`.
fn environment_words(c: &EnvironmentChange) -> String {
    format!(
        "{} at run {}: {}",
        crate::render::format::date(c.started_at),
        c.run,
        crate::render::format::setting_changes(&c.changes)
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
            crate::render::format::signed_percent(cp.change),
            crate::render::format::date(cp.started_at)
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

#[cfg(test)]
mod tests {
    use chrono::Duration;

    use crate::render::charts::{HeatmapRow, heatmap, sparkline};

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
