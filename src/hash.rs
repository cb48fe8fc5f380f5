//! The stable hashes and the seeded random stream, in one place.
//!
//! Page URLs, cache keys and the demo's random streams must come out the
//! same on every machine and with every Rust release, so none of them may
//! use std's `DefaultHasher` (its algorithm is unspecified and has changed).
//! FNV-1a (Fowler, Noll, Vo; <http://www.isthe.com/chongo/tech/comp/fnv/>)
//! and SplitMix64 (Steele, Lea, Flood 2014) are tiny, fixed and documented.
//! Until issue 16 the slugs, the round-file cache and the demo generator
//! each carried their own FNV-1a, and the demo and `perfdash eval` each
//! their own SplitMix64.

use std::hash::Hasher;

const FNV_OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// FNV-1a, 64 bit, of `bytes`.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h = Fnv1a::default();
    h.write(bytes);
    h.finish()
}

/// FNV-1a, 64 bit, as a [`Hasher`] (for `#[derive(Hash)]` types). Writing
/// pieces one after the other hashes their concatenation.
#[derive(Debug, Clone, Copy)]
pub struct Fnv1a(u64);

impl Default for Fnv1a {
    fn default() -> Self {
        Fnv1a(FNV_OFFSET_BASIS)
    }
}

impl Hasher for Fnv1a {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(FNV_PRIME);
        }
    }
}

/// A hasher for in-memory hash maps keyed by strings (frame names,
/// stacks): each piece is hashed whole with xxh3-64, seeded by what came
/// before. Much cheaper than std's SipHash on the short keys of a profile,
/// and never persisted: nothing may depend on its values or on the
/// iteration order of a map that uses it.
#[derive(Debug, Clone, Copy, Default)]
pub struct FastHasher(u64);

impl Hasher for FastHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        self.0 = xxhash_rust::xxh3::xxh3_64_with_seed(bytes, self.0);
    }

    // `str` hashes as its bytes and a 0xff terminator: mixed in without a
    // second pass of xxh3.
    fn write_u8(&mut self, byte: u8) {
        self.0 = (self.0 ^ u64::from(byte)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.0 ^= self.0 >> 32;
    }

    fn write_usize(&mut self, value: usize) {
        self.write(&value.to_le_bytes());
    }
}

/// A `HashMap` with [`FastHasher`]: for lookups only, never for output order.
pub type FastMap<K, V> = std::collections::HashMap<K, V, std::hash::BuildHasherDefault<FastHasher>>;

/// SplitMix64: a 64-bit state advanced by the golden-ratio increment and
/// scrambled. Good enough for synthetic data, and reproducible bit for bit.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1): the top 53 bits.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Mixes `value` into the state (how both generators derive streams).
    pub fn mix(&mut self, value: u64) {
        self.0 ^= value;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_matches_the_published_test_vectors() {
        // From the FNV reference test suite (fnv_test.c, FNV-1a 64).
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
        let mut h = Fnv1a::default();
        h.write(b"foo");
        h.write(b"bar");
        assert_eq!(
            h.finish(),
            fnv1a(b"foobar"),
            "pieces hash as their concatenation"
        );
    }

    #[test]
    fn splitmix64_matches_the_reference_output() {
        // The reference implementation (Vigna, splitmix64.c) seeded with 0
        // and with 1234567.
        let mut r = SplitMix64::new(0);
        assert_eq!(r.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(r.next_u64(), 0x6e78_9e6a_a1b9_65f4);
        let mut r = SplitMix64::new(1_234_567);
        assert_eq!(r.next_u64(), 6_457_827_717_110_365_317);
        assert_eq!(r.next_u64(), 3_203_168_211_198_807_973);
        let u = SplitMix64::new(7).uniform();
        assert!((0.0..1.0).contains(&u));
    }
}
