//! Plain data loaded from an archive: no I/O, no formatting.
//!
//! `ingest` builds an [`Archive`]; `analyse` reads it; `render` never sees files.

use std::collections::BTreeMap;
use std::path::PathBuf;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::config::Settings;

/// Everything read from one archive folder.
#[derive(Debug, Clone)]
pub struct Archive {
    /// The archive root as given on the command line.
    pub root: PathBuf,
    /// `perfdash.toml`, or the documented defaults.
    pub settings: Settings,
    /// Runs sorted by `started_at`, then by id.
    pub runs: Vec<Run>,
    /// Human triage labels from `triage/*.toml`, sorted by run, endpoint.
    pub triage: Vec<TriageLabel>,
    /// Deploys, config changes, incidents from `annotations/*.toml`,
    /// sorted by time.
    pub annotations: Vec<Annotation>,
}

/// Something that happened around the tests (`annotations/*.toml`):
/// drawn on the charts and listed on the history page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Annotation {
    /// When: the given time, the given day at midnight UTC, or the start
    /// of the given run.
    pub at: DateTime<Utc>,
    /// The run it was given by, if any.
    pub run: Option<String>,
    pub text: String,
    /// An http(s) address with more.
    pub link: Option<String>,
    /// Endpoint ids it concerns; empty: every endpoint.
    pub endpoints: Vec<String>,
    /// Where it was read, `annotations/<file>.toml:<line>`.
    pub source: String,
}

impl Annotation {
    /// Whether it belongs on this endpoint's chart.
    pub fn concerns(&self, endpoint: &str) -> bool {
        self.endpoints.is_empty() || self.endpoints.iter().any(|e| e == endpoint)
    }
}

impl Archive {
    /// How many round files the archive's runs hold.
    pub fn round_files(&self) -> usize {
        self.runs
            .iter()
            .flat_map(|r| r.endpoints.values())
            .map(|e| e.rounds.len())
            .sum()
    }

    /// The latest run whose time can be trusted: what "latest" means for
    /// the overview, the weekly page, `compare latest` and `check --latest`.
    /// A run whose `started_at` is in the future (or otherwise untrusted,
    /// see [`Run::untrusted_time`]) would otherwise stay "latest" for good.
    ///
    /// Only main-branch runs ([`Self::main_branch`]) are "latest": a pull
    /// request's run is judged against the history, never the news of it.
    pub fn latest_run(&self) -> Option<&Run> {
        let main = self.main_branch();
        self.runs
            .iter()
            .rev()
            .find(|r| r.untrusted_time.is_none() && r.meta.on_main(main.as_deref()))
    }

    /// The branch whose runs form the history (`[analysis] main_branch`,
    /// else the most common `branch` among the runs that record one; a tie
    /// goes to `main`, then `master`, then the first name in sort order).
    /// `None`: no run records a branch, and every run is a main run.
    pub fn main_branch(&self) -> Option<String> {
        if let Some(b) = &self.settings.analysis.main_branch {
            return Some(b.clone());
        }
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for b in self.runs.iter().filter_map(|r| r.meta.branch.as_deref()) {
            *counts.entry(b).or_default() += 1;
        }
        let preference = |b: &str| match b {
            "main" => 0,
            "master" => 1,
            _ => 2,
        };
        counts
            .into_iter()
            // Most runs first, then the preferred name, then sort order.
            .min_by_key(|&(b, n)| (std::cmp::Reverse(n), preference(b), b))
            .map(|(b, _)| b.to_string())
    }

    /// Whether a human labelled `run`'s alarm on `endpoint` `accepted` (an
    /// intended change: the new level becomes the baseline).
    /// `triage` is sorted by run and endpoint with one label per alarm
    /// (as ingest leaves it), so this is a binary search: it is asked for
    /// every run of every endpoint, and archives hold thousands of labels.
    pub fn accepted_by_triage(&self, run: &str, endpoint: &str) -> bool {
        let key = (run, endpoint);
        let at = self
            .triage
            .partition_point(|l| (l.run.as_str(), l.endpoint.as_str()) < key);
        self.triage.get(at).is_some_and(|l| {
            l.label == Label::Accepted && (l.run.as_str(), l.endpoint.as_str()) == key
        })
    }

