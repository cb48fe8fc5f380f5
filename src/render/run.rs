//! `runs/<slug>.html` (one run: every endpoint against its baseline, the
//! rounds, the evidence of alarms) and `runs/index.html` (every run).

use askama::Template;

use super::filters;

use super::context::{CommitView, Ctx, RunLabel};
use super::display::display_state;
use super::evidence::{EvidenceView, evidence_view};
use super::figures::{FiguresView, environment_mark, round_failure};
use super::flame_pages::{FlameLink, flame_links};
use super::format as f;
use super::rows::{Page, VerdictView, render};
use crate::analyse::evidence::OutlierRound;
use crate::analyse::figures::FailedRound;
use crate::analyse::{EndpointAnalysis, RunPoint, Verdict};
use crate::error::Error;
use crate::model::Round;

#[derive(Debug)]
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
    /// Why the round failed ("100% errors"), or empty.
    pub failed: String,
}

#[derive(Debug, serde::Serialize)]
pub struct RunEndpointRow<'a> {
    pub name: String,
    pub href: String,
    pub anchor: String,
    pub median: String,
    pub baseline: String,
    pub ratio: String,
    pub change: String,
    pub verdict: VerdictView,
    pub figures: FiguresView,
    pub no_baseline: String,
    pub rounds: RoundRows<'a>,
    /// Flame-graph pages of this endpoint in this run.
    pub flames: Vec<FlameLink>,
    /// On an alarmed run (a regression, or a default-policy alarm raised
    /// here): the evidence, and what raised it.
    pub evidence: Option<(String, EvidenceView)>,
    /// The alarm raised at this run: the last run at the old level → this
    /// one, with the commits between.
    pub suspect: Option<super::context::SuspectView>,
}

/// The run page's template value: everything the page shows, display-ready
/// (what it serialises is the page memo's key, `render::memo::Serialised`).
#[derive(Debug, Template, serde::Serialize)]
#[template(path = "run.html")]
pub struct RunPage<'a> {
    pub root: &'static str,
    pub id: String,
    pub date: String,
    /// What was tested: commit, branch, release, notes.
    pub commit: Option<CommitView>,
    pub branch: String,
    pub release: String,
    pub notes: String,
    /// `[environment]` (host, JVM flags, …), `[load]` (the load profile)
    /// and any other run.toml keys, each `(key, value)` in key order.
    pub environment: Vec<(String, String)>,
    pub load: Vec<(String, String)>,
    pub extra: Vec<(String, String)>,
    pub problems: Vec<String>,
    pub rows: Vec<RunEndpointRow<'a>>,
    pub regressions: usize,
    /// Endpoints that failed in this run.
    pub failed: usize,
    /// "environment suspect: …" when most endpoints moved together.
    pub environment_suspect: String,
    pub prev: Option<RunLabel>,
    pub next: Option<RunLabel>,
    /// The code host's page of the commits since the previous run, or empty.
    pub compare_prev: String,
    /// For a run of another branch: which main baseline it was judged
    /// against (its merge base); empty for a main run.
    pub branch_base: String,
    /// The main run its baseline ends at, for a branch run.
    pub branch_main_run: Option<RunLabel>,
    /// Its series under `[analysis] series_by` ("host perf-01"), or empty.
    pub series: String,
    /// The host changed against its baseline runs (without `series_by`),
    /// or empty.
    pub host_changed: String,
}

pub struct RunListRow {
    pub run: RunLabel,
    /// Date and time.
    pub date: String,
    pub branch: String,
    pub release: String,
    pub endpoints: usize,
    pub regressions: usize,
    pub incomplete: bool,
    /// "environment suspect: …" or empty.
    pub environment: String,
    /// For a branch run: the main run its baseline ends at.
    pub judged_against: Option<RunLabel>,
    /// For a branch run: the merge base it was judged as of, or empty.
    pub base_commit: String,
}

