//! Rows and chips that several pages show the same way: a run's verdict,
//! a run of an endpoint, a change point, an environment change, and the
//! settings line. Fields are display-ready strings made with
//! `super::format`, so templates hold no logic beyond loops and ifs.

use askama::Template;

use super::display::{DisplayState, display_state};
use super::flame_pages::{FlameLink, flame_links};
use super::{Slugs, format as f};
use crate::analyse::changepoint::LevelShift;
use crate::analyse::{Analysis, EndpointAnalysis, EnvironmentChange, RunPoint, Verdict};
use crate::error::Error;
use crate::model::Round;

/// A rendered page: its path relative to the site root, and its bytes.
pub type Page = (String, Vec<u8>);

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
            Verdict::Regression => 0,
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

pub struct PointRow {
    pub run: String,
    pub run_href: String,
    pub date: String,
    pub rounds: String,
    pub round_count: usize,
    pub median: String,
    pub baseline: String,
    pub threshold: String,
    pub ratio: String,
    pub change: String,
    pub verdict: VerdictView,
    pub throughput: String,
    pub error_rate: String,
    /// Flame-graph pages of this endpoint in this run.
    pub flames: Vec<FlameLink>,
}

/// One change point under the endpoint chart and on the history page.
pub struct ChangePointRow {
    pub endpoint: String,
    pub endpoint_href: String,
    pub run: String,
    pub run_href: String,
    pub date: String,
    pub before: String,
    pub after: String,
    pub change: String,
    /// `regression` or `improvement` (also the CSS class suffix).
    pub direction: &'static str,
    pub pvalue: String,
}

/// One environment change, under the endpoint chart and on the history page.
pub struct EnvChangeRow {
    pub run: String,
    pub run_href: String,
    pub date: String,
    pub previous_run: String,
    pub previous_href: String,
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
        "Per run: median of the rounds' p99 ({} rounds expected). Baseline: median of the last {} accepted runs \
         (at least {}). Regression: median above baseline ×{}.",
        a.expected_rounds, a.baseline_window, a.min_baseline_runs, a.threshold_ratio
    )
}

/// Median of the rounds' throughput and the worst round's error rate.
fn run_load(rounds: &[Round]) -> (Option<f64>, Option<f64>) {
    let tput: Vec<f64> = rounds
        .iter()
        .filter_map(|r| r.stats.throughput_rps)
        .collect();
    let err = rounds
        .iter()
        .filter_map(|r| r.stats.error_rate)
        .fold(None, |m: Option<f64>, e| Some(m.map_or(e, |m| m.max(e))));
    (crate::stats::median(&tput), err)
}

pub(super) fn point_row(p: &RunPoint, e: &EndpointAnalysis, slugs: &Slugs, root: &str) -> PointRow {
    let (tput, err) = run_load(&p.rounds);
    PointRow {
        run: p.run.clone(),
        run_href: format!(
            "{root}runs/{}.html#{}",
            slugs.run(&p.run),
            slugs.endpoint(&e.id)
        ),
        date: f::date(p.started_at),
        rounds: p
            .round_p99_ms
            .iter()
            .map(|v| f::ms(*v))
            .collect::<Vec<_>>()
            .join(" · "),
        round_count: p.rounds.len(),
        median: f::ms(p.median_p99_ms),
        baseline: f::opt_ms(p.baseline_p99_ms),
        threshold: f::opt_ms(p.threshold_p99_ms(e.threshold_ratio)),
        ratio: f::ratio(p.ratio),
        change: f::change(p.ratio),
        verdict: VerdictView::of(p),
        throughput: f::rate(tput),
        error_rate: f::percent(err),
        flames: flame_links(p, e, slugs, root),
    }
}

/// A change point as a table row, links relative to `root`.
pub fn change_point_row(
    cp: &LevelShift,
    e: &EndpointAnalysis,
    slugs: &Slugs,
    root: &str,
) -> ChangePointRow {
    ChangePointRow {
        endpoint: e.name.clone(),
        endpoint_href: format!("{root}endpoints/{}.html", slugs.endpoint(&e.id)),
        run: cp.run.clone(),
        run_href: format!(
            "{root}runs/{}.html#{}",
            slugs.run(&cp.run),
            slugs.endpoint(&e.id)
        ),
        date: f::date(cp.started_at),
        before: f::ms(cp.level_before_ms),
        after: f::ms(cp.level_after_ms),
        change: format!("{:+.1}%", cp.change * 100.0),
        direction: cp.direction,
        pvalue: f::pvalue(cp.pvalue),
    }
}

/// An environment change as a table row, links relative to `root`.
pub fn env_change_row(c: &EnvironmentChange, slugs: &Slugs, root: &str) -> EnvChangeRow {
    EnvChangeRow {
        run: c.run.clone(),
        run_href: format!("{root}runs/{}.html", slugs.run(&c.run)),
        date: f::date(c.started_at),
        previous_run: c.previous_run.clone(),
        previous_href: format!("{root}runs/{}.html", slugs.run(&c.previous_run)),
        changes: f::setting_changes(&c.changes),
    }
}
