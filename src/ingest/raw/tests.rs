//! Raw parsers against the real third-party files in ../shared/fixtures
//! (read in place, never copied) and small hand-written edge cases.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use super::*;

const K6_RUN: &str = "Comparing_JSON_and_ProtoBuf/Gateway/k6_json/json_get_user_id/reports/json_get_user_id_gateway/1000/report_1";

fn fixture(rel: &str) -> Option<PathBuf> {
    Some(crate::shared_fixtures::dir()?.join(rel))
}

fn settings(
    split: Option<&str>,
    warmup_s: f64,
    method: PercentileMethod,
    failures: bool,
) -> FileSettings {
    FileSettings {
        read: ReadOptions {
            metric: "http_req_duration".into(),
            split_tag: split.map(str::to_string),
            limits: Default::default(),
        },
        stats: StatsOptions {
            warmup_s,
            method,
            failures_in_latency: failures,
        },
        tag_map: BTreeMap::new(),
        endpoint_warmups: BTreeMap::new(),
    }
}

fn only_group(r: &FileResult) -> &GroupResult {
    assert_eq!(r.groups.len(), 1, "{:?}", r.groups.keys());
    r.groups.values().next().unwrap().as_ref().unwrap()
}

/// `http_req_duration` values of the k6 summary of the same run.
fn k6_summary_values() -> serde_json::Value {
    let text =
        std::fs::read_to_string(fixture(&format!("{K6_RUN}/summary.json")).unwrap()).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    doc["metrics"]["http_req_duration"]["values"].clone()
}

fn rel_close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * b.abs().max(1e-300)
}

#[test]
fn k6_ndjson_reproduces_k6_summary_untrimmed() {
    let Some(path) = fixture(&format!("{K6_RUN}/data.json")) else {
        return;
    };
    let r = analyse_file(
        &path,
        Path::new("data.json"),
        &settings(None, 0.0, PercentileMethod::Linear, false),
    )
    .unwrap();
    assert_eq!(r.format, SourceFormat::K6Ndjson);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    let g = only_group(&r);
    let want = k6_summary_values();
    let s = &g.stats;
    assert_eq!(s.count, Some(want["count"].as_f64().unwrap() as u64));
    for (got, key) in [
        (s.p99_ms, "p(99)"),
        (s.p95_ms.unwrap(), "p(95)"),
        (s.p90_ms.unwrap(), "p(90)"),
        (s.p50_ms.unwrap(), "med"),
        (s.mean_ms.unwrap(), "avg"),
        (s.min_ms.unwrap(), "min"),
        (s.max_ms.unwrap(), "max"),
    ] {
        let w = want[key].as_f64().unwrap();
        assert!(rel_close(got, w, 1e-9), "{key}: got {got}, k6 says {w}");
    }
    assert_eq!(g.untrimmed_p99_ms, Some(s.p99_ms));
    assert_eq!(s.error_rate, Some(0.0));
}

#[test]
fn k6_csv_reproduces_k6_summary_to_printed_precision() {
    let Some(path) = fixture(&format!("{K6_RUN}/data.csv")) else {
        return;
    };
    let r = analyse_file(
        &path,
        Path::new("data.csv"),
        &settings(None, 0.0, PercentileMethod::Linear, false),
    )
    .unwrap();
    assert_eq!(r.format, SourceFormat::K6Csv);
    let g = only_group(&r);
    let want = k6_summary_values();
    // The CSV prints values with 6 decimals (%f): interpolating between two
    // such values is off by at most half a unit of the last digit.
    for (got, key) in [(g.stats.p99_ms, "p(99)"), (g.stats.p50_ms.unwrap(), "med")] {
        let w = want[key].as_f64().unwrap();
        assert!(
            (got - w).abs() <= 0.5e-6 + 1e-12,
            "{key}: got {got}, k6 says {w}"
        );
    }
    assert_eq!(g.stats.count, Some(1000));
}

#[test]
fn k6_ndjson_split_by_name_and_slugged() {
    let Some(path) = fixture(&format!("{K6_RUN}/data.json")) else {
        return;
    };
    let r = analyse_file(
        &path,
        Path::new("d"),
        &settings(Some("name"), 0.0, PercentileMethod::Linear, false),
    )
    .unwrap();
    assert_eq!(r.groups.keys().collect::<Vec<_>>(), vec!["users-1"]);
    let mut s = settings(Some("name"), 0.0, PercentileMethod::Linear, false);
    s.tag_map
        .insert("http://localhost:8082/users/1".into(), "user-by-id".into());
    let r = analyse_file(&path, Path::new("d"), &s).unwrap();
    assert_eq!(r.groups.keys().collect::<Vec<_>>(), vec!["user-by-id"]);
}

