//! Tests of the demo archive: determinism, real k6 shape, loadability,
//! and the story the data tells under the median and the naive rules.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::*;
use crate::analyse::{Analysis, Policy};
use crate::ingest::{k6_summary, load_archive};
use crate::test_support::bundled_demo;

/// The default archive's report (generated once per test binary).
fn bundled() -> &'static DemoReport {
    &bundled_demo().report
}

fn bundled_root() -> PathBuf {
    bundled_demo().root()
}

fn bundled_analysis() -> &'static Analysis {
    &bundled_demo().analysis
}

/// Every file under `root`, relative path → bytes.
fn tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    walkdir::WalkDir::new(root)
        .sort_by_file_name()
        .into_iter()
        .map(Result::unwrap)
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let rel = e
                .path()
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            (rel, std::fs::read(e.path()).unwrap())
        })
        .collect()
}

fn event(kind: EventKind, endpoint: &str) -> &'static InjectedEvent {
    bundled()
        .events
        .iter()
        .find(|e| e.kind == kind && e.endpoints.iter().any(|x| x == endpoint))
        .unwrap_or_else(|| panic!("no {kind:?} event on {endpoint}"))
}

/// Determinism on a short history (the full one is generated once per
/// test binary; `the_committed_archive_is_what_the_generator_writes`
/// compares it with the archive generated on another machine and day).
#[test]
fn same_seed_gives_byte_identical_trees_and_another_seed_does_not() {
    let short = DemoOptions {
        weeks: 3,
        ..DemoOptions::default()
    };
    let dir = tempfile::tempdir().unwrap();
    generate(&dir.path().join("a"), &short).unwrap();
    generate(&dir.path().join("b"), &short).unwrap();
    let (first, second) = (tree(&dir.path().join("a")), tree(&dir.path().join("b")));
    assert_eq!(first.len(), second.len());
    for (path, bytes) in &first {
        assert!(
            second.get(path) == Some(bytes),
            "{path} differs between two generations"
        );
    }
    let other = DemoOptions { seed: 7, ..short };
    generate(&dir.path().join("c"), &other).unwrap();
    let third = tree(&dir.path().join("c"));
    let differing = third
        .iter()
        .filter(|(p, b)| first.get(*p) != Some(b))
        .count();
    assert!(differing > 0, "a different seed must give different rounds");
}

#[test]
fn refuses_to_write_into_a_non_empty_folder() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("keep.txt"), "mine").unwrap();
    let err = generate(dir.path(), &DemoOptions::default()).unwrap_err();
    assert!(err.to_string().contains("not empty"), "{err}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("keep.txt")).unwrap(),
        "mine"
    );
}

#[test]
fn size_and_counts_are_as_reported() {
    let report = bundled();
    let files = tree(&bundled_root());
    let bytes: u64 = files.values().map(|b| b.len() as u64).sum();
    assert_eq!(report.files, files.len());
    assert_eq!(report.bytes, bytes);
    assert_eq!(report.runs, 78);
    assert_eq!(report.round_files, 78 * 12 * 5);
    assert!(
        bytes < 25_000_000,
        "the bundled archive grew to {bytes} bytes"
    );
    eprintln!("{report}");
}

