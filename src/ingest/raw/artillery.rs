//! Artillery 2.x JSON reports (`artillery run --output report.json`).
//!
//! ```text
//! {"aggregate": {"counters": {"http.codes.200": 40, "errors.ECONNREFUSED": 2, …,
//!                             "plugins.metrics-by-endpoint./orders.codes.200": 40, …},
//!                "summaries": {"http.response_time": {"min", "max", "count", "mean",
//!                                                     "median", "p90", "p95", "p99", …},
//!                              "plugins.metrics-by-endpoint.response_time./orders": {…}, …},
//!                "firstMetricAt": 1796320652905, "lastMetricAt": 1796320656857, …},
//!  "intermediate": [ … the same for every 10 s period … ]}
//! ```
//!
//! Only the aggregate is read: it is Artillery's summary of the whole test,
//! so **no warm-up can be trimmed**. Its latencies are Artillery's own
//! (`summarizeHistogram` in `@artilleryio/int-core`): a DDSketch with 1 %
//! relative accuracy, then rounded to 0.1 ms; `http.response_time` is the
//! time to the first byte of each response, failed (4xx/5xx) responses
//! included. The error rate is the responses with a status of 400 or more
//! plus the requests that got no response (`errors.*`: ECONNREFUSED,
//! ETIMEDOUT, …) over all of them. Split into endpoints by the
//! metrics-by-endpoint plugin's names (on by default in Artillery 2).

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Map, Value};

use super::{RawContent, RawFile, ReadOptions, warning};
use crate::error::{DiagnosticKind, Error};
use crate::model::{RoundStats, SourceFormat};

/// Said once per build with Artillery rounds.
pub const ARTILLERY_NOTE: &str = "Artillery's report holds whole-test summaries: no warm-up can be \
     trimmed, and its percentiles are Artillery's (a DDSketch with 1% relative accuracy, rounded to \
     0.1 ms) of the time to the first byte of every response, failed ones included";

const BY_ENDPOINT: &str = "plugins.metrics-by-endpoint.";

/// Whether a JSON document's first bytes look like an Artillery report.
pub(crate) fn looks_like(head: &[u8]) -> bool {
    let h = &head[..head.len().min(64 * 1024)];
    let has = |s: &[u8]| memchr::memmem::find(h, s).is_some();
    has(b"\"aggregate\"") && (has(b"\"counters\"") || has(b"\"intermediate\""))
}

pub fn parse(bytes: &[u8], shown: &Path, opts: &ReadOptions) -> Result<RawFile, Error> {
    let doc: Value = serde_json::from_slice(bytes)
        .map_err(|e| Error::at(shown, Some(e.line() as u64), format!("not valid JSON: {e}")))?;
    let agg = doc
        .get("aggregate")
        .and_then(Value::as_object)
        .ok_or_else(|| {
            Error::at(
                shown,
                None,
                "an Artillery report without an \"aggregate\" object",
            )
        })?;
    let empty = Map::new();
    let counters = agg
        .get("counters")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    // Artillery 2.0 before 2.0.0-24 called the summaries "histograms".
    let summaries = agg
        .get("summaries")
        .or_else(|| agg.get("histograms"))
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let window_s = match (
        agg.get("firstMetricAt").and_then(Value::as_f64),
        agg.get("lastMetricAt").and_then(Value::as_f64),
    ) {
        (Some(a), Some(b)) if b > a => Some((b - a) / 1000.0),
        _ => None,
    };
    let mut groups = BTreeMap::new();
    if opts.split_tag.is_some() {
        let prefix = format!("{BY_ENDPOINT}response_time.");
        for (key, summary) in summaries {
            let Some(name) = key.strip_prefix(&prefix) else {
                continue;
            };
            let outcome = outcome(counters, &format!("{BY_ENDPOINT}{name}."));
            groups.insert(
                name.to_string(),
                stats(summary, outcome, window_s, shown, key)?,
            );
        }
        // An endpoint whose every request failed has no summary: its
        // errors still make a round (failed, as it should be).
        let errored: Vec<String> = counters
            .keys()
            .filter_map(|k| k.strip_prefix(BY_ENDPOINT))
            .filter_map(|k| k.rsplit_once(".errors.").map(|(n, _)| n.to_string()))
            .collect();
        for name in errored {
            if let std::collections::btree_map::Entry::Vacant(slot) = groups.entry(name) {
                let outcome = outcome(counters, &format!("{BY_ENDPOINT}{}.", slot.key()));
                slot.insert(failed_round(outcome, window_s));
            }
        }
        if groups.is_empty() && !summaries.contains_key("http.response_time") {
            return Err(no_requests(counters, shown));
        }
        if groups.is_empty() {
            return Err(Error::at(
                shown,
                None,
                "this Artillery report has no per-endpoint metrics (the metrics-by-endpoint \
                 plugin was turned off): put it in its endpoint's folder, \
                 runs/<run>/<endpoint>/round-<n>.json",
            ));
        }
    } else {
        let outcome = outcome(counters, "");
        let stats = match summaries.get("http.response_time") {
            Some(summary) => stats(summary, outcome, window_s, shown, "http.response_time")?,
            None if outcome.requests > 0 => failed_round(outcome, window_s),
            None => return Err(no_requests(counters, shown)),
        };
        groups.insert(String::new(), stats);
    }
    Ok(RawFile {
        format: SourceFormat::ArtilleryReport,
        content: RawContent::Summary { groups },
        warnings: vec![warning(
            DiagnosticKind::Information,
            shown,
            None,
            ARTILLERY_NOTE,
        )],
    })
}

