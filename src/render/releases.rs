//! `releases.html`: the release history (each release's median p99 per
//! endpoint, and its chart) and the list of comparisons.

use askama::Template;

use super::filters;

use super::charts::release::release_multiples;
use super::compare::{comparison_path, comparison_summary};
use super::context::{Ctx, RunLabel};
use super::format as f;
use super::rows::{Page, render};
use crate::error::Error;

/// The release history page, relative to the site root.
pub const RELEASES_PAGE: &str = "releases.html";

pub struct ReleaseCell {
    pub median: String,
    pub change: String,
}

/// One release: a column of the table.
pub struct ReleaseColumn {
    pub release: String,
    pub run: RunLabel,
}

/// One endpoint across the releases: a row of the table (endpoints as
/// rows, so the table grows down with endpoints and only releases widen it).
pub struct EndpointReleases {
    pub name: String,
    pub href: String,
    pub cells: Vec<ReleaseCell>,
}

/// One small multiple.
pub struct PanelView {
    pub name: String,
    pub href: String,
    pub svg: String,
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
    pub releases: Vec<ReleaseColumn>,
    pub rows: Vec<EndpointReleases>,
    pub panels: Vec<PanelView>,
    pub comparisons: Vec<ComparisonLink>,
}

/// The release history page.
pub fn releases_page(ctx: &Ctx) -> Result<Page, Error> {
    let (analysis, slugs) = (ctx.analysis, ctx.slugs);
    let history = &analysis.releases;
    let comparisons = analysis
        .comparisons
        .iter()
        .map(|c| {
            let (summary, regressions) = comparison_summary(c);
            ComparisonLink {
                title: format!("{} → {}", c.comparison.a.label(), c.comparison.b.label()),
                asked_as: format!("{} → {}", c.spec_a, c.spec_b),
                href: comparison_path(c, slugs),
                summary,
                regressions,
            }
        })
        .collect();
    let href = |id: &str| {
        slugs
            .endpoints
            .get(id)
            .map(|s| format!("endpoints/{s}.html"))
            .unwrap_or_default()
    };
    let rows = history
        .endpoints
        .iter()
        .enumerate()
        .map(|(j, (id, name))| EndpointReleases {
            name: name.clone(),
            href: href(id),
            cells: history
                .releases
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    let m = r.median_p99_ms[j];
                    let prev = i
                        .checked_sub(1)
                        .and_then(|p| history.releases[p].median_p99_ms[j]);
                    ReleaseCell {
                        median: f::opt_ms(m),
                        change: match (m, prev) {
                            (Some(m), Some(p)) if p > 0.0 => f::change(Some(m / p)),
                            _ => String::new(),
                        },
                    }
                })
                .collect(),
        })
        .collect();
    let page = ReleasesPage {
        root: "",
        releases: history
            .releases
            .iter()
            .map(|r| ReleaseColumn {
                release: r.release.clone(),
                run: ctx.run_label(&r.run, "", None),
            })
            .collect(),
        rows,
        panels: release_multiples(history, analysis.settings.analysis.threshold_ratio)
            .into_iter()
            .map(|p| PanelView {
                href: href(&p.id),
                name: p.name,
                svg: p.svg,
            })
            .collect(),
        comparisons,
    };
    Ok((RELEASES_PAGE.to_string(), render(&page, RELEASES_PAGE)?))
}
