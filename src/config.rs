//! `perfdash.toml`: archive-wide settings, every key optional.
//!
//! Defaults are documented in `docs/archive.md`; keep the two in step.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::Error;

#[cfg(test)]
mod documented;
mod limits;
mod policy;
mod run_spec;

pub use limits::Limits;
pub use policy::{DEFAULT_POLICY, Policy, SENSITIVE_POLICY};
pub use run_spec::RunSpec;

/// The file name of the settings file at the archive root.
pub const SETTINGS_FILE: &str = "perfdash.toml";

/// Validated settings for one archive.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    pub analysis: AnalysisSettings,
    /// How alarms are confirmed and how the `robust` policy decides.
    pub alarms: AlarmSettings,
    /// Change-point detection (`[changepoint]`, docs/detection.md).
    pub changepoint: ChangePointSettings,
    /// Per-endpoint settings keyed by endpoint id (the folder name).
    pub endpoints: BTreeMap<String, EndpointSettings>,
    /// Caps on what one input file may cost (gzip bombs, endless lines).
    pub limits: Limits,
    /// How rounds are recomputed from raw outputs (`[raw]`).
    pub raw: RawSettings,
    /// How flame-graph profiles are classified and attributed (`[profiles]`).
    pub profiles: ProfileSettings,
    /// Which run comparisons the site shows.
    pub compare: CompareSettings,
    /// Capacity from step-load runs (`[capacity]`, docs/capacity.md).
    pub capacity: CapacitySettings,
    /// How the site links out (`[site]`, docs/site.md).
    pub site: SiteSettings,
}

/// `[site]`: links from the site to the code host. Both optional; without
/// them commits are shown as short hashes without a link.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct SiteSettings {
    /// A commit's page, with `{commit}` for the full hash, e.g.
    /// `https://git.example.com/shop/commit/{commit}`.
    pub commit_url: Option<String>,
    /// The changes between two commits, with `{from}` and `{to}`, e.g.
    /// `https://git.example.com/shop/compare/{from}...{to}`.
    pub compare_url: Option<String>,
    /// Where the built site is published, e.g. `https://perf.example.com/shop/`:
    /// the pull-request comment (`check --format markdown`) links its pages.
    pub url: Option<String>,
}

impl SiteSettings {
    fn validate(&self) -> Result<(), String> {
        for (key, url, holes) in [
            ("site.commit_url", &self.commit_url, &["{commit}"][..]),
            (
                "site.compare_url",
                &self.compare_url,
                &["{from}", "{to}"][..],
            ),
        ] {
            let Some(url) = url else { continue };
            if let Err(why) = crate::escape::check_url(url) {
                return Err(format!(
                    "{key} is not a URL perfdash can link to: {why} (got '{}')",
                    crate::escape::terminal(&crate::escape::clip(url, 200))
                ));
            }
            for hole in holes {
                if !url.contains(hole) {
                    return Err(format!("{key} must contain {hole} (got '{url}')"));
                }
            }
        }
        // The pull-request comment links every page under it: a newline
        // or a `)` in it must not end the link (`escape::url` encodes the
        // rest).
        // Pages are linked as `<url>/<page>`: a query or a fragment would
        // end up before the page's path and every link would miss.
        if let Some(url) = &self.url
            && let Err(why) =
                crate::escape::check_url(url).and_then(|()| match url.find(['?', '#']) {
                    Some(at) => Err(format!(
                        "it holds a {} ('{}'), and the pages are linked under it; \
                         give the folder the site is published at",
                        if url[at..].starts_with('?') {
                            "query"
                        } else {
                            "fragment"
                        },
                        crate::escape::terminal(&crate::escape::clip(&url[at..], 60)),
                    )),
                    None => Ok(()),
                })
        {
            return Err(format!(
                "site.url is not a URL perfdash can link to: {why} (got '{}')",
                crate::escape::terminal(&crate::escape::clip(url, 200))
            ));
        }
        Ok(())
    }

    /// The page of one commit, when `commit_url` is set.
    pub fn commit_href(&self, commit: &str) -> Option<String> {
        let url = self.commit_url.as_ref()?;
        Some(url.replace("{commit}", &url_component(commit)))
    }

    /// The changes from one commit to another, when `compare_url` is set.
    pub fn compare_href(&self, from: &str, to: &str) -> Option<String> {
        let url = self.compare_url.as_ref()?;
        Some(
            url.replace("{from}", &url_component(from))
                .replace("{to}", &url_component(to)),
        )
    }
}

