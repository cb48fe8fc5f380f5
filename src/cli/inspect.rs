//! `perfdash inspect FILE...`: per-endpoint statistics of result files
//! given by hand (k6 summaries or raw outputs, JMeter, Gatling, Locust).

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::{EXIT_ERROR, EXIT_FINDINGS, EXIT_OK};
use crate::ingest::inspect::{InspectOptions, inspect_files};
use crate::stats::PercentileMethod;

#[derive(Debug, Args)]
pub struct InspectArgs {
    /// Result files: k6 summary/NDJSON/CSV (optionally .gz), JMeter JTL
    /// (CSV or XML), Gatling simulation.log, Locust _stats.csv.
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

pub fn run(args: InspectArgs) -> anyhow::Result<u8> {
    crate::config::check_warmup("--warmup", args.warmup).map_err(anyhow::Error::msg)?;
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
    // Flame-graph profiles (`flame[.<kind>].<ext>`) get total samples and
    // category shares; everything else is a result file.
    let (profile_files, result_files): (Vec<_>, Vec<_>) =
        args.files.iter().cloned().partition(|f| {
            f.file_name()
                .and_then(|n| n.to_str())
                .and_then(crate::profile::kind_from_file_name)
                .is_some()
        });
    let mut profile_errors = 0;
    for path in &profile_files {
        let summary = std::fs::read(path)
            .map_err(|e| crate::error::Error::io(path, e))
            .and_then(|bytes| {
                crate::profile::inspect_profile(
                    &bytes,
                    path,
                    &crate::config::ProfileSettings::default(),
                )
            });
        match summary {
            Ok(summary) => match args.format {
                OutputFormat::Table => print!("{}", summary.to_table()),
                OutputFormat::Json => println!("{}", serde_json::to_string_pretty(&summary)?),
            },
            Err(e) => {
                eprintln!("error: {e}");
                profile_errors += 1;
            }
        }
    }
    if result_files.is_empty() {
        spinner.finish_and_clear();
        return Ok(match profile_errors {
            0 => EXIT_OK,
            n if n == profile_files.len() => EXIT_ERROR,
            _ => EXIT_FINDINGS,
        });
    }
    let report = inspect_files(&result_files, &opts);
    spinner.finish_and_clear();
    match args.format {
        OutputFormat::Table => print!("{}", report.to_table()),
        OutputFormat::Json => print!("{}", report.to_json()),
    }
    let label = if report.rows.is_empty() {
        "error"
    } else {
        "warning"
    };
    for d in &report.diagnostics {
        eprintln!("{label}: {d}");
    }
    if report.rows.is_empty() {
        return Ok(EXIT_ERROR);
    }
    let failed_rows = report.rows.iter().any(|r| r.stats.is_none());
    Ok(
        if failed_rows || profile_errors > 0 || !report.diagnostics.is_empty() {
            EXIT_FINDINGS
        } else {
            EXIT_OK
        },
    )
}
