//! Helpers of the object storage tests (tests/object_store.rs against
//! s3s-fs, tests/object_store_clouds.rs against Azurite and
//! fake-gcs-server): finding an emulator, reading `build --verbose`'s
//! request counts, adding a run to the local copy.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false")
}

/// Says why a test cannot run here; with `CI` set that is a failure,
/// because CI must really run the object storage tests (`.ci/run`
/// installs every emulator).
pub fn skipped(why: &str) {
    assert!(!in_ci(), "{why}: CI must run the object storage tests");
    eprintln!("SKIPPED: {why}");
}

/// `name` on PATH, if it is there.
pub fn on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join(name))
            .find(|p| p.is_file())
    })
}

/// Starts `command(port)` on a free loopback port and waits until it
/// listens. A server that exits first (the port was taken between
/// choosing it and binding it) gets another port, four more times.
pub fn spawn_listening(name: &str, command: impl Fn(u16) -> Command) -> (Child, u16) {
    for _ in 0..5 {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut child = command(port)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        for _ in 0..200 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return (child, port);
            }
            if child.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
    panic!("{name} did not start listening on loopback");
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `(lists, gets)` from `build --verbose`'s `objects: … requests: …` line.
pub fn requests(out: &Output) -> (u64, u64) {
    let text = stderr(out);
    let line = text
        .lines()
        .find(|l| l.starts_with("objects: "))
        .unwrap_or_else(|| panic!("no objects: line in\n{text}"));
    let after = line.split("requests: ").nth(1).unwrap();
    let numbers: Vec<u64> = after
        .split(", ")
        .map(|part| part.split(' ').next().unwrap().parse().unwrap())
        .collect();
    (numbers[0], numbers[1])
}

/// Adds one run (`2026-03-30T0300Z`, two endpoints) to a local archive.
pub fn add_run(archive: &Path) -> PathBuf {
    let run = archive.join("runs/2026-03-30T0300Z");
    for endpoint in ["orders", "inventory"] {
        std::fs::create_dir_all(run.join(endpoint)).unwrap();
        for n in 1..=5 {
            std::fs::write(
                run.join(endpoint).join(format!("round-{n}.json")),
                super::k6_summary(if endpoint == "orders" { 101.0 } else { 40.0 }),
            )
            .unwrap();
        }
    }
    run
}
