//! Caps on what one input file may cost, shared by every parser.
//!
//! Archives come from CI jobs and people; a gzip bomb (a few kilobytes
//! that inflate to terabytes) or a file that is one endless line must cost
//! a warning, not the machine. Every reader of archive files goes through
//! [`open_input`] on an [`InputFile`] (or wraps its own reader in a [`LimitedReader`]) so the
//! caps hold everywhere. The caps are set in `perfdash.toml` under
//! `[limits]` (see `docs/errors.md`).

use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use super::input::InputFile;

pub use crate::config::Limits;

/// The error a [`LimitedReader`] returns once its cap is passed. It is an
/// `io::Error` of kind `InvalidData` wrapping this type, so callers can
/// tell it apart with [`is_limit_exceeded`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "stopped after {cap} bytes: {what} is larger than the limit (raise [limits] in perfdash.toml if this file is genuine)"
)]
pub struct LimitExceeded {
    pub cap: u64,
    pub what: &'static str,
}

/// True when `err` came from a [`LimitedReader`] passing its cap.
pub fn is_limit_exceeded(err: &io::Error) -> bool {
    err.get_ref()
        .is_some_and(|e| e.downcast_ref::<LimitExceeded>().is_some())
}

/// A reader that yields at most `cap` bytes and then fails, rather than
/// silently truncating: a cut-off file must never pass for a whole one.
#[derive(Debug)]
pub struct LimitedReader<R> {
    inner: R,
    remaining: u64,
    limit: LimitExceeded,
}

impl<R: Read> LimitedReader<R> {
    /// `what` names the quantity in the error, e.g. "the decompressed content".
    pub fn new(inner: R, cap: u64, what: &'static str) -> Self {
        LimitedReader {
            inner,
            remaining: cap,
            limit: LimitExceeded { cap, what },
        }
    }
}

impl<R: Read> Read for LimitedReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if self.remaining == 0 {
            // At the cap: only an end of input is acceptable now.
            let mut probe = [0u8; 1];
            return match self.inner.read(&mut probe)? {
                0 => Ok(0),
                _ => Err(io::Error::new(io::ErrorKind::InvalidData, self.limit)),
            };
        }
        let want = buf
            .len()
            .min(usize::try_from(self.remaining).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        self.remaining -= n as u64;
        Ok(n)
    }
}

/// The gzip magic number. Compression is told by content, never by name.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// A reader of an open archive file's content: gzip is inflated
/// transparently (multi-member streams too, as `cat a.gz b.gz` gives),
/// under the caps of `limits`.
pub fn open_input<'a>(
    file: &'a InputFile,
    limits: &Limits,
) -> io::Result<Box<dyn BufRead + Send + 'a>> {
    let mut reader = BufReader::new(file.reader());
    let compressed = reader.fill_buf()?.starts_with(&GZIP_MAGIC);
    if compressed {
        let cap = limits.decompressed_cap(file.len());
        let inflated = flate2::bufread::MultiGzDecoder::new(reader);
        Ok(Box::new(BufReader::new(LimitedReader::new(
            GzipErrors(inflated),
            cap,
            "the decompressed content",
        ))))
    } else {
        Ok(Box::new(reader))
    }
}

/// Reads a small text file a user named (perfdash.toml) under the document
/// cap, from one descriptor (see [`InputFile`]). `Ok(None)` when it does
/// not exist.
pub fn read_text_file(path: &Path, limits: &Limits) -> io::Result<Option<String>> {
    match InputFile::open(path) {
        Ok(file) => read_text(&file, limits).map(Some),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// [`read_text_file`] for a file inside the archive (run.toml, triage
/// notes, resource readings): no symbolic link anywhere on `path`.
pub fn read_archive_text_file(path: &Path, limits: &Limits) -> io::Result<Option<String>> {
    match InputFile::open_in_archive(path) {
        Ok(file) => read_text(&file, limits).map(Some),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// The content of an open file as UTF-8 text, under the caps.
pub fn read_text(file: &InputFile, limits: &Limits) -> io::Result<String> {
    let bytes = read_document(file, limits)?;
    String::from_utf8(bytes).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "not valid UTF-8 (byte {} is not part of a UTF-8 character)",
                e.utf8_error().valid_up_to() + 1
            ),
        )
    })
}

