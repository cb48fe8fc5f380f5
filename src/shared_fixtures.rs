//! Where the third-party conformance fixtures are: `../shared/fixtures`
//! beside the repository. CI always has them; a user's clone may not.
//! The one test helper that decides what a test does without them (unit
//! tests in `src/` and integration tests in `tests/` both ask it):
//!
//! * present: the path;
//! * absent, `CI` unset: `None`, and the test says plainly that it was
//!   skipped (and passes);
//! * absent (or a file missing from them) with `CI` set: the test
//!   **fails**, so that a CI run without the fixtures can never pass by
//!   skipping them.

use std::path::PathBuf;

/// `../shared/fixtures`, when it is there (see the module notes for what
/// happens when it is not).
pub fn dir() -> Option<PathBuf> {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/fixtures"));
    if dir.is_dir() {
        return Some(dir);
    }
    missing("../shared/fixtures is not present in this checkout")
}

/// The file `rel` inside `../shared/fixtures`, when it is there.
pub fn file(rel: &str) -> Option<PathBuf> {
    let path = dir()?.join(rel);
    if path.exists() {
        return Some(path);
    }
    missing(&format!("../shared/fixtures/{rel} is not present"))
}

fn missing(what: &str) -> Option<PathBuf> {
    if in_ci() {
        panic!(
            "{what}, and CI is set: CI always has the shared fixtures, so the conformance tests \
             must run there"
        );
    }
    eprintln!("skipped: {what}");
    None
}

/// Whether `CI` is set to anything but `false` or `0` (what CI services,
/// and `.ci/run`, set).
fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

#[cfg(test)]
mod tests {
    /// Without the folder, and with `CI` set, a test that needs it fails.
    /// (Run in a child process: the environment is the test binary's.)
    #[test]
    fn a_missing_fixture_fails_under_ci_and_is_skipped_otherwise() {
        if std::env::var_os("PERFDASH_FIXTURE_CHILD").is_some() {
            let _ = super::file("no/such/fixture.json");
            return;
        }
        let exe = std::env::current_exe().unwrap();
        let run = |ci: Option<&str>| {
            let mut cmd = std::process::Command::new(&exe);
            cmd.args([
                "--exact",
                "shared_fixtures::tests::a_missing_fixture_fails_under_ci_and_is_skipped_otherwise",
                "--nocapture",
            ])
            .env("PERFDASH_FIXTURE_CHILD", "1")
            .env_remove("CI");
            if let Some(ci) = ci {
                cmd.env("CI", ci);
            }
            cmd.output().unwrap()
        };
        let ci = run(Some("true"));
        assert!(!ci.status.success(), "fails under CI=true");
        assert!(
            String::from_utf8_lossy(&ci.stderr).contains("CI is set"),
            "{}",
            String::from_utf8_lossy(&ci.stderr)
        );
        for skipped in [run(None), run(Some("false"))] {
            assert!(skipped.status.success(), "skipped without CI");
            assert!(String::from_utf8_lossy(&skipped.stderr).contains("skipped: "));
        }
    }
}
