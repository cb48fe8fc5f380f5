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

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use serde::Deserializer;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

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

/// One JSON value as the summary reader keeps it: numbers and booleans
/// with their value; strings, arrays and objects by their type only (their
/// contents are skipped, never copied). Enough to read a figure or to say
/// what stands where a figure should.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Field {
    Null,
    Bool(bool),
    Number(f64),
    String,
    Array,
    Object,
}

impl Field {
    fn type_name(self) -> &'static str {
        match self {
            Field::Null => "null",
            Field::Bool(_) => "a boolean",
            Field::Number(_) => "a number",
            Field::String => "a string",
            Field::Array => "an array",
            Field::Object => "an object",
        }
    }
}

/// A parsed summary, before any figure is required of it.
///
/// Parsed straight into these types in one pass (serde, unknown fields
/// skipped with [`IgnoredAny`]) rather than into a `serde_json::Value`
/// tree: a summary is a few KiB, of which a round needs a dozen numbers.
#[derive(Debug, Clone)]
pub struct Summary {
    pub format: SourceFormat,
    /// Metric key (with `{tags}` for machine-readable sub-metrics) and its
    /// object, in the document's key order (sorted, for the object shapes)
    /// or list order. When parsed for one metric, only the metrics a round
    /// reads are kept.
    metrics: Vec<(String, MetricObject)>,
    /// `config.duration` (seconds), when a number.
    duration_s: Option<f64>,
}

impl Summary {
    /// Every metric key (kept) and its values: the `values` object, or for
    /// the legacy export the metric object itself.
    pub fn metrics(&self) -> Vec<(&str, &BTreeMap<String, Field>)> {
        self.metrics
            .iter()
            .filter_map(|(k, m)| Some((k.as_str(), self.values_of(m)?)))
            .collect()
    }

    fn values_of<'a>(&self, m: &'a MetricObject) -> Option<&'a BTreeMap<String, Field>> {
        match self.format {
            SourceFormat::K6SummaryExport => Some(&m.fields),
            _ => m.values.as_ref(),
        }
    }

    /// The thresholds k6 evaluated, pass/fail normalised.
    pub fn thresholds(&self) -> Vec<Threshold> {
        let mut out = Vec::new();
        for (key, m) in &self.metrics {
            let metric = match self.format {
                // Listed under the bare name, without the tags.
                SourceFormat::K6MachineReadable => match &m.name {
                    Some(name) => name.clone(),
                    None => continue,
                },
                _ => key.clone(),
            };
            let Some(thresholds) = &m.thresholds else {
                continue;
            };
            for (expression, v) in thresholds {
                let passed = match (self.format, v) {
                    // Legacy export: `true` means the threshold FAILED.
                    (SourceFormat::K6SummaryExport, ThresholdValue::Bool(failed)) => !failed,
                    (_, ThresholdValue::Object { ok: Some(ok) }) => *ok,
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

/// Parses a k6 summary of any of the three shapes, keeping every metric.
pub fn parse_summary(bytes: &[u8], path: &Path) -> Result<Summary, Error> {
    parse_keeping(bytes, path, None)
}

/// Parses a k6 summary and extracts the figures of `metric`
/// (normally `http_req_duration`). The `{expected_response:true}`
/// sub-metric is preferred when present, so that latencies cover
/// successful requests only, as in recomputed rounds.
pub fn parse(bytes: &[u8], path: &Path, metric: &str) -> Result<SummaryRound, Error> {
    let preferred = preferred_key(metric);
    let wanted = [preferred.as_str(), metric, REQUESTS_METRIC, FAILED_METRIC];
    round_stats(&parse_keeping(bytes, path, Some(&wanted))?, path, metric)
}

const REQUESTS_METRIC: &str = "http_reqs";
const FAILED_METRIC: &str = "http_req_failed";

fn preferred_key(metric: &str) -> String {
    format!("{metric}{{expected_response:true}}")
}

/// Parses a summary, keeping only the metrics in `wanted` (all when
/// `None`) of the object shapes: the others are skipped as they are read,
/// save the two facts that tell the shapes apart.
fn parse_keeping(bytes: &[u8], path: &Path, wanted: Option<&[&str]>) -> Result<Summary, Error> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(Error::at(
            path,
            None,
            "empty file: expected a k6 summary (did the test run crash before writing it?)",
        ));
    }
    let doc = match scan::document(bytes, wanted) {
        Some(doc) => Some(doc),
        None => read_document(bytes, path, wanted)?,
    };
    let not_a_summary = || {
        Error::at(
            path,
            None,
            "not a k6 summary: expected handleSummary() data, a --summary-export file or a machine-readable summary",
        )
    };
    let Some(doc) = doc else {
        return Err(not_a_summary());
    };
    let format = doc.format().ok_or_else(not_a_summary)?;
    let metrics = match format {
        SourceFormat::K6MachineReadable => doc
            .results
            .flatten()
            .unwrap_or_default()
            .into_iter()
            .filter_map(|m| {
                let Metric::Kept(m) = m else { return None };
                let name = m.name.as_deref()?;
                let tags = match &m.tags {
                    Some(t) if !t.is_empty() => {
                        let inner: Vec<String> = t
                            .iter()
                            .map(|(k, v)| format!("{k}:{}", v.as_deref().unwrap_or_default()))
                            .collect();
                        format!("{{{}}}", inner.join(","))
                    }
                    _ => String::new(),
                };
                Some((format!("{name}{tags}"), m))
            })
            .collect(),
        _ => doc
            .metrics
            .unwrap_or_default()
            .into_iter()
            .filter_map(|(k, m)| match m {
                Metric::Kept(m) => Some((k.into_owned(), m)),
                _ => None,
            })
            .collect(),
    };
    Ok(Summary {
        format,
        metrics,
        duration_s: doc.duration_s,
    })
}

/// The serde reader of [`parse_keeping`]: any summary, and serde_json's
/// message for a file that is not valid JSON. `None` when the document is
/// not an object.
fn read_document<'a>(
    bytes: &'a [u8],
    path: &Path,
    wanted: Option<&[&str]>,
) -> Result<Option<Document<'a>>, Error> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    DocumentSeed { wanted }
        .deserialize(&mut de)
        .and_then(|doc| de.end().map(|()| doc))
        .map_err(|e| {
            // Skipped values report some faults in other words ("invalid
            // number" for a file cut inside one); a bad file is rare, so it
            // is read once more the plain way for serde_json's usual message.
            let e = serde_json::from_slice::<serde_json::Value>(bytes)
                .err()
                .unwrap_or(e);
            let line = (e.line() > 0).then_some(e.line() as u64);
            Error::at(path, line, format!("not valid JSON: {e}"))
        })
}

