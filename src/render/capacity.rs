//! Capacity pages (`capacity/<endpoint-slug>.html`, docs/capacity.md): the
//! latest step-load run's charts (throughput vs load, p99 vs throughput
//! with the objective and the knee, CPU vs load when resources were
//! recorded), the knee history with capacity regressions, the recommended
//! limit with its reasoning, and a table of steps per run.

use askama::Template;

use super::filters;
use serde::Serialize;

use super::charts::capacity::{cpu_chart, history_chart, latency_chart, pct, throughput_chart};
use super::context::{Ctx, RunLabel};
use super::rows::{Page, render};
use super::{Slugs, format as f};
use crate::analyse::Analysis;
use crate::analyse::capacity::{CapacityPoint, EndpointCapacity, number};
use crate::analyse::verdict::CapacityVerdict;
use crate::error::Error;

/// Runs whose step tables the page shows (newest first); older runs' steps
/// are in `data/analysis.json`, so that years of history keep the page light.
pub const STEP_TABLE_RUNS: usize = 12;

/// How many recent step-load runs (at the current level) the recommended
/// limit's range is taken over.
pub const LIMIT_RUNS: usize = 5;

pub struct StepRow {
    pub number: u32,
    pub label: String,
    pub load: String,
    pub window: String,
    pub count: u64,
    pub throughput: String,
    pub p50: String,
    pub p99: String,
    pub errors: String,
    pub concurrency: String,
    pub cpu: String,
    pub memory: String,
    /// `knee`, `break`, `noise`, `meets`, `misses`.
    pub role: &'static str,
    pub why: String,
}

pub struct RunRow {
    pub run: RunLabel,
    pub release: String,
    pub source: String,
    pub knee: String,
    pub limit: String,
    pub baseline: String,
    pub ratio: String,
    pub verdict: &'static str,
    /// How it is shown: the verdict, or `accepted` for a regression a
    /// human accepted (CSS class suffix).
    pub state: &'static str,
    /// For a capacity regression: the code host's changes since the
    /// step-load run before it (`[site] compare_url`), else empty.
    pub compare_href: String,
    pub reasoning: String,
    pub steps: Vec<StepRow>,
    pub resources: Option<String>,
}

#[derive(Template)]
#[template(path = "capacity.html")]
pub struct CapacityPage {
    pub root: &'static str,
    pub name: String,
    pub id: String,
    pub endpoint_href: Option<String>,
    pub objective: String,
    pub latest: Option<RunRow>,
    pub throughput_chart: String,
    pub latency_chart: String,
    pub cpu_chart: Option<String>,
    pub history_chart: String,
    pub rows: Vec<RunRow>,
    /// How many of `rows` (newest first) get their step table.
    pub step_table_runs: usize,
    /// `42.3 req/s`, and `40.0–42.6 req/s over the last 5 step-load runs`.
    pub limit: String,
    pub limit_spread: String,
    /// `about 172 ms at 42.3 req/s (objective 330 ms)`, or empty.
    pub expected_p99: String,
    /// How the latest run was measured: steps, step length, host, file.
    pub setup: Vec<(String, String)>,
    /// The capacity rule, for the page's footer line.
    pub capacity_rule: String,
}

/// A row of the overview's capacity table.
#[derive(Debug, Clone, Serialize)]
pub struct CapacitySummary {
    pub name: String,
    pub href: String,
    pub run: String,
    pub knee: String,
    /// The recommended limit over recent runs, with its range.
    pub limit: String,
    pub verdict: &'static str,
    pub state: &'static str,
}

/// How a capacity verdict is shown: `accepted` for an accepted drop.
fn state(p: &CapacityPoint) -> &'static str {
    if p.accepted_change {
        "accepted"
    } else {
        p.verdict.as_str()
    }
}

/// The limit over recent runs as the overview's table shows it.
fn limit_cell(e: &EndpointCapacity) -> String {
    match e.limit_range(LIMIT_RUNS) {
        Some(r) if (r.max - r.min).abs() > 1e-9 => {
            format!("{} ({}–{})", number(r.median), number(r.min), number(r.max))
        }
        Some(r) => number(r.median),
        None => "–".into(),
    }
}

