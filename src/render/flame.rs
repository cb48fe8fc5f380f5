//! Flame graph SVGs drawn with inferno: one per profile, and a differential
//! one against the baseline's profile. Renderers return bytes; nothing here
//! touches the disk.
//!
//! The SVGs keep inferno's built-in JavaScript (click to zoom, Ctrl-F /
//! "Search" to highlight), are deterministic (colours from name hashes, no
//! randomness, no timestamps) and are kept light: frames narrower than
//! `min_width_pct` of the total are left out, and when a graph would still
//! exceed [`MAX_SVG_BYTES`] the minimum width is raised until it fits.
//! Frame names are escaped by inferno's XML writer (`<`, `>`, `&`, quotes).

use std::collections::BTreeMap;

use inferno::flamegraph::color::{BasicPalette, MultiPalette, Palette};
use inferno::flamegraph::{self, Options};

use crate::error::Error;
use crate::profile::Profile;
use crate::profile::classify::strip_annotation;

/// Upper bound for one SVG. A 30 s JVM profile at 0.1% minimum width is
/// typically 0.3–1.5 MB; past 4 MB browsers get sluggish.
pub const MAX_SVG_BYTES: usize = 4 * 1024 * 1024;

/// The largest minimum width tried before giving up on the size bound.
const MAX_MIN_WIDTH_PCT: f64 = 5.0;

/// Fractional weights are scaled by this before drawing (inferno draws
/// integer counts) and scaled back in the labels with inferno's `factor`.
const FRACTION_SCALE: f64 = 1000.0;

/// Draws one profile as an interactive flame graph.
pub fn flame_svg(
    profile: &Profile,
    title: &str,
    subtitle: &str,
    min_width_pct: f64,
) -> Result<Vec<u8>, Error> {
    let scale = if profile.has_fractional_weights() {
        FRACTION_SCALE
    } else {
        1.0
    };
    let lines: Vec<String> = profile
        .stacks
        .iter()
        .filter_map(|(stack, w)| {
            let n = (w * scale).round() as u64;
            (n > 0).then(|| format!("{stack} {n}"))
        })
        .collect();
    render_bounded(&lines, min_width_pct, |opt| {
        opt.title = title.to_string();
        opt.subtitle = Some(subtitle.to_string());
        opt.colors = palette_for(profile);
        opt.count_name = profile.units.clone();
        opt.factor = 1.0 / scale;
    })
}

/// Draws `current` against `baseline` as a differential flame graph: widths
/// are the current profile, colour is the change of each frame (red grew,
/// blue shrank). The baseline is first scaled to the current total, so a
/// longer or shorter capture does not paint everything one colour.
/// Annotation suffixes (`_[j]`, `_[k]`, …) are removed on both sides so the
/// same frame meets itself whichever way each profile was archived.
pub fn diff_svg(
    baseline: &Profile,
    current: &Profile,
    title: &str,
    subtitle: &str,
    min_width_pct: f64,
) -> Result<Vec<u8>, Error> {
    let before = plain_stacks(baseline);
    let after = plain_stacks(current);
    let before_total: f64 = before.values().sum();
    let after_total: f64 = after.values().sum();
    if before_total <= 0.0 || after_total <= 0.0 {
        return Err(Error::Internal(
            "a differential flame graph needs two non-empty profiles".to_string(),
        ));
    }
    let normalise = after_total / before_total;
    let fractional = after
        .values()
        .chain(before.values())
        .any(|w| w.fract() != 0.0)
        || normalise.fract() != 0.0;
    let scale = if fractional { FRACTION_SCALE } else { 1.0 };
    let mut stacks: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    for (stack, w) in &before {
        stacks.entry(stack).or_default().0 = (w * normalise * scale).round() as u64;
    }
    for (stack, w) in &after {
        stacks.entry(stack).or_default().1 = (w * scale).round() as u64;
    }
    // Stacks only in the baseline have no width now; inferno draws widths from
    // the second column, so they cannot appear (the table of grown frames and
    // the category shares account for what shrank).
    let lines: Vec<String> = stacks
        .iter()
        .filter(|(_, (_, a))| *a > 0)
        .map(|(stack, (b, a))| format!("{stack} {b} {a}"))
        .collect();
    render_bounded(&lines, min_width_pct, |opt| {
        opt.title = title.to_string();
        opt.subtitle = Some(subtitle.to_string());
        opt.count_name = current.units.clone();
        opt.factor = 1.0 / scale;
    })
}

