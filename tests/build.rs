//! `perfdash build` end to end: the site, the data contract, exit codes,
//! determinism and output safety.

mod common;

use assert_cmd::Command;
use serde_json::Value;

fn perfdash() -> Command {
    Command::cargo_bin("perfdash").unwrap()
}

fn build(archive: &std::path::Path, out: &std::path::Path) -> assert_cmd::assert::Assert {
    perfdash()
        .args(["build", "--archive"])
        .arg(archive)
        .arg("--out")
        .arg(out)
        .assert()
}

#[test]
fn builds_a_site_that_follows_the_contract() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    common::story_archive(&archive);
    let out = tmp.path().join("site");
    build(&archive, &out).success().code(0);

    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(index.contains(r#"href="endpoints/orders.html""#));
    assert!(index.contains(r#"href="endpoints/inventory.html""#));
    for page in ["endpoints/orders.html", "endpoints/inventory.html"] {
        let html = std::fs::read_to_string(out.join(page)).unwrap();
        assert!(
            html.contains("<svg") && html.contains(r#"class="chart trend""#),
            "{page} has its chart"
        );
    }

    let doc: Value =
        serde_json::from_slice(&std::fs::read(out.join("data/analysis.json")).unwrap()).unwrap();
    let endpoints = doc["endpoints"].as_array().unwrap();
    assert_eq!(endpoints.len(), 2);
    let orders = endpoints.iter().find(|e| e["id"] == "orders").unwrap();
    assert_eq!(orders["name"], "orders");
    let runs = orders["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 14);
    for key in [
        "run",
        "started_at",
        "round_p99_ms",
        "median_p99_ms",
        "baseline_p99_ms",
        "ratio",
        "verdict",
    ] {
        assert!(runs[13].get(key).is_some(), "contract field {key}");
    }
    assert_eq!(runs[0]["verdict"], "no-baseline");
    assert_eq!(runs[0]["baseline_p99_ms"], Value::Null);
    assert_eq!(runs[5]["verdict"], "ok");
    assert_eq!(runs[11]["verdict"], "regression");
    assert_eq!(runs[13]["verdict"], "regression");
    assert_eq!(runs[13]["round_p99_ms"].as_array().unwrap().len(), 5);
    assert_eq!(runs[0]["started_at"], "2026-03-02T03:00:00Z");
    let ratio = runs[13]["ratio"].as_f64().unwrap();
    let median = runs[13]["median_p99_ms"].as_f64().unwrap();
    let baseline = runs[13]["baseline_p99_ms"].as_f64().unwrap();
    assert!((ratio - median / baseline).abs() < 1e-12);
}

#[test]
fn two_builds_are_byte_identical() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    common::story_archive(&archive);
    build(&archive, &tmp.path().join("a")).success();
    build(&archive, &tmp.path().join("b")).success();
    let a = common::tree(&tmp.path().join("a"));
    let b = common::tree(&tmp.path().join("b"));
    assert!(a.len() > 20);
    assert_eq!(a, b);
}

#[test]
fn a_bad_file_is_skipped_named_and_reflected_in_the_exit_code() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    common::story_archive(&archive);
    let bad = archive.join("runs/2026-03-05T0300Z/orders/round-3.json");
    std::fs::write(
        &bad,
        "{\"metrics\": {\"http_req_duration\": {\"values\": {\"p(95)\": 3}}}}",
    )
    .unwrap();
    let out = tmp.path().join("site");
    let assert = build(&archive, &out).code(1);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(
        stderr.contains("runs/2026-03-05T0300Z/orders/round-3.json: skipped:")
            && stderr.contains("summaryTrendStats"),
        "{stderr}"
    );
    // The rest was built, and the run shows as incomplete with 4 rounds.
    let doc: Value =
        serde_json::from_slice(&std::fs::read(out.join("data/analysis.json")).unwrap()).unwrap();
    let run = doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "2026-03-05T0300Z")
        .unwrap()
        .clone();
    assert_eq!(run["incomplete"], true);
    let orders = doc["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == "orders")
        .unwrap()
        .clone();
    let point = orders["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["run"] == "2026-03-05T0300Z")
        .unwrap()
        .clone();
    assert_eq!(point["verdict"], "insufficient");
    assert_eq!(point["round_p99_ms"].as_array().unwrap().len(), 4);
    let page = std::fs::read_to_string(out.join("runs/2026-03-05t0300z.html")).unwrap();
    assert!(page.contains("Incomplete run"));

    // --strict turns the warning into an error and writes nothing.
    let strict_out = tmp.path().join("strict");
    perfdash()
        .args(["build", "--strict", "--archive"])
        .arg(&archive)
        .arg("--out")
        .arg(&strict_out)
        .assert()
        .code(2);
    assert!(!strict_out.exists());
}

#[test]
fn a_failed_build_leaves_the_previous_site_byte_identical() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    common::story_archive(&archive);
    let out = tmp.path().join("site");
    build(&archive, &out).success();
    let before = common::tree(&out);
    // Break the archive completely: settings that do not parse.
    std::fs::write(
        archive.join("perfdash.toml"),
        "[analysis]\nthreshold_ratio = \"high\"\n",
    )
    .unwrap();
    let assert = build(&archive, &out).code(2);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(stderr.contains("perfdash.toml:2:"), "{stderr}");
    assert_eq!(common::tree(&out), before);
}

#[test]
fn refuses_to_write_into_the_archive_or_over_foreign_folders() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    common::story_archive(&archive);
    let before = common::tree(&archive);
    build(&archive, &archive.join("site")).code(2);
    build(&archive, &archive).code(2);
    assert_eq!(
        common::tree(&archive),
        before,
        "the archive is never written"
    );

    let foreign = tmp.path().join("notes");
    std::fs::create_dir(&foreign).unwrap();
    std::fs::write(foreign.join("todo.txt"), "keep me").unwrap();
    let assert = build(&archive, &foreign).code(2);
    assert!(String::from_utf8_lossy(&assert.get_output().stderr).contains("--force"));
    assert_eq!(
        std::fs::read_to_string(foreign.join("todo.txt")).unwrap(),
        "keep me"
    );
}

#[test]
fn missing_archive_and_usage_errors_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let assert = build(&tmp.path().join("nope"), &tmp.path().join("site")).code(2);
    assert!(String::from_utf8_lossy(&assert.get_output().stderr).contains("nope"));
    std::fs::create_dir(tmp.path().join("empty")).unwrap();
    let assert = build(&tmp.path().join("empty"), &tmp.path().join("site")).code(2);
    assert!(String::from_utf8_lossy(&assert.get_output().stderr).contains("no runs/ folder"));
    perfdash()
        .args(["build", "--no-such-flag"])
        .assert()
        .code(2);
    perfdash().arg("--help").assert().code(0);
}
