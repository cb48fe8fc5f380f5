//! The command line: clap definitions and dispatch. Each subcommand lives
//! in its own file with its arguments and a `run` function; the work is
//! done by the library.
//!
//! Exit codes (documented in README.md):
//! * 0: success (for `check`/`compare`: nothing regressed);
//! * 1: `build` succeeded but skipped some inputs (warnings), or
//!   `check`/`compare` found a regression;
//! * 2: bad input or usage; nothing was written.

mod build;
mod check;
mod compare;
mod demo;
mod eval;
mod inspect;
mod record;
mod triage;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Exit code: success.
pub const EXIT_OK: u8 = 0;
/// Exit code: warnings occurred (build) or a regression was found (check).
pub const EXIT_FINDINGS: u8 = 1;
/// Exit code: bad input or usage.
pub const EXIT_ERROR: u8 = 2;

/// The exit code of a build, from the kinds of its diagnostics alone
/// (never their wording): 1 when any is a warning, 0 when there are none
/// or only information (Locust's rounding, said once per build).
pub(crate) fn build_exit_code(diagnostics: &[crate::error::Diagnostic]) -> u8 {
    if diagnostics.iter().any(|d| d.kind.is_warning()) {
        EXIT_FINDINGS
    } else {
        EXIT_OK
    }
}

/// How a diagnostic is labelled on stderr: `warning:`, or `note:` for
/// information (said once, never a problem).
pub(crate) fn diagnostic_label(d: &crate::error::Diagnostic) -> &'static str {
    if d.is_warning() { "warning" } else { "note" }
}

/// Turns an archive of load-test runs into a static performance-review site.
#[derive(Debug, Parser)]
#[command(name = "perfdash", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Build the static site from an archive.
    Build(build::BuildArgs),
    /// Write a generated sample archive (the bundled `archive/`).
    Demo(demo::DemoArgs),
    /// Per-endpoint statistics of result files given by hand (any supported format).
    Inspect(inspect::InspectArgs),
    /// Gate CI on one run: exit 0 when nothing regressed, 1 on a regression, 2 on bad input.
    Check(check::CheckArgs),
    /// List alarms that need a human label, or print ready-to-fill triage entries.
    Triage(triage::TriageArgs),
    /// Compare two runs endpoint by endpoint (the release check).
    Compare(compare::CompareArgs),
    /// File one run's result files into the archive as a new run (the only command that writes there).
    Record(record::RecordArgs),
    /// Evaluate every alarm policy on generated histories (docs/detection.md).
    Eval(eval::EvalArgs),
}

/// Parses the command line, runs the command and maps the outcome to an
/// exit code. Errors are printed with their cause chain.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help/version to stdout with exit 0, usage errors
            // to stderr; usage errors use our "bad input or usage" code.
            let code = if e.use_stderr() { EXIT_ERROR } else { EXIT_OK };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let result = match cli.command {
        Command::Build(args) => build::run(args),
        Command::Demo(args) => demo::run(args),
        Command::Inspect(args) => inspect::run(args),
        Command::Check(args) => check::run(args),
        Command::Triage(args) => triage::run(args),
        Command::Compare(args) => compare::run(args),
        Command::Eval(args) => eval::run(args),
        Command::Record(args) => record::run(args),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(EXIT_ERROR)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn build_exit_code_comes_from_kinds() {
        use crate::error::{Diagnostic, DiagnosticKind};
        let d = |kind| Diagnostic::new(kind, "runs/x", None, "ignored: same words");
        assert_eq!(build_exit_code(&[]), EXIT_OK);
        assert_eq!(
            build_exit_code(&[d(DiagnosticKind::Information)]),
            EXIT_OK,
            "information is never a warning"
        );
        for kind in [
            DiagnosticKind::SkippedInput,
            DiagnosticKind::Doubtful,
            DiagnosticKind::SkippedExtra,
            DiagnosticKind::Ignored,
            DiagnosticKind::UntrustedTime,
        ] {
            assert_eq!(
                build_exit_code(&[d(DiagnosticKind::Information), d(kind)]),
                EXIT_FINDINGS,
                "{kind:?}"
            );
        }
    }
}
