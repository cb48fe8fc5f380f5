//! `run.toml` and run ids.

use std::collections::BTreeMap;
use std::path::Path;

use chrono::{DateTime, NaiveDate, NaiveDateTime, NaiveTime, Utc};

use crate::error::Error;
use crate::model::RunMeta;

/// Parses `run.toml`. Returns the metadata and `started_at` when given.
/// Every key is optional; keys perfdash does not know are kept in
/// `RunMeta::extra` and shown on the run page.
pub fn parse_run_meta(text: &str, path: &Path) -> Result<(RunMeta, Option<DateTime<Utc>>), Error> {
    let table: toml::Table = toml::from_str(text).map_err(|e| {
        Error::at(
            path,
            crate::config::toml_line(text, &e),
            e.message().to_string(),
        )
    })?;
    let mut meta = RunMeta::default();
    let mut started_at = None;
    let mut extra = BTreeMap::new();
    for (key, value) in table {
        let text_value = || -> Result<String, Error> {
            match &value {
                toml::Value::String(s) => Ok(s.clone()),
                other => Err(Error::at(
                    path,
                    None,
                    format!("{key} should be a string, found {}", other.type_str()),
                )),
            }
        };
        match key.as_str() {
            "started_at" => {
                let raw = match &value {
                    toml::Value::Datetime(d) => d.to_string(),
                    toml::Value::String(s) => s.clone(),
                    other => {
                        return Err(Error::at(
                            path,
                            key_line(text, "started_at"),
                            format!(
                                "started_at should be an RFC 3339 date-time, found {}",
                                other.type_str()
                            ),
                        ));
                    }
                };
                let t = crate::calendar::parse_rfc3339(&raw).map_err(|why| {
                    Error::at(
                        path,
                        key_line(text, "started_at"),
                        format!("started_at '{raw}' {why}"),
                    )
                })?;
                started_at = Some(t);
            }
            "commit" => meta.commit = Some(text_value()?),
            "branch" => meta.branch = Some(text_value()?),
            "notes" => meta.notes = Some(text_value()?),
            "release" => meta.release = Some(text_value()?),
            "profile" => meta.profile = parse_profile_capture(&value, text, path)?,
            "load" | "environment" => {
                let toml::Value::Table(table) = &value else {
                    return Err(Error::at(
                        path,
                        None,
                        format!(
                            "{key} should be a table ([{key}] with one key per setting), found {}",
                            value.type_str()
                        ),
                    ));
                };
                let target = if key == "load" {
                    &mut meta.load
                } else {
                    &mut meta.environment
                };
                target.extend(table.iter().map(|(k, v)| (k.clone(), value_text(v))));
            }
            _ => {
                // Well-known top-level keys also count as load profile or
                // environment, so archives that write `host = "perf-01"`
                // flat get the same comparability and chart markers. They
                // stay in `extra` too, for the run page.
                if LOAD_KEYS.contains(&key.as_str()) {
                    meta.load.insert(key.clone(), value_text(&value));
                } else if ENVIRONMENT_KEYS.contains(&key.as_str()) {
                    meta.environment.insert(key.clone(), value_text(&value));
                }
                extra.insert(key.clone(), value_text(&value));
            }
        }
    }
    meta.extra = extra;
    Ok((meta, started_at))
}

