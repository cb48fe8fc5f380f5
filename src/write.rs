//! Writing the site: the only code that writes files into the output.
//!
//! A site is a list of (relative path, bytes) items. [`Staging::begin`]
//! makes a fresh folder beside the target, [`Staging::add`] writes one
//! item into it (so pages can be streamed in as they are rendered), and
//! [`Staging::publish`] swaps the finished folder in with **one atomic
//! operation**, so that a web server serving the site, or a `kill -9` at
//! any moment, sees the old site or the new one, never a missing file:
//!
//! * **Exchange** (Linux `renameat2(RENAME_EXCHANGE)`): the staging folder
//!   and the site trade places in one step; the old site, now under the
//!   staging name, is then removed. Used whenever the file system supports
//!   it (ext4, xfs, btrfs, tmpfs, overlayfs, …).
//! * **Link flip** (the fallback where exchange is refused, e.g. NFS):
//!   the site is a symbolic link `site -> .site.perfdash-site-<id>`, and a
//!   new link replaces it with one `rename`. The first flip of an output
//!   that is still a plain folder moves that folder aside first (a short
//!   gap, once); from then on every swap is atomic.
//!
//! Before writing, perfdash refuses outputs that would lose data (the
//! archive, `/`, any user's home folder, the current folder, a mount
//! point, a foreign non-empty folder without `--force`, a link it did not
//! make). The staging folder gets the `.perfdash-site` marker first, so
//! that a folder left by a crash is recognised and removed by the next
//! build ([`remove_leftovers`]); the previous site's mode and group carry
//! over. A full disk removes what was written, leaves the previous site
//! and says how much space the site needs.

pub mod fresh;
mod lock;
pub mod manifest;
pub mod memo;
mod target;

use std::collections::{BTreeSet, HashMap};
use std::io::Write as _;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;

use crate::error::Error;
use crate::render::{Site, SiteSink};
use manifest::{FileSum, MANIFEST_FILE, PreviousSite};

pub use lock::{OutputLock, WhenLocked, lock_path};
use target::{Existing, absolute, absolute_output, check_target, link_target_prefix};

/// The marker file that says "perfdash wrote this folder and may replace it".
pub const MARKER_FILE: &str = ".perfdash-site";
pub(crate) const MARKER_TEXT: &str =
    "This folder is a site written by perfdash; `perfdash build` replaces it as a whole.\n";

/// How the finished site replaces the previous one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Publish {
    /// Exchange where the file system allows it, else a link flip.
    #[default]
    Auto,
    /// Always publish through a symbolic link flip (what `Auto` falls back
    /// to; chosen explicitly by tests of that path).
    LinkFlip,
}

