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
    /// Drawn across the page rather than in a pair: a wider view box, so
    /// that its text is the size of its neighbours' (18 px against their
    /// 10.7 px until issue 34).
    pub wide: bool,
}

/// Axis text in plotters' units (it writes 0.806 × this as the font
/// size): 13.7 SVG units, which a 640-unit chart in half a 1280-pixel
/// window (about 600 px) shows at about 13 px, and a phone (560 px at
/// least) at 12 px.
const LABEL_SIZE: f64 = 17.0;

/// How x values (days since `from`) are labelled on a time axis: dates,
/// or times of day when the runs are days or hours apart (a day of runs
/// had the same date written under every tick).
fn time_format(span_days: f64) -> &'static str {
    if span_days < 1.5 {
        "%H:%M"
    } else if span_days < 10.0 {
        "%m-%d %H:%M"
    } else {
        "%Y-%m-%d"
    }
}

/// A small x–y chart: plotters draws the axes; lines and marks are
/// written by hand (compact paths, as in the trend chart).
pub fn xy_chart(c: &XyChart<'_>) -> Result<String, Error> {
    let (w, h): (u32, u32) = if c.wide { (1100, 340) } else { (640, 320) };
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
    let (x_min, x_max, y_max) = all.fold((f64::INFINITY, 0.0f64, 0.0f64), |(lo, a, b), (x, y)| {
        (lo.min(x), a.max(x), b.max(y))
    });
    // A time axis spans its runs with a little room each side (runs of one
    // day were squeezed into 5 % of an axis that started at 0 and was at
    // least a day long); other axes start at 0.
    let (x_lo, x_hi) = match c.dates_from {
        Some(_) if x_min.is_finite() => {
            let pad = ((x_max - x_min) * 0.05).max(5.0 / 1440.0);
            (x_min - pad, x_max + pad)
        }
        _ => (0.0, (x_max * 1.08).clamp(1.0, f64::MAX / 4.0)),
    };
    let x_span = x_hi - x_lo;
    // Within a few days the axis counts hours, so that its ticks fall on
    // round hours (in days they fell at 13:12, 14:24, …).
    let unit = if c.dates_from.is_some() && x_span < 3.0 {
        24.0
    } else {
        1.0
    };
    let y_max = (y_max * 1.12)
        .min(c.y_cap.unwrap_or(f64::MAX))
        .clamp(1.0, f64::MAX / 4.0);
    let mut svg = String::new();
    let mut marks = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (w, h)).into_drawing_area();
        let e = |e: DrawingAreaErrorKind<_>| Error::Internal(format!("drawing {}: {e:?}", c.id));
        root.fill(&WHITE).map_err(e)?;
        let mut chart = ChartBuilder::on(&root)
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d(x_lo * unit..x_hi * unit, 0f64..y_max)
            .map_err(e)?;
        let format = time_format(x_span);
        let date_label = |x: &f64| match c.dates_from {
            Some(t) => (t + chrono::Duration::seconds((x / unit * 86_400.0).round() as i64))
                .format(format)
                .to_string(),
            None => number(*x),
        };
        // With times of day, the axis name says the day.
        let x_desc = match c.dates_from {
            Some(t) if format == "%H:%M" => format!(
                "{} (UTC), {}",
                c.x_desc.trim_end_matches(" (UTC)").replace("date", "time"),
                crate::calendar::date(
                    (t + chrono::Duration::seconds(((x_lo + x_hi) / 2.0 * 86_400.0) as i64))
                        .date_naive()
                )
            ),
            _ => c.x_desc.to_string(),
        };
        chart
            .configure_mesh()
            .x_labels(6)
            .y_labels(6)
            .x_label_formatter(&date_label)
            .y_label_formatter(&|y| number(*y))
            .x_desc(x_desc)
            .y_desc(c.y_desc)
            .label_style(("sans-serif", LABEL_SIZE))
            .axis_desc_style(("sans-serif", LABEL_SIZE))
            .max_light_lines(1)
            .light_line_style(super::GRID_LIGHT)
            .bold_line_style(super::GRID_BOLD)
            .draw()
            .map_err(e)?;
        let px = |x: f64, y: f64| chart.backend_coord(&(x * unit, y.min(y_max)));
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

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn chart(xs: &[f64]) -> String {
        xy_chart(&XyChart {
            id: "t",
            title: "knees".into(),
            desc: "d".into(),
            x_desc: "run date (UTC)",
            y_desc: "knee (req/s)",
            lines: vec![Line {
                points: xs.iter().map(|&x| (x, 40.0)).collect(),
                colour: palette_rgb(),
                dashed: false,
                dots: true,
            }],
            marks: vec![],
            bands: vec![],
            dates_from: Some(Utc.with_ymd_and_hms(2026, 12, 1, 0, 0, 0).unwrap()),
            y_cap: None,
            wide: true,
        })
        .unwrap()
    }

    fn palette_rgb() -> RGBColor {
        crate::render::palette::MEDIAN.rgb()
    }

    /// The x of each dot of the line.
    fn dots(svg: &str) -> Vec<f64> {
        let d = &svg[svg.find(r#"<path d="M"#).unwrap() + 9..];
        let d = &d[..d.find('"').unwrap()];
        d.split('M')
            .filter(|p| !p.is_empty())
            .map(|p| p.split(' ').next().unwrap().parse().unwrap())
            .collect()
    }

    #[test]
    fn runs_of_one_day_spread_over_the_axis_labelled_by_their_time() {
        // Four runs between 14:00 and 16:00: the axis reads times of day,
        // says the day once, and the runs fill the plot (they were squeezed
        // into 5 % of it, under four "2026-12-01" labels).
        let hours = [14.0, 14.5, 15.2, 16.0].map(|h| h / 24.0);
        let svg = chart(&hours);
        assert!(svg.contains("time (UTC), 2026-12-01"), "the day, once");
        assert_eq!(svg.matches("2026-12-01").count(), 1, "{svg}");
        assert!(svg.contains("15:00"), "{svg}");
        let xs = dots(&svg);
        let (w, left) = (1100.0, 64.0);
        assert!(xs[3] - xs[0] > 0.7 * (w - left), "{xs:?}");
        // Months of runs: dates.
        let months = chart(&[0.0, 40.0, 90.0]);
        assert!(
            months.contains("2026-12-01") && months.contains("2027-"),
            "dates"
        );
    }

    #[test]
    fn axis_text_is_thirteen_units_and_a_half() {
        let svg = chart(&[0.0, 1.0]);
        assert!(svg.contains(r#"font-size="13.7"#), "{svg}");
    }
}
