//! Streaming file access shared by the raw parsers: gzip-transparent
//! reading of an open [`InputFile`], block-wise scanning without buffering whole files, and
//! byte-offset → line-number resolution for messages.

use std::io::{self, BufReader, Read};
use std::path::Path;

use crate::error::Error;
use crate::ingest::input::InputFile;
use crate::ingest::limits::{LimitedReader, Limits, is_limit_exceeded};

/// The block size read at once. Large enough that per-read overhead
/// vanishes, small enough to stay in L2/L3 cache.
const BLOCK: usize = 1 << 20;

/// The first block's size: the buffer doubles up to [`BLOCK`] as long as
/// reads fill it. A zeroed 1 MiB buffer for every small steps or raw file
/// cost more than reading the file (issue 18: memset was 6 % of a cold
/// build's instructions at 12 endpoints x 156 weeks).
const FIRST_BLOCK: usize = 64 * 1024;

/// A reader of the plain content of an open file, transparently
/// decompressing gzip (told by the magic bytes, not the name). The
/// decompressed stream is capped by `limits` (gzip bombs). The file was
/// checked to be a regular file when it was opened ([`InputFile`]).
pub(crate) fn open_plain<'a>(
    file: &'a InputFile,
    limits: &Limits,
) -> io::Result<Box<dyn Read + Send + 'a>> {
    let (plain, gzip) = open_plain_uncapped(file)?;
    if gzip {
        Ok(Box::new(LimitedReader::new(
            plain,
            limits.decompressed_cap(file.len()),
            "the decompressed content",
        )))
    } else {
        Ok(plain)
    }
}

/// [`open_plain`] without the cap, for re-reading a prefix that was
/// already read under it (line numbers of faults); also says whether the
/// content is gzip.
fn open_plain_uncapped(file: &InputFile) -> io::Result<(Box<dyn Read + Send + '_>, bool)> {
    let mut raw = file.reader();
    let mut magic = [0u8; 2];
    let got = read_full(&mut raw, &mut magic)?;
    let head = io::Cursor::new(magic[..got].to_vec());
    let chained = head.chain(raw);
    if got == 2 && magic == [0x1f, 0x8b] {
        Ok((
            Box::new(flate2::read::MultiGzDecoder::new(BufReader::with_capacity(
                256 * 1024,
                chained,
            ))),
            true,
        ))
    } else {
        Ok((Box::new(chained), false))
    }
}

/// Whether the file starts with the gzip magic bytes.
pub(crate) fn is_gzip(file: &InputFile) -> io::Result<bool> {
    let mut magic = [0u8; 2];
    let got = read_full(&mut file.reader(), &mut magic)?;
    Ok(got == 2 && magic == [0x1f, 0x8b])
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
pub(crate) fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match r.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// The first `max` bytes of the plain (decompressed) content.
pub(crate) fn head(file: &InputFile, max: usize, limits: &Limits) -> io::Result<Vec<u8>> {
    let r = open_plain(file, limits)?;
    // Sized by the file, not `max`: a zeroed 64 KiB buffer for each of
    // 280 000 small round files cost more than reading them. The plain
    // content of a gzip file is longer than the file; the buffer grows.
    let hint = usize::try_from(file.len()).map_or(max, |len| len.saturating_add(1).min(max));
    let mut buf = Vec::with_capacity(hint);
    // `read_to_end` retries interrupted reads and keeps what it read
    // before an error.
    match r.take(max as u64).read_to_end(&mut buf) {
        Ok(_) => {}
        // A truncated gzip or a bomb still has a readable beginning;
        // the parser reports the truncation, the full read the bomb.
        // With nothing readable at all, say what is wrong rather than
        // calling the file empty.
        Err(e) if buf.is_empty() && e.kind() == io::ErrorKind::UnexpectedEof => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "corrupt gzip: the compressed stream ends before any content",
            ));
        }
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof || is_limit_exceeded(&e) => {}
        Err(e) if e.kind() == io::ErrorKind::InvalidData && buf.is_empty() => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("corrupt gzip: {e}"),
            ));
        }
        Err(e) => return Err(e),
    }
    Ok(buf)
}