#[test]
fn k6_ndjson_gzip_equals_plain_and_truncation_warns() {
    let Some(path) = fixture(&format!("{K6_RUN}/data.json")) else {
        return;
    };
    let bytes = std::fs::read(&path).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let s = settings(None, 0.0, PercentileMethod::Linear, false);
    let plain = analyse_file(&path, Path::new("p"), &s).unwrap();

    let gz_path = dir.path().join("round-1.ndjson.gz");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(&bytes).unwrap();
    let gz = enc.finish().unwrap();
    std::fs::write(&gz_path, &gz).unwrap();
    let from_gz = analyse_file(&gz_path, Path::new("g"), &s).unwrap();
    assert_eq!(from_gz.groups, plain.groups);

    // k6 killed mid-write: the file stops inside a line.
    let cut = bytes.len() * 2 / 3;
    let cut_path = dir.path().join("cut.ndjson");
    std::fs::write(&cut_path, &bytes[..cut]).unwrap();
    let r = analyse_file(&cut_path, Path::new("cut.ndjson"), &s).unwrap();
    let n = only_group(&r).stats.count.unwrap();
    assert!(n > 500 && n < 1000, "{n}");
    let complete_lines = bytes[..cut].iter().filter(|&&b| b == b'\n').count() as u64;
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    assert_eq!(r.warnings[0].line, Some(complete_lines + 1));

    // A gzip stream cut short.
    let cut_gz = dir.path().join("cut.ndjson.gz");
    std::fs::write(&cut_gz, &gz[..gz.len() / 2]).unwrap();
    let r = analyse_file(&cut_gz, Path::new("cut.ndjson.gz"), &s).unwrap();
    assert!(
        r.warnings
            .iter()
            .any(|w| w.message.contains("gzip stream is cut short")),
        "{:?}",
        r.warnings
    );
    assert!(only_group(&r).stats.count.unwrap() < 1000);
}

#[test]
fn k6_ndjson_errors_name_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.ndjson");
    std::fs::write(
        &p,
        "{\"type\":\"Metric\",\"data\":{\"name\":\"http_req_duration\"},\"metric\":\"http_req_duration\"}\n\
         {\"metric\":\"http_req_duration\",\"type\":\"Point\",\"data\":{\"time\":\"2025-06-14T09:21:29.14+01:00\",\"value\":2.5,\"tags\":{}}}\n\
         {\"metric\":\"http_req_duration\",\"type\":\"Point\",\"data\":{\"time\":\"2025-06-14T09:21:30+01:00\",\"value\":-1,\"tags\":{}}}\n",
    )
    .unwrap();
    let err = read_file(
        &p,
        Path::new("runs/r/e/round-1.ndjson"),
        &ReadOptions::default(),
    )
    .unwrap_err();
    let msg = err.to_string();
    assert!(msg.starts_with("runs/r/e/round-1.ndjson:3: "), "{msg}");
}

/// k6's own lines (the real run in tests/fixtures/k6-real, k6 v1.x) are
/// read directly, without the JSON reader; a reordered line is not.
#[test]
fn k6_own_lines_take_the_direct_path() {
    use super::k6_ndjson::{Matcher, parse_point};
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/k6-real/round-1.ndjson.gz");
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    // The shared fixtures' k6 run (an older k6) too, when present.
    if let Some(other) = fixture(&format!("{K6_RUN}/data.json")) {
        text.push_str(&std::fs::read_to_string(other).unwrap());
    }
    let m = Matcher::new("http_req_duration", Some("name"));
    let mut direct = 0;
    for line in text
        .lines()
        .filter(|l| l.starts_with("{\"metric\":\"http_req_duration\""))
    {
        assert!(parse_point(&m, line.as_bytes()).is_some(), "{line}");
        direct += 1;
    }
    assert!(direct >= 532, "{direct}");
    let reordered = "{\"metric\":\"http_req_duration\",\"type\":\"Point\",\"data\":{\"time\":\"2026-11-29T19:28:28Z\",\"tags\":{},\"value\":1}}";
    assert!(parse_point(&m, reordered.as_bytes()).is_none());
    let negative = "{\"metric\":\"http_req_duration\",\"type\":\"Point\",\"data\":{\"time\":\"2026-11-29T19:28:28Z\",\"value\":-1,\"tags\":{}}}";
    assert!(
        parse_point(&m, negative.as_bytes()).is_none(),
        "left to the JSON reader's error"
    );
    let with_metadata = "{\"metric\":\"http_req_duration\",\"type\":\"Point\",\"data\":{\"time\":\"2026-11-29T19:28:28Z\",\"value\":1.5e1,\"tags\":{\"name\":\"a\"},\"metadata\":{\"vu\":\"1\"}}}";
    let p = parse_point(&m, with_metadata.as_bytes()).unwrap();
    assert_eq!((p.sample.ms, p.key), (15.0, &b"a"[..]));
}

