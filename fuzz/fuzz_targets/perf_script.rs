//! `perf script` output: collapsed like stackcollapse-perf, then read.
//!
//! The input shaping and the checks live in `perfdash::fuzzing::check_perf_script`,
//! shared with `tests/fuzz_regressions.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| perfdash::fuzzing::check_perf_script(data));
