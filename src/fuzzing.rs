//! The checks behind the fuzz targets in `fuzz/`, in the library so that
//! the targets and `tests/fuzz_regressions.rs` run exactly the same code,
//! and so that a change to a parser's API breaks `cargo test` rather than
//! only the fuzz build (which CI does not run).
//!
//! Each `check_*` function takes the fuzzer's bytes, shapes them as its
//! target does (a prefix that gets the input recognised as the format),
//! runs the parser and asserts more than "no panic": errors name the file
//! they were given, and accepted figures are finite and in range. Not part
//! of perfdash's API.

use std::io::Write as _;
use std::path::Path;

use crate::ingest::raw::{FileSettings, ReadOptions, analyse_file};

/// The fuzz targets, by the names `cargo fuzz run` takes.
pub const TARGETS: [&str; 10] = [
    "k6_summary",
    "run_toml",
    "perfdash_toml",
    "k6_ndjson",
    "csv_jtl",
    "jmeter_xml",
    "folded",
    "async_profiler_html",
    "perf_script",
    "gatling_binary",
];

/// Runs the check of the target named `target` on `data`.
///
/// # Panics
/// When the check fails (that is the point), or `target` is not in [`TARGETS`].
pub fn check(target: &str, data: &[u8]) {
    match target {
        "k6_summary" => check_k6_summary(data),
        "run_toml" => check_run_toml(data),
        "perfdash_toml" => check_perfdash_toml(data),
        "k6_ndjson" => check_k6_ndjson(data),
        "csv_jtl" => check_csv_jtl(data),
        "jmeter_xml" => check_jmeter_xml(data),
        "folded" => check_folded(data),
        "async_profiler_html" => check_async_profiler_html(data),
        "perf_script" => check_perf_script(data),
        "gatling_binary" => check_gatling_binary(data),
        other => panic!("no fuzz target named {other}"),
    }
}

/// `ingest::k6_summary`: a round's figures, and the threshold and metric
/// listings of any document that parses.
pub fn check_k6_summary(data: &[u8]) {
    let path = Path::new("runs/r/ep/round-1.json");
    match crate::ingest::k6_summary::parse(data, path, "http_req_duration") {
        Ok(round) => {
            let s = round.stats;
            assert!(
                s.p99_ms.is_finite()
                    && (0.0..=crate::ingest::k6_summary::MAX_PLAUSIBLE_VALUE).contains(&s.p99_ms),
                "{s:?}"
            );
            if let Some(r) = s.error_rate {
                assert!((0.0..=1.0).contains(&r), "{s:?}");
            }
        }
        Err(e) => assert_names(&e, "runs/r/ep/round-1.json"),
    }
    if let Ok(summary) = crate::ingest::k6_summary::parse_summary(data, path) {
        let _ = summary.thresholds();
        let _ = summary.metrics();
    }
}

/// `run.toml`, and run ids read as times.
pub fn check_run_toml(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Err(e) = crate::ingest::parse_run_meta(text, Path::new("runs/r/run.toml")) {
        assert_names(&e, "runs/r/run.toml");
    }
    let _ = crate::ingest::run_time_from_id(text);
}

/// `perfdash.toml`, every section.
pub fn check_perfdash_toml(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match crate::ingest::settings::parse(text, Path::new("perfdash.toml")) {
        Ok(s) => {
            assert!(s.analysis.threshold_ratio.is_finite() && s.analysis.threshold_ratio > 1.0);
            assert!(s.analysis.expected_rounds >= 1);
        }
        Err(e) => assert_names(&e, "perfdash.toml"),
    }
}

/// k6 `--out json`: a valid first Metric record so the content is
/// recognised, then arbitrary lines.
pub fn check_k6_ndjson(data: &[u8]) {
    const PREFIX: &[u8] = b"{\"type\":\"Metric\",\"data\":{\"name\":\"http_req_duration\",\"type\":\"trend\",\"contains\":\"time\"},\"metric\":\"http_req_duration\"}\n";
    check_raw(&[PREFIX, data].concat());
}

/// JMeter CSV JTL or k6 CSV: the first byte picks the JMeter header, the
/// k6 header or none, then arbitrary rows.
pub fn check_csv_jtl(data: &[u8]) {
    const HEADERS: [&[u8]; 3] = [
        b"timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,failureMessage,bytes,sentBytes,grpThreads,allThreads,URL,Latency,IdleTime,Connect\n",
        b"metric_name,timestamp,metric_value,check,error,error_code,expected_response,group,method,name,proto,scenario,service,status,subproto,tls_version,url,extra_tags,metadata\n",
        b"",
    ];
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    check_raw(&[HEADERS[pick as usize % HEADERS.len()], rest].concat());
}

