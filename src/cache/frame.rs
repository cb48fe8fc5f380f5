//! The one framing of every file the cache keeps: a header line naming
//! the kind of file, its format and the perfdash that wrote it, the body
//! in [postcard](https://docs.rs/postcard) (serde's compact binary format,
//! with a documented, stable wire format), and the xxh3-128 of all that
//! before it, last.
//!
//! Reading a file tells three things apart: a file of another format or
//! another perfdash (not used, and nothing to say about it: an upgrade
//! starts afresh), a damaged file (its checksum, or its body, does not
//! check out: ignored with a notice), and a good one.

use serde::Serialize;
use serde::de::DeserializeOwned;
use xxhash_rust::xxh3::xxh3_128;

/// Bump when any stored type ([`super::stored`]) changes its meaning or its
/// fields: files of another format are not read.
pub(super) const FORMAT: u32 = 6;

fn header(kind: &str) -> String {
    format!(
        "perfdash {} cache {FORMAT} {kind}\n",
        env!("CARGO_PKG_VERSION")
    )
}

/// `value` framed as a file of `kind`.
pub(super) fn encode(kind: &str, value: &impl Serialize) -> Result<Vec<u8>, String> {
    postcard::to_allocvec(value)
        .map(|body| seal(kind, body))
        .map_err(|e| e.to_string())
}

/// `body` (postcard already) framed as a file of `kind`.
pub(super) fn seal(kind: &str, body: Vec<u8>) -> Vec<u8> {
    let mut out = header(kind).into_bytes();
    out.reserve(body.len() + 16);
    out.extend_from_slice(&body);
    let sum = xxh3_128(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

/// What a file holds.
#[derive(Debug, PartialEq)]
pub(super) enum Read<'a> {
    /// Another format, another perfdash, or another kind of file.
    Foreign,
    /// Its body, checked.
    Body(&'a [u8]),
}

/// The body of a framed file of `kind`; `Err` says why it is damaged. A
/// file that does not start with this perfdash's header for `kind` is
/// foreign (another version, format or kind; or cut inside its first
/// line), never read.
pub(super) fn body<'a>(kind: &str, bytes: &'a [u8]) -> Result<Read<'a>, String> {
    let Some(rest) = bytes.strip_prefix(header(kind).as_bytes()) else {
        return Ok(Read::Foreign);
    };
    let Some((body, sum)) = rest.split_last_chunk::<16>() else {
        return Err("cut short".into());
    };
    if xxh3_128(&bytes[..bytes.len() - 16]) != u128::from_le_bytes(*sum) {
        return Err("checksum does not match (damaged or cut short)".into());
    }
    Ok(Read::Body(body))
}

/// The value of a framed file of `kind`: `Ok(None)` when it is foreign.
pub(super) fn decode<T: DeserializeOwned>(kind: &str, bytes: &[u8]) -> Result<Option<T>, String> {
    match body(kind, bytes)? {
        Read::Foreign => Ok(None),
        Read::Body(body) => postcard::from_bytes(body)
            .map(Some)
            .map_err(|e| format!("does not read back ({e})")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Any byte flipped after the header, or any cut, is damage, never
        /// another value.
        #[test]
        fn a_flipped_byte_or_a_cut_is_damage(
            value in proptest::collection::vec((any::<u64>(), "[a-z]{0,8}", any::<f64>()), 0..20),
            at in any::<prop::sample::Index>(),
            cut in any::<prop::sample::Index>(),
        ) {
            let file = encode("test", &value).unwrap();
            let back: Vec<(u64, String, f64)> = decode("test", &file).unwrap().unwrap();
            prop_assert_eq!(
                back.iter().map(|v| (v.0, &v.1, v.2.to_bits())).collect::<Vec<_>>(),
                value.iter().map(|v| (v.0, &v.1, v.2.to_bits())).collect::<Vec<_>>()
            );
            let head = header("test").len();
            let mut flipped = file.clone();
            let i = head + at.index(file.len() - head);
            flipped[i] ^= 0x01;
            prop_assert!(decode::<Vec<(u64, String, f64)>>("test", &flipped).is_err());
            let cut = head + cut.index(file.len() - head);
            prop_assert!(decode::<Vec<(u64, String, f64)>>("test", &file[..cut]).is_err());
        }
    }

    #[test]
    fn another_kind_or_perfdash_is_foreign_not_damaged() {
        let file = encode("index", &7u32).unwrap();
        assert_eq!(decode::<u32>("index", &file), Ok(Some(7)));
        assert_eq!(decode::<u32>("run", &file), Ok(None));
        let mut other = file.clone();
        other[9] = b'9'; // the version digit: and the checksum no longer matches
        let sum = xxh3_128(&other[..other.len() - 16]);
        let n = other.len();
        other[n - 16..].copy_from_slice(&sum.to_le_bytes());
        assert_eq!(decode::<u32>("index", &other), Ok(None));
        assert_eq!(decode::<u32>("index", b""), Ok(None), "an empty file");
        let header = header("index");
        assert!(
            decode::<u32>("index", header.as_bytes()).is_err(),
            "cut after its header"
        );
    }
}
