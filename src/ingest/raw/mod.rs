//! Raw load-test outputs: every request's latency, from which perfdash
//! recomputes a round's statistics after trimming the warm-up.
//!
//! Formats (shared FORMATS.md §1–4), told apart by content
//! ([`sniff`]); the file name only narrows the choice:
//!
//! | format | module | time of a sample |
//! |---|---|---|
//! | k6 `--out json` NDJSON (plain or gzip) | [`k6_ndjson`] | request end |
//! | k6 `--out csv` | [`k6_csv`] | request end (whole seconds by default) |
//! | JMeter JTL CSV (header, or headerless 2.13 / 5.x) | [`jmeter_csv`] | request start |
//! | JMeter JTL XML | [`jmeter_xml`] | request start |
//! | Gatling text `simulation.log` (3.0–3.12) | [`gatling`] | request start |
//! | Gatling binary `simulation.log` (3.12.1+) | [`gatling_binary`] | request start |
//! | Locust `_stats.csv` and `--json` | [`locust`] | summary only: no trimming |
//! | hey `-o csv` | [`hey`] | request start (offset from the test start) |
//! | ab `-g` TSV / `-e` percentiles | [`ab`] | request start (whole seconds) / summary only |
//! | Artillery 2.x JSON report | [`artillery`] | summary only: no trimming |
//! | JMeter dashboard `statistics.json` | [`jmeter_stats`] | summary only: no trimming |
//!
//! Parsers stream: they keep 12 bytes per retained latency sample
//! ([`samples::Samples`]) plus a fixed amount, never the whole file; a
//! round's statistics add 8 bytes a sample while they are computed.

pub mod ab;
pub mod artillery;
pub(crate) mod csv_scan;
pub mod gatling;
pub mod gatling_binary;
pub mod hey;
pub(crate) mod io;
pub mod jmeter_csv;
pub mod jmeter_stats;
pub mod jmeter_xml;
mod k6_any_order;
pub mod k6_csv;
pub mod k6_ndjson;
mod lines;
pub mod locust;
pub mod samples;
mod slices;
mod time;

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Diagnostic, DiagnosticKind, Error};
use crate::ingest::input::InputFile;
use crate::model::{RoundStats, SourceFormat};
use crate::stats::{PercentileMethod, moments_by, percentiles_by};

pub use time::parse_rfc3339_micros;

/// One request: when it happened (µs since the Unix epoch) and how long
/// it took (ms). 16 bytes: the memory bound per retained sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    pub t_us: i64,
    pub ms: f64,
}

pub use samples::Samples;

/// The samples of one endpoint (group), successful and failed apart.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SampleSet {
    pub ok: Samples,
    pub failed: Samples,
}

impl SampleSet {
    pub fn push(&mut self, sample: Sample, success: bool) {
        if success {
            self.ok.push(sample)
        } else {
            self.failed.push(sample)
        }
    }

    pub fn len(&self) -> usize {
        self.ok.len() + self.failed.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn append(&mut self, mut other: SampleSet) {
        self.ok.append(&mut other.ok);
        self.failed.append(&mut other.failed);
    }

    fn first_time(&self) -> Option<i64> {
        self.ok
            .first_time()
            .into_iter()
            .chain(self.failed.first_time())
            .min()
    }
}

/// What a raw file held.
#[derive(Debug, Clone, PartialEq)]
pub enum RawContent {
    /// Per-request samples by group (tag value / label / request name;
    /// `""` when not split).
    Samples {
        groups: BTreeMap<String, SampleSet>,
        /// `true` when a sample's time is the request start (JMeter,
        /// Gatling), `false` when it is the end (k6).
        time_is_start: bool,
    },
    /// Only summary figures per group (Locust `_stats.csv`, k6 summaries).
    Summary {
        groups: BTreeMap<String, RoundStats>,
    },
}

/// A parsed raw file.
#[derive(Debug, Clone, PartialEq)]
pub struct RawFile {
    pub format: SourceFormat,
    pub content: RawContent,
    /// Problems that did not stop reading (a truncated last line, …).
    pub warnings: Vec<Diagnostic>,
}

/// What to read from a raw file.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ReadOptions {
    /// The k6 trend metric whose samples are latencies.
    pub metric: String,
    /// `None`: all samples form one group `""`. `Some(tag)`: split by the
    /// k6 tag `tag`; JMeter by label and Gatling/Locust by request name
    /// whatever `tag` says.
    pub split_tag: Option<String>,
    /// Caps on decompression and line length (`[limits]`).
    #[serde(default)]
    pub limits: crate::ingest::limits::Limits,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            metric: "http_req_duration".into(),
            split_tag: None,
            limits: Default::default(),
        }
    }
}