    /// The runs whose alarm of `endpoint` is triaged `accepted`: what
    /// [`Archive::accepted_by_triage`] answers for each run, for a caller
    /// that asks it of every run of one endpoint (a binary search over
    /// thousands of labels per run was 2 % of a build's CPU).
    pub fn accepted_runs(&self, endpoint: &str) -> std::collections::HashSet<&str> {
        self.triage
            .iter()
            .filter(|l| l.label == Label::Accepted && l.endpoint == endpoint)
            .map(|l| l.run.as_str())
            .collect()
    }

    /// All endpoint ids that occur in any run, sorted.
    pub fn endpoint_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self
            .runs
            .iter()
            .flat_map(|r| r.endpoints.keys().cloned())
            .collect();
        ids.sort();
        ids.dedup();
        ids
    }
}

/// One load-test run: a folder `runs/<run-id>/`.
#[derive(Debug, Clone)]
pub struct Run {
    /// The folder name; ids sort by time.
    pub id: String,
    /// From `run.toml` `started_at`, else parsed from the id.
    pub started_at: DateTime<Utc>,
    /// Optional metadata from `run.toml`.
    pub meta: RunMeta,
    /// Endpoint id (folder name) → what that endpoint's folder held.
    pub endpoints: BTreeMap<String, EndpointRun>,
    /// Endpoint id → the steps of its step-load file (`steps.<ext>`), if
    /// any (docs/capacity.md).
    pub capacity: BTreeMap<String, StepSeries>,
    /// Problems found while reading this run (skipped files and the like;
    /// never information). A run with problems is shown as incomplete.
    pub problems: Vec<crate::error::Diagnostic>,
    /// Why `started_at` cannot be trusted (in the future, before 2000, far
    /// from the date in the id), when it cannot: such a run stays in the
    /// history but is never the latest run.
    pub untrusted_time: Option<String>,
}

/// `run.toml`: everything optional.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RunMeta {
    pub commit: Option<String>,
    pub branch: Option<String>,
    pub notes: Option<String>,
    /// A release name such as `1.4.0`, for release comparisons.
    pub release: Option<String>,
    /// `[load]`: the load profile (script hash, stages, arrival rate, VUs,
    /// …). Runs whose profiles differ are not compared with each other.
    pub load: BTreeMap<String, String>,
    /// `[environment]`: JVM flags, host, … A change is shown as a marker on
    /// the charts but does not stop the comparison.
    pub environment: BTreeMap<String, String>,
    /// Any other keys, shown as they are on the run page.
    pub extra: BTreeMap<String, String>,
    /// `[profile]`: how the run's profiles were recorded, for their busy
    /// time per request (docs/profiles.md).
    pub profile: ProfileCapture,
}

/// `[profile]` in run.toml: what a profile file does not say about how it
/// was recorded. With the endpoint's throughput they give each profile's
/// busy time per request served, which attribution compares
/// (`analyse::attribution`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct ProfileCapture {
    /// How long the profiler recorded, in seconds (`py-spy --duration`,
    /// `asprof -d`).
    pub duration_s: Option<f64>,
    /// Samples per second (`py-spy --rate`, 1 ÷ `asprof -i`), for profiles
    /// whose weights count samples.
    pub rate_hz: Option<f64>,
}

impl RunMeta {
    /// Whether the run belongs to the main history: it records no branch,
    /// or the main branch (`main`: [`Archive::main_branch`]).
    pub fn on_main(&self, main: Option<&str>) -> bool {
        match (&self.branch, main) {
            (Some(b), Some(main)) => b == main,
            _ => true,
        }
    }

    /// The value of a run.toml key as `[analysis] series_by` reads it:
    /// under `[environment]`, then `[load]`, then at the top level.
    pub fn setting(&self, key: &str) -> Option<&str> {
        self.environment
            .get(key)
            .or_else(|| self.load.get(key))
            .or_else(|| self.extra.get(key))
            .map(String::as_str)
    }

