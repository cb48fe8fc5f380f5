//! The `changepoint` policy's judgements kept from one build to the next.
//!
//! [`online_regressions`] judges run `t` from the medians up to `t` alone:
//! a series that only grew since the last build keeps every judgement it
//! had, and only the new runs need judging. Judging them still feeds the
//! detector every earlier median, but that costs the complete windows
//! once (O(history / window) window searches) instead of one search per
//! run (O(history × window)): at 120 endpoints × 156 weeks the policy was
//! 6.6 % of a build's instructions after one new run.
//!
//! A series is found by the digest of what decides its judgements (the
//! salt naming the perfdash that judged, the parameters, the medians'
//! bits), for its whole length or for a prefix up to [`MAX_NEW_RUNS`]
//! shorter. Anything else (a run inserted in the middle, a median that
//! moved, other parameters, another perfdash) finds nothing, and the
//! series is judged from scratch, as with `--no-cache`.
//!
//! The cache's index (`crate::cache`) keeps the series of one build, with
//! the salt; judgements of another perfdash are not used.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::{ChangePointParams, OnlineJudgement, online_regressions};
use crate::cache::stored::{Judgement as KeptJudgement, Judgements as Kept};

/// A series found with at most this many runs fewer than now is extended;
/// older ones are judged again (a build after months away).
pub const MAX_NEW_RUNS: usize = 64;

type Judgements = Box<[OnlineJudgement]>;

/// Judgements of the previous build, and this build's (to keep for the
/// next one). Shared by the endpoints judged on every core.
#[derive(Debug)]
pub struct KnownJudgements {
    salt: u128,
    previous: HashMap<u128, Judgements>,
    made: Mutex<BTreeMap<u128, Judgements>>,
    /// Series found whole or as a prefix.
    reused: AtomicUsize,
    judged: AtomicUsize,
}

impl KnownJudgements {
    /// None known yet: every series is judged, and kept.
    pub fn new(salt: u128) -> KnownJudgements {
        KnownJudgements {
            salt,
            previous: HashMap::new(),
            made: Mutex::new(BTreeMap::new()),
            reused: AtomicUsize::new(0),
            judged: AtomicUsize::new(0),
        }
    }

    /// The judgements a previous build kept; those of another perfdash
    /// (`salt` differs) are not used.
    pub fn from_kept(salt: u128, kept: Option<&Kept>) -> KnownJudgements {
        let mut known = KnownJudgements::new(salt);
        if let Some(kept) = kept.filter(|k| k.salt == salt) {
            known.previous = kept
                .series
                .iter()
                .map(|(key, judgements)| (*key, judgements.iter().map(|&j| j.into()).collect()))
                .collect();
        }
        known
    }

    /// This build's series, to keep for the next build.
    pub fn to_kept(&self) -> Kept {
        Kept {
            salt: self.salt,
            series: lock(&self.made)
                .iter()
                .map(|(key, judgements)| (*key, judgements.iter().map(|&j| j.into()).collect()))
                .collect(),
        }
    }

    /// Series whose judgements were found (whole, or all but their newest
    /// runs), and series judged from scratch, so far.
    pub fn counts(&self) -> (usize, usize) {
        (
            self.reused.load(Ordering::Relaxed),
            self.judged.load(Ordering::Relaxed),
        )
    }

