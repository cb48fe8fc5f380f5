//! Per-file results kept between builds, so that a rebuild parses only
//! files whose bytes changed. The cache can neither go stale nor be
//! poisoned:
//!
//! * **Keyed by content.** An entry is found by the file's path in the
//!   archive, the xxh3-128 digest of the bytes read from the open file
//!   (hashing is far cheaper than parsing), and a digest of the settings
//!   that decide its result. A file edited and `touch -r`'d back, or
//!   replaced and later restored, is judged by its bytes, never by its
//!   size or time.
//! * **Stored only when every read agreed.** A result is kept only when
//!   each pass that read the whole file saw the bytes of the key and the
//!   file's change time did not move meanwhile; a file written to during
//!   the build is parsed again next time.
//! * **Checked on the way back.** Every entry is one line: the xxh3-128 of
//!   its JSON, then the JSON, which holds the perfdash version and cache
//!   format. A damaged or edited entry is ignored with a notice and its
//!   file is read again; an entry of another version is ignored silently.
//!   A value that would not come back equal from JSON is never stored,
//!   so a cached build and a `--no-cache` build are byte-identical.
//! * **Bounded.** One file per run (`run-<hash of the run id>.cache`),
//!   under `.perfdash-cache/<name of --out>/` beside the output folder.
//!   After a build each run's file holds exactly the entries that build
//!   used; files of runs no longer in the archive are removed.
//! * **Whole runs by `stat`.** A run read without a problem also gets a
//!   compact record of its rounds at the head of its file, found again by
//!   the `stat` fingerprint of its files (size, times to the nanosecond,
//!   change time included, inode; see `super::record`): a build or a
//!   `check` that finds a run's files as they were opens none of them. Any
//!   change, even one `touch -r` hides, moves the change time; the run is
//!   then read file by file, by content, as above.
//! * **Put in place last.** A run's new file is written as soon as the
//!   run is read, under a temporary name (`.tmp-…`) that no load reads,
//!   so that a build never holds every run's cache text at once (at 120
//!   endpoints × 156 weeks that was ~370 MB, issue 18). Only
//!   [`RoundCache::save`], after the site is in place, renames them to
//!   their run files, each in one step: a build that fails (or `--strict`
//!   refusing one) removes them and leaves the cache as it was (and no
//!   folder it made), a `kill -9` leaves only temporary files the next
//!   save removes, and a full disk costs the cache, never the site.
//!
//! Errors are never cached (a broken file is re-read and reported every
//! time). The cache folder, and every cache file, is opened like an
//! archive file: a symbolic link is not followed and a FIFO never blocks;
//! either only costs the cache, with a notice. Deleting the folder is
//! always safe.

use std::collections::{BTreeMap, HashMap};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::{xxh3_64, xxh3_128};

use super::input::InputFile;
use super::limits::Limits;
use super::listing::Listings;
use super::record::{self, RunRecord};
use crate::error::Error;

/// Bump when a cached result's meaning ([`super::raw::FileResult`], a
/// step series, the computation behind them) or the entry layout changes.
const CACHE_FORMAT: u32 = 4;

/// What every entry records as its origin; an entry from any other
/// perfdash version or cache format is not used.
fn version_tag() -> String {
    format!(
        "perfdash {} cache {CACHE_FORMAT}",
        env!("CARGO_PKG_VERSION")
    )
}

/// The cache folder's name, beside the output folder.
pub const CACHE_DIR_NAME: &str = ".perfdash-cache";

/// Prefix of a cache file being written (removed by the next build when a
/// crash left it).
const TEMP_PREFIX: &str = ".tmp-";

/// The cache of one output folder, plus what a load did with it.
#[derive(Debug)]
pub struct RoundCache {
    dir: PathBuf,
    /// `false` when the folder is unusable (a symbolic link, a file): the
    /// build reads everything and writes no cache.
    usable: bool,
    read: AtomicUsize,
    cached: AtomicUsize,
    runs_by_stat: AtomicUsize,
    /// For each run file this build keeps: its new content, staged, or
    /// `None` when the file on disk already holds exactly what it used.
    runs: Mutex<BTreeMap<String, RunState>>,
    /// How writing the staged files went (see [`RoundCache::stage`]).
    staging: Mutex<Staging>,
    notices: Mutex<Vec<String>>,
    /// The run folders' listings (`super::listing`), read when first used,
    /// and their new file, staged once every run is listed.
    listings: std::sync::OnceLock<Listings>,
    /// New content of the files beside the run files (the listings, the
    /// change-point judgements), by name, staged until [`RoundCache::save`].
    side_files: Mutex<BTreeMap<&'static str, Staged>>,
}

