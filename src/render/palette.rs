//! Every colour of the site, in one table: the CSS custom properties of
//! `static/style.css` are generated from it ([`css_variables`], prepended
//! to the stylesheet the site serves) and the charts draw with the same
//! entries, so a verdict has one colour on every page and chart.
//!
//! Until issue 16 the stylesheet, the trend chart, the capacity charts and
//! the comparison dot plots each had their own palette. They disagreed on
//! one colour: the trend chart drew an accepted change in #7e6fa8 where
//! the pages' chips, sparklines and legends use #5e548e. The pages' value
//! is right: #7e6fa8 has a contrast of 4.4:1 on white, under the 4.5:1
//! WCAG AA asks of text, and the two should not differ anyway. The tests
//! below check the contrast of every text colour in both themes.

use plotters::style::RGBColor;

/// One colour: its CSS custom property (`--name`), its light-theme value
/// (also what charts draw: they keep a light background in both themes)
/// and its dark-theme value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Colour {
    pub name: &'static str,
    /// `#rrggbb`.
    pub light: &'static str,
    pub dark: &'static str,
}

impl Colour {
    const fn new(name: &'static str, light: &'static str, dark: &'static str) -> Colour {
        Colour { name, light, dark }
    }

    /// The light value for plotters (checked at compile time).
    pub const fn rgb(self) -> RGBColor {
        let b = self.light.as_bytes();
        assert!(b.len() == 7 && b[0] == b'#', "colours are #rrggbb");
        RGBColor(byte(b[1], b[2]), byte(b[3], b[4]), byte(b[5], b[6]))
    }
}

const fn byte(high: u8, low: u8) -> u8 {
    const fn nibble(d: u8) -> u8 {
        match d {
            b'0'..=b'9' => d - b'0',
            b'a'..=b'f' => d - b'a' + 10,
            _ => panic!("colours are lower-case hex"),
        }
    }
    nibble(high) * 16 + nibble(low)
}

// Page colours: text, lines and backgrounds.
pub const BG: Colour = Colour::new("bg", "#ffffff", "#14171c");
pub const FG: Colour = Colour::new("fg", "#1d2330", "#e3e7ee");
pub const MUTED: Colour = Colour::new("muted", "#5b6473", "#9aa4b2");
pub const LINE: Colour = Colour::new("line", "#d9dee5", "#2e3540");
pub const STRIPE: Colour = Colour::new("stripe", "#f5f7fa", "#1a1e24");
pub const LINK: Colour = Colour::new("link", "#0b5cad", "#7db7ff");
pub const CHIP_BG: Colour = Colour::new("chip-bg", "#eef1f5", "#232a33");

// Verdicts and markers, on pages and charts alike.
pub const REGRESSION: Colour = Colour::new("regression", "#c62828", "#ff6b5e");
pub const IMPROVEMENT: Colour = Colour::new("improvement", "#2e7d32", "#5fd068");
pub const OK: Colour = Colour::new("ok", "#46505e", "#b8c0cc");
pub const NO_BASELINE: Colour = Colour::new("nobase", "#7a6a00", "#e0c84a");
pub const INSUFFICIENT: Colour = Colour::new("insufficient", "#8a5a00", "#f0a84a");
pub const ACCEPTED: Colour = Colour::new("accepted", "#5e548e", "#b3a6e0");
pub const CHANGE_POINT: Colour = Colour::new("changepoint", "#6a1b9a", "#ce93d8");
pub const ENVIRONMENT: Colour = Colour::new("environment", "#007c89", "#4dd0e1");
/// A failed run (most rounds failed) is the most urgent state, so its chip
/// is filled, not outlined: this fill with [`FAILED_TEXT`] on it. In the
/// dark theme white on the dark theme's regression red was 2.79:1 (axe
/// flagged it on three page kinds); dark text on it is 6.4:1.
pub const FAILED: Colour = Colour::new("failed", "#c62828", "#ff6b5e");
pub const FAILED_TEXT: Colour = Colour::new("failed-text", "#ffffff", "#14171c");

