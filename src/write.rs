//! Writing the site: the only code that writes files.
//!
//! The site is written into a fresh temporary folder beside the target and
//! swapped in only when complete, so a failed build leaves the previous
//! site as it was. perfdash refuses to write into the archive, to `/`, to
//! the home folder, or over a non-empty folder it did not write itself
//! (unless `--force`).

use std::path::{Component, Path, PathBuf};

use crate::error::Error;
use crate::render::Site;

/// The marker file that says "perfdash wrote this folder and may replace it".
pub const MARKER_FILE: &str = ".perfdash-site";
const MARKER_TEXT: &str =
    "This folder is a site written by perfdash; `perfdash build` replaces it as a whole.\n";

#[derive(Debug, Clone)]
pub struct WriteOptions {
    pub out: PathBuf,
    /// The archive being read: never written into.
    pub archive: PathBuf,
    pub force: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    pub files: usize,
    pub bytes: u64,
}

/// Checks, before anything is read or written, that `opts.out` is a
/// place perfdash may replace (the same check `write_site` makes), so
/// that a refused target costs nothing and leaves nothing behind.
pub fn check_output(opts: &WriteOptions) -> Result<(), Error> {
    check_target(&absolute(&opts.out)?, &absolute(&opts.archive)?, opts.force)
}

/// Whether `path` lies inside the archive (after resolving `..` and links).
pub fn inside_archive(path: &Path, archive: &Path) -> Result<bool, Error> {
    Ok(absolute(path)?.starts_with(absolute(archive)?))
}

/// Writes `site` to `opts.out`, replacing what was there.
pub fn write_site(site: &Site, opts: &WriteOptions) -> Result<Written, Error> {
    let out = absolute(&opts.out)?;
    check_target(&out, &absolute(&opts.archive)?, opts.force)?;
    let parent = out
        .parent()
        .ok_or_else(|| Error::Usage(format!("cannot write a site at {}", out.display())))?;
    std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();

    let staging = tempfile::Builder::new()
        .prefix(&format!(".{name}.perfdash-new-"))
        .tempdir_in(parent)
        .map_err(|e| Error::io(parent, e))?;
    let mut written = Written { files: 0, bytes: 0 };
    for (rel, bytes) in site.files() {
        let target = staging.path().join(checked_relative(rel)?);
        if let Some(dir) = target.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        }
        std::fs::write(&target, bytes).map_err(|e| Error::io(&target, e))?;
        written.files += 1;
        written.bytes += bytes.len() as u64;
    }
    let marker = staging.path().join(MARKER_FILE);
    std::fs::write(&marker, MARKER_TEXT).map_err(|e| Error::io(&marker, e))?;

    swap_in(staging, &out)?;
    Ok(written)
}

/// Moves the finished staging folder to `out`. An existing site is first
/// moved aside, then removed once the new one is in place; if the second
/// rename fails the old site is put back.
fn swap_in(staging: tempfile::TempDir, out: &Path) -> Result<(), Error> {
    let parent = out.parent().expect("checked by the caller");
    if std::fs::symlink_metadata(out).is_err() {
        let path = staging.keep();
        return std::fs::rename(&path, out).map_err(|e| Error::io(out, e));
    }
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let old = tempfile::Builder::new()
        .prefix(&format!(".{name}.perfdash-old-"))
        .tempdir_in(parent)
        .map_err(|e| Error::io(parent, e))?;
    let old_path = old.path().join("site");
    std::fs::rename(out, &old_path).map_err(|e| Error::io(out, e))?;
    let new_path = staging.keep();
    if let Err(e) = std::fs::rename(&new_path, out) {
        let _ = std::fs::rename(&old_path, out);
        let _ = std::fs::remove_dir_all(&new_path);
        return Err(Error::io(out, e));
    }
    drop(old); // removes the previous site
    Ok(())
}

/// Refuses targets that would lose data.
fn check_target(out: &Path, archive: &Path, force: bool) -> Result<(), Error> {
    if out.parent().is_none() {
        return Err(Error::Usage("refusing to write the site to /".into()));
    }
    // The home folder, the current folder, and any folder holding either
    // would be replaced as a whole, even with --force: never.
    if let Some(home) = std::env::var_os("HOME").map(PathBuf::from)
        && absolute(&home).is_ok_and(|h| h.starts_with(out))
    {
        return Err(Error::Usage(format!(
            "refusing to write the site to {}: it is the home folder or holds it",
            out.display()
        )));
    }
    if let Ok(cwd) = std::env::current_dir()
        && absolute(&cwd).is_ok_and(|c| c.starts_with(out))
    {
        return Err(Error::Usage(format!(
            "refusing to write the site to {}: it is the current folder or holds it",
            out.display()
        )));
    }
    if out.starts_with(archive) || archive.starts_with(out) {
        return Err(Error::Usage(format!(
            "refusing to write the site to {}: it overlaps the archive {} (perfdash never writes into the archive)",
            out.display(),
            archive.display()
        )));
    }
    match std::fs::symlink_metadata(out) {
        Err(_) => Ok(()),
        Ok(meta) if !meta.is_dir() => Err(Error::Usage(format!(
            "refusing to replace {}: it is not a folder",
            out.display()
        ))),
        Ok(_) => {
            let is_site = out.join(MARKER_FILE).is_file();
            let empty = std::fs::read_dir(out)
                .map_err(|e| Error::io(out, e))?
                .next()
                .is_none();
            if is_site || empty || force {
                Ok(())
            } else {
                Err(Error::Usage(format!(
                    "refusing to replace {}: it is a non-empty folder that perfdash did not write \
                     (no {MARKER_FILE} marker); choose another --out or pass --force to replace it",
                    out.display()
                )))
            }
        }
    }
}

