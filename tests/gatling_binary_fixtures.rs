//! The binary `simulation.log` that Gatling's own test reads
//! (`../shared/fixtures/gatling/gatling-charts/src/test/resources/known_stats/simulation.log`,
//! header 3.12.1, gatling commit 8bb193bd), against the statistics that
//! test (`LogFileReaderSpec`, same commit) states for it, computed the way
//! Gatling computes them; then perfdash's own figures by its stated
//! method, a truncated copy, the archive and `perfdash inspect`.
//!
//! Gatling's `LogFileReaderSpec` for this file: min 87, max 368,
//! `percentile(0.0)` 87, `percentile(70.0)` 113, `percentile(99.0)` 368,
//! `percentile(100.0)` 368; with bounds 0–100 000 ms: 0 low, 104 middle,
//! 0 high, 1 KO (so 105 requests).
//!
//! The text log of Gatling 3.12.0 is held to the same standard: its
//! `LogFileReaderSpec` reads `single_node_with_known_stats/simulation.log`
//! (in `../shared/fixtures/gatling@v3.12.0`) and states min 2000, max 9000,
//! a standard deviation within 6 % below 2138, p0 2000, p70 5000, p99 9000,
//! p100 9000; with bounds 0–100 000 ms 0 low, 8 middle, 0 high, 0 KO, and
//! with bounds 2500–5000 ms 1 low, 3 middle, 4 high.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use perfdash::ingest::raw::{
    FileSettings, RawContent, ReadOptions, SampleSet, StatsOptions, analyse_file, read_file,
};
use perfdash::ingest::{LoadOptions, load_archive_with};
use perfdash::model::SourceFormat;
use perfdash::stats::PercentileMethod;

const KNOWN_STATS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/fixtures/gatling/gatling-charts/src/test/resources/known_stats/simulation.log"
);

const KNOWN_STATS_TEXT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/fixtures/gatling@v3.12.0/gatling-charts/src/test/resources/single_node_with_known_stats/simulation.log"
);

/// Where the truncated copy is cut: inside the request record that starts
/// at byte 1988 (the KO "Post Redirect 1" is at 1876–1966, then "Select"
/// 1966–1988). Offsets from decoding the file record by record.
const CUT: usize = 2000;

fn known_stats() -> Option<PathBuf> {
    fixture(KNOWN_STATS)
}

fn fixture(path: &str) -> Option<PathBuf> {
    let rel = path
        .split_once("/../shared/fixtures/")
        .map_or(path, |(_, rel)| rel);
    perfdash::shared_fixtures::file(rel)
}

fn settings(split: bool, warmup_s: f64, failures_in_latency: bool) -> FileSettings {
    FileSettings {
        read: ReadOptions {
            split_tag: split.then(|| "name".to_string()),
            ..Default::default()
        },
        stats: StatsOptions {
            warmup_s,
            method: PercentileMethod::Linear,
            failures_in_latency,
        },
        tag_map: BTreeMap::new(),
        endpoint_warmups: BTreeMap::new(),
    }
}

/// All requests of the (binary) file in one set.
fn samples(path: &Path) -> SampleSet {
    samples_as(path, SourceFormat::GatlingBinaryLog)
}

/// All requests of the file in one set, read as `format`.
fn samples_as(path: &Path, format: SourceFormat) -> SampleSet {
    let file = read_file(path, Path::new("simulation.log"), &ReadOptions::default()).unwrap();
    assert_eq!(file.format, format);
    assert!(file.warnings.is_empty(), "{:?}", file.warnings);
    let RawContent::Samples { mut groups, .. } = file.content else {
        panic!("per-request samples expected");
    };
    assert_eq!(groups.len(), 1, "not split: one group");
    groups.remove("").unwrap()
}

fn sorted(values: impl Iterator<Item = f64>) -> Vec<f64> {
    let mut v: Vec<f64> = values.collect();
    v.sort_by(f64::total_cmp);
    v
}

/// Java's `Math.round(double)`, which Gatling's `math.round` calls.
fn java_round(x: f64) -> i64 {
    (x + 0.5).floor() as i64
}

