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

/// The longest history `demo` writes: ten years.
const MAX_WEEKS: u32 = 520;
/// The most endpoints `demo` writes.
const MAX_ENDPOINTS: usize = 1200;
/// The most bytes `demo` writes (about ten years of 120 endpoints).
const MAX_BYTES: u64 = 4 << 30;
/// What one round file and its share of the rest (run.toml, profiles,
/// step-load files, triage labels) take, measured on the bundled archive
/// (18.7 MB for 4,680 round files), rounded up.
const BYTES_PER_ROUND: u64 = 4_200;

pub(super) fn run(args: DemoArgs) -> anyhow::Result<u8> {
    let defaults = DemoOptions::default();
    let weeks = args.weeks.unwrap_or(defaults.weeks);
    let endpoints = args.endpoints.unwrap_or(defaults.endpoints);
    if !(1..=MAX_WEEKS).contains(&weeks) || !(1..=MAX_ENDPOINTS).contains(&endpoints) {
        anyhow::bail!(
            "demo writes 1 to {MAX_WEEKS} weeks (ten years) and 1 to {MAX_ENDPOINTS} endpoints \
             (got --weeks {weeks}, --endpoints {endpoints})"
        );
    }
    let opts = DemoOptions {
        seed: args.seed,
        endpoints,
        profiles: !args.no_profiles,
        ..defaults
    }
    .with_weeks_ending_like_bundled(weeks);
    let estimate = u64::from(weeks) * 3 * endpoints as u64 * opts.rounds as u64 * BYTES_PER_ROUND;
    if estimate > MAX_BYTES {
        anyhow::bail!(
            "demo would write about {:.1} GB ({weeks} weeks × {endpoints} endpoints); it writes at \
             most {} GB: fewer weeks or endpoints",
            estimate as f64 / 1e9,
            MAX_BYTES >> 30
        );
    }
    if std::fs::read_dir(&args.out).is_ok_and(|mut d| d.next().is_some()) {
        anyhow::bail!(
            "{} is not empty: the demo archive is written only into a new or empty folder",
            args.out.display()
        );
    }
    // Written into a folder beside OUT and renamed into place when whole:
    // an interrupted or failed demo leaves nothing (the signal thread
    // removes the folder being written).
    let name = args
        .out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "archive".into());
    let parent = args
        .out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    std::fs::create_dir_all(parent)?;
    let staging = parent.join(format!(".{name}.perfdash-demo-{}", std::process::id()));
    crate::cleanup::install_signal_handlers()?;
    let registered = crate::cleanup::register(&staging);
    let written = generate(&staging, &opts)
        .map_err(anyhow::Error::from)
        .and_then(|report| {
            let mut held = crate::cleanup::hold();
            if args.out.is_dir() {
                std::fs::remove_dir(&args.out)?;
            }
            std::fs::rename(&staging, &args.out)?;
            held.remove(&staging);
            Ok(report)
        });
    drop(registered);
    let report = match written {
        Ok(report) => report,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&staging);
            return Err(e);
        }
    };
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
