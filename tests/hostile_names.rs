//! Names from data never become code. An archive whose endpoint names,
//! run ids, round labels and run notes are HTML/JS payloads is built, and
//! every page and SVG of the site is PARSED (html5ever, via `scraper`, the
//! same tree-building rules a browser uses, so a payload that would run in
//! a browser shows up here as an element or attribute) and walked element
//! by element. CSV cells and file names are checked too.

mod common;

use std::path::Path;

use assert_cmd::Command;
use scraper::{Html, Node};

const SCRIPT: &str = "<script>alert(1)</script>";
const IMG: &str = "<img src=x onerror=alert(1)>";

/// Elements a static perfdash page never needs and a payload would use.
const FORBIDDEN_ELEMENTS: &[&str] = &[
    "img",
    "iframe",
    "object",
    "embed",
    "frame",
    "frameset",
    "base",
    "applet",
    "form",
    "foreignobject",
];

/// The hostile archive. Folder names cannot hold `/`, so the folder-name
/// variant of the script payload is the unclosed `<script>alert(1)`
/// (just as dangerous: it would swallow the rest of the page); the full
/// payloads come in through perfdash.toml display names and run.toml.
fn hostile_archive(root: &Path) {
    let endpoints = [
        "orders",
        "inventory",
        "<script>alert(1)",
        IMG,
        "=1+2",
        "@SUM(A1)",
        "-2+3",
        "javascript:alert(1)",
    ];
    // A step after the third run, so that every endpoint has a change
    // point (chart marker, history page) carrying its hostile name.
    let runs: Vec<Vec<(&str, Vec<f64>)>> = (0..6)
        .map(|i| {
            endpoints
                .iter()
                .map(|e| {
                    let level = if i < 3 { 100.0 } else { 160.0 };
                    (*e, (0..5).map(|r| level + (i + r) as f64 * 0.5).collect())
                })
                .collect()
        })
        .collect();
    common::write_archive(root, &runs);
    std::fs::write(
        root.join("perfdash.toml"),
        format!(
            "[endpoints.orders]\nname = {SCRIPT:?}\n[endpoints.inventory]\nname = {IMG:?}\n\
             [endpoints.\"=1+2\"]\nname = \"=HYPERLINK(\\\"http://evil\\\")\"\n"
        ),
    )
    .unwrap();
    let run = root.join("runs/2026-03-07T0300Z");
    std::fs::write(
        run.join("run.toml"),
        format!(
            "notes = \"{SCRIPT} and {IMG}\"\ncommit = {SCRIPT:?}\nbranch = {IMG:?}\n\
             release = \"javascript:alert(1)\"\n{IMG:?} = {SCRIPT:?}\n\
             [environment]\n\"<b onmouseover=alert(6)>\" = \"<script>alert(6)</script>\"\n"
        ),
    )
    .unwrap();
    // An environment change (chart marker, lists) with payloads as key and value.
    std::fs::write(
        root.join("runs/2026-03-06T0300Z/run.toml"),
        "[environment]\n\"<b onmouseover=alert(6)>\" = \"plain\"\n",
    )
    .unwrap();
    // A frame name (a folded profile of `orders`), with alert(2) so that
    // the check below can tell it was rendered.
    std::fs::write(
        run.join("orders/flame.folded"),
        format!("main;{SCRIPT};<img src=x onerror=alert(2)> 70\nmain;java.lang.Thread.run 30\n"),
    )
    .unwrap();
    // A tag value: a run-level k6 NDJSON round split by the `name` tag.
    let tagged = root.join("runs/2026-03-09T0300Z");
    std::fs::create_dir_all(&tagged).unwrap();
    for n in 1..=5 {
        let mut ndjson = String::from(
            "{\"type\":\"Metric\",\"data\":{\"name\":\"http_req_duration\",\"type\":\"trend\",\"contains\":\"time\"},\"metric\":\"http_req_duration\"}\n",
        );
        for s in 0..60 {
            ndjson.push_str(&format!(
                "{{\"metric\":\"http_req_duration\",\"type\":\"Point\",\"data\":{{\"time\":\"2026-03-09T03:{:02}:{s:02}Z\",\"value\":{}.5,\"tags\":{{\"name\":{:?},\"expected_response\":\"true\",\"status\":\"200\"}}}}}}\n",
                n,
                100 + s,
                "<img src=x onerror=alert(3)>"
            ));
        }
        std::fs::write(tagged.join(format!("round-{n}.ndjson")), ndjson).unwrap();
    }
    // A triage note on the last run.
    std::fs::create_dir_all(root.join("triage")).unwrap();
    std::fs::write(
        root.join("triage/x.toml"),
        "run = \"2026-03-07T0300Z\"\nendpoint = \"orders\"\nlabel = \"noise\"\n\
         note = \"<script>alert(4)</script> <img src=x onerror=alert(4)>\"\n\
         author = \"<img src=x onerror=alert(5)>\"\ndate = 2026-03-08\n",
    )
    .unwrap();
    // A run id and a round label carrying the payload.
    let hostile_run = root.join(format!("runs/2026-03-08T0300Z{IMG}"));
    std::fs::create_dir_all(hostile_run.join("orders")).unwrap();
    for n in 1..=5 {
        std::fs::write(
            hostile_run.join(format!("orders/round-{n}.{IMG}.json")),
            common::k6_summary(150.0),
        )
        .unwrap();
    }
}

