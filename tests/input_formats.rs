//! Real outputs of hey, ab, Artillery, Locust (`--json`), Go pprof, JFR
//! and py-spy's chrometrace, recorded here by `scripts/input-fixtures.sh`
//! (tests/fixtures/inputs/README.md), read by perfdash and compared with
//! figures computed without perfdash: plain Python beside the files, the
//! tools' own numbers (Locust's percentile function, `go tool pprof
//! -traces`, `jfr print --json`, Artillery's report), and JMeter's own
//! golden `statistics.json` from ../shared/fixtures.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use perfdash::ingest::raw::{FileSettings, ReadOptions, StatsOptions, analyse_file};
use perfdash::model::{RoundStats, SourceFormat};
use perfdash::stats::PercentileMethod;

mod common;

fn dir(tool: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/inputs")
        .join(tool)
}

fn expected(tool: &str) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(dir(tool).join("expected.json")).unwrap()).unwrap()
}

fn settings(warmup_s: f64, split: bool) -> FileSettings {
    FileSettings {
        read: ReadOptions {
            split_tag: split.then(|| "name".to_string()),
            ..ReadOptions::default()
        },
        stats: StatsOptions {
            warmup_s,
            method: PercentileMethod::Linear,
            failures_in_latency: false,
        },
        tag_map: BTreeMap::new(),
        endpoint_warmups: BTreeMap::new(),
    }
}

/// Every figure of `want` (a JSON object of RoundStats field names) equals
/// perfdash's to 1e-9 (relative); `null` means perfdash has none.
fn assert_figures(got: &RoundStats, want: &serde_json::Value, what: &str) {
    let got = serde_json::to_value(got).unwrap();
    for (key, value) in want.as_object().unwrap() {
        if matches!(key.as_str(), "rows" | "failures") {
            continue;
        }
        match (value.as_f64(), got.get(key).and_then(|v| v.as_f64())) {
            (Some(w), Some(g)) => assert!(
                (w - g).abs() <= 1e-9 * w.abs().max(1.0),
                "{what}: {key} is {g}, the independent computation says {w}"
            ),
            (None, g) => assert_eq!(g, None, "{what}: {key} should be absent"),
            (Some(w), None) => panic!("{what}: {key} missing, expected {w}"),
        }
    }
}

fn group(path: &Path, s: &FileSettings, key: &str) -> (SourceFormat, RoundStats) {
    let r = analyse_file(path, Path::new("round-1"), s).unwrap();
    let g = r.groups[key]
        .as_ref()
        .unwrap_or_else(|e| panic!("{key}: {e}"));
    (r.format, g.stats.clone())
}

#[test]
fn hey_csv_rounds_are_recomputed_with_the_warm_up_trimmed() {
    let want = expected("hey");
    for (warmup, key) in [(0.0, "warmup_0"), (1.0, "warmup_1")] {
        let (format, stats) = group(&dir("hey").join("orders.csv"), &settings(warmup, false), "");
        assert_eq!(format, SourceFormat::HeyCsv);
        assert_figures(&stats, &want["orders"][key], &format!("hey orders, {key}"));
    }
    // hey's own summary of the same kind of run (fail.txt) has every
    // request answered 500: a failed round (issue 32), every request
    // counted and failed, no latency of a success to measure; never an
    // unreadable file that the gate would pass over.
    let (format, stats) = group(&dir("hey").join("fail.csv"), &settings(0.0, false), "");
    assert_eq!(format, SourceFormat::HeyCsv);
    let rows = want["fail"]["rows"].as_u64().unwrap();
    assert_eq!(stats.count, Some(rows));
    assert_eq!(stats.error_rate, Some(1.0));
    assert_eq!((stats.p99_ms, stats.p50_ms), (0.0, None));
}

