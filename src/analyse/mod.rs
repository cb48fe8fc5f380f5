//! Analysis: pure functions from an [`Archive`] to an [`Analysis`].
//!
//! Per endpoint, runs are walked in time order ([`baseline::SeriesWalk`]).
//! Each run's figures are the medians of its rounds' ([`figures`]: p99,
//! error rate, throughput, spread; failed rounds left out); its baselines
//! are the medians of the figures of the last `baseline_window` accepted
//! runs before it; its verdict comes from [`verdict::decide`], the only
//! place verdicts are made.

pub mod alarms;
pub mod attribution;
pub mod baseline;
pub mod capacity;
pub mod changepoint;
pub mod comparability;
pub mod compare;
pub mod environment;
pub mod evidence;
pub mod figures;
pub mod gate;
pub mod improvements;
pub mod policy;
pub mod problems;
pub mod verdict;
pub mod weekly;

use chrono::{DateTime, Utc};
use rayon::prelude::*;
use serde::Serialize;

use crate::config::Settings;
use crate::error::Diagnostic;
use crate::error::Error;
use crate::model::{Archive, Round, RunMeta, SeriesKey};
use crate::stats::median;
pub use alarms::AlarmReport;
pub use comparability::EnvironmentChange;
pub use environment::RunWideShift;
pub use figures::RunFigures;
pub use policy::Policy;
use std::collections::BTreeMap;
pub use verdict::{Figure, Verdict};

/// Everything the renderers need; no file system access after this.
#[derive(Debug, Clone)]
pub struct Analysis {
    pub settings: Settings,
    /// The branch whose runs form the history ([`Archive::main_branch`]);
    /// `None`: no run records a branch.
    pub main_branch: Option<String>,
    /// Runs in time order.
    pub runs: Vec<RunInfo>,
    /// Endpoints sorted by id.
    pub endpoints: Vec<EndpointAnalysis>,
    /// Files skipped while reading, for the site and the exit code.
    pub diagnostics: Vec<Diagnostic>,
    /// Every policy's alarms, their states and labels, and the per-endpoint
    /// accounting (false-positive rates, detection delays).
    pub alarms: AlarmReport,
    /// Runs whose `[environment]` differs from the run before: chart markers.
    pub environment_changes: Vec<EnvironmentChange>,
    /// The run comparisons `[compare]` asks for, for the comparison pages.
    pub comparisons: Vec<compare::SiteComparison>,
    /// One row per release, for the release history page.
    pub releases: compare::ReleaseHistory,
    /// Step-load runs per endpoint: knees, limits, capacity verdicts.
    pub capacity: Vec<capacity::EndpointCapacity>,
    /// Deploys, config changes, incidents (`annotations/*.toml`), by time.
    pub annotations: Vec<crate::model::Annotation>,
}

impl Analysis {
    /// How many endpoints regressed in the latest run: the figure the
    /// overview and `perfdash build` both report.
    pub fn latest_run_regressions(&self) -> usize {
        let Some(latest) = self.latest_run() else {
            return 0;
        };
        self.endpoints
            .iter()
            .filter(|e| {
                e.points
                    .iter()
                    .any(|p| p.run == latest.id && p.verdict == Verdict::Regression)
            })
            .count()
    }
}

impl Analysis {
    /// How many endpoints failed in the latest run.
    pub fn latest_run_failures(&self) -> usize {
        let Some(latest) = self.latest_run() else {
            return 0;
        };
        self.endpoints
            .iter()
            .filter(|e| {
                e.points
                    .iter()
                    .any(|p| p.run == latest.id && p.verdict == Verdict::Failed)
            })
            .count()
    }

    /// How many endpoints measured before the latest run are missing from
    /// it: not judged, so the overview never reads "no regressions" for
    /// them (the gate's rule for `missing`, `gate::check`).
    pub fn latest_run_missing(&self) -> usize {
        let Some(latest) = self.latest_run() else {
            return 0;
        };
        self.endpoints
            .iter()
            .filter(|e| {
                e.points
                    .first()
                    .is_some_and(|p| p.started_at < latest.started_at)
                    && !e.points.iter().any(|p| p.run == latest.id)
            })
            .count()
    }

