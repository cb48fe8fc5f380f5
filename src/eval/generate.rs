//! Seeded synthetic histories: quiet load-test runs of 5 rounds each, with
//! events injected at a known run.

use serde::Serialize;

use crate::hash::SplitMix64;

/// A small, fast, seeded generator so histories are the same on every
/// machine and every run: the one seeded stream of `crate::hash`
/// ([`SplitMix64`], whose normal draws the demo archive is made from too),
/// with `perfdash eval`'s way of deriving streams. The quality is ample for
/// noise.
#[derive(Debug, Clone)]
pub struct Rng(SplitMix64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(SplitMix64::new(seed))
    }

    /// Derives an independent stream from a seed and a path of indexes.
    pub fn derive(seed: u64, path: &[u64]) -> Rng {
        let mut r = Rng::new(seed);
        for &p in path {
            r.0.mix(p.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            r.next_u64();
        }
        r
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        self.0.uniform()
    }

    /// Uniform integer in lo..=hi.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next_u64() % (hi - lo + 1) as u64) as usize
    }

    /// Approximately standard normal ([`SplitMix64::normal`]: basic
    /// operations only, the same bits on every machine).
    pub fn normal(&mut self) -> f64 {
        self.0.normal()
    }

    /// A multiplicative noise factor `e^(sigma·Z)` (log-normal), with no
    /// libm call ([`SplitMix64::log_normal`]): `(sigma * normal()).exp()`
    /// would use the platform's `exp`.
    pub fn log_normal(&mut self, sigma: f64) -> f64 {
        self.0.log_normal(sigma)
    }
}

/// How noisy an endpoint is. All noise is multiplicative.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct NoiseModel {
    pub name: &'static str,
    /// σ of the log of a run's level around the endpoint's level.
    pub between_run: f64,
    /// σ of the log of a round around its run's level.
    pub within_run: f64,
    /// Chance that a round has a GC tail …
    pub gc_round_prob: f64,
    /// … multiplying its p99 by this.
    pub gc_factor: f64,
    /// Chance that a run shares its host with a noisy neighbour …
    pub neighbour_run_prob: f64,
    /// … multiplying every round of it by this.
    pub neighbour_factor: f64,
}

/// The two settings of the simulation in docs/detection.md ("Rounds,
/// runs and small samples"), plus background
/// noisy-neighbour runs.
pub const NOISE_MODELS: [NoiseModel; 2] = [
    NoiseModel {
        name: "typical",
        between_run: 0.05,
        within_run: 0.05,
        gc_round_prob: 0.04,
        gc_factor: 1.8,
        neighbour_run_prob: 0.01,
        neighbour_factor: 1.25,
    },
    NoiseModel {
        name: "noisy",
        between_run: 0.08,
        within_run: 0.06,
        gc_round_prob: 0.08,
        gc_factor: 1.8,
        neighbour_run_prob: 0.02,
        neighbour_factor: 1.25,
    },
];

/// What is injected at the onset run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub enum Injection {
    /// Nothing: a quiet history (false alarms only).
    None,
    /// A lasting level shift by this fraction (0.2 = 20% slower).
    Step(f64),
    /// A creeping regression: +`per_run` per run from the onset, up to `cap`.
    Ramp { per_run: f64, cap: f64 },
    /// One run slower by this fraction, then back (not a regression).
    Spike(f64),
    /// One run with two GC-tail rounds (not a regression).
    GcRun,
    /// One run entirely slowed by a noisy neighbour (not a regression).
    NeighbourRun,
}

impl Injection {
    /// Whether the injection is a real regression a policy should alarm on.
    pub fn is_regression(self) -> bool {
        matches!(self, Injection::Step(_) | Injection::Ramp { .. })
    }

    /// The multiplicative level of run `i` for onset `onset`.
    fn level(self, i: usize, onset: usize) -> f64 {
        match self {
            Injection::Step(s) if i >= onset => 1.0 + s,
            Injection::Ramp { per_run, cap } if i >= onset => {
                1.0 + (per_run * (i - onset + 1) as f64).min(cap)
            }
            Injection::Spike(s) if i == onset => 1.0 + s,
            _ => 1.0,
        }
    }
}

/// One generated endpoint history: the rounds' p99 per run, in ms.
#[derive(Debug, Clone)]
pub struct History {
    pub rounds: Vec<Vec<f64>>,
    /// The injected run (`None` for a quiet history).
    pub onset: Option<usize>,
}

