//! The fast gate (`perfdash check`: the cache, and only the gated
//! policy's alarms, issue 18.4) answers exactly what the full analysis
//! answers: for every run of the bundled demo archive (and of a second,
//! differently seeded history), every policy, with and without
//! `--allow-insufficient`, the report in every output format and the
//! exit code are byte for byte those of `check` on a full analysis.

mod common;

use std::path::{Path, PathBuf};

use perfdash::analyse::gate::{CheckOptions, RunSelector, check};
use perfdash::analyse::{AnalyseOptions, Analysis, Policy, Scope, analyse, analyse_scoped};
use perfdash::cli::outcome_exit_code;
use perfdash::ingest::{LoadOptions, load_archive_with};
use perfdash::pipeline::{GateOptions, Gated, gate};
use perfdash::report::check::{CheckFormat, render};

fn bundled_archive() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("archive")
}

/// The day after the bundled history's last run: the same time trust on
/// any day the tests run.
fn now() -> chrono::DateTime<chrono::Utc> {
    "2026-12-01T00:00:00Z".parse().unwrap()
}

/// The bundled archive, loaded and fully analysed once per test binary.
fn bundled_full() -> &'static (
    perfdash::model::Archive,
    Vec<perfdash::error::Diagnostic>,
    Analysis,
) {
    static CELL: std::sync::OnceLock<(
        perfdash::model::Archive,
        Vec<perfdash::error::Diagnostic>,
        Analysis,
    )> = std::sync::OnceLock::new();
    CELL.get_or_init(|| {
        let loaded = load_now(&bundled_archive());
        let full = analyse(&loaded.archive, loaded.diagnostics.clone());
        (loaded.archive, loaded.diagnostics, full)
    })
}

fn load_now(archive: &Path) -> perfdash::ingest::Loaded {
    load_archive_with(
        archive,
        &LoadOptions {
            now: Some(now()),
            ..Default::default()
        },
    )
    .unwrap()
}

/// Every output of one check: the exit code, then each format's bytes.
fn outputs(report: &perfdash::analyse::gate::CheckReport, analysis: &Analysis) -> Vec<String> {
    let code = outcome_exit_code(report.outcome);
    let mut out = vec![code.to_string()];
    for format in [
        CheckFormat::Text,
        CheckFormat::Json,
        CheckFormat::Markdown,
        CheckFormat::Junit,
    ] {
        out.push(render(report, analysis, format, code));
    }
    out
}

/// Compares the gate's analysis ([`Scope::Gate`]) with the full one on
/// every run of `archive`, under every policy, with and without
/// `--allow-insufficient`. Returns how many checks were compared.
fn compare_every_run(
    archive: &perfdash::model::Archive,
    diagnostics: &[perfdash::error::Diagnostic],
    full: &Analysis,
) -> usize {
    let mut selectors = vec![RunSelector::Latest];
    selectors.extend(full.runs.iter().map(|r| RunSelector::Id(r.id.clone())));
    let mut compared = 0;
    for policy in Policy::ALL {
        let gated = analyse_scoped(
            archive,
            diagnostics.to_vec(),
            Scope::Gate(policy),
            &AnalyseOptions::default(),
        );
        for allow_insufficient in [false, true] {
            let options = CheckOptions {
                allow_insufficient,
                ..CheckOptions::default()
            };
            for which in &selectors {
                let expected = check(full, which, policy, &options).unwrap();
                let got = check(&gated, which, policy, &options).unwrap();
                assert_eq!(
                    outputs(&got, &gated),
                    outputs(&expected, full),
                    "{which:?} under {policy:?}, allow_insufficient {allow_insufficient}"
                );
                compared += 1;
            }
        }
    }
    compared
}

/// `perfdash check`'s library call on the latest run of the bundled
/// archive, with the cache of `site`, against `check` on the full
/// analysis without a cache.
fn gate_latest_like_the_full_analysis(site: &Path, policy: Policy) -> Gated {
    let options = CheckOptions::default();
    let full = &bundled_full().2;
    let mut expected = check(full, &RunSelector::Latest, policy, &options).unwrap();
    // The gate compares the checked run's profiles itself, reading them
    // from the archive as the cache left them out: as the site did.
    perfdash::analyse::gate::profiles_from(&mut expected, full);
    assert!(
        expected.endpoints.iter().any(|e| !e.profiles.is_empty()),
        "the bundled latest run has an attributed regression"
    );
    let gated = gate_latest(&bundled_archive(), site, policy);
    assert_eq!(
        outputs(&gated.report, &gated.analysis),
        outputs(&expected, full),
        "{policy:?}"
    );
    gated
}

