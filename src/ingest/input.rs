//! One open file per input: every archive file is opened once, checked on
//! that descriptor, and read only through it.
//!
//! Checking a path and then opening it again is a race: between the two, a
//! round file can be swapped for a FIFO (the open blocks forever), for a
//! symbolic link (the link target's numbers reach the site) or for another
//! file. So an input is opened exactly once:
//!
//! * with `O_NOFOLLOW` (a link in the last component is refused) and, for
//!   archive files, with no link allowed on any component of the path
//!   (`openat2` with `RESOLVE_NO_SYMLINKS`; where the kernel lacks
//!   `openat2`, the opened file's real path from `/proc/self/fd` must be
//!   the path asked for);
//! * with `O_NONBLOCK`, so that opening a FIFO returns at once instead of
//!   waiting for a writer; `O_NOCTTY`, so that a terminal device never
//!   becomes ours;
//! * then `fstat` on that descriptor decides: only a regular file is read.
//!
//! Every later read (sniffing the head, the parse, a second pass, the
//! line number of a fault, the cache's content hash) goes through the same
//! descriptor with positional reads, so all of them see one file even if
//! the path is replaced meanwhile. A small file (most round files are
//! summaries of a few KiB) is read whole when it is opened, and every pass
//! reads that copy: one read of the file, whatever the passes.

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use xxhash_rust::xxh3::Xxh3;

/// What `fstat` says about an open file; equal identities before and after
/// a read mean nobody wrote to the file meanwhile (the change time moves on
/// every write and cannot be set back by `touch`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity {
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    pub mtime_ns: i128,
    pub ctime_ns: i128,
}

impl Identity {
    fn of(meta: &std::fs::Metadata) -> Identity {
        Identity {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime_ns: meta.mtime() as i128 * 1_000_000_000 + meta.mtime_nsec() as i128,
            ctime_ns: meta.ctime() as i128 * 1_000_000_000 + meta.ctime_nsec() as i128,
        }
    }
}

/// An input file, open and checked to be a regular file.
#[derive(Debug)]
pub struct InputFile {
    file: File,
    identity: Identity,
    /// The whole content, for a file of at most [`SNAPSHOT_MAX`] bytes.
    snapshot: Option<Vec<u8>>,
    /// When set, every pass that reads the whole file from its start
    /// records the xxh3-128 digest of the bytes it read (see
    /// [`InputFile::track_digests`]).
    digests: Option<Mutex<Vec<u128>>>,
}

/// How strictly symbolic links on the path are refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Links {
    /// No component may be a link: files found inside the archive, whose
    /// path was built from a link-free root and names read from folders.
    NoneOnPath,
    /// Only the file itself may not be a link: files a user names on the
    /// command line, whose folders are the user's choice.
    NotTheFile,
}

impl InputFile {
    /// Opens a file of the archive. `path` must be the archive's resolved
    /// root (no links, see `std::fs::canonicalize`) joined with names read
    /// from its folders: any symbolic link on it is refused.
    pub fn open_in_archive(path: &Path) -> io::Result<InputFile> {
        InputFile::open_with(path, Links::NoneOnPath)
    }

    /// Opens a file a user named; only a link as the file itself is
    /// refused.
    pub fn open(path: &Path) -> io::Result<InputFile> {
        InputFile::open_with(path, Links::NotTheFile)
    }

    fn open_with(path: &Path, links: Links) -> io::Result<InputFile> {
        let file = match links {
            Links::NoneOnPath => open_without_links(path),
            Links::NotTheFile => open_plain(path),
        }
        .map_err(|e| explain_open_error(path, e))?;
        let meta = file.metadata()?;
        let kind = meta.file_type();
        if kind.is_dir() {
            return Err(refused("is a folder, expected a file"));
        }
        if !kind.is_file() {
            return Err(refused(NOT_REGULAR));
        }
        // O_NONBLOCK has no effect on reads of a regular file on Linux, but
        // clear it so that no system can hand back EAGAIN mid-parse.
        let _ = rustix::fs::fcntl_setfl(&file, rustix::fs::OFlags::empty());
        let snapshot = match meta.len() <= SNAPSHOT_MAX {
            true => read_small(&file, meta.len())?,
            false => None,
        };
        Ok(InputFile {
            identity: Identity::of(&meta),
            file,
            snapshot,
            digests: None,
        })
    }

