//! The local copy of an archive on object storage, brought up to date by
//! listing the bucket and fetching only what changed.
//!
//! The copy lives in its own folder (`<root>/archive`, see [`default_root`])
//! beside a record of the identity each file was fetched with
//! (`<root>/objects.json`). It is only ever written here, under a lock
//! held for the whole command, so a second perfdash on the same copy waits.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use futures_util::{StreamExt, TryStreamExt};
use object_store::path::Path as Key;
use object_store::{ObjectMeta, ObjectStore, ObjectStoreExt};

use super::{
    CLAIM_OBJECT, COMPLETE_OBJECT, Remote, RemoteUrl, RequestCounts, Requests, dyn_store,
    safe_segment,
};
use crate::error::Error;

/// The folder holding runs, as in a local archive.
const RUNS: &str = "runs";
/// Listings and fetches in flight at once.
const PARALLEL: usize = 16;

/// What identifies an object's content as the listing gives it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ObjectIdentity {
    pub size: u64,
    pub last_modified: DateTime<Utc>,
    pub etag: Option<String>,
}

impl ObjectIdentity {
    fn of(meta: &ObjectMeta) -> ObjectIdentity {
        ObjectIdentity {
            size: meta.size,
            last_modified: meta.last_modified,
            etag: meta.e_tag.clone(),
        }
    }

    /// The same content: ETag and size when both sides have an ETag, size
    /// and last-modified time when not (some stores list without ETags).
    fn same(&self, other: &ObjectIdentity) -> bool {
        match (&self.etag, &other.etag) {
            (Some(a), Some(b)) => a == b && self.size == other.size,
            _ => self.size == other.size && self.last_modified == other.last_modified,
        }
    }
}

/// How long a run may stay claimed and not completed before a build says
/// so: a `record` uploads a run in seconds to minutes (120 × 5 rounds of
/// k6 summaries are 601 objects).
const STALE_CLAIM: chrono::TimeDelta = chrono::TimeDelta::hours(1);

/// What a sync did.
#[derive(Debug, Clone, Default)]
pub struct SyncReport {
    /// Objects in the copy now.
    pub objects: usize,
    /// Objects fetched because they were new or changed.
    pub fetched: usize,
    /// Files removed from the copy (their objects are gone).
    pub removed: usize,
    /// Run ids left out: claimed by a `record` that has not completed.
    pub in_progress: Vec<String>,
    /// Objects left out, each naming its key and why.
    pub warnings: Vec<String>,
    /// The requests made.
    pub requests: Requests,
}

/// An up-to-date local copy, locked until dropped.
#[derive(Debug)]
pub struct Synced {
    /// The archive folder to read.
    pub dir: PathBuf,
    pub report: SyncReport,
    _lock: std::fs::File,
}

/// Where the copy of `url` is kept when nothing else is said:
/// `$XDG_CACHE_HOME/perfdash/objects/<bucket>-<hash>` (or under
/// `~/.cache`), the hash of the scheme, endpoint, bucket and prefix.
pub fn default_root(url: &RemoteUrl) -> Result<PathBuf, Error> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .ok_or_else(|| {
            Error::Usage(format!(
                "{url}: neither XDG_CACHE_HOME nor HOME is set: no place for the archive's local copy"
            ))
        })?;
    // The scheme keeps s3://x and gs://x apart; the endpoint two stores
    // of one scheme (a MinIO and AWS).
    let endpoint = url.scheme.endpoint().unwrap_or_default();
    let hash = xxhash_rust::xxh3::xxh3_64(
        format!("{endpoint}\n{}\n{}", url.bucket, url.prefix).as_bytes(),
    );
    let hash = match url.scheme {
        // The name copies of s3:// archives had before gs:// and az://.
        super::Scheme::S3 => hash,
        other => xxhash_rust::xxh3::xxh3_64_with_seed(other.name().as_bytes(), hash),
    };
    Ok(base
        .join("perfdash")
        .join("objects")
        .join(format!("{}-{hash:016x}", url.bucket)))
}

