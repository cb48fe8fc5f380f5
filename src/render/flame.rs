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
//!
//! The differential graph is not inferno's own: inferno colours a frame by
//! the change of its *self* weight (so a function whose callees grew stays
//! white) and prints the change of a fractional profile 1000× too large
//! (`+14106.94%`: the scale it was given for fractional weights is not
//! divided back out of the change). perfdash draws the current busy
//! profile, colours every frame by the change of its *total* share (the
//! same numbers as the "frames that grew" table) and writes the tooltips
//! itself.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use inferno::flamegraph::color::{BasicPalette, Color, MultiPalette, Palette, PaletteMap};
use inferno::flamegraph::{self, Options};

use crate::error::Error;
use crate::profile::compare::{Comparable, FrameGrowth, frame_changes_and_largest};
use crate::profile::{Profile, Stack, format_weight};

/// Upper bound for one SVG. A 30 s JVM profile at 0.1% minimum width is
/// typically 0.3–1.5 MB; past 4 MB browsers get sluggish.
pub const MAX_SVG_BYTES: usize = 4 * 1024 * 1024;

/// The largest minimum width tried before giving up on the size bound.
const MAX_MIN_WIDTH_PCT: f64 = 5.0;

/// Fractional weights are scaled by this before drawing (inferno draws
/// integer counts) and scaled back in the labels with inferno's `factor`.
const FRACTION_SCALE: f64 = 1000.0;

/// The smallest colour scale of the differential graph, in points: changes
/// under the attribution threshold's order stay pale, so noise is not
/// painted bright red.
const MIN_COLOUR_SCALE_PTS: f64 = 5.0;

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
    render_bounded(&profile.stacks, scale, min_width_pct, None, |opt| {
        opt.title = title.to_string();
        opt.subtitle = Some(subtitle.to_string());
        opt.colors = palette_for(&profile.stacks);
        opt.count_name = profile.units.clone();
        opt.factor = 1.0 / scale;
    })
}

/// `stack weight` lines, weights scaled to integers.
fn scaled_lines(stacks: &BTreeMap<Stack, f64>, scale: f64) -> Vec<String> {
    stacks
        .iter()
        .filter_map(|(stack, w)| {
            let n = (w * scale).round() as u64;
            (n > 0).then(|| format!("{stack} {n}"))
        })
        .collect()
}

/// The colour scale of a differential graph, in points: the largest change
/// of a frame's total share drawn, rounded up to 5, 10, 15, 20, 25, 30, 40,
/// 50, 75 or 100 (at least `MIN_COLOUR_SCALE_PTS`). The page's legend
/// shows it.
pub fn diff_scale_pts(baseline: &Comparable, current: &Comparable) -> f64 {
    FlameDiff::new(baseline, current).scale_pts()
}

/// The colour scale for `largest`, the largest change of a drawn frame's
/// total share (absolute, points).
fn scale_for(largest: f64) -> f64 {
    [5.0, 10.0, 15.0, 20.0, 25.0, 30.0, 40.0, 50.0, 75.0, 100.0]
        .into_iter()
        .find(|&step| step >= largest.max(MIN_COLOUR_SCALE_PTS))
        .unwrap_or(100.0)
}

/// A profile against its baseline, as the differential graph draws it:
/// every frame's change
/// ([`frame_changes`](crate::profile::compare::frame_changes)) and the
/// colour scale, computed once for the page's legend and the SVG.
pub struct FlameDiff<'a> {
    baseline: &'a Comparable,
    current: &'a Comparable,
    changes: BTreeMap<String, FrameGrowth>,
    scale_pts: f64,
}

