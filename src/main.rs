//! The `perfdash` binary: everything happens in the library.

fn main() -> std::process::ExitCode {
    perfdash::cli::main()
}
