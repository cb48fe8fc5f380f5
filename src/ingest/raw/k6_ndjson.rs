//! k6 `--out json` (NDJSON, plain or gzip; FORMATS.md §1.4).
//!
//! k6 writes every Point record with the same key order
//! (`{"metric":"<name>","type":"Point","data":{"time":…,"value":…,"tags":{…}}}`),
//! so the scan searches the block for that exact prefix with a SIMD
//! substring search and only looks at the lines where it occurs; all other
//! metrics' lines (most of the file) are skipped without being parsed.
//! Fields are then picked out of the matching line directly. Should a file
//! have been re-serialised with another key order, nothing matches the
//! prefix and a second, slower pass parses each Point line as JSON.

use std::path::Path;

use memchr::memmem::Finder;

use super::io::{Fault, ScanEnd, open_plain, scan_blocks};
use super::time::{parse_f64, parse_rfc3339_micros};
use super::{Grouper, RawContent, RawFile, ReadOptions, Sample, warning};
use crate::error::{Diagnostic, DiagnosticKind, Error};
use crate::ingest::input::InputFile;
use crate::model::SourceFormat;

/// Pre-built searchers for one metric and split tag.
pub(crate) struct Matcher {
    prefix: Vec<u8>,
    line_start: Finder<'static>,
    time: Finder<'static>,
    value: Finder<'static>,
    tags: Finder<'static>,
    expected_response: Finder<'static>,
    status: Finder<'static>,
    split: Option<Finder<'static>>,
}

