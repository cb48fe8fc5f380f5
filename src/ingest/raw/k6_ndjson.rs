//! k6 `--out json` (NDJSON, plain or gzip; FORMATS.md §1.4).
//!
//! The scan searches each block for the metric's name as a JSON string
//! (`"http_req_duration"`) with a SIMD substring search and only looks at
//! the lines where it occurs; all other metrics' lines (most of the file)
//! are skipped without being parsed. k6 writes every Point record with the
//! same key order
//! (`{"metric":"<name>","type":"Point","data":{"time":…,"value":…,"tags":{…}}}`):
//! a line that starts that way has its fields picked out directly. A line
//! in any other key order (a file re-serialised by jq or another tool) is
//! walked once by the scan of `k6_any_order`, which
//! keeps the few fields a sample needs as slices of the line; what that
//! scan is not sure to read as serde_json does (escapes in a kept value,
//! repeated keys, invalid JSON) is parsed as JSON into a typed record that
//! skips every field a sample does not need, and that reader reports the
//! errors. Either way a file reads the same whatever its key order.

use std::borrow::Cow;
use std::fmt;
use std::path::Path;

use memchr::memmem::{Finder, FinderRev};
use serde::Deserializer;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, Visitor};

use super::io::{Fault, ScanEnd, ScanError, open_plain, scan_blocks};
use super::k6_any_order::{Scanned, scan_line};
use super::slices;
use super::time::{parse_f64, parse_rfc3339_micros};
use super::{Grouper, RawContent, RawFile, ReadOptions, Sample, warning};
use crate::error::{Diagnostic, DiagnosticKind, Error};
use crate::ingest::input::InputFile;
use crate::model::SourceFormat;

/// Pre-built searchers for one metric and split tag.
pub(crate) struct Matcher {
    /// k6's own start of a Point line of the metric.
    prefix: Vec<u8>,
    /// The metric's name as a JSON string: every line that can hold one of
    /// its Points contains it.
    name: Finder<'static>,
    pub(super) metric: String,
    pub(super) split_tag: Option<String>,
    expected_response: FinderRev<'static>,
    status: FinderRev<'static>,
    split: Option<FinderRev<'static>>,
}

impl Matcher {
    pub(crate) fn new(metric: &str, split_tag: Option<&str>) -> Matcher {
        let prefix = format!(
            "{{\"metric\":{},\"type\":\"Point\",\"data\":{{\"time\":\"",
            json_string(metric)
        )
        .into_bytes();
        let key = |k: &str| FinderRev::new(format!("{}:", json_string(k)).as_bytes()).into_owned();
        Matcher {
            name: Finder::new(json_string(metric).as_bytes()).into_owned(),
            metric: metric.to_string(),
            split_tag: split_tag.map(str::to_string),
            prefix,
            expected_response: key("expected_response"),
            status: key("status"),
            split: split_tag.map(key),
        }
    }
}

fn json_string(s: &str) -> String {
    serde_json::to_string(s).expect("strings serialise")
}

/// One Point's fields, borrowed from the line.
pub(crate) struct Point<'a> {
    pub sample: Sample,
    pub success: bool,
    /// The split tag's value, still JSON-escaped; empty when absent.
    pub key: &'a [u8],
}

