//! Step-load rounds: a raw file whose load rises in steps (k6 ramping-vus
//! stages, one k6 scenario per step, JMeter thread groups with rising
//! threads), cut into steps and measured step by step (docs/capacity.md).
//!
//! The samples come from the ordinary raw readers ([`super::raw`]); the
//! load level over time comes from the same readers:
//!
//! * k6 NDJSON / CSV: the `vus` gauge, read by the same scanner as the
//!   latency metric (its value is the number of VUs);
//! * JMeter CSV: the `allThreads` column ([`raw::jmeter_csv::read_with_threads`]);
//! * tagged steps: the samples split by a tag (`[capacity] step_tag`, or
//!   `scenario` when the file has no load plateaus but ≥ 3 scenarios).
//!
//! A step is a plateau of the load level that holds at least
//! `min_step_seconds`; the steps are the plateaus in time order while the
//! level keeps rising, and a file is a step-load file when it has at least
//! [`MIN_STEPS`] of them. Each step is measured over its window after
//! `settle_seconds`.

use std::path::Path;

use super::input::InputFile;
use super::raw::{self, RawContent, ReadOptions, Sample, SampleSet, Sniffed};
use crate::config::CapacitySettings;
use crate::error::Error;
use crate::model::{LoadUnit, SourceFormat, Step, StepSeries};
use crate::stats::{PercentileMethod, percentiles_by};

/// The fewest rising plateaus that make a step-load round.
pub const MIN_STEPS: usize = 3;

/// The file name of a step-load file in an endpoint folder:
/// `steps.<ext>` with the round-file extensions.
pub fn is_steps_file_name(name: &str) -> bool {
    name.strip_prefix("steps.")
        .is_some_and(|ext| super::layout::ROUND_EXTENSIONS.contains(&ext))
}

/// The file name of resource readings beside a step-load file.
pub const RESOURCES_FILE: &str = "resources.csv";

/// How to cut and measure steps (also the cache key of a step-load file).
#[derive(Debug, Clone, serde::Serialize)]
pub struct StepOptions {
    pub read: ReadOptions,
    pub settle_s: f64,
    pub min_step_s: f64,
    pub step_tag: Option<String>,
    pub method: PercentileMethod,
}

impl StepOptions {
    pub fn new(c: &CapacitySettings, read: ReadOptions, method: PercentileMethod) -> StepOptions {
        StepOptions {
            read: ReadOptions {
                split_tag: None,
                ..read
            },
            settle_s: c.settle_seconds,
            min_step_s: c.min_step_seconds,
            step_tag: c.step_tag.clone(),
            method,
        }
    }
}

/// A step's time span, µs since the epoch, `[start, end)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Plateau {
    pub start_us: i64,
    pub end_us: i64,
    pub level: f64,
    pub label: Option<String>,
}

/// Reads a step-load file and measures its steps. `Err` names the file
/// and says why it is not a step-load round.
pub fn read_steps(path: &Path, shown: &Path, opts: &StepOptions) -> Result<StepSeries, Error> {
    let input = InputFile::open(path).map_err(|e| Error::io(shown, e))?;
    read_steps_input(&input, shown, opts)
}

