//! `perfdash check` on runs that failed, and on the figures besides p99:
//! archives built from real k6 summaries (`tests/fixtures/k6-failing`,
//! written by k6 v1.1.0 against a loopback service; see its README) whose
//! latest run answered every request with 500, had every connection
//! refused, failed half its requests, raised its error rate from 0.1% to
//! 5%, or served 30% fewer requests at the same load. Each must fail the
//! gate with its reason in every format, and none may become an
//! improvement or join a baseline.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

const FIXTURES: &str = "tests/fixtures/k6-failing";
const WOBBLE: [f64; 5] = [0.99, 1.0, 1.01, 1.0, 1.02];

fn fixture(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(FIXTURES)
        .join(name);
    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
}

/// A real healthy k6 `handleSummary()` round with its p99, error rate and
/// request rate set.
fn healthy(p99: f64, error_rate: f64, rps: f64) -> Value {
    let mut doc = fixture("healthy.summary.json");
    let m = &mut doc["metrics"];
    for key in [
        "http_req_duration",
        "http_req_duration{expected_response:true}",
    ] {
        m[key]["values"]["p(99)"] = p99.into();
        m[key]["values"]["p(90)"] = (p99 * 0.6).into();
    }
    m["http_req_failed"]["values"]["rate"] = error_rate.into();
    m["http_reqs"]["values"]["rate"] = rps.into();
    doc
}

struct Archive {
    dir: tempfile::TempDir,
}