#[derive(Debug, Clone, Default)]
pub struct WriteOptions {
    pub out: PathBuf,
    /// The archive being read: never written into.
    pub archive: PathBuf,
    pub force: bool,
    pub publish: Publish,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Written {
    pub files: usize,
    pub bytes: u64,
    /// Of `files`, those unchanged from the previous site: linked from it,
    /// not written again ([`manifest`]).
    pub unchanged: usize,
}

/// Checks, before anything is read or written, that `opts.out` is a
/// place perfdash may replace (the same check [`Staging::begin`] makes),
/// so that a refused target costs nothing and leaves nothing behind.
pub fn check_output(opts: &WriteOptions) -> Result<(), Error> {
    check_target(
        &absolute_output(&opts.out)?,
        &absolute(&opts.archive)?,
        opts.force,
    )
    .map(|_| ())
}

/// Whether `path` lies inside the archive (after resolving `..` and links).
pub fn inside_archive(path: &Path, archive: &Path) -> Result<bool, Error> {
    Ok(absolute(path)?.starts_with(absolute(archive)?))
}

/// Writes `site` to `opts.out`, replacing what was there.
pub fn write_site(site: &Site, opts: &WriteOptions) -> Result<Written, Error> {
    let needed = SpaceNeeded::of(site.files().map(|(rel, bytes)| (rel, bytes.len() as u64)));
    let staging = Staging::begin(opts, Some(needed))?;
    for (rel, bytes) in site.files() {
        staging.add(rel, bytes)?;
    }
    staging.publish()
}

/// A site being written into a folder beside the output, from any number
/// of threads ([`Staging::add`] takes `&self`). Dropping it unpublished
/// removes the folder.
#[derive(Debug)]
pub struct Staging {
    out: PathBuf,
    path: PathBuf,
    method: Method,
    /// Folders of the site created so far (relative).
    dirs: Mutex<BTreeSet<PathBuf>>,
    /// Every file added, with its size and hash: the manifest.
    sums: Mutex<HashMap<String, FileSum>>,
    written: Mutex<Written>,
    /// The site being replaced, when its manifest says what it holds:
    /// unchanged files are linked from it.
    previous_site: Option<PreviousSite>,
    /// The folder of the site being replaced, if any.
    previous_dir: Option<PathBuf>,
    /// The page memo (`memo`), when the build keeps one.
    memo: Option<memo::PageMemo>,
    needed: Option<SpaceNeeded>,
    /// `needed` is the previous site's size, not this one's.
    estimated: bool,
    /// The previous site folder's mode, set when the site is complete (a
    /// read-only mode set earlier would stop the writing).
    mode: Option<u32>,
    published: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Method {
    /// Nothing at the output yet: rename the staging folder there.
    Rename,
    Exchange,
    /// Flip the link at the output; the folder it pointed to (if any) is
    /// removed after.
    LinkFlip {
        previous: Option<PathBuf>,
    },
}

impl Staging {
    /// Checks the target and creates the staging folder, with the marker
    /// and the previous site's mode and group. `needed`, when known, is
    /// checked against the free space first.
    pub fn begin(opts: &WriteOptions, needed: Option<SpaceNeeded>) -> Result<Staging, Error> {
        let out = absolute_output(&opts.out)?;
        let existing = check_target(&out, &absolute(&opts.archive)?, opts.force)?;
        let parent = out
            .parent()
            .ok_or_else(|| Error::Usage(format!("cannot write a site at {}", out.display())))?
            .to_path_buf();
        std::fs::create_dir_all(&parent).map_err(|e| Error::io(&parent, e))?;
        let name = file_name(&out);
        let (method, previous) = match (existing, opts.publish) {
            (Existing::OurLink(target), _) => (
                Method::LinkFlip {
                    previous: Some(target.clone()),
                },
                Some(target),
            ),
            (Existing::Nothing, Publish::LinkFlip) => (Method::LinkFlip { previous: None }, None),
            (Existing::Nothing, Publish::Auto) => (Method::Rename, None),
            (Existing::Folder, Publish::LinkFlip) => (
                Method::LinkFlip {
                    previous: Some(out.clone()),
                },
                Some(out.clone()),
            ),
            (Existing::Folder, Publish::Auto) => (Method::Exchange, Some(out.clone())),
        };
        if let Some(needed) = needed {
            needed.check_free(&parent, &out)?;
        }
        let prefix = match method {
            Method::LinkFlip { .. } => link_target_prefix(&name),
            _ => format!(".{name}.perfdash-new-"),
        };
        let path = create_unique_dir(&parent, &prefix)?;
        let previous_site = previous.as_deref().and_then(PreviousSite::open);
        // A site streamed to disk has no size before it is written: on a
        // full disk, the previous site's size is the best estimate to name.
        let (needed, estimated) = match needed {
            Some(n) => (Some(n), false),
            None => (previous_site.as_ref().map(PreviousSite::space_needed), true),
        };
        let mut staging = Staging {
            out,
            path,
            method,
            dirs: Mutex::new(BTreeSet::new()),
            sums: Mutex::new(HashMap::new()),
            written: Mutex::new(Written::default()),
            previous_site,
            previous_dir: previous.clone(),
            memo: None,
            needed,
            estimated,
            mode: None,
            published: false,
        };
        // The marker first: a folder a crash leaves is recognisable.
        staging.write_file(Path::new(MARKER_FILE), MARKER_TEXT.as_bytes())?;
        if let Some(previous) = previous {
            staging.mode = carry_over_mode_and_group(&previous, &staging.path);
        }
        Ok(staging)
    }

    /// Uses `memo` for this site: pages it vouches for are linked from the
    /// previous site without being rendered ([`memo`]).
    pub fn with_memo(mut self, memo: Option<memo::PageMemo>) -> Staging {
        self.memo = memo;
        self
    }

    /// What the memo is to record of this site once it is published
    /// ([`memo::published`]); `None` without a memo.
    pub fn memo_made(&self) -> Option<memo::Made> {
        let memo = self.memo.as_ref()?;
        Some(memo.made(&lock(&self.sums)))
    }

