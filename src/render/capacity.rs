//! Capacity pages (`capacity/<endpoint-slug>.html`, docs/capacity.md): the
//! latest step-load run's charts (throughput vs load, p99 vs throughput
//! with the objective and the knee, CPU vs load when resources were
//! recorded), the knee history with capacity regressions, the recommended
//! limit with its reasoning, and a table of steps per run.

use std::fmt::Write as _;

use askama::Template;
use chrono::{DateTime, Utc};
use plotters::prelude::*;
use serde::Serialize;

use super::charts::{IMPROVEMENT, REGRESSION};
use super::{Site, Slugs, format as f, xml_escape};
use crate::analyse::Analysis;
use crate::analyse::capacity::{CapacityPoint, EndpointCapacity, number};
use crate::analyse::verdict::CapacityVerdict;
use crate::error::Error;

/// Runs whose step tables the page shows (newest first); older runs' steps
/// are in `data/analysis.json`, so that years of history keep the page light.
pub const STEP_TABLE_RUNS: usize = 12;

/// The p99 chart's axis ends at this multiple of the objective.
const LATENCY_CAP: f64 = 4.0;

const LINE: RGBColor = RGBColor(0x1f, 0x4e, 0x79);
const GREY: RGBColor = RGBColor(0x44, 0x44, 0x44);
const OBJECTIVE: RGBColor = RGBColor(0xe0, 0x7b, 0x00);
const CPU: RGBColor = RGBColor(0x6a, 0x1b, 0x9a);

fn hex(c: RGBColor) -> String {
    format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
}

/// One line of an x–y chart.
struct Line {
    points: Vec<(f64, f64)>,
    colour: RGBColor,
    dashed: bool,
    /// Draw a dot at every point.
    dots: bool,
}

/// A marked point: drawn as a ring, with a native tooltip.
struct Mark {
    x: f64,
    y: f64,
    colour: RGBColor,
    title: String,
}

struct XyChart<'a> {
    id: &'a str,
    title: String,
    desc: String,
    x_desc: &'a str,
    y_desc: &'a str,
    lines: Vec<Line>,
    marks: Vec<Mark>,
    /// x values are days since this time: label them as dates.
    dates_from: Option<DateTime<Utc>>,
    /// The y axis ends here at most; higher values are drawn at the top
    /// edge (one saturated step's p99 would otherwise flatten the rest).
    y_cap: Option<f64>,
}

