//! k6 end-of-test summaries, in the three shapes k6 writes them
//! (see `docs/archive.md` and shared FORMATS.md §1):
//!
//! * `handleSummary(data)` data: `metrics.<name>.values.{…}`;
//! * the legacy `--summary-export` file: metric values hoisted out of
//!   `values`, rate metrics' `rate` renamed to `value`, threshold flags
//!   inverted (`true` = failed);
//! * the v1.5+ machine-readable summary: top-level `version`, metrics in a
//!   list under `results.metrics`.
//!
//! The shape is told apart by content, never by file name.

use std::path::Path;

use serde_json::{Map, Value};

use crate::error::Error;
use crate::model::{RoundStats, SourceFormat};

/// The largest figure accepted from a summary: 10^15 (as milliseconds,
/// 31 000 years; as a request count, far beyond any test). Larger values
/// are corrupt, and near `f64::MAX` the arithmetic downstream (medians,
/// baseline × ratio) would overflow to infinity.
pub const MAX_PLAUSIBLE_VALUE: f64 = 1e15;

/// What a summary file gave for one round.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryRound {
    pub format: SourceFormat,
    pub stats: RoundStats,
    /// The metric key the latency figures came from.
    pub metric_key: String,
    /// Every threshold in the summary, pass/fail normalised.
    pub thresholds: Vec<Threshold>,
}

/// Recognises the summary shape of a parsed JSON document.
pub fn detect(doc: &Value) -> Option<SourceFormat> {
    let obj = doc.as_object()?;
    if obj.contains_key("version") && obj.get("results").is_some_and(Value::is_object) {
        return Some(SourceFormat::K6MachineReadable);
    }
    let metrics = obj.get("metrics")?.as_object()?;
    let wrapped = metrics
        .values()
        .any(|m| m.get("values").is_some_and(Value::is_object));
    if wrapped {
        Some(SourceFormat::K6HandleSummary)
    } else if metrics.values().all(Value::is_object) {
        Some(SourceFormat::K6SummaryExport)
    } else {
        None
    }
}

/// A k6 threshold and whether it passed, with k6's polarity undone:
/// `handleSummary()` says `{"ok": true}` for a pass, while the legacy
/// export says `true` for a *failure*.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Threshold {
    pub metric: String,
    pub expression: String,
    pub passed: bool,
}

/// A parsed summary, before any figure is required of it.
#[derive(Debug, Clone)]
pub struct Summary {
    pub format: SourceFormat,
    doc: Value,
}

impl Summary {
    /// Every metric key and its values object.
    pub fn metrics(&self) -> Vec<(String, &Map<String, Value>)> {
        metric_values(&self.doc, self.format)
    }

    /// The thresholds k6 evaluated, pass/fail normalised.
    pub fn thresholds(&self) -> Vec<Threshold> {
        let mut out = Vec::new();
        let raw: Vec<(String, &Map<String, Value>)> = match self.format {
            SourceFormat::K6MachineReadable => self
                .doc
                .pointer("/results/metrics")
                .and_then(Value::as_array)
                .map(|l| {
                    l.iter()
                        .filter_map(|m| {
                            Some((
                                m.get("name")?.as_str()?.to_string(),
                                m.get("thresholds")?.as_object()?,
                            ))
                        })
                        .collect()
                })
                .unwrap_or_default(),
            _ => self.doc["metrics"]
                .as_object()
                .map(|m| {
                    m.iter()
                        .filter_map(|(k, v)| Some((k.clone(), v.get("thresholds")?.as_object()?)))
                        .collect()
                })
                .unwrap_or_default(),
        };
        for (metric, thresholds) in raw {
            for (expression, v) in thresholds {
                let passed = match (self.format, v) {
                    // Legacy export: `true` means the threshold FAILED.
                    (SourceFormat::K6SummaryExport, Value::Bool(failed)) => !failed,
                    (_, Value::Object(o)) => match o.get("ok").and_then(Value::as_bool) {
                        Some(ok) => ok,
                        None => continue,
                    },
                    _ => continue,
                };
                out.push(Threshold {
                    metric: metric.clone(),
                    expression: expression.clone(),
                    passed,
                });
            }
        }
        out.sort_by(|a, b| (&a.metric, &a.expression).cmp(&(&b.metric, &b.expression)));
        out
    }
}

