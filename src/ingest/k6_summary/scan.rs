//! A hand-written reader of the common summary: the same [`Document`] as
//! the serde reader, about four times faster (issue 18: at 280 000 round
//! files, serde_json's visitors were a quarter of a cold build's CPU).
//!
//! It gives up (`None`) on anything it does not handle exactly as the
//! serde reader does, and the caller then reads the file the serde way:
//! so a bad file always gets serde_json's own message, and a rare shape
//! (machine-readable summaries, escapes in strings, numbers with an
//! exponent, deep nesting, bytes that are not UTF-8) costs only time.
//! What it does handle it must read exactly as the serde reader; the
//! proptest `scanner_reads_as_serde_does` checks that it does.

use std::borrow::Cow;
use std::collections::BTreeMap;

use super::{Document, Field, Metric, MetricObject, ThresholdValue};

/// Nesting deeper than this is left to serde_json (its limit is 128).
const MAX_DEPTH: u32 = 64;

/// Reads a summary's top level, keeping the `wanted` metrics (all when
/// `None`); `None` when the serde reader must read it.
pub(super) fn document<'a>(bytes: &'a [u8], wanted: Option<&[&str]>) -> Option<Document<'a>> {
    // Checked once here, so that every string sliced out of it between two
    // quotes (ASCII) is a valid `str`.
    let text = std::str::from_utf8(bytes).ok()?;
    let mut s = Scanner {
        text,
        bytes,
        at: 0,
        depth: 0,
    };
    if s.peek()? != b'{' {
        return None;
    }
    let mut doc = Document::default();
    s.object(|s, key| {
        match key {
            "version" => {
                doc.has_version = true;
                s.skip_value()?;
            }
            // Machine-readable summaries are rare: the serde reader's.
            "results" => return None,
            "metrics" => {
                doc.metrics = match s.peek()? {
                    b'{' => Some(s.metrics(wanted)?),
                    _ => {
                        s.skip_value()?;
                        None
                    }
                };
            }
            "config" => {
                doc.duration_s = match s.peek()? {
                    b'{' => s.config()?,
                    _ => {
                        s.skip_value()?;
                        None
                    }
                };
            }
            _ => s.skip_value()?,
        }
        Some(())
    })?;
    // Only whitespace may follow the document.
    s.skip_whitespace();
    (s.at == bytes.len()).then_some(doc)
}

struct Scanner<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
    depth: u32,
}