/// A small x–y chart: plotters draws the axes; lines and marks are
/// written by hand (compact paths, as in the trend chart).
fn xy_chart(c: &XyChart<'_>) -> Result<String, Error> {
    const W: u32 = 640;
    const H: u32 = 320;
    let finite = |v: f64| v.is_finite();
    let all = c
        .lines
        .iter()
        .flat_map(|l| l.points.iter().copied())
        .chain(c.marks.iter().map(|m| (m.x, m.y)))
        .filter(|(x, y)| finite(*x) && finite(*y));
    let (x_max, y_max) = all.fold((0.0f64, 0.0f64), |(a, b), (x, y)| (a.max(x), b.max(y)));
    let x_max = (x_max * 1.08).clamp(1.0, f64::MAX / 4.0);
    let y_max = (y_max * 1.12)
        .min(c.y_cap.unwrap_or(f64::MAX))
        .clamp(1.0, f64::MAX / 4.0);
    let mut svg = String::new();
    let mut marks = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (W, H)).into_drawing_area();
        let e = |e: DrawingAreaErrorKind<_>| Error::Internal(format!("drawing {}: {e:?}", c.id));
        root.fill(&WHITE).map_err(e)?;
        let mut chart = ChartBuilder::on(&root)
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d(0f64..x_max, 0f64..y_max)
            .map_err(e)?;
        let date_label = |x: &f64| match c.dates_from {
            Some(t) => crate::calendar::date(
                (t + chrono::Duration::seconds((x * 86_400.0) as i64)).date_naive(),
            ),
            None => number(*x),
        };
        chart
            .configure_mesh()
            .x_labels(6)
            .y_labels(6)
            .x_label_formatter(&date_label)
            .y_label_formatter(&|y| number(*y))
            .x_desc(c.x_desc)
            .y_desc(c.y_desc)
            .label_style(("sans-serif", 14))
            .axis_desc_style(("sans-serif", 14))
            .max_light_lines(1)
            .light_line_style(RGBColor(0xf0, 0xf0, 0xf0))
            .bold_line_style(RGBColor(0xdd, 0xdd, 0xdd))
            .draw()
            .map_err(e)?;
        let px = |x: f64, y: f64| chart.backend_coord(&(x, y.min(y_max)));
        for line in &c.lines {
            let pts: Vec<(f64, f64)> = line
                .points
                .iter()
                .copied()
                .filter(|(x, y)| finite(*x) && finite(*y))
                .collect();
            let coords: Vec<String> = pts
                .iter()
                .map(|&(x, y)| {
                    let (x, y) = px(x, y);
                    format!("{x},{y}")
                })
                .collect();
            if coords.len() > 1 {
                let _ = write!(
                    marks,
                    r#"<polyline points="{}" stroke="{}" stroke-width="2"{} fill="none"/>"#,
                    coords.join(" "),
                    hex(line.colour),
                    if line.dashed {
                        r#" stroke-dasharray="6 4""#
                    } else {
                        ""
                    }
                );
            }
            if line.dots {
                let mut d = String::new();
                for &(x, y) in &pts {
                    let (x, y) = px(x, y);
                    let _ = write!(d, "M{x} {y}h0");
                }
                let _ = write!(
                    marks,
                    r#"<path d="{d}" stroke="{}" stroke-width="7" stroke-linecap="round" fill="none"/>"#,
                    hex(line.colour)
                );
            }
        }
        for m in &c.marks {
            if !(finite(m.x) && finite(m.y)) {
                continue;
            }
            let (x, y) = px(m.x, m.y);
            let _ = write!(
                marks,
                r##"<circle cx="{x}" cy="{y}" r="8" fill="none" stroke="{}" stroke-width="3"><title>{}</title></circle>"##,
                hex(m.colour),
                xml_escape(&m.title)
            );
        }
        root.present().map_err(e)?;
    }
    Ok(super::charts::finish_svg(
        svg, c.id, &c.title, &c.desc, &marks,
    ))
}

/// Throughput against load for one run, the knee ringed.
fn throughput_chart(e: &EndpointCapacity, p: &CapacityPoint, id: &str) -> Result<String, Error> {
    let s = &p.series;
    let unit = s.unit.label();
    let knee = p
        .knee
        .knee_step
        .and_then(|n| s.steps.iter().find(|st| st.number == n));
    xy_chart(&XyChart {
        id,
        title: format!("{}: throughput against load, run {}", e.name, p.run),
        desc: format!(
            "Each dot is one step's throughput after settling; the ring marks the knee. {} steps.",
            s.steps.len()
        ),
        x_desc: if unit == "load" { "load" } else { unit },
        y_desc: "throughput (req/s)",
        lines: vec![Line {
            points: s
                .steps
                .iter()
                .map(|st| (st.load, st.throughput_rps))
                .collect(),
            colour: LINE,
            dashed: false,
            dots: true,
        }],
        marks: knee
            .map(|k| Mark {
                x: k.load,
                y: k.throughput_rps,
                colour: IMPROVEMENT,
                title: format!(
                    "knee: {} req/s at {} {unit}",
                    number(k.throughput_rps),
                    number(k.load)
                ),
            })
            .into_iter()
            .collect(),
        dates_from: None,
        y_cap: None,
    })
}