/// Percent-encodes everything but unreserved URL characters: a commit
/// from run.toml is data, and must not change the URL's shape.
fn url_component(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `[capacity]`: how step-load files are cut into steps and judged
/// (docs/capacity.md). Per-endpoint objectives and headroom live in
/// `[endpoints.<id>]`.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct CapacitySettings {
    /// Seconds dropped at the start of every step before it is measured
    /// (queues fill, pools grow).
    pub settle_seconds: f64,
    /// A load level must hold at least this long to count as a step
    /// (shorter levels are ramps).
    pub min_step_seconds: f64,
    /// The p99 objective a step must meet, ms (per endpoint:
    /// `capacity_objective_p99_ms`).
    pub objective_p99_ms: f64,
    /// A step must have an error rate below this fraction.
    pub max_error_rate: f64,
    /// Recommended limit = knee × (1 − headroom) (per endpoint:
    /// `capacity_headroom`).
    pub headroom: f64,
    /// A capacity regression: the knee below baseline knee × (1 − this).
    pub regression_drop: f64,
    /// How many earlier accepted knees form the baseline (their median).
    pub baseline_window: usize,
    /// A k6 tag whose values name the steps (e.g. `scenario` when each step
    /// is its own scenario). Unset: steps are the plateaus of the `vus`
    /// gauge (k6) or of `allThreads` (JMeter).
    pub step_tag: Option<String>,
}

impl Default for CapacitySettings {
    fn default() -> Self {
        CapacitySettings {
            settle_seconds: 5.0,
            min_step_seconds: 5.0,
            objective_p99_ms: 500.0,
            max_error_rate: 0.01,
            headroom: 0.20,
            regression_drop: 0.15,
            baseline_window: 5,
            step_tag: None,
        }
    }
}

/// `[profiles]`: classification of flame-graph stacks (see `docs/profiles.md`).
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct ProfileSettings {
    /// A stack is application (business) code when a frame starts with one of
    /// these, e.g. `com/acme/` (`.` and `/` are interchangeable). For py-spy
    /// frames `func (path/module.py:line)` the frame also answers to
    /// `module.func`. Empty: every stack not claimed by another category
    /// counts as application.
    pub application_prefixes: Vec<String>,
    /// Regular expressions (matched anywhere in a frame) that also mark
    /// application code.
    pub application_patterns: Vec<String>,
    /// Whether the built-in JVM/native/Python rules apply; `false` keeps only `rules`.
    pub default_rules: bool,
    /// Extra rules, added to the built-in ones.
    pub rules: ProfileRules,
    /// A category must move by at least this many percentage points against
    /// the baseline profile to explain a regression.
    pub min_shift_pts: f64,
    /// Frames narrower than this percentage of the total are left out of
    /// rendered flame graphs (keeps pages light).
    pub min_width_pct: f64,
    /// Leave idle stacks (threads waiting for work) out of the shares that
    /// attribution and the frame diff compare.
    pub exclude_idle: bool,
    /// Compare frames by their names as written, with line numbers and
    /// directories; by default both are dropped so that frames survive a
    /// redeploy.
    pub keep_lines: bool,
}

impl Default for ProfileSettings {
    fn default() -> Self {
        ProfileSettings {
            application_prefixes: Vec::new(),
            application_patterns: Vec::new(),
            default_rules: true,
            rules: ProfileRules::default(),
            min_shift_pts: 5.0,
            min_width_pct: 0.1,
            exclude_idle: true,
            keep_lines: false,
        }
    }
}

/// Extra classification rules: regular expressions per category, matched
/// against whole frame names (annotation suffixes like `_[j]` removed).
/// `jit`, `gc` and `vm` are thread anchors (anywhere in the stack); the
/// others are matched nearest the leaf.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct ProfileRules {
    pub jit: Vec<String>,
    pub gc: Vec<String>,
    pub vm: Vec<String>,
    pub safepoint: Vec<String>,
    pub lock: Vec<String>,
    /// Frames that wait for work by themselves (nearest the leaf).
    pub idle: Vec<String>,
    /// Frames that turn a lock or I/O wait anywhere under them into an idle
    /// wait (a pool thread waiting for work).
    pub idle_wait: Vec<String>,
    /// Frames that turn a lock or I/O wait they call directly into an idle
    /// wait (a server loop waiting for the next request).
    pub idle_caller: Vec<String>,
    pub io: Vec<String>,
    /// GC work done inside application threads (slow-path allocation, barriers);
    /// reported as a separate share.
    pub gc_in_mutator: Vec<String>,
}