    /// The latest run whose time can be trusted (see
    /// [`Archive::latest_run`]): what every page and `check --latest`
    /// call the latest run.
    ///
    /// Only a main-branch run is ever the latest ([`RunInfo::branch`]).
    pub fn latest_run(&self) -> Option<&RunInfo> {
        latest_run_index(&self.runs).map(|i| &self.runs[i])
    }

    /// The runs of other branches than the main one, in time order.
    pub fn branch_runs(&self) -> impl Iterator<Item = &RunInfo> {
        self.runs.iter().filter(|r| r.branch.is_some())
    }
}

/// The index of [`Analysis::latest_run`] among `runs`.
pub(crate) fn latest_run_index(runs: &[RunInfo]) -> Option<usize> {
    runs.iter()
        .rposition(|r| r.untrusted_time.is_none() && r.branch.is_none())
}

/// What `analyse_with` is told besides the archive.
#[derive(Debug, Clone, Default)]
pub struct AnalyseOptions {
    /// Branch run id → the main run its merge base was measured in
    /// (`check --base-commit`, [`merge_base_run`]): the branch run is
    /// judged against the main baseline as it stood after that run,
    /// instead of as of its own start time.
    pub merge_bases: BTreeMap<String, MergeBase>,
    /// With [`Scope::Gate`]: the run the gate checks ([`gate::selected_run`]).
    /// Only its points get their [`evidence::Evidence`] (the pull-request
    /// comment shows its band); every other point's is left empty
    /// ([`evidence::Evidence::not_computed`]). `check` never shows nor
    /// serialises another point's evidence, and its Hodges–Lehmann interval
    /// was an eighth of the instructions of a warm `check` at 120 endpoints
    /// × 156 weeks. `None`, and with [`Scope::Site`]: every point's.
    pub checked_run: Option<gate::RunSelector>,
    /// The `changepoint` policy's judgements of the previous build (from
    /// the cache): a series that only grew is judged for its new runs
    /// only. `None`: every run is judged (`--no-cache`, `check`).
    pub known_judgements: Option<std::sync::Arc<changepoint::known::KnownJudgements>>,
}

/// A branch run's merge base, found among the main runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeBase {
    /// The commit as given (`--base-commit`).
    pub commit: String,
    /// Index into [`Archive::runs`] of the last main run of that commit.
    pub run_index: usize,
}

/// Finds the last main-branch run whose `commit` is `commit` (or starts
/// with it, or it with the run's: short and full hashes both work), for
/// judging `run` as of its merge base.
pub fn merge_base_run(archive: &Archive, run: &str, commit: &str) -> Result<MergeBase, Error> {
    let commit = commit.trim();
    let main = archive.main_branch();
    let same = |recorded: &str| {
        let short = commit.len().min(recorded.len());
        short >= 7 && recorded.as_bytes()[..short].eq_ignore_ascii_case(&commit.as_bytes()[..short])
    };
    if commit.len() < 7 || !commit.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(Error::Usage(format!(
            "--base-commit '{commit}' is not a commit hash (at least 7 hex digits), e.g. \
             --base-commit \"$(git merge-base HEAD origin/main)\""
        )));
    }
    let Some(branch_run) = archive.runs.iter().find(|r| r.id == run) else {
        return Err(Error::Usage(format!("no run '{run}' in the archive")));
    };
    if branch_run.meta.on_main(main.as_deref()) {
        return Err(Error::Usage(format!(
            "run '{run}' is a run of the main branch ({}): it is judged in the main history, \
             and --base-commit is for runs of other branches",
            main.as_deref().unwrap_or("no run records a branch")
        )));
    }
    archive
        .runs
        .iter()
        .enumerate()
        .rev()
        .find(|(_, r)| {
            r.meta.on_main(main.as_deref()) && r.meta.commit.as_deref().is_some_and(same)
        })
        .map(|(run_index, _)| MergeBase {
            commit: commit.to_string(),
            run_index,
        })
        .ok_or_else(|| {
            Error::Usage(format!(
                "no main-branch run ({}) records commit {commit} (--base-commit); the merge base \
                 was not measured. Measure it on the main branch, pass the merge base of a \
                 measured commit, or leave --base-commit out to judge run '{run}' against the \
                 main baseline as of its start time",
                main.as_deref().unwrap_or("runs without a branch")
            ))
        })
}

