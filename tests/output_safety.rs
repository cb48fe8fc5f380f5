//! A build that fails at any stage leaves the previous site byte-identical
//! and writes nothing anywhere else. (The settings-error case, a failure
//! before anything is rendered, is in tests/build.rs.)

mod common;

use std::path::Path;

use assert_cmd::Command;
use perfdash::render::Site;
use perfdash::write::{WriteOptions, write_site};

fn build(archive: &Path, out: &Path) -> std::process::Output {
    Command::cargo_bin("perfdash")
        .unwrap()
        .args(["build", "--archive"])
        .arg(archive)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap()
}

/// The entries of `dir`, leaving out the round cache, which perfdash
/// keeps beside the output by design (docs/raw-results.md).
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != ".perfdash-cache")
        .collect();
    v.sort();
    v
}

/// A previous site at `<tmp>/site`, built from a healthy archive.
fn previous_site() -> (
    tempfile::TempDir,
    std::path::PathBuf,
    Vec<(String, Vec<u8>)>,
) {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    common::story_archive(&archive);
    let out = tmp.path().join("site");
    assert_eq!(build(&archive, &out).status.code(), Some(0));
    let before = common::tree(&out);
    assert!(before.len() > 10);
    (tmp, out, before)
}

#[test]
fn a_failure_in_the_middle_of_writing_leaves_the_previous_site() {
    let (tmp, out, before) = previous_site();
    // Files are written in path order: `a` is written, then `a/b.html`
    // needs `a` to be a folder: a genuine I/O error halfway through.
    let mut site = Site::default();
    site.insert("a", b"file".to_vec());
    site.insert("a/b.html", b"page".to_vec());
    site.insert("index.html", b"new".to_vec());
    let err = write_site(
        &site,
        &WriteOptions {
            out: out.clone(),
            archive: tmp.path().join("archive"),
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(err.to_string().contains("a"), "{err}");
    assert_eq!(common::tree(&out), before, "previous site byte-identical");
    assert_eq!(
        names(tmp.path()),
        ["archive", "site"],
        "no staging folder left"
    );
}

#[test]
fn a_path_escaping_the_site_fails_after_other_files_are_staged() {
    let (tmp, out, before) = previous_site();
    let mut site = Site::default();
    site.insert("index.html", b"new".to_vec());
    site.insert("zz/../../../evil.html", b"x".to_vec());
    let err = write_site(
        &site,
        &WriteOptions {
            out: out.clone(),
            archive: tmp.path().join("archive"),
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(err.to_string().contains("outside the site"), "{err}");
    assert_eq!(common::tree(&out), before);
    assert_eq!(names(tmp.path()), ["archive", "site"]);
    assert!(!tmp.path().parent().unwrap().join("evil.html").exists());
}

#[test]
fn an_out_path_under_a_file_fails_and_touches_nothing() {
    let (tmp, _out, _) = previous_site();
    let blocker = tmp.path().join("report.txt");
    std::fs::write(&blocker, "keep").unwrap();
    let before = common::tree(tmp.path());
    let o = build(&tmp.path().join("archive"), &blocker.join("site"));
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("report.txt"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(common::tree(tmp.path()), before);
}

#[test]
fn a_file_at_the_out_path_is_never_replaced() {
    let (tmp, _out, _) = previous_site();
    let file = tmp.path().join("site.html");
    std::fs::write(&file, "mine").unwrap();
    for extra in [&[][..], &["--force"][..]] {
        let o = Command::cargo_bin("perfdash")
            .unwrap()
            .args(["build", "--archive"])
            .arg(tmp.path().join("archive"))
            .arg("--out")
            .arg(&file)
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{extra:?}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine");
    }
}

#[cfg(unix)]
#[test]
fn a_symlink_at_the_out_path_is_not_followed_into_the_archive() {
    let (tmp, _out, _) = previous_site();
    let archive = tmp.path().join("archive");
    let before = common::tree(&archive);
    let link = tmp.path().join("link");
    std::os::unix::fs::symlink(&archive, &link).unwrap();
    let o = build(&archive, &link);
    assert_eq!(o.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("is a symbolic link") && stderr.contains("does not write through links"),
        "{stderr}"
    );
    assert_eq!(common::tree(&archive), before);
}

#[test]
fn the_home_folder_is_refused_even_with_force() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    common::story_archive(&archive);
    let home = tmp.path().join("home");
    std::fs::create_dir(&home).unwrap();
    std::fs::write(home.join(".bashrc"), "keep").unwrap();
    let o = Command::cargo_bin("perfdash")
        .unwrap()
        .env("HOME", &home)
        .args(["build", "--force", "--archive"])
        .arg(&archive)
        .arg("--out")
        .arg(&home)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("home folder"));
    assert_eq!(
        std::fs::read_to_string(home.join(".bashrc")).unwrap(),
        "keep"
    );
    // Nor the folder that holds it, nor the current folder's parent.
    let user = home.join("user");
    std::fs::create_dir(&user).unwrap();
    for (cwd, out) in [(tmp.path(), home.clone()), (user.as_path(), home.clone())] {
        let o = Command::cargo_bin("perfdash")
            .unwrap()
            .env("HOME", &user)
            .current_dir(cwd)
            .args(["build", "--force", "--archive"])
            .arg(&archive)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(2),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(user.is_dir() && home.join(".bashrc").is_file());
    }
    let o = Command::cargo_bin("perfdash")
        .unwrap()
        .current_dir(&user)
        .args(["build", "--force", "--archive"])
        .arg(&archive)
        .args(["--out", ".."])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("current folder"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(home.join(".bashrc").is_file());
}