impl<'a> FlameDiff<'a> {
    pub fn new(baseline: &'a Comparable, current: &'a Comparable) -> FlameDiff<'a> {
        // The frames drawn are the current profile's.
        let (changes, largest) = frame_changes_and_largest(baseline, current);
        let scale_pts = scale_for(largest);
        FlameDiff {
            baseline,
            current,
            changes,
            scale_pts,
        }
    }

    /// [`diff_scale_pts`].
    pub fn scale_pts(&self) -> f64 {
        self.scale_pts
    }

    /// [`diff_svg`].
    pub fn svg(&self, title: &str, subtitle: &str, min_width_pct: f64) -> Result<Vec<u8>, Error> {
        let (baseline, current, changes) = (self.baseline, self.current, &self.changes);
        if baseline.total <= 0.0 || current.stacks.is_empty() {
            return Err(Error::Internal(
                "a differential flame graph needs two non-empty profiles".to_string(),
            ));
        }
        let mut palette = PaletteMap::default();
        for (name, g) in changes {
            let (r, g, b) = change_colour(g.total_delta_pts(), self.scale_pts);
            palette.insert(name, Color { r, g, b });
        }
        let fractional = current.stacks.values().any(|w| w.fract() != 0.0);
        let scale = if fractional { FRACTION_SCALE } else { 1.0 };
        let drawn_total: f64 = current.stacks.values().sum();
        let svg = render_bounded(
            &current.stacks,
            scale,
            min_width_pct,
            Some(&mut palette),
            |opt| {
                opt.title = title.to_string();
                opt.subtitle = Some(subtitle.to_string());
                opt.count_name = current.units.clone();
                opt.factor = 1.0 / scale;
            },
        )?;
        Ok(rewrite_titles(&svg, |title| {
            diff_title(title, changes, current, drawn_total)
        }))
    }
}

/// The fill of a frame whose total share changed by `delta` points on a
/// scale of ±`scale` points: white at 0, red for growth, blue for shrinkage,
/// full colour at the scale's end (inferno's differential hues).
pub fn change_colour(delta: f64, scale: f64) -> (u8, u8, u8) {
    let t = if scale > 0.0 {
        (delta.abs() / scale).min(1.0)
    } else {
        0.0
    };
    let c = (250.0 - 150.0 * t).round() as u8;
    if delta > 0.0 {
        (255, c, c)
    } else if delta < 0.0 {
        (c, c, 255)
    } else {
        (250, 250, 250)
    }
}

/// Draws `current` against `baseline` as a differential flame graph: widths
/// are the current profile's busy stacks; each frame's colour is the change
/// of its total share (every stack that passes through it, in percent of
/// each profile's busy weight) on the scale [`diff_scale_pts`] gives; each
/// tooltip gives the frame's width here and its total and self shares
/// before and after. Both profiles are compared as [`Comparable`]s: idle
/// left out, frame names normalised.
pub fn diff_svg(
    baseline: &Comparable,
    current: &Comparable,
    title: &str,
    subtitle: &str,
    min_width_pct: f64,
) -> Result<Vec<u8>, Error> {
    FlameDiff::new(baseline, current).svg(title, subtitle, min_width_pct)
}

/// A differential tooltip, from inferno's `name (N units, P%)`: this frame's
/// width here, then the frame's total and self shares (all its places)
/// before → after: `q (100 samples, 62.50% of busy samples; total 25.00% →
/// 62.50%, +37.50 pts; self 10.00% → 25.00%, +15.00 pts)`.
fn diff_title(
    inferno_title: &str,
    changes: &BTreeMap<String, FrameGrowth>,
    current: &Comparable,
    drawn_total: f64,
) -> Option<String> {
    let inner = inferno_title.strip_suffix(')')?;
    let open = inner.rfind(" (")?;
    let (name, counts) = (&inner[..open], &inner[open + 2..]);
    let pct: f64 = counts
        .rsplit(", ")
        .next()?
        .strip_suffix('%')?
        .parse()
        .ok()?;
    let busy = if current.idle_excluded { "busy " } else { "" };
    if name == "all" && !changes.contains_key("all") {
        return Some(format!(
            "all ({} {}{})",
            format_weight(current.total),
            busy,
            current.units
        ));
    }
    let width = pct / 100.0 * drawn_total;
    let here = if current.total > 0.0 {
        100.0 * width / current.total
    } else {
        0.0
    };
    let g = changes.get(name)?;
    // One trailing parenthesis holds every number: inferno's script labels
    // a frame with its title minus the last `(…)`, so nothing else may
    // follow the name.
    Some(format!(
        "{name} ({} {}, {here:.2}% of {busy}{}; total {:.2}% → {:.2}%, {:+.2} pts; self {:.2}% → {:.2}%, {:+.2} pts)",
        format_weight(width),
        current.units,
        current.units,
        g.total_before_pct,
        g.total_after_pct,
        g.total_delta_pts(),
        g.self_before_pct,
        g.self_after_pct,
        g.self_delta_pts(),
    ))
}

