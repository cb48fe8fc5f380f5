//! The page memo, `pages.memo` in the output's cache folder (beside
//! `site.state` and the run records): which files of the published site
//! each memoised page was made of, under the key of its inputs
//! (`render::memo`, which says why a key is complete).
//!
//! A build asks it, page by page, before rendering: when the page's key is
//! in the memo and each of its files in the previous site still has the
//! `stat` recorded when it was published ([`crate::stat_stamp`]: size,
//! modification and change times to the nanosecond, inode, device; any
//! write moves the change time, even under `touch -r`), the files are
//! linked into the new site as unchanged files are ([`super::manifest`]),
//! without rendering and without reading them back. Anything else — a key
//! not there, a file edited, replaced or removed by hand, a site swapped
//! for another — renders the page. The memo never holds a page: it only
//! vouches for files of the live site.
//!
//! It is written after the site is swapped in (like `site.state`), from
//! the `stat`s of the published files, atomically; so it only ever names
//! published files, and a build that fails or is killed leaves the old
//! memo, whose stamps then no longer match any file a later build could
//! link unless that file is still exactly what was published. A damaged
//! memo, or one of another format or perfdash version, is ignored with a
//! notice; `--no-cache` neither reads nor writes it.
//!
//! One window is left, as for `site.state`: a page edited by hand between
//! the swap and the moment the memo takes its `stat` (milliseconds) would
//! be vouched for. The previous site's files are never trusted for more
//! than that.

use std::collections::HashMap;
use std::io::Write as _;
use std::path::Path;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::manifest::FileSum;

/// The memo's file name in the output's cache folder.
pub const MEMO_FILE: &str = "pages.memo";

/// The first line's start: format and what wrote it.
const HEADER: &str = "perfdash page memo 1";

fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// One published file of a memoised page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoFile {
    /// Relative to the site root, with `/`.
    pub path: String,
    pub size: u64,
    /// Hex xxh3-128 of its bytes (the manifest's hash).
    pub hash: String,
    /// Its [`crate::stat_stamp`] numbers once published.
    pub stamp: [i64; 7],
}

