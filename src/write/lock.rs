//! One builder per output folder: an advisory lock (`flock`) on a lock
//! file beside it, `.<name>.perfdash-lock`.
//!
//! The holder removes the lock file when it is done, so that no build
//! leaves it behind. Removing a lock file is safe only with a re-check: a
//! builder that was waiting on the old file may get its lock after the
//! file is gone, so every builder, once it holds the lock, checks that
//! the path still names the very file it locked, and starts over if not.
//! A `kill -9` leaves the file (the kernel drops the lock with the
//! process); the next build takes it over.

use std::fs::File;
use std::io::Write as _;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use rustix::fs::FlockOperation;

use crate::error::Error;

/// What to do when another build holds the lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WhenLocked {
    /// Fail at once (exit 2) with a message naming the lock.
    #[default]
    Fail,
    /// Wait for the other build to finish (`--wait`).
    Wait,
}

/// The lock of one output folder, held until dropped.
#[derive(Debug)]
pub struct OutputLock {
    file: File,
    path: PathBuf,
    /// Folders made to hold the lock file (the output's missing parents,
    /// deepest first), removed again if the build leaves them empty.
    created: Vec<PathBuf>,
    _registered: crate::cleanup::Registered,
}

/// The lock file of `out`: `<parent>/.<name>.perfdash-lock`.
pub fn lock_path(out: &Path) -> PathBuf {
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    out.with_file_name(format!(".{name}.perfdash-lock"))
}

impl OutputLock {
    /// Takes the lock of `out` (its parent folder is created if missing,
    /// and removed again when the build leaves it empty).
    pub fn acquire(out: &Path, when_locked: WhenLocked) -> Result<OutputLock, Error> {
        let out = super::target::absolute_output(out)?;
        let out = out.as_path();
        let path = lock_path(out);
        let mut created = Vec::new();
        if let Some(parent) = path.parent() {
            let mut missing = Some(parent);
            while let Some(dir) = missing.filter(|d| std::fs::symlink_metadata(d).is_err()) {
                created.push(dir.to_path_buf());
                missing = dir.parent();
            }
            std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        }
        loop {
            // Held from creating the file until it is registered: a
            // signal in between would leave a lock file nobody removes
            // (seen in CI: SIGINT a few microseconds into a build). Not
            // held while waiting for another build: a waiting build must
            // still end on Ctrl-C, and the file is then the holder's.
            let mut held = crate::cleanup::hold();
            let file = File::options()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .mode(0o644)
                .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
                .open(&path)
                .map_err(|e| Error::io(&path, e))?;
            match rustix::fs::flock(&file, FlockOperation::NonBlockingLockExclusive) {
                Ok(()) => {}
                Err(e) if e == rustix::io::Errno::WOULDBLOCK && when_locked == WhenLocked::Wait => {
                    drop(held);
                    rustix::fs::flock(&file, FlockOperation::LockExclusive)
                        .map_err(|e| Error::io(&path, e.into()))?;
                    held = crate::cleanup::hold();
                }
                Err(e) if e == rustix::io::Errno::WOULDBLOCK => {
                    let holder = std::fs::read_to_string(&path).unwrap_or_default();
                    let holder = holder.trim();
                    return Err(Error::Usage(format!(
                        "another perfdash build is writing {}{} (it holds {}); wait for it to finish, \
                         or pass --wait to start when it is done",
                        out.display(),
                        if holder.is_empty() {
                            String::new()
                        } else {
                            format!(" (process {holder})")
                        },
                        path.display()
                    )));
                }
                Err(e) => return Err(Error::io(&path, e.into())),
            }
            // Still the file at `path`? (Its previous holder may have
            // removed it while we waited.)
            let locked = file.metadata().map_err(|e| Error::io(&path, e))?;
            let current = std::fs::symlink_metadata(&path);
            let same = current.is_ok_and(|m| m.dev() == locked.dev() && m.ino() == locked.ino());
            if !same {
                continue;
            }
            // The holder's process id, for the message of a build that
            // finds the lock taken.
            let _ = file.set_len(0);
            let _ = (&file).write_all(format!("{}\n", std::process::id()).as_bytes());
            return Ok(OutputLock {
                _registered: held.register(&path),
                file,
                path,
                created,
            });
        }
    }
}

impl Drop for OutputLock {
    fn drop(&mut self) {
        // Removed while still locked; a waiter then re-checks (see the
        // module comment). Closing the file releases the lock.
        let _ = std::fs::remove_file(&self.path);
        let _ = rustix::fs::flock(&self.file, FlockOperation::Unlock);
        for dir in &self.created {
            if std::fs::remove_dir(dir).is_err() {
                break; // holds the site, or something else: keep it
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_builder_is_refused_then_admitted_and_no_lock_file_stays() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("site");
        let first = OutputLock::acquire(&out, WhenLocked::Fail).unwrap();
        let err = OutputLock::acquire(&out, WhenLocked::Fail).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("another perfdash build is writing"), "{text}");
        assert!(text.contains("--wait"), "{text}");
        assert!(
            text.contains(&format!("process {}", std::process::id())),
            "{text}"
        );
        let waiter = std::thread::spawn({
            let out = out.clone();
            move || OutputLock::acquire(&out, WhenLocked::Wait).map(|_| ())
        });
        // The waiter really waits: the kernel lists it as blocked on the
        // lock file (a sleep alone could let it start after `first` is
        // gone and pass without waiting at all).
        assert!(
            waits_on(&lock_path(&out), std::time::Duration::from_secs(20)),
            "the second builder never blocked on the lock"
        );
        assert!(!waiter.is_finished(), "it cannot have the lock yet");
        drop(first);
        waiter.join().unwrap().unwrap();
        assert!(!lock_path(&out).exists(), "the lock file is removed");
    }

    /// Whether a lock on `path` is waited for (`/proc/locks` lists a
    /// blocked request, `->`, on its inode), polled until `limit`.
    pub(crate) fn waits_on(path: &Path, limit: std::time::Duration) -> bool {
        use std::os::unix::fs::MetadataExt as _;
        let Ok(ino) = std::fs::metadata(path).map(|m| m.ino()) else {
            return false;
        };
        let started = std::time::Instant::now();
        while started.elapsed() < limit {
            let locks = std::fs::read_to_string("/proc/locks").unwrap_or_default();
            let blocked = locks.lines().any(|l| {
                l.contains("->")
                    && l.split_whitespace()
                        .any(|f| f.rsplit(':').next() == Some(&ino.to_string()))
            });
            if blocked {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        false
    }
}
