//! Gatling binary `simulation.log` (Gatling 3.12.1 and later; 3.13 is the
//! first release that writes it, and the only layout Gatling writes since).
//!
//! Read as Gatling's own writer (`LogFileDataWriter` /
//! `BufferedFileChannelWriter` in gatling-core) writes it and its reader
//! (`LogFileReader` in gatling-charts) reads it:
//!
//! * Big-endian, no magic number: the file starts with the run record.
//!   Every record starts with a type byte: 0 run, 1 request, 2 user,
//!   3 group, 4 error.
//! * A **string** is an `i32` byte length, the JDK's internal bytes of the
//!   `String`, then its coder byte (0 = Latin-1, 1 = UTF-16 in the JVM's
//!   native byte order: little-endian on x86-64 and ARM, which is what is
//!   read here). The empty string is a bare length 0, with no coder byte.
//! * A **cached string** (request and group names, messages) is an `i32`
//!   index first: `≥ 0` introduces a new string stored under that index
//!   (the writer counts from 1), `< 0` repeats the string stored under
//!   `−index`. Names and messages share one index space.
//! * Times are `i32` milliseconds **relative to the run start**, the `i64`
//!   epoch milliseconds in the run record.
//!
//! | record | fields |
//! |---|---|
//! | run (0) | version string, simulation class, start `i64`, description, scenario count `i32` + names, assertion count `i32` + (`i32` length + bytes) |
//! | request (1) | group count `i32` + cached names, cached name, start `i32`, end `i32`, OK `bool`, cached message (`""` when none) |
//! | user (2) | scenario index `i32`, start `bool`, time `i32` |
//! | group (3) | group count `i32` + cached names, start `i32`, end `i32`, cumulated response time `i32`, OK `bool` |
//! | error (4) | cached message, time `i32` |
//!
//! Gatling refuses a log written by any other version than its own; the
//! layout above has not changed from 3.12.1 to the current 3.x, so perfdash
//! reads any 3.x from 3.12.1 on and refuses other versions by name.
//!
//! Requests become samples exactly as the text log's do ([`super::gatling`]):
//! latency = end − start, the sample time is the start, `KO` is a failure,
//! and the request name is the endpoint key. A file cut short inside a
//! record (Gatling killed mid-write) keeps every complete record before the
//! cut and warns with the byte offset, as Gatling itself does; anything
//! else malformed is an error naming the byte offset.

use std::collections::HashMap;
use std::path::Path;

use super::io::{ScanError, open_plain, scan_blocks};
use super::{Grouper, RawContent, RawFile, ReadOptions, Sample, warning};
use crate::error::{DiagnosticKind, Error};
use crate::ingest::input::InputFile;
use crate::model::SourceFormat;

/// Record type bytes (gatling-core `RecordHeader`).
const RUN: u8 = 0;
const REQUEST: u8 = 1;
const USER: u8 = 2;
const GROUP: u8 = 3;
const ERROR: u8 = 4;

/// The first version whose log has this layout.
const FIRST_VERSION: (u32, u32, u32) = (3, 12, 1);

/// Whether the first bytes of a file are the start of a Gatling binary
/// log: the run record's type byte 0, then the version string's length and
/// its text (digits, dots, letters: `3.13.4`, `3.14.0-SNAPSHOT`), in Latin-1
/// or UTF-16. A file cut short inside those first bytes still counts, so
/// that its reader can say where it ends.
pub(crate) fn looks_like(head: &[u8]) -> bool {
    if head.first() != Some(&RUN) {
        return false;
    }
    let Some(length) = head.get(1..5) else {
        // Cut inside the length: Gatling's length of a short version
        // string starts with zero bytes.
        return head[1..].iter().all(|&b| b == 0);
    };
    let length = i32::from_be_bytes(length.try_into().expect("4 bytes"));
    if !(1..=64).contains(&length) {
        return false;
    }
    let text = &head[5..head.len().min(5 + length as usize)];
    text.first().is_none_or(u8::is_ascii_digit)
        && text
            .iter()
            .enumerate()
            // UTF-16 (little-endian) ASCII has a zero high byte after each character.
            .all(|(i, &b)| b.is_ascii_graphic() || (b == 0 && i % 2 == 1))
}

