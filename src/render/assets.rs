//! Static files embedded in the binary, listed in one table.

const FILES: &[(&str, &[u8])] = &[
    ("static/style.css", include_bytes!("../../static/style.css")),
    ("static/app.js", include_bytes!("../../static/app.js")),
    (
        "static/favicon.svg",
        include_bytes!("../../static/favicon.svg"),
    ),
];

pub(super) fn files() -> impl Iterator<Item = (&'static str, &'static [u8])> {
    FILES.iter().copied()
}
