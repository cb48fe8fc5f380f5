//! `endpoints/<slug>.html`: one endpoint's trend chart, change points,
//! environment changes, alarms and every run.

use askama::Template;

use super::charts::{PointInfo, trend_chart};
use super::display::{DisplayState, display_state};
use super::evidence::{EvidenceView, evidence_view};
use super::rows::{
    ChangePointRow, EnvChangeRow, Page, PointRow, change_point_row, env_change_row, point_row,
    render, settings_line,
};
use super::{Slugs, format as f};
use crate::analyse::alarms::Alarm;
use crate::analyse::{Analysis, EndpointAnalysis, RunPoint};
use crate::error::Error;

/// One alarm of the archive's policy with its evidence.
pub struct AlarmRow {
    pub run: String,
    pub run_href: String,
    pub date: String,
    pub state: &'static str,
    pub label: String,
    pub median: String,
    pub baseline: String,
    pub ratio: String,
    pub change: String,
    pub evidence: EvidenceView,
}

#[derive(Template)]
#[template(path = "endpoint.html")]
pub struct EndpointPage {
    pub root: &'static str,
    pub name: String,
    pub id: String,
    pub chart: String,
    pub change_points: Vec<ChangePointRow>,
    pub env_changes: Vec<EnvChangeRow>,
    /// The archive's policy (`[alarms] policy`), for the alarm table's caption.
    pub policy: &'static str,
    pub alarms: Vec<AlarmRow>,
    pub csv_href: String,
    pub rows: Vec<PointRow>,
    pub latest: Option<PointRow>,
    pub threshold_ratio: String,
    pub settings_line: String,
    /// The capacity page and its one-line summary, when the endpoint has
    /// step-load runs.
    pub capacity: Option<(String, String)>,
}

fn alarm_row(a: &Alarm, slugs: &Slugs, root: &str) -> AlarmRow {
    AlarmRow {
        run: a.run.clone(),
        run_href: format!(
            "{root}runs/{}.html#{}",
            slugs.run(&a.run),
            slugs.endpoint(&a.endpoint)
        ),
        date: f::date(a.started_at),
        state: a.state.as_str(),
        label: a
            .label
            .map(|l| l.to_string())
            .unwrap_or_else(|| "untriaged".into()),
        median: f::ms(a.median_p99_ms),
        baseline: f::opt_ms(a.baseline_p99_ms),
        ratio: f::ratio(a.ratio),
        change: f::change(a.ratio),
        evidence: evidence_view(&a.evidence),
    }
}

/// What a run's point on the trend chart links to and says: one fact a
/// line (the native tooltip shows the lines, app.js turns them into a
/// small table).
fn point_info(p: &RunPoint, slug: &str, slugs: &Slugs, root: &str) -> PointInfo {
    PointInfo {
        href: format!("{root}runs/{}.html#{slug}", slugs.run(&p.run)),
        title: format!(
            "Run {} · {}\nRounds: {} (p99 {} ms)\nMedian p99: {} ms\nBaseline: {}\nRatio: {}\nVerdict: {}",
            p.run,
            f::date(p.started_at),
            p.rounds.len(),
            p.round_p99_ms
                .iter()
                .map(|v| f::ms(*v))
                .collect::<Vec<_>>()
                .join(" · "),
            f::ms(p.median_p99_ms),
            p.baseline_p99_ms
                .map_or("none yet".to_string(), |b| format!("{} ms", f::ms(b))),
            p.ratio.map_or("–".to_string(), |r| format!(
                "{} ({})",
                f::ratio(Some(r)),
                f::change(Some(r))
            )),
            match display_state(p) {
                DisplayState::Accepted => "regression (accepted change)",
                _ => p.verdict.as_str(),
            }
        ),
    }
}

/// The capacity page of the endpoint and its one-line summary, when it
/// has step-load runs.
fn capacity_line(
    analysis: &Analysis,
    e: &EndpointAnalysis,
    slugs: &Slugs,
    root: &str,
) -> Option<(String, String)> {
    let c = analysis.capacity.iter().find(|c| c.id == e.id)?;
    let p = c.latest()?;
    Some((
        format!("{root}{}", super::capacity::capacity_href(slugs, &c.id)),
        format!(
            "Latest step-load run {} ({}): {} — capacity {}.",
            p.run,
            f::date(p.started_at),
            p.knee.reasoning,
            p.verdict.as_str()
        ),
    ))
}

/// One endpoint's page.
pub fn endpoint_page(
    analysis: &Analysis,
    e: &EndpointAnalysis,
    slugs: &Slugs,
) -> Result<Page, Error> {
    let slug = slugs.endpoint(&e.id);
    let root = "../";
    let infos: Vec<PointInfo> = e
        .points
        .iter()
        .map(|p| point_info(p, slug, slugs, root))
        .collect();
    let chart = trend_chart(
        e,
        &infos,
        &analysis.environment_changes,
        &format!("chart-{slug}"),
    )?;
    let mut rows: Vec<PointRow> = e
        .points
        .iter()
        .map(|p| point_row(p, e, slugs, root))
        .collect();
    rows.reverse(); // newest first
    let mut alarms: Vec<AlarmRow> = analysis
        .alarms
        .of(analysis.settings.alarms.policy)
        .filter(|a| a.endpoint == e.id)
        .map(|a| alarm_row(a, slugs, root))
        .collect();
    alarms.reverse(); // newest first
    let (first, last) = (
        e.points.first().map(|p| p.started_at),
        e.points.last().map(|p| p.started_at),
    );
    let page = EndpointPage {
        root,
        name: e.name.clone(),
        id: e.id.clone(),
        chart,
        change_points: e
            .change_points
            .iter()
            .rev()
            .map(|cp| change_point_row(cp, e, slugs, root))
            .collect::<Vec<ChangePointRow>>(),
        env_changes: analysis
            .environment_changes
            .iter()
            .filter(|c| first.is_some_and(|t| t <= c.started_at))
            .filter(|c| last.is_some_and(|t| c.started_at <= t))
            .rev()
            .map(|c| env_change_row(c, slugs, root))
            .collect::<Vec<EnvChangeRow>>(),
        policy: analysis.settings.alarms.policy.name(),
        alarms,
        csv_href: format!("{root}data/endpoints/{slug}.csv"),
        latest: e.latest().map(|p| point_row(p, e, slugs, root)),
        rows,
        threshold_ratio: format!("×{}", e.threshold_ratio),
        settings_line: settings_line(analysis),
        capacity: capacity_line(analysis, e, slugs, root),
    };
    Ok((format!("endpoints/{slug}.html"), render(&page, &e.id)?))
}
