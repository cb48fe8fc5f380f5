//! Folded/collapsed stacks: `root;…;leaf<whitespace><count>` per line.
//!
//! The count is the token after the *last* run of whitespace (frames may hold
//! spaces: C++ signatures, py-spy's `func (file:line)`), and may be fractional
//! as in flamegraph.pl's `^(.*)\s+?(\d+(?:\.\d*)?)$`. A second trailing number
//! makes a differential line `stack before after`; like flamegraph.pl, the
//! width is then the second (after) count. Duplicate stacks are summed.

use std::path::Path;

use super::{Profile, ProfileFormat};
use crate::error::Error;

/// How many skipped lines are named one by one before the rest are counted.
const NAMED_SKIPS: usize = 5;

/// Parses folded text (already decoded). Lines starting with `#` or `//` are
/// comments; other lines without a trailing count are skipped and warned
/// about. An input with lines but no valid one is an error; an empty input is
/// an empty profile.
pub fn parse_folded(text: &str, path: &Path, kind: &str) -> Result<Profile, Error> {
    let mut profile = Profile::empty(kind, ProfileFormat::Folded);
    let mut differential = 0usize;
    let mut first_bad: Option<u64> = None;
    let mut valid = 0usize;
    for (index, raw) in text.split('\n').enumerate() {
        let line = raw.trim_end_matches('\r').trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with("//") {
            continue;
        }
        let line_no = index as u64 + 1;
        if is_count(line) {
            // A count with an empty stack (py-spy writes these for samples
            // without Python frames): weight of the root itself.
            valid += 1;
            profile.add("", line.parse().unwrap_or(0.0));
            continue;
        }
        match parse_line(line) {
            Some(parsed) => {
                valid += 1;
                if parsed.before.is_some() {
                    differential += 1;
                }
                profile.add(parsed.stack, parsed.count);
            }
            None => {
                profile.skipped += 1;
                first_bad.get_or_insert(line_no);
                if profile.skipped <= NAMED_SKIPS {
                    profile.warnings.push(format!(
                        "line {line_no}: skipped, not `stack count`: {}",
                        shorten(line)
                    ));
                }
            }
        }
    }
    if valid > 0 && profile.skipped > valid {
        return Err(Error::at(
            path,
            first_bad,
            format!(
                "not folded stacks: {} of {} lines are not `root;…;leaf count` lines",
                profile.skipped,
                profile.skipped + valid
            ),
        ));
    }
    if profile.skipped > NAMED_SKIPS {
        profile.warnings.push(format!(
            "{} more invalid lines skipped",
            profile.skipped - NAMED_SKIPS
        ));
    }
    if valid == 0 {
        if let Some(line) = first_bad {
            return Err(Error::at(
                path,
                Some(line),
                "not a profile: no `root;…;leaf count` line (folded stacks), no perf script event, \
                 no async-profiler HTML and no speedscope JSON found",
            ));
        }
        profile
            .warnings
            .push("empty profile: no samples".to_string());
    }
    if differential > 0 {
        profile.warnings.push(format!(
            "{differential} differential lines (`stack before after`): widths taken from the after count"
        ));
    }
    // Folded counts are samples (async-profiler's `--total` bytes or ns
    // cannot be told from the file itself).
    profile.count_weights_as_samples();
    Ok(profile)
}

pub(super) struct Line<'a> {
    pub stack: &'a str,
    pub count: f64,
    pub before: Option<f64>,
}

/// Splits `stack count` (or `stack before after`) at the last whitespace.
pub(super) fn parse_line(line: &str) -> Option<Line<'_>> {
    let (rest, count) = split_count(line)?;
    if let Some((stack, before)) = split_count(rest)
        && !stack.is_empty()
        && !stack.contains('\t')
    {
        return Some(Line {
            stack,
            count,
            before: Some(before),
        });
    }
    // Tabs separate the columns of a table (ab's -g file, a TSV export),
    // never frames: only the count may follow one.
    if rest.is_empty() || rest.contains('\t') {
        return None;
    }
    Some(Line {
        stack: rest,
        count,
        before: None,
    })
}

/// `(text before the count, count)` when `line` ends in whitespace + a count.
fn split_count(line: &str) -> Option<(&str, f64)> {
    // ASCII whitespace only, as the tools write it (a space; FlameGraph's
    // `\s`): a no-break space inside a frame name is part of the name. It
    // also keeps `at + 1` on a character boundary (fuzzing found a U+00A0
    // here panicking the slice).
    // Bytewise: an ASCII byte is never part of a longer character. The
    // five bytes `u8::is_ascii_whitespace` accepts, found with memchr: a
    // stack line without a second count is scanned whole from its end,
    // and byte by byte that was 1.7 % of a build's instructions.
    let bytes = line.as_bytes();
    let at = memchr::memrchr3(b' ', b'\t', b'\r', bytes)
        .into_iter()
        .chain(memchr::memrchr2(b'\n', 0x0C, bytes))
        .max()?;
    let token = &line[at + 1..];
    if !is_count(token) {
        return None;
    }
    let count: f64 = token.parse().ok()?;
    Some((line[..at].trim_end(), count))
}

/// `\d+(\.\d*)?`, as flamegraph.pl accepts.
fn is_count(token: &str) -> bool {
    let (int, frac) = match token.split_once('.') {
        Some((i, f)) => (i, f),
        None => (token, ""),
    };
    !int.is_empty()
        && int.bytes().all(|b| b.is_ascii_digit())
        && frac.bytes().all(|b| b.is_ascii_digit())
}

fn shorten(line: &str) -> String {
    const MAX: usize = 80;
    if line.chars().count() <= MAX {
        line.to_string()
    } else {
        let cut: String = line.chars().take(MAX).collect();
        format!("{cut}…")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `split_count` as it was written before memchr: the last byte
    /// `u8::is_ascii_whitespace` accepts.
    fn split_count_bytewise(line: &str) -> Option<(&str, f64)> {
        let at = line.bytes().rposition(|b| b.is_ascii_whitespace())?;
        let token = &line[at + 1..];
        if !is_count(token) {
            return None;
        }
        let count: f64 = token.parse().ok()?;
        Some((line[..at].trim_end(), count))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        /// Every kind of ASCII whitespace (and a no-break space, which is
        /// not one) anywhere in the line, counts or not at the end.
        #[test]
        fn split_count_finds_the_last_ascii_whitespace(
            line in "[a-z;\\. \\t\\r\\n\\x0C\\u{A0}\\u{2003}0-9]{0,40}"
        ) {
            prop_assert_eq!(split_count(&line), split_count_bytewise(&line));
        }
    }

    #[test]
    fn each_ascii_whitespace_splits_a_count_off() {
        for ws in [" ", "\t", "\r", "\n", "\x0C"] {
            let line = format!("main;run{ws}12");
            assert_eq!(split_count(&line), Some(("main;run", 12.0)), "{ws:?}");
        }
        assert_eq!(split_count("main;run\u{A0}12"), None, "no-break space");
        assert_eq!(split_count("main;run 3 12"), Some(("main;run 3", 12.0)));
    }
}