#[derive(Debug)]
struct RunState {
    /// The file's new content, written beside it under a temporary name
    /// (removed when dropped unsaved), or `None` when the file already
    /// holds exactly the entries this build used.
    staged: Option<Staged>,
}

/// What staging did so far.
#[derive(Debug, Default)]
struct Staging {
    /// Whether the cache folder is there to stage into (`None`: not
    /// tried yet).
    ready: Option<bool>,
    /// The folders staging created, deepest first: removed again (when
    /// empty) if the cache is never saved.
    created: Vec<PathBuf>,
    /// The first write that failed.
    failure: Option<String>,
}

/// A run file's new content, written under a temporary name until
/// [`RoundCache::save`] renames it into place.
#[derive(Debug)]
struct Staged {
    /// Deletes the file when dropped (declared first: dropped first).
    path: tempfile::TempPath,
    /// Removes the file on an interrupting signal meanwhile.
    _on_signal: crate::cleanup::Registered,
}

/// How many round files a load read, and how many came from the cache.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ReadCounts {
    /// Round files whose content was read and parsed.
    pub read: usize,
    /// Round files whose result came from the cache.
    pub cached: usize,
    /// Runs whose rounds came from their record, none of their files
    /// opened (their round files are counted in `cached`).
    pub runs_by_stat: usize,
    /// Run and endpoint folders found as they were last listed, and
    /// listed from the cache (`listing`).
    pub folders_as_listed: usize,
}

/// What [`RoundCache::save`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Saved {
    /// Run files written (new or changed).
    pub written: usize,
    /// Run files (and leftovers) removed.
    pub removed: usize,
}

/// One cached result. The value stays JSON text in memory (a parsed
/// tree costs several times more, for up to one entry per round file).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry {
    /// perfdash version and cache format ([`version_tag`]).
    version: String,
    /// `round` or `steps`.
    kind: String,
    /// The file, relative to the archive root.
    source: String,
    /// xxh3-128 of the file's bytes, hex.
    content: String,
    /// xxh3-128 of the kind and the settings that decide the result, hex.
    settings: String,
    value: Box<serde_json::value::RawValue>,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Entry) -> bool {
        (
            &self.version,
            &self.kind,
            &self.source,
            &self.content,
            &self.settings,
        ) == (
            &other.version,
            &other.kind,
            &other.source,
            &other.content,
            &other.settings,
        ) && self.value.get() == other.value.get()
    }
}

impl RoundCache {
    /// A cache in `dir` (created when first saved). A `dir` that is a
    /// symbolic link, or not a folder, is not used (see [`RoundCache::notices`]).
    pub fn new(dir: impl Into<PathBuf>) -> RoundCache {
        let dir = dir.into();
        let mut notices = Vec::new();
        let usable = match unusable_reason(&dir) {
            None => true,
            Some(why) => {
                notices.push(format!(
                    "the cache {} {why}; this build reads every file and saves no cache",
                    dir.display()
                ));
                false
            }
        };
        RoundCache {
            dir,
            usable,
            read: AtomicUsize::new(0),
            cached: AtomicUsize::new(0),
            runs_by_stat: AtomicUsize::new(0),
            runs: Mutex::new(BTreeMap::new()),
            staging: Mutex::new(Staging::default()),
            notices: Mutex::new(notices),
            listings: std::sync::OnceLock::new(),
            side_files: Mutex::new(BTreeMap::new()),
        }
    }