    /// Links in the files the memo vouches for under `key` (see
    /// [`SiteSink::reuse`]); `None`: the page is to be rendered.
    fn reuse(&self, key: u128) -> Result<Option<Vec<String>>, Error> {
        let (Some(memo), Some(previous)) = (&self.memo, &self.previous_dir) else {
            return Ok(None);
        };
        let Some(files) = memo.vouched(key, previous) else {
            return Ok(None);
        };
        let paths: Vec<String> = files.iter().map(|f| f.path.clone()).collect();
        let fit = {
            let sums = lock(&self.sums);
            paths
                .iter()
                .all(|p| checked_relative(p).is_ok() && !sums.contains_key(p))
        };
        if !fit {
            return Ok(None);
        }
        for f in files {
            let rel = checked_relative(&f.path)?;
            let sum = FileSum {
                size: f.size,
                hash: f.hash,
            };
            let from = previous.join(rel);
            let linked = self.link_file(rel, &from)?;
            if !linked {
                // No hard links here: copy, if it still is what was published.
                let bytes = std::fs::read(&from).map_err(|e| Error::io(&from, e))?;
                if FileSum::of(&bytes) != sum {
                    return Err(Error::Usage(format!(
                        "{} changed while this build read it; nothing changed, build again",
                        from.display()
                    )));
                }
                self.write_file(rel, &bytes)?;
            }
            self.record(&f.path, sum, linked)?;
        }
        memo.remember(key, paths.clone());
        Ok(Some(paths))
    }

    /// Adds one file of the site (`rel`: a relative path with `/`): links
    /// it from the previous site when its bytes are the same there, else
    /// writes it.
    pub fn add(&self, rel: &str, bytes: &[u8]) -> Result<(), Error> {
        let rel_path = checked_relative(rel)?;
        let sum = FileSum::of(bytes);
        let unchanged = self
            .previous_site
            .as_ref()
            .and_then(|p| p.unchanged(rel, sum, bytes));
        let linked = match unchanged {
            Some(from) => self.link_file(rel_path, &from)?,
            None => false,
        };
        if !linked {
            self.write_file(rel_path, bytes)?;
        }
        self.record(rel, sum, linked)
    }

    /// Adds a file written by `write` as it is produced (never held in
    /// memory whole); hashed on the way for the manifest. Always written:
    /// only a complete file's hash is known.
    pub fn add_streamed(
        &self,
        rel: &str,
        write: &mut dyn FnMut(&mut dyn std::io::Write) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let rel_path = checked_relative(rel)?;
        let target = self.path.join(rel_path);
        // Held while creating only: writing into a file a signal has
        // already removed recreates nothing.
        let file = {
            let _writing = crate::cleanup::writing();
            self.make_parent(rel_path)?;
            std::fs::File::create_new(&target).map_err(|e| self.fail(&target, e))?
        };
        let mut out = HashingWriter {
            file,
            hasher: xxhash_rust::xxh3::Xxh3::new(),
            size: 0,
            error: None,
        };
        if let Err(e) = write(&mut out) {
            // The writer's own error, when there was one: a full disk is
            // then reported as such.
            return Err(match out.error.take() {
                Some(io) => self.fail(&target, io),
                None => e,
            });
        }
        let sum = FileSum {
            size: out.size,
            hash: out.hasher.digest128(),
        };
        self.record(rel, sum, false)
    }

    fn record(&self, rel: &str, sum: FileSum, linked: bool) -> Result<(), Error> {
        if lock(&self.sums).insert(rel.to_string(), sum).is_some() {
            return Err(Error::Internal(format!("{rel} was written twice")));
        }
        let mut written = lock(&self.written);
        written.files += 1;
        written.bytes += sum.size;
        written.unchanged += usize::from(linked);
        Ok(())
    }

    fn make_parent(&self, rel: &Path) -> Result<(), Error> {
        if let Some(dir) = rel.parent().filter(|d| !d.as_os_str().is_empty())
            && !lock(&self.dirs).contains(dir)
        {
            // create_dir_all copes with another thread making it too.
            let full = self.path.join(dir);
            std::fs::create_dir_all(&full).map_err(|e| self.fail(&full, e))?;
            lock(&self.dirs).insert(dir.to_path_buf());
        }
        Ok(())
    }