/// Brings the copy under `root` up to date with the bucket: lists (one
/// listing per run prefix, in parallel), fetches what is new or changed,
/// removes what is gone. Objects larger than the archive's
/// `[limits] max_decompressed_bytes` are not fetched (a warning names
/// them), as a local file that size could not be read either.
pub fn sync(remote: &Remote, root: &Path) -> Result<Synced, Error> {
    let dir = root.join("archive");
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    let lock = lock(&root.join("lock"))?;
    let mut report = SyncReport::default();
    let listed = remote
        .runtime
        .block_on(list_archive(
            dyn_store(remote),
            remote.url.clone(),
            remote.counts.clone(),
        ))
        .map_err(|(relative, e)| {
            remote.error(&relative, super::listing_failed(remote.url.scheme, &e))
        })?;
    if listed.is_empty() {
        // Said here, naming the URL: otherwise the empty copy's own folder
        // would be the archive "with no runs/ folder".
        return Err(remote.error(
            "",
            "no objects under this prefix: check the bucket and prefix (an archive keeps its \
             runs under <prefix>/runs/, docs/archive.md)",
        ));
    }
    let now = crate::ingest::build_time().unwrap_or_else(|_| Utc::now());
    let wanted = select(&remote.url, listed, now, &mut report);
    let manifest_path = root.join("objects.json");
    let mut manifest: BTreeMap<String, ObjectIdentity> = std::fs::read(&manifest_path)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default();
    manifest.retain(|relative, _| dir.join(relative).is_file());
    let stale =
        |manifest: &BTreeMap<String, ObjectIdentity>, relative: &str, identity: &ObjectIdentity| {
            !manifest
                .get(relative)
                .is_some_and(|known| known.same(identity))
        };
    // The settings first: they hold the size cap.
    let settings_file = crate::config::SETTINGS_FILE;
    if let Some(identity) = wanted
        .get(settings_file)
        .filter(|i| stale(&manifest, settings_file, i))
    {
        fetch_all(
            remote,
            &dir,
            vec![(settings_file.to_string(), identity.clone())],
            u64::MAX,
        )?;
        manifest.insert(settings_file.to_string(), identity.clone());
        report.fetched += 1;
    }
    let cap = crate::ingest::settings::load(&dir)
        .map(|s| s.limits.max_decompressed_bytes)
        .unwrap_or(crate::config::Limits::default().max_decompressed_bytes);
    let mut due = Vec::new();
    for (relative, identity) in &wanted {
        if !stale(&manifest, relative, identity) {
            continue;
        }
        if identity.size > cap {
            report.warnings.push(format!(
                "{}: not read: {} bytes is more than [limits] max_decompressed_bytes ({cap})",
                remote.url.show(relative),
                identity.size
            ));
            continue;
        }
        due.push((relative.clone(), identity.clone()));
    }
    report.fetched += due.len();
    fetch_all(remote, &dir, due.clone(), cap)?;
    for (relative, identity) in due {
        manifest.insert(relative, identity);
    }
    manifest.retain(|relative, _| wanted.contains_key(relative));
    report.removed = remove_others(&dir, &dir, &manifest).map_err(|e| Error::io(&dir, e))?;
    report.objects = manifest.len();
    let text = serde_json::to_vec(&manifest).map_err(|e| Error::Internal(e.to_string()))?;
    write_atomic(&manifest_path, &text).map_err(|e| Error::io(&manifest_path, e))?;
    report.requests = remote.counts.snapshot();
    Ok(Synced {
        dir,
        report,
        _lock: lock,
    })
}

/// Takes the copy's lock, waiting for another perfdash that holds it.
fn lock(path: &Path) -> Result<std::fs::File, Error> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(|e| Error::io(path, e))?;
    rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)
        .map_err(|e| Error::io(path, e.into()))?;
    Ok(file)
}

