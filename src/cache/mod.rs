//! What perfdash keeps between builds, in one store beside the output:
//! `.perfdash-cache/<name of --out>/`, never in the archive, never in the
//! site. It holds two kinds of file, each written through one framing
//! (`frame`: a header naming the perfdash and the format, the body in
//! postcard, an xxh3-128 checksum):
//!
//! * **one record per source run** (`run-<hash of the run id>.cache`),
//!   keyed by the run's source identity ([`identity`]): the run folder's
//!   listing, the run's rounds under the identity of every file they came
//!   from (a build that finds them all as they were opens none of them),
//!   and each file's result under the hash of its bytes (a run whose
//!   identity moved, a copied archive, is read by content, and only files
//!   whose bytes changed are parsed again);
//! * **one index** (`index`): the `changepoint` policy's judgements, the
//!   page memo and what the last build published.
//!
//! Keys are made one way ([`key`]). Nothing the cache holds can make a
//! site differ from a `--no-cache` build's: a record is used only for
//! exactly the files it was made from, a damaged file is ignored with a
//! notice (and what it held is computed again), a file of another perfdash
//! or format is not read. New records are written as soon as a run is
//! read, under temporary names (`.tmp-…`) no build reads, and put in place
//! by [`Store::save`] only after the site is: a build that fails leaves the
//! store as it was, a `kill -9` leaves temporary files the next save
//! removes, and a full disk costs the cache, never the site. The folder,
//! and every file in it, is opened like an archive file: a symbolic link
//! is not followed and a FIFO never blocks. Deleting the folder is always
//! safe.

mod frame;
pub mod identity;
pub mod key;
pub mod stored;

use std::collections::{BTreeMap, HashMap};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use serde::Serialize;
use serde::de::DeserializeOwned;
use xxhash_rust::xxh3::xxh3_64;

pub use identity::{RunIdentity, SETTLED, SourceIdentity};
use stored::{FileEntry, Index, Judgements, Listing, Pages, RecordedRounds, RunHead, SiteState};

/// The cache folder's name, beside the output folder.
pub const CACHE_DIR_NAME: &str = ".perfdash-cache";

/// The index's file name in the store.
pub const INDEX_FILE: &str = "index";

/// Prefix of a file being written (removed by the next save when a crash
/// left it).
const TEMP_PREFIX: &str = ".tmp-";

/// Files earlier perfdash versions kept in the store; removed by a save.
const FORMER_FILES: &[&str] = &["listings", "changepoints", "pages.memo", "site.state"];

/// The largest file the store reads (a record of a run of thousands of
/// endpoints is a few MB).
const MAX_FILE: u64 = 256 << 20;

/// The store of one output folder, and what a build did with it.
#[derive(Debug)]
pub struct Store {
    dir: PathBuf,
    /// `false` when the folder is unusable (a symbolic link, a file): the
    /// build reads everything and keeps nothing.
    usable: bool,
    read: AtomicUsize,
    cached: AtomicUsize,
    runs_by_stat: AtomicUsize,
    folders_as_listed: AtomicUsize,
    /// Each run record this build keeps: its new content, staged, or
    /// `None` when the file already holds exactly that.
    runs: Mutex<BTreeMap<String, Option<Staged>>>,
    staging: Mutex<Staging>,
    notices: Mutex<Vec<String>>,
    /// The previous build's index, read when first asked for.
    index: OnceLock<Index>,
    /// This build's change-point judgements, for the next index.
    judgements: Mutex<Option<Judgements>>,
}

/// What staging did so far.
#[derive(Debug, Default)]
struct Staging {
    /// Whether the folder is there to stage into (`None`: not tried yet).
    ready: Option<bool>,
    /// The folders staging created, deepest first: removed again (when
    /// empty) if the store is never saved.
    created: Vec<PathBuf>,
    /// The first write that failed.
    failure: Option<String>,
}

/// A file's new content, written under a temporary name until
/// [`Store::save`] renames it into place.
#[derive(Debug)]
struct Staged {
    /// Deletes the file when dropped (declared first: dropped first).
    path: tempfile::TempPath,
    /// Removes the file on an interrupting signal meanwhile.
    _on_signal: crate::cleanup::Registered,
}

/// How many round files a load read, and how many came from the store.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ReadCounts {
    /// Round files whose content was read and parsed.
    pub read: usize,
    /// Round files whose result came from the store.
    pub cached: usize,
    /// Runs whose rounds came from their record, none of their files
    /// opened (their round files are counted in `cached`).
    pub runs_by_stat: usize,
    /// Run and endpoint folders found as they were last listed, and
    /// listed from their run's record.
    pub folders_as_listed: usize,
}

