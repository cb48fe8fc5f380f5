//! Run folders' listings kept between builds (issue 18): a folder whose
//! `stat` is as it was holds the same names, so a build lists it from the
//! cache instead of reading it again, and `stat`s its files through one
//! handle on the run folder.
//!
//! At 120 endpoints × 3 years a build listed 57k folders (open, `fstat`,
//! two `getdents64`, close: as many system calls as the `stat`s of the
//! 290k files in them, and the file system sorts each folder's names
//! into a tree first); a build after one new run spent a tenth of its CPU
//! there. Every file is still `stat`ed, each time: an edit inside a folder
//! does not move the folder's times, only the file's (which the run
//! records see, `super::record`).
//!
//! **Why a kept listing cannot be stale.** A folder's stamp
//! (`crate::stat_stamp`: size, modification and change times to the
//! nanosecond, inode, device) moves whenever a name in it is added,
//! removed or renamed. Its times come from a coarse clock, so a name added
//! within one tick of the listing could leave the stamp as it was: like
//! git's index (and the run records), a listing is kept only when the
//! folder last changed at least [`super::record::SETTLED`] before the
//! build began, and its stamp is taken before the names are read (a
//! change meanwhile makes the kept stamp an old one, which then does not
//! match). Folders holding anything but plain files and folders (links,
//! names that are not UTF-8, …) are never kept: their notices come from a
//! real listing every time.
//!
//! The listings live in one file of the cache folder (`listings`): a
//! header naming the perfdash and the format, then one block per run
//! folder, then the xxh3-128 of the blocks. A damaged or foreign file is
//! ignored (with a notice when damaged) and rewritten; deleting it is
//! always safe. It is rewritten only when a listing changed.

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::sync::Mutex;
use std::time::SystemTime;

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use xxhash_rust::xxh3::xxh3_128;

use super::layout::{self, Entry};
use crate::le_bytes::{LeReader, push_varint};
use crate::stat_stamp::Stamp;

/// The file's name in the cache folder.
pub(crate) const FILE_NAME: &str = "listings";

/// Bump when the layout below changes.
const FORMAT: u32 = 1;

fn header() -> String {
    format!("perfdash {} listings {FORMAT}\n", env!("CARGO_PKG_VERSION"))
}

/// The listings of the previous build and those this build keeps.
pub(crate) struct Listings {
    /// A folder changed at or after this moment is listed every time.
    settled_before: SystemTime,
    /// The previous build's file, and where each run's block is in it
    /// (emptied once the new file is made).
    old: std::sync::RwLock<Vec<u8>>,
    index: HashMap<String, Range<usize>>,
    /// What this build keeps, by run folder name.
    new: Mutex<BTreeMap<String, Block>>,
    /// Folders listed from here, as they were.
    kept: std::sync::atomic::AtomicUsize,
}

impl std::fmt::Debug for Listings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Listings")
            .field("kept_runs", &self.index.len())
            .field("listed_runs", &lock(&self.new).len())
            .finish()
    }
}

enum Block {
    /// The previous build's block, as it was.
    Old(Range<usize>),
    New(Vec<u8>),
}

/// One folder as kept: the digest of its stamp (`None`: not to be
/// trusted next time) and its names, each a folder (`true`) or a file.
#[derive(Debug, Clone, Default, PartialEq)]
struct Listed {
    stamp: Option<u128>,
    names: Vec<(String, bool)>,
}

/// A run folder's block: the run folder and the folders listed in it.
#[derive(Debug, Default)]
struct RunBlock {
    run: Option<Listed>,
    folders: Vec<(String, Listed)>,
}