/// A problem inside a file at a byte offset of the plain content; turned
/// into a 1-based line number only when reported (counting lines while
/// scanning would cost throughput on every file for the rare bad one).
#[derive(Debug)]
pub(crate) struct Fault {
    pub offset: u64,
    pub message: String,
}

impl Fault {
    pub(crate) fn new(offset: u64, message: impl Into<String>) -> Fault {
        Fault {
            offset,
            message: message.into(),
        }
    }

    pub(crate) fn into_error(self, file: &InputFile, shown: &Path) -> Error {
        Error::at(shown, line_of_offset(file, self.offset), self.message)
    }
}

/// The 1-based line that holds byte `offset` of the plain content.
pub(crate) fn line_of_offset(file: &InputFile, offset: u64) -> Option<u64> {
    let (mut r, _) = open_plain_uncapped(file).ok()?;
    let mut remaining = offset;
    let mut lines = 1u64;
    let mut buf = vec![0u8; 64 * 1024];
    while remaining > 0 {
        let want = buf.len().min(remaining as usize);
        let n = r.read(&mut buf[..want]).ok()?;
        if n == 0 {
            break;
        }
        lines += memchr::memchr_iter(b'\n', &buf[..n]).count() as u64;
        remaining -= n as u64;
    }
    Some(lines)
}

/// How a scan ended.
#[derive(Debug, Default)]
pub(crate) struct ScanEnd {
    /// The input ended early (truncated gzip stream).
    pub truncated_stream: bool,
}

/// Feeds the plain content of `reader` to `f` in blocks. `f(block,
/// offset_of_block, at_eof)` returns how many bytes it consumed; the rest
/// is carried over to the front of the next block (so a record never has
/// to be complete within one read). At end of input `f` is called with
/// `at_eof = true` and whatever is left; anything it leaves is dropped.
/// A record longer than `max_record` bytes is a fault: the buffer grows
/// to hold long records, but never without bound.
pub(crate) fn scan_blocks(
    mut reader: impl Read,
    max_record: usize,
    mut f: impl FnMut(&[u8], u64, bool) -> Result<usize, Fault>,
) -> Result<ScanEnd, ScanError> {
    let mut buf = vec![0u8; FIRST_BLOCK];
    let mut len = 0usize; // valid bytes in buf
    let mut offset = 0u64; // plain offset of buf[0]
    let mut end = ScanEnd::default();
    loop {
        if len == buf.len() && buf.len() < BLOCK {
            // Below BLOCK the buffer grows whatever `max_record` says: the
            // cap applies, as it always did, to records past a full BLOCK.
            buf.resize((buf.len() * 2).min(BLOCK), 0);
        } else if len == buf.len() {
            // One record longer than the buffer: grow rather than fail,
            // up to the cap.
            if buf.len() >= max_record {
                return Err(ScanError::Fault(Fault::new(
                    offset,
                    format!(
                        "a line longer than {max_record} bytes (limits.max_line_bytes): \
                         not a load-test output, or raise the limit"
                    ),
                )));
            }
            let grown = (buf.len() * 2).min(max_record).max(buf.len() + 1);
            buf.resize(grown, 0);
        }
        let n = match reader.read(&mut buf[len..]) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                end.truncated_stream = true;
                0
            }
            Err(e) => return Err(ScanError::Io(e)),
        };
        let eof = n == 0;
        len += n;
        if !eof && len < buf.len() / 2 {
            continue; // fill up before handing over: fewer, larger blocks
        }
        let used = f(&buf[..len], offset, eof).map_err(ScanError::Fault)?;
        if eof {
            return Ok(end);
        }
        let used = used.min(len);
        buf.copy_within(used..len, 0);
        len -= used;
        offset += used as u64;
        if buf.len() < BLOCK {
            // A large input: read it in larger blocks.
            buf.resize((buf.len() * 2).min(BLOCK), 0);
        }
    }
}

#[derive(Debug)]
pub(crate) enum ScanError {
    Io(io::Error),
    Fault(Fault),
}