    fn write_file(&self, rel: &Path, bytes: &[u8]) -> Result<(), Error> {
        // Held while writing: an interrupting signal waits for this file
        // and then removes the whole folder, which nothing recreates.
        let _writing = crate::cleanup::writing();
        self.make_parent(rel)?;
        let target = self.path.join(rel);
        std::fs::File::create_new(&target)
            .and_then(|mut f| f.write_all(bytes))
            .map_err(|e| self.fail(&target, e))
    }

    /// Links the previous site's file in; `false` when the file system
    /// refuses (too many links, no hard links): the caller writes it.
    fn link_file(&self, rel: &Path, from: &Path) -> Result<bool, Error> {
        let _writing = crate::cleanup::writing();
        self.make_parent(rel)?;
        Ok(std::fs::hard_link(from, self.path.join(rel)).is_ok())
    }

    /// An error while writing, with the space the site needs when the
    /// disk is full.
    fn fail(&self, path: &Path, e: std::io::Error) -> Error {
        let parent = self.path.parent().unwrap_or(&self.path);
        match self.needed {
            Some(needed) if is_out_of_space(&e) && self.estimated => {
                return needed.estimate_error(parent, &self.out, lock(&self.written).bytes);
            }
            Some(needed) if is_out_of_space(&e) => return needed.error(parent, &self.out),
            _ => {}
        }
        if is_out_of_space(&e) {
            return Error::Usage(format!(
                "no space left on the file system of {} after writing {} of the site; nothing \
                 changed: the previous site is as it was and this build's files are removed",
                self.out.display(),
                human_bytes(lock(&self.written).bytes)
            ));
        }
        Error::io(path, e)
    }

    /// Swaps the finished site in (see the module comment), then removes
    /// the previous one.
    pub fn publish(mut self) -> Result<Written, Error> {
        // The manifest last, into the marker (which stays there all along:
        // rewritten in place, never removed, so a crash leaves a folder
        // still recognised as perfdash's): every file is in, and its mtime
        // is later than every file's ctime (see `manifest`).
        let mut marker = MARKER_TEXT.as_bytes().to_vec();
        marker.extend_from_slice(&manifest::render(&lock(&self.sums)));
        let target = self.path.join(MANIFEST_FILE);
        {
            let _writing = crate::cleanup::writing();
            std::fs::write(&target, &marker).map_err(|e| self.fail(&target, e))?;
        }
        if let Some(mode) = self.mode {
            let _ = std::fs::set_permissions(&self.path, std::fs::Permissions::from_mode(mode));
        }
        // The registry is held across every swap: a signal must not remove
        // a folder while (or after) it becomes the live site.
        let mut held = crate::cleanup::hold();
        let old = match self.method.clone() {
            Method::Rename => {
                rename_no_replace(&self.path, &self.out).map_err(|e| Error::io(&self.out, e))?;
                held.remove(&self.path);
                None
            }
            // The staging name now holds the previous site, still
            // registered: removed below, or by a signal.
            Method::Exchange => match exchange(&self.path, &self.out) {
                Ok(()) => Some(self.path.clone()),
                Err(e) if exchange_unsupported(&e) => {
                    // Not on this file system: publish through a link from
                    // now on; the staging folder becomes the link target.
                    let parent = self.out.parent().expect("checked in begin");
                    let target = unique_name(parent, &link_target_prefix(&file_name(&self.out)));
                    std::fs::rename(&self.path, &target).map_err(|e| Error::io(&target, e))?;
                    held.remove(&self.path);
                    held.add(&target);
                    self.path = target;
                    self.flip(&mut held, Some(self.out.clone()))?
                }
                Err(e) => return Err(Error::io(&self.out, e)),
            },
            Method::LinkFlip { previous } => self.flip(&mut held, previous)?,
        };
        self.published = true;
        drop(held);
        let written = *lock(&self.written);
        if let Some(old) = old {
            // A reader that looked the site folder up just before the swap
            // may still be walking into the old one: give it a moment
            // before the old files go (without it, a reader under load
            // missed a file about once in five test runs).
            std::thread::sleep(RETIRE_GRACE);
            let _ = remove_marker_last(&old);
            crate::cleanup::hold().remove(&old);
        }
        Ok(written)
    }

