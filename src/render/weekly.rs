//! `weekly.html`: the meeting page (view-model in `analyse::weekly`), and
//! the whole-history "what each policy would have done" table.

use askama::Template;

use super::charts::evidence::evidence_svg;
use super::context::Ctx;
use super::evidence::{EvidenceView, evidence_view};
use super::flame_pages::{FlameLink, flame_links};
use super::rows::Page;
use super::{Slugs, format as f};
use crate::analyse::alarms::{Alarm, PolicyStats};
use crate::analyse::weekly::{ReviewAlarm, WeekSpec, WeeklyReview, weekly_review};
use crate::analyse::{Analysis, Policy};
use crate::error::Error;

pub struct AlarmRow {
    pub endpoint: String,
    pub endpoint_href: String,
    pub run: String,
    pub run_href: String,
    pub date: String,
    pub rounds: String,
    pub evidence: String,
    pub median: String,
    pub baseline: String,
    pub ratio: String,
    pub change: String,
    pub state: &'static str,
    pub label: String,
    pub inferred: &'static str,
    pub also: String,
    pub whole_run: String,
    pub note: String,
    pub confirmed: String,
    pub closed: String,
    /// Band, likely GC/noise rounds, shift ([`super::evidence`]).
    pub stats: EvidenceView,
    /// Flame graphs of the alarm's runs over the line, with the
    /// attribution (code regression vs GC/lock) when profiles exist.
    pub flames: Vec<FlameLink>,
    /// The run the flame graphs are of.
    pub flame_run: String,
    /// Error rate and throughput of the first run, failed rounds.
    pub figures: super::figures::FiguresView,
    pub environment_suspect: bool,
    /// "between run A (commit …) and run B (commit …)".
    pub suspect: String,
}

pub struct PolicyHead {
    pub name: &'static str,
    pub summary: &'static str,
}

pub struct WeekFpRow {
    pub week: String,
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
    pub title: String,
    pub period: String,
    pub policy: &'static str,
    pub run_count: usize,
    pub new_by_policy: String,
    pub new_alarms: Vec<AlarmRow>,
    pub untriaged: Vec<AlarmRow>,
    pub confirmed: Vec<AlarmRow>,
    pub policies: Vec<PolicyHead>,
    pub fp_weeks: Vec<WeekFpRow>,
    pub noisier: Vec<NoiseRow>,
    pub policy_rows: Vec<PolicyTableRow>,
    pub policy_total: Vec<PolicyCell>,
    pub regressions: usize,
    /// Environment-suspect runs of the week: (run, href, what moved).
    pub environment_runs: Vec<(String, String, String)>,
}

/// The flame graphs of an alarm: those of its first run over the line
/// with an attribution, else of its first run with any profile.
fn alarm_flames(analysis: &Analysis, a: &Alarm, slugs: &Slugs) -> (String, Vec<FlameLink>) {
    let Some(e) = analysis.endpoints.iter().find(|e| e.id == a.endpoint) else {
        return (String::new(), Vec::new());
    };
    let over: Vec<&crate::analyse::RunPoint> = a
        .over_runs
        .iter()
        .filter_map(|run| e.points.iter().find(|p| &p.run == run))
        .collect();
    let chosen = over
        .iter()
        .find(|p| p.profiles.iter().any(|pa| pa.attribution.is_some()))
        .or_else(|| over.iter().find(|p| !p.profiles.is_empty()));
    match chosen {
        Some(p) => (p.run.clone(), flame_links(p, e, slugs, "")),
        None => (String::new(), Vec::new()),
    }
}

