//! Line by line over the plain content of a small tabular output (hey's
//! CSV, ab's TSV and percentile CSV), under the caps: gzip inflated, a
//! UTF-8 byte-order mark before the first line and `\r` before each `\n`
//! removed (files that passed through Windows tools), lines longer than
//! `limits.max_line_bytes` refused.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use crate::error::{DiagnosticKind, Error};
use crate::ingest::input::InputFile;
use crate::ingest::limits::Limits;

/// What [`for_each_line`] found besides the lines it handed over.
pub(crate) struct Ending {
    /// The 1-based number of a last line that had no `\n`: a writer
    /// stopped mid-line. It was left out.
    pub cut_line: Option<u64>,
}

/// Calls `f(line_number, line)` for every line (1-based numbers, empty
/// lines included). An `Err(message)` from `f` stops reading with an error
/// naming the file and line. A last line without a newline (after the
/// header) is left out and reported in [`Ending::cut_line`].
pub(crate) fn for_each_line(
    file: &InputFile,
    shown: &Path,
    limits: &Limits,
    mut f: impl FnMut(u64, &[u8]) -> Result<(), String>,
) -> Result<Ending, Error> {
    let plain = super::io::open_plain(file, limits).map_err(|e| Error::io(shown, e))?;
    let mut reader = BufReader::with_capacity(64 * 1024, plain);
    let mut buf = Vec::new();
    let max = limits.max_line_bytes;
    let mut number = 0u64;
    loop {
        buf.clear();
        let n = (&mut reader)
            .take(max as u64 + 1)
            .read_until(b'\n', &mut buf)
            .map_err(|e| Error::io(shown, e))?;
        if n == 0 {
            return Ok(Ending { cut_line: None });
        }
        number += 1;
        let terminated = buf.last() == Some(&b'\n');
        if !terminated && buf.len() > max {
            return Err(Error::at(
                shown,
                Some(number),
                format!(
                    "a line longer than {max} bytes (limits.max_line_bytes): not a load-test output, \
                     or raise the limit"
                ),
            ));
        }
        let mut line = buf.as_slice();
        if terminated {
            line = &line[..line.len() - 1];
        }
        line = line.strip_suffix(b"\r").unwrap_or(line);
        if number == 1 {
            line = line.strip_prefix(b"\xef\xbb\xbf").unwrap_or(line);
        }
        // A last line without its newline: the writer was stopped
        // mid-line, and a number cut short still parses (`5.98` of
        // `5.9868`), so the line is left out whatever it holds.
        if !terminated && number > 1 && !line.is_empty() {
            return Ok(Ending {
                cut_line: Some(number),
            });
        }
        f(number, line).map_err(|message| Error::at(shown, Some(number), message))?;
    }
}

/// The warning for a last line left out ([`Ending::cut_line`]).
pub(crate) fn cut_warning(shown: &Path, line: u64) -> crate::error::Diagnostic {
    super::warning(
        DiagnosticKind::Doubtful,
        shown,
        Some(line),
        "the last line is incomplete (no newline at the end: was the load tool stopped \
         mid-write?); it was ignored and the complete lines before it were used",
    )
}

/// A field as a finite, non-negative number.
pub(crate) fn number(field: &[u8]) -> Option<f64> {
    std::str::from_utf8(field)
        .ok()?
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0 && *v < 1e15)
}
