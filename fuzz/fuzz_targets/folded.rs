//! Folded stacks (`a;b;c 12` lines), as text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;

fn check(result: Result<perfdash::profile::Profile, perfdash::error::Error>) {
    if let Err(e) = result {
        assert!(e.to_string().starts_with("runs/r/e/flame"), "{e}");
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    check(perfdash::profile::parse_folded(text, Path::new("runs/r/e/flame.folded"), "cpu"));
});