    /// [`online_regressions`]`(medians, params, 0, min_runs_at_level)`,
    /// judging only the runs the previous build had not judged.
    pub fn online_regressions(
        &self,
        medians: &[f64],
        params: &ChangePointParams,
        min_runs_at_level: usize,
    ) -> Vec<OnlineJudgement> {
        // Keys of the prefixes that may be known (none empty), and of the
        // whole series, last: one pass over the medians.
        let shortest = medians.len().saturating_sub(MAX_NEW_RUNS).max(1);
        let first = shortest.min(medians.len());
        let keys = self.prefix_keys(medians, params, min_runs_at_level, first);
        let found = keys
            .iter()
            .enumerate()
            .map(|(i, key)| (first + i, key))
            .rev()
            .filter(|&(len, _)| len >= shortest)
            .find_map(|(len, key)| self.previous.get(key).filter(|j| j.len() == len));
        let judgements: Vec<OnlineJudgement> = match found {
            Some(known) if known.len() == medians.len() => known.to_vec(),
            Some(known) => {
                let mut all = online_regressions(medians, params, known.len(), min_runs_at_level);
                all[..known.len()].copy_from_slice(known);
                all
            }
            None => online_regressions(medians, params, 0, min_runs_at_level),
        };
        let counter = if found.is_some() {
            &self.reused
        } else {
            &self.judged
        };
        counter.fetch_add(1, Ordering::Relaxed);
        let whole = *keys
            .last()
            .expect("a key for each length from first to all");
        lock(&self.made).insert(whole, judgements.clone().into());
        judgements
    }

