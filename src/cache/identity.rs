//! What identifies a source without reading it, and the identity of a
//! whole run made from those of its files.
//!
//! A source file is known unchanged by its [`SourceIdentity`]. Today every
//! source is a local file, known by its `stat` (`crate::stat_stamp`: size,
//! modification and **change** times to the nanosecond, inode, device),
//! like git's index:
//!
//! * An edit always moves the change time (ctime), which no user call can
//!   set back; `touch -r` restores the modification time only. A file
//!   replaced by another (a rename, a restore from backup) has another
//!   inode. A copied archive (`cp -a`) has new inodes and ctimes: its first
//!   build reads every file by content (the run record's file entries still
//!   serve it) and records the new identities.
//! * "Racily clean" files: file times have a coarse clock (a few ms), so a
//!   file written again within one tick of being looked at could keep its
//!   `stat`. An identity is therefore trusted only when the file's times
//!   are at least [`SETTLED`] older than the build; the runs being written
//!   right now are read by content every time.
//!
//! An archive kept as objects (issue 37: `--archive s3://…`) is read through
//! a local copy (`crate::remote::mirror`) whose files are rewritten only
//! when their object's listed identity (ETag and size, or size and last
//! modified) changes, so the local identities below serve it unchanged
//! and the stored shape (and the cache's FORMAT) stays as it was. Ingest
//! never looks behind this type: its listings
//! (`ingest::layout`) hand each file over with its identity, and the only
//! local-file parts are [`SourceIdentity::local`] and the settling rule.

use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::Xxh3;

/// How much older than the build a file's times must be for its `stat` to
/// be trusted (see the module notes on racy files).
pub const SETTLED: Duration = Duration::from_secs(2);

/// What shows a source file unchanged without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SourceIdentity {
    /// A local file: its `stat` numbers (size, mtime s/ns, ctime s/ns,
    /// inode, device), with the later of its two times.
    LocalStat {
        numbers: [i64; 7],
        #[serde(skip)]
        changed: Option<SystemTime>,
    },
}

impl SourceIdentity {
    /// A local file's identity from its stamp.
    pub fn local(stamp: &crate::stat_stamp::Stamp) -> SourceIdentity {
        SourceIdentity::LocalStat {
            numbers: stamp.numbers,
            changed: Some(stamp.changed),
        }
    }

    /// When the source was last modified, as far as its identity tells
    /// (time trust compares a run's time with its newest file's).
    pub fn modified(&self) -> Option<SystemTime> {
        match self {
            SourceIdentity::LocalStat { numbers, .. } => {
                Some(crate::stat_stamp::modified_of(numbers))
            }
        }
    }

    /// Whether this identity may be trusted by a build that began at
    /// `started` (a local file changed too recently might change again
    /// within the same tick of its clock).
    pub fn settled(&self, started: SystemTime) -> bool {
        match self {
            SourceIdentity::LocalStat { changed, .. } => {
                let before = started
                    .checked_sub(SETTLED)
                    .unwrap_or(SystemTime::UNIX_EPOCH);
                changed.is_some_and(|c| c < before)
            }
        }
    }

    /// The bytes hashed into a run's identity.
    fn bytes(&self) -> [u8; 56] {
        match self {
            SourceIdentity::LocalStat { numbers, .. } => {
                let mut buf = [0u8; 56];
                for (chunk, n) in buf.chunks_exact_mut(8).zip(numbers) {
                    chunk.copy_from_slice(&n.to_le_bytes());
                }
                buf
            }
        }
    }

    fn hash_into(&self, hasher: &mut Xxh3) {
        hasher.update(&self.bytes());
    }
}

/// Builds the identity of a run from the identities of the files it reads
/// (and the content of the few it reads anyway, `run.toml`), the perfdash
/// that reads them and every setting that decides what is read from them.
pub struct RunIdentity {
    hasher: Xxh3,
    started: SystemTime,
    settled: bool,
}

impl RunIdentity {
    /// `settings`: everything besides the files that decides the run's
    /// rounds (serialised by the caller); `started`: the build's start.
    pub fn new(started: SystemTime, settings: &[u8]) -> RunIdentity {
        let mut hasher = Xxh3::new();
        let version = format!(
            "perfdash {} run identity {}",
            env!("CARGO_PKG_VERSION"),
            super::frame::FORMAT
        );
        add_bytes(&mut hasher, version.as_bytes());
        add_bytes(&mut hasher, settings);
        RunIdentity {
            hasher,
            started,
            settled: true,
        }
    }

