//! `perfdash record`: files one run's outputs into the archive.

use std::path::PathBuf;

use chrono::{DateTime, Utc};
use clap::Args;

use super::{EXIT_ERROR, EXIT_OK, diagnostic_label};
use crate::record::{RecordRequest, ci, host_name, parse_set, record};

#[derive(Debug, Args)]
pub struct RecordArgs {
    /// The archive to record into (created with its runs/ when missing);
    /// only a new runs/<run-id>/ is ever written.
    #[arg(long, value_name = "DIR", default_value = "archive")]
    pub archive: PathBuf,
    /// The endpoint the files measure (its folder name). Without it the
    /// files are run-level results of every endpoint, split by the
    /// `[raw] split_tag` tag.
    #[arg(long, value_name = "ID")]
    pub endpoint: Option<String>,
    /// A run.toml key (`jvm_flags=-Xmx2g`, `load.vus=50`, `branch=main`);
    /// repeatable; wins over what the CI variables and the host say.
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = parse_set)]
    pub sets: Vec<(String, String)>,
    /// When the run started (RFC 3339) [default: now, or PERFDASH_NOW].
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    pub started_at: Option<DateTime<Utc>>,
    /// The run id [default: the start time, as 2026-05-04T0300Z].
    #[arg(long, value_name = "ID")]
    pub id: Option<String>,
    /// The round files, one per round, in round order (files already named
    /// round-<n>… keep their numbers).
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
}

fn parse_time(text: &str) -> Result<DateTime<Utc>, String> {
    DateTime::parse_from_rfc3339(text.trim())
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| format!("not an RFC 3339 time ({e}), e.g. 2026-05-04T03:00:00Z"))
}

pub(super) fn run(args: RecordArgs) -> anyhow::Result<u8> {
    let started_at = match args.started_at {
        Some(t) => t,
        None => crate::ingest::build_time()?,
    };
    let request = RecordRequest {
        archive: args.archive,
        endpoint: args.endpoint,
        files: args.files,
        started_at,
        id: args.id,
        ci: ci::detect(&|name| std::env::var(name).ok()),
        host: host_name(),
        sets: args.sets,
    };
    match record(&request) {
        Ok(recorded) => {
            for d in &recorded.notes {
                eprintln!("{}: {d}", diagnostic_label(d));
            }
            eprintln!(
                "recorded {} round file(s) into {}",
                recorded.files,
                recorded.dir.display()
            );
            // The id alone on stdout, for `RUN=$(perfdash record …)`.
            println!("{}", recorded.id);
            Ok(EXIT_OK)
        }
        Err(errors) => {
            for e in &errors {
                eprintln!("error: {e}");
            }
            eprintln!("error: nothing was recorded; the archive is unchanged");
            Ok(EXIT_ERROR)
        }
    }
}