    /// The key of each of `medians[..len]`, `len` from `shortest` (at
    /// most all of them) to all of them: what decides their judgements (the perfdash, the
    /// parameters and every median's bits), hashed in one pass. Each is
    /// the xxh3-128 of those bytes, as the file keeps them.
    fn prefix_keys(
        &self,
        medians: &[f64],
        params: &ChangePointParams,
        min_runs_at_level: usize,
        shortest: usize,
    ) -> Vec<u128> {
        let ChangePointParams {
            window_len,
            max_pvalue,
            min_magnitude,
        } = *params;
        let mut hasher = xxhash_rust::xxh3::Xxh3::new();
        hasher.update(&self.salt.to_le_bytes());
        for n in [
            window_len as u64,
            max_pvalue.to_bits(),
            min_magnitude.to_bits(),
            min_runs_at_level as u64,
        ] {
            hasher.update(&n.to_le_bytes());
        }
        let mut keys = Vec::with_capacity(medians.len() + 1 - shortest);
        if shortest == 0 {
            keys.push(hasher.digest128());
        }
        for (len, m) in (1..).zip(medians) {
            hasher.update(&m.to_bits().to_le_bytes());
            if len >= shortest {
                keys.push(hasher.digest128());
            }
        }
        keys
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl From<OnlineJudgement> for KeptJudgement {
    fn from(j: OnlineJudgement) -> KeptJudgement {
        match j {
            OnlineJudgement::NotJudged => KeptJudgement::NotJudged,
            OnlineJudgement::Within => KeptJudgement::Within,
            OnlineJudgement::Over { change, level_from } => KeptJudgement::Over {
                change: change as u32,
                level_from: level_from as u32,
            },
        }
    }
}

impl From<KeptJudgement> for OnlineJudgement {
    fn from(j: KeptJudgement) -> OnlineJudgement {
        match j {
            KeptJudgement::NotJudged => OnlineJudgement::NotJudged,
            KeptJudgement::Within => OnlineJudgement::Within,
            KeptJudgement::Over { change, level_from } => OnlineJudgement::Over {
                change: change as usize,
                level_from: level_from as usize,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn params() -> ChangePointParams {
        ChangePointParams {
            window_len: 8,
            max_pvalue: 0.01,
            min_magnitude: 0.05,
        }
    }

    /// A level at 100 ms, then a step to 150 ms, with a little wobble.
    fn step(len: usize) -> Vec<f64> {
        (0..len)
            .map(|i| if i < len / 2 { 100.0 } else { 150.0 } + (i % 3) as f64)
            .collect()
    }

    fn saved_and_read(known: &KnownJudgements, salt: u128) -> KnownJudgements {
        KnownJudgements::from_kept(salt, Some(&known.to_kept()))
    }

    /// The keys are hashed in one pass; each must be the xxh3-128 of its
    /// prefix's bytes, as files already kept were written.
    #[test]
    fn prefix_keys_are_the_digests_of_each_prefix() {
        let known = KnownJudgements::new(7);
        let series = step(10);
        let one_shot = |len: usize| {
            let mut bytes = 7u128.to_le_bytes().to_vec();
            for n in [8, 0.01f64.to_bits(), 0.05f64.to_bits(), 2] {
                bytes.extend_from_slice(&n.to_le_bytes());
            }
            for m in &series[..len] {
                bytes.extend_from_slice(&m.to_bits().to_le_bytes());
            }
            xxhash_rust::xxh3::xxh3_128(&bytes)
        };
        let from = |first: usize| known.prefix_keys(&series, &params(), 2, first);
        assert_eq!(from(0), (0..=10).map(one_shot).collect::<Vec<_>>());
        assert_eq!(from(4), (4..=10).map(one_shot).collect::<Vec<_>>());
        assert_eq!(from(10), vec![one_shot(10)]);
    }

    #[test]
    fn a_grown_series_is_extended_and_judged_as_from_scratch() {
        let series = step(40);
        let first = KnownJudgements::new(7);
        first.online_regressions(&series[..37], &params(), 2);
        assert_eq!(first.counts(), (0, 1));
        let second = saved_and_read(&first, 7);
        let judged = second.online_regressions(&series, &params(), 2);
        assert_eq!(second.counts(), (1, 0), "found as a prefix");
        assert_eq!(judged, online_regressions(&series, &params(), 0, 2));
        assert!(
            judged.iter().any(|j| j.is_over()),
            "the step is over the line: {judged:?}"
        );
        // The same series again: found whole, the file need not change.
        let third = saved_and_read(&second, 7);
        assert_eq!(third.online_regressions(&series, &params(), 2), judged);
        assert_eq!(third.counts(), (1, 0));
        assert_eq!(third.to_kept(), second.to_kept());
    }

    #[test]
    fn anything_that_decides_a_judgement_misses() {
        let series = step(30);
        let first = KnownJudgements::new(7);
        first.online_regressions(&series, &params(), 2);
        let kept = first.to_kept();
        let mut moved = series.clone();
        moved[3] += 1e-9;
        let other_params = ChangePointParams {
            min_magnitude: 0.06,
            ..params()
        };
        let tries: [(u128, &[f64], ChangePointParams, usize); 4] = [
            (8, &series, params(), 2),
            (7, &moved, params(), 2),
            (7, &series, other_params, 2),
            (7, &series, params(), 3),
        ];
        for (salt, medians, p, min_runs) in tries {
            let known = KnownJudgements::from_kept(salt, Some(&kept));
            known.online_regressions(medians, &p, min_runs);
            assert_eq!(known.counts(), (0, 1), "{salt} {p:?} {min_runs}");
        }
        // More new runs than MAX_NEW_RUNS: judged from scratch.
        let long = step(30 + MAX_NEW_RUNS + 1);
        let first = KnownJudgements::new(7);
        first.online_regressions(&long[..30], &params(), 2);
        let second = saved_and_read(&first, 7);
        second.online_regressions(&long, &params(), 2);
        assert_eq!(second.counts(), (0, 1));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Whatever prefix the previous build judged, the judgements are
        /// the ones from scratch.
        #[test]
        fn judgements_from_a_prefix_equal_those_from_scratch(
            series in proptest::collection::vec(50.0f64..200.0, 2..60),
            cut in 0.0f64..1.0,
            min_runs in 1usize..4,
        ) {
            let cut = ((series.len() as f64 * cut) as usize).max(1);
            let first = KnownJudgements::new(1);
            first.online_regressions(&series[..cut], &params(), min_runs);
            let second = saved_and_read(&first, 1);
            prop_assert_eq!(
                second.online_regressions(&series, &params(), min_runs),
                online_regressions(&series, &params(), 0, min_runs)
            );
            prop_assert_eq!(second.counts(), (1, 0));
        }
    }
}
