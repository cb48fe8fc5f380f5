//! The real bookshop archive (`tests/fixtures/real-archive/`), recorded by
//! `tests/fixtures/real-archive-src/record.sh` with k6, Locust, JMeter and
//! py-spy against a small Python service: six v1 baseline runs over three
//! commits, one run while the service was down, two runs of v2 (an N+1 query
//! on book-reviews, a faster author-stats). How it was recorded and what
//! perfdash said about it when it was recorded: the README.md beside the
//! recording script.
//!
//! These tests check only facts of the recording that no change to the
//! analysis should move: the site builds, and it holds the runs and
//! endpoints that were recorded. Verdicts, attribution and the outage's
//! state are the business of the tests that change them.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// Every run of the archive, oldest first.
const RUNS: [&str; 9] = [
    "2026-12-03T1815Z",
    "2026-12-03T1821Z",
    "2026-12-03T1827Z",
    "2026-12-03T1833Z",
    "2026-12-03T1839Z",
    "2026-12-03T1845Z",
    "2026-12-03T1851Z",
    "2026-12-03T1858Z",
    "2026-12-03T1904Z",
];
/// The run recorded while the service was stopped: every request refused.
const OUTAGE_RUN: &str = RUNS[6];
/// The two runs of v2 (one commit): the N+1 query and the faster author stats.
const V2_RUNS: [&str; 2] = [RUNS[7], RUNS[8]];
/// The endpoints, each an endpoint folder in every run.
const ENDPOINTS: [&str; 5] = [
    "author-stats",
    "book-detail",
    "book-reviews",
    "book-search",
    "create-order",
];

fn archive() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/real-archive")
}

/// A `run.toml` value as written (`key = "value"`).
fn run_toml_value(run: &str, key: &str) -> Option<String> {
    let text = std::fs::read_to_string(archive().join("runs").join(run).join("run.toml")).unwrap();
    let table: toml::Table = toml::from_str(&text).unwrap();
    table.get(key).and_then(|v| v.as_str()).map(str::to_string)
}

#[test]
fn the_archive_holds_the_recorded_runs_outage_included() {
    let found: Vec<String> = {
        let mut names: Vec<String> = std::fs::read_dir(archive().join("runs"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    };
    assert_eq!(found, RUNS, "the archive's run folders");
    for run in RUNS {
        let dir = archive().join("runs").join(run);
        let mut endpoints: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap())
            .filter(|e| e.file_type().unwrap().is_dir())
            .map(|e| e.file_name().into_string().unwrap())
            .collect();
        endpoints.sort();
        assert_eq!(endpoints, ENDPOINTS, "{run}");
        assert_eq!(
            run_toml_value(run, "branch").as_deref(),
            Some("main"),
            "{run}"
        );
        for endpoint in ENDPOINTS {
            let rounds = std::fs::read_dir(dir.join(endpoint))
                .unwrap()
                .filter(|e| {
                    let name = e.as_ref().unwrap().file_name();
                    let name = name.to_string_lossy();
                    name.starts_with("round-")
                        && (name.ends_with("_stats.csv")
                            || name.ends_with(".ndjson.gz")
                            || name.ends_with(".jtl.gz")
                            || (name.ends_with(".json") && endpoint != "book-reviews"))
                })
                .count();
            assert_eq!(rounds, 5, "{run}/{endpoint}: five rounds");
        }
    }
    // Six baselines over three commits; the outage on the last of them; v2
    // one commit that no baseline has.
    let commit = |run: &str| run_toml_value(run, "commit").unwrap();
    let baseline: BTreeSet<String> = RUNS[..6].iter().map(|r| commit(r)).collect();
    assert_eq!(baseline.len(), 3, "{baseline:?}");
    assert_eq!(commit(OUTAGE_RUN), commit(RUNS[5]));
    assert_eq!(commit(V2_RUNS[0]), commit(V2_RUNS[1]));
    assert!(!baseline.contains(&commit(V2_RUNS[0])));
    assert!(
        run_toml_value(OUTAGE_RUN, "notes")
            .unwrap()
            .starts_with("outage:")
    );
}

#[test]
fn the_site_builds_with_every_recorded_endpoint_and_run() {
    let tmp = tempfile::tempdir().unwrap();
    let site = tmp.path().join("site");
    let output = Command::cargo_bin("perfdash")
        .unwrap()
        // The build's clock decides which run times are trusted: fixed at the
        // day after the recording, so that a machine's clock cannot matter.
        .env("PERFDASH_NOW", "2026-12-04T00:00:00Z")
        .args(["build", "--archive"])
        .arg(archive())
        .arg("--out")
        .arg(&site)
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    // 0, or 1 when the build warns (the outage's rounds measured no latency).
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "{:?}: {stderr}",
        output.status
    );
    assert!(site.join("index.html").is_file(), "{stderr}");
    let analysis: serde_json::Value =
        serde_json::from_slice(&std::fs::read(site.join("data/analysis.json")).unwrap()).unwrap();
    let endpoints: Vec<&str> = analysis["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    assert_eq!(endpoints, ENDPOINTS);
    let runs: BTreeSet<&str> = analysis["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    // Every run the service answered is on the site, and nothing else is;
    // the outage run's place is for its own tests to decide.
    let answered: BTreeSet<&str> = RUNS.iter().copied().filter(|r| *r != OUTAGE_RUN).collect();
    assert!(runs.is_superset(&answered), "{runs:?}");
    assert!(runs.iter().all(|r| RUNS.contains(r)), "{runs:?}");
    for endpoint in analysis["endpoints"].as_array().unwrap() {
        let points: BTreeSet<&str> = endpoint["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["run"].as_str().unwrap())
            .collect();
        assert!(
            points.is_superset(&answered),
            "{}: {points:?}",
            endpoint["id"]
        );
    }
    for run in answered {
        let slug = run.to_ascii_lowercase();
        assert!(site.join(format!("runs/{slug}.html")).is_file(), "{run}");
    }
    for endpoint in ENDPOINTS {
        assert!(
            site.join(format!("endpoints/{endpoint}.html")).is_file(),
            "{endpoint}"
        );
    }
}
