//! `--archive s3://…` against a real S3-compatible server: `s3s-fs`
//! (0.14.1, `cargo install s3s-fs --version 0.14.1 --features binary`)
//! started on a loopback port for each test, storing each object as a file
//! under a temporary folder. Without the binary these tests say they are
//! skipped; with `CI` set they fail, because CI must really run them
//! (`.ci/run` installs it).

mod common;

use common::object_store::{add_run, on_path, requests, skipped, spawn_listening, stderr};

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use object_store::aws::AmazonS3Builder;
use object_store::path::Path as Key;
use object_store::{ObjectStoreExt, PutPayload};

const BUCKET: &str = "perf";
const PREFIX: &str = "team/a";

/// `s3s-fs` on PATH, or why the tests cannot run here.
fn s3s_fs() -> Option<PathBuf> {
    let found = on_path("s3s-fs");
    if found.is_none() {
        skipped(
            "s3s-fs is not installed (cargo install s3s-fs --version 0.14.1 --features binary)",
        );
    }
    found
}

/// A running s3s-fs with its root folder and the bucket made; stopped
/// when dropped.
struct Server {
    child: Child,
    port: u16,
    root: tempfile::TempDir,
    /// `XDG_CACHE_HOME` of the perfdash runs: where the local copy goes.
    cache: tempfile::TempDir,
}

