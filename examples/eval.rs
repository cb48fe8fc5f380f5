//! Runs `perfdash eval` until the subcommand is wired into the CLI:
//! `cargo run --release --example eval -- --write docs/detection.md`.

use clap::Parser;

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    args: perfdash::cli::eval::EvalArgs,
}

fn main() -> std::process::ExitCode {
    match perfdash::cli::eval::run(Cli::parse().args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("perfdash eval: {e}");
            std::process::ExitCode::from(2)
        }
    }
}
