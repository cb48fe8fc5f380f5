//! What of a file's `stat` shows that it has not changed since it was
//! last seen: one decision, shared by the run records of the cache
//! (`ingest::record`) and the record of the published site
//! (`write::fresh`).
//!
//! Size, modification time and **change time** to the nanosecond, inode
//! and device. Any write moves the change time (ctime), which no user call
//! can set back (`touch -r` restores only the modification time); a file
//! replaced by another has another inode. This is what git's index
//! compares. Without change times (not Unix), nothing is proven: `None`.

use std::fs::Metadata;
use std::time::{Duration, SystemTime};

/// The numbers compared, and when the file last changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    /// Size, mtime (s, ns), ctime (s, ns), inode, device.
    pub numbers: [i64; 7],
    /// The later of the modification and change times.
    pub changed: SystemTime,
}

/// The stamp of a regular file; `None` for anything else, or where the
/// system has no change time.
#[cfg(unix)]
pub fn of(meta: &Metadata) -> Option<Stamp> {
    use std::os::unix::fs::MetadataExt as _;
    if !meta.is_file() {
        return None;
    }
    let at = |s: i64, ns: i64| {
        let since = Duration::new(s.max(0) as u64, ns.clamp(0, 999_999_999) as u32);
        SystemTime::UNIX_EPOCH + since
    };
    let modified = at(meta.mtime(), meta.mtime_nsec());
    let changed = at(meta.ctime(), meta.ctime_nsec());
    Some(Stamp {
        numbers: [
            meta.size() as i64,
            meta.mtime(),
            meta.mtime_nsec(),
            meta.ctime(),
            meta.ctime_nsec(),
            meta.ino() as i64,
            meta.dev() as i64,
        ],
        changed: modified.max(changed),
    })
}

#[cfg(not(unix))]
pub fn of(_: &Metadata) -> Option<Stamp> {
    None
}