/// Whether `version` (`3.13.4`, `3.14.0-M1`) writes the layout read here.
fn supported_version(version: &str) -> bool {
    let core = version.split(['-', '+']).next().unwrap_or("");
    let mut parts = core.split('.').map(|p| p.parse::<u32>().ok());
    let (Some(Some(major)), Some(Some(minor))) = (parts.next(), parts.next()) else {
        return false;
    };
    let patch = match parts.next() {
        None => 0,
        Some(Some(p)) => p,
        Some(None) => return false,
    };
    parts.next().is_none() && major == FIRST_VERSION.0 && (major, minor, patch) >= FIRST_VERSION
}

/// Why a record could not be decoded.
#[derive(Debug)]
enum Bad {
    /// The bytes end inside the record: more may come (or the file is cut).
    Short,
    /// The bytes are not what Gatling writes.
    Corrupt { at: u64, message: String },
}

fn corrupt(at: u64, message: impl Into<String>) -> Bad {
    Bad::Corrupt {
        at,
        message: message.into(),
    }
}

/// Big-endian reads from a block of the file, tracking the file offset.
struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// The file offset of `bytes[0]`.
    base: u64,
    /// Where the current record starts in `bytes`.
    record_start: usize,
    /// The longest record accepted (`limits.max_line_bytes`): the block
    /// reader holds a whole record, so a corrupt length must not make it
    /// wait for one of any size.
    max_record: usize,
}

impl<'a> Cursor<'a> {
    fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], Bad> {
        if (self.pos - self.record_start).saturating_add(n) > self.max_record {
            return Err(corrupt(
                self.base + self.record_start as u64,
                format!(
                    "a record longer than {} bytes (limits.max_line_bytes): a corrupt file, or raise the limit",
                    self.max_record
                ),
            ));
        }
        let end = self.pos.checked_add(n).ok_or(Bad::Short)?;
        let got = self.bytes.get(self.pos..end).ok_or(Bad::Short)?;
        self.pos = end;
        Ok(got)
    }

    fn u8(&mut self) -> Result<u8, Bad> {
        Ok(self.take(1)?[0])
    }

    fn i32(&mut self) -> Result<i32, Bad> {
        Ok(i32::from_be_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }

    fn i64(&mut self) -> Result<i64, Bad> {
        Ok(i64::from_be_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }

    /// A boolean as Gatling writes it: exactly 0 or 1 (anything else means
    /// the reader has lost its place in the file).
    fn flag(&mut self, what: &str) -> Result<bool, Bad> {
        let at = self.offset();
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            other => Err(corrupt(at, format!("{what} byte is {other}, not 0 or 1"))),
        }
    }

    /// A non-negative count or length, at most `max`.
    fn count(&mut self, what: &str, max: usize) -> Result<usize, Bad> {
        let at = self.offset();
        let n = self.i32()?;
        if n < 0 || n as usize > max {
            return Err(corrupt(
                at,
                format!("{what} {n} is out of range (0 to {max})"),
            ));
        }
        Ok(n as usize)
    }
}

/// The run record's content that the samples need.
#[derive(Debug, Clone)]
struct Run {
    /// Epoch milliseconds; request times are relative to it.
    start_ms: i64,
    scenarios: usize,
}

/// One request record, decoded.
struct Request {
    /// Index of the name in the string cache.
    name: u32,
    start: i32,
    end: i32,
    ok: bool,
}

/// Decodes the records of one file in order, keeping the string cache.
struct Decoder {
    run: Option<Run>,
    /// Cached strings by index, already decoded and sanitised.
    strings: HashMap<u32, Box<str>>,
    /// The longest string or byte array accepted (`limits.max_line_bytes`).
    max_bytes: usize,
    /// Records read, the run record included.
    records: u64,
}

impl Decoder {
    fn new(max_bytes: usize) -> Decoder {
        Decoder {
            run: None,
            strings: HashMap::new(),
            max_bytes,
            records: 0,
        }
    }

