//! Any text given as perfdash.toml: valid settings or an error naming the
//! file, never a panic; accepted settings satisfy their own invariants.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match perfdash::config::Settings::parse(text, Path::new("perfdash.toml")) {
        Ok(s) => {
            assert!(s.analysis.threshold_ratio.is_finite() && s.analysis.threshold_ratio > 1.0);
            assert!(s.analysis.expected_rounds >= 1);
        }
        Err(e) => assert!(e.to_string().starts_with("perfdash.toml")),
    }
});