#[derive(Template)]
#[template(path = "runs.html")]
pub struct RunsPage {
    pub root: &'static str,
    /// The main branch's runs: the history.
    pub rows: Vec<RunListRow>,
    /// Runs of other branches, each judged against the main baseline.
    pub branch_rows: Vec<RunListRow>,
    /// The main branch's name, or empty when no run records a branch.
    pub main_branch: String,
}

/// The page of run `i` (an index into `analysis.runs`).
pub fn run_page(ctx: &Ctx, i: usize) -> Result<Page, Error> {
    let (path, page) = run_view(ctx, i);
    Ok((path, render_run(&page)?))
}

/// Renders a run page's template value.
pub fn render_run(page: &RunPage<'_>) -> Result<Vec<u8>, Error> {
    render(page, &page.id)
}

/// The path and template value of run `i`'s page.
pub fn run_view<'a>(ctx: &Ctx<'a>, i: usize) -> (String, RunPage<'a>) {
    let analysis = ctx.analysis;
    let slugs = ctx.slugs;
    let run = &analysis.runs[i];
    let root = "../";
    let mut rows = Vec::new();
    for &(e, p) in ctx.points_of_run(i) {
        rows.push(RunEndpointRow {
            name: e.name.clone(),
            href: format!("{root}endpoints/{}.html", slugs.endpoint(&e.id)),
            anchor: slugs.endpoint(&e.id).to_string(),
            median: f::median_p99(p),
            baseline: f::opt_ms(p.baseline_p99_ms),
            ratio: f::ratio(p.ratio),
            change: f::change(p.ratio),
            verdict: VerdictView::of(p),
            figures: FiguresView::of_point(p),
            no_baseline: p.no_baseline_reason.clone().unwrap_or_default(),
            rounds: RoundRows::of(ctx, p),
            flames: flame_links(p, e, slugs, root),
            evidence: run_evidence(ctx, e, p),
            suspect: ctx
                .alarm_at(&e.id, &p.run)
                .and_then(|a| ctx.suspect(e, a.candidate_index, root)),
        });
    }
    let regressions = rows
        .iter()
        .filter(|r| r.verdict.key == "regression")
        .count();
    let failed = rows.iter().filter(|r| r.verdict.key == "failed").count();
    let pairs = |m: &std::collections::BTreeMap<String, String>| {
        m.iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect::<Vec<_>>()
    };
    let previous = i.checked_sub(1).and_then(|j| analysis.runs.get(j));
    let meta = &run.meta;
    let page = RunPage {
        root,
        id: run.id.clone(),
        date: f::datetime(run.started_at),
        commit: meta.commit.as_deref().map(|c| ctx.commit(c)),
        branch: meta.branch.clone().unwrap_or_default(),
        release: meta.release.clone().unwrap_or_default(),
        notes: meta.notes.clone().unwrap_or_default(),
        environment: pairs(&meta.environment),
        load: pairs(&meta.load),
        extra: pairs(&meta.extra),
        problems: run.problems.iter().map(ToString::to_string).collect(),
        regressions,
        failed,
        environment_suspect: environment_mark(run),
        // The pager sits in runs/, beside the neighbours.
        prev: previous.map(|r| ctx.run_label(&r.id, root, None)),
        next: analysis
            .runs
            .get(i + 1)
            .map(|r| ctx.run_label(&r.id, root, None)),
        compare_prev: previous
            .map(|r| ctx.compare_href(&r.id, &run.id))
            .unwrap_or_default(),
        branch_base: run
            .branch
            .as_ref()
            .map(|b| b.describe(analysis.main_branch.as_deref()))
            .unwrap_or_default(),
        branch_main_run: run
            .branch
            .as_ref()
            .and_then(|b| b.main_run.as_deref())
            .map(|r| ctx.run_label(r, root, None)),
        series: run.series.clone().unwrap_or_default(),
        host_changed: run.host_changed.clone().unwrap_or_default(),
        rows,
    };
    (format!("runs/{}.html", slugs.run(&run.id)), page)
}

