//! `perfdash inspect` end to end on the project's own real k6 run.

use std::path::Path;

use assert_cmd::Command;

fn k6_real(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/k6-real")
        .join(name)
        .display()
        .to_string()
}

#[test]
fn table_shows_each_file_and_endpoint() {
    let out = Command::cargo_bin("perfdash")
        .unwrap()
        .args([
            "inspect",
            &k6_real("round-1.ndjson.gz"),
            &k6_real("round-1.summary.json"),
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("file") && lines[0].contains("p99"),
        "{text}"
    );
    let raw = lines
        .iter()
        .find(|l| l.contains("round-1.ndjson.gz"))
        .unwrap();
    assert!(
        raw.contains("GET /orders") && raw.contains("15 s") && raw.contains("27.53"),
        "{raw}"
    );
    let summary = lines
        .iter()
        .find(|l| l.contains("round-1.summary.json"))
        .unwrap();
    assert!(
        summary.contains("(all)") && summary.contains("none") && summary.contains("38.42"),
        "{summary}"
    );
}

#[test]
fn json_with_warmup_override() {
    let out = Command::cargo_bin("perfdash")
        .unwrap()
        .args([
            "inspect",
            "--warmup",
            "0",
            "--format",
            "json",
            &k6_real("round-1.csv.gz"),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = &doc["rows"][0];
    assert_eq!(row["format"], "k6-csv");
    assert_eq!(row["endpoint"], "GET /orders");
    assert_eq!(row["stats"]["count"], 532);
    let p99 = row["stats"]["p99_ms"].as_f64().unwrap();
    assert!((p99 - 38.41685909999992).abs() < 1e-6, "{p99}");
}

#[test]
fn unreadable_files_are_errors_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("notes.txt");
    std::fs::write(&bad, "hello\n").unwrap();
    let out = Command::cargo_bin("perfdash")
        .unwrap()
        .args(["inspect", bad.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(
        text.starts_with("error: ")
            && text.contains("notes.txt")
            && text.contains("unknown content"),
        "{text}"
    );
    let out = Command::cargo_bin("perfdash")
        .unwrap()
        .args(["inspect", "--warmup", "-1", &k6_real("round-1.csv.gz")])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
