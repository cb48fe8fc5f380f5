//! Folded stacks (`a;b;c 12` lines), as text.
//!
//! The input shaping and the checks live in `perfdash::fuzzing::check_folded`,
//! shared with `tests/fuzz_regressions.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| perfdash::fuzzing::check_folded(data));
