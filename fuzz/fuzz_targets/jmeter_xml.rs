//! JMeter JTL XML: the root element, then arbitrary content.
//!
//! The input shaping and the checks live in `perfdash::fuzzing::check_jmeter_xml`,
//! shared with `tests/fuzz_regressions.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| perfdash::fuzzing::check_jmeter_xml(data));
