//! Golden files (insta) for what `perfdash check` and `perfdash compare`
//! print, in every format, on a small fixed archive built in code. A change
//! to any report's wording, layout or figures fails here; after a
//! deliberate change, re-bless with
//!
//! ```text
//! cargo insta review                                   # or, without cargo-insta:
//! INSTA_UPDATE=always cargo test --test golden_reports
//! ```
//!
//! and read the diff of `tests/snapshots/` before committing it.

use std::collections::BTreeMap;

use chrono::{Duration, TimeZone, Utc};
use perfdash::analyse::compare::compare;
use perfdash::analyse::gate::{CheckOptions, RunSelector, check};
use perfdash::analyse::{Policy, analyse};
use perfdash::cli::outcome_exit_code;
use perfdash::config::Settings;
use perfdash::model::{Archive, EndpointRun, Round, RoundStats, Run, RunMeta, SourceFormat};
use perfdash::report::check::{CheckFormat, render};
use perfdash::report::compare::{format_json, format_markdown, format_table};

const WOBBLE: [f64; 5] = [0.99, 1.0, 1.01, 1.0, 1.02];

/// How one endpoint behaves in one run.
#[derive(Clone, Copy)]
struct Level {
    p99: f64,
    errors: f64,
    rps: f64,
    rounds: usize,
    /// Every request of every round failed (connections refused).
    refused: bool,
}

const fn level(p99: f64) -> Level {
    Level {
        p99,
        errors: 0.001,
        rps: 200.0,
        rounds: 5,
        refused: false,
    }
}

fn rounds(l: Level) -> Vec<Round> {
    (0..l.rounds)
        .map(|k| {
            let stats = if l.refused {
                RoundStats {
                    count: Some(80_000),
                    throughput_rps: Some(1333.0),
                    p99_ms: 0.0,
                    p90_ms: Some(0.0),
                    error_rate: Some(1.0),
                    ..Default::default()
                }
            } else {
                RoundStats {
                    count: Some((l.rps * 60.0) as u64),
                    throughput_rps: Some(l.rps * WOBBLE[k]),
                    p99_ms: l.p99 * WOBBLE[k],
                    p90_ms: Some(l.p99 * 0.6 * WOBBLE[k]),
                    error_rate: Some(l.errors),
                    ..Default::default()
                }
            };
            Round::new(
                k as u32 + 1,
                format!("round-{}.json", k + 1),
                SourceFormat::K6HandleSummary,
                stats,
            )
        })
        .collect()
}

/// Eleven runs two days apart; run 10 (the latest) as `last`, the others
/// quiet, every run under the same `[load]`.
fn archive(quiet: &[(&str, Level)], last: &[(&str, Level)]) -> Archive {
    let t0 = Utc.with_ymd_and_hms(2026, 3, 2, 3, 0, 0).unwrap();
    let runs = (0..11)
        .map(|i| {
            let endpoints: BTreeMap<String, EndpointRun> = (if i == 10 { last } else { quiet })
                .iter()
                .map(|(id, l)| {
                    (
                        id.to_string(),
                        EndpointRun {
                            rounds: rounds(*l).into(),
                            ..Default::default()
                        },
                    )
                })
                .collect();
            Run {
                id: format!("run-{i:02}"),
                started_at: t0 + Duration::days(2 * i),
                meta: RunMeta {
                    commit: Some(format!("c0ffee{i:02}")),
                    release: (i == 9).then(|| "1.4.0".to_string()),
                    load: [("vus".to_string(), "20".to_string())].into(),
                    ..Default::default()
                },
                endpoints,
                capacity: BTreeMap::new(),
                problems: Vec::new(),
                untrusted_time: None,
            }
        })
        .collect();
    Archive {
        root: "archive".into(),
        settings: Settings::parse(
            "[endpoints.search]\nname = \"GET /search?q=<term>&page=1\"\n",
            "perfdash.toml".as_ref(),
        )
        .unwrap(),
        runs,
        triage: Vec::new(),
        annotations: Vec::new(),
    }
}

/// Every status a latest run can have, one endpoint each.
fn mixed() -> Archive {
    let quiet = [
        ("checkout", level(300.0)),
        ("orders", level(100.0)),
        ("payments", level(150.0)),
        ("refused", level(80.0)),
        ("search", level(50.0)),
        ("short", level(60.0)),
        ("static", level(20.0)),
    ];
    let last = [
        ("checkout", level(200.0)), // improvement
        ("new", level(40.0)),       // no baseline
        ("orders", level(130.0)),   // p99 regression
        (
            "payments",
            Level {
                rps: 140.0, // throughput −30%
                ..level(150.0)
            },
        ),
        (
            "refused",
            Level {
                refused: true,
                ..level(80.0)
            },
        ),
        (
            "search",
            Level {
                errors: 0.05, // 0.1% → 5%
                ..level(50.0)
            },
        ),
        (
            "short",
            Level {
                rounds: 1,
                ..level(180.0)
            },
        ),
        ("static", level(20.0)), // ok
    ];
    archive(&quiet, &last)
}

/// Four endpoints, three of them ×1.3 together in the latest run.
fn environment() -> Archive {
    let quiet = [
        ("a", level(100.0)),
        ("b", level(50.0)),
        ("c", level(70.0)),
        ("d", level(90.0)),
    ];
    let last = [
        ("a", level(130.0)),
        ("b", level(65.0)),
        ("c", level(91.0)),
        ("d", level(90.0)),
    ];
    archive(&quiet, &last)
}

const FORMATS: [(&str, CheckFormat); 4] = [
    ("text", CheckFormat::Text),
    ("json", CheckFormat::Json),
    ("markdown", CheckFormat::Markdown),
    ("junit", CheckFormat::Junit),
];

fn check_snapshots(name: &str, archive: &Archive, options: CheckOptions) {
    let analysis = analyse(archive, Vec::new());
    let report = check(&analysis, &RunSelector::Latest, Policy::Median, &options).unwrap();
    let code = outcome_exit_code(report.outcome);
    for (format_name, format) in FORMATS {
        insta::assert_snapshot!(
            format!("check_{name}_{format_name}"),
            render(&report, &analysis, format, code)
        );
    }
}

#[test]
fn check_a_run_with_every_status() {
    check_snapshots(
        "every_status",
        &mixed(),
        CheckOptions {
            allow_insufficient: true,
            allow_no_baseline: true,
        },
    );
}

#[test]
fn check_a_run_it_cannot_vouch_for() {
    check_snapshots("cannot_vouch", &mixed(), CheckOptions::default());
}

#[test]
fn check_an_environment_suspect_run() {
    check_snapshots("environment", &environment(), CheckOptions::default());
}

#[test]
fn compare_in_every_format() {
    let a = mixed();
    let c = compare(&a, &a.runs[9], &a.runs[10]);
    insta::assert_snapshot!("compare_table", format_table(&c));
    // docs/compare.md shows this very table: it must not drift from it.
    let docs =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/compare.md")).unwrap();
    let shown = format!(
        "```console\n$ perfdash compare release:1.4.0 latest\n{}```",
        format_table(&c)
    );
    assert!(
        docs.contains(&shown),
        "docs/compare.md should show, as it is:\n{shown}"
    );
    insta::assert_snapshot!("compare_json", format_json(&c));
    insta::assert_snapshot!("compare_markdown", format_markdown(&c));
}