/// Every object under the prefix with its key relative to the prefix:
/// the top level and the `runs/` level with a delimiter, then each run
/// prefix (and any other folder) listed whole, in parallel. An error
/// names the prefix whose listing failed.
async fn list_archive(
    store: std::sync::Arc<dyn ObjectStore>,
    url: RemoteUrl,
    counts: std::sync::Arc<RequestCounts>,
) -> Result<Vec<(String, ObjectMeta)>, (String, object_store::Error)> {
    let at = |relative: &str| {
        let key = url.key(relative);
        (!key.is_empty()).then(|| Key::from(key))
    };
    RequestCounts::add(&counts.lists, 1);
    let top = store
        .list_with_delimiter(at("").as_ref())
        .await
        .map_err(|e| (String::new(), e))?;
    let mut objects = top.objects;
    let mut prefixes = Vec::new();
    let runs_key = at(RUNS);
    for prefix in top.common_prefixes {
        if Some(&prefix) == runs_key.as_ref() {
            RequestCounts::add(&counts.lists, 1);
            let runs = store
                .list_with_delimiter(Some(&prefix))
                .await
                .map_err(|e| (RUNS.to_string(), e))?;
            objects.extend(runs.objects);
            prefixes.extend(runs.common_prefixes);
        } else {
            prefixes.push(prefix);
        }
    }
    let strip = if url.prefix.is_empty() {
        String::new()
    } else {
        format!("{}/", url.prefix)
    };
    let nested: Vec<Vec<ObjectMeta>> = futures_util::stream::iter(prefixes)
        .map(|prefix| {
            let store = store.clone();
            let counts = counts.clone();
            // Errors name the prefix relative to the archive (the message
            // puts the archive's own URL in front of it).
            let relative = prefix
                .as_ref()
                .strip_prefix(&strip)
                .unwrap_or(prefix.as_ref())
                .to_string();
            async move {
                RequestCounts::add(&counts.lists, 1);
                store
                    .list(Some(&prefix))
                    .try_collect::<Vec<_>>()
                    .await
                    .map_err(|e| (relative, e))
            }
        })
        .buffer_unordered(PARALLEL)
        .try_collect()
        .await?;
    Ok(objects
        .into_iter()
        .chain(nested.into_iter().flatten())
        .filter_map(|meta| {
            let relative = meta.location.as_ref().strip_prefix(&strip)?.to_string();
            Some((relative, meta))
        })
        .collect())
}

/// The objects the copy holds: safe keys, no hidden names (as a local
/// listing skips them), no markers, and no run whose `record` claimed it
/// and has not completed it.
fn select(
    url: &RemoteUrl,
    listed: Vec<(String, ObjectMeta)>,
    now: DateTime<Utc>,
    report: &mut SyncReport,
) -> BTreeMap<String, ObjectIdentity> {
    let mut claimed = BTreeMap::new();
    let mut complete = BTreeSet::new();
    for (relative, meta) in &listed {
        let parts: Vec<&str> = relative.split('/').collect();
        match parts.as_slice() {
            [RUNS, id, CLAIM_OBJECT] => {
                claimed.insert(id.to_string(), meta.last_modified);
            }
            [RUNS, id, COMPLETE_OBJECT] => {
                complete.insert(id.to_string());
            }
            _ => {}
        };
    }
    claimed.retain(|id, _| !complete.contains(id));
    // A record that claimed its run long ago and never completed it most
    // likely died: its run is left out of every build until someone
    // deletes it, so that is said, not only counted.
    for (id, since) in &claimed {
        if now - *since > STALE_CLAIM {
            report.warnings.push(format!(
                "{}: left out: a `perfdash record` claimed this run at {} and has not completed it; \
                 if that record died, delete this prefix and record the run again",
                url.show(&format!("{RUNS}/{id}/")),
                since.format("%Y-%m-%d %H:%M UTC"),
            ));
        }
    }
    report.in_progress = claimed.into_keys().collect();
    let mut out = BTreeMap::new();
    for (relative, meta) in listed {
        let parts: Vec<&str> = relative.split('/').collect();
        if relative.ends_with('/') && meta.size == 0 {
            continue; // a "folder" object some tools write
        }
        if parts
            .iter()
            .any(|p| p.starts_with('.') && *p != "." && *p != "..")
        {
            continue;
        }
        if let Some(bad) = parts.iter().find(|p| !safe_segment(p)) {
            report.warnings.push(format!(
                "{}: skipped: '{bad}' cannot be a file or folder name",
                url.show(&relative)
            ));
            continue;
        }
        if let [RUNS, id, _, ..] = parts.as_slice()
            && report.in_progress.iter().any(|p| p == id)
        {
            continue;
        }
        out.insert(relative, ObjectIdentity::of(&meta));
    }
    // A key that is also a prefix of others cannot be both a file and a folder.
    let folders: BTreeSet<String> = out
        .keys()
        .flat_map(|k| {
            k.match_indices('/')
                .map(|(i, _)| k[..i].to_string())
                .collect::<Vec<_>>()
        })
        .collect();
    out.retain(|relative, _| {
        let clash = folders.contains(relative);
        if clash {
            report.warnings.push(format!(
                "{}: skipped: other objects are under it as a folder",
                url.show(relative)
            ));
        }
        !clash
    });
    out
}