/// Responses by status and requests without a response.
#[derive(Clone, Copy)]
struct Outcome {
    requests: u64,
    failed: u64,
}

/// Sums `<prefix>codes.<status>` and `<prefix>errors.<code>` counters
/// (`prefix` empty: the whole test's `http.codes.*` and `errors.*`).
fn outcome(counters: &Map<String, Value>, prefix: &str) -> Outcome {
    let (codes, errors) = match prefix {
        "" => ("http.codes.".to_string(), "errors.".to_string()),
        p => (format!("{p}codes."), format!("{p}errors.")),
    };
    let mut o = Outcome {
        requests: 0,
        failed: 0,
    };
    for (key, value) in counters {
        let n = value.as_u64().unwrap_or(0);
        if let Some(status) = key.strip_prefix(&codes) {
            o.requests += n;
            if status.parse::<u16>().is_ok_and(|s| s >= 400) {
                o.failed += n;
            }
        } else if key.starts_with(&errors) {
            o.requests += n;
            o.failed += n;
        }
    }
    o
}

fn stats(
    summary: &Value,
    outcome: Outcome,
    window_s: Option<f64>,
    shown: &Path,
    key: &str,
) -> Result<RoundStats, Error> {
    let field = |name: &str| {
        summary
            .get(name)
            .and_then(Value::as_f64)
            .filter(|v| v.is_finite() && *v >= 0.0 && *v < 1e15)
    };
    let p99 = field("p99").ok_or_else(|| {
        Error::at(
            shown,
            None,
            format!("the summary {key} has no p99 that is a number"),
        )
    })?;
    let count = match outcome.requests {
        0 => summary.get("count").and_then(Value::as_u64),
        n => Some(n),
    };
    Ok(RoundStats {
        count,
        throughput_rps: count.zip(window_s).map(|(c, w)| c as f64 / w),
        mean_ms: field("mean"),
        stddev_ms: None,
        min_ms: field("min"),
        p50_ms: field("median").or_else(|| field("p50")),
        p90_ms: field("p90"),
        p95_ms: field("p95"),
        p99_ms: p99,
        max_ms: field("max"),
        error_rate: (outcome.requests > 0).then(|| outcome.failed as f64 / outcome.requests as f64),
    })
}

/// A round whose every request failed before a response: no latency (a
/// p99 of 0 with a 100 % error rate is how the analysis knows a failed
/// round, docs/archive.md "Failed rounds").
fn failed_round(outcome: Outcome, window_s: Option<f64>) -> RoundStats {
    RoundStats {
        count: Some(outcome.requests),
        throughput_rps: window_s.map(|w| outcome.requests as f64 / w),
        mean_ms: None,
        stddev_ms: None,
        min_ms: None,
        p50_ms: None,
        p90_ms: None,
        p95_ms: None,
        p99_ms: 0.0,
        max_ms: None,
        error_rate: Some(1.0),
    }
}

fn no_requests(counters: &Map<String, Value>, shown: &Path) -> Error {
    let created = counters
        .get("vusers.created")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    Error::at(
        shown,
        None,
        format!(
            "this Artillery report holds no HTTP request ({created} virtual users created): \
             was the scenario empty, or not an HTTP test?"
        ),
    )
}
