//! The weekly review: what the performance meeting looks at.
//!
//! For one week (an ISO week, or the 7 days up to the latest run): the new
//! alarms with their rounds against the baseline, the untriaged backlog,
//! confirmed regressions, the false-positive rate week by week, and the
//! endpoints whose noise grew. Pure data; `render::weekly` formats it.

use std::collections::BTreeMap;
use std::str::FromStr;

use chrono::{DateTime, Duration, Utc};

use super::Analysis;
use super::alarms::{Alarm, AlarmState};
use super::evidence::SuspectRange;
use super::policy::Policy;
use crate::calendar;
use crate::model::Label;
use crate::stats::{Interval, WILSON_Z95, median, wilson_interval};

/// Which week to review.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WeekSpec {
    /// The ISO week holding the latest run (the default, so the page
    /// follows the archive, never the clock).
    #[default]
    Latest,
    /// An ISO week, e.g. `2026-W47` (Monday to Sunday, UTC).
    Iso { year: i32, week: u32 },
}

impl FromStr for WeekSpec {
    type Err = String;

    fn from_str(s: &str) -> Result<WeekSpec, String> {
        let bad = || format!("'{s}' is not an ISO week such as 2026-W47");
        let (year, week) = s.split_once(['W', 'w']).ok_or_else(bad)?;
        let year: i32 = year.trim_end_matches('-').parse().map_err(|_| bad())?;
        let week: u32 = week.parse().map_err(|_| bad())?;
        calendar::iso_week_monday(year, week)
            .ok_or_else(|| format!("{year} has no week {week}"))?;
        Ok(WeekSpec::Iso { year, week })
    }
}

/// How many weeks the false-positive table goes back, the reviewed week included.
pub const FP_WEEKS: usize = 12;
/// Noise of the reviewed week is compared with this many weeks before it.
pub const NOISE_BASE_WEEKS: i64 = 8;
/// Noise "grew" when the week's within-run spread is this many times the
/// earlier spread, and at least [`NOISE_MIN_GROWTH`] higher in absolute terms.
pub const NOISE_GROWTH_FACTOR: f64 = 1.5;
pub const NOISE_MIN_GROWTH: f64 = 0.05;

/// An alarm as the review lists it.
#[derive(Debug, Clone)]
pub struct ReviewAlarm {
    pub alarm: Alarm,
    pub endpoint_name: String,
}

/// The new alarms of one endpoint in the week that share a suspect commit
/// range: one change, one row. A candidate that reverted and rose again on
/// the same commits, or an alarm dated inside one commit's runs (its range
/// holds no commit: "6694d24 → 6694d24") beside the alarm that brought
/// that commit, are the same problem.
#[derive(Debug, Clone)]
pub struct AlarmGroup {
    pub endpoint: String,
    pub endpoint_name: String,
    /// The suspect range of its first alarm.
    pub suspect: SuspectRange,
    /// Its alarms, oldest first (at least one).
    pub alarms: Vec<Alarm>,
}

impl AlarmGroup {
    /// The alarm the row shows: the latest, whose state is the current one.
    pub fn latest(&self) -> &Alarm {
        self.alarms.last().expect("a group holds an alarm")
    }
}

/// One week's alarms and labels under one policy.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WeekCounts {
    pub alarms: usize,
    pub real: usize,
    pub noise: usize,
    pub unknown: usize,
    pub fp_rate: Option<f64>,
    pub fp_interval: Option<Interval>,
}

/// One row of the false-positive-rate-by-week table.
#[derive(Debug, Clone)]
pub struct WeekRow {
    /// `2026-W47`.
    pub week: String,
    pub policies: BTreeMap<Policy, WeekCounts>,
}

/// An endpoint that got noisier.
#[derive(Debug, Clone)]
pub struct NoiseChange {
    pub endpoint: String,
    pub name: String,
    /// Median within-run spread, (max − min) / median of the round p99s,
    /// over the reviewed week's runs and over the weeks before.
    pub spread_before: f64,
    pub spread_now: f64,
    pub runs_now: usize,
}

/// The weekly review of one archive.
#[derive(Debug, Clone)]
pub struct WeeklyReview {
    /// `2026-W47`.
    pub title: String,
    pub from: DateTime<Utc>,
    /// Exclusive.
    pub to: DateTime<Utc>,
    pub policy: Policy,
    /// Runs in the week, oldest first.
    pub runs: Vec<String>,
    /// The policy's run-wide alarms of the week (a run whose endpoints
    /// moved slower together: one alarm, not one per endpoint), oldest
    /// first.
    pub run_wide: Vec<super::alarms::RunWideAlarm>,
    /// The policy's alarms whose candidate run is in the week.
    pub new_alarms: Vec<ReviewAlarm>,
    /// The same alarms, one per endpoint and suspect commit range: what the
    /// page lists.
    pub new_groups: Vec<AlarmGroup>,
    /// New alarms in the week under every policy (the back-test's figure:
    /// the page lists the policy's alone).
    pub new_by_policy: BTreeMap<Policy, usize>,
    /// The policy's alarms up to the week's end without a human label.
    pub untriaged: Vec<ReviewAlarm>,
    /// The policy's confirmed alarms that were open during the week.
    pub confirmed: Vec<ReviewAlarm>,
    /// Oldest first, ending with the reviewed week; no week before the
    /// first run.
    pub fp_by_week: Vec<WeekRow>,
    pub noisier: Vec<NoiseChange>,
}