/// The round figures of `metric` in a parsed summary; an error naming the
/// file when the metric or its p(99) is missing.
pub fn round_stats(summary: &Summary, path: &Path, metric: &str) -> Result<SummaryRound, Error> {
    let format = summary.format;
    let metrics = summary.metrics();
    // The first of a name wins (a machine-readable list may repeat one).
    let find = |name: &str| metrics.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);

    let preferred = preferred_key(metric);
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

    let num = |values: &BTreeMap<String, Field>, key: &str| -> Result<Option<f64>, Error> {
        match values.get(key) {
            None | Some(Field::Null) => Ok(None),
            Some(Field::Number(v)) => {
                let v = *v;
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
                    other.type_name()
                ),
            )),
        }
    };

    let p99_ms = num(trend, "p(99)")?.ok_or_else(|| {
        let stats: Vec<&str> = trend.keys().map(String::as_str).filter(|k| *k != "thresholds").collect();
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

    let requests = find(REQUESTS_METRIC);
    let count = match requests {
        Some(v) => num(v, "count")?.map(|c| c as u64),
        None => num(trend, "count")?.map(|c| c as u64),
    };
    let throughput_rps = match requests {
        Some(v) => num(v, "rate")?.or_else(|| {
            // The machine-readable summary's counters carry no rate.
            let secs = summary.duration_s?;
            Some(count? as f64 / secs).filter(|r| r.is_finite())
        }),
        None => None,
    };
    // http_req_failed is a Rate whose `rate` is the failed share. The
    // legacy export renames it `value` (always 0 before k6 v0.30, which had
    // no http_req_failed metric anyway).
    let error_rate = match find(FAILED_METRIC) {
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
    })
}

// ---------------------------------------------------------------------------
// The document model and its deserialisers. A key that appears twice
// counts with its last value, as it did when summaries were read into
// `serde_json::Value` maps.

/// The top level of a summary, as far as the three shapes need it.
#[derive(Debug, Default, PartialEq)]
struct Document<'a> {
    /// A `version` key is present (machine-readable summaries).
    has_version: bool,
    /// `results`: `None` when absent or not an object; inside, the
    /// `results.metrics` list when it is one.
    results: Option<Option<Vec<Metric>>>,
    /// `metrics`, when it is an object: key → metric.
    /// Keys borrowed from the file: most metrics are skipped, and only the
    /// kept ones are copied.
    metrics: Option<Vec<(Cow<'a, str>, Metric)>>,
    duration_s: Option<f64>,
}

