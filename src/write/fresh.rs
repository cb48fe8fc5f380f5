//! Whether the site is already what a build would write, so that a build
//! with nothing new does not render and compare 600 MB of pages again
//! (issue 18: a warm rebuild of 120 endpoints × three years took ~25 CPU-s
//! to conclude that nothing had changed).
//!
//! After each build that wrote a site, `site.state` (in the output's cache
//! folder, beside the run files) records:
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
//! damaged state file) makes a full build. `--no-cache` never reads or
//! writes the state. The state is written after the site and the cache,
//! atomically; a build that fails or is killed leaves the old one, which
//! then no longer matches the site only if the site changed.

use std::io::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::Diagnostic;

/// The state file's name in the output's cache folder.
pub const STATE_FILE: &str = "site.state";

/// 3: the summary counts the latest run's failed endpoints; a state of
/// another format makes one full build.
const STATE_FORMAT: u32 = 3;

/// What a build reported, kept to be reported again by a build that finds
/// the site up to date.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub runs: usize,
    pub endpoints: usize,
    pub round_files: usize,
    pub pages: usize,
    pub files: usize,
    pub bytes: u64,
    pub latest_regressions: usize,
    /// Endpoints whose latest run failed.
    pub latest_failures: usize,
    pub diagnostics: Vec<Diagnostic>,
}

#[derive(Debug, Serialize, Deserialize)]
struct State {
    format: u32,
    version: String,
    /// Hex xxh3-128 of the build's inputs.
    inputs: String,
    summary: Summary,
    /// Every file of the site, in path order, with its
    /// [`crate::stat_stamp`] numbers.
    files: Vec<(String, [i64; 7])>,
}

fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}

/// The summary of the last build when the site in `out` is still exactly
/// what it wrote from inputs fingerprinted `inputs`; `None` otherwise.
pub fn up_to_date(cache_dir: &Path, out: &Path, inputs: u128) -> Option<Summary> {
    let text = read_state(&cache_dir.join(STATE_FILE))?;
    let state: State = serde_json::from_slice(&text).ok()?;
    if state.format != STATE_FORMAT
        || state.version != version()
        || state.inputs != format!("{inputs:032x}")
    {
        return None;
    }
    (site_files(out)? == state.files).then_some(state.summary)
}

/// Records the site just published in `out` as built from `inputs`.
/// Failures only cost the next build its shortcut; a state that cannot be
/// written is removed, so that it never describes an older site.
pub fn save(cache_dir: &Path, out: &Path, inputs: u128, summary: Summary) -> std::io::Result<()> {
    let path = cache_dir.join(STATE_FILE);
    let result = (|| {
        let files = site_files(out).ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "the site holds something other than files and folders",
            )
        })?;
        let state = State {
            format: STATE_FORMAT,
            version: version(),
            inputs: format!("{inputs:032x}"),
            summary,
            files,
        };
        std::fs::create_dir_all(cache_dir)?;
        let mut tmp = tempfile::Builder::new()
            .prefix(".tmp-")
            .tempfile_in(cache_dir)?;
        let guard = crate::cleanup::register(tmp.path());
        serde_json::to_writer(&mut tmp, &state)?;
        tmp.flush()?;
        tmp.persist(&path).map_err(|e| e.error)?;
        drop(guard);
        Ok(())
    })();
    if result.is_err() {
        forget(cache_dir);
    }
    result
}

/// Removes the state (a build that did not record its site).
pub fn forget(cache_dir: &Path) {
    let _ = std::fs::remove_file(cache_dir.join(STATE_FILE));
}

fn read_state(path: &Path) -> Option<Vec<u8>> {
    let file = crate::ingest::input::InputFile::open(path).ok()?;
    crate::ingest::limits::read_document(&file, &Default::default()).ok()
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
        let cache = tmp.path().join("cache");
        std::fs::create_dir_all(out.join("runs")).unwrap();
        std::fs::write(out.join("index.html"), "<p>1</p>").unwrap();
        std::fs::write(out.join("runs/a.html"), "<p>a</p>").unwrap();
        assert_eq!(up_to_date(&cache, &out, 7), None, "no state yet");
        save(&cache, &out, 7, summary()).unwrap();
        assert_eq!(up_to_date(&cache, &out, 7), Some(summary()));
        assert_eq!(up_to_date(&cache, &out, 8), None, "other inputs");
        // A page edited by hand, its size and modification time restored.
        let page = out.join("runs/a.html");
        let mtime = std::fs::metadata(&page).unwrap().modified().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        crate::test_support::write_with_mtime(&page, "<p>b</p>", mtime);
        assert_eq!(up_to_date(&cache, &out, 7), None, "an edited page");
        save(&cache, &out, 7, summary()).unwrap();
        std::fs::write(out.join("extra.html"), "").unwrap();
        assert_eq!(up_to_date(&cache, &out, 7), None, "a file added");
        save(&cache, &out, 7, summary()).unwrap();
        std::fs::remove_file(out.join("extra.html")).unwrap();
        assert_eq!(up_to_date(&cache, &out, 7), None, "a file removed");
        std::fs::write(cache.join(STATE_FILE), "{").unwrap();
        assert_eq!(up_to_date(&cache, &out, 7), None, "a damaged state");
    }
}
