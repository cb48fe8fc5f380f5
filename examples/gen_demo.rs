//! Regenerates the bundled sample archive `archive/` byte for byte, and the
//! figures docs/archive.md quotes from it:
//!
//! ```text
//! cargo run --example gen_demo            # writes ./archive (replacing it) and docs/archive.md's figures
//! cargo run --example gen_demo -- DIR     # writes DIR, which must be new or empty
//! ```
//!
//! Same as `perfdash demo --out archive` with the default seed.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use perfdash::demo::{DemoOptions, facts, generate};

fn main() -> ExitCode {
    let arg = std::env::args_os().nth(1);
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = match &arg {
        Some(dir) => PathBuf::from(dir),
        None => {
            // The bundled archive is generated, never edited: replace it whole.
            let out = manifest.join("archive");
            let generated = out.join("README.md").exists() && out.join("runs").is_dir();
            if generated && let Err(e) = std::fs::remove_dir_all(&out) {
                eprintln!("error: cannot remove {}: {e}", out.display());
                return ExitCode::from(2);
            }
            out
        }
    };
    let report = match generate(&out, &DemoOptions::default()) {
        Ok(report) => report,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    print!("{report}");
    if arg.is_some() {
        return ExitCode::SUCCESS;
    }
    // The figures the docs quote, from perfdash's own analysis of the archive.
    let loaded = match perfdash::ingest::load_archive(&out) {
        Ok(loaded) => loaded,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let analysis = perfdash::analyse::analyse(&loaded.archive, loaded.diagnostics);
    let doc = manifest.join("docs/archive.md");
    let written = std::fs::read_to_string(&doc).and_then(|old| {
        let new =
            perfdash::doc_section::splice(&old, facts::SECTION, &facts::facts(&report, &analysis));
        std::fs::write(&doc, new)
    });
    match written {
        Ok(()) => {
            eprintln!("wrote the demo's figures into {}", doc.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {}: {e}", doc.display());
            ExitCode::from(2)
        }
    }
}