    /// Decodes the next record; `Ok(None)` for records other than requests.
    /// On `Err(Bad::Short)` the cursor is left anywhere: the caller retries
    /// from the record start once more bytes are there (re-inserting a
    /// cached string under its own index does no harm).
    fn next(&mut self, c: &mut Cursor) -> Result<Option<Request>, Bad> {
        let at = c.offset();
        let kind = c.u8()?;
        let Some(scenarios) = self.run.as_ref().map(|r| r.scenarios) else {
            if kind != RUN {
                return Err(corrupt(
                    at,
                    format!("the file starts with record type {kind}, not the run record (0)"),
                ));
            }
            self.run = Some(self.run_record(c)?);
            self.records += 1;
            return Ok(None);
        };
        let request = match kind {
            REQUEST => {
                self.groups(c)?;
                let name = self.cached(c)?;
                let (start, end) = (c.i32()?, c.i32()?);
                let ok = c.flag("request status")?;
                self.cached(c)?; // message
                if end < start {
                    return Err(corrupt(
                        at,
                        format!(
                            "request ends before it starts ({start} ms and {end} ms after the run start)"
                        ),
                    ));
                }
                Some(Request {
                    name,
                    start,
                    end,
                    ok,
                })
            }
            USER => {
                let index_at = c.offset();
                let scenario = c.i32()?;
                if scenario < 0 || scenario as usize >= scenarios {
                    return Err(corrupt(
                        index_at,
                        format!(
                            "user record of scenario {scenario}, but the run record lists {scenarios} scenario(s)"
                        ),
                    ));
                }
                c.flag("user start/end")?;
                c.i32()?;
                None
            }
            GROUP => {
                self.groups(c)?;
                c.take(12)?; // start, end, cumulated response time
                c.flag("group status")?;
                None
            }
            ERROR => {
                self.cached(c)?;
                c.i32()?;
                None
            }
            other => {
                return Err(corrupt(
                    at,
                    format!(
                        "unknown record type {other} (after the run record Gatling writes 1 request, \
                         2 user, 3 group, 4 error): a corrupt file, or a layout newer than perfdash knows"
                    ),
                ));
            }
        };
        self.records += 1;
        Ok(request)
    }

    fn run_record(&mut self, c: &mut Cursor) -> Result<Run, Bad> {
        let version_at = c.offset();
        let version = self.string(c)?;
        if !supported_version(&version) {
            return Err(corrupt(
                version_at,
                format!(
                    "Gatling version '{}' in the run record: perfdash reads the binary simulation.log \
                     of Gatling {}.{}.{} and later 3.x versions",
                    version.escape_debug(),
                    FIRST_VERSION.0,
                    FIRST_VERSION.1,
                    FIRST_VERSION.2
                ),
            ));
        }
        self.string(c)?; // simulation class
        let start_at = c.offset();
        let start_ms = c.i64()?;
        // Room for any i32 offset after it, in microseconds.
        if !(0..=i64::MAX / 1000 - i32::MAX as i64).contains(&start_ms) {
            return Err(corrupt(
                start_at,
                format!("run start {start_ms} is not a time in epoch milliseconds"),
            ));
        }
        self.string(c)?; // description
        // Every scenario name takes at least its 4-byte length.
        let scenarios = c.count("scenario count", self.max_bytes / 4)?;
        for _ in 0..scenarios {
            self.string(c)?;
        }
        let assertions = c.count("assertion count", self.max_bytes / 4)?;
        for _ in 0..assertions {
            let length = c.count("assertion length", self.max_bytes)?;
            c.take(length)?; // boopickle bytes, not needed
        }
        Ok(Run {
            start_ms,
            scenarios,
        })
    }

    /// A group hierarchy: a count, then that many cached names.
    fn groups(&mut self, c: &mut Cursor) -> Result<(), Bad> {
        let depth = c.count("group depth", self.max_bytes / 4)?;
        for _ in 0..depth {
            self.cached(c)?;
        }
        Ok(())
    }

    /// A cached string; returns its index in the cache.
    fn cached(&mut self, c: &mut Cursor) -> Result<u32, Bad> {
        let at = c.offset();
        let index = c.i32()?;
        if index >= 0 {
            let text = self.string(c)?;
            self.strings
                .insert(index as u32, sanitize(text).into_boxed_str());
            return Ok(index as u32);
        }
        let key = index.unsigned_abs();
        if self.strings.contains_key(&key) {
            Ok(key)
        } else {
            Err(corrupt(
                at,
                format!("reference to string {key}, which no earlier record defined"),
            ))
        }
    }