/// Generates one history of `runs` runs of `rounds` rounds around 100 ms.
pub fn history(
    rng: &mut Rng,
    noise: &NoiseModel,
    injection: Injection,
    runs: usize,
    rounds: usize,
    onset: usize,
) -> History {
    let base = 100.0;
    let mut out = Vec::with_capacity(runs);
    for i in 0..runs {
        let mut run_level = base * injection.level(i, onset) * rng.log_normal(noise.between_run);
        let neighbour = rng.uniform() < noise.neighbour_run_prob
            || (injection == Injection::NeighbourRun && i == onset);
        if neighbour {
            run_level *= noise.neighbour_factor;
        }
        let mut run: Vec<f64> = (0..rounds)
            .map(|_| {
                let mut v = run_level * rng.log_normal(noise.within_run);
                if rng.uniform() < noise.gc_round_prob {
                    v *= noise.gc_factor;
                }
                v
            })
            .collect();
        if injection == Injection::GcRun && i == onset && rounds >= 2 {
            // Two distinct rounds, anywhere in the run.
            let first = rng.range(0, rounds - 1);
            let second = (first + rng.range(1, rounds - 1)) % rounds;
            run[first] *= noise.gc_factor;
            run[second] *= noise.gc_factor;
        }
        out.push(run);
    }
    History {
        rounds: out,
        onset: (injection != Injection::None).then_some(onset),
    }
}

/// A kind of endpoint in a generated fleet: its noise (the neighbour
/// fields of [`NoiseModel`] are unused: noisy neighbours hit the whole fleet
/// at once, [`FleetModel`]) and the one step it may take.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct EndpointClass {
    pub name: &'static str,
    pub noise: NoiseModel,
    /// How many endpoints of the fleet are of this class.
    pub count: usize,
    /// The step each of them takes at a random run, if any.
    pub step: StepSize,
}

/// The size of an endpoint's one step.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub enum StepSize {
    /// No step: the endpoint never regresses.
    None,
    /// Slower by this factor (1.10 = +10%).
    Fixed(f64),
    /// A factor drawn uniformly from `lo..hi`.
    Between(f64, f64),
}

/// A fleet: endpoints of several classes measured in the same runs, with
/// noisy-neighbour runs that slow every endpoint of a run together (what
/// perfdash marks environment suspect).
#[derive(Debug, Clone, Serialize)]
pub struct FleetModel {
    pub name: &'static str,
    pub classes: Vec<EndpointClass>,
    /// Chance that a run shares its host with a noisy neighbour …
    pub neighbour_run_prob: f64,
    /// … multiplying every round of every endpoint of it by this.
    pub neighbour_factor: f64,
    /// Runs per history (3 a week: 78 runs = 26 weeks).
    pub runs: usize,
    /// Steps start uniformly in `first_onset..=last_onset`.
    pub first_onset: usize,
    pub last_onset: usize,
}

/// One generated fleet history: an endpoint history per endpoint (class
/// order), and which runs a noisy neighbour slowed.
#[derive(Debug, Clone)]
pub struct Fleet {
    pub endpoints: Vec<FleetEndpoint>,
    pub neighbour_runs: Vec<bool>,
}

/// One endpoint of a fleet.
#[derive(Debug, Clone)]
pub struct FleetEndpoint {
    /// Index into [`FleetModel::classes`].
    pub class: usize,
    pub history: History,
    /// Its step: the first slower run and the factor.
    pub step: Option<(usize, f64)>,
}

/// Generates one fleet history. Every endpoint has its own stream (`rng`
/// is only used to derive them and to place the neighbour runs), so adding
/// an endpoint class leaves the others' histories as they were.
pub fn fleet(seed: u64, path: &[u64], model: &FleetModel, rounds: usize) -> Fleet {
    let mut rng = Rng::derive(seed, path);
    let neighbour_runs: Vec<bool> = (0..model.runs)
        .map(|_| rng.uniform() < model.neighbour_run_prob)
        .collect();
    let mut endpoints = Vec::new();
    for (ci, class) in model.classes.iter().enumerate() {
        for k in 0..class.count {
            let mut own: Vec<u64> = path.to_vec();
            own.extend([ci as u64, k as u64]);
            let mut rng = Rng::derive(seed, &own);
            let onset = rng.range(model.first_onset, model.last_onset);
            let factor = match class.step {
                StepSize::None => None,
                StepSize::Fixed(f) => Some(f),
                StepSize::Between(lo, hi) => Some(lo + (hi - lo) * rng.uniform()),
            };
            let level = |i: usize| match factor {
                Some(f) if i >= onset => f,
                _ => 1.0,
            };
            let mut history = leveled_history(
                &mut rng,
                &class.noise,
                level,
                &neighbour_runs,
                model.neighbour_factor,
                rounds,
            );
            history.onset = factor.map(|_| onset);
            endpoints.push(FleetEndpoint {
                class: ci,
                history,
                step: factor.map(|f| (onset, f)),
            });
        }
    }
    Fleet {
        endpoints,
        neighbour_runs,
    }
}

