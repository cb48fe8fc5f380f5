//! Fault tests: files that change under a build, a poisoned cache, FIFOs,
//! `kill -9` and signals in the middle of a build with a reader polling
//! the site, two builds at once, a full disk, a closed pipe. Each row of
//! the "Crashes, concurrent builds and files that change" table in
//! docs/errors.md names its test here. The long kill loop (200 builds) is
//! `scripts/kill-loop.sh`; these keep to a few seconds each.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command as StdCommand, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use assert_cmd::cargo::CommandCargoExt;

fn perfdash() -> StdCommand {
    StdCommand::cargo_bin("perfdash").unwrap()
}

/// `perfdash build` with `extra` arguments; never hangs the test suite.
fn build(archive: &Path, out: &Path, extra: &[&str]) -> Output {
    let child = perfdash()
        .args(["build", "--archive"])
        .arg(archive)
        .arg("--out")
        .arg(out)
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_with_timeout(child, Duration::from_secs(60))
}

fn wait_with_timeout(mut child: Child, limit: Duration) -> Output {
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            child.kill().unwrap();
            panic!("perfdash did not finish within {limit:?}: it blocked");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.wait_with_output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The entries beside the site (what a build may leave there).
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// A small archive and the folder to build into.
struct Case {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    archive: PathBuf,
    out: PathBuf,
}

fn case() -> Case {
    let tmp = tempfile::tempdir().unwrap();
    let dir = std::fs::canonicalize(tmp.path()).unwrap();
    let archive = dir.join("archive");
    common::story_archive(&archive);
    Case {
        out: dir.join("site"),
        archive,
        dir,
        _tmp: tmp,
    }
}

impl Case {
    /// Builds with the cache into `site`, and without it into a second
    /// output; both must succeed and be byte-identical. Returns the site.
    fn cached_equals_uncached(&self) -> Vec<(String, Vec<u8>)> {
        let cached = build(&self.archive, &self.out, &[]);
        assert_eq!(cached.status.code(), Some(0), "{}", stderr(&cached));
        let fresh_out = self.dir.join("fresh");
        let fresh = build(&self.archive, &fresh_out, &["--no-cache"]);
        assert_eq!(fresh.status.code(), Some(0), "{}", stderr(&fresh));
        let site = common::tree(&self.out);
        assert!(
            site == common::tree(&fresh_out),
            "cached and --no-cache sites differ"
        );
        std::fs::remove_dir_all(&fresh_out).unwrap();
        site
    }

    fn round(&self, run: usize, n: usize) -> PathBuf {
        let mut runs: Vec<PathBuf> = std::fs::read_dir(self.archive.join("runs"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        runs.sort();
        runs[run].join("orders").join(format!("round-{n}.json"))
    }
}

/// Rewrites `path` with `from` replaced by `to` (same length), and puts
/// its modification time back, as `touch -r` does.
fn edit_keeping_mtime(path: &Path, from: &str, to: &str) {
    assert_eq!(from.len(), to.len());
    let mtime = std::fs::metadata(path).unwrap().modified().unwrap();
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains(from), "{from} in {}", path.display());
    common::write_with_mtime(path, text.replacen(from, to, 1), mtime);
}

fn p99_text(path: &Path) -> String {
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    v["metrics"]["http_req_duration"]["values"]["p(99)"].to_string()
}

#[test]
fn an_edit_with_the_modification_time_restored_reaches_the_site() {
    let c = case();
    let before = c.cached_equals_uncached();
    let round = c.round(13, 1);
    let old = p99_text(&round);
    let new = "9".repeat(old.len().min(3)) + &old[old.len().min(3)..];
    edit_keeping_mtime(&round, &old, &new);
    let after = c.cached_equals_uncached();
    assert!(before != after, "the edited round changed the site");
}

#[test]
fn a_file_swapped_mid_build_and_restored_never_leaves_its_numbers() {
    let c = case();
    let before = c.cached_equals_uncached();
    let round = c.round(13, 2);
    let original = std::fs::read(&round).unwrap();
    let mtime = std::fs::metadata(&round).unwrap().modified().unwrap();
    // Swapped (a new file renamed over it), built, then restored with its
    // time: the restored site must be the original one.
    let other = round.with_extension("tmp");
    std::fs::write(&other, common::k6_summary(555.0)).unwrap();
    std::fs::rename(&other, &round).unwrap();
    let swapped = c.cached_equals_uncached();
    assert!(swapped != before);
    common::write_with_mtime(&other, &original, mtime);
    std::fs::rename(&other, &round).unwrap();
    assert!(c.cached_equals_uncached() == before);
}

#[test]
fn a_file_swapped_while_builds_run_never_mixes_into_a_site() {
    // A writer keeps replacing one round (a different p99 each time)
    // while builds run; every site must equal the --no-cache build of one
    // of the two versions.
    let c = case();
    let round = c.round(13, 3);
    let versions = [
        std::fs::read(&round).unwrap(),
        common::k6_summary(555.0).into_bytes(),
    ];
    let mut expected = Vec::new();
    for v in &versions {
        std::fs::write(&round, v).unwrap();
        let out = c.dir.join(format!("expected-{}", expected.len()));
        assert_eq!(
            build(&c.archive, &out, &["--no-cache"]).status.code(),
            Some(0)
        );
        expected.push(common::tree(&out));
    }
    let stop = Arc::new(AtomicBool::new(false));
    let writer = std::thread::spawn({
        let (stop, round, versions) = (stop.clone(), round.clone(), versions.clone());
        // Written beside the archive (same file system), not in the
        // endpoint's folder, where a build would list it as a stray file.
        let tmp = c.dir.join("round-3.swap");
        move || {
            let mut i = 0;
            while !stop.load(Ordering::Relaxed) {
                std::fs::write(&tmp, &versions[i % 2]).unwrap();
                std::fs::rename(&tmp, &round).unwrap();
                i += 1;
                std::thread::sleep(Duration::from_micros(300));
            }
        }
    });
    for _ in 0..6 {
        let o = build(&c.archive, &c.out, &[]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let site = common::tree(&c.out);
        assert!(expected.contains(&site), "a site of neither version");
    }
    stop.store(true, Ordering::Relaxed);
    writer.join().unwrap();
    // Restored, with its first modification time: the cache holds nothing
    // that was read from a file changing under it.
    let mtime = std::fs::metadata(c.archive.join("runs"))
        .unwrap()
        .modified()
        .unwrap();
    common::write_with_mtime(&round, &versions[0], mtime);
    assert_eq!(build(&c.archive, &c.out, &[]).status.code(), Some(0));
    assert!(common::tree(&c.out) == expected[0]);
}

/// How many runs a `build -v` read from their records by `stat`.
fn runs_by_stat(o: &Output) -> usize {
    let err = stderr(o);
    let at = err.find(" runs by stat").unwrap_or_else(|| panic!("{err}"));
    let digits = err[..at]
        .rsplit(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap();
    digits.parse().unwrap()
}

/// Files written less than two seconds before a build get no run record
/// (their `stat` could still hide a write in the same clock tick): wait
/// until the archive is settled, as an archive of past runs is.
fn settle() {
    std::thread::sleep(Duration::from_millis(2100));
}

/// The state kept between builds is three kinds of file (docs/archive.md,
/// "The cache beside the site"): one record per run and one index in the
/// store beside the output, and the site's marker. Nothing else is left
/// beside the output (the lock file goes with its build), in the site, or
/// in the archive.
#[test]
fn the_state_kept_between_builds_is_three_kinds_of_file() {
    let c = case();
    let archive_before = common::tree(&c.archive);
    settle();
    c.cached_equals_uncached();
    let o = build(&c.archive, &c.out, &["-v"]);
    assert_eq!(
        runs_by_stat(&o),
        14,
        "every run has its record: {}",
        stderr(&o)
    );
    assert_eq!(names(&c.dir), [".perfdash-cache", "archive", "site"]);
    let store = c.dir.join(".perfdash-cache");
    assert_eq!(names(&store), ["site"]);
    let kept = names(&store.join("site"));
    let runs = kept
        .iter()
        .filter(|name| {
            name.strip_prefix("run-")
                .and_then(|rest| rest.strip_suffix(".cache"))
                .is_some_and(|hash| hash.len() == 16)
        })
        .count();
    assert_eq!(runs, 14, "one record per run: {kept:?}");
    assert_eq!(kept.len(), runs + 1, "and the index: {kept:?}");
    assert!(kept.contains(&"index".to_string()));
    let hidden: Vec<String> = walkdir::WalkDir::new(&c.out)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| e.path().strip_prefix(&c.out).unwrap().display().to_string())
        .collect();
    assert_eq!(
        hidden,
        [".perfdash-site"],
        "the site keeps one file about itself"
    );
    assert!(
        common::tree(&c.archive) == archive_before,
        "the archive is never written"
    );
}

#[test]
fn runs_come_from_their_records_until_a_file_changes_even_under_touch_r() {
    let c = case();
    settle();
    let before = c.cached_equals_uncached(); // writes the records
    let o = build(&c.archive, &c.out, &["-v"]);
    assert_eq!(runs_by_stat(&o), 14, "every run by stat: {}", stderr(&o));
    assert!(common::tree(&c.out) == before);
    // An edit with the size and modification time restored moves the
    // change time: that run (only) is read again, by content.
    let round = c.round(13, 1);
    let old = p99_text(&round);
    let new = "9".repeat(old.len().min(3)) + &old[old.len().min(3)..];
    edit_keeping_mtime(&round, &old, &new);
    let o = build(&c.archive, &c.out, &["-v"]);
    assert_eq!(runs_by_stat(&o), 13, "{}", stderr(&o));
    let after = c.cached_equals_uncached();
    assert!(before != after, "the edited round changed the site");
    // Just edited, that run's record waits until its files settle.
    let o = build(&c.archive, &c.out, &["-v"]);
    assert_eq!(runs_by_stat(&o), 13, "{}", stderr(&o));
    settle();
    build(&c.archive, &c.out, &[]);
    let o = build(&c.archive, &c.out, &["-v"]);
    assert_eq!(runs_by_stat(&o), 14, "{}", stderr(&o));
    assert!(common::tree(&c.out) == after);
}

/// How many folders a `build -v` listed from the cache, as they were.
fn folders_as_listed(o: &Output) -> usize {
    let err = stderr(o);
    let at = err
        .find(" folders as last listed")
        .unwrap_or_else(|| panic!("{err}"));
    let digits = err[..at]
        .rsplit(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap();
    digits.parse().unwrap()
}

#[test]
fn folders_are_listed_from_the_cache_until_a_name_in_them_changes() {
    let c = case();
    let runs = |i: usize| {
        c.round(i, 1)
            .parent()
            .unwrap()
            .parent()
            .unwrap()
            .to_path_buf()
    };
    settle();
    let before = c.cached_equals_uncached(); // keeps the listings
    // 14 run folders, each with two endpoint folders.
    let o = build(&c.archive, &c.out, &["-v"]);
    assert_eq!(folders_as_listed(&o), 42, "{}", stderr(&o));
    // A round moved out of an old run's endpoint folder: that folder is
    // listed again and the round is gone from the site.
    let round = c.round(5, 2);
    let aside = c.dir.join("round-2.aside");
    std::fs::rename(&round, &aside).unwrap();
    let o = build(&c.archive, &c.out, &["-v"]);
    assert_eq!(folders_as_listed(&o), 41, "{}", stderr(&o));
    assert!(stderr(&o).contains("round 2 missing"), "{}", stderr(&o));
    let without = common::tree(&c.out);
    assert!(without != before, "the round left the site");
    let fresh = c.dir.join("fresh");
    build(&c.archive, &fresh, &["--no-cache"]);
    assert!(common::tree(&fresh) == without, "as without the cache");
    // Changed just now, that folder is not kept until it settles (its
    // times come from a coarse clock).
    let o = build(&c.archive, &c.out, &["-v"]);
    assert_eq!(folders_as_listed(&o), 41, "{}", stderr(&o));
    // Put back: listed again, the site is as before.
    std::fs::rename(&aside, &round).unwrap();
    assert!(c.cached_equals_uncached() == before);
    // A stray file in an old run's folder is reported, every build.
    std::fs::write(runs(3).join("notes.txt"), "by hand").unwrap();
    for _ in 0..2 {
        let o = build(&c.archive, &c.out, &["-v"]);
        assert!(stderr(&o).contains("notes.txt"), "{}", stderr(&o));
    }
    // A new endpoint folder in an old run reaches the site.
    let late = runs(4).join("late-endpoint");
    std::fs::create_dir(&late).unwrap();
    for n in 1..=5 {
        std::fs::write(
            late.join(format!("round-{n}.json")),
            common::k6_summary(50.0),
        )
        .unwrap();
    }
    build(&c.archive, &c.out, &[]);
    assert!(c.out.join("endpoints").join("late-endpoint.html").exists());
    std::fs::remove_dir_all(&late).unwrap();
    std::fs::remove_file(runs(3).join("notes.txt")).unwrap();
    settle();
    build(&c.archive, &c.out, &[]);
    let o = build(&c.archive, &c.out, &["-v"]);
    assert_eq!(folders_as_listed(&o), 42, "settled again: {}", stderr(&o));
    assert!(common::tree(&c.out) == before);
    // A damaged run record (its listings with it) is ignored with a
    // notice: that run's three folders are listed again.
    let file = std::fs::read_dir(c.dir.join(".perfdash-cache/site"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("run-"))
        .unwrap();
    let mut bytes = std::fs::read(&file).unwrap();
    let last = bytes.len() - 20;
    bytes[last] ^= 0x55;
    std::fs::write(&file, &bytes).unwrap();
    let o = build(&c.archive, &c.out, &["-v"]);
    let err = stderr(&o);
    assert!(err.contains("note: ignored the run record in"), "{err}");
    assert_eq!(folders_as_listed(&o), 39, "{err}");
    assert!(common::tree(&c.out) == before);
    let o = build(&c.archive, &c.out, &["-v"]);
    assert_eq!(folders_as_listed(&o), 42, "kept again: {}", stderr(&o));
}

#[test]
fn a_build_with_nothing_changed_writes_nothing_but_a_page_edited_by_hand_is_rebuilt() {
    let c = case();
    settle();
    let before = c.cached_equals_uncached();
    let o = build(&c.archive, &c.out, &[]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stderr(&o).starts_with("up to date"), "{}", stderr(&o));
    assert!(common::tree(&c.out) == before);
    // Its time is reading and the cache only.
    let o = build(&c.archive, &c.out, &["-v"]);
    let time = stderr(&o);
    let time = time.lines().find(|l| l.starts_with("time: ")).unwrap_or("");
    assert!(
        time.starts_with("time: read ") && time.contains(", cache ") && !time.contains("analyse"),
        "{}",
        stderr(&o)
    );
    // A page edited in the live site, size and modification time kept:
    // its change time moved, so the site is built again, whole.
    common::edit_title_keeping_mtime(&c.out.join("index.html"));
    let o = build(&c.archive, &c.out, &[]);
    assert!(stderr(&o).starts_with("built"), "{}", stderr(&o));
    assert!(common::tree(&c.out) == before, "the edit is gone");
    // The clock is an input too: with the build's time set before the
    // last run, that run is not trusted, and the site says so.
    let o = perfdash()
        .args(["build", "--archive"])
        .arg(&c.archive)
        .arg("--out")
        .arg(&c.out)
        .env("PERFDASH_NOW", "2026-01-01T00:00:00Z")
        .output()
        .unwrap();
    assert!(stderr(&o).contains("built"), "{}", stderr(&o));
    assert!(common::tree(&c.out) != before);
    let o = build(&c.archive, &c.out, &[]);
    assert!(stderr(&o).starts_with("built"), "{}", stderr(&o));
    assert!(common::tree(&c.out) == before);
}

#[test]
fn a_damaged_run_record_is_ignored_with_a_notice() {
    let c = case();
    settle();
    let before = c.cached_equals_uncached();
    let cache_dir = c.dir.join(".perfdash-cache").join("site");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&cache_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("run-"))
        .collect();
    files.sort();
    let mut bytes = std::fs::read(&files[5]).unwrap();
    let eol = bytes.iter().position(|&b| b == b'\n').unwrap();
    bytes[eol + 40] ^= 0x55; // inside the record, checksum left as it was
    std::fs::write(&files[5], &bytes).unwrap();
    let o = build(&c.archive, &c.out, &["-v"]);
    assert_eq!(o.status.code(), Some(0));
    let err = stderr(&o);
    assert!(err.contains("note: ignored the run record in"), "{err}");
    assert!(err.contains("checksum does not match"), "{err}");
    assert_eq!(runs_by_stat(&o), 13, "{err}");
    assert!(
        common::tree(&c.out) == before,
        "the site is as without the cache"
    );
    let o = build(&c.archive, &c.out, &["-v"]);
    assert!(!stderr(&o).contains("note:"), "{}", stderr(&o));
    assert_eq!(runs_by_stat(&o), 14, "the record was written again");
}

#[test]
fn a_poisoned_cache_entry_is_ignored_with_a_notice() {
    let c = case();
    let before = c.cached_equals_uncached();
    let cache_dir = c.dir.join(".perfdash-cache").join("site");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&cache_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("run-"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 14, "one cache file per run");
    // A byte of its file entries edited (checksum left as it was), bytes
    // added at the end, and a whole record of another run copied over a
    // run's (its rounds and entries are keyed by the other run's files).
    let mut edited = std::fs::read(&files[13]).unwrap();
    let at = edited.len() - 30;
    edited[at] ^= 0x01;
    std::fs::write(&files[13], &edited).unwrap();
    let mut longer = std::fs::read(&files[11]).unwrap();
    longer.extend_from_slice(b"not a record at all\n");
    std::fs::write(&files[11], &longer).unwrap();
    std::fs::copy(&files[0], &files[12]).unwrap();
    let o = build(&c.archive, &c.out, &[]);
    assert_eq!(o.status.code(), Some(0));
    let err = stderr(&o);
    assert_eq!(
        err.matches("note: ignored the run record in").count(),
        2,
        "{err}"
    );
    assert!(
        common::tree(&c.out) == before,
        "the site is as without the cache"
    );
    // The next build finds a clean cache again.
    let o = build(&c.archive, &c.out, &[]);
    assert!(!stderr(&o).contains("note:"), "{}", stderr(&o));
    assert!(c.cached_equals_uncached() == before);
}

fn mkfifo(path: &Path) {
    let status = StdCommand::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success());
}

#[test]
fn a_fifo_anywhere_never_blocks_a_build() {
    let c = case();
    assert_eq!(build(&c.archive, &c.out, &[]).status.code(), Some(0));
    let run = c
        .round(13, 1)
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    // Found by listing: a round, a triage note. Opened directly: run.toml,
    // resources.csv. In the cache: a run's cache file.
    mkfifo(&run.join("orders/round-6.json"));
    mkfifo(&run.join("run.toml"));
    mkfifo(&run.join("inventory/resources.csv"));
    std::fs::create_dir_all(c.archive.join("triage")).unwrap();
    mkfifo(&c.archive.join("triage/fifo.toml"));
    let cache_dir = c.dir.join(".perfdash-cache/site");
    let cache_file = std::fs::read_dir(&cache_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("run-"))
        .unwrap();
    std::fs::remove_file(&cache_file).unwrap();
    mkfifo(&cache_file);
    let o = build(&c.archive, &c.out, &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    for named in [
        "round-6.json",
        "run.toml",
        "resources.csv",
        "triage/fifo.toml",
    ] {
        assert!(
            err.lines()
                .any(|l| l.starts_with("warning:") && l.contains(named)),
            "{named}: {err}"
        );
    }
    assert!(err.contains("not a regular file"), "{err}");
    assert!(err.contains("note: ignored the run record in"), "{err}");
    // The FIFO in the cache was replaced by a real cache file.
    assert!(std::fs::metadata(&cache_file).unwrap().is_file());
    // perfdash.toml as a FIFO is an error (settings decide every verdict),
    // still without blocking.
    mkfifo(&c.archive.join("perfdash.toml"));
    let o = build(&c.archive, &c.out, &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not a regular file"), "{}", stderr(&o));
}

#[test]
fn a_round_swapped_for_a_fifo_during_builds_never_blocks() {
    let c = case();
    let round = c.round(13, 1);
    let original = std::fs::read(&round).unwrap();
    let fifo = round.with_extension("fifo");
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = std::thread::spawn({
        let (stop, round) = (stop.clone(), round.clone());
        move || {
            let file = round.with_extension("file");
            while !stop.load(Ordering::Relaxed) {
                mkfifo(&fifo);
                std::fs::rename(&fifo, &round).unwrap();
                std::thread::sleep(Duration::from_millis(2));
                std::fs::write(&file, &original).unwrap();
                std::fs::rename(&file, &round).unwrap();
                std::thread::sleep(Duration::from_millis(2));
            }
        }
    });
    for _ in 0..4 {
        let o = build(&c.archive, &c.out, &[]);
        assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
}

/// A small deterministic generator for kill delays.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n.max(1)
    }
}

/// Reads every page of `site` over and over until stopped; every read must
/// succeed and give one of the `allowed` versions of that page. Returns
/// the number of reads.
fn poll_site(
    out: PathBuf,
    allowed: Vec<std::collections::BTreeMap<String, Vec<u8>>>,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<usize> {
    std::thread::spawn(move || {
        let mut reads = 0;
        let pages: Vec<String> = allowed[0].keys().cloned().collect();
        while !stop.load(Ordering::Relaxed) {
            for page in &pages {
                let got = std::fs::read(out.join(page))
                    .unwrap_or_else(|e| panic!("the reader missed {page}: {e}"));
                assert!(
                    allowed.iter().any(|site| site.get(page) == Some(&got)),
                    "the reader saw a partial or unknown {page} ({} bytes)",
                    got.len()
                );
                reads += 1;
            }
        }
        reads
    })
}

/// `kill -9` at random moments of builds while a reader polls every
/// page. CI runs 12 kills on a small archive; `scripts/kill-loop.sh` runs
/// 200 on the bundled archive (`PERFDASH_KILLS`, `PERFDASH_KILL_ARCHIVE`).
#[test]
fn kill_9_at_any_moment_leaves_a_whole_site_and_the_next_build_cleans_up() {
    let c = case();
    let kills: usize = std::env::var("PERFDASH_KILLS")
        .ok()
        .and_then(|k| k.parse().ok())
        .unwrap_or(12);
    let archive = std::env::var_os("PERFDASH_KILL_ARCHIVE")
        .map(PathBuf::from)
        .unwrap_or_else(|| c.archive.clone());
    assert_eq!(build(&archive, &c.out, &[]).status.code(), Some(0));
    // Kills land anywhere within a warm build without the cache (the
    // slower kind; the cached kind is killed as often near its end).
    let started = Instant::now();
    assert_eq!(
        build(&archive, &c.out, &["--no-cache"]).status.code(),
        Some(0)
    );
    let window = started.elapsed().as_micros() as u64;
    let site: std::collections::BTreeMap<String, Vec<u8>> =
        common::tree(&c.out).into_iter().collect();
    let stop = Arc::new(AtomicBool::new(false));
    let reader = poll_site(c.out.clone(), vec![site.clone()], stop.clone());
    let mut rng = Lcg(15);
    let (mut killed, mut finished) = (0, 0);
    for i in 0..kills {
        // Every other build without the cache, so kills land in reading,
        // rendering, writing, the swap and saving the cache alike.
        let mut cmd = perfdash();
        cmd.args(["build", "--wait", "--archive"])
            .arg(&archive)
            .arg("--out")
            .arg(&c.out)
            .args(if i % 2 == 0 {
                &["--no-cache"][..]
            } else {
                &[][..]
            })
            .stderr(Stdio::null());
        let mut child = cmd.spawn().unwrap();
        std::thread::sleep(Duration::from_micros(rng.below(window)));
        let _ = child.kill(); // SIGKILL
        match child.wait().unwrap().code() {
            None => killed += 1,
            Some(_) => finished += 1,
        }
        assert!(c.out.join("index.html").is_file(), "a site is in place");
    }
    let leftovers = names(&c.dir).len() - 3;
    let o = build(&archive, &c.out, &["--verbose"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    stop.store(true, Ordering::Relaxed);
    let reads = reader.join().unwrap();
    let left_after = names(&c.dir).len().saturating_sub(3);
    eprintln!(
        "kill loop: {kills} builds, {killed} killed mid-build, {finished} finished first; \
         the reader read {reads} pages, none missing or partial; {leftovers} leftover(s) \
         before the last build, {left_after} after"
    );
    assert!(killed > 0, "no kill landed during a build");
    assert_eq!(
        common::tree(&c.out)
            .into_iter()
            .collect::<std::collections::BTreeMap<_, _>>(),
        site
    );
    assert_eq!(
        names(&c.dir),
        [".perfdash-cache", "archive", "site"],
        "no staging, old site or lock file left"
    );
    // Run files staged by killed builds (`.tmp-…`) are gone.
    let cache = names(&c.dir.join(".perfdash-cache/site"));
    assert!(cache.iter().all(|n| !n.starts_with(".tmp-")), "{cache:?}");
    assert!(cache.iter().any(|n| n.starts_with("run-")), "{cache:?}");
}

#[test]
fn sigterm_and_sigint_remove_what_the_build_wrote() {
    let c = case();
    let started = Instant::now();
    assert_eq!(
        build(&c.archive, &c.out, &["--no-cache"]).status.code(),
        Some(0)
    );
    let build_time = started.elapsed();
    let site = common::tree(&c.out);
    let mut rng = Lcg(7);
    let window = build_time.as_micros() as u64 * 3 / 2;
    let mut interrupted = 0;
    for i in 0..8 {
        let mut child = perfdash()
            .args(["build", "--no-cache", "--archive"])
            .arg(&c.archive)
            .arg("--out")
            .arg(&c.out)
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(rng.below(window)));
        let signal = if i % 2 == 0 { "TERM" } else { "INT" };
        let _ = StdCommand::new("kill")
            .args(["-s", signal, &child.id().to_string()])
            .status();
        let status = child.wait().unwrap();
        if status.code().is_none() {
            interrupted += 1; // ended by the signal, as it should
        }
        let left = names(&c.dir);
        assert!(
            left.iter().all(|n| !n.starts_with(".site.")),
            "after SIG{signal}: {left:?}"
        );
        assert!(common::tree(&c.out) == site, "the site is whole");
    }
    assert!(interrupted > 0, "no signal landed during a build");
}

#[test]
fn a_second_build_waits_or_is_refused_with_a_clear_message() {
    let c = case();
    assert_eq!(build(&c.archive, &c.out, &[]).status.code(), Some(0));
    let site = common::tree(&c.out);
    // Another builder holds the lock.
    let held = perfdash::write::OutputLock::acquire(&c.out, Default::default()).unwrap();
    let o = build(&c.archive, &c.out, &[]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("another perfdash build is writing"), "{err}");
    assert!(err.contains("--wait"), "{err}");
    assert!(
        common::tree(&c.out) == site,
        "the refused build touched nothing"
    );
    let waiting = perfdash()
        .args(["build", "--wait", "--archive"])
        .arg(&c.archive)
        .arg("--out")
        .arg(&c.out)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // It really waits: the kernel lists it as blocked on the lock file (a
    // sleep alone could let it start after the lock is gone).
    assert!(
        waits_on_lock(&c.dir.join(".site.perfdash-lock"), Duration::from_secs(60)),
        "the --wait build never blocked on the lock"
    );
    drop(held);
    let o = wait_with_timeout(waiting, Duration::from_secs(60));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));

    // Two builds started together, with a reader polling: both finish,
    // one after the other, and leave one whole site.
    let stop = Arc::new(AtomicBool::new(false));
    let reader = poll_site(
        c.out.clone(),
        vec![site.iter().cloned().collect()],
        stop.clone(),
    );
    let spawn = || {
        perfdash()
            .args(["build", "--wait", "--archive"])
            .arg(&c.archive)
            .arg("--out")
            .arg(&c.out)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    for child in [a, b] {
        let o = wait_with_timeout(child, Duration::from_secs(60));
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    stop.store(true, Ordering::Relaxed);
    assert!(reader.join().unwrap() > 0);
    assert_eq!(names(&c.dir), [".perfdash-cache", "archive", "site"]);
}

/// Whether a lock on `path` is waited for (`/proc/locks` lists a blocked
/// request, `->`, on its inode), polled until `limit`.
fn waits_on_lock(path: &Path, limit: Duration) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    let Ok(ino) = std::fs::metadata(path).map(|m| m.ino()) else {
        return false;
    };
    let started = Instant::now();
    while started.elapsed() < limit {
        let locks = std::fs::read_to_string("/proc/locks").unwrap_or_default();
        let blocked = locks.lines().any(|l| {
            l.contains("->")
                && l.split_whitespace()
                    .any(|f| f.rsplit(':').next() == Some(&ino.to_string()))
        });
        if blocked {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

/// A small tmpfs mounted for one test; unmounted when dropped. `None`
/// (with the reason printed) where this process may not mount.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(at: &Path, size: &str) -> Option<Tmpfs> {
        std::fs::create_dir_all(at).unwrap();
        let o = StdCommand::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .output();
        match o {
            Ok(o) if o.status.success() => Some(Tmpfs(at.to_path_buf())),
            Ok(o) => {
                eprintln!(
                    "skipped: cannot mount a tmpfs here ({}); the full-disk test needs root or CAP_SYS_ADMIN",
                    String::from_utf8_lossy(&o.stderr).trim()
                );
                None
            }
            Err(e) => {
                eprintln!("skipped: cannot run mount ({e})");
                None
            }
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = StdCommand::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_full_disk_leaves_the_previous_site_and_says_how_much_is_needed() {
    let c = case();
    let Some(disk) = Tmpfs::mount(&c.dir.join("disk"), "4m") else {
        return;
    };
    let out = disk.0.join("site");
    let first = build(&c.archive, &out, &[]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let site = common::tree(&out);
    // Fill the disk. (Not "but for a little room": a rebuild links the
    // files that did not change from the previous site, and would fit.)
    let filler = disk.0.join("filler");
    let free = rustix::fs::statvfs(&disk.0).unwrap();
    let free = free.f_bavail * free.f_frsize;
    std::fs::write(&filler, vec![0u8; free as usize]).unwrap();
    let o = build(&c.archive, &out, &["--no-cache"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("not enough space") && err.contains("needs about"),
        "{err}"
    );
    assert!(err.contains("previous site is as it was"), "{err}");
    assert!(common::tree(&out) == site, "the previous site is untouched");
    let mut left = names(&disk.0);
    left.retain(|n| n != ".perfdash-cache");
    assert_eq!(
        left,
        ["filler", "site"],
        "nothing of the failed build is left"
    );

    // Running out halfway (the check before writing cannot know the
    // future): the writer removes its files and says so.
    std::fs::OpenOptions::new()
        .write(true)
        .open(&filler)
        .unwrap()
        .set_len(free - 64 * 1024)
        .unwrap();
    let staging = perfdash::write::Staging::begin(
        &perfdash::write::WriteOptions {
            out: out.clone(),
            archive: c.archive.clone(),
            ..Default::default()
        },
        None,
    )
    .unwrap();
    let page = vec![b'x'; 16 * 1024];
    let err = (0..100)
        .find_map(|i| staging.add(&format!("p/{i}.html"), &page).err())
        .expect("the disk fills up");
    drop(staging);
    assert!(err.to_string().contains("no space left"), "{err}");
    assert!(common::tree(&out) == site);
    let mut left = names(&disk.0);
    left.retain(|n| n != ".perfdash-cache");
    assert_eq!(left, ["filler", "site"]);

    // A mount point as --out: refused, with what to do instead.
    std::fs::remove_file(&filler).unwrap();
    let o = build(&c.archive, &disk.0, &["--force"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("is a mount point"), "{}", stderr(&o));
    assert!(stderr(&o).contains("--out"), "{}", stderr(&o));
}

#[test]
fn strict_writes_nothing_at_all() {
    let c = case();
    std::fs::write(c.round(3, 2), "{ truncated").unwrap();
    let out = c.dir.join("new").join("site");
    let o = build(&c.archive, &out, &["--strict"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(names(&c.dir), ["archive"], "no site, cache, lock or folder");
}

#[test]
fn linked_runs_triage_and_cache_folders_are_not_followed() {
    let c = case();
    assert_eq!(build(&c.archive, &c.out, &[]).status.code(), Some(0));
    // A linked cache folder: not used, not written through.
    let cache = c.dir.join(".perfdash-cache/site");
    let elsewhere = c.dir.join("elsewhere");
    std::fs::rename(&cache, &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &cache).unwrap();
    let before = common::tree(&elsewhere);
    let o = build(&c.archive, &c.out, &[]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("symbolic link"), "{}", stderr(&o));
    assert!(common::tree(&elsewhere) == before);
    // A linked triage folder: a warning naming it.
    let labels = c.dir.join("labels");
    std::fs::create_dir(&labels).unwrap();
    std::os::unix::fs::symlink(&labels, c.archive.join("triage")).unwrap();
    let o = build(&c.archive, &c.out, &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("warning: triage: is a symbolic link; links are not followed"),
        "{}",
        stderr(&o)
    );
    // A linked runs folder: nothing to read, said plainly.
    let runs = c.archive.join("runs");
    let real_runs = c.dir.join("real-runs");
    std::fs::rename(&runs, &real_runs).unwrap();
    std::os::unix::fs::symlink(&real_runs, &runs).unwrap();
    let o = build(&c.archive, &c.out, &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("runs: is a symbolic link"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_name_with_control_characters_cannot_fake_a_line() {
    let c = case();
    let run = c
        .round(13, 1)
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    let evil = run.join("x\nwarning: all clear \u{1b}[2K");
    std::fs::create_dir(&evil).unwrap();
    std::fs::write(evil.join("round-1.json"), "{ broken").unwrap();
    let o = build(&c.archive, &c.out, &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        !err.lines().any(|l| l.starts_with("warning: all clear")),
        "{err}"
    );
    assert!(!err.contains('\u{1b}'), "{err}");
    assert!(err.contains("x\\nwarning: all clear \\u{1b}[2K"), "{err}");
}

#[test]
fn output_into_a_closed_pipe_ends_quietly() {
    let c = case();
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let child = perfdash()
        .arg("inspect")
        .arg(c.round(0, 1))
        .stdout(writer)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let o = wait_with_timeout(child, Duration::from_secs(60));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stderr(&o), "", "no panic message");
}

#[test]
fn the_polling_reader_does_see_a_missing_page() {
    // Guards the helper the kill tests rely on: it cannot pass blindly.
    let c = case();
    assert_eq!(build(&c.archive, &c.out, &[]).status.code(), Some(0));
    let site: std::collections::BTreeMap<String, Vec<u8>> =
        common::tree(&c.out).into_iter().collect();
    let stop = Arc::new(AtomicBool::new(false));
    std::fs::remove_file(c.out.join("index.html")).unwrap();
    let reader = poll_site(c.out.clone(), vec![site], stop.clone());
    assert!(reader.join().is_err(), "a missing page is seen");
}
