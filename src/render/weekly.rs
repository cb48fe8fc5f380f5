//! `weekly.html`: the meeting page, projector first. Its first screen
//! answers "what needs a decision this week": one line per open problem
//! (`analyse::problems`) with its current ratio, age, suspect range,
//! triage and flame attribution, grouped into one summary when several
//! came in with the same suspect range. Then the new alarms of the site's
//! policy (one per endpoint and suspect commit range, one row per
//! endpoint), the untriaged
//! ones, its false-positive rate by week (from the week of the first run),
//! and, folded away, the definitions and the back-test: what every policy
//! would have done over the whole history, the only place other policies
//! appear.
//!
//! Every count on the page comes from one week, half-open [Monday 00:00,
//! next Monday 00:00) UTC (`analyse::weekly`), and `data/analysis.json`
//! lists the same problems and counts (`weekly`).
//!
//! Each open problem and improvement shows its change in milliseconds
//! (before → after) and a small trend of its last runs. Every week with
//! runs keeps its own review, `weekly/2026-w47.html`, so last week's can be
//! reopened; `weekly.html` is the reviewed week's, with the list of all
//! of them. Runs of one day are told apart by their time of day
//! (`Ctx::when`).

use std::collections::BTreeMap;

use askama::Template;

use super::filters;

use super::charts::evidence::evidence_svg;
use super::charts::mini_trend::{MiniPoint, mini_trend};
use super::context::{Ctx, RunLabel, SuspectView};
use super::display::{DisplayState, display_state};
use super::evidence::{EvidenceView, evidence_view};
use super::flame_pages::{FlameLink, flame_links};
use super::format as f;
use super::rows::{Page, render};
use crate::analyse::alarms::{Alarm, PolicyStats};
use crate::analyse::improvements::{Improvement, week_improvements};
use crate::analyse::problems::{Problem, ProblemKind, open_problems};
use crate::analyse::verdict::CapacityVerdict;
use crate::analyse::verdict::Figure;
use crate::analyse::weekly::{AlarmGroup, WeekSpec, WeeklyReview, weekly_review};
use crate::analyse::{Analysis, Policy};
use crate::error::Error;

/// One open problem, one line (two at most) on the projector.
pub struct ProblemRow {
    /// `latency`, `capacity` (CSS class suffix).
    pub kind: &'static str,
    /// `▲ latency`: a shape as well as a colour.
    pub kind_words: String,
    pub endpoint: String,
    /// The page to dig in: the endpoint page, or the capacity page.
    pub href: String,
    /// Now, against the baseline: `×1.37`, and as a change `+37.0%`.
    pub ratio: String,
    pub change: String,
    /// At the first bad run, when it differs from now: `×1.24`.
    pub first_ratio: String,
    /// The level before the change (the baseline at the first bad run)
    /// and now (the latest run up to the week's end), with their unit:
    /// `41.2`, `56.4`, `ms` (or the knee in `req/s`).
    pub before: String,
    pub after: String,
    pub unit: &'static str,
    /// The last runs' values against the baseline (`charts::mini_trend`).
    pub trend: String,
    /// `since 2026-11-20, 3 runs`.
    pub age: String,
    pub new_this_week: bool,
    pub suspect: Option<SuspectView>,
    /// `confirmed`, `candidate`, or empty.
    pub state: &'static str,
    /// `real`, or `untriaged`.
    pub label: String,
    pub owner: String,
    pub status: String,
    pub issue: String,
    /// The flame graphs of the runs over the line, with the attribution.
    pub flames: Vec<FlameLink>,
}

/// An endpoint that got faster this week (`analyse::improvements`).
pub struct ImprovementRow {
    pub endpoint: String,
    pub href: String,
    /// `×0.31`, `-69.0%`.
    pub ratio: String,
    pub change: String,
    /// Baseline → median of its first improved run, in ms.
    pub before: String,
    pub after: String,
    /// `since 2026-12-01 14:05, 1 run`.
    pub age: String,
    pub suspect: Option<SuspectView>,
    pub trend: String,
    /// It began with an environment-suspect run.
    pub environment_suspect: bool,
}

/// A week's review in the list of all of them.
pub struct PastWeekRow {
    pub week: String,
    pub href: String,
    /// `Mon 2026-11-23`.
    pub monday: String,
    pub runs: usize,
    pub problems: usize,
    pub new_alarms: usize,
    pub improvements: usize,
    /// The week this page reviews.
    pub current: bool,
}

/// Problems that came in with the same suspect range (Perfherder's alert
/// summary): one heading, one line per endpoint.
pub struct ProblemGroup {
    /// Empty for a group of one.
    pub heading: String,
    pub suspect: Option<SuspectView>,
    pub problems: Vec<ProblemRow>,
}

/// One endpoint in the new-alarms table: its problems this week (the
/// alarms of the site's policy that share a suspect commit range,
/// `analyse::weekly::AlarmGroup`), the one to look at in the row's cells
/// and the others listed beneath, so that each endpoint is listed once.
pub struct NewAlarmRow {
    pub endpoint: String,
    pub endpoint_href: String,
    /// The problem the row shows: the open one, else the latest.
    pub lead: NewProblem,
    /// The endpoint's other problems this week, oldest first (noise that
    /// came and went before the change the row shows, …).
    pub others: Vec<NewProblem>,
}

/// One endpoint's alarms that share a suspect commit range.
pub struct NewProblem {
    /// The first alarm's run.
    pub run: RunLabel,
    /// The last run at the old level → the first at the new one, with the
    /// commits.
    pub suspect: Option<SuspectView>,
    /// How many alarms it stands for, when more than one ("2 alarms").
    pub alarms: String,
    pub ratio: String,
    pub state: &'static str,
    pub label: String,
    /// Whether it is one of the open problems above.
    pub open_problem: bool,
}