/// Fetches `due` into `dir`, in parallel, each written beside its place
/// under a hidden name and renamed into it.
fn fetch_all(
    remote: &Remote,
    dir: &Path,
    due: Vec<(String, ObjectIdentity)>,
    cap: u64,
) -> Result<(), Error> {
    let store = dyn_store(remote);
    let counts = remote.counts.clone();
    let url = remote.url.clone();
    remote
        .runtime
        .block_on(
            futures_util::stream::iter(due)
                .map(|(relative, identity)| {
                    let store = store.clone();
                    let counts = counts.clone();
                    let url = url.clone();
                    async move {
                        fetch_one(&*store, &url, &counts, dir, &relative, &identity, cap)
                            .await
                            .map_err(|e| (relative, e))
                    }
                })
                .buffer_unordered(PARALLEL)
                .try_collect::<Vec<()>>(),
        )
        .map(|_| ())
        .map_err(|(relative, message)| remote.error(&relative, message))
}

async fn fetch_one(
    store: &dyn ObjectStore,
    url: &RemoteUrl,
    counts: &RequestCounts,
    dir: &Path,
    relative: &str,
    listed: &ObjectIdentity,
    cap: u64,
) -> Result<(), String> {
    RequestCounts::add(&counts.gets, 1);
    let got = store
        .get(&Key::from(url.key(relative)))
        .await
        .map_err(|e| format!("could not fetch: {e}"))?;
    if got.meta.size > cap {
        return Err(format!(
            "not read: {} bytes is more than [limits] max_decompressed_bytes ({cap})",
            got.meta.size
        ));
    }
    let bytes = got
        .bytes()
        .await
        .map_err(|e| format!("could not fetch: {e}"))?;
    RequestCounts::add(&counts.bytes_fetched, bytes.len() as u64);
    if bytes.len() as u64 != listed.size {
        return Err(format!(
            "changed while it was read ({} bytes listed, {} fetched): run again",
            listed.size,
            bytes.len()
        ));
    }
    let path = dir.join(relative);
    let parent = path.parent().unwrap_or(dir);
    let write = || -> std::io::Result<()> {
        std::fs::create_dir_all(parent)?;
        let mut part = tempfile::Builder::new()
            .prefix(".perfdash-fetch-")
            .tempfile_in(parent)?;
        std::io::Write::write_all(&mut part, &bytes)?;
        part.persist(&path).map_err(|e| e.error)?;
        Ok(())
    };
    write().map_err(|e| format!("could not write {}: {e}", path.display()))
}

