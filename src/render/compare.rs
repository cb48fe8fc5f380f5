//! The comparison pages (`compare/<a>_vs_<b>.html`, one per pair asked for
//! in `[compare]`) and the release history (`releases.html`).
//!
//! View models hold display-ready strings; the SVG (a dot plot of both
//! runs' rounds per endpoint, and the release chart) is written by hand:
//! a few dozen elements each, every name from data escaped with
//! [`xml_escape`].

use std::fmt::Write as _;

use askama::Template;

use super::flame::diff_svg;
use super::{Slugs, format as f, xml_escape};
use crate::analyse::Analysis;
use crate::analyse::attribution::ProfileAnalysis;
use crate::analyse::compare::{EndpointComparison, ReleaseHistory, RunRef, SiteComparison};
use crate::analyse::verdict::ComparisonVerdict;
use crate::error::Error;

/// The release history page, relative to the site root.
pub const RELEASES_PAGE: &str = "releases.html";

const COLOR_A: &str = "#8a97a8";
const COLOR_B: &str = "#1f4e79";
const COLOR_THRESHOLD: &str = "#e07b00";
const COLOR_AXIS: &str = "#5b6473";

/// A verdict chip: the contract string and the CSS class that colours it.
pub struct ComparisonVerdictView {
    pub key: &'static str,
    pub class: &'static str,
}

impl From<ComparisonVerdict> for ComparisonVerdictView {
    fn from(v: ComparisonVerdict) -> Self {
        ComparisonVerdictView {
            key: v.as_str(),
            class: match v {
                ComparisonVerdict::Regression => "v-regression",
                ComparisonVerdict::Failed => "v-failed",
                ComparisonVerdict::Improvement => "v-improvement",
                ComparisonVerdict::Same => "v-ok",
                ComparisonVerdict::Inconclusive => "v-insufficient",
                ComparisonVerdict::Added | ComparisonVerdict::Removed => "v-no-baseline",
            },
        }
    }
}

pub struct RunLink {
    pub id: String,
    pub label: String,
    pub href: String,
    pub date: String,
    pub commit: String,
}

pub struct ComparisonRow {
    pub name: String,
    pub anchor: String,
    /// The endpoint's page.
    pub href: String,
    pub median_a: String,
    pub median_b: String,
    pub ratio: String,
    pub change: String,
    pub interval: String,
    pub throughput_a: String,
    pub throughput_b: String,
    pub errors_a: String,
    pub errors_b: String,
    pub rounds_a: String,
    pub rounds_b: String,
    pub verdict: ComparisonVerdictView,
    pub reason: String,
    pub dot_plot: String,
    /// `(profile kind, href)` of the differential flame graph of B against
    /// A, one per profile kind both runs have for this endpoint.
    pub flame_diffs: Vec<(String, String)>,
}

#[derive(Template)]
#[template(path = "compare.html")]
pub struct ComparePage {
    pub root: &'static str,
    pub a: RunLink,
    pub b: RunLink,
    pub asked_as: String,
    pub summary: String,
    pub regressions: usize,
    pub rows: Vec<ComparisonRow>,
    pub method: String,
}

pub struct ReleaseCell {
    pub median: String,
    pub change: String,
}

pub struct ReleaseRowView {
    pub release: String,
    pub run: String,
    pub run_href: String,
    pub date: String,
    pub cells: Vec<ReleaseCell>,
}

pub struct ComparisonLink {
    pub title: String,
    pub asked_as: String,
    pub href: String,
    pub summary: String,
    pub regressions: usize,
}

#[derive(Template)]
#[template(path = "releases.html")]
pub struct ReleasesPage {
    pub root: &'static str,
    /// `(name, endpoint page href)` per column.
    pub endpoints: Vec<(String, String)>,
    pub rows: Vec<ReleaseRowView>,
    pub chart: String,
    pub comparisons: Vec<ComparisonLink>,
}

