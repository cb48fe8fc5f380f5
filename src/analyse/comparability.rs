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

/// One setting that differs between two runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SettingChange {
    pub key: String,
    /// `None`: the earlier run did not record it.
    pub before: Option<String>,
    /// `None`: the later run does not record it.
    pub after: Option<String>,
}

/// The settings that differ, in key order.
pub fn changes(
    before: &BTreeMap<String, String>,
    after: &BTreeMap<String, String>,
) -> Vec<SettingChange> {
    let mut keys: Vec<&String> = before.keys().chain(after.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| before.get(*k) != after.get(*k))
        .map(|k| SettingChange {
            key: k.clone(),
            before: before.get(k).cloned(),
            after: after.get(k).cloned(),
        })
        .collect()
}

/// `vus 50 → 100, host (none) → perf-3`.
pub fn describe_changes(
    before: &BTreeMap<String, String>,
    after: &BTreeMap<String, String>,
) -> String {
    describe(&changes(before, after))
}

/// The changes in words, as the not-comparable reason and the environment
/// markers show them: `host perf-01 → perf-03, jvm_flags (none) → -Xmx4g`.
pub fn describe(changes: &[SettingChange]) -> String {
    changes
        .iter()
        .map(|c| {
            format!(
                "{} {} → {}",
                c.key,
                c.before.as_deref().unwrap_or("(none)"),
                c.after.as_deref().unwrap_or("(none)")
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

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
