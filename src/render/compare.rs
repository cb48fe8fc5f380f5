//! The comparison pages (`compare/<a>_vs_<b>.html`, one per pair asked for
//! in `[compare]`), with the differential flame graphs they link to.
//!
//! View models hold display-ready strings; the dot plot of both runs'
//! rounds per endpoint is `charts::dotplot`.

use askama::Template;

use super::filters;

use super::charts::dotplot::dot_plot;
use super::context::{Ctx, RunLabel};
use super::flame::diff_svg;
use super::rows::Page;
use super::{Slugs, format as f};
use crate::analyse::Analysis;
use crate::analyse::attribution::ProfileAnalysis;
use crate::analyse::compare::{EndpointComparison, RunRef, SiteComparison};
use crate::analyse::verdict::ComparisonVerdict;
use crate::error::Error;

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

/// Where a verdict goes in a comparison's table: what needs a look first
/// (a failed endpoint, a regression, a comparison that could not decide,
/// an endpoint gone or new), then improvements, then the same.
pub fn severity(v: ComparisonVerdict) -> u8 {
    match v {
        ComparisonVerdict::Failed => 0,
        ComparisonVerdict::Regression => 1,
        ComparisonVerdict::Inconclusive => 2,
        ComparisonVerdict::Removed => 3,
        ComparisonVerdict::Added => 4,
        ComparisonVerdict::Improvement => 5,
        ComparisonVerdict::Same => 6,
    }
}

/// One side of a comparison: its label (`release 1.4.0` or the run id)
/// and the run, with its commit and notes.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RunLink {
    pub label: String,
    pub run: RunLabel,
    /// Date and time.
    pub date: String,
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
    /// The row's place: the most severe verdict first ([`severity`]).
    pub severity: u8,
    /// How far B/A is from ×1.00 (|ln B/A|), the order within a verdict.
    pub distance: f64,
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
    /// The code host's page of the commits from A to B, or empty.
    pub compare_href: String,
    pub asked_as: String,
    pub summary: String,
    pub regressions: usize,
    pub rows: Vec<ComparisonRow>,
    pub method: String,
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
    inputs: &CompareInputs,
    endpoint: &EndpointComparison,
    side: &EndpointInputs,
) -> Result<Vec<(String, String, Vec<u8>)>, Error> {
    let cmp = &inputs.comparison.comparison;
    let mut out = Vec::new();
    for b in side.after {
        let Some(a) = side.before.iter().find(|a| a.kind == b.kind) else {
            continue;
        };
        // A profile with no busy stack (all idle, or empty) has nothing to diff.
        if a.comparable.total <= 0.0 || b.comparable.stacks.is_empty() {
            continue;
        }
        let title = format!(
            "{} · {} profile · {} against {}",
            endpoint.name,
            b.kind,
            cmp.b.label(),
            cmp.a.label()
        );
        let subtitle = "width: run B's busy stacks; colour: change of a frame's total share since run A (red grew, blue shrank)";
        let svg = diff_svg(
            &a.comparable,
            &b.comparable,
            &title,
            subtitle,
            inputs.min_width,
        )?;
        let path = format!(
            "{}/{}.{}.diff.svg",
            inputs.dir,
            side.anchor,
            super::slug::slug(&b.kind)
        );
        out.push((b.kind.clone(), path, svg));
    }
    Ok(out)
}

/// Renders every comparison page, each followed by the differential
/// flame graphs it links to.
pub fn comparison_pages(ctx: &Ctx) -> Result<Vec<Page>, Error> {
    let mut pages = Vec::new();
    for c in &ctx.analysis.comparisons {
        pages.extend(CompareInputs::of(ctx, c).render()?);
    }
    Ok(pages)
}

/// Everything one comparison page and its differential flame graphs are
/// made from, and nothing else: [`CompareInputs::render`] reads only this
/// value, so its `Debug` form is a complete key of the page memo
/// (`render::memo`).
#[derive(Debug, serde::Serialize)]
pub struct CompareInputs<'a> {
    comparison: &'a SiteComparison,
    /// `compare/<a>_vs_<b>.html`.
    pub path: String,
    /// `compare/<a>_vs_<b>`, the folder of its differential graphs.
    dir: String,
    a: RunLink,
    b: RunLink,
    compare_href: String,
    threshold: f64,
    min_width: f64,
    /// One per endpoint of the comparison, in its order.
    endpoints: Vec<EndpointInputs<'a>>,
    /// What the comparison does not serialise, for the key: whether each
    /// run's figures are in doubt.
    in_doubt: (bool, bool),
}

/// What a comparison row takes beyond the comparison itself.
#[derive(Debug, serde::Serialize)]
struct EndpointInputs<'a> {
    /// The endpoint's slug: the row's anchor and its page's name.
    anchor: String,
    /// Its profiles in run A and in run B (in the key with their stacks,
    /// which they do not serialise: `render::memo::ProfileKey`).
    #[serde(serialize_with = "super::memo::profile_keys")]
    before: &'a [ProfileAnalysis],
    #[serde(serialize_with = "super::memo::profile_keys")]
    after: &'a [ProfileAnalysis],
}

