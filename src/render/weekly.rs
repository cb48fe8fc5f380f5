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

use std::collections::BTreeMap;

use askama::Template;

use super::charts::evidence::evidence_svg;
use super::context::{Ctx, RunLabel, SuspectView};
use super::evidence::{EvidenceView, evidence_view};
use super::flame_pages::{FlameLink, flame_links};
use super::format as f;
use super::rows::{Page, render};
use crate::analyse::alarms::{Alarm, PolicyStats};
use crate::analyse::problems::{Problem, ProblemKind, open_problems};
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
    pub root: &'static str,
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
fn alarm_flames(ctx: &Ctx, endpoint: &str, runs: &[String]) -> Vec<FlameLink> {
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
        .map(|p| flame_links(p, e, ctx.slugs, ""))
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

fn problem_row(ctx: &Ctx, p: &Problem) -> ProblemRow {
    let analysis = ctx.analysis;
    let alarm = ctx.alarm_at(&p.endpoint, &p.first_bad_run);
    let (kind_words, href) = match p.kind {
        ProblemKind::Latency => (
            alarm.map_or_else(|| "▲ latency".to_string(), latency_kind_words),
            format!("endpoints/{}.html", ctx.slugs.endpoint(&p.endpoint)),
        ),
        ProblemKind::Capacity => (
            "▼ capacity".to_string(),
            super::capacity::capacity_href(ctx.slugs, &p.endpoint),
        ),
    };
    let over: Vec<String> = alarm.map(|a| a.over_runs.clone()).unwrap_or_default();
    let triage = p.triage(analysis);
    let follow = triage.map(|t| &t.follow_up);
    let suspect = ctx.run_label(&p.first_bad_run, "", None);
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
        age: format!(
            "since {}, {} run{}",
            f::date(p.since),
            p.runs,
            if p.runs == 1 { "" } else { "s" }
        ),
        new_this_week: p.new_this_week,
        suspect: Some(SuspectView {
            compare_href: p
                .last_good_run
                .as_deref()
                .map(|g| ctx.compare_href(g, &p.first_bad_run))
                .unwrap_or_default(),
            last_good: p
                .last_good_run
                .as_deref()
                .map(|g| ctx.run_label(g, "", None)),
            first_bad: suspect,
        }),
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
        flames: alarm_flames(ctx, &p.endpoint, &over),
    }
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
fn problem_groups(ctx: &Ctx, problems: &[Problem]) -> Vec<ProblemGroup> {
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
            let rows: Vec<ProblemRow> = members.iter().map(|p| problem_row(ctx, p)).collect();
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
fn alarm_suspect(ctx: &Ctx, a: &Alarm) -> Option<SuspectView> {
    let e = ctx.analysis.endpoints.iter().find(|e| e.id == a.endpoint)?;
    ctx.suspect(e, a.onset_index, "")
}

/// An alarm's median p99, or "no valid latency" when its run failed.
pub(super) fn alarm_median(a: &Alarm) -> String {
    if a.verdict == crate::analyse::Verdict::Failed {
        f::NO_VALID_LATENCY.to_string()
    } else {
        f::ms(a.median_p99_ms)
    }
}

fn alarm_row(ctx: &Ctx, a: &Alarm) -> AlarmRow {
    let analysis = ctx.analysis;
    let threshold = analysis
        .endpoints
        .iter()
        .find(|e| e.id == a.endpoint)
        .map(|e| e.threshold_ratio)
        .unwrap_or(analysis.settings.analysis.threshold_ratio);
    AlarmRow {
        endpoint: endpoint_name(analysis, &a.endpoint),
        endpoint_href: format!("endpoints/{}.html", ctx.slugs.endpoint(&a.endpoint)),
        run: ctx.run_label(&a.run, "", Some(ctx.slugs.endpoint(&a.endpoint))),
        suspect: alarm_suspect(ctx, a),
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
fn new_alarm_rows(ctx: &Ctx, review: &WeeklyReview, problems: &[Problem]) -> Vec<NewAlarmRow> {
    // Each endpoint's groups with their place in the week, in the order of
    // their first alarm.
    let mut by_endpoint: Vec<(&AlarmGroup, Vec<(usize, NewProblem)>)> = Vec::new();
    for (order, g) in review.new_groups.iter().enumerate() {
        let first = &g.alarms[0];
        let latest = g.latest();
        let problem = NewProblem {
            run: ctx.run_label(&first.run, "", Some(ctx.slugs.endpoint(&g.endpoint))),
            suspect: alarm_suspect(ctx, first),
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
        match by_endpoint.iter_mut().find(|(e, _)| e.endpoint == g.endpoint) {
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
                endpoint_href: format!("endpoints/{}.html", ctx.slugs.endpoint(&g.endpoint)),
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

fn policy_rows(ctx: &Ctx) -> (Vec<PolicyTableRow>, Vec<PolicyCell>) {
    let alarms = &ctx.analysis.alarms;
    let rows = alarms
        .endpoints
        .iter()
        .map(|e| PolicyTableRow {
            endpoint: e.name.clone(),
            href: format!("endpoints/{}.html", ctx.slugs.endpoint(&e.endpoint)),
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

/// Renders `weekly.html` for the chosen week under the archive's policy
/// (`[alarms] policy`, median by default).
pub fn weekly_page(ctx: &Ctx, week: WeekSpec) -> Result<Option<Page>, Error> {
    let analysis = ctx.analysis;
    let Some((review, problems)) = review_and_problems(analysis, week) else {
        return Ok(None);
    };
    let in_problems = |a: &Alarm| {
        problems
            .iter()
            .any(|p| p.endpoint == a.endpoint && p.first_bad_run == a.run)
    };
    let new_alarms = new_alarm_rows(ctx, &review, &problems);
    let (policy_rows, policy_total) = policy_rows(ctx);
    let page = WeeklyPage {
        root: "",
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
        groups: problem_groups(ctx, &problems),
        new_alarm_count: review.new_groups.len(),
        new_alarms,
        untriaged: review
            .untriaged
            .iter()
            .filter(|r| !in_problems(&r.alarm))
            .map(|r| alarm_row(ctx, &r.alarm))
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
            .map(|a| alarm_row(ctx, a))
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
                href: format!("endpoints/{}.html", ctx.slugs.endpoint(&n.endpoint)),
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
                    format!("runs/{}.html", ctx.slugs.run(&a.run)),
                    a.shift.describe(),
                    a.endpoints.len(),
                )
            })
            .collect(),
        environment_runs: analysis
            .runs
            .iter()
            .filter(|r| review.runs.contains(&r.id))
            .filter_map(|r| {
                let shift = r.environment_suspect.as_ref()?;
                Some((
                    r.id.clone(),
                    format!("runs/{}.html", ctx.slugs.run(&r.id)),
                    shift.describe(),
                ))
            })
            .collect(),
    };
    Ok(Some((
        "weekly.html".to_string(),
        render(&page, "weekly.html")?,
    )))
}
