//! `perfdash inspect FILE...`: the statistics of result files given by
//! hand, per endpoint, in any supported format (summaries included).
//!
//! Raw files are always split into endpoints (k6 by the `name` tag or the
//! one asked for, JMeter by label, Gatling/Locust by request name); the
//! endpoint is shown as the tag value itself.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::Serialize;

use super::raw::{self, FileSettings, RawContent, ReadOptions, StatsOptions};
use crate::error::Diagnostic;
use crate::model::{RoundStats, SourceFormat};
use crate::stats::PercentileMethod;

/// What `inspect` computes.
#[derive(Debug, Clone)]
pub struct InspectOptions {
    pub warmup_s: f64,
    pub method: PercentileMethod,
    pub failures_in_latency: bool,
    pub metric: String,
    pub split_tag: String,
}

impl Default for InspectOptions {
    fn default() -> Self {
        InspectOptions {
            warmup_s: raw::DEFAULT_WARMUP_S,
            method: PercentileMethod::Linear,
            failures_in_latency: false,
            metric: "http_req_duration".into(),
            split_tag: "name".into(),
        }
    }
}

/// What a file given to `inspect` holds, told by content as for the archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputKind {
    /// A flame-graph profile (any file name).
    Profile,
    /// A load-test result (summary or raw output).
    Result,
    /// Neither: why not, for the error message.
    Unknown(String),
}

/// Sniffs a file's first 64 KiB (gzip inflated): markup or JSON only a
/// profiler writes is a profile; otherwise the result sniffer decides, and
/// text it does not know that reads as folded stacks or perf/DTrace output
/// is a profile. Unreadable files are results, so that their reader names
/// the problem.
pub fn input_kind(path: &Path) -> InputKind {
    use crate::profile::Likeness;
    // Opened like every input: a FIFO or a link is refused, never waited on.
    let Ok(file) = crate::ingest::input::InputFile::open(path) else {
        return InputKind::Result;
    };
    let Ok(head) = raw::io::head(&file, 64 * 1024, &Default::default()) else {
        return InputKind::Result;
    };
    let profile = crate::profile::sniff(&head);
    if profile == Some(Likeness::Certain) {
        return InputKind::Profile;
    }
    match raw::sniff(&head) {
        Ok(_) => InputKind::Result,
        Err(_) if profile == Some(Likeness::Plausible) => InputKind::Profile,
        Err(why) => InputKind::Unknown(format!(
            "{why}; nor a flame-graph profile (folded stacks, perf script, DTrace stacks, \
             async-profiler HTML, speedscope JSON)"
        )),
    }
}

/// One endpoint of one file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InspectRow {
    pub file: String,
    /// The tag value / label / request name; `""` for a summary.
    pub endpoint: String,
    pub format: SourceFormat,
    /// Seconds trimmed; `None` when the format has no per-request data.
    pub warmup_s: Option<f64>,
    /// `None` with `error` set when nothing could be computed.
    pub stats: Option<RoundStats>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Everything `inspect` found, in the order of the files given.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InspectReport {
    pub percentile_method: PercentileMethod,
    pub failures_in_latency: bool,
    pub rows: Vec<InspectRow>,
    /// Files that could not be read, and warnings about the others.
    pub diagnostics: Vec<Diagnostic>,
}

/// Reads and computes every file (in parallel).
pub fn inspect_files(paths: &[PathBuf], opts: &InspectOptions) -> InspectReport {
    let per_file: Vec<(Vec<InspectRow>, Vec<Diagnostic>)> =
        paths.par_iter().map(|p| inspect_file(p, opts)).collect();
    let mut rows = Vec::new();
    let mut diagnostics = Vec::new();
    for (r, d) in per_file {
        rows.extend(r);
        diagnostics.extend(d);
    }
    InspectReport {
        percentile_method: opts.method,
        failures_in_latency: opts.failures_in_latency,
        rows,
        diagnostics,
    }
}

fn inspect_file(path: &Path, opts: &InspectOptions) -> (Vec<InspectRow>, Vec<Diagnostic>) {
    let read = ReadOptions {
        metric: opts.metric.clone(),
        split_tag: Some(opts.split_tag.clone()),
        limits: Default::default(),
    };
    let file = match raw::read_file(path, path, &read) {
        Ok(f) => f,
        Err(e) => {
            return (
                Vec::new(),
                vec![Diagnostic::from_error(
                    crate::error::DiagnosticKind::SkippedInput,
                    &e,
                )],
            );
        }
    };
    if let Err(e) = raw::check_endpoint_count(&file, path, &read) {
        return (
            Vec::new(),
            vec![Diagnostic::from_error(
                crate::error::DiagnosticKind::SkippedInput,
                &e,
            )],
        );
    }
    // Show tag values as they are: map each to itself.
    let keys: Vec<String> = match &file.content {
        RawContent::Samples { groups, .. } => groups.keys().cloned().collect(),
        RawContent::Summary { groups } => groups.keys().cloned().collect(),
    };
    let settings = FileSettings {
        read,
        stats: StatsOptions {
            warmup_s: opts.warmup_s,
            method: opts.method,
            failures_in_latency: opts.failures_in_latency,
        },
        tag_map: keys
            .iter()
            .map(|k| (k.clone(), k.clone()))
            .collect::<BTreeMap<_, _>>(),
        endpoint_warmups: BTreeMap::new(),
    };
    let result = raw::compute(file, &settings);
    let shown = path.display().to_string();
    let rows = result
        .groups
        .into_iter()
        .map(|(endpoint, group)| match group {
            Ok(g) => InspectRow {
                file: shown.clone(),
                endpoint,
                format: result.format,
                warmup_s: g.trimmed.then_some(g.warmup_s),
                stats: Some(g.stats),
                error: None,
            },
            Err(e) => InspectRow {
                file: shown.clone(),
                endpoint,
                format: result.format,
                warmup_s: None,
                stats: None,
                error: Some(e),
            },
        })
        .collect();
    (rows, result.warnings)
}

