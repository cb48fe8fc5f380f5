//! Helpers shared by the integration tests: small archives written into
//! temporary folders, in real k6 `handleSummary()` shape.
#![allow(dead_code)]
// Each test binary compiles these helpers as its own private module and
// uses a subset of them, so `pub` here means "for the test files", which
// `unreachable_pub` cannot see.
#![allow(unreachable_pub)]

use std::path::{Path, PathBuf};

/// Where the shared third-party fixtures live, if this checkout has them
/// (`perfdash::shared_fixtures`: skipped with a message without them, a
/// failure when `CI` is set).
pub fn shared_fixtures() -> Option<PathBuf> {
    perfdash::shared_fixtures::dir()
}

/// The bundled demo archive: `archive/` when this checkout has it (the
/// generator's tests check that it is what the generator writes), else
/// generated once per test binary into a temporary folder (a packaged
/// crate leaves `archive/` out).
pub fn bundled_archive() -> &'static Path {
    static GENERATED: std::sync::OnceLock<(tempfile::TempDir, PathBuf)> =
        std::sync::OnceLock::new();
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("archive");
    if committed.join("runs").is_dir() {
        static COMMITTED: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
        return COMMITTED.get_or_init(|| committed);
    }
    let (_, root) = GENERATED.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("archive");
        eprintln!("archive/ is not present: generating the demo archive once for these tests");
        perfdash::demo::generate(&root, &perfdash::demo::DemoOptions::default()).unwrap();
        (dir, root)
    });
    root
}

/// A k6 handleSummary() document with the given round p99.
pub fn k6_summary(p99: f64) -> String {
    serde_json::json!({
        "root_group": {"name": "", "path": "", "id": "d41d8cd98f00b204e9800998ecf8427e", "groups": [], "checks": []},
        "options": {"summaryTrendStats": ["avg", "min", "med", "max", "p(90)", "p(95)", "p(99)", "count"], "summaryTimeUnit": "", "noColor": false},
        "state": {"isStdOutTTY": false, "isStdErrTTY": false, "testRunDurationMs": 60000.0},
        "metrics": {
            "http_req_duration": {"type": "trend", "contains": "time", "values": {
                "avg": p99 / 3.0, "min": p99 / 10.0, "med": p99 / 4.0, "max": p99 * 1.4,
                "p(90)": p99 / 2.0, "p(95)": p99 / 1.5, "p(99)": p99, "count": 6000.0}},
            "http_reqs": {"type": "counter", "contains": "default", "values": {"count": 6000, "rate": 100.0}},
            "http_req_failed": {"type": "rate", "contains": "default", "values": {"rate": 0.0, "passes": 0, "fails": 6000}}
        }
    })
    .to_string()
}

/// Writes an archive: `runs[i]` is a list of (endpoint, round p99s).
/// Run ids are consecutive days from 2026-03-02.
pub fn write_archive(root: &Path, runs: &[Vec<(&str, Vec<f64>)>]) {
    for (i, endpoints) in runs.iter().enumerate() {
        let day =
            chrono::NaiveDate::from_ymd_opt(2026, 3, 2).unwrap() + chrono::Duration::days(i as i64);
        let run_dir = root
            .join("runs")
            .join(format!("{}T0300Z", day.format("%Y-%m-%d")));
        for (endpoint, rounds) in endpoints {
            let dir = run_dir.join(endpoint);
            std::fs::create_dir_all(&dir).unwrap();
            for (n, p99) in rounds.iter().enumerate() {
                std::fs::write(dir.join(format!("round-{}.json", n + 1)), k6_summary(*p99))
                    .unwrap();
            }
        }
    }
}

/// A steady history with a regression on `orders` in the last three runs.
pub fn story_archive(root: &Path) {
    let mut runs = Vec::new();
    for i in 0..14 {
        let wobble = 1.0 + ((i * 7) % 5) as f64 / 100.0;
        let orders = if i >= 11 { 130.0 } else { 100.0 } * wobble;
        runs.push(vec![
            (
                "orders",
                vec![
                    orders,
                    orders * 1.02,
                    orders * 0.98,
                    orders * 2.0,
                    orders * 1.01,
                ],
            ),
            ("inventory", vec![40.0 * wobble; 5]),
        ]);
    }
    write_archive(root, &runs);
}

/// Every file under `dir` with its bytes, sorted by relative path.
pub fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = walkdir::WalkDir::new(dir)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            (
                e.path()
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

pub mod golden_archive;
pub mod object_store;
pub mod site_archives;

/// Copies a folder and everything in it (files get new inodes and times).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Writes `bytes` to `path` and puts `mtime` back as its modification
/// time, as `touch -r` does (its change time still moves).
pub fn write_with_mtime(path: &Path, bytes: impl AsRef<[u8]>, mtime: std::time::SystemTime) {
    std::fs::write(path, bytes).unwrap();
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
}

/// Changes one character of a page's `<title>` by hand, keeping its size
/// and modification time.
pub fn edit_title_keeping_mtime(page: &Path) {
    let text = std::fs::read_to_string(page).unwrap();
    let at = text.find("<title>").unwrap() + "<title>".len();
    let edited = format!("{}X{}", &text[..at], &text[at + 1..]);
    let mtime = std::fs::metadata(page).unwrap().modified().unwrap();
    write_with_mtime(page, edited, mtime);
}

/// What `perfdash build` does, through the library, with default options
/// (a warning is not an error).
pub fn build_site(archive: &Path, out: &Path) {
    perfdash::pipeline::build(&perfdash::pipeline::BuildOptions {
        archive: archive.to_path_buf(),
        out: out.to_path_buf(),
        ..Default::default()
    })
    .unwrap();
}