    /// Points the output link at the staging folder; returns the folder
    /// to remove (the previous target, or the plain folder moved aside),
    /// registered.
    fn flip(
        &mut self,
        held: &mut crate::cleanup::Held,
        previous: Option<PathBuf>,
    ) -> Result<Option<PathBuf>, Error> {
        let parent = self.out.parent().expect("checked in begin").to_path_buf();
        let name = file_name(&self.out);
        let target_name = self.path.file_name().expect("a staging folder has a name");
        let link = unique_name(&parent, &format!(".{name}.perfdash-link-"));
        std::os::unix::fs::symlink(target_name, &link).map_err(|e| Error::io(&link, e))?;
        held.add(&link);
        let moved_aside = match &previous {
            // A plain folder cannot be replaced by a link in one step:
            // move it aside (the one gap, on the first flip only).
            Some(p) if p == &self.out => {
                let aside = unique_name(&parent, &format!(".{name}.perfdash-old-"));
                if let Err(e) = std::fs::rename(&self.out, &aside) {
                    held.remove(&link);
                    let _ = std::fs::remove_file(&link);
                    return Err(Error::io(&self.out, e));
                }
                Some(aside)
            }
            other => other.clone(),
        };
        let result = std::fs::rename(&link, &self.out);
        held.remove(&link);
        if let Err(e) = result {
            let _ = std::fs::remove_file(&link);
            if let (Some(aside), Some(p)) = (&moved_aside, &previous)
                && p == &self.out
            {
                let _ = std::fs::rename(aside, &self.out);
            }
            return Err(Error::io(&self.out, e));
        }
        // Live now: never removed on a signal. The previous one is.
        held.remove(&self.path);
        if let Some(old) = &moved_aside {
            held.add(old);
        }
        Ok(moved_aside)
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.published {
            let _ = remove_marker_last(&self.path);
            crate::cleanup::hold().remove(&self.path);
        }
    }
}

/// How much room a site takes: its bytes rounded up to whole blocks,
/// plus a block per folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpaceNeeded {
    pub files: usize,
    pub bytes: u64,
    blocks_of_4k: u64,
}

impl SpaceNeeded {
    /// From (relative path, size) items.
    pub fn of<'a>(items: impl Iterator<Item = (&'a str, u64)>) -> SpaceNeeded {
        let mut dirs = BTreeSet::new();
        let mut needed = SpaceNeeded {
            files: 0,
            bytes: 0,
            blocks_of_4k: 1, // the site folder and its marker
        };
        for (rel, len) in items {
            needed.files += 1;
            needed.bytes += len;
            needed.blocks_of_4k += len.div_ceil(4096).max(1);
            if let Some((dir, _)) = rel.rsplit_once('/') {
                dirs.insert(dir.to_string());
            }
        }
        needed.blocks_of_4k += dirs.len() as u64 + 1;
        needed
    }

    fn on_disk(&self) -> u64 {
        self.blocks_of_4k * 4096
    }

    /// Refuses at once when the file system cannot hold the site even
    /// with every free block (those reserved for root included).
    fn check_free(&self, parent: &Path, out: &Path) -> Result<(), Error> {
        match free_space(parent) {
            Some(free) if free.all < self.on_disk() => Err(self.error(parent, out)),
            _ => Ok(()),
        }
    }

    fn error(&self, parent: &Path, out: &Path) -> Error {
        let free = free_space(parent)
            .map(|f| format!("{} are free there", human_bytes(f.available)))
            .unwrap_or_else(|| "the free space is unknown".into());
        Error::Usage(format!(
            "not enough space to write the site to {}: it needs about {} ({} files, {} of \
             content) and {free}. Nothing changed: the previous site is as it was and this \
             build's files are removed. Free some space, or choose an --out on another file system",
            out.display(),
            human_bytes(self.on_disk()),
            self.files,
            human_bytes(self.bytes),
        ))
    }
}

impl SpaceNeeded {
    /// A full disk while writing a site whose size is estimated from the
    /// previous one.
    fn estimate_error(&self, parent: &Path, out: &Path, written: u64) -> Error {
        let free = free_space(parent)
            .map(|f| format!("{} are free there", human_bytes(f.available)))
            .unwrap_or_else(|| "the free space is unknown".into());
        Error::Usage(format!(
            "not enough space to write the site to {}: no space left after writing {} of it; \
             it needs about {} (the previous site's size: {} files, {} of content) and {free}. \
             Nothing changed: the previous site is as it was and this build's files are removed. \
             Free some space, or choose an --out on another file system",
            out.display(),
            human_bytes(written),
            human_bytes(self.on_disk()),
            self.files,
            human_bytes(self.bytes),
        ))
    }
}

struct FreeSpace {
    /// Free to an ordinary user.
    available: u64,
    /// Free at all (root may use reserved blocks).
    all: u64,
}

