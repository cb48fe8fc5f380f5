//! The real bookshop archive (`tests/fixtures/real-archive/`), recorded by
//! `tests/fixtures/real-archive-src/record.sh` with k6, Locust, JMeter and
//! py-spy against a small Python service: six v1 baseline runs over three
//! commits, one run while the service was down, two runs of v2 (an N+1 query
//! on book-reviews, a faster author-stats). How it was recorded and what
//! perfdash said about it when it was recorded: the README.md beside the
//! recording script.
//!
//! The first two tests check only facts of the recording that no change to
//! the analysis should move: the site builds, and it holds the runs and
//! endpoints that were recorded. Then what issue 33 asked of this archive:
//! the N+1 of v2 on book-reviews is attributed, on the site and by
//! `check`, as a code regression naming `attach_reviewer_stats`, and no
//! run of unchanged code is; the weekly page lists each endpoint with an
//! alarm once. Which noise runs of the v1 baselines are alarms at all is
//! the default policy's business (issue 33, item 1), so these tests never
//! name them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use assert_cmd::Command;
use scraper::{ElementRef, Html, Selector};
use serde_json::Value;

/// Every run of the archive, oldest first.
const RUNS: [&str; 9] = [
    "2026-12-03T1815Z",
    "2026-12-03T1821Z",
    "2026-12-03T1827Z",
    "2026-12-03T1833Z",
    "2026-12-03T1839Z",
    "2026-12-03T1845Z",
    "2026-12-03T1851Z",
    "2026-12-03T1858Z",
    "2026-12-03T1904Z",
];
/// The run recorded while the service was stopped: every request refused.
const OUTAGE_RUN: &str = RUNS[6];
/// The two runs of v2 (one commit): the N+1 query and the faster author stats.
const V2_RUNS: [&str; 2] = [RUNS[7], RUNS[8]];
/// The endpoints, each an endpoint folder in every run.
const ENDPOINTS: [&str; 5] = [
    "author-stats",
    "book-detail",
    "book-reviews",
    "book-search",
    "create-order",
];

fn archive() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/real-archive")
}

/// A `run.toml` value as written (`key = "value"`).
fn run_toml_value(run: &str, key: &str) -> Option<String> {
    let text = std::fs::read_to_string(archive().join("runs").join(run).join("run.toml")).unwrap();
    let table: toml::Table = toml::from_str(&text).unwrap();
    table.get(key).and_then(|v| v.as_str()).map(str::to_string)
}