#[test]
fn ab_gnuplot_rounds_are_recomputed_and_have_no_error_rate() {
    let want = expected("ab");
    for (warmup, key) in [(0.0, "warmup_0"), (1.0, "warmup_1")] {
        let (format, stats) = group(&dir("ab").join("orders.tsv"), &settings(warmup, false), "");
        assert_eq!(format, SourceFormat::AbGnuplot);
        assert_figures(&stats, &want[key], &format!("ab -g, {key}"));
        assert_eq!(
            stats.error_rate, None,
            "ab's -g file does not say which failed"
        );
    }
    // ab's text report of the same run counts the same requests.
    let text = std::fs::read_to_string(dir("ab").join("orders.txt")).unwrap();
    let complete: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("Complete requests:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(want["warmup_0"]["count"].as_u64(), Some(complete));
}

#[test]
fn ab_percentiles_are_abs_own() {
    let want = &expected("ab")["percentiles"];
    let (format, stats) = group(&dir("ab").join("orders.csv"), &settings(15.0, false), "");
    assert_eq!(format, SourceFormat::AbPercentiles);
    let at = |p: &str| want[p].as_f64();
    assert_eq!(Some(stats.p99_ms), at("99"));
    assert_eq!(stats.p50_ms, at("50"));
    assert_eq!(stats.p90_ms, at("90"));
    assert_eq!(stats.p95_ms, at("95"));
    assert_eq!(stats.min_ms, at("0"));
    assert_eq!(stats.max_ms, at("100"));
    assert_eq!(
        (stats.count, stats.error_rate, stats.mean_ms),
        (None, None, None)
    );
}

#[test]
fn artillery_reports_give_artillerys_own_figures_per_endpoint() {
    let want = expected("artillery");
    let path = dir("artillery").join("report.json");
    let r = analyse_file(&path, Path::new("r"), &settings(15.0, true)).unwrap();
    assert_eq!(r.format, SourceFormat::ArtilleryReport);
    let endpoints = want["endpoints"].as_object().unwrap();
    assert_eq!(r.groups.len(), endpoints.len());
    for (url, figures) in endpoints {
        let slug = perfdash::ingest::raw::slug(url);
        let g = r.groups[&slug].as_ref().unwrap();
        assert!(!g.trimmed, "a summary: nothing trimmed");
        assert_figures(&g.stats, figures, url);
    }
    assert_eq!(
        r.groups["fail"].as_ref().unwrap().stats.error_rate,
        Some(1.0),
        "every /fail request answered 500"
    );
    // The whole test in an endpoint folder: all requests, half failed.
    let (_, all) = group(&path, &settings(15.0, false), "");
    assert_eq!(all.error_rate, Some(0.5));
    // A run whose target was down: every request failed without a
    // response, a failed round (p99 0, 100 % errors), never bad input.
    let down = dir("artillery").join("down.json");
    let errors: u64 = want["down_errors"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert!(errors > 0);
    let (_, d) = group(&down, &settings(15.0, false), "");
    assert_eq!(
        (d.count, d.error_rate, d.p99_ms),
        (Some(errors), Some(1.0), 0.0)
    );
}

#[test]
fn locust_json_percentiles_are_locusts_own() {
    let want = expected("locust");
    let path = dir("locust").join("round-1.json");
    let r = analyse_file(&path, Path::new("r"), &settings(15.0, true)).unwrap();
    assert_eq!(r.format, SourceFormat::LocustJson);
    for (name, figures) in want["json"].as_object().unwrap() {
        let g = r.groups[&perfdash::ingest::raw::slug(name)]
            .as_ref()
            .unwrap();
        assert_figures(&g.stats, figures, name);
        assert_eq!(
            g.stats.error_rate.unwrap() * figures["count"].as_f64().unwrap(),
            figures["failures"].as_f64().unwrap()
        );
    }
    // Where the _stats.csv of the same run saw the same requests, it says
    // exactly the same (it is written a second before the end).
    let csv = &want["stats_csv"];
    let mut same = 0;
    for (name, figures) in want["json"].as_object().unwrap() {
        if csv[name]["count"] == figures["count"] {
            same += 1;
            for p in ["p50_ms", "p90_ms", "p95_ms", "p99_ms"] {
                assert_eq!(csv[name][p], figures[p], "{name} {p}");
            }
        }
    }
    assert!(same > 0, "no endpoint to compare with the _stats.csv");
}

/// `stack count` lines into a map (the expected.collapsed files).
fn collapsed(path: &Path) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    for line in std::fs::read_to_string(path).unwrap().lines() {
        let (stack, n) = line.rsplit_once(' ').unwrap();
        *out.entry(stack.to_string()).or_insert(0.0) += n.parse::<f64>().unwrap();
    }
    out
}

fn profile(path: &Path, name: &str) -> perfdash::profile::Profile {
    perfdash::profile::parse(&std::fs::read(path).unwrap(), Path::new(name)).unwrap()
}

fn stacks(p: &perfdash::profile::Profile) -> BTreeMap<String, f64> {
    p.stacks.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

#[test]
fn go_pprof_cpu_profiles_read_as_go_tool_pprof_shows_them() {
    let p = profile(&dir("go").join("cpu.pprof"), "flame.pb.gz");
    assert_eq!(p.format, perfdash::profile::ProfileFormat::Pprof);
    let want = collapsed(&dir("go").join("cpu.expected.collapsed"));
    assert_eq!(stacks(&p), want);
    assert_eq!(p.units, "samples");
    assert_eq!(p.samples, Some(want.values().sum::<f64>() as u64));
}

#[test]
fn a_go_heap_profile_is_refused_as_cpu_and_read_as_heap() {
    let bytes = std::fs::read(dir("go").join("heap.pprof")).unwrap();
    let err = perfdash::profile::parse(&bytes, Path::new("flame.pb.gz"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("a Go heap profile") && err.contains("flame.heap."),
        "{err}"
    );
    let heap = perfdash::profile::parse(&bytes, Path::new("flame.heap.pb.gz")).unwrap();
    assert_eq!((heap.kind.as_str(), heap.units.as_str()), ("heap", "bytes"));
}

#[test]
fn jfr_execution_samples_read_as_jfr_print_shows_them() {
    let p = profile(&dir("jfr").join("samples.jfr"), "flame.jfr");
    assert_eq!(p.format, perfdash::profile::ProfileFormat::Jfr);
    let want = collapsed(&dir("jfr").join("samples.expected.collapsed"));
    assert_eq!(stacks(&p), want);
    assert_eq!(p.samples, Some(want.values().sum::<f64>() as u64));
    let bytes = std::fs::read(dir("jfr").join("no-samples.jfr")).unwrap();
    let err = perfdash::profile::parse(&bytes, Path::new("flame.jfr"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("without execution samples") && err.contains("jdk.CPULoad"),
        "{err}"
    );
    // Cut short (copied while the JVM was still writing it).
    let cut =
        perfdash::profile::parse(&bytes[..bytes.len() / 2], Path::new("flame.jfr")).unwrap_err();
    assert!(cut.to_string().contains("cut short"), "{cut}");
}

#[test]
fn pyspy_chrometrace_replays_to_the_same_stacks() {
    let p = profile(&dir("pyspy").join("trace.json"), "flame.json");
    assert_eq!(p.format, perfdash::profile::ProfileFormat::ChromeTrace);
    assert_eq!(p.units, "seconds");
    let want = collapsed(&dir("pyspy").join("expected.collapsed"));
    let got = stacks(&p);
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>()
    );
    for (k, w) in &want {
        assert!((got[k] - w).abs() < 1e-9, "{k}: {} vs {w}", got[k]);
    }
}

#[test]
fn jmeter_statistics_json_is_jmeters_own_golden_file() {
    let Some(shared) = common::shared_fixtures() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must have ../shared/fixtures"
        );
        return;
    };
    let report =
        shared.join("jmeter/src/dist-check/src/test/resources/org/apache/jmeter/gui/report");
    let stats = report.join("HTMLReportExpect.json");
    let r = analyse_file(&stats, Path::new("statistics.json"), &settings(0.0, true)).unwrap();
    assert_eq!(r.format, SourceFormat::JmeterStatistics);
    let ok = r.groups["jr-ok"].as_ref().unwrap();
    assert_eq!(ok.stats.count, Some(252));
    assert_eq!(ok.stats.p99_ms, 353.0);
    assert_eq!(ok.stats.p95_ms, Some(339.35));
    assert_eq!(
        r.groups["jr-ko"].as_ref().unwrap().stats.error_rate,
        Some(1.0)
    );
    // The same figures from the JTL it was made from, recomputed by
    // perfdash with JMeter's estimator and failures counted, as the
    // dashboard does: an independent path to the same numbers.
    let jtl = shared.join("jmeter/src/dist-check/src/test/resources/org/apache/jmeter/gui/report/HTMLReportTestFile.csv");
    if jtl.exists() {
        let mut s = settings(0.0, true);
        s.stats.method = PercentileMethod::JmeterDashboard;
        s.stats.failures_in_latency = true;
        let raw = analyse_file(&jtl, Path::new("t.csv"), &s).unwrap();
        for key in ["jr-ok", "jr-ko"] {
            let a = &r.groups[key].as_ref().unwrap().stats;
            let b = &raw.groups[key].as_ref().unwrap().stats;
            assert_eq!(
                (a.count, a.p99_ms, a.p90_ms, a.max_ms),
                (b.count, b.p99_ms, b.p90_ms, b.max_ms),
                "{key}"
            );
        }
    }
    let total = analyse_file(&stats, Path::new("statistics.json"), &settings(0.0, false)).unwrap();
    assert_eq!(total.groups[""].as_ref().unwrap().stats.count, Some(255));
}

/// A load-test output or report must never pass for a flame graph, whatever
/// it is called: each is refused by the profile reader, saying what it is.
#[test]
fn load_test_outputs_are_never_read_as_profiles() {
    let tsv = std::fs::read(dir("ab").join("orders.tsv")).unwrap();
    let err = perfdash::profile::parse(&tsv, Path::new("flame.txt"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("ab's -g output, a load-test result"),
        "ab -g as a profile: {err}"
    );
    for (bytes, says) in [
        (b"<!DOCTYPE html>\n<html lang=\"en\"><head><title>Locust</title></head><script>window.templateArgs = {}</script>".to_vec(), "Locust HTML report"),
        (b"<!DOCTYPE html><html><head><title>k6 report</title></head><body><div id=\"report\">k6 web dashboard</div>".to_vec(), "k6 web-dashboard report"),
        (b"PERFILE2h\0\0\0\0\0\0\0\x10\x01\0\0".to_vec(), "perf script"),
    ] {
        let err = perfdash::profile::parse(&bytes, Path::new("flame.html")).unwrap_err().to_string();
        assert!(err.contains(says), "{err}");
        assert!(!err.contains("without frames"), "{err}");
    }
}

/// Files as Windows tools and editors leave them: a byte-order mark and
/// CRLF line ends read the same; a last line cut short is left out with a
/// warning; a truncated gzip profile is an error naming gzip.
#[test]
fn boms_crlf_and_cut_files_read_as_users_have_them() {
    let tmp = tempfile::tempdir().unwrap();
    let plain = std::fs::read_to_string(dir("hey").join("orders.csv")).unwrap();
    let windows = format!("\u{feff}{}", plain.replace('\n', "\r\n"));
    let path = tmp.path().join("round-1.csv");
    std::fs::write(&path, &windows).unwrap();
    let (_, a) = group(&path, &settings(1.0, false), "");
    let (_, b) = group(&dir("hey").join("orders.csv"), &settings(1.0, false), "");
    assert_eq!(a, b);
    // Cut in the middle of the last line.
    std::fs::write(&path, &plain[..plain.len() - 3]).unwrap();
    let r = analyse_file(&path, Path::new("round-1.csv"), &settings(0.0, false)).unwrap();
    assert!(
        r.warnings
            .iter()
            .any(|w| w.message.contains("last line is incomplete")),
        "{:?}",
        r.warnings
    );
    let rows = expected("hey")["orders"]["rows"].as_u64().unwrap();
    assert_eq!(r.groups[""].as_ref().unwrap().stats.count, Some(rows - 1));
    // A truncated gzip pprof.
    let pprof = std::fs::read(dir("go").join("cpu.pprof")).unwrap();
    let err =
        perfdash::profile::parse(&pprof[..pprof.len() / 2], Path::new("flame.pb.gz")).unwrap_err();
    assert!(err.to_string().contains("gzip"), "{err}");
}

/// The formats in an archive: `build` reads each by content from the
/// endpoint folders, a hey file at run level (which cannot name its
/// endpoint) is refused with where to put it, and profiles of every new
/// kind get their flame pages.
#[test]
fn build_reads_every_new_format_from_an_archive() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    let runs = ["2026-11-02T0300Z", "2026-11-04T0300Z", "2026-11-06T0300Z"];
    for run in runs {
        let put = |rel: &str, from: PathBuf| {
            let to = archive.join("runs").join(run).join(rel);
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(from, to).unwrap();
        };
        put("hey/round-1.csv", dir("hey").join("orders.csv"));
        put("ab/round-1.tsv", dir("ab").join("orders.tsv"));
        put("ab/round-1.csv", dir("ab").join("orders.csv"));
        put(
            "artillery/round-1.json",
            dir("artillery").join("report.json"),
        );
        put("locust/round-1.json", dir("locust").join("round-1.json"));
        put("hey/flame.pb.gz", dir("go").join("cpu.pprof"));
        put("ab/flame.jfr", dir("jfr").join("samples.jfr"));
        put("locust/flame.json", dir("pyspy").join("trace.json"));
        put("round-1.csv", dir("hey").join("fail.csv"));
    }
    std::fs::write(
        archive.join("perfdash.toml"),
        "[analysis]\nexpected_rounds = 1\n[raw]\nwarmup_seconds = 1\n",
    )
    .unwrap();
    let out = tmp.path().join("site");
    let run = assert_cmd::Command::cargo_bin("perfdash")
        .unwrap()
        .args(["build", "--no-cache", "--archive"])
        .arg(&archive)
        .arg("--out")
        .arg(&out)
        .env("PERFDASH_NOW", "2026-11-07T00:00:00Z")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("round-1.csv: skipped: hey -o csv does not say which endpoint it measured"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("already read"),
        "ab's -e beside its -g is no duplicate: {stderr}"
    );
    let data: serde_json::Value = serde_json::from_slice(
        &std::fs::read(
            out.join("data/runs")
                .join(format!("{}.json", runs[2]).to_lowercase()),
        )
        .unwrap_or_else(|_| {
            let dir = std::fs::read_dir(out.join("data/runs"))
                .unwrap()
                .last()
                .unwrap()
                .unwrap()
                .path();
            std::fs::read(dir).unwrap()
        }),
    )
    .unwrap();
    let text = data.to_string();
    for format in ["hey-csv", "ab-gnuplot", "artillery-report", "locust-json"] {
        assert!(text.contains(format), "{format} missing from {text:.400}");
    }
    let flames: Vec<String> = walk(&out.join("flame"));
    for endpoint in ["hey", "ab", "locust"] {
        assert!(
            flames
                .iter()
                .any(|f| f.contains(&format!("flame/{endpoint}/")) && f.ends_with(".html")),
            "{flames:?}"
        );
    }
}

fn walk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p.display().to_string());
        }
    }
    out
}

