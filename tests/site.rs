//! The site as a product, without a browser: stable permalinks with
//! colliding names end to end, the per-endpoint CSV, the calendar heatmap,
//! and the page-size budgets for six years of history and 120 endpoints
//! (`cargo test --release --test site -- page_sizes services_keep --nocapture`
//! prints the sizes reported in BENCHMARKS.md).

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use common::site_archives::{COLLIDING_RUNS, large_archive, showcase_archive};
use perfdash::analyse::analyse;
use perfdash::render::{render_site, slug};
use proptest::prelude::*;
use serde_json::Value;

fn read(site: &Path, page: &str) -> String {
    std::fs::read_to_string(site.join(page)).unwrap_or_else(|e| panic!("{page}: {e}"))
}

/// Every `href="…"` of a page, in order.
fn hrefs(html: &str) -> Vec<String> {
    html.split("href=\"")
        .skip(1)
        .map(|rest| rest[..rest.find('"').unwrap()].replace("&amp;", "&"))
        .collect()
}

/// Undoes HTML escaping (named and numeric entities).
fn unescape(html: &str) -> String {
    let mut out = String::new();
    let mut rest = html;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        let end = rest[i..].find(';').unwrap() + i;
        let entity = &rest[i + 1..end];
        out.push(match entity {
            "amp" => '&',
            "lt" => '<',
            "gt" => '>',
            "quot" => '"',
            e if e.starts_with('#') => char::from_u32(e[1..].parse().unwrap()).unwrap(),
            e => panic!("unknown entity {e}"),
        });
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    out
}

