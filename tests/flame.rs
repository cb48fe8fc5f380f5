//! Flame graphs end to end: profiles in the archive become flame pages,
//! links from endpoint and run pages, and attribution in analysis.json.

mod common;

use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

const PYSPY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/pyspy");
const SHOP: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/pyspy-shop");

fn run_dir(archive: &Path, i: usize) -> std::path::PathBuf {
    let day =
        chrono::NaiveDate::from_ymd_opt(2026, 3, 2).unwrap() + chrono::Duration::days(i as i64);
    archive
        .join("runs")
        .join(format!("{}T0300Z", day.format("%Y-%m-%d")))
}

fn copy(from: &Path, to: &Path) {
    std::fs::copy(from, to).unwrap_or_else(|e| panic!("{}: {e}", from.display()));
}

/// The story archive (orders regresses from run 11 on) with profiles:
/// orders has the real py-spy profile of the normal service in runs 5 and 9
/// and of the service with the injected `slow_scan` in run 11; inventory has
/// a small JVM-style profile with generic names in runs 8 and 12.
fn archive_with_profiles(root: &Path) {
    common::story_archive(root);
    std::fs::write(
        root.join("perfdash.toml"),
        "[profiles]\napplication_prefixes = [\"orders_service.\", \"com/acme/\"]\n",
    )
    .unwrap();
    let pyspy = Path::new(PYSPY);
    copy(
        &pyspy.join("normal.collapsed"),
        &run_dir(root, 5).join("orders/flame.collapsed"),
    );
    copy(
        &pyspy.join("normal.collapsed"),
        &run_dir(root, 9).join("orders/flame.cpu.collapsed"),
    );
    copy(
        &pyspy.join("regressed.collapsed"),
        &run_dir(root, 11).join("orders/flame.collapsed"),
    );
    let jvm = |cache: u32, gc: u32| {
        format!(
            "java/lang/Thread.run;com/acme/Inventory.lookup;com/acme/Cache.get(Map<String,List<Foo>>) {cache}\n\
             java/lang/Thread.run;com/acme/Inventory.lookup;java/net/SocketInputStream.socketRead0 300\n\
             GangWorker::loop;G1ParScanThreadState::trim_queue;Closure<Map<String,List<Foo>>> 'a&b' \"q\" {gc}\n"
        )
    };
    std::fs::write(run_dir(root, 8).join("inventory/flame.txt"), jvm(400, 100)).unwrap();
    std::fs::write(run_dir(root, 12).join("inventory/flame.txt"), jvm(400, 700)).unwrap();
}

fn build(archive: &Path, out: &Path) {
    Command::cargo_bin("perfdash")
        .unwrap()
        .args(["build", "--archive"])
        .arg(archive)
        .arg("--out")
        .arg(out)
        .assert()
        .success();
}

