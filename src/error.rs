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

/// What a [`Diagnostic`] means for the verdicts, and so for exit codes.
///
/// Producers choose the kind; consumers decide from it alone (never from
/// the wording of the message): the build's exit code in `src/cli/`, the
/// gate's "cannot vouch" in `analyse::gate`, `--strict`, which lines are
/// printed as `warning:` and which as `note:`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum DiagnosticKind {
    /// An input that holds (or may hold) measurements could not be used: a
    /// round file that does not parse, a second file for one round, a run
    /// folder without readable rounds, an entry that is a symbolic link.
    /// The run's figures may be incomplete, so the gate cannot vouch for it.
    SkippedInput,
    /// Measurements were read and used, but something about them is off: a
    /// summary that disagrees with its raw file, a cut-short last line, a
    /// gap in the round numbers, two runs at one moment. The gate cannot
    /// vouch for the run either.
    Doubtful,
    /// An input that adds to the pages but to no verdict (a flame graph,
    /// resource readings) could not be read, or only in part.
    SkippedExtra,
    /// A file perfdash does not read (notes, unknown names, a second flame
    /// graph of one kind), or a setting whose value is not used. Holds no
    /// measurement: harmless to the verdicts.
    Ignored,
    /// A run's `started_at` cannot be trusted (in the future, before 2000,
    /// far from the date in its id): the run is kept in the history but
    /// is never "the latest run" until it is fixed.
    UntrustedTime,
    /// Something true about a format that the reader should know ("Locust
    /// percentiles cannot be trimmed"): said once per build, never a
    /// warning, never counted as skipped.
    Information,
}

impl DiagnosticKind {
    /// Whether this is a warning (everything but information): it makes a
    /// build exit 1 and fails `--strict`.
    pub fn is_warning(self) -> bool {
        self != DiagnosticKind::Information
    }

    /// Whether a run with a diagnostic of this kind may have figures that
    /// are incomplete or wrong, so that the gate cannot vouch for it.
    pub fn casts_doubt_on_verdicts(self) -> bool {
        matches!(
            self,
            DiagnosticKind::SkippedInput | DiagnosticKind::Doubtful | DiagnosticKind::UntrustedTime
        )
    }

    /// The contract string (`skipped-input`, `information`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            DiagnosticKind::SkippedInput => "skipped-input",
            DiagnosticKind::Doubtful => "doubtful",
            DiagnosticKind::SkippedExtra => "skipped-extra",
            DiagnosticKind::Ignored => "ignored",
            DiagnosticKind::UntrustedTime => "untrusted-time",
            DiagnosticKind::Information => "information",
        }
    }
}

/// A problem, or a fact, that does not stop the build. What it means for
/// the verdicts and the exit code is its [`kind`](DiagnosticKind).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Diagnostic {
    pub kind: DiagnosticKind,
    /// The file, relative to the archive root where possible; empty for a
    /// fact about the whole build.
    pub path: String,
    /// 1-based line, when known.
    pub line: Option<u64>,
    /// What was wrong and what was done about it.
    pub message: String,
}

impl Diagnostic {
    /// A diagnostic of `kind` about `path` (and `line`, 1-based, when known).
    pub fn new(
        kind: DiagnosticKind,
        path: impl Into<String>,
        line: Option<u64>,
        message: impl Into<String>,
    ) -> Diagnostic {
        Diagnostic {
            kind,
            path: path.into(),
            line,
            message: message.into(),
        }
    }

    /// An error that cost an input, as a diagnostic of `kind`.
    pub fn from_error(kind: DiagnosticKind, err: &Error) -> Diagnostic {
        match err {
            Error::Input {
                path,
                line,
                message,
            } => Diagnostic::new(kind, path.display().to_string(), *line, message.clone()),
            Error::Io { path, source } => {
                Diagnostic::new(kind, path.display().to_string(), None, source.to_string())
            }
            other => Diagnostic::new(kind, String::new(), None, other.to_string()),
        }
    }

    /// [`from_error`](Self::from_error) with `prefix` before the message
    /// (`skipped: …`, `skipped profile: …`).
    pub fn from_error_with(kind: DiagnosticKind, prefix: &str, err: &Error) -> Diagnostic {
        let mut d = Diagnostic::from_error(kind, err);
        d.message = format!("{prefix}{}", d.message);
        d
    }