/// A run as the site lists it.
#[derive(Debug, Clone)]
pub struct RunInfo {
    pub id: String,
    pub started_at: DateTime<Utc>,
    pub meta: RunMeta,
    /// Problems met while reading this run; non-empty means incomplete.
    pub problems: Vec<Diagnostic>,
    /// Why its `started_at` cannot be trusted, when it cannot: never the
    /// latest run.
    pub untrusted_time: Option<String>,
    /// Most of the run's endpoints moved the same way together: likely
    /// the environment, not the code ([`environment`]).
    pub environment_suspect: Option<RunWideShift>,
    /// Set for a run of another branch than the main one: judged against
    /// the main baseline, never part of the main history.
    pub branch: Option<BranchBase>,
    /// The run's series (`[analysis] series_by`, e.g. `host perf-01`);
    /// `None` without `series_by`.
    pub series: Option<String>,
    /// Without `series_by`: the host changed against the runs that formed
    /// this run's baselines ("host perf-02; its baseline runs ran on
    /// perf-01"), a warning on the run page.
    pub host_changed: Option<String>,
}

/// Which main baseline a branch run was judged against.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BranchBase {
    /// The run's branch (run.toml `branch`).
    pub branch: String,
    /// The last main run before its baseline was taken: the merge base's
    /// run with `--base-commit`, else the last main run that started
    /// before it (`None`: none did).
    pub main_run: Option<String>,
    /// Index of `main_run` in [`Analysis::runs`].
    #[serde(skip)]
    pub main_run_index: Option<usize>,
    /// The merge base given with `check --base-commit`, if any.
    pub base_commit: Option<String>,
}

impl BranchBase {
    /// "branch feature-x, judged against the main baseline as of run R
    /// (merge base abc1234)", for the check report and the run page.
    pub fn describe(&self, main_branch: Option<&str>) -> String {
        let main = main_branch.map_or("main".to_string(), |b| format!("main ({b})"));
        let as_of = match (&self.main_run, &self.base_commit) {
            (Some(run), Some(commit)) => format!("as of run {run}, its merge base {commit}"),
            (Some(run), None) => {
                format!("as of run {run}, the last main run that started before it")
            }
            (None, _) => "but no main run started before it".to_string(),
        };
        format!(
            "a run of branch {}, judged against the {main} baseline {as_of}; it never joins the main history",
            self.branch
        )
    }
}

/// One endpoint's history.
#[derive(Debug, Clone)]
pub struct EndpointAnalysis {
    /// The folder name in each run.
    pub id: String,
    /// Display name (`perfdash.toml` `[endpoints.<id>] name`, else the id).
    pub name: String,
    pub threshold_ratio: f64,
    /// One point per main-branch run that has this endpoint, in time
    /// order: the history every trend, alarm and change point reads.
    pub points: Vec<RunPoint>,
    /// One point per run of another branch that has this endpoint, in time
    /// order, each judged against the main baseline as of its merge base
    /// ([`RunInfo::branch`]). Never part of `points`.
    pub branch_points: Vec<RunPoint>,
    /// Level shifts in the run medians (Otava change points,
    /// `[changepoint]` settings), oldest first.
    pub change_points: Vec<changepoint::LevelShift>,
}

impl EndpointAnalysis {
    /// The point of the latest run whose time can be trusted.
    pub fn latest(&self) -> Option<&RunPoint> {
        self.points.iter().rev().find(|p| !p.untrusted_time)
    }
}

