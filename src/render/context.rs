//! What every page function reads: the analysis, the slugs, the `[site]`
//! links, and lookups built once per site. Also the small views of a run,
//! a commit and a suspect range that every page shows the same way
//! (templates/macros.html draws them).

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, NaiveDate, Utc};

use super::Slugs;
use super::format as f;
use crate::analyse::alarms::Alarm;
use crate::analyse::evidence::SuspectRange;
use crate::analyse::{Analysis, EndpointAnalysis, RunInfo, RunPoint};

/// Characters of a short commit hash (git's default abbreviation).
pub const SHORT_COMMIT: usize = 7;

/// The analysis and what pages look up in it.
pub struct Ctx<'a> {
    pub analysis: &'a Analysis,
    pub slugs: &'a Slugs,
    runs: HashMap<&'a str, &'a RunInfo>,
    /// The site policy's (`[alarms] policy`) alarms by (endpoint, candidate
    /// run), the first of each: every run page looked each endpoint's up
    /// in the whole list (120 endpoints × 468 runs × thousands of alarms).
    alarm_at: HashMap<(&'a str, &'a str), &'a Alarm>,
    /// The site policy's alarms of each endpoint, in the report's order.
    endpoint_alarms: HashMap<&'a str, Vec<&'a Alarm>>,
    /// Each run's points (a branch run's are its branch points), in
    /// endpoint order, the first point of each endpoint.
    run_points: Vec<Vec<(&'a EndpointAnalysis, &'a RunPoint)>>,
    /// The digests of each point's rounds, by their place in memory
    /// (the analysis holds them while this lives): a run page and its
    /// data file key the same rounds, encoded once.
    rounds_digests: std::sync::Mutex<HashMap<(usize, usize), u128>>,
    /// Days with more than one run: a run of such a day is named with its
    /// time of day (`2026-12-01 14:05`), or two runs would read alike.
    shared_days: HashSet<NaiveDate>,
}

/// A commit as the site shows it: a short hash, the full one in its
/// title, linked to the code host when `[site] commit_url` is set.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CommitView {
    pub short: String,
    pub full: String,
    /// Empty without `commit_url`.
    pub href: String,
}

/// A run wherever a page names it: its date linking to its page, its
/// commit and its notes.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RunLabel {
    pub id: String,
    pub href: String,
    pub date: String,
    pub commit: Option<CommitView>,
    /// `run.toml` `notes`, or empty.
    pub notes: String,
}

/// Where a change came in: the last run at the old level and the first at
/// the new one, and the code host's page of the commits between them.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SuspectView {
    /// `None` when the change came with the endpoint's first run.
    pub last_good: Option<RunLabel>,
    pub first_bad: RunLabel,
    /// Empty without `[site] compare_url` or without both commits.
    pub compare_href: String,
}

/// A run whose `started_at` cannot be trusted (dated 1970 or 2099, …):
/// left off every time axis and window, and listed apart with the reason.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct UntrustedRun {
    pub run: RunLabel,
    pub reason: String,
}

