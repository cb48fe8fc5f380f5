//! `perfdash inspect` on flame-graph profiles: total samples and category
//! shares, beside result files in the same call.

mod common;

use assert_cmd::Command;

#[test]
fn inspect_reports_a_profiles_samples_and_shares() {
    let Some(dir) = common::shared_fixtures() else {
        return;
    };
    let out = Command::cargo_bin("perfdash")
        .unwrap()
        .arg("inspect")
        .arg(dir.join("async-profiler@v3.0/demo/flamegraph.html"))
        .assert()
        .code(0);
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    // The page's own total: 583 samples in stacks plus 1 with an empty stack.
    assert!(stdout.contains("total 584 samples"), "{stdout}");
    assert!(stdout.contains("GC               18.5%"), "{stdout}");
}

#[test]
fn inspect_takes_profiles_and_results_together() {
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");
    let tmp = tempfile::tempdir().unwrap();
    let profile = tmp.path().join("flame.cpu.collapsed");
    std::fs::write(&profile, "java/lang/Thread.run;com/acme/Orders.find 30\nGCTaskThread::run;G1YoungCollector::collect 10\n").unwrap();
    let out = Command::cargo_bin("perfdash")
        .unwrap()
        .args(["inspect", "--format", "json"])
        .arg(&profile)
        .arg(format!("{fixtures}/k6-real/round-1.ndjson.gz"))
        .assert()
        .code(0);
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(stdout.contains("\"total\": 40"), "{stdout}");
    assert!(stdout.contains("GET /orders"), "{stdout}");
}