/// p99 against throughput for one run, with the objective line, the knee
/// and the first sustained break ringed.
fn latency_chart(e: &EndpointCapacity, p: &CapacityPoint, id: &str) -> Result<String, Error> {
    let s = &p.series;
    let xs: Vec<f64> = s.steps.iter().map(|st| st.throughput_rps).collect();
    let x_end = xs.iter().copied().fold(0.0, f64::max) * 1.05;
    let mut marks = Vec::new();
    for (n, colour, what) in [
        (p.knee.knee_step, IMPROVEMENT, "knee"),
        (p.knee.break_step, REGRESSION, "first sustained break"),
    ] {
        if let Some(st) = n.and_then(|n| s.steps.iter().find(|st| st.number == n))
            && let Some(p99) = st.p99_ms
        {
            marks.push(Mark {
                x: st.throughput_rps,
                y: p99,
                colour,
                title: format!(
                    "{what}: step {} — {} req/s, p99 {} ms",
                    st.number,
                    number(st.throughput_rps),
                    f::ms(p99)
                ),
            });
        }
    }
    xy_chart(&XyChart {
        id,
        title: format!("{}: p99 against throughput, run {}", e.name, p.run),
        desc: format!(
            "Each dot is one step's p99 after settling, at its throughput; the dashed line is the {} ms objective; \
             the green ring marks the knee, the red ring the first sustained break. The axis ends at {} × the objective: \
             higher p99s are drawn at the top edge.",
            f::ms(e.objective.p99_ms),
            LATENCY_CAP
        ),
        x_desc: "throughput (req/s)",
        y_desc: "p99 latency (ms)",
        lines: vec![
            Line {
                points: s
                    .steps
                    .iter()
                    .filter_map(|st| Some((st.throughput_rps, st.p99_ms?)))
                    .collect(),
                colour: LINE,
                dashed: false,
                dots: true,
            },
            Line {
                points: vec![(0.0, e.objective.p99_ms), (x_end, e.objective.p99_ms)],
                colour: OBJECTIVE,
                dashed: true,
                dots: false,
            },
        ],
        marks,
        dates_from: None,
        y_cap: Some(e.objective.p99_ms * LATENCY_CAP),
    })
}

/// CPU % against load for one run (only when resources were joined).
fn cpu_chart(e: &EndpointCapacity, p: &CapacityPoint, id: &str) -> Result<Option<String>, Error> {
    let s = &p.series;
    let points: Vec<(f64, f64)> = s
        .steps
        .iter()
        .filter_map(|st| Some((st.load, st.cpu_pct?)))
        .collect();
    if points.is_empty() {
        return Ok(None);
    }
    let unit = s.unit.label();
    xy_chart(&XyChart {
        id,
        title: format!("{}: CPU against load, run {}", e.name, p.run),
        desc: "Each dot is the mean CPU % of the resource readings within one step's window."
            .into(),
        x_desc: if unit == "load" { "load" } else { unit },
        y_desc: "CPU (%)",
        lines: vec![Line {
            points,
            colour: CPU,
            dashed: false,
            dots: true,
        }],
        marks: Vec::new(),
        dates_from: None,
        y_cap: None,
    })
    .map(Some)
}