#[test]
fn colliding_names_get_distinct_stable_urls_end_to_end() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    showcase_archive(&archive);
    let site = tmp.path().join("site");
    common::build_site(&archive, &site);

    let doc: Value = serde_json::from_str(&read(&site, "data/analysis.json")).unwrap();
    let endpoint_slugs: BTreeMap<String, String> = doc["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["id"].as_str().unwrap().to_string(),
                e["slug"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    // The id that is already a slug keeps it; the others are suffixed
    // with a hash of their own id, whatever else is in the archive.
    assert_eq!(endpoint_slugs["order-list"], "order-list");
    for id in ["Order List", "order_list"] {
        let s = &endpoint_slugs[id];
        assert!(
            s.starts_with("order-list-") && s.len() == "order-list-".len() + 6,
            "{id} -> {s}"
        );
        assert_eq!(s, &slug::unique_slugs([id, "order-list"])[id]);
    }
    assert_eq!(endpoint_slugs["index"], "index-1");
    let hostile = &endpoint_slugs["inventory <img src=x onerror=alert(1)> & \"stock\""];
    assert_eq!(hostile, "inventory-img-src-x-onerror-alert-1-stock");
    let unique: BTreeSet<&String> = endpoint_slugs.values().collect();
    assert_eq!(unique.len(), endpoint_slugs.len());

    // One page per endpoint, named by its slug, showing that endpoint.
    let index = read(&site, "index.html");
    for (id, s) in &endpoint_slugs {
        let page = read(&site, &format!("endpoints/{s}.html"));
        let shown = doc["endpoints"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["id"] == id.as_str())
            .unwrap()["name"]
            .as_str()
            .unwrap()
            .to_string();
        let h1 = &page[page.find("<h1>").unwrap() + 4..page.find("</h1>").unwrap()];
        // Names break at their separators (`<wbr>`), and read the same.
        assert_eq!(
            unescape(&h1.replace("<wbr>", "")),
            shown,
            "{s}.html is {id}"
        );
        assert!(index.contains(&format!("href=\"endpoints/{s}.html\"")));
        // Its CSV download exists and holds every run of its history.
        let csv_href = format!("../data/endpoints/{s}.csv");
        assert!(hrefs(&page).contains(&csv_href), "{s}.html links its CSV");
        let csv = read(&site, &format!("data/endpoints/{s}.csv"));
        let runs = doc["endpoints"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["id"] == id.as_str())
            .unwrap()["runs"]
            .as_array()
            .unwrap()
            .len();
        assert_eq!(
            csv.lines().count(),
            runs + 1,
            "{s}.csv has a header and every run"
        );
    }
    // Markup in a name never reaches a page unescaped.
    for (path, bytes) in common::tree(&site) {
        if path.ends_with(".html") {
            let html = String::from_utf8(bytes).unwrap();
            assert!(
                !html.contains("<img src=x"),
                "{path} has raw markup from a name"
            );
        }
    }

    // Colliding run ids: two pages, each about its own run.
    let run_slugs: BTreeMap<String, String> = doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap().to_string(),
                r["slug"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let [a, b] = COLLIDING_RUNS.map(|id| run_slugs[id].clone());
    assert_ne!(a, b);
    for (id, s) in COLLIDING_RUNS.iter().zip([&a, &b]) {
        assert!(read(&site, &format!("runs/{s}.html")).contains(&format!("<h1>Run {id}</h1>")));
    }

    // The same archive built again (in another folder) gives the same URLs.
    let again = tmp.path().join("again");
    common::build_site(&archive, &again);
    let names =
        |dir: &Path| -> Vec<String> { common::tree(dir).into_iter().map(|(p, _)| p).collect() };
    assert_eq!(names(&site), names(&again));
}

proptest! {
    /// Any set of ids: every id gets a slug, slugs are unique and safe as
    /// file names, and the result does not depend on the ids' order.
    #[test]
    fn slugs_are_unique_safe_and_order_free(ids in proptest::collection::vec("[ -~]{0,12}|order[-_ ]list|index|CON", 1..12)) {
        let forward = slug::unique_slugs(ids.iter().map(String::as_str));
        let backward = slug::unique_slugs(ids.iter().rev().map(String::as_str));
        prop_assert_eq!(&forward, &backward);
        let distinct: BTreeSet<&String> = ids.iter().collect();
        prop_assert_eq!(forward.len(), distinct.len());
        let values: BTreeSet<&String> = forward.values().collect();
        prop_assert_eq!(values.len(), forward.len());
        for s in forward.values() {
            prop_assert!(!s.is_empty() && s.len() <= 90);
            prop_assert!(s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'), "{}", s);
            prop_assert!(!s.starts_with('-') && !s.ends_with('-') && s != "index");
        }
    }

    /// Adding ids never moves an id that is its own slug.
    #[test]
    fn canonical_ids_keep_their_url(extra in proptest::collection::vec("[ -~]{0,12}", 0..8)) {
        let base = ["order-list", "inventory", "2026-05-04t0300z"];
        let all = slug::unique_slugs(base.iter().copied().chain(extra.iter().map(String::as_str)));
        for id in base {
            prop_assert_eq!(all[id].as_str(), id);
        }
    }
}

/// The heatmap: one cell per endpoint and ISO week, coloured by the worst
/// verdict of the week, each with a title; a legend; a year at most, and
/// the older weeks named.
#[test]
fn the_overview_heatmap_covers_endpoints_by_weeks() {
    let archive = large_archive(70, 12);
    let analysis = analyse(&archive, Vec::new());
    let site = render_site(&analysis).unwrap();
    let index = String::from_utf8(site.get("index.html").unwrap().to_vec()).unwrap();
    let start = index.find("<table class=\"heatmap\"").expect("a heatmap");
    let table = &index[start..start + index[start..].find("</table>").unwrap()];
    let legend = &index[start..start + index[start..].find("</p>").unwrap()];
    assert!(table.contains("<caption>Worst verdict per endpoint and ISO week"));
    let cells: Vec<&str> = table.split("<td ").skip(1).collect();
    assert_eq!(cells.len(), 12 * 53, "12 endpoints x 53 weeks");
    // Each cell says its verdict in words for screen readers, and has a
    // tooltip; every column is headed by its ISO week.
    assert!(
        cells
            .iter()
            .all(|c| c.contains("title=\"") && c.contains("<span class=\"vh\">"))
    );
    assert_eq!(
        table
            .matches("<th scope=\"col\" class=\"hm-week\">")
            .count(),
        53
    );
    for key in [
        "regression",
        "insufficient",
        "no-baseline",
        "ok",
        "improvement",
        "none",
    ] {
        assert!(
            legend.contains(&format!("class=\"hm-swatch h-{key}\"")),
            "legend swatch {key}"
        );
    }
    // Shapes as well as colours: every regression cell has its triangle.
    for c in cells
        .iter()
        .filter(|c| c.starts_with("class=\"h-regression\""))
    {
        assert!(c.contains(">▲</span>"), "{c}");
    }
    assert!(
        index.contains("17 older weeks are not drawn here"),
        "70 - 53 weeks named"
    );

    // Each cell's colour is the worst verdict among that week's runs.
    let worst = |vs: &[&str]| {
        [
            "regression",
            "insufficient",
            "no-baseline",
            "ok",
            "improvement",
        ]
        .into_iter()
        .find(|k| vs.contains(k))
        .unwrap()
        .to_string()
    };
    let e = &analysis.endpoints[0];
    let mut weeks: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for p in &e.points {
        let iso = chrono::Datelike::iso_week(&p.started_at.date_naive());
        weeks
            .entry(format!("{}-W{:02}", iso.year(), iso.week()))
            .or_default()
            .push(p.verdict.as_str());
    }
    let mut checked = 0;
    for cell in &cells {
        let title = &cell[cell.find("title=\"").unwrap() + 7..];
        let title = &title[..title.find('"').unwrap()];
        if !title.starts_with(&format!("{} · ", e.name)) {
            continue;
        }
        let week = title
            .split(" · ")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap();
        let class = &cell[cell.find("class=\"h-").unwrap() + 9..];
        let class = &class[..class.find('"').unwrap()];
        assert_eq!(class, worst(&weeks[week]), "{title}");
        checked += 1;
    }
    assert_eq!(checked, 53);
}

/// Page budgets (issue 18): six years of history for 12 endpoints at
/// three runs a week must stay light: every page under 500 KB (the
/// overview under 300 KB). The endpoint page holds the last year in full
/// and older runs as weekly medians; each older year has its own page
/// with every run of that year.
#[test]
fn page_sizes_for_six_years_of_history() {
    let weeks = 312;
    let archive = large_archive(weeks, 12);
    let analysis = analyse(&archive, Vec::new());
    let site = render_site(&analysis).unwrap();
    let size = |p: &str| site.get(p).unwrap_or_else(|| panic!("{p}")).len();
    let overview = size("index.html");
    let endpoints: Vec<(&str, usize)> = site
        .files()
        .filter(|(p, _)| p.starts_with("endpoints/") && p.matches('/').count() == 1)
        .map(|(p, b)| (p, b.len()))
        .collect();
    assert_eq!(endpoints.len(), 12);
    let largest = endpoints.iter().max_by_key(|(_, n)| *n).unwrap();
    let year_pages: Vec<(&str, usize)> = site
        .files()
        .filter(|(p, _)| p.starts_with("endpoints/") && p.matches('/').count() == 2)
        .map(|(p, b)| (p, b.len()))
        .collect();
    let largest_year = year_pages.iter().max_by_key(|(_, n)| *n).unwrap();
    let runs: Vec<usize> = site
        .files()
        .filter(|(p, _)| p.starts_with("runs/") && *p != "runs/index.html")
        .map(|(_, b)| b.len())
        .collect();
    assert_eq!(runs.len(), weeks * 3);
    let total: usize = site.files().map(|(_, b)| b.len()).sum();
    println!("page sizes, {weeks} weeks x 3 runs x 12 endpoints x 5 rounds:");
    println!("  index.html              {:>8} bytes", overview);
    println!(
        "  largest endpoint page   {:>8} bytes ({})",
        largest.1, largest.0
    );
    println!(
        "  largest year page       {:>8} bytes ({}, {} year pages)",
        largest_year.1,
        largest_year.0,
        year_pages.len()
    );
    println!(
        "  largest run page        {:>8} bytes",
        runs.iter().max().unwrap()
    );
    println!(
        "  runs/index.html         {:>8} bytes",
        size("runs/index.html")
    );
    println!(
        "  data/analysis.json      {:>8} bytes",
        size("data/analysis.json")
    );
    println!(
        "  static/ (css+js+icon)   {:>8} bytes",
        size("static/style.css") + size("static/app.js") + size("static/favicon.svg")
    );
    println!("  site total              {total:>8} bytes");
    let capacity: Vec<(&str, usize)> = site
        .files()
        .filter(|(p, _)| p.starts_with("capacity/"))
        .map(|(p, b)| (p, b.len()))
        .collect();
    assert_eq!(capacity.len(), 3);
    let largest_capacity = capacity.iter().max_by_key(|(_, n)| *n).unwrap();
    println!(
        "  largest capacity page   {:>8} bytes ({}, {} step-load runs)",
        largest_capacity.1,
        largest_capacity.0,
        weeks / 2
    );
    assert!(overview < 300_000, "overview is {overview} bytes");
    for (path, bytes) in site.files().filter(|(p, _)| p.ends_with(".html")) {
        assert!(bytes.len() < 500_000, "{path} is {} bytes", bytes.len());
    }

    // The endpoint page: the last year's runs in its table, older weeks
    // as weekly medians, a link to each older year's page.
    let e = &analysis.endpoints[0];
    let slug = slug::unique_slugs(analysis.endpoints.iter().map(|e| e.id.as_str()))[&e.id].clone();
    let page = String::from_utf8(
        site.get(&format!("endpoints/{slug}.html"))
            .unwrap()
            .to_vec(),
    )
    .unwrap();
    let last = e.points.last().unwrap().started_at;
    let recent = e
        .points
        .iter()
        .filter(|p| last - p.started_at <= chrono::Duration::days(365))
        .count();
    let table = |html: &str, caption: &str| -> usize {
        let start = html.find(caption).unwrap_or_else(|| panic!("{caption}"));
        let body = &html[start..start + html[start..].find("</table>").unwrap()];
        body.matches("<tr data-verdict=").count()
    };
    assert_eq!(table(&page, "<caption>Every run of the last year"), recent);
    let older_weeks: BTreeSet<String> = e
        .points
        .iter()
        .filter(|p| last - p.started_at > chrono::Duration::days(365))
        .map(|p| {
            let w = chrono::Datelike::iso_week(&p.started_at.date_naive());
            format!("{}-W{:02}", w.year(), w.week())
        })
        .collect();
    assert_eq!(
        table(&page, "<caption>Weekly medians of older runs"),
        older_weeks.len()
    );
    let years: BTreeSet<i32> = e
        .points
        .iter()
        .filter(|p| last - p.started_at > chrono::Duration::days(365))
        .map(|p| chrono::Datelike::year(&p.started_at))
        .collect();
    for year in &years {
        let href = format!("{slug}/{year}.html");
        assert!(hrefs(&page).contains(&href), "links {href}");
        let year_page =
            String::from_utf8(site.get(&format!("endpoints/{href}")).unwrap().to_vec()).unwrap();
        let in_year = e
            .points
            .iter()
            .filter(|p| chrono::Datelike::year(&p.started_at) == *year)
            .count();
        assert_eq!(
            table(&year_page, &format!("<caption>Every run of {year}")),
            in_year,
            "{href}"
        );
        // Its links resolve from two folders down.
        assert!(hrefs(&year_page).contains(&"../../index.html".to_string()));
        assert!(hrefs(&year_page).contains(&format!("../../endpoints/{slug}.html")));
    }
}

/// Issue 18: with endpoints grouped into services, the overview lists
/// services (worst verdict first, each expanding to its endpoints) and
/// stays under 300 KB at 120 endpoints; each service has its page with
/// its endpoints' table and heatmap.
#[test]
fn services_keep_the_overview_small_at_120_endpoints() {
    let mut archive = large_archive(26, 120);
    let ids = archive.endpoint_ids();
    for (i, id) in ids.iter().enumerate() {
        archive
            .settings
            .endpoints
            .entry(id.clone())
            .or_default()
            .service = Some(format!("service {:02}", i / 10));
    }
    // One endpoint left without a service: listed under `ungrouped`.
    archive
        .settings
        .endpoints
        .get_mut(&ids[119])
        .unwrap()
        .service = None;
    let analysis = analyse(&archive, Vec::new());
    let site = render_site(&analysis).unwrap();
    let overview = String::from_utf8(site.get("index.html").unwrap().to_vec()).unwrap();
    println!(
        "overview at 120 endpoints x 26 weeks with 13 services: {} bytes",
        overview.len()
    );
    assert!(
        overview.len() < 300_000,
        "overview is {} bytes",
        overview.len()
    );
    assert!(overview.contains("120 endpoints in 13 services"));
    let details: Vec<&str> = overview
        .split("<details class=\"service\"")
        .skip(1)
        .map(|d| &d[..d.find("</details>").unwrap()])
        .collect();
    assert_eq!(details.len(), 13);
    // The overview's order: failed and regression first, then
    // insufficient, no baseline, improvement, ok (no accepted changes in
    // this archive).
    let rank = |v: &str| match v {
        "failed" | "regression" => 0,
        "insufficient" => 1,
        "no-baseline" => 2,
        "improvement" => 3,
        "ok" => 5,
        other => panic!("{other}"),
    };
    let attr = |html: &str, name: &str| {
        let start = html.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
        html[start..start + html[start..].find('"').unwrap()].to_string()
    };
    let mut listed = 0;
    let mut previous = 0;
    for d in &details {
        let service = attr(d, "data-verdict");
        let rows: Vec<String> = d
            .split("<tr data-verdict=")
            .skip(1)
            .map(|r| attr(&format!("data-verdict={r}"), "data-verdict"))
            .collect();
        listed += rows.len();
        // The service's verdict is its worst endpoint's.
        let worst = rows.iter().map(|v| rank(v)).min().unwrap();
        assert_eq!(rank(&service), worst, "{service} vs {rows:?}");
        assert!(rank(&service) >= previous, "services worst first");
        previous = rank(&service);
        // Its page exists and lists its endpoints in full.
        let href = attr(d, "href");
        let page = String::from_utf8(site.get(&href).unwrap_or_else(|| panic!("{href}")).to_vec())
            .unwrap();
        assert!(page.len() < 500_000, "{href} is {} bytes", page.len());
        let table = page.split("<table id=\"endpoints\"").nth(1).unwrap();
        let table = &table[..table.find("</table>").unwrap()];
        assert_eq!(
            table.matches("<tr data-verdict=").count(),
            rows.len(),
            "{href}"
        );
        assert_eq!(
            table.matches("<svg class=\"spark\"").count(),
            rows.len(),
            "{href}: sparklines"
        );
        assert!(
            hrefs(table).iter().all(|h| h.starts_with("../")),
            "{href} links from services/"
        );
    }
    assert_eq!(listed, 120);
    assert!(site.get("services/ungrouped.html").is_some());
    // Endpoint pages name their service in the crumbs.
    let first = String::from_utf8(
        site.get(&format!("endpoints/{}.html", ids[0]))
            .unwrap()
            .to_vec(),
    )
    .unwrap();
    assert!(
        first.contains("› <a href=\"../services/service-00.html\">service 00</a> ›"),
        "crumbs"
    );
    // The data names each endpoint's service, and the services.
    let doc: Value = serde_json::from_slice(site.get("data/analysis.json").unwrap()).unwrap();
    assert_eq!(doc["services"].as_array().unwrap().len(), 13);
    assert_eq!(doc["endpoints"][0]["service"], "service 00");
}

/// The history page lists every endpoint's change points, newest first,
/// with links to the endpoint and the onset run, the levels, the change,
/// the direction and the p-value, exactly as `analysis.json` has them; and
/// the environment changes, with old → new values.
#[test]
fn the_history_page_lists_change_points_newest_first() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    // alpha: +50% from run 20; beta: −40% from run 30; gamma: quiet.
    let runs: Vec<Vec<(&str, Vec<f64>)>> = (0..40)
        .map(|i| {
            let wobble = [0.0, 1.0, -1.0, 2.0, -2.0][i % 5];
            let rounds = |level: f64| (0..5).map(|r| level + wobble + r as f64 * 0.5).collect();
            vec![
                ("alpha", rounds(if i < 20 { 100.0 } else { 150.0 })),
                ("beta", rounds(if i < 30 { 200.0 } else { 120.0 })),
                ("gamma", rounds(50.0)),
            ]
        })
        .collect();
    common::write_archive(&archive, &runs);
    for (day, host) in [("2026-03-11", "perf-01"), ("2026-03-12", "perf-02")] {
        std::fs::write(
            archive.join(format!("runs/{day}T0300Z/run.toml")),
            format!("[environment]\nhost = \"{host}\"\n"),
        )
        .unwrap();
    }
    let out = tmp.path().join("site");
    common::build_site(&archive, &out);
    let html = read(&out, "history.html");
    let json: Value = serde_json::from_str(&read(&out, "data/analysis.json")).unwrap();

    let mut expected: Vec<(String, String, String, f64, f64, f64, String)> = Vec::new();
    for e in json["endpoints"].as_array().unwrap() {
        for c in e["change_points"].as_array().unwrap() {
            expected.push((
                c["started_at"].as_str().unwrap().to_string(),
                e["slug"].as_str().unwrap().to_string(),
                c["run"].as_str().unwrap().to_string(),
                c["level_before_ms"].as_f64().unwrap(),
                c["level_after_ms"].as_f64().unwrap(),
                c["change"].as_f64().unwrap(),
                c["direction"].as_str().unwrap().to_string(),
            ));
        }
    }
    expected.sort_by(|a, b| b.0.cmp(&a.0));
    assert_eq!(
        expected
            .iter()
            .map(|e| (e.1.as_str(), e.2.as_str()))
            .collect::<Vec<_>>(),
        [("beta", "2026-04-01T0300Z"), ("alpha", "2026-03-22T0300Z")],
        "the step series have exactly their change points"
    );

    let table = &html[html.find("<table class=\"changepoints").unwrap()..];
    let table = &table[..table.find("</table>").unwrap()];
    let rows: Vec<&str> = table
        .split("<tbody>")
        .nth(1)
        .unwrap()
        .split("<tr>")
        .skip(1)
        .collect();
    assert_eq!(rows.len(), expected.len());
    for (row, (_, slug, run, before, after, change, direction)) in rows.iter().zip(&expected) {
        let links = hrefs(row);
        let onset = format!("runs/{}.html#{slug}", run.to_lowercase());
        // The endpoint, then the suspect range in one cell: the run before
        // the onset, then the onset.
        assert_eq!(links.len(), 3, "{links:?}");
        assert_eq!(links[0], format!("endpoints/{slug}.html"));
        assert!(
            links[1].starts_with("runs/") && links[1] < onset,
            "{links:?}"
        );
        assert_eq!(links[2], onset);
        assert!(row.contains(&format!(">{run}</a>")), "{row}");
        assert!(
            row.contains(&format!("{before:.1} → {after:.1}"))
                || row.contains(&format!("{before:.0} → {after:.0}")),
            "{row}"
        );
        assert!(row.contains(&format!("{:+.1}%", change * 100.0)), "{row}");
        assert!(row.contains(&format!(">{direction}</span>")), "{row}");
        assert!(
            row.contains("e-"),
            "a tiny p-value in scientific notation: {row}"
        );
    }
    // Levels are medians of run medians: 201 → 121 and 101 → 151.
    assert!(
        rows[0].contains("-39.8%") && rows[1].contains("+49.5%"),
        "{rows:?}"
    );
    // Every linked page exists.
    for href in hrefs(table) {
        let path = href.split('#').next().unwrap();
        assert!(out.join(path).is_file(), "{href}");
    }

    // The environment change, and the nav link to the page from every page.
    let env = &html[html.find("<table class=\"env-changes\"").unwrap()..];
    assert!(env.contains(">2026-03-12T0300Z</a>") && env.contains("host perf-01 → perf-02"));
    assert!(read(&out, "index.html").contains("href=\"history.html\">History</a>"));
    assert!(read(&out, "endpoints/alpha.html").contains("href=\"../history.html\">History</a>"));
    // Both markers are on the endpoint chart, and the change point table under it.
    let alpha = read(&out, "endpoints/alpha.html");
    assert!(alpha.contains("class=\"pd-changepoint\" data-run=\"2026-03-22T0300Z\""));
    assert!(alpha.contains("class=\"pd-envchange\" data-run=\"2026-03-12T0300Z\""));
    assert!(alpha.contains("<h2 id=\"change-points\">"));
    assert!(!read(&out, "endpoints/gamma.html").contains("<h2 id=\"change-points\">"));
}

/// The evidence beside an alarm, end to end on a hand-made history:
/// `orders` steps from ~103 to ~134 ms at run 11 (of 14), and every run's
/// round 4 is a 2× GC round. The median policy's alarm is raised at run 11
/// and its runs over the line are 11, 12 and 13.
#[test]
fn alarms_carry_their_evidence_in_the_data_and_on_the_pages() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    common::story_archive(&archive);
    let out = tmp.path().join("site");
    common::build_site(&archive, &out);
    let json: Value = serde_json::from_str(&read(&out, "data/analysis.json")).unwrap();
    let alarm = json["alarms"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["policy"] == "median" && a["endpoint"] == "orders")
        .expect("a median alarm on orders");
    assert_eq!(alarm["run"], "2026-03-13T0300Z");
    let ev = &alarm["evidence"];
    // Run 11's rounds: 130 × 1.02 × [1, 1.02, 0.98, 2, 1.01].
    let close = |v: &Value, x: f64| (v.as_f64().unwrap() - x).abs() < 1e-9;
    assert!(close(&ev["band"]["low"], 132.6 * 0.98), "{ev}");
    assert!(close(&ev["band"]["high"], 132.6 * 2.0), "{ev}");
    assert_eq!(ev["band"]["coverage"], 0.9375);
    assert_eq!(ev["outlier_rounds"].as_array().unwrap().len(), 1);
    assert_eq!(ev["outlier_rounds"][0]["round"], 4);
    // Run medians: window 103.02 105.04 102.01 104.03 101.00 (twice);
    // alarmed 133.926 136.552 132.613. 3 vs 10: [D(4), D(27)] of the 30
    // differences, coverage 1 − 14/286.
    let s = &ev["shift"];
    assert!(close(&s["estimate_ms"], 31.512), "{s}");
    assert!(close(&s["low_ms"], 28.583), "{s}");
    assert!(close(&s["high_ms"], 34.542), "{s}");
    assert!(close(&s["coverage"], 1.0 - 14.0 / 286.0), "{s}");
    assert_eq!(
        (s["alarmed_runs"].as_u64(), s["baseline_runs"].as_u64()),
        (Some(3), Some(10))
    );
    // Each run point carries its own evidence: one run against ten.
    let orders = json["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == "orders")
        .unwrap();
    let p12 = &orders["runs"][12];
    assert_eq!(p12["evidence"]["shift"]["alarmed_runs"], 1);
    assert!(close(
        &p12["evidence"]["shift"]["coverage"],
        1.0 - 2.0 / 11.0
    ));
    assert_eq!(p12["accepted_change"], false);

    // The pages show it: the median alarm's numbers on the endpoint page
    // when median is the default policy, the GC round flagged on the run page.
    let page = read(&out, "endpoints/orders.html");
    if perfdash::analyse::policy::DEFAULT_POLICY.name() == "median" {
        assert!(page.contains("130–265 ms (93.75%)"), "band");
        assert!(page.contains("round 4 (265 ms)"), "GC round");
        assert!(
            page.contains("+31.5 ms [+28.6, +34.5] · 95.1% · 3 vs 10 runs"),
            "shift"
        );
    }
    assert!(page.contains("<h2 id=\"alarms\">"));
    let run = read(&out, "runs/2026-03-14t0300z.html");
    assert!(run.contains("<dl class=\"evidence\">"));
    assert_eq!(
        run.matches(">likely GC/noise</span>").count(),
        1,
        "round 4 of orders only"
    );
    assert!(run.contains("1 vs 10 runs") || run.contains("3 vs 10 runs"));
}
