//! JMeter JTL CSV (FORMATS.md §2.1). Columns are mapped by header names;
//! a file without header is mapped by its column count (12 = JMeter 2.13
//! defaults, 17 = 5.x defaults). `timeStamp` is the sample start (the
//! shipped `sampleresult.timestamp.start=true`), `elapsed` the latency.
//! Quoted fields may span lines (failure messages).

use std::path::Path;

use super::csv_scan::{field_text, for_each_record, record_end, split_fields};
use super::io::{Fault, ScanEnd, ScanError, open_plain, scan_blocks};
use super::slices;
use super::time::{parse_f64, parse_u64};
use super::{Grouper, RawContent, RawFile, ReadOptions, Sample};
use crate::error::Error;
use crate::ingest::input::InputFile;
use crate::model::SourceFormat;

/// Every column name JMeter can write (`CSVSaveService`).
const KNOWN: [&str; 22] = [
    "timeStamp",
    "elapsed",
    "label",
    "responseCode",
    "responseMessage",
    "threadName",
    "dataType",
    "success",
    "failureMessage",
    "bytes",
    "sentBytes",
    "grpThreads",
    "allThreads",
    "URL",
    "Filename",
    "Latency",
    "Encoding",
    "SampleCount",
    "ErrorCount",
    "Hostname",
    "IdleTime",
    "Connect",
];

#[derive(Debug, Clone, Copy)]
struct Columns {
    delim: u8,
    time: usize,
    elapsed: usize,
    label: Option<usize>,
    success: Option<usize>,
    /// `allThreads`: active threads of all thread groups when the sample
    /// ended (read only for step-load files).
    all_threads: Option<usize>,
    needed: usize,
    has_header: bool,
}

/// Whether the first record is a JTL header, or a headerless JTL row of
/// the 2.13 or 5.x default layout.
pub(crate) fn looks_like_jtl_csv(text: &[u8]) -> bool {
    let end = record_end(text, 0).unwrap_or(text.len());
    let first = &text[..end];
    if header_columns(first).is_some() {
        return true;
    }
    headerless(first).is_ok()
}

fn delimiter(first: &[u8]) -> u8 {
    let commas = memchr::memchr_iter(b',', first).count();
    let tabs = memchr::memchr_iter(b'\t', first).count();
    if tabs > commas { b'\t' } else { b',' }
}

fn header_columns(first: &[u8]) -> Option<Columns> {
    let delim = delimiter(first);
    let mut fields = Vec::new();
    split_fields(first, delim, usize::MAX, &mut fields);
    let names: Vec<&[u8]> = fields
        .iter()
        .map(|&(a, b)| first[a..b].trim_ascii())
        .collect();
    // A header: at least two names, all known JMeter columns (sample
    // variables may follow the known ones, so only require the first two).
    if names.len() < 2
        || !names[..2]
            .iter()
            .all(|n| KNOWN.iter().any(|k| k.as_bytes() == *n))
    {
        return None;
    }
    let find = |name: &str| names.iter().position(|n| *n == name.as_bytes());
    let (time, elapsed) = (find("timeStamp"), find("elapsed"));
    let label = find("label");
    let success = find("success");
    let all_threads = find("allThreads");
    let needed = [time, elapsed, label, success]
        .into_iter()
        .flatten()
        .max()
        .unwrap_or(0)
        + 1;
    Some(Columns {
        delim,
        // usize::MAX marks a missing column; `read` reports it.
        time: time.unwrap_or(usize::MAX),
        elapsed: elapsed.unwrap_or(usize::MAX),
        label,
        success,
        all_threads,
        needed,
        has_header: true,
    })
}

/// Columns of a headerless file from its first row.
fn headerless(first: &[u8]) -> Result<Columns, String> {
    let delim = delimiter(first);
    let mut fields = Vec::new();
    split_fields(first, delim, usize::MAX, &mut fields);
    let f = |i: usize| fields.get(i).map(|&(a, b)| &first[a..b]).unwrap_or(b"");
    let is_bool = |v: &[u8]| v == b"true" || v == b"false";
    if parse_u64(f(0)).is_none() || parse_u64(f(1)).is_none() {
        return Err("not a JMeter JTL row (timeStamp, elapsed)".into());
    }
    match fields.len() {
        // 2.13 and 5.x defaults both start timeStamp,elapsed,label,
        // responseCode,responseMessage,threadName,dataType,success; then
        // 2.13: bytes,grpThreads,allThreads; 5.x: failureMessage,bytes,
        // sentBytes,grpThreads,allThreads.
        n @ (12 | 17) if is_bool(f(7)) => Ok(Columns {
            delim,
            time: 0,
            elapsed: 1,
            label: Some(2),
            success: Some(7),
            all_threads: Some(if n == 12 { 10 } else { 12 }),
            needed: 8,
            has_header: false,
        }),
        n => Err(format!(
            "JMeter CSV without a header and with {n} columns: only the 2.13 (12) and 5.x (17) default layouts \
             can be read without a header; save with jmeter.save.saveservice.print_field_names=true"
        )),
    }
}