/// The knee of every run, the baseline and the regression line, with
/// capacity regressions ringed red.
fn history_chart(e: &EndpointCapacity, id: &str) -> Result<String, Error> {
    let t0 = e.runs.first().map(|p| p.started_at);
    let day = |p: &CapacityPoint| {
        t0.map(|t| (p.started_at - t).num_seconds() as f64 / 86_400.0)
            .unwrap_or(0.0)
    };
    let drop = e.regression_drop;
    let knees: Vec<(f64, f64)> = e
        .runs
        .iter()
        .filter_map(|p| Some((day(p), p.knee.knee_rps?)))
        .collect();
    let baseline: Vec<(f64, f64)> = e
        .runs
        .iter()
        .filter_map(|p| Some((day(p), p.baseline_knee_rps?)))
        .collect();
    let line: Vec<(f64, f64)> = baseline
        .iter()
        .map(|&(x, b)| (x, b * (1.0 - drop)))
        .collect();
    let marks = e
        .runs
        .iter()
        .filter(|p| p.verdict == CapacityVerdict::Regression)
        .map(|p| Mark {
            x: day(p),
            y: p.knee.knee_rps.unwrap_or(0.0),
            colour: REGRESSION,
            title: format!(
                "capacity regression in run {}: knee {} req/s against a baseline of {} req/s",
                p.run,
                p.knee.knee_rps.map(number).unwrap_or_else(|| "none".into()),
                p.baseline_knee_rps.map(number).unwrap_or_default()
            ),
        })
        .collect();
    xy_chart(&XyChart {
        id,
        title: format!("{}: knee per step-load run", e.name),
        desc: format!(
            "Blue: each run's knee (req/s). Grey: the baseline (median of up to the last earlier accepted knees). \
             Dashed orange: the regression line, baseline × (1 − {}). Red rings: capacity regressions. {} runs.",
            pct(drop),
            e.runs.len()
        ),
        x_desc: "run date (UTC)",
        y_desc: "knee (req/s)",
        lines: vec![
            Line {
                points: knees,
                colour: LINE,
                dashed: false,
                dots: true,
            },
            Line {
                points: baseline,
                colour: GREY,
                dashed: false,
                dots: false,
            },
            Line {
                points: line,
                colour: OBJECTIVE,
                dashed: true,
                dots: false,
            },
        ],
        marks,
        dates_from: t0,
        y_cap: None,
    })
}

fn pct(v: f64) -> String {
    format!("{}%", number(v * 100.0))
}

pub struct StepRow {
    pub number: u32,
    pub label: String,
    pub load: String,
    pub window: String,
    pub count: u64,
    pub throughput: String,
    pub p50: String,
    pub p99: String,
    pub errors: String,
    pub concurrency: String,
    pub cpu: String,
    pub memory: String,
    /// `knee`, `break`, `noise`, `meets`, `misses`.
    pub role: &'static str,
    pub why: String,
}

pub struct RunRow {
    pub run: String,
    pub run_href: Option<String>,
    pub date: String,
    pub release: String,
    pub source: String,
    pub knee: String,
    pub limit: String,
    pub baseline: String,
    pub ratio: String,
    pub verdict: &'static str,
    pub reasoning: String,
    pub steps: Vec<StepRow>,
    pub resources: Option<String>,
}

#[derive(Template)]
#[template(path = "capacity.html")]
pub struct CapacityPage {
    pub root: &'static str,
    pub name: String,
    pub id: String,
    pub endpoint_href: Option<String>,
    pub objective: String,
    pub latest: Option<RunRow>,
    pub throughput_chart: String,
    pub latency_chart: String,
    pub cpu_chart: Option<String>,
    pub history_chart: String,
    pub rows: Vec<RunRow>,
    /// How many of `rows` (newest first) get their step table.
    pub step_table_runs: usize,
    pub settings_line: String,
}

/// A row of the overview's capacity table.
#[derive(Debug, Clone, Serialize)]
pub struct CapacitySummary {
    pub name: String,
    pub href: String,
    pub run: String,
    pub knee: String,
    pub limit: String,
    pub verdict: &'static str,
}