    pub fn is_warning(&self) -> bool {
        self.kind.is_warning()
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.path.is_empty(), self.line) {
            (true, _) => write!(f, "{}", self.message),
            (false, Some(line)) => write!(f, "{}:{}: {}", self.path, line, self.message),
            (false, None) => write!(f, "{}: {}", self.path, self.message),
        }
    }
}

/// Says each piece of information once per build: diagnostics of kind
/// [`DiagnosticKind::Information`] with the same message (one per Locust
/// file, say) become one, naming the first file and how many there were.
/// Warnings are kept as they are, in order; the merged information comes
/// after them.
pub fn merge_information(diagnostics: Vec<Diagnostic>) -> Vec<Diagnostic> {
    let mut out = Vec::with_capacity(diagnostics.len());
    // message → (first path, count), in order of first appearance
    let mut facts: Vec<(String, String, usize)> = Vec::new();
    for d in diagnostics {
        if d.kind != DiagnosticKind::Information {
            out.push(d);
            continue;
        }
        match facts.iter_mut().find(|(m, _, _)| *m == d.message) {
            Some((_, first, n)) => {
                if !d.path.is_empty() && (first.is_empty() || d.path < *first) {
                    *first = d.path;
                }
                *n += 1;
            }
            None => facts.push((d.message, d.path, 1)),
        }
    }
    for (message, first, n) in facts {
        let message = match n {
            1 => message,
            n => format!("{message} (said once for {n} files)"),
        };
        out.push(Diagnostic::new(
            DiagnosticKind::Information,
            first,
            None,
            message,
        ));
    }
    out
}

/// The 1-based line of `text` that holds byte `offset` (an offset past
/// the end is on the last line): where a parser's error span points, for
/// a diagnostic that names the line. The one place this is counted
/// (`perfdash.toml`, triage files and annotations all report through it).
pub fn line_at(text: &str, offset: usize) -> u64 {
    let before = &text.as_bytes()[..offset.min(text.len())];
    memchr::memchr_iter(b'\n', before).count() as u64 + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_at_counts_lines_from_one() {
        let text = "a\nbb\n\nc";
        assert_eq!(line_at(text, 0), 1);
        assert_eq!(line_at(text, 1), 1, "the newline ends line 1");
        assert_eq!(line_at(text, 2), 2);
        assert_eq!(line_at(text, 5), 3);
        assert_eq!(line_at(text, 6), 4);
        assert_eq!(line_at(text, 99), 4, "past the end: the last line");
    }

    #[test]
    fn information_is_said_once_and_never_a_warning() {
        let info = |path: &str| {
            Diagnostic::new(
                DiagnosticKind::Information,
                path,
                None,
                "Locust: no trimming",
            )
        };
        let warning = Diagnostic::new(DiagnosticKind::Ignored, "runs/a/x.txt", None, "ignored");
        let merged = merge_information(vec![
            info("runs/b/e/round-1_stats.csv"),
            warning.clone(),
            info("runs/a/e/round-1_stats.csv"),
        ]);
        assert_eq!(merged.len(), 2, "{merged:?}");
        assert_eq!(merged[0], warning);
        assert_eq!(
            merged[1].to_string(),
            "runs/a/e/round-1_stats.csv: Locust: no trimming (said once for 2 files)"
        );
        assert!(!merged[1].is_warning());
        assert!(!DiagnosticKind::Information.casts_doubt_on_verdicts());
    }

    #[test]
    fn kinds_decide_what_a_diagnostic_means() {
        use DiagnosticKind::*;
        for kind in [SkippedInput, Doubtful, UntrustedTime] {
            assert!(
                kind.is_warning() && kind.casts_doubt_on_verdicts(),
                "{kind:?}"
            );
        }
        for kind in [SkippedExtra, Ignored] {
            assert!(
                kind.is_warning() && !kind.casts_doubt_on_verdicts(),
                "{kind:?}"
            );
        }
        let d = Diagnostic::new(Ignored, "", None, "whole build");
        assert_eq!(d.to_string(), "whole build");
    }
}
