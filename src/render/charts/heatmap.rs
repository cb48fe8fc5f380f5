//! The overview's calendar heatmap: endpoints × ISO weeks, as an HTML
//! table. A table, not an SVG grid: screen readers read it cell by cell
//! with its row (endpoint) and column (week) headers, it scrolls in its
//! own box on a phone with the endpoint column sticky, and each cell says
//! its verdict in words (visually hidden) and in a shape as well as a
//! colour (failed ■, regression ▲, improvement ▼, accepted ◆).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use chrono::{Datelike, Duration, NaiveDate};

use crate::analyse::{EndpointAnalysis, RunPoint};
use crate::calendar;
use crate::render::display::{DisplayState, display_state};
use crate::render::xml_escape;

/// The legend: every display state (worst first, see
/// [`DisplayState::severity`]), then "no run".
fn legend() -> Vec<(&'static str, &'static str)> {
    DisplayState::ALL
        .iter()
        .map(|s| (s.key(), s.words()))
        .chain(std::iter::once(("none", "no run")))
        .collect()
}

/// The shape drawn in a cell besides its colour.
pub fn glyph(key: &str) -> &'static str {
    match key {
        "regression" => "▲",
        "improvement" => "▼",
        "accepted" => "◆",
        // A failed run: a square, as on the trend chart and sparklines.
        "failed" => "■",
        _ => "",
    }
}

/// One heatmap row: an endpoint (or a service: its endpoints' runs
/// together), where its page is, and its history.
pub struct HeatmapRow<'a> {
    pub name: &'a str,
    /// Its runs, in any order.
    pub points: Vec<&'a RunPoint>,
    pub href: String,
}

impl<'a> HeatmapRow<'a> {
    /// The row of one endpoint.
    pub fn endpoint(endpoint: &'a EndpointAnalysis, href: String) -> HeatmapRow<'a> {
        HeatmapRow {
            name: &endpoint.name,
            points: endpoint.points.iter().collect(),
            href,
        }
    }
}

/// What a heatmap's rows are: the word in its caption and corner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeatmapRows {
    Endpoints,
    /// Each row a service: a week's cell is the worst verdict of all its
    /// endpoints' runs that week.
    Services,
}

impl HeatmapRows {
    fn noun(self) -> &'static str {
        match self {
            HeatmapRows::Endpoints => "endpoint",
            HeatmapRows::Services => "service",
        }
    }
}

/// The calendar heatmap of the overview: one row per endpoint, one column
/// per ISO week (the last `max_weeks` weeks up to the latest run), each
/// cell the worst verdict of that endpoint's runs that week, with a
/// tooltip (`title`) saying what the cell is made of. Returns the table
/// (with its legend) and how many weeks of history did not fit (shown on
/// the endpoint pages).
pub fn heatmap(rows: &[HeatmapRow], max_weeks: usize, id: &str) -> (String, usize) {
    heatmap_of(HeatmapRows::Endpoints, rows, max_weeks, id)
}

/// [`heatmap`] of endpoints or of services.
pub fn heatmap_of(
    kind: HeatmapRows,
    rows: &[HeatmapRow],
    max_weeks: usize,
    id: &str,
) -> (String, usize) {
    // A run dated 1970 or 2099 would make the window decades wide: only
    // runs whose time can be trusted place it (the page lists the others).
    let times = rows.iter().flat_map(|r| {
        r.points
            .iter()
            .filter(|p| !p.untrusted_time)
            .map(|p| p.started_at)
    });
    let (Some(first), Some(last)) = (times.clone().min(), times.max()) else {
        return (String::new(), 0);
    };
    let last_week = calendar::week_monday(last.date_naive());
    let all_weeks =
        ((last_week - calendar::week_monday(first.date_naive())).num_days() / 7 + 1) as usize;
    let shown = all_weeks.min(max_weeks.max(1));
    let first_week = last_week - Duration::weeks(shown as i64 - 1);
    let weeks: Vec<NaiveDate> = (0..shown)
        .map(|i| first_week + Duration::weeks(i as i64))
        .collect();

    let mut s = format!(
        r#"<table class="heatmap" id="{id}"><caption>Worst verdict per {} and ISO week (UTC, Monday start), {} to {}</caption>"#,
        kind.noun(),
        calendar::date(first_week),
        calendar::date(last_week + Duration::days(6)),
    );
    s.push_str(&header(kind, &weeks));
    s.push_str("<tbody>");
    for row in rows {
        s.push_str(&row_cells(kind, row, &weeks));
    }
    s.push_str("</tbody></table>");
    let _ = write!(
        s,
        r#"<p class="hm-legend"><span class="hm-legend-name">Worst verdict of the week:</span>"#
    );
    for (key, words) in legend() {
        let _ = write!(
            s,
            r#" <span class="hm-key"><span class="hm-swatch h-{key}" aria-hidden="true">{}</span>{words}</span>"#,
            glyph(key)
        );
    }
    s.push_str("</p>");
    (s, all_weeks - shown)
}