fn gate_latest(archive: &Path, site: &Path, policy: Policy) -> Gated {
    gate(&GateOptions {
        archive: archive.to_path_buf(),
        run: RunSelector::Latest,
        base_commit: None,
        policy: Some(policy),
        check: CheckOptions::default(),
        warmup: None,
        site: Some(site.to_path_buf()),
        now: Some(now()),
    })
    .unwrap()
}

#[test]
fn the_gate_judges_every_run_of_the_bundled_archive_like_the_full_analysis() {
    let (archive, diagnostics, full) = bundled_full();
    let compared = compare_every_run(archive, diagnostics, full);
    // 78 runs and the latest, five policies, two settings.
    assert_eq!(compared, 79 * 5 * 2);
}

#[test]
fn the_gate_judges_a_differently_seeded_history_like_the_full_analysis() {
    let dir = tempfile::tempdir().unwrap();
    let archive = dir.path().join("archive");
    let opts = perfdash::demo::DemoOptions {
        seed: 7,
        endpoints: 4,
        profiles: false,
        ..Default::default()
    }
    .with_weeks_ending_like_bundled(30);
    perfdash::demo::generate(&archive, &opts).unwrap();
    let loaded = load_now(&archive);
    let full = analyse(&loaded.archive, loaded.diagnostics.clone());
    assert_eq!(
        compare_every_run(&loaded.archive, &loaded.diagnostics, &full),
        91 * 5 * 2
    );
}

#[test]
fn the_gate_reads_the_same_from_a_cold_and_a_warm_cache() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    let cache = dir.path().join(".perfdash-cache").join("site");
    let cold = gate_latest_like_the_full_analysis(&site, Policy::Median);
    assert_eq!(cold.counts.cached, 0, "nothing cached yet");
    assert!(cold.counts.read > 0);
    assert!(cold.notices.is_empty(), "{:?}", cold.notices);
    // The gate saved the cache a build of `site` would keep.
    let runs = std::fs::read_dir(&cache)
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            name.to_string_lossy().starts_with("run-")
        })
        .count();
    assert_eq!(runs, 78, "one cache file per run");
    for policy in [Policy::Median, Policy::ChangePoint] {
        let warm = gate_latest_like_the_full_analysis(&site, policy);
        assert_eq!(warm.counts.read, 0, "every round from the cache");
        assert_eq!(warm.counts.cached, cold.counts.read);
        assert!(
            warm.counts.folders_as_listed > 78,
            "and the folders listed from the runs' records: {:?}",
            warm.counts
        );
    }
    assert!(!site.exists(), "the gate writes no site");
}

#[test]
fn a_damaged_cache_costs_time_and_says_so_but_never_changes_the_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    let cache = dir.path().join(".perfdash-cache").join("site");
    gate_latest_like_the_full_analysis(&site, Policy::Persistent);
    // Change a byte of every run record (past its header, where the
    // rounds and the file entries are): its checksum no longer matches, so
    // the record is ignored and the run's files read again.
    let mut records = 0;
    for entry in std::fs::read_dir(&cache).unwrap() {
        let path = entry.unwrap().path();
        if !path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("run-")
        {
            continue; // the index
        }
        let mut bytes = std::fs::read(&path).unwrap();
        let at = bytes.len() / 2;
        bytes[at] ^= 0x5a;
        std::fs::write(&path, bytes).unwrap();
        records += 1;
    }
    let damaged = gate_latest_like_the_full_analysis(&site, Policy::Persistent);
    assert_eq!(damaged.counts.cached, 0);
    // The bundled archive's files are old enough for run records.
    assert_eq!(records, 78);
    assert_eq!(
        damaged
            .notices
            .iter()
            .filter(|n| n.contains("ignored the run record"))
            .count(),
        records,
        "{:?}",
        damaged.notices
    );
    // … and the refreshed cache is whole again.
    let again = gate_latest_like_the_full_analysis(&site, Policy::Persistent);
    assert_eq!(again.counts.read, 0);
    assert!(again.notices.is_empty(), "{:?}", again.notices);
}

