//! Inputs that once broke a parser, kept under
//! `tests/fixtures/fuzz/<target>/`, replayed through the same checks as
//! the fuzz target of that name (`fuzz/fuzz_targets/<target>.rs`). Drop a
//! crash artifact into the folder and it is tested from then on.
//!
//! `k6_summary/p99-near-f64-max.json` was found by hand while checking
//! NaN/∞ handling: finite, but medians and baseline × ratio overflowed to
//! infinity and plotters then looped forever on the infinite axis.
//!
//! `perf_script/blank-line-before-first-event-*` (a lone newline) was found by
//! the `perf_script` target in its first seconds: inferno's perf collapser
//! asserts that the first block names an event, and panicked.

use std::path::{Path, PathBuf};

fn inputs(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/fuzz")
        .join(target);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut out: Vec<(PathBuf, Vec<u8>)> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect();
    out.sort();
    out
}

#[test]
fn k6_summary() {
    let found = inputs("k6_summary");
    assert!(!found.is_empty(), "the known regression inputs are present");
    for (file, data) in found {
        let path = Path::new("runs/r/ep/round-1.json");
        match perfdash::ingest::k6_summary::parse(&data, path, "http_req_duration") {
            Ok(round) => {
                let p99 = round.stats.p99_ms;
                assert!(
                    p99.is_finite()
                        && (0.0..=perfdash::ingest::k6_summary::MAX_PLAUSIBLE_VALUE).contains(&p99),
                    "{file:?}: {p99}"
                );
            }
            Err(e) => assert!(
                e.to_string().starts_with("runs/r/ep/round-1.json"),
                "{file:?}: {e}"
            ),
        }
    }
}

#[test]
fn run_toml() {
    for (file, data) in inputs("run_toml") {
        let Ok(text) = std::str::from_utf8(&data) else {
            continue;
        };
        if let Err(e) = perfdash::ingest::parse_run_meta(text, Path::new("runs/r/run.toml")) {
            assert!(
                e.to_string().starts_with("runs/r/run.toml"),
                "{file:?}: {e}"
            );
        }
        let _ = perfdash::ingest::run_time_from_id(text);
    }
}

#[test]
fn perfdash_toml() {
    for (file, data) in inputs("perfdash_toml") {
        let Ok(text) = std::str::from_utf8(&data) else {
            continue;
        };
        if let Err(e) = perfdash::config::Settings::parse(text, Path::new("perfdash.toml")) {
            assert!(e.to_string().starts_with("perfdash.toml"), "{file:?}: {e}");
        }
    }
}

/// The raw targets read files: each input is written with the prefix its
/// fuzz target adds, then read like an archive round.
fn raw(target: &str, prefix: impl Fn(&[u8]) -> Vec<u8>) {
    use perfdash::ingest::raw::{FileSettings, ReadOptions, analyse_file};
    let tmp = tempfile::tempdir().unwrap();
    for (file, data) in inputs(target) {
        let path = tmp.path().join("round-1.x");
        std::fs::write(&path, prefix(&data)).unwrap();
        for split in [None, Some("name".to_string())] {
            let mut settings = FileSettings {
                read: ReadOptions {
                    split_tag: split,
                    ..Default::default()
                },
                stats: Default::default(),
                tag_map: Default::default(),
                endpoint_warmups: Default::default(),
            };
            settings.stats.warmup_s = 0.0;
            if let Err(e) = analyse_file(&path, Path::new("runs/r/round-1.x"), &settings) {
                assert!(
                    e.to_string().starts_with("runs/r/round-1.x"),
                    "{file:?}: {e}"
                );
            }
        }
    }
}

#[test]
fn k6_ndjson() {
    raw("k6_ndjson", |d| {
        let mut v = b"{\"type\":\"Metric\",\"data\":{\"name\":\"http_req_duration\",\"type\":\"trend\",\"contains\":\"time\"},\"metric\":\"http_req_duration\"}\n".to_vec();
        v.extend_from_slice(d);
        v
    });
}

#[test]
fn csv_jtl() {
    raw("csv_jtl", |d| {
        let headers: [&[u8]; 3] = [
            b"timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,failureMessage,bytes,sentBytes,grpThreads,allThreads,URL,Latency,IdleTime,Connect\n",
            b"metric_name,timestamp,metric_value,check,error,error_code,expected_response,group,method,name,proto,scenario,service,status,subproto,tls_version,url,extra_tags,metadata\n",
            b"",
        ];
        let Some((&pick, rest)) = d.split_first() else {
            return Vec::new();
        };
        let mut v = headers[pick as usize % 3].to_vec();
        v.extend_from_slice(rest);
        v
    });
}

#[test]
fn jmeter_xml() {
    raw("jmeter_xml", |d| {
        let mut v =
            b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testResults version=\"1.2\">\n".to_vec();
        v.extend_from_slice(d);
        v
    });
}

fn profile(target: &str, prefix: &[u8], name: &str) {
    for (file, data) in inputs(target) {
        let mut bytes = prefix.to_vec();
        bytes.extend_from_slice(&data);
        let shown = format!("runs/r/e/{name}");
        if let Err(e) = perfdash::profile::parse(&bytes, Path::new(&shown)) {
            assert!(e.to_string().starts_with(&shown), "{file:?}: {e}");
        }
    }
}

#[test]
fn folded() {
    profile("folded", b"", "flame.folded");
}

#[test]
fn async_profiler_html() {
    profile(
        "async_profiler_html",
        b"<!DOCTYPE html>\n<html>",
        "flame.html",
    );
}

#[test]
fn perf_script() {
    let found = inputs("perf_script");
    assert!(!found.is_empty(), "the known regression inputs are present");
    // The collapser on its own, with every option on, as the fuzz target
    // calls it: it must return (Ok or Err), never panic.
    for (_, data) in &found {
        if let Ok(text) = std::str::from_utf8(data) {
            let _ = perfdash::profile::collapse_perf(
                text,
                perfdash::profile::PerfOptions {
                    annotate_jit: true,
                    annotate_kernel: true,
                    include_pid: true,
                    include_tid: true,
                    include_addrs: true,
                },
            );
        }
    }
    profile("perf_script", b"", "flame.txt");
}