/// `[raw]`: recomputing rounds from per-request outputs (k6 NDJSON/CSV,
/// JMeter JTL, Gatling log). Documented in `docs/raw-results.md`.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct RawSettings {
    /// Seconds dropped from the start of every round (from its first
    /// sample). Overridden per endpoint (`[endpoints.<id>] warmup_seconds`),
    /// per run (`warmup_seconds` in run.toml) and by `--warmup`.
    pub warmup_seconds: f64,
    /// `linear` (k6's own p(N), R-7) or `jmeter-dashboard` (JMeter's HTML
    /// report estimator).
    pub percentile: crate::stats::PercentileMethod,
    /// Count failed requests in the latency figures too (they always count
    /// in the error rate and the throughput).
    pub failures_in_latency: bool,
    /// The k6 tag that tells endpoints apart in a run-level raw file
    /// (JMeter files are split by label, Gatling/Locust by request name).
    pub split_tag: String,
    /// Tag value (or JMeter label) → endpoint id, for run-level raw files.
    /// Values not listed become a slug of the value (`GET /api/orders` →
    /// `get-api-orders`).
    pub tags: BTreeMap<String, String>,
    /// When a round has a summary and a raw file, the relative difference
    /// between the summary's p99 and the raw file's whole-test p99 above
    /// which they are reported as disagreeing.
    pub summary_tolerance: f64,
}

impl Default for RawSettings {
    fn default() -> Self {
        RawSettings {
            warmup_seconds: 15.0,
            percentile: Default::default(),
            failures_in_latency: false,
            split_tag: "name".into(),
            tags: BTreeMap::new(),
            summary_tolerance: 0.01,
        }
    }
}

/// `[compare]`: the comparison pages of the site (`perfdash compare` on
/// the command line takes any two runs and ignores this).
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct CompareSettings {
    /// Each release against the previous release (releases are runs whose
    /// run.toml has `release = "…"`, ordered by time).
    pub releases: bool,
    /// The latest run against the last release before it.
    pub latest_vs_release: bool,
    /// More pairs `[A, B]`, each a run id or unique prefix, `latest`,
    /// `latest~N` or `release:<name>`; B is compared against A.
    pub pairs: Vec<[String; 2]>,
}

impl Default for CompareSettings {
    fn default() -> Self {
        CompareSettings {
            releases: true,
            latest_vs_release: true,
            pairs: Vec::new(),
        }
    }
}

/// How runs are judged.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct AnalysisSettings {
    /// Rounds a complete run has. A run with fewer is `insufficient`.
    pub expected_rounds: u32,
    /// A run regresses when its median p99 exceeds baseline × this ratio,
    /// and improves when it is below baseline ÷ this ratio.
    pub threshold_ratio: f64,
    /// The baseline is the median of the last this-many accepted runs' medians.
    pub baseline_window: usize,
    /// The noise line: a run's median p99 regresses only above baseline ×
    /// max(`threshold_ratio`, exp(`noise_k` × the endpoint's own run-to-run
    /// spread)), so an endpoint whose runs differ by 15% from one to the
    /// next is not judged by a 15% line (docs/detection.md). 0 turns it
    /// off: the line is `threshold_ratio` everywhere.
    pub noise_k: f64,
    /// The spread is measured over the last this-many runs that measured a
    /// level, accepted into the baseline or not (the robust scale of the
    /// ratios of successive run medians) …
    pub noise_window: usize,
    /// … once at least this many of them are there; before, the line is
    /// `threshold_ratio`.
    pub noise_min_runs: usize,
    /// Fewer accepted runs than this before a run: its verdict is `no-baseline`.
    pub min_baseline_runs: usize,
    /// The k6 trend metric read from summaries.
    pub metric: String,
    /// An error-rate regression: the run's error rate (median of its
    /// rounds') above its baseline plus this (0.01 = one percentage point) …
    pub error_rate_delta: f64,
    /// … and above this floor (0.01 = 1 %), so that 0.1 % → 0.3 % on an
    /// endpoint that never fails is not called a regression.
    pub max_error_rate: f64,
    /// A throughput regression: the run's throughput (median of its rounds')
    /// below baseline × (1 − this), judged only when the load profile
    /// (`[load]` in run.toml) is recorded and the same.
    pub throughput_drop: f64,
    /// A round whose error rate is at least this is a failed round (never
    /// part of a median, a baseline or an improvement).
    pub failed_round_error_rate: f64,
    /// The branch whose runs form the history, the baselines and the
    /// alarms (`branch` in run.toml). Runs of other branches are judged
    /// against it and never join it. Unset: the most common `branch` among
    /// the runs that record one; runs that record none count as main.
    pub main_branch: Option<String>,
    /// run.toml keys (top level or under `[environment]`/`[load]`, e.g.
    /// `host`, `runner`) whose every distinct value gets its own baseline
    /// and series: a run is never judged against runs of another value.
    /// Empty (the default): one series, with a warning on the run page
    /// when the host changed against the baseline's runs.
    pub series_by: Vec<String>,
}