    /// The cache that belongs to a site output folder:
    /// `<parent of out>/.perfdash-cache/<name of out>/` (outside both the
    /// archive and the site, which is replaced wholesale on every build;
    /// one folder per output, so that the builder holding that output's
    /// lock is its only writer).
    pub fn beside_output(out: &Path) -> RoundCache {
        let parent = out
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let name = out
            .file_name()
            .map(|n| n.to_os_string())
            .unwrap_or_else(|| "site".into());
        RoundCache::new(parent.join(CACHE_DIR_NAME).join(name))
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn counts(&self) -> ReadCounts {
        ReadCounts {
            read: self.read.load(Ordering::Relaxed),
            cached: self.cached.load(Ordering::Relaxed),
            runs_by_stat: self.runs_by_stat.load(Ordering::Relaxed),
            folders_as_listed: self.listings.get().map_or(0, Listings::kept_count),
        }
    }

    /// Counts a round file read without the cache.
    pub(crate) fn count_uncached(&self) {
        self.read.fetch_add(1, Ordering::Relaxed);
    }

    /// Things about the cache the user should know (a damaged entry was
    /// ignored, the folder is a link, a save failed). They never change
    /// what the site shows, so they are not warnings.
    pub fn notices(&self) -> Vec<String> {
        lock(&self.notices).clone()
    }

    fn notice(&self, text: String) {
        lock(&self.notices).push(text);
    }

    /// Loads the cache file of one run (an empty one when the cache is
    /// unusable or holds nothing for it).
    pub fn for_run(&self, run_id: &str) -> RunCache<'_> {
        let file_name = run_file_name(run_id);
        let mut old = HashMap::new();
        let mut old_record = None;
        let mut loaded_all = false;
        if self.usable {
            let path = self.dir.join(&file_name);
            match read_cache_file(&path) {
                Ok(Some(bytes)) => {
                    let (record, rest) = split_record_block(&bytes);
                    old_record = record.map(<[u8]>::to_vec);
                    let (entries, mut bad) = match std::str::from_utf8(rest) {
                        Ok(text) => parse_run_file(text),
                        Err(_) => (Vec::new(), 1),
                    };
                    bad +=
                        usize::from(record.is_none() && bytes.starts_with(RECORD_TAG.as_bytes()));
                    if bad > 0 {
                        self.notice(format!(
                            "ignored {bad} damaged or edited cache entr{} in {} (checksum or content \
                             does not match); the files they summarise are read again",
                            if bad == 1 { "y" } else { "ies" },
                            path.display()
                        ));
                    }
                    loaded_all = bad == 0;
                    for e in entries {
                        old.insert((e.kind.clone(), e.source.clone()), e);
                    }
                }
                Ok(None) => loaded_all = true,
                Err(e) => self.notice(format!(
                    "ignored the cache file {}: {e}; its files are read again",
                    path.display()
                )),
            }
        }
        RunCache {
            cache: self,
            file_name,
            loaded: old.len(),
            loaded_all,
            old,
            old_record,
            used: Mutex::new(Vec::new()),
        }
    }

    /// The run folders' listings kept in this cache, for a build that
    /// began at `started` (`None` when the cache is unusable).
    pub(crate) fn listings(&self, started: std::time::SystemTime) -> Option<&Listings> {
        if !self.usable {
            return None;
        }
        Some(
            self.listings
                .get_or_init(|| Listings::load(&self.dir, started, |n| self.notice(n))),
        )
    }

    /// Once every run folder is listed: stages the listings' new file
    /// when they changed (put in place by [`RoundCache::save`]), and lets
    /// go of them.
    pub(crate) fn stage_listings(&self) {
        if let Some(bytes) = self.listings.get().and_then(Listings::take_to_save) {
            self.stage_side_file(super::listing::FILE_NAME, &bytes);
        }
    }

    /// The content of the file `name` beside the run files (see
    /// [`RoundCache::stage_side_file`]); `None` when there is none or the
    /// cache is not used. A file that cannot be read is a notice.
    pub fn side_file(&self, name: &str) -> Option<Vec<u8>> {
        if !self.usable {
            return None;
        }
        let path = self.dir.join(name);
        read_cache_file(&path)
            .map_err(|e| {
                self.notice(format!(
                    "could not read {}: {e}; what it holds is computed again",
                    path.display()
                ))
            })
            .ok()
            .flatten()
    }

    /// Stages `bytes` as the new content of the file `name` beside the run
    /// files, put in place by [`RoundCache::save`] (dropped with the cache
    /// when the build fails). Not a run's file: never counted nor pruned.
    pub fn stage_side_file(&self, name: &'static str, bytes: &[u8]) {
        debug_assert!(!is_run_file_name(name) && !name.starts_with(TEMP_PREFIX));
        if let Some(staged) = self.stage(bytes) {
            lock(&self.side_files).insert(name, staged);
        }
    }

