//! Any text given as run.toml, and any run id: errors name the file,
//! nothing panics.
//!
//! The input shaping and the checks live in `perfdash::fuzzing::check_run_toml`,
//! shared with `tests/fuzz_regressions.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| perfdash::fuzzing::check_run_toml(data));
