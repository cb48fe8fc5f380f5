//! Per-round-file results cached outside the archive, so that a rebuild
//! re-reads only files that are new or changed.
//!
//! One small JSON file per (round file, settings) pair, named by a hash of
//! the key: the file's canonical path, its size and modification time, the
//! settings that decide its result (metric, split tag, tag mapping,
//! warm-ups, percentile method, failure handling) and the cache format
//! version. A changed file or setting therefore misses exactly the entries
//! it affects; a new run misses only its own files. Entries are written
//! atomically (temp file + rename), so parallel builds never see half an
//! entry. Errors are never cached (a broken file is re-read and reported
//! every time); a cache that cannot be read or written is simply bypassed.
//!
//! Stale entries are not removed; deleting the folder is always safe.

use std::hash::Hasher;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::UNIX_EPOCH;

use serde::Serialize;

use super::raw::{FileResult, FileSettings};
use crate::error::Error;

/// Bump when [`FileResult`] or the computation changes meaning.
const CACHE_VERSION: u32 = 2;

/// The cache folder's name, beside the output folder.
pub const CACHE_DIR_NAME: &str = ".perfdash-cache";

/// A cache folder plus counters of what a load did.
#[derive(Debug)]
pub struct RoundCache {
    dir: PathBuf,
    read: AtomicUsize,
    cached: AtomicUsize,
}

/// How many round files a load read, and how many came from the cache.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ReadCounts {
    /// Round files whose content was read and parsed.
    pub read: usize,
    /// Round files whose result came from the cache.
    pub cached: usize,
}

impl RoundCache {
    /// A cache in `dir` (created on first write).
    pub fn new(dir: impl Into<PathBuf>) -> RoundCache {
        RoundCache {
            dir: dir.into(),
            read: AtomicUsize::new(0),
            cached: AtomicUsize::new(0),
        }
    }

    /// The cache that belongs to a site output folder:
    /// `<parent of out>/.perfdash-cache/` (outside both the archive and
    /// the site, which is replaced wholesale on every build).
    pub fn beside_output(out: &Path) -> RoundCache {
        let parent = out
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        RoundCache::new(parent.join(CACHE_DIR_NAME))
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn counts(&self) -> ReadCounts {
        ReadCounts {
            read: self.read.load(Ordering::Relaxed),
            cached: self.cached.load(Ordering::Relaxed),
        }
    }

    /// The cached result for `path` under `settings`, or `compute()`'s
    /// (stored when it succeeds).
    pub fn get_or_compute(
        &self,
        path: &Path,
        settings: &FileSettings,
        compute: impl FnOnce() -> Result<FileResult, Error>,
    ) -> Result<FileResult, Error> {
        let Some(entry) = self.entry_path(path, "", settings) else {
            self.read.fetch_add(1, Ordering::Relaxed);
            return compute();
        };
        if let Ok(bytes) = std::fs::read(&entry)
            && let Ok(result) = serde_json::from_slice::<FileResult>(&bytes)
        {
            self.cached.fetch_add(1, Ordering::Relaxed);
            return Ok(result);
        }
        self.read.fetch_add(1, Ordering::Relaxed);
        let result = compute()?;
        self.store(&entry, &result);
        Ok(result)
    }

    /// Like [`Self::get_or_compute`] for other per-file results (step-load
    /// files: `kind` = `"steps"`), keyed by `kind` as well so that they
    /// never meet round entries. Not counted in [`ReadCounts`], which
    /// counts round files.
    pub fn get_or_compute_other<K: Serialize, T: Serialize + serde::de::DeserializeOwned>(
        &self,
        kind: &str,
        path: &Path,
        key: &K,
        compute: impl FnOnce() -> Result<T, Error>,
    ) -> Result<T, Error> {
        let Some(entry) = self.entry_path(path, kind, key) else {
            return compute();
        };
        if let Ok(bytes) = std::fs::read(&entry)
            && let Ok(result) = serde_json::from_slice::<T>(&bytes)
        {
            return Ok(result);
        }
        let result = compute()?;
        self.store(&entry, &result);
        Ok(result)
    }

    /// Counts a file read without the cache (no cache configured).
    pub(crate) fn count_uncached(&self) {
        self.read.fetch_add(1, Ordering::Relaxed);
    }

    /// `kind` is empty for round files (so their keys are what they were
    /// before other kinds existed).
    fn entry_path(&self, path: &Path, kind: &str, settings: &impl Serialize) -> Option<PathBuf> {
        let canonical = std::fs::canonicalize(path).ok()?;
        let meta = std::fs::metadata(&canonical).ok()?;
        let mtime = meta
            .modified()
            .ok()?
            .duration_since(UNIX_EPOCH)
            .ok()?
            .as_nanos();
        let mut h = crate::hash::Fnv1a::default();
        h.write_u32(CACHE_VERSION);
        if !kind.is_empty() {
            h.write(kind.as_bytes());
            h.write_u8(0);
        }
        h.write(canonical.as_os_str().as_encoded_bytes());
        h.write_u8(0);
        h.write_u64(meta.len());
        h.write_u128(mtime);
        h.write(serde_json::to_string(settings).ok()?.as_bytes());
        Some(self.dir.join(format!("{:016x}.json", h.finish())))
    }

    fn store(&self, entry: &Path, result: &impl Serialize) {
        let Ok(bytes) = serde_json::to_vec(result) else {
            return;
        };
        if std::fs::create_dir_all(&self.dir).is_err() {
            return;
        }
        if let Ok(mut tmp) = tempfile::NamedTempFile::new_in(&self.dir) {
            use std::io::Write;
            if tmp.write_all(&bytes).is_ok() {
                let _ = tmp.persist(entry);
            }
        }
    }
}