/// Stacks with annotation suffixes removed (merging what then coincides).
fn plain_stacks(profile: &Profile) -> BTreeMap<String, f64> {
    let mut out: BTreeMap<String, f64> = BTreeMap::new();
    for (stack, w) in &profile.stacks {
        let plain = stack
            .split(';')
            .map(strip_annotation)
            .collect::<Vec<_>>()
            .join(";");
        *out.entry(plain).or_insert(0.0) += w;
    }
    out
}

/// Renders, raising the minimum width until the SVG fits [`MAX_SVG_BYTES`].
fn render_bounded(
    lines: &[String],
    min_width_pct: f64,
    configure: impl Fn(&mut Options),
) -> Result<Vec<u8>, Error> {
    let mut min_width = min_width_pct.max(0.0);
    loop {
        let mut opt = Options::default();
        opt.deterministic = true;
        opt.min_width = min_width;
        configure(&mut opt);
        if min_width > min_width_pct {
            let note = format!(" (frames under {min_width:.2}% left out to keep the page light)");
            opt.subtitle = Some(opt.subtitle.take().unwrap_or_default() + &note);
        }
        let mut out = Vec::new();
        flamegraph::from_lines(&mut opt, lines.iter().map(String::as_str), &mut out)
            .map_err(|e| Error::Internal(format!("flame graph could not be drawn: {e}")))?;
        if out.len() <= MAX_SVG_BYTES || min_width >= MAX_MIN_WIDTH_PCT {
            return Ok(out);
        }
        min_width = if min_width < 0.1 {
            0.1
        } else {
            (min_width * 2.0).min(MAX_MIN_WIDTH_PCT)
        };
    }
}

