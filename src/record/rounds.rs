//! `perfdash record --rounds N --pause D -- CMD …`: runs the load test
//! once per round, the seed's loop, and hands the outputs to [`super::record`].
//!
//! The command is run directly (no shell), with `{out}` and `{round}`
//! substituted in every argument. A round whose command fails is kept
//! (its output, if it wrote one, is filed like the others) and marked in
//! run.toml (`failed_rounds`), never retried silently.

use std::os::fd::AsFd as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What the rounds produced.
#[derive(Debug)]
pub struct RoundsOutcome {
    /// The files the rounds wrote (`round-<n>.<ext>`, and what a tool
    /// wrote beside it under `{prefix}`), in round order.
    pub files: Vec<PathBuf>,
    /// Rounds whose command did not succeed: `2 (exit 99)`, …
    pub failed: Vec<String>,
}

/// Parses `--pause`: a number with `ms`, `s`, `m` or `h` (`10s`, `1.5m`).
pub fn parse_pause(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("'{text}' is not a duration such as 10s, 500ms or 2m"))?;
    let seconds = match unit {
        "ms" => value / 1000.0,
        "s" | "" => value,
        "m" => value * 60.0,
        "h" => value * 3600.0,
        _ => return Err(format!("'{text}': the unit must be ms, s, m or h")),
    };
    if !seconds.is_finite() || !(0.0..=86_400.0).contains(&seconds) {
        return Err(format!("'{text}' must be between 0 and 24 h"));
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// `arg` with `{out}` (the round's file), `{prefix}` (the same path
/// without its extension, for tools that name their files themselves:
/// Locust's `--csv {prefix}` writes `{prefix}_stats.csv`, k6's
/// `--summary-export {prefix}.json` a summary beside `--out json={out}`)
/// and `{round}` substituted.
pub fn substitute(arg: &str, out: &Path, round: u32) -> String {
    arg.replace("{out}", &out.to_string_lossy())
        .replace("{prefix}", &prefix_of(out).to_string_lossy())
        .replace("{round}", &round.to_string())
}

/// `{prefix}`: `dir/round-<n>` for `dir/round-<n>.<ext>`.
fn prefix_of(out: &Path) -> PathBuf {
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name.split_once('.').map_or(name.as_str(), |(stem, _)| stem);
    out.with_file_name(stem)
}

/// The files round `round` wrote into `dir`: every `round-<n>.…` and
/// `round-<n>_…` (its `{out}`, a summary beside it, the files Locust
/// writes), in name order.
fn files_of_round(dir: &Path, round: u32) -> std::io::Result<Vec<PathBuf>> {
    let (dot, underscore) = (format!("round-{round}."), format!("round-{round}_"));
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.starts_with(&dot) || name.starts_with(&underscore)
        })
        .map(|e| e.path())
        .collect();
    files.sort();
    Ok(files)
}