#[test]
fn k6_ndjson_reads_any_key_order() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("jq.ndjson");
    std::fs::write(
        &p,
        "{\"type\":\"Point\",\"metric\":\"http_req_duration\",\"data\":{\"value\":3,\"time\":\"2025-06-14T09:21:29Z\",\"tags\":{\"expected_response\":\"false\"}}}\n\
         {\"type\":\"Point\",\"metric\":\"http_req_duration\",\"data\":{\"value\":4,\"time\":\"2025-06-14T09:21:30Z\",\"tags\":{}}}\n",
    )
    .unwrap();
    let raw = read_file(&p, Path::new("jq.ndjson"), &ReadOptions::default()).unwrap();
    let RawContent::Samples { groups, .. } = raw.content else {
        panic!()
    };
    assert_eq!(groups[""].ok.len(), 1);
    assert_eq!(groups[""].failed.len(), 1);
    assert_eq!(groups[""].ok.iter().next().unwrap().ms, 4.0);
    // Read at full speed now: nothing to warn about.
    assert!(raw.warnings.is_empty(), "{:?}", raw.warnings);
}

#[test]
fn jmeter_csv_reproduces_the_dashboard_statistics() {
    let Some(csv) = fixture("jmeter/bin/testfiles/HTMLReportTestFile.csv") else {
        return;
    };
    let expect_path =
        fixture("jmeter/src/dist-check/src/test/resources/org/apache/jmeter/gui/report/HTMLReportExpect.json").unwrap();
    let expect: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(expect_path).unwrap()).unwrap();
    // JMeter's dashboard counts failed samples in the latency figures.
    let split = analyse_file(
        &csv,
        Path::new("c"),
        &settings(Some("label"), 0.0, PercentileMethod::JmeterDashboard, true),
    )
    .unwrap();
    let mut by_label: BTreeMap<String, RoundStats> = split
        .groups
        .iter()
        .map(|(k, v)| (k.clone(), v.clone().unwrap().stats))
        .collect();
    // Labels become slugs as endpoint ids: jr-ok, jr-ko.
    let total = analyse_file(
        &csv,
        Path::new("c"),
        &settings(None, 0.0, PercentileMethod::JmeterDashboard, true),
    )
    .unwrap();
    by_label.insert("Total".into(), only_group(&total).stats.clone());
    for (label, id) in [("JR-OK", "jr-ok"), ("JR-KO", "jr-ko"), ("Total", "Total")] {
        let want = &expect[label];
        let got = &by_label[id];
        let w = |k: &str| want[k].as_f64().unwrap();
        assert_eq!(got.count, Some(w("sampleCount") as u64), "{label}");
        let checks = [
            ("errorPct", got.error_rate.unwrap() * 100.0, 1e-7), // JMeter prints errorPct as a float
            ("meanResTime", got.mean_ms.unwrap(), 1e-12),
            ("medianResTime", got.p50_ms.unwrap(), 1e-12),
            ("minResTime", got.min_ms.unwrap(), 0.0),
            ("maxResTime", got.max_ms.unwrap(), 0.0),
            ("pct1ResTime", got.p90_ms.unwrap(), 1e-12),
            ("pct2ResTime", got.p95_ms.unwrap(), 1e-12),
            ("pct3ResTime", got.p99_ms, 1e-12),
            ("throughput", got.throughput_rps.unwrap(), 1e-12),
        ];
        for (key, value, tol) in checks {
            assert!(
                rel_close(value, w(key), tol),
                "{label} {key}: got {value}, JMeter says {}",
                w(key)
            );
        }
    }
    // The k6/R-7 definition differs on this data, so the option matters.
    let linear = analyse_file(
        &csv,
        Path::new("c"),
        &settings(None, 0.0, PercentileMethod::Linear, true),
    )
    .unwrap();
    assert_ne!(only_group(&linear).stats.p95_ms, by_label["Total"].p95_ms);
}

