//! Builders for the hand-made archives of unit tests, so that a new field
//! on a model type is added in one place rather than in every test file.
//!
//! Runs are 56 hours apart (three a week) from Monday 2026-01-05 03:00 UTC
//! and are named `run-000`, `run-001`, …; rounds are k6 summaries with only
//! their p99 set unless a test says otherwise.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, TimeZone, Utc};

use crate::config::Settings;
use crate::model::{Archive, EndpointRun, Round, RoundStats, Run, SourceFormat};

/// Round `number` (1-based) with the given p99 and nothing else.
pub(crate) fn round(number: u32, p99: f64) -> Round {
    round_with(
        number,
        RoundStats {
            p99_ms: p99,
            ..Default::default()
        },
    )
}

/// Round `number` with the given statistics.
pub(crate) fn round_with(number: u32, stats: RoundStats) -> Round {
    Round::new(
        number,
        format!("round-{number}.json"),
        SourceFormat::K6HandleSummary,
        stats,
    )
}

/// When run `i` started.
pub(crate) fn run_time(i: usize) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 5, 3, 0, 0).unwrap() + Duration::hours(56 * i as i64)
}

/// The id of run `i`.
pub(crate) fn run_id(i: usize) -> String {
    format!("run-{i:03}")
}

/// One endpoint's rounds in one run, numbered from 1, made by `make_round`.
pub(crate) fn endpoint_run(p99s: &[f64], make_round: fn(u32, f64) -> Round) -> EndpointRun {
    EndpointRun {
        rounds: p99s
            .iter()
            .enumerate()
            .map(|(k, &p99)| make_round(k as u32 + 1, p99))
            .collect(),
        ..Default::default()
    }
}

/// Run `i` with the given endpoints' round p99s.
pub(crate) fn run(i: usize, endpoints: &[(&str, &[f64])]) -> Run {
    Run {
        id: run_id(i),
        started_at: run_time(i),
        meta: Default::default(),
        endpoints: endpoints
            .iter()
            .map(|(id, p99s)| (id.to_string(), endpoint_run(p99s, round)))
            .collect::<BTreeMap<_, _>>(),
        capacity: BTreeMap::new(),
        problems: vec![],
        untrusted_time: None,
    }
}

/// An archive of these runs with default settings and no triage labels.
pub(crate) fn archive(runs: Vec<Run>) -> Archive {
    Archive {
        root: "archive".into(),
        settings: Settings::default(),
        runs,
        triage: vec![],
        annotations: Vec::new(),
    }
}

/// An archive in which every endpoint has every run: `(id, rounds per run)`.
pub(crate) fn archive_of(endpoints: &[(&str, Vec<Vec<f64>>)]) -> Archive {
    let n = endpoints.first().map_or(0, |(_, runs)| runs.len());
    archive(
        (0..n)
            .map(|i| {
                let this_run: Vec<(&str, &[f64])> = endpoints
                    .iter()
                    .map(|(id, runs)| (*id, runs[i].as_slice()))
                    .collect();
                run(i, &this_run)
            })
            .collect(),
    )
}

/// The bundled demo archive, generated once per test binary (it takes
/// seconds and every demo test reads it): the folder it is in, the
/// generator's report, and the analysis of the archive as loaded.
pub(crate) struct BundledDemo {
    dir: tempfile::TempDir,
    pub(crate) report: crate::demo::DemoReport,
    pub(crate) analysis: crate::analyse::Analysis,
}

impl BundledDemo {
    pub(crate) fn root(&self) -> std::path::PathBuf {
        self.dir.path().join("archive")
    }
}

pub(crate) fn bundled_demo() -> &'static BundledDemo {
    static CELL: std::sync::OnceLock<BundledDemo> = std::sync::OnceLock::new();
    CELL.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("archive");
        let report = crate::demo::generate(&root, &crate::demo::DemoOptions::default()).unwrap();
        let loaded = crate::ingest::load_archive(&root).unwrap();
        let analysis = crate::analyse::analyse(&loaded.archive, loaded.diagnostics);
        BundledDemo {
            dir,
            report,
            analysis,
        }
    })
}

/// Writes `bytes` to `path` and puts `mtime` back as its modification
/// time, as `touch -r` does (its change time still moves).
pub(crate) fn write_with_mtime(
    path: &std::path::Path,
    bytes: impl AsRef<[u8]>,
    mtime: std::time::SystemTime,
) {
    std::fs::write(path, bytes).unwrap();
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
}

/// Every round of `endpoint` in run `i` of `archive` failed: 1000
/// requests, all errors (a failed run).
pub(crate) fn fail_rounds(archive: &mut Archive, i: usize, endpoint: &str) {
    let rounds = &mut archive.runs[i]
        .endpoints
        .get_mut(endpoint)
        .expect("the endpoint is in the run")
        .rounds;
    let mut failed = rounds.to_vec();
    for r in &mut failed {
        r.stats.count = Some(1000);
        r.stats.error_rate = Some(1.0);
    }
    *rounds = failed.into();
}