/// An alarm with its evidence: the folded-away detail of each open
/// latency problem, and the untriaged list.
pub struct AlarmRow {
    pub endpoint: String,
    pub endpoint_href: String,
    pub run: RunLabel,
    /// The last run at the old level → the alarm's run, with the commits.
    pub suspect: Option<SuspectView>,
    pub rounds: String,
    pub evidence: String,
    pub median: String,
    pub baseline: String,
    pub ratio: String,
    pub change: String,
    pub state: &'static str,
    pub label: String,
    pub inferred: &'static str,
    pub whole_run: String,
    pub note: String,
    /// Band, likely GC/noise rounds, shift ([`super::evidence`]).
    pub stats: EvidenceView,
    /// Error rate and throughput of the first run, failed rounds.
    pub figures: super::figures::FiguresView,
    pub environment_suspect: bool,
}

pub struct PolicyHead {
    pub name: &'static str,
    pub summary: &'static str,
}

pub struct WeekFpRow {
    pub week: String,
    /// The reviewed week's row.
    pub current: bool,
    /// Per policy, in [`Policy::ALL`] order: "alarms (noise/labelled) rate".
    pub cells: Vec<String>,
}

pub struct NoiseRow {
    pub endpoint: String,
    pub href: String,
    pub before: String,
    pub now: String,
    pub runs: usize,
}

pub struct PolicyCell {
    pub alarms: usize,
    pub per_week: String,
    pub labels: String,
    pub fp: String,
    pub fp_interval: String,
    pub delay: String,
    pub detected: String,
}

pub struct PolicyTableRow {
    pub endpoint: String,
    pub href: String,
    pub cells: Vec<PolicyCell>,
}

#[derive(Template)]
#[template(path = "weekly.html")]
pub struct WeeklyPage {
    /// `""` for `weekly.html`, `"../"` for `weekly/<week>.html`.
    pub root: &'static str,
    /// The week before and after with a review: `(week, href)`.
    pub previous: Option<(String, String)>,
    pub next: Option<(String, String)>,
    /// This week's own page (`weekly/2026-W48.html`), relative to the page.
    pub permalink: String,
    /// Every week's review, newest first: on `weekly.html` only.
    pub past: Vec<PastWeekRow>,
    /// Whether the page shows the whole-history policy table (the
    /// `weekly.html` page; a week's own page links to it instead).
    pub whole_history: bool,
    pub improvements: Vec<ImprovementRow>,
    /// `2026-W48`.
    pub title: String,
    /// `Mon 2026-11-23 to Sun 2026-11-29 (UTC)`.
    pub period: String,
    pub policy: &'static str,
    pub run_count: usize,
    pub problem_count: usize,
    pub new_problems: usize,
    pub groups: Vec<ProblemGroup>,
    /// The site's policy's new alarms: one per endpoint and suspect commit
    /// range (the rows of `new_alarms` list them by endpoint).
    pub new_alarm_count: usize,
    pub new_alarms: Vec<NewAlarmRow>,
    pub untriaged: Vec<AlarmRow>,
    /// Untriaged alarms among the open problems (not listed twice).
    pub untriaged_in_problems: usize,
    pub evidence: Vec<AlarmRow>,
    pub policies: Vec<PolicyHead>,
    /// The false-positive table's columns: the site's policy (the others
    /// are in the back-test table).
    pub fp_policies: Vec<PolicyHead>,
    pub fp_weeks: Vec<WeekFpRow>,
    pub noisier: Vec<NoiseRow>,
    pub policy_rows: Vec<PolicyTableRow>,
    pub policy_total: Vec<PolicyCell>,
    pub regressions: usize,
    /// Environment-suspect runs of the week: (run, href, what moved).
    pub environment_runs: Vec<(String, String, String)>,
    /// The site's policy's run-wide alarms of the week, one per run:
    /// (run, href, "9 of 12 endpoints slower together (median ×1.25)",
    /// how many endpoints' alarms it stands for).
    pub run_wide: Vec<(String, String, String, usize)>,
}

/// The flame graphs of an alarm: those of its first run over the line
/// with an attribution, else of its first run with any profile.
fn alarm_flames(ctx: &Ctx, endpoint: &str, runs: &[String], root: &str) -> Vec<FlameLink> {
    let Some(e) = ctx.analysis.endpoints.iter().find(|e| e.id == endpoint) else {
        return Vec::new();
    };
    let over: Vec<&crate::analyse::RunPoint> = runs
        .iter()
        .filter_map(|run| e.points.iter().find(|p| &p.run == run))
        .collect();
    let chosen = over
        .iter()
        .find(|p| p.profiles.iter().any(|pa| pa.attribution.is_some()))
        .or_else(|| over.iter().find(|p| !p.profiles.is_empty()));
    chosen
        .map(|p| flame_links(p, e, ctx.slugs, root))
        .unwrap_or_default()
}

fn endpoint_name(analysis: &Analysis, id: &str) -> String {
    analysis
        .endpoints
        .iter()
        .map(|e| (&e.id, &e.name))
        .chain(analysis.capacity.iter().map(|e| (&e.id, &e.name)))
        .find(|(i, _)| *i == id)
        .map(|(_, n)| n.clone())
        .unwrap_or_else(|| id.to_string())
}

