//! Which output folders perfdash may replace, and which it refuses.

use std::path::{Component, Path, PathBuf};

use super::MARKER_FILE;
use crate::error::Error;

/// The name prefix of the folders a link-published site points to
/// (`site -> .site.perfdash-site-<id>`).
pub(super) fn link_target_prefix(name: &str) -> String {
    format!(".{name}.perfdash-site-")
}

/// How the output folder is there now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Existing {
    Nothing,
    /// A folder (a previous site, an empty folder, or with `--force` a
    /// foreign one).
    Folder,
    /// A symbolic link perfdash made to publish by link flips, and the
    /// folder it points to (a sibling).
    OurLink(PathBuf),
}

/// Refuses targets that would lose data, and says what is there.
pub(super) fn check_target(out: &Path, archive: &Path, force: bool) -> Result<Existing, Error> {
    let refuse = |why: String| {
        Err(Error::Usage(format!(
            "refusing to write the site to {}: {why}",
            out.display()
        )))
    };
    if out.parent().is_none() {
        return Err(Error::Usage("refusing to write the site to /".into()));
    }
    if out.starts_with(archive) || archive.starts_with(out) {
        return refuse(format!(
            "it overlaps the archive {} (perfdash never writes into the archive)",
            archive.display()
        ));
    }
    // A home folder, the current folder, or any folder holding one would
    // be replaced as a whole, even with --force: never.
    if let Some(home) = home_folders().into_iter().find(|h| h.starts_with(out)) {
        return refuse(format!(
            "it is a user's home folder or holds one ({}); choose a folder of its own, e.g. {}",
            home.display(),
            out.join("site").display()
        ));
    }
    if let Ok(cwd) = std::env::current_dir()
        && absolute(&cwd).is_ok_and(|c| c.starts_with(out))
    {
        return refuse("it is the current folder or holds it".into());
    }
    // A mount point cannot be renamed (the system says "Device or resource
    // busy"), and deleting a folder that holds one would reach into the
    // mounted file system.
    if let Some(mount) = mount_points().into_iter().find(|m| m.starts_with(out)) {
        return refuse(if mount == out {
            format!(
                "it is a mount point (a container volume or a disk); perfdash replaces its output \
                 folder as a whole, which a mount point cannot be. Write to a folder inside it, \
                 e.g. --out {}, and serve that folder",
                out.join("site").display()
            )
        } else {
            format!(
                "it holds the mount point {}; choose a folder that holds no mounted file system",
                mount.display()
            )
        });
    }
    match std::fs::symlink_metadata(out) {
        Err(_) => Ok(Existing::Nothing),
        Ok(meta) if meta.file_type().is_symlink() => match our_link_target(out) {
            Some(target) => Ok(Existing::OurLink(target)),
            None => refuse(format!(
                "it is a symbolic link{}; perfdash does not write through links. Pass the folder \
                 it points to as --out, or remove the link",
                std::fs::read_link(out)
                    .map(|t| format!(" (to {})", t.display()))
                    .unwrap_or_default()
            )),
        },
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
                Ok(Existing::Folder)
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

/// The folder `out` points to when it is a link perfdash made: a plain
/// sibling name with perfdash's prefix, holding the marker.
pub(super) fn our_link_target(out: &Path) -> Option<PathBuf> {
    let target = std::fs::read_link(out).ok()?;
    let name = out.file_name()?.to_string_lossy().into_owned();
    let target_name = target.to_str()?;
    let plain = target.components().count() == 1
        && matches!(target.components().next(), Some(Component::Normal(_)));
    if !plain || !target_name.starts_with(&link_target_prefix(&name)) {
        return None;
    }
    let folder = out.with_file_name(target_name);
    let meta = std::fs::symlink_metadata(&folder).ok()?;
    (meta.is_dir() && folder.join(MARKER_FILE).is_file()).then_some(folder)
}

/// Every user's home folder: `$HOME` and the password database
/// (`/etc/passwd`; users known only to a directory service are not seen,
/// `$HOME` still is). The root folder `/` some system users have is left
/// out: `/` is refused anyway.
fn home_folders() -> Vec<PathBuf> {
    let mut homes: Vec<PathBuf> = std::env::var_os("HOME")
        .map(PathBuf::from)
        .into_iter()
        .collect();
    if let Ok(passwd) = std::fs::read_to_string("/etc/passwd") {
        homes.extend(homes_in_passwd(&passwd));
    }
    homes
        .into_iter()
        .filter(|h| h.is_absolute() && h.parent().is_some())
        .map(|h| absolute(&h).unwrap_or(h))
        .collect()
}

/// The home folders of `/etc/passwd` text (`name:pw:uid:gid:gecos:home:shell`).
fn homes_in_passwd(text: &str) -> Vec<PathBuf> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split(':').nth(5))
        .filter(|h| h.starts_with('/'))
        .map(PathBuf::from)
        .collect()
}