    /// The rounds of run `run_id` when its cache file holds a record made
    /// for `fingerprint` (see [`super::record`]); the run's files need not
    /// be opened, and its cache file is kept as it is. `rounds`: how many
    /// round files the record stands for (counted as cached).
    pub(crate) fn run_record(
        &self,
        run_id: &str,
        fingerprint: u128,
        rounds: usize,
    ) -> Option<RunRecord> {
        if !self.usable {
            return None;
        }
        let file_name = run_file_name(run_id);
        let path = self.dir.join(&file_name);
        let damaged = |why: String| {
            self.notice(format!(
                "ignored the run record in {}: {why}; the run's files are read again",
                path.display()
            ))
        };
        let bytes = match read_record_block(&path) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return None,
            Err(e) => {
                damaged(e.to_string());
                return None;
            }
        };
        match record::decode(&bytes, fingerprint) {
            Ok(Some(found)) => {
                self.cached.fetch_add(rounds, Ordering::Relaxed);
                self.runs_by_stat.fetch_add(1, Ordering::Relaxed);
                lock(&self.runs).insert(file_name, RunState { staged: None });
                Some(found)
            }
            Ok(None) => None,
            Err(why) => {
                damaged(why);
                None
            }
        }
    }

    /// Puts the cache of a build in place, after the site: renames each
    /// run's staged file to its run file (files whose content would not
    /// change were never staged), then removes run files of runs no
    /// longer read and leftovers of interrupted saves. Failures (a full
    /// disk) cost only the cache, with a notice.
    pub fn save(&self) -> Saved {
        let mut done = Saved::default();
        if !self.usable {
            return done;
        }
        let runs = std::mem::take(&mut *lock(&self.runs));
        let staging = std::mem::take(&mut *lock(&self.staging));
        if let Err(e) = create_cache_dir(&self.dir) {
            self.notice(format!(
                "the cache was not saved in {}: {e}",
                self.dir.display()
            ));
            return done;
        }
        let mut failure = staging.failure;
        let mut keep = BTreeMap::new();
        for (file_name, state) in runs {
            if let Some(staged) = state.staged {
                match staged.path.persist(self.dir.join(&file_name)) {
                    Ok(()) => done.written += 1,
                    Err(e) => {
                        failure.get_or_insert(e.error.to_string());
                    }
                }
            }
            keep.insert(file_name, ());
        }
        // The files beside them (not counted: not a run's).
        for (name, staged) in std::mem::take(&mut *lock(&self.side_files)) {
            if let Err(e) = staged.path.persist(self.dir.join(name)) {
                failure.get_or_insert(e.error.to_string());
            }
        }
        if let Some(e) = failure {
            self.notice(format!(
                "the cache was not (fully) saved in {}: {e}; the next build reads those files again",
                self.dir.display()
            ));
        }
        done.removed = self.prune(&keep);
        done
    }

    /// Writes `text`, the new content of a run file, under a temporary
    /// name in the cache folder (created the first time, with the
    /// folders above it that are missing). `None` when it could not be
    /// written; [`RoundCache::save`] says so.
    fn stage(&self, text: &[u8]) -> Option<Staged> {
        if !self.usable {
            return None;
        }
        {
            let mut staging = lock(&self.staging);
            if staging.ready.is_none() {
                let missing: Vec<PathBuf> = self
                    .dir
                    .ancestors()
                    .take_while(|p| !p.as_os_str().is_empty() && !p.exists())
                    .map(Path::to_path_buf)
                    .collect();
                let made = create_cache_dir(&self.dir);
                staging.created = missing;
                staging.ready = Some(made.is_ok());
                if let Err(e) = made {
                    staging.failure.get_or_insert(e.to_string());
                }
            }
            if staging.ready != Some(true) {
                return None;
            }
        }
        let written = (|| -> std::io::Result<Staged> {
            let mut tmp = tempfile::Builder::new()
                .prefix(TEMP_PREFIX)
                .tempfile_in(&self.dir)?;
            let on_signal = crate::cleanup::register(tmp.path());
            tmp.write_all(text)?;
            Ok(Staged {
                path: tmp.into_temp_path(),
                _on_signal: on_signal,
            })
        })();
        written
            .map_err(|e| {
                lock(&self.staging).failure.get_or_insert(e.to_string());
            })
            .ok()
    }

    /// Removes run files not in `keep`, temp files of interrupted saves,
    /// and the per-round files of perfdash's first cache format.
    fn prune(&self, keep: &BTreeMap<String, ()>) -> usize {
        let mut removed = 0;
        if let Ok(entries) = std::fs::read_dir(&self.dir) {
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                let ours = (is_run_file_name(&name) && !keep.contains_key(&name))
                    || name.starts_with(TEMP_PREFIX);
                let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
                if ours && !is_dir && std::fs::remove_file(entry.path()).is_ok() {
                    removed += 1;
                }
            }
        }
        // Format 1 kept one `<16 hex>.json` file per round directly in
        // `.perfdash-cache/`: 283k files for a large archive.
        if let Some(parent) = self.dir.parent()
            && parent.file_name() == Some(std::ffi::OsStr::new(CACHE_DIR_NAME))
            && let Ok(entries) = std::fs::read_dir(parent)
        {
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                let v1 = name.len() == 21
                    && name.ends_with(".json")
                    && name[..16].bytes().all(|b| b.is_ascii_hexdigit());
                if v1
                    && entry.file_type().is_ok_and(|t| !t.is_dir())
                    && std::fs::remove_file(entry.path()).is_ok()
                {
                    removed += 1;
                }
            }
        }
        removed
    }
}