fn problem_row(ctx: &Ctx, p: &Problem, root: &str) -> ProblemRow {
    let analysis = ctx.analysis;
    let alarm = ctx.alarm_at(&p.endpoint, &p.first_bad_run);
    let (kind_words, href) = match p.kind {
        ProblemKind::Latency => (
            alarm.map_or_else(|| "▲ latency".to_string(), latency_kind_words),
            format!("{root}endpoints/{}.html", ctx.slugs.endpoint(&p.endpoint)),
        ),
        ProblemKind::Capacity => (
            "▼ capacity".to_string(),
            format!(
                "{root}{}",
                super::capacity::capacity_href(ctx.slugs, &p.endpoint)
            ),
        ),
    };
    let level = problem_level(ctx, p);
    let over: Vec<String> = alarm.map(|a| a.over_runs.clone()).unwrap_or_default();
    let triage = p.triage(analysis);
    let follow = triage.map(|t| &t.follow_up);
    ProblemRow {
        kind: p.kind.as_str(),
        kind_words,
        endpoint: endpoint_name(analysis, &p.endpoint),
        href,
        ratio: f::ratio(p.ratio),
        change: f::change(p.ratio),
        first_ratio: match (p.first_ratio, p.ratio) {
            (Some(a), Some(b)) if f::ratio(Some(a)) != f::ratio(Some(b)) => f::ratio(Some(a)),
            _ => String::new(),
        },
        before: level.before,
        after: level.after,
        unit: level.unit,
        trend: level.trend,
        age: age(ctx, p.since, p.runs),
        new_this_week: p.new_this_week,
        suspect: Some(ctx.suspect_between(p.last_good_run.as_deref(), &p.first_bad_run, root)),
        state: p.state.map(|s| s.as_str()).unwrap_or(""),
        label: p
            .label
            .map(|l| l.to_string())
            .unwrap_or_else(|| "untriaged".into()),
        owner: follow.and_then(|x| x.owner.clone()).unwrap_or_default(),
        status: follow
            .and_then(|x| x.status)
            .map(|s| s.as_str().to_string())
            .unwrap_or_default(),
        issue: follow.and_then(|x| x.issue.clone()).unwrap_or_default(),
        flames: alarm_flames(ctx, &p.endpoint, &over, root),
    }
}

/// `since 2026-11-20, 4 runs` (with the time of day when runs share it).
fn age(ctx: &Ctx, since: chrono::DateTime<chrono::Utc>, runs: usize) -> String {
    format!(
        "since {}, {} run{}",
        ctx.when(since),
        runs,
        if runs == 1 { "" } else { "s" }
    )
}

/// What an alarm's problem is about, with a shape: the figures its first
/// run crossed (`▲ latency`, `▲ error rate`, `▼ throughput`), or a failed
/// run, which has no valid latency.
fn latency_kind_words(a: &Alarm) -> String {
    if a.verdict == crate::analyse::Verdict::Failed {
        return "■ failed run".to_string();
    }
    let words: Vec<&str> = a
        .figures
        .regressed
        .iter()
        .map(|f| match f {
            Figure::P99 => "▲ latency",
            Figure::ErrorRate => "▲ error rate",
            Figure::Throughput => "▼ throughput",
        })
        .collect();
    if words.is_empty() {
        "▲ latency".to_string()
    } else {
        words.join(" · ")
    }
}

/// Open capacity problems nobody labelled: untriaged like an unlabelled
/// alarm, so the page's and `analysis.json`'s untriaged counts include
/// them.
pub(super) fn untriaged_capacity(problems: &[Problem]) -> usize {
    problems
        .iter()
        .filter(|p| p.kind == ProblemKind::Capacity && p.label.is_none())
        .count()
}

/// Problems grouped by suspect range, in the order of their first
/// problem (Perfherder's alert summaries).
fn problem_groups(ctx: &Ctx, problems: &[Problem], root: &str) -> Vec<ProblemGroup> {
    let mut order: Vec<(Option<String>, String)> = Vec::new();
    let mut by_range: BTreeMap<(Option<String>, String), Vec<&Problem>> = BTreeMap::new();
    for p in problems {
        let key = (p.last_good_run.clone(), p.first_bad_run.clone());
        if !by_range.contains_key(&key) {
            order.push(key.clone());
        }
        by_range.entry(key).or_default().push(p);
    }
    order
        .into_iter()
        .map(|key| {
            let members = &by_range[&key];
            let rows: Vec<ProblemRow> = members.iter().map(|p| problem_row(ctx, p, root)).collect();
            ProblemGroup {
                heading: if rows.len() > 1 {
                    format!("{} endpoints changed with run {}", rows.len(), key.1)
                } else {
                    String::new()
                },
                suspect: rows.first().and_then(|r| r.suspect.clone()),
                problems: rows,
            }
        })
        .collect()
}

/// Where an alarm's change came in ([`Ctx::suspect`]).
fn alarm_suspect(ctx: &Ctx, a: &Alarm, root: &str) -> Option<SuspectView> {
    let e = ctx.analysis.endpoints.iter().find(|e| e.id == a.endpoint)?;
    ctx.suspect(e, a.onset_index, root)
}

/// An alarm's median p99, or "no valid latency" when its run failed.
pub(super) fn alarm_median(a: &Alarm) -> String {
    if a.verdict == crate::analyse::Verdict::Failed {
        f::NO_VALID_LATENCY.to_string()
    } else {
        f::ms(a.median_p99_ms)
    }
}

