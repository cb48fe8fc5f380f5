//! `perf script` text, collapsed with inferno's `collapse::perf` (a port of
//! FlameGraph's stackcollapse-perf.pl): only the first event type is kept,
//! samples are weighted by period when there is one, `[unknown]` frames get
//! their DSO name.

use std::io::Cursor;
use std::path::Path;

use inferno::collapse::Collapse;
use inferno::collapse::perf::{Folder, Options};

use super::{Profile, ProfileFormat, folded};
use crate::error::Error;

/// The collapse options perfdash exposes (a subset of inferno's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PerfOptions {
    /// `_[j]` on JIT frames (`/tmp/perf-<pid>.map`).
    pub annotate_jit: bool,
    /// `_[k]` on kernel frames.
    pub annotate_kernel: bool,
    /// `comm-pid` root frames.
    pub include_pid: bool,
    /// `comm-pid/tid` root frames.
    pub include_tid: bool,
    /// Raw addresses for unknown symbols.
    pub include_addrs: bool,
}

impl PerfOptions {
    /// What ingest uses: FlameGraph's `--all` (annotate JIT and kernel frames),
    /// so kernel and JIT frames are visible in the graph and classification
    /// can tell them apart.
    pub const INGEST: PerfOptions = PerfOptions {
        annotate_jit: true,
        annotate_kernel: true,
        include_pid: false,
        include_tid: false,
        include_addrs: false,
    };

    /// inferno's defaults (no annotations).
    pub const PLAIN: PerfOptions = PerfOptions {
        annotate_jit: false,
        annotate_kernel: false,
        include_pid: false,
        include_tid: false,
        include_addrs: false,
    };
}

/// Collapses `perf script` text into folded lines.
pub fn collapse_perf(text: &str, options: PerfOptions) -> std::io::Result<String> {
    let mut opts = Options::default();
    opts.annotate_jit = options.annotate_jit;
    opts.annotate_kernel = options.annotate_kernel;
    opts.include_pid = options.include_pid;
    opts.include_tid = options.include_tid;
    opts.include_addrs = options.include_addrs;
    // One thread: the output order then does not depend on scheduling, and
    // perfdash already parallelises across files.
    opts.nthreads = 1;
    let mut folder = Folder::from(opts);
    // inferno reads the first block to learn the event type and asserts that
    // it found one, so a blank line before the first event (as after a
    // `perf script --header`) panics it (found by fuzzing). Blank and comment
    // lines before the first event carry nothing; start at the event.
    // Every check below runs on the text exactly as inferno will get it
    // (shielded, see `collapse_guarded`): a character such as U+0085 is
    // blank to `trim` before shielding and not after.
    let shielded = shield_non_ascii(text);
    // On the whole text, so that the line number is the file's.
    reject_implausible_numbers(&shielded, |line| !line.starts_with([' ', '\t', '#']))?;
    let text = skip_leading_blank_and_comment_lines(&shielded);
    // The same check inferno's format detection makes (the first line that
    // is not blank or a comment is an event line, followed by a stack line):
    // anything else would trip that assertion.
    if !text.is_empty() && !looks_like_perf_script(text) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "not perf script output: the first line that is not blank or a comment \
             is not an event line followed by a stack line",
        ));
    }
    collapse_guarded("perf script", text, |input, out| {
        folder.collapse(Cursor::new(input), out)
    })
}

/// `text` from its first line that is neither blank nor a `#` comment.
fn skip_leading_blank_and_comment_lines(text: &str) -> &str {
    let mut rest = text;
    loop {
        let (line, after) = rest.split_once('\n').unwrap_or((rest, ""));
        if rest.is_empty() || !(line.trim().is_empty() || line.starts_with('#')) {
            return rest;
        }
        rest = after;
    }
}

/// Runs an inferno collapser on `shielded` text (see [`shield_non_ascii`])
/// and restores the characters in its output.
///
/// inferno slices symbol names at byte offsets that are not always character
/// boundaries (its Rust-symbol fix-up takes the last 17 bytes), so a frame
/// name with a non-ASCII character near its end panicked it (found by
/// fuzzing; a Java method named in Unicode would do it). Callers hand it the
/// text with every non-ASCII character shielded as an ASCII escape, and run
/// their own checks on that same text, so such names come through intact.
/// Any other panic inside inferno is reported as bad input, not a crash of
/// the build.
fn collapse_guarded(
    what: &str,
    shielded: &str,
    collapse: impl FnOnce(&[u8], &mut Vec<u8>) -> std::io::Result<()>,
) -> std::io::Result<String> {
    let mut out = Vec::new();
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        collapse(shielded.as_bytes(), &mut out)
    }));
    match outcome {
        Ok(result) => result.map(|()| unshield(&String::from_utf8_lossy(&out))),
        Err(panic) => {
            let reason = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown reason".to_string());
            Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("{what} collapser (inferno) rejected the input: {reason}"),
            ))
        }
    }
}