pub fn read(file: &InputFile, shown: &Path, opts: &ReadOptions) -> Result<RawFile, Error> {
    read_inner(file, shown, opts, None)
}

/// [`read`], and also the `allThreads` level over time for step-load
/// files: one `(time µs, threads)` point each time the level changes
/// (in file order), so the extra memory is per change, not per sample.
pub fn read_with_threads(
    file: &InputFile,
    shown: &Path,
    opts: &ReadOptions,
) -> Result<(RawFile, Vec<(i64, f64)>), Error> {
    let mut levels = Vec::new();
    let raw = read_inner(file, shown, opts, Some(&mut levels))?;
    Ok((raw, levels))
}

fn read_inner(
    file: &InputFile,
    shown: &Path,
    opts: &ReadOptions,
    levels: Option<&mut Vec<(i64, f64)>>,
) -> Result<RawFile, Error> {
    let split = opts.split_tag.is_some();
    let max_line = opts.limits.max_line_bytes;
    // A large plain file is read by all cores in slices cut where records
    // start (quotes respected); the thread levels of step-load files need
    // one pass in order.
    let plan = match levels {
        Some(_) => None,
        None => slices::plan(file, slices::Records::QuotedCsv).map_err(|e| Error::io(shown, e))?,
    };
    let sliced = plan.and_then(|parts| {
        // Every slice but the first needs the columns the first record
        // gives; when that record is not readable here, one pass reports it.
        let columns = first_columns(file).ok()?;
        Some((parts, columns))
    });
    let (grouper, tail, end) = match sliced {
        Some((parts, columns)) => {
            let scanned = slices::map(file, &parts, |reader, slice, _last| {
                let known = (slice.start > 0).then_some(columns);
                scan(reader, slice.start, max_line, split, known, None)
            })
            .map_err(|e| e.into_error(file, shown))?;
            slices::join(scanned)
        }
        None => {
            let reader = open_plain(file, &opts.limits).map_err(|e| Error::io(shown, e))?;
            scan(reader, 0, max_line, split, None, levels).map_err(|e| e.into_error(file, shown))?
        }
    };
    let warnings = super::k6_ndjson::truncation_warnings(file, shown, tail, &end);
    let groups = grouper.finish(|k| String::from_utf8_lossy(k).into_owned());
    if groups.is_empty() {
        return Err(Error::at(shown, None, "no samples in this JMeter CSV"));
    }
    Ok(RawFile {
        format: SourceFormat::JmeterCsv,
        content: RawContent::Samples {
            groups,
            time_is_start: true,
        },
        warnings,
    })
}

/// The columns the first non-blank record of the file gives (its header,
/// or the layout of a headerless file).
fn first_columns(file: &InputFile) -> Result<Columns, ()> {
    // Sized by the file: a zeroed 64 KiB for every small file added up.
    let size = usize::try_from(file.len()).map_or(usize::MAX, |len| len.saturating_add(1));
    let mut head = vec![0u8; size.min(64 * 1024)];
    let n = file.read_at(&mut head, 0).map_err(|_| ())?;
    let head = &head[..n];
    let mut pos = 0;
    while let Some(end) = record_end(head, pos) {
        let record = &head[pos..end];
        pos = end + 1;
        if record.trim_ascii().is_empty() {
            continue;
        }
        let record = record.strip_prefix(b"\xef\xbb\xbf").unwrap_or(record);
        return match header_columns(record) {
            Some(c) => Ok(c),
            None => headerless(record).map_err(|_| ()),
        };
    }
    Err(())
}

