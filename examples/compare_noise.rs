//! How often `perfdash compare` says what, on simulated pairs of runs with
//! the noise model of docs/detection.md: each run has a between-run factor
//! exp(σ_b·z), each round a within-run factor exp(σ_w·z) and, with
//! probability q, a 1.8× GC tail. Run B is scaled by `shift`.
//!
//! `cargo run --release --example compare_noise [pairs]` (default 4000).
//! Deterministic: a fixed seed.

use std::collections::BTreeMap;

use chrono::{TimeZone, Utc};
use perfdash::analyse::compare::compare;
use perfdash::analyse::verdict::ComparisonVerdict;
use perfdash::config::Settings;
use perfdash::model::{Archive, EndpointRun, Round, RoundStats, Run, SourceFormat};

/// splitmix64 + Box–Muller: enough for a simulation, no dependency.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
    fn normal(&mut self) -> f64 {
        (-2.0 * self.uniform().ln()).sqrt() * (std::f64::consts::TAU * self.uniform()).cos()
    }
}

struct Noise {
    name: &'static str,
    between: f64,
    within: f64,
    gc: f64,
}

fn run(rng: &mut Rng, id: &str, noise: &Noise, level: f64) -> Run {
    let run_factor = (noise.between * rng.normal()).exp();
    let rounds = (1..=5)
        .map(|n| {
            let gc = if rng.uniform() < noise.gc { 1.8 } else { 1.0 };
            Round {
                number: n,
                label: None,
                source: String::new(),
                format: SourceFormat::K6HandleSummary,
                stats: RoundStats {
                    p99_ms: level * run_factor * (noise.within * rng.normal()).exp() * gc,
                    ..Default::default()
                },
                warmup_s: None,
                cross_check: None,
            }
        })
        .collect();
    Run {
        capacity: Default::default(),
        id: id.to_string(),
        started_at: Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap(),
        meta: Default::default(),
        endpoints: BTreeMap::from([(
            "e".to_string(),
            EndpointRun {
                rounds,
                ..Default::default()
            },
        )]),
        problems: vec![],
        untrusted_time: None,
    }
}

fn main() {
    let pairs: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(4000);
    let noises = [
        Noise {
            name: "quiet (2%/2%/0)",
            between: 0.02,
            within: 0.02,
            gc: 0.0,
        },
        Noise {
            name: "typical (5%/5%/4%)",
            between: 0.05,
            within: 0.05,
            gc: 0.04,
        },
        Noise {
            name: "noisy (8%/6%/8%)",
            between: 0.08,
            within: 0.06,
            gc: 0.08,
        },
    ];
    let verdicts = [
        ComparisonVerdict::Regression,
        ComparisonVerdict::Same,
        ComparisonVerdict::Inconclusive,
        ComparisonVerdict::Improvement,
    ];
    let mut rng = Rng(20260504);
    let mut archive = Archive {
        root: "sim".into(),
        settings: Settings::default(),
        runs: vec![],
        triage: vec![],
        annotations: Vec::new(),
    };
    println!(
        "{pairs} simulated pairs per cell; share of verdicts (regression / same / inconclusive / improvement)"
    );
    println!(
        "{:<22} {:>6}  {:>10} {:>6} {:>12} {:>11}",
        "noise σ_b/σ_w/q", "shift", "regression", "same", "inconclusive", "improvement"
    );
    for noise in &noises {
        for shift in [1.0, 1.10, 1.20, 1.30] {
            let mut counts = BTreeMap::new();
            for _ in 0..pairs {
                archive.runs = vec![
                    run(&mut rng, "a", noise, 100.0),
                    run(&mut rng, "b", noise, 100.0 * shift),
                ];
                let c = compare(&archive, &archive.runs[0], &archive.runs[1]);
                *counts.entry(c.endpoints[0].verdict).or_insert(0usize) += 1;
            }
            let share = |v| 100.0 * *counts.get(&v).unwrap_or(&0) as f64 / pairs as f64;
            println!(
                "{:<22} {:>6.2}  {:>9.1}% {:>5.1}% {:>11.1}% {:>10.1}%",
                noise.name,
                shift,
                share(verdicts[0]),
                share(verdicts[1]),
                share(verdicts[2]),
                share(verdicts[3])
            );
        }
    }
}
