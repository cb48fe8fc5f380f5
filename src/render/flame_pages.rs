//! Flame-graph pages: one per profile (endpoint × run × kind), with the
//! interactive SVG, the category shares against the baseline's profile, the
//! attribution of a regression, a differential SVG and the frames that grew.
//!
//! ```text
//! flame/<endpoint-slug>/<run-slug>.<kind>.html       the page
//! flame/<endpoint-slug>/<run-slug>.<kind>.svg        flame graph (search, zoom)
//! flame/<endpoint-slug>/<run-slug>.<kind>.diff.svg   differential against the baseline
//! ```

use askama::Template;

use super::filters;

use super::context::{CommitView, Ctx};
use super::flame::{FlameDiff, change_colour, flame_svg, svg_height};
use super::{Site, Slugs};
use crate::analyse::attribution::{GROWN_FRAMES, ProfileAnalysis};
use crate::analyse::{EndpointAnalysis, RunPoint};
use crate::error::Error;
use crate::profile::{Category, format_weight};

/// A link from an endpoint or run page to one flame page.
#[derive(Debug, Clone, serde::Serialize)]
pub struct FlameLink {
    pub kind: String,
    pub href: String,
    /// The attribution line on a regressed run, else empty.
    pub attribution: String,
    /// `code-regression`, `gc-lock`, `inconclusive` or empty (for CSS).
    pub attribution_key: &'static str,
}

/// The attribution line of a profile on a regressed run, else empty.
fn attribution_text(pa: &ProfileAnalysis) -> String {
    pa.attribution
        .as_ref()
        .map(|a| a.summary.clone())
        .unwrap_or_default()
}

/// `code-regression`, `gc-lock`, `inconclusive` or empty (for CSS).
fn attribution_key(pa: &ProfileAnalysis) -> &'static str {
    pa.attribution.as_ref().map_or("", |a| a.kind.as_str())
}

/// The site path of a profile's page without the extension.
fn base_path(slugs: &Slugs, endpoint: &str, run: &str, kind: &str) -> String {
    format!(
        "flame/{}/{}.{kind}",
        slugs.endpoint(endpoint),
        slugs.run(run)
    )
}

/// Links to the flame pages of one endpoint in one run, from a page at `root`.
pub fn flame_links(
    p: &RunPoint,
    e: &EndpointAnalysis,
    slugs: &Slugs,
    root: &str,
) -> Vec<FlameLink> {
    p.profiles
        .iter()
        .map(|pa| FlameLink {
            kind: pa.kind.clone(),
            href: format!("{root}{}.html", base_path(slugs, &e.id, &p.run, &pa.kind)),
            attribution: attribution_text(pa),
            attribution_key: attribution_key(pa),
        })
        .collect()
}

pub struct ShareRow {
    pub category: &'static str,
    pub key: &'static str,
    pub share: String,
    pub baseline: String,
    pub delta: String,
    /// `up`, `down` or empty, for styling changes of at least 1 point.
    pub direction: &'static str,
}

pub struct GrowthRow {
    pub frame: String,
    pub total_before: String,
    pub total_after: String,
    pub total_delta: String,
    pub self_before: String,
    pub self_after: String,
    pub self_delta: String,
    /// The frame listed above that this one calls (its growth passes through), or empty.
    pub caller_of: String,
}

/// One stop of the differential graph's colour legend.
pub struct LegendStop {
    /// Offset along the bar, percent.
    pub offset: u32,
    pub colour: String,
}

#[derive(Template)]
#[template(path = "flame.html")]
pub struct FlamePage {
    pub root: &'static str,
    /// The run's commit and the baseline run's, linked with `[site]
    /// commit_url`; the changes between them with `compare_url`.
    pub run_commit: Option<CommitView>,
    pub baseline_commit: Option<CommitView>,
    pub compare_href: String,
    pub endpoint: String,
    pub endpoint_href: String,
    pub run: String,
    pub run_href: String,
    pub kind: String,
    pub verdict: &'static str,
    pub format: &'static str,
    pub source: String,
    /// The total weight rounded in its unit, e.g. `20.16 seconds`.
    pub total: String,
    /// `in 2,016 samples` when the weights are not samples; else empty.
    pub samples: String,
    pub svg_href: String,
    /// The graphs' heights in pixels: their boxes' heights, so that no
    /// empty band lies under a graph.
    pub svg_height: u32,
    pub diff_href: String,
    pub diff_height: u32,
    pub baseline_run: String,
    pub baseline_href: String,
    pub baseline_source: String,
    pub attribution: String,
    pub attribution_key: &'static str,
    pub shares: Vec<ShareRow>,
    /// Whether idle is left out of the shares.
    pub idle_excluded: bool,
    /// Percent of all weight that is idle, now and in the baseline.
    pub idle_now: String,
    pub idle_baseline: String,
    pub gc_in_mutator: String,
    /// How frame names were compared, one sentence.
    pub normalisation: &'static str,
    pub grown: Vec<GrowthRow>,
    pub grown_limit: usize,
    pub min_width: String,
    /// The colour legend's end, e.g. `25` (points).
    pub legend_scale: String,
    pub legend_stops: Vec<LegendStop>,
}