impl Document<'_> {
    /// Tells the shape apart by content.
    fn format(&self) -> Option<SourceFormat> {
        if self.has_version && self.results.is_some() {
            return Some(SourceFormat::K6MachineReadable);
        }
        let metrics = self.metrics.as_ref()?;
        let wrapped = metrics.iter().any(|(_, m)| m.has_values_object());
        if wrapped {
            Some(SourceFormat::K6HandleSummary)
        } else if metrics
            .iter()
            .all(|(_, m)| !matches!(m, Metric::NotAnObject))
        {
            Some(SourceFormat::K6SummaryExport)
        } else {
            None
        }
    }
}

/// One metric of the `metrics` object or the `results.metrics` list.
#[derive(Debug, PartialEq)]
enum Metric {
    Kept(MetricObject),
    /// A metric the caller does not read: only whether its `values` is an
    /// object (the mark of `handleSummary()` data).
    Skipped {
        values_object: bool,
    },
    NotAnObject,
}

impl Metric {
    fn has_values_object(&self) -> bool {
        match self {
            Metric::Kept(m) => m.values.is_some(),
            Metric::Skipped { values_object } => *values_object,
            Metric::NotAnObject => false,
        }
    }
}

/// A metric object: every key with its value's type (the legacy export
/// keeps the figures here), and the parts the shapes nest.
#[derive(Debug, Clone, Default, PartialEq)]
struct MetricObject {
    fields: BTreeMap<String, Field>,
    /// `values`, when an object.
    values: Option<BTreeMap<String, Field>>,
    /// `thresholds`, when an object: expression → outcome.
    thresholds: Option<BTreeMap<String, ThresholdValue>>,
    /// `name`, when a string (machine-readable list entries).
    name: Option<String>,
    /// `tags`, when an object: tag → value when a string.
    tags: Option<BTreeMap<String, Option<String>>>,
}

/// What a threshold entry says.
#[derive(Debug, Clone, Copy, PartialEq)]
enum ThresholdValue {
    Bool(bool),
    /// An object, with its `ok` when a boolean.
    Object {
        ok: Option<bool>,
    },
    Other,
}

/// Reads a map key without copying it when it has no escapes.
struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = Cow<'de, str>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Cow<'de, str>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_string()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v))
    }
}

/// A value read by its type: an object or an array by a [`Reader`], a
/// scalar kept as a [`Field`].
enum Shaped<M, S> {
    Map(M),
    Seq(S),
    Other(Field),
}

/// What to make of a value when it is an object or an array.
trait Reader<'de>: Sized {
    type Map;
    type Seq;
    fn map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Map, A::Error>;
    fn seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Seq, A::Error>;
}

/// Skips the elements of an array.
fn skip_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
    while seq.next_element::<IgnoredAny>()?.is_some() {}
    Ok(())
}

/// Reads one value with a [`Reader`].
struct Shape<R>(R);

impl<'de, R: Reader<'de>> DeserializeSeed<'de> for Shape<R> {
    type Value = Shaped<R::Map, R::Seq>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, R: Reader<'de>> Visitor<'de> for Shape<R> {
    type Value = Shaped<R::Map, R::Seq>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(Shaped::Other(Field::Bool(v)))
    }
    // As serde_json::Number::as_f64 converts them.
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Shaped::Other(Field::Number(v as f64)))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Shaped::Other(Field::Number(v as f64)))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Ok(Shaped::Other(Field::Number(v)))
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(Shaped::Other(Field::String))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Shaped::Other(Field::Null))
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Shaped::Other(Field::Null))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        self.0.seq(seq).map(Shaped::Seq)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        self.0.map(map).map(Shaped::Map)
    }
}

/// Skips a value, keeping its type.
struct Skip;

impl<'de> Reader<'de> for Skip {
    type Map = ();
    type Seq = ();
    fn map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(())
    }
    fn seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        skip_seq(seq)
    }
}

fn field<'de, A: MapAccess<'de>>(map: &mut A) -> Result<Field, A::Error> {
    Ok(match map.next_value_seed(Shape(Skip))? {
        Shaped::Map(()) => Field::Object,
        Shaped::Seq(()) => Field::Array,
        Shaped::Other(f) => f,
    })
}

/// An object of figures (`values`, or a legacy export metric).
struct Fields;

impl<'de> Reader<'de> for Fields {
    type Map = BTreeMap<String, Field>;
    type Seq = ();
    fn map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Map, A::Error> {
        let mut out = BTreeMap::new();
        while let Some(key) = map.next_key_seed(Key)? {
            let value = field(&mut map)?;
            out.insert(key.into_owned(), value);
        }
        Ok(out)
    }
    fn seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        skip_seq(seq)
    }
}

/// A `thresholds` object: expression → outcome.
struct Thresholds;