fn alarm_row(ctx: &Ctx, a: &Alarm, root: &str) -> AlarmRow {
    let analysis = ctx.analysis;
    let threshold = analysis
        .endpoints
        .iter()
        .find(|e| e.id == a.endpoint)
        .map(|e| e.threshold_ratio)
        .unwrap_or(analysis.settings.analysis.threshold_ratio);
    AlarmRow {
        endpoint: endpoint_name(analysis, &a.endpoint),
        endpoint_href: format!("{root}endpoints/{}.html", ctx.slugs.endpoint(&a.endpoint)),
        run: ctx.run_label(&a.run, root, Some(ctx.slugs.endpoint(&a.endpoint))),
        suspect: alarm_suspect(ctx, a, root),
        rounds: a
            .round_p99_ms
            .iter()
            .map(|v| f::ms(*v))
            .collect::<Vec<_>>()
            .join(" · "),
        evidence: evidence_svg(a, threshold),
        median: alarm_median(a),
        baseline: f::opt_ms(a.baseline_p99_ms),
        ratio: f::ratio(a.ratio),
        change: f::change(a.ratio),
        state: a.state.as_str(),
        label: a
            .label
            .map(|l| l.to_string())
            .unwrap_or_else(|| "untriaged".into()),
        inferred: a.inferred_label.map(|l| l.as_str()).unwrap_or("–"),
        whole_run: match a.run_median_ratio {
            Some(ratio) if a.run_endpoints > 1 => {
                format!(
                    "{} over {} endpoints",
                    f::ratio(Some(ratio)),
                    a.run_endpoints
                )
            }
            _ => "–".into(),
        },
        note: a.label_note.clone().unwrap_or_default(),
        stats: evidence_view(&a.evidence),
        figures: super::figures::FiguresView::of(&a.figures),
        environment_suspect: a.environment_suspect,
    }
}

/// The site's policy's alarms raised in the week: one row per endpoint, in
/// the order of the problem each row shows, whose cells show its open
/// problem (else its latest) and list its other suspect commit ranges.
fn new_alarm_rows(
    ctx: &Ctx,
    review: &WeeklyReview,
    problems: &[Problem],
    root: &str,
) -> Vec<NewAlarmRow> {
    // Each endpoint's groups with their place in the week, in the order of
    // their first alarm.
    let mut by_endpoint: Vec<(&AlarmGroup, Vec<(usize, NewProblem)>)> = Vec::new();
    for (order, g) in review.new_groups.iter().enumerate() {
        let first = &g.alarms[0];
        let latest = g.latest();
        let problem = NewProblem {
            run: ctx.run_label(&first.run, root, Some(ctx.slugs.endpoint(&g.endpoint))),
            suspect: alarm_suspect(ctx, first, root),
            alarms: match g.alarms.len() {
                1 => String::new(),
                n => format!("{n} alarms"),
            },
            ratio: f::ratio(latest.ratio),
            state: latest.state.as_str(),
            label: g
                .alarms
                .iter()
                .rev()
                .find_map(|a| a.label)
                .map(|l| l.to_string())
                .unwrap_or_else(|| "untriaged".into()),
            open_problem: problems.iter().any(|p| {
                p.endpoint == g.endpoint && g.alarms.iter().any(|a| p.first_bad_run == a.run)
            }),
        };
        match by_endpoint
            .iter_mut()
            .find(|(e, _)| e.endpoint == g.endpoint)
        {
            Some((_, list)) => list.push((order, problem)),
            None => by_endpoint.push((g, vec![(order, problem)])),
        }
    }
    let mut rows: Vec<(usize, NewAlarmRow)> = by_endpoint
        .into_iter()
        .map(|(g, mut list)| {
            let at = list
                .iter()
                .rposition(|(_, p)| p.open_problem)
                .unwrap_or(list.len() - 1);
            let (order, lead) = list.remove(at);
            let row = NewAlarmRow {
                endpoint: g.endpoint_name.clone(),
                endpoint_href: format!("{root}endpoints/{}.html", ctx.slugs.endpoint(&g.endpoint)),
                lead,
                others: list.into_iter().map(|(_, p)| p).collect(),
            };
            (order, row)
        })
        .collect();
    rows.sort_by_key(|(order, _)| *order);
    rows.into_iter().map(|(_, r)| r).collect()
}

/// The false-positive rate by week of the site's policy.
fn fp_rows(review: &WeeklyReview) -> Vec<WeekFpRow> {
    review
        .fp_by_week
        .iter()
        .map(|w| WeekFpRow {
            current: w.week == review.title,
            week: w.week.clone(),
            cells: [review.policy]
                .iter()
                .map(|p| {
                    let c = &w.policies[p];
                    if c.alarms == 0 {
                        "0".to_string()
                    } else {
                        format!(
                            "{} ({} noise of {} labelled) {}",
                            c.alarms,
                            c.noise,
                            c.real + c.noise,
                            f::percent(c.fp_rate)
                        )
                    }
                })
                .collect(),
        })
        .collect()
}

fn policy_cell(s: &PolicyStats) -> PolicyCell {
    PolicyCell {
        alarms: s.alarms,
        per_week: format!("{:.2}", s.alarms_per_week),
        labels: format!(
            "{} real · {} noise · {} unknown",
            s.real, s.noise, s.unknown
        ),
        fp: f::percent(s.fp_rate),
        fp_interval: s
            .fp_interval
            .map(|i| format!("{}–{}", f::percent(Some(i.low)), f::percent(Some(i.high))))
            .unwrap_or_default(),
        delay: s
            .median_delay_days
            .map(|d| format!("{d:.1} d"))
            .unwrap_or_else(|| "–".into()),
        detected: format!("{}/{}", s.detected, s.regressions),
    }
}