/// `[profile]`: `duration` (seconds, or a string such as `"10s"`,
/// `"500ms"`, `"2m"`) and `rate` (samples per second) or `interval` (the
/// time between samples, `"10ms"`). Both give how many seconds a sample
/// stands for; giving both is refused when they disagree.
fn parse_profile_capture(
    value: &toml::Value,
    text: &str,
    path: &Path,
) -> Result<crate::model::ProfileCapture, Error> {
    let line = text
        .lines()
        .position(|l| {
            l.trim()
                .trim_start_matches('[')
                .trim_end_matches(']')
                .trim()
                == "profile"
        })
        .map(|n| n as u64 + 1)
        .or_else(|| key_line(text, "profile"));
    let err = |message: String| Error::at(path, line, message);
    let toml::Value::Table(table) = value else {
        return Err(err(format!(
            "profile should be a table ([profile] with duration and rate), found {}",
            value.type_str()
        )));
    };
    let seconds = |key: &str, v: &toml::Value| -> Result<f64, Error> {
        let s = match v {
            toml::Value::Integer(n) => *n as f64,
            toml::Value::Float(x) => *x,
            toml::Value::String(s) => duration_seconds(s).ok_or_else(|| {
                err(format!(
                    "[profile] {key} '{s}' is not a duration such as \"10s\", \"500ms\" or \"2m\""
                ))
            })?,
            other => {
                return Err(err(format!(
                    "[profile] {key} should be a duration such as \"10s\" or a number of seconds, found {}",
                    other.type_str()
                )));
            }
        };
        if s.is_finite() && s > 0.0 {
            Ok(s)
        } else {
            Err(err(format!("[profile] {key} must be above 0")))
        }
    };
    let mut capture = crate::model::ProfileCapture::default();
    for (key, v) in table {
        match key.as_str() {
            "duration" => capture.duration_s = Some(seconds(key, v)?),
            "interval" => {
                let rate = 1.0 / seconds(key, v)?;
                match capture.rate_hz {
                    Some(r) if (r - rate).abs() > 1e-9 * r => {
                        return Err(err(format!(
                            "[profile] interval and rate disagree ({rate} Hz and {r} Hz): give one"
                        )));
                    }
                    _ => capture.rate_hz = Some(rate),
                }
            }
            "rate" => {
                let rate = match v {
                    toml::Value::Integer(n) => *n as f64,
                    toml::Value::Float(x) => *x,
                    other => {
                        return Err(err(format!(
                            "[profile] rate should be samples per second (a number such as 100), found {}",
                            other.type_str()
                        )));
                    }
                };
                if !(rate.is_finite() && rate > 0.0) {
                    return Err(err("[profile] rate must be above 0".into()));
                }
                match capture.rate_hz {
                    Some(r) if (r - rate).abs() > 1e-9 * r => {
                        return Err(err(format!(
                            "[profile] interval and rate disagree ({r} Hz and {rate} Hz): give one"
                        )));
                    }
                    _ => capture.rate_hz = Some(rate),
                }
            }
            other => {
                return Err(err(format!(
                    "[profile] has no key '{other}' (duration, rate, interval)"
                )));
            }
        }
    }
    Ok(capture)
}

/// `"10s"`, `"500ms"`, `"2m"`, `"1.5 s"`, `"250us"` → seconds.
fn duration_seconds(text: &str) -> Option<f64> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: f64 = number.parse().ok()?;
    let factor = match unit.trim() {
        "" | "s" => 1.0,
        "ms" => 1e-3,
        "us" | "µs" => 1e-6,
        "ns" => 1e-9,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => return None,
    };
    Some(value * factor)
}

/// Top-level `run.toml` keys read as part of the load profile.
pub(super) const LOAD_KEYS: [&str; 5] =
    ["script_hash", "stages", "arrival_rate", "vus", "duration"];
/// Top-level `run.toml` keys read as part of the environment.
pub(super) const ENVIRONMENT_KEYS: [&str; 4] = ["host", "jvm_flags", "k6_version", "java_version"];