/// Where a comparison page lives, relative to the site root.
pub fn comparison_path(c: &SiteComparison, slugs: &Slugs) -> String {
    format!(
        "compare/{}_vs_{}.html",
        slugs.run(&c.comparison.a.run),
        slugs.run(&c.comparison.b.run)
    )
}

/// The profiles of one endpoint in one run (empty when it has none).
fn profiles_of<'a>(analysis: &'a Analysis, endpoint: &str, run: &str) -> &'a [ProfileAnalysis] {
    analysis
        .endpoints
        .iter()
        .find(|e| e.id == endpoint)
        .and_then(|e| e.points.iter().find(|p| p.run == run))
        .map(|p| p.profiles.as_slice())
        .unwrap_or(&[])
}

/// Differential flame graphs of B against A for one endpoint, one per
/// profile kind both runs have: `(kind, path relative to the site root,
/// SVG bytes)`. Widths are B's profile, colour the change from A's.
fn flame_diffs(
    analysis: &Analysis,
    cmp: &crate::analyse::compare::Comparison,
    endpoint: &EndpointComparison,
    dir: &str,
    endpoint_slug: &str,
) -> Result<Vec<(String, String, Vec<u8>)>, Error> {
    let before = profiles_of(analysis, &endpoint.id, &cmp.a.run);
    let after = profiles_of(analysis, &endpoint.id, &cmp.b.run);
    let mut out = Vec::new();
    for b in after {
        let Some(a) = before.iter().find(|a| a.kind == b.kind) else {
            continue;
        };
        let title = format!(
            "{} · {} profile · {} against {}",
            endpoint.name,
            b.kind,
            cmp.b.label(),
            cmp.a.label()
        );
        let subtitle = "width: run B; red grew, blue shrank against run A";
        let svg = diff_svg(
            &a.profile,
            &b.profile,
            &title,
            subtitle,
            analysis.settings.profiles.min_width_pct,
        )?;
        let path = format!(
            "{dir}/{endpoint_slug}.{}.diff.svg",
            super::slug::slug(&b.kind)
        );
        out.push((b.kind.clone(), path, svg));
    }
    Ok(out)
}

/// Renders the comparison pages and the release history page:
/// `(relative path, bytes)` for `render_site` to insert.
pub fn compare_pages(analysis: &Analysis, slugs: &Slugs) -> Result<Vec<(String, Vec<u8>)>, Error> {
    let mut pages = Vec::new();
    let mut links = Vec::new();
    for c in &analysis.comparisons {
        let path = comparison_path(c, slugs);
        let (page, diffs) = comparison_page(analysis, c, slugs)?;
        pages.extend(diffs);
        links.push(ComparisonLink {
            title: format!("{} → {}", c.comparison.a.label(), c.comparison.b.label()),
            asked_as: format!("{} → {}", c.spec_a, c.spec_b),
            href: path.clone(),
            summary: page.summary.clone(),
            regressions: page.regressions,
        });
        pages.push((path, render(&page)?));
    }
    let releases = releases_page(&analysis.releases, analysis, slugs, links);
    pages.push((RELEASES_PAGE.to_string(), render(&releases)?));
    Ok(pages)
}

fn render(t: &impl Template) -> Result<Vec<u8>, Error> {
    t.render()
        .map(String::into_bytes)
        .map_err(|e| Error::Internal(format!("rendering a comparison page: {e}")))
}

fn run_link(r: &RunRef, slugs: &Slugs, root: &str) -> RunLink {
    RunLink {
        id: r.run.clone(),
        label: r.label(),
        href: format!("{root}runs/{}.html", slugs.run(&r.run)),
        date: f::datetime(r.started_at),
        commit: r.commit.clone().unwrap_or_default(),
    }
}

/// The page and the differential flame graphs it links to.
type PageAndFiles = (ComparePage, Vec<(String, Vec<u8>)>);

