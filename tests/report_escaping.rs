//! No output of `perfdash check` carries a character from the data raw
//! that could fake a line or reorder what a reader sees (issue 32): for
//! random control characters, bidirectional marks, line separators,
//! newlines and Markdown/HTML in every field the report prints (run id,
//! endpoint ids and names, reasons, early verdicts' earlier runs, capacity
//! rows, problems, the files not read, the branch, every reason the gate
//! cannot vouch, the site's address), each
//! format keeps its own lines and escapes the rest, and the pull-request
//! comment stays under GitHub's limit whatever the number and length of
//! the fields.

mod common;

use perfdash::analyse::gate::{
    CannotVouch, CapacityCheck, CheckOptions, CheckReport, CheckStatus, EarlyCheck, RunSelector,
    check,
};
use perfdash::analyse::verdict::{EarlyVerdict, Figure};
use perfdash::analyse::{Analysis, BranchBase, Policy, analyse};
use perfdash::escape::is_unsafe;
use perfdash::report::check::{CheckFormat, render};
use perfdash::report::pr_comment::MAX_COMMENT_CHARS;
use proptest::prelude::*;

/// The story archive's latest run, judged: a regression on `orders`.
fn judged() -> &'static (CheckReport, Analysis) {
    static JUDGED: std::sync::OnceLock<(CheckReport, Analysis)> = std::sync::OnceLock::new();
    JUDGED.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        common::story_archive(tmp.path());
        let loaded = perfdash::ingest::load_archive(tmp.path()).unwrap();
        let analysis = analyse(&loaded.archive, loaded.diagnostics);
        let report = check(
            &analysis,
            &RunSelector::Latest,
            Policy::Median,
            &CheckOptions::default(),
        )
        .unwrap();
        assert_eq!(report.count(CheckStatus::Regression), 1);
        (report, analysis)
    })
}

/// Text that tries to break out: every kind of character no output may
/// carry raw, fake verdict lines, Markdown and HTML.
fn hostile() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("\n".to_string()),
        Just("\r\n".to_string()),
        Just("\u{1b}[2K\r".to_string()),
        Just("\u{202e}".to_string()),
        Just("\u{2066}".to_string()),
        Just("\u{200f}".to_string()),
        Just("\u{2028}".to_string()),
        Just("\u{2029}".to_string()),
        Just("\u{85}".to_string()),
        Just("\u{7f}".to_string()),
        (0u32..0x20).prop_map(|c| char::from_u32(c).unwrap().to_string()),
        (0x80u32..0xa0).prop_map(|c| char::from_u32(c).unwrap().to_string()),
        Just("PASS: nothing regressed".to_string()),
        Just("</details><img src=x onerror=alert(1)>".to_string()),
        Just("| x | y |".to_string()),
        Just("# All clear".to_string()),
        Just("&#x202e;&lt;b&gt;".to_string()),
        Just("](javascript:alert(1))".to_string()),
        Just("<!-- perfdash:check -->".to_string()),
        "[a-zA-Z0-9 ./-]{0,12}",
    ];
    prop::collection::vec(piece, 0..10).prop_map(|v| v.concat())
}

