//! HTML pages. Each `*Page` struct is the askama template of the same
//! name in `templates/`; its fields are display-ready strings made with
//! `super::format`, so templates hold no logic beyond loops and ifs.
//! Every string from data is escaped by askama; chart SVG (marked `|safe`)
//! escapes its own text in `super::charts`.

use askama::Template;

use super::charts::{HeatmapRow, PointInfo, heatmap, sparkline, trend_chart};
use super::display::{DisplayState, display_state};
use super::evidence::{EvidenceView, evidence_view};
use super::figures::{FiguresView, RoundCell, environment_mark, round_cells, round_failure};
use super::flame_pages::{FlameLink, flame_links};
use super::{Site, Slugs, format as f};
use crate::analyse::alarms::Alarm;
use crate::analyse::changepoint::LevelShift;
use crate::analyse::{Analysis, EndpointAnalysis, EnvironmentChange, RunPoint, Verdict};
use crate::error::Error;
use crate::model::Round;

/// Sparkline length on the overview: about four months at three runs a week.
const SPARK_RUNS: usize = 52;
/// Heatmap width on the overview: a year of ISO weeks. Older weeks are on
/// the endpoint pages and in the data files, and the page says so.
const HEATMAP_WEEKS: usize = 53;

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

pub struct EndpointRow {
    pub name: String,
    pub id: String,
    pub href: String,
    pub latest_run: String,
    pub latest_run_href: String,
    pub latest_date: String,
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
    pub latest_run: String,
    pub latest_run_href: String,
    pub latest_regressions: usize,
    /// Endpoints whose latest run failed.
    pub latest_failed: usize,
    /// "environment suspect: …" when the latest run is, else empty.
    pub latest_environment: String,
    pub settings_line: String,
    pub diagnostics: Vec<String>,
    /// The calendar heatmap (SVG) and how many older weeks it leaves out.
    pub heatmap: String,
    pub heatmap_older_weeks: usize,
    /// Endpoints with step-load runs: latest knee, limit, verdict.
    pub capacity: Vec<super::capacity::CapacitySummary>,
}

