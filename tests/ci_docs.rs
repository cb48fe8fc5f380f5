//! The CI workflows in docs/ci.md keep `perfdash record`'s and `perfdash
//! check`'s exit codes (issue 32): each step that runs perfdash is run
//! here, as the CI system runs it (GitHub: `bash -e`, or `bash --noprofile
//! --norc -eo pipefail` with `shell: bash`; GitLab: the script lines in
//! one `bash` with `set -eo pipefail`), with a stand-in `perfdash` that
//! exits with the code under test, and must end with that code. (A step
//! written `echo "RUN=$(perfdash record …)"` or `perfdash check … || true`
//! once swallowed them.)

use std::path::{Path, PathBuf};
use std::process::Command;

fn ci_md() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/ci.md")).unwrap()
}

/// The ```yaml blocks of docs/ci.md.
fn yaml_blocks(text: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut open: Option<String> = None;
    for line in text.lines() {
        match (&mut open, line.trim_end()) {
            (None, "```yaml") => open = Some(String::new()),
            (Some(_), "```") => blocks.extend(open.take()),
            (Some(body), line) => {
                body.push_str(line);
                body.push('\n');
            }
            (None, _) => {}
        }
    }
    blocks
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// A GitHub Actions step: its `run` script and whether it says
/// `shell: bash` (which adds `-o pipefail`).
struct Step {
    script: String,
    pipefail: bool,
}

/// The steps of a GitHub workflow: `run: |` blocks and one-line `run:`.
fn github_steps(block: &str) -> Vec<Step> {
    let lines: Vec<&str> = block.lines().collect();
    let mut steps = Vec::new();
    let mut pipefail = false;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let t = line.trim_start().trim_start_matches("- ");
        if line.trim_start().starts_with("- ") {
            pipefail = false;
        }
        if t.starts_with("shell: bash") {
            pipefail = true;
        }
        if let Some(rest) = t.strip_prefix("run: ") {
            let key_indent = indent(line) + (line.trim_start().len() - t.len());
            let script = if rest.trim() == "|" {
                let mut body = String::new();
                while i + 1 < lines.len()
                    && (lines[i + 1].trim().is_empty() || indent(lines[i + 1]) > key_indent)
                {
                    i += 1;
                    body.push_str(lines[i].trim_start());
                    body.push('\n');
                }
                body
            } else {
                format!("{rest}\n")
            };
            steps.push(Step { script, pipefail });
        }
        i += 1;
    }
    steps
}

/// The `script:` of a GitLab job as one shell script (each item a line,
/// `- |` items with their lines).
fn gitlab_script(block: &str) -> Option<String> {
    let lines: Vec<&str> = block.lines().collect();
    let start = lines.iter().position(|l| l.trim() == "script:")?;
    let item_indent = indent(lines[start + 1]);
    let mut script = String::new();
    let mut i = start + 1;
    while i < lines.len() && indent(lines[i]) >= item_indent {
        let line = lines[i];
        let t = line.trim_start();
        if indent(line) == item_indent && t.starts_with("- |") {
            while i + 1 < lines.len() && indent(lines[i + 1]) > item_indent {
                i += 1;
                script.push_str(lines[i].trim_start());
                script.push('\n');
            }
        } else if indent(line) == item_indent && t.starts_with("- ") {
            script.push_str(&t[2..]);
            script.push('\n');
        } else if t.starts_with('#') {
        } else {
            script.push_str(t);
            script.push('\n');
        }
        i += 1;
        if i < lines.len() && indent(lines[i]) < item_indent {
            break;
        }
    }
    Some(script)
}

/// A folder of stand-ins: `perfdash` exits with `$FAKE_RECORD` /
/// `$FAKE_CHECK` (printing a run id / a comment), and the other tools the
/// workflows call do nothing.
fn stand_ins() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let write = |name: &str, body: &str| {
        let path = bin.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    write(
        "perfdash",
        "case \"$1\" in\n\
         record) [ \"$FAKE_RECORD\" = 2 ] || echo 2026-05-04T0300Z; exit \"$FAKE_RECORD\";;\n\
         check) echo '<!-- perfdash:check -->'; echo \"verdict $FAKE_CHECK\"; exit \"$FAKE_CHECK\";;\n\
         *) exit 0;;\n\
         esac",
    );
    for tool in ["pip", "cargo", "k6", "git", "gh", "jq"] {
        write(tool, "exit 0");
    }
    // The comment is posted: note it.
    write("curl", "echo posted >> \"$POSTED\"");
    (dir, bin)
}

