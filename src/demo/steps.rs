//! Step-load runs of the demo archive (docs/capacity.md): every other
//! Friday, three endpoints get a JMeter step-load file
//! (`steps.csv.gz`: timeStamp, elapsed, label, success, allThreads) and
//! host resource readings (`resources.csv`). From release 1.7.0 on,
//! inventory-reserve serves ~30% less before its latency bends (its
//! capacity regression).
//!
//! The service model uses arithmetic and `sqrt` only (correctly rounded
//! everywhere), so the files are the same bytes on every machine.

use std::fmt::Write as _;
use std::io::Write as _;

use super::rng::Rng;

/// One endpoint's capacity story.
pub(crate) struct CapacityDef {
    pub endpoint: &'static str,
    /// Requests per second the service can serve at full utilisation.
    pub capacity_rps: f64,
    /// Latency of an unloaded request (ms).
    pub base_ms: f64,
    /// The p99 objective written to perfdash.toml (ms).
    pub objective_ms: f64,
    /// From this release's run on, capacity × this factor.
    pub drop: Option<(&'static str, f64)>,
    /// In this run (index), this step (0-based) catches a GC storm: a
    /// single noisy step the knee rule must ignore.
    pub noisy: Option<(usize, usize)>,
}

pub(crate) const CAPACITY: [CapacityDef; 3] = [
    CapacityDef {
        endpoint: "order-detail",
        capacity_rps: 220.0,
        base_ms: 30.0,
        objective_ms: 160.0,
        drop: None,
        noisy: Some((26, 2)),
    },
    CapacityDef {
        endpoint: "inventory-reserve",
        capacity_rps: 120.0,
        base_ms: 60.0,
        objective_ms: 330.0,
        drop: Some(("1.7.0", 0.7)),
        noisy: None,
    },
    CapacityDef {
        endpoint: "order-search",
        capacity_rps: 60.0,
        base_ms: 150.0,
        objective_ms: 900.0,
        drop: None,
        noisy: None,
    },
];

/// Threads per step: the same profile in every run, so knees compare;
/// finer where the knees lie.
pub(crate) const THREADS: [u32; 9] = [10, 20, 30, 35, 40, 45, 50, 60, 70];
/// Seconds per step (perfdash settles the first 5 s of each).
pub(crate) const STEP_SECONDS: i64 = 15;

/// Whether run `index` (three a week: Mon, Wed, Fri) is a step-load run:
/// the Friday of every other week, releases included.
pub(crate) fn is_step_run(index: usize) -> bool {
    index % 3 == 2 && (index / 3).is_multiple_of(2)
}

/// The soft minimum of offered load and capacity: what a closed system
/// actually serves.
fn served(offered: f64, capacity: f64) -> f64 {
    let d = offered - capacity;
    (offered + capacity - (d * d + (0.08 * capacity) * (0.08 * capacity)).sqrt()) / 2.0
}

/// A step-load round of one endpoint as a gzipped JMeter CSV, and the
/// utilisation of each step (for the resource readings).
pub(crate) fn render(
    def: &CapacityDef,
    capacity_rps: f64,
    run: usize,
    start_ms: i64,
    rng: &mut Rng,
) -> (Vec<u8>, Vec<f64>) {
    // Each thread offers the same rate in every run: 70 threads offer
    // 0.875 × the original capacity.
    let per_thread = def.capacity_rps / 80.0;
    let mut csv = String::from("timeStamp,elapsed,label,success,allThreads\n");
    let mut utilisation = Vec::new();
    for (k, &threads) in THREADS.iter().enumerate() {
        let offered = threads as f64 * per_thread * rng.factor(0.02);
        let rate = served(offered, capacity_rps);
        let rho = (rate / capacity_rps).min(0.995);
        utilisation.push(rho);
        // Queueing delay grows like ρ² / (1 − ρ); its spread is a heavy
        // tail u / (1.05 − u) (p99 ≈ 7.5 × its mean).
        let queue_ms = def.base_ms * 0.45 * rho * rho / (1.03 - rho);
        let error_chance = ((rho - 0.9) * 0.15).max(0.0);
        let step_start = start_ms + k as i64 * STEP_SECONDS * 1000;
        let count = (rate * STEP_SECONDS as f64).round() as i64;
        let spacing = STEP_SECONDS as f64 * 1000.0 / count.max(1) as f64;
        for i in 0..count {
            let t = step_start + (i as f64 * spacing + rng.range(0.0, spacing)) as i64;
            let u = rng.uniform();
            let mut elapsed = def.base_ms * rng.range(0.7, 1.3) + queue_ms * u / (1.05 - u) / 2.2;
            if def.noisy == Some((run, k)) && rng.chance(0.03) {
                elapsed *= 8.0; // a request caught in the GC storm
            }
            let ok = !rng.chance(error_chance);
            let _ = writeln!(
                csv,
                "{t},{},{},{ok},{threads}",
                elapsed.round() as i64,
                def.endpoint
            );
        }
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(csv.as_bytes()).expect("writing to memory");
    (gz.finish().expect("writing to memory"), utilisation)
}

/// Host readings every 5 s over the step-load round (Unix seconds, CPU %,
/// resident memory in MB), as a Prometheus range query exported to CSV.
pub(crate) fn resources(start_ms: i64, utilisation: &[f64], rng: &mut Rng) -> String {
    let mut out = String::from("time,cpu,memory\n");
    let steps = utilisation.len() as i64;
    let mut t = start_ms / 1000;
    let end = t + steps * STEP_SECONDS;
    while t < end {
        let k = ((t - start_ms / 1000) / STEP_SECONDS) as usize;
        let rho = utilisation[k.min(utilisation.len() - 1)];
        let cpu = (6.0 + 88.0 * rho + rng.normal(3.0) * 1.5).clamp(0.0, 100.0);
        let memory = 910.0 + 260.0 * rho + rng.range(-4.0, 4.0);
        let _ = writeln!(out, "{t},{cpu:.1},{memory:.0}");
        t += 5;
    }
    out
}