impl Listings {
    /// The listings kept in `cache_dir` (none when there is no such file,
    /// or it is damaged: then `notice` says so), for a build that began at
    /// `started`.
    pub(crate) fn load(
        cache_dir: &Path,
        started: SystemTime,
        notice: impl FnOnce(String),
    ) -> Listings {
        let path = cache_dir.join(FILE_NAME);
        let (old, index) = match super::cache::read_cache_file(&path) {
            Ok(Some(bytes)) => match decode_file(bytes) {
                Ok(found) => found,
                Err(why) => {
                    notice(format!(
                        "ignored the folder listings in {}: {why}; the folders are listed again",
                        path.display()
                    ));
                    Default::default()
                }
            },
            Ok(None) => Default::default(),
            Err(e) => {
                notice(format!(
                    "ignored the folder listings in {}: {e}; the folders are listed again",
                    path.display()
                ));
                Default::default()
            }
        };
        Listings {
            settled_before: started
                .checked_sub(super::record::SETTLED)
                .unwrap_or(SystemTime::UNIX_EPOCH),
            old: std::sync::RwLock::new(old),
            index,
            new: Mutex::new(BTreeMap::new()),
            kept: Default::default(),
        }
    }

    /// How many folders were listed from here.
    pub(crate) fn kept_count(&self) -> usize {
        self.kept.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// A lister for the run folder `dir`, named `id`.
    pub(crate) fn run(&self, id: &str) -> RunLister<'_> {
        let kept = self.index.get(id).and_then(|range| {
            let old = self.old.read().unwrap_or_else(|p| p.into_inner());
            decode_block(old.get(range.clone())?).ok()
        });
        RunLister {
            listings: Some(self),
            id: id.to_string(),
            kept_folders: kept.as_ref().map_or(0, |k| k.folders.len()),
            kept,
            handle: None,
            block: RunBlock::default(),
            all_kept: true,
            next_kept: 0,
        }
    }

    /// The file's new content when a listing changed (or a run folder
    /// came or went) since it was read; `None` when it holds exactly what
    /// this build used. Called once every run is listed: lets go of both
    /// the old file and the new blocks.
    pub(crate) fn take_to_save(&self) -> Option<Vec<u8>> {
        let new = std::mem::take(&mut *lock(&self.new));
        let old = std::mem::take(&mut *self.old.write().unwrap_or_else(|p| p.into_inner()));
        let unchanged = new.len() == self.index.len()
            && new
                .iter()
                .all(|(id, block)| matches!(block, Block::Old(r) if self.index.get(id) == Some(r)));
        if unchanged {
            return None;
        }
        let mut body = Vec::new();
        for (id, block) in new.iter() {
            let bytes = match block {
                Block::Old(r) => &old[r.clone()],
                Block::New(b) => b,
            };
            put_bytes(&mut body, id.as_bytes());
            put_bytes(&mut body, bytes);
        }
        let mut file = header().into_bytes();
        file.extend_from_slice(&(body.len() as u64).to_le_bytes());
        file.extend_from_slice(&body);
        file.extend_from_slice(&xxh3_128(&body).to_le_bytes());
        Some(file)
    }
}

/// Lists one run folder and the folders in it, from the kept listings
/// where their stamps are as they were; [`RunLister::finish`] hands what
/// it saw back to the listings.
pub(crate) struct RunLister<'a> {
    /// `None`: nothing is kept (no cache).
    listings: Option<&'a Listings>,
    id: String,
    /// The kept listings of this run, each taken out as it is used.
    kept: Option<RunBlock>,
    kept_folders: usize,
    /// The run folder, opened only to `stat` what is in it.
    handle: Option<OwnedFd>,
    block: RunBlock,
    /// Whether every folder came from the kept listings, unchanged.
    all_kept: bool,
    /// Where the next folder's kept listing usually is (folders are
    /// listed in the order they were kept).
    next_kept: usize,
}

