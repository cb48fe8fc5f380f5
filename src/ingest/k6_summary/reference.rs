//! The k6 summary reader as it was before the typed one: the whole
//! document parsed into a `serde_json::Value` and walked. Kept only to test
//! that the typed reader gives the same rounds and the same errors.

use std::path::Path;

use serde_json::{Map, Value};

use super::{MAX_PLAUSIBLE_VALUE, Threshold};
use crate::error::Error;
use crate::model::{RoundStats, SourceFormat};

/// What a summary file gave for one round.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SummaryRound {
    pub format: SourceFormat,
    pub stats: RoundStats,
    /// The metric key the latency figures came from.
    pub metric_key: String,
    /// Every threshold in the summary, pass/fail normalised.
    pub thresholds: Vec<Threshold>,
}

/// Recognises the summary shape of a parsed JSON document.
pub(crate) fn detect(doc: &Value) -> Option<SourceFormat> {
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

/// A parsed summary, before any figure is required of it.
#[derive(Debug, Clone)]
pub(crate) struct Summary {
    pub format: SourceFormat,
    doc: Value,
}

impl Summary {
    /// Every metric key and its values object.
    pub(crate) fn metrics(&self) -> Vec<(String, &Map<String, Value>)> {
        metric_values(&self.doc, self.format)
    }

    /// The thresholds k6 evaluated, pass/fail normalised.
    pub(crate) fn thresholds(&self) -> Vec<Threshold> {
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
pub(crate) fn parse_summary(bytes: &[u8], path: &Path) -> Result<Summary, Error> {
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
pub(crate) fn parse(bytes: &[u8], path: &Path, metric: &str) -> Result<SummaryRound, Error> {
    round_stats(&parse_summary(bytes, path)?, path, metric)
}

/// The round figures of `metric` in a parsed summary; an error naming the
/// file when the metric or its p(99) is missing.
pub(crate) fn round_stats(
    summary: &Summary,
    path: &Path,
    metric: &str,
) -> Result<SummaryRound, Error> {
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