    /// Which series the run belongs to under `series_by` (empty: the one
    /// series every run belongs to).
    pub fn series(&self, series_by: &[String]) -> SeriesKey {
        SeriesKey(
            series_by
                .iter()
                .map(|k| (k.clone(), self.setting(k).map(str::to_string)))
                .collect(),
        )
    }
}

/// The values of the `[analysis] series_by` keys of one run: runs with
/// the same values share baselines; others are not compared with them.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct SeriesKey(pub Vec<(String, Option<String>)>);

impl SeriesKey {
    /// `host perf-01`, `host perf-01, runner (none)`; empty for the one
    /// series of an archive without `series_by`.
    pub fn describe(&self) -> String {
        self.0
            .iter()
            .map(|(k, v)| format!("{k} {}", v.as_deref().unwrap_or("(none)")))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A human verdict on one alarm: one entry of a `triage/*.toml` file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TriageLabel {
    /// The run id the alarm was raised on.
    pub run: String,
    /// The endpoint id.
    pub endpoint: String,
    pub label: Label,
    pub note: Option<String>,
    pub author: String,
    /// The day it was triaged (`YYYY-MM-DD`).
    pub date: chrono::NaiveDate,
    /// Where it was read, `triage/<file>.toml:<line>`, for messages.
    pub source: String,
    /// Who follows it up, its issue and how far it got (all optional).
    pub follow_up: FollowUp,
}

/// The follow-up of a triaged alarm: who owns it, the issue that tracks
/// it, and its status. Shown on the weekly page.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FollowUp {
    pub owner: Option<String>,
    /// An http(s) address.
    pub issue: Option<String>,
    pub status: Option<Status>,
}

/// How far the follow-up of an alarm got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Someone is looking into it.
    Investigating,
    /// A fix is merged (the runs after it should be back in the band).
    Fixed,
    /// It stays as it is.
    Wontfix,
}

impl Status {
    pub const ALL: [Status; 3] = [Status::Investigating, Status::Fixed, Status::Wontfix];

    pub fn as_str(self) -> &'static str {
        match self {
            Status::Investigating => "investigating",
            Status::Fixed => "fixed",
            Status::Wontfix => "wontfix",
        }
    }

    pub fn parse(s: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|x| x.as_str() == s)
    }
}

/// What a human decided an alarm was.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Label {
    /// A true regression.
    Real,
    /// A false positive.
    Noise,
    /// An intended change: the new level becomes the baseline.
    Accepted,
}

impl Label {
    pub const ALL: [Label; 3] = [Label::Real, Label::Noise, Label::Accepted];

    pub fn as_str(self) -> &'static str {
        match self {
            Label::Real => "real",
            Label::Noise => "noise",
            Label::Accepted => "accepted",
        }
    }

    pub fn parse(s: &str) -> Option<Label> {
        Label::ALL.into_iter().find(|l| l.as_str() == s)
    }

    /// Whether the alarm was right that performance changed (Mozilla's
    /// mapping: fixed, backed out and accepted alarms are all true).
    pub fn is_true_alarm(self) -> bool {
        matches!(self, Label::Real | Label::Accepted)
    }
}