/// [`read_steps`] on an open file: every pass reads the same descriptor.
pub fn read_steps_input(
    input: &InputFile,
    shown: &Path,
    opts: &StepOptions,
) -> Result<StepSeries, Error> {
    let head =
        raw::io::head(input, 64 * 1024, &opts.read.limits).map_err(|e| Error::io(shown, e))?;
    let kind = raw::sniff(&head).map_err(|m| Error::at(shown, None, m))?;
    let not_steps = |why: String| Error::at(shown, None, why);
    let (format, samples, plateaus, unit) = match kind {
        Sniffed::K6Ndjson | Sniffed::K6Csv => {
            let samples_of = |read: &ReadOptions| -> Result<(SourceFormat, SampleSet), Error> {
                let file = raw::read_input(input, shown, read)?;
                Ok((file.format, merged_samples(file.content)))
            };
            let (format, samples) = samples_of(&opts.read)?;
            // The vus gauge, read as if it were a latency metric: each
            // "sample" is (time, VUs).
            let vus_read = ReadOptions {
                metric: "vus".into(),
                ..opts.read.clone()
            };
            let vus: Vec<(i64, f64)> = match samples_of(&vus_read) {
                Ok((_, set)) => set.ok.iter().map(|s| (s.t_us, s.ms)).collect(),
                Err(_) => Vec::new(), // no gauge: only tagged steps are possible
            };
            let tagged = |tag: &str| -> Result<Vec<Plateau>, Error> {
                let read = ReadOptions {
                    split_tag: Some(tag.to_string()),
                    ..opts.read.clone()
                };
                let file = raw::read_input(input, shown, &read)?;
                Ok(tagged_plateaus(file.content, &vus))
            };
            let (plateaus, unit) = match &opts.step_tag {
                Some(tag) => (tagged(tag)?, LoadUnit::Tagged),
                None => {
                    let p = plateaus(level_points(vus.clone()), opts.min_step_s);
                    if p.len() >= MIN_STEPS {
                        (p, LoadUnit::Vus)
                    } else {
                        let by_scenario = tagged("scenario")?;
                        if by_scenario.len() >= MIN_STEPS {
                            (by_scenario, LoadUnit::Tagged)
                        } else {
                            (p, LoadUnit::Vus)
                        }
                    }
                }
            };
            (format, samples, plateaus, unit)
        }
        Sniffed::JmeterCsv => {
            let (file, levels) = raw::jmeter_csv::read_with_threads(input, shown, &opts.read)?;
            if levels.is_empty() {
                return Err(not_steps(
                    "a JMeter CSV step-load file needs the allThreads column (jmeter.save.saveservice.thread_counts=true)"
                        .into(),
                ));
            }
            let p = plateaus(level_points(levels), opts.min_step_s);
            (
                file.format,
                merged_samples(file.content),
                p,
                LoadUnit::Threads,
            )
        }
        other => {
            return Err(not_steps(format!(
                "step-load files must be k6 NDJSON/CSV or JMeter CSV (this one looks like {other:?})"
            )));
        }
    };
    if plateaus.len() < MIN_STEPS {
        return Err(not_steps(format!(
            "not a step-load round: the load rises in {} plateau(s) of at least {} s, {MIN_STEPS} are needed \
             (see docs/capacity.md)",
            plateaus.len(),
            opts.min_step_s
        )));
    }
    let origin_unix_us = first_time(&samples);
    let steps = measure_steps(samples, &plateaus, opts.settle_s, opts.method);
    Ok(StepSeries {
        source: shown.display().to_string(),
        format,
        unit,
        settle_s: opts.settle_s,
        origin_unix_us,
        steps,
        resources: None,
    })
}

/// All groups of a raw file's samples in one set.
fn merged_samples(content: RawContent) -> SampleSet {
    let mut all = SampleSet::default();
    if let RawContent::Samples { groups, .. } = content {
        for (_, mut set) in groups {
            all.ok.append(&mut set.ok);
            all.failed.append(&mut set.failed);
        }
    }
    all
}

/// Level readings sorted by time (JMeter writes samples in completion
/// order), with repeats of the same level dropped.
/// The last reading is kept even when it repeats the level, so that the
/// last level lasts until it.
fn level_points(mut points: Vec<(i64, f64)>) -> Vec<(i64, f64)> {
    points.sort_by_key(|&(t, _)| t);
    let last = points.last().copied();
    points.dedup_by(|b, a| a.1 == b.1);
    if let Some(last) = last
        && points.last() != Some(&last)
    {
        points.push(last);
    }
    points
}