    /// A plain string, decoded to UTF-8.
    fn string(&mut self, c: &mut Cursor) -> Result<String, Bad> {
        let length = c.count("string length", self.max_bytes)?;
        if length == 0 {
            return Ok(String::new());
        }
        let bytes = c.take(length)?;
        let coder_at = c.offset();
        match c.u8()? {
            // Latin-1: each byte is the code point.
            0 => Ok(bytes.iter().map(|&b| b as char).collect()),
            1 if length % 2 == 0 => Ok(char::decode_utf16(
                bytes
                    .chunks_exact(2)
                    .map(|p| u16::from_le_bytes([p[0], p[1]])),
            )
            // A Java string may hold a lone surrogate.
            .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
            .collect()),
            1 => Err(corrupt(
                coder_at,
                format!("UTF-16 string of an odd length ({length} bytes)"),
            )),
            other => Err(corrupt(
                coder_at,
                format!("string coder byte is {other}, not 0 (Latin-1) or 1 (UTF-16)"),
            )),
        }
    }
}

/// As Gatling's reader: tabs and line breaks in names become spaces (the
/// text log never had them, so names match between the two logs).
fn sanitize(text: String) -> String {
    if text.contains(['\n', '\r', '\t']) {
        text.replace(['\n', '\r', '\t'], " ")
    } else {
        text
    }
}

/// Where a file was cut short.
struct Cut {
    /// The offset of the incomplete record.
    record_at: u64,
    /// The length of the (plain) content.
    end: u64,
}

pub fn read(file: &InputFile, shown: &Path, opts: &ReadOptions) -> Result<RawFile, Error> {
    let split = opts.split_tag.is_some();
    let max = opts.limits.max_line_bytes;
    let gzip = super::io::is_gzip(file).unwrap_or(false);
    let byte = |offset: u64| {
        if gzip {
            format!("byte {offset} (of the decompressed content)")
        } else {
            format!("byte {offset}")
        }
    };
    let reader = open_plain(file, &opts.limits).map_err(|e| Error::io(shown, e))?;
    let mut decoder = Decoder::new(max);
    let mut grouper = Grouper::default();
    let mut requests = 0u64;
    let mut cut = None;
    let scanned = scan_blocks(reader, max, |block, offset, eof| {
        let mut c = Cursor {
            bytes: block,
            pos: 0,
            base: offset,
            record_start: 0,
            max_record: max,
        };
        while c.pos < block.len() {
            let record_start = c.pos;
            c.record_start = record_start;
            match decoder.next(&mut c) {
                Ok(None) => {}
                Ok(Some(r)) => {
                    let run = decoder
                        .run
                        .as_ref()
                        .expect("requests follow the run record");
                    // No overflow: the run start leaves room for any i32
                    // offset, in microseconds.
                    let t_ms = run.start_ms + r.start as i64;
                    if t_ms < 0 {
                        return Err(super::io::Fault::new(
                            offset + record_start as u64,
                            "request starts before 1970",
                        ));
                    }
                    let key: &[u8] = if split {
                        decoder.strings[&r.name].as_bytes()
                    } else {
                        b""
                    };
                    grouper.push(
                        key,
                        Sample {
                            t_us: t_ms * 1000,
                            ms: (r.end as i64 - r.start as i64) as f64,
                        },
                        r.ok,
                    );
                    requests += 1;
                }
                Err(Bad::Short) if eof => {
                    cut = Some(Cut {
                        record_at: offset + record_start as u64,
                        end: offset + block.len() as u64,
                    });
                    return Ok(block.len());
                }
                Err(Bad::Short) => return Ok(record_start),
                Err(Bad::Corrupt { at, message }) => {
                    return Err(super::io::Fault::new(at, message));
                }
            }
        }
        Ok(block.len())
    });
    let end = scanned.map_err(|e| match e {
        ScanError::Io(e) => Error::io(shown, e),
        // Binary content has no lines: name the byte.
        ScanError::Fault(f) => Error::at(shown, None, format!("{}: {}", byte(f.offset), f.message)),
    })?;
    let mut warnings = Vec::new();
    if end.truncated_stream {
        warnings.push(warning(
            DiagnosticKind::Doubtful,
            shown,
            None,
            "the gzip stream is cut short: the complete records before the cut were used",
        ));
    }
    if let Some(cut) = &cut {
        if decoder.run.is_none() {
            return Err(Error::at(
                shown,
                None,
                format!(
                    "{}: the file ends inside the run record that starts at byte 0 \
                     (a Gatling binary simulation.log cut short before its first request)",
                    byte(cut.end)
                ),
            ));
        }
        warnings.push(warning(
            DiagnosticKind::Doubtful,
            shown,
            None,
            format!(
                "{}: the file ends inside the record that starts at byte {} (was Gatling stopped \
                 mid-write?); the {} complete records before it ({requests} requests) were used",
                byte(cut.end),
                cut.record_at,
                decoder.records
            ),
        ));
    }
    let groups = grouper.finish(|k| String::from_utf8_lossy(k).into_owned());
    if groups.is_empty() {
        return Err(Error::at(
            shown,
            None,
            "no request records in this Gatling binary simulation.log",
        ));
    }
    Ok(RawFile {
        format: SourceFormat::GatlingBinaryLog,
        content: RawContent::Samples {
            groups,
            time_is_start: true,
        },
        warnings,
    })
}

