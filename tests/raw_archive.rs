//! Raw round files inside an archive: precedence over summaries,
//! cross-checks, run-level files split by tag, warm-up settings and the
//! round cache. Uses the project's own real k6 run (tests/fixtures/k6-real).

use std::path::{Path, PathBuf};

use perfdash::cache::{ReadCounts, Store};
use perfdash::ingest::{LoadOptions, load_archive_with};

const RUN: &str = "2026-05-04T0300Z";

fn k6_real(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/k6-real")
        .join(name)
}

fn put(root: &Path, rel: &str, from: &Path) {
    let to = root.join(rel);
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::copy(from, to).unwrap();
}

fn write(root: &Path, rel: &str, text: &str) {
    let to = root.join(rel);
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::write(to, text).unwrap();
}

fn load(root: &Path, warmup: Option<f64>) -> perfdash::ingest::Loaded {
    load_archive_with(
        root,
        &LoadOptions {
            warmup_override: warmup,
            ..Default::default()
        },
    )
    .unwrap()
}

const TRIMMED_P99: f64 = 27.534052199999994; // tests/fixtures/k6-real/README.md
const K6_P99: f64 = 38.41685909999992; // round-1.summary.json

#[test]
fn raw_file_wins_over_summary_which_becomes_a_cross_check() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    put(
        root,
        &format!("runs/{RUN}/orders/round-1.json"),
        &k6_real("round-1.summary.json"),
    );
    put(
        root,
        &format!("runs/{RUN}/orders/round-1.ndjson.gz"),
        &k6_real("round-1.ndjson.gz"),
    );
    // Round 2 has only a summary.
    put(
        root,
        &format!("runs/{RUN}/orders/round-2.json"),
        &k6_real("round-1.summary.json"),
    );
    let loaded = load(root, None);
    assert!(loaded.diagnostics.is_empty(), "{:?}", loaded.diagnostics);
    let rounds = &loaded.archive.runs[0].endpoints["orders"].rounds;
    assert_eq!(rounds.len(), 2);
    let r1 = &rounds[0];
    assert_eq!(r1.source, format!("runs/{RUN}/orders/round-1.ndjson.gz"));
    assert_eq!(r1.warmup_s, Some(15.0));
    assert!((r1.stats.p99_ms - TRIMMED_P99).abs() < 1e-9);
    let check = r1
        .cross_check
        .as_ref()
        .expect("the summary is kept as a cross-check");
    assert_eq!(check.source, format!("runs/{RUN}/orders/round-1.json"));
    assert!(check.agrees);
    assert!((check.summary_p99_ms - K6_P99).abs() < 1e-9);
    assert!((check.raw_untrimmed_p99_ms - K6_P99).abs() < 1e-9);
    assert_eq!(rounds[1].warmup_s, None);
    assert_eq!(rounds[1].stats.p99_ms, K6_P99);
}

#[test]
fn a_summary_of_another_test_is_flagged() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    put(
        root,
        &format!("runs/{RUN}/orders/round-1.ndjson.gz"),
        &k6_real("round-1.ndjson.gz"),
    );
    write(
        root,
        &format!("runs/{RUN}/orders/round-1.json"),
        r#"{"root_group":{},"metrics":{"http_req_duration":{"avg":5,"min":1,"med":4,"max":90,"p(90)":8,"p(95)":9,"p(99)":80}}}"#,
    );
    let loaded = load(root, None);
    let r1 = &loaded.archive.runs[0].endpoints["orders"].rounds[0];
    assert!(!r1.cross_check.as_ref().unwrap().agrees);
    assert_eq!(loaded.diagnostics.len(), 1, "{:?}", loaded.diagnostics);
    let d = &loaded.diagnostics[0];
    assert!(d.path.ends_with("orders/round-1.json"));
    assert!(
        d.message.contains("more than trimming explains"),
        "{}",
        d.message
    );
}