/// Reads a line laid out exactly as k6 writes Points:
/// `{"metric":…,"type":"Point","data":{"time":"…","value":…,"tags":{…}}}`,
/// optionally with k6's `"metadata":{…}` after the tags. `None` when the
/// line departs from that layout in any way (another key order, a negative
/// or unusual number, escapes in the time or the success tags): the JSON
/// reader ([`parse_any_order`]) then decides, so that a file reads the same
/// whatever its key order.
pub(crate) fn parse_point<'a>(m: &Matcher, line: &'a [u8]) -> Option<Point<'a>> {
    let rest = line.strip_prefix(m.prefix.as_slice())?;
    let t_len = memchr::memchr(b'"', rest)?;
    let t_us = parse_rfc3339_micros(&rest[..t_len])?;
    let rest = rest[t_len..].strip_prefix(b"\",\"value\":")?;
    let v_len = memchr::memchr2(b',', b'}', rest)?;
    let number = &rest[..v_len];
    if !is_plain_json_number(number) {
        return None;
    }
    let ms = parse_f64(number)?;
    let mut rest = &rest[v_len..];
    let mut tags: &[u8] = &[];
    if let Some(after) = rest.strip_prefix(b",\"tags\":{") {
        tags = tags_object(after);
        rest = after[tags.len()..].strip_prefix(b"}")?;
    } else if let Some(after) = rest.strip_prefix(b",\"tags\":null") {
        rest = after;
    }
    if let Some(after) = rest.strip_prefix(b",\"metadata\":{") {
        let metadata = tags_object(after);
        rest = after[metadata.len()..].strip_prefix(b"}")?;
    }
    if rest != b"}}" {
        return None;
    }
    let expected_response = tag_value(&m.expected_response, tags);
    let status = match expected_response {
        Some(_) => None,
        None => tag_value(&m.status, tags),
    };
    if expected_response
        .or(status)
        .is_some_and(|v| v.contains(&b'\\'))
    {
        return None;
    }
    let success = success_from_tags(expected_response, status);
    let key = match &m.split {
        Some(f) => tag_value(f, tags).unwrap_or(b""),
        None => b"",
    };
    Some(Point {
        sample: Sample { t_us, ms },
        success,
        key,
    })
}

/// Whether a request succeeded, from its tags' values (without escapes).
pub(super) fn success_from_tags(expected_response: Option<&[u8]>, status: Option<&[u8]>) -> bool {
    match expected_response {
        Some(v) => v != b"false",
        None => match status {
            // Before k6 0.31 there was no expected_response tag: use the
            // status, where 0 means the request never got a response.
            Some(status) => super::time::parse_u64(status).is_some_and(|s| (1..400).contains(&s)),
            None => true,
        },
    }
}

/// A non-negative JSON number (`0`, `12`, `3.25`, `1e-3`): what k6 writes
/// for a value, and what both readers read to the same `f64`.
pub(super) fn is_plain_json_number(s: &[u8]) -> bool {
    let digits = |s: &[u8]| s.iter().take_while(|b| b.is_ascii_digit()).count();
    let int = digits(s);
    if int == 0 || (int > 1 && s[0] == b'0') {
        return false;
    }
    let mut rest = &s[int..];
    if let Some(after) = rest.strip_prefix(b".") {
        let frac = digits(after);
        if frac == 0 {
            return false;
        }
        rest = &after[frac..];
    }
    if let Some(after) = rest.strip_prefix(b"e").or_else(|| rest.strip_prefix(b"E")) {
        let after = after
            .strip_prefix(b"+")
            .or_else(|| after.strip_prefix(b"-"))
            .unwrap_or(after);
        let exp = digits(after);
        if exp == 0 {
            return false;
        }
        rest = &after[exp..];
    }
    rest.is_empty()
}

/// The inside of a JSON object starting right after its `{`, up to (not
/// including) its closing `}`; quotes and escapes respected.
fn tags_object(s: &[u8]) -> &[u8] {
    let mut in_string = false;
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            b'\\' if in_string => i += 1,
            b'"' => in_string = !in_string,
            b'}' if !in_string => return &s[..i],
            _ => {}
        }
        i += 1;
    }
    s
}

/// The raw (still escaped) value of the last `key` in the tags (as a JSON
/// reader keeps the last of a repeated key), when it is a string. `finder`
/// searches for `"key":`; a quote inside a string is escaped, so a match is
/// always a key.
fn tag_value<'a>(finder: &FinderRev<'_>, tags: &'a [u8]) -> Option<&'a [u8]> {
    let at = finder.rfind(tags)? + finder.needle().len();
    let start = at + 1;
    if tags.get(at) != Some(&b'"') {
        return None;
    }
    let mut i = start;
    while i < tags.len() {
        match tags[i] {
            b'\\' => i += 2,
            b'"' => return Some(&tags[start..i]),
            _ => i += 1,
        }
    }
    None
}