// The calendar heatmap's cell fills. The regression, improvement and
// accepted cells carry their shape (▲ ▼ ◆) in white, so they are dark
// enough for white text in both themes; the others are areas behind
// nothing.
pub const H_REGRESSION: Colour = Colour::new("h-regression", "#c62828", "#c62828");
pub const H_INSUFFICIENT: Colour = Colour::new("h-insufficient", "#f2b14c", "#d99a2b");
pub const H_NO_BASELINE: Colour = Colour::new("h-no-baseline", "#c9d1dc", "#4a5462");
pub const H_ACCEPTED: Colour = Colour::new("h-accepted", "#5e548e", "#5e548e");
pub const H_OK: Colour = Colour::new("h-ok", "#8fc79a", "#3f7f4d");
pub const H_IMPROVEMENT: Colour = Colour::new("h-improvement", "#2e7d32", "#2e7d32");
pub const H_NONE: Colour = Colour::new("h-none", "#eef1f5", "#20262e");
/// A failed week: darker than a regression in the light theme, lighter in
/// the dark one, with its ■ in [`H_FAILED_TEXT`] (an empty cell until
/// issue 34).
pub const H_FAILED: Colour = Colour::new("h-failed", "#7f1d1d", "#ff8a80");
pub const H_FAILED_TEXT: Colour = Colour::new("h-failed-text", "#ffffff", "#14171c");

// The trend chart (render/charts/trend.rs) draws with classes, so it
// follows the theme: these are its lines and text.
pub const C_ROUND: Colour = Colour::new("c-round", "#8a97a8", "#6b7687");
pub const C_MEDIAN: Colour = Colour::new("c-median", "#1f4e79", "#7db7ff");
pub const C_BASELINE: Colour = Colour::new("c-baseline", "#444444", "#c9d1dc");
pub const C_LINE: Colour = Colour::new("c-line", "#ad5600", "#ffa94d");
pub const C_GRID: Colour = Colour::new("c-grid", "#e6e9ee", "#262d36");
pub const C_AXIS: Colour = Colour::new("c-axis", "#5b6473", "#9aa4b2");
pub const C_NOTE: Colour = Colour::new("c-note", "#8a4b00", "#ffc078");

// Capacity step tables: the knee, break and noisy steps' row backgrounds.
pub const STEP_KNEE: Colour = Colour::new("step-knee", "#e8f5e9", "#17301d");
pub const STEP_BREAK: Colour = Colour::new("step-break", "#ffebee", "#3a1c1c");
pub const STEP_NOISE: Colour = Colour::new("step-noise", "#fff8e1", "#33290f");

/// Every colour the stylesheet gets as a custom property, in this order.
pub const PAGE: &[Colour] = &[
    BG,
    FG,
    MUTED,
    LINE,
    STRIPE,
    LINK,
    CHIP_BG,
    REGRESSION,
    IMPROVEMENT,
    OK,
    NO_BASELINE,
    INSUFFICIENT,
    ACCEPTED,
    CHANGE_POINT,
    ENVIRONMENT,
    FAILED,
    FAILED_TEXT,
    H_REGRESSION,
    H_INSUFFICIENT,
    H_NO_BASELINE,
    H_ACCEPTED,
    H_OK,
    H_IMPROVEMENT,
    H_NONE,
    H_FAILED,
    H_FAILED_TEXT,
    C_ROUND,
    C_MEDIAN,
    C_BASELINE,
    C_LINE,
    C_GRID,
    C_AXIS,
    C_NOTE,
    STEP_KNEE,
    STEP_BREAK,
    STEP_NOISE,
];

// Colours the same in both themes, for what must not follow the theme
// (print, the pointer's outline on a chart point) or sits on a filled
// verdict colour. The stylesheet gets them as custom properties too
// ([`FIXED`]), so that it holds no colour of its own.
/// The printed page's background, and the light wash over a chart point
/// under the pointer.
pub const PAPER: Colour = Colour::new("paper", "#ffffff", "#ffffff");
/// Text and shapes on a filled verdict colour (the heatmap's regression,
/// improvement and accepted cells).
pub const ON_FILL: Colour = Colour::new("on-fill", "#ffffff", "#ffffff");
/// The outline of a chart point under the pointer or the keyboard focus.
pub const HIT: Colour = Colour::new("chart-hit", "#111111", "#111111");
/// Printed text: black on white, whatever the theme; and shadows.
pub const INK: Colour = Colour::new("ink", "#000000", "#000000");

/// The colours the stylesheet uses that are the same in both themes, as
/// custom properties beside [`PAGE`]'s.
pub const FIXED: &[Colour] = &[PAPER, ON_FILL, HIT, INK];

