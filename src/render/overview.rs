//! `index.html`: every endpoint's latest run, sparklines, the calendar
//! heatmap and the capacity table. When endpoints are grouped into
//! services (`[endpoints.<id>] service`), the overview lists services
//! with their worst verdict, each expanding to its endpoints, and the
//! full table is on each service's page (`super::service`).

use askama::Template;

use super::filters;

use super::capacity::CapacitySummary;
use super::charts::{HeatmapRow, HeatmapRows, heatmap_of, sparkline};
use super::context::{Ctx, RunLabel, UntrustedRun};
use super::figures::{FiguresView, environment_mark};
use super::format as f;
use super::rows::{Page, VerdictView, render, settings_line};
use super::service::Service;
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

/// One service on the overview: its worst latest verdict, and its
/// endpoints' rows (shown when expanded).
pub struct ServiceRow {
    pub name: String,
    pub href: String,
    /// The worst of its endpoints' latest verdicts.
    pub verdict: VerdictView,
    /// Endpoints whose latest run regressed, and whose latest run failed.
    pub regressed: usize,
    pub failed: usize,
    /// Worst first, as the endpoint table.
    pub rows: Vec<EndpointRow>,
}

#[derive(Template)]
#[template(path = "index.html")]
pub struct IndexPage {
    pub root: &'static str,
    pub rows: Vec<EndpointRow>,
    /// Empty unless endpoints are grouped into services; then the page
    /// lists these instead of `rows`.
    pub services: Vec<ServiceRow>,
    pub endpoint_count: usize,
    pub run_count: usize,
    pub first_date: String,
    pub last_date: String,
    pub latest_run: Option<RunLabel>,
    pub latest_regressions: usize,
    /// Endpoints whose latest run failed.
    pub latest_failed: usize,
    /// Endpoints measured before and missing from the latest run.
    pub latest_missing: usize,
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

/// Every endpoint's row, worst verdict first (then by name); links are
/// relative to `root`. `spark` draws the trend sparklines.
pub fn endpoint_rows(
    ctx: &Ctx,
    endpoints: &[&EndpointAnalysis],
    root: &str,
    spark: bool,
) -> Vec<EndpointRow> {
    let mut rows: Vec<EndpointRow> = endpoints
        .iter()
        .filter_map(|e| {
            let p = e.latest()?;
            Some(EndpointRow {
                name: e.name.clone(),
                id: e.id.clone(),
                href: format!("{root}endpoints/{}.html", ctx.slugs.endpoint(&e.id)),
                latest: ctx.run_label(&p.run, root, None),
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
                spark: if spark {
                    sparkline(e, SPARK_RUNS)
                } else {
                    String::new()
                },
            })
        })
        .collect();
    rows.sort_by(|a, b| {
        a.verdict
            .rank
            .cmp(&b.verdict.rank)
            .then_with(|| a.name.cmp(&b.name))
    });
    rows
}

/// The calendar heatmap of these endpoints, by name, links relative to
/// `root`; and how many older weeks it leaves out.
pub fn endpoint_heatmap(ctx: &Ctx, endpoints: &[&EndpointAnalysis], root: &str) -> (String, usize) {
    let mut by_name: Vec<&EndpointAnalysis> = endpoints.to_vec();
    by_name.sort_by(|a, b| a.name.cmp(&b.name).then_with(|| a.id.cmp(&b.id)));
    let heat_rows: Vec<HeatmapRow> = by_name
        .into_iter()
        .map(|e| {
            HeatmapRow::endpoint(
                e,
                format!("{root}endpoints/{}.html", ctx.slugs.endpoint(&e.id)),
            )
        })
        .collect();
    heatmap_of(HeatmapRows::Endpoints, &heat_rows, HEATMAP_WEEKS, "heatmap")
}

/// One row per service (worst first, then by name), each with its
/// endpoints' rows without sparklines: those are on the service page.
fn service_rows(ctx: &Ctx, services: &[Service]) -> Vec<ServiceRow> {
    let mut out: Vec<ServiceRow> = services
        .iter()
        .map(|s| {
            let rows = endpoint_rows(ctx, &s.endpoints, "", false);
            let verdict = rows
                .first()
                .map(|r| VerdictView {
                    key: r.verdict.key,
                    state: r.verdict.state,
                    rank: r.verdict.rank,
                })
                .unwrap_or(VerdictView::from(Verdict::NoBaseline));
            ServiceRow {
                name: s.name.to_string(),
                href: s.href(""),
                regressed: rows
                    .iter()
                    .filter(|r| r.verdict.key == "regression")
                    .count(),
                failed: rows.iter().filter(|r| r.verdict.key == "failed").count(),
                verdict,
                rows,
            }
        })
        .collect();
    out.sort_by(|a, b| {
        a.verdict
            .rank
            .cmp(&b.verdict.rank)
            .then_with(|| a.name.cmp(&b.name))
    });
    out
}

/// One heatmap row per service: a week's cell is the worst verdict of
/// all its endpoints' runs that week.
fn service_heatmap(services: &[Service]) -> (String, usize) {
    let rows: Vec<HeatmapRow> = services
        .iter()
        .map(|s| HeatmapRow {
            name: s.name,
            points: s.endpoints.iter().flat_map(|e| e.points.iter()).collect(),
            href: s.href(""),
        })
        .collect();
    heatmap_of(HeatmapRows::Services, &rows, HEATMAP_WEEKS, "heatmap")
}

/// The overview page; `capacity` are the rows of its capacity table,
/// `services` the endpoints' services (empty when none are configured).
pub fn overview_page(
    ctx: &Ctx,
    capacity: Vec<CapacitySummary>,
    services: &[Service],
) -> Result<Page, Error> {
    let analysis = ctx.analysis;
    let settings = settings_line(analysis);
    let all: Vec<&EndpointAnalysis> = analysis.endpoints.iter().collect();
    let (rows, service_rows, (heatmap, heatmap_older_weeks)) = if services.is_empty() {
        (
            endpoint_rows(ctx, &all, "", true),
            Vec::new(),
            endpoint_heatmap(ctx, &all, ""),
        )
    } else {
        (
            Vec::new(),
            service_rows(ctx, services),
            service_heatmap(services),
        )
    };
    let latest_run = analysis.latest_run();
    let latest_regressions = analysis.latest_run_regressions();
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
        latest_missing: analysis.latest_run_missing(),
        latest_environment: latest_run.map(environment_mark).unwrap_or_default(),
        endpoint_count: all.iter().filter(|e| e.latest().is_some()).count(),
        rows,
        services: service_rows,
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

#[cfg(test)]
mod tests {
    use crate::analyse::analyse;
    use crate::render::render_site;
    use crate::test_support;

    /// The latest run measured one of three endpoints, and that one
    /// failed: the headline says so, and never only "no regressions".
    #[test]
    fn the_headline_counts_endpoints_the_latest_run_did_not_measure() {
        let runs: Vec<Vec<f64>> = (0..10).map(|i| vec![100.0 + (i % 3) as f64; 5]).collect();
        let mut archive =
            test_support::archive_of(&[("a", runs.clone()), ("b", runs.clone()), ("c", runs)]);
        test_support::fail_rounds(&mut archive, 9, "a");
        archive.runs[9].endpoints.remove("b");
        archive.runs[9].endpoints.remove("c");
        let site = render_site(&analyse(&archive, vec![])).unwrap();
        let index = String::from_utf8(site.get("index.html").unwrap().to_vec()).unwrap();
        assert!(
            index.contains(
                r#"<span class="verdict v-ok">no regressions</span>, <span class="verdict v-failed">1 failed</span>, <span class="verdict v-no-baseline" title="measured in earlier runs, not in this one: not judged">2 not measured</span>."#
            ),
            "{index}"
        );
    }
}