fn comparison_page(
    analysis: &Analysis,
    c: &SiteComparison,
    slugs: &Slugs,
) -> Result<PageAndFiles, Error> {
    let root = "../";
    let cmp = &c.comparison;
    // compare/<a>_vs_<b>.html keeps its diffs in compare/<a>_vs_<b>/.
    let dir = comparison_path(c, slugs)
        .trim_end_matches(".html")
        .to_string();
    let mut files = Vec::new();
    let mut rows = Vec::with_capacity(cmp.endpoints.len());
    for e in &cmp.endpoints {
        let mut row = comparison_row(e, slugs, root);
        for (kind, path, svg) in flame_diffs(analysis, cmp, e, &dir, &row.anchor)? {
            // The page sits in compare/, the file in compare/<pair>/.
            row.flame_diffs
                .push((kind, path.trim_start_matches("compare/").to_string()));
            files.push((path, svg));
        }
        rows.push(row);
    }
    let counts = cmp.counts();
    let summary = counts
        .iter()
        .map(|(v, n)| format!("{n} {v}"))
        .collect::<Vec<_>>()
        .join(", ");
    let threshold = analysis.settings.analysis.threshold_ratio;
    let page = ComparePage {
        root,
        a: run_link(&cmp.a, slugs, root),
        b: run_link(&cmp.b, slugs, root),
        asked_as: format!("{} → {}", c.spec_a, c.spec_b),
        regressions: counts
            .get(&ComparisonVerdict::Regression)
            .copied()
            .unwrap_or(0),
        summary,
        rows,
        method: format!(
            "B/A is the ratio of the runs' median p99s, judged with the gate's threshold (×{threshold} unless an \
             endpoint sets its own). The interval is the Hodges–Lehmann interval over the pairwise round \
             ratios (exact coverage 84.9% at 5 vs 5 rounds). Regression: B/A over the threshold and the whole \
             interval above 1; improvement: the mirror image; same: B/A and the whole interval inside the band; \
             inconclusive: anything else, or fewer rounds than expected. The rounds of one run are not \
             independent samples of another day's run, so treat the interval as the scatter of these two runs."
        ),
    };
    Ok((page, files))
}

fn comparison_row(e: &EndpointComparison, slugs: &Slugs, root: &str) -> ComparisonRow {
    let rounds = |s: Option<&crate::analyse::compare::Side>| {
        s.map(|s| {
            s.round_p99_ms
                .iter()
                .map(|v| f::ms(*v))
                .collect::<Vec<_>>()
                .join(" · ")
        })
        .unwrap_or_else(|| "–".to_string())
    };
    let anchor = slugs
        .endpoints
        .get(&e.id)
        .cloned()
        .unwrap_or_else(|| super::slug::slug(&e.id));
    ComparisonRow {
        name: e.name.clone(),
        href: format!("{root}endpoints/{anchor}.html"),
        median_a: f::opt_ms(e.a.as_ref().map(|s| s.median_p99_ms)),
        median_b: f::opt_ms(e.b.as_ref().map(|s| s.median_p99_ms)),
        ratio: f::ratio(e.ratio),
        change: f::change(e.ratio),
        interval: e
            .ratio_interval
            .map(|[l, h]| format!("×{l:.2}–{h:.2}"))
            .unwrap_or_else(|| "–".to_string()),
        throughput_a: f::rate(e.a.as_ref().and_then(|s| s.throughput_rps)),
        throughput_b: f::rate(e.b.as_ref().and_then(|s| s.throughput_rps)),
        errors_a: f::percent(e.a.as_ref().and_then(|s| s.error_rate)),
        errors_b: f::percent(e.b.as_ref().and_then(|s| s.error_rate)),
        rounds_a: rounds(e.a.as_ref()),
        rounds_b: rounds(e.b.as_ref()),
        verdict: e.verdict.into(),
        reason: e.reason.clone(),
        dot_plot: dot_plot(e, &format!("dots-{anchor}")),
        flame_diffs: Vec::new(),
        anchor,
    }
}

