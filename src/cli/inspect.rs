//! `perfdash inspect FILE...`: per-endpoint statistics of result files
//! given by hand (k6 summaries or raw outputs, JMeter, Gatling, Locust),
//! and the samples and category shares of flame-graph profiles; which is
//! which is told by content.

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::{EXIT_ERROR, EXIT_FINDINGS, EXIT_OK};
use crate::ingest::inspect::{InputKind, InspectOptions, input_kind, inspect_files};
use crate::stats::PercentileMethod;

#[derive(Debug, Args)]
pub struct InspectArgs {
    /// Result files: k6 summary/NDJSON/CSV (optionally .gz), JMeter JTL
    /// (CSV or XML), Gatling simulation.log, Locust _stats.csv; or
    /// flame-graph profiles (folded stacks, async-profiler HTML, perf
    /// script, speedscope JSON), told apart by content.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Seconds dropped from the start (from the first sample).
    #[arg(long, value_name = "SECONDS", default_value_t = crate::ingest::raw::DEFAULT_WARMUP_S)]
    pub warmup: f64,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
    /// Percentile definition: linear (k6's own p(N)) or jmeter-dashboard.
    #[arg(long, value_enum, default_value_t = Method::Linear)]
    pub percentile: Method,
    /// Count failed requests in the latency figures too.
    #[arg(long)]
    pub failures_in_latency: bool,
    /// The k6 trend metric holding latencies.
    #[arg(long, default_value = "http_req_duration")]
    pub metric: String,
    /// The k6 tag that tells endpoints apart (JMeter: label; Gatling and
    /// Locust: request name).
    #[arg(long, value_name = "TAG", default_value = "name")]
    pub split_tag: String,
    /// Read the files as step-load rounds: print each step (load,
    /// throughput, p99 after settling, errors) and the knee and limit
    /// (docs/capacity.md) instead of whole-file statistics.
    #[arg(long)]
    pub steps: bool,
    /// With --steps: the p99 objective a step must meet, ms.
    #[arg(long, value_name = "MS", default_value_t = crate::config::CapacitySettings::default().objective_p99_ms)]
    pub objective: f64,
    /// With --steps: the headroom below the knee for the limit (0.2 = 20%).
    #[arg(long, value_name = "FRACTION", default_value_t = crate::config::CapacitySettings::default().headroom)]
    pub headroom: f64,
    /// With --steps: seconds dropped at the start of each step.
    #[arg(long, value_name = "SECONDS", default_value_t = crate::config::CapacitySettings::default().settle_seconds)]
    pub settle: f64,
    /// With --steps: a k6 tag naming the steps (one scenario per step).
    #[arg(long, value_name = "TAG")]
    pub step_tag: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    Table,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Method {
    Linear,
    JmeterDashboard,
}

pub(super) fn run(args: InspectArgs) -> anyhow::Result<u8> {
    crate::config::check_warmup("--warmup", args.warmup).map_err(anyhow::Error::msg)?;
    if args.steps {
        return run_steps(&args);
    }
    let opts = InspectOptions {
        warmup_s: args.warmup,
        method: match args.percentile {
            Method::Linear => PercentileMethod::Linear,
            Method::JmeterDashboard => PercentileMethod::JmeterDashboard,
        },
        failures_in_latency: args.failures_in_latency,
        metric: args.metric,
        split_tag: args.split_tag,
    };
    // Big raw files take a while: say what is happening on a terminal.
    let spinner = if std::io::stderr().is_terminal() {
        let bar = indicatif::ProgressBar::new_spinner()
            .with_message(format!("reading {} file(s)", args.files.len()));
        bar.enable_steady_tick(std::time::Duration::from_millis(120));
        bar
    } else {
        indicatif::ProgressBar::hidden()
    };
    // Flame-graph profiles get total samples and category shares; result
    // files per-endpoint statistics. Which is which is told by content,
    // whatever the file is called.
    let mut profile_files = Vec::new();
    let mut result_files = Vec::new();
    let mut profile_errors = 0;
    for path in &args.files {
        match input_kind(path) {
            InputKind::Profile => profile_files.push(path.clone()),
            InputKind::Result => result_files.push(path.clone()),
            InputKind::Unknown(why) => {
                eprintln!(
                    "error: {}: {}",
                    crate::term::escape(&path.display().to_string()),
                    crate::term::escape(&why.to_string())
                );
                profile_errors += 1;
            }
        }
    }
    let settings = crate::config::ProfileSettings::default();
    for path in &profile_files {
        // Opened like every input: a FIFO or a link is refused, never waited on.
        let summary = crate::ingest::input::InputFile::open(path)
            .and_then(|file| {
                crate::ingest::limits::read_document(
                    &file,
                    &crate::ingest::limits::Limits::default(),
                )
            })
            .map_err(|e| crate::error::Error::io(path, e))
            .and_then(|bytes| crate::profile::inspect_profile(&bytes, path, &settings));
        match summary {
            Ok(summary) => match args.format {
                OutputFormat::Table => out!("{}", summary.to_table())?,
                OutputFormat::Json => outln!(
                    "{}",
                    crate::escape::json_output(&serde_json::to_string_pretty(&summary)?)
                )?,
            },
            Err(e) => {
                eprintln!("error: {}", crate::term::escape(&e.to_string()));
                profile_errors += 1;
            }
        }
    }
    if result_files.is_empty() {
        spinner.finish_and_clear();
        return Ok(match profile_errors {
            0 => EXIT_OK,
            n if n == args.files.len() => EXIT_ERROR,
            _ => EXIT_FINDINGS,
        });
    }
    let report = inspect_files(&result_files, &opts);
    spinner.finish_and_clear();
    match args.format {
        OutputFormat::Table => out!("{}", report.to_table())?,
        OutputFormat::Json => out!("{}", report.to_json())?,
    }
    for d in &report.diagnostics {
        let label = match report.rows.is_empty() {
            true => "error",
            false => super::diagnostic_label(d),
        };
        eprintln!("{label}: {}", crate::term::escape(&d.to_string()));
    }
    if report.rows.is_empty() {
        return Ok(EXIT_ERROR);
    }
    let failed_rows = report.rows.iter().any(|r| r.stats.is_none());
    Ok(
        if failed_rows || profile_errors > 0 || report.diagnostics.iter().any(|d| d.is_warning()) {
            EXIT_FINDINGS
        } else {
            EXIT_OK
        },
    )
}

/// `inspect --steps`: each file as a step-load round.
fn run_steps(args: &InspectArgs) -> anyhow::Result<u8> {
    use crate::analyse::capacity::{Objective, find_knee, number};
    use crate::ingest::capacity::{StepOptions, read_steps};
    let settings = crate::config::CapacitySettings {
        settle_seconds: args.settle,
        headroom: args.headroom,
        objective_p99_ms: args.objective,
        step_tag: args.step_tag.clone(),
        ..Default::default()
    };
    let check = crate::config::Settings {
        capacity: settings.clone(),
        ..Default::default()
    };
    check.validate_capacity().map_err(anyhow::Error::msg)?;
    let method = match args.percentile {
        Method::Linear => PercentileMethod::Linear,
        Method::JmeterDashboard => PercentileMethod::JmeterDashboard,
    };
    let opts = StepOptions::new(
        &settings,
        crate::ingest::raw::ReadOptions {
            metric: args.metric.clone(),
            ..Default::default()
        },
        method,
    );
    let objective = Objective {
        p99_ms: settings.objective_p99_ms,
        max_error_rate: settings.max_error_rate,
        headroom: settings.headroom,
    };
    let mut json = Vec::new();
    let mut errors = 0;
    for path in &args.files {
        match read_steps(path, path, &opts) {
            Ok(series) => {
                let knee = find_knee(&series.steps, series.unit, &objective);
                match args.format {
                    OutputFormat::Table => {
                        outln!(
                            "{} ({}, settle {} s)",
                            crate::term::escape(&path.display().to_string()),
                            series.format.describe(),
                            series.settle_s
                        )?;
                        outln!(
                            "{:>4} {:>10} {:>8} {:>8} {:>10} {:>10} {:>10} {:>7}  judged",
                            "step",
                            "load",
                            "start s",
                            "window s",
                            "requests",
                            "req/s",
                            "p99 ms",
                            "errors"
                        )?;
                        for (st, c) in series.steps.iter().zip(&knee.checks) {
                            let role = if knee.knee_step == Some(st.number) {
                                "knee".to_string()
                            } else if c.noise {
                                format!("noise: {}", c.reasons.join(", "))
                            } else if c.meets {
                                "meets".to_string()
                            } else {
                                format!("misses: {}", c.reasons.join(", "))
                            };
                            outln!(
                                "{:>4} {:>10} {:>8.1} {:>8.1} {:>10} {:>10} {:>10} {:>6.2}%  {role}",
                                st.number,
                                format!("{} {}", number(st.load), series.unit.label()),
                                st.start_s,
                                st.window_s,
                                st.count,
                                number(st.throughput_rps),
                                st.p99_ms.map(number).unwrap_or_else(|| "–".into()),
                                st.error_rate * 100.0
                            )?;
                        }
                        outln!("{}\n", crate::term::escape(&knee.reasoning))?;
                    }
                    OutputFormat::Json => json.push(serde_json::json!({
                        "file": path.display().to_string(),
                        "series": series,
                        "knee": knee,
                    })),
                }
            }
            Err(e) => {
                eprintln!("error: {}", crate::term::escape(&e.to_string()));
                errors += 1;
            }
        }
    }
    if args.format == OutputFormat::Json {
        outln!(
            "{}",
            crate::escape::json_output(&serde_json::to_string_pretty(&json)?)
        )?;
    }
    Ok(match errors {
        0 => EXIT_OK,
        n if n == args.files.len() => EXIT_ERROR,
        _ => EXIT_FINDINGS,
    })
}
