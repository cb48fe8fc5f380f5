//! `perfdash check --format markdown` (alias `comment`): the pull-request
//! comment, as a golden file (tests/snapshots), on a small archive of k6 summaries
//! written here: twelve quiet runs, then a run where two endpoints
//! regressed, one improved and the rest held.

use std::path::Path;

use assert_cmd::Command;

const WOBBLE: [f64; 5] = [0.99, 1.0, 1.01, 1.0, 1.02];

/// A k6 `handleSummary()` document with the given p99, error rate and
/// request rate.
fn summary(p99: f64, error_rate: f64, rps: f64) -> String {
    format!(
        r#"{{"metrics":{{"http_req_duration":{{"type":"trend","contains":"time","values":{{"avg":{a},"med":{m},"p(90)":{n},"p(95)":{f},"p(99)":{p99},"max":{x}}}}},"http_reqs":{{"type":"counter","contains":"default","values":{{"count":{c},"rate":{rps}}}}},"http_req_failed":{{"type":"rate","contains":"default","values":{{"rate":{error_rate},"passes":0,"fails":0}}}}}}}}"#,
        a = p99 * 0.5,
        m = p99 * 0.45,
        n = p99 * 0.8,
        f = p99 * 0.9,
        x = p99 * 1.3,
        c = (rps * 60.0).round()
    )
}

fn run(root: &Path, i: usize, endpoints: &[(&str, f64)]) {
    let day = chrono::NaiveDate::from_ymd_opt(2026, 1, 5).unwrap() + chrono::Days::new(i as u64);
    let dir = root.join("runs").join(format!("{day}T0300Z"));
    for (endpoint, level) in endpoints {
        let e = dir.join(endpoint);
        std::fs::create_dir_all(&e).unwrap();
        for (k, w) in WOBBLE.iter().enumerate() {
            let errors = if *level > 150.0 { 0.012 } else { 0.001 };
            std::fs::write(
                e.join(format!("round-{}.json", k + 1)),
                summary(level * w, errors, 50.0 / w),
            )
            .unwrap();
        }
    }
}

const QUIET: [(&str, f64); 6] = [
    ("order-list", 100.0),
    ("order-detail", 80.0),
    ("search|v2", 120.0),
    ("cart", 60.0),
    ("checkout", 200.0),
    ("login", 40.0),
];

/// Twelve quiet runs, then orders and search regressed, cart improved.
fn regressed_archive(root: &Path, site_url: Option<&str>) {
    let mut settings = String::from("[endpoints.order-list]\nname = \"GET /api/orders\"\n");
    if let Some(url) = site_url {
        settings.push_str(&format!("[site]\nurl = \"{url}\"\n"));
    }
    std::fs::create_dir_all(root).unwrap();
    std::fs::write(root.join("perfdash.toml"), settings).unwrap();
    for i in 0..12 {
        run(root, i, &QUIET);
    }
    run(
        root,
        12,
        &[
            ("order-list", 180.0),
            ("order-detail", 81.0),
            ("search|v2", 150.0),
            ("cart", 40.0),
            ("checkout", 199.0),
            ("login", 40.5),
        ],
    );
}

fn comment(root: &Path) -> (String, i32) {
    comment_as(root, "markdown")
}

fn comment_as(root: &Path, format: &str) -> (String, i32) {
    let out = Command::cargo_bin("perfdash")
        .unwrap()
        .env("PERFDASH_NOW", "2026-02-01T00:00:00Z")
        .args(["check", "--format", format, "--archive"])
        .arg(root)
        .output()
        .unwrap();
    (
        String::from_utf8(out.stdout).unwrap(),
        out.status.code().unwrap(),
    )
}

#[test]
fn regressed_run_comment_is_golden_short_and_deterministic() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("archive");
    regressed_archive(&root, Some("https://perf.example.com/shop/"));
    let (text, code) = comment(&root);
    assert_eq!(code, 1, "a regression still fails the gate");
    insta::assert_snapshot!("pr_comment_regressed", text);

    // The hidden marker first, for the step that updates the comment.
    assert_eq!(
        text.lines().next(),
        Some(perfdash::report::pr_comment::MARKER)
    );
    // One screen: what is not folded is short, and names the regressed
    // endpoints before anything else.
    let visible: Vec<&str> = text
        .lines()
        .take_while(|l| !l.starts_with("<details>"))
        .collect();
    assert!(visible.len() <= 20, "{} visible lines", visible.len());
    let rows: Vec<&str> = visible
        .iter()
        .copied()
        .filter(|l| l.starts_with("| ["))
        .collect();
    assert!(
        rows[0].contains("GET /api/orders") && rows[0].contains("regression"),
        "{rows:?}"
    );
    assert!(
        rows[1].contains("search\\|v2") && rows[1].contains("regression"),
        "{rows:?}"
    );
    assert!(rows[2].contains("improvement"), "{rows:?}");
    assert_eq!(rows.len(), 3, "quiet endpoints are folded: {rows:?}");

    // A second archive built the same way gives the same bytes.
    let again = tmp.path().join("again");
    regressed_archive(&again, Some("https://perf.example.com/shop/"));
    assert_eq!(comment(&again).0, text);
    // `comment` is another name for the same output.
    assert_eq!(comment_as(&root, "comment"), (text, 1));
}

#[test]
fn without_a_site_url_there_are_no_links() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("archive");
    regressed_archive(&root, None);
    let (text, _) = comment(&root);
    assert!(!text.contains("]("), "{text}");
    assert!(text.contains("| GET /api/orders |"), "{text}");
}