impl MemoFile {
    pub fn sum(&self) -> Option<FileSum> {
        Some(FileSum {
            size: self.size,
            hash: u128::from_str_radix(&self.hash, 16).ok()?,
        })
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct Entry {
    /// Hex key.
    key: String,
    files: Vec<MemoFile>,
}

/// The memo of the previous build, and what this build makes.
#[derive(Debug)]
pub struct PageMemo {
    salt: u128,
    previous: HashMap<u128, Vec<MemoFile>>,
    /// Key → the files this build made or linked for it.
    made: Mutex<HashMap<u128, Vec<String>>>,
}

/// Files made in this build, by key, with their sums; stamped once
/// published ([`save`]).
pub type Made = Vec<(u128, Vec<(String, FileSum)>)>;

impl PageMemo {
    /// Reads the memo in `cache_dir`; a missing one is empty, a damaged or
    /// foreign one is ignored with a notice. `None` when this perfdash
    /// cannot name its own binary (the keys' salt): no memo then.
    pub fn load(cache_dir: &Path, notices: &mut Vec<String>) -> Option<PageMemo> {
        // The round cache says why it does not use such a folder.
        if !usable(cache_dir) {
            return None;
        }
        let salt = salt()?;
        let path = cache_dir.join(MEMO_FILE);
        let previous = match read(&path) {
            Ok(previous) => previous,
            Err(why) => {
                if let Some(why) = why {
                    notices.push(format!(
                        "ignored the page memo {}: {why}; its pages are rendered again",
                        path.display()
                    ));
                }
                HashMap::new()
            }
        };
        Some(PageMemo {
            salt,
            previous,
            made: Mutex::new(HashMap::new()),
        })
    }

    /// The salt of every key (`render::memo::key`).
    pub fn salt(&self) -> u128 {
        self.salt
    }

    /// The files the memo holds for `key`, when every one of them is in
    /// `previous_site` with the `stat` it was published with.
    pub fn vouched(&self, key: u128, previous_site: &Path) -> Option<&[MemoFile]> {
        let files = self.previous.get(&key)?;
        for f in files {
            let meta = std::fs::symlink_metadata(previous_site.join(&f.path)).ok()?;
            if crate::stat_stamp::of(&meta)?.numbers != f.stamp {
                return None;
            }
        }
        Some(files)
    }

    /// This build made (or linked) `paths` for `key`.
    pub fn remember(&self, key: u128, paths: Vec<String>) {
        self.made
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, paths);
    }

    /// What this build made, with each file's sum from `sums` (the
    /// manifest's): keys whose files are not all there are left out.
    pub fn made(&self, sums: &HashMap<String, FileSum>) -> Made {
        let made = self.made.lock().unwrap_or_else(|p| p.into_inner());
        made.iter()
            .filter_map(|(key, paths)| {
                let files = paths
                    .iter()
                    .map(|p| Some((p.clone(), *sums.get(p)?)))
                    .collect::<Option<Vec<_>>>()?;
                Some((*key, files))
            })
            .collect()
    }
}

/// Whether the cache folder may hold the memo: neither it nor the
/// `.perfdash-cache` folder holding it is a symbolic link or a file (the
/// round cache's rule: perfdash never writes through a link).
fn usable(cache_dir: &Path) -> bool {
    [cache_dir.parent(), Some(cache_dir)]
        .into_iter()
        .flatten()
        .all(|p| match std::fs::symlink_metadata(p) {
            Ok(m) => m.is_dir(),
            Err(_) => true,
        })
}

/// What names this perfdash: its version and its binary's `stat` (a
/// rebuilt binary, with other templates or code, has another). Worked out
/// once per process (the page memo and the change-point judgements both
/// ask): the running code is the binary as it was when first asked.
pub(crate) fn salt() -> Option<u128> {
    static SALT: std::sync::OnceLock<Option<u128>> = std::sync::OnceLock::new();
    *SALT.get_or_init(binary_salt)
}

fn binary_salt() -> Option<u128> {
    let exe = std::env::current_exe().ok()?;
    let stamp = crate::stat_stamp::of(&std::fs::metadata(exe).ok()?)?;
    let mut bytes = format!("{HEADER} {}", version()).into_bytes();
    for n in stamp.numbers {
        bytes.extend_from_slice(&n.to_le_bytes());
    }
    Some(xxhash_rust::xxh3::xxh3_128(&bytes))
}

/// The memo's entries; `Err(None)` when there is none, `Err(Some(why))`
/// when it cannot be trusted.
fn read(path: &Path) -> Result<HashMap<u128, Vec<MemoFile>>, Option<String>> {
    // Opened like an archive file: a link is not followed, a FIFO never
    // blocks.
    let file = match crate::ingest::input::InputFile::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(None),
        Err(e) => return Err(Some(e.to_string())),
    };
    let bytes = crate::ingest::limits::read_document(&file, &Default::default())
        .map_err(|e| Some(e.to_string()))?;
    let damaged = || Some("it is damaged".to_string());
    let newline = bytes.iter().position(|&b| b == b'\n').ok_or_else(damaged)?;
    let head = std::str::from_utf8(&bytes[..newline]).map_err(|_| damaged())?;
    let body = &bytes[newline + 1..];
    let rest = head
        .strip_prefix(HEADER)
        .ok_or_else(|| Some("it is not a page memo of this format".to_string()))?;
    let (written_by, sum) = rest.trim_start().split_once(' ').ok_or_else(damaged)?;
    if written_by != version() {
        return Err(Some(format!(
            "it was written by perfdash {written_by}, this is {}",
            version()
        )));
    }
    if sum != format!("{:032x}", xxhash_rust::xxh3::xxh3_128(body)) {
        return Err(damaged());
    }
    let entries: Vec<Entry> = serde_json::from_slice(body).map_err(|_| damaged())?;
    let mut memo = HashMap::new();
    for entry in entries {
        let key = u128::from_str_radix(&entry.key, 16).map_err(|_| damaged())?;
        if entry.files.iter().any(|f| f.sum().is_none()) {
            return Err(damaged());
        }
        memo.insert(key, entry.files);
    }
    Ok(memo)
}