/// Gatling's percentile: `math.round(digest.quantile(p / 100))` of the
/// `AVLTreeDigest(100.0)` in gatling-charts' `GeneralStatsBuffer`.
///
/// A sample joins an existing centroid only if that centroid's count + 1
/// ≤ 4·n·q(1−q)/100 ≤ n/100; with fewer than 200 samples that never holds,
/// so every centroid is one sample, sample i (0-based, sorted) centred at
/// mass i + ½. t-digest's `quantile` (3.3) at index = q·n then returns the
/// minimum below index 1 and the maximum above n − 1, and between them
/// does not interpolate next to a one-sample centroid: it returns the
/// sample whose "sphere" (its centre ± ½) holds the index, the left one when
/// index − centreᵢ < ½, else the right one. Gatling's own test pins this
/// down: on the 3.12.0 text log (2, 4, 4, 4, 5, 5, 7, 9 s) it expects p70 =
/// 5000, where interpolating between centres (t-digest 3.2) gives 5200.
fn gatling_percentile(sorted: &[f64], p: f64) -> i64 {
    let n = sorted.len();
    assert!(n < 200, "beyond 200 samples the digest merges centroids");
    let index = p / 100.0 * n as f64;
    let value = if index < 1.0 {
        sorted[0]
    } else if index > n as f64 - 1.0 {
        sorted[n - 1]
    } else {
        // The centroids i and i + 1 whose centres bracket the index.
        let i = ((index - 0.5).floor() as usize).min(n - 2);
        let centre = i as f64 + 0.5;
        if index - centre < 0.5 {
            sorted[i]
        } else {
            sorted[i + 1]
        }
    };
    java_round(value)
}

