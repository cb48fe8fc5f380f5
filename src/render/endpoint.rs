//! `endpoints/<slug>.html`: one endpoint's trend chart, change points,
//! environment changes, alarms and every run.

use askama::Template;

use super::charts::{PointInfo, TrendInput, TrendView, trend_views};
use super::context::{Ctx, RunLabel, SuspectView};
use super::display::{DisplayState, display_state};
use super::evidence::{EvidenceView, evidence_view};
use super::figures::FiguresView;
use super::format as f;
use super::rows::{
    ChangePointRow, EnvChangeRow, Page, PointRow, change_point_row, env_change_row, point_row,
    render, settings_line,
};
use crate::analyse::alarms::Alarm;
use crate::analyse::{EndpointAnalysis, RunPoint};
use crate::error::Error;

/// One alarm of the archive's policy with its evidence.
pub struct AlarmRow {
    /// The candidate run: the first over the line.
    pub run: RunLabel,
    /// The run before it and the candidate, with the commits between.
    pub suspect: Option<SuspectView>,
    pub state: &'static str,
    pub label: String,
    /// The triage label's note (what was found), shown under the label.
    pub note: String,
    pub median: String,
    pub baseline: String,
    pub ratio: String,
    pub change: String,
    pub evidence: EvidenceView,
    /// Error rate and throughput of its first run, marked when over.
    pub figures: FiguresView,
    /// The first run was environment suspect.
    pub environment_suspect: bool,
}

#[derive(Template)]
#[template(path = "endpoint.html")]
pub struct EndpointPage {
    pub root: &'static str,
    pub name: String,
    pub id: String,
    /// The trend chart once per time range; one is shown at a time.
    pub views: Vec<TrendView>,
    /// The annotations on the chart, numbered as drawn:
    /// `(when, text, link)`.
    pub annotations: Vec<(String, String, String)>,
    pub change_points: Vec<ChangePointRow>,
    pub env_changes: Vec<EnvChangeRow>,
    /// The archive's policy (`[alarms] policy`), for the alarm table's caption.
    pub policy: &'static str,
    pub alarms: Vec<AlarmRow>,
    pub csv_href: String,
    /// This endpoint's runs whose time cannot be trusted: off the chart.
    pub untrusted: Vec<super::context::UntrustedRun>,
    pub rows: Vec<PointRow>,
    pub latest: Option<PointRow>,
    pub threshold_ratio: String,
    pub settings_line: String,
    /// The capacity page and its one-line summary, when the endpoint has
    /// step-load runs.
    pub capacity: Option<(String, String)>,
}

fn alarm_row(ctx: &Ctx, a: &Alarm, e: &EndpointAnalysis, root: &str) -> AlarmRow {
    AlarmRow {
        run: ctx.run_label(&a.run, root, Some(ctx.slugs.endpoint(&a.endpoint))),
        suspect: ctx.suspect(e, a.candidate_index, root),
        state: a.state.as_str(),
        label: a
            .label
            .map(|l| l.to_string())
            .unwrap_or_else(|| "untriaged".into()),
        note: a.label_note.clone().unwrap_or_default(),
        median: super::weekly::alarm_median(a),
        baseline: f::opt_ms(a.baseline_p99_ms),
        ratio: f::ratio(a.ratio),
        change: f::change(a.ratio),
        evidence: evidence_view(&a.evidence),
        figures: FiguresView::of(&a.figures),
        environment_suspect: a.environment_suspect,
    }
}

/// What a run's point on the trend chart links to and says: one fact a
/// line (the native tooltip shows the lines, app.js turns them into a
/// small table).
fn point_info(ctx: &Ctx, p: &RunPoint, slug: &str, root: &str) -> PointInfo {
    let run = ctx.run_label(&p.run, root, Some(slug));
    let mut title = format!(
        "Run {} · {}\nRounds: {} (p99 {} ms)\nMedian p99: {}\nBaseline: {}\nRatio: {}\nVerdict: {}",
        p.run,
        f::date(p.started_at),
        p.rounds.len(),
        p.round_p99_ms
            .iter()
            .map(|v| f::ms(*v))
            .collect::<Vec<_>>()
            .join(" · "),
        if p.verdict == crate::analyse::verdict::Verdict::Failed {
            f::NO_VALID_LATENCY.to_string()
        } else {
            format!("{} ms", f::ms(p.median_p99_ms))
        },
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
    );
    if let Some(c) = &run.commit {
        title.push_str(&format!("\nCommit: {}", c.short));
    }
    if !run.notes.is_empty() {
        title.push_str(&format!("\nNotes: {}", run.notes));
    }
    PointInfo {
        href: run.href,
        title,
    }
}