/// Decodes a JSON-escaped tag value.
pub(crate) fn unescape(raw: &[u8]) -> String {
    if raw.contains(&b'\\') {
        let mut quoted = Vec::with_capacity(raw.len() + 2);
        quoted.push(b'"');
        quoted.extend_from_slice(raw);
        quoted.push(b'"');
        if let Ok(s) = serde_json::from_slice::<String>(&quoted) {
            return s;
        }
    }
    String::from_utf8_lossy(raw).into_owned()
}

/// Reads a k6 NDJSON file. A large plain file is read by all cores, in
/// slices (`slices`), with the same result as one pass.
pub fn read(file: &InputFile, shown: &Path, opts: &ReadOptions) -> Result<RawFile, Error> {
    let matcher = Matcher::new(&opts.metric, opts.split_tag.as_deref());
    let max_line = opts.limits.max_line_bytes;
    let plan = slices::plan(file, slices::Records::Lines).map_err(|e| Error::io(shown, e))?;
    let (grouper, tail, end) = match plan {
        Some(parts) => {
            let scanned = slices::map(file, &parts, |reader, slice, _last| {
                scan(reader, slice.start, max_line, &matcher)
            })
            .map_err(|e| e.into_error(file, shown))?;
            slices::join(scanned)
        }
        None => {
            let reader = open_plain(file, &opts.limits).map_err(|e| Error::io(shown, e))?;
            scan(reader, 0, max_line, &matcher).map_err(|e| e.into_error(file, shown))?
        }
    };
    let warnings = truncation_warnings(file, shown, tail, &end);
    let groups = grouper.finish(unescape);
    if groups.is_empty() {
        return Err(Error::at(
            shown,
            None,
            format!(
                "no '{}' Point records: is this the right metric (analysis.metric in perfdash.toml)?",
                opts.metric
            ),
        ));
    }
    Ok(RawFile {
        format: SourceFormat::K6Ndjson,
        content: RawContent::Samples {
            groups,
            time_is_start: false,
        },
        warnings,
    })
}

/// Groups the samples of `reader`, whose first byte is at `base` in the
/// file; also where an incomplete last line starts, and how the input ended.
fn scan(
    reader: impl std::io::Read,
    base: u64,
    max_line: usize,
    matcher: &Matcher,
) -> Result<(Grouper, Option<u64>, ScanEnd), ScanError> {
    let mut grouper = Grouper::default();
    let mut tail: Option<u64> = None;
    let end = scan_blocks(reader, max_line, |block, offset, eof| {
        let offset = base + offset;
        let complete = match memchr::memrchr(b'\n', block) {
            Some(i) => i + 1,
            None => 0,
        };
        if eof && complete < block.len() && !block[complete..].trim_ascii().is_empty() {
            tail = Some(offset + complete as u64);
        }
        scan_complete_lines(matcher, &block[..complete], offset, &mut grouper)?;
        Ok(complete)
    })?;
    Ok((grouper, tail, end))
}

/// The hot loop: `lines` holds only complete lines.
pub(crate) fn scan_complete_lines(
    m: &Matcher,
    lines: &[u8],
    offset: u64,
    grouper: &mut Grouper,
) -> Result<(), Fault> {
    let mut pos = 0;
    while let Some(hit) = m.name.find(&lines[pos..]) {
        // `pos` is always the start of a line.
        let at = pos + hit;
        let start = memchr::memrchr(b'\n', &lines[pos..at]).map_or(pos, |i| pos + i + 1);
        let end = at + memchr::memchr(b'\n', &lines[at..]).unwrap_or(lines.len() - at);
        pos = end + 1;
        let line = &lines[start..end];
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        read_line(m, line, grouper).map_err(|msg| Fault::new(offset + start as u64, msg))?;
        if pos >= lines.len() {
            break;
        }
    }
    Ok(())
}