fn policy_rows(ctx: &Ctx, root: &str) -> (Vec<PolicyTableRow>, Vec<PolicyCell>) {
    let alarms = &ctx.analysis.alarms;
    let rows = alarms
        .endpoints
        .iter()
        .map(|e| PolicyTableRow {
            endpoint: e.name.clone(),
            href: format!("{root}endpoints/{}.html", ctx.slugs.endpoint(&e.endpoint)),
            cells: Policy::ALL
                .iter()
                .map(|p| policy_cell(e.policies.get(p).unwrap_or(&PolicyStats::default())))
                .collect(),
        })
        .collect();
    let total = Policy::ALL
        .iter()
        .map(|p| policy_cell(alarms.totals.get(p).unwrap_or(&PolicyStats::default())))
        .collect();
    (rows, total)
}

/// The reviewed week and its open problems: what the page and
/// `data/analysis.json` (`weekly`) both show.
pub fn review_and_problems(
    analysis: &Analysis,
    week: WeekSpec,
) -> Option<(WeeklyReview, Vec<Problem>)> {
    let review = weekly_review(analysis, week, analysis.settings.alarms.policy)?;
    let problems = open_problems(analysis, review.from, review.to);
    Some((review, problems))
}

/// The weeks that have a review of their own (`weekly/<week>.html`):
/// every ISO week with a run whose time can be trusted, oldest first.
pub fn review_weeks(analysis: &Analysis) -> Vec<WeekSpec> {
    let mut weeks: Vec<WeekSpec> = analysis
        .runs
        .iter()
        .filter(|r| r.untrusted_time.is_none())
        .map(|r| week_of(r.started_at))
        .collect();
    weeks.sort_by_key(|w| week_key(*w));
    weeks.dedup();
    weeks
}

fn week_of(t: chrono::DateTime<chrono::Utc>) -> WeekSpec {
    use chrono::Datelike;
    let w = t.date_naive().iso_week();
    WeekSpec::Iso {
        year: w.year(),
        week: w.week(),
    }
}

fn week_key(w: WeekSpec) -> (i32, u32) {
    match w {
        WeekSpec::Iso { year, week } => (year, week),
        WeekSpec::Latest => (i32::MAX, 0),
    }
}

fn week_label(w: WeekSpec) -> String {
    match w {
        WeekSpec::Iso { year, week } => format!("{year}-W{week:02}"),
        WeekSpec::Latest => String::new(),
    }
}

/// A week's file name, `2026-w47.html`: lower case, as every file of the
/// site.
fn week_file(w: WeekSpec) -> String {
    format!("{}.html", week_label(w).to_lowercase())
}

/// Where a week's own review lives, relative to the site root:
/// `weekly/2026-w47.html`.
pub fn week_path(w: WeekSpec) -> String {
    format!("weekly/{}", week_file(w))
}

/// The level before a problem's change and now, and the trend of its
/// last runs up to the week's end.
struct Level {
    before: String,
    after: String,
    unit: &'static str,
    trend: String,
}

/// How many runs the trend beside a problem shows.
const TREND_RUNS: usize = 12;

fn problem_level(ctx: &Ctx, p: &Problem) -> Level {
    let analysis = ctx.analysis;
    let name = endpoint_name(analysis, &p.endpoint);
    match p.kind {
        ProblemKind::Latency => {
            let Some(e) = analysis.endpoints.iter().find(|e| e.id == p.endpoint) else {
                return Level::none("ms");
            };
            let first = e.points.iter().find(|x| x.run == p.first_bad_run);
            let latest = e.points.iter().find(|x| x.run == p.latest_run);
            let upto: Vec<&crate::analyse::RunPoint> = e
                .points
                .iter()
                .filter(|x| !x.untrusted_time && x.started_at <= p_latest_time(latest))
                .collect();
            let before = f::opt_ms(first.and_then(|x| x.baseline_p99_ms));
            let after = latest.map(f::median_p99).unwrap_or_else(|| "–".into());
            // A failed latest run has words, not a number: the unit goes
            // with the baseline ("383 ms → no valid latency").
            let (before, unit) = if after == f::NO_VALID_LATENCY {
                (format!("{before} ms"), "")
            } else {
                (before, "ms")
            };
            Level {
                before,
                after,
                unit,
                trend: latency_trend(&name, &upto),
            }
        }
        ProblemKind::Capacity => {
            let Some(e) = analysis.capacity.iter().find(|e| e.id == p.endpoint) else {
                return Level::none("req/s");
            };
            let first = e.runs.iter().find(|x| x.run == p.first_bad_run);
            let latest = e.runs.iter().find(|x| x.run == p.latest_run);
            let until = latest.map(|x| x.started_at);
            let upto: Vec<&crate::analyse::capacity::CapacityPoint> = e
                .runs
                .iter()
                .filter(|x| !x.untrusted_time && until.is_none_or(|u| x.started_at <= u))
                .collect();
            let shown = &upto[upto.len().saturating_sub(TREND_RUNS)..];
            let points: Vec<MiniPoint> = shown
                .iter()
                .map(|x| MiniPoint {
                    value: x.knee.knee_rps,
                    baseline: x.baseline_knee_rps,
                    state: match x.verdict {
                        CapacityVerdict::Regression if x.accepted_change => DisplayState::Accepted,
                        CapacityVerdict::Regression => DisplayState::Regression,
                        _ => DisplayState::Ok,
                    },
                })
                .collect();
            let number = |v: Option<f64>| {
                v.map(crate::analyse::capacity::number)
                    .unwrap_or_else(|| "–".into())
            };
            Level {
                before: number(first.and_then(|x| x.baseline_knee_rps)),
                after: number(latest.and_then(|x| x.knee.knee_rps)),
                unit: "req/s",
                trend: mini_trend(
                    &points,
                    &format!(
                        "{name}: the knee of the last {} step-load runs (req/s) against its baseline",
                        points.len()
                    ),
                ),
            }
        }
    }
}