#[test]
fn every_round_is_a_real_k6_handle_summary_with_p99() {
    let root = bundled_root();
    // The story's failing release and lost round: `runs/<run>/<endpoint>/`.
    let failing: Vec<String> = bundled()
        .events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Errors | EventKind::FailedRound))
        .flat_map(|e| {
            e.runs
                .iter()
                .flat_map(move |r| e.endpoints.iter().map(move |x| format!("runs/{r}/{x}/")))
        })
        .collect();
    let (mut checked, mut with_errors, mut refused) = (0, 0, 0);
    for (rel, bytes) in tree(&root) {
        if !rel.ends_with(".json") {
            continue;
        }
        let round = k6_summary::parse(&bytes, Path::new(&rel), "http_req_duration").unwrap();
        if round.stats.p99_ms == 0.0 {
            // All connections refused: every duration 0, every request failed.
            assert!(failing.iter().any(|f| rel.starts_with(f.as_str())), "{rel}");
            assert_eq!(round.stats.error_rate, Some(1.0), "{rel}");
            refused += 1;
            continue;
        }
        assert_eq!(
            round.format,
            crate::model::SourceFormat::K6HandleSummary,
            "{rel}"
        );
        assert_eq!(
            round.metric_key,
            "http_req_duration{expected_response:true}"
        );
        let s = &round.stats;
        let q = [
            s.min_ms,
            s.p50_ms,
            s.p90_ms,
            s.p95_ms,
            Some(s.p99_ms),
            s.max_ms,
        ]
        .map(|v| v.unwrap());
        assert!(
            q.windows(2).all(|w| w[0] <= w[1]),
            "{rel}: quantiles out of order {q:?}"
        );
        let (avg, count, rps) = (
            s.mean_ms.unwrap(),
            s.count.unwrap(),
            s.throughput_rps.unwrap(),
        );
        assert!(q[0] <= avg && avg <= q[5], "{rel}");
        let doc: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        let secs = doc["state"]["testRunDurationMs"].as_f64().unwrap() / 1000.0;
        assert!(
            (rps * secs - count as f64).abs() < 1e-6,
            "{rel}: rate × duration ≠ count"
        );
        if s.error_rate.unwrap() >= 0.01 {
            assert!(failing.iter().any(|f| rel.starts_with(f.as_str())), "{rel}");
            with_errors += 1;
        }
        assert_eq!(
            doc["metrics"]["iterations"]["values"]["count"].as_u64(),
            Some(count)
        );
        let all = &doc["metrics"]["http_req_duration"]["values"];
        assert!(all["p(99)"].as_f64().unwrap() >= s.p99_ms, "{rel}");
        for key in ["root_group", "options", "state"] {
            assert!(doc.get(key).is_some(), "{rel}: no {key}");
        }
        let stats: Vec<&str> = doc["options"]["summaryTrendStats"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert!(stats.contains(&"p(99)"));
        checked += 1;
    }
    assert_eq!((checked + refused, refused), (78 * 12 * 5, 1));
    assert!(
        with_errors > 10,
        "the failing release's rounds: {with_errors}"
    );
}

#[test]
fn the_archive_loads_without_diagnostics() {
    let loaded = load_archive(&bundled_root()).unwrap();
    // Rounds, profiles, run.toml files and triage labels: all read, nothing skipped.
    assert!(loaded.diagnostics.is_empty(), "{:#?}", loaded.diagnostics);
    let archive = &loaded.archive;
    assert_eq!(archive.runs.len(), 78);
    assert_eq!(archive.endpoint_ids().len(), 12);
    assert!(
        archive
            .runs
            .iter()
            .all(|r| r.endpoints.values().all(|e| e.rounds.len() == 5))
    );
    assert_eq!(
        archive.settings.endpoint_name("order-list"),
        "GET /api/orders"
    );
    let releases: Vec<&str> = archive
        .runs
        .iter()
        .filter_map(|r| r.meta.release.as_deref())
        .collect();
    assert_eq!(
        releases,
        ["1.4.0", "1.5.0", "1.6.0", "1.7.0", "1.8.0", "1.9.0"]
    );
    // run.toml times agree with the ids.
    for run in &archive.runs {
        let from_id = crate::ingest::run_time_from_id(&run.id).unwrap();
        assert!(
            (run.started_at - from_id).num_seconds().abs() < 60,
            "{}",
            run.id
        );
    }
}

#[test]
fn the_generator_walk_agrees_with_analyse() {
    // The generator judges runs itself while generating (a noisy-neighbour
    // run is placed against the baseline of its time); with the archive's
    // own triage labels applied, `analyse` must agree with it exactly.
    let analysis = bundled_analysis();
    let p = plan(&DemoOptions::default());
    for (ei, def) in ENDPOINTS.iter().enumerate() {
        let ea = analysis.endpoints.iter().find(|e| e.id == def.id).unwrap();
        assert_eq!(ea.points.len(), p.runs.len());
        for (run, point) in p.runs.iter().zip(&ea.points) {
            assert_eq!(run.id, point.run);
            let j = &run.endpoints[ei].judged;
            assert_eq!(j.baseline, point.baseline_p99_ms, "{} {}", def.id, run.id);
            assert_eq!(j.verdict, point.verdict, "{} {}", def.id, run.id);
            assert_eq!(j.median, point.median_p99_ms);
        }
    }
}

fn verdict_of(endpoint: &str, run: &str) -> Verdict {
    let ea = bundled_analysis()
        .endpoints
        .iter()
        .find(|e| e.id == endpoint)
        .unwrap();
    ea.points.iter().find(|p| p.run == run).unwrap().verdict
}