/// The height of a flame graph's box on its page: the SVG's own height
/// (plus its box's two border pixels), or inferno's usual height should
/// the SVG not say.
fn flame_box_height(svg: &[u8]) -> u32 {
    svg_height(svg).map_or(480, |h| h + 2)
}

fn pct(v: f64) -> String {
    format!("{v:.1}%")
}

fn pts(v: f64) -> String {
    format!("{v:+.1}")
}

/// Renders every profile's page and SVGs into the site.
pub fn render_flame_pages(ctx: &Ctx, site: &mut Site) -> Result<(), Error> {
    for e in &ctx.analysis.endpoints {
        for p in &e.points {
            for pa in &p.profiles {
                for (path, bytes) in FlameInputs::of(ctx, e, p, pa).render()? {
                    site.insert(&path, bytes);
                }
            }
        }
    }
    Ok(())
}

/// Everything the files of one profile are made from, and nothing else:
/// [`FlameInputs::render`] reads only this value, so its `Debug` form is
/// a complete key of the page memo (`render::memo`).
#[derive(Debug, serde::Serialize)]
pub struct FlameInputs<'a> {
    endpoint_id: &'a str,
    endpoint_name: &'a str,
    endpoint_slug: &'a str,
    run: &'a str,
    run_slug: &'a str,
    /// The baseline profile's run's slug, when it has one.
    baseline_slug: Option<&'a str>,
    verdict: &'static str,
    /// The profile, its baseline and their stacks (`Debug` prints the
    /// digest of all of it, nothing formatted: `render::memo::ProfileKey`).
    pa: super::memo::ProfileKey<'a>,
    run_commit: Option<CommitView>,
    baseline_commit: Option<CommitView>,
    compare_href: String,
    min_width: f64,
}

impl<'a> FlameInputs<'a> {
    /// Gathers the inputs of one profile's files from the analysis.
    pub fn of(
        ctx: &Ctx<'a>,
        e: &'a EndpointAnalysis,
        p: &'a RunPoint,
        pa: &'a ProfileAnalysis,
    ) -> FlameInputs<'a> {
        let slugs = ctx.slugs;
        // The commits of both runs, and the code host's changes between them.
        let commit_of = |run: &str| {
            ctx.run(run)
                .and_then(|r| r.meta.commit.as_deref())
                .map(|c| ctx.commit(c))
        };
        FlameInputs {
            endpoint_id: &e.id,
            endpoint_name: &e.name,
            endpoint_slug: slugs.endpoint(&e.id),
            run: &p.run,
            run_slug: slugs.run(&p.run),
            baseline_slug: pa.baseline.as_ref().map(|b| slugs.run(&b.run)),
            verdict: p.verdict.as_str(),
            pa: super::memo::ProfileKey(pa),
            run_commit: commit_of(&p.run),
            baseline_commit: pa.baseline.as_ref().and_then(|b| commit_of(&b.run)),
            compare_href: pa
                .baseline
                .as_ref()
                .map(|b| ctx.compare_href(&b.run, &p.run))
                .unwrap_or_default(),
            min_width: ctx.analysis.settings.profiles.min_width_pct,
        }
    }

    /// The profile's page and SVGs: `(path, bytes)`.
    pub fn render(&self) -> Result<Vec<super::rows::Page>, Error> {
        let mut site = Site::default();
        render_one(self, &mut site)?;
        Ok(site.into_files())
    }
}