#[test]
fn jmeter_variants() {
    let Some(dir) = fixture("jmeter/bin/testfiles") else {
        return;
    };
    let s = settings(None, 0.0, PercentileMethod::Linear, false);
    // Non-default columns, all failures: a failed round (no latency, every
    // request an error), never a file skipped as unreadable (issue 32).
    let all_failed =
        analyse_file(&dir.join("HTMLReportFalseTestFile.csv"), Path::new("f"), &s).unwrap();
    let failed = &only_group(&all_failed).stats;
    assert_eq!(
        (failed.count, failed.p99_ms, failed.error_rate),
        (Some(50), 0.0, Some(1.0))
    );

    let with_failures = analyse_file(
        &dir.join("HTMLReportFalseTestFile.csv"),
        Path::new("f"),
        &settings(None, 0.0, PercentileMethod::Linear, true),
    )
    .unwrap();
    assert_eq!(only_group(&with_failures).stats.error_rate, Some(1.0));
    assert_eq!(only_group(&with_failures).stats.count, Some(50));
    // No timing columns: a clear error naming the file and line 1.
    let err = read_file(&dir.join("BatchTestLocal.csv"), Path::new("b.csv"), &s.read)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("b.csv:1: ") && err.contains("elapsed"),
        "{err}"
    );
    // A 5-column headerless file is not a JTL layout perfdash can map.
    let err = read_file(&dir.join("TEST_HTTP_Java.csv"), Path::new("t.csv"), &s.read)
        .unwrap_err()
        .to_string();
    assert!(err.contains("unknown content"), "{err}");
    // XML: 2005-era httpSample attributes.
    let xml = analyse_file(
        &dir.join("sample_log1c.jtl"),
        Path::new("x"),
        &settings(Some("lb"), 0.0, PercentileMethod::Linear, false),
    )
    .unwrap();
    assert_eq!(xml.format, SourceFormat::JmeterXml);
    assert!(
        xml.groups.contains_key("jakarta-home") && xml.groups.contains_key("jmeter-home"),
        "{:?}",
        xml.groups.keys()
    );
    let text = std::fs::read_to_string(dir.join("sample_log1c.jtl")).unwrap();
    let samples = text.matches("<httpSample").count() as u64;
    let total = analyse_file(&dir.join("sample_log1c.jtl"), Path::new("x"), &s).unwrap();
    let g = only_group(&total);
    assert_eq!(g.stats.count, Some(samples));
    // XML samples without t/ts.
    let err = read_file(&dir.join("BatchTestLocal.xml"), Path::new("b.xml"), &s.read)
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("b.xml:3: ") && err.contains("t="), "{err}");
}

#[test]
fn jmeter_headerless_layouts_and_multiline_fields() {
    let dir = tempfile::tempdir().unwrap();
    // 2.13 default: 12 columns, no header.
    let p = dir.path().join("213.jtl");
    std::fs::write(
        &p,
        "1400000000000,120,home,200,OK,TG 1-1,text,true,512,1,1,100\n\
         1400000001000,80,home,500,\"Server, sad\",TG 1-1,text,false,512,1,1,70\n",
    )
    .unwrap();
    let r = analyse_file(
        &p,
        Path::new("213.jtl"),
        &settings(None, 0.0, PercentileMethod::Linear, false),
    )
    .unwrap();
    assert_eq!(r.format, SourceFormat::JmeterCsv);
    let g = only_group(&r);
    assert_eq!(
        (g.stats.count, g.stats.p99_ms, g.stats.error_rate),
        (Some(2), 120.0, Some(0.5))
    );
    // 5.x header with a failure message spanning lines.
    let p = dir.path().join("5x.csv");
    std::fs::write(
        &p,
        "timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,failureMessage,bytes,sentBytes,grpThreads,allThreads,URL,Latency,IdleTime,Connect\n\
         1551783627191,351,JR-KO,500,Bad,TG 1-1,text,false,\"line one,\nline \"\"two\"\"\",18,8,1,1,null,0,0,0\n\
         1551783627543,192,JR-OK,200,Good,TG 1-1,text,true,,18,8,1,1,null,0,0,0\n\
         1551783628543,abc,JR-OK,200,Good,TG 1-1,text,true,,18,8,1,1,null,0,0,0\n",
    )
    .unwrap();
    let err = read_file(&p, Path::new("5x.csv"), &ReadOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("5x.csv:5: "),
        "the bad row is on line 5 (a field spans two lines): {err}"
    );
}

#[test]
fn gatling_text_layouts_and_binary() {
    let Some(path) = fixture(
        "gatling@v3.12.0/gatling-charts/src/test/resources/single_node_with_known_stats/simulation.log",
    ) else {
        return;
    };
    let r = analyse_file(
        &path,
        Path::new("s"),
        &settings(None, 0.0, PercentileMethod::Linear, false),
    )
    .unwrap();
    assert_eq!(r.format, SourceFormat::GatlingLog);
    let g = only_group(&r);
    // end − start of the 8 REQUEST records: 2,9,4,4,4,5,5,7 s.
    assert_eq!(g.stats.count, Some(8));
    assert_eq!(
        (g.stats.min_ms, g.stats.max_ms),
        (Some(2000.0), Some(9000.0))
    );
    assert_eq!(g.stats.mean_ms, Some(5000.0));
    // Pre-3.4 layout with a user id column.
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("simulation.log");
    std::fs::write(
        &old,
        "RUN\tcomputerdatabase.BasicSimulation\tbasicsimulation\t1553000000000\t \t3.1\n\
         USER\tScenario\t1\tSTART\t1553000000000\t1553000000000\n\
         REQUEST\t1\t\trequest_1\t1553000000100\t1553000000150\tOK\t \n\
         REQUEST\t1\t\trequest_2\t1553000000200\t1553000000300\tKO\tstatus.find.is(200), but actually found 500\n",
    )
    .unwrap();
    let r = analyse_file(
        &old,
        Path::new("s"),
        &settings(Some("name"), 0.0, PercentileMethod::Linear, true),
    )
    .unwrap();
    assert_eq!(
        r.groups.keys().collect::<Vec<_>>(),
        vec!["request-1", "request-2"]
    );
    assert_eq!(
        r.groups["request-2"].as_ref().unwrap().stats.error_rate,
        Some(1.0)
    );
    assert_eq!(r.groups["request-1"].as_ref().unwrap().stats.p99_ms, 50.0);

    // The binary log (Gatling 3.12.1+) is recognised by content and read;
    // its figures are checked against Gatling's own test in
    // tests/gatling_binary_fixtures.rs.
    let bin =
        fixture("gatling/gatling-charts/src/test/resources/known_stats/simulation.log").unwrap();
    let r = read_file(&bin, Path::new("simulation.log"), &ReadOptions::default()).unwrap();
    assert_eq!(r.format, SourceFormat::GatlingBinaryLog);
}

