//! Locust `--csv PREFIX` → `PREFIX_stats.csv` (FORMATS.md §4).
//!
//! This file holds only end-of-test summary figures, so **no warm-up can
//! be trimmed** and the percentiles are Locust's own, computed from
//! response times rounded to 2 significant digits. perfdash takes them as
//! they are, says so once per build ([`LOCUST_NOTE`]), and decides
//! verdicts on them with that rounding in mind
//! (`analyse::verdict::Resolution`).
//!
//! Rows are per request name plus an `Aggregated` row (`Total` before
//! Locust 1.0). Unsplit, a file with one request name gives that row, else
//! the aggregated row.

use std::collections::BTreeMap;
use std::path::Path;

use super::{RawContent, RawFile, ReadOptions, warning};
use crate::error::{DiagnosticKind, Error};
use crate::ingest::input::InputFile;
use crate::model::{RoundStats, SourceFormat};

/// What every build with Locust rounds says once (information, not a
/// warning: nothing is wrong with the files).
pub const LOCUST_NOTE: &str = "Locust _stats.csv holds only end-of-test figures: no warm-up can be \
     trimmed, and its percentiles are Locust's, from response times rounded to 2 significant digits \
     (1 ms steps below 100 ms, 10 ms below 1 s, 100 ms below 10 s); a verdict on Locust rounds \
     needs the change to cross the line even at the far edges of that rounding (docs/raw-results.md)";

/// Whether a first line is a Locust `_stats.csv` header (1.0+ or older).
pub(crate) fn is_stats_header(first: &[u8]) -> bool {
    let text = String::from_utf8_lossy(first);
    let names: Vec<&str> = text.split(',').map(|s| s.trim_matches('"')).collect();
    names.len() > 4
        && names[1] == "Name"
        && matches!(names[0], "Type" | "Method")
        && matches!(names[2], "Request Count" | "# requests")
}

pub fn read(file: &InputFile, shown: &Path, opts: &ReadOptions) -> Result<RawFile, Error> {
    let plain = super::io::open_plain(file, &opts.limits).map_err(|e| Error::io(shown, e))?;
    let mut csv = csv::ReaderBuilder::new().flexible(true).from_reader(plain);
    let header = csv
        .headers()
        .map_err(|e| Error::at(shown, Some(1), format!("not CSV: {e}")))?
        .clone();
    let col = |names: &[&str]| header.iter().position(|h| names.contains(&h));
    let required = |names: &[&str]| {
        col(names).ok_or_else(|| {
            Error::at(
                shown,
                Some(1),
                format!("Locust stats without a '{}' column", names[0]),
            )
        })
    };
    let name_col = required(&["Name"])?;
    let count_col = required(&["Request Count", "# requests"])?;
    let fail_col = required(&["Failure Count", "# failures"])?;
    let p99_col = required(&["99%"])?;
    let mean_col = col(&["Average Response Time", "Average response time"]);
    let min_col = col(&["Min Response Time", "Min response time"]);
    let max_col = col(&["Max Response Time", "Max response time"]);
    let rps_col = col(&["Requests/s"]);
    let (p50_col, p90_col, p95_col) = (col(&["50%"]), col(&["90%"]), col(&["95%"]));

    let mut rows: Vec<(String, Result<RoundStats, String>, bool)> = Vec::new();
    for (i, record) in csv.records().enumerate() {
        let line = i as u64 + 2;
        let record = record.map_err(|e| Error::at(shown, Some(line), format!("not CSV: {e}")))?;
        let get = |c: usize| record.get(c).unwrap_or("").trim();
        let num = |c: Option<usize>| {
            c.and_then(|c| get(c).parse::<f64>().ok())
                .filter(|v| v.is_finite())
        };
        let name = get(name_col).to_string();
        let aggregated = matches!(name.as_str(), "Aggregated" | "Total") && get(0).is_empty()
            || name == "Aggregated";
        let count: u64 = get(count_col)
            .parse()
            .map_err(|_| Error::at(shown, Some(line), "Request Count is not a whole number"))?;
        let failures: u64 = get(fail_col).parse().unwrap_or(0);
        let stats = match num(Some(p99_col)) {
            Some(p99) => Ok(RoundStats {
                count: Some(count),
                throughput_rps: num(rps_col),
                mean_ms: num(mean_col),
                stddev_ms: None,
                min_ms: num(min_col),
                p50_ms: num(p50_col),
                p90_ms: num(p90_col),
                p95_ms: num(p95_col),
                p99_ms: p99,
                max_ms: num(max_col),
                error_rate: (count > 0).then(|| failures as f64 / count as f64),
            }),
            None => Err(format!(
                "line {line}: no 99% value ('{}'): no requests?",
                get(p99_col)
            )),
        };
        rows.push((name, stats, aggregated));
    }

    let mut groups: BTreeMap<String, RoundStats> = BTreeMap::new();
    let mut pick = |name: &str, stats: &Result<RoundStats, String>| match stats {
        Ok(s) => {
            groups.insert(name.to_string(), s.clone());
            Ok(())
        }
        Err(m) => Err(Error::at(shown, None, m.clone())),
    };
    let requests: Vec<_> = rows.iter().filter(|r| !r.2).collect();
    if opts.split_tag.is_some() {
        for (name, stats, _) in &requests {
            pick(name, stats)?;
        }
    } else if let [(_, stats, _)] = requests.as_slice() {
        pick("", stats)?;
    } else if let Some((_, stats, _)) = rows.iter().find(|r| r.2) {
        pick("", stats)?;
    }
    if groups.is_empty() {
        return Err(Error::at(
            shown,
            None,
            "no request rows in this Locust _stats.csv",
        ));
    }
    Ok(RawFile {
        format: SourceFormat::LocustStats,
        content: RawContent::Summary { groups },
        // Said once per build, however many Locust files there are.
        warnings: vec![warning(
            DiagnosticKind::Information,
            shown,
            None,
            LOCUST_NOTE,
        )],
    })
}
