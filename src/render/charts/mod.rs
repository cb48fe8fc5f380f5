//! Charts as SVG strings, one module per kind of chart. What they share
//! lives here: the chart colours, the wrapper that makes a plotters SVG
//! responsive and accessible, and small text helpers.
//!
//! Plotters draws axes (no system fonts: text is left to the browser);
//! perfdash then adds what plotters has no notion of: a `<title>`/`<desc>`
//! for screen readers and overlays of linked, titled points so that every
//! run can be hovered (native tooltip, no JavaScript needed) and clicked.

pub mod axis;
pub mod capacity;
pub mod dotplot;
pub mod evidence;
pub mod heatmap;
pub mod mini_trend;
pub mod release;
pub mod sparkline;
pub mod trend;
pub mod xy;

use plotters::prelude::RGBColor;

use super::{palette, xml_escape};

pub use heatmap::{HeatmapRow, HeatmapRows, heatmap, heatmap_of};
pub use sparkline::sparkline;
pub use trend::{PointInfo, TrendInput, TrendView, trend_chart, trend_views};

// Colours come from the one palette (render/palette.rs), which also
// generates the stylesheet's variables.
pub const REGRESSION: RGBColor = palette::REGRESSION.rgb();
pub const IMPROVEMENT: RGBColor = palette::IMPROVEMENT.rgb();
/// Runs of a change triaged `accepted`: neutral, not alarming.
pub const ACCEPTED: RGBColor = palette::ACCEPTED.rgb();
/// Change points (level shifts): solid purple marker and level segments.
pub const CHANGE_POINT: RGBColor = palette::CHANGE_POINT.rgb();
/// Environment changes: dotted teal marker, unlike every other line.
pub const ENVIRONMENT: RGBColor = palette::ENVIRONMENT.rgb();
/// Plotters' grid lines.
pub(crate) const GRID_LIGHT: RGBColor = palette::GRID_LIGHT.rgb();
pub(crate) const GRID_BOLD: RGBColor = palette::GRID_BOLD.rgb();

pub(crate) fn hex(c: RGBColor) -> String {
    format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
}

/// Makes a plotters SVG responsive and accessible: drops the fixed size
/// (the viewBox stays), adds `role="img"`, a `<title>` and a `<desc>`, and
/// appends `extra` markup at the end.
pub(crate) fn finish_svg(svg: String, id: &str, title: &str, desc: &str, extra: &str) -> String {
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

/// Shortens a label to `max` characters with an ellipsis.
pub(super) fn ellipsis(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut out: String = s.chars().take(max - 1).collect();
        out.push('…');
        out
    }
}
