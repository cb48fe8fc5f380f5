//! Template filters (askama looks them up as `filters::…` where a page's
//! template is derived; each page module imports this one).

use std::fmt::Display;

use askama::filters::{Escaper as _, Safe};

/// A name as HTML that breaks at its separators: escaped, with a `<wbr>`
/// (a line-break opportunity that copies as nothing) after each `/`, `.`,
/// `;` and `::`, and before each `?` and `(`. On a phone an endpoint
/// name wraps as `/api/pricing/` + `quote`, not `/api/pricin` + `g/quote`;
/// a frame name as `com.shop.` + `Orders.search`.
pub fn breakable_html(name: &str) -> String {
    let name = crate::escape::page_text(name);
    let mut out = String::with_capacity(name.len() + 16);
    let mut chars = name.chars().peekable();
    while let Some(c) = chars.next() {
        if matches!(c, '?' | '(') && !out.is_empty() {
            out.push_str("<wbr>");
        }
        // The pages' one escaper (askama's entities).
        let _ = askama::filters::Html.write_escaped_char(&mut out, c);
        let after = match c {
            '/' | '.' | ';' => chars.peek().is_some_and(|n| *n != c),
            ':' => out.ends_with("::") && chars.peek().is_some_and(|n| *n != ':'),
            _ => false,
        };
        if after {
            out.push_str("<wbr>");
        }
    }
    out
}

/// `{{ name|wbr }}`: [`breakable_html`], marked safe (it is escaped).
#[askama::filter_fn]
pub fn wbr(value: impl Display, _env: &dyn askama::Values) -> askama::Result<Safe<String>> {
    Ok(Safe(breakable_html(&value.to_string())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_break_at_their_separators_and_stay_escaped() {
        assert_eq!(
            breakable_html("GET /api/pricing/quote"),
            "GET /<wbr>api/<wbr>pricing/<wbr>quote"
        );
        assert_eq!(
            breakable_html("com.shop.Orders::search(Query)"),
            "com.<wbr>shop.<wbr>Orders::<wbr>search<wbr>(Query)"
        );
        assert_eq!(
            breakable_html("/a?<b>&\"c'"),
            "/<wbr>a<wbr>?&#60;b&#62;&#38;&#34;c&#39;"
        );
        // Doubled separators and a trailing one get no break inside.
        assert_eq!(breakable_html("a//b/"), "a//<wbr>b/");
        assert_eq!(breakable_html("../x"), "..<wbr>/<wbr>x");
    }
}