pub struct PointRow {
    pub run: String,
    pub run_href: String,
    pub date: String,
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
    /// "between run A (commit …) and run B (commit …)".
    pub suspect: String,
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
    /// "between run A (commit …) and run B (commit …)".
    pub suspect: String,
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

pub struct RunEndpointRow {
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
    /// Endpoints that failed in this run.
    pub failed: usize,
    /// "environment suspect: …" when most endpoints moved together.
    pub environment: String,
    pub prev: Option<(String, String)>,
    pub next: Option<(String, String)>,
}

#[derive(Template)]
#[template(path = "history.html")]
pub struct HistoryPage {
    pub root: &'static str,
    /// Every endpoint's change points, newest first.
    pub change_points: Vec<ChangePointRow>,
    pub env_changes: Vec<EnvChangeRow>,
    pub regressions: usize,
    pub improvements: usize,
    pub settings_line: String,
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
    pub environment: String,
}

#[derive(Template)]
#[template(path = "runs.html")]
pub struct RunsPage {
    pub root: &'static str,
    pub rows: Vec<RunListRow>,
}

fn render(t: &impl Template, what: &str) -> Result<Vec<u8>, Error> {
    t.render()
        .map(String::into_bytes)
        .map_err(|e| Error::Internal(format!("rendering {what}: {e}")))
}

fn settings_line(analysis: &Analysis) -> String {
    let a = &analysis.settings.analysis;
    format!(
        "Per run: median of the rounds' p99 ({} rounds expected; failed rounds, with no latency or at least {} errors, \
         left out). Baseline: median of the last {} accepted runs (at least {}). Regression: median above baseline ×{}, \
         error rate above max(baseline + {}, {}), or throughput below baseline × {} at the same load profile.",
        a.expected_rounds,
        crate::analyse::figures::percent(a.failed_round_error_rate),
        a.baseline_window,
        a.min_baseline_runs,
        a.threshold_ratio,
        crate::analyse::figures::percent(a.error_rate_delta),
        crate::analyse::figures::percent(a.max_error_rate),
        1.0 - a.throughput_drop
    )
}

fn point_row(
    analysis: &Analysis,
    p: &RunPoint,
    e: &EndpointAnalysis,
    slugs: &Slugs,
    root: &str,
) -> PointRow {
    PointRow {
        run: p.run.clone(),
        run_href: format!(
            "{root}runs/{}.html#{}",
            slugs.run(&p.run),
            slugs.endpoint(&e.id)
        ),
        date: f::date(p.started_at),
        rounds: round_cells(p),
        round_count: p.rounds.len(),
        median: f::ms(p.median_p99_ms),
        baseline: f::opt_ms(p.baseline_p99_ms),
        threshold: f::opt_ms(p.threshold_p99_ms(e.threshold_ratio)),
        ratio: f::ratio(p.ratio),
        change: f::change(p.ratio),
        verdict: VerdictView::of(p),
        figures: FiguresView::of_point(p),
        no_baseline: p.no_baseline_reason.clone().unwrap_or_default(),
        environment: analysis
            .runs
            .get(p.run_index)
            .map(environment_mark)
            .unwrap_or_default(),
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
        suspect: cp.suspect.describe(),
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
        suspect: a.suspect.describe(),
        figures: FiguresView::of(&a.figures),
        environment_suspect: a.environment_suspect,
    }
}

pub(super) fn render_pages(
    analysis: &Analysis,
    slugs: &Slugs,
    site: &mut Site,
) -> Result<(), Error> {
    let settings = settings_line(analysis);
    let capacity = super::capacity::render_capacity_pages(analysis, slugs, site, &settings)?;

    // Overview.
    let mut rows: Vec<EndpointRow> = analysis
        .endpoints
        .iter()
        .filter_map(|e| {
            let p = e.latest()?;
            Some(EndpointRow {
                name: e.name.clone(),
                id: e.id.clone(),
                href: format!("endpoints/{}.html", slugs.endpoint(&e.id)),
                latest_run: p.run.clone(),
                latest_run_href: format!("runs/{}.html", slugs.run(&p.run)),
                latest_date: f::date(p.started_at),
                median: f::ms(p.median_p99_ms),
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
    let latest_run = analysis.runs.last();
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
        first_date: analysis
            .runs
            .first()
            .map(|r| f::date(r.started_at))
            .unwrap_or_default(),
        last_date: latest_run
            .map(|r| f::date(r.started_at))
            .unwrap_or_default(),
        latest_run: latest_run.map(|r| r.id.clone()).unwrap_or_default(),
        latest_run_href: latest_run
            .map(|r| format!("runs/{}.html", slugs.run(&r.id)))
            .unwrap_or_default(),
        latest_regressions,
        latest_failed: analysis.latest_run_failures(),
        latest_environment: latest_run.map(environment_mark).unwrap_or_default(),
        rows,
        settings_line: settings.clone(),
        diagnostics: analysis.diagnostics.iter().map(|d| d.to_string()).collect(),
        capacity,
    };
    site.insert("index.html", render(&index, "index.html")?);

    // Endpoint pages.
    for e in &analysis.endpoints {
        let slug = slugs.endpoint(&e.id);
        let root = "../";
        let infos: Vec<PointInfo> = e
            .points
            .iter()
            .map(|p| PointInfo {
                href: format!("{root}runs/{}.html#{slug}", slugs.run(&p.run)),
                // One fact a line: the native tooltip shows the lines,
                // app.js turns them into a small table.
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
            })
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
            .map(|p| point_row(analysis, p, e, slugs, root))
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
                .collect(),
            env_changes: analysis
                .environment_changes
                .iter()
                .filter(|c| first.is_some_and(|t| t <= c.started_at))
                .filter(|c| last.is_some_and(|t| c.started_at <= t))
                .rev()
                .map(|c| env_change_row(c, slugs, root))
                .collect(),
            policy: analysis.settings.alarms.policy.name(),
            alarms,
            csv_href: format!("{root}data/endpoints/{slug}.csv"),
            latest: e.latest().map(|p| point_row(analysis, p, e, slugs, root)),
            rows,
            threshold_ratio: format!("×{}", e.threshold_ratio),
            settings_line: settings.clone(),
            capacity: analysis
                .capacity
                .iter()
                .find(|c| c.id == e.id)
                .and_then(|c| {
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
                }),
        };
        site.insert(&format!("endpoints/{slug}.html"), render(&page, &e.id)?);
    }

    // History of level shifts and environment changes.
    site.insert("history.html", history_page(analysis, slugs)?);

    // Run pages.
    let mut list = Vec::with_capacity(analysis.runs.len());
    for (i, run) in analysis.runs.iter().enumerate() {
        let root = "../";
        let mut rows = Vec::new();
        for e in &analysis.endpoints {
            let Some(p) = e.points.iter().find(|p| p.run_index == i) else {
                continue;
            };
            rows.push(RunEndpointRow {
                name: e.name.clone(),
                href: format!("{root}endpoints/{}.html", slugs.endpoint(&e.id)),
                anchor: slugs.endpoint(&e.id).to_string(),
                median: f::ms(p.median_p99_ms),
                baseline: f::opt_ms(p.baseline_p99_ms),
                ratio: f::ratio(p.ratio),
                change: f::change(p.ratio),
                verdict: VerdictView::of(p),
                figures: FiguresView::of_point(p),
                no_baseline: p.no_baseline_reason.clone().unwrap_or_default(),
                rounds: p
                    .rounds
                    .iter()
                    .map(|r| {
                        let outlier = p
                            .evidence
                            .outlier_rounds
                            .iter()
                            .any(|o| o.round == r.number);
                        round_row(r, outlier, round_failure(p, r))
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
        let failed = rows.iter().filter(|r| r.verdict.key == "failed").count();
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
            failed,
            environment: environment_mark(run),
            prev: i.checked_sub(1).and_then(link),
            next: link(i + 1),
            rows: rows.into_iter().collect(),
        };
        site.insert(
            &format!("runs/{}.html", slugs.run(&run.id)),
            render(&page, &run.id)?,
        );
        list.push(RunListRow {
            id: run.id.clone(),
            href: format!("{}.html", slugs.run(&run.id)),
            date: f::datetime(run.started_at),
            commit: run.meta.commit.clone().unwrap_or_default(),
            branch: run.meta.branch.clone().unwrap_or_default(),
            release: run.meta.release.clone().unwrap_or_default(),
            endpoints: page.rows.len(),
            regressions,
            incomplete: !run.problems.is_empty(),
            environment: environment_mark(run),
        });
    }
    list.reverse();
    site.insert(
        "runs/index.html",
        render(
            &RunsPage {
                root: "../",
                rows: list,
            },
            "runs/index.html",
        )?,
    );
    Ok(())
}

/// `history.html`: every change point of every endpoint, newest first
/// (ties by endpoint name, then id), and the environment changes.
pub fn history_page(analysis: &Analysis, slugs: &Slugs) -> Result<Vec<u8>, Error> {
    let mut shifts: Vec<(&LevelShift, &EndpointAnalysis)> = analysis
        .endpoints
        .iter()
        .flat_map(|e| e.change_points.iter().map(move |cp| (cp, e)))
        .collect();
    shifts.sort_by(|(a, ea), (b, eb)| {
        b.started_at
            .cmp(&a.started_at)
            .then_with(|| ea.name.cmp(&eb.name))
            .then_with(|| ea.id.cmp(&eb.id))
            .then_with(|| a.point_index.cmp(&b.point_index))
    });
    let c = &analysis.settings.changepoint;
    let page = HistoryPage {
        root: "",
        regressions: shifts
            .iter()
            .filter(|(cp, _)| cp.direction == "regression")
            .count(),
        improvements: shifts
            .iter()
            .filter(|(cp, _)| cp.direction != "regression")
            .count(),
        change_points: shifts
            .iter()
            .map(|(cp, e)| change_point_row(cp, e, slugs, ""))
            .collect(),
        env_changes: analysis
            .environment_changes
            .iter()
            .rev()
            .map(|ch| env_change_row(ch, slugs, ""))
            .collect(),
        settings_line: format!(
            "Change points: Otava's E-divisive means with a t-test over each endpoint's run medians \
             (window {}, p-value under {}, minimum change {}), per stretch of runs with the same load profile; \
             runs with too few rounds are left out.",
            c.window_len,
            c.max_pvalue,
            f::percent(Some(c.min_magnitude))
        ),
    };
    render(&page, "history.html")
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