impl<'a> Ctx<'a> {
    pub fn new(analysis: &'a Analysis, slugs: &'a Slugs) -> Ctx<'a> {
        let mut alarm_at = HashMap::new();
        let mut endpoint_alarms: HashMap<&str, Vec<&Alarm>> = HashMap::new();
        for a in analysis.alarms.of(analysis.settings.alarms.policy) {
            alarm_at
                .entry((a.endpoint.as_str(), a.run.as_str()))
                .or_insert(a);
            endpoint_alarms
                .entry(a.endpoint.as_str())
                .or_default()
                .push(a);
        }
        Ctx {
            analysis,
            slugs,
            runs: analysis.runs.iter().map(|r| (r.id.as_str(), r)).collect(),
            alarm_at,
            endpoint_alarms,
            run_points: points_by_run(analysis),
            rounds_digests: Default::default(),
            shared_days: shared_days(analysis.runs.iter().map(|r| r.started_at)),
        }
    }

    /// When a run started, as pages name it: its day, with the time of day
    /// when another run started the same day.
    pub fn when(&self, t: DateTime<Utc>) -> String {
        if self.shared_days.contains(&t.date_naive()) {
            crate::calendar::date_and_time(t)
        } else {
            f::date(t)
        }
    }

    /// A point's rounds as a page memo key holds them (see
    /// [`super::memo::RawRounds`]).
    pub fn raw_rounds(&self, rounds: &'a [crate::model::Round]) -> super::memo::RawRounds<'a> {
        let at = (rounds.as_ptr() as usize, rounds.len());
        let lock = || {
            self.rounds_digests
                .lock()
                .unwrap_or_else(|p| p.into_inner())
        };
        if let Some(&digest) = lock().get(&at) {
            return super::memo::RawRounds::known(rounds, digest);
        }
        // Digested outside the lock: two threads may both digest, alike.
        let key = super::memo::RawRounds::of(rounds);
        lock().insert(at, key.digest());
        key
    }

    /// The site policy's alarm of `endpoint` whose candidate is `run`
    /// (the first, as the report lists them).
    pub fn alarm_at(&self, endpoint: &str, run: &str) -> Option<&'a Alarm> {
        self.alarm_at.get(&(endpoint, run)).copied()
    }

    /// The site policy's alarms of one endpoint, in the report's order.
    pub fn endpoint_alarms(&self, endpoint: &str) -> &[&'a Alarm] {
        self.endpoint_alarms
            .get(endpoint)
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    /// Every endpoint's point in run `i` (an index into `analysis.runs`),
    /// in endpoint order: a branch run's points are its judgements against
    /// the main baseline.
    pub fn points_of_run(&self, i: usize) -> &[(&'a EndpointAnalysis, &'a RunPoint)] {
        self.run_points
            .get(i)
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    /// The run with this id.
    pub fn run(&self, id: &str) -> Option<&'a RunInfo> {
        self.runs.get(id).copied()
    }

    /// A commit hash as shown, linked when `[site] commit_url` is set.
    pub fn commit(&self, commit: &str) -> CommitView {
        CommitView {
            short: commit.chars().take(SHORT_COMMIT).collect(),
            full: commit.to_string(),
            href: self
                .analysis
                .settings
                .site
                .commit_href(commit)
                .unwrap_or_default(),
        }
    }

    /// A run as a page at `root` names it; `anchor` (an endpoint slug)
    /// jumps to that endpoint's rounds on the run page.
    pub fn run_label(&self, id: &str, root: &str, anchor: Option<&str>) -> RunLabel {
        let run = self.run(id);
        let href = match (self.slugs.runs.get(id), anchor) {
            (Some(slug), Some(a)) => format!("{root}runs/{slug}.html#{a}"),
            (Some(slug), None) => format!("{root}runs/{slug}.html"),
            (None, _) => String::new(),
        };
        RunLabel {
            id: id.to_string(),
            href,
            date: run.map(|r| self.when(r.started_at)).unwrap_or_default(),
            commit: run
                .and_then(|r| r.meta.commit.as_deref())
                .map(|c| self.commit(c)),
            notes: run.and_then(|r| r.meta.notes.clone()).unwrap_or_default(),
        }
    }

    /// The runs whose time cannot be trusted, as a page at `root` lists
    /// them apart; `only` keeps the runs it names (an endpoint's runs).
    pub fn untrusted_runs(&self, root: &str, only: Option<&[RunPoint]>) -> Vec<UntrustedRun> {
        // Untrusted first: they are few, and a page asks this with all of
        // an endpoint's points (a scan of every run against every point
        // was a measurable share of a build at 120 endpoints × 3 years).
        self.analysis
            .runs
            .iter()
            .filter(|r| r.untrusted_time.is_some())
            .filter(|r| only.is_none_or(|pts| pts.iter().any(|p| p.run == r.id)))
            .filter_map(|r| {
                Some(UntrustedRun {
                    reason: r.untrusted_time.clone()?,
                    run: self.run_label(&r.id, root, None),
                })
            })
            .collect()
    }

    /// Whether a run's time can be trusted (unknown runs are).
    pub fn trusted(&self, id: &str) -> bool {
        self.run(id).is_none_or(|r| r.untrusted_time.is_none())
    }

    /// The code host's page of the changes from one run's commit to
    /// another's, or empty when either has no commit or `compare_url` is
    /// not set.
    pub fn compare_href(&self, from: &str, to: &str) -> String {
        let commit = |id: &str| self.run(id).and_then(|r| r.meta.commit.as_deref());
        match (commit(from), commit(to)) {
            (Some(a), Some(b)) => self
                .analysis
                .settings
                .site
                .compare_href(a, b)
                .unwrap_or_default(),
            _ => String::new(),
        }
    }

    /// The suspect range from run `last_good` (none: the change came with
    /// the first run) to run `first_bad`, as a page at `root` shows it.
    pub fn suspect_between(
        &self,
        last_good: Option<&str>,
        first_bad: &str,
        root: &str,
    ) -> SuspectView {
        SuspectView {
            compare_href: last_good
                .map(|g| self.compare_href(g, first_bad))
                .unwrap_or_default(),
            last_good: last_good.map(|g| self.run_label(g, root, None)),
            first_bad: self.run_label(first_bad, root, None),
        }
    }

    /// The suspect range of a change that came in at `e.points[index]`
    /// ([`SuspectRange::before`], the analysis's one definition): the last
    /// run at the old level (failed and insufficient runs say nothing about
    /// it) and that run, with the commits between them.
    pub fn suspect(&self, e: &EndpointAnalysis, index: usize, root: &str) -> Option<SuspectView> {
        let first_bad: &RunPoint = e.points.get(index)?;
        let anchor = self.slugs.endpoints.get(&e.id).map(String::as_str);
        let range = SuspectRange::before(&e.points, index);
        let last_good = range
            .last_old_run
            .as_deref()
            .and_then(|id| e.points.iter().find(|p| p.run == id));
        Some(SuspectView {
            compare_href: last_good
                .map(|g| self.compare_href(&g.run, &first_bad.run))
                .unwrap_or_default(),
            last_good: last_good.map(|g| self.run_label(&g.run, root, anchor)),
            first_bad: self.run_label(&first_bad.run, root, anchor),
        })
    }
}