mod property {
    use proptest::prelude::*;
    use std::path::Path;

    /// An independent reading of "folded stacks": lines `stack count`
    /// (a count of digits with an optional fraction after the last ASCII
    /// whitespace, the stack holding no tab), at least half of the lines
    /// that are not comments.
    fn reads_as_folded(bytes: &[u8]) -> bool {
        let Ok(text) = std::str::from_utf8(bytes) else {
            return false;
        };
        let text = text.trim_start_matches('\u{feff}');
        let (mut good, mut bad) = (0, 0);
        for line in text.split('\n') {
            let line = line.trim_end_matches('\r').trim();
            if line.is_empty() || line.starts_with('#') || line.starts_with("//") {
                continue;
            }
            let ok = match line.rfind(|c: char| c.is_ascii_whitespace()) {
                Some(at) => {
                    let (stack, count) = (line[..at].trim_end(), &line[at + 1..]);
                    let digits = count.split_once('.').map_or((count, ""), |(a, b)| (a, b));
                    !digits.0.is_empty()
                        && digits.0.bytes().all(|b| b.is_ascii_digit())
                        && digits.1.bytes().all(|b| b.is_ascii_digit())
                        && !stack.is_empty()
                        && !stack.contains('\t')
                }
                None => line.bytes().all(|b| b.is_ascii_digit() || b == b'.'),
            };
            if ok { good += 1 } else { bad += 1 }
        }
        good >= bad
    }