/// The report and analysis with every printed field set from `strings`
/// (taken in turn, round and round), `copies` more endpoints, and the
/// site's address set to an address ending in `url_tail`.
fn poisoned(strings: &[String], copies: usize, url_tail: &str) -> (CheckReport, Analysis) {
    let (report, analysis) = judged();
    let (mut report, mut analysis) = (report.clone(), analysis.clone());
    let mut next = {
        let mut i = 0;
        move || {
            i += 1;
            strings[i % strings.len()].clone()
        }
    };
    let template = report.endpoints[0].clone();
    for _ in 0..copies {
        report.endpoints.push(template.clone());
    }
    report.run = next();
    report.main_branch = Some(next());
    report.branch = Some(BranchBase {
        branch: next(),
        main_run: Some(next()),
        main_run_index: None,
        base_commit: Some(next()),
    });
    for (i, e) in report.endpoints.iter_mut().enumerate() {
        e.endpoint = next();
        e.name = next();
        e.reason = next();
        e.alarm_run = Some(next());
        // Every other endpoint judged by an early verdict, whose earlier
        // runs are printed too.
        if i % 2 == 1 {
            e.early = Some(EarlyCheck {
                verdict: EarlyVerdict::Regression,
                runs: vec![next(), next()],
                earlier_median_p99_ms: Some(10.0),
                ratio: Some(2.0),
                ratio_interval: Some([1.5, 2.5]),
                interval_confidence: Some(0.84),
                regressed: vec![Figure::P99],
            });
        }
    }
    report.capacity.push(CapacityCheck {
        endpoint: next(),
        name: next(),
        status: CheckStatus::Regression,
        knee_rps: Some(80.0),
        baseline_knee_rps: Some(100.0),
        ratio: Some(0.8),
        line_ratio: 0.9,
        limit_rps: Some(90.0),
        reason: next(),
    });
    report.problems = (0..5).map(|_| next()).collect();
    report.ignored = vec![next(), next()];
    report.cannot_vouch.push(CannotVouch::NoBaseline {
        endpoints: vec![next(), next()],
    });
    report.cannot_vouch.push(CannotVouch::NewLoadProfile {
        endpoints: vec![next()],
        change: next(),
    });
    report.cannot_vouch.push(CannotVouch::TooFewRounds {
        endpoint: next(),
        usable_rounds: 2,
        rounds: 5,
        expected_rounds: 5,
    });
    // JUnit lists the problems that name the untrusted run: one does, the
    // prefix keeps the others from naming it by chance.
    let untrusted = format!("untrusted-{}", next());
    report
        .problems
        .push(format!("runs/{untrusted}/run.toml: started_at {}", next()));
    report.cannot_vouch.push(CannotVouch::UntrustedTime {
        runs: vec![untrusted],
    });
    report.cannot_vouch.push(CannotVouch::EarlyInconclusive {
        endpoints: vec![next()],
    });
    analysis.settings.site.url = Some(format!("https://perf.example.com/{url_tail}"));
    (report, analysis)
}

const FORMATS: [CheckFormat; 4] = [
    CheckFormat::Text,
    CheckFormat::Json,
    CheckFormat::Markdown,
    CheckFormat::Junit,
];

fn line_count(s: &str) -> usize {
    s.lines().count()
}

/// perfdash's own HTML in the comment: nothing else may open a tag.
const OWN_TAGS: [&str; 5] = [
    "<!-- perfdash:check -->",
    "<details>",
    "<summary>",
    "</summary>",
    "</details>",
];

