//! CSV raw results: JMeter JTL CSV or k6 CSV (the first byte picks the
//! header), then arbitrary rows.
//!
//! The input shaping and the checks live in `perfdash::fuzzing::check_csv_jtl`,
//! shared with `tests/fuzz_regressions.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| perfdash::fuzzing::check_csv_jtl(data));
