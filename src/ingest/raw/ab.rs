//! ApacheBench (`ab`, apache2-utils) outputs.
//!
//! * `-g FILE`: the "gnuplot" TSV, one row per completed request:
//!
//!   ```text
//!   starttime<TAB>seconds<TAB>ctime<TAB>dtime<TAB>ttime<TAB>wait
//!   Thu Dec 03 17:57:08 2026<TAB>1796320628<TAB>0<TAB>3<TAB>3<TAB>3
//!   ```
//!
//!   `seconds` is when the request started (Unix time, whole seconds),
//!   `ttime` its total time in whole milliseconds (`ap_round_ms`). ab sorts
//!   the rows by total time before writing them, not by start. Which
//!   requests failed is not in the file (ab's text report counts "Failed
//!   requests" and "Non-2xx responses"), so such rounds have no error rate.
//!   Recomputed like every raw output, trimmed to the second.
//! * `-e FILE`: ab's own percentiles, `Percentage served,Time in ms`, one
//!   row per percent from 0 (the fastest) to 100 (the slowest): the
//!   ⌊n·p/100 + 0.5⌋-th fastest of the n requests counting from 0
//!   (`output_results` in ab.c), in µs steps. Used as they are.
//!
//! Each file holds one URL: it goes in its endpoint's folder.

use std::collections::BTreeMap;
use std::path::Path;

use super::lines::{cut_warning, for_each_line, number};
use super::{Grouper, RawContent, RawFile, ReadOptions, Sample, warning};
use crate::error::{DiagnosticKind, Error};
use crate::ingest::input::InputFile;
use crate::model::{RoundStats, SourceFormat};

/// The header of `ab -g`.
pub(crate) const GNUPLOT_HEADER: &[u8] = b"starttime\tseconds\tctime\tdtime\tttime\twait";
/// The header of `ab -e`.
pub(crate) const PERCENTILES_HEADER: &[u8] = b"Percentage served,Time in ms";

/// Said once per build with `ab -g` rounds.
pub const GNUPLOT_NOTE: &str = "ab's -g file has start times in whole seconds (the warm-up is \
     trimmed to the second) and total times in whole milliseconds, and does not say which requests \
     failed: its rounds have no error rate (ab's text report counts failed and non-2xx requests)";

/// Said once per build with `ab -e` rounds.
pub const PERCENTILES_NOTE: &str = "ab's -e file holds ab's own percentiles of the whole test (the \
     ⌊n·p/100 + 0.5⌋-th fastest request): no warm-up can be trimmed, and there is no request count, \
     mean or error rate; file the -g output beside it to have the round recomputed";

pub fn read_gnuplot(file: &InputFile, shown: &Path, opts: &ReadOptions) -> Result<RawFile, Error> {
    let mut grouper = Grouper::default();
    let ending = for_each_line(file, shown, &opts.limits, |n, line| {
        if n == 1 {
            return match line == GNUPLOT_HEADER {
                true => Ok(()),
                false => {
                    Err("not ab's -g header (starttime, seconds, ctime, dtime, ttime, wait)".into())
                }
            };
        }
        if line.is_empty() {
            return Ok(());
        }
        let fields: Vec<&[u8]> = line.split(|&b| b == b'\t').collect();
        if fields.len() != 6 {
            return Err(format!(
                "{} tab-separated fields, ab writes 6",
                fields.len()
            ));
        }
        let seconds = std::str::from_utf8(fields[1])
            .ok()
            .and_then(|s| s.trim().parse::<i64>().ok())
            .and_then(|s| s.checked_mul(1_000_000))
            .ok_or("seconds is not a Unix time")?;
        let ms = number(fields[4]).ok_or("ttime is not a number of milliseconds")?;
        grouper.push(b"", Sample { t_us: seconds, ms }, true);
        Ok(())
    })?;
    let groups = grouper.finish(|_| String::new());
    if groups.values().all(|s| s.is_empty()) {
        return Err(Error::at(shown, None, "ab's -g file holds no request"));
    }
    let mut warnings = vec![warning(
        DiagnosticKind::Information,
        shown,
        None,
        GNUPLOT_NOTE,
    )];
    warnings.extend(ending.cut_line.map(|l| cut_warning(shown, l)));
    Ok(RawFile {
        format: SourceFormat::AbGnuplot,
        content: RawContent::Samples {
            groups,
            time_is_start: true,
        },
        warnings,
    })
}

pub fn read_percentiles(
    file: &InputFile,
    shown: &Path,
    opts: &ReadOptions,
) -> Result<RawFile, Error> {
    let mut by_percent: BTreeMap<u32, f64> = BTreeMap::new();
    let ending = for_each_line(file, shown, &opts.limits, |n, line| {
        if n == 1 {
            return match line == PERCENTILES_HEADER {
                true => Ok(()),
                false => Err("not ab's -e header (Percentage served,Time in ms)".into()),
            };
        }
        if line.is_empty() {
            return Ok(());
        }
        let (percent, ms) = line
            .iter()
            .position(|&b| b == b',')
            .map(|i| (&line[..i], &line[i + 1..]))
            .ok_or("expected `percent,milliseconds`")?;
        let percent = std::str::from_utf8(percent)
            .ok()
            .and_then(|p| p.trim().parse::<u32>().ok())
            .filter(|p| *p <= 100)
            .ok_or("the percentage is not a whole number from 0 to 100")?;
        let ms = number(ms).ok_or("the time is not a number of milliseconds")?;
        if by_percent.insert(percent, ms).is_some() {
            return Err(format!("{percent}% is listed twice"));
        }
        Ok(())
    })?;
    let get = |p: u32| by_percent.get(&p).copied();
    let Some(p99) = get(99) else {
        return Err(Error::at(shown, None, "ab's -e file has no 99% row"));
    };
    // ab's percentiles never decrease; a file where they do is not ab's.
    if by_percent
        .values()
        .zip(by_percent.values().skip(1))
        .any(|(a, b)| b < a)
    {
        return Err(Error::at(
            shown,
            None,
            "the times of ab's -e file decrease from one percentage to the next: not ab's output",
        ));
    }
    let stats = RoundStats {
        count: None,
        throughput_rps: None,
        mean_ms: None,
        stddev_ms: None,
        min_ms: get(0),
        p50_ms: get(50),
        p90_ms: get(90),
        p95_ms: get(95),
        p99_ms: p99,
        max_ms: get(100),
        error_rate: None,
    };
    let mut warnings = vec![warning(
        DiagnosticKind::Information,
        shown,
        None,
        PERCENTILES_NOTE,
    )];
    warnings.extend(ending.cut_line.map(|l| cut_warning(shown, l)));
    Ok(RawFile {
        format: SourceFormat::AbPercentiles,
        content: RawContent::Summary {
            groups: BTreeMap::from([(String::new(), stats)]),
        },
        warnings,
    })
}