/// One endpoint in one run, judged.
#[derive(Debug, Clone, Serialize)]
pub struct RunPoint {
    /// Index into [`Analysis::runs`].
    #[serde(skip)]
    pub run_index: usize,
    pub run: String,
    pub started_at: DateTime<Utc>,
    /// The run's commit (run.toml), for suspect ranges.
    #[serde(skip)]
    pub commit: Option<String>,
    /// The run's rounds, shared with the archive (not a copy).
    pub rounds: crate::model::Rounds,
    pub round_p99_ms: Vec<f64>,
    /// The median of the usable rounds' p99; for a failed run without a
    /// usable round, of all its rounds (shown, never judged).
    pub median_p99_ms: f64,
    pub baseline_p99_ms: Option<f64>,
    /// median ÷ baseline (`None` for a failed run).
    pub ratio: Option<f64>,
    pub verdict: Verdict,
    /// The runs whose medians formed the baseline, oldest first (shared
    /// ids: a run is in the baseline of up to `baseline_window` points of
    /// every endpoint).
    pub baseline_runs: Vec<std::sync::Arc<str>>,
    /// Why this run was not compared with its predecessors (its load
    /// profile differs from theirs); its verdict is then `no-baseline`.
    pub not_comparable: Option<String>,
    /// Why there is no baseline, whenever there is none.
    pub no_baseline_reason: Option<String>,
    /// The load-profile change that leaves the p99 without a baseline
    /// (`vus 50 → 100`), when that is why there is none.
    #[serde(skip)]
    pub load_change: Option<String>,
    /// Without a baseline: the accepted runs before it (fewer than
    /// `min_baseline_runs`, oldest first), whose rounds `perfdash check`
    /// gives its early verdict from ([`gate`]).
    #[serde(skip)]
    pub early_runs: Vec<std::sync::Arc<str>>,
    /// The four figures (p99/p90, error rate, throughput, spread) and the
    /// failed rounds ([`figures`]).
    pub figures: RunFigures,
    /// The error rate and throughput the run was compared with.
    pub baseline_error_rate: Option<f64>,
    pub baseline_throughput_rps: Option<f64>,
    /// Why throughput was not judged (no recorded load profile, …).
    pub throughput_not_judged: Option<String>,
    /// The figures that crossed their lines (a `regression`'s reasons).
    pub regressed: Vec<Figure>,
    /// What the verdict was decided from (the policies re-decide from it).
    #[serde(skip)]
    pub decided_from: verdict::Evidence,
    /// Flame-graph profiles of this endpoint in this run, classified and
    /// compared with the baseline's ([`attribution`]).
    pub profiles: Vec<attribution::ProfileAnalysis>,
    /// A regression inside a change a human triaged `accepted` (see
    /// [`verdict::AcceptedChanges`]): still a regression by the
    /// numbers, shown as accepted rather than alarming.
    pub accepted_change: bool,
    /// The rounds' band, likely GC/noise rounds, and the shift of this
    /// run's median against its baseline window ([`evidence`]).
    pub evidence: evidence::Evidence,
    /// The run's `started_at` cannot be trusted: never the latest point.
    #[serde(skip)]
    pub untrusted_time: bool,
    /// The run's series (`[analysis] series_by`); empty without it.
    #[serde(skip)]
    pub series: SeriesKey,
    /// The run is environment suspect (most endpoints moved together,
    /// [`RunInfo::environment_suspect`]): it measured the environment, so
    /// it never dates a change (change points, alarm onsets).
    #[serde(skip)]
    pub environment_suspect: bool,
}

impl RunPoint {
    /// The p99 line this run was judged by, as a ratio to its baseline:
    /// the threshold ratio, or the endpoint's noise line where that is
    /// wider ([`verdict::line_ratio`]).
    pub fn line_ratio(&self) -> f64 {
        self.decided_from.line_ratio()
    }

    /// The regression line: baseline × [`Self::line_ratio`].
    pub fn p99_line_ms(&self) -> Option<f64> {
        self.baseline_p99_ms.map(|b| b * self.line_ratio())
    }

    /// The error rate above which this run regressed, when judged.
    pub fn error_rate_line(&self) -> Option<f64> {
        self.baseline_error_rate
            .map(|b| self.decided_from.lines.error_rate_line(b))
    }

    /// The throughput below which this run regressed, when judged.
    pub fn throughput_line(&self) -> Option<f64> {
        self.baseline_throughput_rps
            .map(|b| self.decided_from.lines.throughput_line(b))
    }
}

/// How much of the analysis to compute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Everything the site shows: every policy side by side (the weekly
    /// page compares them all), profiles, change points, comparisons.
    Site,
    /// What `perfdash check` reads to judge one run under one policy:
    /// every endpoint's verdicts and baselines, the run-wide shifts, the
    /// step-load results and this policy's alarm track ([`gate`]). The
    /// other policies, flame-graph attribution, change points for the
    /// charts, comparisons and releases are left empty.
    Gate(Policy),
}

/// Analyses an archive. Deterministic: the same archive gives the same
/// analysis.
pub fn analyse(archive: &Archive, diagnostics: Vec<Diagnostic>) -> Analysis {
    analyse_scoped(
        archive,
        diagnostics,
        Scope::Site,
        &AnalyseOptions::default(),
    )
}