/// One line that mentions the metric: k6's own layout read directly, any
/// other key order by the scan of [`k6_any_order`](super::k6_any_order),
/// and what that scan is unsure of by the JSON reader.
fn read_line(m: &Matcher, line: &[u8], grouper: &mut Grouper) -> Result<(), &'static str> {
    if let Some(point) = parse_point(m, line) {
        grouper.push(point.key, point.sample, point.success);
        return Ok(());
    }
    match scan_line(m, line) {
        Scanned::Point(point) => grouper.push(point.key, point.sample, point.success),
        Scanned::Other => {}
        Scanned::Unsure => {
            if let Some(point) = parse_any_order(m, line)? {
                grouper.push(&point.key, point.sample, point.success);
            }
        }
    }
    Ok(())
}

pub(crate) fn truncation_warnings(
    file: &InputFile,
    shown: &Path,
    tail: Option<u64>,
    end: &ScanEnd,
) -> Vec<Diagnostic> {
    let mut warnings = Vec::new();
    if end.truncated_stream {
        warnings.push(warning(
            DiagnosticKind::Doubtful,
            shown,
            None,
            "the gzip stream is cut short (was k6 stopped mid-write?): the complete lines before the cut were used",
        ));
    }
    if let Some(offset) = tail {
        warnings.push(warning(
            DiagnosticKind::Doubtful,
            shown,
            super::io::line_of_offset(file, offset),
            "the last line is incomplete (no newline at the end: was the load tool stopped mid-write?); \
             it was ignored and the complete lines before it were used",
        ));
    }
    warnings
}

/// A Point read from a line in another key order; `key` is the split tag's
/// value JSON-escaped, as [`Point::key`] is.
pub(crate) struct OwnedPoint {
    pub sample: Sample,
    pub success: bool,
    pub key: Vec<u8>,
}

/// Reads a line that mentions the metric but does not start the way k6
/// writes Points: `None` when it is not a Point of the metric (a Metric
/// record, another metric's Point naming this one in a tag).
pub(crate) fn parse_any_order(
    m: &Matcher,
    line: &[u8],
) -> Result<Option<OwnedPoint>, &'static str> {
    let mut de = serde_json::Deserializer::from_slice(line);
    let record = LineSeed {
        split_tag: m.split_tag.as_deref(),
    }
    .deserialize(&mut de)
    .and_then(|r| de.end().map(|()| r))
    .map_err(|_| "not a JSON object")?;
    let Some(record) = record else {
        return Ok(None);
    };
    if record.kind.as_deref() != Some("Point")
        || record.metric.as_deref() != Some(m.metric.as_str())
    {
        return Ok(None);
    }
    let data = record.data.unwrap_or_default();
    let t_us = data
        .time
        .and_then(|t| parse_rfc3339_micros(t.as_bytes()))
        .ok_or("Point record without a valid data.time")?;
    let ms = data
        .value
        .filter(|v| v.is_finite() && *v >= 0.0)
        .ok_or("data.value is not a non-negative number")?;
    let tags = data.tags.unwrap_or_default();
    // The same rule as the k6-order path.
    let success = match tags.expected_response {
        Some(v) => v != "false",
        None => match tags.status {
            Some(status) => {
                super::time::parse_u64(status.as_bytes()).is_some_and(|s| (1..400).contains(&s))
            }
            None => true,
        },
    };
    let key = match tags.split {
        Some(v) if needs_escape(&v) => {
            let quoted = json_string(&v);
            quoted.as_bytes()[1..quoted.len() - 1].to_vec()
        }
        Some(v) => v.into_owned().into_bytes(),
        None => Vec::new(),
    };
    Ok(Some(OwnedPoint {
        sample: Sample { t_us, ms },
        success,
        key,
    }))
}