impl<'de> Reader<'de> for Thresholds {
    type Map = BTreeMap<String, ThresholdValue>;
    type Seq = ();
    fn map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Map, A::Error> {
        let mut out = BTreeMap::new();
        while let Some(key) = map.next_key_seed(Key)? {
            let value = match map.next_value_seed(Shape(OkFlag))? {
                Shaped::Map(ok) => ThresholdValue::Object { ok },
                Shaped::Other(Field::Bool(b)) => ThresholdValue::Bool(b),
                _ => ThresholdValue::Other,
            };
            out.insert(key.into_owned(), value);
        }
        Ok(out)
    }
    fn seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        skip_seq(seq)
    }
}

/// A threshold object's `ok`, when a boolean.
struct OkFlag;

impl<'de> Reader<'de> for OkFlag {
    type Map = Option<bool>;
    type Seq = ();
    fn map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Map, A::Error> {
        let mut ok = None;
        while let Some(key) = map.next_key_seed(Key)? {
            if key == "ok" {
                ok = match field(&mut map)? {
                    Field::Bool(b) => Some(b),
                    _ => None,
                };
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(ok)
    }
    fn seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        skip_seq(seq)
    }
}

/// A string's contents, or the type of what stands there instead.
enum Text {
    Str(String),
    Other(Field),
}

struct TextSeed;

impl<'de> DeserializeSeed<'de> for TextSeed {
    type Value = Text;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Text, D::Error> {
        d.deserialize_any(TextVisitor)
    }
}

struct TextVisitor;

impl<'de> Visitor<'de> for TextVisitor {
    type Value = Text;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Text, E> {
        Ok(Text::Str(v.to_string()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Text, E> {
        Ok(Text::Str(v))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Text, E> {
        Ok(Text::Other(Field::Bool(v)))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Text, E> {
        Ok(Text::Other(Field::Number(v as f64)))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Text, E> {
        Ok(Text::Other(Field::Number(v as f64)))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Text, E> {
        Ok(Text::Other(Field::Number(v)))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Text, E> {
        Ok(Text::Other(Field::Null))
    }
    fn visit_none<E: de::Error>(self) -> Result<Text, E> {
        Ok(Text::Other(Field::Null))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Text, A::Error> {
        skip_seq(seq).map(|()| Text::Other(Field::Array))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Text, A::Error> {
        Skip.map(map).map(|()| Text::Other(Field::Object))
    }
}

/// A machine-readable metric's `tags`: tag → value when a string.
struct Tags;

impl<'de> Reader<'de> for Tags {
    type Map = BTreeMap<String, Option<String>>;
    type Seq = ();
    fn map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Map, A::Error> {
        let mut out = BTreeMap::new();
        while let Some(key) = map.next_key_seed(Key)? {
            let value = match map.next_value_seed(TextSeed)? {
                Text::Str(s) => Some(s),
                Text::Other(_) => None,
            };
            out.insert(key.into_owned(), value);
        }
        Ok(out)
    }
    fn seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        skip_seq(seq)
    }
}

/// One metric object; `keep: false` skips all but whether its `values` is
/// an object.
struct MetricReader {
    keep: bool,
}

impl<'de> Reader<'de> for MetricReader {
    type Map = Metric;
    type Seq = ();
    fn map<A: MapAccess<'de>>(self, mut map: A) -> Result<Metric, A::Error> {
        if !self.keep {
            let mut values_object = false;
            while let Some(key) = map.next_key_seed(Key)? {
                if key == "values" {
                    values_object = field(&mut map)? == Field::Object;
                } else {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            return Ok(Metric::Skipped { values_object });
        }
        let mut m = MetricObject::default();
        while let Some(key) = map.next_key_seed(Key)? {
            let kind = match key.as_ref() {
                "values" => match map.next_value_seed(Shape(Fields))? {
                    Shaped::Map(values) => {
                        m.values = Some(values);
                        Field::Object
                    }
                    Shaped::Seq(()) => {
                        m.values = None;
                        Field::Array
                    }
                    Shaped::Other(f) => {
                        m.values = None;
                        f
                    }
                },
                "thresholds" => match map.next_value_seed(Shape(Thresholds))? {
                    Shaped::Map(t) => {
                        m.thresholds = Some(t);
                        Field::Object
                    }
                    Shaped::Seq(()) => {
                        m.thresholds = None;
                        Field::Array
                    }
                    Shaped::Other(f) => {
                        m.thresholds = None;
                        f
                    }
                },
                "tags" => match map.next_value_seed(Shape(Tags))? {
                    Shaped::Map(t) => {
                        m.tags = Some(t);
                        Field::Object
                    }
                    Shaped::Seq(()) => {
                        m.tags = None;
                        Field::Array
                    }
                    Shaped::Other(f) => {
                        m.tags = None;
                        f
                    }
                },
                "name" => match map.next_value_seed(TextSeed)? {
                    Text::Str(name) => {
                        m.name = Some(name);
                        Field::String
                    }
                    Text::Other(f) => {
                        m.name = None;
                        f
                    }
                },
                _ => field(&mut map)?,
            };
            m.fields.insert(key.into_owned(), kind);
        }
        Ok(Metric::Kept(m))
    }
    fn seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        skip_seq(seq)
    }
}

fn metric<S>(shaped: Shaped<Metric, S>) -> Metric {
    match shaped {
        Shaped::Map(m) => m,
        _ => Metric::NotAnObject,
    }
}

/// The `metrics` object: keeps the `wanted` metrics (all when `None`).
struct MetricsReader<'w> {
    wanted: Option<&'w [&'w str]>,
}

impl<'de> Reader<'de> for MetricsReader<'_> {
    type Map = Vec<(Cow<'de, str>, Metric)>;
    type Seq = ();
    fn map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Map, A::Error> {
        // Sorted and deduplicated as a JSON object map: the last of a key wins.
        let mut out: BTreeMap<Cow<'de, str>, Metric> = BTreeMap::new();
        while let Some(key) = map.next_key_seed(Key)? {
            let keep = self.wanted.is_none_or(|w| w.contains(&key.as_ref()));
            let m = metric(map.next_value_seed(Shape(MetricReader { keep }))?);
            out.insert(key, m);
        }
        Ok(out.into_iter().collect())
    }
    fn seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        skip_seq(seq)
    }
}

/// The `results` object of a machine-readable summary: its `metrics` list
/// when it is one.
struct ResultsReader;

impl<'de> Reader<'de> for ResultsReader {
    type Map = Option<Vec<Metric>>;
    type Seq = ();
    fn map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Map, A::Error> {
        let mut metrics = None;
        while let Some(key) = map.next_key_seed(Key)? {
            if key == "metrics" {
                metrics = match map.next_value_seed(Shape(MetricList))? {
                    Shaped::Seq(list) => Some(list),
                    _ => None,
                };
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(metrics)
    }
    fn seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        skip_seq(seq)
    }
}

struct MetricList;

impl<'de> Reader<'de> for MetricList {
    type Map = ();
    type Seq = Vec<Metric>;
    fn map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        Skip.map(map)
    }
    fn seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<Metric>, A::Error> {
        let mut out = Vec::new();
        while let Some(m) = seq.next_element_seed(Shape(MetricReader { keep: true }))? {
            out.push(metric(m));
        }
        Ok(out)
    }
}

/// `config`: its `duration`, when a number.
struct ConfigReader;

impl<'de> Reader<'de> for ConfigReader {
    type Map = Option<f64>;
    type Seq = ();
    fn map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Map, A::Error> {
        let mut duration = None;
        while let Some(key) = map.next_key_seed(Key)? {
            if key == "duration" {
                duration = match field(&mut map)? {
                    Field::Number(v) => Some(v),
                    _ => None,
                };
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(duration)
    }
    fn seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        skip_seq(seq)
    }
}

/// The whole document: `None` when it is not an object.
struct DocumentSeed<'w> {
    wanted: Option<&'w [&'w str]>,
}

impl<'de> DeserializeSeed<'de> for DocumentSeed<'_> {
    type Value = Option<Document<'de>>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        Ok(match Shape(self).deserialize(d)? {
            Shaped::Map(doc) => Some(doc),
            _ => None,
        })
    }
}

impl<'de> Reader<'de> for DocumentSeed<'_> {
    type Map = Document<'de>;
    type Seq = ();
    fn map<A: MapAccess<'de>>(self, mut map: A) -> Result<Document<'de>, A::Error> {
        let mut doc = Document::default();
        while let Some(key) = map.next_key_seed(Key)? {
            match key.as_ref() {
                "version" => {
                    doc.has_version = true;
                    map.next_value::<IgnoredAny>()?;
                }
                "results" => {
                    doc.results = match map.next_value_seed(Shape(ResultsReader))? {
                        Shaped::Map(list) => Some(list),
                        _ => None,
                    };
                }
                "metrics" => {
                    let reader = MetricsReader {
                        wanted: self.wanted,
                    };
                    doc.metrics = match map.next_value_seed(Shape(reader))? {
                        Shaped::Map(m) => Some(m),
                        _ => None,
                    };
                }
                "config" => {
                    doc.duration_s = match map.next_value_seed(Shape(ConfigReader))? {
                        Shaped::Map(d) => d,
                        _ => None,
                    };
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(doc)
    }
    fn seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        skip_seq(seq)
    }
}

mod scan;

#[cfg(test)]
mod reference;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

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

    /// A tiny deterministic generator of summary-like documents: the keys
    /// the reader looks at and others, every JSON type where a figure
    /// should be, repeated keys, nesting in all three shapes.
    struct Gen(u64);

    impl Gen {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
        fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
            items[self.below(items.len() as u64) as usize]
        }
        fn scalar(&mut self) -> String {
            match self.below(12) {
                0 => "null".into(),
                1 => "true".into(),
                2 => "false".into(),
                3 => "\"12\"".into(),
                4 => "[1, 2]".into(),
                5 => "{\"a\": {\"b\": [null]}}".into(),
                6 => "-3.5".into(),
                7 => "1e16".into(),
                8 => format!("{}", self.below(5000)),
                9 => "18446744073709551615".into(),
                10 => "0.000123".into(),
                _ => format!("{}.{}", self.below(900), self.below(1000)),
            }
        }
        /// Mostly a plausible figure.
        fn figure(&mut self) -> String {
            if self.below(6) == 0 {
                self.scalar()
            } else {
                format!("{}.{}", self.below(900), self.below(1000))
            }
        }
        /// An object with `required` keys (mostly) and some of `extra`,
        /// a key sometimes twice.
        fn object(
            &mut self,
            required: &[&str],
            extra: &[&str],
            value: &mut dyn FnMut(&mut Gen, &str) -> String,
        ) -> String {
            let mut keys: Vec<&str> = required
                .iter()
                .copied()
                .filter(|_| self.below(8) != 0)
                .collect();
            for _ in 0..self.below(4) {
                let all: Vec<&str> = required.iter().chain(extra).copied().collect();
                if !all.is_empty() {
                    keys.push(self.pick(&all));
                }
            }
            let mut parts = Vec::new();
            for k in keys {
                let v = value(self, k);
                parts.push(format!("{}: {v}", serde_json::to_string(k).unwrap()));
            }
            format!("{{{}}}", parts.join(", "))
        }
        fn figures(&mut self) -> String {
            self.object(
                &["p(99)", "avg", "med", "count", "rate"],
                &[
                    "p(50)",
                    "p(90)",
                    "p(95)",
                    "min",
                    "max",
                    "value",
                    "passes",
                    "thresholds",
                ],
                &mut |g, k| {
                    if k == "thresholds" {
                        g.thresholds()
                    } else {
                        g.figure()
                    }
                },
            )
        }
        fn thresholds(&mut self) -> String {
            self.object(
                &["p(95)<500"],
                &["rate>0.9", "p(99) < 1000"],
                &mut |g, _| match g.below(4) {
                    0 => "true".into(),
                    1 => "false".into(),
                    2 => format!("{{\"ok\": {}}}", g.scalar()),
                    _ => g.scalar(),
                },
            )
        }
        /// A metric object: `wrapped` puts the figures under `values`.
        fn metric(&mut self, wrapped: bool, name: Option<&str>) -> String {
            if self.below(12) == 0 {
                return self.scalar();
            }
            let figures = self.figures();
            let mut body = if wrapped {
                let values = if self.below(10) == 0 {
                    self.scalar()
                } else {
                    figures
                };
                format!("{{\"type\": \"trend\", \"values\": {values}")
            } else {
                figures[..figures.len() - 1].to_string()
            };
            if let Some(name) = name {
                body.push_str(&format!(", \"name\": \"{name}\""));
                let tags = self.object(&[], &["expected_response", "status"], &mut |g, _| {
                    if g.below(3) == 0 {
                        g.scalar()
                    } else {
                        "\"true\"".into()
                    }
                });
                body.push_str(&format!(", \"tags\": {tags}"));
            }
            if self.below(3) == 0 {
                body.push_str(&format!(", \"thresholds\": {}", self.thresholds()));
            }
            if body.starts_with("{,") {
                body.replace_range(..2, "{");
            }
            body.push('}');
            body
        }
        fn document(&mut self) -> String {
            const METRICS: [&str; 4] = [
                "http_req_duration",
                "http_req_duration{expected_response:true}",
                "http_reqs",
                "http_req_failed",
            ];
            const OTHERS: [&str; 2] = ["iterations", "data_sent"];
            match self.below(3) {
                // handleSummary() data and the legacy export.
                shape @ (0 | 1) => self.object(
                    &["metrics"],
                    &["root_group", "options", "config"],
                    &mut |g, k| match k {
                        "metrics" if g.below(10) != 0 => {
                            g.object(&METRICS, &OTHERS, &mut |g, _| g.metric(shape == 0, None))
                        }
                        "config" => format!("{{\"duration\": {}}}", g.figure()),
                        _ => g.scalar(),
                    },
                ),
                // Machine-readable.
                _ => self.object(
                    &["version", "results", "config"],
                    &["metadata", "metrics"],
                    &mut |g, k| match k {
                        "results" if g.below(10) != 0 => {
                            let n = g.below(6);
                            let list: Vec<String> = (0..n)
                                .map(|_| {
                                    let name = g.pick(&[
                                        "http_req_duration",
                                        "http_reqs",
                                        "http_req_failed",
                                        "iterations",
                                    ]);
                                    g.metric(true, Some(name))
                                })
                                .collect();
                            format!("{{\"metrics\": [{}], \"x\": 1}}", list.join(", "))
                        }
                        "config" => format!("{{\"duration\": {}}}", g.figure()),
                        "metrics" => g.object(&METRICS, &[], &mut |g, _| g.metric(true, None)),
                        _ => g.scalar(),
                    },
                ),
            }
        }
    }

