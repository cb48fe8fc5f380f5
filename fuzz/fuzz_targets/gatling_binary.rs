//! Gatling binary `simulation.log` (3.12.1+), as the raw reader sees a
//! file: the first byte picks a valid run record before the bytes (so the
//! records are reached) or leaves the run record to the fuzzer.
//!
//! The input shaping and the checks live in
//! `perfdash::fuzzing::check_gatling_binary`, shared with
//! `tests/fuzz_regressions.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| perfdash::fuzzing::check_gatling_binary(data));
