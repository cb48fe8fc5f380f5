//! `runs/<slug>.html` (one run: every endpoint against its baseline, the
//! rounds, the evidence of alarms) and `runs/index.html` (every run).

use askama::Template;

use super::display::display_state;
use super::evidence::{EvidenceView, evidence_view};
use super::flame_pages::{FlameLink, flame_links};
use super::rows::{Page, VerdictView, render};
use super::{Slugs, format as f};
use crate::analyse::{Analysis, EndpointAnalysis, RunPoint, Verdict};
use crate::error::Error;
use crate::model::Round;

pub struct RoundRow {
    pub number: u32,
    pub label: String,
    pub source: String,
    pub format: &'static str,
    pub count: String,
    pub throughput: String,
    pub mean: String,
    pub stddev: String,
    pub min: String,
    pub p50: String,
    pub p90: String,
    pub p95: String,
    pub p99: String,
    pub max: String,
    pub error_rate: String,
    /// Over 1.5 × the run's median p99: likely GC or noise.
    pub outlier: bool,
}

pub struct RunEndpointRow {
    pub name: String,
    pub href: String,
    pub anchor: String,
    pub median: String,
    pub baseline: String,
    pub ratio: String,
    pub change: String,
    pub verdict: VerdictView,
    pub rounds: Vec<RoundRow>,
    /// Flame-graph pages of this endpoint in this run.
    pub flames: Vec<FlameLink>,
    /// On an alarmed run (a regression, or a default-policy alarm raised
    /// here): the evidence, and what raised it.
    pub evidence: Option<(String, EvidenceView)>,
}

#[derive(Template)]
#[template(path = "run.html")]
pub struct RunPage {
    pub root: &'static str,
    pub id: String,
    pub date: String,
    pub meta: Vec<(String, String)>,
    pub problems: Vec<String>,
    pub rows: Vec<RunEndpointRow>,
    pub regressions: usize,
    pub prev: Option<(String, String)>,
    pub next: Option<(String, String)>,
}

pub struct RunListRow {
    pub id: String,
    pub href: String,
    pub date: String,
    pub commit: String,
    pub branch: String,
    pub release: String,
    pub endpoints: usize,
    pub regressions: usize,
    pub incomplete: bool,
}

#[derive(Template)]
#[template(path = "runs.html")]
pub struct RunsPage {
    pub root: &'static str,
    pub rows: Vec<RunListRow>,
}

/// Every endpoint's point in run `i`, in endpoint order.
fn points_of_run(
    analysis: &Analysis,
    i: usize,
) -> impl Iterator<Item = (&EndpointAnalysis, &RunPoint)> {
    analysis
        .endpoints
        .iter()
        .filter_map(move |e| Some((e, e.points.iter().find(|p| p.run_index == i)?)))
}

/// The page of run `i` (an index into `analysis.runs`).
pub fn run_page(analysis: &Analysis, i: usize, slugs: &Slugs) -> Result<Page, Error> {
    let run = &analysis.runs[i];
    let root = "../";
    let mut rows = Vec::new();
    for (e, p) in points_of_run(analysis, i) {
        rows.push(RunEndpointRow {
            name: e.name.clone(),
            href: format!("{root}endpoints/{}.html", slugs.endpoint(&e.id)),
            anchor: slugs.endpoint(&e.id).to_string(),
            median: f::ms(p.median_p99_ms),
            baseline: f::opt_ms(p.baseline_p99_ms),
            ratio: f::ratio(p.ratio),
            change: f::change(p.ratio),
            verdict: VerdictView::of(p),
            rounds: p
                .rounds
                .iter()
                .map(|r| {
                    let outlier = p
                        .evidence
                        .outlier_rounds
                        .iter()
                        .any(|o| o.round == r.number);
                    round_row(r, outlier)
                })
                .collect(),
            flames: flame_links(p, e, slugs, root),
            evidence: run_evidence(analysis, e, p),
        });
    }
    let regressions = rows
        .iter()
        .filter(|r| r.verdict.key == "regression")
        .count();
    let mut meta = Vec::new();
    for (k, v) in [
        ("commit", &run.meta.commit),
        ("branch", &run.meta.branch),
        ("release", &run.meta.release),
        ("notes", &run.meta.notes),
    ] {
        if let Some(v) = v {
            meta.push((k.to_string(), v.clone()));
        }
    }
    meta.extend(run.meta.extra.iter().map(|(k, v)| (k.clone(), v.clone())));
    let link = |j: usize| {
        analysis
            .runs
            .get(j)
            .map(|r| (r.id.clone(), format!("{}.html", slugs.run(&r.id))))
    };
    let page = RunPage {
        root,
        id: run.id.clone(),
        date: f::datetime(run.started_at),
        meta,
        problems: run.problems.clone(),
        regressions,
        prev: i.checked_sub(1).and_then(link),
        next: link(i + 1),
        rows: rows.into_iter().collect(),
    };
    Ok((
        format!("runs/{}.html", slugs.run(&run.id)),
        render(&page, &run.id)?,
    ))
}

