//! `perfdash record`: files one run's outputs into an archive.
//!
//! Besides `build`'s cache, the only code that writes near an archive, and
//! only a new `runs/<run-id>/`: every file is first read with the readers
//! `build` uses ([`crate::ingest::read_round_file`]), and one bad file
//! refuses the whole run before anything is written. The run folder is
//! assembled in a hidden temporary folder inside `runs/` (which `build`
//! ignores) and renamed into place, so a reader sees the whole run or none
//! of it; an existing run is never replaced.

pub mod ci;
pub mod profile;
pub mod rounds;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};

use crate::error::{Diagnostic, Error};
use crate::ingest::{
    ROUND_EXTENSIONS, RUNS_DIR, max_round_number, parse_round_file_name, parse_run_meta,
};

pub use ci::CiFacts;

/// The run metadata file written into the new run.
const RUN_META_FILE: &str = "run.toml";

/// What to record.
#[derive(Debug, Clone)]
pub struct RecordRequest {
    /// The archive root; created with its `runs/` when missing.
    pub archive: PathBuf,
    /// The endpoint every file belongs to; `None`: run-level files that
    /// hold several endpoints, split by the `[raw] split_tag` tag.
    pub endpoint: Option<String>,
    /// The round files, in round order unless all are named `round-<n>…`.
    pub files: Vec<PathBuf>,
    /// When the run started: gives the run id and `started_at`.
    pub started_at: DateTime<Utc>,
    /// A run id chosen by hand instead of the one made from `started_at`.
    pub id: Option<String>,
    /// What the CI system says about the job.
    pub ci: Option<CiFacts>,
    /// The machine the test ran on (`host` in run.toml).
    pub host: Option<String>,
    /// `--set key=value` pairs, in order; later ones win, and they win
    /// over the CI facts and the host.
    pub sets: Vec<(String, String)>,
}

/// A recorded run.
#[derive(Debug)]
pub struct Recorded {
    pub id: String,
    /// `<archive>/runs/<id>`.
    pub dir: PathBuf,
    /// The round files copied in.
    pub files: usize,
    /// What the readers noted about files they accepted (shown, not fatal).
    pub notes: Vec<Diagnostic>,
}

/// The run id `perfdash record` gives a run started at `t`: the archive's
/// usual `2026-05-04T0300Z` (docs/archive.md), which sorts by time and
/// which `build` reads back as the start time.
pub fn run_id(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%dT%H%MZ").to_string()
}

