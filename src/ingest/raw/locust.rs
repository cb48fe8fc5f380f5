//! Locust `--csv PREFIX` → `PREFIX_stats.csv` (FORMATS.md §4).
//!
//! This file holds only end-of-test summary figures, so **no warm-up can
//! be trimmed** and the percentiles are Locust's own, computed from
//! response times rounded to 2 significant digits. perfdash takes them as
//! they are, says so once per build ([`LOCUST_NOTE`]), and decides
//! verdicts on them with that rounding in mind
//! (`analyse::verdict::Resolution`).
//!
//! Rows are per request name plus an `Aggregated` row (`Total` before
//! Locust 1.0). Unsplit, a file with one request name gives that row, else
//! the aggregated row.

use std::collections::BTreeMap;
use std::path::Path;

use super::{RawContent, RawFile, ReadOptions, warning};
use crate::error::{DiagnosticKind, Error};
use crate::ingest::input::InputFile;
use crate::model::{RoundStats, SourceFormat};

/// What every build with Locust rounds says once (information, not a
/// warning: nothing is wrong with the files).
pub const LOCUST_NOTE: &str = "Locust _stats.csv holds only end-of-test figures: no warm-up can be \
     trimmed, and its percentiles are Locust's, from response times rounded to 2 significant digits \
     (1 ms steps below 100 ms, 10 ms below 1 s, 100 ms below 10 s); a verdict on Locust rounds \
     needs the change to cross the line even at the far edges of that rounding (docs/raw-results.md)";

/// Whether a first line is a Locust `_stats.csv` header (1.0+ or older).
pub(crate) fn is_stats_header(first: &[u8]) -> bool {
    let text = String::from_utf8_lossy(first);
    let names: Vec<&str> = text.split(',').map(|s| s.trim_matches('"')).collect();
    names.len() > 4
        && names[1] == "Name"
        && matches!(names[0], "Type" | "Method")
        && matches!(names[2], "Request Count" | "# requests")
}

