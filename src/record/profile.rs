//! `perfdash record … --profile-on-regression CMD`: the seed's triggered
//! flame graph.
//!
//! After the run is recorded (moved into place whole, as always), it is
//! judged exactly as `perfdash check --run <id>` judges it: the same
//! loading, analysis and gate ([`crate::analyse::gate::check`]) under the
//! archive's `[alarms] policy`. Only when the gate says `regression` (the
//! outcome `check` exits 1 for) is CMD run, once, through `sh -c`, with
//! `{out}`, `{run}` and `{endpoint}` substituted. What it wrote to `{out}`
//! (a file in a scratch folder outside the archive) is read with the
//! profile readers `build` uses; a readable profile with samples is then
//! copied into `runs/<id>/<endpoint>/flame.<kind>.<ext>` through a hidden
//! temporary file renamed into place without replacing anything. A
//! profiler that fails or writes nothing readable never costs the run: the
//! run stays as recorded and the profile is refused, naming the file.

use std::io::Write as _;
use std::os::fd::AsFd as _;
use std::path::{Path, PathBuf};

use crate::analyse::gate::{CheckReport, CheckStatus, Outcome};
use crate::error::Error;

/// What to run when the new run regressed, and how to name its output.
#[derive(Debug, Clone)]
pub struct ProfileRequest {
    /// A shell command; `{out}`, `{run}` and `{endpoint}` are substituted,
    /// already quoted for the shell.
    pub command: String,
    /// The profile's kind: `cpu`, `alloc`, `lock`, `wall`, …
    pub kind: String,
    /// The extension of `{out}` and of the filed profile (async-profiler
    /// chooses its output format from it: `html`, `collapsed`).
    pub extension: String,
}

impl ProfileRequest {
    /// The name the profile is filed under: `flame.<kind>.<ext>`.
    pub fn file_name(&self) -> String {
        format!("flame.{}.{}", self.kind, self.extension)
    }

    /// Refuses a kind or extension `build` would not read back as given,
    /// before any round runs.
    pub fn validate(&self) -> Result<(), String> {
        let ext_ok = !self.extension.is_empty()
            && self
                .extension
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-')
            && !self.extension.starts_with('.')
            && !self.extension.ends_with('.');
        if !ext_ok {
            return Err(format!(
                "--profile-ext '{}': use letters, digits, '.', '-' and '_' (e.g. html, collapsed)",
                self.extension
            ));
        }
        let read_back = crate::profile::kind_from_file_name(&self.file_name());
        if read_back.as_deref() != Some(self.kind.as_str()) {
            return Err(format!(
                "--profile-kind '{}': build would read {} as a {} profile; a kind is lower-case \
                 letters, digits, '-' and '_', starting with a letter (cpu, alloc, lock, wall)",
                self.kind,
                self.file_name(),
                read_back.unwrap_or_else(|| "no".into())
            ));
        }
        if self.command.trim().is_empty() {
            return Err("--profile-on-regression: the command is empty".into());
        }
        Ok(())
    }
}

/// What became of the profile.
#[derive(Debug)]
pub enum ProfileOutcome {
    /// The gate found no regression (or could not vouch for the run): the
    /// profiler was not run. The gate's one-line verdict says why.
    NotRun { outcome: Outcome, headline: String },
    /// The profile is filed here.
    Filed {
        path: PathBuf,
        /// What the readers noted about it (skipped lines, …).
        warnings: Vec<String>,
    },
    /// The profiler failed or wrote nothing readable: the run is kept
    /// without a profile.
    Refused(Error),
}

/// `text` quoted for `sh`: one word, whatever it holds.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The profiler's command with `{out}`, `{run}` and `{endpoint}`
/// substituted, each quoted for the shell (the run id and endpoint come
/// from the user, the scratch path from `TMPDIR`).
pub fn substitute(command: &str, out: &Path, run: &str, endpoint: &str) -> String {
    command
        .replace("{out}", &shell_quote(&out.to_string_lossy()))
        .replace("{run}", &shell_quote(run))
        .replace("{endpoint}", &shell_quote(endpoint))
}

/// Runs the profiler (`sh -c`, its output on stderr so stdout stays the
/// run id). `Err` says how it failed.
fn run_profiler(command: &str, out: &Path, run: &str, endpoint: &str) -> Result<(), String> {
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(substitute(command, out, run, endpoint))
        .env("PERFDASH_RUN", run)
        .env("PERFDASH_ENDPOINT", endpoint)
        .env("PERFDASH_PROFILE_OUT", out)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::from(
            std::io::stderr()
                .as_fd()
                .try_clone_to_owned()
                .map_err(|e| e.to_string())?,
        ))
        .status()
        .map_err(|e| format!("could not start sh: {e}"))?;
    match status.code() {
        Some(0) => Ok(()),
        Some(code) => Err(format!(
            "the profiler command failed (exit {code}); what it wrote is not filed"
        )),
        None => {
            Err("the profiler command was killed by a signal; what it wrote is not filed".into())
        }
    }
}

