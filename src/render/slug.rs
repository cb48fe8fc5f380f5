//! File names for pages: one `slug()` rule and deterministic collision
//! handling, so every endpoint and run keeps one stable URL.

use std::collections::{BTreeMap, BTreeSet};

/// Names Windows refuses as file names, whatever the extension.
const RESERVED: &[&str] = &[
    "con", "prn", "aux", "nul", "com1", "com2", "com3", "com4", "com5", "com6", "com7", "com8",
    "com9", "lpt1", "lpt2", "lpt3", "lpt4", "lpt5", "lpt6", "lpt7", "lpt8", "lpt9", "index",
];
const MAX_LEN: usize = 80;

/// A safe file-name stem: lowercase ASCII letters, digits and single
/// dashes; never empty, never a reserved name, never `..`. The reserved
/// list includes `index` so that no page overwrites a folder's index.
pub fn slug(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut dash = false;
    for c in text.chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_alphanumeric() {
            out.push(c);
            dash = false;
        } else if !dash && !out.is_empty() {
            out.push('-');
            dash = true;
        }
        if out.len() >= MAX_LEN {
            break;
        }
    }
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

/// Gives every id a unique slug. Ids are taken in sorted order; the first
/// keeps the plain slug and later ones get `-2`, `-3`, … so the result does
/// not depend on the order ids were found in.
pub fn unique_slugs<'a>(ids: impl IntoIterator<Item = &'a str>) -> BTreeMap<String, String> {
    let sorted: BTreeSet<&str> = ids.into_iter().collect();
    let mut taken = BTreeSet::new();
    let mut out = BTreeMap::new();
    for id in sorted {
        let base = slug(id);
        let mut candidate = base.clone();
        let mut n = 2;
        while taken.contains(&candidate) {
            candidate = format!("{base}-{n}");
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
    fn collisions_resolve_by_sorted_id() {
        let a = unique_slugs(["Order List", "order-list", "order_list"]);
        let b = unique_slugs(["order_list", "order-list", "Order List"]);
        assert_eq!(a, b);
        assert_eq!(a["Order List"], "order-list");
        assert_eq!(a["order-list"], "order-list-2");
        assert_eq!(a["order_list"], "order-list-3");
    }
}
