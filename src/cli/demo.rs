//! `perfdash demo`: writes the generated sample archive.

use std::path::PathBuf;

use clap::Args;

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Where to write the archive; must not exist or be empty.
    #[arg(long, value_name = "DIR", default_value = "archive")]
    pub out: PathBuf,
    /// The random seed; the default reproduces the bundled archive byte for byte.
    #[arg(long)]
    pub seed: Option<u64>,
}

pub fn run(args: DemoArgs) -> anyhow::Result<u8> {
    let _ = (&args.out, args.seed);
    anyhow::bail!("the demo generator is not in this build yet")
}