/// How the latest step-load run was measured.
fn setup(ctx: &Ctx, p: &CapacityPoint) -> Vec<(String, String)> {
    let s = &p.series;
    let unit = s.unit.label();
    let loads: Vec<String> = s.steps.iter().map(|st| number(st.load)).collect();
    let mut lengths: Vec<f64> = s.steps.iter().map(|st| st.duration_s).collect();
    lengths.sort_by(f64::total_cmp);
    let mut out = vec![
        (
            "Steps".to_string(),
            format!("{} steps of {} {unit}", s.steps.len(), loads.join(", ")),
        ),
        (
            "Step length".to_string(),
            match lengths.get(lengths.len() / 2) {
                Some(l) => format!(
                    "{} s each, the first {} s of each left out (settling)",
                    number(*l),
                    number(s.settle_s)
                ),
                None => "–".into(),
            },
        ),
    ];
    if let Some(host) = ctx.run(&p.run).and_then(|r| r.meta.environment.get("host")) {
        out.push(("Host".to_string(), host.clone()));
    }
    out.push(("File".to_string(), s.source.clone()));
    out
}

/// One step-load run's row; `previous` is the endpoint's step-load run before it.
fn run_row(ctx: &Ctx, p: &CapacityPoint, previous: Option<&CapacityPoint>) -> RunRow {
    let unit = p.series.unit.label();
    let steps = p
        .series
        .steps
        .iter()
        .zip(&p.knee.checks)
        .map(|(st, check)| StepRow {
            number: st.number,
            label: st.label.clone().unwrap_or_default(),
            load: format!("{} {unit}", number(st.load)),
            window: format!(
                "{:.0}–{:.0} s",
                st.start_s + st.duration_s - st.window_s,
                st.start_s + st.duration_s
            ),
            count: st.count,
            throughput: number(st.throughput_rps),
            p50: f::opt_ms(st.p50_ms),
            p99: f::opt_ms(st.p99_ms),
            errors: f::percent(Some(st.error_rate)),
            concurrency: st.concurrency.map(number).unwrap_or_else(|| "–".into()),
            cpu: st
                .cpu_pct
                .map(|c| format!("{}%", number(c)))
                .unwrap_or_else(|| "–".into()),
            memory: st.memory.map(number).unwrap_or_else(|| "–".into()),
            role: if p.knee.knee_step == Some(st.number) {
                "knee"
            } else if p.knee.break_step == Some(st.number) {
                "break"
            } else if check.noise {
                "noise"
            } else if check.meets {
                "meets"
            } else {
                "misses"
            },
            why: check.reasons.join(", "),
        })
        .collect();
    RunRow {
        run: ctx.run_label(&p.run, "../", None),
        release: p.release.clone().unwrap_or_default(),
        source: p.series.source.clone(),
        knee: p.knee.knee_rps.map(number).unwrap_or_else(|| "–".into()),
        limit: p.knee.limit_rps.map(number).unwrap_or_else(|| "–".into()),
        baseline: p
            .baseline_knee_rps
            .map(number)
            .unwrap_or_else(|| "–".into()),
        ratio: f::ratio(p.ratio),
        verdict: p.verdict.as_str(),
        state: state(p),
        compare_href: match previous {
            Some(before) if p.verdict == CapacityVerdict::Regression => {
                ctx.compare_href(&before.run, &p.run)
            }
            _ => String::new(),
        },
        reasoning: p.knee.reasoning.clone(),
        steps,
        resources: p.series.resources.clone(),
    }
}

/// The page path of an endpoint's capacity page.
pub fn capacity_href(slugs: &Slugs, id: &str) -> String {
    format!("capacity/{}.html", slugs.endpoint(id))
}

