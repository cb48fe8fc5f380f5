//! The overview's calendar heatmap: endpoints × ISO weeks.

use std::fmt::Write as _;

use super::ellipsis;
use crate::analyse::EndpointAnalysis;
use crate::render::display::{DisplayState, display_state};
use crate::render::xml_escape;

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
    crate::calendar::week_monday(t.date_naive())
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
            let head = format!(
                "{} · {} (week of {})",
                e.name,
                crate::calendar::iso_week_label(*w),
                crate::calendar::date(*w)
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
        crate::calendar::date(first_week),
        crate::calendar::date(last_week + chrono::Duration::days(6))
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