#[test]
fn the_archive_holds_the_recorded_runs_outage_included() {
    let found: Vec<String> = {
        let mut names: Vec<String> = std::fs::read_dir(archive().join("runs"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    };
    assert_eq!(found, RUNS, "the archive's run folders");
    for run in RUNS {
        let dir = archive().join("runs").join(run);
        let mut endpoints: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap())
            .filter(|e| e.file_type().unwrap().is_dir())
            .map(|e| e.file_name().into_string().unwrap())
            .collect();
        endpoints.sort();
        assert_eq!(endpoints, ENDPOINTS, "{run}");
        assert_eq!(
            run_toml_value(run, "branch").as_deref(),
            Some("main"),
            "{run}"
        );
        for endpoint in ENDPOINTS {
            let rounds = std::fs::read_dir(dir.join(endpoint))
                .unwrap()
                .filter(|e| {
                    let name = e.as_ref().unwrap().file_name();
                    let name = name.to_string_lossy();
                    name.starts_with("round-")
                        && (name.ends_with("_stats.csv")
                            || name.ends_with(".ndjson.gz")
                            || name.ends_with(".jtl.gz")
                            || (name.ends_with(".json") && endpoint != "book-reviews"))
                })
                .count();
            assert_eq!(rounds, 5, "{run}/{endpoint}: five rounds");
        }
    }
    // Six baselines over three commits; the outage on the last of them; v2
    // one commit that no baseline has.
    let commit = |run: &str| run_toml_value(run, "commit").unwrap();
    let baseline: BTreeSet<String> = RUNS[..6].iter().map(|r| commit(r)).collect();
    assert_eq!(baseline.len(), 3, "{baseline:?}");
    assert_eq!(commit(OUTAGE_RUN), commit(RUNS[5]));
    assert_eq!(commit(V2_RUNS[0]), commit(V2_RUNS[1]));
    assert!(!baseline.contains(&commit(V2_RUNS[0])));
    assert!(
        run_toml_value(OUTAGE_RUN, "notes")
            .unwrap()
            .starts_with("outage:")
    );
}

/// The build's clock decides which run times are trusted: fixed at the day
/// after the recording, so that a machine's clock cannot matter.
const NOW: &str = "2026-12-04T00:00:00Z";

/// The archive's site, built once for every test of this file.
struct Built {
    /// The temporary folder the site is in, kept for the tests' life.
    _tmp: tempfile::TempDir,
    site: PathBuf,
    stderr: String,
    analysis: Value,
}

fn built() -> &'static Built {
    static BUILT: OnceLock<Built> = OnceLock::new();
    BUILT.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let site = tmp.path().join("site");
        let output = Command::cargo_bin("perfdash")
            .unwrap()
            .env("PERFDASH_NOW", NOW)
            .args(["build", "--archive"])
            .arg(archive())
            .arg("--out")
            .arg(&site)
            .timeout(std::time::Duration::from_secs(120))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        // 0, or 1 when the build warns (the outage's rounds measured no latency).
        assert!(
            matches!(output.status.code(), Some(0 | 1)),
            "{:?}: {stderr}",
            output.status
        );
        let analysis = serde_json::from_slice(
            &std::fs::read(site.join("data/analysis.json"))
                .unwrap_or_else(|e| panic!("{e}: {stderr}")),
        )
        .unwrap();
        Built {
            _tmp: tmp,
            site,
            stderr,
            analysis,
        }
    })
}