fn check_output(format: CheckFormat, out: &str, plain: &str, report: &CheckReport) {
    if let Some(c) = out.chars().find(|c| is_unsafe(*c) && *c != '\n') {
        panic!("{format:?} carries U+{:04X} raw:\n{out}", c as u32);
    }
    match format {
        CheckFormat::Text => {
            assert_eq!(line_count(out), line_count(plain), "{out}");
            assert!(
                out.lines()
                    .skip(1)
                    .all(|l| !["PASS", "FAIL", "ERROR"].iter().any(|m| l.starts_with(m))),
                "{out}"
            );
        }
        CheckFormat::Json => {
            assert_eq!(line_count(out), line_count(plain), "{out}");
            let json: serde_json::Value = serde_json::from_str(out).unwrap();
            assert_eq!(
                json["run"],
                report.run.as_str(),
                "the data comes through intact"
            );
            assert_eq!(
                json["endpoints"][0]["name"],
                report.endpoints[0].name.as_str()
            );
        }
        CheckFormat::Markdown => {
            assert!(out.chars().count() <= MAX_COMMENT_CHARS, "{}", out.len());
            assert!(out.starts_with("<!-- perfdash:check -->\n"));
            for (i, _) in out.match_indices('<') {
                let escaped = i > 0 && out.as_bytes()[i - 1] == b'\\';
                assert!(
                    escaped || OWN_TAGS.iter().any(|t| out[i..].starts_with(t)),
                    "an unescaped < at {i}: {}",
                    &out[i.saturating_sub(40)..(i + 40).min(out.len())]
                );
            }
            if !out.contains("characters; ") {
                assert_eq!(line_count(out), line_count(plain), "{out}");
            }
        }
        CheckFormat::Junit => {
            assert_eq!(line_count(out), line_count(plain), "{out}");
            let mut reader = quick_xml::Reader::from_str(out);
            loop {
                match reader.read_event() {
                    Ok(quick_xml::events::Event::Eof) => break,
                    Ok(_) => {}
                    Err(e) => panic!("not well-formed XML: {e}\n{out}"),
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn no_format_carries_a_character_from_the_data_raw(
        strings in prop::collection::vec(hostile(), 1..8),
    ) {
        let (report, analysis) = poisoned(&strings, 2, &strings[0]);
        let plain_strings: Vec<String> = strings.iter().map(|_| "x".to_string()).collect();
        // The same address: one that is refused gives no links at all.
        let (plain_report, plain_analysis) = poisoned(&plain_strings, 2, &strings[0]);
        for format in FORMATS {
            let out = render(&report, &analysis, format, 1);
            let plain = render(&plain_report, &plain_analysis, format, 1);
            check_output(format, &out, &plain, &report);
        }
    }

    #[test]
    fn the_comment_stays_under_its_limit_whatever_the_fields(
        strings in prop::collection::vec(hostile(), 1..4),
        long in 0usize..5_000,
        copies in 0usize..400,
    ) {
        let mut strings = strings;
        strings.push("é\u{202e}|".repeat(long));
        let (report, analysis) = poisoned(&strings, copies, &strings[0]);
        let out = render(&report, &analysis, CheckFormat::Markdown, 1);
        prop_assert!(out.chars().count() <= MAX_COMMENT_CHARS, "{}", out.chars().count());
        prop_assert!(out.starts_with("<!-- perfdash:check -->\n"));
        // The verdict is always in sight.
        prop_assert!(out.lines().nth(1).unwrap().contains("**perfdash check**"));
    }
}

#[test]
fn a_site_url_that_would_break_out_of_its_link_is_refused_with_the_file() {
    for url in [
        "https://perf.example.com/\n\n</details><img src=x onerror=alert(1)>\n# All clear",
        "https://perf.example.com/\u{202e}",
        "javascript:alert(1)",
        "https:///no-host",
        "https://perf.example.com/a b",
        // Pages are linked under it: a query or fragment would come first.
        "https://perf.example.com/?q=<img/src=x/onerror=alert(1)>",
        "https://perf.example.com/#)](javascript:alert(1))",
    ] {
        let text = format!("[site]\nurl = {}\n", toml_string(url));
        let err = perfdash::config::Settings::parse(&text, "perfdash.toml".as_ref())
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("perfdash.toml"), "{err}");
        assert!(err.contains("site.url"), "{err}");
        if url.ends_with(" b") {
            assert!(err.contains("it holds a space"), "{err}");
        }
        assert!(
            !err.chars().any(|c| is_unsafe(c) && c != '\n'),
            "the message escapes it: {err:?}"
        );
    }
    // What is allowed but special in Markdown is percent-encoded in links.
    let (report, mut analysis) = judged().clone();
    analysis.settings.site.url = Some("https://perf.example.com/a(b)|c<d>/".into());
    let md = render(&report, &analysis, CheckFormat::Markdown, 1);
    assert!(
        md.contains("(https://perf.example.com/a%28b%29%7Cc%3Cd%3E/index.html)"),
        "{md}"
    );
}

fn toml_string(s: &str) -> String {
    perfdash::escape::toml_string(s)
}

/// Every command that prints data, run on the real bookshop archive
/// (tests/fixtures/real-archive) whose `book-reviews` folder, in every run,
/// is named to fake a verdict line, and whose latest run's notes do the
/// same: no stdout or stderr carries a control character, a bidirectional
/// mark or a line separator from the data, and no line of it starts with a
/// faked verdict (`check`, `compare`, `triage`, `inspect` on the renamed
/// file, `build`'s warnings).
#[test]
fn no_command_prints_a_forged_line_from_folder_names_or_run_toml() {
    use std::path::Path;
    const FORGED: &str = "book-reviews\n\u{1b}[2K\rPASS: nothing regressed\u{202e}\u{2028}\u{85}";
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    common::copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/real-archive"),
        &archive,
    );
    let mut renamed = None;
    for run in std::fs::read_dir(archive.join("runs")).unwrap() {
        let run = run.unwrap().path();
        if run.join("book-reviews").is_dir() {
            std::fs::rename(run.join("book-reviews"), run.join(FORGED)).unwrap();
            renamed = Some(run.join(FORGED).join("round-1.json"));
        }
    }
    let latest = archive.join("runs/2026-12-03T1904Z/run.toml");
    let toml = std::fs::read_to_string(&latest).unwrap().replace(
        "notes = \"",
        "notes = \"\\u001b[2K\\r\\nPASS: nothing regressed \\u202e ",
    );
    std::fs::write(&latest, toml).unwrap();
    let site = tmp.path().join("site");
    let a = archive.to_str().unwrap();
    let s = site.to_str().unwrap();
    let file = renamed.unwrap();
    let mut runs: Vec<Vec<&str>> = Vec::new();
    for format in ["text", "json", "markdown", "junit"] {
        runs.push(vec![
            "check",
            "--archive",
            a,
            "--site",
            s,
            "--latest",
            "--format",
            format,
        ]);
    }
    for format in ["table", "json", "markdown"] {
        runs.push(vec![
            "compare",
            "--archive",
            a,
            "latest",
            "latest~1",
            "--format",
            format,
        ]);
    }
    runs.push(vec!["triage", "--archive", a]);
    runs.push(vec!["build", "--archive", a, "--out", s, "--verbose"]);
    let file = file.to_str().unwrap();
    runs.push(vec!["inspect", file]);
    runs.push(vec!["inspect", "--format", "json", file]);
    // A profile whose hottest frame fakes a line (a line feed would end
    // the folded line: a carriage return does the faking).
    let profile = tmp.path().join("flame.folded");
    let frame = FORGED.replace(' ', "_").replace('\n', "\r");
    std::fs::write(&profile, format!("main;{frame} 10\nmain;work 5\n")).unwrap();
    let profile = profile.to_str().unwrap();
    runs.push(vec!["inspect", profile]);
    runs.push(vec!["inspect", "--format", "json", profile]);
    for args in &runs {
        let out = assert_cmd::Command::cargo_bin("perfdash")
            .unwrap()
            .args(args)
            .output()
            .unwrap();
        for (stream, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
            let text = String::from_utf8_lossy(bytes);
            if let Some(c) = text.chars().find(|c| is_unsafe(*c) && *c != '\n') {
                panic!("{args:?} {stream} carries U+{:04X} raw:\n{text}", c as u32);
            }
            assert!(
                !text
                    .lines()
                    .any(|l| l.trim_start().starts_with("PASS: nothing")),
                "{args:?} {stream}: a forged line:\n{text}"
            );
        }
        // The data still comes through, escaped.
        let all = String::from_utf8_lossy(&out.stdout);
        if args[0] != "build" && args[0] != "triage" {
            assert!(
                ["book-reviews\\n", "book-reviews\\\\n", "book-reviews\\r"]
                    .iter()
                    .any(|shown| all.contains(shown)),
                "{args:?}: {all}"
            );
        }
    }
}
