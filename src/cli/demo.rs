//! `perfdash demo`: writes the generated sample archive.

use std::path::PathBuf;

use clap::Args;

use super::EXIT_OK;
use crate::demo::{DEFAULT_SEED, DemoOptions, generate};

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Where to write the archive; must not exist or be empty.
    #[arg(long, value_name = "DIR", default_value = "archive")]
    pub out: PathBuf,
    /// The random seed; the default reproduces the bundled archive byte for byte.
    #[arg(long, default_value_t = DEFAULT_SEED)]
    pub seed: u64,
    /// Weeks of history (three runs a week); the bundled archive has the
    /// default. Every length ends where the bundled history ends
    /// (November 2026), so no run is dated in the future.
    #[arg(long)]
    pub weeks: Option<u32>,
    /// Endpoints: the story's 12 (the default), and beyond that copies of
    /// them with their own noise, for benchmarks (e.g. 120).
    #[arg(long, value_name = "N")]
    pub endpoints: Option<usize>,
    /// Leave out the flame-graph profiles.
    #[arg(long)]
    pub no_profiles: bool,
}

pub(super) fn run(args: DemoArgs) -> anyhow::Result<u8> {
    let defaults = DemoOptions::default();
    let weeks = args.weeks.unwrap_or(defaults.weeks);
    let opts = DemoOptions {
        seed: args.seed,
        endpoints: args.endpoints.unwrap_or(defaults.endpoints),
        profiles: !args.no_profiles,
        ..defaults
    }
    .with_weeks_ending_like_bundled(weeks);
    let report = generate(&args.out, &opts)?;
    eprintln!(
        "wrote {} ({} runs, {} endpoints, {} files, {} bytes)",
        args.out.display(),
        report.runs,
        report.endpoints,
        report.files,
        report.bytes
    );
    Ok(EXIT_OK)
}