/// Parses a k6 summary of any of the three shapes.
pub fn parse_summary(bytes: &[u8], path: &Path) -> Result<Summary, Error> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(Error::at(
            path,
            None,
            "empty file: expected a k6 summary (did the test run crash before writing it?)",
        ));
    }
    let doc: Value = serde_json::from_slice(bytes).map_err(|e| {
        let line = (e.line() > 0).then_some(e.line() as u64);
        Error::at(path, line, format!("not valid JSON: {e}"))
    })?;
    let format = detect(&doc).ok_or_else(|| {
        Error::at(
            path,
            None,
            "not a k6 summary: expected handleSummary() data, a --summary-export file or a machine-readable summary",
        )
    })?;
    Ok(Summary { format, doc })
}

/// Parses a k6 summary and extracts the figures of `metric`
/// (normally `http_req_duration`). The `{expected_response:true}`
/// sub-metric is preferred when present, so that latencies cover
/// successful requests only, as in recomputed rounds.
pub fn parse(bytes: &[u8], path: &Path, metric: &str) -> Result<SummaryRound, Error> {
    round_stats(&parse_summary(bytes, path)?, path, metric)
}

/// The round figures of `metric` in a parsed summary; an error naming the
/// file when the metric or its p(99) is missing.
pub fn round_stats(summary: &Summary, path: &Path, metric: &str) -> Result<SummaryRound, Error> {
    let format = summary.format;
    let doc = &summary.doc;
    let metrics = summary.metrics();
    let find = |name: &str| metrics.iter().find(|(k, _)| k == name).map(|(_, v)| *v);

    let preferred = format!("{metric}{{expected_response:true}}");
    let (metric_key, trend) = match (find(&preferred), find(metric)) {
        (Some(values), _) => (preferred.clone(), values),
        (None, Some(values)) => (metric.to_string(), values),
        (None, None) => {
            return Err(Error::at(
                path,
                None,
                format!("no '{metric}' metric in this {}", format.describe()),
            ));
        }
    };

    let num = |values: &Map<String, Value>, key: &str| -> Result<Option<f64>, Error> {
        match values.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) => {
                let v = n.as_f64().unwrap_or(f64::NAN);
                if v > MAX_PLAUSIBLE_VALUE {
                    Err(Error::at(
                        path,
                        None,
                        format!(
                            "{metric_key}.{key} is {v}: too large to be a measurement (the limit is {MAX_PLAUSIBLE_VALUE:e})"
                        ),
                    ))
                } else if v.is_finite() && v >= 0.0 {
                    Ok(Some(v))
                } else {
                    Err(Error::at(
                        path,
                        None,
                        format!("{metric_key}.{key} is {v}: not a non-negative number"),
                    ))
                }
            }
            Some(other) => Err(Error::at(
                path,
                None,
                format!(
                    "{metric_key}.{key} should be a number, found {}",
                    type_name(other)
                ),
            )),
        }
    };

    let p99_ms = num(trend, "p(99)")?.ok_or_else(|| {
        let mut stats: Vec<&str> = trend.keys().map(String::as_str).filter(|k| *k != "thresholds").collect();
        stats.sort();
        Error::at(
            path,
            None,
            format!(
                "{metric_key} has no p(99) (it has {}); add \"p(99)\" to summaryTrendStats in the k6 options, \
                 e.g. summaryTrendStats: ['avg','min','med','max','p(90)','p(95)','p(99)','count']",
                stats.join(", ")
            ),
        )
    })?;

    let requests = find("http_reqs");
    let count = match requests {
        Some(v) => num(v, "count")?.map(|c| c as u64),
        None => num(trend, "count")?.map(|c| c as u64),
    };
    let throughput_rps = match requests {
        Some(v) => num(v, "rate")?.or_else(|| {
            // The machine-readable summary's counters carry no rate.
            let secs = doc.pointer("/config/duration").and_then(Value::as_f64)?;
            Some(count? as f64 / secs).filter(|r| r.is_finite())
        }),
        None => None,
    };
    // http_req_failed is a Rate whose `rate` is the failed share. The
    // legacy export renames it `value` (always 0 before k6 v0.30, which had
    // no http_req_failed metric anyway).
    let error_rate = match find("http_req_failed") {
        Some(v) => match num(v, "rate")? {
            Some(r) => Some(r),
            None => num(v, "value")?,
        },
        None => None,
    };

    let stats = RoundStats {
        count,
        throughput_rps,
        mean_ms: num(trend, "avg")?,
        stddev_ms: None,
        min_ms: num(trend, "min")?,
        p50_ms: match num(trend, "med")? {
            Some(m) => Some(m),
            None => num(trend, "p(50)")?,
        },
        p90_ms: num(trend, "p(90)")?,
        p95_ms: num(trend, "p(95)")?,
        p99_ms,
        max_ms: num(trend, "max")?,
        error_rate: error_rate.filter(|r| *r <= 1.0),
    };
    Ok(SummaryRound {
        format,
        stats,
        metric_key,
        thresholds: summary.thresholds(),
    })
}