/// What a file looks like, from its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sniffed {
    /// One JSON document: a k6 summary (see `k6_summary`).
    K6Summary,
    K6Ndjson,
    K6Csv,
    JmeterCsv,
    JmeterXml,
    GatlingText,
    GatlingBinary,
    LocustStats,
    LocustJson,
    ArtilleryReport,
    JmeterStatistics,
    HeyCsv,
    AbGnuplot,
    AbPercentiles,
}

/// Tells the format from the first bytes of the plain content. `Err`
/// says what the file looks like instead.
pub fn sniff(head: &[u8]) -> Result<Sniffed, String> {
    // Before any text check: Gatling's binary log starts with a zero byte
    // (its run record type), which no text format does.
    if gatling_binary::looks_like(head) {
        return Ok(Sniffed::GatlingBinary);
    }
    let text = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head);
    let first_line_end = memchr::memchr(b'\n', text).unwrap_or(text.len());
    let first = trim_cr(&text[..first_line_end]);
    let trimmed = text.trim_ascii_start();
    if trimmed.is_empty() {
        // Whitespace only (a crashed writer's newline) is empty too.
        return Err("the file is empty".into());
    }
    if trimmed.starts_with(b"{") {
        // NDJSON records start `{"type":"Metric"` or `{"metric":…,"type":"Point"`.
        let line = trim_cr(&trimmed[..memchr::memchr(b'\n', trimmed).unwrap_or(trimmed.len())]);
        return Ok(if k6_ndjson::is_record(line) {
            Sniffed::K6Ndjson
        } else if artillery::looks_like(trimmed) {
            Sniffed::ArtilleryReport
        } else if jmeter_stats::looks_like(trimmed) {
            Sniffed::JmeterStatistics
        } else {
            Sniffed::K6Summary
        });
    }
    if trimmed.starts_with(b"[") && locust::looks_like_json(trimmed) {
        return Ok(Sniffed::LocustJson);
    }
    if trimmed.starts_with(b"<") {
        if let Some(advice) = crate::lookalike::recognise(trimmed) {
            return Err(advice.to_string());
        }
        return if memchr::memmem::find(&trimmed[..trimmed.len().min(4096)], b"<testResults")
            .is_some()
        {
            Ok(Sniffed::JmeterXml)
        } else {
            Err("XML, but not a JMeter JTL (no <testResults> element)".into())
        };
    }
    if first.starts_with(b"RUN\t")
        || first.starts_with(b"USER\t")
        || first.starts_with(b"REQUEST\t")
        || first.starts_with(b"GROUP\t")
    {
        return Ok(Sniffed::GatlingText);
    }
    if let Some(advice) = crate::lookalike::recognise(head) {
        return Err(advice.to_string());
    }
    if text[..text.len().min(512)].contains(&0)
        || std::str::from_utf8(&text[..text.len().min(64)]).is_err()
    {
        return Err("binary content: not a load-test output perfdash reads".into());
    }
    if first == hey::HEADER {
        return Ok(Sniffed::HeyCsv);
    }
    if first == ab::GNUPLOT_HEADER {
        return Ok(Sniffed::AbGnuplot);
    }
    if first == ab::PERCENTILES_HEADER {
        return Ok(Sniffed::AbPercentiles);
    }
    if first.starts_with(b"metric_name,timestamp,metric_value") {
        return Ok(Sniffed::K6Csv);
    }
    if locust::is_stats_header(first) {
        return Ok(Sniffed::LocustStats);
    }
    if jmeter_csv::looks_like_jtl_csv(text) {
        return Ok(Sniffed::JmeterCsv);
    }
    Err(UNKNOWN.into())
}

/// What a file that is no known format is told.
const UNKNOWN: &str = "unknown content: not a k6 summary/NDJSON/CSV, JMeter JTL or statistics.json, \
     Gatling simulation.log, Locust _stats.csv or --json, Artillery JSON report, hey CSV or ab -g/-e output";

fn trim_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// Reads a raw (or summary) file of any supported format. `shown` is the
/// path used in messages (relative to the archive root). The file is
/// opened once ([`InputFile::open`]); see [`read_input`].
pub fn read_file(path: &Path, shown: &Path, opts: &ReadOptions) -> Result<RawFile, Error> {
    let file = InputFile::open(path).map_err(|e| Error::io(shown, e))?;
    read_input(&file, shown, opts)
}