/// A cache dropped unsaved (the build failed, `--strict` refused it,
/// `check` found the site's lock taken) leaves nothing of this build: its
/// staged files are removed, then the folders staging created, if empty.
impl Drop for RoundCache {
    fn drop(&mut self) {
        self.runs
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
        self.side_files
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
        let staging = self.staging.get_mut().unwrap_or_else(|p| p.into_inner());
        for dir in staging.created.drain(..) {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// The cache entries of one run, as a load uses them.
#[derive(Debug)]
pub struct RunCache<'a> {
    cache: &'a RoundCache,
    file_name: String,
    old: HashMap<(String, String), Entry>,
    loaded: usize,
    /// The file parsed without a bad entry.
    loaded_all: bool,
    /// The run record the file held (its payload, checked).
    old_record: Option<Vec<u8>>,
    used: Mutex<Vec<Entry>>,
}

impl RunCache<'_> {
    /// The result for the open `file` (`source`: its path relative to the
    /// archive root) under `settings`: from the cache when an entry for
    /// these bytes and settings exists, else `compute(file)`'s, which is
    /// kept when every read of the file agreed. `kind` keeps different
    /// results of one file apart (`round`, `steps`); only rounds are
    /// counted in [`ReadCounts`].
    pub fn get_or_compute<T, S>(
        &self,
        kind: &str,
        source: &str,
        mut file: InputFile,
        settings: &S,
        compute: impl FnOnce(&InputFile) -> Result<T, Error>,
    ) -> Result<T, Error>
    where
        T: Serialize + DeserializeOwned + PartialEq,
        S: Serialize,
    {
        let counted = kind == "round";
        let count = |n: &AtomicUsize| {
            if counted {
                n.fetch_add(1, Ordering::Relaxed);
            }
        };
        let Some(settings) = settings_digest(kind, settings) else {
            count(&self.cache.read);
            return compute(&file);
        };
        file.track_digests();
        let Ok(content) = file.digest().map(|d| format!("{d:032x}")) else {
            count(&self.cache.read);
            return compute(&file);
        };
        let version = version_tag();
        if let Some(e) = self.old.get(&(kind.to_string(), source.to_string()))
            && e.content == content
            && e.settings == settings
            && e.version == version
        {
            match serde_json::from_str::<T>(e.value.get()) {
                Ok(value) => {
                    count(&self.cache.cached);
                    lock(&self.used).push(e.clone());
                    return Ok(value);
                }
                Err(err) => self.cache.notice(format!(
                    "ignored the cache entry for {source} in {}: {err}; the file is read again",
                    self.cache.dir.join(&self.file_name).display()
                )),
            }
        }
        count(&self.cache.read);
        let result = compute(&file)?;
        if read_consistently(&file, &content)
            && let Some(value) = round_trip(&result)
        {
            lock(&self.used).push(Entry {
                version,
                kind: kind.to_string(),
                source: source.to_string(),
                content,
                settings,
                value,
            });
        }
        Ok(result)
    }

    /// Hands what this run's cache file should hold to the cache, for
    /// [`RoundCache::save`] (serialised and staged here, while runs are
    /// still read in parallel, so that no build holds every run's text):
    /// the entries this build used and, for a run read without a
    /// problem, its `record` (see `super::record`).
    pub fn finish(self, record: Option<Vec<u8>>) {
        let mut entries = std::mem::take(&mut *lock(&self.used));
        if entries.is_empty() && record.is_none() {
            return; // nothing to keep: an old file of this run is pruned
        }
        entries.sort_by(|a, b| (&a.kind, &a.source).cmp(&(&b.kind, &b.source)));
        let unchanged = self.loaded_all
            && record == self.old_record
            && entries.len() == self.loaded
            && entries
                .iter()
                .all(|e| self.old.get(&(e.kind.clone(), e.source.clone())) == Some(e));
        let staged = match unchanged {
            true => None,
            false => {
                let text = run_file_text(record.as_deref(), &entries);
                drop(entries);
                // Not written: the old file stays (its entries are keyed
                // by content, so never wrong); save says why.
                self.cache.stage(&text)
            }
        };
        lock(&self.cache.runs).insert(self.file_name, RunState { staged });
    }
}

/// Whether every pass over `file` that read it whole saw the bytes whose
/// digest is `content`, and nobody wrote to it since it was opened.
fn read_consistently(file: &InputFile, content: &str) -> bool {
    let mut digests = file.full_pass_digests();
    // The key's own pass is the first; a parse that stopped early (a
    // format read from its head) gets one more whole pass.
    if digests.len() < 2 {
        if file.digest().is_err() {
            return false;
        }
        digests = file.full_pass_digests();
    }
    digests.iter().all(|d| format!("{d:032x}") == content)
        && file.changed_since_open().is_ok_and(|changed| !changed)
}

/// `value` as JSON, if it reads back equal (a NaN, for one, would not).
fn round_trip<T: Serialize + DeserializeOwned + PartialEq>(
    value: &T,
) -> Option<Box<serde_json::value::RawValue>> {
    let json = serde_json::to_string(value).ok()?;
    let back: T = serde_json::from_str(&json).ok()?;
    if back != *value {
        return None;
    }
    serde_json::value::RawValue::from_string(json).ok()
}

/// A run file: its record block when there is one (see
/// [`split_record_block`]), then one line per entry, the xxh3-128 of its
/// JSON, then the JSON.
fn run_file_text(record: Option<&[u8]>, entries: &[Entry]) -> Vec<u8> {
    let mut text = Vec::new();
    if let Some(record) = record {
        let _ = writeln!(
            text,
            "{RECORD_TAG}{} {:032x}",
            record.len(),
            xxh3_128(record)
        );
        text.extend_from_slice(record);
        text.push(b'\n');
    }
    for e in entries {
        let json = serde_json::to_vec(e).expect("an entry is plain JSON");
        let _ = write!(text, "{:032x} ", xxh3_128(&json));
        text.extend_from_slice(&json);
        text.push(b'\n');
    }
    text
}

/// The first word of a run file that starts with a run record:
/// `record <length> <xxh3-128 hex>\n`, the record's bytes, `\n`.
const RECORD_TAG: &str = "record ";

/// The record block at the head of a run file's bytes, checked (`None`
/// when there is none or it is damaged), and the entry lines after it.
fn split_record_block(bytes: &[u8]) -> (Option<&[u8]>, &[u8]) {
    let Some(after_tag) = bytes.strip_prefix(RECORD_TAG.as_bytes()) else {
        return (None, bytes);
    };
    let Some(eol) = memchr::memchr(b'\n', after_tag) else {
        return (None, &[]);
    };
    let header = std::str::from_utf8(&after_tag[..eol]).unwrap_or("");
    let body = &after_tag[eol + 1..];
    let parsed = header.split_once(' ').and_then(|(len, sum)| {
        let len: usize = len.parse().ok()?;
        (body.len() > len && body[len] == b'\n').then_some((len, sum))
    });
    match parsed {
        Some((len, sum)) => {
            let record = &body[..len];
            let ok = format!("{:032x}", xxh3_128(record)) == sum;
            (ok.then_some(record), &body[len + 1..])
        }
        None => (None, &[]),
    }
}

/// Reads only the record block at the head of a run file (not the entry
/// lines after it); `None` when the file or its record is missing.
fn read_record_block(path: &Path) -> std::io::Result<Option<Vec<u8>>> {
    use std::io::Read as _;
    let file = match InputFile::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut reader = file.reader();
    let mut head = [0u8; 80];
    let mut got = 0;
    while got < head.len() {
        match reader.read(&mut head[got..])? {
            0 => break,
            n => got += n,
        }
    }
    let head = &head[..got];
    let Some(after_tag) = head.strip_prefix(RECORD_TAG.as_bytes()) else {
        return Ok(None);
    };
    let damaged = || std::io::Error::new(std::io::ErrorKind::InvalidData, "damaged header");
    let eol = memchr::memchr(b'\n', after_tag).ok_or_else(damaged)?;
    let header = std::str::from_utf8(&after_tag[..eol]).map_err(|_| damaged())?;
    let (len, sum) = header.split_once(' ').ok_or_else(damaged)?;
    let len: usize = len.parse().map_err(|_| damaged())?;
    if len > Limits::default().max_document_bytes as usize {
        return Err(damaged());
    }
    let mut record = after_tag[eol + 1..].to_vec();
    record.truncate(len);
    if record.len() < len {
        let start = record.len();
        record.resize(len, 0);
        reader.read_exact(&mut record[start..])?;
    }
    if format!("{:032x}", xxh3_128(&record)) != sum {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "checksum does not match",
        ));
    }
    Ok(Some(record))
}