#[test]
fn a_cache_made_for_other_files_is_not_used() {
    // The cache of a site built from another archive (same run ids, other
    // bytes): keyed by content, none of it applies.
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    let other = dir.path().join("other");
    perfdash::demo::generate(
        &other,
        &perfdash::demo::DemoOptions {
            seed: 11,
            profiles: false,
            ..Default::default()
        },
    )
    .unwrap();
    gate_latest(&other, &site, Policy::Median);
    let gated = gate_latest_like_the_full_analysis(&site, Policy::Median);
    assert_eq!(
        gated.counts.cached, 0,
        "no entry of the other archive's files"
    );
}

/// A gate does not parse the profiles of runs known by their record
/// (nothing it reports comes from stacks). That is sound only because a
/// run whose profile has a problem gets no record: its problem is found
/// and reported on every check, warm or cold.
#[test]
fn a_run_with_a_broken_profile_is_read_again_by_every_gate_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let archive = dir.path().join("archive");
    common::copy_dir(&bundled_archive(), &archive);
    let latest = bundled_full().0.runs.last().unwrap().id.clone();
    let profile = archive.join(format!("runs/{latest}/price-quote/flame.cpu.collapsed"));
    assert!(profile.is_file(), "the bundled latest run has a profile");
    std::fs::write(&profile, "main;handle;query not-a-count\n").unwrap();
    // Old enough to be known by stat (files changed in the last 2 s are not).
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let site = dir.path().join("site");
    let named = |g: &Gated| {
        g.analysis
            .diagnostics
            .iter()
            .filter(|d| d.path.ends_with("price-quote/flame.cpu.collapsed"))
            .count()
    };
    let cold = gate_latest(&archive, &site, Policy::Median);
    let warm = gate_latest(&archive, &site, Policy::Median);
    assert_eq!(cold.counts.runs_by_stat, 0);
    assert_eq!(
        warm.counts.runs_by_stat, 77,
        "every run but the one with the broken profile"
    );
    assert!(named(&cold) > 0, "{:?}", cold.analysis.diagnostics);
    assert_eq!(named(&warm), named(&cold));
    assert_eq!(
        outputs(&warm.report, &warm.analysis),
        outputs(&cold.report, &cold.analysis)
    );
}

/// A gate computes the evidence (the rounds' band, GC rounds, the shift
/// and its Hodges–Lehmann interval) of the checked run's points only
/// (issue 18: it was an eighth of a warm `check`). `check` shows only
/// that run's band (the pull-request comment) and never serialises a run
/// point, so every output stays the full analysis' own; the other points'
/// evidence is left empty, which this test pins down so that a consumer
/// of another point's evidence in `check` is noticed.
#[test]
fn the_gate_computes_the_evidence_of_the_checked_run_only() {
    let (archive, diagnostics, full) = bundled_full();
    let mut selectors = vec![RunSelector::Latest];
    selectors.extend(full.runs.iter().map(|r| RunSelector::Id(r.id.clone())));
    let options = CheckOptions::default();
    let mut with_evidence = 0;
    for which in &selectors {
        let gated = analyse_scoped(
            archive,
            diagnostics.to_vec(),
            Scope::Gate(Policy::Median),
            &AnalyseOptions {
                checked_run: Some(which.clone()),
                ..Default::default()
            },
        );
        let expected = check(full, which, Policy::Median, &options).unwrap();
        let got = check(&gated, which, Policy::Median, &options).unwrap();
        assert_eq!(outputs(&got, &gated), outputs(&expected, full), "{which:?}");
        for (g, f) in gated.endpoints.iter().zip(&full.endpoints) {
            let gated_points = g.points.iter().chain(&g.branch_points);
            for (gp, fp) in gated_points.zip(f.points.iter().chain(&f.branch_points)) {
                assert_eq!(gp.run, fp.run);
                if gp.run == got.run {
                    assert!(gp.evidence.band.is_some(), "{} in {}", g.id, gp.run);
                    assert_eq!(gp.evidence, fp.evidence, "{} in {}", g.id, gp.run);
                    with_evidence += 1;
                } else {
                    assert_eq!(
                        gp.evidence,
                        perfdash::analyse::evidence::Evidence::not_computed(),
                        "{} in {}, checking {which:?}",
                        g.id,
                        gp.run
                    );
                }
            }
        }
    }
    assert!(with_evidence >= selectors.len(), "{with_evidence}");
}
