//! The bundled demo's flame pages against a hand computation (issues 21.4
//! and 17.4): on the price-quote regression the first row of "frames that
//! grew" is the frame with the largest inclusive growth, the attribution
//! line names it, the differential graph colours it red and its tooltip
//! gives the same numbers; no tooltip or table anywhere shows a change
//! above 100 points.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use perfdash::analyse::{Analysis, analyse};
use perfdash::config::ProfileSettings;
use perfdash::ingest::load_archive;
use perfdash::profile::{Category, Classifier};
use perfdash::render::context::Ctx;
use perfdash::render::flame_pages::render_flame_pages;
use perfdash::render::{Site, Slugs};

fn archive_root() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("archive")
}

fn demo() -> Analysis {
    let loaded = load_archive(&archive_root()).expect("the bundled archive loads");
    analyse(&loaded.archive, loaded.diagnostics)
}

/// Inclusive busy share of every frame, in percent, computed straight from
/// an archive file: each `stack count` line, idle stacks left out, each
/// frame counted once per stack.
fn inclusive_shares(source: &str, classifier: &Classifier) -> BTreeMap<String, f64> {
    let text = std::fs::read_to_string(archive_root().join(source))
        .unwrap_or_else(|e| panic!("{source}: {e}"));
    let mut weights: BTreeMap<String, f64> = BTreeMap::new();
    let mut busy = 0.0;
    for line in text.lines() {
        let (stack, count) = line.rsplit_once(' ').expect("stack count");
        let count: f64 = count.parse().expect("count");
        if classifier.classify_stack(stack) == Category::IdleWait {
            continue;
        }
        busy += count;
        let frames: BTreeSet<&str> = stack.split(';').collect();
        for frame in frames {
            // The demo's JVM frames carry no lines, directories or serials:
            // normalisation leaves them as they are.
            assert!(!frame.contains(".py") && !frame.contains("$$Lambda"));
            *weights.entry(frame.to_string()).or_insert(0.0) += count;
        }
    }
    weights
        .into_iter()
        .map(|(f, w)| (f, 100.0 * w / busy))
        .collect()
}

/// Every `X% → Y%, ±N.NN pts` of every `<title>` of an SVG: (X, Y, N, title).
fn tooltip_changes(svg: &str) -> Vec<(f64, f64, f64, String)> {
    let mut out = Vec::new();
    for title in svg.split("<title>").skip(1) {
        let title = &title[..title.find("</title>").unwrap()];
        let mut rest = title;
        while let Some(end) = rest.find(" pts") {
            let comma = rest[..end].rfind(", ").unwrap();
            let delta: f64 = rest[comma + 2..end].parse().unwrap();
            let (from, to) = rest[..comma].rsplit_once(" → ").unwrap();
            let number = |s: &str| -> f64 {
                let word = s.rsplit(' ').next().unwrap();
                word.trim_end_matches('%').parse().unwrap()
            };
            out.push((number(from), number(to), delta, title.to_string()));
            rest = &rest[end + 4..];
        }
    }
    out
}