fn free_space(path: &Path) -> Option<FreeSpace> {
    let s = rustix::fs::statvfs(path).ok()?;
    Some(FreeSpace {
        available: s.f_bavail.saturating_mul(s.f_frsize),
        all: s.f_bfree.saturating_mul(s.f_frsize),
    })
}

fn is_out_of_space(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::StorageFull
        || e.kind() == std::io::ErrorKind::QuotaExceeded
        || e.raw_os_error() == Some(rustix::io::Errno::NOSPC.raw_os_error())
        || e.raw_os_error() == Some(rustix::io::Errno::DQUOT.raw_os_error())
}

fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut v = n as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

/// Gives the new site folder the previous one's group, and its mode with
/// the owner's write permission (so that the files can be written; the
/// exact mode is returned, to be set when the site is complete). The
/// setgid bit is set now, so that the files inherit the group. As far as
/// this user may: a group the user is not in is left as the system gives it.
fn carry_over_mode_and_group(previous: &Path, new: &Path) -> Option<u32> {
    let meta = std::fs::metadata(previous).ok()?;
    let _ = std::os::unix::fs::chown(new, None, Some(meta.gid()));
    let mode = meta.mode() & 0o7777;
    let _ = std::fs::set_permissions(new, std::fs::Permissions::from_mode(mode | 0o700));
    Some(mode)
}

fn exchange(a: &Path, b: &Path) -> std::io::Result<()> {
    rustix::fs::renameat_with(
        rustix::fs::CWD,
        a,
        rustix::fs::CWD,
        b,
        rustix::fs::RenameFlags::EXCHANGE,
    )
    .map_err(Into::into)
}

/// Whether an exchange failed because the file system (or system) does
/// not offer it, rather than for a reason a link flip would also meet.
fn exchange_unsupported(e: &std::io::Error) -> bool {
    use rustix::io::Errno;
    [Errno::INVAL, Errno::NOSYS, Errno::OPNOTSUPP]
        .iter()
        .any(|n| e.raw_os_error() == Some(n.raw_os_error()))
}

/// `rename` that never replaces an existing `to` (falls back to a plain
/// rename where the flag is unsupported; that one still refuses a
/// non-empty folder). `perfdash record` moves a new run in with it.
pub fn rename_no_replace(from: &Path, to: &Path) -> std::io::Result<()> {
    match rustix::fs::renameat_with(
        rustix::fs::CWD,
        from,
        rustix::fs::CWD,
        to,
        rustix::fs::RenameFlags::NOREPLACE,
    ) {
        Ok(()) => Ok(()),
        Err(e) if exchange_unsupported(&e.into()) => std::fs::rename(from, to),
        Err(e) => Err(e.into()),
    }
}

