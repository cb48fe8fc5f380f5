//! Golden files of one page of every kind, rendered from the small fixed
//! archive of `tests/common/golden_archive.rs`. Any change to a template,
//! a view model or a chart shows up as a diff of `tests/snapshots/`;
//! when the change is intended, re-bless with
//!
//! ```text
//! INSTA_UPDATE=always cargo test --test pages_golden
//! ```
//!
//! (or `cargo insta test --test pages_golden --review` with cargo-insta)
//! and review the diff in the commit.

use std::collections::BTreeSet;
use std::path::Path;

use perfdash::analyse::analyse;
use perfdash::ingest::load_archive;
use perfdash::render::{Site, render_site};

mod common;

/// The kind of page a site path is, as the golden files name them.
fn kind(path: &str) -> Option<&'static str> {
    let kind = match path {
        "index.html" => "overview",
        "runs/index.html" => "runs",
        "weekly.html" => "weekly",
        "history.html" => "history",
        "releases.html" => "releases",
        p if p.starts_with("endpoints/") => "endpoint",
        p if p.starts_with("runs/") => "run",
        p if p.starts_with("compare/") => "compare",
        p if p.starts_with("capacity/") => "capacity",
        p if p.starts_with("flame/") => "flame",
        p if p.starts_with("weekly/") => "week",
        _ => return None,
    };
    path.ends_with(".html").then_some(kind)
}

/// The page of each kind that the golden files hold.
const GOLDEN: &[(&str, &str)] = &[
    ("overview", "index.html"),
    ("endpoint", "endpoints/orders.html"),
    ("run", "runs/2026-03-23t0300z.html"),
    ("runs", "runs/index.html"),
    ("weekly", "weekly.html"),
    ("history", "history.html"),
    ("releases", "releases.html"),
    (
        "compare",
        "compare/2026-03-11t0300z_vs_2026-03-25t0300z.html",
    ),
    ("capacity", "capacity/reserve.html"),
    ("flame", "flame/orders/2026-03-23t0300z.cpu.html"),
    ("week", "weekly/2026-w12.html"),
];

fn site() -> Site {
    let dir = tempfile::tempdir().unwrap();
    common::golden_archive::write_golden_archive(dir.path());
    let loaded = load_archive(dir.path()).unwrap();
    // Only the run dated 2099 is warned about, on purpose: its time
    // cannot be trusted.
    assert!(
        loaded.diagnostics.iter().all(|d| {
            d.kind == perfdash::error::DiagnosticKind::UntrustedTime
                && d.path.starts_with("runs/2099-")
        }) && loaded.diagnostics.len() == 1,
        "the golden archive reads cleanly: {:?}",
        loaded.diagnostics
    );
    render_site(&analyse(&loaded.archive, loaded.diagnostics)).unwrap()
}

fn page<'a>(site: &'a Site, path: &str) -> &'a str {
    let bytes = site.get(path).unwrap_or_else(|| {
        let pages: Vec<&str> = site
            .files()
            .map(|(p, _)| p)
            .filter(|p| p.ends_with(".html"))
            .collect();
        panic!("{path} is not in the golden site; its pages: {pages:?}")
    });
    std::str::from_utf8(bytes).unwrap()
}

#[test]
fn one_page_of_every_kind_matches_its_golden_file() {
    let site = site();
    for (kind, path) in GOLDEN {
        insta::assert_snapshot!(*kind, page(&site, path));
    }
}

/// Every kind of page the site has is in `GOLDEN`, so a new kind of page
/// cannot go without a golden file.
#[test]
fn the_golden_files_cover_every_kind_of_page() {
    let site = site();
    let kinds: BTreeSet<&str> = site.files().filter_map(|(p, _)| kind(p)).collect();
    let golden: BTreeSet<&str> = GOLDEN.iter().map(|(k, _)| *k).collect();
    assert_eq!(kinds, golden);
    for (p, _) in site.files() {
        assert!(
            !p.ends_with(".html") || kind(p).is_some(),
            "{p} is a page of no known kind: add it to kind() and GOLDEN"
        );
    }
}

/// Every template is used by a page with a golden file: a one-character
/// change to any of them changes a snapshot.
#[test]
fn every_template_is_under_a_golden_file() {
    let site = site();
    let pages: Vec<&str> = GOLDEN.iter().map(|(_, p)| page(&site, p)).collect();
    let templates = Path::new(env!("CARGO_MANIFEST_DIR")).join("templates");
    for entry in std::fs::read_dir(&templates).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        // Each template writes a marker of its own: its first line of
        // plain markup, or, for a file of macros only, every class it
        // gives an element.
        let text = std::fs::read_to_string(templates.join(&name)).unwrap();
        let plain = text
            .lines()
            .map(str::trim)
            .find(|l| l.starts_with('<') && !l.contains("{{") && !l.contains("{%") && l.len() > 12);
        let markers: Vec<String> = match plain {
            Some(line) => vec![line.to_string()],
            None => text
                .split("class=\"")
                .skip(1)
                .map(|rest| format!("class=\"{}\"", &rest[..rest.find('"').unwrap()]))
                .collect(),
        };
        assert!(
            !markers.is_empty(),
            "templates/{name} writes no markup to look for"
        );
        for marker in markers {
            assert!(
                pages.iter().any(|p| p.contains(&marker)),
                "no golden page shows templates/{name} (looked for {marker:?})"
            );
        }
    }
}

/// Every page's `<title>` is plain text (a template that leaks markup into
/// its title block shows tags in the browser's tab and history).
#[test]
fn every_page_title_is_plain_text() {
    let site = site();
    for (path, bytes) in site.files().filter(|(p, _)| p.ends_with(".html")) {
        let html = std::str::from_utf8(bytes).unwrap();
        let start = html
            .find("<title>")
            .unwrap_or_else(|| panic!("{path} has a <title>"))
            + 7;
        let title = &html[start..start + html[start..].find("</title>").unwrap()];
        assert!(
            !title.trim().is_empty() && !title.contains('<') && !title.contains('>'),
            "{path}: <title>{title}</title>"
        );
    }
}