    /// The size when it was opened.
    pub fn len(&self) -> u64 {
        self.identity.size
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn identity(&self) -> Identity {
        self.identity
    }

    /// Whether the file was written to (or truncated) since it was opened.
    pub fn changed_since_open(&self) -> io::Result<bool> {
        Ok(Identity::of(&self.file.metadata()?) != self.identity)
    }

    /// A reader from the start of the file. Readers are independent: each
    /// keeps its own position, so several passes may read the same file.
    pub fn reader(&self) -> PassReader<'_> {
        PassReader {
            file: self,
            pos: 0,
            // Passes over a snapshot all read the same bytes.
            hasher: self
                .digests
                .as_ref()
                .filter(|_| self.snapshot.is_none())
                .map(|_| Box::new(Xxh3::new())),
            recorded: false,
        }
    }

    /// From now on, every pass that reads the file to its end records the
    /// digest of what it read ([`InputFile::full_pass_digests`]), so that a
    /// caller can tell whether all passes saw the same bytes.
    pub fn track_digests(&mut self) {
        self.digests.get_or_insert_with(|| Mutex::new(Vec::new()));
    }

    /// Reads the whole file and returns the xxh3-128 digest of its bytes
    /// (recorded like any other full pass when digests are tracked).
    pub fn digest(&self) -> io::Result<u128> {
        if let Some(bytes) = &self.snapshot {
            let digest = xxhash_rust::xxh3::xxh3_128(bytes);
            self.record(digest);
            return Ok(digest);
        }
        let mut hasher = Xxh3::new();
        // Small enough to come from the allocator's free lists (most
        // archive files are a few KiB), large enough for big files.
        let mut buf = vec![0u8; (self.len() as usize + 1).clamp(4096, 64 * 1024)];
        let mut pos = 0u64;
        loop {
            let n = match self.file.read_at(&mut buf, pos) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
            pos += n as u64;
        }
        let digest = hasher.digest128();
        self.record(digest);
        Ok(digest)
    }

    /// Reads into `buf` from byte `pos` (a positional read of the open
    /// descriptor, or of the snapshot of a small file); 0 at the end.
    pub(crate) fn read_at(&self, buf: &mut [u8], pos: u64) -> io::Result<usize> {
        match &self.snapshot {
            Some(bytes) => {
                let rest = bytes.get(pos as usize..).unwrap_or_default();
                let n = rest.len().min(buf.len());
                buf[..n].copy_from_slice(&rest[..n]);
                Ok(n)
            }
            None => self.file.read_at(buf, pos),
        }
    }

    /// Digests of the passes that read the whole file, in order.
    pub fn full_pass_digests(&self) -> Vec<u128> {
        self.digests
            .as_ref()
            .map(|d| d.lock().unwrap_or_else(|p| p.into_inner()).clone())
            .unwrap_or_default()
    }

    fn record(&self, digest: u128) {
        if let Some(d) = &self.digests {
            d.lock().unwrap_or_else(|p| p.into_inner()).push(digest);
        }
    }
}

/// The cache keys a file's result by its bytes (`crate::cache`): read
/// through the one open descriptor, every pass checked against the key.
impl crate::cache::ContentSource for InputFile {
    fn content_digest(&mut self) -> Option<u128> {
        self.track_digests();
        self.digest().ok()
    }

    fn read_consistently(&self, content: u128) -> bool {
        let mut digests = self.full_pass_digests();
        // The key's own pass is the first; a parse that stopped early (a
        // format read from its head) gets one more whole pass.
        if digests.len() < 2 {
            if self.digest().is_err() {
                return false;
            }
            digests = self.full_pass_digests();
        }
        digests.iter().all(|&d| d == content)
            && self.changed_since_open().is_ok_and(|changed| !changed)
    }
}

/// A reader over an [`InputFile`] from its first byte (positional reads:
/// it never moves a shared file offset).
pub struct PassReader<'a> {
    file: &'a InputFile,
    pos: u64,
    hasher: Option<Box<Xxh3>>,
    recorded: bool,
}

