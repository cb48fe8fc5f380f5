//! The capacity page's charts: throughput against load, p99 against
//! throughput, CPU against load for one run, and the knee history.

use plotters::prelude::RGBColor;

use super::xy::{Band, Line, Mark, XyChart, xy_chart};
use super::{IMPROVEMENT, REGRESSION};
use crate::analyse::capacity::{CapacityPoint, EndpointCapacity, LimitRange, number};
use crate::analyse::verdict::CapacityVerdict;
use crate::error::Error;
use crate::render::{format as f, palette};

/// The p99 chart's axis ends at this multiple of the objective.
const LATENCY_CAP: f64 = 4.0;

const LINE: RGBColor = palette::MEDIAN.rgb();
const GREY: RGBColor = palette::BASELINE.rgb();
const OBJECTIVE: RGBColor = palette::THRESHOLD.rgb();
const CPU: RGBColor = palette::CPU.rgb();
const LIMIT: RGBColor = palette::LIMIT.rgb();

/// `limit 42.3 req/s (40.0–42.6)`.
pub fn limit_words(r: &LimitRange) -> String {
    if (r.max - r.min).abs() < 1e-9 {
        format!("limit {} req/s", number(r.median))
    } else {
        format!(
            "limit {} req/s ({}–{})",
            number(r.median),
            number(r.min),
            number(r.max)
        )
    }
}

/// Throughput against load for one run, the knee ringed.
pub fn throughput_chart(
    e: &EndpointCapacity,
    p: &CapacityPoint,
    limit: Option<&LimitRange>,
    id: &str,
) -> Result<String, Error> {
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
            "Each dot is one step's throughput after settling; the ring marks the knee. {} steps.{}",
            s.steps.len(),
            limit
                .map(|l| format!(
                    " The band is the recommended {} over the recent step-load runs.",
                    limit_words(l)
                ))
                .unwrap_or_default()
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
                square: false,
            })
            .into_iter()
            .collect(),
        bands: limit_band(limit, false),
        dates_from: None,
        y_cap: None,
        wide: false,
    })
}

fn limit_band(limit: Option<&LimitRange>, vertical: bool) -> Vec<Band> {
    limit
        .map(|l| Band {
            vertical,
            from: l.min,
            to: l.max,
            at: l.median,
            label: limit_words(l),
            colour: LIMIT,
        })
        .into_iter()
        .collect()
}

/// p99 against throughput for one run, with the objective line, the knee
/// and the first sustained break ringed.
pub fn latency_chart(
    e: &EndpointCapacity,
    p: &CapacityPoint,
    limit: Option<&LimitRange>,
    id: &str,
) -> Result<String, Error> {
    let s = &p.series;
    let xs: Vec<f64> = s.steps.iter().map(|st| st.throughput_rps).collect();
    let x_end = xs.iter().copied().fold(0.0, f64::max) * 1.05;
    let mut marks = Vec::new();
    for (n, colour, what, square) in [
        (p.knee.knee_step, IMPROVEMENT, "knee", false),
        (p.knee.break_step, REGRESSION, "first sustained break", true),
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
                square,
            });
        }
    }
    xy_chart(&XyChart {
        id,
        title: format!("{}: p99 against throughput, run {}", e.name, p.run),
        desc: format!(
            "Each dot is one step's p99 after settling, at its throughput; the dashed line is the {} ms objective; \
             the green ring marks the knee, the red square the first sustained break. The axis ends at {} × the objective: \
             higher p99s are drawn at the top edge.{}",
            f::ms(e.objective.p99_ms),
            LATENCY_CAP,
            limit
                .map(|l| format!(
                    " The band is the recommended {} over the recent step-load runs.",
                    limit_words(l)
                ))
                .unwrap_or_default()
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
        bands: limit_band(limit, true),
        dates_from: None,
        y_cap: Some(e.objective.p99_ms * LATENCY_CAP),
        wide: false,
    })
}

/// CPU % against load for one run (only when resources were joined).
pub fn cpu_chart(
    e: &EndpointCapacity,
    p: &CapacityPoint,
    id: &str,
) -> Result<Option<String>, Error> {
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
        bands: Vec::new(),
        dates_from: None,
        y_cap: None,
        wide: false,
    })
    .map(Some)
}

/// The knee of every run, the baseline and the regression line, with
/// capacity regressions ringed red.
pub fn history_chart(e: &EndpointCapacity, id: &str) -> Result<String, Error> {
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
            colour: if p.accepted_change {
                super::ACCEPTED
            } else {
                REGRESSION
            },
            title: format!(
                "capacity regression{} in run {}: knee {} req/s against a baseline of {} req/s",
                if p.accepted_change { " (accepted)" } else { "" },
                p.run,
                p.knee.knee_rps.map(number).unwrap_or_else(|| "none".into()),
                p.baseline_knee_rps.map(number).unwrap_or_default()
            ),
            square: !p.accepted_change,
        })
        .collect();
    xy_chart(&XyChart {
        id,
        title: format!("{}: knee per step-load run", e.name),
        desc: format!(
            "Blue: each run's knee (req/s). Grey: the baseline (median of up to the last earlier accepted knees). \
             Dashed orange: the regression line, baseline × (1 − {}). Red squares: capacity regressions; purple rings: regressions triaged as accepted. {} runs.",
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
        bands: Vec::new(),
        dates_from: t0,
        y_cap: None,
        wide: true,
    })
}

pub fn pct(v: f64) -> String {
    format!("{}%", number(v * 100.0))
}