/// Both runs' round p99s as dots on one axis (A above, B below), each
/// run's median as a tick, and A's median × and ÷ the threshold as dashed
/// lines: B's median beyond them is what the gate calls a regression or an
/// improvement.
pub fn dot_plot(e: &EndpointComparison, id: &str) -> String {
    const W: f64 = 560.0;
    const H: f64 = 92.0;
    const LEFT: f64 = 30.0;
    const RIGHT: f64 = 16.0;
    const ROW_A: f64 = 22.0;
    const ROW_B: f64 = 50.0;
    const AXIS: f64 = 70.0;
    let a = e.a.as_ref();
    let b = e.b.as_ref();
    let lines: Vec<f64> = a
        .map(|s| {
            vec![
                s.median_p99_ms * e.threshold_ratio,
                s.median_p99_ms / e.threshold_ratio,
            ]
        })
        .unwrap_or_default();
    let values: Vec<f64> = a
        .into_iter()
        .chain(b)
        .flat_map(|s| s.round_p99_ms.iter().copied())
        .chain(lines.iter().copied())
        .filter(|v| v.is_finite())
        .collect();
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (lo, hi) = if lo.is_finite() && hi > lo {
        let pad = (hi - lo) * 0.05;
        ((lo - pad).max(0.0), hi + pad)
    } else if lo.is_finite() {
        ((lo * 0.9).max(0.0), lo * 1.1 + 1.0)
    } else {
        (0.0, 1.0)
    };
    let x = |v: f64| LEFT + (v - lo) / (hi - lo) * (W - LEFT - RIGHT);
    let name = xml_escape(&e.name);
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg class="chart dotplot" id="{id}" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img" aria-labelledby="{id}-t {id}-d" xmlns="http://www.w3.org/2000/svg">"#
    );
    let _ = write!(
        s,
        r#"<title id="{id}-t">{name}: round p99 of run A and run B</title><desc id="{id}-d">A: {}. B: {}. Verdict: {}.</desc>"#,
        xml_escape(&round_list(a)),
        xml_escape(&round_list(b)),
        e.verdict
    );
    let _ = write!(
        s,
        r#"<line x1="{LEFT}" y1="{AXIS}" x2="{}" y2="{AXIS}" stroke="{COLOR_AXIS}" stroke-width="1"/>"#,
        W - RIGHT
    );
    for (v, anchor) in [(lo, "start"), (hi, "end")] {
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{}" font-size="11" text-anchor="{anchor}" fill="{COLOR_AXIS}">{} ms</text>"#,
            x(v),
            AXIS + 15.0,
            f::ms(v)
        );
    }
    for (i, t) in lines.iter().enumerate() {
        let label = if i == 0 {
            "regression line: A median × threshold"
        } else {
            "improvement line: A median ÷ threshold"
        };
        let _ = write!(
            s,
            r#"<line x1="{0:.1}" y1="8" x2="{0:.1}" y2="{AXIS}" stroke="{COLOR_THRESHOLD}" stroke-width="1" stroke-dasharray="4 3"><title>{label}: {1} ms</title></line>"#,
            x(*t),
            f::ms(*t)
        );
    }
    for (label, side, y, color) in [("A", a, ROW_A, COLOR_A), ("B", b, ROW_B, COLOR_B)] {
        let _ = write!(
            s,
            r#"<text x="4" y="{:.1}" font-size="12" font-weight="600" fill="{COLOR_AXIS}">{label}</text>"#,
            y + 4.0
        );
        let Some(side) = side else {
            let _ = write!(
                s,
                r#"<text x="{LEFT}" y="{:.1}" font-size="11" fill="{COLOR_AXIS}">not in this run</text>"#,
                y + 4.0
            );
            continue;
        };
        for (i, v) in side.round_p99_ms.iter().enumerate() {
            // Rounds with equal p99 would hide each other: stagger them.
            let dy = (i % 3) as f64 * 4.0 - 4.0;
            let _ = write!(
                s,
                r#"<circle cx="{:.1}" cy="{:.1}" r="4" fill="{color}" fill-opacity="0.8"><title>{label} round {}: {} ms</title></circle>"#,
                x(*v),
                y + dy,
                i + 1,
                f::ms(*v)
            );
        }
        let m = side.median_p99_ms;
        let _ = write!(
            s,
            r#"<line x1="{0:.1}" y1="{1:.1}" x2="{0:.1}" y2="{2:.1}" stroke="{color}" stroke-width="3"><title>{label} median p99: {3} ms</title></line>"#,
            x(m),
            y - 10.0,
            y + 10.0,
            f::ms(m)
        );
    }
    s.push_str("</svg>");
    s
}