#[test]
fn the_site_builds_with_every_recorded_endpoint_and_run() {
    let Built {
        site,
        stderr,
        analysis,
        ..
    } = built();
    assert!(site.join("index.html").is_file(), "{stderr}");
    let endpoints: Vec<&str> = analysis["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    assert_eq!(endpoints, ENDPOINTS);
    let runs: BTreeSet<&str> = analysis["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    // Every run the service answered is on the site, and nothing else is;
    // the outage run's place is for its own tests to decide.
    let answered: BTreeSet<&str> = RUNS.iter().copied().filter(|r| *r != OUTAGE_RUN).collect();
    assert!(runs.is_superset(&answered), "{runs:?}");
    assert!(runs.iter().all(|r| RUNS.contains(r)), "{runs:?}");
    for endpoint in analysis["endpoints"].as_array().unwrap() {
        let points: BTreeSet<&str> = endpoint["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["run"].as_str().unwrap())
            .collect();
        assert!(
            points.is_superset(&answered),
            "{}: {points:?}",
            endpoint["id"]
        );
    }
    for run in answered {
        let slug = run.to_ascii_lowercase();
        assert!(site.join(format!("runs/{slug}.html")).is_file(), "{run}");
    }
    for endpoint in ENDPOINTS {
        assert!(
            site.join(format!("endpoints/{endpoint}.html")).is_file(),
            "{endpoint}"
        );
    }
}

/// The endpoint of v2's N+1 query, and the function it added.
const N_PLUS_ONE: &str = "book-reviews";
const N_PLUS_ONE_FRAME: &str = "attach_reviewer_stats (bookshop.py)";

fn endpoint<'a>(analysis: &'a Value, id: &str) -> &'a Value {
    analysis["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == id)
        .unwrap_or_else(|| panic!("{id}"))
}

/// Every attributed profile of the site: (endpoint, run) → attribution.
fn attributions(analysis: &Value) -> BTreeMap<(String, String), Value> {
    let mut found = BTreeMap::new();
    for e in analysis["endpoints"].as_array().unwrap() {
        for point in e["runs"].as_array().unwrap() {
            for p in point["profiles"].as_array().into_iter().flatten() {
                if !p["attribution"].is_null() {
                    let key = (
                        e["id"].as_str().unwrap().to_string(),
                        point["run"].as_str().unwrap().to_string(),
                    );
                    found.insert(key, p["attribution"].clone());
                }
            }
        }
    }
    found
}

/// The real N+1 (issue 33, item 4): both v2 runs of book-reviews are code
/// regressions naming `attach_reviewer_stats`, the frame that grew from
/// nothing, against a v1 baseline profile; their flame pages and the weekly
/// page say so. And nothing else in the archive reads as a code regression:
/// the other attributed runs (noise on a busy machine, on code that did not
/// change) are never blamed on code.
#[test]
fn the_n_plus_one_is_a_code_regression_naming_the_function_it_added() {
    let Built { site, analysis, .. } = built();
    let reviews = endpoint(analysis, N_PLUS_ONE);
    let v1_commits: BTreeSet<String> = RUNS[..6]
        .iter()
        .map(|r| run_toml_value(r, "commit").unwrap())
        .collect();
    for run in V2_RUNS {
        let point = reviews["runs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["run"] == run)
            .unwrap();
        assert_eq!(point["verdict"], "regression", "{run}");
        let profile = &point["profiles"][0];
        assert_eq!(profile["kind"], "cpu", "{run}");
        let baseline = profile["baseline"]["run"].as_str().unwrap();
        assert!(
            v1_commits.contains(&run_toml_value(baseline, "commit").unwrap()),
            "{run}: compared with {baseline}, a v1 run"
        );
        let a = &profile["attribution"];
        assert_eq!(a["kind"], "code-regression", "{run}: {a}");
        let summary = a["summary"].as_str().unwrap();
        assert!(
            summary.starts_with(&format!("code regression: {N_PLUS_ONE_FRAME} +")),
            "{run}: {summary}"
        );
        let top = &a["top_frames"][0];
        assert_eq!(top["frame"], N_PLUS_ONE_FRAME, "{run}: {a}");
        assert_eq!(top["category"], "application", "{run}: {a}");
        // 0 % of v1's busy samples, about 82 % of v2's (README).
        assert!(top["total_delta_pts"].as_f64().unwrap() > 50.0, "{top}");
        assert_eq!(a["more_work"], true, "{run}: {a}");
        let grown = &profile["grown_frames"][0];
        assert_eq!(grown["frame"], N_PLUS_ONE_FRAME, "{run}");
        assert_eq!(grown["total_before_pct"], 0.0, "{run}: {grown}");

        // The flame page of the run says it.
        let page = std::fs::read_to_string(site.join(format!(
            "flame/{N_PLUS_ONE}/{}.cpu.html",
            run.to_ascii_lowercase()
        )))
        .unwrap();
        assert!(
            page.contains(&format!("code regression: {N_PLUS_ONE_FRAME} +")),
            "{run}: the flame page"
        );
    }

    let code: Vec<(String, String)> = attributions(analysis)
        .into_iter()
        .filter(|(_, a)| a["kind"] == "code-regression")
        .map(|(k, _)| k)
        .collect();
    let expected: Vec<(String, String)> = V2_RUNS
        .iter()
        .map(|r| (N_PLUS_ONE.to_string(), r.to_string()))
        .collect();
    assert_eq!(
        code, expected,
        "the only code regressions are v2's on {N_PLUS_ONE}"
    );

    // The weekly page's open problem says it too.
    let weekly = std::fs::read_to_string(site.join("weekly.html")).unwrap();
    let doc = Html::parse_document(&weekly);
    let problem = doc
        .select(&sel("#decide li.problem"))
        .find(|li| {
            li.select(&sel("a.p-endpoint")).next().unwrap().attr("href")
                == Some(&format!("endpoints/{N_PLUS_ONE}.html"))
        })
        .expect("book-reviews is an open problem");
    let attribution = text(problem.select(&sel(".attribution")).next().unwrap());
    assert!(
        attribution.starts_with(&format!("code regression: {N_PLUS_ONE_FRAME} +")),
        "{attribution}"
    );
}

fn check(args: &[&str]) -> (i32, String) {
    let out = Command::cargo_bin("perfdash")
        .unwrap()
        .env("PERFDASH_NOW", NOW)
        .args(["check", "--archive"])
        .arg(archive())
        .args(args)
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
    )
}

/// `perfdash check` on each v2 run says why book-reviews is slower, beside
/// the regression, in text, JSON, the pull-request comment and JUnit, with
/// the attribution the site gives.
#[test]
fn check_names_the_function_beside_the_regression_in_every_format() {
    let site = &built().analysis;
    let line_start = format!("cpu profile: code regression: {N_PLUS_ONE_FRAME} +");
    for run in V2_RUNS {
        let (code, text) = check(&["--run", run, "--no-cache"]);
        assert_eq!(code, 1, "{text}");
        let lines: Vec<&str> = text.lines().collect();
        let at = lines
            .iter()
            .position(|l| l.trim_start().starts_with("regression") && l.contains(N_PLUS_ONE))
            .unwrap_or_else(|| panic!("{run}: {text}"));
        // The line it was judged by, as its figures line draws it: the
        // noise line, capped at ×2 (it read "line ×1.15" beside "line
        // 50.5 ms" on a 25.3 ms baseline).
        assert!(lines[at].contains(", line ×2.00)"), "{}", lines[at]);
        // The endpoint's own lines: indented, up to the next endpoint.
        let own: Vec<&str> = lines[at + 1..]
            .iter()
            .take_while(|l| l.starts_with("    "))
            .map(|l| l.trim())
            .collect();
        assert!(
            own.iter().any(|l| l.starts_with(&line_start)),
            "{run}: {text}"
        );
    }

    let run = V2_RUNS[1];
    let (_, json) = check(&["--run", run, "--no-cache", "--format", "json"]);
    let doc: Value = serde_json::from_str(&json).unwrap();
    let reviews = doc["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["endpoint"] == N_PLUS_ONE)
        .unwrap();
    let profile = &reviews["profiles"][0];
    assert!(
        profile["line"]
            .as_str()
            .unwrap()
            .starts_with(&line_start["cpu profile: ".len()..]),
        "{profile}"
    );
    // The gate compares exactly as the site does.
    let on_site = endpoint(site, N_PLUS_ONE)["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["run"] == run)
        .unwrap()["profiles"][0]["attribution"]
        .clone();
    assert_eq!(profile["attribution"], on_site);

    let (_, markdown) = check(&["--run", run, "--no-cache", "--format", "markdown"]);
    assert!(
        markdown.contains(
            "- **GET /books/{id}/reviews**, cpu profile: code regression: attach\\_reviewer\\_stats (bookshop.py) +"
        ),
        "{markdown}"
    );
    let (_, junit) = check(&["--run", run, "--no-cache", "--format", "junit"]);
    let case = &junit[junit
        .find(&format!("name=\"{N_PLUS_ONE}\""))
        .unwrap_or_else(|| panic!("{junit}"))..];
    let case = &case[..case.find("</testcase>").unwrap()];
    assert!(case.contains("<failure type=\"regression\""), "{case}");
    assert!(case.contains(&line_start), "{case}");
}

fn sel(s: &str) -> Selector {
    Selector::parse(s).unwrap()
}

fn text(e: ElementRef) -> String {
    e.text()
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The endpoint id an `endpoints/<id>.html` link names (this archive's ids
/// are their own file names).
fn endpoint_of(href: &str) -> &str {
    href.strip_prefix("endpoints/")
        .and_then(|h| h.strip_suffix(".html"))
        .unwrap_or_else(|| panic!("{href}"))
}

/// One alarm per problem (issue 33, item 5), on the real archive: the
/// weekly page lists each endpoint with new alarms once, in one row whose
/// cells show its open problem and beneath it its other suspect commit
/// ranges, every group of `analysis.json` among them; book-reviews' row
/// shows the N+1, dated at the v2 commit. The decision section names each
/// endpoint once too, and the false-positive table starts with the week of
/// the first run.
#[test]
fn the_weekly_page_lists_each_regressed_endpoint_once() {
    let Built { site, analysis, .. } = built();
    let weekly = &analysis["weekly"];
    let policy = weekly["policy"].as_str().unwrap();
    let groups = weekly["new_alarm_groups"].as_array().unwrap();
    assert!(!groups.is_empty());
    let page = std::fs::read_to_string(site.join("weekly.html")).unwrap();
    let doc = Html::parse_document(&page);

    let mut listed: Vec<&str> = Vec::new();
    let mut problems = 0;
    let mut reviews_row = None;
    for tr in doc.select(&sel("table.new-alarms tbody tr")) {
        let link = tr.select(&sel("th a")).next().unwrap();
        let id = endpoint_of(link.attr("href").unwrap());
        listed.push(id);
        // The row's problem, and one line beneath it per other range.
        problems += 1 + tr.select(&sel("small.also")).count();
        if id == N_PLUS_ONE {
            reviews_row = Some(tr);
        }
    }
    let unique: BTreeSet<&str> = listed.iter().copied().collect();
    assert_eq!(unique.len(), listed.len(), "each endpoint once: {listed:?}");
    let grouped: BTreeSet<&str> = groups
        .iter()
        .map(|g| g["endpoint"].as_str().unwrap())
        .collect();
    assert_eq!(unique, grouped, "every endpoint with a new alarm is listed");
    assert_eq!(problems, groups.len(), "every group is on its row");
    let headline = text(doc.select(&sel("h2#new")).next().unwrap());
    assert_eq!(headline, format!("New alarms this week: {}", groups.len()));

    // book-reviews: its row shows the open problem, the N+1, whose suspect
    // range ends at the v2 commit and starts at the last v1 commit.
    let row = reviews_row.expect("book-reviews has new alarms");
    let cells: Vec<ElementRef> = row.select(&sel("td")).collect();
    assert_eq!(
        text(cells[0].select(&sel("a")).next().unwrap()),
        V2_RUNS[0],
        "{}",
        row.html()
    );
    assert!(
        row.select(&sel("th a.see")).next().is_some(),
        "the row shows the open problem: {}",
        row.html()
    );
    let suspect = cells[0].select(&sel(".suspect")).next().unwrap();
    let commits: Vec<String> = suspect.select(&sel("code")).map(text).collect();
    let short = |run: &str| run_toml_value(run, "commit").unwrap()[..7].to_string();
    assert_eq!(
        commits,
        [short(RUNS[5]), short(V2_RUNS[0])],
        "{}",
        row.html()
    );
    assert_eq!(
        text(cells[2].select(&sel(".state")).next().unwrap()),
        "candidate"
    );

    // Needs a decision: each open problem's endpoint once.
    let decide: Vec<&str> = doc
        .select(&sel("#decide a.p-endpoint"))
        .map(|a| endpoint_of(a.attr("href").unwrap()))
        .collect();
    let decide_unique: BTreeSet<&str> = decide.iter().copied().collect();
    assert_eq!(decide_unique.len(), decide.len(), "{decide:?}");
    assert!(decide_unique.contains(N_PLUS_ONE), "{decide:?}");

    // Other policies only in the back-test; no week before the first run.
    let before_backtest = &page[..page.find("id=\"policies\"").unwrap()];
    for other in ["naive", "median", "persistent", "robust", "changepoint"] {
        if other != policy {
            assert!(
                !before_backtest.contains(&format!(">{other}<")),
                "{other} outside the back-test"
            );
        }
    }
    let weeks: Vec<String> = doc
        .select(&sel("table.fp-weeks tbody th"))
        .map(text)
        .collect();
    assert_eq!(weeks, ["2026-W49"], "every run is in 2026-W49");
}