/// An absolute, lexically normalised path, with symbolic links of the
/// existing part resolved, so that overlap checks cannot be fooled by
/// `..` or links.
fn absolute(path: &Path) -> Result<PathBuf, Error> {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map_err(|e| Error::io(path, e))?
            .join(path)
    };
    let mut normal = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                normal.pop();
            }
            Component::CurDir => {}
            other => normal.push(other),
        }
    }
    // Resolve links in the longest existing prefix.
    let mut existing = normal.clone();
    let mut rest = Vec::new();
    while !existing.exists() {
        match (
            existing.file_name().map(|n| n.to_os_string()),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => break,
        }
    }
    let mut resolved = existing.canonicalize().unwrap_or(existing);
    for name in rest.into_iter().rev() {
        resolved.push(name);
    }
    Ok(resolved)
}

/// A site path must be relative and stay inside the site.
fn checked_relative(rel: &str) -> Result<&Path, Error> {
    let p = Path::new(rel);
    if rel.is_empty() || p.components().any(|c| !matches!(c, Component::Normal(_))) {
        return Err(Error::Internal(format!(
            "refusing to write outside the site: {rel:?}"
        )));
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(files: &[(&str, &str)]) -> Site {
        let mut s = Site::default();
        for (p, b) in files {
            s.insert(p, b.as_bytes().to_vec());
        }
        s
    }

    fn opts(out: &Path, archive: &Path) -> WriteOptions {
        WriteOptions {
            out: out.to_path_buf(),
            archive: archive.to_path_buf(),
            force: false,
        }
    }

    #[test]
    fn writes_then_replaces_a_previous_site() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("site");
        let archive = tmp.path().join("archive");
        write_site(
            &site(&[("index.html", "one"), ("a/b.html", "x")]),
            &opts(&out, &archive),
        )
        .unwrap();
        write_site(&site(&[("index.html", "two")]), &opts(&out, &archive)).unwrap();
        assert_eq!(
            std::fs::read_to_string(out.join("index.html")).unwrap(),
            "two"
        );
        assert!(!out.join("a/b.html").exists(), "old pages are gone");
        assert!(out.join(MARKER_FILE).is_file());
        let leftovers: Vec<_> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(
            leftovers,
            vec![std::ffi::OsString::from("site")],
            "no temp folders left"
        );
    }

    #[test]
    fn refuses_foreign_folders_unless_forced() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("docs");
        std::fs::create_dir(&out).unwrap();
        std::fs::write(out.join("thesis.tex"), "precious").unwrap();
        let err = write_site(
            &site(&[("index.html", "x")]),
            &opts(&out, &tmp.path().join("a")),
        )
        .unwrap_err();
        assert!(err.to_string().contains("--force"), "{err}");
        assert_eq!(
            std::fs::read_to_string(out.join("thesis.tex")).unwrap(),
            "precious"
        );
        let mut forced = opts(&out, &tmp.path().join("a"));
        forced.force = true;
        write_site(&site(&[("index.html", "x")]), &forced).unwrap();
        assert!(out.join("index.html").exists());
    }

    #[test]
    fn refuses_the_archive_and_its_parents() {
        let tmp = tempfile::tempdir().unwrap();
        let archive = tmp.path().join("archive");
        std::fs::create_dir(&archive).unwrap();
        for out in [
            archive.clone(),
            archive.join("site"),
            tmp.path().to_path_buf(),
            archive.join("x/../../archive"),
        ] {
            let err = write_site(&site(&[("index.html", "x")]), &opts(&out, &archive)).unwrap_err();
            assert!(
                err.to_string().contains("overlaps the archive"),
                "{out:?}: {err}"
            );
        }
    }

    #[test]
    fn refuses_root_and_escaping_paths() {
        let tmp = tempfile::tempdir().unwrap();
        assert!(
            write_site(
                &site(&[("i", "x")]),
                &opts(Path::new("/"), &tmp.path().join("a"))
            )
            .is_err()
        );
        let err = write_site(
            &site(&[("../evil", "x")]),
            &opts(&tmp.path().join("s"), &tmp.path().join("a")),
        )
        .unwrap_err();
        assert!(err.to_string().contains("outside the site"));
        assert!(!tmp.path().join("evil").exists());
        assert!(
            !tmp.path().join("s").exists(),
            "a failed write leaves no site"
        );
    }
}