#[test]
fn real_regressions_are_flagged_and_noisy_neighbours_are_not() {
    for e in &bundled().events {
        match e.kind {
            EventKind::CodeRegression | EventKind::GcRegression => {
                let endpoint = &e.endpoints[0];
                let flagged: Vec<&String> = e
                    .runs
                    .iter()
                    .filter(|r| verdict_of(endpoint, r) == Verdict::Regression)
                    .collect();
                assert_eq!(
                    verdict_of(endpoint, &e.runs[0]),
                    Verdict::Regression,
                    "{endpoint}: the first run of {:?} is not flagged",
                    e.kind
                );
                assert_eq!(
                    flagged.len(),
                    e.runs.len(),
                    "{endpoint}: only {flagged:?} of {:?}",
                    e.runs
                );
                // Back within the band once fixed.
                let ea = bundled_analysis()
                    .endpoints
                    .iter()
                    .find(|x| &x.id == endpoint)
                    .unwrap();
                let last = ea
                    .points
                    .iter()
                    .position(|p| &p.run == e.runs.last().unwrap())
                    .unwrap();
                if !e.open {
                    assert_eq!(
                        ea.points[last + 1].verdict,
                        Verdict::Ok,
                        "{endpoint} after the fix"
                    );
                }
            }
            EventKind::NoisyNeighbour => {
                assert_eq!(e.endpoints.len(), 12);
                for endpoint in &e.endpoints {
                    assert_ne!(
                        verdict_of(endpoint, &e.runs[0]),
                        Verdict::Regression,
                        "{endpoint} in {}",
                        e.runs[0]
                    );
                }
                // …while single rounds cross the line: noise for the naive rule.
                let rounds_over: usize = bundled_analysis()
                    .endpoints
                    .iter()
                    .filter_map(|ea| ea.points.iter().find(|p| p.run == e.runs[0]))
                    .filter_map(|p| p.baseline_p99_ms.map(|b| (p, b)))
                    .map(|(p, b)| p.round_p99_ms.iter().filter(|r| **r > b * 1.15).count())
                    .sum();
                assert!(
                    rounds_over >= 6,
                    "{rounds_over} rounds over the line in {}",
                    e.runs[0]
                );
            }
            _ => {}
        }
    }
    // The improvement is seen as one.
    let imp = event(EventKind::Improvement, "order-detail");
    assert_eq!(
        verdict_of("order-detail", &imp.runs[0]),
        Verdict::Improvement
    );
}

/// Runs over the line under the naive rule (round 1) and the median rule,
/// computed here from the rounds and the analysis' baselines.
fn runs_over_the_line(analysis: &Analysis) -> (usize, usize) {
    let mut naive = 0;
    let mut med = 0;
    for ea in &analysis.endpoints {
        for p in &ea.points {
            let Some(b) = p.baseline_p99_ms else { continue };
            if p.round_p99_ms[0] > b * ea.threshold_ratio {
                naive += 1;
            }
            if p.verdict == Verdict::Regression {
                med += 1;
            }
        }
    }
    (naive, med)
}