/// Removes every file under `at` that is not in `keep` (and so every
/// link, folder left empty, or leftover of an interrupted fetch).
fn remove_others(
    root: &Path,
    at: &Path,
    keep: &BTreeMap<String, ObjectIdentity>,
) -> std::io::Result<usize> {
    let mut removed = 0;
    for entry in std::fs::read_dir(at)? {
        let entry = entry?;
        let path = entry.path();
        let kind = entry.file_type()?;
        if kind.is_dir() {
            removed += remove_others(root, &path, keep)?;
            if std::fs::read_dir(&path)?.next().is_none() {
                std::fs::remove_dir(&path)?;
            }
            continue;
        }
        let relative = path
            .strip_prefix(root)
            .ok()
            .and_then(|r| r.to_str())
            .map(|r| r.replace(std::path::MAIN_SEPARATOR, "/"));
        if !relative.is_some_and(|r| keep.contains_key(&r)) {
            std::fs::remove_file(&path)?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// Writes `path` whole or not at all.
fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let parent = path.parent().unwrap_or(Path::new("."));
    let mut part = tempfile::Builder::new()
        .prefix(".perfdash-")
        .tempfile_in(parent)?;
    std::io::Write::write_all(&mut part, bytes)?;
    part.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(key: &str) -> (String, ObjectMeta) {
        let meta = ObjectMeta {
            location: Key::from(key),
            last_modified: DateTime::<Utc>::UNIX_EPOCH,
            size: 3,
            e_tag: None,
            version: None,
        };
        (key.to_string(), meta)
    }

    #[test]
    fn runs_being_recorded_hidden_names_and_clashes_are_left_out() {
        let url = RemoteUrl {
            scheme: super::super::Scheme::S3,
            bucket: "b".into(),
            prefix: "p".into(),
        };
        let mut report = SyncReport::default();
        // Ten minutes after the claims (listed at the epoch): still being
        // recorded, counted but not warned about.
        let soon = DateTime::<Utc>::UNIX_EPOCH + chrono::TimeDelta::minutes(10);
        let kept = select(
            &url,
            [
                "perfdash.toml",
                "runs/a/orders/round-1.json",
                "runs/a/.perfdash-record",
                "runs/a/.perfdash-complete",
                "runs/b/.perfdash-record",
                "runs/b/orders/round-1.json",
                "runs/c/orders/round-1.json",
                "runs/c/.DS_Store",
                "runs/d/orders",
                "runs/d/orders/round-1.json",
            ]
            .map(meta)
            .into(),
            soon,
            &mut report,
        );
        assert_eq!(
            kept.keys().collect::<Vec<_>>(),
            [
                "perfdash.toml",
                "runs/a/orders/round-1.json",
                "runs/c/orders/round-1.json",
                "runs/d/orders/round-1.json"
            ]
        );
        assert_eq!(report.in_progress, ["b"]);
        assert_eq!(
            report.warnings,
            ["s3://b/p/runs/d/orders: skipped: other objects are under it as a folder"]
        );
        // Two hours on, the claim of b is said to be stale, naming its
        // prefix; the completed a is not.
        let mut report = SyncReport::default();
        let later = DateTime::<Utc>::UNIX_EPOCH + chrono::TimeDelta::hours(2);
        let listed = [
            "runs/a/.perfdash-record",
            "runs/a/.perfdash-complete",
            "runs/b/.perfdash-record",
            "runs/b/orders/round-1.json",
        ]
        .map(meta)
        .into();
        assert!(select(&url, listed, later, &mut report).is_empty());
        assert_eq!(report.in_progress, ["b"]);
        assert_eq!(
            report.warnings,
            [
                "s3://b/p/runs/b/: left out: a `perfdash record` claimed this run at 1970-01-01 \
                 00:00 UTC and has not completed it; if that record died, delete this prefix and \
                 record the run again"
            ]
        );
    }

    #[test]
    fn identities_compare_by_etag_when_both_have_one() {
        let at = |s: i64| DateTime::<Utc>::from_timestamp(s, 0).unwrap();
        let id = |size, t, etag: Option<&str>| ObjectIdentity {
            size,
            last_modified: at(t),
            etag: etag.map(String::from),
        };
        assert!(id(3, 1, Some("x")).same(&id(3, 2, Some("x"))));
        assert!(!id(3, 1, Some("x")).same(&id(3, 1, Some("y"))));
        assert!(id(3, 1, None).same(&id(3, 1, Some("y"))));
        assert!(!id(3, 1, None).same(&id(3, 2, None)));
        assert!(!id(3, 1, None).same(&id(4, 1, None)));
    }
}