/// Replaces the text of every `<title>` element of an inferno SVG with
/// `rewrite(text)` (text unescaped, result escaped), keeping it when
/// `rewrite` gives `None`.
fn rewrite_titles(svg: &[u8], rewrite: impl Fn(&str) -> Option<String>) -> Vec<u8> {
    const OPEN: &str = "<title>";
    const CLOSE: &str = "</title>";
    let text = String::from_utf8_lossy(svg);
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    let mut rest: &str = &text;
    while let Some(start) = rest.find(OPEN) {
        let body_at = start + OPEN.len();
        let Some(len) = rest[body_at..].find(CLOSE) else {
            break;
        };
        out.push_str(&rest[..body_at]);
        let body = &rest[body_at..body_at + len];
        match rewrite(&xml_unescape(body)) {
            Some(new) => out.push_str(&super::xml_escape(&new)),
            None => out.push_str(body),
        }
        out.push_str(CLOSE);
        rest = &rest[body_at + len + CLOSE.len()..];
    }
    out.push_str(rest);
    out.into_bytes()
}

/// The XML entities inferno's writer produces, back to characters.
fn xml_unescape(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// Renders, raising the minimum width until the SVG fits [`MAX_SVG_BYTES`].
/// inferno is given the [`drawn_lines`] of the stacks when they can be
/// worked out, else every stack's line.
fn render_bounded(
    stacks: &BTreeMap<Stack, f64>,
    scale: f64,
    min_width_pct: f64,
    mut palette: Option<&mut PaletteMap>,
    configure: impl Fn(&mut Options<'_>),
) -> Result<Vec<u8>, Error> {
    let mut min_width = min_width_pct.max(0.0);
    let mut every_line: Option<Vec<String>> = None;
    loop {
        let mut opt = Options::default();
        opt.deterministic = true;
        opt.min_width = min_width;
        configure(&mut opt);
        opt.palette_map = palette.as_deref_mut();
        if min_width > min_width_pct {
            let note = format!(" (frames under {min_width:.2}% left out to keep the page light)");
            opt.subtitle = Some(opt.subtitle.take().unwrap_or_default() + &note);
        }
        let mut out = Vec::new();
        let drawn = match drawn_lines(stacks, scale, min_width) {
            Some(lines) => {
                flamegraph::from_lines(&mut opt, lines.iter().map(String::as_str), &mut out)
            }
            None => {
                let lines = every_line.get_or_insert_with(|| scaled_lines(stacks, scale));
                flamegraph::from_lines(&mut opt, lines.iter().map(String::as_str), &mut out)
            }
        };
        drawn.map_err(|e| Error::Internal(format!("flame graph could not be drawn: {e}")))?;
        if out.len() <= MAX_SVG_BYTES || min_width >= MAX_MIN_WIDTH_PCT {
            return Ok(with_dark_theme(out));
        }
        min_width = if min_width < 0.1 {
            0.1
        } else {
            (min_width * 2.0).min(MAX_MIN_WIDTH_PCT)
        };
    }
}

/// `stack weight` lines from which inferno draws, at a minimum width of
/// `min_width` percent, exactly the SVG it draws from every stack's line
/// ([`scaled_lines`]), but far fewer of them: each run of stacks that only
/// holds frames too narrow to be drawn becomes one line, cut after its
/// first frame that is not drawn. A profile of 1,000,000 distinct stacks,
/// nearly all of them narrow, is drawn from about a thousand lines instead
/// of a million lines and two million of inferno's frames (issue 35).
///
/// How inferno draws: it sorts the lines, merges each frame over the run
/// of consecutive lines that share the path to it, and leaves out every
/// frame narrower than `min_width` percent of the total (the test below is
/// inferno's own). A frame left out has only narrower frames above it, so
/// the lines of its run can be replaced by one line ending at it, of the
/// run's weight, and consecutive such siblings by one line as long as
/// their sum is still too narrow: every drawn frame keeps its place,
/// width, depth and order. `None` when this cannot be vouched for, and
/// the caller gives inferno every line: a line inferno would read
/// otherwise than as `stack weight` (blank ends, a `#` comment, a stack
/// ending in a number taken for a second count), lines in another order
/// than inferno sorts them, frames that would differ, or a minimum width
/// of 0 (nothing is left out).
fn drawn_lines(stacks: &BTreeMap<Stack, f64>, scale: f64, min_width: f64) -> Option<Vec<String>> {
    let weighed = || {
        stacks.iter().filter_map(move |(stack, w)| {
            let n = (w * scale).round() as u64;
            (n > 0).then_some((&**stack, n))
        })
    };
    let total: u64 = weighed().map(|(_, n)| n).sum();
    if total == 0 || min_width <= 0.0 {
        return None;
    }
    // inferno's own test: a frame narrower than this many counts is left out.
    let width_per_count_pct = 100.0 / total as f64;
    let min_counts = min_width / width_per_count_pct;
    let narrow = |width: u64| (width as f64) < min_counts;

    let mut top: Vec<Line> = Vec::new();
    let mut open: Vec<Open> = Vec::new();
    let mut drawn: Vec<DrawnFrame> = Vec::new();
    let (mut prev, mut prev_line, mut line) = ("", String::new(), String::new());
    let mut time = 0u64;
    for (stack, n) in weighed() {
        if !reads_as_one_stack(stack) {
            return None;
        }
        line.clear();
        let _ = write!(line, "{stack} {n}");
        if !prev_line.is_empty() && prev_line > line {
            return None;
        }
        std::mem::swap(&mut line, &mut prev_line);
        let shared = prev
            .split(';')
            .zip(stack.split(';'))
            .take_while(|(a, b)| a == b)
            .count();
        let shared = if prev.is_empty() { 0 } else { shared };
        close_frames(
            &mut open,
            &mut top,
            &mut drawn,
            (prev, shared, time),
            &narrow,
        )?;
        let depth = stack.split(';').count();
        while open.len() < depth {
            open.push(Open {
                start: time,
                lines: Vec::new(),
            });
        }
        open.last_mut()?.lines.push(Line {
            path: stack.to_string(),
            weight: n,
            merge: false,
        });
        time += n;
        prev = stack;
    }
    close_frames(&mut open, &mut top, &mut drawn, (prev, 0, time), &narrow)?;

    let mut lines = Vec::with_capacity(top.len());
    for l in &top {
        if !reads_as_one_stack(&l.path) {
            return None;
        }
        let text = format!("{} {}", l.path, l.weight);
        if lines.last().is_some_and(|last: &String| *last > text) {
            return None;
        }
        lines.push(text);
    }
    // Checked, not only argued: inferno merges these lines into the very
    // frames it draws from every line (a left-out run next to a drawn one
    // of the same name would join it, for one).
    let reduced = drawn_frames(top.iter().map(|l| (l.path.as_str(), l.weight)), narrow);
    (reduced == drawn).then_some(lines)
}

/// A line of [`drawn_lines`]: the path to a frame and its weight; `merge`:
/// the frame is left out and a left-out sibling after it may join it.
struct Line {
    path: String,
    weight: u64,
    merge: bool,
}

/// A frame of the previous stack in [`drawn_lines`], open until a stack
/// leaves it: where it starts and the lines of what it holds.
struct Open {
    start: u64,
    lines: Vec<Line>,
}

/// Closes the frames of `prev` deeper than `depth` at `time`, for
/// [`drawn_lines`]: a left-out frame becomes one line (or joins the
/// left-out sibling before it while their sum stays `narrow`), a drawn
/// one passes its lines on and is noted in `drawn`.
fn close_frames(
    open: &mut Vec<Open>,
    top: &mut Vec<Line>,
    drawn: &mut Vec<DrawnFrame>,
    (prev, depth, time): (&str, usize, u64),
    narrow: &impl Fn(u64) -> bool,
) -> Option<()> {
    while open.len() > depth {
        let frame = open.pop()?;
        let level = open.len() + 1;
        let siblings = match open.last_mut() {
            Some(parent) => &mut parent.lines,
            None => &mut *top,
        };
        let width = time - frame.start;
        if !narrow(width) {
            drawn.push((
                level,
                prev.split(';').nth(level - 1)?.to_string(),
                frame.start,
                time,
            ));
            let from = siblings.len();
            siblings.extend(frame.lines);
            for line in &mut siblings[from..] {
                line.merge = false;
            }
            continue;
        }
        match siblings.last_mut() {
            Some(last) if last.merge && narrow(last.weight + width) => last.weight += width,
            _ => {
                let end = prev
                    .match_indices(';')
                    .nth(level - 1)
                    .map_or(prev.len(), |(at, _)| at);
                siblings.push(Line {
                    path: prev[..end].to_string(),
                    weight: width,
                    merge: true,
                });
            }
        }
    }
    Some(())
}

/// A frame inferno draws: depth (1 for the stacks' first frames), name,
/// start and end in counts.
type DrawnFrame = (usize, String, u64, u64);

/// The frames inferno draws from sorted `stack weight` lines, in the order
/// it closes them: each frame merged over the consecutive lines that share
/// the path to it, the `narrow` ones left out.
fn drawn_frames<'a>(
    lines: impl Iterator<Item = (&'a str, u64)>,
    narrow: impl Fn(u64) -> bool,
) -> Vec<DrawnFrame> {
    let mut drawn = Vec::new();
    let mut open: Vec<u64> = Vec::new();
    let mut prev: Vec<&str> = Vec::new();
    let mut time = 0;
    let mut close = |open: &mut Vec<u64>, prev: &[&str], depth: usize, time: u64| {
        while open.len() > depth {
            let start = open.pop().unwrap_or_default();
            if !narrow(time - start) {
                drawn.push((open.len() + 1, prev[open.len()].to_string(), start, time));
            }
        }
    };
    for (stack, n) in lines {
        let frames: Vec<&str> = stack.split(';').collect();
        let shared = prev.iter().zip(&frames).take_while(|(a, b)| a == b).count();
        close(&mut open, &prev, shared, time);
        open.resize(frames.len(), time);
        time += n;
        prev = frames;
    }
    close(&mut open, &prev, 0, time);
    drawn
}

/// Whether inferno reads `stack` followed by ` <count>` as that stack and
/// count: nothing to trim at either end, no `#` comment, and no last word
/// of digits and dots that inferno would take for a second count.
fn reads_as_one_stack(stack: &str) -> bool {
    let second_count = match stack.rsplit_once(' ') {
        Some((_, last_word)) => last_word.bytes().all(|b| b.is_ascii_digit() || b == b'.'),
        None => false,
    };
    !stack.is_empty() && stack.trim() == stack && !stack.starts_with('#') && !second_count
}

/// inferno's SVG with a dark theme: its background and its own text
/// (title, details, search) follow `prefers-color-scheme`, which the page
/// that embeds it passes on (`color-scheme: light dark`); the frames keep
/// their light colours and black names, readable on either. Until issue
/// 34 a flame graph was a white panel of ~1000 px in a dark page.
///
/// The SVG declares `color-scheme: light dark` as the page does: a browser
/// paints an embedded document whose colour scheme differs from its
/// embedding element's on an opaque canvas of its own scheme, so without
/// it the box around a flame graph stayed white in a dark page.
fn with_dark_theme(svg: Vec<u8>) -> Vec<u8> {
    use super::palette::{BG, FG};
    const STYLE: &[u8] = b"<style type=\"text/css\">";
    let Some(at) = svg.windows(STYLE.len()).position(|w| w == STYLE) else {
        return svg;
    };
    let dark = format!(
        "\n:root {{ color-scheme: light dark; }}\
         \n@media (prefers-color-scheme: dark) {{ #background stop {{ stop-color: {bg}; }} \
         #title, #subtitle, #details, #unzoom, #search, #matched {{ fill: {fg}; }} }}",
        bg = BG.dark,
        fg = FG.dark
    );
    let end = at + STYLE.len();
    [&svg[..end], dark.as_bytes(), &svg[end..]].concat()
}

/// The height in pixels of a flame graph drawn by [`flame_svg`] or
/// [`diff_svg`] (inferno's root `height`): its page sizes the graph's box
/// to it, so that no empty band lies under the graph (with inferno's fluid
/// drawing the width follows the box, the height stays).
pub fn svg_height(svg: &[u8]) -> Option<u32> {
    let start = memchr::memmem::find(svg, b"<svg ")?;
    let end = start + memchr::memchr(b'>', &svg[start..])?;
    let tag = std::str::from_utf8(&svg[start..end]).ok()?;
    let at = tag.find(" height=\"")? + " height=\"".len();
    let value = &tag[at..at + tag[at..].find('"')?];
    value.parse::<f64>().ok().map(|h| h.ceil() as u32)
}

/// inferno's Java palette for JVM profiles (green Java, yellow C++, orange
/// kernel), its Python palette for py-spy ones, else the classic hot palette.
fn palette_for(stacks: &BTreeMap<Stack, f64>) -> Palette {
    let mut java = 0usize;
    let mut python = 0usize;
    for stack in stacks.keys().take(500) {
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
    use crate::config::ProfileSettings;
    use crate::profile::{Classifier, Normalisation, parse_folded};

    fn profile(text: &str) -> Profile {
        parse_folded(text, Path::new("flame.txt"), "cpu").unwrap()
    }

    fn comparable(text: &str) -> Comparable {
        let c = Classifier::new(&ProfileSettings::default()).unwrap();
        Comparable::new(&profile(text), &c, Normalisation::Functions)
    }

    const TRICKY: &str = "java/lang/Thread.run;com/acme/Cache.get(Map<String,List<Foo>>);a&b \"quoted\" 'single' 7\n\
                          java/lang/Thread.run;com/acme/Orders.list 3\n";

    /// (fill, title) of every frame `<g>` of an inferno SVG whose title starts with `name (`.
    fn frame(svg: &str, name: &str) -> (String, String) {
        let g = svg
            .split("<g>")
            .find(|g| g.contains(&format!("<title>{name} (")))
            .unwrap_or_else(|| panic!("no frame {name}"));
        let at = g.find("fill=\"").unwrap() + 6;
        let fill = g[at..at + g[at..].find('"').unwrap()].to_string();
        let t = g.find("<title>").unwrap() + 7;
        let title = g[t..t + g[t..].find("</title>").unwrap()].to_string();
        (fill, title)
    }

    fn rgb(s: &str) -> (u8, u8, u8) {
        let v: Vec<u8> = s
            .trim_start_matches("rgb(")
            .trim_end_matches(')')
            .split(',')
            .map(|x| x.trim().parse().unwrap())
            .collect();
        (v[0], v[1], v[2])
    }

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
        let c = comparable(TRICKY);
        let diff = String::from_utf8(diff_svg(&c, &c, "<t>", "<s>", 0.1).unwrap()).unwrap();
        assert!(diff.contains("Map&lt;String,List&lt;Foo&gt;&gt;"));
        assert!(!diff.contains("Map<String") && !diff.contains("<t>") && !diff.contains("<s>"));
        // Rewritten tooltips are escaped too.
        assert!(
            diff.contains("a&amp;b &quot;quoted&quot; &#39;single&#39; (7 samples"),
            "{diff}"
        );
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
        let c = comparable(TRICKY);
        assert_eq!(
            diff_svg(&c, &c, "t", "s", 0.1).unwrap(),
            diff_svg(&c, &c, "t", "s", 0.1).unwrap()
        );
    }

    /// A flame graph follows the dark scheme of the page around it: its
    /// background and its own words (the frames keep their colours and
    /// black names, readable either way), once, in inferno's style block.
    #[test]
    fn flame_graphs_have_a_dark_theme() {
        let c = comparable(TRICKY);
        for svg in [
            flame_svg(&profile(TRICKY), "t", "s", 0.1).unwrap(),
            diff_svg(&c, &c, "t", "s", 0.1).unwrap(),
        ] {
            let svg = String::from_utf8(svg).unwrap();
            assert_eq!(svg.matches("prefers-color-scheme: dark").count(), 1);
            let dark = &svg[svg.find("prefers-color-scheme: dark").unwrap()..];
            let dark = &dark[..dark.find('\n').unwrap_or(dark.len())];
            assert!(
                dark.contains("#background stop { stop-color: #14171c; }"),
                "{dark}"
            );
            assert!(dark.contains("#title, #subtitle, #details"), "{dark}");
            // The page's colour scheme, so that its box is not painted
            // on an opaque light canvas in a dark page.
            assert_eq!(
                svg.matches(":root { color-scheme: light dark; }").count(),
                1
            );
            // Its height, for the page's box (`svg_height`).
            assert!(
                svg_height(svg.as_bytes()).is_some_and(|h| h > 50),
                "{svg:.300}"
            );
            // Inside the style element, before inferno's own rules.
            let style = svg.find(r#"<style type="text/css">"#).unwrap();
            assert!(svg.find("prefers-color-scheme").unwrap() > style);
            assert!(
                svg.find("prefers-color-scheme").unwrap() < svg.find("#frames > *:hover").unwrap()
            );
        }
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

    /// The SVG inferno draws from `lines` at `min_width`.
    fn inferno_svg(lines: &[String], min_width: f64) -> Vec<u8> {
        let mut opt = Options::default();
        opt.deterministic = true;
        opt.min_width = min_width;
        let mut out = Vec::new();
        flamegraph::from_lines(&mut opt, lines.iter().map(String::as_str), &mut out).unwrap();
        out
    }

    /// Issue 35: narrow runs of stacks become one line each, and inferno
    /// draws the very same SVG from them as from every stack's line: here
    /// 3,000 distinct stacks under two wide frames, plus stacks whose names
    /// sort around each other (`get` and `get(int)`: inferno's sort splits
    /// `get` in two runs) and one wide stack among the narrow ones.
    #[test]
    fn drawn_lines_draw_what_every_line_draws() {
        let mut text = String::new();
        for i in 0..3000 {
            text.push_str(&format!(
                "main;serve;Handler{i}.handle;Repo{i}.find {}\n",
                1 + i % 5
            ));
        }
        text.push_str("main;serve;Handler42.handle;hot 4000\n");
        text.push_str("main;cache;get 3\nmain;cache;get(int);x 2\nmain;cache;get;y 1\n");
        text.push_str("main;cache;get(int) 2000\nmain;cache;get;z 1500\n");
        let p = profile(&text);
        for min_width in [0.0, 0.01, 0.1, 1.0, 5.0] {
            let every = scaled_lines(&p.stacks, 1.0);
            let expected = inferno_svg(&every, min_width);
            match drawn_lines(&p.stacks, 1.0, min_width) {
                Some(drawn) => {
                    assert_eq!(inferno_svg(&drawn, min_width), expected, "at {min_width}%");
                    if min_width >= 0.1 {
                        assert!(drawn.len() < every.len() / 4, "{} lines", drawn.len());
                    }
                }
                None => assert!(min_width <= 0.0, "{min_width}% not reduced"),
            }
        }
        // A left-out run would join a drawn frame of the same name that
        // follows it: caught, every line used instead, the same SVG.
        let p = profile("a;f 1\na;f!;x 1\na;f;y 1000\n");
        let every = scaled_lines(&p.stacks, 1.0);
        if let Some(drawn) = drawn_lines(&p.stacks, 1.0, 1.0) {
            assert_eq!(inferno_svg(&drawn, 1.0), inferno_svg(&every, 1.0));
        }
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
    fn differential_colours_total_growth_red_and_shrinkage_blue() {
        // Baseline 100 samples, current 200: `b` doubled its share, `c`
        // halved, `d` kept it; `m` is everything, so its total did not move.
        let before = comparable("m;b 25\nm;c 50\nm;d 25\n");
        let after = comparable("m;b 100\nm;c 50\nm;d 50\n");
        let svg = String::from_utf8(diff_svg(&before, &after, "t", "s", 0.0).unwrap()).unwrap();
        let (r, g, b) = rgb(&frame(&svg, "b").0);
        assert!(
            r == 255 && g < 255 && b < 255,
            "b grew: red, got {r},{g},{b}"
        );
        let (r, g, b) = rgb(&frame(&svg, "c").0);
        assert!(
            b == 255 && r < 255 && g < 255,
            "c shrank: blue, got {r},{g},{b}"
        );
        assert_eq!(
            rgb(&frame(&svg, "d").0),
            (250, 250, 250),
            "d unchanged: white"
        );
        assert_eq!(
            rgb(&frame(&svg, "m").0),
            (250, 250, 250),
            "m is all of it both times"
        );
    }

    /// The issue's complaint: a function whose callees hold all its width
    /// has no self change, and inferno's differential drew it white. Here
    /// its total share is what colours it.
    #[test]
    fn a_caller_of_new_work_is_coloured_by_its_total_change() {
        let before = comparable("svc;render 60\nsvc;load 40\n");
        let after =
            comparable("svc;render 60\nsvc;load 40\nsvc;rules;query 80\nsvc;rules;apply 20\n");
        let svg = String::from_utf8(diff_svg(&before, &after, "t", "s", 0.0).unwrap()).unwrap();
        let (r, g, _) = rgb(&frame(&svg, "rules").0);
        // +50 points on a 50-point scale: full red.
        assert_eq!((r, g), (255, 100));
        assert_eq!(diff_scale_pts(&before, &after), 50.0);
    }

    /// One frame's tooltip against a hand computation. Baseline: 40 busy
    /// samples, `q` in 10 of them (25 %), 4 as its own leaf (10 %). Current:
    /// 160 busy samples, `q` in 100 of them (62.5 %), 40 as a leaf (25 %).
    /// Changes: total +37.5 points, self +15 points; never above 100.
    #[test]
    fn one_frames_tooltip_matches_a_hand_computation() {
        let before = comparable("main;q;db 6\nmain;q 4\nmain;other 30\n");
        let after = comparable("main;q;db 60\nmain;q 40\nmain;other 60\n");
        let svg = String::from_utf8(diff_svg(&before, &after, "t", "s", 0.0).unwrap()).unwrap();
        let (_, title) = frame(&svg, "q");
        assert_eq!(
            title,
            "q (100 samples, 62.50% of busy samples; total 25.00% → 62.50%, +37.50 pts; \
             self 10.00% → 25.00%, +15.00 pts)"
        );
        let (_, db) = frame(&svg, "db");
        assert!(db.contains("total 15.00% → 37.50%, +22.50 pts;"), "{db}");
        let (_, all) = frame(&svg, "all");
        assert_eq!(all, "all (160 busy samples)");

        // Fractional weights (py-spy's seconds), baseline scaled to another
        // length: the same shares, so the same points, not 1000× more.
        let before = comparable("main;q;db 0.06\nmain;q 0.04\nmain;other 0.3\n");
        let after = comparable("main;q;db 0.6\nmain;q 0.4\nmain;other 0.6\n");
        let svg = String::from_utf8(diff_svg(&before, &after, "t", "s", 0.0).unwrap()).unwrap();
        let (_, title) = frame(&svg, "q");
        assert!(
            title.contains("62.50% of busy samples; total 25.00% → 62.50%, +37.50 pts;"),
            "{title}"
        );
    }

    /// inferno's script labels a frame (and finds it by "Search") with its
    /// title minus the last `(…)`: every rewritten title must leave just
    /// the name, py-spy names with their own parentheses included.
    #[test]
    fn rewritten_titles_leave_the_frame_name_as_the_label() {
        let before =
            comparable("main (app.py:1);q (app.py:5) 10\nmain (app.py:1);r (app.py:9) 30\n");
        let after =
            comparable("main (app.py:1);q (app.py:6) 40\nmain (app.py:1);r (app.py:10) 30\n");
        let svg = String::from_utf8(diff_svg(&before, &after, "t", "s", 0.0).unwrap()).unwrap();
        for name in ["main (app.py)", "q (app.py)", "r (app.py)"] {
            let (_, title) = frame(&svg, name);
            // `replace(/\([^(]*\)$/, "")`, as inferno's update_text does.
            assert!(title.ends_with(')'), "{title}");
            let open = title.rfind('(').unwrap();
            assert_eq!(&title[..open], format!("{name} "), "{title}");
        }
    }

    #[test]
    fn idle_stacks_are_not_drawn_in_the_differential_graph() {
        let text = "BaseServer.serve_forever (socketserver.py:233);_PollLikeSelector.select (selectors.py:415) 900\n\
                    Handler.do_GET (shop.py:10);quote (shop.py:20) 100\n";
        let c = comparable(text);
        assert_eq!(c.total, 100.0, "idle left out of the busy total");
        let svg = String::from_utf8(diff_svg(&c, &c, "t", "s", 0.0).unwrap()).unwrap();
        assert!(!svg.contains("serve_forever"));
        assert!(svg.contains("quote (shop.py) ("), "names normalised: {svg}");
    }
}