impl RunLister<'_> {
    /// A lister that keeps nothing (a build without a cache).
    pub(crate) fn uncached(id: &str) -> RunLister<'static> {
        RunLister {
            listings: None,
            id: id.to_string(),
            kept: None,
            kept_folders: 0,
            handle: None,
            block: RunBlock::default(),
            all_kept: false,
            next_kept: 0,
        }
    }

    /// The run folder's entries (see [`layout::list_listed_dir`]).
    pub(crate) fn list_run(&mut self, dir: &Path) -> std::io::Result<Vec<Entry>> {
        if let Some(kept) = &mut self.kept {
            // O_PATH: a handle to look names up through, nothing read.
            self.handle = rustix::fs::openat(
                rustix::fs::CWD,
                dir,
                OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .ok();
            if let Some(handle) = &self.handle
                && let Some(listed) = kept.run.take_if(|listed| {
                    listed.stamp.is_some()
                        && rustix::fs::fstat(handle)
                            .is_ok_and(|st| folder_numbers(&st) == listed.stamp)
                })
            {
                let entries = entries_of(handle, None, dir, &listed.names);
                self.block.run = Some(listed);
                self.count_kept();
                return Ok(entries);
            }
        }
        self.all_kept = false;
        let (listed, entries) = self.fresh(dir)?;
        self.block.run = Some(listed);
        Ok(entries)
    }

    /// The entries of `dir`, the folder `name` of the run folder.
    pub(crate) fn list_folder(&mut self, name: &str, dir: &Path) -> std::io::Result<Vec<Entry>> {
        let next = self.next_kept;
        let kept = self.kept.as_mut().and_then(|k| {
            let at = match k.folders.get(next) {
                Some((n, _)) if n == name => next,
                _ => k.folders.iter().position(|(n, _)| n == name)?,
            };
            Some((at, &mut k.folders[at].1))
        });
        if let (Some(handle), Some((at, listed))) = (&self.handle, kept)
            && listed.stamp.is_some()
            && let Ok(st) = rustix::fs::statat(handle, name, AtFlags::SYMLINK_NOFOLLOW)
            && folder_numbers(&st) == listed.stamp
        {
            // Each folder is listed once a run: moved, not copied.
            let listed = std::mem::take(listed);
            let entries = entries_of(handle, Some(name), dir, &listed.names);
            self.next_kept = at + 1;
            self.block.folders.push((name.to_string(), listed));
            self.count_kept();
            return Ok(entries);
        }
        self.all_kept = false;
        let (listed, entries) = self.fresh(dir)?;
        self.block.folders.push((name.to_string(), listed));
        Ok(entries)
    }

    fn count_kept(&self) {
        if let Some(l) = self.listings {
            l.kept.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// Hands what was listed to the listings, to be kept.
    pub(crate) fn finish(self) {
        let Some(listings) = self.listings else {
            return;
        };
        // Every listing as kept, and as many folders: the same block.
        let unchanged = self.all_kept && self.kept_folders == self.block.folders.len();
        let block = match listings.index.get(&self.id) {
            Some(range) if unchanged => Block::Old(range.clone()),
            _ => Block::New(encode_block(&self.block)),
        };
        lock(&listings.new).insert(self.id, block);
    }

    /// A real listing of `dir`, and what of it to keep.
    fn fresh(&self, dir: &Path) -> std::io::Result<(Listed, Vec<Entry>)> {
        let Some(listings) = self.listings else {
            // Nothing is kept: no `stat` of the folder, no names copied.
            let nothing = Listed {
                stamp: None,
                names: Vec::new(),
            };
            return Ok((nothing, layout::list_listed_dir(dir)?));
        };
        // The stamp first: a change while the names are read leaves a
        // stamp that no longer matches.
        let stamp = std::fs::symlink_metadata(dir)
            .ok()
            .and_then(|m| crate::stat_stamp::of_folder(&m));
        let entries = layout::list_listed_dir(dir)?;
        let mut names = Vec::with_capacity(entries.len());
        let mut plain = true;
        for e in &entries {
            match e {
                Entry::Dir { name, .. } => names.push((name.clone(), true)),
                Entry::File { name, .. } => names.push((name.clone(), false)),
                Entry::Skipped(_) => plain = false,
            }
        }
        let settled = |s: &Stamp| s.changed < listings.settled_before;
        let stamp = stamp
            .filter(|s| plain && settled(s))
            .map(|s| stamp_digest(&s.numbers));
        Ok((Listed { stamp, names }, entries))
    }
}

/// The entries of a kept listing of `dir`, each file `stat`ed through
/// `handle` (the run folder) as `[folder/]name`, not following a link.
fn entries_of(
    handle: &OwnedFd,
    folder: Option<&str>,
    dir: &Path,
    names: &[(String, bool)],
) -> Vec<Entry> {
    let mut at = String::new();
    names
        .iter()
        .map(|(name, is_folder)| {
            let path = dir.join(name);
            if *is_folder {
                return Entry::Dir {
                    name: name.clone(),
                    path,
                };
            }
            at.clear();
            if let Some(folder) = folder {
                at.push_str(folder);
                at.push('/');
            }
            at.push_str(name);
            let meta = rustix::fs::statat(handle, at.as_str(), AtFlags::SYMLINK_NOFOLLOW)
                .ok()
                .and_then(|st| crate::stat_stamp::of_stat(&st, FileType::RegularFile));
            Entry::File {
                name: name.clone(),
                path,
                meta,
            }
        })
        .collect()
}

fn folder_numbers(st: &rustix::fs::Stat) -> Option<u128> {
    crate::stat_stamp::of_stat(st, FileType::Directory).map(|s| stamp_digest(&s.numbers))
}

/// A folder's stamp as kept: only ever compared, so 16 bytes instead of
/// 56 (the file is read by every build).
fn stamp_digest(numbers: &[i64; 7]) -> u128 {
    let mut bytes = [0u8; 56];
    for (chunk, n) in bytes.chunks_exact_mut(8).zip(numbers) {
        chunk.copy_from_slice(&n.to_le_bytes());
    }
    xxh3_128(&bytes)
}

/// A run's block: its names once each (a run's endpoint folders hold
/// the same few file names), then the run folder's listing, then each
/// listed folder's, names as numbers into the table. At 120 endpoints ×
/// 3 years the file is ~2.6 MB (10 MB with every name written out).
fn encode_block(block: &RunBlock) -> Vec<u8> {
    let unknown = Listed {
        stamp: None,
        names: Vec::new(),
    };
    let mut table = NameTable::default();
    let mut listings = Vec::new();
    put_listed(
        &mut listings,
        block.run.as_ref().unwrap_or(&unknown),
        &mut table,
    );
    push_varint(&mut listings, block.folders.len() as u64);
    for (name, listed) in &block.folders {
        push_varint(&mut listings, table.number(name));
        put_listed(&mut listings, listed, &mut table);
    }
    let mut out = Vec::with_capacity(listings.len() + table.names.len() * 16);
    push_varint(&mut out, table.names.len() as u64);
    for name in &table.names {
        put_bytes(&mut out, name.as_bytes());
    }
    out.extend_from_slice(&listings);
    out
}

/// A block's names, each numbered once.
#[derive(Default)]
struct NameTable<'a> {
    names: Vec<&'a str>,
    numbers: HashMap<&'a str, u64>,
}

impl<'a> NameTable<'a> {
    fn number(&mut self, name: &'a str) -> u64 {
        let next = self.names.len() as u64;
        let n = *self.numbers.entry(name).or_insert(next);
        if n == next {
            self.names.push(name);
        }
        n
    }
}

fn put_listed<'a>(out: &mut Vec<u8>, listed: &'a Listed, table: &mut NameTable<'a>) {
    match listed.stamp {
        None => out.push(0),
        Some(digest) => {
            out.push(1);
            out.extend_from_slice(&digest.to_le_bytes());
        }
    }
    push_varint(out, listed.names.len() as u64);
    for (name, is_folder) in &listed.names {
        push_varint(out, table.number(name) << 1 | u64::from(*is_folder));
    }
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    push_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// A kept file, and where each run's block is in it.
type KeptFile = (Vec<u8>, HashMap<String, Range<usize>>);

/// Reads a kept file's blocks: `Ok` with no blocks when the file is of
/// another perfdash or format (not damaged, only foreign).
fn decode_file(bytes: Vec<u8>) -> Result<KeptFile, String> {
    let header = header();
    let Some(rest) = bytes.strip_prefix(header.as_bytes()) else {
        return Ok(Default::default());
    };
    let mut r = LeReader::new(rest);
    let len = r.u64()? as usize;
    let body = r.take(len)?;
    let sum = r.take(16)?;
    if r.remaining() != 0 || xxh3_128(body).to_le_bytes() != sum {
        return Err("checksum does not match".into());
    }
    // Ranges into the whole file.
    let body_start = header.len() + 8;
    let mut index = HashMap::new();
    let mut r = LeReader::new(body);
    while r.remaining() != 0 {
        let id = r.string()?;
        let len = r.varint()? as usize;
        let start = body_start + r.position();
        r.take(len)?;
        index.insert(id, start..start + len);
    }
    Ok((bytes, index))
}

fn decode_block(bytes: &[u8]) -> Result<RunBlock, String> {
    let mut r = LeReader::new(bytes);
    let n = r.varint()?;
    let mut table = Vec::with_capacity(n.min(1 << 16) as usize);
    for _ in 0..n {
        table.push(r.string()?);
    }
    let name = |n: u64| table.get(n as usize).cloned().ok_or("a bad name number");
    let run = Some(r.listed(&name)?);
    let n = r.varint()?;
    let mut folders = Vec::with_capacity(n.min(1 << 16) as usize);
    for _ in 0..n {
        let folder = name(r.varint()?)?;
        folders.push((folder, r.listed(&name)?));
    }
    Ok(RunBlock { run, folders })
}

/// The listings' own values read on top of [`LeReader`]: names and
/// listed folders.
trait ListingRead {
    fn string(&mut self) -> Result<String, String>;
    fn listed(
        &mut self,
        name: &dyn Fn(u64) -> Result<String, &'static str>,
    ) -> Result<Listed, String>;
}

impl ListingRead for LeReader<'_> {
    fn string(&mut self) -> Result<String, String> {
        let len = self.varint()? as usize;
        self.utf8(len).map_err(|_| "a name is not UTF-8".into())
    }

    fn listed(
        &mut self,
        name: &dyn Fn(u64) -> Result<String, &'static str>,
    ) -> Result<Listed, String> {
        let stamp = match self.u8()? {
            0 => None,
            1 => Some(self.u128()?),
            _ => return Err("a bad stamp tag".into()),
        };
        let n = self.varint()?;
        let mut names = Vec::with_capacity(n.min(1 << 16) as usize);
        for _ in 0..n {
            let code = self.varint()?;
            names.push((name(code >> 1)?, code & 1 == 1));
        }
        Ok(Listed { stamp, names })
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn listed() -> impl Strategy<Value = Listed> {
        (
            proptest::option::of(any::<u128>()),
            proptest::collection::vec(("[a-zé0-9._-]{0,12}", any::<bool>()), 0..8),
        )
            .prop_map(|(stamp, names)| Listed { stamp, names })
    }

    fn block() -> impl Strategy<Value = RunBlock> {
        (
            listed(),
            proptest::collection::vec(("[a-z0-9-]{1,10}", listed()), 0..6),
        )
            .prop_map(|(run, folders)| RunBlock {
                run: Some(run),
                folders,
            })
    }

    proptest! {
        #[test]
        fn a_block_reads_back_as_written(b in block()) {
            let back = decode_block(&encode_block(&b)).unwrap();
            prop_assert_eq!(back.run, b.run);
            prop_assert_eq!(back.folders, b.folders);
        }

        #[test]
        fn a_file_reads_back_and_any_flipped_byte_is_refused(
            blocks in proptest::collection::btree_map("[a-z0-9]{1,8}", block(), 1..4),
            at in any::<prop::sample::Index>(),
        ) {
            let listings = Listings {
                settled_before: SystemTime::UNIX_EPOCH,
                old: Default::default(),
                index: HashMap::new(),
                new: Mutex::new(BTreeMap::new()),
                kept: Default::default(),
            };
            for (id, b) in &blocks {
                lock(&listings.new).insert(id.clone(), Block::New(encode_block(b)));
            }
            let file = listings.take_to_save().unwrap();
            let (bytes, index) = decode_file(file.clone()).unwrap();
            prop_assert_eq!(index.len(), blocks.len());
            for (id, b) in &blocks {
                let back = decode_block(&bytes[index[id].clone()]).unwrap();
                prop_assert_eq!(&back.folders, &b.folders);
            }
            // Past the header: a flipped byte is damage, never a listing.
            let header = header().len();
            let i = header + at.index(file.len() - header);
            let mut damaged = file;
            damaged[i] ^= 0x10;
            prop_assert!(decode_file(damaged).is_err());
        }
    }

    #[test]
    fn another_perfdash_s_file_is_foreign_not_damaged() {
        let (bytes, index) = decode_file(b"perfdash 0.0.1 listings 1\n".to_vec()).unwrap();
        assert!(bytes.is_empty() && index.is_empty());
    }
}