/// The rising plateaus of a load level given as change points `(time,
/// level)` sorted by time: a level is a plateau when it holds for at least
/// `min_step_s` (until the next change; the last level until its last
/// reading). Plateaus of the same level separated only by shorter
/// excursions are one plateau. Steps are the plateaus with a level > 0 in
/// time order while each is higher than the one before; the first lower
/// plateau (a ramp-down) ends the steps.
pub fn plateaus(changes: Vec<(i64, f64)>, min_step_s: f64) -> Vec<Plateau> {
    let min_us = (min_step_s * 1e6).round() as i64;
    let last_t = changes.last().map(|&(t, _)| t);
    let mut held: Vec<Plateau> = Vec::new();
    for (i, &(t, level)) in changes.iter().enumerate() {
        let end = changes.get(i + 1).map(|&(t, _)| t).or(last_t).unwrap_or(t);
        if end - t < min_us.max(1) || level <= 0.0 {
            continue;
        }
        match held.last_mut() {
            Some(prev) if prev.level == level => prev.end_us = end,
            _ => held.push(Plateau {
                start_us: t,
                end_us: end,
                level,
                label: None,
            }),
        }
    }
    let mut steps: Vec<Plateau> = Vec::new();
    for p in held {
        if steps.last().is_some_and(|prev| p.level <= prev.level) {
            break;
        }
        steps.push(p);
    }
    steps
}

/// Steps from samples split by a tag: one step per tag value, spanning its
/// samples, in order of their first sample. The level is the mean `vus`
/// reading within the step, or `NaN` (filled with the throughput later)
/// when the file has no gauge.
fn tagged_plateaus(content: RawContent, vus: &[(i64, f64)]) -> Vec<Plateau> {
    let RawContent::Samples { groups, .. } = content else {
        return Vec::new();
    };
    let mut out: Vec<Plateau> = groups
        .into_iter()
        .filter(|(key, set)| !key.is_empty() && !set.is_empty())
        .map(|(key, set)| {
            let times = || set.ok.iter().chain(&set.failed).map(|s| s.t_us);
            let start_us = times().min().unwrap_or(0);
            let end_us = times().max().unwrap_or(0);
            let inside: Vec<f64> = vus
                .iter()
                .filter(|&&(t, _)| t >= start_us && t <= end_us)
                .map(|&(_, v)| v)
                .collect();
            let level = if inside.is_empty() {
                f64::NAN
            } else {
                inside.iter().sum::<f64>() / inside.len() as f64
            };
            Plateau {
                start_us,
                end_us,
                level,
                label: Some(key),
            }
        })
        .collect();
    out.sort_by_key(|p| (p.start_us, p.end_us));
    out
}

fn first_time(samples: &SampleSet) -> i64 {
    samples
        .ok
        .iter()
        .chain(&samples.failed)
        .map(|s| s.t_us)
        .min()
        .unwrap_or(0)
}

/// Measures each step over `[start + settle, end)` (a sample belongs to
/// the step its time falls in: request end for k6, start for JMeter).
/// Consumes the samples: each is moved into its step's latency list.
pub fn measure_steps(
    samples: SampleSet,
    plateaus: &[Plateau],
    settle_s: f64,
    method: PercentileMethod,
) -> Vec<Step> {
    let origin = first_time(&samples);
    let settle_us = (settle_s * 1e6).round() as i64;
    let windows: Vec<(i64, i64)> = plateaus
        .iter()
        .map(|p| ((p.start_us + settle_us).min(p.end_us), p.end_us))
        .collect();
    let find = |s: &Sample| {
        windows
            .iter()
            .position(|&(a, b)| s.t_us >= a && (s.t_us < b || (a == b && s.t_us == b)))
    };
    let mut ok: Vec<Vec<Sample>> = vec![Vec::new(); windows.len()];
    let mut failed = vec![0u64; windows.len()];
    for s in samples.ok {
        if let Some(i) = find(&s) {
            ok[i].push(s);
        }
    }
    for s in samples.failed {
        if let Some(i) = find(&s) {
            failed[i] += 1;
        }
    }
    plateaus
        .iter()
        .zip(windows)
        .zip(ok)
        .zip(failed)
        .enumerate()
        .map(|(i, (((_, (a, b)), mut latencies), failed))| {
            let count = latencies.len() as u64 + failed;
            let window_s = (b - a) as f64 / 1e6;
            let throughput_rps = if window_s > 0.0 {
                count as f64 / window_s
            } else {
                0.0
            };
            let p = percentiles_by(&mut latencies, &[50.0, 99.0], method, |s| s.ms);
            let mean_ms = crate::stats::moments_by(&latencies, |s| s.ms).map(|m| m.mean);
            let plateau = &plateaus[i];
            Step {
                number: i as u32 + 1,
                label: plateau.label.clone(),
                load: if plateau.level.is_nan() {
                    throughput_rps
                } else {
                    plateau.level
                },
                start_s: (plateau.start_us - origin) as f64 / 1e6,
                duration_s: (plateau.end_us - plateau.start_us) as f64 / 1e6,
                window_s,
                count,
                throughput_rps,
                p50_ms: p.first().copied(),
                p99_ms: p.get(1).copied(),
                mean_ms,
                error_rate: if count > 0 {
                    failed as f64 / count as f64
                } else {
                    0.0
                },
                concurrency: mean_ms.map(|m| throughput_rps * m / 1000.0),
                cpu_pct: None,
                memory: None,
            }
        })
        .collect()
}