fn file_name(out: &Path) -> String {
    out.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// A name `<prefix><16 hex>` not taken in `dir`.
fn unique_name(dir: &Path, prefix: &str) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    loop {
        let seed = format!(
            "{}-{:?}-{}",
            std::process::id(),
            std::time::SystemTime::now(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let path = dir.join(format!(
            "{prefix}{:016x}",
            xxhash_rust::xxh3::xxh3_64(seed.as_bytes())
        ));
        if std::fs::symlink_metadata(&path).is_err() {
            return path;
        }
    }
}

/// Creates a fresh folder `<prefix><16 hex>` in `dir`, registered for
/// removal on a signal.
fn create_unique_dir(dir: &Path, prefix: &str) -> Result<PathBuf, Error> {
    loop {
        let path = unique_name(dir, prefix);
        let mut held = crate::cleanup::hold();
        match std::fs::create_dir(&path) {
            Ok(()) => {
                held.add(&path);
                return Ok(path);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(Error::io(dir, e)),
        }
    }
}

/// Removes what interrupted builds of `out` left beside it: staging
/// folders, previous sites being deleted, link targets no longer linked,
/// and links being flipped. A folder is removed only when it carries the
/// marker (directly, or in `site/` as perfdash 0.1 left it) or is empty;
/// anything else with such a name is reported, not touched. Call with
/// the output's lock held. Returns the removed paths and the kept ones.
pub fn remove_leftovers(out: &Path) -> Result<(Vec<PathBuf>, Vec<PathBuf>), Error> {
    let out = absolute_output(out)?;
    let (Some(parent), name) = (out.parent(), file_name(&out)) else {
        return Ok((Vec::new(), Vec::new()));
    };
    let live_target = target::our_link_target(&out);
    let prefixes = [
        format!(".{name}.perfdash-new-"),
        format!(".{name}.perfdash-old-"),
        link_target_prefix(&name),
    ];
    let link_prefix = format!(".{name}.perfdash-link-");
    let (mut removed, mut kept) = (Vec::new(), Vec::new());
    let Ok(entries) = std::fs::read_dir(parent) else {
        return Ok((removed, kept));
    };
    for entry in entries.flatten() {
        let entry_name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if entry_name.starts_with(&link_prefix) && kind.is_symlink() {
            if std::fs::remove_file(&path).is_ok() {
                removed.push(path);
            }
            continue;
        }
        if !prefixes.iter().any(|p| entry_name.starts_with(p))
            || live_target.as_deref() == Some(path.as_path())
        {
            continue;
        }
        let ours = kind.is_dir()
            && (path.join(MARKER_FILE).is_file()
                || path.join("site").join(MARKER_FILE).is_file()
                || std::fs::read_dir(&path).is_ok_and(|mut d| d.next().is_none()));
        if ours && remove_marker_last(&path).is_ok() {
            removed.push(path);
        } else {
            kept.push(path);
        }
    }
    removed.sort();
    kept.sort();
    Ok((removed, kept))
}

/// How long the previous site stays after the swap before it is removed.
const RETIRE_GRACE: std::time::Duration = std::time::Duration::from_millis(100);

/// Removes a folder perfdash wrote, its marker last: a `kill -9` halfway
/// leaves a folder that still carries the marker (or an empty one), which
/// the next build recognises and removes ([`remove_leftovers`]).
/// `remove_dir_all` deletes in directory order and could take the marker
/// first, leaving a folder no build would dare to remove.
fn remove_marker_last(dir: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_name() == MARKER_FILE {
            continue;
        }
        match entry.file_type()?.is_dir() {
            true => std::fs::remove_dir_all(entry.path())?,
            false => std::fs::remove_file(entry.path())?,
        }
    }
    match std::fs::remove_file(dir.join(MARKER_FILE)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    std::fs::remove_dir(dir)
}

/// A site path must be relative and stay inside the site.
fn checked_relative(rel: &str) -> Result<&Path, Error> {
    let p = Path::new(rel);
    if rel.is_empty()
        || rel == MARKER_FILE
        || p.components().any(|c| !matches!(c, Component::Normal(_)))
    {
        return Err(Error::Internal(format!(
            "refusing to write outside the site: {rel:?}"
        )));
    }
    Ok(p)
}

/// A staging folder is a sink for rendered files: each is written as soon
/// as it is rendered, from whichever thread rendered it.
impl SiteSink for Staging {
    fn put(&self, path: &str, bytes: Vec<u8>) -> Result<(), Error> {
        self.add(path, &bytes)
    }

    fn put_streamed(
        &self,
        path: &str,
        write: &mut dyn FnMut(&mut dyn std::io::Write) -> Result<(), Error>,
    ) -> Result<(), Error> {
        self.add_streamed(path, write)
    }

    fn memo_salt(&self) -> Option<u128> {
        self.memo.as_ref().map(memo::PageMemo::salt)
    }

    fn reuse(&self, key: u128) -> Result<Option<Vec<String>>, Error> {
        Staging::reuse(self, key)
    }

    fn remember(&self, key: u128, paths: Vec<String>) {
        if let Some(memo) = &self.memo {
            memo.remember(key, paths);
        }
    }
}

/// A file being written, hashed on the way; keeps the first I/O error
/// (a serialiser reports it without its kind).
struct HashingWriter {
    file: std::fs::File,
    hasher: xxhash_rust::xxh3::Xxh3,
    size: u64,
    error: Option<std::io::Error>,
}

impl std::io::Write for HashingWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self.file.write(buf) {
            Ok(n) => {
                self.hasher.update(&buf[..n]);
                self.size += n as u64;
                Ok(n)
            }
            Err(e) => {
                let copy = match e.raw_os_error() {
                    Some(code) => std::io::Error::from_raw_os_error(code),
                    None => std::io::Error::new(e.kind(), e.to_string()),
                };
                self.error.get_or_insert(copy);
                Err(e)
            }
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

/// A lock that a panicking thread left is still good: the data under it
/// are sets and counters, whole after every step.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests;
