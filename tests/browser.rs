//! The site in a real browser: builds sites and runs
//! `tests/browser/check.mjs`, which reads every page for broken links and
//! anchors and opens one page of every kind over `file://` in Debian's
//! headless Chromium (through playwright-core, see
//! tests/browser/package.json): console errors, failed loads, tables wider
//! than their box at 1280×720, axe-core in both colour schemes, the phone's
//! first screen, the scripts (zoom, sort and filter kept in the URL), and
//! charts or tables that do not show without JavaScript (the list is at
//! the top of check.mjs). Screenshots of every page kind at 1280 and 390
//! px, light and dark, land in `target/screenshots/<archive>/` for a person
//! to look at.
//!
//! Without chromium or node (or before `npm ci --prefix tests/browser`)
//! the tests say "skipped" and pass on a developer's machine; with `CI`
//! set they fail, because CI must really run them (`.ci/run` installs
//! what they need).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

const MANIFEST_DIR: &str = env!("CARGO_MANIFEST_DIR");

fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false")
}

/// The browser and node, or why the tests cannot run here.
fn tools() -> Result<(), String> {
    let chromium =
        std::env::var("PERFDASH_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    if !Path::new(&chromium).is_file() {
        return Err(format!(
            "chromium or node not installed ({chromium} is missing)"
        ));
    }
    let node = Command::new("node").arg("--version").output();
    if !node.is_ok_and(|o| o.status.success()) {
        return Err("chromium or node not installed (no `node` on PATH)".into());
    }
    let playwright = Path::new(MANIFEST_DIR).join("tests/browser/node_modules/playwright-core");
    if !playwright.is_dir() {
        return Err("playwright-core not installed: run `npm ci --prefix tests/browser`".into());
    }
    Ok(())
}

/// True when the tests can run; prints why not, or panics in CI.
fn ready() -> bool {
    match tools() {
        Ok(()) => true,
        Err(why) if in_ci() => panic!("CI is set but the browser test cannot run: {why}"),
        Err(why) => {
            eprintln!("skipped: {why}");
            false
        }
    }
}

fn build(archive: &Path, out: &Path) {
    perfdash::pipeline::build(&perfdash::pipeline::BuildOptions {
        archive: archive.to_path_buf(),
        out: out.to_path_buf(),
        ..Default::default()
    })
    .unwrap_or_else(|e| panic!("building {}: {e}", archive.display()));
}

