//! Inputs that once broke a parser, kept under
//! `tests/fixtures/fuzz/<target>/`, replayed through the same checks as
//! the fuzz target of that name (`fuzz/fuzz_targets/<target>.rs`). Drop a
//! crash artifact into the folder and it is tested from then on.
//!
//! `k6_summary/p99-near-f64-max.json` was found by hand while checking
//! NaN/∞ handling: finite, but medians and baseline × ratio overflowed to
//! infinity and plotters then looped forever on the infinite axis.
//!
//! `perf_script/blank-line-before-first-event-*` (a lone newline) was found by
//! the `perf_script` target in its first seconds: inferno's perf collapser
//! asserts that the first block names an event, and panicked.
//! `perf_script/form-feed-only-*` (a lone form feed, blank to inferno but
//! not a line) found the same assertion again after the first fix: input
//! that inferno's own format check rejects is no longer handed to it.
//! `perf_script/non-ascii-symbol-end-*` (read as DTrace) found inferno slicing
//! a symbol's last 17 bytes inside a multi-byte character: non-ASCII text is
//! now shielded as ASCII escapes on its way through inferno.
//! `perf_script/dtrace-count-without-stack-*` found inferno's DTrace
//! collapser subtracting one from an empty stack's length: counts that
//! follow no stack line are dropped first. `dtrace-count-after-header-*`
//! found that check reading a different text from inferno's (U+0085 is blank
//! before shielding, not after): every check now reads the shielded text.
//! `dtrace-count-sum-overflow-*`: two DTrace counts near 7 × 10^18 overflowed
//! inferno's `u64` sum; counts and perf periods above 10^15 are refused.
//!
//! `folded/nbsp-before-count-*` was found by the `folded` target after two
//! minutes: a no-break space (two bytes in UTF-8) before a count was taken
//! for the separator and the slice after it split a character.

use std::path::{Path, PathBuf};

use perfdash::fuzzing::{TARGETS, check};

fn inputs(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/fuzz")
        .join(target);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut out: Vec<(PathBuf, Vec<u8>)> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect();
    out.sort();
    out
}

/// Every kept input, through the check of the target that found it.
#[test]
fn every_kept_input_passes_its_targets_check() {
    // Like libFuzzer, count a panic even when something catches it: perfdash
    // turns a panic inside inferno into an error, but the panic message
    // still reaches the user's terminal.
    static PANICS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        PANICS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        default_hook(info);
    }));
    let mut replayed = 0;
    let mut failed = Vec::new();
    for target in TARGETS {
        for (file, data) in inputs(target) {
            let before = PANICS.load(std::sync::atomic::Ordering::SeqCst);
            let outcome = std::panic::catch_unwind(|| check(target, &data));
            if outcome.is_err() || PANICS.load(std::sync::atomic::Ordering::SeqCst) != before {
                failed.push(format!("{target}: {file:?}"));
            }
            replayed += 1;
        }
    }
    let _ = std::panic::take_hook();
    eprintln!("{replayed} kept fuzz inputs replayed");
    assert!(failed.is_empty(), "these inputs panic: {failed:#?}");
}

/// The inputs that found bugs are all still here (a folder emptied by
/// mistake would make the test above pass vacuously).
#[test]
fn the_known_crash_inputs_are_kept() {
    for (target, name) in [
        ("k6_summary", "p99-near-f64-max.json"),
        ("csv_jtl", "timestamp-overflow-5e6b59b6"),
        ("perf_script", "blank-line-before-first-event-adc83b19"),
        ("folded", "nbsp-before-count-a730cd2a"),
        ("perf_script", "form-feed-only-1e32e3c3"),
        ("perf_script", "non-ascii-symbol-end-43a9fe2f"),
        ("perf_script", "dtrace-count-without-stack-f05012e1"),
        ("perf_script", "dtrace-count-after-header-ac6a9cd4"),
        ("perf_script", "dtrace-count-sum-overflow-ac8f6d40"),
    ] {
        assert!(
            inputs(target).iter().any(|(p, _)| p.ends_with(name)),
            "tests/fixtures/fuzz/{target}/{name} is missing"
        );
    }
}

/// Folders under tests/fixtures/fuzz are named after targets, so a crash
/// artifact dropped into a misspelt folder is not silently ignored.
#[test]
fn every_fixture_folder_is_a_target() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fuzz");
    for entry in std::fs::read_dir(dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        assert!(
            TARGETS.contains(&name.as_str()),
            "no fuzz target named {name}"
        );
    }
}
