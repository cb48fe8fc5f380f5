//! Whether the site is already what a build would write, so that a build
//! with nothing new does not render and compare 600 MB of pages again
//! (issue 18: a warm rebuild of 120 endpoints × three years took ~25 CPU-s
//! to conclude that nothing had changed).
//!
//! After each build that wrote a site, the cache's index (`crate::cache`)
//! records:
//!
//! * the fingerprint of the build's inputs: everything the archive gave
//!   ([`crate::ingest::Loaded::inputs`]: every file's `stat` or content,
//!   the settings, every diagnostic, the clock's verdicts), the options
//!   that change the output, and the perfdash version;
//! * what the build reported (pages, runs, diagnostics, …);
//! * the `stat` of every file of the published site (size, modification
//!   and change times in nanoseconds, inode).
//!
//! A build whose inputs have that fingerprint, and whose site still has
//! exactly those files with exactly those `stat`s, is up to date: it
//! reports what the last build reported and writes nothing. Anything else
//! (a changed or new input, a page edited or removed by hand — its change
//! time moves even under `touch -r` —, a site swapped for another, a
//! damaged index) makes a full build. `--no-cache` never reads or writes
//! the state. The state is written with the index, after the site,
//! atomically; a build that fails or is killed leaves the old one, which
//! then no longer matches the site only if the site changed.

use std::path::Path;

use crate::cache::stored::SiteState;
pub use crate::cache::stored::SiteSummary as Summary;

/// The summary of the last build when the site in `out` is still exactly
/// what it wrote (`kept`, from the cache's index) from inputs fingerprinted
/// `inputs`; `None` otherwise.
pub fn up_to_date(kept: Option<&SiteState>, out: &Path, inputs: u128) -> Option<Summary> {
    let state = kept?;
    if state.inputs != inputs {
        return None;
    }
    (site_files(out)? == state.files).then(|| state.summary.clone())
}

/// The record of the site just published in `out`, built from `inputs`;
/// `None` when the site holds something other than files and folders.
pub fn published(out: &Path, inputs: u128, summary: Summary) -> Option<SiteState> {
    Some(SiteState {
        inputs,
        summary,
        files: site_files(out)?,
    })
}

/// Every file under `out` (the published site, through `out` itself when
/// it is a link) with its `stat`, in path order; `None` when the site
/// holds a link or anything but files and folders, or cannot be listed.
fn site_files(out: &Path) -> Option<Vec<(String, [i64; 7])>> {
    let mut files = Vec::new();
    let mut dirs = vec![(out.to_path_buf(), String::new())];
    while let Some((dir, prefix)) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).ok()? {
            let entry = entry.ok()?;
            let name = entry.file_name().into_string().ok()?;
            let rel = format!("{prefix}{name}");
            let meta = entry.metadata().ok()?;
            if meta.is_dir() {
                dirs.push((entry.path(), format!("{rel}/")));
            } else if meta.is_file() {
                files.push((rel, crate::stat_stamp::of(&meta)?.numbers));
            } else {
                return None;
            }
        }
    }
    files.sort();
    Some(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary() -> Summary {
        Summary {
            runs: 3,
            endpoints: 2,
            round_files: 30,
            pages: 9,
            files: 2,
            bytes: 10,
            latest_regressions: 1,
            latest_failures: 0,
            diagnostics: vec![],
        }
    }

    #[test]
    fn a_site_is_up_to_date_only_with_the_same_inputs_and_untouched_files() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("site");
        std::fs::create_dir_all(out.join("runs")).unwrap();
        std::fs::write(out.join("index.html"), "<p>1</p>").unwrap();
        std::fs::write(out.join("runs/a.html"), "<p>a</p>").unwrap();
        assert_eq!(up_to_date(None, &out, 7), None, "no state yet");
        let state = published(&out, 7, summary()).unwrap();
        assert_eq!(up_to_date(Some(&state), &out, 7), Some(summary()));
        assert_eq!(up_to_date(Some(&state), &out, 8), None, "other inputs");
        // A page edited by hand, its size and modification time restored.
        let page = out.join("runs/a.html");
        let mtime = std::fs::metadata(&page).unwrap().modified().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        crate::test_support::write_with_mtime(&page, "<p>b</p>", mtime);
        assert_eq!(up_to_date(Some(&state), &out, 7), None, "an edited page");
        let state = published(&out, 7, summary()).unwrap();
        std::fs::write(out.join("extra.html"), "").unwrap();
        assert_eq!(up_to_date(Some(&state), &out, 7), None, "a file added");
        let state = published(&out, 7, summary()).unwrap();
        std::fs::remove_file(out.join("extra.html")).unwrap();
        assert_eq!(up_to_date(Some(&state), &out, 7), None, "a file removed");
    }
}
