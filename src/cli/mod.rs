//! The command line: clap definitions and dispatch. Each subcommand lives
//! in its own file with its arguments and a `run` function; the work is
//! done by the library.
//!
//! Exit codes (documented in README.md):
//! * 0: success (for `check`/`compare`: nothing regressed);
//! * 1: `build` succeeded but skipped some inputs (warnings), or
//!   `check`/`compare` found a regression;
//! * 2: bad input or usage; nothing was written.

/// `print!` that returns an error instead of panicking when stdout is
/// closed (`perfdash inspect … | head`); [`main`] ends quietly on it.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::cli::write_stdout(format_args!($($arg)*))
    };
}

/// `println!` counterpart of [`out!`].
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::cli::write_stdout(format_args!("{}\n", format_args!($($arg)*)))
    };
}

mod build;
mod check;
mod compare;
mod demo;
mod eval;
mod inspect;
mod record;
mod triage;

use std::io::Write as _;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Exit code: success.
pub const EXIT_OK: u8 = 0;
/// Exit code: warnings occurred (build) or a regression was found (check).
pub const EXIT_FINDINGS: u8 = 1;
/// Exit code: bad input or usage.
pub const EXIT_ERROR: u8 = 2;

/// The exit code of `perfdash check` and `perfdash compare`, decided here
/// and only here from the typed outcome: 0 pass, 1 a regression or a
/// failed run, 2 the gate cannot vouch for a run (unreadable inputs, too
/// few rounds).
pub fn outcome_exit_code(outcome: crate::analyse::gate::Outcome) -> u8 {
    use crate::analyse::gate::Outcome;
    match outcome {
        Outcome::Pass => EXIT_OK,
        Outcome::Regression => EXIT_FINDINGS,
        Outcome::CannotVouch => EXIT_ERROR,
    }
}

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

/// `--archive DIR|URL`, the one definition every subcommand that reads (or,
/// for `record`, adds to) an archive flattens in.
#[derive(Debug, Clone, clap::Args)]
pub struct ArchiveArg {
    /// The archive: a folder, or `s3://bucket/prefix`, `gs://bucket/prefix` or
    /// `az://container/prefix` on object storage
    /// (docs/archive.md). Only `perfdash record` writes there (one new run
    /// under runs/, created when missing); every other command only reads
    /// it.
    #[arg(long = "archive", value_name = "DIR|URL", default_value = "archive")]
    pub location: crate::remote::ArchiveLocation,
}

/// The local folder a command reads an archive from.
#[derive(Debug)]
pub(crate) struct Readable {
    /// The archive folder, or the local copy of an archive on object storage.
    pub dir: std::path::PathBuf,
    /// For an archive on object storage: what bringing the copy up to date
    /// did (the copy stays locked while this lives).
    pub synced: Option<crate::remote::mirror::Synced>,
}

impl Readable {
    /// Objects left out of the copy (each said on stderr already).
    pub(crate) fn warnings(&self) -> usize {
        self.synced.as_ref().map_or(0, |s| s.report.warnings.len())
    }

    /// Refuses a run asked for by id that a `perfdash record` is still
    /// writing into the bucket: it is left out of the copy until complete,
    /// and "no run" would send the user looking for a typo.
    pub(crate) fn refuse_being_recorded(&self, asked: &str) -> Result<(), crate::error::Error> {
        let Some(synced) = &self.synced else {
            return Ok(());
        };
        if synced.report.in_progress.iter().any(|id| id == asked) {
            return Err(crate::error::Error::Usage(format!(
                "run '{asked}' is being recorded (a `perfdash record` has claimed it and not \
                 completed it) and is read only once it is complete: try again when that record \
                 has finished"
            )));
        }
        Ok(())
    }

    /// `objects: …` for `--verbose`: what the sync did and the requests it made.
    pub(crate) fn summary(&self) -> Option<String> {
        let s = self.synced.as_ref()?;
        let r = &s.report;
        Some(format!(
            "objects: {} in the copy, {} fetched, {} removed, {} run(s) being recorded left out; \
             requests: {} list, {} get, {} bytes fetched",
            r.objects,
            r.fetched,
            r.removed,
            r.in_progress.len(),
            r.requests.lists,
            r.requests.gets,
            r.requests.bytes_fetched
        ))
    }
}

impl ArchiveArg {
    /// A diagnostic as the terminal says it: a file of an archive on object
    /// storage is named by its `s3://` URL (pages keep the archive-relative
    /// path, so a bucket's site is the folder's site).
    pub(crate) fn say(&self, d: &crate::error::Diagnostic) -> String {
        use crate::remote::ArchiveLocation;
        match &self.location {
            ArchiveLocation::Remote(url)
                if !d.path.is_empty() && std::path::Path::new(&d.path).is_relative() =>
            {
                crate::error::Diagnostic {
                    path: url.show(&d.path),
                    ..d.clone()
                }
                .to_string()
            }
            _ => d.to_string(),
        }
    }