impl<'a> CompareInputs<'a> {
    /// Gathers the inputs of one comparison's files from the analysis.
    pub fn of(ctx: &Ctx<'a>, c: &'a SiteComparison) -> CompareInputs<'a> {
        let (analysis, slugs) = (ctx.analysis, ctx.slugs);
        let root = "../";
        let cmp = &c.comparison;
        let path = comparison_path(c, slugs);
        CompareInputs {
            comparison: c,
            // compare/<a>_vs_<b>.html keeps its diffs in compare/<a>_vs_<b>/.
            dir: path.trim_end_matches(".html").to_string(),
            path,
            a: run_link(ctx, &cmp.a, root),
            b: run_link(ctx, &cmp.b, root),
            compare_href: ctx.compare_href(&cmp.a.run, &cmp.b.run),
            threshold: analysis.settings.analysis.threshold_ratio,
            min_width: analysis.settings.profiles.min_width_pct,
            in_doubt: (cmp.a.in_doubt, cmp.b.in_doubt),
            endpoints: cmp
                .endpoints
                .iter()
                .map(|e| EndpointInputs {
                    anchor: slugs
                        .endpoints
                        .get(&e.id)
                        .cloned()
                        .unwrap_or_else(|| super::slug::slug(&e.id)),
                    before: profiles_of(analysis, &e.id, &cmp.a.run),
                    after: profiles_of(analysis, &e.id, &cmp.b.run),
                })
                .collect(),
        }
    }

    /// The page, then the differential flame graphs it links to.
    pub fn render(&self) -> Result<Vec<Page>, Error> {
        let (page, diffs) = comparison_page(self)?;
        let mut files = vec![(self.path.clone(), render(&page)?)];
        files.extend(diffs);
        Ok(files)
    }
}

/// What one comparison says in a line: `3 same, 1 regression`, and how
/// many endpoints regressed.
pub fn comparison_summary(c: &SiteComparison) -> (String, usize) {
    let counts = c.comparison.counts();
    let summary = counts
        .iter()
        .map(|(v, n)| format!("{n} {v}"))
        .collect::<Vec<_>>()
        .join(", ");
    let regressions = counts
        .get(&ComparisonVerdict::Regression)
        .copied()
        .unwrap_or(0);
    (summary, regressions)
}

fn render(t: &impl Template) -> Result<Vec<u8>, Error> {
    t.render()
        .map(String::into_bytes)
        .map_err(|e| Error::Internal(format!("rendering a comparison page: {e}")))
}

fn run_link(ctx: &Ctx, r: &RunRef, root: &str) -> RunLink {
    RunLink {
        label: r.label(),
        run: ctx.run_label(&r.run, root, None),
        date: f::datetime(r.started_at),
    }
}

/// The page and the differential flame graphs it links to.
type PageAndFiles = (ComparePage, Vec<Page>);

fn comparison_page(inputs: &CompareInputs) -> Result<PageAndFiles, Error> {
    let root = "../";
    let c = inputs.comparison;
    let cmp = &c.comparison;
    let mut files = Vec::new();
    let mut rows = Vec::with_capacity(cmp.endpoints.len());
    for (e, side) in cmp.endpoints.iter().zip(&inputs.endpoints) {
        let mut row = comparison_row(e, &side.anchor, root);
        for (kind, path, svg) in flame_diffs(inputs, e, side)? {
            // The page sits in compare/, the file in compare/<pair>/.
            row.flame_diffs
                .push((kind, path.trim_start_matches("compare/").to_string()));
            files.push((path, svg));
        }
        rows.push(row);
    }
    // Severity first, so that the one regression of a release is row 1,
    // not row 11 in endpoint order; then the largest change.
    rows.sort_by(|a, b| {
        a.severity
            .cmp(&b.severity)
            .then(b.distance.total_cmp(&a.distance))
            .then_with(|| a.name.cmp(&b.name))
    });
    let (summary, regressions) = comparison_summary(c);
    let threshold = inputs.threshold;
    let page = ComparePage {
        root,
        a: inputs.a.clone(),
        b: inputs.b.clone(),
        compare_href: inputs.compare_href.clone(),
        asked_as: format!("{} → {}", c.spec_a, c.spec_b),
        regressions,
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

fn comparison_row(e: &EndpointComparison, anchor: &str, root: &str) -> ComparisonRow {
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
    let anchor = anchor.to_string();
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
        severity: severity(e.verdict),
        distance: e
            .ratio
            .filter(|r| *r > 0.0 && r.is_finite())
            .map_or(0.0, |r| r.ln().abs()),
        reason: e.reason.clone(),
        dot_plot: dot_plot(e, &format!("dots-{anchor}")),
        flame_diffs: Vec::new(),
        anchor,
    }
}
