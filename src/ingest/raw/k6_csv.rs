//! k6 `--out csv` (FORMATS.md §1.5): header-driven, one metric sample per
//! row. Only rows of the latency metric are split into fields.
//!
//! `timestamp` is unix seconds by default (so trimming is to the second);
//! `K6_CSV_TIME_FORMAT` can make it `unix_milli|unix_micro|unix_nano` (told
//! apart by the number of digits) or `rfc3339[_nano]`.

use std::path::Path;

use super::csv_scan::{field_text, for_each_record, split_fields};
use super::io::{Fault, open_plain, scan_blocks};
use super::time::{parse_f64, parse_rfc3339_micros, parse_u64};
use super::{Grouper, RawContent, RawFile, ReadOptions, Sample};
use crate::error::Error;
use crate::ingest::input::InputFile;
use crate::model::SourceFormat;

struct Columns {
    time: usize,
    value: usize,
    expected_response: Option<usize>,
    status: Option<usize>,
    split: Option<usize>,
    needed: usize,
}

/// A k6 CSV timestamp in µs since the epoch.
pub(crate) fn parse_timestamp(s: &[u8]) -> Option<i64> {
    if s.contains(&b'-') {
        return parse_rfc3339_micros(s);
    }
    let v = parse_u64(s)? as i64;
    Some(match s.len() {
        0..=10 => v * 1_000_000,
        11..=13 => v * 1_000,
        14..=16 => v,
        _ => v / 1_000,
    })
}

pub fn read(file: &InputFile, shown: &Path, opts: &ReadOptions) -> Result<RawFile, Error> {
    let mut columns: Option<Columns> = None;
    let mut prefix = opts.metric.clone().into_bytes();
    prefix.push(b',');
    let mut grouper = Grouper::default();
    let mut fields = Vec::with_capacity(32);
    let mut tail: Option<u64> = None;
    let reader = open_plain(file, &opts.limits).map_err(|e| Error::io(shown, e))?;
    let end = scan_blocks(reader, opts.limits.max_line_bytes, |block, offset, eof| {
        let scanned = for_each_record(block, eof, |record, at| -> Result<(), Fault> {
            let fault = |msg: String| Fault::new(offset + at as u64, msg);
            let Some(cols) = &columns else {
                columns = Some(header(record, opts).map_err(fault)?);
                return Ok(());
            };
            if !record.starts_with(&prefix) {
                return Ok(());
            }
            split_fields(record, b',', cols.needed, &mut fields);
            let get = |i: usize| fields.get(i).map(|&(a, b)| &record[a..b]);
            let (Some(t), Some(v)) = (get(cols.time), get(cols.value)) else {
                return Err(fault(format!("only {} fields in this row", fields.len())));
            };
            let t_us = parse_timestamp(t).ok_or_else(|| fault("timestamp is not a time".into()))?;
            let ms = parse_f64(v)
                .ok_or_else(|| fault("metric_value is not a non-negative number".into()))?;
            let success = match cols
                .expected_response
                .and_then(get)
                .filter(|v| !v.is_empty())
            {
                Some(v) => v != b"false",
                None => cols
                    .status
                    .and_then(get)
                    .and_then(parse_u64)
                    .is_none_or(|s| (1..400).contains(&s)),
            };
            let key = cols.split.and_then(get).map(field_text).unwrap_or_default();
            grouper.push(&key, Sample { t_us, ms }, success);
            Ok(())
        })?;
        if let Some(at) = scanned.cut_short_at {
            // A last line cut short (the tool was stopped mid-write).
            tail = Some(offset + at as u64);
        }
        Ok(scanned.consumed)
    })
    .map_err(|e| e.into_error(file, shown))?;
    let warnings = super::k6_ndjson::truncation_warnings(file, shown, tail, &end);
    let groups = grouper.finish(|k| String::from_utf8_lossy(k).into_owned());
    if groups.is_empty() {
        return Err(Error::at(
            shown,
            None,
            format!("no '{}' rows in this k6 CSV", opts.metric),
        ));
    }
    Ok(RawFile {
        format: SourceFormat::K6Csv,
        content: RawContent::Samples {
            groups,
            time_is_start: false,
        },
        warnings,
    })
}

fn header(record: &[u8], opts: &ReadOptions) -> Result<Columns, String> {
    let mut fields = Vec::new();
    split_fields(record, b',', usize::MAX, &mut fields);
    let names: Vec<&[u8]> = fields.iter().map(|&(a, b)| &record[a..b]).collect();
    let find = |name: &str| names.iter().position(|n| *n == name.as_bytes());
    let time = find("timestamp").ok_or("k6 CSV header without a timestamp column")?;
    let value = find("metric_value").ok_or("k6 CSV header without a metric_value column")?;
    let split = match &opts.split_tag {
        Some(tag) => Some(find(tag).ok_or_else(|| {
            format!("k6 CSV header has no '{tag}' column to split endpoints by (is the tag enabled in systemTags?)")
        })?),
        None => None,
    };
    let expected_response = find("expected_response");
    let status = find("status");
    let needed = [Some(time), Some(value), expected_response, status, split]
        .into_iter()
        .flatten()
        .max()
        .unwrap_or(0)
        + 1;
    Ok(Columns {
        time,
        value,
        expected_response,
        status,
        split,
        needed,
    })
}