/// Every mount point of this process's view (`/proc/self/mountinfo`),
/// `/` left out. Empty where that file does not exist.
fn mount_points() -> Vec<PathBuf> {
    std::fs::read_to_string("/proc/self/mountinfo")
        .map(|text| mounts_in_mountinfo(&text))
        .unwrap_or_default()
}

/// The mount points of `/proc/self/mountinfo` text: the fifth field, with
/// the kernel's octal escapes (`\040` for a space) undone.
fn mounts_in_mountinfo(text: &str) -> Vec<PathBuf> {
    text.lines()
        .filter_map(|l| l.split(' ').nth(4))
        .map(unescape_octal)
        .filter(|p| p.parent().is_some())
        .collect()
}

fn unescape_octal(field: &str) -> PathBuf {
    use std::os::unix::ffi::OsStringExt;
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|b| (b'0'..=b'7').contains(b)));
        match (bytes[i], octal) {
            (b'\\', Some(d)) => {
                out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
                i += 4;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    PathBuf::from(std::ffi::OsString::from_vec(out))
}

/// An absolute, lexically normalised path, with symbolic links of the
/// existing part resolved, so that overlap checks cannot be fooled by
/// `..` or links.
pub(crate) fn absolute(path: &Path) -> Result<PathBuf, Error> {
    let normal = normalised(path)?;
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

/// Like [`absolute`], but the last component is kept as it is (a link
/// there is the output itself, never followed).
pub(crate) fn absolute_output(path: &Path) -> Result<PathBuf, Error> {
    let normal = normalised(path)?;
    match (normal.parent(), normal.file_name()) {
        (Some(parent), Some(name)) => Ok(absolute(parent)?.join(name)),
        _ => Ok(normal),
    }
}

fn normalised(path: &Path) -> Result<PathBuf, Error> {
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
    Ok(normal)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn home_folders_come_from_the_password_database() {
        let passwd = "root:x:0:0:root:/root:/bin/bash\n\
                      # comment\n\
                      www-data:x:33:33:www-data:/var/www:/usr/sbin/nologin\n\
                      dana:x:1000:1000:Dana,,,:/home/dana:/bin/bash\n\
                      broken-line\n";
        assert_eq!(
            homes_in_passwd(passwd),
            ["/root", "/var/www", "/home/dana"].map(PathBuf::from)
        );
    }

    #[test]
    fn mount_points_are_read_with_escapes_undone() {
        let info = "22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n\
                    35 22 0:31 / /srv/my\\040volume rw - tmpfs tmpfs rw\n\
                    36 22 0:32 / /home rw - ext4 /dev/sda2 rw\n";
        assert_eq!(
            mounts_in_mountinfo(info),
            ["/srv/my volume", "/home"].map(PathBuf::from)
        );
    }

    #[test]
    fn a_mount_point_and_anything_holding_one_are_refused_with_a_way_out() {
        let Some(mount) = mount_points()
            .into_iter()
            .find(|m| m.starts_with("/proc") || m.starts_with("/dev"))
        else {
            eprintln!("skipped: no /proc or /dev mount in /proc/self/mountinfo");
            return;
        };
        let archive = Path::new("/nonexistent-archive");
        let err = check_target(&mount, archive, true).unwrap_err().to_string();
        assert!(err.contains("mount point"), "{err}");
        assert!(err.contains("--out"), "{err}");
        let holder = mount.parent().unwrap();
        if holder.parent().is_some() {
            let err = check_target(holder, archive, true).unwrap_err().to_string();
            assert!(err.contains("mount point") || err.contains("home"), "{err}");
        }
    }

    #[test]
    fn another_users_home_is_refused_even_with_force() {
        let archive = Path::new("/nonexistent-archive");
        for home in homes_in_passwd(&std::fs::read_to_string("/etc/passwd").unwrap_or_default()) {
            if home.parent().is_none() {
                continue;
            }
            let home = absolute(&home).unwrap();
            let err = check_target(&home, archive, true).unwrap_err().to_string();
            assert!(err.starts_with("refusing"), "{home:?}: {err}");
        }
    }
}
