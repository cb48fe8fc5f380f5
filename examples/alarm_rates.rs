//! How often each gating policy alarms on simulated quiet histories, and
//! how quickly it catches a step: the numbers behind the `robust_k` and
//! persistence defaults in docs/alarms.md.
//!
//! `cargo run --release --example alarm_rates`
//!
//! Noise model (docs/detection.md, "typical" and "noisy"): each run has a
//! between-run factor exp(N(0, σ_b)), each round a within-run factor
//! exp(N(0, σ_w)), and with probability q a round is a 1.8× GC tail.
//! Deterministic: a fixed-seed generator, no clock.

use std::collections::BTreeMap;

use chrono::{Duration, TimeZone, Utc};
use perfdash::analyse::{Policy, analyse};
use perfdash::config::Settings;
use perfdash::model::{Archive, EndpointRun, Round, RoundStats, Run, SourceFormat};

/// xorshift64*: tiny, deterministic, good enough for noise.
struct Rng(u64);

impl Rng {
    fn next_f64(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Standard normal (Box–Muller).
    fn normal(&mut self) -> f64 {
        let u = self.next_f64().max(1e-300);
        let v = self.next_f64();
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

struct Noise {
    name: &'static str,
    between: f64,
    within: f64,
    gc: f64,
}

fn series(rng: &mut Rng, noise: &Noise, runs: usize, step_at: Option<(usize, f64)>) -> Archive {
    let t0 = Utc.with_ymd_and_hms(2026, 1, 5, 3, 0, 0).unwrap();
    let runs = (0..runs)
        .map(|i| {
            let level = match step_at {
                Some((at, size)) if i >= at => 100.0 * (1.0 + size),
                _ => 100.0,
            };
            let run_factor = (noise.between * rng.normal()).exp();
            let rounds = (0..5)
                .map(|k| {
                    let mut p99 = level * run_factor * (noise.within * rng.normal()).exp();
                    if rng.next_f64() < noise.gc {
                        p99 *= 1.8;
                    }
                    Round {
                        number: k + 1,
                        label: None,
                        source: String::new(),
                        format: SourceFormat::K6HandleSummary,
                        stats: RoundStats {
                            p99_ms: p99,
                            ..Default::default()
                        },
                        warmup_s: None,
                        cross_check: None,
                    }
                })
                .collect();
            Run {
                capacity: Default::default(),
                id: format!("run-{i:03}"),
                started_at: t0 + Duration::hours(56 * i as i64),
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
        })
        .collect();
    Archive {
        root: "sim".into(),
        settings: Settings::default(),
        runs,
        triage: vec![],
        annotations: Vec::new(),
    }
}

fn main() {
    const SERIES: usize = 400;
    const RUNS: usize = 60;
    let noises = [
        Noise {
            name: "typical (σ_b 5%, σ_w 5%, 4% GC)",
            between: 0.05,
            within: 0.05,
            gc: 0.04,
        },
        Noise {
            name: "noisy (σ_b 8%, σ_w 6%, 8% GC)",
            between: 0.08,
            within: 0.06,
            gc: 0.08,
        },
    ];
    println!(
        "| noise | policy | false alarms per 100 judged runs | 20% step alarmed within 3 runs | median delay (runs) |"
    );
    println!("|---|---|---:|---:|---:|");
    for noise in &noises {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let mut null_alarms: BTreeMap<Policy, usize> = BTreeMap::new();
        let mut judged = 0usize;
        for _ in 0..SERIES {
            let a = analyse(&series(&mut rng, noise, RUNS, None), vec![]);
            judged += a.endpoints[0]
                .points
                .iter()
                .filter(|p| p.baseline_p99_ms.is_some())
                .count();
            for p in Policy::ALL {
                *null_alarms.entry(p).or_default() += a.alarms.of(p).count();
            }
        }
        let mut caught: BTreeMap<Policy, (usize, Vec<f64>)> = BTreeMap::new();
        for _ in 0..SERIES {
            let step_at = 40;
            let a = analyse(
                &series(&mut rng, noise, RUNS, Some((step_at, 0.20))),
                vec![],
            );
            for p in Policy::ALL {
                let first = a
                    .alarms
                    .of(p)
                    .map(|al| al.raised_index)
                    .filter(|&i| i >= step_at)
                    .min();
                let entry = caught.entry(p).or_default();
                if let Some(i) = first {
                    if i - step_at < 3 {
                        entry.0 += 1;
                    }
                    entry.1.push((i - step_at) as f64);
                }
            }
        }
        for p in Policy::ALL {
            let (within3, delays) = &caught[&p];
            println!(
                "| {} | {} | {:.2} | {:.0}% | {} |",
                noise.name,
                p,
                100.0 * null_alarms[&p] as f64 / judged as f64,
                100.0 * *within3 as f64 / SERIES as f64,
                perfdash::stats::median(delays)
                    .map(|d| format!("{d:.0}"))
                    .unwrap_or_else(|| "–".into())
            );
        }
    }
}