impl std::fmt::Display for Label {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One endpoint's rounds in one run, shared between the archive and the
/// analysis (`RunPoint::rounds`): at 120 endpoints × 156 weeks a copy per
/// run point cost about 150 MB (issue 18).
pub type Rounds = std::sync::Arc<[Round]>;

/// One endpoint within one run.
#[derive(Debug, Clone, Default)]
pub struct EndpointRun {
    /// Rounds sorted by number (warm-up rounds are never archived as rounds).
    /// Shared ([`Rounds`]): the analysis points at them instead of copying.
    pub rounds: Rounds,
    /// Flame-graph profiles (`flame[.<kind>].<ext>`), one per kind, sorted by kind.
    pub profiles: Vec<ProfileFile>,
}

/// One profile file of an endpoint in a run.
#[derive(Debug, Clone)]
pub struct ProfileFile {
    /// `cpu`, `alloc`, `lock`, `wall`, … (from the file name; default `cpu`).
    pub kind: String,
    /// The file, relative to the archive root (with `/`).
    pub source: String,
    /// Shared: the analysis and the renderers read the same stacks.
    pub profile: std::sync::Arc<crate::profile::Profile>,
}

/// The statistics of one measured round of one endpoint. Serialised whole
/// (the cache keeps rounds in a format without field names, where a field
/// left out could not be told apart); the data files leave out the empty
/// optional fields (`render::data::RoundJson`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Round {
    /// `n` in `round-<n>`.
    pub number: u32,
    /// The optional label in `round-<n>.<label>.json`.
    pub label: Option<String>,
    /// The file it came from, relative to the archive root (with `/`).
    pub source: String,
    /// Which format the file was recognised as.
    pub format: SourceFormat,
    pub stats: RoundStats,
    /// Seconds of warm-up trimmed before computing `stats`; `None` when the
    /// input was a summary (nothing could be trimmed).
    pub warmup_s: Option<f64>,
    /// When the round also had a summary file (the raw file wins), how the
    /// two compare. Boxed: most rounds have none, and inline it made every
    /// one of the 281k rounds of 120 endpoints × 156 weeks 40 bytes larger.
    pub cross_check: Option<Box<CrossCheck>>,
}

impl Round {
    /// A round read from one file, with nothing trimmed and no
    /// cross-check (what a summary gives, and what tests and generated
    /// histories build).
    pub fn new(
        number: u32,
        source: impl Into<String>,
        format: SourceFormat,
        stats: RoundStats,
    ) -> Round {
        Round {
            number,
            label: None,
            source: source.into(),
            format,
            stats,
            warmup_s: None,
            cross_check: None,
        }
    }
}

/// A summary of the same round as a raw file, kept as a cross-check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrossCheck {
    /// The summary file, relative to the archive root.
    pub source: String,
    pub format: SourceFormat,
    /// The summary's p99 (whole test, warm-up included).
    pub summary_p99_ms: f64,
    /// The raw file's p99 over the whole test (no warm-up trimmed): what
    /// the summary should say if both come from the same test.
    pub raw_untrimmed_p99_ms: f64,
    /// `false` when the two whole-test p99s differ by more than
    /// `raw.summary_tolerance`: the difference is not explained by
    /// trimming, so the files probably come from different tests.
    pub agrees: bool,
}

/// Which tool wrote a round file, as told by its content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SourceFormat {
    /// k6 `handleSummary(data)` object (v0.30+).
    K6HandleSummary,
    /// k6 `--summary-export` legacy flat format.
    K6SummaryExport,
    /// k6 v1.5+ `--new-machine-readable-summary`.
    K6MachineReadable,
    /// k6 `--out json` (NDJSON, plain or gzip): recomputed.
    K6Ndjson,
    /// k6 `--out csv`: recomputed.
    K6Csv,
    /// JMeter JTL CSV: recomputed.
    JmeterCsv,
    /// JMeter JTL XML: recomputed.
    JmeterXml,
    /// Gatling text simulation.log (3.0–3.12): recomputed.
    GatlingLog,
    /// Gatling binary simulation.log (3.12.1 and later): recomputed.
    GatlingBinaryLog,
    /// Locust `_stats.csv`: summary figures only, no warm-up trimming.
    LocustStats,
    /// Locust `--json` (its stats entries with their response-time
    /// histograms): summary figures only, percentiles by Locust's method.
    LocustJson,
    /// Artillery 2.x `--output` JSON report: its aggregate summaries only.
    ArtilleryReport,
    /// JMeter 5.x dashboard `statistics.json`: summary figures only.
    JmeterStatistics,
    /// hey `-o csv`, one row per request: recomputed.
    HeyCsv,
    /// ab `-g` gnuplot TSV, one row per request: recomputed (whole
    /// milliseconds, start times in whole seconds, no failures recorded).
    AbGnuplot,
    /// ab `-e` percentile CSV: ab's own percentiles only.
    AbPercentiles,
}

