//! The page memo (`src/write/memo.rs`, `src/render/memo.rs`): pages made
//! from the same inputs as the previous build's are linked from the
//! previous site instead of rendered. Whatever changes between builds, the
//! site must stay byte-identical to a `--no-cache` build's; and the memo
//! must actually spare the work (`build -v` counts the pages reused).
//!
//! The archive is a part of the bundled demo archive (`archive/`, in the
//! repository): runs with flame graphs, releases (comparison pages),
//! triage notes and annotations.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use assert_cmd::cargo::CommandCargoExt;

/// The demo runs the test starts with: early runs (baselines), two
/// releases with six profiles each (comparison pages with differential
/// graphs), and runs with one profile each.
const RUNS: &[&str] = &[
    "2026-06-01T0306Z",
    "2026-06-03T0308Z",
    "2026-06-05T0308Z",
    "2026-06-08T0310Z",
    "2026-06-10T0307Z",
    "2026-06-19T0301Z",
    "2026-07-17T0310Z",
    "2026-07-29T0310Z",
    "2026-07-31T0301Z",
];
/// The run added later.
const NEW_RUN: &str = "2026-08-03T0303Z";

struct Case {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    archive: PathBuf,
    out: PathBuf,
}

fn case() -> Case {
    let tmp = tempfile::tempdir().unwrap();
    let dir = std::fs::canonicalize(tmp.path()).unwrap();
    let demo = common::bundled_archive();
    let archive = dir.join("archive");
    for run in RUNS {
        common::copy_dir(
            &demo.join("runs").join(run),
            &archive.join("runs").join(run),
        );
    }
    std::fs::copy(demo.join("perfdash.toml"), archive.join("perfdash.toml")).unwrap();
    // The demo's triage notes of these runs; its annotations come later.
    std::fs::create_dir_all(archive.join("triage")).unwrap();
    for entry in std::fs::read_dir(demo.join("triage")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if RUNS.iter().any(|r| name.starts_with(r)) {
            std::fs::copy(
                demo.join("triage").join(&name),
                archive.join("triage").join(&name),
            )
            .unwrap();
        }
    }
    Case {
        out: dir.join("site"),
        archive,
        dir,
        _tmp: tmp,
    }
}

fn build(archive: &Path, out: &Path, extra: &[&str]) -> Output {
    let o = Command::cargo_bin("perfdash")
        .unwrap()
        .args(["build", "--archive"])
        .arg(archive)
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    o
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The two numbers after `label` in `build -v`'s output.
fn two_after(o: &Output, label: &str) -> (usize, usize) {
    let err = stderr(o);
    let at = err
        .find(label)
        .unwrap_or_else(|| panic!("{label} in {err}"));
    let numbers: Vec<usize> = err[at..]
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .take(2)
        .map(|s| s.parse().unwrap())
        .collect();
    (numbers[0], numbers[1])
}

/// `(rendered, reused)` pages, from `build -v`.
fn pages(o: &Output) -> (usize, usize) {
    two_after(o, "pages: ")
}

/// `(judged as before and extended, judged from their first run)`
/// series of the `changepoint` policy, from `build -v`.
fn changepoint_series(o: &Output) -> (usize, usize) {
    two_after(o, "change points: ")
}

impl Case {
    /// Builds with the cache (and the memo) with `-v`, then without into
    /// a second output; the sites must be byte-identical. Returns the
    /// pages rendered and reused by the cached build.
    fn identical_to_no_cache(&self, step: &str) -> (usize, usize) {
        pages(&self.cached_build_identical_to_no_cache(step))
    }

    /// [`Case::identical_to_no_cache`], returning the cached build's
    /// output.
    fn cached_build_identical_to_no_cache(&self, step: &str) -> Output {
        let cached = build(&self.archive, &self.out, &["-v"]);
        let fresh = self.dir.join("fresh");
        build(&self.archive, &fresh, &["--no-cache"]);
        let (site, expected) = (common::tree(&self.out), common::tree(&fresh));
        let differ: Vec<&str> = site
            .iter()
            .zip(&expected)
            .filter(|(a, b)| a != b)
            .map(|(a, _)| a.0.as_str())
            .collect();
        assert!(
            site.len() == expected.len() && differ.is_empty(),
            "after {step}: the site differs from a --no-cache build ({} vs {} files; differing: {:?})",
            site.len(),
            expected.len(),
            differ
        );
        std::fs::remove_dir_all(&fresh).unwrap();
        cached
    }

    /// The cache's index, which keeps the page memo and the change-point
    /// judgements (and the record of the last site).
    fn memo(&self) -> PathBuf {
        self.dir.join(".perfdash-cache/site/index")
    }

    fn judgements(&self) -> PathBuf {
        self.memo()
    }

    /// The first build; returns the bytes of the cache file `path`
    /// it wrote, after checking that a `--no-cache` build neither reads
    /// nor writes it.
    fn first_build_keeping(&self, path: &Path) -> Vec<u8> {
        self.identical_to_no_cache("the first build");
        let kept = std::fs::read(path).unwrap();
        build(&self.archive, &self.out, &["--no-cache"]);
        assert_eq!(
            std::fs::read(path).unwrap(),
            kept,
            "--no-cache left it alone"
        );
        kept
    }

    /// Copies the bundled archive's run `name` into this archive.
    fn add_run(&self, name: &str) {
        common::copy_dir(
            &common::bundled_archive().join("runs").join(name),
            &self.archive.join("runs").join(name),
        );
    }
}

/// Replaces `from` with `to` in `path` (a new file, never an edit in
/// place of a shared one), with its modification time put back, as
/// `touch -r` does.
fn edit_keeping_mtime(path: &Path, from: &str, to: &str) {
    let mtime = std::fs::metadata(path).unwrap().modified().unwrap();
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains(from), "{from} in {}", path.display());
    std::fs::remove_file(path).unwrap();
    common::write_with_mtime(path, text.replacen(from, to, 1), mtime);
}