struct Finding(String);

fn is_dangerous_url(value: &str) -> bool {
    // Browsers ignore whitespace and control characters inside the scheme.
    let squeezed: String = value
        .chars()
        .filter(|c| !c.is_whitespace() && !c.is_control())
        .collect::<String>()
        .to_ascii_lowercase();
    ["javascript:", "vbscript:", "data:text/html"]
        .iter()
        .any(|s| squeezed.starts_with(s))
}

/// Walks every element of a parsed document and lists what must not be
/// there.
fn audit_dom(path: &str, doc: &Html) -> Vec<Finding> {
    let mut out = Vec::new();
    for node in doc.tree.nodes() {
        let Node::Element(el) = node.value() else {
            continue;
        };
        let name = el.name().to_ascii_lowercase();
        if name == "script" {
            let text: String = node
                .descendants()
                .filter_map(|d| d.value().as_text().map(|t| t.to_string()))
                .collect();
            let own_app_js = el.attr("src").is_some_and(|s| s.ends_with("static/app.js"))
                && text.trim().is_empty();
            // Embedded data is allowed only as inert JSON with every `<`
            // escaped, so no `</script>` can end it early.
            let inert_json = el.attr("src").is_none()
                && el.attr("type") == Some("application/json")
                && !text.contains('<')
                && serde_json::from_str::<serde_json::Value>(&text).is_ok();
            // inferno's interactive flame graph (an .svg of its own, shown
            // through <object>) carries inferno's static script; data may
            // never reach it, so no payload marker may appear inside.
            let inferno_svg = path.ends_with(".svg")
                && el.attr("type") == Some("text/ecmascript")
                && text.contains("function init(evt)")
                && !text.contains("alert(");
            if !own_app_js && !inert_json && !inferno_svg {
                out.push(Finding(format!(
                    "{path}: <script> {:?} {text:?}",
                    el.attrs().collect::<Vec<_>>()
                )));
            }
        }
        // The flame page embeds the site's own flame SVG: a relative .svg.
        let own_svg_object = name == "object"
            && el
                .attr("data")
                .is_some_and(|d| d.ends_with(".svg") && !d.contains(':'));
        if FORBIDDEN_ELEMENTS.contains(&name.as_str()) && !own_svg_object {
            out.push(Finding(format!("{path}: <{name}> element")));
        }
        if name == "meta" && el.attr("http-equiv").is_some() {
            out.push(Finding(format!("{path}: <meta http-equiv>")));
        }
        for (attr, value) in el.attrs() {
            let attr = attr.to_ascii_lowercase();
            // inferno's root <svg onload="init(evt)">, fixed text.
            let inferno_onload =
                path.ends_with(".svg") && name == "svg" && attr == "onload" && value == "init(evt)";
            if attr.starts_with("on") && !inferno_onload {
                out.push(Finding(format!("{path}: <{name} {attr}={value:?}>")));
            }
            if matches!(
                attr.as_str(),
                "href"
                    | "src"
                    | "xlink:href"
                    | "action"
                    | "formaction"
                    | "data"
                    | "poster"
                    | "srcdoc"
            ) && is_dangerous_url(value)
            {
                out.push(Finding(format!("{path}: <{name} {attr}={value:?}>")));
            }
            if attr == "style" && value.to_ascii_lowercase().contains("url(") {
                out.push(Finding(format!("{path}: <{name} style={value:?}>")));
            }
        }
    }
    out
}

fn visible_text(doc: &Html) -> String {
    doc.tree
        .nodes()
        .filter_map(|n| n.value().as_text().map(|t| t.to_string()))
        .collect()
}