fn p_latest_time(latest: Option<&crate::analyse::RunPoint>) -> chrono::DateTime<chrono::Utc> {
    latest.map_or(chrono::DateTime::<chrono::Utc>::MAX_UTC, |x| x.started_at)
}

impl Level {
    fn none(unit: &'static str) -> Level {
        Level {
            before: "–".into(),
            after: "–".into(),
            unit,
            trend: String::new(),
        }
    }
}

/// The last [`TREND_RUNS`] of `points` (oldest first) as a mini trend of
/// their medians against the baseline.
fn latency_trend(name: &str, points: &[&crate::analyse::RunPoint]) -> String {
    let shown = &points[points.len().saturating_sub(TREND_RUNS)..];
    let minis: Vec<MiniPoint> = shown
        .iter()
        .map(|x| MiniPoint {
            value: (x.verdict != crate::analyse::Verdict::Failed).then_some(x.median_p99_ms),
            baseline: x.baseline_p99_ms,
            state: display_state(x),
        })
        .collect();
    let words = match (shown.first(), shown.last()) {
        (Some(a), Some(b)) => format!(
            "{name}: median p99 of the last {} runs, {} to {} ms, against the baseline",
            shown.len(),
            f::median_p99(a),
            f::median_p99(b)
        ),
        _ => String::new(),
    };
    mini_trend(&minis, &words)
}

fn improvement_row(
    ctx: &Ctx,
    i: &Improvement,
    to: chrono::DateTime<chrono::Utc>,
    root: &str,
) -> ImprovementRow {
    let analysis = ctx.analysis;
    let name = endpoint_name(analysis, &i.endpoint);
    let e = analysis.endpoints.iter().find(|e| e.id == i.endpoint);
    let upto: Vec<&crate::analyse::RunPoint> = e
        .map(|e| {
            e.points
                .iter()
                .filter(|x| !x.untrusted_time && x.started_at < to)
                .collect()
        })
        .unwrap_or_default();
    ImprovementRow {
        href: format!("{root}endpoints/{}.html", ctx.slugs.endpoint(&i.endpoint)),
        ratio: f::ratio(i.ratio),
        change: f::change(i.ratio),
        before: f::opt_ms(i.before_ms),
        after: f::ms(i.after_ms),
        age: age(ctx, i.since, i.runs),
        suspect: Some(ctx.suspect_between(i.last_old_run.as_deref(), &i.first_run, root)),
        trend: latency_trend(&name, &upto),
        environment_suspect: i.environment_suspect,
        endpoint: name,
    }
}

/// Every week's review in one list, newest first, `current` marked.
fn past_weeks(analysis: &Analysis, weeks: &[WeekSpec], current: &str) -> Vec<PastWeekRow> {
    weeks
        .iter()
        .rev()
        .filter_map(|&w| {
            let (review, problems) = review_and_problems(analysis, w)?;
            Some(PastWeekRow {
                href: week_path(w),
                monday: format!("Mon {}", f::date(review.from)),
                runs: review.runs.len(),
                problems: problems.len(),
                new_alarms: review.new_alarms.len(),
                improvements: week_improvements(analysis, review.from, review.to).len(),
                current: review.title == current,
                week: review.title,
            })
        })
        .collect()
}

/// The reviews before and after `this` (`(week, href)`) and `this` one's
/// own page, as links from `weekly.html` (`main`) or from a page beside
/// them in `weekly/`.
type WeekLink = Option<(String, String)>;
fn week_links(this: WeekSpec, weeks: &[WeekSpec], main: bool) -> (WeekLink, WeekLink, String) {
    let href = |w: WeekSpec| {
        if main { week_path(w) } else { week_file(w) }
    };
    let previous = weeks
        .iter()
        .rev()
        .find(|w| week_key(**w) < week_key(this))
        .map(|&w| (week_label(w), href(w)));
    let next = weeks
        .iter()
        .find(|w| week_key(**w) > week_key(this))
        .map(|&w| (week_label(w), href(w)));
    (previous, next, href(this))
}

/// Environment-suspect runs of the week: (run, href, what moved).
fn environment_runs(ctx: &Ctx, review: &WeeklyReview, root: &str) -> Vec<(String, String, String)> {
    ctx.analysis
        .runs
        .iter()
        .filter(|r| review.runs.contains(&r.id))
        .filter_map(|r| {
            let shift = r.environment_suspect.as_ref()?;
            Some((
                r.id.clone(),
                format!("{root}runs/{}.html", ctx.slugs.run(&r.id)),
                shift.describe(),
            ))
        })
        .collect()
}

