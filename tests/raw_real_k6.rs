//! A real k6 run made for perfdash (tests/fixtures/k6-real/README.md):
//! trimming the warm-up changes p99, and perfdash's trimmed p99 equals an
//! independent computation.

use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};

use perfdash::ingest::raw::{FileSettings, ReadOptions, StatsOptions, analyse_file};
use perfdash::stats::PercentileMethod;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/k6-real")
}

fn settings(warmup_s: f64) -> FileSettings {
    FileSettings {
        read: ReadOptions::default(),
        stats: StatsOptions {
            warmup_s,
            method: PercentileMethod::Linear,
            failures_in_latency: false,
        },
        tag_map: BTreeMap::new(),
        endpoint_warmups: BTreeMap::new(),
    }
}

fn p99(path: &Path, warmup_s: f64) -> (f64, u64) {
    let r = analyse_file(path, Path::new("round-1"), &settings(warmup_s)).unwrap();
    let g = r.groups[""].as_ref().unwrap();
    (g.stats.p99_ms, g.stats.count.unwrap())
}

/// The straightforward way: parse every line as JSON, sort, interpolate.
fn naive_trimmed_p99(path: &Path, warmup_s: f64) -> (f64, usize) {
    let file = std::fs::File::open(path).unwrap();
    let reader = std::io::BufReader::new(flate2::read::GzDecoder::new(file));
    let mut points = Vec::new();
    for line in reader.lines() {
        let v: serde_json::Value = serde_json::from_str(&line.unwrap()).unwrap();
        if v["type"] == "Point" && v["metric"] == "http_req_duration" {
            let t =
                chrono::DateTime::parse_from_rfc3339(v["data"]["time"].as_str().unwrap()).unwrap();
            let ok = v["data"]["tags"]["expected_response"] != "false";
            points.push((
                t.timestamp_micros(),
                v["data"]["value"].as_f64().unwrap(),
                ok,
            ));
        }
    }
    let start = points.iter().map(|p| p.0).min().unwrap();
    let cutoff = start + (warmup_s * 1e6) as i64;
    let mut kept: Vec<f64> = points
        .iter()
        .filter(|p| p.2 && p.0 >= cutoff)
        .map(|p| p.1)
        .collect();
    kept.sort_by(f64::total_cmp);
    let i = 0.99 * (kept.len() - 1) as f64;
    let (lo, hi) = (kept[i.floor() as usize], kept[i.ceil() as usize]);
    (lo + (hi - lo) * (i - i.floor()), kept.len())
}

fn k6_whole_test_p99() -> f64 {
    let text = std::fs::read_to_string(dir().join("round-1.summary.json")).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    doc["metrics"]["http_req_duration"]["p(99)"]
        .as_f64()
        .unwrap()
}

#[test]
fn untrimmed_p99_is_k6s_own() {
    let (p, n) = p99(&dir().join("round-1.ndjson.gz"), 0.0);
    assert_eq!(n, 532);
    let k6 = k6_whole_test_p99();
    assert!((p - k6).abs() <= 1e-9 * k6, "perfdash {p} vs k6 {k6}");
    // The CSV prints 6 decimals.
    let (p_csv, _) = p99(&dir().join("round-1.csv.gz"), 0.0);
    assert!(
        (p_csv - k6).abs() <= 0.5e-6 + 1e-12,
        "perfdash from CSV {p_csv} vs k6 {k6}"
    );
}

#[test]
fn trimmed_p99_differs_from_k6_and_equals_an_independent_computation() {
    let path = dir().join("round-1.ndjson.gz");
    let (trimmed, n) = p99(&path, 15.0);
    let (naive, naive_n) = naive_trimmed_p99(&path, 15.0);
    assert_eq!(n as usize, naive_n);
    assert_eq!(trimmed, naive);
    // Recorded with independent_p99.py (README.md): count=330 p99=27.534052199999994.
    assert_eq!(n, 330);
    assert!((trimmed - 27.534052199999994).abs() < 1e-9);
    let k6 = k6_whole_test_p99();
    assert!(
        trimmed < k6 * 0.9,
        "the warm-up inflates k6's whole-test p99: {trimmed} vs {k6}"
    );
}
