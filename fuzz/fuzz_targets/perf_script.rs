//! `perf script` output: collapsed like stackcollapse-perf, then read.
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
    let _ = perfdash::profile::collapse_perf(
        text,
        perfdash::profile::PerfOptions {
            annotate_jit: true,
            annotate_kernel: true,
            include_pid: true,
            include_tid: true,
            include_addrs: true,
        },
    );
    check(perfdash::profile::parse(data, Path::new("runs/r/e/flame.txt")));
});