/// The review of one week, as `weekly.html` (`root` `""`, with the list
/// of every week's review and the whole-history policy table) or as the
/// week's own page (`root` `"../"`).
fn weekly_view(
    ctx: &Ctx,
    week: WeekSpec,
    root: &'static str,
    weeks: &[WeekSpec],
) -> Option<WeeklyPage> {
    let analysis = ctx.analysis;
    let (review, problems) = review_and_problems(analysis, week)?;
    let main = root.is_empty();
    let in_problems = |a: &Alarm| {
        problems
            .iter()
            .any(|p| p.endpoint == a.endpoint && p.first_bad_run == a.run)
    };
    let (previous, next, permalink) = week_links(week_of(review.from), weeks, main);
    let new_alarms = new_alarm_rows(ctx, &review, &problems, root);
    let (policy_rows, policy_total) = if main {
        policy_rows(ctx, root)
    } else {
        (Vec::new(), Vec::new())
    };
    let improvements = week_improvements(analysis, review.from, review.to)
        .iter()
        .map(|i| improvement_row(ctx, i, review.to, root))
        .collect();
    Some(WeeklyPage {
        root,
        previous,
        next,
        permalink,
        past: if main {
            past_weeks(analysis, weeks, &review.title)
        } else {
            Vec::new()
        },
        whole_history: main,
        improvements,
        title: review.title.clone(),
        period: format!(
            "Mon {} to Sun {} (UTC)",
            f::date(review.from),
            f::date(review.to - chrono::Duration::days(1))
        ),
        policy: review.policy.name(),
        run_count: review.runs.len(),
        problem_count: problems.len(),
        new_problems: problems.iter().filter(|p| p.new_this_week).count(),
        groups: problem_groups(ctx, &problems, root),
        new_alarm_count: review.new_groups.len(),
        new_alarms,
        untriaged: review
            .untriaged
            .iter()
            .filter(|r| !in_problems(&r.alarm))
            .map(|r| alarm_row(ctx, &r.alarm, root))
            .collect(),
        untriaged_in_problems: review
            .untriaged
            .iter()
            .filter(|r| in_problems(&r.alarm))
            .count()
            + untriaged_capacity(&problems),
        evidence: problems
            .iter()
            .filter(|p| p.kind == ProblemKind::Latency)
            .filter_map(|p| {
                analysis
                    .alarms
                    .of(review.policy)
                    .find(|a| a.endpoint == p.endpoint && a.run == p.first_bad_run)
            })
            .map(|a| alarm_row(ctx, a, root))
            .collect(),
        policies: Policy::ALL
            .iter()
            .map(|p| PolicyHead {
                name: p.name(),
                summary: p.summary(),
            })
            .collect(),
        fp_policies: vec![PolicyHead {
            name: review.policy.name(),
            summary: review.policy.summary(),
        }],
        fp_weeks: fp_rows(&review),
        noisier: review
            .noisier
            .iter()
            .map(|n| NoiseRow {
                endpoint: n.name.clone(),
                href: format!("{root}endpoints/{}.html", ctx.slugs.endpoint(&n.endpoint)),
                before: f::percent(Some(n.spread_before)),
                now: f::percent(Some(n.spread_now)),
                runs: n.runs_now,
            })
            .collect(),
        policy_rows,
        policy_total,
        regressions: analysis.alarms.regressions.len(),
        run_wide: review
            .run_wide
            .iter()
            .map(|a| {
                (
                    a.run.clone(),
                    format!("{root}runs/{}.html", ctx.slugs.run(&a.run)),
                    a.shift.describe(),
                    a.endpoints.len(),
                )
            })
            .collect(),
        environment_runs: environment_runs(ctx, &review, root),
    })
}

/// Renders `weekly.html` for the chosen week under the archive's policy
/// (`[alarms] policy`, median by default), with the list of every week's
/// review.
pub fn weekly_page(ctx: &Ctx, week: WeekSpec) -> Result<Option<Page>, Error> {
    let weeks = review_weeks(ctx.analysis);
    let Some(page) = weekly_view(ctx, week, "", &weeks) else {
        return Ok(None);
    };
    Ok(Some((
        "weekly.html".to_string(),
        render(&page, "weekly.html")?,
    )))
}

/// Renders one week's own review, `weekly/<week>.html`.
pub fn week_page(ctx: &Ctx, week: WeekSpec) -> Result<Option<Page>, Error> {
    let weeks = review_weeks(ctx.analysis);
    let Some(page) = weekly_view(ctx, week, "../", &weeks) else {
        return Ok(None);
    };
    let path = week_path(week);
    let bytes = render(&page, &path)?;
    Ok(Some((path, bytes)))
}

#[cfg(test)]
mod tests {
    use chrono::{Duration, TimeZone, Utc};

    use crate::analyse::analyse;
    use crate::render::render_site;
    use crate::test_support;

    fn page(site: &crate::render::Site, path: &str) -> String {
        String::from_utf8(
            site.get(path)
                .unwrap_or_else(|| panic!("{path} in the site"))
                .to_vec(),
        )
        .unwrap()
    }

    /// The value of `attr` in the first tag after `after` in `html`.
    fn attr_after(html: &str, after: &str, attr: &str) -> Option<String> {
        let at = html.find(after)?;
        let rest = &html[at..];
        let v = &rest[rest.find(&format!("{attr}=\""))? + attr.len() + 2..];
        Some(v[..v.find('"')?].to_string())
    }