impl SourceFormat {
    /// Every format `build` reads round files in, for what walks them all
    /// (`tests/record_layouts.rs` records a real file of each with
    /// `perfdash record` and reads it back). A format added to the enum
    /// does not compile until [`Self::index`] places it, and
    /// `every_format_is_listed_once` fails until it is listed here.
    pub const ALL: [SourceFormat; 16] = [
        SourceFormat::K6HandleSummary,
        SourceFormat::K6SummaryExport,
        SourceFormat::K6MachineReadable,
        SourceFormat::K6Ndjson,
        SourceFormat::K6Csv,
        SourceFormat::JmeterCsv,
        SourceFormat::JmeterXml,
        SourceFormat::GatlingLog,
        SourceFormat::GatlingBinaryLog,
        SourceFormat::LocustStats,
        SourceFormat::LocustJson,
        SourceFormat::ArtilleryReport,
        SourceFormat::JmeterStatistics,
        SourceFormat::HeyCsv,
        SourceFormat::AbGnuplot,
        SourceFormat::AbPercentiles,
    ];

    /// Where the format is in [`Self::ALL`] (an exhaustive match: see there).
    pub const fn index(self) -> usize {
        match self {
            SourceFormat::K6HandleSummary => 0,
            SourceFormat::K6SummaryExport => 1,
            SourceFormat::K6MachineReadable => 2,
            SourceFormat::K6Ndjson => 3,
            SourceFormat::K6Csv => 4,
            SourceFormat::JmeterCsv => 5,
            SourceFormat::JmeterXml => 6,
            SourceFormat::GatlingLog => 7,
            SourceFormat::GatlingBinaryLog => 8,
            SourceFormat::LocustStats => 9,
            SourceFormat::LocustJson => 10,
            SourceFormat::ArtilleryReport => 11,
            SourceFormat::JmeterStatistics => 12,
            SourceFormat::HeyCsv => 13,
            SourceFormat::AbGnuplot => 14,
            SourceFormat::AbPercentiles => 15,
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            SourceFormat::K6HandleSummary => "k6 handleSummary() data",
            SourceFormat::K6SummaryExport => "k6 --summary-export (legacy)",
            SourceFormat::K6MachineReadable => "k6 machine-readable summary",
            SourceFormat::K6Ndjson => "k6 --out json (NDJSON)",
            SourceFormat::K6Csv => "k6 --out csv",
            SourceFormat::JmeterCsv => "JMeter JTL (CSV)",
            SourceFormat::JmeterXml => "JMeter JTL (XML)",
            SourceFormat::GatlingLog => "Gatling simulation.log (text)",
            SourceFormat::GatlingBinaryLog => "Gatling simulation.log (binary)",
            SourceFormat::LocustStats => "Locust _stats.csv (summary only)",
            SourceFormat::LocustJson => "Locust --json (summary only)",
            SourceFormat::ArtilleryReport => "Artillery JSON report (summary only)",
            SourceFormat::JmeterStatistics => "JMeter dashboard statistics.json (summary only)",
            SourceFormat::HeyCsv => "hey -o csv",
            SourceFormat::AbGnuplot => "ab -g (gnuplot TSV)",
            SourceFormat::AbPercentiles => "ab -e (percentile CSV, summary only)",
        }
    }

    /// Whether the figures were recomputed from per-request samples (and
    /// so had the warm-up trimmed).
    pub fn is_raw(self) -> bool {
        !matches!(
            self,
            SourceFormat::K6HandleSummary
                | SourceFormat::K6SummaryExport
                | SourceFormat::K6MachineReadable
                | SourceFormat::LocustStats
                | SourceFormat::LocustJson
                | SourceFormat::ArtilleryReport
                | SourceFormat::JmeterStatistics
                | SourceFormat::AbPercentiles
        )
    }

    /// Whether the format says which requests failed (ab's `-g` file and
    /// `-e` percentiles do not: their rounds have no error rate rather
    /// than a made-up 0 %).
    pub fn records_failures(self) -> bool {
        !matches!(self, SourceFormat::AbGnuplot | SourceFormat::AbPercentiles)
    }

