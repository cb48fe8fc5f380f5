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
