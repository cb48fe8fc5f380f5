//! `index.html`: every endpoint's latest run, sparklines, the calendar
//! heatmap and the capacity table.

use askama::Template;

use super::capacity::CapacitySummary;
use super::charts::{HeatmapRow, heatmap, sparkline};
use super::context::{Ctx, RunLabel, UntrustedRun};
use super::figures::{FiguresView, environment_mark};
use super::format as f;
use super::rows::{Page, VerdictView, render, settings_line};
use crate::analyse::{EndpointAnalysis, Verdict};
use crate::error::Error;

/// Sparkline length on the overview: about four months at three runs a week.
const SPARK_RUNS: usize = 52;
/// Heatmap width on the overview: a year of ISO weeks. Older weeks are on
/// the endpoint pages and in the data files, and the page says so.
const HEATMAP_WEEKS: usize = 53;

pub struct EndpointRow {
    pub name: String,
    pub id: String,
    pub href: String,
    pub latest: RunLabel,
    pub median: String,
    pub median_raw: f64,
    pub baseline: String,
    pub ratio: String,
    pub ratio_raw: f64,
    pub change: String,
    pub verdict: VerdictView,
    /// p90, error rate, throughput and spread of the latest run.
    pub figures: FiguresView,
    pub runs: usize,
    pub regressions: usize,
    pub spark: String,
}

#[derive(Template)]
#[template(path = "index.html")]
pub struct IndexPage {
    pub root: &'static str,
    pub rows: Vec<EndpointRow>,
    pub run_count: usize,
    pub first_date: String,
    pub last_date: String,
    pub latest_run: Option<RunLabel>,
    pub latest_regressions: usize,
    /// Endpoints whose latest run failed.
    pub latest_failed: usize,
    /// "environment suspect: …" when the latest run is, else empty.
    pub latest_environment: String,
    pub settings_line: String,
    /// Warnings met while reading the archive.
    pub diagnostics: Vec<String>,
    /// Information about the inputs (Locust's rounding), said once.
    pub notes: Vec<String>,
    /// The calendar heatmap (SVG) and how many older weeks it leaves out.
    pub heatmap: String,
    pub heatmap_older_weeks: usize,
    /// Endpoints with step-load runs: latest knee, limit, verdict.
    pub capacity: Vec<CapacitySummary>,
    /// Runs whose time cannot be trusted: out of the dates and heatmap.
    pub untrusted: Vec<UntrustedRun>,
}

/// The overview page; `capacity` are the rows of its capacity table.
pub fn overview_page(ctx: &Ctx, capacity: Vec<CapacitySummary>) -> Result<Page, Error> {
    let (analysis, slugs) = (ctx.analysis, ctx.slugs);
    let settings = settings_line(analysis);
    let mut rows: Vec<EndpointRow> = analysis
        .endpoints
        .iter()
        .filter_map(|e| {
            let p = e.latest()?;
            Some(EndpointRow {
                name: e.name.clone(),
                id: e.id.clone(),
                href: format!("endpoints/{}.html", slugs.endpoint(&e.id)),
                latest: ctx.run_label(&p.run, "", None),
                median: f::median_p99(p),
                median_raw: p.median_p99_ms,
                baseline: f::opt_ms(p.baseline_p99_ms),
                ratio: f::ratio(p.ratio),
                ratio_raw: p.ratio.unwrap_or(0.0),
                change: f::change(p.ratio),
                verdict: VerdictView::of(p),
                figures: FiguresView::of_point(p),
                runs: e.points.len(),
                regressions: e
                    .points
                    .iter()
                    .filter(|p| matches!(p.verdict, Verdict::Regression | Verdict::Failed))
                    .count(),
                spark: sparkline(e, SPARK_RUNS),
            })
        })
        .collect();
    rows.sort_by(|a, b| {
        a.verdict
            .rank
            .cmp(&b.verdict.rank)
            .then_with(|| a.name.cmp(&b.name))
    });
    let latest_run = analysis.latest_run();
    let latest_regressions = analysis.latest_run_regressions();
    let mut by_name: Vec<&EndpointAnalysis> = analysis.endpoints.iter().collect();
    by_name.sort_by(|a, b| a.name.cmp(&b.name).then_with(|| a.id.cmp(&b.id)));
    let heat_rows: Vec<HeatmapRow> = by_name
        .into_iter()
        .map(|e| HeatmapRow {
            endpoint: e,
            href: format!("endpoints/{}.html", slugs.endpoint(&e.id)),
        })
        .collect();
    let (heatmap, heatmap_older_weeks) = heatmap(&heat_rows, HEATMAP_WEEKS, "heatmap");
    let index = IndexPage {
        heatmap,
        heatmap_older_weeks,
        root: "",
        run_count: analysis.runs.len(),
        // Runs dated 1970 or 2099 do not stretch the dates (listed apart).
        first_date: analysis
            .runs
            .iter()
            .find(|r| r.untrusted_time.is_none())
            .map(|r| f::date(r.started_at))
            .unwrap_or_default(),
        last_date: latest_run
            .map(|r| f::date(r.started_at))
            .unwrap_or_default(),
        latest_run: latest_run.map(|r| ctx.run_label(&r.id, "", None)),
        latest_regressions,
        latest_failed: analysis.latest_run_failures(),
        latest_environment: latest_run.map(environment_mark).unwrap_or_default(),
        rows,
        settings_line: settings,
        diagnostics: analysis
            .diagnostics
            .iter()
            .filter(|d| d.is_warning())
            .map(|d| d.to_string())
            .collect(),
        notes: analysis
            .diagnostics
            .iter()
            .filter(|d| !d.is_warning())
            .map(|d| d.to_string())
            .collect(),
        capacity,
        untrusted: ctx.untrusted_runs("", None),
    };
    Ok(("index.html".to_string(), render(&index, "index.html")?))
}