/// Reads an open file of any supported format: sniffing and parsing read
/// the same descriptor.
pub fn read_input(file: &InputFile, shown: &Path, opts: &ReadOptions) -> Result<RawFile, Error> {
    let gzip = io::is_gzip(file).unwrap_or(false);
    let corrupt = |e: std::io::Error| {
        if gzip && !crate::ingest::limits::is_limit_exceeded(&e) {
            Error::at(shown, None, format!("corrupt gzip: {e}"))
        } else {
            Error::io(shown, e)
        }
    };
    let head = io::head(file, 64 * 1024, &opts.limits).map_err(corrupt)?;
    let kind = sniff(&head).map_err(|msg| Error::at(shown, None, not_a_result(&head, msg)))?;
    let document = || crate::ingest::limits::read_document(file, &opts.limits).map_err(corrupt);
    match kind {
        Sniffed::K6Summary => {
            // Read whole, so under the document cap (and the gzip caps).
            let bytes =
                crate::ingest::limits::read_document(file, &opts.limits).map_err(corrupt)?;
            let summary = super::k6_summary::parse(&bytes, shown, &opts.metric)?;
            Ok(RawFile {
                format: summary.format,
                content: RawContent::Summary {
                    groups: BTreeMap::from([(String::new(), summary.stats)]),
                },
                warnings: Vec::new(),
            })
        }
        Sniffed::K6Ndjson => k6_ndjson::read(file, shown, opts),
        Sniffed::K6Csv => k6_csv::read(file, shown, opts),
        Sniffed::JmeterCsv => jmeter_csv::read(file, shown, opts),
        Sniffed::JmeterXml => jmeter_xml::read(file, shown, opts),
        Sniffed::GatlingText => gatling::read(file, shown, opts),
        Sniffed::LocustStats => locust::read(file, shown, opts),
        Sniffed::GatlingBinary => gatling_binary::read(file, shown, opts),
        Sniffed::LocustJson => locust::parse_json(&document()?, shown, opts),
        Sniffed::ArtilleryReport => artillery::parse(&document()?, shown, opts),
        Sniffed::JmeterStatistics => jmeter_stats::parse(&document()?, shown, opts),
        Sniffed::HeyCsv => hey::read(file, shown, opts),
        Sniffed::AbGnuplot => ab::read_gnuplot(file, shown, opts),
        Sniffed::AbPercentiles => ab::read_percentiles(file, shown, opts),
    }
}

/// The message for a file that is no load-test output: a flame-graph
/// profile in a round file's place is told so, with where profiles go.
fn not_a_result(head: &[u8], message: String) -> String {
    match crate::profile::sniff(head) {
        Some(crate::profile::Likeness::Certain) => format!(
            "{} profile, not a load-test result: profiles are read from files named \
             flame[.<kind>].<ext> in the endpoint folder (docs/profiles.md)",
            crate::profile::describe_head(head)
        ),
        _ => message,
    }
}

/// How a round's statistics are computed from samples.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StatsOptions {
    /// Samples earlier than the first sample's time + this are dropped.
    pub warmup_s: f64,
    pub method: PercentileMethod,
    /// Whether failed requests count in the latency figures (they always
    /// count in the error rate and the throughput).
    pub failures_in_latency: bool,
}

impl Default for StatsOptions {
    fn default() -> Self {
        StatsOptions {
            warmup_s: DEFAULT_WARMUP_S,
            method: PercentileMethod::Linear,
            failures_in_latency: false,
        }
    }
}

/// The documented default warm-up.
pub const DEFAULT_WARMUP_S: f64 = 15.0;

/// The percentiles every round gets, in `RoundStats` order.
const PERCENTS: [f64; 4] = [50.0, 90.0, 95.0, 99.0];

/// Statistics of one group after trimming the warm-up.
///
/// * Samples before `test_start_us + warmup` are dropped (`test_start_us`
///   is the first sample of the whole file, so that all endpoints of a
///   run-level file share one clock).
/// * The steady window runs from the first kept sample's time to the last
///   kept sample's time (its end, when times are request starts), as
///   JMeter's dashboard measures throughput.
/// * `count` and the error rate cover every request in the window;
///   latency figures cover the successful ones unless
///   `failures_in_latency`.
/// * Throughput = requests in the window ÷ window length.
pub fn round_stats(
    set: &SampleSet,
    test_start_us: i64,
    time_is_start: bool,
    opts: &StatsOptions,
) -> Result<RoundStats, String> {
    group_stats(set.clone(), test_start_us, time_is_start, opts).0
}