/// What [`Store::save`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Saved {
    /// Run records written (new or changed).
    pub written: usize,
    /// Run records (and leftovers) removed.
    pub removed: usize,
}

/// What a build adds to the index when it saves, once its site is
/// published.
#[derive(Debug, Default)]
pub struct Published {
    pub pages: Option<Pages>,
    pub site: Option<SiteState>,
}

impl Store {
    /// A store in `dir` (created when first saved). A `dir` that is a
    /// symbolic link, or not a folder, is not used (see [`Store::notices`]).
    pub fn new(dir: impl Into<PathBuf>) -> Store {
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
        Store {
            dir,
            usable,
            read: AtomicUsize::new(0),
            cached: AtomicUsize::new(0),
            runs_by_stat: AtomicUsize::new(0),
            folders_as_listed: AtomicUsize::new(0),
            runs: Mutex::new(BTreeMap::new()),
            staging: Mutex::new(Staging::default()),
            notices: Mutex::new(notices),
            index: OnceLock::new(),
            judgements: Mutex::new(None),
        }
    }

    /// The store that belongs to a site output folder:
    /// `<parent of out>/.perfdash-cache/<name of out>/` (outside both the
    /// archive and the site, which is replaced wholesale on every build;
    /// one folder per output, so that the builder holding that output's
    /// lock is its only writer).
    pub fn beside_output(out: &Path) -> Store {
        let parent = out
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let name = out
            .file_name()
            .map(|n| n.to_os_string())
            .unwrap_or_else(|| "site".into());
        Store::new(parent.join(CACHE_DIR_NAME).join(name))
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn counts(&self) -> ReadCounts {
        ReadCounts {
            read: self.read.load(Ordering::Relaxed),
            cached: self.cached.load(Ordering::Relaxed),
            runs_by_stat: self.runs_by_stat.load(Ordering::Relaxed),
            folders_as_listed: self.folders_as_listed.load(Ordering::Relaxed),
        }
    }

    /// Counts a round file read without the store.
    pub fn count_uncached(&self) {
        self.read.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a folder listed from its run's record.
    pub fn count_folder_as_listed(&self) {
        self.folders_as_listed.fetch_add(1, Ordering::Relaxed);
    }

    /// Things about the store the user should know (a damaged file was
    /// ignored, the folder is a link, a save failed). They never change
    /// what the site shows, so they are not warnings.
    pub fn notices(&self) -> Vec<String> {
        lock(&self.notices).clone()
    }

    fn notice(&self, text: String) {
        lock(&self.notices).push(text);
    }

    /// The record of run `run_id` (an empty one when the store is
    /// unusable or holds none, or none that can be trusted: a notice).
    pub fn run(&self, run_id: &str) -> RunCache<'_> {
        let file_name = run_file_name(run_id);
        let mut run = RunCache {
            store: self,
            file_name,
            head: RunHead::default(),
            bytes: Vec::new(),
            entries_at: 0,
            entries: OnceLock::new(),
            used: Mutex::new(Vec::new()),
            read_by_content: AtomicBool::new(false),
        };
        if !self.usable {
            return run;
        }
        let path = self.dir.join(&run.file_name);
        let damaged = |why: String| {
            self.notice(format!(
                "ignored the run record in {}: {why}; the run's files are read again",
                path.display()
            ))
        };
        let bytes = match read_file(&path) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return run,
            Err(e) => {
                damaged(e.to_string());
                return run;
            }
        };
        match frame::body(RUN_KIND, &bytes) {
            Ok(frame::Read::Body(body)) => match postcard::take_from_bytes::<RunHead>(body) {
                Ok((head, rest)) => {
                    run.entries_at = bytes.len() - 16 - rest.len();
                    run.head = head;
                    run.bytes = bytes;
                }
                Err(e) => damaged(format!("does not read back ({e})")),
            },
            Ok(frame::Read::Foreign) => {}
            Err(why) => damaged(why),
        }
        run
    }