/// Opens and closes a shielded character: `\x01<hex code point>\x02`. Hex
/// digits and these two control characters mean nothing to inferno's
/// parsers (no separator, bracket, offset or hash rule applies to them).
const SHIELD_OPEN: char = '\u{1}';
const SHIELD_CLOSE: char = '\u{2}';

/// Replaces every non-ASCII character (and the two shield characters
/// themselves, so that the mapping is reversible) with an ASCII escape.
pub(super) fn shield_non_ascii(text: &str) -> std::borrow::Cow<'_, str> {
    let needs = |c: char| !c.is_ascii() || c == SHIELD_OPEN || c == SHIELD_CLOSE;
    if !text.chars().any(needs) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if needs(c) {
            out.push(SHIELD_OPEN);
            out.push_str(&format!("{:X}", c as u32));
            out.push(SHIELD_CLOSE);
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Reverses [`shield_non_ascii`]. An escape inferno cut in half (it never
/// cuts inside one) is left as it is rather than guessed.
pub(super) fn unshield(text: &str) -> String {
    if !text.contains(SHIELD_OPEN) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(SHIELD_OPEN) {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let decoded = after.find(SHIELD_CLOSE).and_then(|end| {
            let c = u32::from_str_radix(&after[..end], 16)
                .ok()
                .and_then(char::from_u32)?;
            Some((c, end))
        });
        match decoded {
            Some((c, end)) => {
                out.push(c);
                rest = &after[end + 1..];
            }
            None => {
                out.push(SHIELD_OPEN);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Whether the text starts like `perf script` output: an event line followed
/// by an indented stack line (inferno's own check).
pub(super) fn looks_like_perf_script(text: &str) -> bool {
    let head = head_chars(text, 64 * 1024);
    Folder::default().is_applicable(head) == Some(true)
}

pub(super) fn parse(text: &str, path: &Path, kind: &str) -> Result<Profile, Error> {
    let folded_text = collapse_perf(text, PerfOptions::INGEST).map_err(|e| {
        Error::at(
            path,
            None,
            format!("perf script could not be collapsed: {e}"),
        )
    })?;
    let mut profile = folded::parse_folded(&folded_text, path, kind)?;
    profile.format = ProfileFormat::PerfScript;
    // inferno weighs each event by its period (cycles, or nanoseconds for
    // cpu-clock) when there is one: the weights are then the event's unit,
    // and the samples are the events.
    let events = count_events(text);
    if let Some(name) = events.name
        && (profile.total - events.with_stack as f64).abs() > 0.5
    {
        profile.units = name;
    }
    profile.samples = Some(events.with_stack);
    if profile.total == 0.0 {
        profile
            .warnings
            .push("perf script without any complete sample".to_string());
    }
    Ok(profile)
}

/// The events of the first event type that have a stack, as inferno counts
/// them, and that type's name (`cycles`, `cpu-clock`).
struct Events {
    name: Option<String>,
    with_stack: u64,
}

fn count_events(text: &str) -> Events {
    let mut name: Option<String> = None;
    let mut with_stack = 0u64;
    // Whether the current event is of the first type and has no stack line yet.
    let mut open = false;
    for line in text.lines() {
        if line.trim().is_empty() || line.starts_with('#') {
            open = false;
            continue;
        }
        if line.starts_with([' ', '\t']) {
            if open {
                with_stack += 1;
                open = false;
            }
            continue;
        }
        let event = event_name(line);
        match (&name, event) {
            (None, Some(e)) => {
                name = Some(e.to_string());
                open = true;
            }
            (Some(first), Some(e)) => open = first == e,
            (_, None) => open = false,
        }
    }
    Events { name, with_stack }
}

/// `cycles` from `ab 23927 [000] 184694.229089: 1 cycles:u: …`: the first
/// word after the `secs.usecs:` time that ends in `:` and is not a number.
fn event_name(line: &str) -> Option<&str> {
    let mut words = line.split_whitespace();
    words.find(|w| {
        w.strip_suffix(':').is_some_and(|t| {
            let (secs, usecs) = t.split_once('.').unwrap_or((t, ""));
            !secs.is_empty()
                && !usecs.is_empty()
                && secs.bytes().all(|b| b.is_ascii_digit())
                && usecs.bytes().all(|b| b.is_ascii_digit())
        })
    })?;
    let event =
        words.find(|w| w.ends_with(':') && !w.bytes().all(|b| b.is_ascii_digit() || b == b':'))?;
    event.split(':').next().filter(|e| !e.is_empty())
}

/// Collapses DTrace `ustack()`/`stack()` aggregation output into folded lines
/// (inferno's `collapse::dtrace`, a port of stackcollapse.pl).
pub fn collapse_dtrace(text: &str) -> std::io::Result<String> {
    let mut opts = inferno::collapse::dtrace::Options::default();
    opts.nthreads = 1;
    let mut folder = inferno::collapse::dtrace::Folder::from(opts);
    let shielded = shield_non_ascii(text);
    reject_implausible_numbers(&shielded, |line| line.trim().parse::<u64>().is_ok())?;
    let text = drop_counts_without_stacks(&shielded);
    collapse_guarded("DTrace", &text, |input, out| {
        folder.collapse(Cursor::new(input), out)
    })
}

/// The largest sample count or period believed: 10^15. inferno adds them up
/// in `u64` without checking, so two huge ones overflowed (a panic with
/// overflow checks, wrapped totals without; found by fuzzing). No real
/// profile comes near: 10^15 cycles is days of CPU in one sample.
const MAX_PLAUSIBLE_WEIGHT: u64 = 1_000_000_000_000_000;

/// Refuses text where a whole-number word on a line `weighs` (an event line
/// with its period, a DTrace count line) is above [`MAX_PLAUSIBLE_WEIGHT`],
/// naming the line.
fn reject_implausible_numbers(text: &str, weighs: impl Fn(&str) -> bool) -> std::io::Result<()> {
    for (i, line) in text.lines().enumerate() {
        if !weighs(line) {
            continue;
        }
        let too_big = line
            .split_whitespace()
            .filter(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_digit()))
            .any(|w| w.parse::<u64>().map_or(true, |n| n > MAX_PLAUSIBLE_WEIGHT));
        if too_big {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "line {}: a sample count or period above {MAX_PLAUSIBLE_WEIGHT} is not a measurement",
                    i + 1
                ),
            ));
        }
    }
    Ok(())
}

/// Drops count lines that follow no stack line. inferno's DTrace collapser
/// takes one from the stack's length at every count, so a count with no
/// stack before it (a truncated or hand-edited file) overflowed (found by
/// fuzzing); such a count counts nothing. Lines are read as inferno reads
/// them: a header up to the first blank line, then trimmed lines that are
/// blank, a count (an unsigned integer) or a stack frame.
fn drop_counts_without_stacks(text: &str) -> std::borrow::Cow<'_, str> {
    let mut in_header = true;
    let mut frames_since_count = 0usize;
    let mut dropped = false;
    let mut kept = String::new();
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim();
        let keep = if in_header {
            in_header = !trimmed.is_empty();
            true
        } else if trimmed.is_empty() {
            true
        } else if trimmed.parse::<u64>().is_ok() {
            std::mem::replace(&mut frames_since_count, 0) > 0
        } else {
            frames_since_count += 1;
            true
        };
        if keep {
            kept.push_str(line);
        } else {
            dropped = true;
        }
    }
    if dropped {
        std::borrow::Cow::Owned(kept)
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// Whether the text looks like DTrace aggregation output (stack lines with
/// `` module`function `` after a blank line, then a count).
pub(super) fn looks_like_dtrace(text: &str) -> bool {
    let head = head_chars(text, 64 * 1024);
    inferno::collapse::dtrace::Folder::default().is_applicable(head) == Some(true)
}

pub(super) fn parse_dtrace(text: &str, path: &Path, kind: &str) -> Result<Profile, Error> {
    let folded_text = collapse_dtrace(text).map_err(|e| {
        Error::at(
            path,
            None,
            format!("DTrace output could not be collapsed: {e}"),
        )
    })?;
    let mut profile = folded::parse_folded(&folded_text, path, kind)?;
    profile.format = ProfileFormat::Dtrace;
    Ok(profile)
}

/// The first `n` characters of `text` (all of it when it is shorter),
/// without walking a text that cannot be longer.
fn head_chars(text: &str, n: usize) -> &str {
    // A character is at least one byte.
    if text.len() <= n {
        return text;
    }
    match text.char_indices().nth(n) {
        Some((cut, _)) => &text[..cut],
        None => text,
    }
}
