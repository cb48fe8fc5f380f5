//! `perfdash eval`: the policy evaluation on generated histories.

use clap::Args;
use std::path::PathBuf;

use anyhow::{Context, bail};

use super::EXIT_OK;
use crate::eval::{self, EvalConfig, policies};

/// Evaluates every alarm policy on seeded synthetic histories with injected
/// steps, ramps, spikes, GC-tail and noisy-neighbour runs, and prints (or
/// writes into a document) the table of false alarms, recall and delay.
#[derive(Debug, Clone, Args)]
pub struct EvalArgs {
    /// Replace the generated section of this Markdown file (between
    /// `<!-- BEGIN perfdash eval -->` and `<!-- END perfdash eval -->`)
    /// instead of printing the tables.
    #[arg(long, value_name = "FILE")]
    pub write: Option<PathBuf>,
    /// Seed of the generated histories.
    #[arg(long, default_value_t = EvalConfig::default().seed)]
    pub seed: u64,
    /// Histories per scenario and noise level.
    #[arg(long, default_value_t = EvalConfig::default().series)]
    pub series: usize,
    /// Runs per history.
    #[arg(long, default_value_t = EvalConfig::default().runs)]
    pub runs: usize,
    /// Print the full results as JSON instead of Markdown.
    #[arg(long, conflicts_with = "write")]
    pub json: bool,
}

pub(super) fn run(args: EvalArgs) -> anyhow::Result<u8> {
    let defaults = EvalConfig::default();
    if args.runs < 2 * defaults.horizon + 12 || args.series == 0 {
        bail!(
            "--runs must be at least {} and --series at least 1",
            2 * defaults.horizon + 12
        );
    }
    let config = EvalConfig {
        seed: args.seed,
        series: args.series,
        runs: args.runs,
        ..defaults
    };
    let report = eval::evaluate(&config, &policies::all());
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&report)?)?;
        return Ok(EXIT_OK);
    }
    let tables = report.to_markdown();
    match args.write {
        None => out!("{tables}")?,
        Some(path) => {
            write_section(&path, &tables)?;
            eprintln!("wrote the evaluation into {}", path.display());
        }
    }
    Ok(EXIT_OK)
}

/// Replaces the generated section of a Markdown document. Only a Markdown
/// file (`.md`, `.markdown`) that is new, or that already has the section's
/// markers, is written: `eval --write archive/perfdash.toml` once appended
/// Markdown to an archive's settings and broke every later build. The new
/// text replaces the file in one rename, so an interrupted write leaves
/// the old document.
fn write_section(path: &std::path::Path, tables: &str) -> anyhow::Result<()> {
    let markdown = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("md") || e.eq_ignore_ascii_case("markdown"));
    if !markdown {
        bail!(
            "--write {}: not a Markdown file (.md): eval writes its tables into a Markdown document",
            path.display()
        );
    }
    let old = match std::fs::symlink_metadata(path) {
        Ok(meta) if !meta.is_file() => bail!(
            "--write {}: not a plain file (a symbolic link or a folder): nothing written",
            path.display()
        ),
        Ok(_) => {
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    if !old.is_empty() && crate::doc_section::section(&old, "eval").is_none() {
        bail!(
            "--write {}: the document has no `<!-- BEGIN perfdash eval -->` … `<!-- END perfdash \
             eval -->` markers; add them where the tables go (nothing was written)",
            path.display()
        );
    }
    let new = crate::doc_section::splice(&old, "eval", tables);
    let folder = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let mut staged = tempfile::NamedTempFile::new_in(folder)
        .with_context(|| format!("writing into {}", folder.display()))?;
    std::io::Write::write_all(&mut staged, new.as_bytes())
        .with_context(|| format!("writing {}", path.display()))?;
    staged
        .persist(path)
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}
