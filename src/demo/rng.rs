//! A small deterministic random source for the demo generator: the one
//! seeded stream of `crate::hash` ([`SplitMix64`], its normal draws
//! included, which `perfdash eval` shares), with the demo's ways of
//! deriving streams and drawing from them.
//!
//! Only integer arithmetic and IEEE basic operations (+ − × ÷) are used,
//! never `ln`/`exp`/`cos`: those come from the platform's libm and may
//! differ in the last bit between machines, which would break the promise
//! that one seed gives byte-identical archives everywhere.

use crate::hash::{SplitMix64, fnv1a};

/// SplitMix64 (Steele, Lea, Flood 2014): tiny, fast, and good enough for
/// synthetic data; every stream is derived from the seed and a label so
/// that adding a draw in one place does not shift every later number.
#[derive(Debug, Clone)]
pub(crate) struct Rng {
    stream: SplitMix64,
}

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng {
            stream: SplitMix64::new(seed),
        }
    }

    /// An independent stream for one purpose, e.g. `("round", run, endpoint)`.
    pub(crate) fn derive(seed: u64, label: &str, a: u64, b: u64) -> Rng {
        // FNV-1a over the label, mixed with the indices through SplitMix.
        let mut r = Rng::new(seed ^ fnv1a(label.as_bytes()));
        let x = r.next_u64() ^ a.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let mut r = Rng::new(x);
        let y = r.next_u64() ^ b.wrapping_mul(0xd1b5_4a32_d192_ed03);
        Rng::new(y)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.stream.next_u64()
    }

    /// Uniform in [0, 1), 53 random bits.
    pub(crate) fn uniform(&mut self) -> f64 {
        self.stream.uniform()
    }

    /// Uniform in [lo, hi).
    pub(crate) fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.uniform()
    }

    /// `true` with probability `p`.
    pub(crate) fn chance(&mut self, p: f64) -> bool {
        self.uniform() < p
    }

    /// An integer in `0..n` (n > 0).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// Approximately standard normal ([`SplitMix64::normal`]), clamped to
    /// ±`limit`.
    pub(crate) fn normal(&mut self, limit: f64) -> f64 {
        self.stream.normal().clamp(-limit, limit)
    }

    /// A multiplicative noise factor `1 + sigma·Z`, Z clamped to ±3.
    pub(crate) fn factor(&mut self, sigma: f64) -> f64 {
        1.0 + sigma * self.normal(3.0)
    }

    /// 40 hex digits, like a git commit id.
    pub(crate) fn hex40(&mut self) -> String {
        let mut s = String::with_capacity(40);
        while s.len() < 40 {
            s.push_str(&format!("{:016x}", self.next_u64()));
        }
        s.truncate(40);
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream_and_streams_differ() {
        let a: Vec<u64> = {
            let mut r = Rng::derive(7, "x", 1, 2);
            (0..4).map(|_| r.next_u64()).collect()
        };
        let b: Vec<u64> = {
            let mut r = Rng::derive(7, "x", 1, 2);
            (0..4).map(|_| r.next_u64()).collect()
        };
        let c: Vec<u64> = {
            let mut r = Rng::derive(7, "x", 2, 1);
            (0..4).map(|_| r.next_u64()).collect()
        };
        assert_eq!(a, b);
        assert_ne!(a, c);
    }
}
