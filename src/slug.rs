//! Slugs: the one rule that turns names into file-name-safe words, the
//! page file names built on it, and deterministic collision handling so
//! that every endpoint and run keeps one stable URL.
//!
//! Until issue 16 there were three rules: pages (here), endpoint ids from
//! tag values (`ingest::raw`, the same words by a copy of the loop) and
//! comparison pages (`analyse::compare`, which kept case, `.` and turned
//! everything else into `_`). See [`words`] and `analyse::compare` for
//! what each did and which was right.

use std::collections::{BTreeMap, BTreeSet};

// Suffixes hash with FNV-1a: fixed and documented, since URLs must not
// change with the Rust release (std's hasher may).
use crate::hash::fnv1a;

/// Names Windows refuses as file names, whatever the extension.
const RESERVED: &[&str] = &[
    "con", "prn", "aux", "nul", "com1", "com2", "com3", "com4", "com5", "com6", "com7", "com8",
    "com9", "lpt1", "lpt2", "lpt3", "lpt4", "lpt5", "lpt6", "lpt7", "lpt8", "lpt9", "index",
];
const MAX_LEN: usize = 80;

/// The words of `text`: lowercase ASCII letters and digits, every run of
/// anything else one `-`, no `-` at either end (`GET /api/orders/{id}` →
/// `get-api-orders-id`). Empty when `text` has no ASCII letter or digit.
/// Page slugs and endpoint ids from tag values are both built on it.
pub fn words(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    while out.ends_with('-') {
        out.pop();
    }
    out
}

/// A safe file-name stem: [`words`], at most 80 characters; never empty,
/// never a reserved name, never `..`. The reserved list includes `index`
/// so that no page overwrites a folder's index.
pub fn slug(text: &str) -> String {
    let mut out = words(text);
    out.truncate(MAX_LEN);
    while out.ends_with('-') {
        out.pop();
    }
    if out.is_empty() {
        out.push('x');
    }
    if RESERVED.contains(&out.as_str()) {
        out.push_str("-1");
    }
    out
}

/// Gives every id a unique slug, so that each endpoint and run has one
/// URL that stays put as the archive grows:
///
/// - an id whose slug nobody else claims gets the plain slug;
/// - when several ids claim one slug, an id that already *is* that slug
///   (`order-list`) keeps it, and the others get the slug plus six hex
///   digits of a hash of the id itself (`order-list-3f09a2`). The suffix
///   depends only on the id, so it neither depends on the order ids were
///   found in nor changes when further colliding ids appear later;
/// - should a suffixed slug still be taken (a hash clash), `-2`, `-3`, …
///   follow, in sorted id order.
pub fn unique_slugs<'a>(ids: impl IntoIterator<Item = &'a str>) -> BTreeMap<String, String> {
    let sorted: BTreeSet<&str> = ids.into_iter().collect();
    let mut claims: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for id in &sorted {
        claims.entry(slug(id)).or_default().push(id);
    }
    let mut out = BTreeMap::new();
    let mut taken = BTreeSet::new();
    let mut suffixed = Vec::new();
    for (base, group) in &claims {
        let owner = match group.as_slice() {
            [only] => Some(*only),
            _ => group.iter().copied().find(|id| *id == base),
        };
        if let Some(owner) = owner {
            out.insert(owner.to_string(), base.clone());
            taken.insert(base.clone());
        }
        suffixed.extend(
            group
                .iter()
                .filter(|id| Some(**id) != owner)
                .map(|id| (base, *id)),
        );
    }
    // Plain slugs are all taken before any suffix is chosen, so a suffix
    // never steals an id's plain slug.
    suffixed.sort_by(|a, b| a.1.cmp(b.1));
    for (base, id) in suffixed {
        let stem = format!("{base}-{:06x}", fnv1a(id.as_bytes()) & 0xff_ffff);
        let mut candidate = stem.clone();
        let mut n = 2;
        while taken.contains(&candidate) {
            candidate = format!("{stem}-{n}");
            n += 1;
        }
        taken.insert(candidate.clone());
        out.insert(id.to_string(), candidate);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_safe() {
        assert_eq!(slug("GET /api/orders/{id}"), "get-api-orders-id");
        assert_eq!(slug("../../etc/passwd"), "etc-passwd");
        assert_eq!(slug(".."), "x");
        assert_eq!(slug(""), "x");
        assert_eq!(slug("CON"), "con-1");
        assert_eq!(slug("<script>alert(1)</script>"), "script-alert-1-script");
        assert_eq!(slug("2026-05-04T0300Z"), "2026-05-04t0300z");
        assert!(slug(&"a".repeat(500)).len() <= MAX_LEN);
    }

    #[test]
    fn collisions_resolve_without_depending_on_order() {
        let a = unique_slugs(["Order List", "order-list", "order_list"]);
        let b = unique_slugs(["order_list", "order-list", "Order List"]);
        assert_eq!(a, b);
        // The id that is its own slug keeps it.
        assert_eq!(a["order-list"], "order-list");
        let suffix = |id: &str| format!("order-list-{:06x}", fnv1a(id.as_bytes()) & 0xff_ffff);
        assert_eq!(a["Order List"], suffix("Order List"));
        assert_eq!(a["order_list"], suffix("order_list"));
        assert_ne!(a["Order List"], a["order_list"]);
    }

    #[test]
    fn a_later_colliding_id_moves_no_existing_url() {
        let before = unique_slugs(["order-list", "Order List", "inventory"]);
        let after = unique_slugs(["order-list", "Order List", "inventory", "ORDER_LIST"]);
        for (id, slug) in &before {
            assert_eq!(&after[id], slug, "{id} kept its URL");
        }
        assert!(after["ORDER_LIST"].starts_with("order-list-"));
    }

    #[test]
    fn a_lone_id_gets_its_plain_slug() {
        let s = unique_slugs(["GET /api/orders", "index"]);
        assert_eq!(s["GET /api/orders"], "get-api-orders");
        assert_eq!(s["index"], "index-1");
    }

    #[test]
    fn a_suffix_never_takes_another_ids_plain_slug() {
        // Pick an id whose suffixed slug is exactly another id.
        let taker = "Order List";
        let squatter = format!("order-list-{:06x}", fnv1a(taker.as_bytes()) & 0xff_ffff);
        let s = unique_slugs(["order-list", taker, squatter.as_str()]);
        assert_eq!(s[squatter.as_str()], squatter);
        assert_eq!(s[taker], format!("{squatter}-2"));
        let values: BTreeSet<&String> = s.values().collect();
        assert_eq!(values.len(), 3);
    }

    proptest::proptest! {
        /// A page slug is plain words of at most 80 characters, and the
        /// endpoint id a tag value gets is the same words (the two used to
        /// be separate copies of one loop).
        #[test]
        fn slugs_are_words_and_tag_ids_are_the_same_words(text in "\\PC{0,120}") {
            let s = slug(&text);
            proptest::prop_assert!(!s.is_empty() && s.len() <= MAX_LEN + 2);
            proptest::prop_assert!(s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'));
            proptest::prop_assert!(!s.starts_with('-') && !s.ends_with('-') && !s.contains("--"));
            let w = words(&text);
            if !text.contains("://") && !w.is_empty() && w.len() <= MAX_LEN && !RESERVED.contains(&w.as_str()) {
                proptest::prop_assert_eq!(crate::ingest::raw::slug(&text), s);
            }
        }
    }
}
