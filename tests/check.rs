//! `perfdash check` and `perfdash triage` end to end, on small archives
//! written into temporary folders.

use std::path::{Path, PathBuf};

use assert_cmd::Command;

const WOBBLE: [f64; 5] = [0.99, 1.0, 1.01, 1.0, 1.02];

/// A k6 `handleSummary()` document with the given p99.
fn summary(p99: f64) -> String {
    format!(
        r#"{{"metrics":{{"http_req_duration":{{"type":"trend","contains":"time","values":{{"avg":{a},"med":{m},"p(90)":{n},"p(95)":{f},"p(99)":{p99},"max":{x}}}}}}}}}"#,
        a = p99 * 0.5,
        m = p99 * 0.45,
        n = p99 * 0.8,
        f = p99 * 0.9,
        x = p99 * 1.3
    )
}

struct TestArchive {
    dir: tempfile::TempDir,
}

impl TestArchive {
    fn new() -> TestArchive {
        TestArchive {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn run_id(i: usize) -> String {
        // Three runs a week: Monday, Wednesday, Friday from 2026-01-05.
        let day = chrono::NaiveDate::from_ymd_opt(2026, 1, 5).unwrap()
            + chrono::Days::new((i / 3 * 7 + i % 3 * 2) as u64);
        format!("{day}T0300Z")
    }

    /// Writes run `i` with one level per endpoint (rounds wobble ±2%).
    fn run(&self, i: usize, endpoints: &[(&str, f64)]) -> PathBuf {
        let dir = self.root().join("runs").join(Self::run_id(i));
        for (endpoint, level) in endpoints {
            let e = dir.join(endpoint);
            std::fs::create_dir_all(&e).unwrap();
            for (k, w) in WOBBLE.iter().enumerate() {
                std::fs::write(e.join(format!("round-{}.json", k + 1)), summary(level * w))
                    .unwrap();
            }
        }
        dir
    }

    fn runs(&self, from: usize, to: usize, endpoints: &[(&str, f64)]) {
        for i in from..to {
            self.run(i, endpoints);
        }
    }

    fn label(&self, file: &str, text: &str) {
        let dir = self.root().join("triage");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(file), text).unwrap();
    }

    fn cmd(&self, args: &[&str]) -> assert_cmd::assert::Assert {
        Command::cargo_bin("perfdash")
            .unwrap()
            .args(args)
            .arg("--archive")
            .arg(self.root())
            .assert()
    }
}

fn stdout(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8(a.get_output().stdout.clone()).unwrap()
}

fn stderr(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8(a.get_output().stderr.clone()).unwrap()
}

const ODD: &str = "search&filter<v2>";

/// Twelve quiet runs of two endpoints (one with a name that needs escaping).
fn quiet() -> TestArchive {
    let a = TestArchive::new();
    a.runs(0, 12, &[("orders", 100.0), (ODD, 50.0)]);
    a
}

#[test]
fn quiet_history_passes() {
    let a = quiet();
    let out = a.cmd(&["check"]).code(0);
    let text = stdout(&out);
    assert!(
        text.starts_with("PASS: no regression in run 2026-01-30T0300Z (policy median)"),
        "{text}"
    );
    assert!(text.contains("2 endpoints: 2 ok"), "{text}");
}

#[test]
fn a_regressed_latest_run_fails_in_every_format() {
    let a = quiet();
    a.run(12, &[("orders", 100.0), (ODD, 80.0)]);
    let text = stdout(&a.cmd(&["check", "--latest"]).code(1));
    assert!(
        text.starts_with("FAIL: 1 endpoint regressed in run 2026-02-02T0300Z (policy median)"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "regression       {ODD}  median p99 80.0 ms vs baseline 50.0 ms (×1.60, line ×1.15)"
        )),
        "{text}"
    );
    assert!(
        !text.contains("orders"),
        "ok endpoints are left out of the short summary: {text}"
    );