#[test]
fn locust_stats_is_summary_only() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("round-1_stats.csv");
    std::fs::write(
        &p,
        "Type,Name,Request Count,Failure Count,Median Response Time,Average Response Time,Min Response Time,Max Response Time,Average Content Size,Requests/s,Failures/s,50%,66%,75%,80%,90%,95%,98%,99%,99.9%,99.99%,100%\n\
         GET,/orders,100,2,41,45.5,12.1,230.4,512,9.9,0.2,41,47,52,55,66,80,120,150,230,230,230\n\
         GET,/stock,50,0,20,22.0,5.0,90.0,100,5.0,0,20,22,23,24,30,40,60,70,90,90,90\n\
         ,Aggregated,150,2,35,37.7,5.0,230.4,375,14.9,0.2,35,40,45,48,60,75,110,140,230,230,230\n",
    )
    .unwrap();
    let r = analyse_file(
        &p,
        Path::new("l"),
        &settings(None, 15.0, PercentileMethod::Linear, false),
    )
    .unwrap();
    assert_eq!(r.format, SourceFormat::LocustStats);
    let g = only_group(&r);
    assert!(!g.trimmed);
    assert_eq!((g.stats.p99_ms, g.stats.count), (140.0, Some(150)));
    assert!(r.warnings[0].message.contains("no warm-up can be trimmed"));
    assert_eq!(
        r.warnings[0].kind,
        crate::error::DiagnosticKind::Information,
        "a fact about the format, not a problem with the file"
    );
    let split = analyse_file(
        &p,
        Path::new("l"),
        &settings(Some("name"), 15.0, PercentileMethod::Linear, false),
    )
    .unwrap();
    assert_eq!(
        split.groups.keys().collect::<Vec<_>>(),
        vec!["orders", "stock"]
    );
    assert_eq!(
        split.groups["orders"].as_ref().unwrap().stats.error_rate,
        Some(0.02)
    );
}

