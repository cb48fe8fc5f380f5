//! `perfdash build`.

use std::io::Write as _;
use std::path::PathBuf;

use clap::Args;

use super::build_exit_code;
use crate::pipeline::{BuildOptions, build};
use crate::term::escape;
use crate::write::WhenLocked;

#[derive(Debug, Args)]
pub struct BuildArgs {
    #[command(flatten)]
    pub archive: super::ArchiveArg,
    /// Where to write the site. Replaced atomically on success.
    #[arg(long, value_name = "DIR", default_value = "site")]
    pub out: PathBuf,
    /// Treat skipped inputs as errors: build nothing if any file is bad.
    #[arg(long)]
    pub strict: bool,
    /// Replace OUT even if it is a non-empty folder that perfdash did not write.
    #[arg(long)]
    pub force: bool,
    /// The week `weekly.html` reviews, as an ISO week (2026-W47); default: the ISO week of the latest run.
    #[arg(long, value_name = "YYYY-Www")]
    pub week: Option<crate::analyse::weekly::WeekSpec>,
    /// Seconds of warm-up dropped from every raw round; overrides every
    /// setting in perfdash.toml and run.toml.
    #[arg(long, value_name = "SECONDS")]
    pub warmup: Option<f64>,
    /// Re-read every round file instead of using `.perfdash-cache/` beside OUT
    /// (the site is byte-identical either way).
    #[arg(long)]
    pub no_cache: bool,
    /// Write `data/analysis.json` indented for reading (compact by default).
    #[arg(long)]
    pub pretty_json: bool,
    /// When another build is writing OUT, wait for it instead of failing (exit 2).
    #[arg(long)]
    pub wait: bool,
    /// Print every skipped input, per-stage counts and the time of each stage.
    #[arg(short, long)]
    pub verbose: bool,
    /// Print nothing but errors.
    #[arg(short, long, conflicts_with = "verbose")]
    pub quiet: bool,
}

pub(super) fn run(args: BuildArgs) -> anyhow::Result<u8> {
    // SIGINT/SIGTERM/SIGHUP remove what the build had written before the
    // process ends (see cleanup).
    crate::cleanup::install_signal_handlers()?;
    let readable = args.archive.readable()?;
    let report = build(&BuildOptions {
        archive: readable.dir.clone(),
        out: args.out.clone(),
        strict: args.strict,
        force: args.force,
        render: crate::render::RenderOptions {
            week: args.week.unwrap_or_default(),
            pretty_json: args.pretty_json,
        },
        warmup: args.warmup,
        no_cache: args.no_cache,
        progress: !args.quiet && std::io::IsTerminal::is_terminal(&std::io::stderr()),
        when_locked: if args.wait {
            WhenLocked::Wait
        } else {
            WhenLocked::Fail
        },
        publish: Default::default(),
        now: None,
        process_exits_after: true,
    })?;
    let (warnings, notes): (Vec<_>, Vec<_>) =
        report.diagnostics.iter().partition(|d| d.is_warning());
    if !args.quiet {
        let shown = if args.verbose {
            warnings.len()
        } else {
            warnings.len().min(20)
        };
        // Names come from the archive: escaped, so that none can fake a line.
        for d in &warnings[..shown] {
            say(&format!("warning: {}", escape(&args.archive.say(d))));
        }
        let warnings = warnings.len();
        if shown < warnings {
            say(&format!(
                "warning: … and {} more (use --verbose to see all)",
                warnings - shown
            ));
        }
        say(&format!(
            "{} {} ({} pages, {} endpoints, {} runs, {} regressed{} in the latest run){}",
            if report.up_to_date {
                "up to date, nothing changed since the last build:"
            } else {
                "built"
            },
            escape(&args.out.display().to_string()),
            report.pages,
            report.endpoints,
            report.runs,
            report.latest_regressions,
            match report.latest_failures {
                0 => String::new(),
                n => format!(" and {n} failed"),
            },
            if warnings > 0 {
                format!("; {warnings} warning(s)")
            } else {
                String::new()
            }
        ));
        for d in &notes {
            say(&format!("note: {}", escape(&d.to_string())));
        }
        for n in &report.notices {
            say(&format!("note: {}", escape(n)));
        }
        if args.verbose && report.up_to_date {
            say(&format!(
                "rounds: {} in the archive; {} round files read, {} runs by stat (no file opened, \
                 {} folders as last listed); the site's {} files ({} bytes) are as the last build left them: nothing rendered or written",
                report.round_files,
                report.rounds_parsed,
                report.runs_by_stat,
                report.folders_as_listed,
                report.files,
                report.bytes,
            ));
        } else if args.verbose {
            say(&format!(
                "rounds: {} in the archive; {} round files read, {} results from the cache ({} runs by stat, \
                 no file opened, {} folders as last listed); change points: {} series judged as before and \
                 extended, {} judged from their first run; pages: {} rendered, {} reused (same inputs as the previous site's); \
                 wrote {} files, {} bytes \
                 ({} unchanged, linked from the previous site); cache: {} file(s) saved, {} removed",
                report.round_files,
                report.rounds_parsed,
                report.rounds_from_cache,
                report.runs_by_stat,
                report.folders_as_listed,
                report.changepoint_series_known,
                report.changepoint_series_judged,
                report.pages - report.reused_pages,
                report.reused_pages,
                report.files,
                report.bytes,
                report.unchanged_files,
                report.cache_files_written,
                report.cache_files_removed
            ));
        }
        if args.verbose {
            if let Some(summary) = readable.summary() {
                say(&summary);
            }
            say(&stage_times(&report.stages));
        }
    }
    if readable.warnings() > 0 {
        // Objects left out of the copy are skipped inputs too.
        return Ok(super::EXIT_FINDINGS);
    }
    Ok(build_exit_code(&report.diagnostics))
}

/// `time: read 0.98 s, analyse 0.68 s, … (total 3.21 s)`: where the
/// build's wall time went, stage by stage.
fn stage_times(stages: &[(&'static str, std::time::Duration)]) -> String {
    let total: std::time::Duration = stages.iter().map(|(_, d)| *d).sum();
    let each: Vec<String> = stages
        .iter()
        .map(|(stage, d)| format!("{stage} {:.2} s", d.as_secs_f64()))
        .collect();
    format!(
        "time: {} (total {:.2} s)",
        each.join(", "),
        total.as_secs_f64()
    )
}

/// One line on stderr; a closed stderr (`perfdash build 2>&1 | head`) is
/// not an error of the build.
fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}