/// Reads `out` with `build`'s profile readers; a profile without samples
/// is refused (a profiler that attached to nothing writes an empty file).
pub(crate) fn read_profile(
    out: &Path,
    settings: &crate::config::Settings,
) -> Result<Vec<String>, Error> {
    let file = crate::ingest::input::InputFile::open(out).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::at(out, None, "the profiler command wrote no file here")
        } else {
            Error::io(out, e)
        }
    })?;
    let bytes = crate::ingest::limits::read_document(&file, &settings.limits)
        .map_err(|e| Error::io(out, e))?;
    let profile = crate::profile::parse(&bytes, out)?;
    if profile.stacks.is_empty() || profile.total <= 0.0 {
        return Err(Error::at(
            out,
            None,
            format!(
                "the profile holds no samples ({}): not filed",
                profile.warnings.join("; ")
            )
            .replace(" (): ", ": "),
        ));
    }
    Ok(profile.warnings)
}

/// Copies `from` into `dir/name` through a hidden temporary file (which
/// `build` never reads) renamed into place; never replaces a file.
fn file_into(from: &Path, dir: &Path, name: &str) -> Result<PathBuf, Error> {
    let target = dir.join(name);
    let (mut file, temp) = tempfile::Builder::new()
        .prefix(".perfdash-profile-")
        .tempfile_in(dir)
        .map_err(|e| Error::io(dir, e))?
        .keep()
        .map_err(|e| Error::io(dir, e.error))?;
    let copied = std::fs::File::open(from)
        .and_then(|mut src| std::io::copy(&mut src, &mut file))
        .and_then(|_| file.flush())
        .and_then(|()| file.sync_all())
        .map_err(|e| Error::io(from, e))
        .and_then(|()| {
            crate::write::rename_no_replace(&temp, &target).map_err(|e| {
                Error::at(
                    &target,
                    None,
                    format!("could not move the profile into place ({e})"),
                )
            })
        });
    if copied.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    copied.map(|()| target)
}

/// The endpoints the gate failed in `report`, for the message.
pub fn regressed_endpoints(report: &CheckReport) -> Vec<&str> {
    report
        .endpoints
        .iter()
        .filter(|e| matches!(e.status, CheckStatus::Regression | CheckStatus::Failed))
        .map(|e| e.endpoint.as_str())
        .collect()
}

/// Runs the profiler when `report` (the recorded run, judged) is a
/// regression and files its output into `run_dir/<endpoint>/`.
pub fn profile_if_regressed(
    report: &CheckReport,
    request: &ProfileRequest,
    run_dir: &Path,
    endpoint: &str,
    settings: &crate::config::Settings,
) -> ProfileOutcome {
    if report.outcome != Outcome::Regression {
        return ProfileOutcome::NotRun {
            outcome: report.outcome,
            headline: crate::report::check::headline(report),
        };
    }
    take_profile(request, run_dir, &report.run, endpoint, settings)
}

/// Runs the profiler and files its output into `run_dir/<endpoint>/`,
/// whatever the run's verdict (`--profile-every-run`, and
/// [`profile_if_regressed`] once it has decided to).
pub fn take_profile(
    request: &ProfileRequest,
    run_dir: &Path,
    run: &str,
    endpoint: &str,
    settings: &crate::config::Settings,
) -> ProfileOutcome {
    let scratch = match tempfile::Builder::new()
        .prefix("perfdash-profile-")
        .tempdir()
    {
        Ok(dir) => dir,
        Err(e) => return ProfileOutcome::Refused(Error::io(&std::env::temp_dir(), e)),
    };
    let out = scratch.path().join(request.file_name());
    let filed = run_profiler(&request.command, &out, run, endpoint)
        .map_err(|why| Error::at(&out, None, why))
        .and_then(|()| read_profile(&out, settings))
        .and_then(|warnings| {
            file_into(&out, &run_dir.join(endpoint), &request.file_name())
                .map(|path| ProfileOutcome::Filed { path, warnings })
        });
    match filed {
        Ok(filed) => filed,
        Err(e) => {
            // What the profiler wrote stays where the message points, for a
            // look at why it was refused (it is outside the archive).
            if out.exists() {
                let _ = scratch.keep();
            }
            ProfileOutcome::Refused(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(kind: &str, ext: &str) -> ProfileRequest {
        ProfileRequest {
            command: "true".into(),
            kind: kind.into(),
            extension: ext.into(),
        }
    }

    #[test]
    fn names_build_reads_back_as_given() {
        assert_eq!(
            request("cpu", "collapsed").file_name(),
            "flame.cpu.collapsed"
        );
        for (kind, ext) in [("cpu", "collapsed"), ("alloc", "html"), ("wall", "txt.gz")] {
            assert!(request(kind, ext).validate().is_ok(), "{kind} {ext}");
        }
        for (kind, ext) in [
            ("CPU", "txt"),
            ("cpu", ""),
            ("cpu", "a/b"),
            ("1x", "txt"),
            ("cpu", ".txt"),
        ] {
            assert!(request(kind, ext).validate().is_err(), "{kind} {ext}");
        }
    }

    #[test]
    fn substitutions_are_single_shell_words() {
        let cmd = substitute(
            "asprof -d 30 -f {out} --title {run}-{endpoint}",
            Path::new("/tmp/a b/flame.cpu.html"),
            "2026-05-04T0300Z",
            "it's",
        );
        assert_eq!(
            cmd,
            r"asprof -d 30 -f '/tmp/a b/flame.cpu.html' --title '2026-05-04T0300Z'-'it'\''s'"
        );
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                "printf '%s|' {}",
                substitute("{out} {endpoint}", Path::new("/x y"), "r", "a'b c")
            ))
            .output()
            .unwrap();
        assert_eq!(String::from_utf8(out.stdout).unwrap(), "/x y|a'b c|");
    }
}
