//! Conformance: real k6 summaries written by k6 itself (../shared/fixtures).

mod common;

use std::path::Path;

use perfdash::ingest::k6_summary::{parse, parse_summary, round_stats};
use perfdash::model::SourceFormat;

fn read(dir: &Path, rel: &str) -> Vec<u8> {
    std::fs::read(dir.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

#[test]
fn comparing_json_and_protobuf_handle_summary() {
    let Some(dir) = common::shared_fixtures() else {
        return;
    };
    let rel = "Comparing_JSON_and_ProtoBuf/Gateway/k6_json/json_get_user_id/reports/json_get_user_id_gateway/1000/report_1/summary.json";
    let r = parse(&read(&dir, rel), Path::new(rel), "http_req_duration").unwrap();
    assert_eq!(r.format, SourceFormat::K6HandleSummary);
    // No request failed in that run, so the expected_response:true
    // sub-metric equals the whole metric; it is the one perfdash prefers.
    assert_eq!(r.metric_key, "http_req_duration{expected_response:true}");
    assert_eq!(r.stats.p99_ms, 54.957348749999994);
    assert_eq!(r.stats.p50_ms, Some(3.1879185));
    assert_eq!(r.stats.count, Some(1000));
    assert_eq!(r.stats.error_rate, Some(0.0));
}

#[test]
fn k6_reporter_simple_has_p99_and_failed_requests() {
    let Some(dir) = common::shared_fixtures() else {
        return;
    };
    let rel = "k6-reporter/tests/data/simple.json";
    let r = parse(&read(&dir, rel), Path::new(rel), "http_req_duration").unwrap();
    assert_eq!(r.format, SourceFormat::K6HandleSummary);
    assert_eq!(r.stats.p99_ms, 36.64458528, "successful requests only");
    assert_eq!(r.stats.count, Some(878));
    // http_req_failed's `rate` is the failed share (349 of 878).
    assert!((r.stats.error_rate.unwrap() - 349.0 / 878.0).abs() < 1e-12);
    let summary = parse_summary(&read(&dir, rel), Path::new(rel)).unwrap();
    assert!(
        summary
            .thresholds()
            .iter()
            .any(|t| t.expression == "p(95)<1000" && t.passed)
    );
}

#[test]
fn k6_reporter_grpc_without_p99_gives_the_clear_error() {
    let Some(dir) = common::shared_fixtures() else {
        return;
    };
    let rel = "k6-reporter/tests/data/grpc.json";
    let summary = parse_summary(&read(&dir, rel), Path::new(rel)).unwrap();
    assert_eq!(summary.format, SourceFormat::K6HandleSummary);
    assert!(
        summary.thresholds().iter().any(|t| !t.passed),
        "grpc.json has a failed threshold"
    );
    let err = round_stats(&summary, Path::new(rel), "grpc_req_duration")
        .unwrap_err()
        .to_string();
    assert!(err.starts_with(rel), "{err}");
    assert!(err.contains("add \"p(99)\" to summaryTrendStats"), "{err}");
}

#[test]
fn pre_030_exports_parse_but_lack_p99() {
    let Some(dir) = common::shared_fixtures() else {
        return;
    };
    for rel in [
        "k6-html-reporter@137e85c/perf/export.json",
        "k6-html-reporter@4487126/dev/export.json",
    ] {
        let summary = parse_summary(&read(&dir, rel), Path::new(rel)).unwrap();
        assert_eq!(summary.format, SourceFormat::K6SummaryExport, "{rel}");
        let err = round_stats(&summary, Path::new(rel), "http_req_duration")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with(&format!("{rel}: ")), "{err}");
        assert!(
            err.contains("has no p(99)") && err.contains("summaryTrendStats"),
            "{err}"
        );
    }
}

#[test]
fn legacy_export_thresholds_are_inverted_back() {
    let Some(dir) = common::shared_fixtures() else {
        return;
    };
    let rel = "k6-html-reporter@4487126/dev/export.json";
    let summary = parse_summary(&read(&dir, rel), Path::new(rel)).unwrap();
    let t = summary.thresholds();
    // The export writes `"p(90) < 400": true`, which means it FAILED
    // (avg 333 ms, p(90) 595 ms), and `"p(95) < 1000": false` = passed.
    let get = |e: &str| t.iter().find(|t| t.expression == e).unwrap().passed;
    assert!(!get("p(90) < 400"));
    assert!(get("p(95) < 1000"));
    assert!(get("rate>0.90"));
}

#[test]
fn handle_summary_of_the_html_reporter_parses() {
    let Some(dir) = common::shared_fixtures() else {
        return;
    };
    let rel = "k6-html-reporter/dev/export.json";
    let summary = parse_summary(&read(&dir, rel), Path::new(rel)).unwrap();
    assert_eq!(summary.format, SourceFormat::K6HandleSummary);
    assert!(
        summary
            .metrics()
            .iter()
            .any(|(k, _)| *k == "http_req_duration")
    );
}