/// JMeter XML JTL: the declaration and `<testResults>`, then the bytes.
pub fn check_jmeter_xml(data: &[u8]) {
    const PREFIX: &[u8] =
        b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testResults version=\"1.2\">\n";
    check_raw(&[PREFIX, data].concat());
}

/// Gatling binary `simulation.log`: an even first byte puts a valid run
/// record (Gatling 3.13.4, scenarios `Users` and `Admins`, the run start of
/// Gatling's own fixture) before the bytes, so that the fuzzer spends its
/// time in the records; an odd one leaves the run record to the fuzzer too.
/// Besides the raw checks: every warning about a binary log names the file
/// and the byte where it ends (or the cut gzip stream).
pub fn check_gatling_binary(data: &[u8]) {
    use crate::ingest::raw::gatling_binary::LogWriter;
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let bytes = if pick % 2 == 0 {
        let run = LogWriter::new("3.13.4", 1_730_757_531_501, &["Users", "Admins"]);
        [run.bytes(), rest].concat()
    } else {
        rest.to_vec()
    };
    check_raw_then(&bytes, |shown, result| {
        if result.format != crate::model::SourceFormat::GatlingBinaryLog {
            return; // an odd first byte lets the fuzzer write other formats
        }
        for w in &result.warnings {
            assert!(
                w.path == shown && (w.message.starts_with("byte ") || w.message.contains("gzip")),
                "a warning that names no byte: {w}"
            );
        }
    });
}

/// Folded stacks.
pub fn check_folded(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let path = "runs/r/e/flame.folded";
    if let Err(e) = crate::profile::parse_folded(text, Path::new(path), "cpu") {
        assert_names(&e, path);
    }
}

/// async-profiler HTML: `<!DOCTYPE html><html>`, then the bytes.
pub fn check_async_profiler_html(data: &[u8]) {
    check_profile(&[b"<!DOCTYPE html>\n<html>", data].concat(), "flame.html");
}

/// `perf script` text: inferno's collapser with every option on (it must
/// return, never panic), then the whole profile reader.
pub fn check_perf_script(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = crate::profile::collapse_perf(
            text,
            crate::profile::PerfOptions {
                annotate_jit: true,
                annotate_kernel: true,
                include_pid: true,
                include_tid: true,
                include_addrs: true,
            },
        );
    }
    check_profile(data, "flame.txt");
}

fn check_profile(bytes: &[u8], name: &str) {
    let shown = format!("runs/r/e/{name}");
    if let Err(e) = crate::profile::parse(bytes, Path::new(&shown)) {
        assert_names(&e, &shown);
    }
}

/// The raw readers stream from files (gzip-transparent), so the input is
/// written to one temporary file per thread and read back as a round,
/// whole and split by the `name` tag.
fn check_raw(bytes: &[u8]) {
    check_raw_then(bytes, |_, _| {});
}

/// [`check_raw`], then `more(shown, result)` on every file read.
fn check_raw_then(bytes: &[u8], more: impl Fn(&str, &crate::ingest::raw::FileResult)) {
    thread_local! {
        static FILE: tempfile::NamedTempFile =
            tempfile::NamedTempFile::new().expect("a temporary file for the fuzz input");
    }
    FILE.with(|file| {
        let mut handle = file.reopen().expect("reopen the temporary file");
        handle.set_len(0).expect("truncate the temporary file");
        handle.write_all(bytes).expect("write the fuzz input");
        drop(handle);
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
            let shown = "runs/r/round-1.x";
            match analyse_file(file.path(), Path::new(shown), &settings) {
                Ok(result) => {
                    for group in result.groups.values().flatten() {
                        let s = &group.stats;
                        assert!(s.p99_ms.is_finite() && s.p99_ms >= 0.0, "{s:?}");
                    }
                    more(shown, &result);
                }
                Err(e) => assert_names(&e, shown),
            }
        }
    });
}

fn assert_names(e: &crate::error::Error, path: &str) {
    let shown = e.to_string();
    assert!(
        shown.starts_with(path),
        "the error does not start with {path}: {shown}"
    );
}