impl<'a> Scanner<'a> {
    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.at) {
            self.at += 1;
        }
    }

    /// The next byte that is not whitespace, not consumed.
    fn peek(&mut self) -> Option<u8> {
        self.skip_whitespace();
        self.bytes.get(self.at).copied()
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        if self.peek()? != byte {
            return None;
        }
        self.at += 1;
        Some(())
    }

    /// An object (the next value must be one): `entry` reads each value
    /// after its key.
    fn object(&mut self, mut entry: impl FnMut(&mut Self, &'a str) -> Option<()>) -> Option<()> {
        self.sequence(b'{', b'}', |s| {
            let key = s.string()?;
            s.expect(b':')?;
            entry(s, key)
        })
    }

    fn array(&mut self) -> Option<()> {
        self.sequence(b'[', b']', Self::skip_value)
    }

    /// `open`, then items separated by commas (each read by `item`), then
    /// `close`: an object's or an array's frame, nesting counted.
    fn sequence(
        &mut self,
        open: u8,
        close: u8,
        mut item: impl FnMut(&mut Self) -> Option<()>,
    ) -> Option<()> {
        self.expect(open)?;
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return None;
        }
        if self.peek()? == close {
            self.at += 1;
        } else {
            loop {
                item(self)?;
                match self.peek()? {
                    b',' => self.at += 1,
                    b if b == close => {
                        self.at += 1;
                        break;
                    }
                    _ => return None,
                }
            }
        }
        self.depth -= 1;
        Some(())
    }

    /// A string without escapes or control characters (the next value
    /// must be one): its contents.
    fn string(&mut self) -> Option<&'a str> {
        self.expect(b'"')?;
        let start = self.at;
        let rest = &self.bytes[start..];
        let len = rest
            .iter()
            .position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
        if rest[len] != b'"' {
            return None;
        }
        self.at = start + len + 1;
        // Both ends are next to an ASCII quote: char boundaries.
        self.text.get(start..start + len)
    }

    /// A number in JSON's grammar, without an exponent: its text.
    fn number(&mut self) -> Option<&'a str> {
        self.skip_whitespace();
        let start = self.at;
        let b = self.bytes;
        let mut i = start;
        if b.get(i) == Some(&b'-') {
            i += 1;
        }
        match b.get(i)? {
            b'0' => i += 1,
            b'1'..=b'9' => {
                while b.get(i).is_some_and(u8::is_ascii_digit) {
                    i += 1;
                }
            }
            _ => return None,
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            let digits = i;
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            if i == digits {
                return None;
            }
        }
        // An exponent may make a number serde_json refuses as out of
        // range; a leading zero followed by a digit is invalid.
        if matches!(b.get(i), Some(b'e' | b'E' | b'0'..=b'9')) {
            return None;
        }
        self.at = i;
        self.text.get(start..i)
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        self.skip_whitespace();
        if !self.bytes[self.at..].starts_with(word) {
            return None;
        }
        self.at += word.len();
        Some(())
    }

    /// A value, keeping its type and, for a number or a boolean, its value
    /// (the serde reader's `field`).
    fn field(&mut self) -> Option<Field> {
        Some(match self.peek()? {
            b'{' => {
                self.object(|s, _| s.skip_value())?;
                Field::Object
            }
            b'[' => {
                self.array()?;
                Field::Array
            }
            b'"' => {
                self.string()?;
                Field::String
            }
            b't' => {
                self.literal(b"true")?;
                Field::Bool(true)
            }
            b'f' => {
                self.literal(b"false")?;
                Field::Bool(false)
            }
            b'n' => {
                self.literal(b"null")?;
                Field::Null
            }
            // serde_json (float_roundtrip) and Rust both round correctly:
            // the nearest f64, whether the text reads as an integer or not.
            _ => Field::Number(self.number()?.parse().ok()?),
        })
    }

    fn skip_value(&mut self) -> Option<()> {
        match self.peek()? {
            b'{' => self.object(|s, _| s.skip_value()),
            b'[' => self.array(),
            b'"' => self.string().map(drop),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            _ => self.number().map(drop),
        }
    }

    /// The `metrics` object, sorted and deduplicated (the last of a key
    /// wins) as the serde reader's.
    fn metrics(&mut self, wanted: Option<&[&str]>) -> Option<Vec<(Cow<'a, str>, Metric)>> {
        let mut out: BTreeMap<&'a str, Metric> = BTreeMap::new();
        self.object(|s, key| {
            let keep = wanted.is_none_or(|w| w.contains(&key));
            let metric = match s.peek()? {
                b'{' => s.metric(keep)?,
                _ => {
                    s.skip_value()?;
                    Metric::NotAnObject
                }
            };
            out.insert(key, metric);
            Some(())
        })?;
        Some(
            out.into_iter()
                .map(|(k, m)| (Cow::Borrowed(k), m))
                .collect(),
        )
    }

    fn metric(&mut self, keep: bool) -> Option<Metric> {
        if !keep {
            let mut values_object = false;
            self.object(|s, key| {
                if key == "values" {
                    values_object = s.field()? == Field::Object;
                } else {
                    s.skip_value()?;
                }
                Some(())
            })?;
            return Some(Metric::Skipped { values_object });
        }
        let mut m = MetricObject::default();
        self.object(|s, key| {
            let kind = match key {
                "values" => match s.peek()? {
                    b'{' => {
                        m.values = Some(s.figures()?);
                        Field::Object
                    }
                    _ => {
                        m.values = None;
                        s.field()?
                    }
                },
                "thresholds" => match s.peek()? {
                    b'{' => {
                        m.thresholds = Some(s.thresholds()?);
                        Field::Object
                    }
                    _ => {
                        m.thresholds = None;
                        s.field()?
                    }
                },
                // Keys of machine-readable metrics: the serde reader's.
                "tags" | "name" => return None,
                _ => s.field()?,
            };
            m.fields.insert(key.to_string(), kind);
            Some(())
        })?;
        Some(Metric::Kept(m))
    }

    /// An object of figures: every key with its value's [`Field`].
    fn figures(&mut self) -> Option<BTreeMap<String, Field>> {
        let mut out = BTreeMap::new();
        self.object(|s, key| {
            let value = s.field()?;
            out.insert(key.to_string(), value);
            Some(())
        })?;
        Some(out)
    }

    fn thresholds(&mut self) -> Option<BTreeMap<String, ThresholdValue>> {
        let mut out = BTreeMap::new();
        self.object(|s, key| {
            let value = match s.peek()? {
                b'{' => {
                    let mut ok = None;
                    s.object(|s, key| {
                        if key == "ok" {
                            ok = match s.field()? {
                                Field::Bool(b) => Some(b),
                                _ => None,
                            };
                        } else {
                            s.skip_value()?;
                        }
                        Some(())
                    })?;
                    ThresholdValue::Object { ok }
                }
                _ => match s.field()? {
                    Field::Bool(b) => ThresholdValue::Bool(b),
                    _ => ThresholdValue::Other,
                },
            };
            out.insert(key.to_string(), value);
            Some(())
        })?;
        Some(out)
    }

    /// `config`: its last `duration`, when a number.
    fn config(&mut self) -> Option<Option<f64>> {
        let mut duration = None;
        self.object(|s, key| {
            if key == "duration" {
                duration = match s.field()? {
                    Field::Number(v) => Some(v),
                    _ => None,
                };
            } else {
                s.skip_value()?;
            }
            Some(())
        })?;
        Some(duration)
    }
}