#[test]
fn profiles_become_flame_pages_with_attribution() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    archive_with_profiles(&archive);
    let out = tmp.path().join("site");
    build(&archive, &out);

    let doc: Value =
        serde_json::from_slice(&std::fs::read(out.join("data/analysis.json")).unwrap()).unwrap();
    let orders = doc["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == "orders")
        .unwrap();
    let runs = orders["runs"].as_array().unwrap();
    assert_eq!(runs[11]["verdict"], "regression");
    let profile = &runs[11]["profiles"][0];
    assert_eq!(profile["kind"], "cpu");
    assert_eq!(profile["format"], "folded");
    assert_eq!(
        profile["baseline"]["run"], runs[9]["run"],
        "the most recent accepted run with a cpu profile"
    );
    assert_eq!(profile["attribution"]["kind"], "code-regression");
    let summary = profile["attribution"]["summary"].as_str().unwrap();
    assert!(
        summary.starts_with("code regression: slow_scan (orders_service.py) +"),
        "{summary}"
    );
    assert!(profile["shares"]["application"].as_f64().unwrap() > 40.0);
    assert!(
        profile["grown_frames"][0]["frame"]
            .as_str()
            .unwrap()
            .contains("orders_service.py")
    );
    assert!(
        runs[9]["profiles"][0]["attribution"].is_null(),
        "no attribution on an ok run"
    );
    assert_eq!(runs[9]["profiles"][0]["baseline"]["run"], runs[5]["run"]);
    assert!(runs[5]["profiles"][0]["baseline"].is_null());
    assert_eq!(runs[0]["profiles"].as_array().unwrap().len(), 0);

    // The regressed run's page, its SVGs, and the links to it.
    let run_slug = runs[11]["run"].as_str().unwrap().to_lowercase();
    let dir = out.join("flame/orders");
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let page_name = names
        .iter()
        .find(|n| n.ends_with(".cpu.html") && n.to_lowercase().starts_with(&run_slug))
        .unwrap();
    let stem = page_name.trim_end_matches(".html");
    let page = std::fs::read_to_string(dir.join(page_name)).unwrap();
    assert!(
        page.contains("Attribution: code regression: slow_scan (orders_service.py) +"),
        "attribution shown"
    );
    assert!(
        page.contains(&format!("data=\"{stem}.svg\""))
            && page.contains(&format!("data=\"{stem}.diff.svg\""))
    );
    assert!(
        page.contains("slow_scan ("),
        "grown frames table names the injected function"
    );
    let svg = std::fs::read_to_string(dir.join(format!("{stem}.svg"))).unwrap();
    assert!(svg.starts_with("<?xml") && svg.contains("function search"));
    assert!(dir.join(format!("{stem}.diff.svg")).is_file());

    let endpoint_page = std::fs::read_to_string(out.join("endpoints/orders.html")).unwrap();
    assert!(
        endpoint_page.contains(&format!("href=\"../flame/orders/{page_name}\"")),
        "endpoint page links it"
    );
    let run_page_name = format!("{}.html", stem.trim_end_matches(".cpu"));
    let run_page = std::fs::read_to_string(out.join("runs").join(&run_page_name)).unwrap();
    assert!(
        run_page.contains(&format!("href=\"../flame/orders/{page_name}\"")),
        "run page links it"
    );
    assert!(run_page.contains("code regression: slow_scan (orders_service.py) +"));

    // Deterministic: a second build gives byte-identical flame pages, SVGs and data.
    let again = tmp.path().join("site2");
    build(&archive, &again);
    assert_eq!(
        common::tree(&out.join("flame")),
        common::tree(&again.join("flame"))
    );
    assert_eq!(
        std::fs::read(out.join("data/analysis.json")).unwrap(),
        std::fs::read(again.join("data/analysis.json")).unwrap()
    );
}

#[test]
fn gc_growth_is_attributed_to_gc_and_names_are_escaped_everywhere() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    archive_with_profiles(&archive);
    // Make inventory regress in run 12 so its profile is attributed.
    let dir = run_dir(&archive, 12).join("inventory");
    for n in 1..=5 {
        std::fs::write(
            dir.join(format!("round-{n}.json")),
            common::k6_summary(90.0),
        )
        .unwrap();
    }
    let out = tmp.path().join("site");
    build(&archive, &out);
    if let Ok(keep) = std::env::var("PERFDASH_KEEP") {
        let _ = std::process::Command::new("cp")
            .arg("-r")
            .arg(&out)
            .arg(keep)
            .status();
    }
    let doc: Value =
        serde_json::from_slice(&std::fs::read(out.join("data/analysis.json")).unwrap()).unwrap();
    let inventory = doc["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == "inventory")
        .unwrap();
    let run = &inventory["runs"][12];
    assert_eq!(run["verdict"], "regression");
    assert_eq!(
        run["profiles"][0]["attribution"]["kind"], "gc-lock",
        "{}",
        run["profiles"][0]
    );
    assert!(
        run["profiles"][0]["attribution"]["summary"]
            .as_str()
            .unwrap()
            .starts_with("GC/lock: GC +")
    );

    // Every flame page and SVG escapes `<`, `>`, `&` and quotes in frame names.
    let mut checked = 0;
    for entry in walkdir::WalkDir::new(out.join("flame/inventory")) {
        let entry = entry.unwrap();
        if !entry.file_type().is_file() {
            continue;
        }
        let text = std::fs::read_to_string(entry.path()).unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        assert!(
            !text.contains("Map<String"),
            "{name}: raw < from a frame name"
        );
        assert!(!text.contains("a&b"), "{name}: raw & from a frame name");
        assert!(
            !text.contains("\"q\""),
            "{name}: raw quotes from a frame name"
        );
        // The SVGs draw every frame; the regressed run's page lists the grown GC frame.
        if name.ends_with(".svg") || name.contains("2026-03-14") && name.ends_with(".html") {
            // inferno writes named entities, askama numeric ones.
            let named =
                text.contains("Map&lt;String,List&lt;Foo&gt;&gt;") && text.contains("a&amp;b");
            let numeric =
                text.contains("Map&#60;String,List&#60;Foo&#62;&#62;") && text.contains("a&#38;b");
            assert!(named || numeric, "{name}");
        }
        checked += 1;
    }
    assert_eq!(checked, 5, "two pages, two flame graphs, one differential");
}