#[test]
fn the_naive_rule_cries_wolf_and_the_median_rule_does_not() {
    let analysis = bundled_analysis();
    let (naive, med) = runs_over_the_line(analysis);
    let weeks = 26.0;
    eprintln!(
        "runs over the line: naive {naive} ({:.1}/week), median {med}",
        naive as f64 / weeks
    );
    assert!(naive as f64 / weeks >= 3.0, "naive: {naive}");
    assert!(naive >= 3 * med, "naive {naive} vs median {med}");

    // The same story in perfdash's own alarm accounting, with the labels.
    let totals = &analysis.alarms.totals;
    let (n, m) = (&totals[&Policy::Naive], &totals[&Policy::Median]);
    eprintln!("alarms: naive {n:?}\nmedian {m:?}");
    assert!(n.alarms_per_week >= 2.0, "{n:?}");
    assert!(
        n.noise * 10 >= (n.real + n.noise) * 7,
        "most naive alarms are noise: {n:?}"
    );
    assert!(n.alarms >= 3 * m.alarms);
    assert!(
        m.noise * 10 <= n.noise,
        "the median rule's false alarms are rare: {m:?}"
    );
    assert_eq!(m.detected, m.regressions, "{m:?}");
    // Every labelled regression is detected by the median rule at its onset.
    assert!(!analysis.alarms.regressions.is_empty());
    for r in &analysis.alarms.regressions {
        let d = r
            .detections
            .iter()
            .find(|d| d.policy == Policy::Median)
            .unwrap();
        assert_eq!(d.delay_runs, Some(0), "{r:?}");
    }
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Triage {
    run: String,
    endpoint: String,
    label: String,
    note: String,
    author: String,
    date: toml::value::Datetime,
    // The follow-up a real-regression label carries (docs/alarms.md).
    #[allow(dead_code)]
    owner: Option<String>,
    #[allow(dead_code)]
    issue: Option<String>,
    #[allow(dead_code)]
    status: Option<String>,
}

fn read_labels(root: &Path) -> Vec<Triage> {
    tree(&root.join("triage"))
        .into_iter()
        .map(|(name, bytes)| {
            let t: Triage = toml::from_str(std::str::from_utf8(&bytes).unwrap()).unwrap();
            assert_eq!(name, format!("{}--{}.toml", t.run, t.endpoint));
            t
        })
        .collect()
}

#[test]
fn triage_labels_name_real_alarms_and_leave_the_last_week_open() {
    let root = bundled_root();
    let labels = read_labels(&root);
    let analysis = bundled_analysis();
    assert_eq!(
        analysis.alarms.labels.len(),
        labels.len(),
        "perfdash reads every label"
    );
    for l in &labels {
        assert!(
            ["real", "noise", "accepted"].contains(&l.label.as_str()),
            "{l:?}"
        );
        assert!(!l.note.is_empty() && !l.author.is_empty());
        let date = NaiveDate::parse_from_str(&l.date.to_string(), "%Y-%m-%d").unwrap();
        assert_eq!(date.weekday(), Weekday::Tue);
        let ea = analysis
            .endpoints
            .iter()
            .find(|e| e.id == l.endpoint)
            .expect("known endpoint");
        let point = ea
            .points
            .iter()
            .find(|p| p.run == l.run)
            .expect("known run");
        assert!(date > point.started_at.date_naive());
    }
    // Each traced change is labelled at its onset, with its cause.
    for e in bundled().events.iter().filter(|e| e.label != "noise") {
        let onset = labels
            .iter()
            .find(|l| l.run == e.runs[0] && l.endpoint == e.endpoints[0])
            .unwrap_or_else(|| panic!("no label at the onset of {e:?}"));
        assert_eq!(onset.label, e.label);
        assert_eq!(onset.note, e.note);
    }
    // No label outside a real event says `real`.
    for l in labels.iter().filter(|l| l.label == "real") {
        assert!(
            bundled().events.iter().any(|e| e.label == "real"
                && e.runs.contains(&l.run)
                && e.endpoints.contains(&l.endpoint)),
            "{l:?}"
        );
    }
    // The labels come from the story (the generator's record of what it
    // injected and its own baseline walk), not from perfdash's alarms; so
    // this is a real check that the analysis raises no alarm the story does
    // not account for: every alarm of the default rule, of persistence and
    // of the old round-1 rule is labelled, except those reviewed after the
    // last run.
    let last_run = analysis.runs.last().unwrap().started_at.date_naive();
    let untriaged: Vec<&crate::analyse::alarms::Alarm> = analysis
        .alarms
        .alarms
        .iter()
        .filter(|a| a.label.is_none())
        .collect();
    assert!(
        untriaged
            .iter()
            .any(|a| review_date(a.started_at.date_naive()) > last_run),
        "the last runs' alarms wait for the next review"
    );
    for a in untriaged.iter().filter(|a| {
        matches!(
            a.policy,
            Policy::Naive | Policy::Median | Policy::Persistent
        )
    }) {
        assert!(
            review_date(a.started_at.date_naive()) > last_run,
            "an alarm the story does not explain: {a:?}"
        );
    }
}

/// The labels are a function of the story alone: the same options give
/// the same labels without any file being written or read.
#[test]
fn triage_labels_come_from_the_plan_alone() {
    let labels = triage_labels(&plan(&DemoOptions::default()));
    assert_eq!(labels.len(), bundled().triage_labels);
    let written = read_labels(&bundled_root());
    let names: Vec<(String, String, String)> = labels
        .iter()
        .map(|l| {
            (
                l.run.clone(),
                l.endpoint.clone(),
                l.label.as_str().to_string(),
            )
        })
        .collect();
    let read: Vec<(String, String, String)> = written
        .iter()
        .map(|l| (l.run.clone(), l.endpoint.clone(), l.label.clone()))
        .collect();
    assert_eq!(names, read);
}

fn parse_folded(text: &str) -> Vec<(String, u64)> {
    text.lines()
        .map(|l| {
            let (s, n) = l.rsplit_once(' ').unwrap();
            (s.to_string(), n.parse().unwrap())
        })
        .collect()
}

fn share(lines: &[(String, u64)], pred: impl Fn(&str) -> bool) -> f64 {
    let total: u64 = lines.iter().map(|(_, n)| n).sum();
    lines
        .iter()
        .filter(|(s, _)| pred(s))
        .map(|(_, n)| n)
        .sum::<u64>() as f64
        / total as f64
}

#[test]
fn profiles_exist_for_regressions_and_their_baselines_and_show_the_cause() {
    let root = bundled_root();
    let read = |run: &str, endpoint: &str| -> Vec<(String, u64)> {
        let path = root
            .join("runs")
            .join(run)
            .join(endpoint)
            .join("flame.cpu.collapsed");
        parse_folded(
            &std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
        )
    };
    let runs: Vec<String> = bundled_analysis()
        .runs
        .iter()
        .map(|r| r.id.clone())
        .collect();
    let before = |run: &str| runs[runs.iter().position(|r| r == run).unwrap() - 1].clone();

    let inv = event(EventKind::CodeRegression, "inventory-lookup");
    let (base, reg) = (
        read(&before(&inv.runs[0]), "inventory-lookup"),
        read(&inv.runs[0], "inventory-lookup"),
    );
    let business = |s: &str| s.contains("com/acme/");
    assert!(share(&reg, business) > share(&base, business) + 0.1);
    assert!(
        reg.iter()
            .any(|(s, _)| s.contains("com/acme/inventory/InventoryRepository.scanAllSkus"))
    );
    assert!(!base.iter().any(|(s, _)| s.contains("scanAllSkus")));

    let gc = event(EventKind::GcRegression, "create-order");
    let (base, reg) = (
        read(&before(&gc.runs[0]), "create-order"),
        read(&gc.runs[0], "create-order"),
    );
    let g1 = |s: &str| {
        s.starts_with("start_thread;thread_native_entry;Thread::call_run;WorkerThread::run")
            || s.contains("VM_G1CollectForAllocation")
    };
    assert!(
        share(&reg, g1) > share(&base, g1) + 0.1,
        "{} → {}",
        share(&base, g1),
        share(&reg, g1)
    );

    // Every profile is a folded file with JVM application, GC and JIT threads.
    let mut count = 0;
    for (rel, bytes) in tree(&root)
        .into_iter()
        .filter(|(p, _)| p.ends_with("flame.cpu.collapsed"))
    {
        let lines = parse_folded(std::str::from_utf8(&bytes).unwrap());
        assert!(lines.len() < 400, "{rel}: {} lines", lines.len());
        assert!(
            share(&lines, |s| s.starts_with("java/lang/Thread.run")) > 0.4,
            "{rel}"
        );
        assert!(
            share(&lines, |s| s
                .contains("G1ParScanThreadState::trim_queue_to_threshold"))
                > 0.0,
            "{rel}"
        );
        assert!(
            share(&lines, |s| s
                .contains("CompileBroker::compiler_thread_loop"))
                > 0.0,
            "{rel}"
        );
        count += 1;
    }
    assert_eq!(count, bundled().profiles);
}

#[test]
fn short_histories_leave_later_events_out() {
    let dir = tempfile::tempdir().unwrap();
    let opts = DemoOptions {
        weeks: 9,
        profiles: true,
        ..DemoOptions::default()
    };
    let report = generate(dir.path(), &opts).unwrap();
    assert_eq!(report.runs, 27);
    let kinds: Vec<EventKind> = report.events.iter().map(|e| e.kind).collect();
    assert!(kinds.contains(&EventKind::CodeRegression)); // inventory-lookup starts in week 8
    assert!(!kinds.contains(&EventKind::GcRegression)); // create-order's starts in week 12
    let inv = report
        .events
        .iter()
        .find(|e| e.kind == EventKind::CodeRegression)
        .unwrap();
    assert_eq!(
        inv.runs.len(),
        1,
        "cut at the end of the history (week 8, Friday, is the last run)"
    );
    assert!(inv.open);
    let loaded = load_archive(dir.path()).unwrap();
    assert_eq!(loaded.archive.runs.len(), 27);
}

#[test]
fn the_committed_archive_is_what_the_generator_writes() {
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("archive");
    if !committed.join("runs").is_dir() {
        eprintln!("skipped: archive/ not present (it is not part of the packaged crate)");
        return;
    }
    let expected = tree(&bundled_root());
    let actual = tree(&committed);
    let missing: Vec<&String> = expected
        .keys()
        .filter(|k| !actual.contains_key(*k))
        .collect();
    let extra: Vec<&String> = actual
        .keys()
        .filter(|k| !expected.contains_key(*k))
        .collect();
    let changed: Vec<&String> = expected
        .iter()
        .filter(|(k, v)| actual.get(*k).is_some_and(|a| a != *v))
        .map(|(k, _)| k)
        .collect();
    assert!(
        missing.is_empty() && extra.is_empty() && changed.is_empty(),
        "archive/ differs from the generator; regenerate it with `cargo run --example gen_demo`.\n\
         missing {missing:?}\nextra {extra:?}\nchanged {changed:?}"
    );
}

#[test]
fn step_load_runs_show_the_capacity_story() {
    use crate::analyse::verdict::CapacityVerdict;
    let analysis = bundled_analysis();
    assert_eq!(bundled().step_files, 13 * steps::CAPACITY.len());
    let ids: Vec<&str> = analysis.capacity.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(ids, ["inventory-reserve", "order-detail", "order-search"]);
    for e in &analysis.capacity {
        assert_eq!(e.runs.len(), 13, "{}", e.id);
        for p in &e.runs {
            // Every step of the ladder is found, with its CPU joined.
            assert_eq!(
                p.series.steps.len(),
                steps::THREADS.len(),
                "{} {}",
                e.id,
                p.run
            );
            assert!(p.series.steps.iter().all(|s| s.cpu_pct.is_some()));
            assert!(p.knee.knee_rps.is_some(), "{} {}", e.id, p.run);
        }
        let regressions: Vec<(&str, Option<&str>)> = e
            .runs
            .iter()
            .filter(|p| p.verdict == CapacityVerdict::Regression)
            .map(|p| (p.run.as_str(), p.release.as_deref()))
            .collect();
        if e.id == "inventory-reserve" {
            // From the 1.7.0 run on: the knee fell by about 30%.
            assert_eq!(regressions.len(), 6);
            assert_eq!(regressions[0].1, Some("1.7.0"));
            let first = e
                .runs
                .iter()
                .find(|p| p.verdict == CapacityVerdict::Regression)
                .unwrap();
            let ratio = first.ratio.unwrap();
            assert!((0.6..0.8).contains(&ratio), "{ratio}");
        } else {
            assert!(regressions.is_empty(), "{}: {regressions:?}", e.id);
        }
    }
    // The GC storm in one order-detail step is read as noise, not a break.
    let detail = &analysis.capacity[1];
    let noisy: Vec<(&str, &[u32])> = detail
        .runs
        .iter()
        .filter(|p| !p.knee.noise_steps.is_empty())
        .map(|p| (p.run.as_str(), p.knee.noise_steps.as_slice()))
        .collect();
    assert_eq!(noisy.len(), 1, "{noisy:?}");
    assert_eq!(noisy[0].1, [3]);
}

/// Issue 6, the other half of `analyse::changepoint`'s "change points line
/// up with the injected events" (every injected shift is found): every
/// change point found on the bundled archive is an injected shift or fix
/// (within one run), or sits on the endpoint whose level drifts slowly.
#[test]
fn every_change_point_on_the_bundled_archive_is_an_injected_shift() {
    let analysis = bundled_analysis();
    let report = bundled();
    let all_runs: Vec<&str> = analysis.runs.iter().map(|r| r.id.as_str()).collect();
    let pos = |id: &str| all_runs.iter().position(|r| *r == id).unwrap();
    let mut explained: Vec<(&str, usize)> = Vec::new();
    let mut drifting: Vec<&str> = Vec::new();
    for e in &report.events {
        match e.kind {
            EventKind::CodeRegression
            | EventKind::GcRegression
            | EventKind::AcceptedChange
            | EventKind::Improvement => {
                for endpoint in &e.endpoints {
                    explained.push((endpoint, pos(&e.runs[0])));
                    if !e.open {
                        explained.push((endpoint, pos(e.runs.last().unwrap()) + 1));
                    }
                }
            }
            EventKind::SlowDrift => drifting.extend(e.endpoints.iter().map(String::as_str)),
            _ => {}
        }
    }
    let mut found = 0;
    for e in &analysis.endpoints {
        for c in &e.change_points {
            found += 1;
            let at = pos(&c.run);
            assert!(
                drifting.contains(&e.id.as_str())
                    || explained
                        .iter()
                        .any(|&(id, i)| id == e.id && i.abs_diff(at) <= 1),
                "unexplained change point on {} at {}",
                e.id,
                c.run
            );
        }
    }
    assert!(found >= 7, "{found} change points");
}

/// `endpoints` beyond the story's 12 adds copies: ids `<id>-2`, … in
/// folder and settings, their own noise (not byte copies), the same
/// events (a noisy neighbour reaches every endpoint), and a history that
/// still loads cleanly.
#[test]
fn more_endpoints_are_copies_with_their_own_noise() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("archive");
    let report = generate(
        &root,
        &DemoOptions {
            weeks: 3,
            endpoints: 26,
            profiles: false,
            ..DemoOptions::default()
        },
    )
    .unwrap();
    assert_eq!(report.endpoints, 26);
    // The story's 12 alone have no services (the bundled archive's flat
    // overview).
    let twelve = dir.path().join("twelve");
    generate(
        &twelve,
        &DemoOptions {
            weeks: 1,
            profiles: false,
            ..DemoOptions::default()
        },
    )
    .unwrap();
    let settings = std::fs::read_to_string(twelve.join("perfdash.toml")).unwrap();
    assert!(!settings.contains("service ="), "{settings}");
    assert_eq!(report.round_files, 9 * 26 * 5);
    let loaded = load_archive(&root).unwrap();
    assert!(loaded.diagnostics.is_empty(), "{:?}", loaded.diagnostics);
    let ids = loaded.archive.endpoint_ids();
    assert_eq!(ids.len(), 26);
    for id in ["order-list-2", "cancel-order-3", "cart-checkout-3"] {
        assert!(ids.iter().any(|i| i == id), "{id} in {ids:?}");
    }
    assert!(!ids.iter().any(|i| i == "create-order-3"), "{ids:?}");
    let settings = std::fs::read_to_string(root.join("perfdash.toml")).unwrap();
    assert!(
        settings.contains("[endpoints.order-list-2]\nname = \"GET /api/orders (2)\""),
        "{settings}"
    );
    // Beyond the story's 12, each copy of the story is a service.
    let service = |id: &str| loaded.archive.settings.endpoint_service(id);
    assert_eq!(service("order-list"), Some("shop"));
    assert_eq!(service("order-list-2"), Some("shop-2"));
    assert_eq!(service("cancel-order-3"), Some("shop-3"));
    let run = loaded.archive.runs.first().unwrap();
    let p99 = |id: &str| run.endpoints[id].rounds[0].stats.p99_ms;
    assert_ne!(p99("order-list"), p99("order-list-2"));
    // Same story: the typical level of the copy is the original's.
    let level = |id: &str| {
        let per_run: Vec<f64> = loaded
            .archive
            .runs
            .iter()
            .map(|r| {
                median(
                    &r.endpoints[id]
                        .rounds
                        .iter()
                        .map(|x| x.stats.p99_ms)
                        .collect::<Vec<_>>(),
                )
                .unwrap()
            })
            .collect();
        median(&per_run).unwrap()
    };
    let ratio = level("order-list") / level("order-list-2");
    assert!((ratio - 1.0).abs() < 0.15, "{ratio}");
    let tree = tree(&root);
    assert_ne!(
        tree[&format!("runs/{}/order-list/round-1.json", run.id)],
        tree[&format!("runs/{}/order-list-2/round-1.json", run.id)]
    );
}