impl Read for PassReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = match &self.file.snapshot {
            Some(bytes) => {
                let rest = bytes.get(self.pos as usize..).unwrap_or_default();
                let n = rest.len().min(buf.len());
                buf[..n].copy_from_slice(&rest[..n]);
                n
            }
            None => self.file.file.read_at(buf, self.pos)?,
        };
        self.pos += n as u64;
        if let Some(h) = &mut self.hasher {
            h.update(&buf[..n]);
            if n == 0 && !buf.is_empty() && !self.recorded {
                self.recorded = true;
                self.file.record(h.digest128());
            }
        }
        Ok(n)
    }
}

const NOT_REGULAR: &str = "is not a regular file (a FIFO, socket or device)";

/// Files up to this size are read whole when opened.
const SNAPSHOT_MAX: u64 = 256 * 1024;

/// The whole content of a small file; `None` when it grew past
/// [`SNAPSHOT_MAX`] meanwhile (it is then read in passes like a large one).
fn read_small(file: &File, size: u64) -> io::Result<Option<Vec<u8>>> {
    // The descriptor's own offset is used by nothing else (passes read at
    // positions), so a plain read from the start is fine here.
    let mut bytes = Vec::with_capacity(size as usize + 1);
    (&mut &*file)
        .take(SNAPSHOT_MAX + 1)
        .read_to_end(&mut bytes)?;
    Ok((bytes.len() as u64 <= SNAPSHOT_MAX).then_some(bytes))
}

fn refused(message: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message.to_string())
}

/// The flags of every input open: read only, no link followed at the end,
/// never waiting on a FIFO or a device, never becoming a terminal.
fn open_flags() -> rustix::fs::OFlags {
    use rustix::fs::OFlags;
    OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC
}

/// Opens `path` with [`open_flags`]: a link as the file itself is refused.
fn open_plain(path: &Path) -> io::Result<File> {
    let fd = rustix::fs::open(path, open_flags(), rustix::fs::Mode::empty())?;
    Ok(File::from(fd))
}

/// Set once `openat2` turned out to be unavailable (old kernel, or a
/// container's system-call filter), so that later opens go straight to
/// the fallback.
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

/// Opens `path` refusing a symbolic link on any component.
fn open_without_links(path: &Path) -> io::Result<File> {
    use rustix::fs::{Mode, ResolveFlags};
    if !NO_OPENAT2.load(Ordering::Relaxed) {
        match rustix::fs::openat2(
            rustix::fs::CWD,
            path,
            open_flags(),
            Mode::empty(),
            ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS,
        ) {
            Ok(fd) => return Ok(File::from(fd)),
            Err(e)
                if e == rustix::io::Errno::NOSYS
                    || e == rustix::io::Errno::PERM
                    || e == rustix::io::Errno::TOOBIG =>
            {
                NO_OPENAT2.store(true, Ordering::Relaxed);
            }
            Err(e) => return Err(e.into()),
        }
    }
    // Fallback: open without following a final link, then ask the kernel
    // where the descriptor really points; a link on the way shows as a
    // different path.
    let file = open_plain(path)?;
    let fd = std::os::fd::AsRawFd::as_raw_fd(&file);
    if let Ok(real) = std::fs::read_link(format!("/proc/self/fd/{fd}"))
        && path.is_absolute()
        && real != path
    {
        return Err(io::Error::from_raw_os_error(
            rustix::io::Errno::LOOP.raw_os_error(),
        ));
    }
    Ok(file)
}