/// inferno's Java palette for JVM profiles (green Java, yellow C++, orange
/// kernel), its Python palette for py-spy ones, else the classic hot palette.
fn palette_for(profile: &Profile) -> Palette {
    let mut java = 0usize;
    let mut python = 0usize;
    for stack in profile.stacks.keys().take(500) {
        let leaf = stack.rsplit(';').next().unwrap_or("");
        if stack.contains("java/") || stack.contains("_[j]") || leaf.contains("::") {
            java += 1;
        }
        if stack.contains(".py:") || stack.contains(".py)") {
            python += 1;
        }
    }
    if python > java {
        Palette::Multi(MultiPalette::Python)
    } else if java > 0 {
        Palette::Multi(MultiPalette::Java)
    } else {
        Palette::Basic(BasicPalette::Hot)
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::profile::parse_folded;

    fn profile(text: &str) -> Profile {
        parse_folded(text, Path::new("flame.txt"), "cpu").unwrap()
    }

    const TRICKY: &str = "java/lang/Thread.run;com/acme/Cache.get(Map<String,List<Foo>>);a&b \"quoted\" 'single' 7\n\
                          java/lang/Thread.run;com/acme/Orders.list 3\n";

    #[test]
    fn frame_names_and_titles_are_escaped() {
        let p = profile(TRICKY);
        let svg =
            String::from_utf8(flame_svg(&p, "GET /orders?<x>&y", "cpu <profile>", 0.1).unwrap())
                .unwrap();
        assert!(
            svg.contains("Map&lt;String,List&lt;Foo&gt;&gt;"),
            "generic names escaped"
        );
        assert!(!svg.contains("Map<String"), "no raw < from a frame name");
        assert!(svg.contains("a&amp;b"), "ampersand escaped");
        assert!(!svg.contains("a&b "), "no raw &");
        assert!(
            svg.contains("&quot;quoted&quot; &apos;single&apos;"),
            "quotes escaped"
        );
        assert!(svg.contains("GET /orders?&lt;x&gt;&amp;y"), "title escaped");
        assert!(!svg.contains("<x>"));
        assert!(svg.contains("cpu &lt;profile&gt;"));
        let diff = String::from_utf8(diff_svg(&p, &p, "<t>", "<s>", 0.1).unwrap()).unwrap();
        assert!(diff.contains("Map&lt;String,List&lt;Foo&gt;&gt;"));
        assert!(!diff.contains("Map<String") && !diff.contains("<t>") && !diff.contains("<s>"));
    }

    #[test]
    fn rendering_is_deterministic_and_interactive() {
        let p = profile(TRICKY);
        let a = flame_svg(&p, "t", "s", 0.1).unwrap();
        let b = flame_svg(&p, "t", "s", 0.1).unwrap();
        assert_eq!(a, b);
        let svg = String::from_utf8(a).unwrap();
        assert!(
            svg.contains("function search") || svg.contains("search("),
            "search script embedded"
        );
        assert!(svg.contains("zoom"), "zoom script embedded");
        assert!(svg.contains("total_samples=\"10\""));
    }

    #[test]
    fn fractional_weights_keep_their_totals() {
        let p = profile("a;b 1.25\na;c 2.5\n");
        let svg = String::from_utf8(flame_svg(&p, "t", "s", 0.0).unwrap()).unwrap();
        assert!(
            svg.contains("total_samples=\"3750\""),
            "scaled by 1000 for drawing"
        );
        // Labels are scaled back (3.75 samples, which inferno rounds for display).
        assert!(
            svg.contains("<title>all (4 samples, 100%)</title>"),
            "{}",
            &svg[svg.len() - 600..]
        );
    }

    #[test]
    fn narrow_frames_are_left_out() {
        let mut text = String::from("main;hot 100000\n");
        for i in 0..50 {
            text.push_str(&format!("main;cold{i} 1\n"));
        }
        let p = profile(&text);
        let light = String::from_utf8(flame_svg(&p, "t", "s", 0.1).unwrap()).unwrap();
        let full = String::from_utf8(flame_svg(&p, "t", "s", 0.0).unwrap()).unwrap();
        assert!(!light.contains("cold7"));
        assert!(full.contains("cold7"));
        assert!(light.len() < full.len());
    }

    #[test]
    fn differential_colours_growth_red_and_shrinkage_blue() {
        // Baseline 100 samples, current 200: normalised, `b` doubled its share, `c` halved.
        let before = profile("m;b 25\nm;c 50\nm;d 25\n");
        let after = profile("m;b 100\nm;c 50\nm;d 50\n");
        let svg = String::from_utf8(diff_svg(&before, &after, "t", "s", 0.0).unwrap()).unwrap();
        let fill_of = |name: &str| {
            let g = svg
                .split("<g>")
                .find(|g| g.contains(&format!("<title>{name} (")))
                .unwrap();
            let at = g.find("fill=\"").unwrap() + 6;
            g[at..at + g[at..].find('"').unwrap()].to_string()
        };
        let rgb = |s: String| -> (u8, u8, u8) {
            let v: Vec<u8> = s
                .trim_start_matches("rgb(")
                .trim_end_matches(')')
                .split(',')
                .map(|x| x.parse().unwrap())
                .collect();
            (v[0], v[1], v[2])
        };
        let (r, g, b) = rgb(fill_of("b"));
        assert!(
            r == 255 && g < 255 && b < 255,
            "b grew: red, got {r},{g},{b}"
        );
        let (r, g, b) = rgb(fill_of("c"));
        assert!(
            b == 255 && r < 255 && g < 255,
            "c shrank: blue, got {r},{g},{b}"
        );
        let (r, g, b) = rgb(fill_of("d"));
        assert!(
            r == g && g == b && r > 200,
            "d unchanged: near-white grey, got {r},{g},{b}"
        );
    }
}