/// Reads a whole file (k6 summary, HTML profile) under the caps: gzip is
/// inflated, and more than `max_document_bytes` is an error. A file over
/// the cap is refused from its size before any byte of it is read (for
/// gzip, from the size its trailer records: the content is at least that
/// long); the bytes are read into a buffer of the expected size, within
/// the memory budget shared by every reading thread ([`reserve`]).
pub fn read_document(file: &InputFile, limits: &Limits) -> io::Result<Vec<u8>> {
    let cap = limits.max_document_bytes;
    let gzip = gzip_content_size(file)?;
    let expected = gzip.unwrap_or(file.len());
    if gzip.is_some() && expected > file.len().saturating_mul(MAX_DEFLATE_RATIO) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "corrupt gzip: its trailer records {expected} bytes of content, more than deflate \
                 can hold in {} bytes (the file was cut short?)",
                file.len()
            ),
        ));
    }
    if expected > cap {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "the file{} is {expected} bytes, over the limit of {cap} (limits.max_document_bytes): \
                 refused without reading it (raise [limits] in perfdash.toml if this file is genuine)",
                if gzip.is_some() {
                    "'s content (its gzip trailer says)"
                } else {
                    ""
                }
            ),
        ));
    }
    // A gzip stream stops at its decompression cap whatever its trailer
    // says: no more is reserved or allocated than can be read.
    let expected = match gzip {
        Some(size) => size.min(limits.decompressed_cap(file.len())),
        None => expected,
    };
    let _room = reserve(expected, limits.memory_budget_bytes);
    let mut out = Vec::with_capacity(usize::try_from(expected).unwrap_or(0).saturating_add(1));
    LimitedReader::new(open_input(file, limits)?, cap, "the file").read_to_end(&mut out)?;
    Ok(out)
}

/// Deflate's best case: 258 bytes from a 2-bit code, about 1032:1; a gzip
/// trailer claiming more content than that is no trailer (a cut file).
const MAX_DEFLATE_RATIO: u64 = 1032;

/// The size a gzip file's trailer records for its (last member's) content,
/// which the whole content is at least; `None` when the file is no gzip.
fn gzip_content_size(file: &InputFile) -> io::Result<Option<u64>> {
    let mut magic = [0u8; 2];
    if file.len() < 18 || file.read_at(&mut magic, 0)? != 2 || magic != GZIP_MAGIC {
        return Ok(None);
    }
    let mut size = [0u8; 4];
    let n = file.read_at(&mut size, file.len() - 4)?;
    Ok((n == 4).then(|| u64::from(u32::from_le_bytes(size))))
}

/// Room in the memory budget, given back when dropped.
#[must_use]
pub struct Reservation(u64);

impl Drop for Reservation {
    fn drop(&mut self) {
        let mut used = BUDGET.0.lock().unwrap_or_else(|p| p.into_inner());
        *used -= self.0;
        BUDGET.1.notify_all();
    }
}

/// Bytes reserved by readers now, and the signal that some were given back.
static BUDGET: (std::sync::Mutex<u64>, std::sync::Condvar) =
    (std::sync::Mutex::new(0), std::sync::Condvar::new());

/// Waits until `bytes` fit in a budget of `total` with what other threads
/// hold, and reserves them: concurrent reading is bounded by memory, not
/// by the number of threads. A request larger than the whole budget waits
/// until nothing else is held and then runs alone.
pub fn reserve(bytes: u64, total: u64) -> Reservation {
    let want = bytes.min(total);
    let mut used = BUDGET.0.lock().unwrap_or_else(|p| p.into_inner());
    while *used > 0 && *used + want > total {
        used = BUDGET.1.wait(used).unwrap_or_else(|p| p.into_inner());
    }
    *used += want;
    Reservation(want)
}

/// Labels flate2's errors so that a corrupt gzip file says so.
struct GzipErrors<R>(R);