    /// The previous build's index (empty when there is none, or it cannot
    /// be trusted: a notice).
    pub fn index(&self) -> &Index {
        self.index.get_or_init(|| {
            if !self.usable {
                return Index::default();
            }
            let path = self.dir.join(INDEX_FILE);
            let read = read_file(&path)
                .map_err(|e| e.to_string())
                .and_then(|bytes| match bytes {
                    Some(bytes) => frame::decode::<Index>(INDEX_KIND, &bytes),
                    None => Ok(None),
                });
            match read {
                Ok(index) => index.unwrap_or_default(),
                Err(why) => {
                    self.notice(format!(
                        "ignored the cache index {}: {why}; the change-point judgements, the page \
                         memo and the record of the last site are made again",
                        path.display()
                    ));
                    Index::default()
                }
            }
        })
    }

    /// This build's change-point judgements, to be kept in the index.
    pub fn keep_judgements(&self, judgements: Judgements) {
        *lock(&self.judgements) = Some(judgements);
    }

    /// Puts the store of a build in place, after the site: renames each
    /// run's staged record to its file (records whose content would not
    /// change were never staged); with `published` (a build that published
    /// a site), writes the index; then removes the records of runs no
    /// longer read and leftovers of interrupted saves. Failures (a full
    /// disk) cost only the cache, with a notice.
    pub fn save(&self, published: Option<Published>) -> Saved {
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
        let mut keep = std::collections::BTreeSet::new();
        for (file_name, staged) in runs {
            if let Some(staged) = staged {
                match staged.path.persist(self.dir.join(&file_name)) {
                    Ok(()) => done.written += 1,
                    Err(e) => {
                        failure.get_or_insert(e.error.to_string());
                    }
                }
            }
            keep.insert(file_name);
        }
        if let Some(published) = published {
            let judgements = lock(&self.judgements).take();
            let index = Index {
                judgements,
                pages: published.pages,
                site: published.site,
            };
            let path = self.dir.join(INDEX_FILE);
            let written = frame::encode(INDEX_KIND, &index)
                .map_err(|e| e.to_string())
                .and_then(|bytes| self.stage(&bytes).ok_or_else(|| "not staged".to_string()))
                .and_then(|staged| staged.path.persist(&path).map_err(|e| e.error.to_string()));
            if let Err(e) = written {
                // An old index would describe an older site: never kept.
                let _ = std::fs::remove_file(&path);
                failure.get_or_insert(e);
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

    /// Removes the index (a build that cannot record its site: the last
    /// one recorded would describe an older site).
    pub fn forget_index(&self) {
        if self.usable {
            let _ = std::fs::remove_file(self.dir.join(INDEX_FILE));
        }
    }

    /// Writes `bytes` under a temporary name in the store's folder
    /// (created the first time, with the folders above it that are
    /// missing). `None` when it could not be written; [`Store::save`] says
    /// so.
    fn stage(&self, bytes: &[u8]) -> Option<Staged> {
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
            tmp.write_all(bytes)?;
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

    /// Removes run records not in `keep`, temporary files of interrupted
    /// saves, the files earlier perfdash versions kept here, and the
    /// per-round files of perfdash's first cache format.
    fn prune(&self, keep: &std::collections::BTreeSet<String>) -> usize {
        let mut removed = 0;
        if let Ok(entries) = std::fs::read_dir(&self.dir) {
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                let ours = (is_run_file_name(&name) && !keep.contains(&name))
                    || name.starts_with(TEMP_PREFIX)
                    || FORMER_FILES.contains(&name.as_str());
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

/// A store dropped unsaved (the build failed, `--strict` refused it,
/// `check` found the site's lock taken) leaves nothing of this build: its
/// staged files are removed, then the folders staging created, if empty.
impl Drop for Store {
    fn drop(&mut self) {
        self.runs
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
        let staging = self.staging.get_mut().unwrap_or_else(|p| p.into_inner());
        for dir in staging.created.drain(..) {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

const RUN_KIND: &str = "run";
const INDEX_KIND: &str = "index";

/// One run's record, as a load uses it and makes its next one.
#[derive(Debug)]
pub struct RunCache<'a> {
    store: &'a Store,
    file_name: String,
    /// The record's head as the previous build left it.
    head: RunHead,
    /// The record file's bytes (its file entries start at `entries_at`).
    bytes: Vec<u8>,
    entries_at: usize,
    /// The previous build's file entries, by kind and source, read when
    /// first asked for.
    entries: OnceLock<HashMap<(String, String), FileEntry>>,
    /// The entries this build used.
    used: Mutex<Vec<FileEntry>>,
    /// Whether any file was looked up by content.
    read_by_content: AtomicBool,
}

/// What a run's next record holds besides its listing.
#[derive(Debug)]
pub enum RoundsRecord {
    /// The record's rounds were used, and still hold.
    Kept,
    /// The run was read by content: its rounds, when it read cleanly.
    Made(Option<RecordedRounds>),
}

impl RunCache<'_> {
    /// The run folder's listing as the previous build kept it (taken: a
    /// lister uses it once).
    pub fn take_listing(&mut self) -> Option<Listing> {
        self.head.listing.take()
    }

    /// The run's rounds when the record holds them for `identity`: none
    /// of the run's files need be opened. `rounds`: how many round files
    /// they stand for (counted as cached). Taken, not copied: the record
    /// is kept as it is ([`RoundsRecord::Kept`]).
    pub fn take_recorded_rounds(
        &mut self,
        identity: u128,
        rounds: usize,
    ) -> Option<RecordedRounds> {
        if self.head.rounds.as_ref()?.identity != identity {
            return None;
        }
        self.store.cached.fetch_add(rounds, Ordering::Relaxed);
        self.store.runs_by_stat.fetch_add(1, Ordering::Relaxed);
        self.head.rounds.take()
    }

    /// The record's head as the file holds it (what the load took out of
    /// `head`, read again: only for a record that is rewritten).
    fn old_head(&self) -> RunHead {
        match frame::body(RUN_KIND, &self.bytes) {
            Ok(frame::Read::Body(body)) => postcard::take_from_bytes::<RunHead>(body)
                .map(|(head, _)| head)
                .unwrap_or_default(),
            _ => RunHead::default(),
        }
    }

    fn old_entries(&self) -> &HashMap<(String, String), FileEntry> {
        self.entries.get_or_init(|| {
            let Some(raw) = self
                .bytes
                .get(self.entries_at..self.bytes.len().saturating_sub(16))
            else {
                return HashMap::new();
            };
            if raw.is_empty() {
                return HashMap::new();
            }
            match postcard::from_bytes::<Vec<FileEntry>>(raw) {
                Ok(entries) => entries
                    .into_iter()
                    .map(|e| ((e.kind.clone(), e.source.clone()), e))
                    .collect(),
                Err(e) => {
                    self.store.notice(format!(
                        "ignored the file entries in {}: they do not read back ({e}); the files \
                         they summarise are read again",
                        self.store.dir.join(&self.file_name).display()
                    ));
                    HashMap::new()
                }
            }
        })
    }

    /// The result for the open `file` (`source`: its path relative to the
    /// archive root) under `settings`: from the record when it holds one
    /// for these bytes and settings, else `compute(file)`'s, which is kept
    /// when every read of the file agreed and it reads back equal. `kind`
    /// keeps different results of one file apart (`round`, `steps`); only
    /// rounds are counted in [`ReadCounts`].
    pub fn get_or_compute<T, S, F>(
        &self,
        kind: &str,
        source: &str,
        mut file: F,
        settings: &S,
        compute: impl FnOnce(&F) -> Result<T, crate::error::Error>,
    ) -> Result<T, crate::error::Error>
    where
        T: Serialize + DeserializeOwned + PartialEq,
        S: Serialize,
        F: ContentSource,
    {
        self.read_by_content.store(true, Ordering::Relaxed);
        let counted = kind == "round";
        let count = |n: &AtomicUsize| {
            if counted {
                n.fetch_add(1, Ordering::Relaxed);
            }
        };
        let settings = key::serde_digest(&(kind, settings));
        let Some(content) = file.content_digest() else {
            count(&self.store.read);
            return compute(&file);
        };
        let old = self.old_entries();
        if let Some(e) = old.get(&(kind.to_string(), source.to_string()))
            && e.content == content
            && e.settings == settings
            && let Ok(value) = postcard::from_bytes::<T>(&e.value)
        {
            count(&self.store.cached);
            lock(&self.used).push(e.clone());
            return Ok(value);
        }
        count(&self.store.read);
        let result = compute(&file)?;
        if file.read_consistently(content)
            && let Some(value) = round_trip(&result)
        {
            lock(&self.used).push(FileEntry {
                kind: kind.to_string(),
                source: source.to_string(),
                content,
                settings,
                value,
            });
        }
        Ok(result)
    }

    /// Hands the run's next record to the store (written and staged here,
    /// while runs are still read in parallel, so that no build holds every
    /// run's record at once): its `listing` (`None`: as the record holds
    /// it), its rounds, and the file entries this build used (or those it
    /// had, when no file was read by content). Nothing is written when
    /// that is what the file holds.
    pub fn finish(self, listing: Option<Listing>, rounds: RoundsRecord) {
        let by_content = self.read_by_content.load(Ordering::Relaxed);
        let mut used = std::mem::take(&mut *lock(&self.used));
        let (made, kept_rounds) = match rounds {
            RoundsRecord::Kept => (None, true),
            RoundsRecord::Made(r) => {
                let same = r.is_none() && self.head.rounds.is_none()
                    || r.is_some() && r == self.head.rounds;
                (Some(r), same)
            }
        };
        let nothing = listing.is_none()
            && matches!(made, Some(None))
            && used.is_empty()
            && by_content
            && self.bytes.is_empty();
        if nothing {
            return; // nothing to keep: an old file of this run is pruned
        }
        used.sort_by(|a, b| (&a.kind, &a.source).cmp(&(&b.kind, &b.source)));
        let old_raw = self
            .bytes
            .get(self.entries_at..self.bytes.len().saturating_sub(16))
            .unwrap_or(&[]);
        let entries_same = !by_content
            || (self.entries.get().is_some_and(|old| {
                old.len() == used.len()
                    && used
                        .iter()
                        .all(|e| old.get(&(e.kind.clone(), e.source.clone())) == Some(e))
            }));
        let unchanged = !self.bytes.is_empty() && kept_rounds && entries_same && listing.is_none();
        let staged = if unchanged {
            None
        } else {
            let old = (listing.is_none() || made.is_none()).then(|| self.old_head());
            let head = RunHead {
                listing: listing.or_else(|| old.as_ref().and_then(|o| o.listing.clone())),
                rounds: match made {
                    Some(r) => r,
                    None => old.and_then(|o| o.rounds),
                },
            };
            let body = postcard::to_allocvec(&head).and_then(|mut body| {
                match by_content {
                    true => body = postcard::to_extend(&used, body)?,
                    false if old_raw.is_empty() => {
                        body = postcard::to_extend(&Vec::<FileEntry>::new(), body)?
                    }
                    false => body.extend_from_slice(old_raw),
                }
                Ok(body)
            });
            // Not written: the old file stays (what it holds is keyed by
            // identity and content, so never wrong); save says why.
            body.ok()
                .map(|body| frame::seal(RUN_KIND, body))
                .and_then(|bytes: Vec<u8>| self.store.stage(&bytes))
        };
        lock(&self.store.runs).insert(self.file_name, staged);
    }
}

/// A file the store can key by its content (`ingest::input::InputFile`).
pub trait ContentSource {
    /// The xxh3-128 of the file's bytes (`None`: it could not be read).
    fn content_digest(&mut self) -> Option<u128>;
    /// Whether every pass over the file that read it whole saw the bytes
    /// whose digest is `content`, and nobody wrote to it since it was
    /// opened.
    fn read_consistently(&self, content: u128) -> bool;
}

/// `value` in postcard, if it reads back equal (a NaN, for one, would
/// not).
fn round_trip<T: Serialize + DeserializeOwned + PartialEq>(value: &T) -> Option<Vec<u8>> {
    let bytes = postcard::to_allocvec(value).ok()?;
    let back: T = postcard::from_bytes(&bytes).ok()?;
    (back == *value).then_some(bytes)
}

fn run_file_name(run_id: &str) -> String {
    format!("run-{:016x}.cache", xxh3_64(run_id.as_bytes()))
}

fn is_run_file_name(name: &str) -> bool {
    name.strip_prefix("run-")
        .and_then(|r| r.strip_suffix(".cache"))
        .is_some_and(|h| h.len() == 16 && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Why `dir` cannot hold the store, if it cannot: it, or the
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

/// A file of the store, opened like an archive file: not through a
/// symbolic link, never blocking on a FIFO, capped; `None` when there is
/// none.
fn read_file(path: &Path) -> std::io::Result<Option<Vec<u8>>> {
    use rustix::fs::{Mode, OFlags};
    use std::io::Read as _;
    let fd = match rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::NOENT) => return Ok(None),
        Err(rustix::io::Errno::LOOP) => {
            return Err(std::io::Error::other(
                "is a symbolic link; links are not followed",
            ));
        }
        Err(e) => return Err(e.into()),
    };
    let file = std::fs::File::from(fd);
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other(
            "is not a regular file (a FIFO, socket, device or folder)",
        ));
    }
    let mut bytes = Vec::with_capacity(meta.len().min(MAX_FILE) as usize);
    (&file).take(MAX_FILE + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_FILE {
        return Err(std::io::Error::other(
            "larger than any file the cache writes",
        ));
    }
    Ok(Some(bytes))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