/// A value as shown and compared: strings as they are, anything else
/// (numbers, arrays of stages, …) in its TOML spelling.
fn value_text(value: &toml::Value) -> String {
    match value {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Reads a UTC time from the start of a run id: `2026-05-04`,
/// `2026-05-04T0300Z`, `2026-05-04T03:00:00Z`, `20260504-030000`,
/// `2026-05-04_03-00-nightly`, … The leading run of digits and
/// separators is read as `YYYY MM DD [HH [MM [SS]]]`.
pub fn run_time_from_id(id: &str) -> Option<DateTime<Utc>> {
    let digits: String = id
        .chars()
        .take_while(|c| c.is_ascii_digit() || matches!(c, '-' | '_' | 'T' | 't' | ':' | '.'))
        .filter(char::is_ascii_digit)
        .collect();
    if digits.len() < 8 {
        return None;
    }
    let n = |range: std::ops::Range<usize>| digits.get(range).and_then(|s| s.parse::<u32>().ok());
    let date = NaiveDate::from_ymd_opt(n(0..4)? as i32, n(4..6)?, n(6..8)?)?;
    let time = NaiveTime::from_hms_opt(
        n(8..10).unwrap_or(0),
        n(10..12).unwrap_or(0),
        n(12..14).unwrap_or(0),
    )?;
    Some(NaiveDateTime::new(date, time).and_utc())
}

/// The 1-based line of a top-level `key = …` in a TOML text, for
/// warnings about a value that parsed but cannot be believed.
pub(crate) fn key_line(text: &str, key: &str) -> Option<u64> {
    let line = text.lines().position(|line| {
        let line = line.trim_start();
        let rest = line
            .strip_prefix(key)
            .or_else(|| line.strip_prefix(&format!("\"{key}\"")));
        rest.is_some_and(|r| r.trim_start().starts_with('='))
    })?;
    Some(line as u64 + 1)
}

/// What a run's start time is checked against.
#[derive(Debug, Clone, Copy)]
pub(super) struct TimeEvidence {
    /// The time read from the run id, when `started_at` came from
    /// run.toml and the id starts with a date.
    pub id_time: Option<DateTime<Utc>>,
    /// When the newest file of the run was last written.
    pub newest_file: Option<DateTime<Utc>>,
    /// The build's time ([`super::LoadOptions::now`]).
    pub now: DateTime<Utc>,
}

/// Why a run's `started_at` cannot be trusted, or `None` when it can.
///
/// Checked, in this order (the first that applies is the reason):
/// * before 2000: a clock that was never set (1970) or a typo;
/// * more than a day away from the date in the run id (dates compared, so
///   a run id in local time is fine);
/// * more than a day after the newest file of the run was written: a run
///   cannot start after it wrote its results;
/// * more than a day after the build: a clock set ahead, when the files'
///   times came from the same clock.
///
/// The reason never quotes file times or the build time, so that pages
/// stay the same from one build to the next (only whether a far-future
/// run is flagged can change, once the wall clock catches up with it).
pub(super) fn untrusted_time(started_at: DateTime<Utc>, e: &TimeEvidence) -> Option<String> {
    let day = chrono::Duration::days(1);
    let shown = crate::calendar::rfc3339_as_given(started_at);
    let year_2000 = NaiveDate::from_ymd_opt(2000, 1, 1)?
        .and_hms_opt(0, 0, 0)?
        .and_utc();
    if started_at < year_2000 {
        return Some(format!(
            "started_at {shown} is before 2000: a clock that was never set, or a typo?"
        ));
    }
    if let Some(id_time) = e.id_time {
        let days = (started_at.date_naive() - id_time.date_naive())
            .num_days()
            .abs();
        if days > 1 {
            return Some(format!(
                "started_at {shown} is {days} days away from the date in the run id ({}).",
                id_time.date_naive()
            ));
        }
    }
    if e.newest_file.is_some_and(|m| started_at > m + day) {
        return Some(format!(
            "started_at {shown} is more than a day after the run's files were last written: \
             a clock set ahead, or a typo?"
        ));
    }
    if started_at > e.now + day {
        return Some(format!(
            "started_at {shown} is more than a day in the future: a clock set ahead, or a typo?"
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_from_ids() {
        let t = |s| run_time_from_id(s).map(|t| t.to_rfc3339());
        assert_eq!(t("2026-05-04"), Some("2026-05-04T00:00:00+00:00".into()));
        assert_eq!(
            t("2026-05-04T0300Z"),
            Some("2026-05-04T03:00:00+00:00".into())
        );
        assert_eq!(
            t("2026-05-04T03:00:07Z"),
            Some("2026-05-04T03:00:07+00:00".into())
        );
        assert_eq!(
            t("20260504-0315-nightly"),
            Some("2026-05-04T03:15:00+00:00".into())
        );
        assert_eq!(
            t("2026-05-04t0300z"),
            Some("2026-05-04T03:00:00+00:00".into()),
            "a lower-case t (slug-style ids) is the same time"
        );
        assert_eq!(t("2026-13-04"), None);
        assert_eq!(t("nightly-42"), None);
        assert_eq!(t("1234"), None);
    }

    #[test]
    fn untrusted_times() {
        let t = |s: &str| DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc);
        let now = t("2026-06-01T00:00:00Z");
        let evidence = |id: Option<&str>, file: Option<&str>| TimeEvidence {
            id_time: id.map(t),
            newest_file: file.map(t),
            now,
        };
        let check = |started: &str, id, file| untrusted_time(t(started), &evidence(id, file));
        let id = Some("2026-05-04T00:00:00Z");
        let file = Some("2026-05-04T03:20:00Z");
        assert_eq!(check("2026-05-04T03:00:00Z", id, file), None);
        // A day either way is a time zone or a long run, not an error.
        assert_eq!(
            check("2026-05-05T23:00:00Z", id, Some("2026-05-05T23:10:00Z")),
            None
        );
        assert_eq!(check("2026-05-03T01:00:00Z", id, file), None);
        assert_eq!(
            check("2026-05-05T03:00:00Z", id, file),
            None,
            "a day after the file"
        );
        let reason = |started, id, file| check(started, id, file).unwrap_or_default();
        assert!(
            reason("2026-05-06T03:00:00Z", id, Some("2026-05-06T03:20:00Z"))
                .contains("is 2 days away from the date in the run id (2026-05-04)"),
        );
        assert!(reason("1970-01-01T00:00:00Z", None, file).contains("before 2000"));
        assert!(
            reason("2026-05-05T03:20:01Z", id, file).contains("after the run's files were last")
        );
        // Files from the same skewed clock: only the build's time tells.
        let far = "2099-05-04T03:00:00Z";
        assert!(
            reason(
                far,
                Some("2099-05-04T00:00:00Z"),
                Some("2099-05-04T03:20:00Z")
            )
            .contains("more than a day in the future")
        );
        assert_eq!(check("2026-06-01T23:59:00Z", None, None), None);
        assert!(reason("2026-06-02T00:00:01Z", None, None).contains("in the future"));
        // Reasons never quote the build's or the files' times: pages stay
        // the same from one build to the next.
        assert!(!reason(far, None, Some("2026-05-04T03:20:00Z")).contains("2026"));
    }

    #[test]
    fn lines_of_keys() {
        let text = "# a run\ncommit = \"a\"\n  started_at = 2026-05-04T03:00:00Z\n";
        assert_eq!(key_line(text, "started_at"), Some(3));
        assert_eq!(key_line("\"started_at\" = 1\n", "started_at"), Some(1));
        assert_eq!(key_line("started_at_local = 1\n", "started_at"), None);
        assert_eq!(key_line("notes = \"started_at = x\"\n", "started_at"), None);
    }

    #[test]
    fn years_outside_rfc_3339_in_utc() {
        for text in [
            "started_at = 0000-01-01T00:00:00+01:00\n",
            "started_at = \"9999-12-31T23:59:59-01:00\"\n",
        ] {
            let err = parse_run_meta(text, Path::new("r.toml")).unwrap_err();
            assert!(
                err.to_string().starts_with("r.toml:1: started_at '"),
                "{err}"
            );
            assert!(err.to_string().contains("0000–9999"), "{err}");
        }
        for text in [
            "started_at = 0000-01-01T00:00:00Z\n",
            "started_at = 9999-12-31T23:59:59Z\n",
        ] {
            assert!(parse_run_meta(text, Path::new("r.toml")).is_ok(), "{text}");
        }
        // Five-digit years are no RFC 3339 at all.
        let err = parse_run_meta(
            "started_at = \"12026-05-04T03:00:00Z\"\n",
            Path::new("r.toml"),
        )
        .unwrap_err();
        assert!(err.to_string().contains("not an RFC 3339"), "{err}");
    }

    #[test]
    fn run_toml() {
        let (meta, t) = parse_run_meta(
            "started_at = 2026-05-04T03:00:00+02:00\ncommit = \"abc\"\nrelease = \"1.4.0\"\nci_job = 17\n",
            Path::new("run.toml"),
        )
        .unwrap();
        assert_eq!(t.unwrap().to_rfc3339(), "2026-05-04T01:00:00+00:00");
        assert_eq!(meta.commit.as_deref(), Some("abc"));
        assert_eq!(meta.release.as_deref(), Some("1.4.0"));
        assert_eq!(meta.extra.get("ci_job").map(String::as_str), Some("17"));
        let (_, t) = parse_run_meta(
            "started_at = \"2026-05-04T03:00:00Z\"",
            Path::new("run.toml"),
        )
        .unwrap();
        assert!(t.is_some());
    }

    #[test]
    fn load_profile_and_environment_tables() {
        let (meta, _) = parse_run_meta(
            "[load]\nscript_hash = \"sha256:ab\"\nvus = 50\nstages = [\"30s:10\", \"5m:50\"]\n\
             [environment]\nhost = \"perf-3\"\njvm_flags = \"-Xmx2g\"\n",
            Path::new("run.toml"),
        )
        .unwrap();
        assert_eq!(meta.load.get("vus").map(String::as_str), Some("50"));
        assert_eq!(
            meta.load.get("script_hash").map(String::as_str),
            Some("sha256:ab")
        );
        assert_eq!(
            meta.load.get("stages").map(String::as_str),
            Some(r#"["30s:10", "5m:50"]"#)
        );
        assert_eq!(
            meta.environment.get("host").map(String::as_str),
            Some("perf-3")
        );
        assert!(meta.extra.is_empty());
        let (meta, _) = parse_run_meta(
            "host = \"perf-01\"\njvm_flags = \"-Xmx2g\"\nvus = 20\n[environment]\nkernel = \"6.1\"\n",
            Path::new("run.toml"),
        )
        .unwrap();
        assert_eq!(
            meta.environment.len(),
            3,
            "flat well-known keys join the table: {:?}",
            meta.environment
        );
        assert_eq!(meta.load.get("vus").map(String::as_str), Some("20"));
        assert_eq!(
            meta.extra.get("host").map(String::as_str),
            Some("perf-01"),
            "still shown on the run page"
        );
        let err = parse_run_meta("load = 5\n", Path::new("r.toml")).unwrap_err();
        assert!(err.to_string().contains("load should be a table"), "{err}");
    }

    #[test]
    fn bad_run_toml_names_file_and_line() {
        let err = parse_run_meta(
            "commit = \"a\"\nstarted_at = 2026-05-04\n",
            Path::new("runs/x/run.toml"),
        )
        .unwrap_err();
        assert!(err.to_string().starts_with("runs/x/run.toml"), "{err}");
        let err = parse_run_meta("commit = 1\n", Path::new("r.toml")).unwrap_err();
        assert!(
            err.to_string().contains("commit should be a string"),
            "{err}"
        );
        let err = parse_run_meta("commit = \n", Path::new("r.toml")).unwrap_err();
        assert!(err.to_string().starts_with("r.toml:1:"), "{err}");
    }
}
