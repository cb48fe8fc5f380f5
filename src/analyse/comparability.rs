//! Whether two runs can be compared, and where the environment changed.
//!
//! `run.toml` may record the load profile (`[load]`: script hash, stages,
//! arrival rate, VUs, …) and the environment (`[environment]`: JVM flags,
//! host, …). A different load profile measures a different thing, so such
//! runs are never compared; an environment change is worth knowing but is
//! exactly what the test should catch, so it only becomes a chart marker.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::model::Run;

/// Whether two load profiles describe the same load. A run that records no
/// profile matches any: archives that never record one behave as before.
pub fn same_load(a: &BTreeMap<String, String>, b: &BTreeMap<String, String>) -> bool {
    a.is_empty() || b.is_empty() || a == b
}

/// What a `[load]` key says about the test, for deciding which figures
/// stay comparable when it changes ([`comparable`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadKey {
    /// How long the load is held (`duration`, Locust's `run_time`): a
    /// shorter or longer test at the same load.
    Length,
    /// How much load (`vus`, `arrival_rate`, `rate`, `users`, `threads`,
    /// `stages`, `spawn_rate`, `max_vus`, `iterations`).
    Level,
    /// Anything else (`script_hash`, `executor`, keys perfdash does not
    /// know): another test.
    Other,
}

impl LoadKey {
    pub fn of(key: &str) -> LoadKey {
        match key {
            "duration" | "run_time" => LoadKey::Length,
            "vus" | "arrival_rate" | "rate" | "users" | "threads" | "stages" | "spawn_rate"
            | "max_vus" | "iterations" => LoadKey::Level,
            _ => LoadKey::Other,
        }
    }
}

/// Which figures of a run under one load profile can be judged against
/// runs under another. The rule, per figure (docs/alarms.md,
/// "Comparability"):
///
/// | the profiles differ in | p99 | error rate | throughput |
/// |---|---|---|---|
/// | nothing, or one side records none | yes | yes | yes |
/// | only the length (`duration`) | yes | yes | yes |
/// | the load level (`vus`, `arrival_rate`, `stages`, …) | no | yes | no |
/// | anything else (`script_hash`, `executor`, unknown keys) | no | no | no |
///
/// The p99 and the throughput (requests per second) of a steady load do
/// not depend on how long it is held, once the warm-up is trimmed; both
/// move with the load level, so a heavier or lighter test says nothing
/// about the code. The error-rate line is mostly the absolute floor
/// (`max_error_rate`, 1%): a service that starts failing requests under a
/// new load level has a finding to report. Another script measures other
/// requests, so nothing of it compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Comparable {
    pub p99: bool,
    pub error_rate: bool,
    pub throughput: bool,
}

/// [`Comparable`] for a run under `after` judged against a run under
/// `before`.
pub fn comparable(
    before: &BTreeMap<String, String>,
    after: &BTreeMap<String, String>,
) -> Comparable {
    let mut out = Comparable {
        p99: true,
        error_rate: true,
        throughput: true,
    };
    if before.is_empty() || after.is_empty() || before == after {
        return out;
    }
    for (key, _, _) in differing(before, after) {
        match LoadKey::of(key) {
            LoadKey::Length => {}
            LoadKey::Level => {
                out.p99 = false;
                out.throughput = false;
            }
            LoadKey::Other => {
                return Comparable {
                    p99: false,
                    error_rate: false,
                    throughput: false,
                };
            }
        }
    }
    out
}

/// One setting that differs between two runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SettingChange {
    pub key: String,
    /// `None`: the earlier run did not record it.
    pub before: Option<String>,
    /// `None`: the later run does not record it.
    pub after: Option<String>,
}

/// The keys whose values differ, in key order, with both values: one
/// merge of the two sorted maps, nothing copied (a `[load]` table of a
/// million keys is compared with every baseline run's).
fn differing<'a>(
    before: &'a BTreeMap<String, String>,
    after: &'a BTreeMap<String, String>,
) -> impl Iterator<Item = (&'a str, Option<&'a str>, Option<&'a str>)> {
    let mut a = before.iter().peekable();
    let mut b = after.iter().peekable();
    std::iter::from_fn(move || {
        loop {
            let next = match (a.peek().copied(), b.peek().copied()) {
                (None, None) => return None,
                (Some((ka, va)), Some((kb, vb))) => match ka.cmp(kb) {
                    std::cmp::Ordering::Less => {
                        a.next();
                        (ka.as_str(), Some(va.as_str()), None)
                    }
                    std::cmp::Ordering::Greater => {
                        b.next();
                        (kb.as_str(), None, Some(vb.as_str()))
                    }
                    std::cmp::Ordering::Equal => {
                        a.next();
                        b.next();
                        (ka.as_str(), Some(va.as_str()), Some(vb.as_str()))
                    }
                },
                (Some((ka, va)), None) => {
                    a.next();
                    (ka.as_str(), Some(va.as_str()), None)
                }
                (None, Some((kb, vb))) => {
                    b.next();
                    (kb.as_str(), None, Some(vb.as_str()))
                }
            };
            if next.1 != next.2 {
                return Some(next);
            }
        }
    })
}