fn run_row(p: &CapacityPoint, slugs: &Slugs) -> RunRow {
    let unit = p.series.unit.label();
    let steps = p
        .series
        .steps
        .iter()
        .zip(&p.knee.checks)
        .map(|(st, check)| StepRow {
            number: st.number,
            label: st.label.clone().unwrap_or_default(),
            load: format!("{} {unit}", number(st.load)),
            window: format!(
                "{:.0}–{:.0} s",
                st.start_s + st.duration_s - st.window_s,
                st.start_s + st.duration_s
            ),
            count: st.count,
            throughput: number(st.throughput_rps),
            p50: f::opt_ms(st.p50_ms),
            p99: f::opt_ms(st.p99_ms),
            errors: f::percent(Some(st.error_rate)),
            concurrency: st.concurrency.map(number).unwrap_or_else(|| "–".into()),
            cpu: st
                .cpu_pct
                .map(|c| format!("{}%", number(c)))
                .unwrap_or_else(|| "–".into()),
            memory: st.memory.map(number).unwrap_or_else(|| "–".into()),
            role: if p.knee.knee_step == Some(st.number) {
                "knee"
            } else if p.knee.break_step == Some(st.number) {
                "break"
            } else if check.noise {
                "noise"
            } else if check.meets {
                "meets"
            } else {
                "misses"
            },
            why: check.reasons.join(", "),
        })
        .collect();
    RunRow {
        run: p.run.clone(),
        run_href: slugs.runs.get(&p.run).map(|s| format!("../runs/{s}.html")),
        date: f::date(p.started_at),
        release: p.release.clone().unwrap_or_default(),
        source: p.series.source.clone(),
        knee: p.knee.knee_rps.map(number).unwrap_or_else(|| "–".into()),
        limit: p.knee.limit_rps.map(number).unwrap_or_else(|| "–".into()),
        baseline: p
            .baseline_knee_rps
            .map(number)
            .unwrap_or_else(|| "–".into()),
        ratio: f::ratio(p.ratio),
        verdict: p.verdict.as_str(),
        reasoning: p.knee.reasoning.clone(),
        steps,
        resources: p.series.resources.clone(),
    }
}

/// The page path of an endpoint's capacity page.
pub fn capacity_href(slugs: &Slugs, id: &str) -> String {
    format!("capacity/{}.html", slugs.endpoint(id))
}

/// Renders every capacity page; returns the overview rows.
pub(super) fn render_capacity_pages(
    analysis: &Analysis,
    slugs: &Slugs,
    site: &mut Site,
    settings_line: &str,
) -> Result<Vec<CapacitySummary>, Error> {
    let mut summaries = Vec::new();
    for e in &analysis.capacity {
        let Some(latest) = e.latest() else { continue };
        let cpu_chart = cpu_chart(e, latest, "capacity-cpu")?;
        let page = CapacityPage {
            root: "../",
            name: e.name.clone(),
            id: e.id.clone(),
            endpoint_href: analysis
                .endpoints
                .iter()
                .any(|x| x.id == e.id)
                .then(|| format!("../endpoints/{}.html", slugs.endpoint(&e.id))),
            objective: format!(
                "Objective: p99 ≤ {} ms and errors < {} per step; limit = knee × (1 − {}); a capacity regression is a knee \
                 below the baseline knee × (1 − {}).",
                f::ms(e.objective.p99_ms),
                pct(e.objective.max_error_rate),
                pct(e.objective.headroom),
                pct(e.regression_drop)
            ),
            latest: Some(run_row(latest, slugs)),
            throughput_chart: throughput_chart(e, latest, "capacity-throughput")?,
            latency_chart: latency_chart(e, latest, "capacity-latency")?,
            cpu_chart,
            history_chart: history_chart(e, "capacity-history")?,
            rows: e.runs.iter().rev().map(|p| run_row(p, slugs)).collect(),
            step_table_runs: STEP_TABLE_RUNS,
            settings_line: settings_line.to_string(),
        };
        let html = page.render().map_err(|err| {
            Error::Internal(format!("rendering capacity page of {}: {err}", e.id))
        })?;
        site.insert(&capacity_href(slugs, &e.id), html.into_bytes());
        summaries.push(CapacitySummary {
            name: e.name.clone(),
            href: capacity_href(slugs, &e.id),
            run: latest.run.clone(),
            knee: latest
                .knee
                .knee_rps
                .map(number)
                .unwrap_or_else(|| "–".into()),
            limit: latest
                .knee
                .limit_rps
                .map(number)
                .unwrap_or_else(|| "–".into()),
            verdict: latest.verdict.as_str(),
        });
    }
    Ok(summaries)
}