#[test]
fn demo_differential_numbers_match_a_hand_computation() {
    let analysis = demo();
    let classifier = Classifier::new(&ProfileSettings::default()).unwrap();
    let mut site = Site::default();
    let slugs = Slugs::new(&analysis);
    render_flame_pages(&Ctx::new(&analysis, &slugs), &mut site).unwrap();

    // Everywhere: tables and tooltips stay within ±100 points, and each
    // tooltip's change is its after minus its before.
    let mut tooltips = 0;
    for (path, bytes) in site.files() {
        if !path.ends_with(".diff.svg") {
            continue;
        }
        let svg = std::str::from_utf8(bytes).unwrap();
        for (before, after, delta, title) in tooltip_changes(svg) {
            assert!(delta.abs() <= 100.0, "{path}: {title}");
            assert!((after - before - delta).abs() < 0.011, "{path}: {title}");
            tooltips += 1;
        }
    }
    assert!(tooltips > 1000, "{tooltips} tooltips checked");
    for e in &analysis.endpoints {
        for p in &e.points {
            for pa in &p.profiles {
                for g in &pa.grown_frames {
                    assert!(g.total_delta_pts().abs() <= 100.0, "{g:?}");
                    assert!(g.self_delta_pts().abs() <= 100.0, "{g:?}");
                }
            }
        }
    }

    // The price-quote regression: every attributed run.
    let e = analysis
        .endpoints
        .iter()
        .find(|e| e.id == "price-quote")
        .unwrap();
    let slugs = Slugs::new(&analysis);
    let mut attributed = 0;
    for p in &e.points {
        for pa in p.profiles.iter().filter(|pa| pa.attribution.is_some()) {
            let b = pa.baseline.as_ref().unwrap();
            let before = inclusive_shares(&b.source, &classifier);
            let after = inclusive_shares(&pa.source, &classifier);
            let names: BTreeSet<&String> = before.keys().chain(after.keys()).collect();
            let growth = |f: &str| {
                after.get(f).copied().unwrap_or(0.0) - before.get(f).copied().unwrap_or(0.0)
            };
            let top = names
                .iter()
                .copied()
                .max_by(|x, y| growth(x).total_cmp(&growth(y)))
                .unwrap();
            assert_eq!(top, "com/acme/pricing/DiscountRules.forLine", "{}", p.run);

            // analysis.json's first grown frame, with the same numbers.
            let first = &pa.grown_frames[0];
            assert_eq!(&first.frame, top);
            assert!((first.total_delta_pts() - growth(top)).abs() < 1e-9);
            assert!(
                (first.total_before_pct - before.get(top).copied().unwrap_or(0.0)).abs() < 1e-9
            );
            assert!((first.total_after_pct - after[top]).abs() < 1e-9);

            // The page: first row, its total change, the attribution line.
            let base = format!(
                "flame/{}/{}.{}",
                slugs.endpoint(&e.id),
                slugs.run(&p.run),
                pa.kind
            );
            let page = std::str::from_utf8(site.get(&format!("{base}.html")).unwrap()).unwrap();
            let table = &page[page
                .find("<table class=\"sortable grown-frames\">")
                .unwrap()..];
            let row = &table[table.find("<tbody>").unwrap()..];
            // Long names carry break opportunities (`<wbr>`) so that they wrap.
            let row = row[..row.find("</tr>").unwrap()].replace("<wbr>", "");
            assert!(row.contains(&format!("<code>{top}</code>")), "{row}");
            assert!(
                row.contains(&format!("<td class=\"num\">{:+.1}</td>", growth(top))),
                "{row}"
            );
            let line = &page[page.find("Attribution: ").unwrap()..];
            let line = &line[..line.find("</strong>").unwrap()];
            assert!(
                line.starts_with(&format!(
                    "Attribution: code regression: DiscountRules.forLine {:+.1} pts",
                    growth(top)
                )),
                "{line}"
            );

            // The differential graph: the same numbers in its tooltip, in red.
            let svg = std::str::from_utf8(site.get(&format!("{base}.diff.svg")).unwrap()).unwrap();
            let g = svg
                .split("<g>")
                .find(|g| g.contains(&format!("<title>{top} (")))
                .unwrap();
            assert!(
                g.contains(&format!(
                    "total {:.2}% → {:.2}%, {:+.2} pts;",
                    before.get(top).copied().unwrap_or(0.0),
                    after[top],
                    growth(top)
                )),
                "{g}"
            );
            let fill = &g[g.find("fill=\"rgb(").unwrap() + 10..];
            let rgb: Vec<u8> = fill[..fill.find(')').unwrap()]
                .split(',')
                .map(|v| v.trim().parse().unwrap())
                .collect();
            assert!(rgb[0] == 255 && rgb[1] < 180 && rgb[2] < 180, "{rgb:?}");
            attributed += 1;
        }
    }
    assert!(
        attributed >= 1,
        "the price-quote regression has attributed runs"
    );
}

/// The profiles one load reads share each stack's string (issue 18: at
/// 120 endpoints × 156 weeks the repeats were a fifth of a build's peak
/// heap, twice over with their comparable forms): a stack in two runs'
/// profiles is one allocation, and so is the comparable form of a stack
/// normalising left as it was. Output tests cannot see this; memory can.
#[test]
fn the_profiles_of_one_load_share_their_stacks() {
    let loaded = load_archive(&archive_root()).expect("the bundled archive loads");
    let profiles: Vec<&perfdash::profile::Profile> = loaded
        .archive
        .runs
        .iter()
        .flat_map(|r| r.endpoints.values())
        .flat_map(|e| e.profiles.iter().map(|p| &*p.profile))
        .collect();
    assert!(profiles.len() > 10, "the demo has profiles");
    let mut first_seen: BTreeMap<&str, &std::sync::Arc<str>> = BTreeMap::new();
    let (mut repeats, mut shared) = (0, 0);
    for p in &profiles {
        for stack in p.stacks.keys() {
            match first_seen.get(&**stack) {
                Some(first) => {
                    repeats += 1;
                    shared += usize::from(std::sync::Arc::ptr_eq(first, stack));
                }
                None => {
                    first_seen.insert(stack, stack);
                }
            }
        }
    }
    assert!(repeats > 100, "stacks recur across runs: {repeats}");
    assert_eq!(
        shared, repeats,
        "every repeated stack is the first one's string"
    );

    let classifier = Classifier::new(&ProfileSettings::default()).unwrap();
    let p = profiles[0];
    let comparable =
        perfdash::profile::compare::Comparable::new(p, &classifier, classifier.normalisation());
    let reused = comparable
        .stacks
        .keys()
        .filter(|s| {
            p.stacks
                .get_key_value(&***s)
                .is_some_and(|(k, _)| std::sync::Arc::ptr_eq(k, s))
        })
        .count();
    let unchanged = comparable
        .stacks
        .keys()
        .filter(|s| p.stacks.contains_key(&***s))
        .count();
    assert!(unchanged > 0);
    assert_eq!(
        reused, unchanged,
        "an unchanged stack is the profile's string"
    );
}