    /// A file known by its content.
    pub fn add_content(&mut self, rel: &str, bytes: &[u8]) {
        add_bytes(&mut self.hasher, b"content");
        add_bytes(&mut self.hasher, rel.as_bytes());
        add_bytes(&mut self.hasher, bytes);
    }

    /// A file known by its identity (`None`: it has none, so the run has
    /// none either).
    pub fn add_source(&mut self, rel: &str, identity: Option<&SourceIdentity>) {
        let Some(identity) = identity else {
            self.settled = false;
            return;
        };
        if !identity.settled(self.started) {
            self.settled = false;
        }
        // One update per file, of the tag, the path and the numbers: eleven
        // small updates per file were a twentieth of a warm `check`
        // (~300k files).
        const MAX_REL: usize = 256;
        let rel = rel.as_bytes();
        if rel.len() > MAX_REL {
            add_bytes(&mut self.hasher, b"source");
            add_bytes(&mut self.hasher, rel);
            identity.hash_into(&mut self.hasher);
            return;
        }
        let mut buf = [0u8; 8 + 6 + 8 + MAX_REL + 56];
        let mut at = 0;
        let mut put = |bytes: &[u8]| {
            buf[at..at + bytes.len()].copy_from_slice(bytes);
            at += bytes.len();
        };
        put(&6u64.to_le_bytes());
        put(b"source");
        put(&(rel.len() as u64).to_le_bytes());
        put(rel);
        put(&identity.bytes());
        self.hasher.update(&buf[..at]);
    }

    /// A file that was looked for and is not there (a step-load run's
    /// optional `resources.csv`).
    pub fn add_absent(&mut self, rel: &str) {
        add_bytes(&mut self.hasher, b"absent");
        add_bytes(&mut self.hasher, rel.as_bytes());
    }

    /// The run's identity, or `None` when some file changed too recently
    /// (or could not be looked at) for its identity to be trusted.
    pub fn finish(self) -> Option<u128> {
        self.settled.then(|| self.hasher.digest128())
    }
}

fn add_bytes(hasher: &mut Xxh3, bytes: &[u8]) {
    hasher.update(&(bytes.len() as u64).to_le_bytes());
    hasher.update(bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_changed_in_the_last_seconds_gives_no_run_identity() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("round-1.json");
        std::fs::write(&file, "{}").unwrap();
        let identity =
            |m: &std::fs::Metadata| SourceIdentity::local(&crate::stat_stamp::of(m).unwrap());
        let meta = std::fs::metadata(&file).unwrap();
        let mut now = RunIdentity::new(SystemTime::now(), b"s");
        now.add_source("f", Some(&identity(&meta)));
        assert_eq!(now.finish(), None, "just written: racily clean");
        let later = SystemTime::now() + Duration::from_secs(60);
        let of = |m: &std::fs::Metadata| {
            let mut f = RunIdentity::new(later, b"s");
            f.add_source("f", Some(&identity(m)));
            f.finish().unwrap()
        };
        let first = of(&meta);
        assert_eq!(first, of(&std::fs::metadata(&file).unwrap()));
        // Rewritten with the same size and its modification time restored:
        // the change time still moves.
        std::thread::sleep(Duration::from_millis(20));
        crate::test_support::write_with_mtime(&file, "[]", meta.modified().unwrap());
        assert_ne!(first, of(&std::fs::metadata(&file).unwrap()));
        let mut missing = RunIdentity::new(later, b"s");
        missing.add_source("f", None);
        assert_eq!(missing.finish(), None);
        // Other settings, another path: another identity.
        let mut other = RunIdentity::new(later, b"t");
        other.add_source("f", Some(&identity(&meta)));
        assert_ne!(other.finish().unwrap(), first);
        let mut moved = RunIdentity::new(later, b"s");
        moved.add_source("g", Some(&identity(&meta)));
        assert_ne!(moved.finish().unwrap(), first);
        // A path too long for the one-update buffer hashes the same bytes.
        for rel in ["x".repeat(256), "x".repeat(257)] {
            let mut one = RunIdentity::new(later, b"s");
            one.add_source(&rel, Some(&identity(&meta)));
            let mut want = RunIdentity::new(later, b"s");
            add_bytes(&mut want.hasher, b"source");
            add_bytes(&mut want.hasher, rel.as_bytes());
            identity(&meta).hash_into(&mut want.hasher);
            assert_eq!(one.finish(), want.finish(), "{}", rel.len());
        }
    }
}