struct Ran {
    code: i32,
    posted: bool,
}

fn run_script(script: &str, shell_flags: &[&str], record: i32, check: i32) -> Ran {
    let (dir, bin) = stand_ins();
    // GitHub expressions are filled in by the runner, before the shell.
    let mut filled = String::new();
    let mut rest = script;
    while let Some(start) = rest.find("${{") {
        filled.push_str(&rest[..start]);
        let end = rest[start..].find("}}").unwrap() + start + 2;
        filled.push_str("42");
        rest = &rest[end..];
    }
    filled.push_str(rest);
    let posted = dir.path().join("posted");
    let out = Command::new("bash")
        .args(shell_flags)
        .arg("-c")
        .arg(&filled)
        .current_dir(dir.path())
        .env_clear()
        .env(
            "PATH",
            format!(
                "{}:{}",
                bin.display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .env("FAKE_RECORD", record.to_string())
        .env("FAKE_CHECK", check.to_string())
        .env("POSTED", &posted)
        .env("GITHUB_ENV", dir.path().join("github_env"))
        .env("GITHUB_STEP_SUMMARY", dir.path().join("summary"))
        .env("RUN", "2026-05-04T0300Z")
        .env("ARCHIVE", "perf-archive")
        .env("CI_MERGE_REQUEST_IID", "7")
        .output()
        .unwrap();
    Ran {
        code: out.status.code().unwrap_or(-1),
        posted: posted.exists(),
    }
}

#[test]
fn the_github_workflow_keeps_the_exit_codes_of_record_and_check() {
    let text = ci_md();
    let steps: Vec<Step> = yaml_blocks(&text)
        .iter()
        .flat_map(|b| github_steps(b))
        .collect();
    let record: Vec<&Step> = steps
        .iter()
        .filter(|s| s.script.contains("perfdash record"))
        .collect();
    let check: Vec<&Step> = steps
        .iter()
        .filter(|s| s.script.contains("perfdash check"))
        .collect();
    assert!(
        !record.is_empty() && !check.is_empty(),
        "the steps are found"
    );
    let flags = |s: &Step| -> Vec<&'static str> {
        if s.pipefail {
            vec!["--noprofile", "--norc", "-eo", "pipefail"]
        } else {
            vec!["-e"]
        }
    };
    for step in record {
        for code in [0, 2] {
            let ran = run_script(&step.script, &flags(step), code, 0);
            assert_eq!(ran.code, code, "record exits {code}:\n{}", step.script);
        }
    }
    for step in check {
        for code in [0, 1, 2] {
            let ran = run_script(&step.script, &flags(step), 0, code);
            assert_eq!(ran.code, code, "check exits {code}:\n{}", step.script);
        }
    }
}

#[test]
fn the_gitlab_job_keeps_the_exit_codes_of_record_and_check_and_still_comments() {
    let text = ci_md();
    let script = yaml_blocks(&text)
        .iter()
        .find_map(|b| gitlab_script(b).filter(|s| s.contains("perfdash check")))
        .expect("the GitLab job");
    let flags = ["-eo", "pipefail"];
    for code in [0, 1, 2] {
        let ran = run_script(&script, &flags, 0, code);
        assert_eq!(ran.code, code, "check exits {code}:\n{script}");
        assert!(ran.posted, "the comment is posted whatever the verdict");
    }
    let ran = run_script(&script, &flags, 2, 0);
    assert_eq!(ran.code, 2, "a refused record ends the job:\n{script}");
    assert!(!ran.posted);
}

#[test]
fn no_command_substitution_swallows_a_perfdash_exit_code() {
    for block in yaml_blocks(&ci_md()) {
        for line in block.lines() {
            let line = line.trim_start().trim_start_matches("- ");
            if let Some(at) = line.find("$(perfdash") {
                // Only an assignment keeps the command's status.
                let before = line[..at].trim_end();
                assert!(
                    before.ends_with('=') && !before.contains(' '),
                    "a command substitution that swallows perfdash's exit code: {line}"
                );
            }
            assert!(
                !(line.contains("perfdash") && line.contains("|| true")),
                "`|| true` swallows perfdash's exit code: {line}"
            );
        }
    }
}