impl InspectReport {
    /// Pretty JSON (the rows and diagnostics; field names as in
    /// `analysis.json`'s round statistics).
    pub fn to_json(&self) -> String {
        let json = serde_json::to_string_pretty(self).expect("plain data serialises");
        crate::escape::json_output(&json).into_owned() + "\n"
    }

    /// A fixed-width text table, one line per endpoint of each file
    /// (diagnostics are not included: print them apart, on stderr). File
    /// names, endpoint labels and errors are escaped for the terminal
    /// (`escape::terminal`): a name cannot start a line of its own.
    pub fn to_table(&self) -> String {
        use crate::escape::terminal;
        let header = [
            "file", "endpoint", "format", "warm-up", "count", "req/s", "mean", "stddev", "min",
            "p50", "p90", "p95", "p99", "max", "errors",
        ];
        let ms = |v: Option<f64>| v.map(|v| format!("{v:.2}")).unwrap_or_else(|| "-".into());
        let mut lines: Vec<Vec<String>> = vec![header.iter().map(|s| s.to_string()).collect()];
        for r in &self.rows {
            let mut cells = vec![
                terminal(&r.file).into_owned(),
                if r.endpoint.is_empty() {
                    "(all)".into()
                } else {
                    terminal(&r.endpoint).into_owned()
                },
                format_name(r.format).into(),
                r.warmup_s
                    .map(|w| format!("{w} s"))
                    .unwrap_or_else(|| "none".into()),
            ];
            match &r.stats {
                Some(s) => cells.extend([
                    s.count.map(|c| c.to_string()).unwrap_or_else(|| "-".into()),
                    s.throughput_rps
                        .map(|t| format!("{t:.1}"))
                        .unwrap_or_else(|| "-".into()),
                    ms(s.mean_ms),
                    ms(s.stddev_ms),
                    ms(s.min_ms),
                    ms(s.p50_ms),
                    ms(s.p90_ms),
                    ms(s.p95_ms),
                    ms(Some(s.p99_ms)),
                    ms(s.max_ms),
                    s.error_rate
                        .map(|e| format!("{:.2}%", e * 100.0))
                        .unwrap_or_else(|| "-".into()),
                ]),
                None => cells.push(format!(
                    "error: {}",
                    terminal(r.error.as_deref().unwrap_or(""))
                )),
            }
            lines.push(cells);
        }
        let columns = header.len();
        let widths: Vec<usize> = (0..columns)
            .map(|c| {
                lines
                    .iter()
                    // An error message spans the number columns: not counted.
                    .filter(|l| l.len() == columns || c < 4)
                    .filter_map(|l| l.get(c))
                    .map(|s| s.chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut out = String::new();
        for line in &lines {
            let mut text = String::new();
            for (c, cell) in line.iter().enumerate() {
                let pad = widths[c].saturating_sub(cell.chars().count());
                // Text columns left-aligned, numbers right-aligned.
                if c < 4 || line.len() < columns {
                    let _ = write!(text, "{cell}{}  ", " ".repeat(pad));
                } else {
                    let _ = write!(text, "{}{cell}  ", " ".repeat(pad));
                }
            }
            out.push_str(text.trim_end());
            out.push('\n');
        }
        let _ = writeln!(
            out,
            "latencies in ms; percentiles: {}; failed requests {} the latency figures",
            self.percentile_method,
            if self.failures_in_latency {
                "included in"
            } else {
                "excluded from"
            }
        );
        out
    }
}

fn format_name(f: SourceFormat) -> &'static str {
    match f {
        SourceFormat::K6HandleSummary => "k6-summary",
        SourceFormat::K6SummaryExport => "k6-summary-export",
        SourceFormat::K6MachineReadable => "k6-summary-v1.5",
        SourceFormat::K6Ndjson => "k6-ndjson",
        SourceFormat::K6Csv => "k6-csv",
        SourceFormat::JmeterCsv => "jmeter-csv",
        SourceFormat::JmeterXml => "jmeter-xml",
        SourceFormat::GatlingLog => "gatling-log",
        SourceFormat::GatlingBinaryLog => "gatling-binary-log",
        SourceFormat::LocustStats => "locust-stats",
        SourceFormat::LocustJson => "locust-json",
        SourceFormat::ArtilleryReport => "artillery-report",
        SourceFormat::JmeterStatistics => "jmeter-statistics",
        SourceFormat::HeyCsv => "hey-csv",
        SourceFormat::AbGnuplot => "ab-gnuplot",
        SourceFormat::AbPercentiles => "ab-percentiles",
    }
}
