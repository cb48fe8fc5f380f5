//! `perfdash compare RUN_A RUN_B`: the release check.

use clap::{Args, ValueEnum};

use crate::analyse::compare::{compare, resolve_run};
use crate::analyse::gate::Outcome;
use crate::error::Error;
use crate::ingest::load_archive;
use crate::report::compare::{format_json, format_markdown, format_table};

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The reference run: a run id or unique prefix, `latest`, `latest~N`,
    /// or `release:<name>` (run.toml `release = "<name>"`).
    #[arg(value_name = "RUN_A")]
    pub run_a: String,
    /// The candidate run, named the same ways; compared against RUN_A.
    #[arg(value_name = "RUN_B")]
    pub run_b: String,
    #[command(flatten)]
    pub archive: super::ArchiveArg,
    /// Output format; markdown suits a GitHub step summary.
    #[arg(long, value_enum, default_value_t = CompareFormat::Table)]
    pub format: CompareFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompareFormat {
    Table,
    Json,
    Markdown,
}

/// Prints the comparison to stdout. Exit codes as `perfdash check`: 1 when
/// an endpoint regressed or failed in run B, 0 otherwise (also when some
/// are `inconclusive`: the output says so), 2 for bad input or usage. A compared run with
/// unreadable inputs is bad input, as for `check`: the comparison of what
/// could be read is still printed and the files are named on stderr, but
/// it cannot vouch for the run, so the exit code is 2.
pub(super) fn run(args: CompareArgs) -> anyhow::Result<u8> {
    let readable = args.archive.readable()?;
    readable.refuse_being_recorded(&args.run_a)?;
    readable.refuse_being_recorded(&args.run_b)?;
    let loaded = load_archive(&readable.dir)?;
    let archive = &loaded.archive;
    let a = resolve_run(archive, &args.run_a)?;
    let b = resolve_run(archive, &args.run_b)?;
    if a.id == b.id {
        return Err(Error::Usage(format!(
            "`{}` and `{}` are the same run ({}): name two different runs",
            args.run_a, args.run_b, a.id
        ))
        .into());
    }
    for run in [a, b] {
        let prefix = format!("{}/{}/", crate::ingest::RUNS_DIR, run.id);
        for d in loaded
            .diagnostics
            .iter()
            .filter(|d| d.path.starts_with(&prefix))
        {
            eprintln!(
                "{}: {}",
                super::diagnostic_label(d),
                crate::term::escape(&d.to_string())
            );
        }
    }
    let comparison = compare(archive, a, b);
    let text = match args.format {
        CompareFormat::Table => format_table(&comparison),
        CompareFormat::Json => format_json(&comparison),
        CompareFormat::Markdown => format_markdown(&comparison),
    };
    super::print_report(&text);
    // Only problems that put the figures in doubt (a skipped round, not a
    // second flame graph) make the comparison one perfdash cannot vouch for.
    let outcome = comparison.outcome();
    if outcome == Outcome::CannotVouch {
        let incomplete: Vec<&str> = [&comparison.a, &comparison.b]
            .iter()
            .filter(|r| r.in_doubt)
            .map(|r| r.run.as_str())
            .collect();
        eprintln!(
            "error: incomplete run(s) {}: some inputs could not be read (see the warnings above)",
            crate::term::escape(&incomplete.join(", "))
        );
    }
    Ok(super::outcome_exit_code(outcome))
}
