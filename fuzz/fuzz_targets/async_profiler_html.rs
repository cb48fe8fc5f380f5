//! async-profiler HTML flame graphs: any bytes after an HTML start.
//!
//! The input shaping and the checks live in `perfdash::fuzzing::check_async_profiler_html`,
//! shared with `tests/fuzz_regressions.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| perfdash::fuzzing::check_async_profiler_html(data));