pub fn read(file: &InputFile, shown: &Path, opts: &ReadOptions) -> Result<RawFile, Error> {
    let plain = super::io::open_plain(file, &opts.limits).map_err(|e| Error::io(shown, e))?;
    let mut csv = csv::ReaderBuilder::new().flexible(true).from_reader(plain);
    let header = csv
        .headers()
        .map_err(|e| Error::at(shown, Some(1), format!("not CSV: {e}")))?
        .clone();
    let col = |names: &[&str]| header.iter().position(|h| names.contains(&h));
    let required = |names: &[&str]| {
        col(names).ok_or_else(|| {
            Error::at(
                shown,
                Some(1),
                format!("Locust stats without a '{}' column", names[0]),
            )
        })
    };
    let name_col = required(&["Name"])?;
    let count_col = required(&["Request Count", "# requests"])?;
    let fail_col = required(&["Failure Count", "# failures"])?;
    let p99_col = required(&["99%"])?;
    let mean_col = col(&["Average Response Time", "Average response time"]);
    let min_col = col(&["Min Response Time", "Min response time"]);
    let max_col = col(&["Max Response Time", "Max response time"]);
    let rps_col = col(&["Requests/s"]);
    let (p50_col, p90_col, p95_col) = (col(&["50%"]), col(&["90%"]), col(&["95%"]));

    let mut rows: Vec<(String, Result<RoundStats, String>, bool)> = Vec::new();
    for (i, record) in csv.records().enumerate() {
        let line = i as u64 + 2;
        let record = record.map_err(|e| Error::at(shown, Some(line), format!("not CSV: {e}")))?;
        let get = |c: usize| record.get(c).unwrap_or("").trim();
        let num = |c: Option<usize>| {
            c.and_then(|c| get(c).parse::<f64>().ok())
                .filter(|v| v.is_finite())
        };
        let name = get(name_col).to_string();
        let aggregated = matches!(name.as_str(), "Aggregated" | "Total") && get(0).is_empty()
            || name == "Aggregated";
        let count: u64 = get(count_col)
            .parse()
            .map_err(|_| Error::at(shown, Some(line), "Request Count is not a whole number"))?;
        let failures: u64 = get(fail_col).parse().unwrap_or(0);
        let stats = match num(Some(p99_col)) {
            Some(p99) => Ok(RoundStats {
                count: Some(count),
                throughput_rps: num(rps_col),
                mean_ms: num(mean_col),
                stddev_ms: None,
                min_ms: num(min_col),
                p50_ms: num(p50_col),
                p90_ms: num(p90_col),
                p95_ms: num(p95_col),
                p99_ms: p99,
                max_ms: num(max_col),
                error_rate: (count > 0).then(|| failures as f64 / count as f64),
            }),
            None => Err(format!(
                "line {line}: no 99% value ('{}'): no requests?",
                get(p99_col)
            )),
        };
        rows.push((name, stats, aggregated));
    }

    let mut groups: BTreeMap<String, RoundStats> = BTreeMap::new();
    let mut pick = |name: &str, stats: &Result<RoundStats, String>| match stats {
        Ok(s) => {
            groups.insert(name.to_string(), s.clone());
            Ok(())
        }
        Err(m) => Err(Error::at(shown, None, m.clone())),
    };
    let requests: Vec<_> = rows.iter().filter(|r| !r.2).collect();
    if opts.split_tag.is_some() {
        for (name, stats, _) in &requests {
            pick(name, stats)?;
        }
    } else if let [(_, stats, _)] = requests.as_slice() {
        pick("", stats)?;
    } else if let Some((_, stats, _)) = rows.iter().find(|r| r.2) {
        pick("", stats)?;
    }
    if groups.is_empty() {
        return Err(Error::at(
            shown,
            None,
            "no request rows in this Locust _stats.csv",
        ));
    }
    Ok(RawFile {
        format: SourceFormat::LocustStats,
        content: RawContent::Summary { groups },
        // Said once per build, however many Locust files there are.
        warnings: vec![warning(
            DiagnosticKind::Information,
            shown,
            None,
            LOCUST_NOTE,
        )],
    })
}

/// What every build with Locust `--json` rounds says once.
pub const LOCUST_JSON_NOTE: &str = "Locust's --json holds only end-of-test figures: no warm-up can be \
     trimmed, and its percentiles are computed here by Locust's own method from its histogram of \
     response times rounded to 2 significant digits (what its _stats.csv shows); a verdict on Locust \
     rounds needs the change to cross the line even at the far edges of that rounding \
     (docs/raw-results.md)";

/// Whether a JSON document's first bytes look like Locust's `--json`
/// output: an array of stats entries.
pub(crate) fn looks_like_json(head: &[u8]) -> bool {
    let h = &head[..head.len().min(64 * 1024)];
    let has = |s: &[u8]| memchr::memmem::find(h, s).is_some();
    h.trim_ascii_start().starts_with(b"[") && has(b"\"num_requests\"") && has(b"\"response_times\"")
}

/// One entry of `--json` (`StatsEntry.serialize` in locust/stats.py).
#[derive(serde::Deserialize)]
struct JsonEntry {
    name: String,
    num_requests: u64,
    #[serde(default)]
    num_none_requests: u64,
    num_failures: u64,
    total_response_time: f64,
    max_response_time: f64,
    min_response_time: Option<f64>,
    /// Bucketed response time (ms, as a string key) → requests.
    response_times: BTreeMap<String, u64>,
    start_time: Option<f64>,
    last_request_timestamp: Option<f64>,
}

