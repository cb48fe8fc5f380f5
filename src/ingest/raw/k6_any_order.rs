//! k6 NDJSON Point lines in any key order, read without a JSON parser.
//!
//! A file re-serialised by jq, Python or another JSON tool keeps k6's
//! records but not k6's key order (`jq -S` sorts the keys, Python writes
//! `": "` and `", "`), so the k6-order prefix of
//! [`parse_point`](super::k6_ndjson::parse_point) never matches. The scan
//! below walks such a line once, as a strict JSON validator would, keeps
//! the few fields a sample needs (`type`, `metric`, `data.time`,
//! `data.value` and three tags) as slices of the line and skips every other
//! value without building it.
//!
//! It reads a subset of JSON on purpose: whatever it is not sure to read as
//! serde_json reads it (an escape inside a value it keeps, a repeated
//! `data` or `tags`, a control character, deep nesting, a number it does
//! not write the same way) makes it answer [`Scanned::Unsure`], and the
//! typed serde reader ([`parse_any_order`](super::k6_ndjson::parse_any_order))
//! decides. The two agree sample by sample on every line the scan decides
//! (a property test checks it on random records, key orders, whitespace
//! and escapes).

use super::Sample;
use super::k6_ndjson::{Matcher, Point, is_plain_json_number, success_from_tags};
use super::time::{parse_f64, parse_rfc3339_micros};

/// What the scan made of a line.
pub(crate) enum Scanned<'a> {
    /// A Point of the metric.
    Point(Point<'a>),
    /// Valid JSON that is not a Point of the metric (a Metric record,
    /// another metric's Point naming this one in a tag).
    Other,
    /// Not read here: the JSON reader decides (and reports errors).
    Unsure,
}

/// Reads one line (without its line ending) in any key order.
pub(crate) fn scan_line<'a>(m: &Matcher, line: &'a [u8]) -> Scanned<'a> {
    match read_record(m, line) {
        Some(Some(point)) => Scanned::Point(point),
        Some(None) => Scanned::Other,
        None => Scanned::Unsure,
    }
}

/// Nesting deeper than this inside a skipped value is left to serde_json.
const MAX_DEPTH: u32 = 32;

/// `None`: unsure; `Some(None)`: not a Point of the metric.
fn read_record<'a>(m: &Matcher, line: &'a [u8]) -> Option<Option<Point<'a>>> {
    if !plain_text(line) {
        return None;
    }
    let mut c = Cursor { s: line, i: 0 };
    let (mut kind, mut metric, mut data) = (None, None, None);
    c.object(|c, key| {
        match key {
            b"type" => kind = Some(c.plain_string()?),
            b"metric" => metric = Some(c.plain_string()?),
            // A second `data` would replace the first: left to serde_json.
            b"data" if data.is_none() => data = Some(c.data(m)?),
            b"data" => return None,
            _ => c.skip_value(0)?,
        }
        Some(())
    })?;
    c.ws();
    if c.i != line.len() {
        return None;
    }
    if kind != Some(&b"Point"[..]) || metric != Some(m.metric.as_bytes()) {
        return Some(None);
    }
    // From here on anything missing or odd is the JSON reader's error.
    let data = data?;
    let t_us = parse_rfc3339_micros(data.time?)?;
    let ms = data.value?;
    let tags = data.tags.unwrap_or_default();
    if tags.escaped {
        return None;
    }
    Some(Some(Point {
        sample: Sample { t_us, ms },
        success: success_from_tags(tags.expected_response, tags.status),
        key: tags.split.unwrap_or(b""),
    }))
}

/// No control characters (the only ones JSON allows outside strings are
/// whitespace, which a one-line record does not need) and valid UTF-8, as
/// serde_json requires of the strings it reads: then a string ends at its
/// first unescaped quote. Written without early exits so that it runs on
/// whole vectors.
fn plain_text(line: &[u8]) -> bool {
    let (mut control, mut high) = (false, false);
    for &b in line {
        control |= b < 0x20;
        high |= b >= 0x80;
    }
    !control && (!high || std::str::from_utf8(line).is_ok())
}

#[derive(Default)]
struct Data<'a> {
    time: Option<&'a [u8]>,
    /// `None` when negative (serde_json then reports the record).
    value: Option<f64>,
    tags: Option<Tags<'a>>,
}