// Chart-only colours: drawn as their light value (plotters and the
// comparison dot plots write colours as attributes); in the dark theme the
// stylesheet swaps each for its dark value ([`chart_dark_css`]), so these
// charts follow the theme instead of staying light panels.
/// A run's median and run B of a comparison.
pub const MEDIAN: Colour = Colour::new("chart-median", "#1f4e79", "#7db7ff");
/// Single rounds and run A of a comparison.
pub const ROUND: Colour = Colour::new("chart-round", "#8a97a8", "#6b7687");
/// The baseline, and reference lines.
pub const BASELINE: Colour = Colour::new("chart-baseline", "#444444", "#c9d1dc");
/// The regression line (baseline × ratio) and a capacity objective.
pub const THRESHOLD: Colour = Colour::new("chart-threshold", "#e07b00", "#ffa94d");
/// The recommended limit's band on capacity charts: teal, unlike every
/// line of those charts.
pub const LIMIT: Colour = Colour::new("chart-limit", "#006d77", "#4dd0e1");
/// CPU against load on capacity pages.
pub const CPU: Colour = Colour::new("chart-cpu", "#6a1b9a", "#ce93d8");
/// Plotters' grid lines.
pub const GRID_LIGHT: Colour = Colour::new("chart-grid-light", "#f0f0f0", "#1f252d");
pub const GRID_BOLD: Colour = Colour::new("chart-grid-bold", "#dddddd", "#2e3540");
/// Plotters' background and its axes and text (its `WHITE` and `BLACK`).
pub const CHART_BG: Colour = Colour::new("chart-bg", "#ffffff", "#14171c");
pub const CHART_TEXT: Colour = Colour::new("chart-text", "#000000", "#e3e7ee");

/// The colours that charts write as attributes (`fill="#1F4E79"`): in the
/// dark theme each light value is replaced by its dark one. A light value
/// may appear twice only with the same dark value (a test checks).
pub const CHART_ATTRIBUTE: &[Colour] = &[
    CHART_BG,
    CHART_TEXT,
    GRID_LIGHT,
    GRID_BOLD,
    MEDIAN,
    ROUND,
    BASELINE,
    THRESHOLD,
    LIMIT,
    CPU,
    MUTED,
    REGRESSION,
    IMPROVEMENT,
    ACCEPTED,
    CHANGE_POINT,
    ENVIRONMENT,
];

/// The dark theme of the charts that write colours as attributes
/// (plotters' capacity charts, the comparison dot plots): CSS beats an
/// SVG presentation attribute, so each `[fill="<light>"]` and
/// `[stroke="<light>"]` takes the dark value. The trend chart draws with
/// classes and needs none of this.
pub fn chart_dark_css() -> String {
    let mut seen: Vec<&str> = Vec::new();
    let mut rules = String::new();
    for c in CHART_ATTRIBUTE {
        if seen.contains(&c.light) {
            continue;
        }
        seen.push(c.light);
        for attr in ["fill", "stroke"] {
            rules.push_str(&format!(
                "  svg.chart:not(.trend) [{attr}=\"{}\" i] {{ {attr}: {}; }}\n",
                c.light, c.dark
            ));
        }
    }
    rules
}

/// Series colours for charts with one line per endpoint (Tableau 10 and
/// two more), in the order series are given them.
pub const SERIES: [&str; 12] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#5b6473", "#1f4e79", "#8cd17d",
];