/// A history around 100 ms × `level(run)`, with the noise of `noise`
/// (between-run, within-run, GC-tail rounds) and the given neighbour runs
/// slowed by `neighbour_factor`.
pub fn leveled_history(
    rng: &mut Rng,
    noise: &NoiseModel,
    level: impl Fn(usize) -> f64,
    neighbour_runs: &[bool],
    neighbour_factor: f64,
    rounds: usize,
) -> History {
    let base = 100.0;
    let rounds = neighbour_runs
        .iter()
        .enumerate()
        .map(|(i, &neighbour)| {
            let mut run_level = base * level(i) * (noise.between_run * rng.normal()).exp();
            if neighbour {
                run_level *= neighbour_factor;
            }
            (0..rounds)
                .map(|_| {
                    let mut v = run_level * (noise.within_run * rng.normal()).exp();
                    if rng.uniform() < noise.gc_round_prob {
                        v *= noise.gc_factor;
                    }
                    v
                })
                .collect()
        })
        .collect();
    History {
        rounds,
        onset: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_generation_is_deterministic() {
        let a = history(
            &mut Rng::derive(7, &[1, 2]),
            &NOISE_MODELS[0],
            Injection::Step(0.2),
            30,
            5,
            15,
        );
        let b = history(
            &mut Rng::derive(7, &[1, 2]),
            &NOISE_MODELS[0],
            Injection::Step(0.2),
            30,
            5,
            15,
        );
        assert_eq!(a.rounds, b.rounds);
        let c = history(
            &mut Rng::derive(7, &[1, 3]),
            &NOISE_MODELS[0],
            Injection::Step(0.2),
            30,
            5,
            15,
        );
        assert_ne!(a.rounds, c.rounds);
    }

    #[test]
    fn the_noise_is_the_shared_stream_with_no_libm() {
        // The demo's stream and this one draw the same normals (the
        // spread and the bits are tested in `crate::hash`).
        let mut ours = Rng::new(11);
        let mut shared = SplitMix64::new(11);
        for _ in 0..100 {
            assert_eq!(ours.normal().to_bits(), shared.normal().to_bits());
        }
        let mut ours = Rng::new(12);
        let mut shared = SplitMix64::new(12);
        for _ in 0..100 {
            let z = shared.normal();
            assert_eq!(
                ours.log_normal(0.05).to_bits(),
                crate::hash::exp_basic(0.05 * z).to_bits()
            );
        }
    }

    #[test]
    fn step_shifts_the_level_from_the_onset() {
        let quiet = NoiseModel {
            name: "none",
            between_run: 0.0,
            within_run: 0.0,
            gc_round_prob: 0.0,
            gc_factor: 1.8,
            neighbour_run_prob: 0.0,
            neighbour_factor: 1.25,
        };
        let h = history(&mut Rng::new(1), &quiet, Injection::Step(0.2), 10, 5, 4);
        assert_eq!(h.rounds[3], vec![100.0; 5]);
        assert!(h.rounds[4].iter().all(|v| (v - 120.0).abs() < 1e-9));
        let h = history(&mut Rng::new(1), &quiet, Injection::GcRun, 10, 5, 4);
        assert_eq!(h.rounds[4].iter().filter(|v| **v > 150.0).count(), 2);
        let h = history(
            &mut Rng::new(1),
            &quiet,
            Injection::Ramp {
                per_run: 0.01,
                cap: 0.15,
            },
            30,
            5,
            4,
        );
        assert!((h.rounds[5][0] - 102.0).abs() < 1e-9 && (h.rounds[29][0] - 115.0).abs() < 1e-9);
    }
}