impl Archive {
    fn new() -> Archive {
        Archive {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn run_id(i: usize) -> String {
        let day = chrono::NaiveDate::from_ymd_opt(2026, 3, 2).unwrap()
            + chrono::Days::new((i / 3 * 7 + i % 3 * 2) as u64);
        format!("{day}T0300Z")
    }

    fn dir(&self, i: usize, endpoint: &str) -> PathBuf {
        let d = self
            .root()
            .join("runs")
            .join(Self::run_id(i))
            .join(endpoint);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// Five rounds of run `i` for `endpoint`, round `k` made by `round(k)`.
    fn rounds(&self, i: usize, endpoint: &str, round: impl Fn(usize) -> Value) {
        let d = self.dir(i, endpoint);
        for k in 0..5 {
            std::fs::write(
                d.join(format!("round-{}.json", k + 1)),
                serde_json::to_vec(&round(k)).unwrap(),
            )
            .unwrap();
        }
    }

    /// Run `i` of `endpoint` as a copy of a real fixture in every round.
    fn copies(&self, i: usize, endpoint: &str, name: &str) {
        let doc = fixture(name);
        self.rounds(i, endpoint, |_| doc.clone());
    }

    /// Healthy runs `from..to` of `endpoint` (0.1% errors, 300 req/s).
    fn quiet(&self, from: usize, to: usize, endpoint: &str) {
        for i in from..to {
            self.rounds(i, endpoint, |k| healthy(80.0 * WOBBLE[k], 0.001, 300.0));
        }
    }

    /// The same `[load]` in every run so far.
    fn same_load(&self) {
        for entry in std::fs::read_dir(self.root().join("runs")).unwrap() {
            std::fs::write(
                entry.unwrap().path().join("run.toml"),
                "[load]\nexecutor = \"constant-vus\"\nvus = 2\nduration = \"3s\"\n",
            )
            .unwrap();
        }
    }

    fn check(&self, args: &[&str]) -> (Option<i32>, String) {
        let out = Command::cargo_bin("perfdash")
            .unwrap()
            .arg("check")
            .args(args)
            .arg("--archive")
            .arg(self.root())
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8(out.stdout).unwrap())
    }

    fn analysis(&self) -> perfdash::analyse::Analysis {
        let loaded = perfdash::ingest::load_archive(self.root()).unwrap();
        perfdash::analyse::analyse(&loaded.archive, loaded.diagnostics)
    }
}

/// The latest run fails the gate (exit 1) in every format, and each
/// format says so with `needle`.
fn fails_everywhere(a: &Archive, status: &str, needle: &str) {
    let (code, text) = a.check(&["--latest"]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.starts_with("FAIL: "), "{text}");
    assert!(text.contains(status) && text.contains(needle), "{text}");
    let (code, json) = a.check(&["--latest", "--format", "json"]);
    assert_eq!(code, Some(1));
    let doc: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["outcome"], "regression");
    assert_eq!(doc["exit_code"], 1);
    let orders = &doc["endpoints"][0];
    assert_eq!(orders["status"], status, "{json}");
    assert!(
        orders["reason"].as_str().unwrap().contains(needle),
        "{json}"
    );
    let (code, md) = a.check(&["--latest", "--format", "markdown"]);
    assert_eq!(code, Some(1));
    assert!(
        md.starts_with("<!-- perfdash:check -->\n❌ **perfdash check**"),
        "{md}"
    );
    assert!(
        md.contains(&format!("| ❌ **{status}** |")) && md.contains(needle),
        "{md}"
    );
    let (code, xml) = a.check(&["--latest", "--format", "junit"]);
    assert_eq!(code, Some(1));
    assert!(xml.contains("failures=\"1\""), "{xml}");
    assert!(
        xml.contains("<failure type=") && xml.contains(needle),
        "{xml}"
    );
}

/// The failed run is in no baseline and is no improvement, and the runs
/// after it are judged against the healthy runs before it.
fn never_a_baseline(a: &Archive, failed_run: usize) {
    // A healthy run after it (same load), so that "in no baseline" is
    // checked on a run that has one.
    let next = failed_run + 1;
    a.quiet(next, next + 1, "orders");
    let load = a
        .root()
        .join("runs")
        .join(Archive::run_id(0))
        .join("run.toml");
    if load.exists() {
        let to = a.root().join("runs").join(Archive::run_id(next));
        std::fs::copy(&load, to.join("run.toml")).unwrap();
    }
    let analysis = a.analysis();
    let failed = Archive::run_id(failed_run);
    let after = analysis
        .endpoints
        .iter()
        .flat_map(|e| &e.points)
        .find(|p| p.run == Archive::run_id(next))
        .expect("the run after the failed one is judged");
    assert!(
        after.baseline_runs.len() >= 3,
        "the run after the failed one has a baseline: {:?}",
        after.baseline_runs
    );
    for e in &analysis.endpoints {
        for p in &e.points {
            assert!(
                !p.baseline_runs.iter().any(|r| **r == *failed),
                "{} {}",
                e.id,
                p.run
            );
            if p.run == failed {
                assert_ne!(p.verdict, perfdash::analyse::Verdict::Improvement);
                assert_ne!(p.verdict, perfdash::analyse::Verdict::Ok);
            }
        }
    }
}

/// Ten quiet runs, then run 10 from `fixture` in every round, then a
/// healthy run 11 (to see the baseline after it); checks run 10.
fn failed_run_of(name: &str) -> Archive {
    let a = Archive::new();
    a.quiet(0, 10, "orders");
    a.copies(10, "orders", name);
    a
}

#[test]
fn every_request_answered_500() {
    // No threshold on the sub-metric: k6 leaves
    // `http_req_duration{expected_response:true}` out and the overall
    // trend holds the 500s' own latencies (48 ms, faster than the 80 ms
    // of real work): by p99 alone an improvement.
    let a = failed_run_of("all-5xx.summary.json");
    fails_everywhere(&a, "failed", "error rate 100%");
    // `build` says so in its summary line too, not only "0 regressed".
    let site = tempfile::tempdir().unwrap();
    let built = Command::cargo_bin("perfdash")
        .unwrap()
        .args(["build", "--no-cache", "--archive"])
        .arg(a.root())
        .arg("--out")
        .arg(site.path().join("site"))
        .output()
        .unwrap();
    let said = String::from_utf8(built.stderr).unwrap();
    assert!(
        said.contains("0 regressed and 1 failed in the latest run"),
        "{said}"
    );
    a.quiet(11, 12, "orders");
    never_a_baseline(&a, 10);
}

#[test]
fn every_request_answered_500_with_a_threshold_on_the_sub_metric() {
    // With a threshold on it, k6 writes the sub-metric as zeros.
    for name in [
        "all-5xx-thresholds.summary.json",
        "all-5xx-thresholds.export.json",
    ] {
        let a = failed_run_of(name);
        fails_everywhere(&a, "failed", "rounds 1–5 (100% errors)");
        never_a_baseline(&a, 10);
    }
}

#[test]
fn every_connection_refused() {
    for name in [
        "refused.summary.json",
        "refused.export.json",
        "refused-thresholds.summary.json",
    ] {
        let a = failed_run_of(name);
        fails_everywhere(&a, "failed", "error rate 100%");
        a.quiet(11, 12, "orders");
        never_a_baseline(&a, 10);
    }
}

#[test]
fn half_the_requests_failed() {
    for name in ["half-failed.summary.json", "half-failed.export.json"] {
        let a = failed_run_of(name);
        fails_everywhere(&a, "failed", "error rate 50.04%");
        never_a_baseline(&a, 10);
    }
}

#[test]
fn the_error_rate_rose_from_a_tenth_of_a_percent_to_five() {
    let a = Archive::new();
    a.quiet(0, 10, "orders");
    a.rounds(10, "orders", |k| healthy(80.0 * WOBBLE[k], 0.05, 300.0));
    fails_everywhere(
        &a,
        "regression",
        "error rate 5% over its line 1.1% (baseline 0.1%)",
    );
    let (_, md) = a.check(&["--format", "markdown"]);
    assert!(
        md.contains("**5% (line 1.1%)**"),
        "the failed figure is marked: {md}"
    );
    never_a_baseline(&a, 10);
    // 0.1% → 0.9% stays under the 1% floor.
    let a = Archive::new();
    a.quiet(0, 10, "orders");
    a.rounds(10, "orders", |k| healthy(80.0 * WOBBLE[k], 0.009, 300.0));
    assert_eq!(a.check(&[]).0, Some(0));
}

#[test]
fn throughput_fell_thirty_percent_at_the_same_load() {
    let a = Archive::new();
    a.quiet(0, 10, "orders");
    a.rounds(10, "orders", |k| healthy(80.0 * WOBBLE[k], 0.001, 210.0));
    // Without a recorded load profile throughput is shown, not judged: a
    // lower request rate may be a lighter test.
    let (code, text) = a.check(&[]);
    assert_eq!(code, Some(0), "{text}");
    a.same_load();
    fails_everywhere(
        &a,
        "regression",
        "throughput 210.0 req/s under its line 255.0 req/s (baseline 300.0 req/s, ×0.70)",
    );
    never_a_baseline(&a, 10);
}

#[test]
fn one_round_of_five_cannot_be_vouched_for() {
    let a = Archive::new();
    a.quiet(0, 10, "orders");
    let d = a.dir(10, "orders");
    std::fs::write(
        d.join("round-1.json"),
        serde_json::to_vec(&healthy(240.0, 0.001, 300.0)).unwrap(),
    )
    .unwrap();
    let (code, text) = a.check(&["--latest"]);
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.starts_with(
            "ERROR: run 2026-03-25T0300Z has 1 of 5 rounds of orders: the gate cannot vouch for it"
        ),
        "{text}"
    );
    assert!(text.contains("--allow-insufficient"), "{text}");
    let (code, json) = a.check(&["--format", "json"]);
    assert_eq!(code, Some(2));
    let doc: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["outcome"], "cannot-vouch");
    assert_eq!(doc["cannot_vouch"][0]["kind"], "too-few-rounds");
    assert_eq!(doc["cannot_vouch"][0]["usable_rounds"], 1);
    let (code, xml) = a.check(&["--format", "junit"]);
    assert_eq!(code, Some(2));
    assert!(
        xml.contains(
            "<error type=\"too-few-rounds\" message=\"cannot vouch: 1 of 5 rounds of orders\""
        ),
        "{xml}"
    );
    // Asked to, the gate judges what it can: nothing else regressed.
    let (code, text) = a.check(&["--allow-insufficient"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("insufficient") && text.contains("1 of 5 expected rounds"),
        "{text}"
    );
}