/// Whether text would be written with escapes inside a JSON string (so the
/// raw bytes of the k6-order path would differ from it).
fn needs_escape(s: &str) -> bool {
    s.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20)
}

/// One NDJSON record, as far as a sample needs it. A key that appears
/// twice counts with its last value.
#[derive(Default)]
struct Record<'de> {
    kind: Option<Cow<'de, str>>,
    metric: Option<Cow<'de, str>>,
    data: Option<PointData<'de>>,
}

#[derive(Default)]
struct PointData<'de> {
    time: Option<Cow<'de, str>>,
    value: Option<f64>,
    tags: Option<PointTags<'de>>,
}

#[derive(Default)]
struct PointTags<'de> {
    expected_response: Option<Cow<'de, str>>,
    status: Option<Cow<'de, str>>,
    split: Option<Cow<'de, str>>,
}

/// What a value was, for the three levels of a record.
enum Read<'de, T> {
    Str(Cow<'de, str>),
    Number(f64),
    Object(T),
    Other,
}

impl<'de, T> Read<'de, T> {
    fn str(self) -> Option<Cow<'de, str>> {
        match self {
            Read::Str(s) => Some(s),
            _ => None,
        }
    }
    fn object(self) -> Option<T> {
        match self {
            Read::Object(t) => Some(t),
            _ => None,
        }
    }
}

/// How one level of a record reads its object.
trait ObjectReader<'de> {
    type Out;
    fn read<A: MapAccess<'de>>(self, map: A) -> Result<Self::Out, A::Error>;
}

/// Reads any value; an object with its [`ObjectReader`], anything else
/// skipped but for strings and numbers.
struct Any<R>(R);

impl<'de, R: ObjectReader<'de>> DeserializeSeed<'de> for Any<R> {
    type Value = Read<'de, R::Out>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, R: ObjectReader<'de>> Visitor<'de> for Any<R> {
    type Value = Read<'de, R::Out>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Read::Str(Cow::Borrowed(v)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Read::Str(Cow::Owned(v.to_string())))
    }
    // As serde_json::Value::as_f64 reads them.
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Read::Number(v as f64))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Read::Number(v as f64))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Ok(Read::Number(v))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Read::Other)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Read::Other)
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Read::Other)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        self.0.read(map).map(Read::Object)
    }
}

/// Reads a key without copying it when it has no escapes.
struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = Cow<'de, str>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        match Any(NoObject).deserialize(d)? {
            Read::Str(s) => Ok(s),
            _ => Err(de::Error::custom("a key that is not a string")),
        }
    }
}

/// For values whose objects are skipped.
struct NoObject;

impl<'de> ObjectReader<'de> for NoObject {
    type Out = ();
    fn read<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(())
    }
}

/// The record: `None` when the line is JSON but not an object.
struct LineSeed<'t> {
    split_tag: Option<&'t str>,
}

impl<'de> DeserializeSeed<'de> for LineSeed<'_> {
    type Value = Option<Record<'de>>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        Ok(Any(self).deserialize(d)?.object())
    }
}