/// [`round_stats`] of a set it consumes, and the p99 of every sample (no
/// warm-up trimmed, for the cross-check with a summary of the same round).
/// The samples are moved into one slice of latencies block by block,
/// freeing each block as it goes: 12 bytes a sample held, plus 8 while
/// the statistics are computed.
pub fn group_stats(
    set: SampleSet,
    test_start_us: i64,
    time_is_start: bool,
    opts: &StatsOptions,
) -> (Result<RoundStats, String>, Option<f64>) {
    let cutoff = test_start_us.saturating_add((opts.warmup_s * 1e6).round() as i64);
    let before = set.len();
    // With no successful request at all, the whole test's p99 is that of
    // the failures, as a k6 summary of it reports, so the summary beside
    // an outage's raw file cross-checks it; the round's own figures are a
    // failed round's (below).
    let only_failures = set.ok.is_empty() && !opts.failures_in_latency;
    let in_latency = |ok: bool| ok || opts.failures_in_latency || only_failures;
    let timed = set.ok.len()
        + if opts.failures_in_latency || only_failures {
            set.failed.len()
        } else {
            0
        };
    // Kept latencies from the front, trimmed ones from the back: the
    // statistics read the front, the whole-test p99 all of it.
    let mut latencies = vec![0.0f64; timed];
    let (mut front, mut back) = (0usize, timed);
    let (mut count, mut failed) = (0usize, 0usize);
    let mut last: Option<i64> = None;
    let mut window: Option<(i64, i64)> = None;
    let mut visit = |s: Sample, ok: bool| {
        last = Some(last.map_or(s.t_us, |l| l.max(s.t_us)));
        let kept = s.t_us >= cutoff;
        if kept {
            count += 1;
            failed += usize::from(!ok);
            let end = if time_is_start {
                // Saturating: a corrupt elapsed time must not overflow.
                s.t_us.saturating_add((s.ms * 1000.0).round() as i64)
            } else {
                s.t_us
            };
            window = Some(window.map_or((s.t_us, end), |(a, b)| (a.min(s.t_us), b.max(end))));
        }
        if in_latency(ok) {
            if kept {
                latencies[front] = s.ms;
                front += 1;
            } else {
                back -= 1;
                latencies[back] = s.ms;
            }
        }
    };
    let SampleSet {
        ok,
        failed: failures,
    } = set;
    ok.drain(|s| visit(s, true));
    failures.drain(|s| visit(s, false));
    let kept = front;
    let stats = (|| {
        if count == 0 {
            let span = last
                .map(|l| l.saturating_sub(test_start_us) as f64 / 1e6)
                .unwrap_or(0.0);
            return Err(format!(
                "the warm-up of {} s removes all {before} samples (the samples span {span:.1} s from the start); \
                 lower the warm-up (--warmup, or warmup_seconds in perfdash.toml/run.toml)",
                opts.warmup_s,
            ));
        }
        let (window_start, window_end) = window.expect("count > 0");
        let window_s = window_end.saturating_sub(window_start) as f64 / 1e6;
        if only_failures || kept == 0 {
            // Every request failed (a service that was down refuses them
            // all): a result, not bad input. The round is read as k6's own
            // summary of such a test reads, requests with no latency (p99
            // 0) and an error rate of 100%, so that it is a failed round
            // (`analyse::figures`) and the run a failed run, never a
            // skipped file that would let the gate judge an older run.
            return Ok(RoundStats {
                count: Some(count as u64),
                throughput_rps: (window_s > 0.0).then(|| count as f64 / window_s),
                p99_ms: 0.0,
                error_rate: Some(failed as f64 / count as f64),
                ..RoundStats::default()
            });
        }
        let lat = &mut latencies[..kept];
        let m = moments_by(lat, |v| *v).expect("not empty");
        let p = percentiles_by(lat, &PERCENTS, opts.method, |v| *v);
        Ok(RoundStats {
            count: Some(count as u64),
            throughput_rps: (window_s > 0.0).then(|| count as f64 / window_s),
            mean_ms: Some(m.mean),
            stddev_ms: Some(m.stddev),
            min_ms: Some(m.min),
            p50_ms: Some(p[0]),
            p90_ms: Some(p[1]),
            p95_ms: Some(p[2]),
            p99_ms: p[3],
            max_ms: Some(m.max),
            error_rate: Some(failed as f64 / count as f64),
        })
    })();
    let untrimmed_p99 = percentiles_by(&mut latencies, &[99.0], opts.method, |v| *v)
        .first()
        .copied();
    (stats, untrimmed_p99)
}

