//! One large plain file read by all cores: the file is cut into about one
//! slice per thread, each starting where a record starts, the slices are
//! parsed in parallel and their results joined in file order, so that the
//! samples come out in the order a single pass reads them (byte-identical
//! statistics: sums depend on the order of their terms).
//!
//! Only uncompressed files are sliced (a gzip stream can only be inflated
//! from its start), and only large ones: below [`MIN_SLICED_BYTES`] one
//! pass costs less than the threads.

use std::io::{self, Read};

use rayon::prelude::*;

use super::Grouper;
use super::io::ScanEnd;
use crate::ingest::input::InputFile;

/// Files smaller than this are read in one pass (unit tests slice small
/// files, to check slicing on every kind of record).
pub(crate) const MIN_SLICED_BYTES: u64 = if cfg!(test) { 16 << 10 } else { 32 << 20 };

/// Each slice is at least this long (fewer slices than threads otherwise).
const MIN_SLICE_BYTES: u64 = if cfg!(test) { 4 << 10 } else { 8 << 20 };

/// How records end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Records {
    /// At every newline (NDJSON: a JSON string holds no raw newline).
    Lines,
    /// At a newline outside quotes (CSV with quoted multi-line fields,
    /// the rule of [`super::csv_scan::record_end`]: every quote toggles).
    QuotedCsv,
}

/// A part of the file, `start..end` (byte offsets of the plain content).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Slice {
    pub start: u64,
    pub end: u64,
}

/// The slices of an open file when it is worth slicing (plain, large,
/// more than one thread); `None` otherwise. The slices are read through
/// the same descriptor as every other pass ([`InputFile`]).
pub(crate) fn plan(file: &InputFile, records: Records) -> io::Result<Option<Vec<Slice>>> {
    let threads = rayon::current_num_threads() as u64;
    if threads < 2 {
        return Ok(None);
    }
    let len = file.len();
    if len < MIN_SLICED_BYTES {
        return Ok(None);
    }
    let mut magic = [0u8; 2];
    if file.read_at(&mut magic, 0)? == 2 && magic == [0x1f, 0x8b] {
        return Ok(None);
    }
    let count = threads.min(len / MIN_SLICE_BYTES).max(1);
    let slices = cut(file, len, count, records)?;
    Ok((slices.len() > 1).then_some(slices))
}

/// Cuts `len` bytes into `count` slices at record starts near `len·k/count`.
fn cut(file: &InputFile, len: u64, count: u64, records: Records) -> io::Result<Vec<Slice>> {
    let guesses: Vec<u64> = (1..count).map(|k| len * k / count).collect();
    // Quote parity at each guess: the quotes before it, counted per part
    // in parallel.
    let parity_at: Vec<bool> = match records {
        Records::Lines => vec![false; guesses.len()],
        Records::QuotedCsv => {
            let bounds: Vec<u64> = std::iter::once(0).chain(guesses.iter().copied()).collect();
            let counts: Vec<u64> = bounds
                .par_iter()
                .enumerate()
                .take(guesses.len())
                .map(|(k, &from)| count_quotes(file, from, bounds[k + 1]))
                .collect::<io::Result<_>>()?;
            let mut odd = false;
            counts
                .iter()
                .map(|c| {
                    odd ^= c % 2 == 1;
                    odd
                })
                .collect()
        }
    };
    let mut starts = vec![0u64];
    for (&guess, &odd) in guesses.iter().zip(&parity_at) {
        let at = next_record_start(file, guess, len, odd, records)?;
        if at > *starts.last().expect("not empty") && at < len {
            starts.push(at);
        }
    }
    Ok(starts
        .iter()
        .enumerate()
        .map(|(i, &start)| Slice {
            start,
            end: starts.get(i + 1).copied().unwrap_or(len),
        })
        .collect())
}

fn count_quotes(file: &InputFile, from: u64, to: u64) -> io::Result<u64> {
    let mut quotes = 0;
    for_each_block(file, from, to, |block, _| {
        quotes += memchr::memchr_iter(b'"', block).count() as u64;
        false
    })?;
    Ok(quotes)
}

/// The offset just after the first record end at or after `from` (`len`
/// when there is none); `odd` is the quote parity at `from`.
fn next_record_start(
    file: &InputFile,
    from: u64,
    len: u64,
    mut odd: bool,
    records: Records,
) -> io::Result<u64> {
    let mut found = len;
    for_each_block(file, from, len, |block, at| {
        match records {
            Records::Lines => {
                if let Some(i) = memchr::memchr(b'\n', block) {
                    found = at + i as u64 + 1;
                    return true;
                }
            }
            Records::QuotedCsv => {
                for i in memchr::memchr2_iter(b'\n', b'"', block) {
                    if block[i] == b'"' {
                        odd = !odd;
                    } else if !odd {
                        found = at + i as u64 + 1;
                        return true;
                    }
                }
            }
        }
        false
    })?;
    Ok(found)
}

/// Calls `f(block, offset)` on `from..to` in blocks until it returns true.
fn for_each_block(
    file: &InputFile,
    from: u64,
    to: u64,
    mut f: impl FnMut(&[u8], u64) -> bool,
) -> io::Result<()> {
    let mut buf = vec![0u8; 1 << 20];
    let mut at = from;
    while at < to {
        let want = buf.len().min((to - at) as usize);
        let n = file.read_at(&mut buf[..want], at)?;
        if n == 0 {
            break;
        }
        if f(&buf[..n], at) {
            break;
        }
        at += n as u64;
    }
    Ok(())
}

/// Reads one slice through positional reads of the shared descriptor.
pub(crate) struct SliceReader<'a> {
    file: &'a InputFile,
    at: u64,
    end: u64,
}

impl<'a> SliceReader<'a> {
    pub(crate) fn new(file: &'a InputFile, slice: Slice) -> Self {
        SliceReader {
            file,
            at: slice.start,
            end: slice.end,
        }
    }
}

impl Read for SliceReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let want = buf.len().min((self.end - self.at) as usize);
        if want == 0 {
            return Ok(0);
        }
        let n = self.file.read_at(&mut buf[..want], self.at)?;
        self.at += n as u64;
        Ok(n)
    }
}

/// Runs `f` on every slice in parallel; the results in file order, or the
/// error of the earliest slice that failed (the one a single pass would
/// have met first).
pub(crate) fn map<T: Send, E: Send>(
    file: &InputFile,
    slices: &[Slice],
    f: impl Fn(SliceReader<'_>, Slice, bool) -> Result<T, E> + Sync,
) -> Result<Vec<T>, E> {
    let last = slices.len() - 1;
    let results: Vec<Result<T, E>> = slices
        .par_iter()
        .enumerate()
        .map(|(i, &s)| f(SliceReader::new(file, s), s, i == last))
        .collect();
    results.into_iter().collect()
}

/// Joins the slices' results in file order: the samples of every slice,
/// and the cut-short tail and end of the last one (only the last slice
/// reaches the end of the file).
pub(crate) fn join(
    scanned: Vec<(Grouper, Option<u64>, ScanEnd)>,
) -> (Grouper, Option<u64>, ScanEnd) {
    let mut joined = Grouper::default();
    let mut tail = None;
    let mut end = ScanEnd::default();
    for (grouper, slice_tail, slice_end) in scanned {
        joined.absorb(grouper);
        tail = slice_tail;
        end = slice_end;
    }
    (joined, tail, end)
}