/// Runs `command` once per round into `dir` (`round-<n>.<extension>`),
/// waiting `pause` between rounds. The command's own output goes to
/// stderr, so stdout stays the run id alone.
pub fn run_rounds(
    command: &[String],
    rounds: u32,
    pause: Duration,
    dir: &Path,
    extension: &str,
) -> Result<RoundsOutcome, String> {
    let (program, args) = command.split_first().ok_or(
        "no command after --: say what runs one round, e.g. -- k6 run --out json={out} script.js",
    )?;
    if !command
        .iter()
        .any(|a| a.contains("{out}") || a.contains("{prefix}"))
    {
        return Err(
            "the command never mentions {out} (or {prefix}): perfdash would not find its results"
                .into(),
        );
    }
    let mut files = Vec::new();
    let mut failed = Vec::new();
    for round in 1..=rounds {
        if round > 1 && !pause.is_zero() {
            std::thread::sleep(pause);
        }
        let out = dir.join(format!("round-{round}.{extension}"));
        eprintln!("round {round}/{rounds}: {} …", crate::term::escape(program));
        use std::os::unix::process::CommandExt as _;
        let mut command = std::process::Command::new(substitute(program, &out, round));
        command
            .args(args.iter().map(|a| substitute(a, &out, round)))
            // Its own process group, so that a signal to `record` ends
            // the load test and whatever it started (`cleanup`).
            .process_group(0)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::from(
                std::io::stderr()
                    .as_fd()
                    .try_clone_to_owned()
                    .map_err(|e| e.to_string())?,
            ));
        // A signal to `record` ends the load test before its folder goes,
        // and no round starts after it.
        let (mut child, registered) = crate::cleanup::spawn_registered(&mut command)
            .map_err(|e| format!("could not start {}: {e}", crate::term::escape(program)))?;
        let status = child
            .wait()
            .map_err(|e| format!("could not wait for {}: {e}", crate::term::escape(program)))?;
        drop(registered);
        if !status.success() {
            let why = match status.code() {
                Some(code) => format!("exit {code}"),
                None => "killed by a signal".to_string(),
            };
            eprintln!("round {round}: the command failed ({why}); kept and marked in run.toml");
            failed.push(format!("{round} ({why})"));
        }
        let written = files_of_round(dir, round).map_err(|e| e.to_string())?;
        if written.is_empty() {
            eprintln!("round {round}: no {} was written", out.display());
            if status.success() {
                failed.push(format!("{round} (no output)"));
            }
        }
        files.extend(written);
    }
    Ok(RoundsOutcome { files, failed })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses() {
        assert_eq!(parse_pause("10s").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_pause("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_pause("1.5m").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_pause("0").unwrap(), Duration::ZERO);
        for bad in ["", "s", "10x", "-1s", "2d", "25h"] {
            assert!(parse_pause(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn substitution() {
        assert_eq!(
            substitute("json={out}", Path::new("/t/round-2.ndjson.gz"), 2),
            "json=/t/round-2.ndjson.gz"
        );
        assert_eq!(substitute("seed-{round}", Path::new("x"), 3), "seed-3");
        assert_eq!(
            substitute("--csv={prefix}", Path::new("/t/round-4.ndjson.gz"), 4),
            "--csv=/t/round-4"
        );
    }

    #[test]
    fn every_file_a_round_writes_is_kept_and_nothing_of_another_round() {
        let dir = tempfile::tempdir().unwrap();
        // As `locust --csv {prefix}` and `k6 --summary-export {prefix}.json`.
        let script = "echo x > {prefix}_stats.csv; echo y > {prefix}_failures.csv; \
                      echo z > {prefix}.json; echo w > {out}";
        let command: Vec<String> = ["sh", "-c", script].map(String::from).to_vec();
        let outcome = run_rounds(&command, 10, Duration::ZERO, dir.path(), "csv").unwrap();
        let names: Vec<String> = outcome
            .files
            .iter()
            .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 40, "{names:?}");
        assert_eq!(
            names[..4],
            [
                "round-1.csv",
                "round-1.json",
                "round-1_failures.csv",
                "round-1_stats.csv"
            ]
        );
        assert_eq!(
            names[36], "round-10.csv",
            "round-1 never takes round-10's files"
        );
        assert!(outcome.failed.is_empty());
    }

    #[test]
    fn failed_rounds_are_kept_and_marked() {
        let dir = tempfile::tempdir().unwrap();
        // Round 2 fails after writing its output; every round writes one.
        let script = "echo r{round} > {out}; test {round} != 2";
        let command: Vec<String> = ["sh", "-c", script].map(String::from).to_vec();
        let outcome = run_rounds(&command, 3, Duration::ZERO, dir.path(), "csv").unwrap();
        assert_eq!(outcome.files.len(), 3);
        assert_eq!(outcome.failed, ["2 (exit 1)"]);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("round-2.csv")).unwrap(),
            "r2\n"
        );
    }
}