/// Records what this build made, as published in `out` now (call after
/// the swap). Failures cost only the next build's shortcut: a memo that
/// cannot be written is removed.
pub fn save(cache_dir: &Path, out: &Path, made: Made) -> std::io::Result<()> {
    let path = cache_dir.join(MEMO_FILE);
    let result = (|| {
        let mut entries: Vec<Entry> = made
            .into_iter()
            .filter_map(|(key, files)| {
                let files = files
                    .into_iter()
                    .map(|(rel, sum)| {
                        let meta = std::fs::symlink_metadata(out.join(&rel)).ok()?;
                        Some(MemoFile {
                            stamp: crate::stat_stamp::of(&meta)?.numbers,
                            path: rel,
                            size: sum.size,
                            hash: format!("{:032x}", sum.hash),
                        })
                    })
                    .collect::<Option<Vec<_>>>()?;
                Some(Entry {
                    key: format!("{key:032x}"),
                    files,
                })
            })
            .collect();
        entries.sort_by(|a, b| a.key.cmp(&b.key));
        let body = serde_json::to_vec(&entries)?;
        let head = format!(
            "{HEADER} {} {:032x}\n",
            version(),
            xxhash_rust::xxh3::xxh3_128(&body)
        );
        std::fs::create_dir_all(cache_dir)?;
        if !usable(cache_dir) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "the folder is (or lies in) a symbolic link",
            ));
        }
        let mut tmp = tempfile::Builder::new()
            .prefix(".tmp-")
            .tempfile_in(cache_dir)?;
        let guard = crate::cleanup::register(tmp.path());
        tmp.write_all(head.as_bytes())?;
        tmp.write_all(&body)?;
        tmp.flush()?;
        tmp.persist(&path).map_err(|e| e.error)?;
        drop(guard);
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&path);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memo_of(dir: &Path) -> PageMemo {
        let mut notices = Vec::new();
        let memo = PageMemo::load(dir, &mut notices).expect("the test binary names itself");
        assert!(notices.is_empty(), "{notices:?}");
        memo
    }

    #[test]
    fn a_memo_vouches_only_for_files_with_the_stat_they_were_published_with() {
        let tmp = tempfile::tempdir().unwrap();
        let (site, cache) = (tmp.path().join("site"), tmp.path().join("cache"));
        std::fs::create_dir_all(site.join("runs")).unwrap();
        std::fs::write(site.join("runs/a.html"), "<p>a</p>").unwrap();
        std::fs::write(site.join("runs/b.html"), "<p>b</p>").unwrap();
        let made = vec![
            (7, vec![("runs/a.html".into(), FileSum::of(b"<p>a</p>"))]),
            (8, vec![("runs/b.html".into(), FileSum::of(b"<p>b</p>"))]),
        ];
        save(&cache, &site, made).unwrap();
        let memo = memo_of(&cache);
        let files = memo.vouched(7, &site).expect("untouched");
        assert_eq!(files[0].path, "runs/a.html");
        assert_eq!(files[0].sum(), Some(FileSum::of(b"<p>a</p>")));
        assert!(memo.vouched(9, &site).is_none(), "an unknown key");
        // Rewritten with the same size and modification time: its change
        // time moved.
        let page = site.join("runs/b.html");
        let mtime = std::fs::metadata(&page).unwrap().modified().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        crate::test_support::write_with_mtime(&page, "<p>B</p>", mtime);
        assert!(memo.vouched(8, &site).is_none(), "an edited page");
        std::fs::remove_file(site.join("runs/a.html")).unwrap();
        assert!(memo.vouched(7, &site).is_none(), "a removed page");
    }

    #[test]
    fn what_a_build_made_is_recorded_only_for_pages_wholly_in_the_site() {
        let tmp = tempfile::tempdir().unwrap();
        let memo = memo_of(tmp.path());
        memo.remember(1, vec!["a.html".into(), "a.svg".into()]);
        memo.remember(2, vec!["b.html".into()]);
        let sums: HashMap<String, FileSum> = [
            ("a.html".to_string(), FileSum::of(b"a")),
            ("b.html".to_string(), FileSum::of(b"b")),
        ]
        .into();
        let made = memo.made(&sums);
        assert_eq!(made, vec![(2, vec![("b.html".into(), FileSum::of(b"b"))])]);
    }

    #[test]
    fn a_linked_cache_folder_holds_no_memo() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().join("real");
        std::fs::create_dir(&real).unwrap();
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let mut notices = Vec::new();
        assert!(PageMemo::load(&link, &mut notices).is_none());
        assert!(save(&link, tmp.path(), Vec::new()).is_err());
        assert!(!real.join(MEMO_FILE).exists(), "nothing written through it");
    }
}