impl Default for AnalysisSettings {
    fn default() -> Self {
        AnalysisSettings {
            expected_rounds: 5,
            threshold_ratio: 1.15,
            baseline_window: 10,
            noise_k: 2.5,
            noise_window: 20,
            noise_min_runs: 3,
            min_baseline_runs: 3,
            metric: "http_req_duration".to_string(),
            error_rate_delta: 0.01,
            max_error_rate: 0.01,
            throughput_drop: 0.15,
            failed_round_error_rate: 0.5,
            main_branch: None,
            series_by: Vec::new(),
        }
    }
}

/// Alarm states and the `robust` policy (docs/alarms.md).
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct AlarmSettings {
    /// The policy `perfdash check` gates on and the weekly page and
    /// `perfdash triage` follow, unless `--policy` says otherwise.
    pub policy: Policy,
    /// Kept so older perfdash.toml files still load: since a candidate
    /// alarm ends at the first run back within the band, confirmation
    /// needs the next `confirm_needed` runs and this changes nothing.
    pub confirm_window: usize,
    /// A candidate alarm is `confirmed` when this many judged runs after
    /// it are over the line too (it is `reverted` at the first one back
    /// within the band).
    pub confirm_needed: usize,
    /// `robust` policy: robust z-score (MADs above the baseline window's
    /// median) a run must exceed. 3.5 is Iglewicz & Hoaglin's cut-off for
    /// outliers by the modified z-score.
    pub robust_k: f64,
    /// `robust` policy: minimum effect, as a fraction of the baseline (0.05
    /// = 5%), so that very quiet endpoints do not alarm on trivial shifts.
    pub min_effect: f64,
    /// Whether `perfdash check` fails on latency and throughput regressions
    /// of a run marked `environment suspect` (most of its endpoints moved
    /// together). `false`: they are reported as `environment-suspect` and
    /// pass; failed rounds and error-rate regressions still fail.
    pub fail_on_environment_suspect: bool,
    /// Whether `perfdash check` takes a run whose load profile changed
    /// (and whose p99 has nothing comparable to be judged against) as the
    /// first run of a new baseline and passes it. `false` (the default):
    /// it cannot vouch for such a run (exit 2, naming the change) until a
    /// triage label `accepted` on the run says the new profile is meant.
    pub accept_new_load_profile: bool,
}

impl Default for AlarmSettings {
    fn default() -> Self {
        AlarmSettings {
            policy: DEFAULT_POLICY,
            confirm_window: 3,
            confirm_needed: 2,
            robust_k: 3.5,
            min_effect: 0.05,
            fail_on_environment_suspect: true,
            accept_new_load_profile: false,
        }
    }
}

/// `[changepoint]`: Otava-style change-point detection on each endpoint's
/// run medians, for the charts, the history page and the `changepoint`
/// policy (docs/detection.md).
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct ChangePointSettings {
    /// Runs per sliding window (Otava's default 50).
    pub window_len: usize,
    /// A change point must have a t-test p-value below this.
    pub max_pvalue: f64,
    /// … and a relative change above this (0.05 = 5%; Otava's default is 0,
    /// which finds 1–2% shifts on long quiet histories).
    pub min_magnitude: f64,
    /// `changepoint` policy: runs at the new level (the latest included)
    /// before a change point is judged; 2 keeps one-run spikes from alarming.
    pub min_runs_at_level: usize,
}

impl Default for ChangePointSettings {
    fn default() -> Self {
        ChangePointSettings {
            window_len: 50,
            max_pvalue: 0.001,
            min_magnitude: 0.05,
            min_runs_at_level: 2,
        }
    }
}

/// Settings for one endpoint.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct EndpointSettings {
    /// A display name, e.g. `GET /api/orders`. Defaults to the id.
    pub name: Option<String>,
    /// Overrides `analysis.threshold_ratio` for this endpoint.
    pub threshold_ratio: Option<f64>,
    /// Overrides `raw.warmup_seconds` for this endpoint.
    pub warmup_seconds: Option<f64>,
    /// Overrides `capacity.objective_p99_ms` for this endpoint.
    pub capacity_objective_p99_ms: Option<f64>,
    /// Overrides `capacity.headroom` for this endpoint.
    pub capacity_headroom: Option<f64>,
    /// The service the endpoint belongs to, e.g. `orders`. When any
    /// endpoint has one, the overview lists services (each with its own
    /// page) instead of endpoints; endpoints without one are listed under
    /// [`UNGROUPED_SERVICE`].
    pub service: Option<String>,
}