#[test]
fn hostile_names_never_become_markup_and_files_stay_inside_the_site() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    hostile_archive(&archive);
    let out = tmp.path().join("site");
    let assert = Command::cargo_bin("perfdash")
        .unwrap()
        .args(["build", "--archive"])
        .arg(&archive)
        .arg("--out")
        .arg(&out)
        .assert();
    let output = assert.get_output();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );

    let files = common::tree(&out);
    let mut findings = Vec::new();
    let mut all_text = String::new();
    let (mut pages, mut svgs, mut csvs) = (0, 0, 0);
    for (rel, bytes) in &files {
        // File names: plain, lower-case, inside the site.
        assert!(
            rel.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "/.-_".contains(c)),
            "unsafe file name {rel:?}"
        );
        assert!(
            Path::new(rel)
                .components()
                .all(|c| matches!(c, std::path::Component::Normal(_))),
            "{rel:?}"
        );
        assert!(
            out.join(rel)
                .canonicalize()
                .unwrap()
                .starts_with(out.canonicalize().unwrap())
        );

        let text = String::from_utf8_lossy(bytes);
        if rel.ends_with(".html") {
            pages += 1;
            let doc = Html::parse_document(&text);
            all_text.push_str(&visible_text(&doc));
            findings.extend(audit_dom(rel, &doc));
        } else if rel.ends_with(".svg") {
            svgs += 1;
            let doc = Html::parse_document(&text);
            all_text.push_str(&visible_text(&doc));
            findings.extend(audit_dom(rel, &doc));
        } else if rel.ends_with(".csv") {
            csvs += 1;
            let mut reader = csv::ReaderBuilder::new()
                .has_headers(false)
                .from_reader(bytes.as_slice());
            for record in reader.records() {
                for cell in record.unwrap().iter() {
                    if cell.starts_with(['=', '+', '-', '@', '\t', '\r']) {
                        findings.push(Finding(format!("{rel}: CSV formula cell {cell:?}")));
                    }
                }
            }
        } else if rel.ends_with(".json") {
            serde_json::from_slice::<serde_json::Value>(bytes)
                .unwrap_or_else(|e| panic!("{rel} is not valid JSON: {e}"));
        }
    }
    let report: Vec<&str> = findings.iter().map(|f| f.0.as_str()).collect();
    assert!(report.is_empty(), "injected markup:\n{}", report.join("\n"));

    // The test is only worth something if the payloads were rendered, as text.
    assert!(
        pages >= 10 && svgs >= 1 && csvs >= 8,
        "{pages} pages, {svgs} svgs, {csvs} csvs"
    );
    for payload in [
        SCRIPT,
        IMG,
        "<script>alert(1)",
        "=HYPERLINK",
        "javascript:alert(1)",
        "<img src=x onerror=alert(2)>", // frame name
        "<script>alert(4)</script>",    // triage note
        "<b onmouseover=alert(6)>",     // environment key
        "<script>alert(6)</script>",    // environment value
    ] {
        assert!(
            all_text.contains(payload),
            "{payload:?} is shown as text somewhere"
        );
    }

    // Every endpoint stepped up, so the history page lists change points
    // under the hostile display names, as text.
    let history = files
        .iter()
        .find(|(p, _)| p == "history.html")
        .map(|(_, b)| visible_text(&Html::parse_document(&String::from_utf8_lossy(b))))
        .expect("history.html");
    assert!(
        history.contains(SCRIPT) && history.contains("<b onmouseover=alert(6)>"),
        "{history}"
    );

    // A tag value becomes an endpoint id through the slug rule (unless
    // [raw.tags] maps it), so the raw value never reaches a page; the
    // endpoint it names must still be there.
    assert!(
        files
            .iter()
            .any(|(p, _)| p == "endpoints/img-src-x-onerror-alert-3.html"),
        "the tag-value endpoint was built: {:?}",
        files
            .iter()
            .map(|(p, _)| p)
            .filter(|p| p.starts_with("endpoints/"))
            .collect::<Vec<_>>()
    );

    // Nothing was written beside the site (no stray temp folders, no
    // file escaping through a name) but the round cache, which lives
    // beside the output by design.
    let mut siblings: Vec<String> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != ".perfdash-cache")
        .collect();
    siblings.sort();
    assert_eq!(siblings, ["archive", "site"]);
}

#[test]
fn the_audit_catches_what_it_looks_for() {
    // The checker itself must fail on injected markup, or the test above
    // proves nothing.
    let bad = format!(
        "<html><body><p>{SCRIPT}</p>{IMG}<a href=' java\tscript:alert(1)'>x</a>\
         <svg><a xlink:href='javascript:alert(1)'><circle onclick='x()'/></a></svg>\
         <script type='application/json'>{{\"a\":\"</p>\"}}</script></body></html>"
    );
    let findings = audit_dom("t.html", &Html::parse_document(&bad));
    let text: Vec<String> = findings.into_iter().map(|f| f.0).collect();
    assert!(text.iter().any(|f| f.contains("<script>")), "{text:?}");
    assert!(text.iter().any(|f| f.contains("<img> element")), "{text:?}");
    assert!(text.iter().any(|f| f.contains("onerror")), "{text:?}");
    // html5ever reports the SVG `xlink:href` by its local name, `href`.
    assert_eq!(
        text.iter().filter(|f| f.contains("<a href=")).count(),
        2,
        "{text:?}"
    );
    assert!(text.iter().any(|f| f.contains("onclick")), "{text:?}");
    assert_eq!(
        text.iter().filter(|f| f.contains("<script>")).count(),
        2,
        "{text:?}"
    );
    let good = "<html><head><script src=\"../static/app.js\" defer></script>\
                <script type=\"application/json\">{\"a\":\"\\u003c/script>\"}</script></head></html>";
    assert!(audit_dom("g.html", &Html::parse_document(good)).is_empty());
}