/// The statistics of one endpoint (group) of a file, as cached and shown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupResult {
    pub stats: RoundStats,
    /// p99 over all samples (no warm-up trimmed), kept to cross-check a
    /// summary of the same round. `None` for summary-only formats.
    pub untrimmed_p99_ms: Option<f64>,
    /// `false` when the format holds no per-request data (so no warm-up
    /// could be trimmed).
    pub trimmed: bool,
    /// The warm-up applied, seconds.
    pub warmup_s: f64,
}

/// Everything perfdash keeps from one round file (this is what the cache
/// stores).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileResult {
    pub format: SourceFormat,
    /// By endpoint id (`""` for an unsplit file).
    pub groups: BTreeMap<String, Result<GroupResult, String>>,
    pub warnings: Vec<Diagnostic>,
}

/// Settings that decide a file's result (and so its cache key).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileSettings {
    pub read: ReadOptions,
    pub stats: StatsOptions,
    /// When split: tag value → endpoint id (values not listed become
    /// [`slug`]s).
    pub tag_map: BTreeMap<String, String>,
    /// When split: endpoint id → warm-up overriding `stats.warmup_s`.
    pub endpoint_warmups: BTreeMap<String, f64>,
}

/// Reads a file and computes each group's statistics.
pub fn analyse_file(
    path: &Path,
    shown: &Path,
    settings: &FileSettings,
) -> Result<FileResult, Error> {
    let file = InputFile::open(path).map_err(|e| Error::io(shown, e))?;
    analyse_input(&file, shown, settings)
}

/// [`analyse_file`] on an open file.
pub fn analyse_input(
    file: &InputFile,
    shown: &Path,
    settings: &FileSettings,
) -> Result<FileResult, Error> {
    let raw = read_input(file, shown, &settings.read)?;
    check_endpoint_count(&raw, shown, &settings.read)?;
    Ok(compute(raw, settings))
}

/// A file split by tag into more endpoints than `[limits]
/// max_endpoints_per_run` is refused with advice, before any round is
/// computed: k6 names a request by its full URL unless the script names
/// it, and 85,728 URLs made 85,728 endpoint pages.
pub(crate) fn check_endpoint_count(
    raw: &RawFile,
    shown: &Path,
    read: &ReadOptions,
) -> Result<(), Error> {
    let (Some(tag), max) = (&read.split_tag, read.limits.max_endpoints_per_run) else {
        return Ok(());
    };
    let count = match &raw.content {
        RawContent::Samples { groups, .. } => groups.len(),
        RawContent::Summary { groups } => groups.len(),
    };
    if count <= max {
        return Ok(());
    }
    let advice = match raw.format {
        SourceFormat::K6Ndjson | SourceFormat::K6Csv => format!(
            "k6 tags each request with its full URL as `{tag}` unless the script names it: \
             name requests (`http.get(url, {{ tags: {{ name: 'GET /orders/{{id}}' }} }})`) or \
             build URLs with a template (http.url`…/orders/${{id}}`), or split by another tag \
             ([raw] split_tag)"
        ),
        _ => "give the requests names that group them (a label per endpoint, not per URL)"
            .to_string(),
    };
    Err(Error::at(
        shown,
        None,
        format!(
            "it splits into {count} endpoints by {}, more than [limits] max_endpoints_per_run \
             ({max}): {advice}; or raise the limit if these really are endpoints",
            match raw.format {
                SourceFormat::K6Ndjson | SourceFormat::K6Csv => format!("the k6 tag `{tag}`"),
                _ => "request name".to_string(),
            }
        ),
    ))
}