fn week_start(t: DateTime<Utc>) -> DateTime<Utc> {
    calendar::week_monday(t.date_naive())
        .and_hms_opt(0, 0, 0)
        .expect("midnight exists")
        .and_utc()
}

/// Builds the review. `None` when the archive has no runs.
pub fn weekly_review(analysis: &Analysis, spec: WeekSpec, policy: Policy) -> Option<WeeklyReview> {
    let latest = analysis.latest_run()?.started_at;
    let (title, from, to) = match spec {
        // One definition of a week everywhere: half-open [Monday 00:00,
        // next Monday 00:00) UTC, so a run belongs to exactly one week and
        // the page's counts agree with the false-positive table's rows.
        WeekSpec::Latest => {
            let from = week_start(latest);
            (
                calendar::iso_week_label(from.date_naive()),
                from,
                from + Duration::days(7),
            )
        }
        WeekSpec::Iso { year, week } => {
            let monday = calendar::iso_week_monday(year, week)?;
            let from = monday.and_hms_opt(0, 0, 0)?.and_utc();
            (
                calendar::iso_week_label(monday),
                from,
                from + Duration::days(7),
            )
        }
    };
    let in_week = |t: DateTime<Utc>| from <= t && t < to;
    let name_of = |id: &str| {
        analysis
            .endpoints
            .iter()
            .find(|e| e.id == id)
            .map(|e| e.name.clone())
            .unwrap_or_else(|| id.to_string())
    };
    let review = |a: &Alarm| ReviewAlarm {
        alarm: a.clone(),
        endpoint_name: name_of(&a.endpoint),
    };
    let of_policy = || analysis.alarms.of(policy);
    // New: raised in the week. An alarm is dated at its change's first
    // run, which can be in an earlier week than the run that raised it.
    let mut new_alarms: Vec<ReviewAlarm> = of_policy()
        .filter(|a| in_week(a.raised_at))
        .map(review)
        .collect();
    new_alarms.sort_by(|a, b| {
        (a.alarm.started_at, &a.alarm.endpoint).cmp(&(b.alarm.started_at, &b.alarm.endpoint))
    });
    let mut new_by_policy = BTreeMap::new();
    for p in Policy::ALL {
        new_by_policy.insert(
            p,
            analysis
                .alarms
                .of(p)
                .filter(|a| in_week(a.raised_at))
                .count(),
        );
    }
    let mut untriaged: Vec<ReviewAlarm> = of_policy()
        .filter(|a| a.label.is_none() && a.raised_at < to)
        .map(review)
        .collect();
    untriaged.sort_by(|a, b| {
        (a.alarm.started_at, &a.alarm.endpoint).cmp(&(b.alarm.started_at, &b.alarm.endpoint))
    });
    let run_time = |id: &str| {
        analysis
            .runs
            .iter()
            .find(|r| r.id == id)
            .map(|r| r.started_at)
    };
    let mut confirmed: Vec<ReviewAlarm> = of_policy()
        .filter(|a| a.state == AlarmState::Confirmed && a.raised_at < to)
        .filter(|a| match a.closed_run.as_deref().and_then(run_time) {
            Some(closed) => closed >= from,
            None => true,
        })
        .map(review)
        .collect();
    confirmed.sort_by(|a, b| {
        (a.alarm.started_at, &a.alarm.endpoint).cmp(&(b.alarm.started_at, &b.alarm.endpoint))
    });

    let runs: Vec<String> = analysis
        .runs
        .iter()
        .filter(|r| in_week(r.started_at))
        .map(|r| r.id.clone())
        .collect();

    let first_run = analysis
        .runs
        .iter()
        .filter(|r| r.branch.is_none())
        .map(|r| r.started_at)
        .min();
    Some(WeeklyReview {
        title,
        from,
        to,
        policy,
        runs,
        run_wide: analysis
            .alarms
            .run_wide
            .iter()
            .filter(|a| a.policy == policy && in_week(a.started_at))
            .cloned()
            .collect(),
        new_groups: group_alarms(&new_alarms),
        new_alarms,
        new_by_policy,
        untriaged,
        confirmed,
        fp_by_week: fp_by_week(analysis, first_run, to),
        noisier: noisier(analysis, from, to),
    })
}

