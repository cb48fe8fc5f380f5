//! Any bytes given as a k6 summary: parsing must return Ok or an error
//! naming the file, never panic, and Ok figures must be usable.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let path = Path::new("runs/r/ep/round-1.json");
    if let Ok(round) = perfdash::ingest::k6_summary::parse(data, path, "http_req_duration") {
        let s = round.stats;
        assert!(s.p99_ms.is_finite() && s.p99_ms >= 0.0);
        if let Some(r) = s.error_rate {
            assert!((0.0..=1.0).contains(&r));
        }
    }
    if let Ok(summary) = perfdash::ingest::k6_summary::parse_summary(data, path) {
        let _ = summary.thresholds();
        let _ = summary.metrics();
    }
});