/// Writes a binary log as Gatling's `LogFileDataWriter` does (strings as a
/// JDK with compact strings holds them: Latin-1 when every character fits,
/// else UTF-16 little-endian), for tests and fuzz seeds. Not part of
/// perfdash's API.
#[doc(hidden)]
pub struct LogWriter {
    bytes: Vec<u8>,
    cache: HashMap<String, i32>,
    /// The next cache index; Gatling starts at 1 because −0 cannot be a
    /// back-reference.
    next_index: i32,
    start_ms: i64,
}

impl LogWriter {
    /// A log whose run record names `version`, starts at `start_ms` and
    /// lists `scenarios`.
    pub fn new(version: &str, start_ms: i64, scenarios: &[&str]) -> LogWriter {
        let mut w = LogWriter {
            bytes: Vec::new(),
            cache: HashMap::new(),
            next_index: 1,
            start_ms,
        };
        w.bytes.push(RUN);
        w.string(version);
        w.string("computerdatabase.BasicSimulation");
        w.bytes.extend_from_slice(&start_ms.to_be_bytes());
        w.string("");
        w.int(scenarios.len() as i32);
        for s in scenarios {
            w.string(s);
        }
        w.int(0); // assertions
        w
    }

    /// A request record; times are epoch milliseconds.
    pub fn request(
        &mut self,
        groups: &[&str],
        name: &str,
        start_ms: i64,
        end_ms: i64,
        ok: bool,
        message: &str,
    ) {
        self.bytes.push(REQUEST);
        self.groups(groups);
        self.cached(name);
        self.time(start_ms);
        self.time(end_ms);
        self.bytes.push(ok as u8);
        self.cached(message);
    }

    /// A user record (`start`: the user started, else it ended).
    pub fn user(&mut self, scenario: i32, start: bool, t_ms: i64) {
        self.bytes.push(USER);
        self.int(scenario);
        self.bytes.push(start as u8);
        self.time(t_ms);
    }

    /// A group record.
    pub fn group(&mut self, groups: &[&str], start_ms: i64, end_ms: i64, ok: bool) {
        self.bytes.push(GROUP);
        self.groups(groups);
        self.time(start_ms);
        self.time(end_ms);
        self.int((end_ms - start_ms) as i32);
        self.bytes.push(ok as u8);
    }

    /// An error record.
    pub fn error(&mut self, message: &str, t_ms: i64) {
        self.bytes.push(ERROR);
        self.cached(message);
        self.time(t_ms);
    }

    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    fn int(&mut self, v: i32) {
        self.bytes.extend_from_slice(&v.to_be_bytes());
    }

    fn time(&mut self, t_ms: i64) {
        // Gatling's `(timestamp - runStart).toInt`.
        self.int((t_ms - self.start_ms) as i32);
    }

    fn groups(&mut self, groups: &[&str]) {
        self.int(groups.len() as i32);
        for g in groups {
            self.cached(g);
        }
    }

    fn cached(&mut self, s: &str) {
        match self.cache.get(s) {
            Some(&index) => self.int(-index),
            None => {
                let index = self.next_index;
                self.int(index);
                self.string(s);
                self.cache.insert(s.to_string(), index);
                self.next_index += 1;
            }
        }
    }

    fn string(&mut self, s: &str) {
        if s.is_empty() {
            self.int(0);
            return;
        }
        let (value, coder): (Vec<u8>, u8) = if s.chars().all(|c| (c as u32) < 0x100) {
            (s.chars().map(|c| c as u8).collect(), 0)
        } else {
            (s.encode_utf16().flat_map(u16::to_le_bytes).collect(), 1)
        };
        self.int(value.len() as i32);
        self.bytes.extend_from_slice(&value);
        self.bytes.push(coder);
    }
}

#[cfg(test)]
mod tests;
