//! Byte → text decoding for profile files: UTF-8 (with or without a BOM) and
//! UTF-16 LE/BE with a BOM (speedscope's fixtures show both are written in
//! the wild, e.g. by PowerShell redirection on Windows).

use std::borrow::Cow;

pub(super) struct Decoded<'a> {
    pub text: Cow<'a, str>,
    /// Set when bytes had to be replaced.
    pub warning: Option<String>,
}

pub(super) fn decode(bytes: &[u8]) -> Decoded<'_> {
    if let Some(rest) = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]) {
        return utf8(rest);
    }
    if let Some(rest) = bytes.strip_prefix(&[0xFF, 0xFE]) {
        return utf16(rest, u16::from_le_bytes);
    }
    if let Some(rest) = bytes.strip_prefix(&[0xFE, 0xFF]) {
        return utf16(rest, u16::from_be_bytes);
    }
    utf8(bytes)
}

fn utf8(bytes: &[u8]) -> Decoded<'_> {
    // Valid text (nearly always) is checked by the fast validator; only
    // invalid text goes through the lossy decoder, which walks it in
    // chunks (1.6 % of a build's instructions on 38 MB of profiles).
    if let Ok(text) = std::str::from_utf8(bytes) {
        return Decoded {
            text: Cow::Borrowed(text),
            warning: None,
        };
    }
    let text = String::from_utf8_lossy(bytes);
    let warning = matches!(text, Cow::Owned(_))
        .then(|| "invalid UTF-8 replaced by U+FFFD; frame names may be garbled".to_string());
    Decoded { text, warning }
}

fn utf16(bytes: &[u8], unit: fn([u8; 2]) -> u16) -> Decoded<'static> {
    let units = bytes.chunks_exact(2).map(|c| unit([c[0], c[1]]));
    let mut bad = bytes.len() % 2 == 1;
    let text: String = char::decode_utf16(units)
        .map(|r| {
            r.unwrap_or_else(|_| {
                bad = true;
                char::REPLACEMENT_CHARACTER
            })
        })
        .collect();
    Decoded {
        text: Cow::Owned(text),
        warning: bad
            .then(|| "invalid UTF-16 replaced by U+FFFD; frame names may be garbled".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn valid_text_is_borrowed_and_invalid_text_replaced_with_a_warning() {
        let valid = decode("main;Ωmega 3\n".as_bytes());
        assert!(matches!(valid.text, Cow::Borrowed("main;Ωmega 3\n")));
        assert!(valid.warning.is_none());
        let invalid = decode(b"main;\xFFx 3\n");
        assert_eq!(invalid.text, "main;\u{FFFD}x 3\n");
        assert!(invalid.warning.unwrap().contains("invalid UTF-8"));
        let bom = decode(b"\xEF\xBB\xBFmain 1");
        assert_eq!(bom.text, "main 1");
        assert!(bom.warning.is_none());
    }

    proptest! {
        /// Any bytes (without a BOM) decode as the lossy decoder reads
        /// them, with a warning exactly when something was replaced.
        #[test]
        fn utf8_decodes_like_the_lossy_decoder(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            prop_assume!(!bytes.starts_with(&[0xEF, 0xBB, 0xBF]) && !bytes.starts_with(&[0xFF, 0xFE]) && !bytes.starts_with(&[0xFE, 0xFF]));
            let d = decode(&bytes);
            prop_assert_eq!(&d.text, &String::from_utf8_lossy(&bytes));
            prop_assert_eq!(d.warning.is_some(), std::str::from_utf8(&bytes).is_err());
        }
    }
}
