//! The `changepoint` policy's cost against the length of the history
//! (issue 18: doubling the history must at most double the work).
//!
//! `online_regressions` judges every run of one endpoint's history as it
//! arrived; before it was incremental, it re-ran Otava's detection on every
//! prefix (O(runs²)). `detect_every_prefix` is that old way, kept here as
//! the yardstick; `detect_once` is one detection over the whole history.
//! Series: demo-like run medians (3 runs a week), ±3 % noise, a one-run
//! spike now and then and a lasting level shift every ~40 runs.
//!
//! `cargo bench --bench changepoint`

use divan::Bencher;
use perfdash::analyse::changepoint::{ChangePointParams, detect, online_regressions};

fn main() {
    divan::main();
}

fn history(runs: usize) -> Vec<f64> {
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    let mut uniform = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut level = 240.0;
    (0..runs)
        .map(|i| {
            if i > 0 && i % 41 == 0 {
                level *= if uniform() < 0.5 { 1.25 } else { 0.85 };
            }
            let spike = if uniform() < 0.03 { 1.6 } else { 1.0 };
            level * spike * (1.0 + 0.06 * (uniform() - 0.5))
        })
        .collect()
}

/// 156, 312 and 936 weeks of three runs.
const RUNS: [usize; 3] = [468, 936, 2808];

#[divan::bench(args = RUNS, sample_count = 10)]
fn online_regressions_incremental(bencher: Bencher, runs: usize) {
    let series = history(runs);
    let params = ChangePointParams::default();
    bencher.bench(|| online_regressions(&series, &params, 0, 2));
}

#[divan::bench(args = RUNS, sample_count = 10)]
fn detect_once(bencher: Bencher, runs: usize) {
    let series = history(runs);
    let params = ChangePointParams::default();
    bencher.bench(|| detect(&series, &params));
}

/// The old way: a fresh detection on every prefix (only the two shorter
/// histories; the longest takes minutes).
#[divan::bench(args = [468, 936], sample_count = 3)]
fn detect_every_prefix(bencher: Bencher, runs: usize) {
    let series = history(runs);
    let params = ChangePointParams::default();
    bencher.bench(|| {
        (1..=series.len())
            .map(|t| detect(&series[..t], &params).len())
            .sum::<usize>()
    });
}
