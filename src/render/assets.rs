//! Static files embedded in the binary, listed in one table. The
//! stylesheet is served with the colour variables of
//! [`super::palette`] in front of it.

const FILES: &[(&str, &[u8])] = &[
    ("static/style.css", include_bytes!("../../static/style.css")),
    ("static/app.js", include_bytes!("../../static/app.js")),
    (
        "static/favicon.svg",
        include_bytes!("../../static/favicon.svg"),
    ),
];

pub(super) fn files() -> impl Iterator<Item = (&'static str, Vec<u8>)> {
    FILES.iter().map(|&(path, bytes)| {
        let bytes = if path == "static/style.css" {
            [super::palette::css_variables().as_bytes(), bytes].concat()
        } else {
            bytes.to_vec()
        };
        (path, bytes)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every `var(--x)` of the stylesheet is a colour of the palette, so a
    /// renamed or removed colour cannot leave a page uncoloured.
    #[test]
    fn the_stylesheet_uses_only_palette_colours() {
        let (_, css) = files().find(|(p, _)| *p == "static/style.css").unwrap();
        let css = String::from_utf8(css).unwrap();
        let names: Vec<&str> = super::super::palette::PAGE.iter().map(|c| c.name).collect();
        for used in css.split("var(--").skip(1) {
            let name: String = used
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            assert!(
                names.contains(&name.as_str()),
                "var(--{name}) is no palette colour"
            );
        }
        // And the stylesheet defines no colour variable of its own.
        let own = include_str!("../../static/style.css");
        assert!(
            !own.contains("--regression:"),
            "colours belong in src/render/palette.rs"
        );
    }
}