/// (metric key, its values object) for every metric, whatever the shape.
fn metric_values(doc: &Value, format: SourceFormat) -> Vec<(String, &Map<String, Value>)> {
    match format {
        SourceFormat::K6MachineReadable => doc
            .pointer("/results/metrics")
            .and_then(Value::as_array)
            .map(|list| {
                list.iter()
                    .filter_map(|m| {
                        let name = m.get("name")?.as_str()?;
                        let tags = m
                            .get("tags")
                            .and_then(Value::as_object)
                            .filter(|t| !t.is_empty())
                            .map(|t| {
                                let inner: Vec<String> = t
                                    .iter()
                                    .map(|(k, v)| format!("{k}:{}", v.as_str().unwrap_or_default()))
                                    .collect();
                                format!("{{{}}}", inner.join(","))
                            })
                            .unwrap_or_default();
                        Some((format!("{name}{tags}"), m.get("values")?.as_object()?))
                    })
                    .collect()
            })
            .unwrap_or_default(),
        SourceFormat::K6HandleSummary => doc["metrics"]
            .as_object()
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.get("values")?.as_object()?)))
                    .collect()
            })
            .unwrap_or_default(),
        SourceFormat::K6SummaryExport => doc["metrics"]
            .as_object()
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_object()?)))
                    .collect()
            })
            .unwrap_or_default(),
        // `detect` only returns summary shapes.
        _ => Vec::new(),
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn p(v: Value) -> Result<SummaryRound, Error> {
        parse(
            v.to_string().as_bytes(),
            Path::new("r/round-1.json"),
            "http_req_duration",
        )
    }

    #[test]
    fn handle_summary_prefers_expected_response_submetric() {
        let r = p(json!({"metrics": {
            "http_req_duration": {"type":"trend","contains":"time","values":{"p(99)": 50.0, "med": 10.0}},
            "http_req_duration{expected_response:true}": {"type":"trend","contains":"time","values":{"p(99)": 40.0, "med": 9.0, "avg": 11.0}},
            "http_reqs": {"type":"counter","contains":"default","values":{"count": 100, "rate": 10.0}},
            "http_req_failed": {"type":"rate","contains":"default","values":{"rate": 0.02, "passes": 2, "fails": 98}}
        }}))
        .unwrap();
        assert_eq!(r.format, SourceFormat::K6HandleSummary);
        assert_eq!(r.metric_key, "http_req_duration{expected_response:true}");
        assert_eq!(r.stats.p99_ms, 40.0);
        assert_eq!(r.stats.p50_ms, Some(9.0));
        assert_eq!(r.stats.count, Some(100));
        assert_eq!(r.stats.throughput_rps, Some(10.0));
        assert_eq!(r.stats.error_rate, Some(0.02));
    }

    #[test]
    fn legacy_export_renames_rate_to_value() {
        let r = p(json!({"root_group": {}, "metrics": {
            "http_req_duration": {"p(99)": 30.0, "avg": 12.0, "thresholds": {"p(95)<100": false}},
            "http_req_failed": {"value": 0.5, "passes": 1, "fails": 1}
        }}))
        .unwrap();
        assert_eq!(r.format, SourceFormat::K6SummaryExport);
        assert_eq!(r.stats.error_rate, Some(0.5));
        assert_eq!(r.stats.mean_ms, Some(12.0));
    }

    #[test]
    fn machine_readable_summary() {
        let r = p(json!({"version": "1.0.0", "metadata": {}, "config": {"duration": 20.0},
            "results": {"metrics": [
                {"name": "http_req_duration", "type": "trend", "contains": "time", "values": {"p(99)": 7.5}},
                {"name": "http_reqs", "type": "counter", "contains": "default", "values": {"count": 200}},
                {"name": "http_req_failed", "type": "rate", "contains": "default", "values": {"matches": 0, "rate": 0.0, "total": 200}}
            ]}}))
        .unwrap();
        assert_eq!(r.format, SourceFormat::K6MachineReadable);
        assert_eq!(r.stats.p99_ms, 7.5);
        assert_eq!(r.stats.throughput_rps, Some(10.0));
        assert_eq!(r.stats.error_rate, Some(0.0));
    }

    #[test]
    fn missing_p99_says_how_to_fix_it() {
        let err = p(
            json!({"root_group": {}, "metrics": {"http_req_duration": {"avg": 1.0, "p(95)": 2.0}}}),
        )
        .unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("r/round-1.json: "), "{msg}");
        assert!(msg.contains("summaryTrendStats"), "{msg}");
        assert!(msg.contains("avg, p(95)"), "{msg}");
    }

    #[test]
    fn negative_and_wrong_types_are_errors() {
        let err =
            p(json!({"metrics": {"http_req_duration": {"values": {"p(99)": -1.0}}}})).unwrap_err();
        assert!(err.to_string().contains("non-negative"), "{err}");
        let err =
            p(json!({"metrics": {"http_req_duration": {"values": {"p(99)": "12"}}}})).unwrap_err();
        assert!(
            err.to_string()
                .contains("should be a number, found a string"),
            "{err}"
        );
    }

    #[test]
    fn broken_json_names_the_line() {
        let err = parse(
            b"{\n\"metrics\": {\n",
            Path::new("x.json"),
            "http_req_duration",
        )
        .unwrap_err();
        assert!(
            err.to_string().starts_with("x.json:3: not valid JSON"),
            "{err}"
        );
    }

    #[test]
    fn threshold_polarity_is_normalised() {
        let legacy = parse_summary(
            json!({"root_group": {}, "metrics": {"http_req_duration": {"p(99)": 1.0, "thresholds": {"p(90) < 400": true, "p(95) < 1000": false}}}})
                .to_string()
                .as_bytes(),
            Path::new("x"),
        )
        .unwrap();
        let t = legacy.thresholds();
        assert_eq!(
            (t[0].expression.as_str(), t[0].passed),
            ("p(90) < 400", false),
            "legacy true = failed"
        );
        assert_eq!(
            (t[1].expression.as_str(), t[1].passed),
            ("p(95) < 1000", true)
        );
        let modern = parse_summary(
            json!({"metrics": {"http_req_duration": {"values": {"p(99)": 1.0}, "thresholds": {"p(95)<1000": {"ok": true}, "p(99)<5": {"ok": false}}}}})
                .to_string()
                .as_bytes(),
            Path::new("x"),
        )
        .unwrap();
        let t = modern.thresholds();
        assert_eq!(
            (t[0].expression.as_str(), t[0].passed),
            ("p(95)<1000", true)
        );
        assert_eq!((t[1].expression.as_str(), t[1].passed), ("p(99)<5", false));
    }

    #[test]
    fn not_a_summary() {
        let err = p(json!([1, 2])).unwrap_err();
        assert!(err.to_string().contains("not a k6 summary"));
    }
}