/// The settings that differ, in key order.
pub fn changes(
    before: &BTreeMap<String, String>,
    after: &BTreeMap<String, String>,
) -> Vec<SettingChange> {
    differing(before, after)
        .map(|(key, before, after)| SettingChange {
            key: key.to_string(),
            before: before.map(str::to_string),
            after: after.map(str::to_string),
        })
        .collect()
}

/// `vus 50 → 100, host (none) → perf-3`: at most [`DESCRIBED_CHANGES`] of
/// them, then how many more, without listing them all first.
pub fn describe_changes(
    before: &BTreeMap<String, String>,
    after: &BTreeMap<String, String>,
) -> String {
    let mut all = differing(before, after);
    let shown: Vec<SettingChange> = all
        .by_ref()
        .take(DESCRIBED_CHANGES)
        .map(|(key, before, after)| SettingChange {
            key: key.to_string(),
            before: before.map(str::to_string),
            after: after.map(str::to_string),
        })
        .collect();
    let more = all.count();
    let mut text = describe(&shown);
    if more > 0 {
        text.push_str(&format!(" and {more} more changes"));
    }
    text
}

/// The changes in words, as the not-comparable reason and the environment
/// markers show them: `host perf-01 → perf-03, jvm_flags (none) → -Xmx4g`.
///
/// At most [`DESCRIBED_CHANGES`] changes are listed, each value cut at 80
/// characters, then how many more: a run.toml with a million `[load]`
/// keys must not make a reason of megabytes on every page and report.
pub fn describe(changes: &[SettingChange]) -> String {
    let value = |v: &Option<String>| match v {
        Some(v) => crate::escape::clip(v, 80).into_owned(),
        None => "(none)".to_string(),
    };
    let mut text = changes
        .iter()
        .take(DESCRIBED_CHANGES)
        .map(|c| {
            format!(
                "{} {} → {}",
                crate::escape::clip(&c.key, 80),
                value(&c.before),
                value(&c.after)
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    if changes.len() > DESCRIBED_CHANGES {
        text.push_str(&format!(
            " and {} more changes",
            changes.len() - DESCRIBED_CHANGES
        ));
    }
    text
}

/// How many changes [`describe`] lists.
pub const DESCRIBED_CHANGES: usize = 10;

/// A run whose `[environment]` differs from the previous run that recorded
/// one: a marker on every chart at `started_at`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnvironmentChange {
    pub run: String,
    pub started_at: DateTime<Utc>,
    /// The run it is compared with.
    pub previous_run: String,
    pub changes: Vec<SettingChange>,
}

/// Environment changes over runs in time order. Runs that record no
/// environment are passed over rather than counted as a change.
pub fn environment_changes(runs: &[Run]) -> Vec<EnvironmentChange> {
    let mut out = Vec::new();
    let mut previous: Option<&Run> = None;
    for run in runs.iter().filter(|r| !r.meta.environment.is_empty()) {
        if let Some(prev) = previous {
            let changes = changes(&prev.meta.environment, &run.meta.environment);
            if !changes.is_empty() {
                out.push(EnvironmentChange {
                    run: run.id.clone(),
                    started_at: run.started_at,
                    previous_run: prev.id.clone(),
                    changes,
                });
            }
        }
        previous = Some(run);
    }
    out
}

/// Per run of the archive: the host changed against the runs its
/// baselines were formed from (any endpoint's), in words for the run
/// page; `None` when it did not, or when hosts are not recorded.
///
/// Only meaningful without `[analysis] series_by = ["host"]`, where a run
/// is never judged against another host's runs.
pub fn host_changes(
    archive: &crate::model::Archive,
    endpoints: &[crate::analyse::EndpointAnalysis],
) -> Vec<Option<String>> {
    let index: BTreeMap<&str, &Run> = archive.runs.iter().map(|r| (r.id.as_str(), r)).collect();
    let host = |r: &Run| r.meta.setting("host").map(str::to_string);
    let mut baseline_runs: Vec<std::collections::BTreeSet<&str>> =
        vec![Default::default(); archive.runs.len()];
    for p in endpoints
        .iter()
        .flat_map(|e| e.points.iter().chain(&e.branch_points))
    {
        baseline_runs[p.run_index].extend(p.baseline_runs.iter().map(|id| &**id));
    }
    archive
        .runs
        .iter()
        .zip(baseline_runs)
        .map(|(run, bases)| {
            let mine = host(run);
            let mut others: BTreeMap<Option<String>, Vec<&str>> = BTreeMap::new();
            for id in bases {
                let theirs = index.get(id).and_then(|r| host(r));
                if theirs != mine && (theirs.is_some() || mine.is_some()) {
                    others.entry(theirs).or_default().push(id);
                }
            }
            if others.is_empty() {
                return None;
            }
            let elsewhere = others
                .iter()
                .map(|(h, ids)| {
                    format!(
                        "{} ({})",
                        h.as_deref().unwrap_or("an unrecorded host"),
                        ids.join(", ")
                    )
                })
                .collect::<Vec<_>>()
                .join("; ");
            Some(format!(
                "this run ran on host {}, its baseline runs on {elsewhere}: latency may have \
                 moved with the machine. [analysis] series_by = [\"host\"] keeps a baseline \
                 per host.",
                mine.as_deref().unwrap_or("(not recorded)")
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn unrecorded_profiles_match_anything() {
        let a = map(&[("vus", "50")]);
        assert!(same_load(&a, &BTreeMap::new()));
        assert!(same_load(&a, &a.clone()));
        assert!(!same_load(&a, &map(&[("vus", "100")])));
        assert_eq!(
            describe_changes(&a, &map(&[("vus", "100"), ("script_hash", "x")])),
            "script_hash (none) → x, vus 50 → 100"
        );
    }

    #[test]
    fn each_figure_stays_comparable_only_under_the_changes_that_leave_it_alone() {
        let base = map(&[("duration", "60s"), ("vus", "50"), ("script_hash", "a")]);
        let with = |k: &str, v: &str| {
            let mut m = base.clone();
            m.insert(k.into(), v.into());
            m
        };
        let all = Comparable {
            p99: true,
            error_rate: true,
            throughput: true,
        };
        assert_eq!(comparable(&base, &base), all);
        assert_eq!(comparable(&base, &BTreeMap::new()), all, "unrecorded");
        assert_eq!(comparable(&base, &with("duration", "30s")), all);
        assert_eq!(
            comparable(&base, &with("vus", "100")),
            Comparable {
                p99: false,
                error_rate: true,
                throughput: false
            }
        );
        let none = Comparable {
            p99: false,
            error_rate: false,
            throughput: false,
        };
        assert_eq!(comparable(&base, &with("script_hash", "b")), none);
        assert_eq!(comparable(&base, &with("executor", "ramping-vus")), none);
        // A level change and a script change together: the script decides.
        let mut both = with("vus", "100");
        both.insert("script_hash".into(), "b".into());
        assert_eq!(comparable(&base, &both), none);
    }

    #[test]
    fn environment_markers_skip_runs_without_an_environment() {
        let t = |h| Utc.with_ymd_and_hms(2026, 1, 1, h, 0, 0).unwrap();
        let run = |id: &str, h, env: &[(&str, &str)]| Run {
            capacity: Default::default(),
            id: id.into(),
            started_at: t(h),
            meta: crate::model::RunMeta {
                environment: map(env),
                ..Default::default()
            },
            endpoints: Default::default(),
            problems: vec![],
            untrusted_time: None,
        };
        let runs = [
            run("a", 1, &[("jvm_flags", "-Xmx2g")]),
            run("b", 2, &[]),
            run("c", 3, &[("jvm_flags", "-Xmx2g")]),
            run("d", 4, &[("jvm_flags", "-Xmx4g")]),
        ];
        let changes = environment_changes(&runs);
        assert_eq!(changes.len(), 1);
        assert_eq!(
            (changes[0].run.as_str(), changes[0].previous_run.as_str()),
            ("d", "c")
        );
        assert_eq!(changes[0].changes[0].after.as_deref(), Some("-Xmx4g"));
    }
}