    fn same_outcome(doc: &[u8]) -> Result<(), String> {
        let path = Path::new("runs/r/e/round-1.json");
        let ours = parse(doc, path, "http_req_duration");
        let theirs = reference::parse(doc, path, "http_req_duration");
        match (&ours, &theirs) {
            (Ok(a), Ok(b)) => {
                if (a.format, &a.stats, &a.metric_key) != (b.format, &b.stats, &b.metric_key) {
                    return Err(format!("{a:?}\nvs\n{b:?}"));
                }
            }
            (Err(a), Err(b)) if a.to_string() == b.to_string() => {}
            _ => return Err(format!("{ours:?}\nvs\n{theirs:?}")),
        }
        let ours = parse_summary(doc, path).map(|s| (s.format, s.thresholds()));
        let theirs = reference::parse_summary(doc, path).map(|s| (s.format, s.thresholds()));
        match (&ours, &theirs) {
            (Ok(a), Ok(b)) if a == b => Ok(()),
            (Err(a), Err(b)) if a.to_string() == b.to_string() => Ok(()),
            _ => Err(format!("summary: {ours:?}\nvs\n{theirs:?}")),
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 2000, ..Default::default() })]
        /// The typed reader reads every document as the `Value` reader
        /// did: the same round or the same error, the same thresholds.
        #[test]
        fn typed_reader_agrees_with_the_value_reader(seed in 1u64..u64::MAX, cut in 0usize..4000) {
            let doc = Gen(seed).document();
            if let Err(e) = same_outcome(doc.as_bytes()) {
                return Err(proptest::test_runner::TestCaseError::fail(format!("{doc}\n{e}")));
            }
            // Cut short: the same syntax error.
            let cut = cut.min(doc.len());
            if doc.is_char_boundary(cut) && let Err(e) = same_outcome(&doc.as_bytes()[..cut]) {
                return Err(proptest::test_runner::TestCaseError::fail(format!("{}\n{e}", &doc[..cut])));
            }
        }
    }

    const WANTED: [&str; 4] = [
        "http_req_duration{expected_response:true}",
        "http_req_duration",
        "http_reqs",
        "http_req_failed",
    ];

    /// When the hand-written scanner reads a document (it may leave any
    /// document to serde), it reads what the serde reader reads.
    fn scanner_agrees(doc: &[u8]) -> Result<bool, String> {
        let mut read = false;
        for wanted in [None, Some(&WANTED[..])] {
            let Some(ours) = scan::document(doc, wanted) else {
                continue;
            };
            read = true;
            match read_document(doc, Path::new("x"), wanted) {
                Ok(Some(theirs)) if theirs == ours => {}
                other => return Err(format!("scanner: {ours:?}\nserde: {other:?}")),
            }
        }
        Ok(read)
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 3000, ..Default::default() })]
        /// Generated summaries, cut short or with one byte put in or
        /// changed (quotes, escapes, digits, brackets, an exponent): the
        /// scanner never reads one differently from serde.
        #[test]
        fn scanner_reads_as_serde_does(
            seed in 1u64..u64::MAX,
            cut in 0usize..4000,
            at in 0usize..4000,
            byte in proptest::sample::select(&b"\"\\,:{}[]0123456789.-eE tfn\x7f\x01\xc3"[..]),
            replace in proptest::bool::ANY,
        ) {
            let doc = Gen(seed).document().into_bytes();
            let mut changed = doc.clone();
            let at = at.min(changed.len());
            if replace && at < changed.len() {
                changed[at] = byte;
            } else {
                changed.insert(at, byte);
            }
            for bytes in [&doc[..], &doc[..cut.min(doc.len())], &changed[..]] {
                if let Err(e) = scanner_agrees(bytes) {
                    let text = String::from_utf8_lossy(bytes);
                    return Err(proptest::test_runner::TestCaseError::fail(format!("{text}\n{e}")));
                }
            }
        }

        /// Any figure k6 could write, and integers past u64: the same f64
        /// as serde_json's.
        #[test]
        fn scanner_reads_numbers_as_serde_does(
            v in proptest::num::f64::POSITIVE | proptest::num::f64::NEGATIVE | proptest::num::f64::ZERO,
            digits in "-?[1-9][0-9]{0,40}",
        ) {
            for number in [format!("{v}"), digits.clone(), format!("{v:.3}")] {
                let doc = format!("{{\"metrics\": {{\"http_reqs\": {{\"values\": {{\"rate\": {number}}}}}}}}}");
                let read = scanner_agrees(doc.as_bytes()).map_err(proptest::test_runner::TestCaseError::fail)?;
                proptest::prop_assert!(read, "{doc}");
            }
        }
    }

    /// The scanner, not serde, reads the summaries perfdash meets most
    /// (the demo's, real handleSummary() data); otherwise agreeing with
    /// serde would prove little and gain nothing.
    #[test]
    fn scanner_reads_common_summaries() {
        let demo = br#"{"root_group":{"name":"","path":"","groups":[],"checks":[{"name":"status is 2xx","passes":1199,"fails":0}]},"options":{"summaryTrendStats":["avg","min","med","max","p(90)","p(95)","p(99)"],"summaryTimeUnit":"","noColor":false},"state":{"isStdOutTTY":false,"testRunDurationMs":60044.551308},"metrics":{"checks":{"type":"rate","contains":"default","values":{"fails":0,"passes":1199,"rate":1}},"http_req_duration":{"type":"trend","contains":"time","values":{"avg":54.352008,"max":195.969394,"med":40.79864,"min":14.779752,"p(90)":75.816232,"p(95)":89.892903,"p(99)":108.246503},"thresholds":{"p(99)<300":{"ok":true}}},"http_req_duration{expected_response:true}":{"type":"trend","contains":"time","values":{"avg":54.352008,"max":195.969394,"med":40.79864,"min":14.779752,"p(90)":75.816232,"p(95)":89.892903,"p(99)":108.246503}},"http_req_failed":{"type":"rate","contains":"default","values":{"fails":1199,"passes":0,"rate":0},"thresholds":{"rate<0.01":{"ok":true}}},"http_reqs":{"type":"counter","contains":"default","values":{"count":1199,"rate":19.968506282105434}},"vus":{"type":"gauge","contains":"default","values":{"max":5,"min":1,"value":2}}}}"#;
        assert_eq!(scanner_agrees(demo), Ok(true));
        let round = parse(demo, Path::new("x"), "http_req_duration").unwrap();
        assert_eq!(round.stats.p99_ms, 108.246503);
        assert_eq!(round.stats.count, Some(1199));
        let mut generated = 0;
        for seed in 1..3000u64 {
            let doc = Gen(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15)).document();
            if scanner_agrees(doc.as_bytes()).unwrap() {
                generated += 1;
            }
        }
        assert!(
            generated >= 600,
            "the scanner read only {generated} of 3000"
        );
    }

    /// Every k6 summary in the fixtures, and the demo's: the same outcome.
    #[test]
    fn typed_reader_agrees_on_real_summaries() {
        let mut dirs = vec![std::path::PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures"
        ))];
        dirs.extend(crate::shared_fixtures::dir());
        let mut checked = 0;
        for dir in dirs {
            for entry in walkdir::WalkDir::new(dir)
                .into_iter()
                .filter_map(Result::ok)
            {
                let path = entry.path();
                if path.extension().is_none_or(|e| e != "json") {
                    continue;
                }
                let bytes = std::fs::read(path).unwrap();
                if let Err(e) = same_outcome(&bytes) {
                    panic!("{}: {e}", path.display());
                }
                if let Err(e) = scanner_agrees(&bytes) {
                    panic!("{}: {e}", path.display());
                }
                checked += 1;
            }
        }
        assert!(checked >= 10, "only {checked} JSON files");
    }

    /// The generator above reaches rounds of all three shapes, not only
    /// errors (otherwise agreeing would prove little).
    #[test]
    fn generated_documents_cover_every_shape() {
        let mut rounds = std::collections::BTreeMap::new();
        for seed in 1..3000u64 {
            let doc = Gen(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15)).document();
            if let Ok(r) = parse(doc.as_bytes(), Path::new("x"), "http_req_duration") {
                *rounds.entry(format!("{:?}", r.format)).or_insert(0) += 1;
            }
        }
        for shape in ["K6HandleSummary", "K6SummaryExport", "K6MachineReadable"] {
            assert!(rounds.get(shape).copied().unwrap_or(0) >= 20, "{rounds:?}");
        }
    }
}