/// Groups the samples of `reader`, whose first byte is at `base` in the
/// file. `columns` is `None` at the file's start (the first record says
/// them); `levels` collects the `allThreads` level over time. Also returns
/// where a cut-short last line starts, and how the input ended.
fn scan(
    reader: impl std::io::Read,
    base: u64,
    max_line: usize,
    split: bool,
    mut columns: Option<Columns>,
    mut levels: Option<&mut Vec<(i64, f64)>>,
) -> Result<(Grouper, Option<u64>, ScanEnd), ScanError> {
    let mut latest: Option<(i64, f64)> = None;
    let mut grouper = Grouper::default();
    let mut fields = Vec::with_capacity(32);
    let mut tail: Option<u64> = None;
    let end = scan_blocks(reader, max_line, |block, offset, eof| {
        let offset = base + offset;
        let scanned = for_each_record(block, eof, |record, at| -> Result<(), Fault> {
            let fault = |msg: String| Fault::new(offset + at as u64, msg);
            if record.trim_ascii().is_empty() {
                return Ok(());
            }
            let cols = match columns {
                Some(c) => c,
                None => {
                    let record = record.strip_prefix(b"\xef\xbb\xbf").unwrap_or(record);
                    let c = match header_columns(record) {
                        Some(c) => c,
                        None => headerless(record).map_err(fault)?,
                    };
                    if c.time == usize::MAX || c.elapsed == usize::MAX {
                        return Err(fault(
                                "JMeter CSV without timeStamp and elapsed columns: no latencies to compute \
                                 (enable jmeter.save.saveservice.timestamp_format and .time)"
                                    .into(),
                            ));
                    }
                    columns = Some(c);
                    if c.has_header {
                        return Ok(());
                    }
                    c
                }
            };
            let needed = match (&levels, cols.all_threads) {
                (Some(_), Some(i)) => cols.needed.max(i + 1),
                _ => cols.needed,
            };
            split_fields(record, cols.delim, needed, &mut fields);
            let get = |i: usize| fields.get(i).map(|&(a, b)| &record[a..b]);
            let (Some(t), Some(e)) = (get(cols.time), get(cols.elapsed)) else {
                return Err(fault(format!(
                    "only {} fields in this row, the header has at least {}",
                    fields.len(),
                    cols.needed
                )));
            };
            let t_us = match parse_u64(t) {
                Some(ms) => super::time::ms_to_us(ms).ok_or_else(|| {
                    fault(format!(
                        "timeStamp '{}' is out of range",
                        String::from_utf8_lossy(t)
                    ))
                })?,
                None => parse_date(&field_text(t)).ok_or_else(|| {
                    fault(format!(
                        "timeStamp '{}' is not a time",
                        String::from_utf8_lossy(t)
                    ))
                })?,
            };
            let ms =
                parse_f64(e).ok_or_else(|| fault("elapsed is not a non-negative number".into()))?;
            let success = match cols.success.and_then(get) {
                Some(s) => !s.eq_ignore_ascii_case(b"false"),
                None => true,
            };
            let label = if split {
                cols.label.and_then(get).map(field_text).unwrap_or_default()
            } else {
                Default::default()
            };
            grouper.push(&label, Sample { t_us, ms }, success);
            if let Some(levels) = levels.as_deref_mut()
                && let Some(threads) = cols.all_threads.and_then(get).and_then(parse_u64)
            {
                let threads = threads as f64;
                if levels.last().is_none_or(|&(_, l)| l != threads) {
                    levels.push((t_us, threads));
                }
                // The latest sample, so that the last level lasts
                // until it (pushed at the end).
                if latest.is_none_or(|(t, _)| t_us >= t) {
                    latest = Some((t_us, threads));
                }
            }
            Ok(())
        })?;
        if let Some(at) = scanned.cut_short_at {
            // A last line cut short (the tool was stopped mid-write).
            tail = Some(offset + at as u64);
        }
        Ok(scanned.consumed)
    })?;
    if let (Some(levels), Some(latest)) = (levels, latest)
        && levels.last() != Some(&latest)
    {
        levels.push(latest);
    }
    Ok((grouper, tail, end))
}

/// A `timeStamp` written with a `SimpleDateFormat` pattern
/// (`jmeter.save.saveservice.timestamp_format`): the common patterns,
/// read as UTC.
fn parse_date(s: &[u8]) -> Option<i64> {
    let text = std::str::from_utf8(s).ok()?.trim();
    if let Some(t) = super::time::parse_rfc3339_micros(text.as_bytes()) {
        return Some(t);
    }
    for pattern in [
        "%Y/%m/%d %H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y/%m/%d %H:%M:%S",
        "%Y-%m-%d %H:%M:%S",
        "%Y-%m-%dT%H:%M:%S%.f",
    ] {
        if let Ok(t) = chrono::NaiveDateTime::parse_from_str(text, pattern) {
            return Some(t.and_utc().timestamp_micros());
        }
    }
    None
}
