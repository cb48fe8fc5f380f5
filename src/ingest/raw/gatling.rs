//! Gatling text `simulation.log` (FORMATS.md §3.1), tab-separated, no
//! header. Both layouts of REQUEST records are read, told apart per line
//! by where the `OK`/`KO` status sits:
//!
//! * 3.0–3.3: `REQUEST userId groups name start end status message`
//! * 3.4–3.12: `REQUEST groups name start end status message`
//!
//! Latency = end − start (ms); the sample time is the start. Records other
//! than REQUEST (RUN, USER, GROUP, ERROR, ASSERTION) are skipped. The
//! binary log that Gatling writes since 3.12.1/3.13 is read by
//! [`super::gatling_binary`], with the same sample semantics.

use std::path::Path;

use super::io::{Fault, open_plain, scan_blocks};
use super::time::parse_u64;
use super::{Grouper, RawContent, RawFile, ReadOptions, Sample};
use crate::error::Error;
use crate::ingest::input::InputFile;
use crate::model::SourceFormat;

/// A parsed REQUEST record.
fn request<'a>(fields: &[&'a [u8]]) -> Result<(&'static str, &'a [u8], u64, u64, bool), String> {
    let is_status = |f: Option<&&[u8]>| matches!(f.copied(), Some(b"OK" | b"KO"));
    let (layout, name, start, end, status) = if is_status(fields.get(5)) {
        ("3.4+", fields[2], fields[3], fields[4], fields[5])
    } else if is_status(fields.get(6)) {
        ("3.0-3.3", fields[3], fields[4], fields[5], fields[6])
    } else {
        return Err("REQUEST record without OK/KO status in column 6 (3.4+) or 7 (3.0-3.3)".into());
    };
    let start = parse_u64(start)
        .ok_or_else(|| format!("request start is not epoch ms ({layout} layout)"))?;
    let end =
        parse_u64(end).ok_or_else(|| format!("request end is not epoch ms ({layout} layout)"))?;
    if end < start {
        return Err("request ends before it starts".into());
    }
    if super::time::ms_to_us(end).is_none() {
        return Err(format!("request time is out of range ({layout} layout)"));
    }
    Ok((layout, name, start, end, status == b"OK"))
}

pub fn read(file: &InputFile, shown: &Path, opts: &ReadOptions) -> Result<RawFile, Error> {
    let mut grouper = Grouper::default();
    let split = opts.split_tag.is_some();
    let reader = open_plain(file, &opts.limits).map_err(|e| Error::io(shown, e))?;
    // Gatling replaces tabs and newlines inside messages with spaces, so a
    // record is exactly one line; quotes have no meaning. Split on '\n'.
    scan_blocks(reader, opts.limits.max_line_bytes, |block, offset, eof| {
        let complete = if eof {
            block.len()
        } else {
            memchr::memrchr(b'\n', block).map(|i| i + 1).unwrap_or(0)
        };
        let mut start = 0;
        let lines = &block[..complete];
        for end in memchr::memchr_iter(b'\n', lines).chain(std::iter::once(lines.len())) {
            if end < start {
                continue;
            }
            let line = &lines[start..end];
            let at = start;
            start = end + 1;
            if !line.starts_with(b"REQUEST\t") {
                continue;
            }
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let mut fields: [&[u8]; 8] = [b""; 8];
            let mut n = 0;
            for part in line.split(|&b| b == b'\t').take(8) {
                fields[n] = part;
                n += 1;
            }
            let fields = &fields[..n];
            let (_, name, t0, t1, ok) =
                request(fields).map_err(|m| Fault::new(offset + at as u64, m))?;
            let key: &[u8] = if split { name } else { b"" };
            grouper.push(
                key,
                Sample {
                    // In range: checked by `request`.
                    t_us: t0 as i64 * 1000,
                    ms: (t1 - t0) as f64,
                },
                ok,
            );
        }
        Ok(complete)
    })
    .map_err(|e| e.into_error(file, shown))?;
    let groups = grouper.finish(|k| String::from_utf8_lossy(k).into_owned());
    if groups.is_empty() {
        return Err(Error::at(
            shown,
            None,
            "no REQUEST records in this Gatling log",
        ));
    }
    Ok(RawFile {
        format: SourceFormat::GatlingLog,
        content: RawContent::Samples {
            groups,
            time_is_start: true,
        },
        warnings: Vec::new(),
    })
}
