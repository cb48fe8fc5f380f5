//! Commits and changes everywhere (issue 17): with `[site] commit_url` and
//! `compare_url` set, every run any page shows links to its commit, and
//! every alarm and change point links to the code host's compare view of
//! its suspect range; with them unset, no page has a broken link. Checked
//! on the bundled archive (which sets both) on every page type: overview,
//! endpoint, run, runs index, history, weekly, releases, capacity,
//! compare and flame pages. Pages are parsed as HTML (scraper); the
//! expected links are built from `analysis.json`'s runs and the settings.

mod common;

use std::collections::BTreeMap;

use perfdash::analyse::Analysis;
use perfdash::render::Site;
use scraper::{ElementRef, Html, Selector};

fn analysis() -> &'static Analysis {
    static A: std::sync::OnceLock<Analysis> = std::sync::OnceLock::new();
    A.get_or_init(|| {
        let loaded = perfdash::ingest::load_archive(common::bundled_archive()).unwrap();
        perfdash::analyse::analyse(&loaded.archive, loaded.diagnostics)
    })
}

/// The bundled archive's site, rendered once for the tests that keep its
/// `[site]` settings.
fn site() -> &'static Site {
    static S: std::sync::OnceLock<Site> = std::sync::OnceLock::new();
    S.get_or_init(|| perfdash::render::render_site(analysis()).unwrap())
}

fn sel(s: &str) -> Selector {
    Selector::parse(s).unwrap()
}

/// Whether a site path is a page of one type.
type IsPage = fn(&str) -> bool;

/// Page types and how to tell a page's path belongs to one.
const PAGE_TYPES: [(&str, IsPage); 11] = [
    ("overview", |p| p == "index.html"),
    ("endpoint", |p| p.starts_with("endpoints/")),
    ("run", |p| p.starts_with("runs/") && p != "runs/index.html"),
    ("runs index", |p| p == "runs/index.html"),
    ("history", |p| p == "history.html"),
    ("weekly", |p| p == "weekly.html"),
    ("week", |p| p.starts_with("weekly/")),
    ("releases", |p| p == "releases.html"),
    ("capacity", |p| p.starts_with("capacity/")),
    ("compare", |p| p.starts_with("compare/")),
    ("flame", |p| p.starts_with("flame/")),
];

fn page_type(path: &str) -> &'static str {
    PAGE_TYPES
        .iter()
        .find(|(_, is)| is(path))
        .map(|(name, _)| *name)
        .unwrap_or_else(|| panic!("{path}: a page of no known type"))
}

fn pages(site: &Site) -> Vec<(String, Html)> {
    site.files()
        .filter(|(p, _)| p.ends_with(".html"))
        .map(|(p, b)| {
            (
                p.to_string(),
                Html::parse_document(std::str::from_utf8(b).unwrap()),
            )
        })
        .collect()
}

/// A relative href from the page at `from`, as a site path (no fragment).
fn resolve(from: &str, href: &str) -> String {
    let target = href.split('#').next().unwrap();
    let mut parts: Vec<&str> = from.split('/').collect();
    parts.pop();
    for seg in target.split('/') {
        match seg {
            ".." => {
                parts.pop();
            }
            "." | "" => {}
            s => parts.push(s),
        }
    }
    parts.join("/")
}

/// Run page path → (run id, commit).
fn runs_by_page(a: &Analysis) -> BTreeMap<String, (String, Option<String>)> {
    let slugs = perfdash::render::Slugs::new(a);
    a.runs
        .iter()
        .map(|r| {
            (
                format!("runs/{}.html", slugs.run(&r.id)),
                (r.id.clone(), r.meta.commit.clone()),
            )
        })
        .collect()
}

fn commit_links_in(scope: ElementRef) -> Vec<String> {
    scope
        .select(&sel("a.commit"))
        .filter_map(|a| a.value().attr("href").map(str::to_string))
        .collect()
}