    #[test]
    fn every_week_with_runs_keeps_its_review_linked_to_its_neighbours() {
        // 20 runs 56 h apart: 2026-01-05 to 2026-02-20, ISO weeks 2 to 8.
        let runs: Vec<Vec<f64>> = (0..20).map(|i| vec![100.0 + (i % 3) as f64; 5]).collect();
        let site =
            render_site(&analyse(&test_support::archive_of(&[("e", runs)]), vec![])).unwrap();
        let weeks: Vec<String> = (2..=8)
            .map(|w| format!("weekly/2026-w{w:02}.html"))
            .collect();
        for w in &weeks {
            assert!(site.get(w).is_some(), "{w}");
        }
        let weekly_pages = site
            .files()
            .filter(|(p, _)| p.starts_with("weekly/"))
            .count();
        assert_eq!(weekly_pages, weeks.len());
        // weekly.html reviews the latest week, links the week before and
        // its own page, and lists every week.
        let current = page(&site, "weekly.html");
        assert!(current.contains("<h1>Weekly review 2026-W08"), "{current}");
        assert_eq!(
            attr_after(&current, r#"<a rel="prev""#, "href").as_deref(),
            Some("weekly/2026-w07.html")
        );
        assert!(current.contains(r#"<a href="weekly/2026-w08.html">this week's own page</a>"#));
        for w in &weeks {
            assert!(
                current.contains(&format!(r#"<a href="{w}">"#)),
                "{w} listed"
            );
        }
        // A week's own page: its week, links beside it and back.
        let w05 = page(&site, "weekly/2026-w05.html");
        assert!(w05.contains("<h1>Weekly review 2026-W05"));
        assert!(
            w05.contains(r#"<a rel="prev" href="2026-w04.html">"#),
            "{w05}"
        );
        assert!(w05.contains(r#"<a rel="next" href="2026-w06.html">"#));
        assert!(w05.contains(r#"href="../weekly.html#past""#));
        assert!(w05.contains(r#"href="../static/style.css""#));
        // Its counts are its week's: 3 runs (56 h apart).
        assert!(w05.contains("· 3 runs</small>"), "{w05}");
        // The first week has no earlier review; the last no later one.
        let first = page(&site, "weekly/2026-w02.html");
        assert!(!first.contains(r#"rel="prev""#) && first.contains("no earlier review"));
        assert!(!page(&site, "weekly/2026-w08.html").contains(r#"rel="next""#));
    }

    /// A step that came in within the line and crossed it two runs later:
    /// the card's suspect range is the alarm's (last run at the old level
    /// → the alarm's first run), not the run before the first run over
    /// the line.
    #[test]
    fn a_problem_card_and_its_alarm_row_name_one_suspect_range() {
        let mut runs: Vec<Vec<f64>> = (0..14).map(|i| vec![100.0 + (i % 3) as f64; 5]).collect();
        runs.extend([
            vec![112.0; 5],
            vec![113.0; 5],
            vec![125.0; 5],
            vec![126.0; 5],
        ]);
        let archive = test_support::archive_of(&[("e", runs)]);
        let analysis = analyse(&archive, vec![]);
        let alarm = analysis
            .alarms
            .of(analysis.settings.alarms.policy)
            .find(|a| a.endpoint == "e")
            .expect("an alarm");
        assert!(alarm.onset_index < alarm.candidate_index, "{alarm:?}");
        let site = render_site(&analysis).unwrap();
        let weekly = page(&site, "weekly.html");
        let last_old = &archive.runs[alarm.onset_index - 1].id;
        let before_first_over = &archive.runs[alarm.candidate_index - 1].id;
        let card = &weekly[weekly.find(r#"class="p-endpoint""#).unwrap()..];
        let card = &card[..card.find("</li>").unwrap_or(card.len())];
        assert!(card.contains(last_old.as_str()), "{card}");
        assert!(!card.contains(&format!(">{before_first_over}<")), "{card}");
    }

    /// A problem whose latest run failed: the unit goes with the
    /// baseline, never after "no valid latency" ("383 → no valid latency
    /// ms" once).
    #[test]
    fn a_failed_latest_run_reads_baseline_ms_then_no_valid_latency() {
        let runs: Vec<Vec<f64>> = (0..12).map(|i| vec![100.0 + (i % 3) as f64; 5]).collect();
        let mut archive = test_support::archive_of(&[("e", runs)]);
        test_support::fail_rounds(&mut archive, 11, "e");
        let site = render_site(&analyse(&archive, vec![])).unwrap();
        let weekly = page(&site, "weekly.html");
        assert!(
            weekly.contains(
                r#"<span class="before">101 ms</span> → <strong>no valid latency</strong> </span>"#
            ),
            "{weekly}"
        );
        assert!(!weekly.contains("no valid latency</strong> ms"), "{weekly}");
    }

    #[test]
    fn runs_of_one_day_are_told_apart_by_their_time_of_day() {
        // 14 runs near 100 ms, then two on the last run's day: one at
        // 140 ms (a regression), one at 30 ms for `b` (an improvement).
        let mut a: Vec<Vec<f64>> = (0..14).map(|i| vec![100.0 + (i % 3) as f64; 5]).collect();
        let mut b = a.clone();
        a.extend([vec![140.0; 5], vec![141.0; 5]]);
        b.extend([vec![100.0; 5], vec![30.0; 5]]);
        let mut archive = test_support::archive_of(&[("a", a), ("b", b)]);
        let day = Utc.with_ymd_and_hms(2026, 3, 2, 9, 5, 0).unwrap();
        for (k, i) in (13..16).enumerate() {
            archive.runs[i].started_at = day + Duration::minutes(40 * k as i64);
        }
        let site = render_site(&analyse(&archive, vec![])).unwrap();
        let weekly = page(&site, "weekly.html");
        // The open problem: since when, and its suspect range, with times.
        assert!(
            weekly.contains("since 2026-03-02 09:45, 2 runs"),
            "{weekly}"
        );
        assert!(weekly.contains(">2026-03-02 09:05</a>"), "{weekly}");
        assert!(weekly.contains(">2026-03-02 09:45</a>"), "{weekly}");
        // The improvement: listed, with its before → after in ms.
        let improvements = &weekly[weekly.find(r#"<section id="improvements""#).unwrap()..];
        let improvements = &improvements[..improvements.find("</section>").unwrap()];
        assert!(
            improvements.contains(r#"<li class="improvement">"#),
            "{improvements}"
        );
        assert!(
            improvements.contains("since 2026-03-02 10:25, 1 run"),
            "{improvements}"
        );
        assert!(
            improvements.contains(r#"<span class="before">101</span> → <strong>30.0</strong> ms"#),
            "{improvements}"
        );
        // A run of a day with one run keeps its date alone.
        let endpoint = page(&site, "endpoints/a.html");
        assert!(endpoint.contains(">2026-03-02 10:25</small>"), "{endpoint}");
        assert!(!endpoint.contains(&format!(
            ">{} ",
            crate::calendar::date(test_support::run_time(3).date_naive())
        )));
    }
}
