//! Regenerates the bundled sample archive `archive/` byte for byte:
//!
//! ```text
//! cargo run --example gen_demo            # writes ./archive (replacing it)
//! cargo run --example gen_demo -- DIR     # writes DIR, which must be new or empty
//! ```
//!
//! Same as `perfdash demo --out archive` with the default seed.

use std::path::PathBuf;
use std::process::ExitCode;

use perfdash::demo::{DemoOptions, generate};

fn main() -> ExitCode {
    let arg = std::env::args_os().nth(1);
    let out = match &arg {
        Some(dir) => PathBuf::from(dir),
        None => {
            // The bundled archive is generated, never edited: replace it whole.
            let out = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("archive");
            let generated = out.join("README.md").exists() && out.join("runs").is_dir();
            if generated && let Err(e) = std::fs::remove_dir_all(&out) {
                eprintln!("error: cannot remove {}: {e}", out.display());
                return ExitCode::from(2);
            }
            out
        }
    };
    match generate(&out, &DemoOptions::default()) {
        Ok(report) => {
            print!("{report}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
