//! Little-endian bytes read back: the one reader under perfdash's own
//! binary cache files (run records, folder listings, change-point
//! judgements). Each file's own values (a round, a listed folder) are read
//! on top of it where that file is decoded; this module only knows
//! integers, floats and lengths.
//!
//! Every read checks the bytes left first, so a file cut anywhere gives
//! `Err("cut short")`, never a panic and never a value made of whatever
//! followed.

/// The error of a read past the end.
pub(crate) const CUT_SHORT: &str = "cut short";

/// A cursor over bytes written little-endian.
pub(crate) struct LeReader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> LeReader<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        LeReader { bytes, at: 0 }
    }

    /// Bytes read so far.
    pub(crate) fn position(&self) -> usize {
        self.at
    }

    /// Bytes not read yet.
    pub(crate) fn remaining(&self) -> usize {
        self.bytes.len() - self.at
    }

    /// The next `n` bytes.
    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or(CUT_SHORT)?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], String> {
        Ok(self.take(N)?.try_into().expect("take returns N bytes"))
    }

    pub(crate) fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }

    pub(crate) fn u32(&mut self) -> Result<u32, String> {
        self.array().map(u32::from_le_bytes)
    }

    pub(crate) fn u64(&mut self) -> Result<u64, String> {
        self.array().map(u64::from_le_bytes)
    }

    pub(crate) fn u128(&mut self) -> Result<u128, String> {
        self.array().map(u128::from_le_bytes)
    }

    /// An `f64` by its bits (NaN payloads and -0.0 kept).
    pub(crate) fn f64(&mut self) -> Result<f64, String> {
        self.u64().map(f64::from_bits)
    }

    /// An unsigned LEB128 number: 7 bits a byte, low first, the high bit
    /// set on every byte but the last. More than ten bytes is an error.
    pub(crate) fn varint(&mut self) -> Result<u64, String> {
        let mut n = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.u8()?;
            n |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Ok(n);
            }
        }
        Err("a bad number".into())
    }

    /// `len` bytes as UTF-8 text.
    pub(crate) fn utf8(&mut self, len: usize) -> Result<String, String> {
        String::from_utf8(self.take(len)?.to_vec()).map_err(|e| e.to_string())
    }
}

/// `n` as unsigned LEB128, as [`LeReader::varint`] reads it.
pub(crate) fn push_varint(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn reads_what_was_written_in_order() {
        let mut bytes = vec![7u8];
        bytes.extend(0xdead_beef_u32.to_le_bytes());
        bytes.extend(u64::MAX.to_le_bytes());
        bytes.extend((1u128 << 100).to_le_bytes());
        bytes.extend((-0.0f64).to_bits().to_le_bytes());
        push_varint(&mut bytes, 300);
        bytes.extend(b"caf\xc3\xa9");
        let mut r = LeReader::new(&bytes);
        assert_eq!(r.u8(), Ok(7));
        assert_eq!(r.u32(), Ok(0xdead_beef));
        assert_eq!(r.u64(), Ok(u64::MAX));
        assert_eq!(r.u128(), Ok(1 << 100));
        assert_eq!(r.f64().map(f64::to_bits), Ok((-0.0f64).to_bits()));
        assert_eq!(r.varint(), Ok(300));
        assert_eq!(r.remaining(), 5);
        assert_eq!(r.utf8(5).as_deref(), Ok("café"));
        assert_eq!((r.position(), r.remaining()), (bytes.len(), 0));
        assert_eq!(r.u8(), Err(CUT_SHORT.to_string()));
    }

    #[test]
    fn a_read_past_the_end_fails_and_moves_nothing() {
        let bytes = [1, 2, 3];
        let mut r = LeReader::new(&bytes);
        assert_eq!(r.u32(), Err(CUT_SHORT.to_string()));
        assert_eq!(r.position(), 0);
        assert_eq!(r.take(usize::MAX), Err(CUT_SHORT.to_string()));
        assert_eq!(r.take(3), Ok(&bytes[..]));
    }

    #[test]
    fn bad_varints_and_text_are_errors() {
        // Eleven continuation bytes: longer than any u64.
        assert!(LeReader::new(&[0x80; 11]).varint().is_err());
        // A varint whose last byte is missing.
        assert_eq!(LeReader::new(&[0x80, 0x80]).varint(), Err(CUT_SHORT.into()));
        assert!(LeReader::new(b"\xff\xfe").utf8(2).is_err());
    }

    proptest! {
        #[test]
        fn varints_read_back_whole_and_cut_anywhere_are_cut_short(n in any::<u64>()) {
            let mut bytes = Vec::new();
            push_varint(&mut bytes, n);
            let mut r = LeReader::new(&bytes);
            prop_assert_eq!(r.varint(), Ok(n));
            prop_assert_eq!(r.remaining(), 0);
            for cut in 0..bytes.len() {
                prop_assert_eq!(LeReader::new(&bytes[..cut]).varint(), Err(CUT_SHORT.to_string()));
            }
        }
    }
}