fn append(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let old = std::fs::read_to_string(path).unwrap_or_default();
    std::fs::write(path, old + text).unwrap();
}

#[test]
fn after_every_kind_of_change_the_site_is_what_a_no_cache_build_makes() {
    let c = case();
    let first = c.cached_build_identical_to_no_cache("the first build");
    let (rendered, reused) = pages(&first);
    assert_eq!(reused, 0, "nothing to reuse yet");
    assert!(rendered > 0);
    assert!(c.memo().is_file(), "the memo is written with the cache");
    let (known, judged) = changepoint_series(&first);
    assert_eq!(known, 0, "no change-point judgements kept yet");
    assert!(judged > 0);
    assert!(c.judgements().is_file(), "kept for the next build");

    // One new run: the flame pages, the comparisons and the run pages of
    // the older runs are reused; the pages that show the new run are not.
    // An older run's rounds file (`data/runs/<slug>.json`) is linked, not
    // written again: the same inode.
    use std::os::unix::fs::MetadataExt as _;
    let rounds_file = c
        .out
        .join(format!("data/runs/{}.json", RUNS[0].to_lowercase()));
    let inode = std::fs::metadata(&rounds_file).unwrap().ino();
    c.add_run(NEW_RUN);
    let added = c.cached_build_identical_to_no_cache("a run added");
    let (rendered, reused) = pages(&added);
    assert!(reused >= RUNS.len() - 1, "the older runs' pages: {reused}");
    // Every series grew by the new run: each is judged for it alone.
    assert_eq!(
        changepoint_series(&added),
        (judged, 0),
        "{}",
        stderr(&added)
    );
    assert!(rendered > 0, "the new run's pages are rendered");
    assert_eq!(
        std::fs::metadata(&rounds_file).unwrap().ino(),
        inode,
        "an older run's rounds file is linked from the previous site"
    );
    assert!(
        c.out
            .join(format!("data/runs/{}.json", NEW_RUN.to_lowercase()))
            .is_file()
    );

    // A triage note on an older run: shown on that run's page.
    std::fs::write(
        c.archive
            .join(format!("triage/{}--create-order.toml", RUNS[3])),
        format!(
            "run = \"{}\"\nendpoint = \"create-order\"\nlabel = \"noise\"\n\
             note = \"a note written after the fact\"\nauthor = \"Test\"\ndate = 2026-06-20\n",
            RUNS[3]
        ),
    )
    .unwrap();
    c.identical_to_no_cache("a triage note added");

    // An annotation of an older run.
    append(
        &c.archive.join("annotations/events.toml"),
        &format!(
            "[[annotation]]\nrun = \"{}\"\ntext = \"incident: a test\"\n",
            RUNS[4]
        ),
    );
    c.identical_to_no_cache("an annotation added");

    // Settings every page kind shows: an endpoint's name, the commit links.
    let toml = c.archive.join("perfdash.toml");
    edit_keeping_mtime(&toml, "POST /api/orders\"", "POST /api/v2/orders\"");
    c.identical_to_no_cache("an endpoint renamed");
    edit_keeping_mtime(
        &toml,
        "git.example.com/shop/commit",
        "git.example.org/shop/commit",
    );
    c.identical_to_no_cache("the commit links changed");

    // A round of an older run edited, its modification time put back.
    let round = c
        .archive
        .join(format!("runs/{}/create-order/round-2.json", RUNS[5]));
    let text = std::fs::read_to_string(&round).unwrap();
    let at = text.find("\"p(99)\":").unwrap() + "\"p(99)\":".len();
    let digit = text[at..].find(|ch: char| ch.is_ascii_digit()).unwrap() + at;
    let old = &text[digit..digit + 1];
    let new = if old == "9" { "8" } else { "9" };
    edit_keeping_mtime(
        &round,
        &text[at..=digit],
        &format!("{}{new}", &text[at..digit]),
    );
    c.identical_to_no_cache("a round edited under touch -r");

    // A frame of an older run's profile renamed, weights kept: its flame
    // graph, the next run's (its baseline) and the comparisons show the
    // name; only the stacks changed (the page memo's keys hold their
    // digest, `hash::Digested`).
    edit_keeping_mtime(
        &c.archive
            .join(format!("runs/{}/create-order/flame.cpu.collapsed", RUNS[5])),
        "HikariPool.fillPool ",
        "HikariPool.fillPools ",
    );
    c.identical_to_no_cache("a profile's frame renamed under touch -r");

    // A run removed: every series lost a median in the middle, and is
    // judged again from its first run.
    std::fs::remove_dir_all(c.archive.join("runs").join(RUNS[2])).unwrap();
    let removed = c.cached_build_identical_to_no_cache("a run removed");
    let (known, judged) = changepoint_series(&removed);
    assert!(known == 0 && judged > 0, "{}", stderr(&removed));

    // A page the memo would reuse, edited by hand in the live site (size
    // and modification time kept): it is rendered again, the edit gone.
    c.add_run("2026-08-05T0305Z");
    let flame = first_file(&c.out.join("flame"), ".html");
    common::edit_title_keeping_mtime(&flame);
    let (_, reused) = c.identical_to_no_cache("a page edited by hand");
    assert!(reused > 0, "the other pages are still reused");
}