/// Issue 16: the figures docs/archive.md quotes from the bundled archive
/// are generated from it; when the archive or the analysis changes this
/// fails until `cargo run --example gen_demo` writes them again. The run
/// ids the demo's docs name must be runs of the archive, and each injected
/// event and release must be named with the runs it landed on.
#[test]
fn the_docs_quote_the_archive_as_it_is() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |rel: &str| std::fs::read_to_string(manifest.join(rel)).unwrap();
    let archive_md = read("docs/archive.md");
    let quoted = crate::doc_section::section(&archive_md, facts::SECTION)
        .expect("docs/archive.md has the generated `demo` section");
    assert_eq!(
        quoted,
        facts::facts(bundled(), bundled_analysis()),
        "docs/archive.md quotes figures the bundled archive no longer gives: \
         regenerate with `cargo run --example gen_demo`"
    );
    let runs: Vec<&str> = bundled_analysis()
        .runs
        .iter()
        .map(|r| r.id.as_str())
        .collect();
    // The parts of the docs about the demo (other parts show made-up ids).
    for (rel, from) in [
        ("docs/archive.md", "## The bundled demo archive"),
        ("docs/capacity.md", "## The demo archive"),
        ("docs/detection.md", "# "),
    ] {
        let text = read(rel);
        let part = &text[text.find(from).unwrap()..];
        for id in run_ids(part) {
            assert!(
                runs.contains(&id),
                "{rel} names {id}, which is no run of the bundled archive"
            );
        }
    }
    // docs/detection.md: "`changepoint` raised more alarms than `median`
    // and caught every labelled regression one run later (median delay 1
    // run against 0)".
    let totals = &bundled_analysis().alarms.totals;
    let (cp, med) = (&totals[&Policy::ChangePoint], &totals[&Policy::Median]);
    assert!(cp.alarms > med.alarms, "{cp:?} {med:?}");
    assert_eq!(cp.detected, cp.regressions);
    assert_eq!(
        (cp.median_delay_runs, med.median_delay_runs),
        (Some(1.0), Some(0.0))
    );
    let demo_section = archive_md[archive_md.find("## The bundled demo archive").unwrap()..]
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    for e in &bundled().events {
        // An event over the whole history is named as such; an open one
        // runs "from … on".
        let (first, last) = (&e.runs[0], e.runs.last().unwrap());
        let named = |run: &str| demo_section.contains(run);
        assert!(
            (first == runs[0] || named(first)) && (e.open || named(last)),
            "docs/archive.md does not name where {:?} on {:?} landed ({first} … {last})",
            e.kind,
            e.endpoints
        );
    }
    for r in &bundled_analysis().runs {
        if let Some(release) = &r.meta.release {
            assert!(
                demo_section.contains(&format!("{release} `{}`", r.id)),
                "docs/archive.md should name release {release} as run {}",
                r.id
            );
        }
    }
}