fn settings_digest(kind: &str, settings: &impl Serialize) -> Option<String> {
    let mut bytes = kind.as_bytes().to_vec();
    bytes.push(0);
    serde_json::to_writer(&mut bytes, settings).ok()?;
    Some(format!("{:032x}", xxh3_128(&bytes)))
}

fn run_file_name(run_id: &str) -> String {
    format!("run-{:016x}.cache", xxh3_64(run_id.as_bytes()))
}

fn is_run_file_name(name: &str) -> bool {
    name.strip_prefix("run-")
        .and_then(|r| r.strip_suffix(".cache"))
        .is_some_and(|h| h.len() == 16 && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Why `dir` cannot hold the cache, if it cannot: it, or the
/// `.perfdash-cache` folder holding it, is a symbolic link or not a folder.
fn unusable_reason(dir: &Path) -> Option<&'static str> {
    for p in [dir.parent(), Some(dir)].into_iter().flatten() {
        match std::fs::symlink_metadata(p) {
            Ok(m) if m.file_type().is_symlink() => {
                return Some("is (or lies in) a symbolic link, which perfdash does not follow");
            }
            Ok(m) if !m.is_dir() => return Some("is (or lies in) something other than a folder"),
            _ => {}
        }
    }
    None
}

fn create_cache_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    // Created meanwhile as a link by someone else: do not write through it.
    if unusable_reason(dir).is_some() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "the folder is a symbolic link",
        ));
    }
    Ok(())
}