/// [`analyse`], with branch runs judged as of the merge bases given.
pub fn analyse_with(
    archive: &Archive,
    diagnostics: Vec<Diagnostic>,
    options: &AnalyseOptions,
) -> Analysis {
    analyse_scoped(archive, diagnostics, Scope::Site, options)
}

/// [`analyse_with`], computing only what `scope` needs. A [`Scope::Gate`]
/// analysis gives `perfdash check` the same report as a full one (the
/// test `gate_scope_checks_like_the_full_analysis` compares them on every
/// run and policy of the demo archive).
pub fn analyse_scoped(
    archive: &Archive,
    mut diagnostics: Vec<Diagnostic>,
    scope: Scope,
    options: &AnalyseOptions,
) -> Analysis {
    let settings = &archive.settings;
    let site = scope == Scope::Site;
    let classifier = profile_classifier(settings, &mut diagnostics);
    let history = History::of(archive, options);
    let mut runs = run_infos(archive, &history);
    let evidence_for = match (scope, &options.checked_run) {
        (Scope::Gate(_), Some(which)) => EvidenceFor::Run(gate::selected_run(&runs, which)),
        _ => EvidenceFor::Every,
    };

    // Endpoints are independent of each other until the run-wide steps
    // below: one task each, on every core; `collect` keeps the id order,
    // so the analysis is the same whatever the number of threads.
    let mut endpoints: Vec<EndpointAnalysis> = archive
        .endpoint_ids()
        .into_par_iter()
        .map(|id| {
            let classifier = classifier.as_ref().filter(|_| site);
            analyse_endpoint(id, archive, &history, classifier, evidence_for)
        })
        .collect();

    mark_run_wide_changes(&mut runs, &mut endpoints, archive);
    if site {
        // Change points leave out the runs the environment moved, so they
        // are found once those are known.
        endpoints.par_iter_mut().for_each(|e| {
            e.change_points = changepoint::endpoint_change_points(&e.points, &settings.changepoint);
        });
    }
    // Capacity baselines and environment markers belong to the main
    // history too.
    let main_archive = history.main_archive(archive);
    let capacity = capacity::analyse_capacity(&main_archive);
    if let Scope::Gate(policy) = scope {
        return Analysis {
            settings: settings.clone(),
            main_branch: archive.main_branch(),
            alarms: alarms::gate_report(&endpoints, &runs, &archive.triage, settings, policy),
            runs,
            endpoints,
            diagnostics,
            environment_changes: Vec::new(),
            comparisons: Vec::new(),
            releases: compare::ReleaseHistory {
                endpoints: Vec::new(),
                releases: Vec::new(),
            },
            capacity,
            annotations: archive.annotations.clone(),
        };
    }
    // The alarms (on every core, by endpoint) and the run-wide rest are
    // independent: side by side.
    let (alarms, (environment_changes, (comparisons, compare_diagnostics), releases)) = rayon::join(
        || {
            let known = options.known_judgements.as_deref();
            alarms::report(&endpoints, &runs, &archive.triage, settings, known)
        },
        || {
            (
                comparability::environment_changes(&main_archive.runs),
                compare::site_comparisons(archive),
                compare::release_history(archive),
            )
        },
    );
    diagnostics.extend(compare_diagnostics);
    Analysis {
        settings: settings.clone(),
        main_branch: archive.main_branch(),
        runs,
        endpoints,
        diagnostics,
        alarms,
        environment_changes,
        comparisons,
        releases,
        capacity,
        annotations: archive.annotations.clone(),
    }
}

