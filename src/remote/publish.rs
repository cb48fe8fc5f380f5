//! `record` into object storage: a run written with conditional puts
//! only, and made visible last.
//!
//! 1. `runs/<id>/.perfdash-record` is created with `If-None-Match: *`:
//!    of two `record`s of one run id, exactly one gets it; the other is
//!    refused, naming the key, before it writes anything.
//! 2. Every file of the run is created the same way (nothing is ever
//!    overwritten, not even by the run's own writer).
//! 3. `runs/<id>/.perfdash-complete` is created last. Until it exists the
//!    run is left out of every listing (`mirror`), so a build never
//!    reads half a run. A `record` that dies between 1 and 3 leaves an
//!    incomplete run that stays invisible and keeps its id taken.

use std::path::Path;

use futures_util::{StreamExt, TryStreamExt};
use object_store::path::Path as Key;
use object_store::{ObjectStore, PutMode, PutOptions, PutPayload};

use super::{CLAIM_OBJECT, COMPLETE_OBJECT, Remote, RequestCounts, dyn_store};
use crate::error::Error;

/// Uploads in flight at once.
const PARALLEL: usize = 8;

/// Refuses `id` when anything is under `runs/<id>/` already (a complete
/// run, one being recorded, or one uploaded by other tools): asked
/// before any round runs. The claim in [`publish_run`] is what decides
/// a race; this only spares a refused load test.
pub fn refuse_existing(remote: &Remote, id: &str) -> Result<(), Error> {
    let relative = format!("runs/{id}");
    let store = dyn_store(remote);
    RequestCounts::add(&remote.counts.lists, 1);
    let listed = remote
        .runtime
        .block_on(store.list_with_delimiter(Some(&Key::from(remote.url.key(&relative)))))
        .map_err(|e| remote.error(&relative, super::listing_failed(remote.url.scheme, &e)))?;
    if listed.objects.is_empty() && listed.common_prefixes.is_empty() {
        Ok(())
    } else {
        Err(remote.error(
            &format!("{relative}/"),
            "this run exists already (or is being recorded) and is never replaced: give another id with --id",
        ))
    }
}

