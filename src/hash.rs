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

    /// Approximately standard normal: the Irwin–Hall sum of 12 uniforms
    /// minus 6 (mean 0, variance 1, bounded to ±6). The one normal stream
    /// of perfdash (the demo's archive and `perfdash eval`'s histories):
    /// only IEEE basic operations, never the platform's `ln`/`cos`, which
    /// may differ in the last bit between machines and would break the
    /// promise that one seed gives the same bytes everywhere.
    pub fn normal(&mut self) -> f64 {
        let sum: f64 = (0..12).map(|_| self.uniform()).sum();
        sum - 6.0
    }

    /// A log-normal factor `e^(sigma·Z)`, Z from [`SplitMix64::normal`],
    /// the exponential too from basic operations ([`exp_basic`]).
    pub fn log_normal(&mut self, sigma: f64) -> f64 {
        exp_basic(sigma * self.normal())
    }
}

/// `e^x` from IEEE basic operations only (+ − × ÷ and rounding, each
/// exact or correctly rounded on every machine), unlike `f64::exp`, which
/// is the platform's libm. The textbook way (fdlibm's): `x = k·ln 2 + r`
/// with |r| ≤ ln 2 / 2 (ln 2 in two parts, so that `k·ln 2` is exact), the
/// Taylor series of `e^r` to 16 terms in Horner form (the next term is
/// under 1e-19), times `2^k`, which is exact. Within a few ulps of
/// `f64::exp`.
pub fn exp_basic(x: f64) -> f64 {
    // fdlibm's split of ln 2: the high part has 11 trailing zero bits.
    const LN2_HI: f64 = 6.931_471_803_691_238e-1;
    const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;
    if x.is_nan() {
        return x;
    }
    if x > 709.8 {
        return f64::INFINITY;
    }
    if x < -745.2 {
        return 0.0;
    }
    let k = (x * std::f64::consts::LOG2_E).round();
    let r = (x - k * LN2_HI) - k * LN2_LO;
    let mut p = 1.0;
    for n in (1..=16).rev() {
        p = 1.0 + p * r / f64::from(n);
    }
    // 2^k as one or two exact powers of two (a subnormal result needs two).
    let pow2 = |e: i64| f64::from_bits(((e + 1023) as u64) << 52);
    let k = k as i64;
    if k < -1022 {
        p * pow2(k + 1000) * pow2(-1000)
    } else if k > 1023 {
        p * pow2(k - 1) * 2.0
    } else {
        p * pow2(k)
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

    #[test]
    fn the_normal_stream_has_unit_spread_and_fixed_bits() {
        let mut r = SplitMix64::new(42);
        let n = 20_000;
        let xs: Vec<f64> = (0..n).map(|_| r.normal()).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n as f64;
        assert!(mean.abs() < 0.03, "mean {mean}");
        assert!((var - 1.0).abs() < 0.05, "variance {var}");
        assert!(xs.iter().all(|x| x.abs() <= 6.0));
        // The stream's first draws, bit for bit: the demo archive and the
        // published evaluation are made from it (a change here changes
        // both; regenerate them).
        let mut r = SplitMix64::new(20_261_129);
        let first: Vec<u64> = (0..3).map(|_| r.normal().to_bits()).collect();
        assert_eq!(first, FIRST_NORMALS, "{first:#x?}");
    }

    const FIRST_NORMALS: [u64; 3] = [0xbfe5877dc1ee38d0, 0xbfdf985db7e92790, 0xbfe0730a611c6ef8];

    #[test]
    fn exp_basic_agrees_with_libm_to_a_few_ulps() {
        let mut r = SplitMix64::new(3);
        for i in 0..40_000 {
            let span = if i % 2 == 0 { 3.0 } else { 700.0 };
            let x = (r.uniform() * 2.0 - 1.0) * span;
            let (ours, libm) = (exp_basic(x), x.exp());
            assert!(
                ((ours - libm) / libm).abs() <= 4.0 * f64::EPSILON,
                "e^{x}: {ours} against {libm}"
            );
        }
        for x in [0.0, -0.0, 1e-300, -1e-300] {
            assert_eq!(exp_basic(x), 1.0, "{x}");
        }
        assert!((exp_basic(1.0) - std::f64::consts::E).abs() <= 2.0 * f64::EPSILON);
        assert!(exp_basic(f64::NAN).is_nan());
        assert_eq!(exp_basic(f64::NEG_INFINITY), 0.0);
        assert_eq!(exp_basic(f64::INFINITY), f64::INFINITY);
        assert_eq!(exp_basic(-800.0), 0.0);
        assert_eq!(exp_basic(710.0), f64::INFINITY);
        // A subnormal result, and the largest finite one.
        let tiny = exp_basic(-740.0);
        assert!(tiny > 0.0 && (tiny / (-740f64).exp() - 1.0).abs() < 1e-9);
        assert!((exp_basic(709.7) / 709.7f64.exp() - 1.0).abs() <= 4.0 * f64::EPSILON);
    }
}