/// One endpoint's history, judged: its points (main and branch runs) and
/// its profiles attributed (`classifier`, the site only). Its change
/// points come later, once the run-wide shifts are known.
fn analyse_endpoint(
    id: String,
    archive: &Archive,
    history: &History,
    classifier: Option<&crate::profile::Classifier>,
    evidence_for: EvidenceFor,
) -> EndpointAnalysis {
    let settings = &archive.settings;
    let threshold_ratio = settings.threshold_ratio(&id);
    // The runs that hold this endpoint, looked up once for the judgement
    // and the profiles.
    let endpoint_runs: Vec<(usize, &crate::model::EndpointRun)> = archive
        .runs
        .iter()
        .enumerate()
        .filter_map(|(i, run)| run.endpoints.get(&id).map(|e| (i, e)))
        .collect();
    let series: Vec<(usize, &crate::model::Rounds)> =
        endpoint_runs.iter().map(|&(i, e)| (i, &e.rounds)).collect();
    let mut judged = judge_series(
        &id,
        &series,
        archive,
        history,
        threshold_ratio,
        evidence_for,
    );
    if let Some(classifier) = classifier {
        attribution::attach_profiles(
            &mut judged,
            &endpoint_runs,
            archive,
            classifier,
            settings.profiles.min_shift_pts,
        );
    }
    let (mut points, mut branch_points): (Vec<RunPoint>, Vec<RunPoint>) =
        judged.into_iter().partition(|p| history.main[p.run_index]);
    // Held until the site is written: no growth slack (RunPoint is
    // large; up to half of 44 MB at 120 endpoints × 156 weeks).
    points.shrink_to_fit();
    branch_points.shrink_to_fit();
    branch_points.sort_by_key(|p| p.run_index);
    EndpointAnalysis {
        name: settings.endpoint_name(&id),
        id,
        threshold_ratio,
        points,
        branch_points,
        change_points: Vec::new(),
    }
}

/// Marks the runs where most endpoints moved together (environment
/// suspect), on the runs and on their points, and, without `series_by`,
/// those whose host changed against their baseline runs.
fn mark_run_wide_changes(
    runs: &mut [RunInfo],
    endpoints: &mut [EndpointAnalysis],
    archive: &Archive,
) {
    for (run, shift) in runs
        .iter_mut()
        .zip(environment::run_wide_shifts(endpoints, archive.runs.len()))
    {
        run.environment_suspect = shift;
    }
    for e in endpoints.iter_mut() {
        for p in &mut e.points {
            p.environment_suspect = runs
                .get(p.run_index)
                .is_some_and(|r| r.environment_suspect.is_some());
        }
    }
    if archive.settings.analysis.series_by.is_empty() {
        for (run, changed) in runs
            .iter_mut()
            .zip(comparability::host_changes(archive, endpoints))
        {
            run.host_changed = changed;
        }
    }
}

/// The frame classifier of `[profiles]`. Loading the settings
/// (ingest::settings) compiled these rules, so this only fails for
/// settings built in code: then profiles are not classified, and a
/// diagnostic says so.
fn profile_classifier(
    settings: &crate::config::Settings,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<crate::profile::Classifier> {
    match crate::profile::Classifier::new(&settings.profiles) {
        Ok(c) => Some(c),
        Err(e) => {
            diagnostics.push(Diagnostic {
                kind: crate::error::DiagnosticKind::Ignored,
                path: crate::config::SETTINGS_FILE.to_string(),
                line: None,
                message: format!("profiles: {e}; profiles are not classified"),
            });
            None
        }
    }
}

/// One [`RunInfo`] per run of the archive, in archive order; the run-wide
/// findings (environment suspect, host changed) are filled in later.
fn run_infos(archive: &Archive, history: &History) -> Vec<RunInfo> {
    let series_by = !archive.settings.analysis.series_by.is_empty();
    archive
        .runs
        .iter()
        .enumerate()
        .map(|(i, r)| RunInfo {
            id: r.id.clone(),
            started_at: r.started_at,
            meta: r.meta.clone(),
            problems: r.problems.clone(),
            untrusted_time: r.untrusted_time.clone(),
            environment_suspect: None,
            branch: history.branch_base(archive, i),
            series: series_by.then(|| history.series[i].describe()),
            host_changed: None,
        })
        .collect()
}

/// Which runs form the main history, the series of each run, and when
/// each branch run is judged.
struct History {
    /// Per run of the archive: whether it is a main-branch run.
    main: Vec<bool>,
    /// Per run of the archive: its series (`series_by`).
    series: Vec<SeriesKey>,
    /// Per run of the archive, for branch runs: the index of the main run
    /// after which it is judged (`None`: before any main run), and the
    /// merge base when given.
    judged_after: Vec<Option<(Option<usize>, Option<String>)>>,
}

impl History {
    fn of(archive: &Archive, options: &AnalyseOptions) -> History {
        let main_branch = archive.main_branch();
        let main: Vec<bool> = archive
            .runs
            .iter()
            .map(|r| r.meta.on_main(main_branch.as_deref()))
            .collect();
        let series_by = &archive.settings.analysis.series_by;
        let series = archive
            .runs
            .iter()
            .map(|r| r.meta.series(series_by))
            .collect();
        let mut last_main = None;
        let mut judged_after = Vec::with_capacity(archive.runs.len());
        for (i, run) in archive.runs.iter().enumerate() {
            if main[i] {
                last_main = Some(i);
                judged_after.push(None);
                continue;
            }
            // Without a merge base: the main runs that started before it
            // (runs are in time order, ties by id).
            judged_after.push(Some(match options.merge_bases.get(&run.id) {
                Some(base) if main.get(base.run_index) == Some(&true) => {
                    (Some(base.run_index), Some(base.commit.clone()))
                }
                _ => (last_main, None),
            }));
        }
        History {
            main,
            series,
            judged_after,
        }
    }

    fn branch_base(&self, archive: &Archive, run: usize) -> Option<BranchBase> {
        let (after, base_commit) = self.judged_after[run].clone()?;
        Some(BranchBase {
            branch: archive.runs[run].meta.branch.clone().unwrap_or_default(),
            main_run: after.map(|i| archive.runs[i].id.clone()),
            main_run_index: after,
            base_commit,
        })
    }

    /// The archive with the main-branch runs only (borrowed when that is
    /// every run).
    fn main_archive<'a>(&self, archive: &'a Archive) -> std::borrow::Cow<'a, Archive> {
        if self.main.iter().all(|m| *m) {
            return std::borrow::Cow::Borrowed(archive);
        }
        let mut main = archive.clone();
        main.runs = archive
            .runs
            .iter()
            .zip(&self.main)
            .filter(|(_, m)| **m)
            .map(|(r, _)| r.clone())
            .collect();
        std::borrow::Cow::Owned(main)
    }
}