#[test]
fn warmup_trimming_drops_early_samples() {
    let mut set = SampleSet::default();
    // 10 slow warm-up samples in the first 10 s, then 100 fast ones.
    for i in 0..10 {
        set.push(
            Sample {
                t_us: i * 1_000_000,
                ms: 500.0,
            },
            true,
        );
    }
    for i in 0..100 {
        set.push(
            Sample {
                t_us: 20_000_000 + i * 100_000,
                ms: 10.0 + (i % 10) as f64,
            },
            i % 50 != 0,
        );
    }
    let untrimmed = round_stats(
        &set,
        0,
        false,
        &StatsOptions {
            warmup_s: 0.0,
            ..Default::default()
        },
    )
    .unwrap();
    let trimmed = round_stats(
        &set,
        0,
        false,
        &StatsOptions {
            warmup_s: 15.0,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(untrimmed.max_ms, Some(500.0));
    assert_eq!(trimmed.max_ms, Some(19.0));
    assert_eq!(trimmed.count, Some(100));
    assert_eq!(trimmed.error_rate, Some(0.02));
    // 100 requests between 20 s (first kept) and 29.9 s.
    assert!((trimmed.throughput_rps.unwrap() - 100.0 / 9.9).abs() < 1e-9);
    let err = round_stats(
        &set,
        0,
        false,
        &StatsOptions {
            warmup_s: 60.0,
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(err.contains("removes all 110 samples"), "{err}");
}

#[test]
fn slugs() {
    assert_eq!(slug("GET /api/orders/{id}"), "get-api-orders-id");
    assert_eq!(slug("http://localhost:8082/users/1"), "users-1");
    assert_eq!(slug("https://x.example"), "root");
    assert_eq!(slug("Requête HTTP"), "requ-te-http");
}

#[test]
fn sniffing_by_content() {
    assert_eq!(sniff(b"{\"metrics\":{}}"), Ok(Sniffed::K6Summary));
    assert_eq!(
        sniff(b"{\"type\":\"Metric\",\"data\":{},\"metric\":\"x\"}\n"),
        Ok(Sniffed::K6Ndjson)
    );
    assert_eq!(
        sniff(b"metric_name,timestamp,metric_value,check\n"),
        Ok(Sniffed::K6Csv)
    );
    assert_eq!(
        sniff(b"<?xml version=\"1.0\"?>\n<testResults version=\"1.2\">"),
        Ok(Sniffed::JmeterXml)
    );
    assert_eq!(
        sniff(b"RUN\tSim\tid\t1\t \t3.9\n"),
        Ok(Sniffed::GatlingText)
    );
    assert_eq!(
        sniff(b"timeStamp,elapsed,label\n1,2,x\n"),
        Ok(Sniffed::JmeterCsv)
    );
    assert!(sniff(b"").is_err());
    assert!(sniff(b"hello\n").unwrap_err().contains("unknown"));
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    /// One k6 Point line in k6's key order, written by serde_json (so any
    /// tag value is escaped the way a JSON writer escapes it).
    fn point(metric: &str, t_s: u32, value: f64, name: &str, ok: bool) -> String {
        let tags = serde_json::json!({"expected_response": if ok { "true" } else { "false" }, "name": name, "url": "http://x/{a}\"b\""});
        format!(
            "{{\"metric\":{},\"type\":\"Point\",\"data\":{{\"time\":\"2026-05-04T03:{:02}:{:02}.5+00:00\",\"value\":{value},\"tags\":{tags}}}}}\n",
            serde_json::to_string(metric).unwrap(),
            t_s / 60 % 60,
            t_s % 60
        )
    }

    /// The same Point with its keys in another order at every level, extra
    /// keys among them (as jq or another JSON tool may write it).
    fn shuffled_point(
        metric: &str,
        t_s: u32,
        value: f64,
        name: &str,
        ok: bool,
        order: u64,
    ) -> String {
        fn rotate(mut parts: Vec<String>, by: u64) -> String {
            let n = parts.len();
            parts.rotate_left((by as usize) % n);
            if by % 7 < 3 {
                parts.reverse();
            }
            format!("{{{}}}", parts.join(","))
        }
        let j = |s: &str| serde_json::to_string(s).unwrap();
        let tags = rotate(
            vec![
                format!(
                    "\"expected_response\":{}",
                    j(if ok { "true" } else { "false" })
                ),
                format!("\"name\":{}", j(name)),
                format!("\"url\":{}", j("http://x/{a}\"b\"")),
                "\"extra\":[1,{\"a\":null}]".to_string(),
            ],
            order,
        );
        let data = rotate(
            vec![
                format!(
                    "\"time\":\"2026-05-04T03:{:02}:{:02}.5+00:00\"",
                    t_s / 60 % 60,
                    t_s % 60
                ),
                format!("\"value\":{value}"),
                format!("\"tags\":{tags}"),
            ],
            order / 3,
        );
        rotate(
            vec![
                format!("\"metric\":{}", j(metric)),
                "\"type\":\"Point\"".to_string(),
                format!("\"data\":{data}"),
            ],
            order / 11,
        ) + "\n"
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// The fast prefix scan reads exactly what a JSON parser reads:
        /// every sample, grouped by the decoded tag value, whatever the
        /// value contains (quotes, backslashes, braces, non-ASCII).
        #[test]
        fn fast_scan_equals_json_parse(
            rows in proptest::collection::vec((0u32..3000, 0.0f64..5000.0, "[a-z{}\"\\\\/ é&<>]{0,12}", any::<bool>(), any::<bool>()), 1..60),
        ) {
            let mut text = String::from("{\"type\":\"Metric\",\"data\":{\"name\":\"http_req_duration\"},\"metric\":\"http_req_duration\"}\n");
            let mut want: BTreeMap<String, (usize, usize)> = BTreeMap::new();
            for (t, v, name, ok, other_metric) in &rows {
                let metric = if *other_metric { "http_req_waiting" } else { "http_req_duration" };
                text.push_str(&point(metric, *t, *v, name, *ok));
                if !*other_metric {
                    let e = want.entry(name.clone()).or_default();
                    if *ok { e.0 += 1 } else { e.1 += 1 }
                }
            }
            let dir = tempfile::tempdir().unwrap();
            let p = dir.path().join("p.ndjson");
            std::fs::write(&p, &text).unwrap();
            let opts = ReadOptions { metric: "http_req_duration".into(), split_tag: Some("name".into()), ..Default::default() };
            match read_file(&p, Path::new("p"), &opts) {
                Ok(raw) => {
                    let RawContent::Samples { groups, .. } = raw.content else { panic!() };
                    let got: BTreeMap<String, (usize, usize)> =
                        groups.iter().map(|(k, s)| (k.clone(), (s.ok.len(), s.failed.len()))).collect();
                    prop_assert_eq!(got, want);
                    prop_assert!(raw.warnings.is_empty());
                }
                Err(e) => prop_assert!(want.is_empty(), "{e}"),
            }
        }

        /// Any key order reads exactly what k6's own order reads: the same
        /// samples (times, values, success), grouped by the same decoded
        /// tag values, lines of both orders mixed in one file.
        #[test]
        fn any_key_order_reads_the_same_samples(
            rows in proptest::collection::vec((0u32..3000, 0.0f64..5000.0, "[a-z{}\"\\\\/ é&<>]{0,12}", any::<bool>(), any::<bool>(), any::<u64>()), 1..60),
        ) {
            let header = "{\"type\":\"Metric\",\"data\":{\"name\":\"http_req_duration\",\"type\":\"trend\"},\"metric\":\"http_req_duration\"}\n";
            let mut k6_order = String::from(header);
            let mut shuffled = String::from(header);
            let mut mixed = String::from(header);
            for (i, (t, v, name, ok, other_metric, order)) in rows.iter().enumerate() {
                let metric = if *other_metric { "http_req_waiting" } else { "http_req_duration" };
                let a = point(metric, *t, *v, name, *ok);
                let b = shuffled_point(metric, *t, *v, name, *ok, *order);
                k6_order.push_str(&a);
                shuffled.push_str(&b);
                mixed.push_str(if i % 2 == 0 { &a } else { &b });
            }
            let dir = tempfile::tempdir().unwrap();
            let opts = ReadOptions { metric: "http_req_duration".into(), split_tag: Some("name".into()), ..Default::default() };
            let read = |name: &str, text: &str| {
                let p = dir.path().join(name);
                std::fs::write(&p, text).unwrap();
                read_file(&p, Path::new("p.ndjson"), &opts).map(|r| (r.content, r.warnings)).map_err(|e| e.to_string())
            };
            let want = read("a.ndjson", &k6_order);
            prop_assert_eq!(&read("b.ndjson", &shuffled), &want);
            prop_assert_eq!(&read("c.ndjson", &mixed), &want);
        }
    }
}

/// Large plain files are read in slices by several threads; the result is
/// the one of a single pass, to the bit and in sample order, errors
/// included (the first in the file wins).
mod sliced {
    use super::*;

    fn with_threads<T: Send>(n: usize, f: impl FnOnce() -> T + Send) -> T {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .unwrap()
            .install(f)
    }

    fn read_both(text: &str, name: &str, split: Option<&str>) -> (String, String) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        let opts = ReadOptions {
            split_tag: split.map(str::to_string),
            ..ReadOptions::default()
        };
        let read = || {
            let r = read_file(&p, Path::new(name), &opts);
            format!("{r:?}")
        };
        let one = with_threads(1, read);
        let many = with_threads(5, read);
        (one, many)
    }

    fn ndjson(rows: usize, seed: u64) -> String {
        let mut s = seed | 1;
        let mut text = String::from(
            "{\"type\":\"Metric\",\"data\":{\"name\":\"http_req_duration\",\"type\":\"trend\"},\"metric\":\"http_req_duration\"}\n",
        );
        for i in 0..rows {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let v = (s % 100_000) as f64 / 37.0;
            let name = ["a", "b\\\"q", "c"][(s % 3) as usize];
            let ok = if s.is_multiple_of(11) {
                "false"
            } else {
                "true"
            };
            let t = format!(
                "2026-05-04T03:{:02}:{:02}.{:06}Z",
                (i / 60) % 60,
                i % 60,
                s % 1_000_000
            );
            if s.is_multiple_of(5) {
                text.push_str(&format!(
                    "{{\"type\":\"Point\",\"data\":{{\"tags\":{{\"name\":\"{name}\",\"expected_response\":\"{ok}\"}},\"value\":{v},\"time\":\"{t}\"}},\"metric\":\"http_req_duration\"}}\n"
                ));
            } else {
                text.push_str(&format!(
                    "{{\"metric\":\"http_req_duration\",\"type\":\"Point\",\"data\":{{\"time\":\"{t}\",\"value\":{v},\"tags\":{{\"expected_response\":\"{ok}\",\"name\":\"{name}\"}}}}}}\n"
                ));
            }
            text.push_str(&format!(
                "{{\"metric\":\"http_reqs\",\"type\":\"Point\",\"data\":{{\"time\":\"{t}\",\"value\":1,\"tags\":{{\"name\":\"{name}\"}}}}}}\n"
            ));
        }
        text
    }

    fn jtl(rows: usize, seed: u64) -> String {
        let mut s = seed | 1;
        let mut text = String::from(
            "timeStamp,elapsed,label,responseCode,responseMessage,success,failureMessage\n",
        );
        for i in 0..rows {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let label = ["GET /a", "\"POST /b, with \"\"quotes\"\"\"", "GET /c"][(s % 3) as usize];
            let (ok, message) = if s.is_multiple_of(7) {
                (
                    "false",
                    "\"Assertion failed:\nline two, \"\"quoted\"\"\nline three\"",
                )
            } else {
                ("true", "")
            };
            text.push_str(&format!(
                "{},{},{label},200,OK,{ok},{message}\n",
                1_777_863_600_000u64 + i as u64 * 7,
                s % 900
            ));
        }
        text
    }

    #[test]
    fn ndjson_slices_read_as_one_pass() {
        for seed in [1, 2, 3] {
            let text = ndjson(600, seed);
            assert!(text.len() as u64 > 4 * super::super::slices::MIN_SLICED_BYTES);
            for split in [None, Some("name")] {
                let (one, many) = read_both(&text, "big.ndjson", split);
                assert!(one.starts_with("Ok("), "{one}");
                assert_eq!(one, many);
            }
            // Cut mid-line at the end: the same warning.
            let cut = &text[..text.len() - 20];
            let (one, many) = read_both(cut, "cut.ndjson", Some("name"));
            assert!(one.contains("incomplete"), "{one}");
            assert_eq!(one, many);
            // A bad line in the last third: the same error, the same line.
            let mut lines: Vec<&str> = text.lines().collect();
            let at = lines.len() * 3 / 4;
            lines[at] = "{\"metric\":\"http_req_duration\",\"type\":\"Point\",\"data\":{\"time\":\"2026-05-04T03:00:00Z\",\"value\":-4,\"tags\":{}}}";
            let bad = lines.join("\n") + "\n";
            let (one, many) = read_both(&bad, "bad.ndjson", None);
            assert!(one.contains(&format!("line: Some({})", at + 1)), "{one}");
            assert_eq!(one, many);
        }
    }

    #[test]
    fn jtl_slices_read_as_one_pass_quotes_and_all() {
        for seed in [1, 2, 3] {
            let text = jtl(1500, seed);
            assert!(text.len() as u64 > 4 * super::super::slices::MIN_SLICED_BYTES);
            let (one, many) = read_both(&text, "big.jtl", Some("label"));
            assert!(one.starts_with("Ok("), "{one}");
            assert!(
                one.contains("with \\\"quotes\\\""),
                "labels with quotes read whole: {one}"
            );
            assert_eq!(one, many);
            let (one, many) = read_both(&text[..text.len() - 5], "cut.jtl", Some("label"));
            assert_eq!(one, many);
            // A bad elapsed time late in the file.
            let bad = text.replacen(
                ",true,\n",
                ",true,\n1777863600000,-5,GET /a,200,OK,true,\n",
                1000,
            );
            let (one, many) = read_both(&bad, "bad.jtl", Some("label"));
            assert!(
                one.contains("elapsed is not a non-negative number"),
                "{one}"
            );
            assert_eq!(one, many);
        }
    }
}

mod record_prefilter {
    use super::k6_ndjson::{is_record, probe_is_record};
    use proptest::prelude::*;

    /// A JSON value as k6 or a hand-edited file might write it, including
    /// the record type words, escaped forms and nested objects.
    fn value() -> impl Strategy<Value = String> {
        prop_oneof![
            Just(r#""Metric""#.to_string()),
            Just(r#""Point""#.to_string()),
            Just(r#""\u0050oint""#.to_string()),
            Just(r#""Metr\u0069c""#.to_string()),
            Just(r#""metrics""#.to_string()),
            Just(r#"{"type":"Point"}"#.to_string()),
            Just("12.5".to_string()),
            Just("null".to_string()),
            "[a-zA-Z ]{0,8}".prop_map(|s| format!("\"{s}\"")),
        ]
    }

    fn key() -> impl Strategy<Value = &'static str> {
        prop_oneof![
            Just("type"),
            Just("metric"),
            Just("data"),
            Just("metrics"),
            Just("Point")
        ]
    }

    proptest! {
        /// Telling a record by its bytes first never changes the answer.
        #[test]
        fn the_byte_prefilter_agrees_with_the_json_probe(
            pairs in prop::collection::vec((key(), value()), 0..5),
            spaced in any::<bool>(),
            cut in any::<bool>(),
        ) {
            let sep = if spaced { ", " } else { "," };
            let body: Vec<String> = pairs.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
            let mut line = format!("{{{}}}", body.join(sep));
            if cut {
                line.pop(); // not valid JSON
            }
            prop_assert_eq!(is_record(line.as_bytes()), probe_is_record(line.as_bytes()), "{}", line);
        }
    }

    #[test]
    fn records_and_summaries() {
        let point = br#"{"metric":"http_req_duration","type":"Point","data":{"time":"2026-01-01T00:00:00Z","value":1.5,"tags":{}}}"#;
        assert!(is_record(point));
        assert!(is_record(
            br#"{"type":"Metric","data":{"name":"x"},"metric":"x"}"#
        ));
        assert!(
            is_record(br#"{"type":"\u0050oint","metric":"x"}"#),
            "escaped"
        );
        assert!(!is_record(
            br#"{"metrics":{"http_req_duration":{"values":{"p(99)":1}}}}"#
        ));
    }
}