/// The capacity page of the endpoint and its one-line summary, when it
/// has step-load runs.
fn capacity_line(ctx: &Ctx, e: &EndpointAnalysis, root: &str) -> Option<(String, String)> {
    let c = ctx.analysis.capacity.iter().find(|c| c.id == e.id)?;
    let p = c.latest()?;
    Some((
        format!("{root}{}", super::capacity::capacity_href(ctx.slugs, &c.id)),
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
pub fn endpoint_page(ctx: &Ctx, e: &EndpointAnalysis) -> Result<Page, Error> {
    let analysis = ctx.analysis;
    let slug = ctx.slugs.endpoint(&e.id);
    let root = "../";
    let infos: Vec<PointInfo> = e
        .points
        .iter()
        .map(|p| point_info(ctx, p, slug, root))
        .collect();
    // The chart spans the runs whose time can be trusted; so do the
    // annotations and environment changes listed with it.
    let mut trusted = e.points.iter().filter(|p| !p.untrusted_time);
    let first = trusted.next().map(|p| p.started_at);
    let last = trusted.next_back().map(|p| p.started_at).or(first);
    let annotations: Vec<&crate::model::Annotation> = analysis
        .annotations
        .iter()
        .filter(|a| a.concerns(&e.id))
        .filter(|a| first.is_some_and(|t| t <= a.at) && last.is_some_and(|t| a.at <= t))
        .collect();
    let views = trend_views(
        &TrendInput {
            endpoint: e,
            points: &infos,
            environment: &analysis.environment_changes,
            annotations: &annotations,
        },
        &format!("chart-{slug}"),
    );
    let mut rows: Vec<PointRow> = e
        .points
        .iter()
        .map(|p| point_row(ctx, p, e, root))
        .collect();
    rows.reverse(); // newest first
    let mut alarms: Vec<AlarmRow> = analysis
        .alarms
        .of(analysis.settings.alarms.policy)
        .filter(|a| a.endpoint == e.id)
        .map(|a| alarm_row(ctx, a, e, root))
        .collect();
    alarms.reverse(); // newest first
    let page = EndpointPage {
        root,
        name: e.name.clone(),
        id: e.id.clone(),
        views,
        annotations: annotations
            .iter()
            .map(|a| {
                (
                    f::datetime(a.at),
                    a.text.clone(),
                    a.link.clone().unwrap_or_default(),
                )
            })
            .collect(),
        change_points: e
            .change_points
            .iter()
            .rev()
            .map(|cp| change_point_row(ctx, cp, e, root))
            .collect::<Vec<ChangePointRow>>(),
        env_changes: analysis
            .environment_changes
            .iter()
            .filter(|c| first.is_some_and(|t| t <= c.started_at))
            .filter(|c| last.is_some_and(|t| c.started_at <= t))
            .rev()
            .map(|c| env_change_row(ctx, c, root))
            .collect::<Vec<EnvChangeRow>>(),
        policy: analysis.settings.alarms.policy.name(),
        alarms,
        csv_href: format!("{root}data/endpoints/{slug}.csv"),
        untrusted: ctx.untrusted_runs(root, Some(&e.points)),
        latest: e.latest().map(|p| point_row(ctx, p, e, root)),
        rows,
        threshold_ratio: format!("×{}", e.threshold_ratio),
        settings_line: settings_line(analysis),
        capacity: capacity_line(ctx, e, root),
    };
    Ok((format!("endpoints/{slug}.html"), render(&page, &e.id)?))
}