/// One resource reading: time (µs), CPU %, memory (in the file's unit).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reading {
    pub t_us: i64,
    pub cpu: Option<f64>,
    pub memory: Option<f64>,
}

/// Reads a resource CSV: a header with `time` and at least one of `cpu`
/// and `memory` (any order, case-insensitive, other columns ignored);
/// `time` in RFC 3339 or Unix seconds (fractions allowed). Errors name the
/// 1-based line.
pub fn read_resources(
    path: &Path,
    shown: &Path,
    limits: &super::limits::Limits,
) -> Result<Vec<Reading>, Error> {
    let text = super::limits::read_archive_text_file(path, limits)
        .map_err(|e| Error::io(shown, e))?
        .unwrap_or_default();
    parse_resources(&text, shown)
}

/// [`read_resources`] on text.
pub fn parse_resources(text: &str, shown: &Path) -> Result<Vec<Reading>, Error> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let Some((_, header)) = lines.next() else {
        return Err(Error::at(
            shown,
            Some(1),
            "empty resource CSV: expected a header time,cpu,memory",
        ));
    };
    let names: Vec<String> = header
        .trim_start_matches('\u{feff}')
        .split(',')
        .map(|n| n.trim().trim_matches('"').to_ascii_lowercase())
        .collect();
    let col = |n: &str| names.iter().position(|x| x == n);
    let (Some(time), cpu, memory) = (col("time"), col("cpu"), col("memory")) else {
        return Err(Error::at(
            shown,
            Some(1),
            "the header needs a time column (and cpu and/or memory)",
        ));
    };
    if cpu.is_none() && memory.is_none() {
        return Err(Error::at(
            shown,
            Some(1),
            "the header needs a cpu or a memory column",
        ));
    }
    let mut out = Vec::new();
    for (i, line) in lines {
        let fields: Vec<&str> = line
            .split(',')
            .map(|f| f.trim().trim_matches('"'))
            .collect();
        let at = |msg: String| Error::at(shown, Some(i as u64 + 1), msg);
        let t = fields.get(time).copied().unwrap_or("");
        let t_us = parse_time(t)
            .ok_or_else(|| at(format!("time '{t}' is neither RFC 3339 nor Unix seconds")))?;
        let number = |c: Option<usize>, name: &str| -> Result<Option<f64>, Error> {
            match c.and_then(|c| fields.get(c)).copied() {
                None | Some("") => Ok(None),
                Some(v) => v
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite())
                    .map(Some)
                    .ok_or_else(|| at(format!("{name} '{v}' is not a number"))),
            }
        };
        out.push(Reading {
            t_us,
            cpu: number(cpu, "cpu")?,
            memory: number(memory, "memory")?,
        });
    }
    Ok(out)
}

fn parse_time(t: &str) -> Option<i64> {
    if let Some(us) = raw::parse_rfc3339_micros(t.as_bytes()) {
        return Some(us);
    }
    let secs: f64 = t.parse().ok()?;
    (secs.is_finite() && secs.abs() < 1e11).then(|| (secs * 1e6).round() as i64)
}