#[test]
fn async_profiler_html_in_the_archive() {
    let Some(fixtures) = common::shared_fixtures() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    common::story_archive(&archive);
    copy(
        &fixtures.join("async-profiler@v3.0/demo/flamegraph.html"),
        &run_dir(&archive, 3).join("inventory/flamegraph.html"),
    );
    let out = tmp.path().join("site");
    build(&archive, &out);
    let doc: Value =
        serde_json::from_slice(&std::fs::read(out.join("data/analysis.json")).unwrap()).unwrap();
    let inventory = doc["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == "inventory")
        .unwrap();
    let p = &inventory["runs"][3]["profiles"][0];
    assert_eq!(p["format"], "async-profiler-html-v3");
    assert_eq!(p["total"], 584.0);
    let gc = p["shares"]["gc"].as_f64().unwrap();
    assert!((gc - 18.5).abs() < 0.5, "{gc}");
}

fn endpoint<'a>(doc: &'a Value, id: &str) -> &'a Value {
    doc["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == id)
        .unwrap()
}

/// The real py-spy captures of `tests/fixtures/pyspy-shop` (v1, then v2 with
/// an injected N+1 query, deployed to other directories) as a user archives
/// them, under any `flame*` name: orders gets the speedscope files,
/// inventory the folded ones. Both regressed runs are attributed to code,
/// name `rules_for_line` first, report busy-time points with idle apart,
/// and the pages say so; no number on them is a change above 100 points.
#[test]
fn real_pyspy_regression_in_the_archive_leads_to_the_injected_function() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    common::story_archive(&archive);
    let shop = Path::new(SHOP);
    copy(
        &shop.join("v1.speedscope.json"),
        &run_dir(&archive, 5).join("orders/flame-pyspy.json"),
    );
    copy(
        &shop.join("v1.speedscope.json"),
        &run_dir(&archive, 9).join("orders/flamegraph_v1.json"),
    );
    copy(
        &shop.join("v2.speedscope.json"),
        &run_dir(&archive, 11).join("orders/flame-v2.speedscope.json"),
    );
    copy(
        &shop.join("v1.folded"),
        &run_dir(&archive, 8).join("inventory/flames.txt"),
    );
    copy(
        &shop.join("v2.folded"),
        &run_dir(&archive, 12).join("inventory/flame.cpu.txt"),
    );
    // Make inventory regress in run 12 too.
    for n in 1..=5 {
        std::fs::write(
            run_dir(&archive, 12).join(format!("inventory/round-{n}.json")),
            common::k6_summary(90.0),
        )
        .unwrap();
    }
    let out = tmp.path().join("site");
    build(&archive, &out);
    let doc: Value =
        serde_json::from_slice(&std::fs::read(out.join("data/analysis.json")).unwrap()).unwrap();
    for (id, run, format, units) in [
        ("orders", 11, "speedscope", "seconds"),
        ("inventory", 12, "folded", "samples"),
    ] {
        let runs = endpoint(&doc, id)["runs"].as_array().unwrap();
        assert_eq!(runs[run]["verdict"], "regression", "{id}");
        let p = &runs[run]["profiles"][0];
        assert_eq!(p["format"], format, "{id}");
        assert_eq!(p["units"], units, "{id}");
        let samples = p["samples"].as_u64().unwrap();
        assert!(samples > 1000, "{id}: {samples} samples");
        assert_eq!(p["normalisation"], "functions");
        assert!(
            p["baseline"]["idle_pct"].as_f64().unwrap() > 20.0,
            "{id}: {p}"
        );
        assert!(
            p["busy_shares"].get("idle-wait").is_none(),
            "{id}: idle left out"
        );
        let a = &p["attribution"];
        assert_eq!(a["kind"], "code-regression", "{id}: {a}");
        let summary = a["summary"].as_str().unwrap();
        assert!(
            summary.starts_with("code regression: rules_for_line (shop.py) +"),
            "{id}: {summary}"
        );
        assert_eq!(a["more_work"], true, "{id}: {a}");
        assert_eq!(
            a["top_frames"][0]["frame"], "rules_for_line (shop.py)",
            "{id}: {a}"
        );
        assert!(
            a["application_delta_pts"].as_f64().unwrap() >= 10.0,
            "{id}: {summary}"
        );
        assert!(
            a["changes"]
                .as_array()
                .unwrap()
                .iter()
                .all(|c| c["category"] != "idle-wait")
        );
        let top = &p["grown_frames"][0];
        assert_eq!(top["frame"], "rules_for_line (shop.py)", "{id}");
        let delta =
            top["total_after_pct"].as_f64().unwrap() - top["total_before_pct"].as_f64().unwrap();
        assert!(delta >= 10.0, "{id}: {top}");
        for g in p["grown_frames"].as_array().unwrap() {
            let f = g["frame"].as_str().unwrap();
            assert!(
                !f.contains("/srv/app/") && !f.contains(".py:"),
                "{id}: normalised: {f}"
            );
        }

        // The page.
        let run_slug = runs[run]["run"].as_str().unwrap().to_lowercase();
        let page =
            std::fs::read_to_string(out.join(format!("flame/{id}/{run_slug}.cpu.html"))).unwrap();
        // The page names the injected function in the attribution line.
        assert!(
            page.contains("Attribution: code regression: rules_for_line (shop.py) +"),
            "{id}"
        );
        assert!(page.contains("; application share +"), "{id}");
        assert!(page.contains("<strong>Idle: "), "{id}: idle shown apart");
        assert!(
            page.contains(
                "frames are compared by function: line numbers and directories are dropped"
            )
        );
        assert!(
            page.contains("class=\"flame-legend\""),
            "{id}: colour legend"
        );
        let table = &page[page.find("grown-frames").unwrap()..];
        let first = &table[table.find("<tbody>").unwrap()..];
        // Long names carry break opportunities (`<wbr>`) so that they wrap.
        let first_row = first[..first.find("</tr>").unwrap()].replace("<wbr>", "");
        assert!(
            first_row.contains("<code>rules_for_line (shop.py)</code>"),
            "{id}: {first_row}"
        );
        if units == "seconds" {
            // 2,413 samples weigh 24.13 seconds: both said, rounded.
            assert!(
                page.contains(&format!(" seconds in {} samples", group(samples))),
                "{id}"
            );
            assert!(
                !page.contains("99999") && !page.contains("00000000"),
                "{id}: rounded"
            );
        }
        let diff = std::fs::read_to_string(out.join(format!("flame/{id}/{run_slug}.cpu.diff.svg")))
            .unwrap();
        assert!(diff.contains("<title>rules_for_line (shop.py) ("), "{id}");
        let mut changes = 0;
        for title in diff.split("<title>").skip(1) {
            let title = &title[..title.find("</title>").unwrap()];
            for part in title.split(" pts").collect::<Vec<_>>().iter().rev().skip(1) {
                let number = &part[part.rfind(", ").unwrap() + 2..];
                let pts: f64 = number.parse().unwrap_or_else(|_| panic!("{id}: {title}"));
                assert!(pts.abs() <= 100.0, "{id}: {title}");
                changes += 1;
            }
        }
        assert!(changes > 20, "{id}: {changes} changes in tooltips");
    }
}

fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn check(archive: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::cargo_bin("perfdash")
        .unwrap()
        .args(["check", "--archive"])
        .arg(archive)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
    )
}

/// `perfdash check` says why a regressed endpoint is slower, beside the
/// regression, in every format: the real py-spy N+1 (orders, the latest
/// run against run 9's profile, with `[profile] duration` so the busy time
/// per request is measured), and a regressed endpoint whose earlier runs
/// have no profile (inventory) says so. With the cache (the profiles of
/// runs it knows are not read until a regression needs them) the answer is
/// the one `--no-cache` gives.
#[test]
fn check_says_why_it_is_slower_in_every_format() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    common::story_archive(&archive);
    let shop = Path::new(SHOP);
    copy(
        &shop.join("v1.speedscope.json"),
        &run_dir(&archive, 9).join("orders/flame.json"),
    );
    copy(
        &shop.join("v2.speedscope.json"),
        &run_dir(&archive, 13).join("orders/flame.json"),
    );
    copy(
        &shop.join("v2.folded"),
        &run_dir(&archive, 13).join("inventory/flame.txt"),
    );
    for i in [9, 13] {
        std::fs::write(
            run_dir(&archive, i).join("run.toml"),
            "[profile]\nduration = \"10s\"\n",
        )
        .unwrap();
    }
    for n in 1..=5 {
        std::fs::write(
            run_dir(&archive, 13).join(format!("inventory/round-{n}.json")),
            common::k6_summary(90.0),
        )
        .unwrap();
    }

    let (code, text) = check(&archive, &["--no-cache"]);
    assert_eq!(code, 1, "{text}");
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let orders = lines
        .iter()
        .position(|l| l.starts_with("regression") && l.contains(" orders "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        lines[orders + 2].starts_with("cpu profile: code regression: rules_for_line (shop.py) +"),
        "{text}"
    );
    assert!(
        lines[orders + 2].contains("; busy time per request ×"),
        "{text}"
    );
    assert!(
        text.contains(
            "cpu profile: no baseline profile: no earlier accepted run has a cpu profile to compare with"
        ),
        "{text}"
    );

    let (_, json) = check(&archive, &["--no-cache", "--format", "json"]);
    let doc: Value = serde_json::from_str(&json).unwrap();
    let of = |id: &str| {
        doc["endpoints"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["endpoint"] == id)
            .unwrap()
            .clone()
    };
    let p = &of("orders")["profiles"][0];
    assert_eq!(p["baseline_run"], "2026-03-11T0300Z");
    assert_eq!(p["attribution"]["kind"], "code-regression");
    assert_eq!(
        p["attribution"]["top_frames"][0]["frame"],
        "rules_for_line (shop.py)"
    );
    assert_eq!(p["attribution"]["per_request"]["status"], "measured");
    assert!(p["attribution"]["per_request"]["ratio"].as_f64().unwrap() > 4.0);
    assert!(of("inventory")["profiles"][0]["attribution"].is_null());

    let (_, markdown) = check(&archive, &["--no-cache", "--format", "markdown"]);
    assert!(
        markdown
            .contains("- **orders**, cpu profile: code regression: rules\\_for\\_line (shop.py) +"),
        "{markdown}"
    );
    let (_, junit) = check(&archive, &["--no-cache", "--format", "junit"]);
    let failure = &junit[junit.find("name=\"orders\"").unwrap()..];
    let failure = &failure[..failure.find("</testcase>").unwrap()];
    assert!(
        failure.contains("cpu profile: code regression: rules_for_line (shop.py) +"),
        "{failure}"
    );

    // Warm the cache with a build, then check from it: the same answer.
    let site = tmp.path().join("site");
    build(&archive, &site);
    let mut site_arg = vec!["--site".to_string(), site.display().to_string()];
    site_arg.extend(["--format".to_string(), "json".to_string()]);
    let args: Vec<&str> = site_arg.iter().map(String::as_str).collect();
    let (_, cached) = check(&archive, &args);
    let cached: Value = serde_json::from_str(&cached).unwrap();
    for (a, b) in cached["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .zip(doc["endpoints"].as_array().unwrap())
    {
        assert_eq!(a["profiles"], b["profiles"], "{}", a["endpoint"]);
    }
    // And the site's flame page says what check says.
    let line = p["line"].as_str().unwrap();
    let page =
        std::fs::read_to_string(site.join("flame/orders/2026-03-15t0300z.cpu.html")).unwrap();
    let escaped = line.replace('<', "&#60;").replace('>', "&#62;");
    assert!(page.contains(&format!("Attribution: {escaped}")), "{line}");
}

/// Frame names come from profile files: a name holding terminal controls
/// is escaped in `check`'s text and never raw in its JUnit XML.
#[test]
fn check_escapes_frame_names_it_prints() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    common::story_archive(&archive);
    let profile = |evil: u32| {
        format!(
            "main;handle;render 3000\n\
             main;handle;parse 2000\n\
             main;handle;write 1000\n\
             main;handle;lookup\u{1b}[2K\rOK: nothing regressed {evil}\n"
        )
    };
    std::fs::write(run_dir(&archive, 9).join("orders/flame.txt"), profile(100)).unwrap();
    std::fs::write(
        run_dir(&archive, 13).join("orders/flame.txt"),
        profile(9000),
    )
    .unwrap();
    let (code, text) = check(&archive, &["--no-cache"]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("cpu profile: code regression: "), "{text}");
    assert!(!text.contains('\u{1b}') && !text.contains('\r'), "{text:?}");
    let (_, junit) = check(&archive, &["--no-cache", "--format", "junit"]);
    assert!(junit.contains("cpu profile: code regression: "), "{junit}");
    assert!(!junit.contains('\u{1b}'), "{junit:?}");
}
