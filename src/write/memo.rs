//! The page memo, kept in the cache's index (`crate::cache`): which files
//! of the published site each memoised page was made of, under the key of
//! its inputs (`render::memo`, which says why a key is complete).
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
//! It is made after the site is swapped in (like the record of the site,
//! `super::fresh`), from the `stat`s of the published files, and written
//! with the index; so it only ever names published files, and a build that
//! fails or is killed leaves the old memo, whose stamps then no longer
//! match any file a later build could link unless that file is still
//! exactly what was published. A memo of another perfdash (its salt
//! differs) is not used; `--no-cache` neither reads nor writes it.
//!
//! One window is left, as for `site.state`: a page edited by hand between
//! the swap and the moment the memo takes its `stat` (milliseconds) would
//! be vouched for. The previous site's files are never trusted for more
//! than that.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

use super::manifest::FileSum;
use crate::cache::stored::{Pages, PublishedFile};

/// The memo of the previous build, and what this build makes.
#[derive(Debug)]
pub struct PageMemo {
    salt: u128,
    previous: HashMap<u128, Vec<PublishedFile>>,
    /// Key → the files this build made or linked for it.
    made: Mutex<HashMap<u128, Vec<String>>>,
}

/// Files made in this build, by key, with their sums; stamped once
/// published ([`published`]).
pub type Made = Vec<(u128, Vec<(String, FileSum)>)>;

impl PageMemo {
    /// The memo the previous build kept (`kept`, from the cache's index);
    /// one of another perfdash is not used. `None` when this perfdash
    /// cannot name its own binary (the keys' salt): no memo then.
    pub fn from_kept(kept: Option<&Pages>) -> Option<PageMemo> {
        let salt = crate::cache::key::salt()?;
        let previous = kept
            .filter(|k| k.salt == salt)
            .map(|k| k.pages.iter().cloned().collect())
            .unwrap_or_default();
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
    pub fn vouched(&self, key: u128, previous_site: &Path) -> Option<&[PublishedFile]> {
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

/// The memo to keep of what this build `made`, as published in `out` now
/// (call after the swap): each file with its `stat` there. A page one of
/// whose files is not there (or not a file) is left out.
pub fn published(out: &Path, salt: u128, made: Made) -> Pages {
    let mut pages: Vec<(u128, Vec<PublishedFile>)> = made
        .into_iter()
        .filter_map(|(key, files)| {
            let files = files
                .into_iter()
                .map(|(rel, sum)| {
                    let meta = std::fs::symlink_metadata(out.join(&rel)).ok()?;
                    Some(PublishedFile {
                        stamp: crate::stat_stamp::of(&meta)?.numbers,
                        path: rel,
                        size: sum.size,
                        hash: sum.hash,
                    })
                })
                .collect::<Option<Vec<_>>>()?;
            Some((key, files))
        })
        .collect();
    pages.sort_by_key(|(key, _)| *key);
    Pages { salt, pages }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memo_of(kept: Option<&Pages>) -> PageMemo {
        PageMemo::from_kept(kept).expect("the test binary names itself")
    }

    #[test]
    fn a_memo_vouches_only_for_files_with_the_stat_they_were_published_with() {
        let tmp = tempfile::tempdir().unwrap();
        let site = tmp.path().join("site");
        std::fs::create_dir_all(site.join("runs")).unwrap();
        std::fs::write(site.join("runs/a.html"), "<p>a</p>").unwrap();
        std::fs::write(site.join("runs/b.html"), "<p>b</p>").unwrap();
        let made = vec![
            (7, vec![("runs/a.html".into(), FileSum::of(b"<p>a</p>"))]),
            (8, vec![("runs/b.html".into(), FileSum::of(b"<p>b</p>"))]),
        ];
        let salt = crate::cache::key::salt().unwrap();
        let kept = published(&site, salt, made);
        let memo = memo_of(Some(&kept));
        let files = memo.vouched(7, &site).expect("untouched");
        assert_eq!(files[0].path, "runs/a.html");
        assert_eq!(files[0].hash, FileSum::of(b"<p>a</p>").hash);
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
        // Another perfdash's memo is not used.
        let other = Pages {
            salt: salt ^ 1,
            ..kept
        };
        assert!(memo_of(Some(&other)).previous.is_empty());
    }

    #[test]
    fn what_a_build_made_is_recorded_only_for_pages_wholly_in_the_site() {
        let memo = memo_of(None);
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
}