/// Parses `key=value` for `--set`. Keys are `run.toml` keys: a bare key,
/// or `load.<key>` / `environment.<key>` for those tables.
pub fn parse_set(text: &str) -> Result<(String, String), String> {
    let (key, value) = text
        .split_once('=')
        .ok_or_else(|| format!("'{text}' is not key=value"))?;
    let key = key.trim();
    let parts: Vec<&str> = key.split('.').collect();
    let bare = |k: &str| {
        !k.is_empty()
            && k.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    let ok = match parts.as_slice() {
        [k] => bare(k),
        [table, k] => matches!(*table, "load" | "environment") && bare(k),
        _ => false,
    };
    if !ok {
        return Err(format!(
            "'{key}' is not a run.toml key: use letters, digits, '_' and '-', or load.<key> / environment.<key>"
        ));
    }
    if key == "started_at" {
        return Err("started_at comes from --started-at (or the time record starts)".into());
    }
    Ok((key.to_string(), value.to_string()))
}

/// The text of the new run's `run.toml`: `started_at`, the CI facts, the
/// host, then `--set` (which wins). Keys are sorted, so the same inputs
/// give the same bytes.
pub fn run_meta_text(req: &RecordRequest) -> String {
    let mut top: BTreeMap<String, String> = BTreeMap::new();
    let mut tables: BTreeMap<&str, BTreeMap<String, String>> = BTreeMap::new();
    if let Some(ci) = &req.ci {
        top.insert("ci_provider".into(), ci.provider.to_string());
        let facts = [
            ("commit", &ci.commit),
            ("branch", &ci.branch),
            ("ci_job", &ci.job_url),
            ("pull_request", &ci.pull_request),
        ];
        for (key, value) in facts {
            if let Some(v) = value {
                top.insert(key.into(), v.clone());
            }
        }
    }
    if let Some(host) = &req.host {
        top.insert("host".into(), host.clone());
    }
    for (key, value) in &req.sets {
        match key.split_once('.') {
            Some((table @ ("load" | "environment"), k)) => {
                tables
                    .entry(table)
                    .or_default()
                    .insert(k.to_string(), value.clone());
            }
            _ => {
                top.insert(key.clone(), value.clone());
            }
        }
    }
    let mut table = toml::Table::new();
    table.insert(
        "started_at".into(),
        toml::Value::String(crate::calendar::rfc3339(req.started_at)),
    );
    for (k, v) in top {
        table.insert(k, toml::Value::String(v));
    }
    for (name, values) in tables {
        let inner: toml::Table = values
            .into_iter()
            .map(|(k, v)| (k, toml::Value::String(v)))
            .collect();
        table.insert(name.to_string(), toml::Value::Table(inner));
    }
    let mut text = String::from("# Written by `perfdash record`.\n");
    text.push_str(&toml::to_string(&table).expect("strings and tables serialise"));
    text
}

/// Where each file goes inside the run folder: its own name when every
/// file is already named `round-<n>[.<label>].<ext>` (so `round-10` stays
/// round ten whatever order the shell listed it in), else
/// `round-<i>.<ext>` in the order given.
fn destination_names(files: &[PathBuf]) -> Result<Vec<String>, Vec<Error>> {
    let names: Vec<Option<String>> = files
        .iter()
        .map(|f| f.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    let all_round_names = names.iter().all(|n| {
        n.as_deref()
            .and_then(parse_round_file_name)
            .is_some_and(|r| !r.is_warmup())
    });
    let mut errors = Vec::new();
    let mut out = Vec::new();
    for (i, (file, name)) in files.iter().zip(&names).enumerate() {
        let Some(name) = name else {
            errors.push(Error::at(file, None, "not a file name"));
            continue;
        };
        if all_round_names {
            out.push(name.clone());
            continue;
        }
        let lower = name.to_ascii_lowercase();
        let extension = ROUND_EXTENSIONS
            .iter()
            .find(|ext| lower.ends_with(&format!(".{ext}")));
        match extension {
            Some(ext) => out.push(format!("round-{}.{ext}", i + 1)),
            None => errors.push(Error::at(
                file,
                None,
                format!(
                    "cannot tell a round file by this name: it should end in .{} (what it holds \
                     is read from its content)",
                    ROUND_EXTENSIONS.join(", .")
                ),
            )),
        }
    }
    let mut seen: BTreeMap<u32, &PathBuf> = BTreeMap::new();
    for (file, name) in files.iter().zip(&out) {
        if let Some(r) = parse_round_file_name(name)
            && let Some(first) = seen.insert(r.number, file)
        {
            errors.push(Error::at(
                file,
                None,
                format!(
                    "round {} is also {}: build would read only one of them",
                    r.number,
                    first.display()
                ),
            ));
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

/// Whether `name` can be a run or endpoint folder: one plain path
/// component that `build` reads (not hidden, not `run.toml`).
fn check_folder_name(what: &str, name: &str) -> Result<(), Error> {
    let plain = !name.is_empty()
        && !name.starts_with('.')
        && !name.contains(['/', '\\', '\0'])
        && name != RUN_META_FILE
        && name.trim() == name;
    if plain {
        Ok(())
    } else {
        Err(Error::Usage(format!(
            "{what} '{name}' cannot be a folder name in the archive (no '/', no leading '.')"
        )))
    }
}

/// Records a run. Every problem found before writing is returned at once
/// (one bad file never hides another), and then nothing has been written.
pub fn record(req: &RecordRequest) -> Result<Recorded, Vec<Error>> {
    if req.files.is_empty() {
        return Err(vec![Error::Usage("no round files to record".into())]);
    }
    let id = req.id.clone().unwrap_or_else(|| run_id(req.started_at));
    let mut errors = Vec::new();
    if let Err(e) = check_folder_name("run id", &id) {
        errors.push(e);
    }
    if let Some(endpoint) = &req.endpoint
        && let Err(e) = check_folder_name("endpoint", endpoint)
    {
        errors.push(e);
    }
    // The archive's own settings decide how files are read, as in build.
    let settings = crate::ingest::settings::load(&req.archive).map_err(|e| vec![e])?;
    let names = match destination_names(&req.files) {
        Ok(names) => names,
        Err(mut e) => {
            errors.append(&mut e);
            Vec::new()
        }
    };
    let max_round = max_round_number(settings.analysis.expected_rounds);
    for (file, name) in req.files.iter().zip(&names) {
        if let Some(r) = parse_round_file_name(name)
            && r.number > max_round
        {
            errors.push(Error::at(
                file,
                None,
                format!(
                    "round {} is above {max_round}, the largest build reads \
                     (max(expected_rounds × 10, 100))",
                    r.number
                ),
            ));
        }
    }
    let mut notes = Vec::new();
    for file in &req.files {
        match crate::ingest::read_round_file(&settings, file, file, req.endpoint.as_deref()) {
            Err(e) => errors.push(e),
            Ok(result) => {
                notes.extend(result.warnings);
                if result.groups.is_empty() {
                    errors.push(Error::at(
                        file,
                        None,
                        format!(
                            "no requests of the metric {} in it: nothing to measure",
                            settings.analysis.metric
                        ),
                    ));
                }
                for (group, outcome) in result.groups {
                    if let Err(message) = outcome {
                        let message = if group.is_empty() {
                            message
                        } else {
                            format!("endpoint {group}: {message}")
                        };
                        errors.push(Error::at(file, None, message));
                    }
                }
            }
        }
    }
    let meta = run_meta_text(req);
    if let Err(e) = parse_run_meta(&meta, Path::new(RUN_META_FILE)) {
        errors.push(e);
    }
    let runs = req.archive.join(RUNS_DIR);
    let target = runs.join(&id);
    if target.symlink_metadata().is_ok() {
        errors.push(Error::at(
            &target,
            None,
            "this run exists already and is never replaced: give another id with --id",
        ));
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    write_run(req, &runs, &target, &names, &meta)
        .map(|()| Recorded {
            id,
            dir: target,
            files: names.len(),
            notes,
        })
        .map_err(|e| vec![e])
}

/// Assembles the run in a hidden folder inside `runs/` and renames it to
/// `target`. On any failure the temporary folder is removed (dropped).
fn write_run(
    req: &RecordRequest,
    runs: &Path,
    target: &Path,
    names: &[String],
    meta: &str,
) -> Result<(), Error> {
    std::fs::create_dir_all(runs).map_err(|e| Error::io(runs, e))?;
    let staging = tempfile::Builder::new()
        .prefix(".perfdash-record-")
        .tempdir_in(runs)
        .map_err(|e| Error::io(runs, e))?;
    let meta_path = staging.path().join(RUN_META_FILE);
    std::fs::write(&meta_path, meta).map_err(|e| Error::io(&meta_path, e))?;
    let folder = match &req.endpoint {
        Some(endpoint) => {
            let dir = staging.path().join(endpoint);
            std::fs::create_dir(&dir).map_err(|e| Error::io(&dir, e))?;
            dir
        }
        None => staging.path().to_path_buf(),
    };
    for (file, name) in req.files.iter().zip(names) {
        let dest = folder.join(name);
        std::fs::copy(file, &dest).map_err(|e| Error::io(file, e))?;
        std::fs::File::open(&dest)
            .and_then(|f| f.sync_all())
            .map_err(|e| Error::io(&dest, e))?;
    }
    // Never over an existing run, even one a second `record` racing for
    // the same id moved in after the check above.
    crate::write::rename_no_replace(staging.path(), target).map_err(|e| {
        Error::at(
            target,
            None,
            format!("could not move the new run into place ({e}); nothing was recorded"),
        )
    })?;
    let _kept = staging.keep();
    Ok(())
}

/// The name of this machine, for `host` in run.toml: the kernel's host
/// name on Linux, else `HOSTNAME` / `COMPUTERNAME`.
pub fn host_name() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .or_else(|| std::env::var("COMPUTERNAME").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_id_is_the_archive_format_and_reads_back() {
        let t = DateTime::parse_from_rfc3339("2026-05-04T03:07:59Z")
            .unwrap()
            .with_timezone(&Utc);
        let id = run_id(t);
        assert_eq!(id, "2026-05-04T0307Z");
        assert_eq!(
            crate::ingest::run_time_from_id(&id).unwrap(),
            DateTime::parse_from_rfc3339("2026-05-04T03:07:00Z").unwrap()
        );
    }

    #[test]
    fn set_accepts_run_toml_keys_only() {
        assert_eq!(
            parse_set("jvm_flags=-Xmx2g -XX:+UseZGC").unwrap(),
            ("jvm_flags".into(), "-Xmx2g -XX:+UseZGC".into())
        );
        assert_eq!(parse_set("load.vus=50").unwrap().0, "load.vus");
        assert_eq!(parse_set("notes=a=b").unwrap().1, "a=b");
        for bad in [
            "novalue",
            "=x",
            "a.b=1",
            "load.a.b=1",
            "sp ace=1",
            "started_at=x",
        ] {
            assert!(parse_set(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn run_toml_has_ci_host_and_sets_and_reads_back() {
        let req = RecordRequest {
            archive: PathBuf::from("a"),
            endpoint: Some("order-list".into()),
            files: vec![],
            started_at: DateTime::parse_from_rfc3339("2026-05-04T03:00:00Z")
                .unwrap()
                .with_timezone(&Utc),
            id: None,
            ci: Some(CiFacts {
                provider: "github-actions",
                commit: Some("4f2a9c1".into()),
                branch: Some("feature \"quoted\"".into()),
                job_url: Some("https://github.com/acme/shop/actions/runs/1".into()),
                pull_request: Some("42".into()),
            }),
            host: Some("runner-1".into()),
            sets: vec![
                ("branch".into(), "main".into()),
                ("load.vus".into(), "50".into()),
                ("jvm_flags".into(), "-Xmx2g".into()),
            ],
        };
        let text = run_meta_text(&req);
        let (meta, started) = parse_run_meta(&text, Path::new("run.toml")).unwrap();
        assert_eq!(started, Some(req.started_at));
        assert_eq!(meta.commit.as_deref(), Some("4f2a9c1"));
        assert_eq!(meta.branch.as_deref(), Some("main"), "--set wins over CI");
        assert_eq!(meta.extra["pull_request"], "42");
        assert_eq!(meta.extra["ci_provider"], "github-actions");
        assert_eq!(
            meta.extra["ci_job"],
            "https://github.com/acme/shop/actions/runs/1"
        );
        assert_eq!(meta.environment["host"], "runner-1");
        assert_eq!(meta.environment["jvm_flags"], "-Xmx2g");
        assert_eq!(meta.load["vus"], "50");
        assert_eq!(text, run_meta_text(&req), "same inputs, same bytes");
    }

    #[test]
    fn destination_names_keep_round_names_or_number_in_order() {
        let p = |v: &[&str]| v.iter().map(PathBuf::from).collect::<Vec<_>>();
        assert_eq!(
            destination_names(&p(&["x/round-10.ndjson.gz", "round-2.json"])).unwrap(),
            ["round-10.ndjson.gz", "round-2.json"]
        );
        assert_eq!(
            destination_names(&p(&["out-a.NDJSON.GZ", "round-7.csv"])).unwrap(),
            ["round-1.ndjson.gz", "round-2.csv"]
        );
        assert!(destination_names(&p(&["round-1.json", "a/round-1.csv"])).is_err());
        assert!(destination_names(&p(&["results.txt"])).is_err());
    }
}