impl<'de> ObjectReader<'de> for LineSeed<'_> {
    type Out = Record<'de>;
    fn read<A: MapAccess<'de>>(self, mut map: A) -> Result<Record<'de>, A::Error> {
        let mut r = Record::default();
        while let Some(key) = map.next_key_seed(Key)? {
            match key.as_ref() {
                "type" => r.kind = map.next_value_seed(Any(NoObject))?.str(),
                "metric" => r.metric = map.next_value_seed(Any(NoObject))?.str(),
                "data" => {
                    r.data = map
                        .next_value_seed(Any(DataReader {
                            split_tag: self.split_tag,
                        }))?
                        .object()
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(r)
    }
}

struct DataReader<'t> {
    split_tag: Option<&'t str>,
}

impl<'de> ObjectReader<'de> for DataReader<'_> {
    type Out = PointData<'de>;
    fn read<A: MapAccess<'de>>(self, mut map: A) -> Result<PointData<'de>, A::Error> {
        let mut d = PointData::default();
        while let Some(key) = map.next_key_seed(Key)? {
            match key.as_ref() {
                "time" => d.time = map.next_value_seed(Any(NoObject))?.str(),
                "value" => {
                    d.value = match map.next_value_seed(Any(NoObject))? {
                        Read::Number(v) => Some(v),
                        _ => None,
                    }
                }
                "tags" => {
                    d.tags = map
                        .next_value_seed(Any(TagsReader {
                            split_tag: self.split_tag,
                        }))?
                        .object()
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(d)
    }
}

struct TagsReader<'t> {
    split_tag: Option<&'t str>,
}

impl<'de> ObjectReader<'de> for TagsReader<'_> {
    type Out = PointTags<'de>;
    fn read<A: MapAccess<'de>>(self, mut map: A) -> Result<PointTags<'de>, A::Error> {
        let mut t = PointTags::default();
        while let Some(key) = map.next_key_seed(Key)? {
            let slot = if self.split_tag == Some(key.as_ref()) {
                // The split tag may also be one of the two below.
                let value = map.next_value_seed(Any(NoObject))?.str();
                match key.as_ref() {
                    "expected_response" => t.expected_response = value.clone(),
                    "status" => t.status = value.clone(),
                    _ => {}
                }
                t.split = value;
                continue;
            } else {
                match key.as_ref() {
                    "expected_response" => &mut t.expected_response,
                    "status" => &mut t.status,
                    _ => {
                        map.next_value::<IgnoredAny>()?;
                        continue;
                    }
                }
            };
            *slot = map.next_value_seed(Any(NoObject))?.str();
        }
        Ok(t)
    }
}

/// Whether `line` (a file's first line) is a k6 NDJSON record: an object
/// whose `type` is `Metric` or `Point`, with a `metric` or `data` key. Read
/// with every value skipped, so that a one-line summary is not built into
/// a document only to be told apart.
pub(crate) fn is_record(line: &[u8]) -> bool {
    // A record's `type` is the string `Metric` or `Point`, which appears
    // in its bytes as `"Metric"` or `"Point"` unless written with escapes.
    // A k6 summary on one line (2–3 KB) holds neither, and is told apart
    // here without a JSON scan (one per round file of a summary archive).
    let may_be = |word: &[u8]| memchr::memmem::find(line, word).is_some();
    if !may_be(b"\"Metric\"") && !may_be(b"\"Point\"") && memchr::memchr(b'\\', line).is_none() {
        return false;
    }
    probe_is_record(line)
}

/// [`is_record`] by reading the line as JSON, every value skipped.
pub(crate) fn probe_is_record(line: &[u8]) -> bool {
    let mut de = serde_json::Deserializer::from_slice(line);
    let probe = Any(RecordProbe)
        .deserialize(&mut de)
        .and_then(|r| de.end().map(|()| r));
    match probe {
        Ok(Read::Object((kind, has_metric, has_data))) => {
            matches!(kind.as_deref(), Some("Metric" | "Point")) && (has_metric || has_data)
        }
        _ => false,
    }
}

/// `type` when a string; whether `metric` and `data` are there.
struct RecordProbe;

impl<'de> ObjectReader<'de> for RecordProbe {
    type Out = (Option<Cow<'de, str>>, bool, bool);
    fn read<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Out, A::Error> {
        let (mut kind, mut has_metric, mut has_data) = (None, false, false);
        while let Some(key) = map.next_key_seed(Key)? {
            match key.as_ref() {
                "type" => {
                    kind = map.next_value_seed(Any(NoObject))?.str();
                    continue;
                }
                "metric" => has_metric = true,
                "data" => has_data = true,
                _ => {}
            }
            map.next_value::<IgnoredAny>()?;
        }
        Ok((kind, has_metric, has_data))
    }
}