fn round_list(s: Option<&crate::analyse::compare::Side>) -> String {
    s.map(|s| {
        let v: Vec<String> = s
            .round_p99_ms
            .iter()
            .map(|v| format!("{} ms", f::ms(*v)))
            .collect();
        format!("{} (median {} ms)", v.join(", "), f::ms(s.median_p99_ms))
    })
    .unwrap_or_else(|| "not in this run".to_string())
}

fn releases_page(
    history: &ReleaseHistory,
    analysis: &Analysis,
    slugs: &Slugs,
    comparisons: Vec<ComparisonLink>,
) -> ReleasesPage {
    let endpoints = history
        .endpoints
        .iter()
        .map(|(id, name)| {
            let href = slugs
                .endpoints
                .get(id)
                .map(|s| format!("endpoints/{s}.html"))
                .unwrap_or_default();
            (name.clone(), href)
        })
        .collect();
    let rows = history
        .releases
        .iter()
        .enumerate()
        .map(|(i, r)| ReleaseRowView {
            release: r.release.clone(),
            run: r.run.clone(),
            run_href: format!("runs/{}.html", slugs.run(&r.run)),
            date: f::date(r.started_at),
            cells: r
                .median_p99_ms
                .iter()
                .enumerate()
                .map(|(j, m)| {
                    let prev = i
                        .checked_sub(1)
                        .and_then(|p| history.releases[p].median_p99_ms[j]);
                    ReleaseCell {
                        median: f::opt_ms(*m),
                        change: match (m, prev) {
                            (Some(m), Some(p)) if p > 0.0 => f::change(Some(m / p)),
                            _ => String::new(),
                        },
                    }
                })
                .collect(),
        })
        .collect();
    ReleasesPage {
        root: "",
        endpoints,
        rows,
        chart: release_chart(history, analysis.settings.analysis.threshold_ratio),
        comparisons,
    }
}

/// Twelve distinguishable line colours (Tableau 10 plus two).
const PALETTE: [&str; 12] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#5b6473", "#1f4e79", "#8cd17d",
];

