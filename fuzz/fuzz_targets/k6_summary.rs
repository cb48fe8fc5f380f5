//! Any bytes given as a k6 summary: parsing must return Ok or an error
//! naming the file, never panic, and Ok figures must be usable.
//!
//! The input shaping and the checks live in `perfdash::fuzzing::check_k6_summary`,
//! shared with `tests/fuzz_regressions.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| perfdash::fuzzing::check_k6_summary(data));
