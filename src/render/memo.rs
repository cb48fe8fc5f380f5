//! Keys of the page memo (`crate::write::memo`): a page that was made from
//! exactly the same inputs by the same perfdash is not rendered again, its
//! previous file is linked into the new site.
//!
//! **Why a key is complete.** A memoised page is made in two steps: a
//! function gathers, from the analysis, one value holding everything the
//! page shows (its *inputs*: the template's own struct, or the slices of
//! the analysis and the resolved links a renderer is given), and a second
//! function makes the files from that value alone — it takes no `Ctx`,
//! no analysis, no settings, so it cannot read anything the value does
//! not hold. The key hashes that value's `Debug` form, which `derive`
//! writes from every field (a field added later enters the key by
//! itself; floats print exactly, `Arc`s print what they hold, and a
//! `crate::hash::Digested` value — a profile's stacks — the digest of its
//! whole form, computed once per build), together
//! with a salt naming the perfdash that renders (its version and its
//! binary: templates and code are compiled in) and what the page kind is.
//! What the second step computes (layouts, colours, formats) is code,
//! covered by the salt.
//!
//! A value whose `Debug` form is not stable between runs (a `HashMap`)
//! would only make keys miss: never a wrong page, only a page rendered.

use std::fmt::{Debug, Write as _};

use crate::hash::DebugHasher;

/// The key of a page of kind `kind` made from `inputs`, by the perfdash
/// `salt` names.
pub fn key(salt: u128, kind: &str, inputs: &dyn Debug) -> u128 {
    let mut hasher = DebugHasher::new();
    hasher.update(&salt.to_le_bytes());
    hasher.update(kind.as_bytes());
    hasher.update(&[0]);
    // Writing into a hasher never fails.
    let _ = write!(hasher, "{inputs:?}");
    hasher.digest()
}

#[cfg(test)]
mod tests {
    use super::*;

    // Read through `Debug` only, as the key reads them.
    #[allow(dead_code)]
    #[derive(Debug)]
    struct Inputs {
        title: String,
        share: f64,
    }

    #[test]
    fn a_key_changes_with_any_field_the_kind_and_the_salt() {
        let a = Inputs {
            title: "orders".into(),
            share: 0.1,
        };
        let k = key(1, "flame", &a);
        assert_eq!(k, key(1, "flame", &a), "deterministic");
        let b = Inputs {
            share: 0.1 + f64::EPSILON,
            ..a
        };
        assert_ne!(k, key(1, "flame", &b), "a float's last bit");
        let a = Inputs {
            title: "orders".into(),
            share: 0.1,
        };
        assert_ne!(k, key(2, "flame", &a), "another perfdash");
        assert_ne!(k, key(1, "run", &a), "another kind of page");
        // Long values cross the buffer; the key is still of the whole.
        let long = |c| Inputs {
            title: format!("{}{c}", "x".repeat(50_000)),
            share: 0.0,
        };
        assert_ne!(key(1, "flame", &long('a')), key(1, "flame", &long('b')));
    }
}
