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
    /// The round files written, named `round-<n>.<ext>`, in order.
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

/// `arg` with `{out}` and `{round}` substituted.
pub fn substitute(arg: &str, out: &Path, round: u32) -> String {
    arg.replace("{out}", &out.to_string_lossy())
        .replace("{round}", &round.to_string())
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
    if !command.iter().any(|a| a.contains("{out}")) {
        return Err("the command never mentions {out}: perfdash would not find its results".into());
    }
    let mut files = Vec::new();
    let mut failed = Vec::new();
    for round in 1..=rounds {
        if round > 1 && !pause.is_zero() {
            std::thread::sleep(pause);
        }
        let out = dir.join(format!("round-{round}.{extension}"));
        eprintln!("round {round}/{rounds}: {program} …");
        let status = std::process::Command::new(substitute(program, &out, round))
            .args(args.iter().map(|a| substitute(a, &out, round)))
            .stdout(std::process::Stdio::from(
                std::io::stderr()
                    .as_fd()
                    .try_clone_to_owned()
                    .map_err(|e| e.to_string())?,
            ))
            .status()
            .map_err(|e| format!("could not start {program}: {e}"))?;
        if !status.success() {
            let why = match status.code() {
                Some(code) => format!("exit {code}"),
                None => "killed by a signal".to_string(),
            };
            eprintln!("round {round}: the command failed ({why}); kept and marked in run.toml");
            failed.push(format!("{round} ({why})"));
        }
        if out.is_file() {
            files.push(out);
        } else {
            eprintln!("round {round}: no {} was written", out.display());
            if status.success() {
                failed.push(format!("{round} (no output)"));
            }
        }
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