/// Run ids in the demo's form, `2026-07-31T0301Z`.
fn run_ids(text: &str) -> Vec<&str> {
    let b = text.as_bytes();
    let shape = "dddd-dd-ddTddddZ";
    (0..b.len().saturating_sub(shape.len() - 1))
        .filter(|&i| {
            shape.bytes().enumerate().all(|(k, c)| match c {
                b'd' => b[i + k].is_ascii_digit(),
                c => b[i + k] == c,
            })
        })
        .map(|i| &text[i..i + shape.len()])
        .collect()
}

#[test]
fn a_longer_history_ends_where_the_bundled_one_ends() {
    // `perfdash demo --weeks 60` used to date its runs until well after
    // today, and time trust took the newest for a clock set ahead.
    let dir = tempfile::tempdir().unwrap();
    let opts = DemoOptions {
        endpoints: 2,
        profiles: false,
        ..DemoOptions::default()
    }
    .with_weeks_ending_like_bundled(60);
    assert_eq!(opts.weeks, 60);
    let report = generate(dir.path(), &opts).unwrap();
    assert_eq!(report.runs, 180);
    let bundled_last = bundled_analysis().runs.last().unwrap().started_at;
    // The day after the bundled history's last run: any later "now" (the
    // wall clock today) trusts them too.
    let now = bundled_last + chrono::Duration::days(1);
    let loaded = crate::ingest::load_archive_with(
        dir.path(),
        &crate::ingest::LoadOptions {
            now: Some(now),
            ..Default::default()
        },
    )
    .unwrap();
    let runs = &loaded.archive.runs;
    assert_eq!(runs.len(), 180);
    // The same last day; the minutes after 03:00 are random draws, and a
    // longer history makes more of them before its last run.
    let last = runs.last().unwrap().started_at;
    assert_eq!(last.date_naive(), bundled_last.date_naive());
    assert!(last <= now, "{last} is after the build's now {now}");
    assert!(
        runs.iter().all(|r| r.untrusted_time.is_none()),
        "every run is dated before the build"
    );
    // The default length is the bundled archive itself.
    assert_eq!(
        DemoOptions::default().with_weeks_ending_like_bundled(26),
        DemoOptions::default()
    );
}
