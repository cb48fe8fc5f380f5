//! k6 NDJSON (`--out json`) records, as the raw reader sees a file: a
//! valid first record so the content is recognised, then arbitrary lines.
//!
//! The input shaping and the checks live in `perfdash::fuzzing::check_k6_ndjson`,
//! shared with `tests/fuzz_regressions.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| perfdash::fuzzing::check_k6_ndjson(data));