impl Matcher {
    pub(crate) fn new(metric: &str, split_tag: Option<&str>) -> Matcher {
        let prefix =
            format!("{{\"metric\":{},\"type\":\"Point\"", json_string(metric)).into_bytes();
        let owned = |s: String| Finder::new(s.as_bytes()).into_owned();
        Matcher {
            line_start: Finder::new(&prefix).into_owned(),
            prefix,
            time: owned("\"time\":\"".into()),
            value: owned("\"value\":".into()),
            tags: owned("\"tags\":{".into()),
            expected_response: owned("\"expected_response\":\"".into()),
            status: owned("\"status\":\"".into()),
            split: split_tag.map(|t| owned(format!("{}:\"", json_string(t)))),
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

/// Reads the fields of a line that starts with the matcher's prefix.
pub(crate) fn parse_point<'a>(m: &Matcher, line: &'a [u8]) -> Result<Point<'a>, &'static str> {
    let rest = &line[m.prefix.len()..];
    let t_at = m.time.find(rest).ok_or("Point record without data.time")? + m.time.needle().len();
    let t_len = memchr::memchr(b'"', &rest[t_at..]).ok_or("unterminated data.time")?;
    let t_us = parse_rfc3339_micros(&rest[t_at..t_at + t_len])
        .ok_or("data.time is not an RFC 3339 time")?;
    let after_time = &rest[t_at + t_len..];
    let v_at = m
        .value
        .find(after_time)
        .ok_or("Point record without data.value")?
        + m.value.needle().len();
    let v_len =
        memchr::memchr2(b',', b'}', &after_time[v_at..]).ok_or("unterminated data.value")?;
    let ms = parse_f64(&after_time[v_at..v_at + v_len])
        .ok_or("data.value is not a non-negative number")?;
    let after_value = &after_time[v_at + v_len..];
    let tags = match m.tags.find(after_value) {
        Some(i) => tags_object(&after_value[i + m.tags.needle().len()..]),
        None => &[][..],
    };
    let success = match tag_value(&m.expected_response, tags) {
        Some(v) => v != b"false",
        None => match tag_value(&m.status, tags) {
            // Before k6 0.31 there was no expected_response tag: use the
            // status, where 0 means the request never got a response.
            Some(status) => super::time::parse_u64(status).is_some_and(|s| (1..400).contains(&s)),
            None => true,
        },
    };
    let key = match &m.split {
        Some(f) => tag_value(f, tags).unwrap_or(b""),
        None => b"",
    };
    Ok(Point {
        sample: Sample { t_us, ms },
        success,
        key,
    })
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

/// The raw (still escaped) value of a string tag. `finder` searches for
/// `"key":"`; a literal quote only ever occurs at string boundaries, so a
/// match is always a key.
fn tag_value<'a>(finder: &Finder<'_>, tags: &'a [u8]) -> Option<&'a [u8]> {
    let start = finder.find(tags)? + finder.needle().len();
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

/// Reads a k6 NDJSON file.
pub fn read(file: &InputFile, shown: &Path, opts: &ReadOptions) -> Result<RawFile, Error> {
    let matcher = Matcher::new(&opts.metric, opts.split_tag.as_deref());
    let mut grouper = Grouper::default();
    let mut tail: Option<u64> = None; // offset of an incomplete last line
    let reader = open_plain(file, &opts.limits).map_err(|e| Error::io(shown, e))?;
    let end = scan_blocks(reader, opts.limits.max_line_bytes, |block, offset, eof| {
        let complete = match memchr::memrchr(b'\n', block) {
            Some(i) => i + 1,
            None => 0,
        };
        if eof && complete < block.len() && !block[complete..].trim_ascii().is_empty() {
            tail = Some(offset + complete as u64);
        }
        scan_complete_lines(&matcher, &block[..complete], offset, &mut grouper)?;
        Ok(complete)
    })
    .map_err(|e| e.into_error(file, shown))?;

    let mut warnings = truncation_warnings(file, shown, tail, &end);
    let mut groups = grouper.finish(unescape);
    if groups.is_empty() {
        groups = slow_pass(file, shown, opts, &mut warnings)?;
    }
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

/// The hot loop: `lines` holds only complete lines.
pub(crate) fn scan_complete_lines(
    m: &Matcher,
    lines: &[u8],
    offset: u64,
    grouper: &mut Grouper,
) -> Result<(), Fault> {
    let mut pos = 0;
    while let Some(hit) = m.line_start.find(&lines[pos..]) {
        let at = pos + hit;
        let end = at + memchr::memchr(b'\n', &lines[at..]).unwrap_or(lines.len() - at);
        pos = end + 1;
        if at > 0 && lines[at - 1] != b'\n' {
            continue; // the prefix inside some other line (e.g. a tag value)
        }
        let line = &lines[at..end];
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let point = parse_point(m, line).map_err(|msg| Fault::new(offset + at as u64, msg))?;
        grouper.push(point.key, point.sample, point.success);
        if pos >= lines.len() {
            break;
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

/// Fallback for files whose records do not start with k6's key order:
/// parse every line that mentions a Point as JSON.
fn slow_pass(
    file: &InputFile,
    shown: &Path,
    opts: &ReadOptions,
    warnings: &mut Vec<Diagnostic>,
) -> Result<std::collections::BTreeMap<String, super::SampleSet>, Error> {
    use serde_json::Value;
    let mut grouper = Grouper::default();
    let point = Finder::new(b"\"Point\"");
    let reader = open_plain(file, &opts.limits).map_err(|e| Error::io(shown, e))?;
    scan_blocks(reader, opts.limits.max_line_bytes, |block, offset, eof| {
        let complete = if eof {
            block.len()
        } else {
            memchr::memrchr(b'\n', block).map(|i| i + 1).unwrap_or(0)
        };
        let mut start = 0;
        for end in memchr::memchr_iter(b'\n', &block[..complete]).chain(std::iter::once(complete)) {
            if end < start {
                continue;
            }
            let line = &block[start..end];
            let line_offset = offset + start as u64;
            start = end + 1;
            if point.find(line).is_none() {
                continue;
            }
            let Ok(v) = serde_json::from_slice::<Value>(line) else {
                if eof && end == complete {
                    continue; // an incomplete last line; warned about already
                }
                return Err(Fault::new(line_offset, "not a JSON object"));
            };
            if v.get("type").and_then(Value::as_str) != Some("Point")
                || v.get("metric").and_then(Value::as_str) != Some(opts.metric.as_str())
            {
                continue;
            }
            let data = &v["data"];
            let t_us = data["time"]
                .as_str()
                .and_then(|t| parse_rfc3339_micros(t.as_bytes()))
                .ok_or_else(|| Fault::new(line_offset, "Point record without a valid data.time"))?;
            let ms = data["value"]
                .as_f64()
                .filter(|v| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| {
                    Fault::new(line_offset, "data.value is not a non-negative number")
                })?;
            let tags = &data["tags"];
            let success = match tags["expected_response"].as_str() {
                Some(v) => v != "false",
                None => tags["status"]
                    .as_str()
                    .and_then(|s| s.parse::<u64>().ok())
                    .is_none_or(|s| (1..400).contains(&s)),
            };
            let key = opts
                .split_tag
                .as_deref()
                .and_then(|t| tags[t].as_str())
                .unwrap_or("");
            grouper.push(key.as_bytes(), Sample { t_us, ms }, success);
        }
        Ok(complete)
    })
    .map_err(|e| e.into_error(file, shown))?;
    let groups = grouper.finish(|k| String::from_utf8_lossy(k).into_owned());
    if !groups.is_empty() {
        // A fact about the file, not a problem: the figures are the same.
        warnings.push(warning(
            DiagnosticKind::Information,
            shown,
            None,
            "records are not in k6's own key order (re-serialised file?): read with the slower JSON parser",
        ));
    }
    Ok(groups)
}
