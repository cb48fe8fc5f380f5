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

/// Issue 18: analysis, rendering and writing run on every core; the site
/// must not depend on how many there are (or on which thread finished
/// first).
#[test]
fn one_thread_and_several_build_the_same_site() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("archive");
    let mut trees = Vec::new();
    for threads in ["1", "2", "5"] {
        let out = tmp.path().join(format!("site-{threads}"));
        perfdash()
            .env("RAYON_NUM_THREADS", threads)
            .args(["build", "--no-cache", "-q", "--archive"])
            .arg(&archive)
            .arg("--out")
            .arg(&out)
            .assert()
            .success();
        trees.push(common::tree(&out));
    }
    assert!(
        trees[0].len() > 100,
        "the bundled archive makes a full site"
    );
    assert!(trees[0] == trees[1], "1 thread and 2 threads differ");
    assert!(trees[0] == trees[2], "1 thread and 5 threads differ");
}

fn inode(path: &std::path::Path) -> u64 {
    std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(path).unwrap())
}

/// Issue 18: a rebuild links the files whose bytes did not change from
/// the previous site instead of writing them again, and writes the rest;
/// the site is the same as a fresh build either way.
#[test]
fn a_rebuild_links_unchanged_files_and_writes_changed_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    common::story_archive(&archive);
    let out = tmp.path().join("site");
    build(&archive, &out).success();
    let first = common::tree(&out);
    // The manifest is in the site's marker, after its own line.
    let manifest = std::fs::read_to_string(out.join(".perfdash-site")).unwrap();
    assert!(manifest.contains(" index.html\n"), "{manifest}");
    let css = inode(&out.join("static/style.css"));
    let overview = inode(&out.join("index.html"));

    let again = perfdash()
        .args(["build", "-v", "--archive"])
        .arg(&archive)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let said = String::from_utf8_lossy(&again.get_output().stderr).into_owned();
    assert_eq!(common::tree(&out), first, "nothing changed");
    assert_eq!(
        inode(&out.join("static/style.css")),
        css,
        "linked, not rewritten"
    );
    assert_eq!(inode(&out.join("index.html")), overview);
    // Only analysis.json (streamed, always written) is written again.
    let files = first.len() - 1; // the marker (which holds the manifest) is not counted
    assert!(
        said.contains(&format!("wrote {files} files"))
            && said.contains(&format!("({} unchanged", files - 1)),
        "{said}"
    );

    // A page of the live site edited in place, to the same size (so its
    // manifest line still matches): the previous site's copy differs from the rendered bytes, so the page
    // is written afresh.
    let page = out.join("endpoints/orders.html");
    let mut bytes = std::fs::read(&page).unwrap();
    bytes[0] = b'X';
    std::fs::write(&page, &bytes).unwrap();
    // A new run changes some pages: those are written, not linked.
    let runs = archive.join("runs");
    let last = std::fs::read_dir(&runs)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .max()
        .unwrap();
    // The story archive's runs are named by their time (no run.toml).
    common::copy_dir(&runs.join(&last), &runs.join("2026-06-01T0300Z"));
    build(&archive, &out).success();
    let fresh = tmp.path().join("fresh");
    perfdash()
        .args(["build", "--no-cache", "--archive"])
        .arg(&archive)
        .arg("--out")
        .arg(&fresh)
        .assert()
        .success();
    assert!(
        common::tree(&out) == common::tree(&fresh),
        "as a fresh build"
    );
    assert_ne!(
        inode(&out.join("index.html")),
        overview,
        "the overview changed"
    );
    assert_eq!(inode(&out.join("static/style.css")), css);
}

/// `analysis.json` is compact by default and indented with
/// `--pretty-json`: the same document either way.
#[test]
fn analysis_json_is_compact_unless_asked_pretty() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    common::story_archive(&archive);
    let (compact, pretty) = (tmp.path().join("compact"), tmp.path().join("pretty"));
    build(&archive, &compact).success();
    perfdash()
        .args(["build", "--pretty-json", "--archive"])
        .arg(&archive)
        .arg("--out")
        .arg(&pretty)
        .assert()
        .success();
    let read = |site: &std::path::Path| std::fs::read(site.join("data/analysis.json")).unwrap();
    let (c, p) = (read(&compact), read(&pretty));
    assert_eq!(c.iter().filter(|&&b| b == b'\n').count(), 1, "one line");
    assert!(p.starts_with(b"{\n  \"schema_version\""));
    assert!(c.ends_with(b"}\n") && p.ends_with(b"}\n"));
    assert!(
        c.len() * 3 / 2 < p.len(),
        "{} vs {} bytes",
        c.len(),
        p.len()
    );
    let parse = |b: &[u8]| serde_json::from_slice::<Value>(b).unwrap();
    assert_eq!(parse(&c), parse(&p));
}

/// `build --verbose` says where the wall time went, stage by stage.
#[test]
fn verbose_builds_print_the_time_of_each_stage() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    common::story_archive(&archive);
    let out = tmp.path().join("site");
    let time_line = |assert: assert_cmd::assert::Assert| -> String {
        let stderr = String::from_utf8(assert.get_output().stderr.clone()).unwrap();
        stderr
            .lines()
            .find(|l| l.starts_with("time: "))
            .unwrap_or_else(|| panic!("no time line in:\n{stderr}"))
            .to_string()
    };
    let stages = |line: &str| -> Vec<String> {
        let inner = line.strip_prefix("time: ").unwrap();
        let (each, total) = inner.rsplit_once(" (total ").unwrap();
        assert!(total.ends_with(" s)"), "{line}");
        each.split(", ")
            .map(|s| {
                let (name, secs) = s.rsplit_once(' ').unwrap().0.rsplit_once(' ').unwrap();
                assert!(secs.parse::<f64>().is_ok(), "{line}");
                name.to_string()
            })
            .collect()
    };
    let run = || {
        perfdash()
            .args(["build", "-v", "--archive"])
            .arg(&archive)
            .arg("--out")
            .arg(&out)
            .assert()
            .success()
    };
    assert_eq!(
        stages(&time_line(run())),
        ["read", "analyse", "pages and files", "swap", "cache"]
    );
    // (A build that finds nothing changed has only `read` and `cache`:
    // tests/integrity.rs, where the archive has settled.)
}
