//! One test per row of the bad-input table in `docs/errors.md`: each
//! breaks a small, otherwise healthy archive in one way and checks the
//! documented behaviour end to end through the `perfdash` binary (exit
//! code, the warning naming `file[:line]` and the reason, the run marked
//! incomplete in `data/analysis.json`, the rest of the site built).

mod common;

use std::io::Write as _;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

/// The run every test breaks, and one of its round files.
const RUN: &str = "2026-03-05T0300Z";
const ROUND: &str = "runs/2026-03-05T0300Z/orders/round-3.json";

struct Case {
    tmp: tempfile::TempDir,
    archive: PathBuf,
}

/// Six healthy runs of two endpoints, five rounds each.
fn healthy() -> Case {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    let runs: Vec<Vec<(&str, Vec<f64>)>> = (0..6)
        .map(|i| {
            let w = 1.0 + i as f64 / 100.0;
            vec![
                ("orders", vec![100.0 * w, 101.0, 99.0, 102.0 * w, 100.5]),
                ("inventory", vec![40.0 * w; 5]),
            ]
        })
        .collect();
    common::write_archive(&archive, &runs);
    Case { tmp, archive }
}

struct Outcome {
    code: i32,
    stderr: String,
    out: PathBuf,
}

impl Outcome {
    fn analysis(&self) -> Value {
        serde_json::from_slice(&std::fs::read(self.out.join("data/analysis.json")).unwrap())
            .unwrap()
    }

