//! Nothing outside `--out` and its cache is written by `build`, `check` or
//! `eval`, and `demo` stays within limits and leaves nothing when it fails.

use std::path::Path;

use assert_cmd::Command;

mod common;

fn perfdash() -> Command {
    Command::cargo_bin("perfdash").unwrap()
}

/// Every file under `dir`, with its bytes.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    common::tree(dir)
}

#[test]
fn eval_writes_only_into_a_markdown_document_with_its_markers() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("a");
    std::fs::create_dir_all(&archive).unwrap();
    let settings = archive.join("perfdash.toml");
    std::fs::write(&settings, "[analysis]\nexpected_rounds = 5\n").unwrap();
    let quick = ["eval", "--series", "1", "--runs", "60", "--write"];
    let out = perfdash().args(quick).arg(&settings).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a Markdown file"));
    assert_eq!(
        std::fs::read_to_string(&settings).unwrap(),
        "[analysis]\nexpected_rounds = 5\n"
    );
    // A Markdown file without the markers: refused, left as it was.
    let notes = tmp.path().join("notes.md");
    std::fs::write(&notes, "# Notes\n").unwrap();
    let out = perfdash().args(quick).arg(&notes).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("markers"));
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "# Notes\n");
    // A new document is written whole, with its markers.
    let new = tmp.path().join("eval.md");
    perfdash().args(quick).arg(&new).assert().code(0);
    let text = std::fs::read_to_string(&new).unwrap();
    assert!(
        perfdash::doc_section::section(&text, "eval").is_some(),
        "{text}"
    );
}

#[test]
fn check_writes_its_cache_only_beside_a_site_folder_that_can_hold_it() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    common::story_archive(&archive);
    let cwd = tmp.path().join("cwd");
    std::fs::create_dir_all(&cwd).unwrap();
    for site in ["/", "/nonexistent-perfdash-parent/site"] {
        let out = perfdash()
            .current_dir(&cwd)
            .args(["check", "--latest", "--archive"])
            .arg(&archive)
            .args(["--site", site])
            .output()
            .unwrap();
        assert!(matches!(out.status.code(), Some(0..=2)), "{out:?}");
        assert!(
            snapshot(&cwd).is_empty(),
            "--site {site} wrote into the current folder"
        );
    }
    assert!(!Path::new("/nonexistent-perfdash-parent").exists());
    // Beside an ordinary site folder, its cache is written there.
    perfdash()
        .current_dir(&cwd)
        .args(["check", "--latest", "--archive"])
        .arg(&archive)
        .args(["--site", "site"])
        .output()
        .unwrap();
    let written: Vec<String> = snapshot(&cwd).into_iter().map(|(p, _)| p).collect();
    assert!(
        written
            .iter()
            .all(|p| p.starts_with(".perfdash-cache/site/")),
        "{written:?}"
    );
}

#[test]
fn demo_refuses_what_it_cannot_sensibly_write_and_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("big");
    for args in [
        &["--weeks", "100000"][..],
        &["--endpoints", "100000"],
        &["--weeks", "520", "--endpoints", "1000"],
    ] {
        let o = perfdash()
            .arg("demo")
            .arg("--out")
            .arg(&out)
            .args(args)
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(!out.exists(), "{args:?}");
    }
    assert!(
        std::fs::read_dir(tmp.path()).unwrap().next().is_none(),
        "nothing beside it either"
    );
}

#[test]
fn a_demo_stopped_by_sigterm_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("demo");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("perfdash"))
        .args([
            "demo",
            "--weeks",
            "156",
            "--endpoints",
            "120",
            "--no-profiles",
            "--out",
        ])
        .arg(&out)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until it has started writing, then stop it.
    let started = std::time::Instant::now();
    while std::fs::read_dir(tmp.path()).unwrap().next().is_none() {
        assert!(
            started.elapsed().as_secs() < 30,
            "demo never started writing"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(child.id() as i32).unwrap(),
        rustix::process::Signal::TERM,
    )
    .unwrap();
    let status = child.wait().unwrap();
    assert!(!status.success());
    assert!(
        std::fs::read_dir(tmp.path()).unwrap().next().is_none(),
        "left behind: {:?}",
        snapshot(tmp.path()).len()
    );
}

/// k6's default `name` tag is the full URL: a run-level file of 600 URLs
/// is refused with advice instead of becoming 600 endpoint pages.
#[test]
fn a_run_level_file_of_thousands_of_urls_is_refused_with_advice() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    common::story_archive(&archive);
    let run = std::fs::read_dir(archive.join("runs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let mut ndjson = String::from(
        "{\"type\":\"Metric\",\"data\":{\"name\":\"http_req_duration\",\"type\":\"trend\",\"contains\":\"time\",\"thresholds\":[],\"submetrics\":null},\"metric\":\"http_req_duration\"}\n",
    );
    for i in 0..600 {
        ndjson.push_str(&format!(
            "{{\"metric\":\"http_req_duration\",\"type\":\"Point\",\"data\":{{\"time\":\"2026-03-02T03:00:{:02}.000000+00:00\",\"value\":12.5,\"tags\":{{\"expected_response\":\"true\",\"name\":\"http://127.0.0.1:8080/orders/{i}\"}}}}}}\n",
            i % 60
        ));
    }
    std::fs::write(run.join("round-1.ndjson"), ndjson).unwrap();
    let out = tmp.path().join("site");
    let o = perfdash()
        .args(["build", "--no-cache", "--archive"])
        .arg(&archive)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("round-1.ndjson: skipped: it splits into 600 endpoints by the k6 tag `name`, more than [limits] max_endpoints_per_run (500)")
            && stderr.contains("tags: { name:"),
        "{stderr}"
    );
    assert!(!out.join("endpoints/orders-0.html").exists());
    let pages = std::fs::read_dir(out.join("endpoints")).unwrap().count();
    assert!(pages < 10, "{pages} endpoint pages");
}
