//! A small x–y chart (plotters draws the axes; lines and marks are
//! written by hand), used by the capacity pages.

use std::fmt::Write as _;

use chrono::{DateTime, Utc};
use plotters::prelude::*;

use super::{finish_svg, hex};
use crate::analyse::capacity::number;
use crate::error::Error;
use crate::render::xml_escape;

/// One line of an x–y chart.
pub struct Line {
    pub points: Vec<(f64, f64)>,
    pub colour: RGBColor,
    pub dashed: bool,
    /// Draw a dot at every point.
    pub dots: bool,
}

/// A marked point: drawn as a ring (or a square, so that two kinds of
/// mark differ in shape as well as colour), with a native tooltip.
pub struct Mark {
    pub x: f64,
    pub y: f64,
    pub colour: RGBColor,
    pub title: String,
    pub square: bool,
}

/// A range of x (a vertical band) or of y (a horizontal one) with a line
/// at one value in it and a label: the recommended limit over recent runs.
pub struct Band {
    /// Across x (true) or across y.
    pub vertical: bool,
    pub from: f64,
    pub to: f64,
    pub at: f64,
    pub label: String,
    pub colour: RGBColor,
}

pub struct XyChart<'a> {
    pub id: &'a str,
    pub title: String,
    pub desc: String,
    pub x_desc: &'a str,
    pub y_desc: &'a str,
    pub lines: Vec<Line>,
    pub marks: Vec<Mark>,
    pub bands: Vec<Band>,
    /// x values are days since this time: label them as dates.
    pub dates_from: Option<DateTime<Utc>>,
    /// The y axis ends here at most; higher values are drawn at the top
    /// edge (one saturated step's p99 would otherwise flatten the rest).
    pub y_cap: Option<f64>,
}

/// A small x–y chart: plotters draws the axes; lines and marks are
/// written by hand (compact paths, as in the trend chart).
pub fn xy_chart(c: &XyChart<'_>) -> Result<String, Error> {
    const W: u32 = 640;
    const H: u32 = 320;
    let finite = |v: f64| v.is_finite();
    let all = c
        .lines
        .iter()
        .flat_map(|l| l.points.iter().copied())
        .chain(c.marks.iter().map(|m| (m.x, m.y)))
        .chain(
            c.bands
                .iter()
                .map(|b| if b.vertical { (b.to, 0.0) } else { (0.0, b.to) }),
        )
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
            .light_line_style(super::GRID_LIGHT)
            .bold_line_style(super::GRID_BOLD)
            .draw()
            .map_err(e)?;
        let px = |x: f64, y: f64| chart.backend_coord(&(x, y.min(y_max)));
        let (xs, ys) = chart.plotting_area().get_pixel_range();
        marks.push_str(&draw_bands(
            &c.bands,
            &px,
            (xs.start, xs.end),
            (ys.start, ys.end),
        ));
        marks.push_str(&draw_lines(&c.lines, &px));
        marks.push_str(&draw_marks(&c.marks, &px));
        root.present().map_err(e)?;
    }
    Ok(finish_svg(svg, c.id, &c.title, &c.desc, &marks))
}

type Px<'a> = &'a dyn Fn(f64, f64) -> (i32, i32);

fn draw_lines(lines: &[Line], px: Px) -> String {
    let finite = |v: f64| v.is_finite();
    let mut s = String::new();
    for line in lines {
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
                s,
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
                s,
                r#"<path d="{d}" stroke="{}" stroke-width="7" stroke-linecap="round" fill="none"/>"#,
                hex(line.colour)
            );
        }
    }
    s
}

fn draw_marks(marks: &[Mark], px: Px) -> String {
    let mut s = String::new();
    for m in marks.iter().filter(|m| m.x.is_finite() && m.y.is_finite()) {
        let (x, y) = px(m.x, m.y);
        let shape = if m.square {
            format!(
                r#"<rect x="{}" y="{}" width="16" height="16""#,
                x - 8,
                y - 8
            )
        } else {
            format!(r#"<circle cx="{x}" cy="{y}" r="8""#)
        };
        let _ = write!(
            s,
            r#"{shape} fill="none" stroke="{}" stroke-width="3"><title>{}</title>{}"#,
            hex(m.colour),
            xml_escape(&m.title),
            if m.square { "</rect>" } else { "</circle>" }
        );
    }
    s
}

/// Bands under the data: a translucent range, a line at its value, and
/// the label inside the plot near the line.
fn draw_bands(bands: &[Band], px: Px, xs: (i32, i32), ys: (i32, i32)) -> String {
    let mut s = String::new();
    for b in bands
        .iter()
        .filter(|b| b.from.is_finite() && b.to.is_finite() && b.at.is_finite())
    {
        let colour = hex(b.colour);
        let label = xml_escape(&b.label);
        if b.vertical {
            let (x0, _) = px(b.from, 0.0);
            let (x1, _) = px(b.to, 0.0);
            let (x, _) = px(b.at, 0.0);
            let _ = write!(
                s,
                r#"<g class="band"><title>{label}</title><rect x="{}" y="{}" width="{}" height="{}" fill="{colour}" fill-opacity="0.15"/><path d="M{x} {}V{}" stroke="{colour}" stroke-width="2"/><text x="{}" y="{}" font-size="14" fill="{colour}">{label}</text></g>"#,
                x0.min(x1),
                ys.0,
                (x1 - x0).abs().max(2),
                ys.1 - ys.0,
                ys.0,
                ys.1,
                x + 5,
                ys.0 + 16
            );
        } else {
            let (_, y0) = px(0.0, b.from);
            let (_, y1) = px(0.0, b.to);
            let (_, y) = px(0.0, b.at);
            let _ = write!(
                s,
                r#"<g class="band"><title>{label}</title><rect x="{}" y="{}" width="{}" height="{}" fill="{colour}" fill-opacity="0.15"/><path d="M{} {y}H{}" stroke="{colour}" stroke-width="2"/><text x="{}" y="{}" font-size="14" fill="{colour}">{label}</text></g>"#,
                xs.0,
                y0.min(y1),
                xs.1 - xs.0,
                (y1 - y0).abs().max(2),
                xs.0,
                xs.1,
                xs.0 + 8,
                y0.min(y1) - 5
            );
        }
    }
    s
}