/// `[analysis]`: counts, ratios and fractions in range, then the branch
/// and series keys.
fn validate_analysis(a: &AnalysisSettings) -> Result<(), String> {
    if a.expected_rounds == 0 {
        return Err("analysis.expected_rounds must be at least 1".into());
    }
    check_ratio("analysis.threshold_ratio", a.threshold_ratio)?;
    if a.baseline_window == 0 {
        return Err("analysis.baseline_window must be at least 1".into());
    }
    if !(a.noise_k.is_finite() && a.noise_k >= 0.0) {
        return Err(format!(
            "analysis.noise_k must be a number ≥ 0 (0 turns the noise line off), e.g. 2.5 (got {})",
            a.noise_k
        ));
    }
    if a.noise_min_runs < 3 || a.noise_min_runs > a.noise_window {
        return Err(format!(
            "analysis.noise_min_runs must be between 3 and noise_window ({})",
            a.noise_window
        ));
    }
    if a.min_baseline_runs == 0 || a.min_baseline_runs > a.baseline_window {
        return Err(format!(
            "analysis.min_baseline_runs must be between 1 and baseline_window ({})",
            a.baseline_window
        ));
    }
    let fraction = |key: &str, v: f64, low_open: bool| {
        let ok = v.is_finite() && v < 1.0 && if low_open { v > 0.0 } else { v >= 0.0 };
        ok.then_some(()).ok_or(format!(
            "analysis.{key} must be a fraction in {}0, 1), e.g. 0.01 (got {v})",
            if low_open { "(" } else { "[" }
        ))
    };
    fraction("error_rate_delta", a.error_rate_delta, false)?;
    fraction("max_error_rate", a.max_error_rate, false)?;
    fraction("throughput_drop", a.throughput_drop, true)?;
    if !(a.failed_round_error_rate.is_finite()
        && a.failed_round_error_rate > 0.0
        && a.failed_round_error_rate <= 1.0)
    {
        return Err(format!(
            "analysis.failed_round_error_rate must be a fraction in (0, 1], e.g. 0.5 (got {})",
            a.failed_round_error_rate
        ));
    }
    validate_branches(a)
}

/// `main_branch` names a branch; `series_by` names distinct run.toml keys
/// that describe where a run ran (not what it measured or when).
fn validate_branches(a: &AnalysisSettings) -> Result<(), String> {
    if a.main_branch
        .as_deref()
        .is_some_and(|b| b.trim().is_empty())
    {
        return Err("analysis.main_branch must name a branch, e.g. \"main\"".into());
    }
    for (i, key) in a.series_by.iter().enumerate() {
        if key.trim().is_empty() {
            return Err("analysis.series_by keys must not be empty, e.g. [\"host\"]".into());
        }
        if a.series_by[..i].contains(key) {
            return Err(format!("analysis.series_by lists '{key}' twice"));
        }
        if matches!(
            key.as_str(),
            "commit" | "branch" | "started_at" | "notes" | "release"
        ) {
            return Err(format!(
                "analysis.series_by cannot use '{key}': it changes from run to run (or, for \
                 branch, is what main_branch is for); use keys that name where runs ran, \
                 e.g. [\"host\"] or [\"runner\"]"
            ));
        }
    }
    Ok(())
}

impl EndpointSettings {
    /// The checks of `[endpoints.<id>]` that need no other section.
    fn validate(&self, id: &str) -> Result<(), String> {
        if let Some(r) = self.threshold_ratio {
            check_ratio(&format!("endpoints.{id}.threshold_ratio"), r)?;
        }
        if self.service.as_deref().is_some_and(|s| s.trim().is_empty()) {
            return Err(format!("endpoints.{id}.service must not be empty"));
        }
        if let Some(w) = self.warmup_seconds {
            check_warmup(&format!("endpoints.{id}.warmup_seconds"), w)?;
        }
        Ok(())
    }
}

/// The service of endpoints that have none, when others do.
pub const UNGROUPED_SERVICE: &str = "ungrouped";

/// The 1-based line of the setting a validation message starts with
/// (`analysis.expected_rounds must …`, `endpoints.order-list.service …`):
/// the line that sets its last key under its table, else the table's
/// header. Keys are compared without quotes and spaces, so
/// `[endpoints."order-list"]` and dotted keys (`capacity.headroom = 0.2`
/// at the top) are found too.
fn line_of_setting(text: &str, message: &str) -> Option<u64> {
    let setting = message.split_whitespace().next()?.trim_end_matches(':');
    if !setting.contains('.') {
        return None;
    }
    let plain = |s: &str| {
        s.chars()
            .filter(|c| !matches!(c, '"' | '\'' | ' ' | '\t'))
            .collect::<String>()
    };
    let mut table = String::new();
    let mut header_line = None;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            table = plain(name.trim_matches(['[', ']']));
            if setting.starts_with(&format!("{table}.")) || setting == table {
                header_line.get_or_insert(i as u64 + 1);
            }
            continue;
        }
        if let Some((key, _)) = line.split_once('=') {
            let full = match table.as_str() {
                "" => plain(key),
                t => format!("{t}.{}", plain(key)),
            };
            if full == setting {
                return Some(i as u64 + 1);
            }
        }
    }
    header_line
}