/// `runs/index.html`: every run, newest first.
pub fn runs_index_page(analysis: &Analysis, slugs: &Slugs) -> Result<Page, Error> {
    let rows = analysis
        .runs
        .iter()
        .enumerate()
        .rev()
        .map(|(i, run)| {
            let points: Vec<&RunPoint> = points_of_run(analysis, i).map(|(_, p)| p).collect();
            RunListRow {
                id: run.id.clone(),
                href: format!("{}.html", slugs.run(&run.id)),
                date: f::datetime(run.started_at),
                commit: run.meta.commit.clone().unwrap_or_default(),
                branch: run.meta.branch.clone().unwrap_or_default(),
                release: run.meta.release.clone().unwrap_or_default(),
                endpoints: points.len(),
                regressions: points
                    .iter()
                    .filter(|p| p.verdict == Verdict::Regression)
                    .count(),
                incomplete: !run.problems.is_empty(),
            }
        })
        .collect();
    let page = RunsPage { root: "../", rows };
    Ok((
        "runs/index.html".to_string(),
        render(&page, "runs/index.html")?,
    ))
}

/// The evidence a run page shows for one endpoint: the archive's policy's
/// (`[alarms] policy`) alarm raised at this run (its shift covers the alarm's runs over the
/// line), else the run's own evidence when it regressed, else none.
fn run_evidence(
    analysis: &Analysis,
    e: &EndpointAnalysis,
    p: &RunPoint,
) -> Option<(String, EvidenceView)> {
    if let Some(a) = analysis
        .alarms
        .of(analysis.settings.alarms.policy)
        .find(|a| a.endpoint == e.id && a.run == p.run)
    {
        return Some((
            format!(
                "{} alarm ({}, {} run(s) over the line)",
                analysis.settings.alarms.policy.name(),
                a.state.as_str(),
                a.over_runs.len()
            ),
            evidence_view(&a.evidence),
        ));
    }
    (p.verdict == Verdict::Regression).then(|| {
        (
            format!("{} run", display_state(p).words()),
            evidence_view(&p.evidence),
        )
    })
}

fn round_row(r: &Round, outlier: bool) -> RoundRow {
    let s = &r.stats;
    RoundRow {
        number: r.number,
        label: r.label.clone().unwrap_or_default(),
        source: r.source.clone(),
        format: r.format.describe(),
        count: f::count(s.count),
        throughput: f::rate(s.throughput_rps),
        mean: f::opt_ms(s.mean_ms),
        stddev: f::opt_ms(s.stddev_ms),
        min: f::opt_ms(s.min_ms),
        p50: f::opt_ms(s.p50_ms),
        p90: f::opt_ms(s.p90_ms),
        p95: f::opt_ms(s.p95_ms),
        p99: f::ms(s.p99_ms),
        max: f::opt_ms(s.max_ms),
        error_rate: f::percent(s.error_rate),
        outlier,
    }
}
