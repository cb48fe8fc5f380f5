//! Errors that stop a command, and diagnostics that do not.

use std::fmt;
use std::path::{Path, PathBuf};

/// An error that stops the current command. Every variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A file's content is wrong; `line` is 1-based when known.
    #[error("{}{}: {message}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
    Input {
        path: PathBuf,
        line: Option<u64>,
        message: String,
    },
    /// The command line or the settings ask for something impossible.
    #[error("{0}")]
    Usage(String),
    /// Something inside perfdash failed (a chart could not be drawn, …).
    #[error("{0}")]
    Internal(String),
}

impl Error {
    /// An input error at `path` (and `line`, 1-based, when known).
    pub fn at(path: &Path, line: Option<u64>, message: impl Into<String>) -> Error {
        Error::Input {
            path: path.to_path_buf(),
            line,
            message: message.into(),
        }
    }

    /// Wraps an I/O error with the path it concerns.
    pub fn io(path: &Path, source: std::io::Error) -> Error {
        Error::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// A problem that does not stop the build: the file is skipped and the
/// build goes on, but the exit code says that warnings occurred.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Diagnostic {
    /// The file, relative to the archive root where possible.
    pub path: String,
    /// 1-based line, when known.
    pub line: Option<u64>,
    /// What was wrong and what was done about it.
    pub message: String,
}

impl Diagnostic {
    pub fn from_error(err: &Error) -> Diagnostic {
        match err {
            Error::Input {
                path,
                line,
                message,
            } => Diagnostic {
                path: path.display().to_string(),
                line: *line,
                message: message.clone(),
            },
            Error::Io { path, source } => Diagnostic {
                path: path.display().to_string(),
                line: None,
                message: source.to_string(),
            },
            other => Diagnostic {
                path: String::new(),
                line: None,
                message: other.to_string(),
            },
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{}: {}", self.path, line, self.message),
            None => write!(f, "{}: {}", self.path, self.message),
        }
    }
}
