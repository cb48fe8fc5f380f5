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
        let palette = super::super::palette::PAGE
            .iter()
            .chain(super::super::palette::FIXED);
        let names: Vec<&str> = palette.map(|c| c.name).collect();
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
        assert_eq!(colour_literals(own), Vec::<String>::new());
    }

    /// The colours written out in `css` outside comments: `#rgb`-style hex
    /// values, `rgb()`/`hsl()`-style functions and the named colours a
    /// stylesheet is likely to use.
    fn colour_literals(css: &str) -> Vec<String> {
        let mut code = String::new();
        let mut rest = css;
        while let Some(at) = rest.find("/*") {
            code.push_str(&rest[..at]);
            rest = rest[at..].split_once("*/").map_or("", |(_, after)| after);
        }
        code.push_str(rest);
        let mut found = Vec::new();
        for (i, _) in code.match_indices('#') {
            let hex: String = code[i + 1..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
                .collect();
            // `#endpoints` is a selector; `#fff`, `#1f4e79` are colours.
            if [3, 4, 6, 8].contains(&hex.len()) && hex.chars().all(|c| c.is_ascii_hexdigit()) {
                found.push(format!("#{hex}"));
            }
        }
        let words = code
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .collect::<Vec<_>>();
        for w in words {
            let w = w.to_ascii_lowercase();
            let named = [
                "white", "black", "red", "green", "blue", "gray", "grey", "orange", "purple",
                "yellow", "silver", "navy", "teal",
            ];
            if [
                "rgb", "rgba", "hsl", "hsla", "hwb", "lab", "lch", "oklab", "oklch",
            ]
            .contains(&w.as_str())
                || named.contains(&w.as_str())
            {
                found.push(w);
            }
        }
        found
    }

    #[test]
    fn the_colour_literal_finder_finds_colours_not_selectors() {
        let css = "/* #abc is fine here */ #endpoints td { color: #fff; background: rgba(0,0,0,.1); }\n\
                   a { color: White; white-space: nowrap; border: 1px solid var(--line); }\n\
                   #decide-h { fill: #1f4e79ff; }";
        assert_eq!(
            colour_literals(css),
            ["#fff", "#1f4e79ff", "rgba", "white"].map(String::from)
        );
    }
}