impl Settings {
    /// Parses and validates settings text; `path` is used in messages.
    /// The `[profiles]` regular expressions are compiled, and so checked,
    /// where settings are loaded (`ingest::settings`): compiling them is
    /// the profile classifier's business, not the settings'.
    pub fn parse(text: &str, path: &Path) -> Result<Settings, Error> {
        let settings: Settings =
            toml::from_str(text).map_err(|e| Error::at(path, toml_line(text, &e), e.message()))?;
        settings
            .validate()
            .map_err(|msg| Error::at(path, line_of_setting(text, &msg), msg))?;
        Ok(settings)
    }

    fn validate(&self) -> Result<(), String> {
        validate_analysis(&self.analysis)?;
        self.limits.validate()?;
        let al = &self.alarms;
        if al.confirm_needed == 0 || al.confirm_needed > al.confirm_window {
            return Err(format!(
                "alarms.confirm_needed must be between 1 and alarms.confirm_window ({})",
                al.confirm_window
            ));
        }
        if !(al.robust_k.is_finite() && al.robust_k > 0.0) {
            return Err(format!(
                "alarms.robust_k must be a positive number (got {})",
                al.robust_k
            ));
        }
        if !(al.min_effect.is_finite() && al.min_effect >= 0.0) {
            return Err(format!(
                "alarms.min_effect must be a fraction ≥ 0, e.g. 0.05 (got {})",
                al.min_effect
            ));
        }
        let cp = &self.changepoint;
        if cp.window_len < 2 {
            return Err(format!(
                "changepoint.window_len must be at least 2 (got {})",
                cp.window_len
            ));
        }
        if !(cp.max_pvalue > 0.0 && cp.max_pvalue <= 1.0) {
            return Err(format!(
                "changepoint.max_pvalue must be in (0, 1] (got {})",
                cp.max_pvalue
            ));
        }
        if !(cp.min_magnitude.is_finite() && cp.min_magnitude >= 0.0) {
            return Err(format!(
                "changepoint.min_magnitude must be a fraction ≥ 0, e.g. 0.05 (got {})",
                cp.min_magnitude
            ));
        }
        if cp.min_runs_at_level == 0 {
            return Err("changepoint.min_runs_at_level must be at least 1".into());
        }
        let p = &self.profiles;
        if !(p.min_shift_pts.is_finite() && p.min_shift_pts > 0.0 && p.min_shift_pts < 100.0) {
            return Err(format!(
                "profiles.min_shift_pts must be between 0 and 100 (got {})",
                p.min_shift_pts
            ));
        }
        if !(p.min_width_pct.is_finite() && (0.0..=5.0).contains(&p.min_width_pct)) {
            return Err(format!(
                "profiles.min_width_pct must be between 0 and 5 (got {})",
                p.min_width_pct
            ));
        }
        for pair in &self.compare.pairs {
            for spec in pair {
                RunSpec::parse(spec).map_err(|e| format!("compare.pairs: {e}"))?;
            }
        }
        for (id, e) in &self.endpoints {
            e.validate(id)?;
        }
        check_warmup("raw.warmup_seconds", self.raw.warmup_seconds)?;
        self.validate_capacity()?;
        self.site.validate()?;
        if !(self.raw.summary_tolerance.is_finite() && self.raw.summary_tolerance >= 0.0) {
            return Err("raw.summary_tolerance must be a non-negative number".into());
        }
        if self.raw.split_tag.is_empty() {
            return Err("raw.split_tag must not be empty".into());
        }
        for (value, id) in &self.raw.tags {
            if id.is_empty() || id.contains(['/', '\\']) || id.starts_with('.') {
                return Err(format!(
                    "raw.tags.\"{value}\" = \"{id}\": an endpoint id must be a plain folder-like name"
                ));
            }
        }
        Ok(())
    }

    /// Checks `[capacity]` and the per-endpoint capacity keys.
    pub fn validate_capacity(&self) -> Result<(), String> {
        let c = &self.capacity;
        let seconds = |key: &str, v: f64| {
            (v.is_finite() && v >= 0.0).then_some(()).ok_or(format!(
                "capacity.{key} must be a number of seconds ≥ 0 (got {v})"
            ))
        };
        seconds("settle_seconds", c.settle_seconds)?;
        seconds("min_step_seconds", c.min_step_seconds)?;
        let objective = |key: &str, v: f64| {
            (v.is_finite() && v > 0.0)
                .then_some(())
                .ok_or(format!("{key} must be a positive number of ms (got {v})"))
        };
        let fraction = |key: &str, v: f64| {
            (v.is_finite() && (0.0..1.0).contains(&v))
                .then_some(())
                .ok_or(format!(
                    "{key} must be a fraction in [0, 1), e.g. 0.2 (got {v})"
                ))
        };
        objective("capacity.objective_p99_ms", c.objective_p99_ms)?;
        fraction("capacity.max_error_rate", c.max_error_rate)?;
        fraction("capacity.headroom", c.headroom)?;
        fraction("capacity.regression_drop", c.regression_drop)?;
        if c.baseline_window == 0 {
            return Err("capacity.baseline_window must be at least 1".into());
        }
        if c.step_tag.as_deref() == Some("") {
            return Err("capacity.step_tag must not be empty".into());
        }
        for (id, e) in &self.endpoints {
            if let Some(v) = e.capacity_objective_p99_ms {
                objective(&format!("endpoints.{id}.capacity_objective_p99_ms"), v)?;
            }
            if let Some(v) = e.capacity_headroom {
                fraction(&format!("endpoints.{id}.capacity_headroom"), v)?;
            }
        }
        Ok(())
    }