/// Turns the system's terse errors into the archive's wording.
fn explain_open_error(path: &Path, e: io::Error) -> io::Error {
    match e.raw_os_error().map(rustix::io::Errno::from_raw_os_error) {
        Some(rustix::io::Errno::LOOP) => {
            let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
            refused(if is_link {
                "is a symbolic link; links are not followed"
            } else {
                "a folder on its path is a symbolic link; links are not followed"
            })
        }
        // Opening a Unix socket fails with ENXIO.
        Some(rustix::io::Errno::NXIO) => refused(NOT_REGULAR),
        _ => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_regular_file_through_independent_passes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.json");
        std::fs::write(&path, b"hello world").unwrap();
        let mut file = InputFile::open_in_archive(&std::fs::canonicalize(&path).unwrap()).unwrap();
        file.track_digests();
        let mut first = Vec::new();
        file.reader().read_to_end(&mut first).unwrap();
        let mut head = [0u8; 5];
        file.reader().read_exact(&mut head).unwrap();
        assert_eq!(first, b"hello world");
        assert_eq!(&head, b"hello");
        let digest = file.digest().unwrap();
        assert_eq!(digest, xxhash_rust::xxh3::xxh3_128(b"hello world"));
        // A small file is read once, when opened: its passes read that copy
        // and need no digest of their own.
        assert_eq!(file.full_pass_digests(), vec![digest]);
        assert!(!file.changed_since_open().unwrap());
    }

    #[test]
    fn every_pass_over_a_small_file_reads_the_bytes_there_when_it_was_opened() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.json");
        std::fs::write(&path, b"p99 101").unwrap();
        let mut file = InputFile::open(&path).unwrap();
        file.track_digests();
        // Written in place (same inode) after the open: the passes still
        // agree with each other and with the cache key...
        File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .write_all_at(b"909", 4)
            .unwrap();
        let mut read = String::new();
        file.reader().read_to_string(&mut read).unwrap();
        assert_eq!(read, "p99 101");
        let digest = file.digest().unwrap();
        assert_eq!(digest, xxhash_rust::xxh3::xxh3_128(b"p99 101"));
        assert_eq!(file.full_pass_digests(), vec![digest]);
        // ...and the write is still seen, so nothing is cached from it.
        assert!(file.changed_since_open().unwrap());
    }

    #[test]
    fn a_file_larger_than_a_snapshot_is_read_in_passes_from_the_descriptor() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.ndjson");
        let content: Vec<u8> = (0..SNAPSHOT_MAX + 4097).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &content).unwrap();
        let mut file = InputFile::open(&path).unwrap();
        assert!(file.snapshot.is_none());
        file.track_digests();
        let mut read = Vec::new();
        file.reader().read_to_end(&mut read).unwrap();
        assert_eq!(read, content);
        let mut head = [0u8; 3];
        file.reader().read_exact(&mut head).unwrap();
        assert_eq!(head, [0, 1, 2]);
        let digest = file.digest().unwrap();
        assert_eq!(digest, xxhash_rust::xxh3::xxh3_128(&content));
        assert_eq!(file.full_pass_digests(), vec![digest, digest]);
    }

    #[test]
    fn a_replaced_path_does_not_change_what_an_open_file_reads() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.json");
        std::fs::write(&path, b"original").unwrap();
        let file = InputFile::open(&path).unwrap();
        let other = dir.path().join("b.json");
        std::fs::write(&other, b"replacement").unwrap();
        std::fs::rename(&other, &path).unwrap();
        let mut read = String::new();
        file.reader().read_to_string(&mut read).unwrap();
        assert_eq!(read, "original");
    }

    #[test]
    fn an_edit_is_seen_even_when_the_modification_time_is_restored() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.json");
        std::fs::write(&path, b"101").unwrap();
        let file = InputFile::open(&path).unwrap();
        let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
        crate::test_support::write_with_mtime(&path, b"909", mtime);
        assert!(file.changed_since_open().unwrap(), "ctime moved on");
    }

    #[test]
    fn links_folders_and_fifos_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::write(root.join("real.json"), b"{}").unwrap();
        std::os::unix::fs::symlink(root.join("real.json"), root.join("link.json")).unwrap();
        std::fs::create_dir(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/x.json"), b"{}").unwrap();
        std::os::unix::fs::symlink(root.join("sub"), root.join("linked-sub")).unwrap();
        let fifo = root.join("fifo.json");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o644),
            0,
        )
        .unwrap();
        let err = |p: &Path| InputFile::open_in_archive(p).unwrap_err().to_string();
        assert_eq!(
            err(&root.join("link.json")),
            "is a symbolic link; links are not followed"
        );
        assert_eq!(
            err(&root.join("linked-sub/x.json")),
            "a folder on its path is a symbolic link; links are not followed"
        );
        assert_eq!(err(&root.join("sub")), "is a folder, expected a file");
        assert_eq!(err(&fifo), NOT_REGULAR);
        assert_eq!(
            InputFile::open(&root.join("link.json"))
                .unwrap_err()
                .to_string(),
            "is a symbolic link; links are not followed"
        );
        // A user-named file may sit behind a linked folder.
        assert!(InputFile::open(&root.join("linked-sub/x.json")).is_ok());
    }
}