/// Runs the browser check on a built site, with what the site must show
/// (`--expect=…`, see check.mjs); returns (passed, output).
fn check(site: &Path, screenshots: Option<&Path>, expect: &[&str]) -> (bool, String) {
    let mut cmd = Command::new("node");
    cmd.arg(Path::new(MANIFEST_DIR).join("tests/browser/check.mjs"))
        .arg(site);
    if let Some(dir) = screenshots {
        cmd.arg(dir);
    }
    if !expect.is_empty() {
        cmd.arg(format!("--expect={}", expect.join(",")));
    }
    let out = cmd.output().expect("running node");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

fn screenshot_dir(name: &str) -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(MANIFEST_DIR).join("target"));
    let dir = target.join("screenshots").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn every_page_of_the_bundled_archive_works_in_a_browser() {
    if !ready() {
        return;
    }
    let archive = Path::new(MANIFEST_DIR).join("archive");
    if !archive.join("runs").is_dir() {
        // The generated showcase archive (the next test) is checked
        // either way; this one needs the bundled sample.
        eprintln!("skipped: no bundled archive/ in this checkout");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let site = tmp.path().join("site");
    build(&archive, &site);
    let shots = screenshot_dir("bundled");
    // The bundled archive's last week has a week before it. It has no
    // improvement since the noise line (issue 33): stock-levels' grown
    // noise (×0.87 of its baseline) read as one under the plain ×1.15
    // and is within its own line now; the recorded archive below has a
    // real one.
    let (ok, out) = check(&site, Some(&shots), &["previous-week"]);
    println!("{out}");
    assert!(ok, "browser check failed:\n{out}");
    assert_screenshots(&shots, &out);
    println!("screenshots in {}", shots.display());
}

/// Every page kind at 1280 and 390 px, light and dark, and the views the
/// check takes on the way, are saved for a person to look at.
fn assert_screenshots(shots: &Path, out: &str) {
    let kinds = out
        .lines()
        .find_map(|l| l.strip_prefix("page kinds: "))
        .unwrap_or_else(|| panic!("the check names its page kinds:\n{out}"));
    let mut count = 0;
    for kind in kinds.split("; ") {
        let (kind, _) = kind.split_once(" = ").expect("kind = page");
        let file = kind.replace(['(', ')'], "").trim().replace(' ', "-");
        for size in ["1280-light", "1280-dark", "390-light", "390-dark"] {
            let name = format!("{file}-{size}.png");
            assert!(shots.join(&name).is_file(), "screenshot {name}");
            count += 1;
        }
    }
    for name in [
        "heatmap-1280-light.png",
        "heatmap-1280-dark.png",
        "endpoint-zoomed.png",
        "weekly-first-screen-1280x720.png",
        "weekly-first-screen-853x480.png",
        "overview-nojs.png",
        "tooltip.png",
    ] {
        assert!(shots.join(name).is_file(), "screenshot {name}");
    }
    assert!(count >= 40, "{count} screenshots of page kinds");
    // axe-core ran: zero violations is a result, not a skipped check.
    assert!(
        out.contains("accessibility (axe-core"),
        "the check should say axe ran:\n{out}"
    );
}

/// The bookshop archive recorded with real tools for issue 34
/// (`tests/fixtures/real-archive/`, its README says how): k6, Locust and
/// JMeter rounds, py-spy profiles, an outage run (a failed run), and every
/// run on one day, the last two with a real N+1 regression and a ×0.3
/// improvement. Its weekly page lists the improvement, names the runs by
/// their time of day, and the failed run's pages pass axe-core in both
/// themes.
#[test]
fn the_recorded_bookshop_archive_works_in_a_browser() {
    if !ready() {
        return;
    }
    let archive = Path::new(MANIFEST_DIR).join("tests/fixtures/real-archive");
    if !archive.join("runs").is_dir() {
        let why = "tests/fixtures/real-archive is not in this checkout";
        assert!(!in_ci(), "CI is set but {why}");
        eprintln!("skipped: {why}");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let site = tmp.path().join("site");
    build(&archive, &site);
    let shots = screenshot_dir("real-archive");
    let (ok, out) = check(&site, Some(&shots), &["improvements", "same-day", "failed"]);
    println!("{out}");
    assert!(ok, "browser check failed:\n{out}");
    assert_screenshots(&shots, &out);
    // The week's improvement is the code's ×0.3 on author-stats, not the
    // environment-suspect run before it.
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(site.join("data/analysis.json")).unwrap()).unwrap();
    let improvements = json["weekly"]["improvements"].as_array().unwrap();
    assert!(
        improvements
            .iter()
            .any(|i| i["ratio"].as_f64().is_some_and(|r| r < 0.5) && i["runs"].as_u64() >= Some(1)),
        "{improvements:?}"
    );
    println!("screenshots in {}", shots.display());
}

#[test]
fn pages_with_colliding_and_hostile_names_work_in_a_browser() {
    if !ready() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    common::site_archives::showcase_archive(&archive);
    let site = tmp.path().join("site");
    build(&archive, &site);
    add_policy_page(&site);
    let (ok, out) = check(&site, None, &[]);
    println!("{out}");
    assert!(ok, "browser check failed:\n{out}");
}

/// Until a page of the site offers several alarm policies, a small page
/// exercises the generic switch of static/app.js (`<select
/// data-policy-switch>` showing `[data-policy]` elements): the browser
/// check chooses every option and checks what is shown, and, with
/// JavaScript off, that every policy's table is visible.
fn add_policy_page(site: &Path) {
    let section = |p: &str| {
        format!(
            r#"<section data-policy="{p}"><h2>Policy {p}</h2><table><thead><tr><th>Alarms</th></tr></thead><tbody><tr><td>{p}: 1</td></tr></tbody></table></section>"#
        )
    };
    let page = format!(
        r#"<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Policies</title>
<link rel="stylesheet" href="static/style.css"></head><body><main id="main"><h1>Policies</h1>
<label data-needs-js hidden>Policy <select data-policy-switch><option value="median">median</option><option value="robust">robust</option></select></label>
{}{}<p><a href="index.html">Overview</a></p></main><script src="static/app.js" defer></script></body></html>"#,
        section("median"),
        section("robust")
    );
    std::fs::write(site.join("policies.html"), page).unwrap();
    let index = std::fs::read_to_string(site.join("index.html")).unwrap();
    std::fs::write(
        site.join("index.html"),
        index.replace("</main>", r#"<a href="policies.html">policies</a></main>"#),
    )
    .unwrap();
}

/// The check itself can fail: a site with a missing stylesheet, a dead
/// link, a dead anchor, a script error, an orphan page, accessibility
/// violations (axe-core), a positive tabindex, a chart full of tab stops
/// without a way past it, a page wider than a phone, a table wider than
/// its box, chart text under 12 px, labels drawn over each other, a light
/// chart in the dark scheme, endpoints pushed off a phone's first screen,
/// scripts that keep no state in the URL, and a site without the failed
/// run and the same-day runs it was said to have is refused, and every
/// one of those is named.
#[test]
fn the_browser_check_catches_broken_pages() {
    if !ready() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    common::story_archive(&archive);
    let site = tmp.path().join("site");
    build(&archive, &site);
    std::fs::remove_file(site.join("static/style.css")).unwrap();
    let index = std::fs::read_to_string(site.join("index.html")).unwrap();
    let broken = index.replace(
        "</main>",
        r##"<a href="endpoints/nowhere.html">dead</a> <a href="#no-such-id">dead anchor</a>
<a href="https://example.com/">away</a><script>console.error("boom"); undefinedFunction();</script>
<img src="static/favicon.svg"><p style="color:#777;background:#888">hard to read</p>
<a href="index.html" tabindex="3">first, out of order</a><div style="width:700px">wider than a phone</div>
<svg class="chart"><title>a chart of links</title><a href="index.html"><circle r="5" cx="5" cy="5"/></a></svg>
<div class="scroll"><table style="min-width:2000px"><caption>too wide</caption><tr><td>x</td></tr></table></div>
<svg class="chart" viewBox="0 0 100 20" width="100" height="20"><title>a light chart</title><rect width="100" height="20" fill="#fafafa"/><text x="5" y="12" font-size="7">tiny</text><text x="6" y="12" font-size="7">tiny</text></svg></main>"##,
    )
    // Notes that push the endpoints off a phone's first screen.
    .replace(
        r#"<div class="table-tools""#,
        r#"<div style="height:900px">notes</div><div class="table-tools""#,
    );
    std::fs::write(site.join("index.html"), broken).unwrap();
    // Scripts that keep nothing in the URL.
    let app = site.join("static/app.js");
    let script = std::fs::read_to_string(&app).unwrap();
    std::fs::write(
        &app,
        script.replace(
            "function setQuery(update) {",
            "function setQuery(update) { return;",
        ),
    )
    .unwrap();
    std::fs::write(
        site.join("orphan.html"),
        "<!doctype html><title>o</title><p>alone",
    )
    .unwrap();
    let (ok, out) = check(&site, None, &["failed", "same-day"]);
    assert!(!ok, "a broken site passed:\n{out}");
    for expected in [
        "static/style.css",
        "endpoints/nowhere.html does not exist",
        "has no id \"no-such-id\"",
        "not a relative link",
        "console error: boom",
        "page error: undefinedFunction is not defined",
        "orphan.html: no page links to it",
        "axe image-alt",
        "axe color-contrast",
        "positive tabindex",
        "no \"skip the chart\" link comes before them",
        "at 390px the page scrolls sideways",
        "the table \"too wide\" is 2000px wide",
        "chart text is under 12 px",
        "chart labels overlap: \"tiny\" and \"tiny\"",
        "in the dark scheme a light chart: a rgb(250, 250, 250) panel",
        "the first endpoint row starts at",
        "sorting does not show in the URL",
        "the filter does not show in the URL",
        "a drag across the chart puts no range in the URL",
        "no run page shows a failed run",
        "runs of one day are not told apart",
    ] {
        assert!(
            out.contains(expected),
            "the check should report {expected:?}:\n{out}"
        );
    }
}
