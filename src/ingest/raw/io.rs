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
    let mut buf = vec![0u8; BLOCK];
    let mut len = 0usize; // valid bytes in buf
    let mut offset = 0u64; // plain offset of buf[0]
    let mut end = ScanEnd::default();
    loop {
        if len == buf.len() {
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
