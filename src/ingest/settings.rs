//! Reading `perfdash.toml`: the file is read like every archive file
//! (no symbolic links, no FIFOs, capped), parsed and validated by
//! [`Settings::parse`], and its `[profiles]` regular expressions compiled
//! once here, so that a bad pattern is a clear error naming the file.

use std::path::Path;

use crate::config::{Limits, SETTINGS_FILE, Settings};
use crate::error::Error;

/// Reads `perfdash.toml` from the archive root, or returns the defaults
/// when there is none.
pub fn load(archive_root: &Path) -> Result<Settings, Error> {
    let path = archive_root.join(SETTINGS_FILE);
    let text = match super::limits::read_text_file(&path, &Limits::default()) {
        Ok(Some(text)) => text,
        Ok(None) => return Ok(Settings::default()),
        Err(source) => return Err(Error::Io { path, source }),
    };
    parse(&text, &path)
}

/// Parses settings text; `path` is used in messages.
pub fn parse(text: &str, path: &Path) -> Result<Settings, Error> {
    let settings = Settings::parse(text, path)?;
    crate::profile::Classifier::new(&settings.profiles)
        .map_err(|e| Error::at(path, None, format!("profiles: {e}")))?;
    Ok(settings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_profile_pattern_names_the_file_and_the_setting() {
        let err = parse(
            "[profiles.rules]\ngc = [\"(unclosed\"]\n",
            Path::new("a/perfdash.toml"),
        )
        .unwrap_err()
        .to_string();
        assert!(err.starts_with("a/perfdash.toml"), "{err}");
        assert!(err.contains("profiles: rules.gc"), "{err}");
        // The settings type itself only checks what it can without the
        // classifier: the same text parses there.
        assert!(
            Settings::parse("[profiles.rules]\ngc = [\"(unclosed\"]\n", Path::new("p")).is_ok()
        );
    }

    #[test]
    fn no_file_gives_the_defaults() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(load(dir.path()).unwrap(), Settings::default());
    }
}