impl Server {
    fn start(binary: &Path) -> Server {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join(BUCKET)).unwrap();
        let (child, port) = spawn_listening("s3s-fs", |port| {
            let mut command = Command::new(binary);
            command
                .args(["--host", "127.0.0.1", "--port", &port.to_string()])
                .args(["--access-key", "AK", "--secret-key", "SK"])
                .arg(root.path());
            command
        });
        Server {
            child,
            port,
            root,
            cache: tempfile::tempdir().unwrap(),
        }
    }

    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn url(&self) -> String {
        format!("s3://{BUCKET}/{PREFIX}")
    }

    fn perfdash(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_perfdash"));
        cmd.env("AWS_ENDPOINT_URL", self.endpoint())
            .env("AWS_ACCESS_KEY_ID", "AK")
            .env("AWS_SECRET_ACCESS_KEY", "SK")
            .env("AWS_REGION", "us-east-1")
            .env_remove("AWS_ALLOW_HTTP")
            // Read by the client like the others (docs/archive.md); longer
            // than its 30 s default on a loaded 2-core CI machine.
            .env("AWS_TIMEOUT", "2m")
            .env("XDG_CACHE_HOME", self.cache.path())
            .env("PERFDASH_NOW", "2026-04-01T00:00:00Z");
        cmd
    }

    /// Puts every file under `dir` as `<PREFIX>/<relative path>`.
    fn upload(&self, dir: &Path, under: &str) {
        let store = AmazonS3Builder::new()
            .with_endpoint(self.endpoint())
            .with_allow_http(true)
            .with_bucket_name(BUCKET)
            .with_access_key_id("AK")
            .with_secret_access_key("SK")
            .with_region("us-east-1")
            .build()
            .unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        for (relative, bytes) in common::tree(dir) {
            let key = format!("{PREFIX}/{under}{relative}");
            runtime
                .block_on(store.put(&Key::from(key), PutPayload::from(bytes)))
                .unwrap();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn build(server: &Server, archive: &str, out: &Path) -> Output {
    let out = server
        .perfdash()
        .args(["build", "--verbose", "--archive", archive, "--out"])
        .arg(out)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    out
}

/// s3s-fs with the story archive (`common::story_archive`) uploaded
/// under the prefix; its local copy is `archive/` in the folder returned.
fn server_with_story() -> Option<(Server, tempfile::TempDir)> {
    let server = Server::start(&s3s_fs()?);
    let work = tempfile::tempdir().unwrap();
    let local = work.path().join("archive");
    common::story_archive(&local);
    server.upload(&local, "");
    Some((server, work))
}

/// The site's files, without the one that says when it was built.
fn site(dir: &Path) -> Vec<(String, Vec<u8>)> {
    common::tree(dir)
}

#[test]
fn build_from_s3_is_the_local_build_and_a_warm_build_fetches_only_the_new_run() {
    let Some((server, work)) = server_with_story() else {
        return;
    };
    let local = work.path().join("archive");
    let objects = common::tree(&local).len() as u64;

    let cold = build(&server, &server.url(), &work.path().join("site-s3"));
    build(
        &server,
        local.to_str().unwrap(),
        &work.path().join("site-local"),
    );
    assert_eq!(
        site(&work.path().join("site-s3")),
        site(&work.path().join("site-local")),
        "the same pages from s3:// as from the local copy"
    );
    let (lists, gets) = requests(&cold);
    assert_eq!(gets, objects, "a cold build fetches every object once");
    // The top level, runs/, then one listing per run prefix.
    assert_eq!(lists, 2 + 14);

    let warm = build(&server, &server.url(), &work.path().join("site-s3"));
    assert_eq!(requests(&warm), (2 + 14, 0), "warm: lists only");

    let run = add_run(&local);
    server.upload(&run, "runs/2026-03-30T0300Z/");
    let plus_one = build(&server, &server.url(), &work.path().join("site-s3"));
    assert_eq!(
        requests(&plus_one),
        (2 + 15, common::tree(&run).len() as u64),
        "after one new run: only its objects are fetched"
    );
    build(
        &server,
        local.to_str().unwrap(),
        &work.path().join("site-local"),
    );
    assert_eq!(
        site(&work.path().join("site-s3")),
        site(&work.path().join("site-local"))
    );
    let text = stderr(&plus_one);
    assert!(text.contains("15 runs"), "{text}");
}

/// The files `record` files: five k6 summaries.
fn round_files(dir: &Path) -> Vec<PathBuf> {
    (1..=5)
        .map(|n| {
            let path = dir.join(format!("round-{n}.json"));
            std::fs::write(&path, common::k6_summary(100.0 + n as f64)).unwrap();
            path
        })
        .collect()
}

/// `perfdash record` of `files` as run `id` (`2026-03-31THH00Z`), started
/// at the time its id says.
fn record(server: &Server, id: &str, files: &[PathBuf]) -> Command {
    let started = format!("2026-03-31T{}:00:00Z", &id[11..13]);
    let mut cmd = server.perfdash();
    cmd.args(["record", "--archive", &server.url(), "--endpoint", "orders"])
        .args(["--started-at", &started, "--id", id])
        .args(files);
    cmd
}

#[test]
fn two_records_of_one_run_id_exactly_one_succeeds_and_a_second_is_refused() {
    let Some((server, work)) = server_with_story() else {
        return;
    };
    let files = round_files(work.path());

    let id = "2026-03-31T0300Z";
    let racers: Vec<Child> = (0..2)
        .map(|_| {
            record(&server, id, &files)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outs: Vec<Output> = racers
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect();
    let won: Vec<&Output> = outs.iter().filter(|o| o.status.success()).collect();
    assert_eq!(
        won.len(),
        1,
        "exactly one record wins:\n{}\n---\n{}",
        stderr(&outs[0]),
        stderr(&outs[1])
    );
    let lost = outs.iter().find(|o| !o.status.success()).unwrap();
    assert_eq!(lost.status.code(), Some(2));
    let why = stderr(lost);
    assert!(
        why.contains(&format!("s3://{BUCKET}/{PREFIX}/runs/{id}/"))
            && why.contains("never replaced"),
        "{why}"
    );
    assert_eq!(String::from_utf8_lossy(&won[0].stdout).trim(), id);

    // Once recorded, a second record of the id is refused, naming the key.
    let again = record(&server, id, &files).output().unwrap();
    assert_eq!(again.status.code(), Some(2), "{}", stderr(&again));
    assert!(
        stderr(&again).contains(&format!("runs/{id}/")),
        "{}",
        stderr(&again)
    );

    // The bucket holds the run once, complete, and build reads it.
    let stored = server
        .root
        .path()
        .join(BUCKET)
        .join(PREFIX)
        .join("runs")
        .join(id);
    assert!(stored.join(".perfdash-complete").is_file());
    let out = build(&server, &server.url(), &work.path().join("site"));
    assert!(stderr(&out).contains("15 runs"), "{}", stderr(&out));
}

#[test]
fn a_build_never_reads_a_run_being_recorded() {
    let Some((server, work)) = server_with_story() else {
        return;
    };

    // A record that has claimed its run and written part of it (as one
    // that is still uploading, or died): left out.
    let partial = work.path().join("partial");
    let run = add_run(&partial);
    std::fs::write(run.join(".perfdash-record"), "perfdash record\n").unwrap();
    std::fs::remove_file(run.join("orders/round-5.json")).unwrap();
    server.upload(&partial, "");
    let site = work.path().join("site");
    let out = build(&server, &server.url(), &site);
    let text = stderr(&out);
    assert!(text.contains("14 runs"), "{text}");
    assert!(text.contains("1 run(s) being recorded left out"), "{text}");
    // Asked for by id, it is said to be under way, not missing.
    for args in [
        vec!["check", "--run", "2026-03-30T0300Z"],
        vec!["compare", "2026-03-15T0300Z", "2026-03-30T0300Z"],
    ] {
        let out = server
            .perfdash()
            .args(&args)
            .args(["--archive", &server.url()])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("run '2026-03-30T0300Z' is being recorded"),
            "{}",
            stderr(&out)
        );
    }

    // The latest run `check` judges is the latest complete one, and it
    // says which it left out.
    let out = server
        .perfdash()
        .args(["check", "--archive", &server.url()])
        .output()
        .unwrap();
    assert!(
        stderr(&out).contains("left out as still being recorded: 2026-03-30T0300Z"),
        "{}",
        stderr(&out)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("run 2026-03-15T0300Z"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    // Meanwhile real records run while builds read: every build sees
    // each run whole (5 rounds of orders) or not at all.
    let files = round_files(work.path());
    let recorder = {
        let ids: Vec<String> = (10..16).map(|h| format!("2026-03-31T{h}00Z")).collect();
        let cmds: Vec<Command> = ids.iter().map(|id| record(&server, id, &files)).collect();
        std::thread::spawn(move || {
            for mut cmd in cmds {
                let out = cmd.output().unwrap();
                assert!(out.status.success(), "{}", stderr(&out));
            }
        })
    };
    let mut seen = Vec::new();
    while !recorder.is_finished() {
        let out = build(&server, &server.url(), &site);
        let copy = std::fs::read_dir(server.cache.path().join("perfdash/objects"))
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path()
            .join("archive/runs");
        for entry in std::fs::read_dir(&copy).unwrap() {
            let dir = entry.unwrap().path();
            if dir.ends_with("2026-03-30T0300Z") {
                panic!("the partial run was read");
            }
            if dir
                .file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("2026-03-31")
            {
                let rounds = std::fs::read_dir(dir.join("orders")).unwrap().count();
                assert_eq!(rounds, 5, "{} read half-written", dir.display());
            }
        }
        seen.push(stderr(&out));
    }
    recorder.join().unwrap();
    let out = build(&server, &server.url(), &site);
    assert!(stderr(&out).contains("20 runs"), "{}", stderr(&out));
    assert!(!seen.is_empty());

    // Two hours on, the partial run's record has most likely died: the
    // build says so, naming the run's prefix, and exits 1 as for a
    // skipped file.
    let later = (chrono::Utc::now() + chrono::TimeDelta::hours(2)).to_rfc3339();
    let out = server
        .perfdash()
        .env("PERFDASH_NOW", &later)
        .args(["build", "--archive", &server.url(), "--out"])
        .arg(&site)
        .output()
        .unwrap();
    let text = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains(&format!(
            "warning: s3://{BUCKET}/{PREFIX}/runs/2026-03-30T0300Z/: left out: a `perfdash record` \
             claimed this run at "
        )) && text.contains("delete this prefix and record the run again"),
        "{text}"
    );
}

#[test]
fn plain_http_is_refused_off_loopback_and_unsafe_keys_are_named() {
    let Some(binary) = s3s_fs() else { return };
    let server = Server::start(&binary);
    let out = server
        .perfdash()
        .env("AWS_ENDPOINT_URL", "http://192.0.2.1:9000")
        .args(["check", "--archive", &server.url()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("plain http"), "{}", stderr(&out));

    // The client's own settings come from the AWS_* variables too (a slow
    // store needs AWS_TIMEOUT, docs/archive.md): a value it cannot read is
    // named with its variable, before any request.
    let out = server
        .perfdash()
        .env("AWS_TIMEOUT", "ten minutes")
        .args(["build", "--archive", &server.url()])
        .arg("--out")
        .arg(server.cache.path().join("site-timeout"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("\"ten minutes\"") && stderr(&out).contains("(set by AWS_TIMEOUT)"),
        "{}",
        stderr(&out)
    );
    // A valid one is taken: every other command here runs with
    // AWS_TIMEOUT=2m (`Server::perfdash`).

    // A prefix with nothing under it (a typo): the error names the URL,
    // not the empty local copy's folder.
    let out = server
        .perfdash()
        .args([
            "build",
            "--archive",
            &format!("s3://{BUCKET}/no-such-prefix"),
        ])
        .arg("--out")
        .arg(server.cache.path().join("site-typo"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!(
            "s3://{BUCKET}/no-such-prefix: no objects under this prefix"
        )),
        "{}",
        stderr(&out)
    );
    assert!(
        !stderr(&out).contains("perfdash/objects"),
        "{}",
        stderr(&out)
    );

    // An object too large for the archive's limits is not fetched, and
    // the warning names its key.
    let work = tempfile::tempdir().unwrap();
    let local = work.path().join("archive");
    common::story_archive(&local);
    std::fs::write(
        local.join("perfdash.toml"),
        "[limits]\nmax_decompressed_bytes = 1048576\n",
    )
    .unwrap();
    let big = local.join("runs/2026-03-02T0300Z/orders/round-9.json");
    std::fs::write(&big, vec![b' '; 2 << 20]).unwrap();
    // And a round file cut short: its warning names the object's URL and
    // the line, not the local copy's path.
    std::fs::write(
        local.join("runs/2026-03-02T0300Z/orders/round-2.json"),
        "{\n  \"metrics\": {\n    \"http_req_duration\": {",
    )
    .unwrap();
    server.upload(&local, "");
    let out = server
        .perfdash()
        .args(["build", "--archive", &server.url(), "--out"])
        .arg(work.path().join("site"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!(
            "s3://{BUCKET}/{PREFIX}/runs/2026-03-02T0300Z/orders/round-9.json: not read"
        )),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains(&format!(
            "warning: s3://{BUCKET}/{PREFIX}/runs/2026-03-02T0300Z/orders/round-2.json:3: "
        )),
        "{}",
        stderr(&out)
    );
    assert!(
        !stderr(&out).contains("perfdash/objects"),
        "{}",
        stderr(&out)
    );
}

/// `record --rounds 5 --id <id> … <profile flag> <profiler> -- cp <a k6
/// summary with this p99 for inventory> {out}`.
fn record_profiled(server: &Server, work: &Path, id: &str, p99: f64, flag: &str) -> Output {
    let summary = work.join(format!("summary-{p99}.json"));
    std::fs::write(&summary, common::k6_summary(p99)).unwrap();
    let script = work.join("fake-profiler.sh");
    let folded =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pyspy/regressed.collapsed");
    std::fs::write(
        &script,
        format!(
            "echo ran >> '{}/profiler-ran'\ncp '{}' \"$1\"\n",
            work.display(),
            folded.display()
        ),
    )
    .unwrap();
    let started = format!("2026-03-31T{}:00:00Z", &id[11..13]);
    server
        .perfdash()
        .env("TMPDIR", work)
        .args([
            "record",
            "--archive",
            &server.url(),
            "--endpoint",
            "inventory",
        ])
        .args(["--started-at", &started, "--id", id])
        .args(["--rounds", "5", "--out-ext", "json"])
        .args([flag, &format!("sh '{}' {{out}}", script.display())])
        .arg("--")
        .arg("cp")
        .arg(&summary)
        .arg("{out}")
        .output()
        .unwrap()
}

#[test]
fn record_profiles_a_regressed_run_into_the_bucket_judged_against_the_bucket_history() {
    let Some((server, work)) = server_with_story() else {
        return;
    };
    let stored = |id: &str| {
        server
            .root
            .path()
            .join(BUCKET)
            .join(PREFIX)
            .join("runs")
            .join(id)
            .join("inventory/flame.cpu.collapsed")
    };
    let ran = work.path().join("profiler-ran");

    // Within its line (inventory reads 40 ms): judged against the bucket's
    // history, no profile.
    let ok = record_profiled(
        &server,
        work.path(),
        "2026-03-31T0300Z",
        40.0,
        "--profile-on-regression",
    );
    assert_eq!(ok.status.code(), Some(0), "{}", stderr(&ok));
    assert!(
        stderr(&ok).contains("no profile taken: no regression"),
        "{}",
        stderr(&ok)
    );
    assert!(!ran.exists() && !stored("2026-03-31T0300Z").exists());

    // Twice as slow: regressed, profiled, the profile added to the
    // published run as its own object, named by its URL.
    let bad = record_profiled(
        &server,
        work.path(),
        "2026-03-31T0400Z",
        80.0,
        "--profile-on-regression",
    );
    let said = stderr(&bad);
    assert_eq!(bad.status.code(), Some(0), "{said}");
    assert!(
        said.contains(&format!(
            "profiled, filed s3://{BUCKET}/{PREFIX}/runs/2026-03-31T0400Z/inventory/flame.cpu.collapsed"
        )),
        "{said}"
    );
    assert_eq!(std::fs::read_to_string(&ran).unwrap().lines().count(), 1);
    let folded =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pyspy/regressed.collapsed");
    assert_eq!(
        std::fs::read(stored("2026-03-31T0400Z")).unwrap(),
        std::fs::read(folded).unwrap()
    );
    let check = server
        .perfdash()
        .args([
            "check",
            "--archive",
            &server.url(),
            "--run",
            "2026-03-31T0400Z",
        ])
        .output()
        .unwrap();
    assert_eq!(
        check.status.code(),
        Some(1),
        "check agrees: {}",
        stderr(&check)
    );

    // Every run: profiled without judging.
    let every = record_profiled(
        &server,
        work.path(),
        "2026-03-31T0500Z",
        40.0,
        "--profile-every-run",
    );
    assert_eq!(every.status.code(), Some(0), "{}", stderr(&every));
    assert!(stored("2026-03-31T0500Z").is_file(), "{}", stderr(&every));

    // The runs and their profiles build from the bucket.
    let out = build(&server, &server.url(), &work.path().join("site"));
    assert!(stderr(&out).contains("17 runs"), "{}", stderr(&out));
}