    fn number() -> impl Strategy<Value = String> {
        (0u32..100_000, 0u32..10_000).prop_map(|(a, b)| format!("{a}.{b:04}"))
    }

    /// Rows of the load-test outputs perfdash reads, as their tools write them.
    fn load_test_output() -> impl Strategy<Value = String> {
        let rows = |header: &'static str, row: BoxedStrategy<String>| {
            prop::collection::vec(row, 1..40)
                .prop_map(move |rows| format!("{header}\n{}\n", rows.join("\n")))
        };
        prop_oneof![
            rows("starttime\tseconds\tctime\tdtime\tttime\twait",
                 (1_700_000_000u64..1_800_000_000, 0u32..50, 0u32..500).prop_map(|(s, c, d)| format!("Thu Dec 03 17:57:08 2026\t{s}\t{c}\t{d}\t{}\t{d}", c + d)).boxed()),
            rows("response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read,status-code,offset",
                 (number(), 100u16..600, number()).prop_map(|(t, s, o)| format!("{t},0.0001,0.0000,0.0000,{t},0.0001,{s},{o}")).boxed()),
            rows("timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,failureMessage,bytes,sentBytes,grpThreads,allThreads,URL,Latency,IdleTime,Connect",
                 (1_700_000_000_000u64..1_800_000_000_000, 1u32..5000).prop_map(|(t, e)| format!("{t},{e},GET /orders,200,OK,Thread Group 1-1,text,true,,120,80,1,1,http://localhost/orders,{e},0,1")).boxed()),
            rows("metric_name,timestamp,metric_value,check,error,error_code,expected_response,group,method,name,proto,scenario,service,status,subproto,tls_version,url,extra_tags,metadata",
                 (1_700_000_000u64..1_800_000_000, number()).prop_map(|(t, v)| format!("http_req_duration,{t},{v},,,,true,,GET,GET /orders,HTTP/1.1,default,,200,,,http://localhost/orders,,")).boxed()),
            rows("Percentage served,Time in ms",
                 (0u32..101, number()).prop_map(|(p, t)| format!("{p},{t}")).boxed()),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn no_load_test_output_is_read_as_a_profile(text in load_test_output()) {
            let r = perfdash::profile::parse(text.as_bytes(), Path::new("flame.txt"));
            prop_assert!(r.is_err(), "read as a profile: {:?}", r.map(|p| p.format));
        }

        #[test]
        fn text_is_a_profile_only_when_it_parses_as_one(
            lines in prop::collection::vec("[a-zA-Z_;:./ \\t0-9<>(){}-]{0,30}", 0..20),
            crlf in any::<bool>(),
        ) {
            let text = lines.join(if crlf { "\r\n" } else { "\n" });
            if let Ok(p) = perfdash::profile::parse(text.as_bytes(), Path::new("flame.txt")) {
                match p.format {
                    perfdash::profile::ProfileFormat::Folded => prop_assert!(reads_as_folded(text.as_bytes()), "{text:?}"),
                    other => prop_assert!(false, "{text:?} read as {other:?}"),
                }
            }
        }

        #[test]
        fn bytes_are_a_profile_only_when_they_parse_as_one(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
            if let Ok(p) = perfdash::profile::parse(&bytes, Path::new("flame.bin")) {
                match p.format {
                    perfdash::profile::ProfileFormat::Folded => prop_assert!(reads_as_folded(&bytes) || p.stacks.is_empty()),
                    perfdash::profile::ProfileFormat::Pprof => prop_assert!(!p.stacks.is_empty() || p.total == 0.0),
                    _ => {}
                }
            }
        }
    }
}

