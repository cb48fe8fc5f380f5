//! Any text given as run.toml, and any run id: errors name the file,
//! nothing panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match perfdash::ingest::parse_run_meta(text, Path::new("runs/r/run.toml")) {
        Ok(_) => {}
        Err(e) => assert!(e.to_string().starts_with("runs/r/run.toml")),
    }
    let _ = perfdash::ingest::run_time_from_id(text);
});