#[test]
fn a_damaged_or_foreign_memo_is_ignored_with_a_notice_and_no_cache_never_touches_it() {
    let c = case();
    let memo = c.first_build_keeping(&c.memo());
    // A byte changed in the memo: its checksum no longer matches.
    let mut damaged = memo.clone();
    let last = damaged.len() - 2;
    damaged[last] ^= 1;
    std::fs::write(c.memo(), &damaged).unwrap();
    c.add_run(NEW_RUN);
    let o = build(&c.archive, &c.out, &["-v"]);
    assert!(
        stderr(&o).contains("ignored the cache index"),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("damaged"), "{}", stderr(&o));
    assert_eq!(pages(&o).1, 0, "nothing reused from a damaged memo");
    // Written by another perfdash: not used, and no news.
    let bytes = std::fs::read(c.memo()).unwrap();
    let version = env!("CARGO_PKG_VERSION").as_bytes();
    let at = bytes
        .windows(version.len())
        .position(|w| w == version)
        .unwrap();
    let mut other = bytes[..at].to_vec();
    other.extend_from_slice(b"0.0.1-other");
    other.extend_from_slice(&bytes[at + version.len()..]);
    std::fs::write(c.memo(), other).unwrap();
    c.add_run("2026-08-05T0305Z");
    let o = build(&c.archive, &c.out, &["-v"]);
    assert!(!stderr(&o).contains("note:"), "{}", stderr(&o));
    assert_eq!(pages(&o).1, 0);
    // Not an index at all: not used either.
    std::fs::write(c.memo(), "garbage").unwrap();
    std::fs::remove_dir_all(c.archive.join("runs").join(NEW_RUN)).unwrap();
    let o = build(&c.archive, &c.out, &["-v"]);
    assert_eq!(pages(&o).1, 0);
    // Each time the site is what a --no-cache build makes, and the memo
    // written afterwards works again.
    c.add_run(NEW_RUN);
    let (_, reused) = c.identical_to_no_cache("the memo rewritten");
    assert!(reused > 0);
}