    /// The folder to read: the archive itself, or for `s3://…` its local
    /// copy brought up to date (`remote::mirror`), whose warnings (objects
    /// left out, each named by its key) are said on stderr.
    pub(crate) fn readable(&self) -> anyhow::Result<Readable> {
        use crate::remote::{ArchiveLocation, Remote};
        match &self.location {
            ArchiveLocation::Local(dir) => Ok(Readable {
                dir: dir.clone(),
                synced: None,
            }),
            ArchiveLocation::Remote(url) => {
                let synced = synced_copy(&Remote::connect(url)?)?;
                Ok(Readable {
                    dir: synced.dir.clone(),
                    synced: Some(synced),
                })
            }
        }
    }
}

/// The local copy of an archive on object storage, brought up to date
/// (`remote::mirror`) and locked while the value lives; its warnings
/// (objects left out, each named by its key) are said on stderr.
pub(crate) fn synced_copy(
    remote: &crate::remote::Remote,
) -> Result<crate::remote::mirror::Synced, crate::error::Error> {
    use crate::remote::mirror;
    let synced = mirror::sync(remote, &mirror::default_root(&remote.url)?)?;
    for w in &synced.report.warnings {
        let _ = writeln!(std::io::stderr(), "warning: {}", crate::term::escape(w));
    }
    Ok(synced)
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
    Record(Box<record::RecordArgs>),
    /// Evaluate every alarm policy on generated histories (docs/detection.md).
    Eval(eval::EvalArgs),
}

/// Turns transparent huge pages off for this process. The binary's
/// allocator (mimalloc, src/main.rs) asks for huge pages on the memory it
/// reserves; where the kernel grants them on request (`madvise`, the usual
/// setting), every 2 MiB page partly used counts whole: at 120 endpoints
/// × 156 weeks a build's peak RSS was ~420 MB instead of ~365 MB, for no
/// gain in CPU time (issue 18, BENCHMARKS.md). Not for `record`: the flag
/// is inherited by the load test it starts, whose memory is not ours to
/// set. Where the call fails (not Linux, an old kernel) nothing changes
/// but the memory used.
fn without_transparent_huge_pages() {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let _ = rustix::thread::disable_transparent_huge_pages(true);
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
    if !matches!(cli.command, Command::Record(_)) {
        without_transparent_huge_pages();
    }
    let result = match cli.command {
        Command::Build(args) => build::run(args),
        Command::Demo(args) => demo::run(args),
        Command::Inspect(args) => inspect::run(args),
        Command::Check(args) => check::run(args),
        Command::Triage(args) => triage::run(args),
        Command::Compare(args) => compare::run(args),
        Command::Eval(args) => eval::run(args),
        Command::Record(args) => record::run(*args),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        // The reader went away (`| head`): what it wanted was written, as
        // far as it wanted it. End quietly, as ripgrep does. (The gates
        // never get here: their exit code is the verdict, `print_report`.)
        Err(e) if is_broken_pipe(&e) => ExitCode::from(EXIT_OK),
        Err(e) => {
            // Parts from data were escaped where the message was made;
            // escape the rest too, keeping perfdash's own line breaks.
            let message = format!("{e:#}");
            let _ = writeln!(
                std::io::stderr(),
                "error: {}",
                crate::term::escape_lines(&message)
            );
            ExitCode::from(EXIT_ERROR)
        }
    }
}

/// Writes to stdout, flushing, and returns the error (a closed pipe
/// above all) instead of panicking as `print!` does.
pub(crate) fn write_stdout(args: std::fmt::Arguments<'_>) -> std::io::Result<()> {
    let mut stdout = std::io::stdout().lock();
    stdout.write_fmt(args)?;
    stdout.flush()
}

/// Prints a gate's report (`check`, `compare`) on stdout. The exit code
/// is the verdict whatever happens to stdout: a reader that went away
/// (`perfdash check | head -c 200`, `| true`) ends the output quietly, and
/// any other failure to write (a full disk) is said on stderr; neither
/// changes the code, so `set -o pipefail` sees a regression as one.
pub(crate) fn print_report(text: &str) {
    match write_stdout(format_args!("{text}")) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        Err(e) => {
            let _ = writeln!(
                std::io::stderr(),
                "warning: could not write the report to stdout ({e}); the exit code is still the verdict"
            );
        }
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    /// `--archive` is one definition ([`ArchiveArg`]), flattened into every
    /// subcommand that takes it: the same help, value name and default.
    #[test]
    fn archive_is_defined_once_and_shared() {
        let cli = Cli::command();
        let shown = |name: &str| {
            let sub = cli.find_subcommand(name).expect(name);
            let arg = sub
                .get_arguments()
                .find(|a| a.get_long() == Some("archive"))
                .unwrap_or_else(|| panic!("{name} takes --archive"));
            (
                arg.get_help().map(|h| h.to_string()),
                arg.get_default_values().to_vec(),
            )
        };
        let first = shown("build");
        for name in ["check", "compare", "triage", "record"] {
            assert_eq!(shown(name), first, "{name}");
        }
        // And no subcommand declares its own.
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/cli");
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            // (Spelled in two pieces so that this test does not find itself.)
            let own = text.matches(concat!("pub archive", ": PathBuf")).count()
                + text.matches(concat!("long = ", "\"archive\"")).count();
            let allowed = usize::from(path.ends_with("mod.rs"));
            assert_eq!(own, allowed, "{}", path.display());
        }
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
