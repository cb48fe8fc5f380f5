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
//! records see, `crate::cache::identity`).
//!
//! **Why a kept listing cannot be stale.** A folder's stamp
//! (`crate::stat_stamp`: size, modification and change times to the
//! nanosecond, inode, device) moves whenever a name in it is added,
//! removed or renamed. Its times come from a coarse clock, so a name added
//! within one tick of the listing could leave the stamp as it was: like
//! git's index (and the run records), a listing is kept only when the
//! folder last changed at least [`crate::cache::SETTLED`] before the
//! build began, and its stamp is taken before the names are read (a
//! change meanwhile makes the kept stamp an old one, which then does not
//! match). Folders holding anything but plain files and folders (links,
//! names that are not UTF-8, …) are never kept: their notices come from a
//! real listing every time.
//!
//! A run's listings live in its record in the cache (`crate::cache`,
//! `stored::Listing`), which is rewritten only when something in it
//! changed.

use std::collections::HashMap;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::time::SystemTime;

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use xxhash_rust::xxh3::xxh3_128;

use super::layout::{self, Entry};
use crate::cache::Store;
use crate::cache::stored::{Listed as StoredListed, Listing};
use crate::stat_stamp::Stamp;

/// One folder as kept: the digest of its stamp (`None`: not to be
/// trusted next time) and its names, each a folder (`true`) or a file.
#[derive(Debug, Clone, Default, PartialEq)]
struct Listed {
    stamp: Option<u128>,
    names: Vec<(String, bool)>,
}

/// A run folder's listing: the run folder and the folders listed in it.
#[derive(Debug, Default, PartialEq)]
struct RunBlock {
    run: Option<Listed>,
    folders: Vec<(String, Listed)>,
}

/// Lists one run folder and the folders in it, from the kept listings
/// where their stamps are as they were; [`RunLister::finish`] hands what
/// it saw back to the listings.
pub(crate) struct RunLister<'a> {
    /// `None`: nothing is kept (no cache).
    store: Option<&'a Store>,
    /// A folder changed at or after this moment is listed every time.
    settled_before: SystemTime,
    /// The kept listings of this run, each taken out as it is used.
    kept: Option<RunBlock>,
    /// The run folder, opened only to `stat` what is in it.
    handle: Option<OwnedFd>,
    block: RunBlock,
    /// How many folders the kept listing had, and whether every folder
    /// listed so far came from it unchanged.
    kept_folders: usize,
    all_kept: bool,
    /// Where the next folder's kept listing usually is (folders are
    /// listed in the order they were kept).
    next_kept: usize,
}

impl RunLister<'_> {
    /// A lister that lists from `kept` (the run's listing as its record
    /// holds it) where folders are as they were, for a build that began
    /// at `started`.
    pub(crate) fn new(store: &Store, kept: Option<Listing>, started: SystemTime) -> RunLister<'_> {
        let kept = kept.and_then(|k| from_stored(&k));
        RunLister {
            kept_folders: kept.as_ref().map_or(0, |k| k.folders.len()),
            all_kept: kept.is_some(),
            store: Some(store),
            settled_before: started
                .checked_sub(crate::cache::SETTLED)
                .unwrap_or(SystemTime::UNIX_EPOCH),
            kept,
            handle: None,
            block: RunBlock::default(),
            next_kept: 0,
        }
    }

    /// A lister that keeps nothing (a build without a cache).
    pub(crate) fn uncached() -> RunLister<'static> {
        RunLister {
            store: None,
            kept_folders: 0,
            all_kept: false,
            settled_before: SystemTime::UNIX_EPOCH,
            kept: None,
            handle: None,
            block: RunBlock::default(),
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
        if let Some(store) = self.store {
            store.count_folder_as_listed();
        }
    }

    /// What was listed, to be kept in the run's record: `None` when it is
    /// what the record holds (every folder listed from it, as many as it
    /// had), or without a cache.
    pub(crate) fn finish(self) -> Option<Listing> {
        self.store?;
        let unchanged = self.all_kept && self.kept_folders == self.block.folders.len();
        (!unchanged).then(|| to_stored(&self.block))
    }

    /// A real listing of `dir`, and what of it to keep.
    fn fresh(&self, dir: &Path) -> std::io::Result<(Listed, Vec<Entry>)> {
        if self.store.is_none() {
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
        let settled = |s: &Stamp| s.changed < self.settled_before;
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
            let identity = rustix::fs::statat(handle, at.as_str(), AtFlags::SYMLINK_NOFOLLOW)
                .ok()
                .and_then(|st| crate::stat_stamp::of_stat(&st, FileType::RegularFile))
                .map(|stamp| crate::cache::SourceIdentity::local(&stamp));
            Entry::File {
                name: name.clone(),
                path,
                identity,
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

/// The stored form of a run's listing: its names once each, the
/// listings as numbers into them.
fn to_stored(block: &RunBlock) -> Listing {
    let mut table = NameTable::default();
    let unknown = Listed::default();
    let run = table.listed(block.run.as_ref().unwrap_or(&unknown));
    let folders = block
        .folders
        .iter()
        .map(|(name, l)| (table.number(name), table.listed(l)))
        .collect();
    Listing {
        names: table.names.into_iter().map(String::from).collect(),
        run,
        folders,
    }
}

/// A run's names, each numbered once.
#[derive(Default)]
struct NameTable<'a> {
    names: Vec<&'a str>,
    numbers: HashMap<&'a str, u32>,
}

impl<'a> NameTable<'a> {
    fn number(&mut self, name: &'a str) -> u32 {
        let next = self.names.len() as u32;
        let n = *self.numbers.entry(name).or_insert(next);
        if n == next {
            self.names.push(name);
        }
        n
    }

    fn listed(&mut self, listed: &'a Listed) -> StoredListed {
        StoredListed {
            stamp: listed.stamp,
            entries: listed
                .names
                .iter()
                .map(|(name, is_folder)| self.number(name) << 1 | u32::from(*is_folder))
                .collect(),
        }
    }
}

/// A run's listing from its stored form; `None` when a number names no
/// name (a record of another build's making: listed afresh).
fn from_stored(stored: &Listing) -> Option<RunBlock> {
    let name = |n: u32| stored.names.get(n as usize).cloned();
    let listed = |l: &StoredListed| -> Option<Listed> {
        Some(Listed {
            stamp: l.stamp,
            names: l
                .entries
                .iter()
                .map(|&e| Some((name(e >> 1)?, e & 1 == 1)))
                .collect::<Option<_>>()?,
        })
    };
    Some(RunBlock {
        run: Some(listed(&stored.run)?),
        folders: stored
            .folders
            .iter()
            .map(|(n, l)| Some((name(*n)?, listed(l)?)))
            .collect::<Option<_>>()?,
    })
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
        fn a_listing_reads_back_as_kept(b in block()) {
            let stored = to_stored(&b);
            let unique: std::collections::BTreeSet<_> = stored.names.iter().collect();
            prop_assert_eq!(unique.len(), stored.names.len(), "each name once");
            prop_assert_eq!(from_stored(&stored), Some(b));
        }
    }

    #[test]
    fn a_number_that_names_nothing_is_listed_afresh() {
        let stored = Listing {
            names: vec!["a".into()],
            run: StoredListed {
                stamp: None,
                entries: vec![2 << 1],
            },
            folders: vec![],
        };
        assert_eq!(from_stored(&stored), None);
    }
}
