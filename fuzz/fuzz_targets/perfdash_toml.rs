//! Any text given as perfdash.toml: valid settings or an error naming the
//! file, never a panic; accepted settings satisfy their own invariants.
//!
//! The input shaping and the checks live in `perfdash::fuzzing::check_perfdash_toml`,
//! shared with `tests/fuzz_regressions.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| perfdash::fuzzing::check_perfdash_toml(data));