    /// The p99 objective (ms) a step of this endpoint must meet.
    pub fn capacity_objective_ms(&self, endpoint: &str) -> f64 {
        self.endpoints
            .get(endpoint)
            .and_then(|e| e.capacity_objective_p99_ms)
            .unwrap_or(self.capacity.objective_p99_ms)
    }

    /// The headroom below the knee for this endpoint's recommended limit.
    pub fn capacity_headroom(&self, endpoint: &str) -> f64 {
        self.endpoints
            .get(endpoint)
            .and_then(|e| e.capacity_headroom)
            .unwrap_or(self.capacity.headroom)
    }

    /// The threshold ratio that applies to one endpoint.
    pub fn threshold_ratio(&self, endpoint: &str) -> f64 {
        self.endpoints
            .get(endpoint)
            .and_then(|e| e.threshold_ratio)
            .unwrap_or(self.analysis.threshold_ratio)
    }

    /// The service of one endpoint, when any endpoint has one:
    /// `[endpoints.<id>] service`, else [`UNGROUPED_SERVICE`]. `None`
    /// when no endpoint has a service (the overview lists endpoints).
    pub fn endpoint_service(&self, endpoint: &str) -> Option<&str> {
        if !self.has_services() {
            return None;
        }
        Some(
            self.endpoints
                .get(endpoint)
                .and_then(|e| e.service.as_deref())
                .unwrap_or(UNGROUPED_SERVICE),
        )
    }

    /// Whether any endpoint names its service.
    pub fn has_services(&self) -> bool {
        self.endpoints.values().any(|e| e.service.is_some())
    }

    /// The display name of one endpoint.
    pub fn endpoint_name(&self, endpoint: &str) -> String {
        self.endpoints
            .get(endpoint)
            .and_then(|e| e.name.clone())
            .unwrap_or_else(|| endpoint.to_string())
    }
}

/// A warm-up must be a finite number of seconds ≥ 0.
pub fn check_warmup(key: &str, w: f64) -> Result<(), String> {
    if !(w.is_finite() && w >= 0.0) {
        return Err(format!("{key} must be a number of seconds ≥ 0 (got {w})"));
    }
    Ok(())
}

fn check_ratio(key: &str, r: f64) -> Result<(), String> {
    if !(r.is_finite() && r > 1.0) {
        return Err(format!("{key} must be a number greater than 1 (got {r})"));
    }
    Ok(())
}

