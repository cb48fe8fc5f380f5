//! The `perfdash` binary: everything happens in the library.

/// mimalloc instead of glibc's malloc: rendering and ingest make millions
/// of small strings on both cores (page fields, JSON values, file names),
/// and glibc's allocator spent a third of a warm build's CPU on them
/// (`_int_malloc`, `malloc_consolidate`) at 120 endpoints × 156 weeks; with
/// mimalloc the same build takes ~40 % less CPU (BENCHMARKS.md, issue 18).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    perfdash::cli::main()
}
