//! async-profiler HTML flame graphs: any bytes after an HTML start.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;

fn check(result: Result<perfdash::profile::Profile, perfdash::error::Error>) {
    if let Err(e) = result {
        assert!(e.to_string().starts_with("runs/r/e/flame"), "{e}");
    }
}

fuzz_target!(|data: &[u8]| {
    let mut bytes = b"<!DOCTYPE html>\n<html>".to_vec();
    bytes.extend_from_slice(data);
    check(perfdash::profile::parse(&bytes, Path::new("runs/r/e/flame.html")));
});