/// The 1-based line a TOML error points at, if it has a span.
pub(crate) fn toml_line(text: &str, err: &toml::de::Error) -> Option<u64> {
    err.span()
        .map(|span| crate::error::line_at(text, span.start))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_apply_without_a_file() {
        let s = Settings::parse("", Path::new("perfdash.toml")).unwrap();
        assert_eq!(s.analysis.expected_rounds, 5);
        assert_eq!(s.analysis.threshold_ratio, 1.15);
        assert_eq!(s.analysis.baseline_window, 10);
    }

    #[test]
    fn unknown_key_names_file_and_line() {
        let err = Settings::parse(
            "[analysis]\nexpected_round = 4\n",
            Path::new("a/perfdash.toml"),
        )
        .unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("a/perfdash.toml:2:"), "{msg}");
        assert!(msg.contains("expected_round"), "{msg}");
    }

    #[test]
    fn alarm_settings() {
        let s = Settings::parse("[alarms]\nrobust_k = 3.0\n", Path::new("p.toml")).unwrap();
        assert_eq!(s.alarms.robust_k, 3.0);
        assert_eq!(s.alarms.confirm_window, 3);
        let err =
            Settings::parse("[alarms]\nconfirm_needed = 4\n", Path::new("p.toml")).unwrap_err();
        assert!(err.to_string().contains("confirm_needed"), "{err}");
    }

    #[test]
    fn ratio_must_exceed_one() {
        let err = Settings::parse("[analysis]\nthreshold_ratio = 0.9\n", Path::new("p.toml"))
            .unwrap_err();
        assert!(err.to_string().contains("greater than 1"));
    }

    #[test]
    fn compare_section() {
        let s = Settings::parse("", Path::new("p.toml")).unwrap();
        assert!(s.compare.releases && s.compare.latest_vs_release && s.compare.pairs.is_empty());
        let s = Settings::parse(
            "[compare]\nreleases = false\npairs = [[\"release:1.3.0\", \"latest\"]]\n",
            Path::new("p.toml"),
        )
        .unwrap();
        assert!(!s.compare.releases);
        assert_eq!(
            s.compare.pairs,
            vec![["release:1.3.0".to_string(), "latest".to_string()]]
        );
        let err = Settings::parse(
            "[compare]\npairs = [[\"latest~x\", \"latest\"]]\n",
            Path::new("p.toml"),
        )
        .unwrap_err();
        assert!(err.to_string().contains("latest~N"), "{err}");
        let err =
            Settings::parse("[compare]\npairs = [[\"a\"]]\n", Path::new("p.toml")).unwrap_err();
        assert!(err.to_string().starts_with("p.toml:2:"), "{err}");
    }

    #[test]
    fn endpoint_overrides() {
        let s = Settings::parse(
            "[endpoints.order-list]\nname = \"GET /orders\"\nthreshold_ratio = 1.3\n",
            Path::new("p.toml"),
        )
        .unwrap();
        assert_eq!(s.endpoint_name("order-list"), "GET /orders");
        assert_eq!(s.threshold_ratio("order-list"), 1.3);
        assert_eq!(s.threshold_ratio("other"), 1.15);
        assert_eq!(s.endpoint_name("other"), "other");
    }

    #[test]
    fn site_links_fill_in_their_placeholders_and_encode_the_values() {
        let s = Settings::parse(
            "[site]\ncommit_url = \"https://git.example.com/shop/commit/{commit}\"\n\
             compare_url = \"https://git.example.com/shop/compare/{from}...{to}\"\n",
            Path::new("p.toml"),
        )
        .unwrap();
        assert_eq!(
            s.site.commit_href("abc123").as_deref(),
            Some("https://git.example.com/shop/commit/abc123")
        );
        assert_eq!(
            s.site.compare_href("a1", "b2").as_deref(),
            Some("https://git.example.com/shop/compare/a1...b2")
        );
        // A commit is data: it cannot add a path, a query or markup.
        assert_eq!(
            s.site.commit_href("x/../y?z=<b>\"").as_deref(),
            Some("https://git.example.com/shop/commit/x%2F..%2Fy%3Fz%3D%3Cb%3E%22")
        );
        // Unset: no links.
        let none = Settings::parse("", Path::new("p.toml")).unwrap();
        assert_eq!(none.site.commit_href("abc"), None);
        assert_eq!(none.site.compare_href("a", "b"), None);
    }

    #[test]
    fn site_links_must_be_web_addresses_with_their_placeholders() {
        for (toml, words) in [
            (
                "commit_url = \"https://x/commit/\"",
                "must contain {commit}",
            ),
            (
                "commit_url = \"javascript:alert({commit})\"",
                "must start with https://",
            ),
            (
                "compare_url = \"https://x/compare/{from}\"",
                "must contain {to}",
            ),
            ("commit = \"https://x/{commit}\"", "unknown field"),
        ] {
            let err = Settings::parse(&format!("[site]\n{toml}\n"), Path::new("p.toml"))
                .unwrap_err()
                .to_string();
            assert!(err.contains(words), "{toml}: {err}");
        }
    }

    #[test]
    fn branches_and_series_keys() {
        let s = Settings::parse(
            "[analysis]\nmain_branch = \"trunk\"\nseries_by = [\"host\", \"runner\"]\n",
            Path::new("p.toml"),
        )
        .unwrap();
        assert_eq!(s.analysis.main_branch.as_deref(), Some("trunk"));
        assert_eq!(s.analysis.series_by, ["host", "runner"]);
        let d = Settings::default();
        assert_eq!(
            (d.analysis.main_branch, d.analysis.series_by.len()),
            (None, 0)
        );
        for (text, says) in [
            ("main_branch = \" \"", "must name a branch"),
            ("series_by = [\"host\", \"host\"]", "lists 'host' twice"),
            ("series_by = [\"\"]", "must not be empty"),
            ("series_by = [\"commit\"]", "cannot use 'commit'"),
            ("series_by = \"host\"", "p.toml"),
        ] {
            let err = Settings::parse(&format!("[analysis]\n{text}\n"), Path::new("p.toml"))
                .unwrap_err()
                .to_string();
            assert!(err.contains(says), "{text}: {err}");
        }
    }
}