/// A cache file's bytes (a run's, the listings), opened like an archive
/// file (no link, no FIFO, capped); `None` when there is none.
pub(super) fn read_cache_file(path: &Path) -> std::io::Result<Option<Vec<u8>>> {
    let file = match InputFile::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    super::limits::read_document(&file, &Limits::default()).map(Some)
}

/// The entries of a run file, and how many lines were damaged.
fn parse_run_file(text: &str) -> (Vec<Entry>, usize) {
    let mut entries = Vec::new();
    let mut bad = 0;
    for line in text.lines().filter(|l| !l.is_empty()) {
        let parsed = line.split_once(' ').and_then(|(sum, json)| {
            (sum == format!("{:032x}", xxh3_128(json.as_bytes())))
                .then(|| serde_json::from_str::<Entry>(json).ok())
                .flatten()
        });
        match parsed {
            Some(e) => entries.push(e),
            None => bad += 1,
        }
    }
    (entries, bad)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> BTreeMap<&'static str, u32> {
        BTreeMap::from([("warmup", 15)])
    }

    fn open(path: &Path) -> InputFile {
        InputFile::open(path).unwrap()
    }

    /// Builds once through a fresh cache object, like one `perfdash build`.
    fn build_once(cache_dir: &Path, file: &Path, calls: &mut u32) -> String {
        let cache = RoundCache::new(cache_dir);
        let run = cache.for_run("2026-01-01T0000Z");
        let value = run
            .get_or_compute(
                "round",
                "runs/r/a/round-1.json",
                open(file),
                &settings(),
                |f| {
                    *calls += 1;
                    let mut s = String::new();
                    std::io::Read::read_to_string(&mut f.reader(), &mut s).unwrap();
                    Ok(s)
                },
            )
            .unwrap();
        run.finish(None);
        cache.save();
        value
    }

    #[test]
    fn a_hit_needs_the_same_bytes_whatever_the_file_times_say() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("round-1.json");
        let dir = tmp.path().join("cache");
        std::fs::write(&file, "101").unwrap();
        let mut calls = 0;
        assert_eq!(build_once(&dir, &file, &mut calls), "101");
        assert_eq!(build_once(&dir, &file, &mut calls), "101");
        assert_eq!(calls, 1, "the second build came from the cache");
        // Same size, modification time restored: still a miss.
        let mtime = std::fs::metadata(&file).unwrap().modified().unwrap();
        crate::test_support::write_with_mtime(&file, "909", mtime);
        assert_eq!(build_once(&dir, &file, &mut calls), "909");
        assert_eq!(calls, 2);
        let files: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert_eq!(files.len(), 1, "one file per run");
    }

    #[test]
    fn a_damaged_entry_is_ignored_with_a_notice() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("round-1.json");
        let dir = tmp.path().join("cache");
        std::fs::write(&file, "101").unwrap();
        let mut calls = 0;
        build_once(&dir, &file, &mut calls);
        let cache_file = std::fs::read_dir(&dir)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        let text = std::fs::read_to_string(&cache_file).unwrap();
        std::fs::write(&cache_file, text.replace("\"101\"", "\"555\"")).unwrap();
        let cache = RoundCache::new(&dir);
        let run = cache.for_run("2026-01-01T0000Z");
        let value = run
            .get_or_compute(
                "round",
                "runs/r/a/round-1.json",
                open(&file),
                &settings(),
                |_| Ok("recomputed".to_string()),
            )
            .unwrap();
        assert_eq!(value, "recomputed");
        let notices = cache.notices();
        assert_eq!(notices.len(), 1, "{notices:?}");
        assert!(notices[0].contains("damaged or edited"), "{notices:?}");
    }

    #[test]
    fn runs_no_longer_read_are_pruned_and_unchanged_files_not_rewritten() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("round-1.json");
        let dir = tmp.path().join("cache");
        std::fs::write(&file, "1").unwrap();
        let cache = RoundCache::new(&dir);
        for run_id in ["a", "b"] {
            let run = cache.for_run(run_id);
            run.get_or_compute("round", "x", open(&file), &settings(), |_| Ok(1u32))
                .unwrap();
            run.finish(None);
        }
        assert_eq!(
            cache.save(),
            Saved {
                written: 2,
                removed: 0
            }
        );
        std::fs::write(dir.join(".tmp-crashed"), "half").unwrap();
        let cache = RoundCache::new(&dir);
        let run = cache.for_run("a");
        run.get_or_compute("round", "x", open(&file), &settings(), |_| Ok(1u32))
            .unwrap();
        run.finish(None);
        assert_eq!(cache.counts().cached, 1);
        assert_eq!(
            cache.save(),
            Saved {
                written: 0,
                removed: 2
            }
        );
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from(run_file_name("a"))]);
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn new_run_files_are_staged_while_reading_and_put_in_place_only_by_save() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("round-1.json");
        std::fs::write(&file, "1").unwrap();
        let dir = tmp.path().join("new").join("cache");
        let read = |cache: &RoundCache, value: u32| {
            let run = cache.for_run("a");
            let got = run
                .get_or_compute("round", "x", open(&file), &settings(), |_| Ok(value))
                .unwrap();
            run.finish(None);
            got
        };
        // Never saved (a failed build): the staged file, and the folders
        // made for it, are gone.
        let cache = RoundCache::new(&dir);
        read(&cache, 1);
        let staged = names(&dir);
        assert_eq!(staged.len(), 1, "{staged:?}");
        assert!(staged[0].starts_with(TEMP_PREFIX), "{staged:?}");
        drop(cache);
        assert!(!tmp.path().join("new").exists());
        // Saved: the staged file becomes the run file.
        let cache = RoundCache::new(&dir);
        read(&cache, 1);
        assert_eq!(cache.save().written, 1);
        drop(cache);
        assert_eq!(names(&dir), [run_file_name("a")]);
        let saved = std::fs::read(dir.join(run_file_name("a"))).unwrap();
        // A changed file read by a build that fails: the run file is as
        // it was, and a load meanwhile never sees the staged content.
        std::fs::write(&file, "2").unwrap();
        let failing = RoundCache::new(&dir);
        assert_eq!(read(&failing, 2), 2);
        assert_eq!(names(&dir).len(), 2, "the run file and a staged one");
        let meanwhile = RoundCache::new(&dir);
        let mut computed = false;
        meanwhile
            .for_run("a")
            .get_or_compute("round", "x", open(&file), &settings(), |_| {
                computed = true;
                Ok(2u32)
            })
            .unwrap();
        assert!(computed, "the staged entry is not in the cache yet");
        drop(failing);
        assert_eq!(names(&dir), [run_file_name("a")]);
        assert_eq!(std::fs::read(dir.join(run_file_name("a"))).unwrap(), saved);
    }

    #[test]
    fn the_one_file_per_round_cache_of_format_1_is_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("site");
        let old = tmp
            .path()
            .join(CACHE_DIR_NAME)
            .join("0123456789abcdef.json");
        std::fs::create_dir_all(old.parent().unwrap()).unwrap();
        std::fs::write(&old, "{}").unwrap();
        let keep = tmp.path().join(CACHE_DIR_NAME).join("notes.json");
        std::fs::write(&keep, "{}").unwrap();
        let cache = RoundCache::beside_output(&out);
        assert_eq!(cache.dir(), tmp.path().join(CACHE_DIR_NAME).join("site"));
        assert_eq!(cache.save().removed, 1);
        assert!(!old.exists() && keep.exists());
    }

    #[test]
    fn values_that_would_not_read_back_equal_are_not_stored() {
        assert!(round_trip(&f64::NAN).is_none());
        assert!(round_trip(&Some(0.1f64 + 0.2)).is_some());
    }

    #[test]
    fn a_linked_cache_folder_is_not_used() {
        let tmp = tempfile::tempdir().unwrap();
        let elsewhere = tmp.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        std::fs::create_dir(tmp.path().join(CACHE_DIR_NAME)).unwrap();
        let dir = tmp.path().join(CACHE_DIR_NAME).join("site");
        std::os::unix::fs::symlink(&elsewhere, &dir).unwrap();
        let cache = RoundCache::new(&dir);
        assert!(cache.notices()[0].contains("symbolic link"));
        let file = tmp.path().join("f");
        std::fs::write(&file, "1").unwrap();
        let run = cache.for_run("a");
        run.get_or_compute("round", "x", open(&file), &settings(), |_| Ok(1u32))
            .unwrap();
        run.finish(None);
        cache.save();
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    }
}