impl ScanError {
    pub(crate) fn into_error(self, file: &InputFile, shown: &Path) -> Error {
        match self {
            ScanError::Io(e) => Error::io(shown, e),
            ScanError::Fault(f) => f.into_error(file, shown),
        }
    }
}

impl From<Fault> for ScanError {
    fn from(f: Fault) -> Self {
        ScanError::Fault(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader handing out at most `step` bytes per read, as a pipe or a
    /// gzip stream does.
    struct Trickle<'a> {
        data: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.step.min(buf.len()).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    /// Scans `data` as a line parser does (each block up to its last
    /// newline); returns the lines with their offsets and the largest
    /// block handed over.
    fn lines(data: &[u8], step: usize, max_record: usize) -> (Vec<(u64, Vec<u8>)>, usize) {
        let mut out = Vec::new();
        let mut largest = 0;
        scan_blocks(Trickle { data, step }, max_record, |block, offset, eof| {
            largest = largest.max(block.len());
            let end = match eof {
                true => block.len(),
                false => block.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1),
            };
            let mut at = 0;
            for line in block[..end].split_inclusive(|&b| b == b'\n') {
                out.push((offset + at as u64, line.to_vec()));
                at += line.len();
            }
            Ok(end)
        })
        .map_err(|e| format!("{e:?}"))
        .unwrap();
        (out, largest)
    }

    /// Lines of every length from 0 to `longest`, `total` bytes or more.
    fn text(total: usize, longest: usize) -> Vec<u8> {
        let mut data = Vec::new();
        let mut n = 0usize;
        while data.len() < total {
            n = (n * 7919 + 13) % (longest + 1);
            data.extend(std::iter::repeat_n(b'a' + (n % 26) as u8, n));
            data.push(b'\n');
        }
        data
    }

    #[test]
    fn every_byte_reaches_the_parser_once_at_its_offset_whatever_the_buffer() {
        for (total, longest, step) in [
            (0, 10, 7),
            (100, 10, 1),
            (FIRST_BLOCK - 1, 300, 4096),
            (FIRST_BLOCK + 1, 300, 65536),
            (3 * BLOCK, 5000, 4097),
            (3 * BLOCK, 200_000, 1 << 20),
        ] {
            let data = text(total, longest);
            let (lines, largest) = lines(&data, step, 16 << 20);
            let mut joined = Vec::new();
            for (offset, line) in &lines {
                assert_eq!(*offset as usize, joined.len(), "total {total}, step {step}");
                joined.extend_from_slice(line);
            }
            assert!(joined == data, "total {total}, step {step}");
            // A large input is handed over in large blocks, not in
            // first-block pieces.
            if total >= 3 * BLOCK && step >= 4096 {
                assert!(largest > BLOCK / 2, "largest block {largest}");
            }
        }
    }

    /// The buffer starts small but a record longer than it is still read
    /// whole, even when `max_record` is smaller than it (the cap applies
    /// to records past a full BLOCK, as when the buffer started at BLOCK).
    #[test]
    fn a_record_longer_than_the_first_block_is_read_whole() {
        let mut data = vec![b'x'; 5 * FIRST_BLOCK];
        data.push(b'\n');
        data.extend_from_slice(b"tail\n");
        for max_record in [1000, 16 << 20] {
            let (lines, _) = lines(&data, 8192, max_record);
            assert_eq!(lines.len(), 2, "max_record {max_record}");
            assert_eq!(lines[0].1.len(), 5 * FIRST_BLOCK + 1);
            assert_eq!(lines[1], (5 * FIRST_BLOCK as u64 + 1, b"tail\n".to_vec()));
        }
    }

    #[test]
    fn a_record_past_a_full_block_and_the_cap_is_a_fault() {
        let data = vec![b'x'; 3 * BLOCK];
        let got = scan_blocks(
            Trickle {
                data: &data,
                step: 1 << 16,
            },
            BLOCK,
            |block, _, eof| Ok(if eof { block.len() } else { 0 }),
        );
        match got {
            Err(ScanError::Fault(f)) => {
                assert_eq!(f.offset, 0);
                assert!(f.message.contains("longer than"), "{}", f.message);
            }
            other => panic!("{other:?}"),
        }
    }
}