fn render_one(inputs: &FlameInputs, site: &mut Site) -> Result<(), Error> {
    let FlameInputs { pa, min_width, .. } = *inputs;
    let root = "../../";
    let base = format!(
        "flame/{}/{}.{}",
        inputs.endpoint_slug, inputs.run_slug, pa.kind
    );
    let file = |suffix: &str| {
        let stem = base.rsplit('/').next().unwrap_or(&base);
        format!("{stem}{suffix}")
    };
    let title = format!(
        "{} · run {} · {} profile",
        inputs.endpoint_name, inputs.run, pa.kind
    );
    let subtitle = format!(
        "{} · {} · {}",
        pa.format.describe(),
        pa.profile.total_text(),
        pa.source
    );
    let svg = flame_svg(&pa.profile, &title, &subtitle, min_width)?;
    let svg_height = flame_box_height(&svg);
    site.insert(&format!("{base}.svg"), svg);

    let (mut diff_href, mut baseline_run, mut baseline_href, mut baseline_source) =
        (String::new(), String::new(), String::new(), String::new());
    let mut legend_scale = String::new();
    let mut diff_height = 0;
    if let Some(b) = &pa.baseline {
        let diff_title = format!(
            "{} · run {} against run {} · {} profile",
            inputs.endpoint_name, inputs.run, b.run, pa.kind
        );
        if b.comparable.total > 0.0 && !pa.comparable.stacks.is_empty() {
            let diff = FlameDiff::new(&b.comparable, &pa.comparable);
            let scale = diff.scale_pts();
            let diff_subtitle = format!(
                "width: this run{} · colour: change of each frame's total share, blue −{scale:.0} pts … white 0 … red +{scale:.0} pts",
                if pa.comparable.idle_excluded {
                    ", idle left out"
                } else {
                    ""
                }
            );
            let svg = diff.svg(&diff_title, &diff_subtitle, min_width)?;
            diff_height = flame_box_height(&svg);
            site.insert(&format!("{base}.diff.svg"), svg);
            diff_href = file(".diff.svg");
            legend_scale = format!("{scale:.0}");
        }
        baseline_run = b.run.clone();
        baseline_href = format!(
            "{}.{}.html",
            inputs.baseline_slug.unwrap_or_default(),
            pa.kind
        );
        baseline_source = b.source.clone();
    }

    let idle_excluded = pa.comparable.idle_excluded;
    let shares = Category::ALL
        .iter()
        .filter(|&&c| !(idle_excluded && c == Category::IdleWait))
        .map(|&c| {
            let share = pa.busy_shares.get(&c).copied().unwrap_or(0.0);
            let change = pa
                .baseline
                .as_ref()
                .and_then(|b| b.changes.iter().find(|x| x.category == c));
            ShareRow {
                category: c.label(),
                key: c.as_str(),
                share: pct(share),
                baseline: change.map(|x| pct(x.baseline_pct)).unwrap_or_default(),
                delta: change.map(|x| pts(x.delta_pts)).unwrap_or_default(),
                direction: match change.map(|x| x.delta_pts) {
                    Some(d) if d >= 1.0 => "up",
                    Some(d) if d <= -1.0 => "down",
                    _ => "",
                },
            }
        })
        .collect();
    let grown = pa
        .grown_frames
        .iter()
        .map(|g| GrowthRow {
            frame: g.frame.clone(),
            total_before: pct(g.total_before_pct),
            total_after: pct(g.total_after_pct),
            total_delta: pts(g.total_delta_pts()),
            self_before: pct(g.self_before_pct),
            self_after: pct(g.self_after_pct),
            self_delta: pts(g.self_delta_pts()),
            caller_of: g.caller_of.clone().unwrap_or_default(),
        })
        .collect();
    let samples = match pa.samples {
        Some(n) if !pa.profile.weights_are_samples() => {
            format!(
                " in {} sample{}",
                format_weight(n as f64),
                if n == 1 { "" } else { "s" }
            )
        }
        None if !pa.profile.weights_are_samples() => {
            " (the format does not record a sample count)".to_string()
        }
        _ => String::new(),
    };
    let legend_stops = [-1.0, -0.5, 0.0, 0.5, 1.0]
        .iter()
        .map(|&t| {
            let (r, g, b) = change_colour(t, 1.0);
            LegendStop {
                offset: ((t + 1.0) * 50.0) as u32,
                colour: format!("rgb({r},{g},{b})"),
            }
        })
        .collect();
    let page = FlamePage {
        root,
        run_commit: inputs.run_commit.clone(),
        baseline_commit: inputs.baseline_commit.clone(),
        compare_href: inputs.compare_href.clone(),
        endpoint: inputs.endpoint_name.to_string(),
        endpoint_href: format!("{root}endpoints/{}.html", inputs.endpoint_slug),
        run: inputs.run.to_string(),
        run_href: format!(
            "{root}runs/{}.html#{}",
            inputs.run_slug, inputs.endpoint_slug
        ),
        kind: pa.kind.clone(),
        verdict: inputs.verdict,
        format: pa.format.describe(),
        source: pa.source.clone(),
        total: pa.profile.total_text(),
        samples,
        svg_href: file(".svg"),
        svg_height,
        diff_href,
        diff_height,
        baseline_run,
        baseline_href,
        baseline_source,
        attribution: pa
            .attribution
            .as_ref()
            .map(|a| a.line())
            .unwrap_or_default(),
        attribution_key: attribution_key(pa.0),
        shares,
        idle_excluded,
        idle_now: pct(pa.idle_pct),
        idle_baseline: pa
            .baseline
            .as_ref()
            .map(|b| pct(b.idle_pct))
            .unwrap_or_default(),
        gc_in_mutator: pct(pa.gc_in_mutator_pct),
        normalisation: pa.normalisation.describe(),
        grown,
        grown_limit: GROWN_FRAMES,
        min_width: format!("{min_width}%"),
        legend_scale,
        legend_stops,
    };
    let html = page.render().map_err(|err| {
        Error::Internal(format!(
            "flame page for {} in {}: {err}",
            inputs.endpoint_id, inputs.run
        ))
    })?;
    site.insert(&format!("{base}.html"), html.into_bytes());
    Ok(())
}
