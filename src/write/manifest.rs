//! The site's manifest: one line per file with its size and content hash
//! (xxh3-128), written last into every site, into its marker file
//! (`.perfdash-site`, after the marker's own line): the one file a site
//! keeps about itself. The
//! next build hashes each file it renders; a file whose size and hash are
//! those of the previous site's file is hard-linked from the previous
//! site into the staging folder instead of written again (issue 18: a
//! rebuild with nothing changed rewrote half a gigabyte).
//!
//! Linking composes with the atomic swap: the staging folder is still a
//! complete, separate folder (its own names for the same inodes), swapped
//! in with one exchange; removing the previous site afterwards only
//! removes its names. A failed or killed build removes the staging folder,
//! i.e. only its names: the live site's files are untouched. perfdash
//! never writes a published file in place, so a shared inode never
//! changes under either site.
//!
//! The manifest only says which files are worth a look: a file is linked
//! only when the previous site's copy, read back, has exactly the bytes
//! just rendered. Someone may have edited the live site since its
//! manifest was written; trusting the hash alone would then carry the
//! edit into every later site. (Reading a file back is much cheaper than
//! writing it: no new blocks, nothing for the disk to write back.) The
//! manifest lists paths, sizes and hashes only, so that it is itself the
//! same for the same site (builds stay byte-identical).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The file at the site root that holds the manifest: the site's marker.
pub const MANIFEST_FILE: &str = super::MARKER_FILE;

/// The manifest's first line in that file (the marker's own text is
/// before it).
const HEADER: &str = "# perfdash site manifest 1: xxh3-128 size path";

/// Size and hash of one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileSum {
    pub size: u64,
    pub hash: u128,
}

impl FileSum {
    pub fn of(bytes: &[u8]) -> FileSum {
        FileSum {
            size: bytes.len() as u64,
            hash: xxhash_rust::xxh3::xxh3_128(bytes),
        }
    }
}

/// Renders a manifest: `<hash> <size> <path>` lines in path order.
pub fn render(entries: &HashMap<String, FileSum>) -> Vec<u8> {
    let mut paths: Vec<&String> = entries.keys().collect();
    paths.sort();
    let mut out = String::with_capacity(paths.len() * 80);
    out.push_str(HEADER);
    out.push('\n');
    for path in paths {
        let sum = entries[path];
        out.push_str(&format!("{:032x} {} {path}\n", sum.hash, sum.size));
    }
    out.into_bytes()
}

/// The previous site, as far as its manifest vouches for it.
#[derive(Debug)]
pub struct PreviousSite {
    dir: PathBuf,
    files: HashMap<String, FileSum>,
}

impl PreviousSite {
    /// Reads `dir`'s manifest; `None` when there is none or it cannot be
    /// read or parsed (every file is then written).
    pub fn open(dir: &Path) -> Option<PreviousSite> {
        let path = dir.join(MANIFEST_FILE);
        if !std::fs::symlink_metadata(&path).ok()?.is_file() {
            return None;
        }
        let text = std::fs::read_to_string(&path).ok()?;
        // The marker's text, then the manifest (a marker alone: a site
        // whose build did not finish, or an older perfdash's).
        let mut lines = text.lines().skip_while(|l| *l != HEADER);
        lines.next()?;
        let mut files = HashMap::new();
        for line in lines {
            let (hash, rest) = line.split_once(' ')?;
            let (size, rel) = rest.split_once(' ')?;
            let sum = FileSum {
                size: size.parse().ok()?,
                hash: u128::from_str_radix(hash, 16).ok()?,
            };
            files.insert(rel.to_string(), sum);
        }
        Some(PreviousSite {
            dir: dir.to_path_buf(),
            files,
        })
    }

    /// What the previous site took, from its manifest.
    pub fn space_needed(&self) -> super::SpaceNeeded {
        super::SpaceNeeded::of(self.files.iter().map(|(rel, sum)| (rel.as_str(), sum.size)))
    }

    /// The previous site's copy of `rel`, when it holds exactly `bytes`
    /// (whose size and hash are `sum`): by the manifest, then read back.
    pub fn unchanged(&self, rel: &str, sum: FileSum, bytes: &[u8]) -> Option<PathBuf> {
        if self.files.get(rel) != Some(&sum) {
            return None;
        }
        let path = self.dir.join(rel);
        let meta = std::fs::symlink_metadata(&path).ok()?;
        if !meta.is_file() || meta.len() != sum.size {
            return None;
        }
        (std::fs::read(&path).ok()? == bytes).then_some(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unchanged(previous: &PreviousSite, rel: &str, bytes: &[u8]) -> bool {
        previous.unchanged(rel, FileSum::of(bytes), bytes).is_some()
    }

    #[test]
    fn a_manifest_reads_back_what_it_says() {
        let dir = tempfile::tempdir().unwrap();
        let entries: HashMap<String, FileSum> = [
            ("index.html".to_string(), FileSum::of(b"<html>")),
            ("a b/c.html".to_string(), FileSum::of(b"")),
        ]
        .into();
        std::fs::create_dir(dir.path().join("a b")).unwrap();
        std::fs::write(dir.path().join("index.html"), b"<html>").unwrap();
        std::fs::write(dir.path().join("a b/c.html"), b"").unwrap();
        std::fs::write(dir.path().join(MANIFEST_FILE), render(&entries)).unwrap();
        let previous = PreviousSite::open(dir.path()).unwrap();
        assert_eq!(previous.files, entries);
        assert!(unchanged(&previous, "index.html", b"<html>"));
        assert!(unchanged(&previous, "a b/c.html", b""));
        assert!(!unchanged(&previous, "index.html", b"<body>"));
        assert!(!unchanged(&previous, "other.html", b""));
    }

    #[test]
    fn a_file_edited_after_its_manifest_is_not_trusted() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("index.html"), b"<html>").unwrap();
        let entries: HashMap<String, FileSum> =
            [("index.html".to_string(), FileSum::of(b"<html>"))].into();
        std::fs::write(dir.path().join(MANIFEST_FILE), render(&entries)).unwrap();
        // Edited in place to the same size, the manifest left as it was.
        std::fs::write(dir.path().join("index.html"), b"<HTML>").unwrap();
        let previous = PreviousSite::open(dir.path()).unwrap();
        assert!(!unchanged(&previous, "index.html", b"<html>"));
        // Replaced by a link or a folder: not a file of the site.
        std::fs::remove_file(dir.path().join("index.html")).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", dir.path().join("index.html")).unwrap();
        assert!(!unchanged(&previous, "index.html", b"<html>"));
    }

    #[test]
    fn a_damaged_manifest_trusts_nothing() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(MANIFEST_FILE), "garbage\n").unwrap();
        assert!(PreviousSite::open(dir.path()).is_none());
        std::fs::write(dir.path().join(MANIFEST_FILE), super::super::MARKER_TEXT).unwrap();
        assert!(PreviousSite::open(dir.path()).is_none(), "a marker alone");
        std::fs::write(
            dir.path().join(MANIFEST_FILE),
            "# perfdash site manifest 1: xxh3-128 size path\nzz 1 index.html\n",
        )
        .unwrap();
        assert!(PreviousSite::open(dir.path()).is_none());
        assert!(PreviousSite::open(&dir.path().join("missing")).is_none());
    }
}