#[test]
fn run_level_file_is_split_by_tag_with_mapping_and_warmups() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    put(
        root,
        &format!("runs/{RUN}/round-1.ndjson.gz"),
        &k6_real("round-1.ndjson.gz"),
    );
    put(
        root,
        "runs/2026-05-06T0300Z/round-1.csv.gz",
        &k6_real("round-1.csv.gz"),
    );
    write(
        root,
        "runs/2026-05-06T0300Z/run.toml",
        "warmup_seconds = 0\n",
    );
    // Default id: a slug of the `name` tag value "GET /orders".
    let loaded = load(root, None);
    assert!(loaded.diagnostics.is_empty(), "{:?}", loaded.diagnostics);
    let runs = &loaded.archive.runs;
    let r = &runs[0].endpoints["get-orders"].rounds[0];
    assert!((r.stats.p99_ms - TRIMMED_P99).abs() < 1e-9);
    // run.toml's warm-up applies to its run only; CSV prints 6 decimals.
    let r = &runs[1].endpoints["get-orders"].rounds[0];
    assert_eq!(r.warmup_s, Some(0.0));
    assert!((r.stats.p99_ms - K6_P99).abs() < 1e-6);

    // A mapping in perfdash.toml, and a per-endpoint warm-up.
    write(
        root,
        "perfdash.toml",
        "[raw.tags]\n\"GET /orders\" = \"order-list\"\n[endpoints.order-list]\nwarmup_seconds = 0\n",
    );
    let loaded = load(root, None);
    let r = &loaded.archive.runs[0].endpoints["order-list"].rounds[0];
    assert!((r.stats.p99_ms - K6_P99).abs() < 1e-9);
    // --warmup overrides everything.
    let loaded = load(root, Some(15.0));
    let r = &loaded.archive.runs[1].endpoints["order-list"].rounds[0];
    assert_eq!(r.warmup_s, Some(15.0));
    assert!((r.stats.p99_ms - K6_P99).abs() > 1.0);
}

#[test]
fn cache_rereads_only_what_changed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("archive");
    for run in ["2026-05-04T0300Z", "2026-05-06T0300Z"] {
        put(
            &root,
            &format!("runs/{run}/orders/round-1.ndjson.gz"),
            &k6_real("round-1.ndjson.gz"),
        );
        put(
            &root,
            &format!("runs/{run}/orders/round-2.json"),
            &k6_real("round-1.summary.json"),
        );
    }
    let cache_dir = dir.path().join(".perfdash-cache");
    let run_with = |warmup: Option<f64>| {
        let opts = LoadOptions {
            warmup_override: warmup,
            cache: Some(Store::new(&cache_dir)),
            ..Default::default()
        };
        let loaded = load_archive_with(&root, &opts).unwrap();
        // What `perfdash build` does once the site is written.
        opts.cache.as_ref().unwrap().save(None);
        (loaded, opts.cache.unwrap().counts())
    };
    let (first, counts) = run_with(None);
    assert_eq!(read_and_cached(counts), (4, 0));
    let (second, counts) = run_with(None);
    assert_eq!(read_and_cached(counts), (0, 4));
    assert_eq!(
        format!("{:?}", first.archive.runs),
        format!("{:?}", second.archive.runs),
        "cached results equal fresh ones"
    );
    // A new run: only its files are read.
    put(
        &root,
        "runs/2026-05-08T0300Z/orders/round-1.ndjson.gz",
        &k6_real("round-1.ndjson.gz"),
    );
    assert_eq!(read_and_cached(run_with(None).1), (1, 4));
    // A changed file: only it is read again.
    write(
        &root,
        "runs/2026-05-04T0300Z/orders/round-2.json",
        &std::fs::read_to_string(k6_real("round-1.summary.json"))
            .unwrap()
            .replace("38.41685909999992", "38.5"),
    );
    assert_eq!(read_and_cached(run_with(None).1), (1, 4));
    // A changed warm-up: everything is recomputed.
    assert_eq!(read_and_cached(run_with(Some(5.0)).1), (5, 0));
    assert_eq!(read_and_cached(run_with(Some(5.0)).1), (0, 5));
}

/// Issue 3 done-when: a rebuild of the bundled archive with nothing
/// changed re-reads no round file.
#[test]
fn bundled_archive_rebuild_reads_nothing_again() {
    let archive = Path::new(env!("CARGO_MANIFEST_DIR")).join("archive");
    if !archive.join("runs").is_dir() {
        println!("skipped: bundled archive not present");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let load = || {
        let opts = LoadOptions {
            cache: Some(Store::beside_output(&dir.path().join("site"))),
            ..Default::default()
        };
        let loaded = load_archive_with(&archive, &opts).unwrap();
        let rounds: usize = loaded
            .archive
            .runs
            .iter()
            .flat_map(|r| r.endpoints.values())
            .map(|e| e.rounds.len())
            .sum();
        opts.cache.as_ref().unwrap().save(None);
        (rounds, opts.cache.unwrap().counts())
    };
    let (rounds, first) = load();
    assert!(rounds > 1000);
    assert_eq!(first.cached, 0);
    assert!(first.read >= rounds);
    assert!(dir.path().join(".perfdash-cache").is_dir());
    let (again, second) = load();
    assert_eq!(again, rounds);
    assert_eq!(read_and_cached(second), (0, first.read));
}

/// Round files read and taken from the cache. (Whether whole runs came
/// from their records depends on how long ago the test wrote its files:
/// see `tests/integrity.rs` for those.)
fn read_and_cached(counts: ReadCounts) -> (usize, usize) {
    (counts.read, counts.cached)
}