/// Each endpoint's median p99 per release, relative to its first release
/// (×1.00), so endpoints of any speed share one axis and drift shows as
/// distance from the 1.00 line. Empty when there are no releases.
pub fn release_chart(history: &ReleaseHistory, threshold_ratio: f64) -> String {
    if history.releases.is_empty() {
        return String::new();
    }
    const W: f64 = 760.0;
    const H: f64 = 320.0;
    const LEFT: f64 = 56.0;
    const RIGHT: f64 = 190.0;
    const TOP: f64 = 16.0;
    const BOTTOM: f64 = 44.0;
    // series[j] = (release index, ratio to the endpoint's first release, ms)
    let series: Vec<Vec<(usize, f64, f64)>> = (0..history.endpoints.len())
        .map(|j| {
            let first = history
                .releases
                .iter()
                .find_map(|r| r.median_p99_ms[j].filter(|m| *m > 0.0));
            history
                .releases
                .iter()
                .enumerate()
                .filter_map(|(i, r)| Some((i, r.median_p99_ms[j]? / first?, r.median_p99_ms[j]?)))
                .collect()
        })
        .collect();
    let ratios = series
        .iter()
        .flatten()
        .map(|p| p.1)
        .filter(|r| r.is_finite());
    let (mut lo, mut hi) = (1.0 / threshold_ratio, threshold_ratio);
    for r in ratios {
        lo = lo.min(r);
        hi = hi.max(r);
    }
    let pad = (hi - lo) * 0.06;
    let (lo, hi) = (lo - pad, hi + pad);
    let n = history.releases.len();
    let x = |i: usize| {
        if n == 1 {
            LEFT + (W - LEFT - RIGHT) / 2.0
        } else {
            LEFT + i as f64 / (n - 1) as f64 * (W - LEFT - RIGHT)
        }
    };
    let y = |r: f64| TOP + (hi - r) / (hi - lo) * (H - TOP - BOTTOM);

    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg class="chart" id="release-chart" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img" aria-labelledby="release-chart-t release-chart-d" xmlns="http://www.w3.org/2000/svg">"#
    );
    let _ = write!(
        s,
        r#"<title id="release-chart-t">Median p99 per release, relative to each endpoint's first release</title><desc id="release-chart-d">{} releases, {} endpoints; the table below has the numbers.</desc>"#,
        n,
        history.endpoints.len()
    );
    // Horizontal guides: 1.00 and the threshold band.
    for (r, dash, label) in [
        (1.0, "", "×1.00".to_string()),
        (threshold_ratio, "4 3", format!("×{threshold_ratio:.2}")),
        (
            1.0 / threshold_ratio,
            "4 3",
            format!("÷{threshold_ratio:.2}"),
        ),
    ] {
        let color = if dash.is_empty() {
            COLOR_AXIS
        } else {
            COLOR_THRESHOLD
        };
        let _ = write!(
            s,
            r#"<line x1="{LEFT}" y1="{0:.1}" x2="{1}" y2="{0:.1}" stroke="{color}" stroke-width="1" stroke-dasharray="{dash}"/><text x="{2}" y="{3:.1}" font-size="11" text-anchor="end" fill="{COLOR_AXIS}">{label}</text>"#,
            y(r),
            W - RIGHT,
            LEFT - 6.0,
            y(r) + 4.0
        );
    }
    for (i, r) in history.releases.iter().enumerate() {
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{:.1}" font-size="11" text-anchor="middle" fill="{COLOR_AXIS}">{}</text>"#,
            x(i),
            H - BOTTOM + 18.0,
            xml_escape(&r.release)
        );
    }
    for (j, points) in series.iter().enumerate() {
        let color = PALETTE[j % PALETTE.len()];
        let name = xml_escape(&history.endpoints[j].1);
        if points.len() > 1 {
            let path: Vec<String> = points
                .iter()
                .map(|(i, r, _)| format!("{:.1},{:.1}", x(*i), y(*r)))
                .collect();
            let _ = write!(
                s,
                r#"<polyline points="{}" fill="none" stroke="{color}" stroke-width="1.6"><title>{name}</title></polyline>"#,
                path.join(" ")
            );
        }
        for (i, r, ms) in points {
            let _ = write!(
                s,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3.5" fill="{color}"><title>{name}, {}: {} ms (×{:.2} of its first release)</title></circle>"#,
                x(*i),
                y(*r),
                xml_escape(&history.releases[*i].release),
                f::ms(*ms),
                r
            );
        }
        // Legend, one line per endpoint; long names are cut, the title has all.
        let short: String = history.endpoints[j].1.chars().take(26).collect();
        let ly = TOP + 6.0 + j as f64 * 16.0;
        let _ = write!(
            s,
            r#"<g><title>{name}</title><rect x="{:.1}" y="{:.1}" width="10" height="10" fill="{color}"/><text x="{:.1}" y="{:.1}" font-size="11" fill="{COLOR_AXIS}">{}</text></g>"#,
            W - RIGHT + 12.0,
            ly - 9.0,
            W - RIGHT + 27.0,
            ly,
            xml_escape(&short)
        );
    }
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyse::compare::Side;

    fn endpoint(name: &str, a: Option<Vec<f64>>, b: Option<Vec<f64>>) -> EndpointComparison {
        let side = |v: Vec<f64>| Side {
            median_p99_ms: crate::stats::median(&v).unwrap(),
            usable_rounds: v.len(),
            round_p99_ms: v,
            p90_ms: None,
            throughput_rps: None,
            error_rate: None,
            spread: None,
            failed_rounds: Vec::new(),
            failed: false,
        };
        EndpointComparison {
            id: name.to_string(),
            name: name.to_string(),
            threshold_ratio: 1.15,
            a: a.map(side),
            b: b.map(side),
            ratio: None,
            hodges_lehmann_ratio: None,
            ratio_interval: None,
            interval_confidence: None,
            regressed: Vec::new(),
            throughput_not_judged: None,
            verdict: ComparisonVerdict::Regression,
            reason: String::new(),
        }
    }

    #[test]
    fn dot_plot_draws_every_round_and_escapes_the_name() {
        let e = endpoint(
            "GET /a?x=<b>&\"c\"",
            Some(vec![100.0, 101.0, 99.0, 102.0, 98.0]),
            Some(vec![130.0; 5]),
        );
        let svg = dot_plot(&e, "d");
        assert_eq!(svg.matches("<circle").count(), 10);
        assert!(
            svg.contains("GET /a?x=&lt;b&gt;&amp;&quot;c&quot;"),
            "{svg}"
        );
        assert!(!svg.contains("<b>"));
        assert!(
            svg.contains("regression line: A median × threshold: 115 ms"),
            "{svg}"
        );
        // B's median (130) is drawn right of the regression line (115).
        let pos = |needle: &str| -> f64 {
            let at = svg.find(needle).unwrap();
            let before = &svg[..at];
            let x1 = before.rfind("x1=\"").unwrap() + 4;
            before[x1..].split('"').next().unwrap().parse().unwrap()
        };
        assert!(pos("B median p99: 130 ms") > pos("regression line"));
    }

    #[test]
    fn dot_plot_of_an_added_endpoint() {
        let svg = dot_plot(&endpoint("new", None, Some(vec![5.0; 5])), "d");
        assert!(svg.contains("not in this run"));
        assert_eq!(svg.matches("<circle").count(), 5);
    }

    #[test]
    fn release_chart_puts_each_endpoint_relative_to_its_first_release() {
        use crate::analyse::compare::ReleaseRow;
        let t = chrono::DateTime::<chrono::Utc>::UNIX_EPOCH;
        let history = ReleaseHistory {
            endpoints: vec![("a".into(), "<a>".into()), ("b".into(), "b".into())],
            releases: vec![
                ReleaseRow {
                    release: "1.0".into(),
                    run: "r1".into(),
                    started_at: t,
                    median_p99_ms: vec![Some(100.0), None],
                },
                ReleaseRow {
                    release: "1.1".into(),
                    run: "r2".into(),
                    started_at: t,
                    median_p99_ms: vec![Some(150.0), Some(10.0)],
                },
            ],
        };
        let svg = release_chart(&history, 1.15);
        assert!(
            svg.contains("&lt;a&gt;, 1.1: 150 ms (×1.50 of its first release)"),
            "{svg}"
        );
        assert!(
            svg.contains("b, 1.1: 10.0 ms (×1.00 of its first release)"),
            "{svg}"
        );
        assert_eq!(svg.matches("<polyline").count(), 1, "b has one point only");
        assert!(
            release_chart(
                &ReleaseHistory {
                    endpoints: vec![],
                    releases: vec![]
                },
                1.15
            )
            .is_empty()
        );
    }
}