#[test]
fn damaged_change_point_judgements_are_ignored_with_a_notice_and_judged_again() {
    let c = case();
    let kept = c.first_build_keeping(&c.judgements());
    let mut damaged = kept.clone();
    let middle = damaged.len() / 2;
    damaged[middle] ^= 1;
    std::fs::write(c.judgements(), &damaged).unwrap();
    c.add_run(NEW_RUN);
    let o = c.cached_build_identical_to_no_cache("the judgements damaged");
    let err = stderr(&o);
    assert!(
        err.contains("ignored the cache index") && err.contains("damaged"),
        "{err}"
    );
    let (known, judged) = changepoint_series(&o);
    assert!(known == 0 && judged > 0, "{err}");
    // Cut short: the same.
    std::fs::write(c.judgements(), &kept[..kept.len() / 3]).unwrap();
    let o = c.cached_build_identical_to_no_cache("the judgements cut short");
    assert!(stderr(&o).contains("ignored the cache index"));
    // Rewritten by that build: used again by the next.
    std::fs::remove_dir_all(c.archive.join("runs").join(NEW_RUN)).unwrap();
    c.add_run(NEW_RUN);
    let o = c.cached_build_identical_to_no_cache("the judgements rewritten");
    assert_eq!(changepoint_series(&o).1, 0, "{}", stderr(&o));
}

/// The first file under `dir` (in name order) whose name ends in `suffix`.
fn first_file(dir: &Path, suffix: &str) -> PathBuf {
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .into_iter()
        .map(|e| e.unwrap().into_path())
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    files.sort();
    files.remove(0)
}

fn inode(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .ino()
}

/// Year pages (an endpoint's runs older than its last year) are memoised
/// on everything they show: a new run leaves them as they were, linked
/// from the previous site; an edit of one of their rounds, or a name every
/// page shows, renders them again, and the site is always what a
/// `--no-cache` build makes.
#[test]
fn year_pages_are_linked_after_a_new_run_and_rendered_again_when_what_they_show_changes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = std::fs::canonicalize(tmp.path()).unwrap();
    let archive = dir.join("archive");
    // 60 weeks: each endpoint has a page for 2025.
    let o = Command::cargo_bin("perfdash")
        .unwrap()
        .args(["demo", "--endpoints", "2", "--weeks", "60", "--out"])
        .arg(&archive)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let c = Case {
        out: dir.join("site"),
        archive,
        dir,
        _tmp: tmp,
    };
    let mut runs: Vec<String> = std::fs::read_dir(c.archive.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    runs.sort();
    let (first, latest) = (&runs[0], &runs[runs.len() - 1]);
    let held = c.dir.join("held");
    std::fs::rename(c.archive.join("runs").join(latest), &held).unwrap();
    c.identical_to_no_cache("the first build");
    let year_page = c.out.join("endpoints/cancel-order/2025.html");
    let (before, inode_before) = (std::fs::read(&year_page).unwrap(), inode(&year_page));

    std::fs::rename(&held, c.archive.join("runs").join(latest)).unwrap();
    let (_, reused) = c.identical_to_no_cache("a run added");
    assert!(reused >= 2, "both year pages are reused: {reused}");
    assert_eq!(
        inode(&year_page),
        inode_before,
        "the year page is linked from the previous site"
    );

    // A round of the first (2025) run, edited under touch -r.
    let round = c
        .archive
        .join(format!("runs/{first}/cancel-order/round-1.json"));
    let text = std::fs::read_to_string(&round).unwrap();
    // The p99 of `http_req_duration`: the first "p(99)" after its name.
    let metric = text.find("\"http_req_duration\"").unwrap();
    let at = metric + text[metric..].find("\"p(99)\":").unwrap();
    let end = at + text[at..].find([',', '}']).unwrap();
    // (The same figures are there again for the expected responses.)
    let edited = text.replace(&text[at..end], "\"p(99)\":999.5");
    let mtime = std::fs::metadata(&round).unwrap().modified().unwrap();
    std::fs::remove_file(&round).unwrap();
    common::write_with_mtime(&round, edited, mtime);
    c.identical_to_no_cache("a round of 2025 edited under touch -r");
    let after_edit = std::fs::read(&year_page).unwrap();
    assert_ne!(after_edit, before, "the 2025 page shows the edited round");

    // The endpoint's name, shown by every page.
    edit_keeping_mtime(
        &c.archive.join("perfdash.toml"),
        "POST /api/orders/{id}/cancel\"",
        "POST /api/orders/{id}/cancel-v2\"",
    );
    c.identical_to_no_cache("the endpoint renamed");
    let renamed = std::fs::read_to_string(&year_page).unwrap();
    assert!(
        renamed.contains("cancel-v2"),
        "the 2025 page shows the new name"
    );
}