/// The capacity page of one endpoint; `None` when it has no step-load run.
pub fn capacity_page(ctx: &Ctx, e: &EndpointCapacity) -> Result<Option<Page>, Error> {
    let (analysis, slugs) = (ctx.analysis, ctx.slugs);
    let Some(latest) = e.latest() else {
        return Ok(None);
    };
    let cpu_chart = cpu_chart(e, latest, "capacity-cpu")?;
    let range = e.limit_range(LIMIT_RUNS);
    let expected_p99 = range
        .as_ref()
        .and_then(|r| {
            let p99 = crate::analyse::capacity::p99_at(&latest.series.steps, r.median)?;
            Some(format!(
                "about {} ms at {} req/s in the latest run (objective {} ms)",
                f::ms(p99),
                number(r.median),
                f::ms(e.objective.p99_ms)
            ))
        })
        .unwrap_or_default();
    let page = CapacityPage {
        root: "../",
        name: e.name.clone(),
        id: e.id.clone(),
        endpoint_href: analysis
            .endpoints
            .iter()
            .any(|x| x.id == e.id)
            .then(|| format!("../endpoints/{}.html", slugs.endpoint(&e.id))),
        objective: format!(
            "Objective: p99 ≤ {} ms and errors < {} per step.",
            f::ms(e.objective.p99_ms),
            pct(e.objective.max_error_rate),
        ),
        capacity_rule: format!(
            "Capacity rule: the knee is the highest throughput of a step meeting the objective (p99 ≤ {} ms, errors < {}) \
             before the first sustained break; limit = knee × (1 − {}); the recommended limit is the median of the limits \
             of up to {LIMIT_RUNS} recent step-load runs at the current level; a capacity regression is a knee below the \
             baseline knee (median of up to {} earlier accepted knees) × (1 − {}).",
            f::ms(e.objective.p99_ms),
            pct(e.objective.max_error_rate),
            pct(e.objective.headroom),
            analysis.settings.capacity.baseline_window,
            pct(e.regression_drop)
        ),
        latest: Some(run_row(
            ctx,
            latest,
            e.runs
                .iter()
                .position(|p| p.run == latest.run)
                .and_then(|i| i.checked_sub(1))
                .map(|j| &e.runs[j]),
        )),
        throughput_chart: throughput_chart(e, latest, range.as_ref(), "capacity-throughput")?,
        latency_chart: latency_chart(e, latest, range.as_ref(), "capacity-latency")?,
        cpu_chart,
        history_chart: history_chart(e, "capacity-history")?,
        rows: e
            .runs
            .iter()
            .enumerate()
            .rev()
            .map(|(i, p)| run_row(ctx, p, i.checked_sub(1).map(|j| &e.runs[j])))
            .collect(),
        step_table_runs: STEP_TABLE_RUNS,
        limit: range
            .as_ref()
            .map(|r| format!("{} req/s", number(r.median)))
            .unwrap_or_else(|| "–".into()),
        limit_spread: range
            .as_ref()
            .map(|r| {
                format!(
                    "{}–{} req/s over the last {} step-load run{} at this level",
                    number(r.min),
                    number(r.max),
                    r.runs.len(),
                    if r.runs.len() == 1 { "" } else { "s" }
                )
            })
            .unwrap_or_default(),
        expected_p99,
        setup: setup(ctx, latest),
    };
    let html = render(&page, &format!("capacity page of {}", e.id))?;
    Ok(Some((capacity_href(slugs, &e.id), html)))
}

/// The rows of the overview's capacity table, one per endpoint with a
/// step-load run.
pub fn capacity_summaries(analysis: &Analysis, slugs: &Slugs) -> Vec<CapacitySummary> {
    analysis
        .capacity
        .iter()
        .filter_map(|e| {
            let latest = e.latest()?;
            Some(CapacitySummary {
                name: e.name.clone(),
                href: capacity_href(slugs, &e.id),
                run: latest.run.clone(),
                knee: latest
                    .knee
                    .knee_rps
                    .map(number)
                    .unwrap_or_else(|| "–".into()),
                limit: limit_cell(e),
                verdict: latest.verdict.as_str(),
                state: state(latest),
            })
        })
        .collect()
}
