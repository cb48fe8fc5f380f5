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

const SHOP: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/pyspy-shop");

fn inspect(files: &[&std::path::Path], code: i32) -> (String, String) {
    let out = Command::cargo_bin("perfdash")
        .unwrap()
        .arg("inspect")
        .args(files)
        .assert()
        .code(code);
    let o = out.get_output();
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// `perfdash inspect any-name.txt`: profiles are told by content, not by a
/// `flame*` name (py-spy's `prof1.txt`, a speedscope `capture.json`).
#[test]
fn inspect_tells_profiles_by_content_whatever_their_name() {
    let tmp = tempfile::tempdir().unwrap();
    let folded = tmp.path().join("prof1.txt");
    std::fs::copy(format!("{SHOP}/v2.folded"), &folded).unwrap();
    let speedscope = tmp.path().join("capture.json");
    std::fs::copy(format!("{SHOP}/v1.speedscope.json"), &speedscope).unwrap();
    let (stdout, stderr) = inspect(&[&folded, &speedscope], 0);
    assert!(stderr.is_empty(), "{stderr}");
    assert!(
        stdout.contains("prof1.txt  (cpu profile, folded stacks)"),
        "{stdout}"
    );
    assert!(stdout.contains("total 2,230 samples"), "{stdout}");
    assert!(stdout.contains("rules_for_line (shop.py)"), "{stdout}");
    // Samples apart from seconds, rounded; idle apart from busy time.
    assert!(
        stdout.contains("capture.json  (cpu profile, speedscope JSON)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("total 5.35 seconds in 535 samples"),
        "{stdout}"
    );
    assert!(
        stdout.contains("idle (waiting for work): 45.2% of the total"),
        "{stdout}"
    );

    // Text that is neither a result nor a profile names both.
    let notes = tmp.path().join("notes.txt");
    std::fs::write(&notes, "what we saw on Tuesday\nnothing much\n").unwrap();
    let (_, stderr) = inspect(&[&notes], 2);
    assert!(stderr.contains("notes.txt: unknown content"), "{stderr}");
    assert!(stderr.contains("nor a flame-graph profile"), "{stderr}");
    // A gzipped folded profile under another name, beside a bad file: the
    // good one is shown, the exit code says something failed.
    let gz = tmp.path().join("stacks.gz");
    let mut enc = flate2_write(&gz);
    std::io::Write::write_all(
        &mut enc,
        &std::fs::read(format!("{SHOP}/v1.folded")).unwrap(),
    )
    .unwrap();
    enc.finish().unwrap();
    let (stdout, _) = inspect(&[&gz, &notes], 1);
    assert!(stdout.contains("total 785 samples"), "{stdout}");
}

fn flate2_write(path: &std::path::Path) -> flate2::write::GzEncoder<std::fs::File> {
    flate2::write::GzEncoder::new(
        std::fs::File::create(path).unwrap(),
        flate2::Compression::default(),
    )
}

/// The case: an async-profiler page renamed `bank-cpu.html` was
/// "XML, but not a JMeter JTL".
#[test]
fn inspect_reads_a_renamed_async_profiler_page() {
    let Some(dir) = common::shared_fixtures() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let page = tmp.path().join("bank-cpu.html");
    std::fs::copy(dir.join("async-profiler@v3.0/demo/flamegraph.html"), &page).unwrap();
    let (stdout, stderr) = inspect(&[&page], 0);
    assert!(stderr.is_empty(), "{stderr}");
    assert!(
        stdout.contains("bank-cpu.html  (cpu profile, async-profiler HTML (v3/v4))"),
        "{stdout}"
    );
    assert!(stdout.contains("total 584 samples"), "{stdout}");
    assert!(stdout.contains("GC               18.5%"), "{stdout}");
}