/// The raw values of the tags a sample needs.
#[derive(Default)]
struct Tags<'a> {
    expected_response: Option<&'a [u8]>,
    status: Option<&'a [u8]>,
    split: Option<&'a [u8]>,
    /// One of them was written with escapes: only serde_json reads it,
    /// when the record turns out to be a Point of the metric.
    escaped: bool,
}

struct Cursor<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Cursor<'a> {
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.s.get(self.i) {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    /// Skips whitespace, then takes `byte`.
    fn expect(&mut self, byte: u8) -> Option<()> {
        self.ws();
        (self.peek()? == byte).then(|| self.i += 1)
    }

    /// Reads an object, calling `value` with the cursor on each value
    /// (after its key and colon); keys with escapes are left to serde_json.
    fn object(&mut self, mut value: impl FnMut(&mut Self, &'a [u8]) -> Option<()>) -> Option<()> {
        self.expect(b'{')?;
        self.ws();
        if self.peek()? == b'}' {
            self.i += 1;
            return Some(());
        }
        loop {
            let key = self.plain_string()?;
            self.expect(b':')?;
            self.ws();
            value(self, key)?;
            self.ws();
            match self.peek()? {
                b',' => self.i += 1,
                b'}' => {
                    self.i += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// A string without escapes, as the slice between its quotes.
    fn plain_string(&mut self) -> Option<&'a [u8]> {
        self.expect(b'"')?;
        let start = self.i;
        let len = memchr::memchr2(b'"', b'\\', &self.s[start..])?;
        if self.s[start + len] != b'"' {
            return None;
        }
        self.i = start + len + 1;
        Some(&self.s[start..start + len])
    }

    /// The rest of a string whose opening quote was taken.
    fn skip_string(&mut self) -> Option<()> {
        loop {
            let at = self.i + memchr::memchr2(b'"', b'\\', &self.s[self.i..])?;
            if self.s[at] == b'"' {
                self.i = at + 1;
                return Some(());
            }
            match *self.s.get(at + 1)? {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.i = at + 2,
                // serde_json skips any four hex digits here (a lone
                // surrogate too): it only checks them in strings it reads.
                b'u' => {
                    let hex = self.s.get(at + 2..at + 6)?;
                    if !hex.iter().all(u8::is_ascii_hexdigit) {
                        return None;
                    }
                    self.i = at + 6;
                }
                _ => return None,
            }
        }
    }

    /// A JSON number as written (`-` included).
    fn number(&mut self) -> Option<&'a [u8]> {
        let start = self.i;
        let digits = usize::from(self.peek() == Some(b'-'));
        let len = self.s[start + digits..]
            .iter()
            .take_while(|b| matches!(b, b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-'))
            .count();
        let end = start + digits + len;
        if !is_plain_json_number(&self.s[start + digits..end]) {
            return None;
        }
        self.i = end;
        Some(&self.s[start..end])
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        let end = self.i + word.len();
        (self.s.get(self.i..end)? == word).then(|| self.i = end)
    }

    /// Skips any JSON value, checking it as serde_json does.
    fn skip_value(&mut self, depth: u32) -> Option<()> {
        self.ws();
        match self.peek()? {
            b'"' => {
                self.i += 1;
                self.skip_string()
            }
            b'{' | b'[' if depth >= MAX_DEPTH => None,
            b'{' => {
                self.i += 1;
                self.skip_members(b'}', |c| {
                    // Keys of skipped objects may hold escapes.
                    c.expect(b'"')?;
                    c.skip_string()?;
                    c.expect(b':')?;
                    c.skip_value(depth + 1)
                })
            }
            b'[' => {
                self.i += 1;
                self.skip_members(b']', |c| c.skip_value(depth + 1))
            }
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            b'-' | b'0'..=b'9' => self.number().map(|_| ()),
            _ => None,
        }
    }

    /// The members of an object or array whose opening bracket was taken,
    /// up to and including `close`.
    fn skip_members(
        &mut self,
        close: u8,
        mut member: impl FnMut(&mut Self) -> Option<()>,
    ) -> Option<()> {
        self.ws();
        if self.peek()? == close {
            self.i += 1;
            return Some(());
        }
        loop {
            member(self)?;
            self.ws();
            match self.peek()? {
                b',' => self.i += 1,
                b if b == close => {
                    self.i += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// `data`: an object (anything else is left to serde_json, which then
    /// reports a Point without a time).
    fn data(&mut self, m: &Matcher) -> Option<Data<'a>> {
        let mut d = Data::default();
        self.object(|c, key| {
            match key {
                b"time" => d.time = Some(c.plain_string()?),
                b"value" => {
                    if !matches!(c.peek()?, b'-' | b'0'..=b'9') {
                        return None;
                    }
                    let number = c.number()?;
                    // serde_json reads this number whatever the record
                    // is, and fails on one out of range (`1e400`).
                    let (negative, magnitude) = match number.strip_prefix(b"-") {
                        Some(m) => (true, m),
                        None => (false, number),
                    };
                    let v = parse_f64(magnitude)?;
                    d.value = (!negative).then_some(v);
                }
                b"tags" if d.tags.is_none() => d.tags = Some(c.tags(m)?),
                b"tags" => return None,
                _ => c.skip_value(0)?,
            }
            Some(())
        })?;
        Some(d)
    }

    /// `tags`: an object or null. A repeated tag counts with its last value,
    /// as in serde_json.
    fn tags(&mut self, m: &Matcher) -> Option<Tags<'a>> {
        let mut t = Tags::default();
        if self.peek()? == b'n' {
            self.literal(b"null")?;
            return Some(t);
        }
        let split = m.split_tag.as_deref().map(str::as_bytes);
        self.object(|c, key| {
            let expected_response = key == b"expected_response";
            let status = key == b"status";
            let is_split = split == Some(key);
            if !(expected_response || status || is_split) {
                return c.skip_value(0);
            }
            c.expect(b'"')?;
            let start = c.i;
            c.skip_string()?;
            let raw = &c.s[start..c.i - 1];
            t.escaped |= raw.contains(&b'\\');
            let value = Some(raw);
            if expected_response {
                t.expected_response = value;
            }
            if status {
                t.status = value;
            }
            if is_split {
                t.split = value;
            }
            Some(())
        })?;
        Some(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::raw::k6_ndjson::parse_any_order;
    use proptest::prelude::*;

    fn matcher(split: Option<&str>) -> Matcher {
        Matcher::new("http_req_duration", split)
    }

    /// The scan's answer checked against the JSON reader's: a Point it
    /// reads is the one serde_json reads, to the bit; a line it calls
    /// "not a Point" is valid JSON that serde_json also skips. `true` when
    /// the scan decided.
    fn agrees(m: &Matcher, line: &[u8]) -> Result<bool, TestCaseError> {
        let slow = parse_any_order(m, line);
        let shown = String::from_utf8_lossy(line);
        match scan_line(m, line) {
            Scanned::Point(p) => {
                let s = match slow {
                    Ok(Some(s)) => s,
                    Ok(None) => {
                        return Err(TestCaseError::fail(format!("serde: no Point: {shown}")));
                    }
                    Err(e) => return Err(TestCaseError::fail(format!("serde: {e}: {shown}"))),
                };
                prop_assert_eq!(p.sample.t_us, s.sample.t_us, "{}", shown);
                prop_assert_eq!(p.sample.ms.to_bits(), s.sample.ms.to_bits(), "{}", shown);
                prop_assert_eq!(p.success, s.success, "{}", shown);
                prop_assert_eq!(p.key, &s.key[..], "{}", shown);
                Ok(true)
            }
            Scanned::Other => {
                prop_assert!(matches!(slow, Ok(None)), "serde disagrees: {}", shown);
                Ok(true)
            }
            Scanned::Unsure => Ok(false),
        }
    }

    fn decides(m: &Matcher, line: &str) -> Option<(i64, f64, bool, String)> {
        assert!(agrees(m, line.as_bytes()).unwrap(), "unsure: {line}");
        match scan_line(m, line.as_bytes()) {
            Scanned::Point(p) => Some((
                p.sample.t_us,
                p.sample.ms,
                p.success,
                String::from_utf8(p.key.to_vec()).unwrap(),
            )),
            _ => None,
        }
    }

    #[test]
    fn reads_jq_python_and_shuffled_layouts() {
        let m = matcher(Some("name"));
        let t = 1_780_000_000_000_000;
        let want = Some((t, 12.5, true, "GET /a".to_string()));
        // jq -S -c (sorted keys), with k6's metadata.
        let jq_sorted = r#"{"data":{"metadata":{"vu":"1"},"tags":{"expected_response":"true","name":"GET /a","url":"http://x/?a=1\u0026b=\"http_req_duration\""},"time":"2026-05-28T20:26:40Z","value":12.5},"metric":"http_req_duration","type":"Point"}"#;
        assert_eq!(decides(&m, jq_sorted), want);
        // Python json.dumps: a space after every colon and comma.
        let python = r#"{"type": "Point", "metric": "http_req_duration", "data": {"value": 12.5, "time": "2026-05-28T20:26:40Z", "tags": {"name": "GET /a", "status": "200"}}}"#;
        assert_eq!(decides(&m, python), want);
        let spaced = " { \"data\" : { \"tags\" : { \"name\" : \"GET /a\" } , \"time\" : \"2026-05-28T20:26:40Z\" , \"value\" : 1.25e1 } , \"type\" : \"Point\" , \"metric\" : \"http_req_duration\" } ";
        assert_eq!(decides(&m, spaced), want);
        // Failures by expected_response, then by status when it is absent.
        let failed = r#"{"type":"Point","data":{"tags":{"status":"200","expected_response":"false"},"value":3,"time":"2026-05-28T20:26:40Z"},"metric":"http_req_duration"}"#;
        assert_eq!(decides(&m, failed), Some((t, 3.0, false, String::new())));
        let status_0 = r#"{"type":"Point","data":{"tags":{"status":"0"},"value":3,"time":"2026-05-28T20:26:40Z"},"metric":"http_req_duration"}"#;
        assert_eq!(decides(&m, status_0), Some((t, 3.0, false, String::new())));
        let null_tags = r#"{"type":"Point","data":{"tags":null,"value":0,"time":"2026-05-28T20:26:40Z"},"metric":"http_req_duration"}"#;
        assert_eq!(decides(&m, null_tags), Some((t, 0.0, true, String::new())));
        // A repeated tag counts with its last value, as in serde_json.
        let repeated = r#"{"type":"Point","data":{"tags":{"name":"x","name":"GET /a"},"value":12.5,"time":"2026-05-28T20:26:40Z"},"metric":"http_req_duration"}"#;
        assert_eq!(decides(&m, repeated), want);
    }

    #[test]
    fn is_not_fooled_by_the_name_elsewhere() {
        let m = matcher(Some("name"));
        for line in [
            // Another metric whose url and tags name this one.
            r#"{"type":"Point","data":{"tags":{"name":"\"http_req_duration\"","url":"/q?m=\"metric\":\"http_req_duration\""},"value":1,"time":"2026-05-28T20:26:40Z"},"metric":"http_req_waiting"}"#,
            // The metric's name in a nested tag object and a key.
            r#"{"metric":"http_req_blocked","type":"Point","data":{"tags":{"x":{"metric":"http_req_duration","type":"Point"}},"http_req_duration":2,"value":1,"time":"2026-05-28T20:26:40Z"}}"#,
            // k6's Metric record of the metric itself.
            r#"{"type":"Metric","data":{"name":"http_req_duration","type":"trend","contains":"time","thresholds":["p(95)<500"],"submetrics":[{"name":"http_req_duration{expected_response:true}","suffix":"expected_response:true","tags":{"expected_response":"true"}}]},"metric":"http_req_duration"}"#,
            // `type` and `metric` only inside data.
            r#"{"data":{"metric":"http_req_duration","type":"Point","value":1,"time":"2026-05-28T20:26:40Z"},"type":"Metric"}"#,
        ] {
            assert_eq!(decides(&m, line), None, "{line}");
        }
    }

    #[test]
    fn leaves_the_unusual_to_the_json_reader() {
        let m = matcher(Some("name"));
        for line in [
            // Escapes in a value the sample keeps.
            r#"{"type":"Point","metric":"http_req_duration","data":{"value":1,"time":"2026-05-28T20:26:40Z","tags":{"name":"a\"b"}}}"#,
            r#"{"type":"Po\u0069nt","metric":"http_req_duration","data":{"value":1,"time":"2026-05-28T20:26:40Z"}}"#,
            // Errors the JSON reader reports.
            r#"{"type":"Point","metric":"http_req_duration","data":{"value":-1,"time":"2026-05-28T20:26:40Z"}}"#,
            r#"{"type":"Point","metric":"http_req_duration","data":{"value":"1","time":"2026-05-28T20:26:40Z"}}"#,
            r#"{"type":"Point","metric":"http_req_duration","data":{"value":1}}"#,
            r#"{"type":"Point","metric":"http_req_duration"}"#,
            r#"{"type":"Point","metric":"http_req_duration","data":{"value":1,"time":"2026-05-28T20:26:40Z"},}"#,
            r#"{"type":"Point","metric":"http_req_duration","data":{"value":01,"time":"2026-05-28T20:26:40Z"}}"#,
            r#"{"type":"Point","metric":"http_req_duration","data":{"value":1,"time":"2026-05-28T20:26:40Z"}} x"#,
            "{\"type\":\"Point\",\"metric\":\"http_req_duration\",\"data\":{\"value\":1,\"time\":\"2026-05-28T20:26:40Z\",\"tags\":{\"url\":\"a\tb\"}}}",
            // A second data object replaces the first in serde_json.
            r#"{"type":"Point","metric":"http_req_duration","data":{"value":1,"time":"2026-05-28T20:26:40Z"},"data":{"value":2,"time":"2026-05-28T20:26:40Z"}}"#,
            r#"["http_req_duration"]"#,
        ] {
            assert!(
                matches!(scan_line(&m, line.as_bytes()), Scanned::Unsure),
                "{line}"
            );
        }
        // Invalid UTF-8 in a skipped string: serde_json skips it, the scan
        // does not judge it.
        let mut bytes = br#"{"type":"Point","metric":"http_req_duration","data":{"value":1,"time":"2026-05-28T20:26:40Z","tags":{"url":"#.to_vec();
        bytes.extend_from_slice(b"\"\xff\"}}}");
        assert!(matches!(scan_line(&m, &bytes), Scanned::Unsure));
    }

    /// A JSON value as a test writes it: strings are written escaped the
    /// way a JSON writer does, or with every character `\u`-escaped.
    #[derive(Debug, Clone)]
    enum J {
        Str(String, bool),
        Raw(String),
        Obj(Vec<(String, J)>),
        Arr(Vec<J>),
    }

    fn quote(s: &str, all_escaped: bool) -> String {
        if all_escaped {
            let mut out = String::from("\"");
            for u in s.encode_utf16() {
                out.push_str(&format!("\\u{u:04x}"));
            }
            out + "\""
        } else {
            serde_json::to_string(s).unwrap()
        }
    }

    /// Writes `j` with `colon` after every key and `comma` between members.
    fn write(j: &J, colon: &str, comma: &str) -> String {
        match j {
            J::Str(s, escaped) => quote(s, *escaped),
            J::Raw(r) => r.clone(),
            J::Obj(members) => {
                let parts: Vec<String> = members
                    .iter()
                    .map(|(k, v)| format!("{}{colon}{}", quote(k, false), write(v, colon, comma)))
                    .collect();
                format!("{{{}}}", parts.join(comma))
            }
            J::Arr(items) => format!(
                "[{}]",
                items
                    .iter()
                    .map(|v| write(v, colon, comma))
                    .collect::<Vec<_>>()
                    .join(comma)
            ),
        }
    }

    fn text() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-zA-Z0-9 /{}:,]{0,12}",
            "[a-z\"\\\\/{}:,é€\u{1F600}\n\t\u{1}]{0,12}",
            Just("\"http_req_duration\"".to_string()),
            Just("{\"metric\":\"http_req_duration\",\"type\":\"Point\"}".to_string()),
        ]
    }

    fn string() -> impl Strategy<Value = J> {
        (text(), prop::bool::weighted(0.1)).prop_map(|(s, e)| J::Str(s, e))
    }

    /// Any JSON value, a few levels deep.
    fn junk() -> impl Strategy<Value = J> {
        let leaf = prop_oneof![
            string(),
            Just(J::Raw("null".into())),
            Just(J::Raw("true".into())),
            Just(J::Raw("false".into())),
            Just(J::Raw("-0.5e-3".into())),
            any::<i64>().prop_map(|n| J::Raw(n.to_string())),
        ];
        leaf.prop_recursive(3, 12, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(J::Arr),
                prop::collection::vec((text(), inner), 0..4).prop_map(J::Obj),
            ]
        })
    }

    /// A number as JSON writers and people write it; some are not
    /// non-negative, and `01` is not JSON.
    fn number() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => (0.0f64..10_000.0).prop_map(|v| v.to_string()),
            2 => any::<u32>().prop_map(|v| v.to_string()),
            1 => (0.0f64..1e6).prop_map(|v| format!("{v:e}")),
            1 => (0.0f64..1e6).prop_map(|v| format!("{v:E}")),
            1 => any::<u64>().prop_map(|v| v.to_string()),
            1 => Just("12345678901234567890123".to_string()),
            1 => Just("1e400".to_string()),
            1 => Just("-3".to_string()),
            1 => Just("-0".to_string()),
            1 => Just("01".to_string()),
            1 => Just("\"5\"".to_string()),
            1 => Just("null".to_string()),
        ]
    }

    fn time() -> impl Strategy<Value = String> {
        prop_oneof![
            8 => (0u32..86_400, 0u32..1_000_000_000, prop_oneof![Just("Z"), Just("+01:00"), Just("-07:30")])
                .prop_map(|(s, ns, tz)| format!("2026-05-04T{:02}:{:02}:{:02}.{ns:09}{tz}", s / 3600, s / 60 % 60, s % 60)),
            1 => Just("yesterday".to_string()),
        ]
    }

    /// Some of a Point's tags, with junk, in any order, maybe repeated.
    fn tags() -> impl Strategy<Value = J> {
        let tag = prop_oneof![
            prop_oneof![Just("true"), Just("false"), Just("maybe")]
                .prop_map(|v| ("expected_response".to_string(), J::Str(v.into(), false))),
            prop_oneof![Just("200"), Just("404"), Just("500"), Just("0"), Just("")]
                .prop_map(|v| ("status".to_string(), J::Str(v.into(), false))),
            string().prop_map(|v| ("name".to_string(), v)),
            text().prop_map(|v| ("url".to_string(), J::Str(format!("http://x/{v}"), false))),
            junk().prop_map(|v| ("extra".to_string(), v)),
            extra(),
        ];
        prop_oneof![
            9 => prop::collection::vec(tag, 0..7).prop_map(J::Obj),
            1 => Just(J::Raw("null".into())),
        ]
    }

    fn metric() -> impl Strategy<Value = J> {
        prop_oneof![
            6 => Just(J::Str("http_req_duration".into(), false)),
            1 => Just(J::Str("http_req_duration".into(), true)),
            2 => Just(J::Str("http_req_waiting".into(), false)),
            1 => Just(J::Str("http_req_duration_x".into(), false)),
        ]
    }

    fn kind() -> impl Strategy<Value = J> {
        prop_oneof![
            6 => Just(J::Str("Point".into(), false)),
            2 => Just(J::Str("Metric".into(), false)),
            1 => Just(J::Str("Point".into(), true)),
            1 => Just(J::Raw("1".into())),
        ]
    }

    /// A member beside the ones a sample needs: mostly a plain key, some
    /// keys with escapes (which only serde_json reads).
    fn extra() -> impl Strategy<Value = (String, J)> {
        prop_oneof![
            4 => ("[a-z_]{1,8}", junk()),
            1 => (text(), junk()),
        ]
    }

    /// The members an object usually has (each maybe missing), extras,
    /// and sometimes one of them again, in any order.
    fn members(usual: Vec<BoxedStrategy<(String, J)>>) -> impl Strategy<Value = Vec<(String, J)>> {
        let again = prop::sample::select(usual.clone()).prop_flat_map(|s| s);
        let present: Vec<_> = usual
            .into_iter()
            .map(|s| prop::option::weighted(0.9, s))
            .collect();
        (
            present,
            prop::collection::vec(extra(), 0..3),
            prop::option::weighted(0.1, again),
        )
            .prop_map(|(present, mut extras, again)| {
                extras.extend(present.into_iter().flatten());
                extras.extend(again);
                extras
            })
            .prop_shuffle()
    }

    /// A record in any key order: the usual keys at each level (each
    /// maybe missing or repeated) and junk beside them.
    fn record() -> impl Strategy<Value = J> {
        let data = members(vec![
            time()
                .prop_map(|t| ("time".to_string(), J::Str(t, false)))
                .boxed(),
            number()
                .prop_map(|n| ("value".to_string(), J::Raw(n)))
                .boxed(),
            tags().prop_map(|t| ("tags".to_string(), t)).boxed(),
        ]);
        members(vec![
            metric().prop_map(|v| ("metric".to_string(), v)).boxed(),
            kind().prop_map(|v| ("type".to_string(), v)).boxed(),
            data.prop_map(|d| ("data".to_string(), J::Obj(d))).boxed(),
        ])
        .prop_map(J::Obj)
    }

    /// A well-formed Point of the metric in any key order and layout, no
    /// escape in what a sample keeps: the scan must read it itself.
    fn plain_point() -> impl Strategy<Value = J> {
        let tags = (
            prop_oneof![Just("true"), Just("false")],
            prop_oneof![Just("200"), Just("500"), Just("0")],
            "[a-zA-Z0-9 /{}:,é]{0,12}",
            // Keys with escapes are left to serde_json.
            prop::collection::vec(("[a-z_]{1,8}", junk()), 0..3),
        )
            .prop_map(|(ok, status, name, extra)| {
                let mut members = vec![
                    ("expected_response".to_string(), J::Str(ok.into(), false)),
                    ("status".to_string(), J::Str(status.into(), false)),
                    ("name".to_string(), J::Str(name, false)),
                ];
                members.extend(extra.into_iter().filter(|(k, _)| {
                    !["expected_response", "status", "name"].contains(&k.as_str())
                }));
                members
            })
            .prop_shuffle();
        let data = (time(), 0.0f64..10_000.0, tags, junk())
            .prop_filter("a valid time", |(t, ..)| t != "yesterday")
            .prop_map(|(t, v, tags, metadata)| {
                vec![
                    ("time".to_string(), J::Str(t, false)),
                    ("value".to_string(), J::Raw(v.to_string())),
                    ("tags".to_string(), J::Obj(tags)),
                    ("metadata".to_string(), metadata),
                ]
            })
            .prop_shuffle();
        (data, junk())
            .prop_map(|(data, junk)| {
                vec![
                    (
                        "metric".to_string(),
                        J::Str("http_req_duration".into(), false),
                    ),
                    ("type".to_string(), J::Str("Point".into(), false)),
                    ("data".to_string(), J::Obj(data)),
                    ("junk".to_string(), junk),
                ]
            })
            .prop_shuffle()
            .prop_map(J::Obj)
    }

    fn layout() -> impl Strategy<Value = (&'static str, &'static str)> {
        (
            prop_oneof![Just(":"), Just(": "), Just(" : ")],
            prop_oneof![Just(","), Just(", "), Just(" , ")],
        )
    }

    fn splits() -> impl Strategy<Value = Option<&'static str>> {
        prop_oneof![
            Just(Some("name")),
            Just(None),
            Just(Some("status")),
            Just(Some("expected_response")),
            Just(Some("url")),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// Random records in any key order, layout and escaping, some of
        /// them damaged: whatever the scan decides, serde_json decides the
        /// same, sample by sample.
        #[test]
        fn scan_agrees_with_the_json_reader(
            record in record(),
            (colon, comma) in layout(),
            split in splits(),
            damage in prop::option::weighted(0.2, (any::<prop::sample::Index>(), prop_oneof![
                Just(None), Just(Some(b'"')), Just(Some(b'\\')), Just(Some(b'{')), Just(Some(b'}')),
                Just(Some(b',')), Just(Some(b':')), Just(Some(b' ')), Just(Some(b'1')), Just(Some(0xff)),
            ])),
        ) {
            let mut line = write(&record, colon, comma).into_bytes();
            if let Some((at, byte)) = damage {
                let at = at.index(line.len());
                match byte {
                    None => { line.remove(at); }
                    Some(b) => line.insert(at, b),
                }
            }
            agrees(&matcher(split), &line)?;
        }

        /// Well-formed Points in any key order and layout are read by the
        /// scan itself, the same as by serde_json.
        #[test]
        fn scan_reads_plain_points_itself(
            point in plain_point(),
            (colon, comma) in layout(),
            split in splits(),
        ) {
            let line = write(&point, colon, comma);
            prop_assert!(agrees(&matcher(split), line.as_bytes())?, "unsure: {}", line);
        }
    }
}
