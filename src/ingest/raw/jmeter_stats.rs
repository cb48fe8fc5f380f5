//! JMeter 5.x HTML dashboard's `statistics.json` (`jmeter -g results.jtl -o
//! dashboard/`, or `-e -o` after a run): JMeter's own summary per
//! transaction label plus `"Total"` (FORMATS.md §2.3).
//!
//! ```text
//! {"Total": {"transaction": "Total", "sampleCount": 255, "errorCount": 3, "errorPct": 1.1764706,
//!            "meanResTime": 235.47, "medianResTime": 232.0, "minResTime": 100.0, "maxResTime": 353.0,
//!            "pct1ResTime": 337.0, "pct2ResTime": 339.2, "pct3ResTime": 353.0,
//!            "throughput": 4.2369, "receivedKBytesPerSec": …, "sentKBytesPerSec": …},
//!  "JR-OK": {…}, …}
//! ```
//!
//! Used as a summary: **no warm-up can be trimmed**. The figures are
//! JMeter's: failed samples count in every latency figure, the percentiles
//! are commons-math's `LEGACY` estimate over the last 20 000 samples of
//! each label (`jmeter.reportgenerator.statistic_window`), and pct1/2/3 are
//! the 90th, 95th and 99th unless `aggregate_rpt_pct1..3` were changed (the
//! file does not say). `medianResTime` exists since JMeter 5.3.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::{RawContent, RawFile, ReadOptions, warning};
use crate::error::{DiagnosticKind, Error};
use crate::model::{RoundStats, SourceFormat};

/// Said once per build with JMeter dashboard rounds.
pub const JMETER_STATISTICS_NOTE: &str = "JMeter's statistics.json holds whole-test summaries: no \
     warm-up can be trimmed, failed samples count in its latencies, and its percentiles are JMeter's \
     (commons-math LEGACY over the last 20,000 samples of each label; pct1/2/3 taken as p90/p95/p99, \
     JMeter's defaults); file the JTL instead to have the rounds recomputed";

/// Whether a JSON document's first bytes look like `statistics.json`.
pub(crate) fn looks_like(head: &[u8]) -> bool {
    let h = &head[..head.len().min(64 * 1024)];
    let has = |s: &[u8]| memchr::memmem::find(h, s).is_some();
    has(b"\"sampleCount\"") && has(b"\"pct3ResTime\"") && has(b"\"transaction\"")
}

pub fn parse(bytes: &[u8], shown: &Path, opts: &ReadOptions) -> Result<RawFile, Error> {
    let doc: BTreeMap<String, Value> = serde_json::from_slice(bytes).map_err(|e| {
        Error::at(
            shown,
            Some(e.line() as u64),
            format!("not a JMeter statistics.json (a map of labels to figures): {e}"),
        )
    })?;
    let mut groups = BTreeMap::new();
    for (label, figures) in &doc {
        let is_total = label == "Total";
        if opts.split_tag.is_some() == is_total {
            continue;
        }
        let key = if is_total {
            String::new()
        } else {
            label.clone()
        };
        groups.insert(key, stats(figures, label, shown)?);
    }
    if groups.is_empty() {
        return Err(Error::at(
            shown,
            None,
            match opts.split_tag {
                Some(_) => "this statistics.json has no transaction besides \"Total\"",
                None => "this statistics.json has no \"Total\" entry",
            },
        ));
    }
    Ok(RawFile {
        format: SourceFormat::JmeterStatistics,
        content: RawContent::Summary { groups },
        warnings: vec![warning(
            DiagnosticKind::Information,
            shown,
            None,
            JMETER_STATISTICS_NOTE,
        )],
    })
}

fn stats(figures: &Value, label: &str, shown: &Path) -> Result<RoundStats, Error> {
    let field = |name: &str| {
        figures
            .get(name)
            .and_then(Value::as_f64)
            .filter(|v| v.is_finite() && *v >= 0.0 && *v < 1e15)
    };
    let count = figures.get("sampleCount").and_then(Value::as_u64);
    let p99 = field("pct3ResTime").ok_or_else(|| {
        Error::at(
            shown,
            None,
            format!("{label}: no pct3ResTime (the 99th percentile) that is a number"),
        )
    })?;
    let errors = figures.get("errorCount").and_then(Value::as_u64);
    let error_rate = match (errors, count) {
        (Some(e), Some(c)) if c > 0 => Some(e as f64 / c as f64),
        _ => field("errorPct").map(|p| p / 100.0),
    };
    Ok(RoundStats {
        count,
        throughput_rps: field("throughput"),
        mean_ms: field("meanResTime"),
        stddev_ms: None,
        min_ms: field("minResTime"),
        p50_ms: field("medianResTime"),
        p90_ms: field("pct1ResTime"),
        p95_ms: field("pct2ResTime"),
        p99_ms: p99,
        max_ms: field("maxResTime"),
        error_rate,
    })
}
