//! Rows and chips that several pages show the same way: a run's verdict,
//! a run of an endpoint, a change point, an environment change, and the
//! settings line. Fields are display-ready strings made with
//! `super::format`, so templates hold no logic beyond loops and ifs.

use askama::Template;

use super::context::{Ctx, RunLabel, SuspectView};
use super::display::{DisplayState, display_state};
use super::figures::{FiguresView, RoundCell, environment_mark, round_cells};
use super::flame_pages::{FlameLink, flame_links};
use super::format as f;
use crate::analyse::changepoint::LevelShift;
use crate::analyse::{Analysis, EndpointAnalysis, EnvironmentChange, RunPoint, Verdict};
use crate::error::Error;

/// A rendered page: its path relative to the site root, and its bytes.
pub type Page = (String, Vec<u8>);

#[derive(Debug, Clone, serde::Serialize)]
pub struct VerdictView {
    /// The contract string.
    pub key: &'static str,
    /// How it is shown ([`display_state`]): the CSS class suffix; the
    /// verdict's key but for `accepted` (a regression a human accepted).
    pub state: &'static str,
    /// Sort key: regressions first.
    pub rank: u8,
}

impl VerdictView {
    /// The verdict of one run, shown by its display state.
    pub fn of(p: &RunPoint) -> VerdictView {
        let state = display_state(p);
        let mut view = VerdictView::from(p.verdict);
        view.state = state.key();
        if state == DisplayState::Accepted {
            // After the verdicts that need a look, before plain ok.
            view.rank = 4;
        }
        view
    }
}

impl From<Verdict> for VerdictView {
    fn from(v: Verdict) -> Self {
        let rank = match v {
            Verdict::Failed | Verdict::Regression => 0,
            Verdict::Insufficient => 1,
            Verdict::NoBaseline => 2,
            Verdict::Improvement => 3,
            Verdict::Ok => 5,
        };
        VerdictView {
            key: v.as_str(),
            state: v.as_str(),
            rank,
        }
    }
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct PointRow {
    pub run: RunLabel,
    /// The rounds' p99s; failed rounds say so with their error rate.
    pub rounds: Vec<RoundCell>,
    pub round_count: usize,
    pub median: String,
    pub baseline: String,
    pub threshold: String,
    pub ratio: String,
    pub change: String,
    pub verdict: VerdictView,
    pub figures: FiguresView,
    /// Why there is no baseline, when there is none.
    pub no_baseline: String,
    /// "environment suspect: …" for a run whose endpoints moved together.
    pub environment: String,
    /// Flame-graph pages of this endpoint in this run.
    pub flames: Vec<FlameLink>,
}

/// One change point under the endpoint chart and on the history page.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ChangePointRow {
    pub endpoint: String,
    pub endpoint_href: String,
    /// The onset run: the first at the new level.
    pub run: RunLabel,
    /// The run before it and the onset, with the commits between them.
    pub suspect: Option<SuspectView>,
    pub before: String,
    pub after: String,
    pub change: String,
    /// `regression` or `improvement` (also the CSS class suffix).
    pub direction: &'static str,
    pub pvalue: String,
}

/// One environment change, under the endpoint chart and on the history page.
#[derive(Debug, Clone, serde::Serialize)]
pub struct EnvChangeRow {
    pub run: RunLabel,
    pub previous: RunLabel,
    /// The code host's page of the commits between the two runs, or empty.
    pub compare_href: String,
    pub changes: String,
}

/// Renders an askama template; `what` names the page in the error.
pub(super) fn render(t: &impl Template, what: &str) -> Result<Vec<u8>, Error> {
    t.render()
        .map(String::into_bytes)
        .map_err(|e| Error::Internal(format!("rendering {what}: {e}")))
}

pub(super) fn settings_line(analysis: &Analysis) -> String {
    let a = &analysis.settings.analysis;
    format!(
        "Per run: median of the rounds' p99 ({} rounds expected; failed rounds, with no latency or at least {} errors, \
         left out). Baseline: median of the last {} accepted runs (at least {}). Regression: median above baseline ×{}, \
         error rate above max(baseline + {}, {}), or throughput below baseline × {} at the same load profile.",
        a.expected_rounds,
        crate::analyse::figures::rate_percent(a.failed_round_error_rate),
        a.baseline_window,
        a.min_baseline_runs,
        a.threshold_ratio,
        crate::analyse::figures::rate_percent(a.error_rate_delta),
        crate::analyse::figures::rate_percent(a.max_error_rate),
        1.0 - a.throughput_drop
    )
}

pub(super) fn point_row(ctx: &Ctx, p: &RunPoint, e: &EndpointAnalysis, root: &str) -> PointRow {
    let run = ctx.run_label(&p.run, root, Some(ctx.slugs.endpoint(&e.id)));
    let environment = ctx
        .analysis
        .runs
        .get(p.run_index)
        .map(environment_mark)
        .unwrap_or_default();
    let flames = flame_links(p, e, ctx.slugs, root);
    point_row_with(p, run, environment, flames)
}

/// A point's row from what it shows besides the point: its run, the
/// run's environment mark, its flame-graph links.
pub(super) fn point_row_with(
    p: &RunPoint,
    run: RunLabel,
    environment: String,
    flames: Vec<FlameLink>,
) -> PointRow {
    PointRow {
        run,
        rounds: round_cells(p),
        round_count: p.rounds.len(),
        median: f::median_p99(p),
        baseline: f::opt_ms(p.baseline_p99_ms),
        threshold: f::opt_ms(p.p99_line_ms()),
        ratio: f::ratio(p.ratio),
        change: f::change(p.ratio),
        verdict: VerdictView::of(p),
        figures: FiguresView::of_point(p),
        no_baseline: p.no_baseline_reason.clone().unwrap_or_default(),
        environment,
        flames,
    }
}

/// A change point as a table row, links relative to `root`.
pub fn change_point_row(
    ctx: &Ctx,
    cp: &LevelShift,
    e: &EndpointAnalysis,
    root: &str,
) -> ChangePointRow {
    ChangePointRow {
        endpoint: e.name.clone(),
        endpoint_href: format!("{root}endpoints/{}.html", ctx.slugs.endpoint(&e.id)),
        run: ctx.run_label(&cp.run, root, Some(ctx.slugs.endpoint(&e.id))),
        suspect: ctx.suspect(e, cp.point_index, root),
        before: f::ms(cp.level_before_ms),
        after: f::ms(cp.level_after_ms),
        change: format!("{:+.1}%", cp.change * 100.0),
        direction: cp.direction,
        pvalue: f::pvalue(cp.pvalue),
    }
}

/// An environment change as a table row, links relative to `root`.
pub fn env_change_row(ctx: &Ctx, c: &EnvironmentChange, root: &str) -> EnvChangeRow {
    EnvChangeRow {
        run: ctx.run_label(&c.run, root, None),
        previous: ctx.run_label(&c.previous_run, root, None),
        compare_href: ctx.compare_href(&c.previous_run, &c.run),
        changes: f::setting_changes(&c.changes),
    }
}