/// Joins readings to the steps: each step gets the mean CPU and memory of
/// the readings inside its measured window (`None` when there are none).
pub fn join_resources(series: &mut StepSeries, readings: &[Reading]) {
    let origin_us = series.origin_unix_us;
    let last = series.steps.len().saturating_sub(1);
    for (i, step) in series.steps.iter_mut().enumerate() {
        let a =
            origin_us + ((step.start_s + (step.duration_s - step.window_s)) * 1e6).round() as i64;
        let b = origin_us + ((step.start_s + step.duration_s) * 1e6).round() as i64;
        // Half-open like the step windows, but the last step keeps the
        // reading at its very end.
        let inside: Vec<&Reading> = readings
            .iter()
            .filter(|r| r.t_us >= a && (r.t_us < b || (i == last && r.t_us == b)))
            .collect();
        let mean = |f: fn(&Reading) -> Option<f64>| {
            let v: Vec<f64> = inside.iter().filter_map(|r| f(r)).collect();
            (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
        };
        step.cpu_pct = mean(|r| r.cpu);
        step.memory = mean(|r| r.memory);
    }
}

/// Convenience for `inspect` and tests: the steps of one file with the
/// given capacity settings and `[raw]` percentile method.
pub fn steps_of_file(path: &Path, settings: &crate::config::Settings) -> Result<StepSeries, Error> {
    let opts = StepOptions::new(
        &settings.capacity,
        ReadOptions {
            metric: settings.analysis.metric.clone(),
            split_tag: None,
            limits: settings.limits.clone(),
        },
        settings.raw.percentile,
    );
    read_steps(path, path, &opts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(t: i64, ms: f64) -> Sample {
        Sample {
            t_us: t * 1_000_000,
            ms,
        }
    }

    #[test]
    fn plateaus_keep_rising_levels_and_skip_ramps() {
        // 1 s readings: 0, ramp 1, 2 for 10 s, ramp 3, 4 for 10 s, 8 for
        // 10 s, then ramp down to 0.
        let mut pts = vec![(0, 0.0), (1, 1.0)];
        pts.extend((2..12).map(|t| (t, 2.0)));
        pts.push((12, 3.0));
        pts.extend((13..23).map(|t| (t, 4.0)));
        pts.extend((23..33).map(|t| (t, 8.0)));
        pts.push((33, 2.0));
        pts.push((34, 0.0));
        let pts = pts.into_iter().map(|(t, l)| (t * 1_000_000, l)).collect();
        let p = plateaus(level_points(pts), 5.0);
        let got: Vec<(f64, i64, i64)> = p
            .iter()
            .map(|p| (p.level, p.start_us / 1_000_000, p.end_us / 1_000_000))
            .collect();
        assert_eq!(got, vec![(2.0, 2, 12), (4.0, 13, 23), (8.0, 23, 33)]);
    }

    #[test]
    fn a_short_excursion_does_not_split_a_plateau() {
        let pts = vec![
            (0, 5.0),
            (10, 4.0),
            (11, 5.0),
            (20, 10.0),
            (30, 20.0),
            (40, 20.0),
        ];
        let pts = pts.into_iter().map(|(t, l)| (t * 1_000_000, l)).collect();
        let p = plateaus(level_points(pts), 5.0);
        let got: Vec<(f64, i64)> = p
            .iter()
            .map(|p| (p.level, p.start_us / 1_000_000))
            .collect();
        assert_eq!(got, vec![(5.0, 0), (10.0, 20), (20.0, 30)]);
    }

    #[test]
    fn steps_are_measured_after_settling() {
        let plateaus = vec![
            Plateau {
                start_us: 0,
                end_us: 10_000_000,
                level: 1.0,
                label: None,
            },
            Plateau {
                start_us: 10_000_000,
                end_us: 20_000_000,
                level: 2.0,
                label: None,
            },
        ];
        let mut set = SampleSet::default();
        // Step 1: one slow sample while settling (dropped), 5 fast after.
        set.push(s(1, 500.0), true);
        for t in 5..10 {
            set.push(s(t, 10.0), true);
        }
        // Step 2: 8 ok after settling, 2 failed.
        for t in 15..20 {
            set.push(
                Sample {
                    t_us: t * 1_000_000,
                    ms: 20.0,
                },
                true,
            );
            set.push(
                Sample {
                    t_us: t * 1_000_000 + 500_000,
                    ms: 30.0,
                },
                t < 18,
            );
        }
        let steps = measure_steps(set, &plateaus, 5.0, PercentileMethod::Linear);
        assert_eq!(steps.len(), 2);
        assert_eq!(steps[0].count, 5);
        assert_eq!(steps[0].p99_ms, Some(10.0));
        assert!((steps[0].throughput_rps - 1.0).abs() < 1e-12);
        assert_eq!(steps[1].count, 10);
        assert!((steps[1].error_rate - 0.2).abs() < 1e-12);
        assert!((steps[1].throughput_rps - 2.0).abs() < 1e-12);
        // p99 over 8 successful: 5 × 20 and 3 × 30; linear rank 6.93 → 30.
        assert_eq!(steps[1].p99_ms, Some(30.0));
        assert_eq!(steps[1].start_s, 9.0); // from the first sample at t = 1 s
    }

    #[test]
    fn resources_parse_rfc3339_and_unix_seconds_and_name_bad_lines() {
        let text = "time,cpu,memory\n2026-01-01T00:00:00Z,50,1000\n1767225601.5,70,\n";
        let r = parse_resources(text, Path::new("r.csv")).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].t_us, 1_767_225_600_000_000);
        assert_eq!(r[1].t_us, 1_767_225_601_500_000);
        assert_eq!(r[1].memory, None);
        let bad = parse_resources("time,cpu\nnoon,5\n", Path::new("r.csv")).unwrap_err();
        assert!(bad.to_string().contains("r.csv:2"), "{bad}");
    }

    fn k6_point(metric: &str, t_ms: i64, value: f64, tags: &str) -> String {
        let t = chrono::DateTime::from_timestamp_millis(t_ms)
            .unwrap()
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        format!(
            "{{\"metric\":\"{metric}\",\"type\":\"Point\",\"data\":{{\"time\":\"{t}\",\"value\":{value},\"tags\":{{{tags}}}}}}}\n"
        )
    }

    #[test]
    fn one_scenario_per_step_gives_tagged_steps() {
        // Three constant-arrival-rate scenarios of 10 s each (5, 10, 20
        // req/s) and no vus gauge: the scenario tag names the steps and the
        // load is the measured throughput.
        let mut text = String::from(
            "{\"type\":\"Metric\",\"data\":{\"name\":\"http_req_duration\",\"type\":\"trend\"},\"metric\":\"http_req_duration\"}\n",
        );
        let t0 = 1_780_000_000_000i64;
        for (k, (name, rate)) in [("r05", 5), ("r10", 10), ("r20", 20)].iter().enumerate() {
            for i in 0..rate * 10 {
                let t = t0 + k as i64 * 10_000 + i * 1000 / rate;
                let tags = format!("\"expected_response\":\"true\",\"scenario\":\"{name}\"");
                text.push_str(&k6_point("http_req_duration", t, 10.0 + k as f64, &tags));
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("steps.ndjson");
        std::fs::write(&path, text).unwrap();
        let settings = crate::config::Settings {
            capacity: CapacitySettings {
                settle_seconds: 2.0,
                ..Default::default()
            },
            ..Default::default()
        };
        let series = steps_of_file(&path, &settings).unwrap();
        assert_eq!(series.unit, LoadUnit::Tagged);
        let labels: Vec<&str> = series
            .steps
            .iter()
            .filter_map(|s| s.label.as_deref())
            .collect();
        assert_eq!(labels, ["r05", "r10", "r20"]);
        let p99: Vec<f64> = series.steps.iter().map(|s| s.p99_ms.unwrap()).collect();
        assert_eq!(p99, [10.0, 11.0, 12.0]);
        // Each step spans its first to last sample; 2 s settle.
        for (s, rate) in series.steps.iter().zip([5.0, 10.0, 20.0]) {
            assert_eq!(s.load, s.throughput_rps);
            assert!((s.throughput_rps - rate).abs() / rate < 0.15, "{s:?}");
        }
    }

    #[test]
    fn headerless_jmeter_rows_give_all_threads_from_their_layout() {
        // JMeter 5.x default columns without a header: allThreads is the
        // 13th; three levels of 6 s each.
        let mut text = String::new();
        let t0 = 1_780_000_000_000i64;
        for (k, threads) in [4, 8, 16].iter().enumerate() {
            for i in 0..60 {
                let t = t0 + k as i64 * 6000 + i * 100;
                text.push_str(&format!(
                    "{t},{},GET /x,200,OK,Thread Group 1-1,text,true,,120,80,{threads},{threads},http://x/,5,0,1\n",
                    10 + k
                ));
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("steps.csv");
        std::fs::write(&path, text).unwrap();
        let settings = crate::config::Settings {
            capacity: CapacitySettings {
                settle_seconds: 1.0,
                ..Default::default()
            },
            ..Default::default()
        };
        let series = steps_of_file(&path, &settings).unwrap();
        assert_eq!(series.unit, LoadUnit::Threads);
        let loads: Vec<f64> = series.steps.iter().map(|s| s.load).collect();
        assert_eq!(loads, [4.0, 8.0, 16.0]);
        let p99: Vec<f64> = series.steps.iter().map(|s| s.p99_ms.unwrap()).collect();
        assert_eq!(p99, [10.0, 11.0, 12.0]);
        // 6 s steps − 1 s settle = 5 s windows of 10 req/s; the last step
        // ends at its last reading (5.9 s in): 4.9 s, 49 requests.
        assert_eq!(series.steps[0].count, 50);
        assert_eq!(series.steps[2].count, 49);
    }

    #[test]
    fn k6_csv_vus_rows_give_the_steps() {
        // k6 --out csv: whole-second timestamps, a vus row every second.
        let mut text = String::from(
            "metric_name,timestamp,metric_value,check,error,error_code,expected_response,group,method,name,proto,scenario,service,status,subproto,tls_version,url,extra_tags,metadata\n",
        );
        let t0 = 1_780_000_000i64;
        for (k, vus) in [5, 10, 20].iter().enumerate() {
            for s in 0..10 {
                let t = t0 + k as i64 * 10 + s;
                text.push_str(&format!("vus,{t},{vus},,,,,,,,,,,,,,,,\n"));
                for _ in 0..*vus {
                    text.push_str(&format!(
                        "http_req_duration,{t},{},,,,true,,GET,x,HTTP/1.1,default,,200,,,http://x,,\n",
                        10 + k
                    ));
                }
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("steps.csv");
        std::fs::write(&path, text).unwrap();
        let series = steps_of_file(&path, &crate::config::Settings::default()).unwrap();
        assert_eq!(series.format, SourceFormat::K6Csv);
        assert_eq!(series.unit, LoadUnit::Vus);
        let loads: Vec<f64> = series.steps.iter().map(|s| s.load).collect();
        assert_eq!(loads, [5.0, 10.0, 20.0]);
        // Steps of 10 s, 5 s settling: 5 whole seconds of vus requests each
        // (the last: its last reading is 9 s in, so 4 s).
        let counts: Vec<u64> = series.steps.iter().map(|s| s.count).collect();
        assert_eq!(counts, [25, 50, 80]);
        assert_eq!(series.steps[1].p99_ms, Some(11.0));
    }

    proptest::proptest! {
        /// A ladder of rising levels held 6–30 s each, with 1 s ramp
        /// readings between them and gauge readings every second, gives
        /// back exactly its levels and hold times.
        #[test]
        fn plateaus_recover_a_rising_ladder(
            holds in proptest::collection::vec((1u32..50, 6i64..30), 3..8),
        ) {
            let mut level = 0.0;
            let mut t = 0i64;
            let mut readings = Vec::new();
            let mut expected = Vec::new();
            for (rise, hold) in holds {
                // A ramp reading halfway to the next level.
                readings.push((t * 1_000_000, level + rise as f64 / 2.0));
                t += 1;
                level += rise as f64;
                expected.push((level, t, t + hold));
                for s in 0..hold {
                    readings.push(((t + s) * 1_000_000, level));
                }
                t += hold;
            }
            // The last level lasts until its last reading.
            let last = expected.last_mut().unwrap();
            last.2 -= 1;
            let got: Vec<(f64, i64, i64)> = plateaus(level_points(readings), 5.0)
                .iter()
                .map(|p| (p.level, p.start_us / 1_000_000, p.end_us / 1_000_000))
                .collect();
            proptest::prop_assert_eq!(got, expected);
        }
    }
}