/// Fetches the archive's `perfdash.toml` into `dir` (a fresh local
/// archive `record` assembles the run in), when the bucket has one.
pub fn fetch_settings(remote: &Remote, dir: &Path) -> Result<(), Error> {
    let name = crate::config::SETTINGS_FILE;
    let store = dyn_store(remote);
    RequestCounts::add(&remote.counts.gets, 1);
    let got = remote.runtime.block_on(async {
        match store
            .get_opts(&Key::from(remote.url.key(name)), Default::default())
            .await
        {
            Ok(got) => got.bytes().await.map(Some),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    });
    match got {
        Ok(Some(bytes)) => {
            let path = dir.join(name);
            std::fs::write(&path, &bytes).map_err(|e| Error::io(&path, e))
        }
        Ok(None) => Ok(()),
        Err(e) => Err(remote.error(name, format!("could not fetch: {e}"))),
    }
}

/// Uploads the run folder `run_dir` as `runs/<id>/`: the claim, every
/// file, the completion marker. Returns the number of files uploaded.
pub fn publish_run(remote: &Remote, run_dir: &Path, id: &str) -> Result<usize, Error> {
    let mut files = Vec::new();
    collect(run_dir, run_dir, &mut files).map_err(|e| Error::io(run_dir, e))?;
    let run = format!("runs/{id}");
    let claim = format!("{run}/{CLAIM_OBJECT}");
    // The claim names this record alone (process, time), and is read back:
    // a store whose conditional put checks and then writes (s3s-fs keeps
    // each object as a file) can let two racing claims through, and then
    // only the one stored last is this record's.
    let started = format!(
        "perfdash record of run {id}\nby {} at {}\n",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    );
    let under_way = |key: &str| {
        remote.error(
            key,
            "this run exists already (or another record of it is under way) and is never \
             replaced: give another id with --id; nothing was recorded",
        )
    };
    create(remote, &claim, started.clone().into_bytes()).map_err(|e| match e {
        Created::Exists => under_way(&claim),
        Created::Failed(why) => remote.error(
            &claim,
            format!("could not write: {why}; nothing was recorded"),
        ),
    })?;
    if read_back(remote, &claim).as_deref() != Some(started.as_bytes()) {
        return Err(under_way(&claim));
    }
    let store = dyn_store(remote);
    let counts = remote.counts.clone();
    let url = remote.url.clone();
    let uploaded = remote.runtime.block_on(
        futures_util::stream::iter(files.iter().cloned())
            .map(|relative| {
                let store = store.clone();
                let counts = counts.clone();
                let key = url.key(&format!("{run}/{relative}"));
                let path = run_dir.join(&relative);
                async move {
                    let bytes = std::fs::read(&path)
                        .map_err(|e| (relative.clone(), e.to_string(), false))?;
                    put_create(&*store, &counts, &key, bytes)
                        .await
                        .map_err(|e| {
                            let exists = matches!(e, object_store::Error::AlreadyExists { .. });
                            (relative, e.to_string(), exists)
                        })
                }
            })
            .buffer_unordered(PARALLEL)
            .try_collect::<Vec<()>>(),
    );
    if let Err((relative, why, exists)) = uploaded {
        if exists {
            // Another record of this id got past the claim too (see above)
            // and wrote this file first: it is the one to finish the run.
            return Err(remote.error(
                &format!("{run}/{relative}"),
                "exists already: another record of this run is under way and it is never \
                 replaced; this record stops here",
            ));
        }
        return Err(remote.error(
            &format!("{run}/{relative}"),
            format!(
                "could not write: {why}; the run stays invisible (no {COMPLETE_OBJECT}) and its \
                 id taken: delete {} to record it again",
                remote.url.show(&format!("{run}/"))
            ),
        ));
    }
    let marker = format!("{run}/{COMPLETE_OBJECT}");
    create(remote, &marker, Vec::new()).map_err(|e| {
        let why = match e {
            Created::Exists => "it exists already".to_string(),
            Created::Failed(why) => why,
        };
        remote.error(
            &marker,
            format!("could not write the completion marker: {why}"),
        )
    })?;
    Ok(files.len())
}

/// Adds the file `path` to the run `id`, recorded already, as
/// `runs/<id>/<relative>` (`record --profile-on-regression`'s profile,
/// taken once the run is judged): created with `If-None-Match: *`, never
/// over an object. The run is visible before its profile, as a local run
/// is before its profile is renamed in.
pub fn add_to_run(remote: &Remote, id: &str, relative: &str, path: &Path) -> Result<(), Error> {
    let key = format!("runs/{id}/{relative}");
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    create(remote, &key, bytes).map_err(|e| match e {
        Created::Exists => remote.error(&key, "exists already and is never replaced"),
        Created::Failed(why) => remote.error(&key, format!("could not write: {why}")),
    })
}

/// The stored bytes of `relative`, or `None` when it cannot be read.
fn read_back(remote: &Remote, relative: &str) -> Option<Vec<u8>> {
    let store = dyn_store(remote);
    RequestCounts::add(&remote.counts.gets, 1);
    remote.runtime.block_on(async {
        let got = store
            .get_opts(&Key::from(remote.url.key(relative)), Default::default())
            .await
            .ok()?;
        got.bytes().await.ok().map(|b| b.to_vec())
    })
}

/// Why a conditional put did not create its object.
enum Created {
    Exists,
    Failed(String),
}

fn create(remote: &Remote, relative: &str, bytes: Vec<u8>) -> Result<(), Created> {
    let store = dyn_store(remote);
    remote
        .runtime
        .block_on(put_create(
            &*store,
            &remote.counts,
            &remote.url.key(relative),
            bytes,
        ))
        .map_err(|e| match e {
            object_store::Error::AlreadyExists { .. } => Created::Exists,
            e => Created::Failed(e.to_string()),
        })
}

/// A put with `If-None-Match: *`.
async fn put_create(
    store: &dyn ObjectStore,
    counts: &RequestCounts,
    key: &str,
    bytes: Vec<u8>,
) -> Result<(), object_store::Error> {
    RequestCounts::add(&counts.puts, 1);
    store
        .put_opts(
            &Key::from(key),
            PutPayload::from(bytes),
            PutOptions::from(PutMode::Create),
        )
        .await
        .map(|_| ())
}

/// Every regular file under `at`, relative to `root`, `/`-separated.
fn collect(root: &Path, at: &Path, out: &mut Vec<String>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(at)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        if kind.is_dir() {
            collect(root, &entry.path(), out)?;
        } else if kind.is_file() {
            let path = entry.path();
            let relative = path.strip_prefix(root).unwrap_or(&path);
            out.push(
                relative
                    .to_string_lossy()
                    .replace(std::path::MAIN_SEPARATOR, "/"),
            );
        }
    }
    out.sort();
    Ok(())
}