/// Turns parsed content into per-endpoint results (pure).
pub fn compute(raw: RawFile, settings: &FileSettings) -> FileResult {
    let split = settings.read.split_tag.is_some();
    let records_failures = raw.format.records_failures();
    let endpoint_of = |key: &str| -> String {
        if !split {
            return key.to_string();
        }
        settings
            .tag_map
            .get(key)
            .cloned()
            .unwrap_or_else(|| slug(key))
    };
    let mut groups = BTreeMap::new();
    match raw.content {
        RawContent::Summary { groups: g } => {
            for (key, stats) in g {
                groups.insert(
                    endpoint_of(&key),
                    Ok(GroupResult {
                        stats,
                        untrimmed_p99_ms: None,
                        trimmed: false,
                        warmup_s: 0.0,
                    }),
                );
            }
        }
        RawContent::Samples {
            groups: g,
            time_is_start,
        } => {
            let test_start = g
                .values()
                .filter_map(SampleSet::first_time)
                .min()
                .unwrap_or(0);
            // Several tag values may map to one endpoint: merge them.
            let mut merged: BTreeMap<String, SampleSet> = BTreeMap::new();
            for (key, set) in g {
                merged.entry(endpoint_of(&key)).or_default().append(set);
            }
            for (endpoint, set) in merged {
                let warmup_s = settings
                    .endpoint_warmups
                    .get(&endpoint)
                    .copied()
                    .unwrap_or(settings.stats.warmup_s);
                let opts = StatsOptions {
                    warmup_s,
                    ..settings.stats
                };
                let (stats, untrimmed_p99_ms) = group_stats(set, test_start, time_is_start, &opts);
                let result = stats.map(|mut stats| {
                    if !records_failures {
                        stats.error_rate = None;
                    }
                    GroupResult {
                        stats,
                        untrimmed_p99_ms,
                        trimmed: true,
                        warmup_s,
                    }
                });
                groups.insert(endpoint, result);
            }
        }
    }
    FileResult {
        format: raw.format,
        groups,
        warnings: raw.warnings,
    }
}

/// An endpoint id from a tag value: its [words](crate::slug::words)
/// (`GET /api/orders/{id}` → `get-api-orders-id`), a URL without its
/// scheme and host (`http://localhost:8082/users/1` → `users-1`), and
/// `root` when nothing is left.
pub fn slug(value: &str) -> String {
    let path = match value.split_once("://") {
        Some((_, rest)) => rest.find('/').map(|i| &rest[i..]).unwrap_or(""),
        None => value,
    };
    let out = crate::slug::words(path);
    if out.is_empty() { "root".into() } else { out }
}

/// Groups samples by a key given as raw bytes, with a one-entry cache
/// because consecutive samples mostly share their key.
#[derive(Default)]
pub(crate) struct Grouper {
    keys: Vec<Vec<u8>>,
    sets: Vec<SampleSet>,
    index: std::collections::HashMap<Vec<u8>, usize>,
    last: usize,
}

impl Grouper {
    pub(crate) fn push(&mut self, key: &[u8], sample: Sample, success: bool) {
        let i = if self
            .keys
            .get(self.last)
            .is_some_and(|k| k.as_slice() == key)
        {
            self.last
        } else if self.keys.len() <= 16
            && let Some(i) = self.keys.iter().position(|k| k.as_slice() == key)
        {
            // Few endpoints (the usual case): a scan beats hashing.
            self.last = i;
            i
        } else {
            let i = match self.index.get(key) {
                Some(&i) => i,
                None => {
                    self.keys.push(key.to_vec());
                    self.sets.push(SampleSet::default());
                    self.index.insert(key.to_vec(), self.keys.len() - 1);
                    self.keys.len() - 1
                }
            };
            self.last = i;
            i
        };
        self.sets[i].push(sample, success);
    }

    /// Appends what `other` grouped after what this one did, key by key,
    /// keys in order of first appearance: as if one grouper had seen this
    /// part of a file and then the next.
    pub(crate) fn absorb(&mut self, other: Grouper) {
        for (key, set) in other.keys.into_iter().zip(other.sets) {
            match self.index.get(&key) {
                Some(&i) => self.sets[i].append(set),
                None => {
                    self.index.insert(key.clone(), self.keys.len());
                    self.keys.push(key);
                    self.sets.push(set);
                }
            }
        }
    }

    /// The groups with keys decoded by `decode` (keys that decode to the
    /// same text are merged).
    pub(crate) fn finish(self, decode: impl Fn(&[u8]) -> String) -> BTreeMap<String, SampleSet> {
        let mut out: BTreeMap<String, SampleSet> = BTreeMap::new();
        for (k, s) in self.keys.into_iter().zip(self.sets) {
            out.entry(decode(&k)).or_default().append(s);
        }
        out
    }
}

/// A diagnostic about a file, for the diagnostics list.
pub(crate) fn warning(
    kind: DiagnosticKind,
    shown: &Path,
    line: Option<u64>,
    message: impl Into<String>,
) -> Diagnostic {
    Diagnostic::new(kind, shown.display().to_string(), line, message)
}

#[cfg(test)]
mod tests;