/// Which points get their [`evidence::Evidence`] computed
/// ([`AnalyseOptions::checked_run`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EvidenceFor {
    Every,
    /// Only the points of this run (`None`: of no run; the check then
    /// fails for want of the run).
    Run(Option<usize>),
}

impl EvidenceFor {
    fn includes(self, run_index: usize) -> bool {
        match self {
            EvidenceFor::Every => true,
            EvidenceFor::Run(run) => run == Some(run_index),
        }
    }
}

/// Walks one endpoint's runs in time order ([`baseline::SeriesWalks`]),
/// judging each main-branch run against the accepted runs of its series
/// before it, and each branch run against the same walk as it stood after
/// the main run it is judged after. Returns the points in the order they
/// were judged, branch runs among the main ones.
fn judge_series(
    endpoint: &str,
    series: &[(usize, &crate::model::Rounds)],
    archive: &Archive,
    history: &History,
    threshold_ratio: f64,
    evidence_for: EvidenceFor,
) -> Vec<RunPoint> {
    let a = &archive.settings.analysis;
    let mut walks = baseline::SeriesWalks::new(a, threshold_ratio);
    let mut points = Vec::with_capacity(series.len());
    // Branch runs with this endpoint, in the order they are judged.
    let mut pending: Vec<(Option<usize>, usize, &crate::model::Rounds)> = series
        .iter()
        .filter_map(|&(i, rounds)| Some((history.judged_after[i].as_ref()?.0, i, rounds)))
        .collect();
    pending.sort_by_key(|&(after, i, _)| (after, i));
    let mut pending = pending.into_iter().peekable();
    let accepted = archive.accepted_runs(endpoint);
    let mut judge = |i: usize, rounds: &crate::model::Rounds, joins: bool| {
        let labelled = accepted.contains(archive.runs[i].id.as_str());
        let point = judge_point(labelled, i, rounds, archive, history, &mut walks, joins);
        point.map(|(mut point, baseline_medians)| {
            if evidence_for.includes(i) {
                point.evidence = point_evidence(&point, &baseline_medians);
            }
            point
        })
    };
    for &(run_index, rounds) in series.iter().filter(|(i, _)| history.main[*i]) {
        while let Some((_, i, rounds)) =
            pending.next_if(|(after, _, _)| after.is_none_or(|a| a < run_index))
        {
            points.extend(judge(i, rounds, false));
        }
        points.extend(judge(run_index, rounds, true));
    }
    for (_, i, rounds) in pending {
        points.extend(judge(i, rounds, false));
    }
    points
}