    let json: serde_json::Value =
        serde_json::from_str(&stdout(&a.cmd(&["check", "--format", "json"]).code(1))).unwrap();
    assert_eq!(json["outcome"], "regression");
    assert_eq!(json["exit_code"], 1);
    assert_eq!(json["policy"], "median");
    let odd = json["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["endpoint"] == ODD)
        .unwrap();
    assert_eq!(odd["status"], "regression");
    assert_eq!(odd["median_p99_ms"], 80.0);
    assert_eq!(odd["alarm_state"], "candidate");

    let md = stdout(&a.cmd(&["check", "--format", "markdown"]).code(1));
    assert!(
        md.starts_with("<!-- perfdash:check -->\n❌ **perfdash check**: 1 endpoint regressed"),
        "{md}"
    );
    assert!(
        md.contains("| search\\&filter\\<v2\\> | **80.0 ms (line 57.5 ms)** | 50.0 ms | ×1.60 |"),
        "{md}"
    );

    let xml = stdout(&a.cmd(&["check", "--format", "junit"]).code(1));
    assert!(
        xml.contains(
            r#"<testsuites name="perfdash check: FAIL: 1 endpoint regressed in run 2026-02-02T0300Z (policy median)" tests="2" failures="1" errors="0" skipped="0">"#
        ),
        "{xml}"
    );
    assert!(
        xml.contains(r#"name="search&amp;filter&lt;v2&gt;""#),
        "{xml}"
    );
    assert!(
        !xml.contains(ODD),
        "the raw name never reaches the XML: {xml}"
    );
    assert_eq!(xml.matches("<testcase ").count(), 2);
    assert_eq!(xml.matches("<failure ").count(), 1);
}

#[test]
fn an_earlier_run_can_be_checked_by_id() {
    let a = quiet();
    a.run(12, &[("orders", 100.0), (ODD, 80.0)]);
    a.cmd(&["check", "--run", &TestArchive::run_id(11)]).code(0);
    a.cmd(&["check", "--run", &TestArchive::run_id(12)]).code(1);
}

#[test]
fn policies_disagree_about_a_fresh_regression() {
    let a = quiet();
    a.run(12, &[("orders", 130.0), (ODD, 50.0)]);
    // Not yet confirmed: persistent waits, median fails.
    let text = stdout(&a.cmd(&["check", "--policy", "persistent"]).code(0));
    assert!(
        text.contains("pending") && text.contains("not yet confirmed"),
        "{text}"
    );
    a.cmd(&["check", "--policy", "median"]).code(1);
    // Two of the next three over: confirmed.
    a.runs(13, 15, &[("orders", 130.0), (ODD, 50.0)]);
    let json: serde_json::Value = serde_json::from_str(&stdout(
        &a.cmd(&["check", "--policy", "persistent", "--format", "json"])
            .code(1),
    ))
    .unwrap();
    let orders = json["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["endpoint"] == "orders")
        .unwrap();
    assert_eq!(orders["alarm_state"], "confirmed");
    assert_eq!(orders["alarm_run"], TestArchive::run_id(12));
}

#[test]
fn the_archive_can_choose_its_policy() {
    let a = quiet();
    a.run(12, &[("orders", 130.0), (ODD, 50.0)]);
    a.cmd(&["check"]).code(1);
    std::fs::write(
        a.root().join("perfdash.toml"),
        "[alarms]\npolicy = \"persistent\"\n",
    )
    .unwrap();
    // The archive's policy waits for confirmation; --policy still overrides it.
    let text = stdout(&a.cmd(&["check"]).code(0));
    assert!(text.contains("(policy persistent)"), "{text}");
    a.cmd(&["check", "--policy", "median"]).code(1);
    // The weekly review and triage follow it too.
    let untriaged = stdout(&a.cmd(&["triage"]).code(0));
    assert!(untriaged.starts_with("0 untriaged alarm(s)"), "{untriaged}");
    // A name that is not a policy is an error naming the file.
    std::fs::write(
        a.root().join("perfdash.toml"),
        "[alarms]\npolicy = \"Median\"\n",
    )
    .unwrap();
    let err = stderr(&a.cmd(&["check"]).code(2));
    assert!(
        err.contains("perfdash.toml") && err.contains("changepoint"),
        "{err}"
    );
}

#[test]
fn a_gc_round_in_front_fails_only_the_naive_policy() {
    let a = quiet();
    let dir = a.run(12, &[("orders", 100.0), (ODD, 50.0)]);
    std::fs::write(dir.join("orders/round-1.json"), summary(210.0)).unwrap();
    a.cmd(&["check"]).code(0);
    a.cmd(&["check", "--policy", "robust"]).code(0);
    let text = stdout(&a.cmd(&["check", "--policy", "naive"]).code(1));
    assert!(
        text.contains("regression") && text.contains("orders"),
        "{text}"
    );
}

#[test]
fn triaged_alarms_do_not_fail_the_gate() {
    let a = quiet();
    let run = TestArchive::run_id(12);
    a.run(12, &[("orders", 130.0), (ODD, 50.0)]);
    a.label(
        "x.toml",
        &format!("run = \"{run}\"\nendpoint = \"orders\"\nlabel = \"noise\"\nauthor = \"sam\"\ndate = 2026-02-01\n"),
    );
    let text = stdout(&a.cmd(&["check"]).code(0));
    assert!(
        text.contains("triaged-noise") && text.contains("triaged as noise"),
        "{text}"
    );
}

#[test]
fn bad_input_and_usage_exit_2() {
    let a = quiet();
    let dir = a.run(12, &[("orders", 100.0), (ODD, 50.0)]);
    std::fs::write(dir.join("orders/round-5.json"), "{ not json").unwrap();
    let out = a.cmd(&["check"]).code(2);
    let text = stdout(&out);
    assert!(
        text.starts_with("ERROR: run 2026-02-02T0300Z has 1 unreadable input"),
        "{text}"
    );
    assert!(text.contains("round-5.json"), "{text}");
    let xml = stdout(&a.cmd(&["check", "--format", "junit"]).code(2));
    assert!(
        xml.contains("errors=\"2\"")
            && xml.contains("<error type=\"bad-input\"")
            && xml.contains("<error type=\"too-few-rounds\""),
        "{xml}"
    );

    // A file perfdash does not read is no reason to distrust the run.
    let a = quiet();
    let dir = a.run(12, &[("orders", 100.0), (ODD, 50.0)]);
    std::fs::write(dir.join("orders/notes.txt"), "rerun after deploy").unwrap();
    let text = stdout(&a.cmd(&["check"]).code(0));
    assert!(
        text.contains("1 file(s) in this run are not read"),
        "{text}"
    );

    let err = stderr(&quiet().cmd(&["check", "--run", "2030-01-01"]).code(2));
    assert!(err.contains("no run '2030-01-01'"), "{err}");
    let err = stderr(&quiet().cmd(&["check", "--policy", "strict"]).code(2));
    assert!(err.contains("strict") && err.contains("median"), "{err}");
    quiet().cmd(&["check", "--run", "x", "--latest"]).code(2);
    quiet().cmd(&["check", "--format", "yaml"]).code(2);
    let missing = tempfile::tempdir().unwrap();
    Command::cargo_bin("perfdash")
        .unwrap()
        .args(["check", "--archive"])
        .arg(missing.path().join("nope"))
        .assert()
        .code(2);
}

#[test]
fn a_changed_load_profile_is_not_comparable() {
    let a = quiet();
    let dir = a.run(12, &[("orders", 200.0), (ODD, 100.0)]);
    std::fs::write(dir.join("run.toml"), "[load]\nvus = 200\n").unwrap();
    for i in 0..12 {
        std::fs::write(
            a.root()
                .join("runs")
                .join(TestArchive::run_id(i))
                .join("run.toml"),
            "[load]\nvus = 50\n",
        )
        .unwrap();
    }
    // Issue 32: a new load level leaves the p99 nothing to be judged
    // against; the gate cannot vouch for the run and names the change.
    let text = stdout(&a.cmd(&["check"]).code(2));
    assert!(
        text.contains("not-comparable") && text.contains("vus 50 → 200"),
        "{text}"
    );
    assert!(
        text.lines()
            .next()
            .unwrap()
            .contains("a new load profile (vus 50 → 200)"),
        "{text}"
    );
}

/// An endpoint id (a folder name) with a newline, a quote and a bidi
/// override: the template is still valid TOML whose labels name it.
#[test]
fn triage_template_is_valid_toml_for_any_id() {
    let a = TestArchive::new();
    let odd = "ord\ners \"x\" \u{202e}[[label]]";
    a.runs(0, 12, &[(odd, 100.0), ("inventory", 40.0)]);
    a.runs(12, 15, &[(odd, 130.0), ("inventory", 40.0)]);
    let template = stdout(
        &a.cmd(&["triage", "--template", "--date", "2026-02-02"])
            .code(0),
    );
    let parsed: toml::Table =
        toml::from_str(&template).unwrap_or_else(|e| panic!("{e}\n{template}"));
    let labels = parsed["label"].as_array().unwrap();
    assert!(!labels.is_empty(), "{template}");
    assert!(
        labels.iter().all(|l| l["endpoint"].as_str() == Some(odd)),
        "{template}"
    );
}

#[test]
fn triage_template_round_trip() {
    let a = quiet();
    a.runs(12, 15, &[("orders", 130.0), (ODD, 50.0)]);
    let template = stdout(
        &a.cmd(&["triage", "--template", "--date", "2026-02-02"])
            .code(0),
    );
    assert!(template.contains("# 1 untriaged alarm."), "{template}");
    assert!(
        template.contains("# triage/2026-02-02T0300Z--orders.toml"),
        "{template}"
    );
    assert!(
        template.contains("run = \"2026-02-02T0300Z\"\nendpoint = \"orders\"\nlabel = \"\""),
        "{template}"
    );
    assert!(template.contains("date = 2026-02-02"), "{template}");
    // The follow-up fields, left empty: valid as they are.
    for key in ["owner = \"\"", "issue = \"\"", "status = \"\""] {
        assert!(template.contains(key), "{key}: {template}");
    }

    // An unfilled template is rejected, naming the file and line.
    a.label("w5.toml", &template);
    let err = stderr(&a.cmd(&["triage"]).code(0));
    assert!(
        err.contains("triage/w5.toml:") && err.contains("real, noise, accepted"),
        "{err}"
    );

    let filled = template
        .replace("label = \"\"", "label = \"real\"")
        .replace("author = \"\"", "author = \"kim\"")
        .replace("status = \"\"", "status = \"investigating\"");
    a.label("w5.toml", &filled);
    let listing = stdout(&a.cmd(&["triage"]).code(0));
    assert!(
        listing.starts_with("0 untriaged alarm(s), 1 labelled"),
        "{listing}"
    );
    assert!(stdout(&a.cmd(&["triage", "--template"]).code(0)).contains("No untriaged alarms"));
}

#[test]
fn analysis_json_carries_alarms_and_policy_accounting() {
    let a = quiet();
    // A one-run spike on `orders` (labelled noise) and a step on ODD
    // (labelled real, caught at once, confirmed two runs later).
    a.run(12, &[("orders", 140.0), (ODD, 80.0)]);
    a.runs(13, 16, &[("orders", 100.0), (ODD, 80.0)]);
    a.label(
        "a.toml",
        &format!(
            "[[label]]\nrun = \"{r}\"\nendpoint = \"orders\"\nlabel = \"noise\"\nauthor = \"a\"\ndate = 2026-02-03\n\
             [[label]]\nrun = \"{r}\"\nendpoint = \"{ODD}\"\nlabel = \"real\"\nauthor = \"a\"\ndate = 2026-02-03\n",
            r = TestArchive::run_id(12)
        ),
    );
    let out = tempfile::tempdir().unwrap();
    let site = out.path().join("site");
    Command::cargo_bin("perfdash")
        .unwrap()
        .args(["build", "--archive"])
        .arg(a.root())
        .arg("--out")
        .arg(&site)
        .assert()
        .code(0);
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(site.join("data/analysis.json")).unwrap()).unwrap();
    let alarms = json["alarms"].as_array().unwrap();
    let find = |endpoint: &str, policy: &str| {
        alarms
            .iter()
            .find(|x| x["endpoint"] == endpoint && x["policy"] == policy)
            .unwrap_or_else(|| panic!("no {policy} alarm on {endpoint}"))
    };
    let spike = find("orders", "median");
    assert_eq!(spike["run"], TestArchive::run_id(12));
    assert_eq!(spike["state"], "reverted");
    assert_eq!(spike["label"], "noise");
    assert_eq!(spike["inferred_label"], "noise");
    let step = find(ODD, "persistent");
    assert_eq!(step["state"], "confirmed");
    assert_eq!(step["label"], "real");
    assert_eq!(step["inferred_label"], "real");
    assert!(
        alarms
            .iter()
            .all(|x| x["endpoint"] != "orders" || x["policy"] != "persistent"),
        "a one-run spike never reaches persistent"
    );

    let endpoints = json["endpoints"].as_array().unwrap();
    let orders = endpoints.iter().find(|e| e["id"] == "orders").unwrap();
    let median = &orders["policies"]["median"];
    assert_eq!(
        (
            median["alarms"].as_u64(),
            median["noise"].as_u64(),
            median["real"].as_u64()
        ),
        (Some(1), Some(1), Some(0))
    );
    assert_eq!(median["unknown"], 0);
    assert_eq!(median["fp_rate"], 1.0);
    assert!(
        median["median_delay_days"].is_null(),
        "no real regression on orders"
    );
    let odd = endpoints.iter().find(|e| e["id"] == ODD).unwrap();
    assert_eq!(odd["policies"]["median"]["fp_rate"], 0.0);
    assert_eq!(odd["policies"]["median"]["median_delay_days"], 0.0);
    // Persistent waits for two more runs: onset Monday, confirmed Friday.
    assert_eq!(odd["policies"]["persistent"]["median_delay_days"], 4.0);
    for name in ["naive", "median", "persistent", "robust"] {
        assert!(orders["policies"][name].is_object(), "{name}");
    }
}

#[test]
fn build_renders_the_weekly_review_for_a_chosen_week() {
    let a = quiet();
    a.run(12, &[("orders", 100.0), (ODD, 80.0)]); // Monday 2026-02-02, ISO week 6
    a.runs(13, 15, &[("orders", 100.0), (ODD, 80.0)]);
    let out = tempfile::tempdir().unwrap();
    let build = |site: &Path, week: Option<&str>| {
        let mut cmd = Command::cargo_bin("perfdash").unwrap();
        cmd.args(["build", "--archive"])
            .arg(a.root())
            .arg("--out")
            .arg(site);
        if let Some(w) = week {
            cmd.args(["--week", w]);
        }
        cmd.assert()
    };
    let site = out.path().join("w6");
    build(&site, Some("2026-W06")).code(0);
    let html = std::fs::read_to_string(site.join("weekly.html")).unwrap();
    assert!(html.contains("<h1>Weekly review 2026-W06 "), "{html}");
    assert!(
        html.contains("<strong>1</strong> open problem"),
        "the step on {ODD}"
    );
    assert!(
        html.contains("search&#38;filter&#60;v2&#62;"),
        "names are escaped: {html}"
    );
    assert!(!html.contains(ODD));
    assert!(html.contains("Untriaged: 1"));
    assert!(html.contains("<svg class=\"evidence\""));
    assert!(html.contains("What each policy would have done"));

    let before = out.path().join("w2");
    build(&before, Some("2026-W02")).code(0);
    let html = std::fs::read_to_string(before.join("weekly.html")).unwrap();
    assert!(
        html.contains("New alarms this week: 0")
            && html.contains("No policy raised an alarm this week."),
        "{html}"
    );

    // By default: the ISO week of the latest run.
    let latest = out.path().join("latest");
    build(&latest, None).code(0);
    let html = std::fs::read_to_string(latest.join("weekly.html")).unwrap();
    assert!(html.contains("<h1>Weekly review 2026-W06 "), "{html}");

    let bad = stderr(&build(&out.path().join("bad"), Some("2026-W60")).code(2));
    assert!(bad.contains("no week 60"), "{bad}");
}