mod damaged {
    use proptest::prelude::*;
    use std::path::Path;

    fn real(name: &str) -> Vec<u8> {
        std::fs::read(
            super::dir(name.split('/').next().unwrap()).join(name.split('/').nth(1).unwrap()),
        )
        .unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]
        /// A real JFR recording or pprof profile with bytes changed or cut
        /// anywhere is read or refused, never a panic, a hang or an
        /// allocation of whatever size a damaged length claims.
        #[test]
        fn damaged_recordings_are_read_or_refused(
            which in 0usize..3,
            edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
            cut in any::<prop::sample::Index>(),
            do_cut in any::<bool>(),
        ) {
            let mut bytes = match which {
                0 => real("jfr/samples.jfr"),
                1 => real("jfr/no-samples.jfr"),
                _ => {
                    use std::io::Read;
                    let mut plain = Vec::new();
                    flate2::read::GzDecoder::new(&real("go/cpu.pprof")[..]).read_to_end(&mut plain).unwrap();
                    plain
                }
            };
            for (at, b) in edits {
                let i = at.index(bytes.len());
                bytes[i] = b;
            }
            if do_cut {
                bytes.truncate(cut.index(bytes.len()));
            }
            let _ = perfdash::profile::parse(&bytes, Path::new("flame.bin"));
        }
    }
}