/// The alarms of one week, one group per endpoint and suspect commit range
/// ([`AlarmGroup`]), in the order of their first alarm. `alarms` is in
/// time order.
pub fn group_alarms(alarms: &[ReviewAlarm]) -> Vec<AlarmGroup> {
    // A range's ends: the commits when both runs record one, else the runs.
    fn ends(s: &SuspectRange) -> (Option<&str>, &str) {
        match (&s.last_old_commit, &s.first_new_commit) {
            (old, Some(new)) if s.last_old_run.is_none() || old.is_some() => {
                (old.as_deref(), new.as_str())
            }
            _ => (s.last_old_run.as_deref(), s.first_new_run.as_str()),
        }
    }
    let mut groups: Vec<AlarmGroup> = Vec::new();
    for r in alarms {
        let a = &r.alarm;
        let (old, new) = ends(&a.suspect);
        // No commit between the ends: the change came with the commit that
        // the endpoint's group ending at it already names.
        let empty = old == Some(new) && a.suspect.first_new_commit.is_some();
        let same = |g: &AlarmGroup| {
            g.endpoint == a.endpoint && {
                let (g_old, g_new) = ends(&g.suspect);
                (g_old, g_new) == (old, new) || (empty && g_new == new)
            }
        };
        match groups.iter_mut().find(|g| same(g)) {
            Some(g) => g.alarms.push(a.clone()),
            None => groups.push(AlarmGroup {
                endpoint: a.endpoint.clone(),
                endpoint_name: r.endpoint_name.clone(),
                suspect: a.suspect.clone(),
                alarms: vec![a.clone()],
            }),
        }
    }
    groups
}

/// Alarms by the ISO week of their candidate run, per policy, for the
/// [`FP_WEEKS`] weeks up to the one holding `to - 1s`, none before the
/// week of the first run (`first_run`; `None`: no run, no row).
fn fp_by_week(
    analysis: &Analysis,
    first_run: Option<DateTime<Utc>>,
    to: DateTime<Utc>,
) -> Vec<WeekRow> {
    let last_week = week_start(to - Duration::seconds(1));
    let Some(first_week) = first_run.map(week_start) else {
        return Vec::new();
    };
    (0..FP_WEEKS as i64)
        .rev()
        .filter(|&k| last_week - Duration::weeks(k) >= first_week)
        .map(|k| {
            let start = last_week - Duration::weeks(k);
            let end = start + Duration::weeks(1);
            let mut policies = BTreeMap::new();
            for p in Policy::ALL {
                let mut c = WeekCounts::default();
                for a in analysis
                    .alarms
                    .of(p)
                    .filter(|a| start <= a.started_at && a.started_at < end)
                {
                    c.alarms += 1;
                    match a.label {
                        Some(Label::Noise) => c.noise += 1,
                        Some(_) => c.real += 1,
                        None => c.unknown += 1,
                    }
                }
                let labelled = (c.real + c.noise) as u64;
                c.fp_rate = (labelled > 0).then(|| c.noise as f64 / labelled as f64);
                c.fp_interval = wilson_interval(c.noise as u64, labelled, WILSON_Z95);
                policies.insert(p, c);
            }
            WeekRow {
                week: calendar::iso_week_label(start.date_naive()),
                policies,
            }
        })
        .collect()
}

/// Endpoints whose median within-run spread in the reviewed week grew
/// against the [`NOISE_BASE_WEEKS`] weeks before it. The spread of the
/// rounds, (max − min) / median, is MongoDB's noise measure: it rises with
/// GC tails and noisy neighbours before any verdict moves.
fn noisier(analysis: &Analysis, from: DateTime<Utc>, to: DateTime<Utc>) -> Vec<NoiseChange> {
    let base_from = from - Duration::weeks(NOISE_BASE_WEEKS);
    let mut out = Vec::new();
    for e in &analysis.endpoints {
        let spread = |lo: DateTime<Utc>, hi: DateTime<Utc>| -> Vec<f64> {
            e.points
                .iter()
                .filter(|p| lo <= p.started_at && p.started_at < hi && p.median_p99_ms > 0.0)
                .map(|p| {
                    let max = p
                        .round_p99_ms
                        .iter()
                        .cloned()
                        .fold(f64::NEG_INFINITY, f64::max);
                    let min = p.round_p99_ms.iter().cloned().fold(f64::INFINITY, f64::min);
                    (max - min) / p.median_p99_ms
                })
                .collect()
        };
        let now = spread(from, to);
        let before = spread(base_from, from);
        let (Some(spread_now), Some(spread_before)) = (median(&now), median(&before)) else {
            continue;
        };
        if spread_now > NOISE_GROWTH_FACTOR * spread_before
            && spread_now - spread_before >= NOISE_MIN_GROWTH
        {
            out.push(NoiseChange {
                endpoint: e.id.clone(),
                name: e.name.clone(),
                spread_before,
                spread_now,
                runs_now: now.len(),
            });
        }
    }
    out.sort_by(|a, b| {
        (b.spread_now - b.spread_before).total_cmp(&(a.spread_now - a.spread_before))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn week_specs() {
        assert_eq!(
            "2026-W47".parse(),
            Ok(WeekSpec::Iso {
                year: 2026,
                week: 47
            })
        );
        assert_eq!(
            "2026W03".parse(),
            Ok(WeekSpec::Iso {
                year: 2026,
                week: 3
            })
        );
        assert!(
            "2026-W54"
                .parse::<WeekSpec>()
                .unwrap_err()
                .contains("no week 54")
        );
        assert!("last week".parse::<WeekSpec>().is_err());
        let monday = calendar::iso_week_monday(2026, 47).unwrap();
        assert_eq!(monday.to_string(), "2026-11-16");
    }
}
