//! Compact storage of per-request samples: 12 bytes a sample instead of
//! the 16 of a `(time, latency)` pair, with no growth slack beyond one
//! block and no copy when sets are merged.
//!
//! Samples are kept in blocks of up to [`BLOCK`] samples, as two columns:
//! the time as a signed 32-bit µs offset from the block's first sample
//! (±35 minutes: a block of consecutive requests spans seconds) and the
//! latency as an `f64` (exact: the figures are compared with the tools'
//! own to 1e-9). A sample whose time does not fit its block's offset goes
//! to a plain list beside the blocks (files are nearly in time order, so
//! that list stays short; a hostile file costs 16 bytes a sample there,
//! never more). Only the first block grows by doubling; later blocks are
//! allocated whole, so a large set has at most one block of slack, and
//! merging sets moves blocks instead of copying samples (which doubled the
//! peak memory of every big file).
//!
//! Statistics need the latencies in one slice: [`Samples::drain`]
//! moves them out block by block, freeing each block as it goes, so a
//! round's peak is 12 bytes a sample held plus 8 for the slice.

use super::Sample;

/// Samples per block (12 bytes each: 192 KiB).
pub const BLOCK: usize = 16 * 1024;

#[derive(Debug, Clone, Default, PartialEq)]
struct Block {
    base_us: i64,
    offsets: Vec<i32>,
    ms: Vec<f64>,
}

/// The samples of one group, successful or failed (see the module).
#[derive(Clone, Default)]
pub struct Samples {
    blocks: Vec<Block>,
    /// Samples whose time is too far from their block's first one.
    spill: Vec<Sample>,
    len: usize,
}

impl std::fmt::Debug for Samples {
    /// The samples in time order, however they are stored (as
    /// [`PartialEq`] compares them).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut v: Vec<Sample> = self.iter().collect();
        v.sort_unstable_by(|a, b| a.t_us.cmp(&b.t_us).then(a.ms.total_cmp(&b.ms)));
        f.debug_list().entries(v).finish()
    }
}

impl PartialEq for Samples {
    /// The same samples, however they are stored (a sample may sit in a
    /// block or beside them depending on where a file was cut into slices,
    /// and nothing reads samples by their order).
    fn eq(&self, other: &Samples) -> bool {
        let sorted = |s: &Samples| {
            let mut v: Vec<(i64, u64)> = s.iter().map(|x| (x.t_us, x.ms.to_bits())).collect();
            v.sort_unstable();
            v
        };
        self.len == other.len && sorted(self) == sorted(other)
    }
}

impl Samples {
    pub fn push(&mut self, sample: Sample) {
        self.len += 1;
        if let Some(block) = self.blocks.last_mut()
            && block.ms.len() < BLOCK
        {
            match i32::try_from(sample.t_us.wrapping_sub(block.base_us)) {
                Ok(offset) if sample.t_us.checked_sub(block.base_us).is_some() => {
                    block.offsets.push(offset);
                    block.ms.push(sample.ms);
                }
                _ => self.spill.push(sample),
            }
            return;
        }
        // A new block: allocated whole once the set has filled one.
        let capacity = if self.blocks.is_empty() { 0 } else { BLOCK };
        let mut block = Block {
            base_us: sample.t_us,
            offsets: Vec::with_capacity(capacity),
            ms: Vec::with_capacity(capacity),
        };
        block.offsets.push(0);
        block.ms.push(sample.ms);
        self.blocks.push(block);
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Moves every sample of `other` here (blocks are moved, not copied).
    pub fn append(&mut self, other: &mut Samples) {
        self.blocks.append(&mut other.blocks);
        self.spill.append(&mut other.spill);
        self.len += other.len;
        other.len = 0;
    }

    /// Every sample, blocks first (in the order pushed within each).
    pub fn iter(&self) -> impl Iterator<Item = Sample> + '_ {
        self.blocks
            .iter()
            .flat_map(|b| {
                b.offsets.iter().zip(&b.ms).map(move |(&o, &ms)| Sample {
                    t_us: b.base_us + i64::from(o),
                    ms,
                })
            })
            .chain(self.spill.iter().copied())
    }

    /// Calls `f` on every sample, freeing each block once it is done.
    pub fn drain(self, mut f: impl FnMut(Sample)) {
        for b in self.blocks {
            for (&o, &ms) in b.offsets.iter().zip(&b.ms) {
                f(Sample {
                    t_us: b.base_us + i64::from(o),
                    ms,
                });
            }
        }
        for s in self.spill {
            f(s);
        }
    }

    /// The earliest time, if any.
    pub fn first_time(&self) -> Option<i64> {
        self.iter().map(|s| s.t_us).min()
    }
}

impl<'a> IntoIterator for &'a Samples {
    type Item = Sample;
    type IntoIter = Box<dyn Iterator<Item = Sample> + 'a>;
    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

impl IntoIterator for Samples {
    type Item = Sample;
    type IntoIter = std::vec::IntoIter<Sample>;
    /// Owned samples (for the few callers that sort them into other
    /// structures; statistics use [`Samples::drain`]).
    fn into_iter(self) -> Self::IntoIter {
        let mut out = Vec::with_capacity(self.len);
        self.drain(|s| out.push(s));
        out.into_iter()
    }
}

impl FromIterator<Sample> for Samples {
    fn from_iter<I: IntoIterator<Item = Sample>>(iter: I) -> Samples {
        let mut s = Samples::default();
        for x in iter {
            s.push(x);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Whatever the times (in order, shuffled, far apart, at the ends
        /// of i64), the samples come back as pushed, and merging keeps them.
        #[test]
        fn samples_come_back_as_pushed(
            times in prop::collection::vec(prop_oneof![any::<i64>(), 0i64..10_000_000, -5_000i64..5_000], 0..3000),
            split in 0usize..3000,
        ) {
            let pushed: Vec<Sample> = times.iter().enumerate().map(|(i, &t)| Sample { t_us: t, ms: i as f64 / 7.0 }).collect();
            let all: Samples = pushed.iter().copied().collect();
            prop_assert_eq!(all.len(), pushed.len());
            prop_assert_eq!(all.iter().collect::<Vec<_>>().len(), pushed.len());
            let mut sorted_back: Vec<(i64, u64)> = all.iter().map(|s| (s.t_us, s.ms.to_bits())).collect();
            let mut sorted_in: Vec<(i64, u64)> = pushed.iter().map(|s| (s.t_us, s.ms.to_bits())).collect();
            sorted_back.sort();
            sorted_in.sort();
            prop_assert_eq!(&sorted_back, &sorted_in);
            let at = split.min(pushed.len());
            let mut a: Samples = pushed[..at].iter().copied().collect();
            let mut b: Samples = pushed[at..].iter().copied().collect();
            a.append(&mut b);
            prop_assert_eq!(a.len(), pushed.len());
            prop_assert!(b.is_empty());
            let mut merged: Vec<(i64, u64)> = a.into_iter().map(|s| (s.t_us, s.ms.to_bits())).collect();
            merged.sort();
            prop_assert_eq!(merged, sorted_in);
        }
    }

    #[test]
    fn in_order_samples_stay_in_blocks() {
        let s: Samples = (0..3 * BLOCK as i64 + 5)
            .map(|i| Sample {
                t_us: 1_700_000_000_000_000 + i * 1000,
                ms: 1.0,
            })
            .collect();
        assert!(s.spill.is_empty());
        assert_eq!(s.blocks.len(), 4);
        assert_eq!(
            s.blocks[1].ms.capacity(),
            BLOCK,
            "later blocks are allocated whole"
        );
    }
}