#[test]
fn with_commit_and_compare_urls_every_run_links_its_commit() {
    let a = analysis();
    let site_settings = &a.settings.site;
    assert!(
        site_settings.commit_url.is_some() && site_settings.compare_url.is_some(),
        "the bundled archive sets [site] commit_url and compare_url"
    );
    let site = site();
    let runs = runs_by_page(a);
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    let mut missing = Vec::new();
    for (path, doc) in pages(site) {
        let kind = page_type(&path);
        let mut checked = 0;
        // A run's own page shows its commit, linked.
        if let Some((id, Some(commit))) = runs.get(&path) {
            let href = site_settings.commit_href(commit).unwrap();
            if !commit_links_in(doc.root_element()).contains(&href) {
                missing.push(format!("{path}: run {id} without its own commit link"));
            }
            checked += 1;
        }
        for link in doc.select(&sel("a[href]")) {
            let href = link.value().attr("href").unwrap();
            if href.contains("://") {
                continue;
            }
            let target = resolve(&path, href);
            let Some((id, Some(commit))) = runs.get(&target) else {
                continue;
            };
            // The pager's neighbouring runs are ways to move, not runs shown.
            let in_nav = link
                .ancestors()
                .any(|n| n.value().as_element().is_some_and(|e| e.name() == "nav"));
            if target == path || in_nav {
                continue;
            }
            checked += 1;
            let short = &commit[..7];
            let in_chart = link
                .ancestors()
                .any(|n| n.value().as_element().is_some_and(|e| e.name() == "svg"));
            if in_chart {
                // A chart's run point: its tooltip names the commit.
                let title: String = link.select(&sel("title")).flat_map(|t| t.text()).collect();
                if !title.contains(short) {
                    missing.push(format!("{path}: chart point of {id} without its commit"));
                }
                continue;
            }
            let parent = ElementRef::wrap(link.parent().unwrap()).unwrap();
            let expected = site_settings.commit_href(commit).unwrap();
            if !commit_links_in(parent).contains(&expected) {
                missing.push(format!(
                    "{path} ({kind}): run {id} without a link to commit {short}: {}",
                    parent.html().chars().take(300).collect::<String>()
                ));
            }
        }
        *seen.entry(kind).or_default() += checked;
    }
    assert!(
        missing.is_empty(),
        "{} runs without commit links, e.g.:\n{}",
        missing.len(),
        missing
            .iter()
            .take(12)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    for (kind, _) in PAGE_TYPES {
        assert!(
            seen.get(kind).copied().unwrap_or(0) > 0,
            "no run checked on a {kind} page: {seen:?}"
        );
    }
}

/// A suspect range shows the last run at the old level and the first at
/// the new; with both commits and `compare_url`, it links the compare view.
fn check_suspect(
    s: ElementRef,
    path: &str,
    a: &Analysis,
    runs: &BTreeMap<String, (String, Option<String>)>,
) -> Result<(), String> {
    let ends: Vec<&Option<String>> = s
        .select(&sel("a[href]"))
        .filter_map(|l| runs.get(&resolve(path, l.value().attr("href").unwrap())))
        .map(|(_, c)| c)
        .collect();
    if let [Some(from), Some(to)] = ends[..] {
        let expected = a.settings.site.compare_href(from, to).unwrap();
        let found: Vec<&str> = s
            .select(&sel("a.compare"))
            .filter_map(|l| l.value().attr("href"))
            .collect();
        if found != [expected.as_str()] {
            return Err(format!("{path}: {found:?} instead of {expected}"));
        }
    }
    Ok(())
}

#[test]
fn every_alarm_and_change_point_links_its_compare_range() {
    let a = analysis();
    let site = site();
    let runs = runs_by_page(a);
    let mut problems = Vec::new();
    let mut checked: BTreeMap<&str, usize> = BTreeMap::new();
    let mut check_rows = |path: &str, what: &'static str, rows: Vec<ElementRef>| {
        for row in rows {
            *checked.entry(what).or_default() += 1;
            match row.select(&sel(".suspect")).next() {
                None => problems.push(format!("{path}: a {what} without a suspect range")),
                Some(s) => {
                    if let Err(e) = check_suspect(s, path, a, &runs) {
                        problems.push(format!("{what}: {e}"));
                    }
                }
            }
        }
    };
    let pages = pages(site);
    for (path, doc) in &pages {
        let path = path.as_str();
        let rows = |css: &str| doc.select(&sel(css)).collect::<Vec<_>>();
        match page_type(path) {
            "endpoint" | "history" => {
                check_rows(path, "change point", rows("table.changepoints tbody tr"));
                check_rows(path, "alarm", rows("table.alarms tbody tr"));
            }
            "weekly" => {
                check_rows(path, "open problem", rows("#decide li.problem"));
                check_rows(path, "new alarm", rows("table.new-alarms tbody tr"));
                check_rows(path, "alarm", rows("table.alarms tbody tr"));
            }
            // The evidence of an alarm raised at the run (a regressed run
            // without an alarm has evidence but no change to range).
            "run" => check_rows(
                path,
                "run-page alarm",
                rows("dl.evidence")
                    .into_iter()
                    .filter(|dl| {
                        dl.select(&sel("dt"))
                            .next()
                            .is_some_and(|dt| dt.text().collect::<String>().contains("alarm"))
                    })
                    .collect(),
            ),
            _ => {}
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    for what in ["change point", "alarm", "open problem", "new alarm"] {
        assert!(
            checked.get(what).copied().unwrap_or(0) > 0,
            "no {what} checked: {checked:?}"
        );
    }
    // Capacity regressions link the changes since the step-load run before.
    let capacity_regressions: usize = pages
        .iter()
        .filter(|(p, _)| p.starts_with("capacity/"))
        .map(|(_, doc)| {
            doc.select(&sel("tr[data-verdict=\"regression\"]"))
                .inspect(|tr| {
                    assert_eq!(tr.select(&sel("a.compare")).count(), 1, "{}", tr.html());
                })
                .count()
        })
        .sum();
    assert!(
        capacity_regressions > 0,
        "the demo has a capacity regression"
    );
}

#[test]
fn without_the_urls_no_link_is_broken_and_commits_still_show() {
    let mut a = analysis().clone();
    a.settings.site.commit_url = None;
    a.settings.site.compare_url = None;
    let site = perfdash::render::render_site(&a).unwrap();
    let mut broken = Vec::new();
    let mut commits = 0;
    for (path, doc) in pages(&site) {
        assert_eq!(doc.select(&sel("a.commit, a.compare")).count(), 0, "{path}");
        commits += doc.select(&sel("code.commit")).count();
        for link in doc.select(&sel("a")) {
            let Some(href) = link.value().attr("href").filter(|h| !h.is_empty()) else {
                broken.push(format!("{path}: <a> without a target: {}", link.html()));
                continue;
            };
            if href.contains("://") || href.starts_with('#') {
                continue;
            }
            let target = resolve(&path, href);
            if site.get(&target).is_none() {
                broken.push(format!("{path}: {href} leads nowhere"));
            }
        }
    }
    assert!(commits > 0, "commits are still shown, as text");
    assert!(
        broken.is_empty(),
        "{} broken links, e.g.\n{}",
        broken.len(),
        broken
            .iter()
            .take(12)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