/// The custom properties of [`PAGE`] for both themes, and of [`FIXED`]
/// once, as CSS.
pub fn css_variables() -> String {
    let block = |colours: &[Colour], theme: fn(&Colour) -> &'static str| {
        colours
            .iter()
            .map(|c| format!("  --{}: {};\n", c.name, theme(c)))
            .collect::<String>()
    };
    format!(
        "/* Colours: generated from src/render/palette.rs, the one table for pages and charts. */\n\
         :root {{\n  color-scheme: light dark;\n{}{}}}\n@media (prefers-color-scheme: dark) {{\n:root {{\n{}}}\n{}}}\n",
        block(PAGE, |c| c.light),
        block(FIXED, |c| c.light),
        block(PAGE, |c| c.dark),
        chart_dark_css()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// WCAG 2 relative luminance and contrast ratio.
    fn contrast(a: &str, b: &str) -> f64 {
        let value = |h: &str| u32::from_str_radix(&h[1..], 16).unwrap();
        let (a, b) = (value(a), value(b));
        let lum = |v: u32| {
            let channel = |shift: u32| {
                let c = f64::from((v >> shift) & 0xff) / 255.0;
                if c <= 0.039_28 {
                    c / 12.92
                } else {
                    ((c + 0.055) / 1.055).powf(2.4)
                }
            };
            0.2126 * channel(16) + 0.7152 * channel(8) + 0.0722 * channel(0)
        };
        let (x, y) = (lum(a), lum(b));
        (x.max(y) + 0.05) / (x.min(y) + 0.05)
    }

    #[test]
    fn text_colours_meet_wcag_aa_in_both_themes() {
        let text = [
            FG,
            MUTED,
            LINK,
            REGRESSION,
            IMPROVEMENT,
            OK,
            NO_BASELINE,
            INSUFFICIENT,
            ACCEPTED,
            CHANGE_POINT,
            ENVIRONMENT,
            C_MEDIAN,
            C_BASELINE,
            C_LINE,
            C_AXIS,
            C_NOTE,
        ];
        for c in text {
            for (theme, value, backgrounds) in [
                ("light", c.light, [BG.light, STRIPE.light]),
                ("dark", c.dark, [BG.dark, STRIPE.dark]),
            ] {
                for bg in backgrounds {
                    let r = contrast(value, bg);
                    assert!(r >= 4.5, "--{} on {bg} ({theme}): {r:.2}:1", c.name);
                }
            }
        }
        // Text on the capacity step rows, and the white shapes on heatmap
        // cells.
        for step in [STEP_KNEE, STEP_BREAK, STEP_NOISE] {
            for (theme, fg, bg) in [
                ("light", FG.light, step.light),
                ("dark", FG.dark, step.dark),
            ] {
                let r = contrast(fg, bg);
                assert!(r >= 4.5, "text on --{} ({theme}): {r:.2}:1", step.name);
            }
        }
        for cell in [H_REGRESSION, H_IMPROVEMENT, H_ACCEPTED] {
            for (theme, bg) in [("light", cell.light), ("dark", cell.dark)] {
                let r = contrast("#ffffff", bg);
                assert!(r >= 4.5, "white on --{} ({theme}): {r:.2}:1", cell.name);
            }
        }
        // Filled chips and cells: a failed run's chip and heatmap cell.
        for (text, fill) in [(FAILED_TEXT, FAILED), (H_FAILED_TEXT, H_FAILED)] {
            for (theme, fg, bg) in [
                ("light", text.light, fill.light),
                ("dark", text.dark, fill.dark),
            ] {
                let r = contrast(fg, bg);
                assert!(
                    r >= 4.5,
                    "--{} on --{} ({theme}): {r:.2}:1",
                    text.name,
                    fill.name
                );
            }
        }
        // The chart colour the trend chart used for accepted changes.
        assert!(contrast("#7e6fa8", "#ffffff") < 4.5);
    }

    #[test]
    fn names_are_unique_and_the_css_has_every_one() {
        let css = css_variables();
        let mut names: Vec<&str> = PAGE.iter().chain(FIXED).map(|c| c.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), PAGE.len() + FIXED.len());
        for c in PAGE {
            assert!(css.contains(&format!("--{}: {};", c.name, c.light)));
            assert!(css.contains(&format!("--{}: {};", c.name, c.dark)));
        }
        for c in FIXED {
            assert_eq!(c.light, c.dark, "--{} is the same in both themes", c.name);
            assert!(css.contains(&format!("--{}: {};", c.name, c.light)));
        }
        assert_eq!(REGRESSION.rgb(), RGBColor(0xc6, 0x28, 0x28));
    }

    /// A chart colour written as an attribute has one dark value: two
    /// entries with the same light value and different dark ones would
    /// make the generated rule depend on the order of the list.
    #[test]
    fn chart_attribute_colours_have_one_dark_value_each() {
        for a in CHART_ATTRIBUTE {
            for b in CHART_ATTRIBUTE {
                if a.light == b.light {
                    assert_eq!(a.dark, b.dark, "--{} and --{}", a.name, b.name);
                }
            }
        }
        let css = chart_dark_css();
        assert!(css.contains(r##"svg.chart:not(.trend) [fill="#ffffff" i] { fill: #14171c; }"##));
        // Text drawn on the dark background is readable.
        for c in [CHART_TEXT, MUTED, MEDIAN, BASELINE, THRESHOLD, LIMIT, CPU] {
            let r = contrast(c.dark, CHART_BG.dark);
            assert!(r >= 4.5, "--{} on the dark chart: {r:.2}:1", c.name);
        }
    }
}