/// Week columns: each headed by its ISO week (read by screen readers),
/// with the month's name over its first week.
fn header(kind: HeatmapRows, weeks: &[NaiveDate]) -> String {
    let corner = match kind {
        HeatmapRows::Endpoints => "Endpoint",
        HeatmapRows::Services => "Service",
    };
    let mut s = format!(r#"<thead><tr><th scope="col" class="hm-corner">{corner}</th>"#);
    let mut last_month = None;
    for w in weeks {
        let month = (w.year(), w.month());
        let label = if last_month != Some(month) {
            let format = if month.1 == 1 || last_month.is_none() {
                "%b %Y"
            } else {
                "%b"
            };
            last_month = Some(month);
            w.format(format).to_string()
        } else {
            String::new()
        };
        let _ = write!(
            s,
            r#"<th scope="col" class="hm-week"><span class="vh">{}</span><span class="hm-month" aria-hidden="true">{label}</span></th>"#,
            calendar::iso_week_label(*w)
        );
    }
    s.push_str("</tr></thead>");
    s
}

fn row_cells(kind: HeatmapRows, row: &HeatmapRow, weeks: &[NaiveDate]) -> String {
    let first_week = weeks[0];
    let runs = match kind {
        HeatmapRows::Endpoints => "Runs",
        HeatmapRows::Services => "Endpoint runs",
    };
    let mut by_week: BTreeMap<NaiveDate, Vec<DisplayState>> = BTreeMap::new();
    for p in row.points.iter().filter(|p| !p.untrusted_time) {
        let w = calendar::week_monday(p.started_at.date_naive());
        if w >= first_week {
            by_week.entry(w).or_default().push(display_state(p));
        }
    }
    let mut s = format!(
        r#"<tr><th scope="row"><a href="{}">{}</a></th>"#,
        xml_escape(&row.href),
        xml_escape(row.name)
    );
    for w in weeks {
        let head = format!(
            "{} · {} (week of {})",
            row.name,
            calendar::iso_week_label(*w),
            calendar::date(*w)
        );
        let (key, words, tip) = match by_week.get(w) {
            None => ("none", "no run", format!("{head}\nNo run this week")),
            Some(vs) => {
                let worst = *vs.iter().min().expect("a week in the map has a run");
                let mut counts: BTreeMap<DisplayState, usize> = BTreeMap::new();
                for v in vs {
                    *counts.entry(*v).or_insert(0) += 1;
                }
                let detail: Vec<String> = counts
                    .iter()
                    .map(|(v, n)| format!("{n} {}", v.key()))
                    .collect();
                (
                    worst.key(),
                    worst.words(),
                    format!(
                        "{head}\nWorst: {}\n{runs}: {} ({})",
                        worst.key(),
                        vs.len(),
                        detail.join(", ")
                    ),
                )
            }
        };
        let _ = write!(
            s,
            r#"<td class="h-{key}" title="{}"><span class="vh">{words}</span>{}</td>"#,
            xml_escape(&tip),
            match glyph(key) {
                "" => String::new(),
                g => format!(r#"<span aria-hidden="true">{g}</span>"#),
            }
        );
    }
    s.push_str("</tr>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyse::analyse;
    use crate::test_support;

    /// The `<td>` of the last week of the first row.
    fn last_cell(table: &str) -> &str {
        let row = &table[table.find("<tbody>").unwrap()..];
        let row = &row[..row.find("</tr>").unwrap()];
        &row[row.rfind("<td").unwrap()..]
    }

    #[test]
    fn a_failed_week_has_its_own_cell_and_swatch() {
        let mut runs: Vec<Vec<f64>> = (0..12).map(|i| vec![100.0 + (i % 3) as f64; 5]).collect();
        runs.push(vec![100.0; 5]);
        let mut archive = test_support::archive_of(&[("e", runs)]);
        // The last run: every request failed.
        let last = archive.runs.len() - 1;
        test_support::fail_rounds(&mut archive, last, "e");
        let analysis = analyse(&archive, vec![]);
        let e = &analysis.endpoints[0];
        assert_eq!(e.points[last].verdict, crate::analyse::Verdict::Failed);
        let (table, _) = heatmap(&[HeatmapRow::endpoint(e, "e.html".into())], 53, "h");
        let cell = last_cell(&table);
        assert!(cell.starts_with(r#"<td class="h-failed""#), "{cell}");
        assert!(cell.contains("■") && cell.contains("failed run"), "{cell}");
        assert!(
            table.contains(
                r#"<span class="hm-swatch h-failed" aria-hidden="true">■</span>failed run"#
            ),
            "{table}"
        );
    }

    #[test]
    fn a_judged_run_names_its_week_before_one_without_a_baseline() {
        // A new endpoint's first week: three runs without a baseline yet
        // (`min_baseline_runs` is 3), then one ×0.3 faster: an
        // improvement. The week was painted "no baseline yet".
        let mut runs: Vec<Vec<f64>> = vec![vec![100.0; 5]; 3];
        runs.push(vec![30.0; 5]);
        let mut archive = test_support::archive_of(&[("e", runs)]);
        let day = archive.runs[3].started_at;
        for (k, r) in archive.runs.iter_mut().enumerate() {
            r.started_at = day - chrono::Duration::hours(3 - k as i64);
        }
        let analysis = analyse(&archive, vec![]);
        let e = &analysis.endpoints[0];
        let verdicts: Vec<_> = e.points.iter().map(|p| p.verdict).collect();
        use crate::analyse::Verdict::{Improvement, NoBaseline};
        assert_eq!(verdicts, [NoBaseline, NoBaseline, NoBaseline, Improvement]);
        let (table, _) = heatmap(&[HeatmapRow::endpoint(e, "e.html".into())], 53, "h");
        let cell = last_cell(&table);
        assert!(cell.starts_with(r#"<td class="h-improvement""#), "{cell}");
    }
}