/// perfdash's stated method (src/stats/percentile.rs): rank
/// h = p/100 × (n − 1), linear between ⌊h⌋ and ⌈h⌉.
fn linear_percentile(sorted: &[f64], p: f64) -> f64 {
    let h = p / 100.0 * (sorted.len() as f64 - 1.0);
    let (lo, hi) = (h.floor() as usize, h.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (h - h.floor())
}

#[test]
fn gatlings_own_expected_statistics() {
    let Some(path) = known_stats() else { return };
    let set = samples(&path);
    // Gatling's requestGeneralStats(None, None, None) covers OK and KO alike.
    let all = sorted(set.ok.iter().chain(&set.failed).map(|s| s.ms));
    // Response-time ranges 0–100 000 ms: 104 OK in the middle, 1 KO.
    assert_eq!((set.ok.len(), set.failed.len()), (104, 1));
    assert_eq!(gatling_ranges(&set, 0.0, 100_000.0), (0, 104, 0, 1));
    assert_eq!((all[0], all[all.len() - 1]), (87.0, 368.0));
    for (p, expected) in [(0.0, 87), (70.0, 113), (99.0, 368), (100.0, 368)] {
        assert_eq!(gatling_percentile(&all, p), expected, "Gatling's p{p}");
    }

    // perfdash's figures over the same requests (no warm-up, KO counted in
    // the latencies as Gatling does).
    let r = analyse_file(
        &path,
        Path::new("simulation.log"),
        &settings(false, 0.0, true),
    )
    .unwrap();
    assert_eq!(r.format, SourceFormat::GatlingBinaryLog);
    let s = &r.groups[""].as_ref().unwrap().stats;
    assert_eq!(s.count, Some(105));
    assert_eq!(s.error_rate, Some(1.0 / 105.0));
    assert_eq!((s.min_ms, s.max_ms), (Some(87.0), Some(368.0)));
    // Gatling: mean = sum / count and stdDev = √(Σx²/n − mean²) (population),
    // each shown rounded with Math.round.
    let n = all.len() as f64;
    let gatling_mean = all.iter().sum::<f64>() / n;
    let gatling_std = (all.iter().map(|x| x * x).sum::<f64>() / n - gatling_mean.powi(2)).sqrt();
    assert_eq!(java_round(gatling_mean), 128);
    assert_eq!(java_round(s.mean_ms.unwrap()), 128);
    assert!((s.mean_ms.unwrap() - gatling_mean).abs() < 1e-9);
    assert_eq!(java_round(gatling_std), 67);
    assert!((s.stddev_ms.unwrap() - gatling_std).abs() < 1e-9);
    // perfdash's percentile is its own stated method, not Gatling's digest:
    // on these samples p99 = 324 + (368 − 324) × 0.96 = 366.24 where
    // Gatling shows 368.
    assert_eq!(s.p99_ms, linear_percentile(&all, 99.0));
    assert!((s.p99_ms - 366.24).abs() < 1e-9, "{}", s.p99_ms);
    assert_eq!(s.p50_ms, Some(linear_percentile(&all, 50.0)));
}

/// Gatling's response-time ranges (`ResponseTimeRangeBuffer`): KO apart,
/// then t < lower, lower ≤ t < higher, t ≥ higher; as (low, middle, high, KO).
fn gatling_ranges(set: &SampleSet, lower: f64, higher: f64) -> (usize, usize, usize, usize) {
    let ok = || set.ok.iter().map(|s| s.ms);
    (
        ok().filter(|&t| t < lower).count(),
        ok().filter(|&t| lower <= t && t < higher).count(),
        ok().filter(|&t| t >= higher).count(),
        set.failed.len(),
    )
}

#[test]
fn the_3_12_0_text_log_as_gatlings_own_test_states() {
    let Some(path) = fixture(KNOWN_STATS_TEXT) else {
        return;
    };
    let set = samples_as(&path, SourceFormat::GatlingLog);
    let all = sorted(set.ok.iter().chain(&set.failed).map(|s| s.ms));
    assert_eq!((all[0], all[all.len() - 1]), (2000.0, 9000.0));
    for (p, expected) in [(0.0, 2000), (70.0, 5000), (99.0, 9000), (100.0, 9000)] {
        assert_eq!(gatling_percentile(&all, p), expected, "Gatling's p{p}");
    }
    assert_eq!(gatling_ranges(&set, 0.0, 100_000.0), (0, 8, 0, 0));
    assert_eq!(gatling_ranges(&set, 2500.0, 5000.0), (1, 3, 4, 0));

    let r = analyse_file(
        &path,
        Path::new("simulation.log"),
        &settings(false, 0.0, true),
    )
    .unwrap();
    assert_eq!(r.format, SourceFormat::GatlingLog);
    let s = &r.groups[""].as_ref().unwrap().stats;
    assert_eq!(s.count, Some(8));
    assert_eq!(s.error_rate, Some(0.0));
    assert_eq!((s.min_ms, s.max_ms), (Some(2000.0), Some(9000.0)));
    assert_eq!(s.mean_ms, Some(5000.0));
    // Gatling's stdDev is the population one, √(Σx²/n − mean²) = 2000; its
    // test only bounds it: (stdDev − 2138) / 2138 ≤ 0.06.
    let std = s.stddev_ms.unwrap();
    assert!((std - 2000.0).abs() < 1e-9, "{std}");
    assert!((std - 2138.0) / 2138.0 <= 0.06);
    // perfdash's own p99: rank 0.99 × 7 = 6.93, 7000 + 2000 × 0.93.
    assert_eq!(s.p99_ms, linear_percentile(&all, 99.0));
    assert!((s.p99_ms - 8860.0).abs() < 1e-9, "{}", s.p99_ms);
}

#[test]
fn perfdash_p99_by_its_stated_method() {
    let Some(path) = known_stats() else { return };
    let set = samples(&path);
    // Defaults: KO requests count in the error rate, not the latencies.
    let ok = sorted(set.ok.iter().map(|s| s.ms));
    let r = analyse_file(
        &path,
        Path::new("simulation.log"),
        &settings(false, 0.0, false),
    )
    .unwrap();
    let s = &r.groups[""].as_ref().unwrap().stats;
    assert_eq!(s.count, Some(105));
    assert_eq!(s.p99_ms, linear_percentile(&ok, 99.0));
    assert!((s.p99_ms - 366.68).abs() < 1e-9, "{}", s.p99_ms);

    // A 5 s warm-up, counted from the first request (start 655 ms after the
    // run start): the requests that start before 5 655 ms are dropped.
    let first = set
        .ok
        .iter()
        .chain(&set.failed)
        .map(|x| x.t_us)
        .min()
        .unwrap();
    let kept = sorted(
        set.ok
            .iter()
            .filter(|x| x.t_us >= first + 5_000_000)
            .map(|x| x.ms),
    );
    let r = analyse_file(
        &path,
        Path::new("simulation.log"),
        &settings(false, 5.0, false),
    )
    .unwrap();
    let s = &r.groups[""].as_ref().unwrap().stats;
    assert_eq!(
        s.count,
        Some(kept.len() as u64 + 1),
        "the KO starts at 10 105 ms"
    );
    assert_eq!(s.p99_ms, linear_percentile(&kept, 99.0));
}

#[test]
fn endpoints_are_the_request_names() {
    let Some(path) = known_stats() else { return };
    let r = analyse_file(
        &path,
        Path::new("simulation.log"),
        &settings(true, 0.0, false),
    )
    .unwrap();
    let counts: BTreeMap<&str, u64> = r
        .groups
        .iter()
        .map(|(k, g)| (k.as_str(), g.as_ref().unwrap().stats.count.unwrap()))
        .collect();
    assert_eq!(
        counts,
        BTreeMap::from([
            ("form", 3),
            ("home", 12),
            ("home-redirect-1", 12),
            ("page-0", 12),
            ("page-1", 12),
            ("page-2", 12),
            ("page-3", 12),
            ("post", 3),
            ("post-redirect-1", 3),
            ("search", 12),
            ("select", 12),
        ])
    );
    let redirect = &r.groups["post-redirect-1"].as_ref().unwrap().stats;
    assert_eq!(redirect.error_rate, Some(1.0 / 3.0));
    let home = &r.groups["home"].as_ref().unwrap().stats;
    assert_eq!((home.min_ms, home.max_ms), (Some(277.0), Some(368.0)));
}

fn truncated_copy(dir: &Path, rel: &str) -> PathBuf {
    let bytes = std::fs::read(KNOWN_STATS).unwrap();
    let to = dir.join(rel);
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::write(&to, &bytes[..CUT]).unwrap();
    to
}

const CUT_WARNING: &str = "byte 2000: the file ends inside the record that starts at byte 1988 \
     (was Gatling stopped mid-write?); the 86 complete records before it (71 requests) were used";

#[test]
fn a_truncated_copy_names_the_byte_and_keeps_the_requests_before_it() {
    let Some(_) = known_stats() else { return };
    let dir = tempfile::tempdir().unwrap();
    let path = truncated_copy(dir.path(), "simulation.log");
    let r = analyse_file(&path, Path::new("cut.log"), &settings(false, 0.0, false)).unwrap();
    assert_eq!(
        r.warnings.iter().map(|w| w.to_string()).collect::<Vec<_>>(),
        [format!("cut.log: {CUT_WARNING}")]
    );
    let s = &r.groups[""].as_ref().unwrap().stats;
    assert_eq!(s.count, Some(71));
    assert_eq!(
        s.error_rate,
        Some(1.0 / 71.0),
        "the KO at byte 1876 is kept"
    );
}

#[test]
fn the_archive_reads_it_as_a_round_file_and_keeps_the_truncated_round() {
    let Some(_) = known_stats() else { return };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let run = "runs/2026-05-04T0300Z";
    let whole = root.join(format!("{run}/round-1.log"));
    std::fs::create_dir_all(whole.parent().unwrap()).unwrap();
    std::fs::copy(KNOWN_STATS, &whole).unwrap();
    truncated_copy(root, &format!("{run}/round-2.log"));
    let loaded = load_archive_with(
        root,
        &LoadOptions {
            warmup_override: Some(0.0),
            ..Default::default()
        },
    )
    .unwrap();
    let shown: Vec<String> = loaded.diagnostics.iter().map(|d| d.to_string()).collect();
    assert_eq!(shown, [format!("{run}/round-2.log: {CUT_WARNING}")]);
    let endpoints = &loaded.archive.runs[0].endpoints;
    assert_eq!(endpoints.len(), 11);
    // Before the cut, post-redirect-1's only request is the KO: a failed
    // round (no latency, 100% errors), never a file skipped (issue 32).
    let failed = &endpoints["post-redirect-1"].rounds[1].stats;
    assert_eq!(
        (failed.count, failed.p99_ms, failed.error_rate),
        (Some(1), 0.0, Some(1.0))
    );
    let page_3 = &endpoints["page-3"].rounds;
    assert_eq!(page_3.len(), 2, "the truncated round is kept");
    assert_eq!(page_3[0].format, SourceFormat::GatlingBinaryLog);
    assert_eq!(page_3[0].source, format!("{run}/round-1.log"));
    assert_eq!(page_3[1].source, format!("{run}/round-2.log"));
    assert_eq!(page_3[0].stats.count, Some(12));
    // "Page 3" requests before byte 1988: four of the twelve.
    assert_eq!(page_3[1].stats.count, Some(4));
    assert_eq!(endpoints["post-redirect-1"].rounds.len(), 2);
}

#[test]
fn inspect_accepts_it() {
    let Some(_) = known_stats() else { return };
    let out = Command::cargo_bin("perfdash")
        .unwrap()
        .args(["inspect", KNOWN_STATS, "--warmup", "0", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = report["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 11);
    assert!(rows.iter().all(|r| r["format"] == "gatling-binary-log"));
    let home = rows.iter().find(|r| r["endpoint"] == "Home").unwrap();
    assert_eq!(home["stats"]["count"], 12);

    // The truncated copy: read up to the cut, warned about, exit 1.
    let dir = tempfile::tempdir().unwrap();
    let cut = truncated_copy(dir.path(), "simulation.log");
    let out = Command::cargo_bin("perfdash")
        .unwrap()
        .args(["inspect", cut.to_str().unwrap(), "--warmup", "0"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("warning: {}: {CUT_WARNING}", cut.display())),
        "{stderr}"
    );
    // "Search" requests before the cut: 11 of the 12.
    let table = String::from_utf8(out.stdout).unwrap();
    let search = table
        .lines()
        .find(|l| l.split_whitespace().nth(1) == Some("Search"))
        .unwrap_or_else(|| panic!("{table}"));
    let cells: Vec<&str> = search.split_whitespace().collect();
    assert_eq!(
        &cells[2..6],
        ["gatling-binary-log", "0", "s", "11"],
        "{search}"
    );
}
