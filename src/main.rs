fn main() -> std::process::ExitCode {
    perfdash::cli::main()
}
