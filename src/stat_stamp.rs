//! What of a file's `stat` shows that it has not changed since it was
//! last seen: one decision, shared by the run records of the cache
//! (`crate::cache::identity`) and the record of the published site
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
    meta.is_file().then(|| of_any(meta))
}

/// The stamp of a folder (`ingest::listing`: a folder whose stamp is as
/// it was holds the same names); `None` for anything else.
#[cfg(unix)]
pub fn of_folder(meta: &Metadata) -> Option<Stamp> {
    meta.is_dir().then(|| of_any(meta))
}

#[cfg(unix)]
fn of_any(meta: &Metadata) -> Stamp {
    use std::os::unix::fs::MetadataExt as _;
    from_numbers([
        meta.size() as i64,
        meta.mtime(),
        meta.mtime_nsec(),
        meta.ctime(),
        meta.ctime_nsec(),
        meta.ino() as i64,
        meta.dev() as i64,
    ])
}

/// [`of`] and [`of_folder`] from a `stat` made through a folder's handle
/// (`ingest::listing`), which `std` has no call for. The same numbers as
/// from `std`'s `Metadata` of the same file.
#[cfg(unix)]
pub fn of_stat(st: &rustix::fs::Stat, want: rustix::fs::FileType) -> Option<Stamp> {
    if rustix::fs::FileType::from_raw_mode(st.st_mode as _) != want {
        return None;
    }
    // The field types differ between systems.
    #[allow(clippy::unnecessary_cast)]
    let numbers = [
        st.st_size as i64,
        st.st_mtime as i64,
        st.st_mtime_nsec as i64,
        st.st_ctime as i64,
        st.st_ctime_nsec as i64,
        st.st_ino as i64,
        st.st_dev as i64,
    ];
    Some(from_numbers(numbers))
}

/// Size, mtime (s, ns), ctime (s, ns), inode, device.
fn from_numbers(numbers: [i64; 7]) -> Stamp {
    let modified = time_at(numbers[1], numbers[2]);
    let changed = time_at(numbers[3], numbers[4]);
    Stamp {
        numbers,
        changed: modified.max(changed),
    }
}

fn time_at(s: i64, ns: i64) -> SystemTime {
    let since = Duration::new(s.max(0) as u64, ns.clamp(0, 999_999_999) as u32);
    SystemTime::UNIX_EPOCH + since
}

impl Stamp {
    /// The modification time (what `touch` sets; time trust reads it).
    pub fn modified(&self) -> SystemTime {
        modified_of(&self.numbers)
    }
}

/// The modification time held in a stamp's numbers.
pub fn modified_of(numbers: &[i64; 7]) -> SystemTime {
    time_at(numbers[1], numbers[2])
}

#[cfg(not(unix))]
pub fn of(_: &Metadata) -> Option<Stamp> {
    None
}

#[cfg(not(unix))]
pub fn of_folder(_: &Metadata) -> Option<Stamp> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustix::fs::{AtFlags, FileType};

    /// A run's fingerprint mixes stamps from `std` (a folder listed) and
    /// from `rustix` (a folder known from the cache): they must agree, or
    /// every run would be read again whenever a folder's listing was kept.
    #[test]
    fn a_stamp_is_the_same_through_std_and_through_a_folder_handle() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("round-1.json");
        std::fs::write(&file, "{}").unwrap();
        let through = |name: &str, want| {
            let st = rustix::fs::statat(
                rustix::fs::CWD,
                dir.path().join(name),
                AtFlags::SYMLINK_NOFOLLOW,
            )
            .unwrap();
            of_stat(&st, want)
        };
        let std_file = of(&std::fs::symlink_metadata(&file).unwrap()).unwrap();
        assert_eq!(
            through("round-1.json", FileType::RegularFile),
            Some(std_file)
        );
        assert_eq!(through("round-1.json", FileType::Directory), None);
        let std_dir = of_folder(&std::fs::symlink_metadata(dir.path()).unwrap()).unwrap();
        assert_eq!(through(".", FileType::Directory), Some(std_dir));
        assert_eq!(
            std_file.modified(),
            std::fs::metadata(&file).unwrap().modified().unwrap()
        );
    }
}