    fn run(&self, id: &str) -> Option<Value> {
        self.analysis()["runs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == id)
            .cloned()
    }

    fn round_count(&self, endpoint: &str, run: &str) -> Option<usize> {
        let doc = self.analysis();
        let e = doc["endpoints"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["id"] == endpoint)?
            .clone();
        let p = e["runs"]
            .as_array()?
            .iter()
            .find(|p| p["run"] == run)?
            .clone();
        Some(p["round_p99_ms"].as_array()?.len())
    }

    /// Exit 1, a warning line starting with `prefix`, the site written.
    fn warned(&self, prefix: &str) -> &Self {
        assert_eq!(
            self.code, 1,
            "exit code 1 for warnings; stderr:\n{}",
            self.stderr
        );
        assert!(
            self.stderr
                .lines()
                .any(|l| l.starts_with(&format!("warning: {prefix}"))),
            "expected a warning starting with {prefix:?}; stderr:\n{}",
            self.stderr
        );
        assert!(self.out.join("index.html").is_file(), "the site was built");
        self
    }

    /// The broken run is still shown, marked incomplete.
    fn incomplete(&self, run: &str) -> &Self {
        let r = self.run(run).expect("the run is still in the site");
        assert_eq!(r["incomplete"], true, "{r}");
        self
    }

    fn failed(&self, needle: &str) -> &Self {
        assert_eq!(self.code, 2, "exit code 2; stderr:\n{}", self.stderr);
        assert!(
            self.stderr.contains(needle),
            "{needle:?} in:\n{}",
            self.stderr
        );
        assert!(!self.out.exists(), "nothing written");
        self
    }
}

fn build_with(case: &Case, extra: &[&str]) -> Outcome {
    build_at(case, extra, None)
}

/// A build with the build's time fixed by `PERFDASH_NOW` (else the wall clock).
fn build_at(case: &Case, extra: &[&str], now: Option<&str>) -> Outcome {
    let out = case.tmp.path().join("site");
    let mut command = Command::cargo_bin("perfdash").unwrap();
    command.env_remove("PERFDASH_NOW");
    if let Some(now) = now {
        command.env("PERFDASH_NOW", now);
    }
    let output = command
        .args(["build", "--verbose", "--archive"])
        .arg(&case.archive)
        .arg("--out")
        .arg(&out)
        .args(extra)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    Outcome {
        code: output.status.code().unwrap_or(-1),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        out,
    }
}

fn build(case: &Case) -> Outcome {
    build_with(case, &[])
}

fn put(case: &Case, rel: &str, bytes: impl AsRef<[u8]>) {
    let path = case.archive.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// A summary whose p(99) is replaced by `value` (raw JSON text).
fn summary_with_p99(value: &str) -> String {
    common::k6_summary(123.0).replace("\"p(99)\":123.0", &format!("\"p(99)\":{value}"))
}

#[cfg(unix)]
fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn truncated_json() {
    let case = healthy();
    let whole = common::k6_summary(100.0);
    put(&case, ROUND, &whole[..whole.len() / 2]);
    let o = build(&case);
    o.warned(&format!("{ROUND}:1: skipped: not valid JSON"))
        .incomplete(RUN);
    assert_eq!(o.round_count("orders", RUN), Some(4));
}

/// A k6 `--out json` file for one round: 60 points, one a second.
fn ndjson_round() -> String {
    let mut out = String::from(
        "{\"type\":\"Metric\",\"data\":{\"name\":\"http_req_duration\",\"type\":\"trend\",\"contains\":\"time\"},\"metric\":\"http_req_duration\"}\n",
    );
    for s in 0..60 {
        out.push_str(&format!(
            "{{\"metric\":\"http_req_duration\",\"type\":\"Point\",\"data\":{{\"time\":\"2026-03-05T03:00:{s:02}Z\",\"value\":{}.5,\"tags\":{{\"expected_response\":\"true\",\"status\":\"200\"}}}}}}\n",
            90 + s % 20
        ));
    }
    out
}

#[test]
fn truncated_ndjson() {
    let case = healthy();
    std::fs::remove_file(case.archive.join(ROUND)).unwrap();
    let rel = "runs/2026-03-05T0300Z/orders/round-3.ndjson";
    let whole = ndjson_round();
    // Killed mid-write: the last line is cut in half.
    put(&case, rel, &whole[..whole.len() - 40]);
    let o = build(&case);
    o.warned(&format!("{rel}:61: the last line is incomplete"))
        .incomplete(RUN);
    // The complete lines are used: the round is there.
    assert_eq!(o.round_count("orders", RUN), Some(5));
}

/// A Gatling binary log of 300 requests over 30 s, ~100 ms each, and the
/// offset of its last record.
fn gatling_binary_round() -> (Vec<u8>, usize) {
    use perfdash::ingest::raw::gatling_binary::LogWriter;
    let start = 1_772_679_600_000; // 2026-03-05T03:00:00Z
    let mut log = LogWriter::new("3.14.3", start, &["Buyers"]);
    let mut last = 0;
    for i in 0..300 {
        let t = start + 100 * i;
        last = log.bytes().len();
        log.request(&[], "GET /orders", t, t + 95 + i % 10, true, "");
    }
    (log.bytes().to_vec(), last)
}

#[test]
fn truncated_or_corrupt_gatling_binary_log() {
    let case = healthy();
    std::fs::remove_file(case.archive.join(ROUND)).unwrap();
    let rel = "runs/2026-03-05T0300Z/orders/round-3.log";
    let (whole, last) = gatling_binary_round();
    // Gatling killed mid-write: the last request record is cut.
    let cut = whole.len() - 5;
    put(&case, rel, &whole[..cut]);
    let o = build(&case);
    o.warned(&format!(
        "{rel}: byte {cut}: the file ends inside the record that starts at byte {last}"
    ))
    .incomplete(RUN);
    // The complete records are used: the round is there.
    assert_eq!(o.round_count("orders", RUN), Some(5));
    // A version perfdash does not know: skipped, naming the byte.
    let mut other = whole.clone();
    other[5] = b'4'; // "4.14.3"
    put(&case, rel, &other);
    let o = build(&case);
    o.warned(&format!(
        "{rel}: skipped: byte 1: Gatling version '4.14.3' in the run record"
    ))
    .incomplete(RUN);
    // One bad file never hides the rest: the other four rounds are there.
    assert_eq!(o.round_count("orders", RUN), Some(4));

    // Cut inside the run record (Gatling stopped before its first request):
    // nothing to keep, skipped, naming where the file ends.
    put(&case, rel, &whole[..20]);
    let o = build(&case);
    o.warned(&format!(
        "{rel}: skipped: byte 20: the file ends inside the run record that starts at byte 0"
    ))
    .incomplete(RUN);
    assert_eq!(o.round_count("orders", RUN), Some(4));

    // Corrupt content: a record type Gatling does not write, where the last
    // request starts.
    let mut corrupt = whole.clone();
    corrupt[last] = 9;
    put(&case, rel, &corrupt);
    build(&case)
        .warned(&format!(
            "{rel}: skipped: byte {last}: unknown record type 9"
        ))
        .incomplete(RUN);

    // Gzipped and cut: the complete records are used, and the offsets are
    // of the decompressed content.
    std::fs::remove_file(case.archive.join(rel)).unwrap();
    let gz = format!("{rel}.gz");
    put(&case, &gz, gzip(&whole[..cut]));
    let o = build(&case);
    o.warned(&format!(
        "{gz}: byte {cut} (of the decompressed content): the file ends inside the record that starts at byte {last}"
    ))
    .incomplete(RUN);
    assert_eq!(o.round_count("orders", RUN), Some(5));
}

#[test]
fn absurdly_long_ndjson_line() {
    let case = healthy();
    put(&case, "perfdash.toml", "[limits]\nmax_line_bytes = 4096\n");
    std::fs::remove_file(case.archive.join(ROUND)).unwrap();
    let rel = "runs/2026-03-05T0300Z/orders/round-3.ndjson";
    let mut text = ndjson_round();
    text.insert_str(text.len() / 2, &" ".repeat(3 << 20));
    put(&case, rel, &text);
    build(&case).warned(&format!("{rel}:")).incomplete(RUN);
    let o = build(&case);
    assert!(o.stderr.contains("longer than 4096 bytes"), "{}", o.stderr);
}

#[test]
fn empty_file() {
    let case = healthy();
    put(&case, ROUND, "");
    build(&case)
        .warned(&format!("{ROUND}: skipped: the file is empty"))
        .incomplete(RUN);
    put(&case, ROUND, "\n  \n");
    build(&case).warned(&format!("{ROUND}: skipped: the file is empty"));
}

#[test]
fn wrong_types() {
    let case = healthy();
    put(&case, ROUND, summary_with_p99("\"123\""));
    build(&case)
        .warned(&format!(
            "{ROUND}: skipped: http_req_duration.p(99) should be a number, found a string"
        ))
        .incomplete(RUN);
    put(&case, ROUND, "[1, 2, 3]");
    build(&case).warned(&format!("{ROUND}: skipped: unknown content"));
}

#[test]
fn nan_and_infinite_values() {
    let case = healthy();
    // JSON has no NaN; k6 never writes one, a hand-edited file might.
    put(&case, ROUND, summary_with_p99("NaN"));
    build(&case)
        .warned(&format!("{ROUND}:1: skipped: not valid JSON"))
        .incomplete(RUN);
    // 1e999 overflows f64: serde_json refuses it rather than giving inf.
    put(&case, ROUND, summary_with_p99("1e999"));
    let o = build(&case);
    o.warned(&format!("{ROUND}:1: skipped: not valid JSON"));
    assert!(o.stderr.contains("number out of range"), "{}", o.stderr);
    // Finite but absurd: near f64::MAX, medians and baseline × ratio
    // overflow to infinity (which once hung the chart drawing).
    put(&case, ROUND, summary_with_p99("1.7e308"));
    build(&case).warned(&format!(
        "{ROUND}: skipped: http_req_duration.p(99) is 170000000000000000000000000000"
    ));
    let o = build(&case);
    assert!(
        o.stderr.contains("too large to be a measurement"),
        "{}",
        o.stderr
    );
}

#[test]
fn negative_values() {
    let case = healthy();
    put(&case, ROUND, summary_with_p99("-5"));
    build(&case)
        .warned(&format!(
            "{ROUND}: skipped: http_req_duration.p(99) is -5: not a non-negative number"
        ))
        .incomplete(RUN);
}

#[test]
fn missing_p99() {
    let case = healthy();
    put(
        &case,
        ROUND,
        common::k6_summary(100.0).replace("\"p(99)\"", "\"p(98)\""),
    );
    let o = build(&case);
    o.warned(&format!("{ROUND}: skipped: http_req_duration has no p(99)"))
        .incomplete(RUN);
    assert!(o.stderr.contains("summaryTrendStats"), "{}", o.stderr);
}

#[test]
fn missing_metric() {
    let case = healthy();
    put(
        &case,
        ROUND,
        common::k6_summary(100.0).replace("\"http_req_duration\"", "\"grpc_req_duration\""),
    );
    build(&case)
        .warned(&format!("{ROUND}: skipped: no 'http_req_duration' metric"))
        .incomplete(RUN);
}

#[test]
fn unknown_json_shape() {
    let case = healthy();
    put(&case, ROUND, r#"{"hello": "world"}"#);
    build(&case)
        .warned(&format!("{ROUND}: skipped: not a k6 summary"))
        .incomplete(RUN);
}

#[test]
fn unknown_file_format() {
    let case = healthy();
    let rel = "runs/2026-03-05T0300Z/orders/round-3.txt";
    std::fs::rename(case.archive.join(ROUND), case.archive.join(rel)).unwrap();
    build(&case)
        .warned(&format!("{rel}: ignored: not a round file"))
        .incomplete(RUN);
    // A known extension with content of no known format.
    let csv = "runs/2026-03-05T0300Z/orders/round-3.csv";
    put(&case, csv, "hello,world\n1,2\n");
    build(&case)
        .warned(&format!("{csv}: skipped: unknown content"))
        .incomplete(RUN);
}

#[test]
fn missing_round() {
    let case = healthy();
    std::fs::remove_file(case.archive.join(ROUND)).unwrap();
    let o = build(&case);
    o.warned("runs/2026-03-05T0300Z/orders: round 3 missing")
        .incomplete(RUN);
    assert_eq!(o.round_count("orders", RUN), Some(4));
    let verdict = o.analysis()["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == "orders")
        .unwrap()["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["run"] == RUN)
        .unwrap()["verdict"]
        .clone();
    assert_eq!(verdict, "insufficient");
}

#[test]
fn duplicate_round() {
    let case = healthy();
    let dup = "runs/2026-03-05T0300Z/orders/round-3.host-b.json";
    put(&case, dup, common::k6_summary(900.0));
    let o = build(&case);
    // Files are read in name order; the first file for a number wins
    // (`round-3.host-b.json` sorts before `round-3.json`).
    o.warned(&format!(
        "{ROUND}: skipped: round 3 is already read from {dup}"
    ))
    .incomplete(RUN);
    assert_eq!(o.round_count("orders", RUN), Some(5));
}

#[test]
fn run_folder_with_no_rounds() {
    let case = healthy();
    put(
        &case,
        "runs/2026-03-09T0300Z/run.toml",
        "commit = \"abc\"\n",
    );
    let o = build(&case);
    o.warned("runs/2026-03-09T0300Z: run skipped: it holds no readable rounds");
    assert!(o.run("2026-03-09T0300Z").is_none());
}

#[test]
fn endpoint_folder_with_no_rounds() {
    let case = healthy();
    std::fs::create_dir(case.archive.join("runs/2026-03-05T0300Z/payments")).unwrap();
    build(&case)
        .warned("runs/2026-03-05T0300Z/payments: no readable round files")
        .incomplete(RUN);
}

#[test]
fn duplicate_run_ids() {
    let case = healthy();
    // Same time and same slug as 2026-03-05T0300Z.
    let copy = "runs/2026-03-05t0300z";
    for n in 1..=5 {
        put(
            &case,
            &format!("{copy}/orders/round-{n}.json"),
            common::k6_summary(100.0),
        );
    }
    let o = build(&case);
    // Times in messages are written as everywhere else (RFC 3339 with `Z`;
    // this one message used to say `+00:00`).
    o.warned(&format!(
        "{copy}: starts at the same time as runs/{RUN} (2026-03-05T03:00:00Z)"
    ));
    assert!(o.run(RUN).is_some() && o.run("2026-03-05t0300z").is_some());
    // Distinct pages, deterministic: the id that already is the slug
    // keeps it, the other gets a suffix derived from its own id.
    let pages: Vec<String> = common::tree(&o.out.join("runs"))
        .into_iter()
        .map(|(p, _)| p)
        .filter(|p| p.starts_with("2026-03-05t0300z"))
        .collect();
    assert_eq!(pages.len(), 2, "{pages:?}");
    let plain = std::fs::read_to_string(o.out.join("runs/2026-03-05t0300z.html")).unwrap();
    assert!(
        plain.contains("Run 2026-03-05t0300z"),
        "the lower-case id keeps the plain slug"
    );
    let first = std::fs::read_to_string(
        o.out.join("runs").join(
            pages
                .iter()
                .find(|p| p.as_str() != "2026-03-05t0300z.html")
                .unwrap(),
        ),
    )
    .unwrap();
    assert!(first.contains(RUN), "{RUN} has the suffixed page");
}

#[cfg(unix)]
#[test]
fn non_utf8_names() {
    use std::os::unix::ffi::OsStrExt as _;
    let case = healthy();
    let run = case.archive.join("runs").join(RUN);
    let bad_endpoint = run.join(std::ffi::OsStr::from_bytes(b"pay\xffments"));
    std::fs::create_dir(&bad_endpoint).unwrap();
    std::fs::write(bad_endpoint.join("round-1.json"), common::k6_summary(1.0)).unwrap();
    let bad_round = run
        .join("orders")
        .join(std::ffi::OsStr::from_bytes(b"round-6\xfe.json"));
    std::fs::write(bad_round, common::k6_summary(1.0)).unwrap();
    let o = build(&case);
    o.warned(&format!(
        "runs/{RUN}/pay\u{fffd}ments: skipped: the name is not valid UTF-8"
    ))
    .warned(&format!(
        "runs/{RUN}/orders/round-6\u{fffd}.json: skipped: the name is not valid UTF-8"
    ))
    .incomplete(RUN);
    assert_eq!(o.round_count("orders", RUN), Some(5));
}

#[test]
fn absurdly_long_lines() {
    let case = healthy();
    put(
        &case,
        "perfdash.toml",
        "[limits]\nmax_document_bytes = 65536\n",
    );
    // One 1 MiB line: a summary padded with spaces (still valid JSON).
    let padded = common::k6_summary(100.0).replacen('{', &format!("{{{}", " ".repeat(1 << 20)), 1);
    let len = padded.len();
    put(&case, ROUND, padded);
    // Refused from its size: not a byte of it is read.
    build(&case)
        .warned(&format!(
            "{ROUND}: skipped: the file is {len} bytes, over the limit of 65536 \
             (limits.max_document_bytes): refused without reading it"
        ))
        .incomplete(RUN);
}

#[test]
fn corrupt_gzip() {
    let case = healthy();
    let mut packed = gzip(common::k6_summary(100.0).as_bytes());
    packed.truncate(packed.len() / 2);
    put(&case, ROUND, &packed);
    build(&case)
        .warned(&format!("{ROUND}: skipped: corrupt gzip"))
        .incomplete(RUN);
    let mut flipped = gzip(common::k6_summary(100.0).as_bytes());
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0xff;
    put(&case, ROUND, &flipped);
    build(&case).warned(&format!("{ROUND}: skipped: corrupt gzip"));
}

#[test]
fn gzip_bomb() {
    let case = healthy();
    // Valid JSON once inflated: a summary followed by 32 MiB of spaces,
    // about 32 KiB compressed (≈1000×).
    let mut body = common::k6_summary(100.0).into_bytes();
    body.extend(std::iter::repeat_n(b' ', 32 << 20));
    let packed = gzip(&body);
    assert!(packed.len() < 64 << 10);
    put(&case, ROUND, &packed);
    // Default cap: 64× the compressed size, at least 1 MiB.
    let cap = (packed.len() as u64 * 64).max(1 << 20);
    build(&case)
        .warned(&format!(
            "{ROUND}: skipped: stopped after {cap} bytes: the decompressed content is larger than the limit"
        ))
        .incomplete(RUN);
    // The cap is configurable: a genuine, highly compressible file can be let in.
    put(
        &case,
        "perfdash.toml",
        "[limits]\nmax_decompression_ratio = 2000\nmax_document_bytes = 67108864\n",
    );
    let o = build(&case);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(o.round_count("orders", RUN), Some(5));
}

#[cfg(unix)]
#[test]
fn symlinks_out_of_the_archive() {
    use std::os::unix::fs::symlink;
    let case = healthy();
    let outside = case.tmp.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("secret.json"), common::k6_summary(987654.0)).unwrap();
    std::fs::write(
        outside.join("run.toml"),
        "notes = \"outside-secret-note\"\n",
    )
    .unwrap();
    std::fs::remove_file(case.archive.join(ROUND)).unwrap();
    symlink(outside.join("secret.json"), case.archive.join(ROUND)).unwrap();
    symlink(
        outside.join("run.toml"),
        case.archive.join("runs").join(RUN).join("run.toml"),
    )
    .unwrap();
    symlink(&outside, case.archive.join("runs/2026-03-09T0300Z")).unwrap();
    symlink(
        &outside,
        case.archive.join("runs").join(RUN).join("payments"),
    )
    .unwrap();
    let o = build(&case);
    o.warned(&format!(
        "{ROUND}: skipped: symbolic links are not followed"
    ))
    .warned(&format!("runs/{RUN}/run.toml: is a symbolic link"))
    .warned("runs/2026-03-09T0300Z: skipped: symbolic links are not followed")
    .warned(&format!(
        "runs/{RUN}/payments: skipped: symbolic links are not followed"
    ))
    .incomplete(RUN);
    for (path, bytes) in common::tree(&o.out) {
        let text = String::from_utf8_lossy(&bytes);
        assert!(
            !text.contains("987654"),
            "{path} shows data from outside the archive"
        );
        assert!(
            !text.contains("outside-secret-note"),
            "{path} shows data from outside"
        );
    }
}

#[test]
fn unreadable_file_is_a_folder() {
    let case = healthy();
    std::fs::remove_file(case.archive.join(ROUND)).unwrap();
    std::fs::create_dir(case.archive.join(ROUND)).unwrap();
    std::fs::create_dir(case.archive.join("runs").join(RUN).join("run.toml")).unwrap();
    build(&case)
        .warned(&format!(
            "{ROUND}: ignored: folders inside an endpoint folder"
        ))
        .warned(&format!(
            "runs/{RUN}/run.toml: is a folder, expected a file"
        ))
        .incomplete(RUN);
}

#[cfg(unix)]
#[test]
fn unreadable_file_is_a_fifo() {
    // Tests run as root, so permissions cannot make a file unreadable; a
    // FIFO is worse anyway: opening it blocks until someone writes.
    let case = healthy();
    std::fs::remove_file(case.archive.join(ROUND)).unwrap();
    mkfifo(&case.archive.join(ROUND));
    mkfifo(&case.archive.join("runs").join(RUN).join("run.toml"));
    build(&case)
        .warned(&format!("{ROUND}: skipped: not a regular file"))
        .warned(&format!("runs/{RUN}/run.toml: is not a regular file"))
        .incomplete(RUN);
}

#[test]
fn bad_run_toml() {
    let case = healthy();
    put(
        &case,
        &format!("runs/{RUN}/run.toml"),
        "commit = \"abc\"\nbranch = \n",
    );
    let o = build(&case);
    o.warned(&format!("runs/{RUN}/run.toml:2: "))
        .incomplete(RUN);
    // The run keeps its time from the id.
    assert_eq!(o.run(RUN).unwrap()["started_at"], "2026-03-05T03:00:00Z");
    put(
        &case,
        &format!("runs/{RUN}/run.toml"),
        b"notes = \"caf\xe9\"\n",
    );
    build(&case).warned(&format!("runs/{RUN}/run.toml: not valid UTF-8"));
}

#[test]
fn run_id_without_a_date() {
    let case = healthy();
    put(
        &case,
        "runs/nightly-42/orders/round-1.json",
        common::k6_summary(100.0),
    );
    let o = build(&case);
    o.warned("runs/nightly-42: run skipped: no started_at in run.toml");
    assert!(o.run("nightly-42").is_none());
}

#[test]
fn stray_file_in_a_run_folder() {
    let case = healthy();
    put(
        &case,
        &format!("runs/{RUN}/summary.json"),
        common::k6_summary(1.0),
    );
    build(&case)
        .warned(&format!(
            "runs/{RUN}/summary.json: ignored: files directly in a run folder"
        ))
        .incomplete(RUN);
}

#[test]
fn settings_that_do_not_parse() {
    let case = healthy();
    put(
        &case,
        "perfdash.toml",
        "[limits]\nmax_line_bytes = \"big\"\n",
    );
    build(&case).failed("perfdash.toml:2:");
    put(&case, "perfdash.toml", "[limits]\nmax_line_bytes = 0\n");
    build(&case).failed("perfdash.toml:1: limits.* must all be at least 1");
    // Values that parse but are invalid name the line that sets them.
    put(
        &case,
        "perfdash.toml",
        "# settings\n[analysis]\nthreshold_ratio = 1.2\nexpected_rounds = 0\n",
    );
    build(&case).failed("perfdash.toml:4: analysis.expected_rounds must be at least 1");
    put(
        &case,
        "perfdash.toml",
        "[endpoints.\"order-list\"]\nname = \"x\"\nservice = \"\"\n",
    );
    build(&case).failed("perfdash.toml:3: endpoints.order-list.service must not be empty");
}

#[cfg(unix)]
#[test]
fn settings_behind_a_symlink() {
    let case = healthy();
    let elsewhere = case.tmp.path().join("elsewhere.toml");
    std::fs::write(&elsewhere, "").unwrap();
    std::os::unix::fs::symlink(&elsewhere, case.archive.join("perfdash.toml")).unwrap();
    build(&case).failed("perfdash.toml: is a symbolic link");
}

#[test]
fn no_runs_folder() {
    let case = healthy();
    std::fs::rename(case.archive.join("runs"), case.archive.join("runz")).unwrap();
    build(&case).failed("no runs/ folder");
}

#[test]
fn no_readable_runs() {
    let case = healthy();
    for (path, _) in common::tree(&case.archive) {
        std::fs::write(case.archive.join(path), "{").unwrap();
    }
    let o = build(&case);
    o.failed("no readable runs");
    assert!(
        o.stderr.contains("not valid JSON"),
        "the reasons are shown: {}",
        o.stderr
    );
}

#[test]
fn strict_turns_warnings_into_errors() {
    let case = healthy();
    let o = build(&case);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let before = common::tree(&o.out);
    put(&case, ROUND, "{");
    let o = build_with(&case, &["--strict"]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(
        o.stderr
            .contains(&format!("{ROUND}:1: skipped: not valid JSON")),
        "{}",
        o.stderr
    );
    assert_eq!(
        common::tree(&o.out),
        before,
        "the previous site is untouched"
    );
}

#[test]
fn hidden_files_and_warmup_rounds_are_not_warnings() {
    let case = healthy();
    put(&case, "runs/.DS_Store", "junk");
    put(
        &case,
        &format!("runs/{RUN}/orders/.round-3.json.swp"),
        "junk",
    );
    put(
        &case,
        &format!("runs/{RUN}/orders/round-0.warmup.json"),
        common::k6_summary(5000.0),
    );
    let o = build(&case);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(o.run(RUN).unwrap()["incomplete"], false);
}

/// `perfdash check` on the case's archive: (exit code, stdout).
fn check(case: &Case, extra: &[&str]) -> (i32, String) {
    let output = Command::cargo_bin("perfdash")
        .unwrap()
        .env_remove("PERFDASH_NOW")
        .args(["check", "--archive"])
        .arg(&case.archive)
        .args(extra)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

fn warning_lines(o: &Outcome) -> Vec<&str> {
    o.stderr
        .lines()
        .filter(|l| l.starts_with("warning:"))
        .collect()
}

#[test]
fn giant_round_numbers() {
    let case = healthy();
    let giant = format!("runs/{RUN}/orders/round-4294967295.json");
    let date = format!("runs/{RUN}/orders/round-20260608.json");
    let overflow = format!("runs/{RUN}/orders/round-99999999999.json");
    for rel in [&giant, &date, &overflow] {
        put(&case, rel, common::k6_summary(100.0));
    }
    let o = build(&case);
    for rel in [&giant, &date, &overflow] {
        o.warned(&format!(
            "{rel}: skipped: its round number is above 100, the largest read"
        ));
    }
    // One warning per file, and no list of a billion missing rounds.
    assert_eq!(warning_lines(&o).len(), 3, "{}", o.stderr);
    assert!(o.stderr.len() < 4096, "{} bytes of stderr", o.stderr.len());
    o.incomplete(RUN);
    assert_eq!(o.round_count("orders", RUN), Some(5));
    let site: usize = common::tree(&o.out).iter().map(|(_, b)| b.len()).sum();
    assert!(site < 4 << 20, "the site is {site} bytes");
    // The cap follows expected_rounds: with 20 expected, round 150 is read.
    put(&case, "perfdash.toml", "[analysis]\nexpected_rounds = 20\n");
    std::fs::remove_file(case.archive.join(&giant)).unwrap();
    std::fs::remove_file(case.archive.join(&date)).unwrap();
    std::fs::remove_file(case.archive.join(&overflow)).unwrap();
    put(
        &case,
        &format!("runs/{RUN}/orders/round-150.json"),
        common::k6_summary(100.0),
    );
    let o = build(&case);
    o.warned(&format!("runs/{RUN}/orders: rounds 6–149 missing"));
}

#[test]
fn missing_rounds_as_ranges() {
    let case = healthy();
    std::fs::remove_file(case.archive.join(ROUND)).unwrap();
    put(
        &case,
        &format!("runs/{RUN}/orders/round-100.json"),
        common::k6_summary(100.0),
    );
    let o = build(&case);
    o.warned(&format!(
        "runs/{RUN}/orders: rounds 3, 6–99 missing: there are files up to round-100"
    ))
    .incomplete(RUN);
    assert_eq!(warning_lines(&o).len(), 1, "{}", o.stderr);
}

/// The day after the healthy case's last run (2026-03-07), and a copy of
/// one of its runs there.
const NEXT: &str = "2026-03-08T0300Z";

fn add_run(case: &Case, id: &str, run_toml: Option<&str>, orders_p99: f64) {
    for n in 1..=5 {
        put(
            case,
            &format!("runs/{id}/orders/round-{n}.json"),
            common::k6_summary(orders_p99),
        );
        put(
            case,
            &format!("runs/{id}/inventory/round-{n}.json"),
            common::k6_summary(40.0),
        );
    }
    if let Some(text) = run_toml {
        put(case, &format!("runs/{id}/run.toml"), text);
    }
}

fn latest_on_overview(o: &Outcome) -> String {
    let index = std::fs::read_to_string(o.out.join("index.html")).unwrap();
    let at = index
        .find("Latest run <a")
        .expect("the overview names the latest run");
    let rest = &index[at..];
    let start = rest.find('>').unwrap() + 1;
    rest[start..start + rest[start..].find('<').unwrap()].to_string()
}

#[test]
fn run_dated_in_the_future() {
    let case = healthy();
    // Today's run regressed ×3; a run with a clock set to 2099 sits beside it.
    add_run(&case, NEXT, None, 300.0);
    let future = "2099-03-08T0300Z";
    add_run(&case, future, Some("commit = \"abc\"\n"), 100.0);
    let o = build(&case);
    o.warned(&format!(
        "runs/{future}: started_at 2099-03-08T03:00:00Z is more than a day after the run's files \
         were last written"
    ));
    assert_eq!(latest_on_overview(&o), NEXT, "the real latest run");
    assert!(o.run(future).is_some(), "kept in the history");
    // The gate checks the real latest run, but cannot vouch for it while a
    // run with an untrusted time exists: exit 2, naming that run.
    let (code, text) = check(&case, &[]);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains(&format!("run {NEXT}")), "{text}");
    assert!(
        text.lines()
            .any(|l| l.trim_start().starts_with("regression") && l.contains("orders")),
        "{text}"
    );
    assert!(
        text.contains(&format!("runs/{future}: started_at 2099")),
        "{text}"
    );
    // The headline names the cause, never "unreadable inputs".
    let headline = text.lines().next().unwrap();
    assert!(
        headline.contains(&format!("an untrusted started_at (run {future})"))
            && !headline.contains("unreadable"),
        "{text}"
    );
    let (_, json) = check(&case, &["--format", "json"]);
    let json: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["run"], NEXT);
    assert_eq!(json["cannot_vouch"][0]["kind"], "untrusted-time", "{json}");
    assert_eq!(json["cannot_vouch"].as_array().unwrap().len(), 1, "{json}");
    // Asked for by name, the untrusted run itself cannot be vouched for,
    // for the same reason.
    let (code, text) = check(&case, &["--run", future]);
    assert_eq!(code, 2, "{text}");
    let headline = text.lines().next().unwrap();
    assert!(
        headline.contains(&format!("an untrusted started_at (run {future})"))
            && !headline.contains("unreadable"),
        "{text}"
    );
    // Fixed (here: removed), the regression is gated as usual.
    std::fs::remove_dir_all(case.archive.join("runs").join(future)).unwrap();
    assert_eq!(check(&case, &[]).0, 1);
}

#[test]
fn run_dated_far_from_its_id_or_before_2000() {
    let case = healthy();
    add_run(
        &case,
        NEXT,
        Some("commit = \"abc\"\nstarted_at = 2026-03-18T03:00:00Z\n"),
        100.0,
    );
    let o = build(&case);
    o.warned(&format!(
        "runs/{NEXT}/run.toml:2: started_at 2026-03-18T03:00:00Z is 10 days away from the date \
         in the run id (2026-03-08)"
    ))
    .incomplete(NEXT);
    assert_eq!(latest_on_overview(&o), "2026-03-07T0300Z");
    // A day either way is a time zone, not an error.
    put(
        &case,
        &format!("runs/{NEXT}/run.toml"),
        "started_at = 2026-03-08T23:30:00-05:00\n",
    );
    let o = build(&case);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(latest_on_overview(&o), NEXT);
    // A clock never set.
    put(
        &case,
        &format!("runs/{NEXT}/run.toml"),
        "\n\nstarted_at = 1970-01-01T00:00:00Z\n",
    );
    build(&case).warned(&format!(
        "runs/{NEXT}/run.toml:3: started_at 1970-01-01T00:00:00Z is before 2000"
    ));
    // RFC 3339 years only: an offset must not carry a time out of 0000–9999.
    for text in [
        "started_at = 0000-01-01T00:00:00+01:00\n",
        "started_at = \"9999-12-31T23:59:59-01:00\"\n",
    ] {
        put(&case, &format!("runs/{NEXT}/run.toml"), text);
        let o = build(&case);
        o.warned(&format!("runs/{NEXT}/run.toml:1: started_at '"));
        assert!(
            o.stderr.contains("outside the years 0000–9999"),
            "{}",
            o.stderr
        );
        // The run keeps the time of its id.
        assert_eq!(o.run(NEXT).unwrap()["started_at"], "2026-03-08T03:00:00Z");
    }
}

#[test]
fn run_dated_in_the_future_by_a_clock_set_ahead() {
    // The files' times came from the same clock as started_at, so only the
    // build's time can tell; PERFDASH_NOW fixes it, so the answer does not
    // depend on when the test runs.
    let case = healthy();
    let future = "2099-03-08T0300Z";
    add_run(&case, future, None, 100.0);
    let in_2099 = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(4_076_640_000);
    for (path, _) in common::tree(&case.archive.join("runs").join(future)) {
        let file = std::fs::File::options()
            .write(true)
            .open(case.archive.join("runs").join(future).join(path))
            .unwrap();
        file.set_modified(in_2099).unwrap();
    }
    let o = build_at(&case, &[], Some("2026-03-09T00:00:00Z"));
    o.warned(&format!(
        "runs/{future}: started_at 2099-03-08T03:00:00Z is more than a day in the future"
    ));
    assert_eq!(latest_on_overview(&o), "2026-03-07T0300Z");
    let o = build_at(&case, &[], Some("2099-03-08T12:00:00Z"));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(latest_on_overview(&o), future);
    std::fs::remove_dir_all(&o.out).unwrap();
    let o = build_at(&case, &[], Some("yesterday"));
    o.failed("PERFDASH_NOW='yesterday' is not an RFC 3339 date-time");
}

#[test]
fn harmless_files_do_not_stop_the_gate() {
    // The latest run regressed: exit 1. A second flame graph of one kind
    // and a notes file are reported, but must not turn that into exit 2
    // ("cannot vouch"), which only inputs holding measurements can.
    let case = healthy();
    add_run(&case, NEXT, None, 300.0);
    let folded = "main;handle;query 7\nmain;handle;render 3\n";
    put(
        &case,
        &format!("runs/{NEXT}/orders/flame.collapsed"),
        folded,
    );
    put(&case, &format!("runs/{NEXT}/orders/flame.folded"), folded);
    put(
        &case,
        &format!("runs/{NEXT}/orders/notes.txt"),
        "slow disk?",
    );
    let o = build(&case);
    o.warned(&format!(
        "runs/{NEXT}/orders/flame.folded: skipped: the cpu profile of orders is already read"
    ));
    let (code, text) = check(&case, &[]);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("2 file(s) in this run are not read"),
        "{text}"
    );
    // The same for `compare`: a regression, not "incomplete run".
    let compare = || {
        Command::cargo_bin("perfdash")
            .unwrap()
            .args(["compare", "2026-03-07T0300Z", NEXT, "--archive"])
            .arg(&case.archive)
            .output()
            .unwrap()
    };
    let output = compare();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    // A round that does not parse is different: the figures may be wrong.
    put(&case, &format!("runs/{NEXT}/orders/round-2.json"), "{");
    let (code, text) = check(&case, &[]);
    assert_eq!(code, 2, "{text}");
    assert!(
        text.contains("round-2.json:1: skipped: not valid JSON"),
        "{text}"
    );
    assert_eq!(compare().status.code(), Some(2));
}