impl<R: Read> Read for GzipErrors<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf).map_err(|e| {
            if e.kind() == io::ErrorKind::UnexpectedEof {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    "corrupt gzip: the compressed stream ends early (truncated file?)",
                )
            } else if is_limit_exceeded(&e) {
                e
            } else {
                io::Error::new(io::ErrorKind::InvalidData, format!("corrupt gzip: {e}"))
            }
        })
    }
}

/// One line read by [`read_line_capped`].
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A line without its `\n` (and `\r`), possibly not valid UTF-8.
    Text(Vec<u8>),
    /// A line longer than the cap: its bytes were skipped up to the next
    /// `\n`; the count says how long it was.
    TooLong(u64),
    /// End of input.
    End,
}

/// Reads one line of at most `max` bytes without ever holding more than
/// `max` bytes of it in memory; longer lines are skipped to their end.
pub fn read_line_capped(reader: &mut dyn BufRead, max: usize) -> io::Result<Line> {
    let mut line = Vec::new();
    let mut skipped: Option<u64> = None;
    let mut any = false;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        any = true;
        let (chunk, done) = match memchr::memchr(b'\n', buf) {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        match skipped.as_mut() {
            Some(n) => *n += chunk.len() as u64,
            None if line.len() + chunk.len() > max => {
                skipped = Some((line.len() + chunk.len()) as u64);
                line = Vec::new();
            }
            None => line.extend_from_slice(chunk),
        }
        let consumed = done.unwrap_or(buf.len());
        reader.consume(consumed);
        if done.is_some() {
            break;
        }
    }
    if let Some(n) = skipped {
        return Ok(Line::TooLong(n));
    }
    if !any {
        return Ok(Line::End);
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    Ok(Line::Text(line))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        e.write_all(bytes).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn limited_reader_passes_up_to_the_cap_and_fails_beyond() {
        let mut ok = Vec::new();
        LimitedReader::new(&b"12345"[..], 5, "x")
            .read_to_end(&mut ok)
            .unwrap();
        assert_eq!(ok, b"12345");
        let mut out = Vec::new();
        let err = LimitedReader::new(&b"123456"[..], 5, "x")
            .read_to_end(&mut out)
            .unwrap_err();
        assert!(is_limit_exceeded(&err), "{err}");
        assert!(err.to_string().contains("stopped after 5 bytes"), "{err}");
    }

    #[test]
    fn gzip_is_told_by_content_and_capped() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("a.json");
        std::fs::write(&plain, b"{}").unwrap();
        let read = |p: &Path| read_document(&InputFile::open(p)?, &Limits::default());
        assert_eq!(read(&plain).unwrap(), b"{}");
        let packed = dir.path().join("b.json");
        std::fs::write(&packed, gzip(b"{\"a\":1}")).unwrap();
        assert_eq!(read(&packed).unwrap(), b"{\"a\":1}");
        // 8 MiB of zeros compress to ~8 KiB: far beyond 64× and the 1 MiB floor.
        let bomb = dir.path().join("c.json");
        std::fs::write(&bomb, gzip(&vec![0u8; 8 << 20])).unwrap();
        let err = read(&bomb).unwrap_err();
        assert!(is_limit_exceeded(&err), "{err}");
        let mut truncated = gzip(b"{\"a\":1}");
        truncated.truncate(truncated.len() - 6);
        std::fs::write(&packed, truncated).unwrap();
        let err = read(&packed).unwrap_err();
        assert!(err.to_string().starts_with("corrupt gzip"), "{err}");
    }

    #[test]
    fn long_lines_are_skipped_whole() {
        let text = format!("a\r\n{}\nb\nc", "x".repeat(100));
        let mut r = std::io::BufReader::with_capacity(7, text.as_bytes());
        let mut lines = Vec::new();
        loop {
            match read_line_capped(&mut r, 10).unwrap() {
                Line::End => break,
                l => lines.push(l),
            }
        }
        assert_eq!(
            lines,
            vec![
                Line::Text(b"a".to_vec()),
                Line::TooLong(100),
                Line::Text(b"b".to_vec()),
                Line::Text(b"c".to_vec())
            ]
        );
    }
}