/// `runs/index.html`: every main-branch run, newest first, then the runs
/// of other branches apart (each judged against the main baseline).
pub fn runs_index_page(ctx: &Ctx) -> Result<Page, Error> {
    let analysis = ctx.analysis;
    let (branch_rows, rows): (Vec<_>, Vec<_>) = analysis
        .runs
        .iter()
        .enumerate()
        .rev()
        .map(|(i, run)| {
            let points: Vec<&RunPoint> = ctx.points_of_run(i).iter().map(|&(_, p)| p).collect();
            let row = RunListRow {
                run: ctx.run_label(&run.id, "../", None),
                date: f::datetime(run.started_at),
                branch: run.meta.branch.clone().unwrap_or_default(),
                release: run.meta.release.clone().unwrap_or_default(),
                endpoints: points.len(),
                regressions: points
                    .iter()
                    .filter(|p| matches!(p.verdict, Verdict::Regression | Verdict::Failed))
                    .count(),
                incomplete: !run.problems.is_empty(),
                environment: environment_mark(run),
                judged_against: run
                    .branch
                    .as_ref()
                    .and_then(|b| b.main_run.as_deref())
                    .map(|r| ctx.run_label(r, "../", None)),
                base_commit: run
                    .branch
                    .as_ref()
                    .and_then(|b| b.base_commit.clone())
                    .unwrap_or_default(),
            };
            (run.branch.is_some(), row)
        })
        .partition(|(branch, _)| *branch);
    let rows_of = |rows: Vec<(bool, RunListRow)>| rows.into_iter().map(|(_, r)| r).collect();
    let page = RunsPage {
        root: "../",
        rows: rows_of(rows),
        branch_rows: rows_of(branch_rows),
        main_branch: analysis.main_branch.clone().unwrap_or_default(),
    };
    Ok((
        "runs/index.html".to_string(),
        render(&page, "runs/index.html")?,
    ))
}

/// The evidence a run page shows for one endpoint: the archive's policy's
/// (`[alarms] policy`) alarm raised at this run (its shift covers the alarm's runs over the
/// line), else the run's own evidence when it regressed, else none.
fn run_evidence(ctx: &Ctx, e: &EndpointAnalysis, p: &RunPoint) -> Option<(String, EvidenceView)> {
    let analysis = ctx.analysis;
    if let Some(a) = ctx.alarm_at(&e.id, &p.run) {
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

/// One endpoint's rounds on a run page, made into rows only as the page
/// is rendered, from these slices alone. In the page memo's key
/// (`render::memo`) the rounds are the digest of their bits
/// ([`super::memo::RawRounds`]), the rest as they are:
/// formatting every figure of every round of every run only to find the
/// page unchanged was about 7 % of a build's CPU after one new run at
/// 120 endpoints × 3 years.
#[derive(Debug, serde::Serialize)]
pub struct RoundRows<'a> {
    rounds: super::memo::RawRounds<'a>,
    outliers: &'a [OutlierRound],
    failed: &'a [FailedRound],
}

impl<'a> RoundRows<'a> {
    fn of(ctx: &Ctx<'a>, p: &'a RunPoint) -> RoundRows<'a> {
        RoundRows {
            rounds: ctx.raw_rounds(&p.rounds),
            outliers: &p.evidence.outlier_rounds,
            failed: &p.figures.failed_rounds,
        }
    }

    /// The rows, in the rounds' order.
    pub fn rows(&self) -> Vec<RoundRow> {
        self.rounds
            .rounds()
            .iter()
            .map(|r| {
                let outlier = self.outliers.iter().any(|o| o.round == r.number);
                round_row(r, outlier, round_failure(self.failed, r))
            })
            .collect()
    }
}

fn round_row(r: &Round, outlier: bool, failed: String) -> RoundRow {
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
        failed,
    }
}