/// The days on which more than one of `times` falls.
pub fn shared_days(times: impl Iterator<Item = DateTime<Utc>>) -> HashSet<NaiveDate> {
    let mut seen = HashSet::new();
    let mut shared = HashSet::new();
    for t in times {
        let day = t.date_naive();
        if !seen.insert(day) {
            shared.insert(day);
        }
    }
    shared
}

/// [`Ctx::points_of_run`] for every run at once: one pass over the points
/// instead of a search of every endpoint's points per run page.
fn points_by_run(analysis: &Analysis) -> Vec<Vec<(&EndpointAnalysis, &RunPoint)>> {
    let mut by_run: Vec<Vec<(&EndpointAnalysis, &RunPoint)>> =
        vec![Vec::new(); analysis.runs.len()];
    for e in &analysis.endpoints {
        for (branch, points) in [(false, &e.points), (true, &e.branch_points)] {
            for p in points {
                let Some(run) = analysis.runs.get(p.run_index) else {
                    continue;
                };
                if run.branch.is_some() != branch {
                    continue;
                }
                let list = &mut by_run[p.run_index];
                // The first point of this endpoint in this run, as a search
                // would find it.
                if !list.last().is_some_and(|(last, _)| std::ptr::eq(*last, e)) {
                    list.push((e, p));
                }
            }
        }
    }
    by_run
}
