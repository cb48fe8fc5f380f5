//! hey `-o csv`: one row per request that got a response.
//!
//! ```text
//! response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read,status-code,offset
//! 0.0046,0.0006,0.0000,0.0000,0.0038,0.0001,200,0.0002
//! ```
//!
//! `response-time` is the request's latency in seconds, `offset` when it
//! started, in seconds from the start of the test (hey writes both with 4
//! decimals: 0.1 ms steps); `status-code` the HTTP status. A request that
//! got no response (connection refused, timeout) is not in the file at all
//! (hey keeps those in its text report's "Error distribution"), so such
//! failures cannot count in the error rate. A file holds one URL: it goes
//! in its endpoint's folder.

use std::path::Path;

use super::lines::{cut_warning, for_each_line, number};
use super::{Grouper, RawContent, RawFile, ReadOptions, Sample, warning};
use crate::error::{DiagnosticKind, Error};
use crate::ingest::input::InputFile;
use crate::model::SourceFormat;

/// hey's header, as `printCSV` writes it.
pub(crate) const HEADER: &[u8] =
    b"response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read,status-code,offset";

/// Said once per build with hey rounds.
pub const HEY_NOTE: &str = "hey's CSV lists only the requests that got a response: connection \
     errors and timeouts (its text report's \"Error distribution\") are not in it and not in the \
     error rate; times are in 0.1 ms steps";

pub fn read(file: &InputFile, shown: &Path, opts: &ReadOptions) -> Result<RawFile, Error> {
    let mut grouper = Grouper::default();
    let mut columns: Option<(usize, usize, usize)> = None;
    let ending = for_each_line(file, shown, &opts.limits, |n, line| {
        if n == 1 {
            let names: Vec<&[u8]> = line.split(|&b| b == b',').collect();
            let find = |name: &[u8]| names.iter().position(|n| *n == name);
            columns = Some(
                match (
                    find(b"response-time"),
                    find(b"status-code"),
                    find(b"offset"),
                ) {
                    (Some(t), Some(s), Some(o)) => (t, s, o),
                    _ => {
                        return Err(
                            "not hey's CSV header (response-time, …, status-code, offset)".into(),
                        );
                    }
                },
            );
            return Ok(());
        }
        if line.is_empty() {
            return Ok(());
        }
        let (rt, sc, off) = columns.expect("set by the header");
        let fields: Vec<&[u8]> = line.split(|&b| b == b',').collect();
        let field = |i: usize| fields.get(i).copied().unwrap_or_default();
        let seconds = number(field(rt)).ok_or("response-time is not a number of seconds")?;
        let offset = number(field(off)).ok_or("offset is not a number of seconds")?;
        let status = std::str::from_utf8(field(sc))
            .ok()
            .and_then(|s| s.trim().parse::<u16>().ok())
            .ok_or("status-code is not an HTTP status")?;
        let sample = Sample {
            t_us: (offset * 1e6).round() as i64,
            ms: seconds * 1000.0,
        };
        grouper.push(b"", sample, (100..400).contains(&status));
        Ok(())
    })?;
    let groups = grouper.finish(|_| String::new());
    if groups.values().all(|s| s.is_empty()) {
        return Err(Error::at(
            shown,
            None,
            "hey's CSV holds no request (none got a response? hey's text report lists the errors)",
        ));
    }
    let mut warnings = vec![warning(DiagnosticKind::Information, shown, None, HEY_NOTE)];
    warnings.extend(ending.cut_line.map(|l| cut_warning(shown, l)));
    Ok(RawFile {
        format: SourceFormat::HeyCsv,
        content: RawContent::Samples {
            groups,
            time_is_start: true,
        },
        warnings,
    })
}