#[test]
fn a_history_of_failed_runs_says_why_there_is_no_baseline() {
    let a = Archive::new();
    for i in 0..6 {
        a.copies(i, "orders", "refused-thresholds.summary.json");
    }
    a.quiet(6, 7, "orders");
    // Failed runs are no baseline: the first healthy run has nothing to be
    // judged against, and the gate cannot vouch for it (issue 32) …
    let (code, text) = a.check(&[]);
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("no baseline: 0 of 3 accepted runs before it; earlier runs left out of the baseline: 6 failed"),
        "{text}"
    );
    // … unless first runs are let through.
    let (code, text) = a.check(&["--allow-no-baseline"]);
    assert_eq!(code, Some(0), "{text}");
}

/// Twelve endpoints; the latest run has nine of them ×1.2.
fn nine_of_twelve() -> Archive {
    let a = Archive::new();
    let ids: Vec<String> = (1..=12).map(|e| format!("e{e:02}")).collect();
    for id in &ids {
        a.quiet(0, 10, id);
    }
    for (n, id) in ids.iter().enumerate() {
        let f = if n < 9 { 1.2 } else { 1.0 };
        a.rounds(10, id, |k| healthy(80.0 * f * WOBBLE[k], 0.001, 300.0));
    }
    a
}

#[test]
fn nine_of_twelve_endpoints_rising_together_is_environment_suspect() {
    let a = nine_of_twelve();
    let (code, text) = a.check(&[]);
    assert_eq!(code, Some(1), "the default still fails: {text}");
    assert!(
        text.contains("environment suspect: 9 of 12 endpoints slower together (median ×1.20)"),
        "{text}"
    );
    let (_, json) = a.check(&["--format", "json"]);
    let doc: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["environment_suspect"]["moved"], 9);
    assert_eq!(doc["environment_suspect"]["direction"], "slower");
    let (_, md) = a.check(&["--format", "markdown"]);
    assert!(md.contains("environment suspect: 9 of 12"), "{md}");
    let (_, xml) = a.check(&["--format", "junit"]);
    assert!(
        xml.contains("<property name=\"environment_suspect\""),
        "{xml}"
    );
    // Marked on the overview, the run page and the weekly page too.
    let out = tempfile::tempdir().unwrap();
    let site = out.path().join("site");
    Command::cargo_bin("perfdash")
        .unwrap()
        .args(["build", "--quiet", "--archive"])
        .arg(a.root())
        .arg("--out")
        .arg(&site)
        .output()
        .unwrap();
    let page = |p: &Path| std::fs::read_to_string(p).unwrap();
    assert!(
        page(&site.join("index.html")).contains("class=\"badge env-suspect\""),
        "overview"
    );
    assert!(
        page(&site.join("weekly.html")).contains("class=\"badge env-suspect\""),
        "weekly page"
    );
    let marked: Vec<String> = std::fs::read_dir(site.join("runs"))
        .unwrap()
        .map(|e| page(&e.unwrap().path()))
        .filter(|html| html.contains("env-suspect-note"))
        .collect();
    assert_eq!(marked.len(), 1, "one run page carries the note");
    assert!(marked[0].contains(&Archive::run_id(10)), "the latest run's");
    // The archive may choose not to fail on it.
    std::fs::write(
        a.root().join("perfdash.toml"),
        "[alarms]\nfail_on_environment_suspect = false\n",
    )
    .unwrap();
    let (code, text) = a.check(&[]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("9 environment-suspect"), "{text}");
    // Its alarms are inferred noise until they persist.
    let analysis = a.analysis();
    assert!(analysis.runs[10].environment_suspect.is_some());
    assert!(
        analysis
            .alarms
            .alarms
            .iter()
            .filter(|x| x.run == Archive::run_id(10))
            .all(|x| {
                x.environment_suspect
                    && x.inferred_label == Some(perfdash::analyse::alarms::InferredLabel::Noise)
            })
    );
}