/// Locust `--json` (stdout of `locust --headless --json`, or `--json-file`).
/// Entries of one name (several methods) are merged: histograms and sums
/// add up exactly, as Locust's own `Aggregated` row does.
pub fn parse_json(bytes: &[u8], shown: &Path, opts: &ReadOptions) -> Result<RawFile, Error> {
    let entries: Vec<JsonEntry> = serde_json::from_slice(bytes).map_err(|e| {
        Error::at(
            shown,
            Some(e.line() as u64),
            format!("not Locust's --json (an array of stats entries): {e}"),
        )
    })?;
    if entries.is_empty() {
        return Err(Error::at(shown, None, "Locust's --json lists no request"));
    }
    let mut merged: BTreeMap<String, Vec<&JsonEntry>> = BTreeMap::new();
    for e in &entries {
        let key = if opts.split_tag.is_some() {
            e.name.clone()
        } else {
            String::new()
        };
        merged.entry(key).or_default().push(e);
    }
    let mut groups = BTreeMap::new();
    for (name, parts) in merged {
        groups.insert(
            name,
            json_stats(&parts).map_err(|m| Error::at(shown, None, m))?,
        );
    }
    Ok(RawFile {
        format: SourceFormat::LocustJson,
        content: RawContent::Summary { groups },
        warnings: vec![warning(
            DiagnosticKind::Information,
            shown,
            None,
            LOCUST_JSON_NOTE,
        )],
    })
}

fn json_stats(parts: &[&JsonEntry]) -> Result<RoundStats, String> {
    let mut buckets: BTreeMap<u64, u64> = BTreeMap::new();
    for e in parts {
        for (ms, n) in &e.response_times {
            let ms: u64 = ms.parse().map_err(|_| {
                format!(
                    "{}: response time bucket {ms:?} is not whole milliseconds",
                    e.name
                )
            })?;
            *buckets.entry(ms).or_default() += n;
        }
    }
    let requests: u64 = parts.iter().map(|e| e.num_requests).sum();
    let none: u64 = parts.iter().map(|e| e.num_none_requests).sum();
    let failures: u64 = parts.iter().map(|e| e.num_failures).sum();
    let timed = requests.saturating_sub(none);
    if timed == 0 || buckets.is_empty() {
        return Err(format!("{}: no timed request", parts[0].name));
    }
    let percentile = |p: f64| locust_percentile(&buckets, timed, p) as f64;
    let total: f64 = parts.iter().map(|e| e.total_response_time).sum();
    let start = parts.iter().filter_map(|e| e.start_time).reduce(f64::min);
    let last = parts
        .iter()
        .filter_map(|e| e.last_request_timestamp)
        .reduce(f64::max);
    let finite = |v: f64| Some(v).filter(|v| v.is_finite() && *v >= 0.0 && *v < 1e15);
    Ok(RoundStats {
        count: Some(requests),
        throughput_rps: match (start, last) {
            (Some(s), Some(l)) if l > s => Some(requests as f64 / (l - s)),
            _ => None,
        },
        mean_ms: finite(total / timed as f64),
        stddev_ms: None,
        min_ms: parts
            .iter()
            .filter_map(|e| e.min_response_time)
            .reduce(f64::min)
            .and_then(finite),
        p50_ms: Some(percentile(0.5)),
        p90_ms: Some(percentile(0.9)),
        p95_ms: Some(percentile(0.95)),
        p99_ms: percentile(0.99),
        max_ms: parts
            .iter()
            .map(|e| e.max_response_time)
            .reduce(f64::max)
            .and_then(finite),
        error_rate: Some(failures as f64 / requests as f64),
    })
}

/// `calculate_response_time_percentile` of locust/stats.py: walking the
/// buckets from the slowest, the first whose cumulative count leaves at
/// most ⌊n·p⌋ requests faster.
fn locust_percentile(buckets: &BTreeMap<u64, u64>, n: u64, percent: f64) -> u64 {
    let wanted = (n as f64 * percent) as u64;
    let mut processed = 0u64;
    for (&ms, &count) in buckets.iter().rev() {
        processed += count;
        if n.saturating_sub(processed) <= wanted {
            return ms;
        }
    }
    0
}