fn alarm_row(analysis: &Analysis, r: &ReviewAlarm, slugs: &Slugs) -> AlarmRow {
    let a = &r.alarm;
    let ratio = analysis
        .endpoints
        .iter()
        .find(|e| e.id == a.endpoint)
        .map(|e| e.threshold_ratio)
        .unwrap_or(analysis.settings.analysis.threshold_ratio);
    let (flame_run, flames) = alarm_flames(analysis, a, slugs);
    AlarmRow {
        endpoint: r.endpoint_name.clone(),
        endpoint_href: format!("endpoints/{}.html", slugs.endpoint(&a.endpoint)),
        run: a.run.clone(),
        run_href: format!(
            "runs/{}.html#{}",
            slugs.run(&a.run),
            slugs.endpoint(&a.endpoint)
        ),
        date: f::date(a.started_at),
        rounds: a
            .round_p99_ms
            .iter()
            .map(|v| f::ms(*v))
            .collect::<Vec<_>>()
            .join(" · "),
        evidence: evidence_svg(a, ratio),
        median: f::ms(a.median_p99_ms),
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
        also: r
            .also_raised_by
            .iter()
            .map(|p| p.name())
            .collect::<Vec<_>>()
            .join(", "),
        note: a.label_note.clone().unwrap_or_default(),
        confirmed: a.confirmed_run.clone().unwrap_or_else(|| "–".into()),
        closed: a.closed_run.clone().unwrap_or_else(|| "open".into()),
        stats: evidence_view(&a.evidence),
        flames,
        flame_run,
        figures: super::figures::FiguresView::of(&a.figures),
        environment_suspect: a.environment_suspect,
        suspect: a.suspect.describe(),
    }
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

/// Renders `weekly.html` for the chosen week under the archive's policy
/// (`[alarms] policy`, median by default).
pub fn weekly_page(ctx: &Ctx, week: WeekSpec) -> Result<Option<Page>, Error> {
    let (analysis, slugs) = (ctx.analysis, ctx.slugs);
    let policy = analysis.settings.alarms.policy;
    let Some(review): Option<WeeklyReview> = weekly_review(analysis, week, policy) else {
        return Ok(None);
    };
    let rows = |list: &[ReviewAlarm]| {
        list.iter()
            .map(|r| alarm_row(analysis, r, slugs))
            .collect::<Vec<_>>()
    };
    let fp_weeks = review
        .fp_by_week
        .iter()
        .map(|w| WeekFpRow {
            week: w.week.clone(),
            cells: Policy::ALL
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
        .collect();
    let page = WeeklyPage {
        root: "",
        title: review.title.clone(),
        period: format!(
            "{} to {}",
            f::datetime(review.from),
            f::datetime(review.to - chrono::Duration::seconds(1))
        ),
        policy: policy.name(),
        run_count: review.runs.len(),
        new_by_policy: review
            .new_by_policy
            .iter()
            .map(|(p, n)| format!("{p}: {n}"))
            .collect::<Vec<_>>()
            .join(" · "),
        new_alarms: rows(&review.new_alarms),
        untriaged: rows(&review.untriaged),
        confirmed: rows(&review.confirmed),
        policies: Policy::ALL
            .iter()
            .map(|p| PolicyHead {
                name: p.name(),
                summary: p.summary(),
            })
            .collect(),
        fp_weeks,
        noisier: review
            .noisier
            .iter()
            .map(|n| NoiseRow {
                endpoint: n.name.clone(),
                href: format!("endpoints/{}.html", slugs.endpoint(&n.endpoint)),
                before: f::percent(Some(n.spread_before)),
                now: f::percent(Some(n.spread_now)),
                runs: n.runs_now,
            })
            .collect(),
        policy_rows: analysis
            .alarms
            .endpoints
            .iter()
            .map(|e| PolicyTableRow {
                endpoint: e.name.clone(),
                href: format!("endpoints/{}.html", slugs.endpoint(&e.endpoint)),
                cells: Policy::ALL
                    .iter()
                    .map(|p| policy_cell(e.policies.get(p).unwrap_or(&PolicyStats::default())))
                    .collect(),
            })
            .collect(),
        policy_total: Policy::ALL
            .iter()
            .map(|p| {
                policy_cell(
                    analysis
                        .alarms
                        .totals
                        .get(p)
                        .unwrap_or(&PolicyStats::default()),
                )
            })
            .collect(),
        regressions: analysis.alarms.regressions.len(),
        environment_runs: analysis
            .runs
            .iter()
            .filter(|r| review.runs.contains(&r.id))
            .filter_map(|r| {
                let shift = r.environment_suspect.as_ref()?;
                Some((
                    r.id.clone(),
                    format!("runs/{}.html", slugs.run(&r.id)),
                    shift.describe(),
                ))
            })
            .collect(),
    };
    page.render()
        .map(|s| Some(("weekly.html".to_string(), s.into_bytes())))
        .map_err(|e| Error::Internal(format!("rendering weekly.html: {e}")))
}