    /// Whether a file of this format says which endpoint it measured (a
    /// hey CSV or an ab file holds one URL without naming it: it must sit
    /// in its endpoint's folder).
    pub fn names_endpoints(self) -> bool {
        !matches!(
            self,
            SourceFormat::HeyCsv | SourceFormat::AbGnuplot | SourceFormat::AbPercentiles
        )
    }

    /// Whether the tool rounded every response time into Locust's buckets
    /// before computing its percentiles (`analyse::verdict::Resolution`).
    pub fn has_locust_buckets(self) -> bool {
        matches!(self, SourceFormat::LocustStats | SourceFormat::LocustJson)
    }
}

/// Per-round figures. Latencies are milliseconds. Only `p99_ms` is required;
/// the rest are kept when the input has them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RoundStats {
    pub count: Option<u64>,
    /// Requests per second over the measured window.
    pub throughput_rps: Option<f64>,
    pub mean_ms: Option<f64>,
    pub stddev_ms: Option<f64>,
    pub min_ms: Option<f64>,
    pub p50_ms: Option<f64>,
    pub p90_ms: Option<f64>,
    pub p95_ms: Option<f64>,
    pub p99_ms: f64,
    pub max_ms: Option<f64>,
    /// Failed requests / all requests, 0..=1.
    pub error_rate: Option<f64>,
}

/// What the load level of a step is counted in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LoadUnit {
    /// k6 virtual users (the `vus` gauge).
    Vus,
    /// JMeter active threads (`allThreads`).
    Threads,
    /// Steps named by a tag (one k6 scenario per step); the level is the
    /// mean of the `vus` gauge in the step when the file has it, else the
    /// measured throughput (arrival-rate steps).
    Tagged,
}

impl LoadUnit {
    /// The unit as shown after a load figure.
    pub fn label(self) -> &'static str {
        match self {
            LoadUnit::Vus => "VUs",
            LoadUnit::Threads => "threads",
            LoadUnit::Tagged => "load",
        }
    }
}

/// One step of a step-load round, measured after its settling time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// 1-based, in time order.
    pub number: u32,
    /// The step tag's value when steps are tagged.
    pub label: Option<String>,
    /// The load level (VUs, threads, …; see [`LoadUnit`]).
    pub load: f64,
    /// Seconds from the first sample of the file to the step's start.
    pub start_s: f64,
    /// The step's length, seconds (settling included).
    pub duration_s: f64,
    /// The measured window after settling, seconds.
    pub window_s: f64,
    /// Requests in the window (failed ones included).
    pub count: u64,
    /// `count ÷ window_s`.
    pub throughput_rps: f64,
    /// p99 of the successful requests in the window (the `[raw]
    /// percentile` method); `None` when none succeeded.
    pub p99_ms: Option<f64>,
    pub p50_ms: Option<f64>,
    pub mean_ms: Option<f64>,
    /// Failed ÷ all requests in the window.
    pub error_rate: f64,
    /// Requests in flight by Little's law: throughput × mean latency (s).
    pub concurrency: Option<f64>,
    /// Mean CPU % over the window, from `resources.csv`.
    pub cpu_pct: Option<f64>,
    /// Mean memory over the window, from `resources.csv` (its unit).
    pub memory: Option<f64>,
}

/// The steps of one endpoint's step-load file in one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepSeries {
    /// The step-load file, relative to the archive root.
    pub source: String,
    pub format: SourceFormat,
    pub unit: LoadUnit,
    /// Seconds dropped at the start of each step.
    pub settle_s: f64,
    /// The file's first sample, µs since the Unix epoch: steps' `start_s`
    /// count from it.
    pub origin_unix_us: i64,
    pub steps: Vec<Step>,
    /// The resource CSV joined to the steps, if any.
    pub resources: Option<String>,
}

#[cfg(test)]
mod format_list_tests {
    use super::SourceFormat;

    #[test]
    fn every_format_is_listed_once() {
        for (i, f) in SourceFormat::ALL.iter().enumerate() {
            assert_eq!(f.index(), i, "{f:?}");
        }
    }
}