/// Judges one run of one endpoint: a main run joins the walk of its
/// series (`joins`), a branch run is only assessed against it. Returns
/// the point, its evidence left out, and the medians of its baseline runs
/// (empty without a baseline), which [`point_evidence`] needs.
/// `labelled_accepted`: its alarm was triaged `accepted`.
fn judge_point(
    labelled_accepted: bool,
    run_index: usize,
    rounds: &crate::model::Rounds,
    archive: &Archive,
    history: &History,
    walks: &mut baseline::SeriesWalks,
    joins: bool,
) -> Option<(RunPoint, Vec<f64>)> {
    let a = &archive.settings.analysis;
    let run = &archive.runs[run_index];
    let round_p99_ms: Vec<f64> = rounds.iter().map(|r| r.stats.p99_ms).collect();
    let figures = RunFigures::of(rounds, a.failed_round_error_rate);
    // ingest never keeps an endpoint without rounds
    let median_p99_ms = figures.p99_ms.or_else(|| median(&round_p99_ms))?;
    let input = baseline::RunInput {
        id: &run.id,
        rounds: rounds.len(),
        figures: &figures,
        median_p99_ms,
        load: &run.meta.load,
        labelled_accepted,
        resolution: verdict::Resolution::of_rounds(rounds),
    };
    let series = &history.series[run_index];
    let judged = if joins {
        walks.judge(series, input)
    } else {
        walks.assess(series, input)
    };
    let b = judged.baseline;
    let baseline_p99_ms = b.p99_ms.filter(|_| b.missing.is_none());
    let baseline_medians = match baseline_p99_ms {
        Some(_) => b.run_p99_ms,
        None => Vec::new(),
    };
    let point = RunPoint {
        run_index,
        run: run.id.clone(),
        started_at: run.started_at,
        commit: run.meta.commit.clone(),
        rounds: std::sync::Arc::clone(rounds),
        round_p99_ms,
        median_p99_ms,
        baseline_p99_ms,
        // A failed run has no latency to compare.
        ratio: baseline_p99_ms
            .filter(|_| judged.decision.verdict != Verdict::Failed)
            .map(|b| median_p99_ms / b),
        verdict: judged.decision.verdict,
        baseline_runs: if baseline_p99_ms.is_some() {
            b.runs
        } else {
            Vec::new()
        },
        not_comparable: b.not_comparable,
        no_baseline_reason: b.missing,
        load_change: b.load_change,
        early_runs: b.early_runs,
        figures,
        // Without a p99 baseline, an error-rate baseline is there only
        // when the load level changed (`baseline::SeriesWalk::baseline`).
        baseline_error_rate: b.error_rate.filter(|_| {
            baseline_p99_ms.is_some() || judged.decision.regressed.contains(&Figure::ErrorRate)
        }),
        baseline_throughput_rps: b.throughput_rps.filter(|_| baseline_p99_ms.is_some()),
        throughput_not_judged: b.throughput_not_judged,
        regressed: judged.decision.regressed,
        decided_from: judged.evidence,
        profiles: Vec::new(),
        accepted_change: judged.accepted_change,
        evidence: evidence::Evidence::not_computed(),
        untrusted_time: run.untrusted_time.is_some(),
        series: series.clone(),
        // Marked once every endpoint is judged (`mark_run_wide_changes`).
        environment_suspect: false,
    };
    Some((point, baseline_medians))
}

/// A point's evidence: its usable rounds (all of them when none is: a
/// failed run) against the medians of its baseline runs.
fn point_evidence(point: &RunPoint, baseline_medians: &[f64]) -> evidence::Evidence {
    // Borrowed: every point of every endpoint of a site passes here.
    let failed = &point.figures.failed_rounds;
    let usable = |r: &&Round| !failed.iter().any(|f| f.round == r.number);
    let medians = [point.median_p99_ms];
    match point.rounds.iter().any(|r| usable(&r)) {
        true => evidence::evidence(
            point.rounds.iter().filter(usable),
            baseline_medians,
            &medians,
        ),
        false => evidence::evidence(point.rounds.iter(), baseline_medians, &medians),
    }
}

#[cfg(test)]
mod tests;
